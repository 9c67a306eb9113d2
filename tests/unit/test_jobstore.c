/* SPDX-License-Identifier: MIT */
/* The job store on :memory:, PostgreSQL and on disk: insert, state changes, reload, migrations. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jobstore-internal.h"
#include "usage.h"
#include "wire.h"
#include "unit.h"

static const struct job_submit base = {
	.name = "hello", .queue = "batch", .owner = "alice", .uid = 1001, .gid = 1001,
	.ncpus = 2, .mem = 1 << 20, .walltime = 60, .workdir = "/home/alice",
	.stdout_path = "", .stderr_path = "", .env_json = "{\"A\":\"1\"}",
	.script = "#!/bin/sh\necho hi\n", .t_submit = 1000,
};

static int collect(struct job *j, void *userdata)
{
	struct job **list = userdata;

	j->next = *list;
	*list = j;
	return 0;
}

static void test_insert_query(void)
{
	struct jobstore *js;
	struct error err;
	int64_t id1, id2;
	json_t *row, *arr;
	struct jobstore_filter f = { .payload = true, .payload_uid = 1001 };

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id1), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id2), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT(id2 == id1 + 1);

	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id1, true, &row), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "state")), "queued");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "script")), base.script);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(row, "env"), "A")), "1");
	/* Default output paths follow PBS: <workdir>/<name>.o<id>. */
	{
		char want[64];

		snprintf(want, sizeof(want), "/home/alice/hello.o%lld", (long long)id1);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "stdout")), want);
	}
	json_decref(row);
	CU_ASSERT_EQUAL(jobstore_job_get(js, 999, false, &row), -ENOENT);

	/* Another uid's query does not see the payload. */
	f.payload_uid = 2002;
	CU_ASSERT_EQUAL_FATAL(jobstore_query(js, &f, &arr), 0);
	CU_ASSERT_EQUAL(json_array_size(arr), 2);
	CU_ASSERT_PTR_NULL(json_object_get(json_array_get(arr, 0), "script"));
	json_decref(arr);
	jobstore_close(js);
}

static void test_lifecycle(void)
{
	struct jobstore *js;
	struct error err;
	struct job *list = NULL;
	struct job_result res = { .state = JOB_COMPLETED, .exit_status = 0, .cpu_ns = 5, .mem_peak = 7 };
	struct jobstore_filter all = { .finished = false };
	int64_t id;
	json_t *row, *arr;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0-1", NULL, 2000), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(list);
	CU_ASSERT_EQUAL(list->state, JOB_RUNNING);
	CU_ASSERT_STRING_EQUAL(job_node(list), "n1");
	CU_ASSERT_EQUAL(cpumask_count(&list->alloc[0].cpus), 2);
	job_free(list);

	res.times[STAMP_EXEC] = 2500;
	CU_ASSERT_EQUAL(jobstore_job_finish(js, id, &res, 3000), 0);
	CU_ASSERT_EQUAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "state")), "completed");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(row, "times"), "exec")), 2500);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(row, "times"), "done")), 3000);
	json_decref(row);
	/* Finished jobs leave the default listing and the active load. */
	CU_ASSERT_EQUAL(jobstore_query(js, &all, &arr), 0);
	CU_ASSERT_EQUAL(json_array_size(arr), 0);
	json_decref(arr);
	list = NULL;
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	CU_ASSERT_PTR_NULL(list);
	CU_ASSERT_EQUAL(jobstore_job_set_state(js, 999, JOB_HELD, NULL), -ENOENT);
	jobstore_close(js);
}

/* Upgrade from version 5 (before migration 6): the running job keeps its
 * node and CPUs as a one-entry allocation, and a job across nodes can be
 * stored, dispatched with its allocation rows, reloaded and requeued. */
