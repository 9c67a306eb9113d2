/* SPDX-License-Identifier: MIT */
/* jobattr_name_check, and qstat -f of a row whose recorded names an older qpool let in. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jobattr.h"
#include "jobfmt.h"
#include "pbsfmt.h"
#include "unit.h"

static void test_names(void)
{
	static const char *const good[] = {
		"Account_Name", "Mail_Points", "Resource_List.select", "Resource_List.foo_2",
		"Execution_Time", "group_list", "umask", "interactive", "Join_Path", "my.site_attr", "x",
	};
	static const char *const bad[] = {
		"", "Job_Owner", "job_owner", "euser", "job_state", "exec_host", "Exit_status",
		"resources_used", "resources_used.cput", "Resource_List", "qpool_state", "exec_time",
		"Output_Path", "a b", "a-b", "9lives", "_x", "x.", "a..b", ".x", "x\nJob Id: 9",
		"x=y", "Job_Owner.x",
		"a123456789012345678901234567890123456789012345678901234567890123456789",
	};
	struct error err;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CU_ASSERT_EQUAL(jobattr_name_check(good[i], &err), 0);
		CU_ASSERT_TRUE(jobattr_name_ok(good[i]));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(jobattr_name_check(bad[i], &err), -EINVAL);
		/* One line, whatever the name held. */
		CU_ASSERT_PTR_NULL(strchr(err.text, '\n'));
		CU_ASSERT_FALSE(jobattr_name_ok(bad[i]));
	}
}

/* A row recorded before the names were checked prints neither over
 * qpool's own attributes nor as lines of its own. */
static void test_old_row(void)
{
	json_t *job = json_pack("{s:I, s:s, s:s, s:s, s:s, s:I, s:{s:I}, s:{s:s, s:s, s:s, s:s, s:s, s:s}}",
				"jobid", (json_int_t)7, "name", "j", "owner", "alice", "state", "held",
				"queue", "batch", "ncpus", (json_int_t)1, "times", "submit", (json_int_t)1000,
				"attrs", "Job_Owner", "root@evil", "job_state", "F", "Exit_status", "0",
				"resources_used.cput", "99:00:00", "x\nJob Id: 9.forged\n    Job_Owner", "root",
				"Account_Name", "kept");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(job);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	pbsfmt_job_full(f, job, "srv", 2000);
	jobfmt_job_full(f, job);
	fclose(f);
	CU_ASSERT_PTR_NULL(strstr(buf, "evil"));
	CU_ASSERT_PTR_NULL(strstr(buf, "forged"));
	CU_ASSERT_PTR_NULL(strstr(buf, "99:00:00"));
	CU_ASSERT_PTR_NULL(strstr(buf, "Exit_status"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "    Job_Owner = alice@srv\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "    job_state = H\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "    Account_Name = kept\n"));
	a = pbsfmt_job_attrs(job, "srv", 2000);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(a, "Job_Owner")), "alice@srv");
	CU_ASSERT_PTR_NULL(json_object_get(a, "Exit_status"));
	json_decref(a);
	free(buf);
	json_decref(job);
}

/* A one-chunk select's mpiprocs: a decimal count in 1..2^20, else none. */
static void test_mpiprocs(void)
{
	static const struct {
		const char *in;
		bool ok;
		uint64_t n;
	} t[] = {
		{ "1", true, 1 }, { "32", true, 32 }, { "1048576", true, 1048576 },
		{ "0", false, 0 }, { "1048577", false, 0 }, { "", false, 0 }, { "-1", false, 0 },
		{ "2x", false, 0 }, { " 2", false, 0 }, { "99999999999999999999", false, 0 },
		{ "0x10", false, 0 }, { NULL, false, 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t n = 7;

		CU_ASSERT_EQUAL(jobattr_mpiprocs(t[i].in, &n), t[i].ok);
		CU_ASSERT_EQUAL(n, t[i].ok ? t[i].n : 7);
	}
}

static const struct unit_test jobattr_tests[] = {
	{ "names", test_names },
	{ "old_row", test_old_row },
	{ "mpiprocs", test_mpiprocs },
	{ NULL, NULL },
};

UNIT_SUITE(jobattr, jobattr_tests);
