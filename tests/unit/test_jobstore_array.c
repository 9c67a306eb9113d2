/* SPDX-License-Identifier: MIT */
/* The job store's arrays: one row, ids reserved, subjob rows made later, their names and payload. */
#include <errno.h>
#include <string.h>

#include "jobstore.h"
#include "unit.h"
#include "wire.h"

static int count_sub(int64_t index, enum job_state state, int exit_status, void *ud)
{
	(*(int *)ud)++;
	CU_ASSERT_EQUAL(index, 7);
	CU_ASSERT_EQUAL(state, JOB_COMPLETED);
	return 0;
}

static void test_array_rows(void)
{
	struct job_submit s = {
		.name = "arr", .queue = "batch", .owner = "alice", .uid = 1000, .gid = 1000,
		.ncpus = 1, .workdir = "/home/alice", .stdout_path = "", .stderr_path = "/tmp/e.^array_index^",
		.env_json = "{\"A\":\"1\"}", .script = "echo $PBS_ARRAY_INDEX\n", .t_submit = 1000,
		.umask = -1, .array_spec = "1,3,5-9", .array_count = 7,
	};
	struct job_submit plain = s;
	struct job_result res = { .state = JOB_COMPLETED, .exit_status = 0, .cpu_ns = 5 };
	struct jobstore_filter f = { .finished = true };
	struct jobstore *js;
	struct error err;
	json_t *o, *arr;
	int64_t id, next;
	int n = 0;

	plain.array_spec = NULL;
	plain.array_count = 0;
	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &s, &id), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &plain, &next), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	/* The next job's id comes after the 7 reserved. */
	CU_ASSERT_EQUAL(next, id + 8);
	/* Subjob 7 (position 4) gets its row: a copy, with the array's payload. */
	CU_ASSERT_EQUAL(jobstore_subjob_insert(js, id, id + 5, 7, JOB_QUEUED, NULL), 0);
	CU_ASSERT_EQUAL(jobstore_subjob_insert(js, id + 99, id + 6, 8, JOB_QUEUED, NULL), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_launch(js, id + 5, &o), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(o, "script"), "echo $PBS_ARRAY_INDEX\n");
	CU_ASSERT_EQUAL(wire_int(o, "array_id", 0), id);
	CU_ASSERT_EQUAL(wire_int(o, "array_index", 0), 7);
	{
		char want[64];

		snprintf(want, sizeof(want), "/home/alice/arr.o%lld.7", (long long)id);
		CU_ASSERT_STRING_EQUAL(wire_str(o, "stdout"), want);
	}
	CU_ASSERT_STRING_EQUAL(wire_str(o, "stderr"), "/tmp/e.7");
	json_decref(o);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &o), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(o, "array"), "1,3,5-9");
	json_decref(o);
	/* Listings leave subjobs out unless asked. */
	CU_ASSERT_EQUAL(jobstore_query(js, &f, &arr), 0);
	CU_ASSERT_EQUAL(json_array_size(arr), 2);
	json_decref(arr);
	f.subjobs = true;
	CU_ASSERT_EQUAL(jobstore_query(js, &f, &arr), 0);
	CU_ASSERT_EQUAL(json_array_size(arr), 3);
	json_decref(arr);
	f.no_arrays = true;
	CU_ASSERT_EQUAL(jobstore_query(js, &f, &arr), 0);
	CU_ASSERT_EQUAL(json_array_size(arr), 2);
	json_decref(arr);
	/* The array's record sums its subjobs'. */
	CU_ASSERT_EQUAL(jobstore_job_finish(js, id + 5, &res, 2000), 0);
	CU_ASSERT_EQUAL(jobstore_subjobs_load(js, id, count_sub, &n), 0);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(jobstore_array_finish(js, id, JOB_COMPLETED, 0, "done", 3000), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &o), 0);
	CU_ASSERT_EQUAL(wire_int(o, "cpu_ns", 0), 5);
	CU_ASSERT_STRING_EQUAL(wire_str(o, "state"), "completed");
	json_decref(o);
	CU_ASSERT_EQUAL(jobstore_job_depend_set(js, next, "afterok:1"), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, next, false, &o), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(o, "depend"), "afterok:1");
	json_decref(o);
	jobstore_close(js);
}

static const struct unit_test tests[] = {
	{ "array_rows", test_array_rows },
	{ NULL, NULL },
};

UNIT_STORE_SUITE(jobstore_array, tests);