static void test_migrate_v5_alloc(void)
{
	char *dir = unit_tmpdir();
	char path[4096], cmd[8400];
	struct jobstore *js;
	struct error err;
	struct job *list = NULL, *j, wide = { 0 };
	struct job_submit sub = base;
	struct job_result res = { .state = JOB_COMPLETED, .exit_status = 0, .cpu_ns = 11, .mem_peak = 13 };
	json_t *row = NULL, *alloc;
	int64_t id;

	snprintf(path, sizeof(path), "%s/v5.db", dir);
	snprintf(cmd, sizeof(cmd), "sqlite3 '%s' < tests/unit/data/jobstore-v5.sql", path);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (j = list; j; j = j->next)
		if (j->id == 2) {
			CU_ASSERT_EQUAL_FATAL(j->n_alloc, 1);
			CU_ASSERT_STRING_EQUAL(job_node(j), "n1");
			CU_ASSERT_EQUAL(cpumask_count(&j->alloc[0].cpus), 8);
			CU_ASSERT_EQUAL(j->n_chunks, 0);
		}
	while (list) {
		j = list->next;
		job_free(list);
		list = j;
	}
	/* A job across nodes: chunks and place kept, one row per node. */
	sub.chunks_json = "[{\"count\":2,\"ncpus\":2,\"mpiprocs\":2,\"ompthreads\":0,\"mem\":0}]";
	sub.place = "scatter:excl";
	sub.ncpus = 4;
	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(js, &sub, &id), 0);
	wide.id = id;
	CU_ASSERT_EQUAL_FATAL(job_alloc_init(&wide, 2), 0);
	wide.alloc[0].node = strdup("n1");
	wide.alloc[1].node = strdup("n2");
	for (int i = 0; i < 2; i++) {
		wide.alloc[i].ncpus = 2;
		wide.alloc[i].mpiprocs = 2;
		cpumask_parse(i ? "2-3" : "0-1", &wide.alloc[i].cpus);
		snprintf(wide.alloc[i].mems, sizeof(wide.alloc[i].mems), "0");
	}
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0-1", NULL, 5000), 0);
	CU_ASSERT_EQUAL(jobstore_alloc_insert(js, &wide), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	job_alloc_free(&wide);
	jobstore_close(js);

	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (j = list; j; j = j->next)
		if (j->id == id) {
			CU_ASSERT_EQUAL(j->n_chunks, 1);
			CU_ASSERT_EQUAL(j->place, JOB_PLACE_SCATTER);
			CU_ASSERT_TRUE(j->excl);
			CU_ASSERT_EQUAL_FATAL(j->n_alloc, 2);
			CU_ASSERT_STRING_EQUAL(j->alloc[0].node, "n1");
			CU_ASSERT_STRING_EQUAL(j->alloc[1].node, "n2");
			CU_ASSERT_EQUAL(cpumask_count(&j->alloc[1].cpus), 2);
			CU_ASSERT_EQUAL(j->alloc[1].mpiprocs, 2);
		}
	while (list) {
		j = list->next;
		job_free(list);
		list = j;
	}
	res.times[STAMP_FENCED] = 5100;
	CU_ASSERT_EQUAL(jobstore_alloc_result(js, id, 1, &res, 6000,
					      "{\"status\":\"failed\",\"reason\":\"no cpuset\"}"), 0);
	CU_ASSERT_EQUAL(jobstore_alloc_result(js, id, 0, &res, 6000,
					      "{\"status\":\"exited\",\"exit_status\":3}"), 0);
	/* After a restart: the reports that came are known again. */
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (j = list; j; j = j->next)
		if (j->id == id) {
			CU_ASSERT_TRUE(j->alloc[0].done);
			CU_ASSERT_TRUE(j->alloc[1].done);
			CU_ASSERT_PTR_NOT_NULL_FATAL(j->result);
			CU_ASSERT_EQUAL(j->result->exit_status, 3);
			CU_ASSERT_STRING_EQUAL(j->end_reason ? j->end_reason : "", "node n2 could not start: no cpuset");
		}
	while (list) {
		j = list->next;
		job_free(list);
		list = j;
	}
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	alloc = json_object_get(row, "alloc");
	CU_ASSERT_EQUAL(json_array_size(alloc), 2);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(alloc, 1), "node")), "n2");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(json_array_get(alloc, 1), "times"),
							   "fenced")), 5100);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_array_get(alloc, 1), "cpu_ns")), 11);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "place")), "scatter:excl");
	json_decref(row);
	/* Requeued: its rows go. */
	CU_ASSERT_EQUAL(jobstore_job_requeue(js, id, "test"), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_PTR_NULL(json_object_get(row, "alloc"));
	/* The run that ended is kept as attempt 1 (docs/PREEMPTION.md). */
	{
		const json_t *att = json_object_get(json_object_get(row, "attrs"), "attempts");

		CU_ASSERT_EQUAL(json_array_size(att), 1);
		CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_array_get(att, 0), "attempt")), 1);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(att, 0), "node")) ?: "", "n1");
		CU_ASSERT_TRUE(json_integer_value(json_object_get(json_object_get(json_array_get(att, 0), "times"),
								  "dispatch")) > 0);
	}
	json_decref(row);
	jobstore_close(js);
	snprintf(cmd, sizeof(cmd), "test \"$(sqlite3 '%s' 'SELECT count(*) FROM job_alloc')\" = 0", path);
	CU_ASSERT_EQUAL(system(cmd), 0);
	unit_tmpdir_remove(dir);
}

/* A one-node GPU job: its count from its attributes, its GPUs from its
 * allocation row, after a restart and in its job object. */
static void test_gpus_kept(void)
{
	struct jobstore *js;
	struct error err;
	struct job *list = NULL, *j, one = { 0 };
	struct job_submit sub = base;
	json_t *row = NULL, *e;
	int64_t id;
	bool seen = false;

	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, ":memory:", &js, &err), 0);
	sub.attrs_json = "{\"Resource_List.ngpus\":\"2\"}";
	sub.ngpus = 2;
	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(js, &sub, &id), 0);
	one.id = id;
	one.ngpus = 2;
	CU_ASSERT_EQUAL_FATAL(job_alloc_init(&one, 1), 0);
	one.alloc[0].node = strdup("n1");
	one.alloc[0].ncpus = 2;
	one.alloc[0].gpus = 0x5;                    /* GPUs 0 and 2 */
	cpumask_parse("0-1", &one.alloc[0].cpus);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0-1", NULL, 5000), 0);
	CU_ASSERT_EQUAL(jobstore_alloc_insert(js, &one), 0);
	job_alloc_free(&one);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (j = list; j; j = j->next)
		if (j->id == id) {
			seen = true;
			CU_ASSERT_EQUAL(j->ngpus, 2);
			CU_ASSERT_EQUAL(j->n_chunks, 0);
			CU_ASSERT_EQUAL_FATAL(j->n_alloc, 1);
			CU_ASSERT_EQUAL(j->alloc[0].gpus, 0x5);
			CU_ASSERT_EQUAL(cpumask_count(&j->alloc[0].cpus), 2);
		}
	CU_ASSERT_TRUE(seen);
	while (list) {
		j = list->next;
		job_free(list);
		list = j;
	}
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "ngpus")), 2);
	e = json_array_get(json_object_get(row, "alloc"), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(e, "ngpus")), 2);
	CU_ASSERT_EQUAL(json_integer_value(json_array_get(json_object_get(e, "gpus"), 1)), 2);
	json_decref(row);
	jobstore_close(js);
}

static void test_reopen_and_version(void)
{
	char *dir = unit_tmpdir();
	char path[4096], sql[4400];
	struct jobstore *js;
	struct error err;
	struct job *list = NULL;
	int64_t id;

	snprintf(path, sizeof(path), "%s/q.db", dir);
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id), 0);
	CU_ASSERT_EQUAL(jobstore_job_requeue(js, id, "why"), 0);
	jobstore_close(js);
	/* Reopen: the job is still there, queued. */
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(list);
	CU_ASSERT_EQUAL(list->id, id);
	CU_ASSERT_EQUAL(list->state, JOB_QUEUED);
	job_free(list);
	jobstore_close(js);
	/* A store from a newer qpoold is refused, not damaged. */
	snprintf(sql, sizeof(sql), "sqlite3 '%s' 'INSERT INTO schema_version VALUES (%d)'", path,
		 jobstore_schema_version() + 1);
	CU_ASSERT_EQUAL(system(sql), 0);
	CU_ASSERT_EQUAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), -EPROTO);
	CU_ASSERT(strstr(err.text, "newer") != NULL);
	unit_tmpdir_remove(dir);
}

/* Upgrade: a store written at schema version 2 (tests/unit/data, a dump of
 * what that qpoold left) is migrated in place when opened, and its jobs,
 * scripts and id sequence survive. */
static void test_migrate_old_store(void)
{
	char *dir = unit_tmpdir();
	char path[4096], cmd[8400];
	struct jobstore *js;
	struct error err;
	struct job *list = NULL, *j;
	json_t *row = NULL;
	int64_t id;
	int n = 0;

	snprintf(path, sizeof(path), "%s/old.db", dir);
	snprintf(cmd, sizeof(cmd), "sqlite3 '%s' < tests/unit/data/jobstore-v2.sql", path);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (j = list; j; j = j->next) {
		n++;
		if (j->id == 1) {
			CU_ASSERT_EQUAL(j->state, JOB_QUEUED);
			CU_ASSERT_EQUAL(j->ncpus, 2);
		} else {
			CU_ASSERT_EQUAL(j->id, 2);
			CU_ASSERT_EQUAL(j->state, JOB_RUNNING);
			CU_ASSERT_STRING_EQUAL(job_node(j) ? job_node(j) : "", "n1");
			CU_ASSERT_STRING_EQUAL(j->queue, "multi8");
		}
	}
	CU_ASSERT_EQUAL(n, 2);
	while (list) {
		j = list->next;
		job_free(list);
		list = j;
	}
	CU_ASSERT_EQUAL(jobstore_job_get(js, 1, true, &row), 0);
	if (row) {
		char *text = json_dumps(row, 0);

		CU_ASSERT(text && strstr(text, "echo waiting") != NULL);
		free(text);
		json_decref(row);
	}
	/* The tables of version 3 are there, and ids go on after the old ones. */
	CU_ASSERT_EQUAL(jobstore_rotation_set(js, "batch", 1001, 7), 0);
	CU_ASSERT_EQUAL(jobstore_node_admin_set(js, "n1", true, "maintenance"), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id), 0);
	CU_ASSERT_EQUAL(id, 4);
	jobstore_close(js);
	/* Opening again migrates nothing and keeps everything. */
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (n = 0; list; n++) {
		j = list->next;
		job_free(list);
		list = j;
	}
	CU_ASSERT_EQUAL(n, 3);
	jobstore_close(js);
	snprintf(cmd, sizeof(cmd), "test \"$(sqlite3 '%s' 'SELECT max(version) FROM schema_version')\" = %d",
		 path, jobstore_schema_version());
	CU_ASSERT_EQUAL(system(cmd), 0);
	/* Schema 19: jobs_done holds only the ended jobs. */
	snprintf(cmd, sizeof(cmd), "sqlite3 '%s' \"SELECT sql FROM sqlite_master WHERE name = 'jobs_done'\""
		 " | grep -q 'WHERE t_done IS NOT NULL'", path);
	CU_ASSERT_EQUAL(system(cmd), 0);
	unit_tmpdir_remove(dir);
}

/* Pages: "after" and "limit" walk every job once, in id order. */
static void test_paging(void)
{
	struct jobstore *js;
	struct error err;
	int64_t id, last = 0, seen = 0;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	for (int i = 0; i < 25; i++)
		CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	for (int page = 0; page < 10; page++) {
		struct jobstore_filter f = { .after = last, .limit = 10 };
		json_t *arr;
		size_t i;
		json_t *o;

		CU_ASSERT_EQUAL_FATAL(jobstore_query(js, &f, &arr), 0);
		json_array_foreach(arr, i, o) {
			CU_ASSERT(json_integer_value(json_object_get(o, "jobid")) > last);
			last = json_integer_value(json_object_get(o, "jobid"));
			seen++;
		}
		CU_ASSERT(json_array_size(arr) == (page < 2 ? 10 : page == 2 ? 5 : 0));
		json_decref(arr);
	}
	CU_ASSERT_EQUAL(seen, 25);
	jobstore_close(js);
}

static long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* The log is written at its full size before the first commit and keeps
 * it through checkpoints and a close; jobs committed before a checkpoint
 * and after it are all there on reopen. */
static void test_wal_reused(void)
{
	char *dir = unit_tmpdir();
	char path[4096], wal[4200];
	struct jobstore *js;
	struct error err;
	struct job *list = NULL;
	long long size;
	int n = 0;
	int64_t id;

	snprintf(path, sizeof(path), "%s/q.db", dir);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), 0);
	size = file_size(wal);
	CU_ASSERT(size >= 4 << 20);
	/* ~5 pages a commit: 600 commits fill the log past a checkpoint twice. */
	for (int i = 0; i < 600; i++) {
		CU_ASSERT_EQUAL(jobstore_begin(js), 0);
		CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id), 0);
		CU_ASSERT_EQUAL(jobstore_commit(js), 0);
		CU_ASSERT_EQUAL(jobstore_checkpoint(js), 0);
	}
	CU_ASSERT_EQUAL(file_size(wal), size);
	CU_ASSERT(file_size(path) > 4096 * 10);   /* the checkpoints reached the database */
	jobstore_close(js);
	CU_ASSERT_EQUAL(file_size(wal), size);
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (struct job *j = list, *next; j; j = next) {
		next = j->next;
		n++;
		job_free(j);
	}
	CU_ASSERT_EQUAL(n, 600);
	jobstore_close(js);
	unit_tmpdir_remove(dir);
}

/* job.launch's job part says what the row and the payload say, with the
 * default output paths, joined output and the two stamps so far. */
static void test_launch(void)
{
	struct job_submit joined = base;
	struct jobstore *js;
	struct error err;
	int64_t id, id2;
	json_t *o, *row;
	char want[64];

	joined.join = true;
	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &joined, &id2), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0-1", NULL, 2000), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_launch(js, id, &o), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, true, &row), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "jobid")), id);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "user")), "alice");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "uid")), 1001);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "gid")), 1001);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "ncpus")), 2);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "mem")), 1 << 20);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "walltime")), 60);
	CU_ASSERT_FALSE(json_boolean_value(json_object_get(o, "join")));
	for (const char *const *k = (const char *const[]){ "name", "queue", "workdir", "stdout", "stderr",
							   "script", NULL }; *k; k++)
		CU_ASSERT(json_equal(json_object_get(o, *k), json_object_get(row, *k)));
	CU_ASSERT(json_equal(json_object_get(o, "env"), json_object_get(row, "env")));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(o, "times"), "submit")), 1000);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(o, "times"), "dispatch")), 2000);
	CU_ASSERT_EQUAL(json_object_size(json_object_get(o, "times")), 2);
	json_decref(o);
	json_decref(row);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_launch(js, id2, &o), 0);
	snprintf(want, sizeof(want), "/home/alice/hello.o%lld", (long long)id2);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "stdout")), want);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "stderr")), want);
	CU_ASSERT_TRUE(json_boolean_value(json_object_get(o, "join")));
	json_decref(o);
	CU_ASSERT_EQUAL(jobstore_job_launch(js, 999, &o), -ENOENT);
	jobstore_close(js);
}

/* The submitter's umask reaches job.launch; a job stored without one
 * (rows from before migration 4) launches with 022. */
static void test_launch_umask(void)
{
	struct job_submit strict = base, none = base;
	struct jobstore *js;
	struct error err;
	int64_t a, b;
	json_t *o;

	strict.umask = 077;
	none.umask = -1;
	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &strict, &a), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &none, &b), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_launch(js, a, &o), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "umask")), 077);
	json_decref(o);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_launch(js, b, &o), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "umask")), 022);
	json_decref(o);
	jobstore_close(js);
}

/* qalter/qmove: a waiting job's fields change, a NULL path keeps the
 * stored (default) one, and a running job is not touched. */
static void test_alter(void)
{
	struct jobstore *js;
	struct error err;
	struct job_submit a = base;
	int64_t id;
	json_t *row;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id), 0);
	a.name = "renamed";
	a.queue = "short";
	a.ncpus = 4;
	a.walltime = 120;
	a.stdout_path = NULL;
	a.stderr_path = "/tmp/err";
	a.rerunnable = true;
	CU_ASSERT_EQUAL(jobstore_job_alter(js, id, &a), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "name")), "renamed");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "queue")), "short");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "ncpus")), 4);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "walltime")), 120);
	/* The default output follows the new name. */
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "stdout")), "/home/alice/renamed.o1");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "stderr")), "/tmp/err");
	json_decref(row);
	/* attrs: replaced when given (qalter -l of a one-node shape), kept
	 * when NULL. */
	a.attrs_json = "{\"Resource_List.mpiprocs\":\"2\"}";
	CU_ASSERT_EQUAL(jobstore_job_alter(js, id, &a), 0);
	a.attrs_json = NULL;
	a.ncpus = 2;
	CU_ASSERT_EQUAL(jobstore_job_alter(js, id, &a), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(row, "attrs"),
								 "Resource_List.mpiprocs")), "2");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "ncpus")), 2);
	json_decref(row);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0-3", NULL, 2000), 0);
	CU_ASSERT_EQUAL(jobstore_job_alter(js, id, &base), -ENOENT);
	jobstore_close(js);
}

/* A job across nodes is recorded with the CPU time of all its nodes
 * (the sum of their reports) and the highest node's peak memory; a job
 * on one node keeps its own figures. */
static void test_across_nodes_usage(void)
{
	struct jobstore *js;
	struct error err;
	struct job wide = { 0 };
	struct job_submit sub = base;
	struct job_result prim = { .state = JOB_COMPLETED, .exit_status = 0, .cpu_ns = 10000000,
				   .mem_peak = 4096 };
	struct job_result sis = { .state = JOB_COMPLETED, .exit_status = 0, .cpu_ns = 2500000000,
				  .mem_peak = 65536 };
	json_t *row = NULL;
	int64_t id, one;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	sub.chunks_json = "[{\"count\":2,\"ncpus\":1,\"mpiprocs\":1,\"ompthreads\":0,\"mem\":0}]";
	sub.place = "scatter";
	sub.ncpus = 2;
	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(js, &sub, &id), 0);
	wide.id = id;
	CU_ASSERT_EQUAL_FATAL(job_alloc_init(&wide, 2), 0);
	for (int i = 0; i < 2; i++) {
		wide.alloc[i].node = strdup(i ? "n2" : "n1");
		wide.alloc[i].ncpus = 1;
		wide.alloc[i].mpiprocs = 1;
		cpumask_parse("0", &wide.alloc[i].cpus);
		snprintf(wide.alloc[i].mems, sizeof(wide.alloc[i].mems), "0");
	}
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0", NULL, 5000), 0);
	CU_ASSERT_EQUAL(jobstore_alloc_insert(js, &wide), 0);
	job_alloc_free(&wide);
	/* The sister's report first, then the primary's, then the job. */
	CU_ASSERT_EQUAL(jobstore_alloc_result(js, id, 1, &sis, 6000, "{\"status\":\"exited\"}"), 0);
	CU_ASSERT_EQUAL(jobstore_alloc_result(js, id, 0, &prim, 6100, "{\"status\":\"exited\"}"), 0);
	CU_ASSERT_EQUAL(jobstore_job_finish(js, id, &prim, 6200), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "cpu_ns")), 2510000000);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "mem_peak")), 65536);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_array_get(json_object_get(row, "alloc"), 1),
							   "cpu_ns")), 2500000000);
	json_decref(row);

	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(js, &base, &one), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, one, "n1", "0-1", NULL, 7000), 0);
	CU_ASSERT_EQUAL(jobstore_job_finish(js, one, &sis, 8000), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, one, false, &row), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "cpu_ns")), 2500000000);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "mem_peak")), 65536);
	json_decref(row);
	jobstore_close(js);
}

static int count_uid_row(const struct jobstore_row *r, void *ud)
{
	int64_t *ends = ud;

	ends[ends[0] + 1 < 8 ? ++ends[0] : 0] = row_i64(r, 3);
	return 0;
}

/* The fair share's read at a start (usage.c): the jobs that ran and
 * ended after the horizon, by jobs_done, which since schema 19 holds no
 * job without t_done; not the older ones, not one that never ran. */
static void test_usage_read(void)
{
	struct jobstore *js;
	struct error err;
	struct job_result res = { .state = JOB_COMPLETED, .exit_status = 0 };
	struct jobstore_ev_params p = { .n = 1 };
	int64_t old, recent, running, ends[8] = { 0 };

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(js, &base, &old), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(js, &base, &recent), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(js, &base, &running), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, old, "n1", "0", NULL, 1000), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, recent, "n1", "1", NULL, 1000), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, running, "n1", "2", NULL, 1000), 0);
	res.times[STAMP_EXEC] = 2000;
	res.times[STAMP_EXIT] = 2900;
	CU_ASSERT_EQUAL(jobstore_job_finish(js, old, &res, 3000), 0);
	res.times[STAMP_EXIT] = 8900;
	CU_ASSERT_EQUAL(jobstore_job_finish(js, recent, &res, 9000), 0);
	p.v[0].i = 5000;
	CU_ASSERT_EQUAL(jobstore_sql_rows(js, usage_load_sql, &p, count_uid_row, ends), 0);
	CU_ASSERT_EQUAL(ends[0], 1);
	CU_ASSERT_EQUAL(ends[1], 8900);
	ends[0] = 0;
	p.v[0].i = 0;
	CU_ASSERT_EQUAL(jobstore_sql_rows(js, usage_load_sql, &p, count_uid_row, ends), 0);
	CU_ASSERT_EQUAL(ends[0], 2);
	jobstore_close(js);
}

/* scontrol's Restarts: each requeue counted in attrs.run_count; and a
 * begin time set on a waiting or running job (scontrol update
 * StartTime=), which a restarted qpoold reads back. */
static void test_requeue_begin(void)
{
	struct jobstore *js;
	struct error err;
	struct job *list = NULL;
	int64_t id;
	json_t *row;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id), 0);
	for (int k = 1; k <= 2; k++) {
		char want[8];

		CU_ASSERT_EQUAL(jobstore_begin(js), 0);
		CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0", NULL, 2000), 0);
		CU_ASSERT_EQUAL(jobstore_job_requeue(js, id, "requeued by qrerun"), 0);
		CU_ASSERT_EQUAL(jobstore_commit(js), 0);
		CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
		snprintf(want, sizeof(want), "%d", k);
		CU_ASSERT_STRING_EQUAL(wire_str(json_object_get(row, "attrs"), "run_count") ?: "", want);
		json_decref(row);
	}
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0", NULL, 3000), 0);
	CU_ASSERT_EQUAL(jobstore_job_begin_set(js, id, 4000000000LL), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(json_object_get(row, "attrs"), "Execution_Time") ?: "", "4000000000");
	CU_ASSERT_STRING_EQUAL(wire_str(json_object_get(row, "attrs"), "run_count") ?: "", "2");
	json_decref(row);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(list);
	CU_ASSERT_EQUAL(list->start_after, 4000000000LL);
	job_free(list);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_begin_set(js, id, 0), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_PTR_NULL(wire_str(json_object_get(row, "attrs"), "Execution_Time"));
	json_decref(row);
	jobstore_close(js);
}

/* Start estimates kept beside the job (docs/ESTIMATES.md): the first
 * once, the one at its start. */
static void test_estimates(void)
{
	struct jobstore *js;
	struct error err;
	int64_t id;
	json_t *row;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_estimate_set(js, id, true, 4000000100LL), 0);
	CU_ASSERT_EQUAL(jobstore_job_estimate_set(js, id, true, 4000000200LL), 0);   /* kept: the first */
	CU_ASSERT_EQUAL(jobstore_job_estimate_set(js, id + 1000, true, 1), 0);      /* no row: nothing */
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0", NULL, 3000), 0);
	CU_ASSERT_EQUAL(jobstore_job_estimate_set(js, id, false, 4000000150LL), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(json_object_get(row, "attrs"), "estimated.first_start_time") ?: "",
			       "4000000100");
	CU_ASSERT_STRING_EQUAL(wire_str(json_object_get(row, "attrs"), "estimated.start_time") ?: "", "4000000150");
	json_decref(row);
	jobstore_close(js);
}

/* A one-node job's NUMA nodes (schema 18): written by its dispatch, read
 * back by the active load (a restart, a takeover) as the pass had them;
 * none kept is none; a requeue forgets them. */
static void test_numa_mems_kept(void)
{
	struct jobstore *js;
	struct error err;
	struct job *list = NULL, *j;
	int64_t id, bare;
	int seen = 0;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(js, &base, &id), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(js, &base, &bare), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "4-5", "1", 2000), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, bare, "n1", "0-1", NULL, 2000), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (j = list; j; j = j->next) {
		CU_ASSERT_EQUAL_FATAL(j->n_alloc, 1);
		if (j->id == id) {
			seen++;
			CU_ASSERT_STRING_EQUAL(j->alloc[0].mems, "1");
			CU_ASSERT_EQUAL(cpumask_count(&j->alloc[0].cpus), 2);
		} else if (j->id == bare) {
			seen++;
			CU_ASSERT_STRING_EQUAL(j->alloc[0].mems, "");
		}
	}
	CU_ASSERT_EQUAL(seen, 2);
	while (list) {
		j = list->next;
		job_free(list);
		list = j;
	}
	/* Requeued: no node, no CPUs, no NUMA nodes. */
	CU_ASSERT_EQUAL(jobstore_job_requeue(js, id, "requeued"), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (j = list; j; j = j->next)
		if (j->id == id)
			CU_ASSERT_EQUAL(j->n_alloc, 0);
	while (list) {
		j = list->next;
		job_free(list);
		list = j;
	}
	jobstore_close(js);
}

/* A suspension kept apart from the comment (attrs.suspended_by, written
 * by suspend.c): the active load reads it back for a running job, a
 * requeue forgets it. */
static void test_suspended_by_kept(void)
{
	struct jobstore *js;
	struct error err;
	struct job *list = NULL, *j;
	struct job_submit sub = base;
	json_t *row = NULL;
	int64_t id;
	int seen = 0;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	sub.attrs_json = "{\"suspended_by\":\"7\"}";
	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(js, &sub, &id), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0", NULL, 2000), 0);
	CU_ASSERT_EQUAL(jobstore_job_set_state(js, id, JOB_RUNNING, "an admin's own words"), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (j = list; j; j = j->next)
		if (j->id == id) {
			seen++;
			CU_ASSERT_TRUE(j->suspended);
			CU_ASSERT_EQUAL(j->suspended_by, 7);
		}
	CU_ASSERT_EQUAL(seen, 1);
	while (list) {
		j = list->next;
		job_free(list);
		list = j;
	}
	CU_ASSERT_EQUAL(jobstore_job_requeue(js, id, "node lost"), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_PTR_NULL(json_object_get(json_object_get(row, "attrs"), "suspended_by"));
	CU_ASSERT_STRING_EQUAL(wire_str(json_object_get(row, "attrs"), "run_count") ?: "", "1");
	json_decref(row);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (j = list; j; j = j->next)
		CU_ASSERT_FALSE(j->suspended);
	while (list) {
		j = list->next;
		job_free(list);
		list = j;
	}
	jobstore_close(js);
}

/* On both backends (jobstore, jobstore_pg). */
static const struct unit_test jobstore_tests[] = {
	{ "suspended_by_kept", test_suspended_by_kept },
	{ "numa_mems_kept", test_numa_mems_kept },
	{ "requeue_begin", test_requeue_begin },
	{ "estimates", test_estimates },
	{ "launch_umask", test_launch_umask },
	{ "alter", test_alter },
	{ "launch", test_launch },
	{ "paging", test_paging },
	{ "insert_query", test_insert_query },
	{ "lifecycle", test_lifecycle },
	{ "across_nodes_usage", test_across_nodes_usage },
	{ "usage_read", test_usage_read },
	{ NULL, NULL },
};

UNIT_STORE_SUITE(jobstore, jobstore_tests);

/* The SQLite file itself: its log, its migrations. */
static const struct unit_test jobstore_sqlite_tests[] = {
	{ "wal_reused", test_wal_reused },
	{ "reopen_and_version", test_reopen_and_version },
	{ "migrate_old_store", test_migrate_old_store },
	{ "migrate_v5_alloc", test_migrate_v5_alloc },
	{ "gpus_kept", test_gpus_kept },
	{ NULL, NULL },
};

UNIT_SUITE(jobstore_sqlite, jobstore_sqlite_tests);
