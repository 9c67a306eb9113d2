/* SPDX-License-Identifier: MIT */
/* Golden-output tests for lib/jobfmt: qstat's tables and -f detail, TZ=UTC, fixed clocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobfmt.h"
#include "unit.h"

/* 2026-11-22 11:09:09.123 UTC, the jobs' submit stamp. */
#define T0 1795345749123000000LL

static const char jobs_json[] =
	"[\n"
	"{\"jobid\": 12, \"name\": \"myjob\", \"owner\": \"alice\", \"uid\": 1001, \"gid\": 1001, \"queue\": \"batch\", \"state\": \"running\", \"ncpus\": 2, \"mem\": 1073741824, \"walltime\": 600, \"workdir\": \"/home/alice\", \"stdout\": \"/home/alice/x.o12\", \"stderr\": \"/home/alice/x.e12\", \"join\": false, \"node\": \"n1\", \"cpus\": \"0-1\", \"exit_status\": null, \"exit_signal\": null, \"reason\": null, \"cpu_ns\": null, \"mem_peak\": null, \"times\": {\"submit\": 1795345749123000000, \"dispatch\": 1795345750623000000, \"launch\": 1795345750624000000, \"wrap\": 1795345750625000000, \"fenced\": 1795345750626000000, \"exec\": 1795345751123000000}},\n"
	"{\"jobid\": 13, \"name\": \"a-very-long-job-name-indeed\", \"owner\": \"bob\", \"queue\": \"short\", \"state\": \"completed\", \"ncpus\": 1, \"mem\": 0, \"walltime\": 30, \"workdir\": \"/w\", \"stdout\": \"/w/o\", \"stderr\": \"/w/e\", \"join\": true, \"node\": \"n2\", \"cpus\": \"1\", \"exit_status\": 0, \"exit_signal\": null, \"reason\": null, \"cpu_ns\": 1250000000, \"mem_peak\": 12582912, \"times\": {\"submit\": 1795345749123000000, \"dispatch\": 1795345754123000000, \"exec\": 1795345759123000000, \"exit\": 1795345849123000000, \"released\": 1795345849127000000, \"done\": 1795345849133000000}},\n"
	"{\"jobid\": 14, \"name\": \"ünïcødé-job-name-long\", \"owner\": \"carol\", \"queue\": \"batch\", \"state\": \"queued\", \"ncpus\": 4, \"node\": null, \"cpus\": null, \"exit_status\": null, \"exit_signal\": null, \"reason\": \"waiting for 4 free CPUs\", \"times\": {\"submit\": 1795345749123000000}},\n"
	"{\"jobid\": 1234, \"name\": \"two\\nlines\", \"owner\": \"dave\", \"queue\": \"batch\", \"state\": \"held\", \"ncpus\": 16, \"node\": null, \"times\": {\"submit\": 1795345749123000000}},\n"
	"{\"jobid\": 15, \"name\": \"killed\", \"owner\": \"alice\", \"queue\": \"batch\", \"state\": \"failed\", \"ncpus\": 1, \"node\": \"n1\", \"exit_status\": 137, \"exit_signal\": 9, \"reason\": \"cannot open /etc/x.out:\\tPermission denied\", \"times\": {\"submit\": 1795345749123000000, \"dispatch\": 1795345749124000000, \"exec\": 1795345749125000000, \"exit\": 1795345752125000000}}\n"
	"]\n";

static const char queues_json[] =
	"[\n"
	"{\"name\": \"batch\", \"default\": true, \"enabled\": true, \"started\": true, \"priority\": 0, \"ncpus\": 0, \"ncpus_default\": 1, \"ncpus_max\": 64, \"mem_default\": 0, \"mem_max\": 0, \"walltime_default\": 600, \"walltime_max\": 86400, \"reserve\": \"none\", \"queued\": 3, \"held\": 1, \"running\": 12},\n"
	"{\"name\": \"multi8\", \"default\": false, \"enabled\": true, \"started\": false, \"priority\": 100, \"ncpus\": 8, \"mem_max\": 161061273600, \"walltime_max\": 86400, \"reserve\": \"realtime\", \"queued\": 0, \"held\": 0, \"running\": 2},\n"
	"{\"name\": \"idle\", \"default\": false, \"enabled\": false, \"started\": true, \"priority\": -5, \"ncpus\": 0, \"ncpus_max\": 0, \"mem_max\": 0, \"walltime_max\": 0, \"reserve\": \"none\", \"queued\": 0, \"held\": 0, \"running\": 0}\n"
	"]\n";

static const char nodes_json[] =
	"[\n"
	"{\"name\": \"n1\", \"state\": \"up\", \"cpus\": \"0-1\", \"ncpus\": 2, \"free\": 0, \"mems\": \"0\", \"cgroup\": \"v1\", \"rt\": true, \"rt_reason\": null, \"jobs\": [12, 15]},\n"
	"{\"name\": \"node-long-name-02\", \"state\": \"drained\", \"cpus\": \"0-127\", \"ncpus\": 128, \"free\": 128, \"cgroup\": \"v2\", \"rt\": false, \"rt_reason\": \"no CAP_SYS_NICE\", \"jobs\": []},\n"
	"{\"name\": \"n3\", \"state\": \"down\", \"cpus\": \"2-3\", \"ncpus\": 2, \"free\": 2, \"cgroup\": \"none\", \"rt\": false, \"jobs\": []}\n"
	"]\n";

static const char jobs_table[] =
	"Job id  Name              User   State      Queue  NCPUS  Node   Elapsed\n"
	"------  ----------------  -----  ---------  -----  -----  ----  --------\n"
	"12      myjob             alice  running    batch      2  n1    01:02:03\n"
	"13      a-very-long-job*  bob    completed  short      1  n2    00:01:30\n"
	"14      ünïcødé-job-nam*  carol  queued     batch      4  -            -\n"
	"1234    two?lines         dave   held       batch     16  -            -\n"
	"15      killed            alice  failed     batch      1  n1    00:00:03\n";

static const char jobs_full[] =
	"Job Id: 12\n"
	"    Job_Name = myjob\n"
	"    Job_Owner = alice\n"
	"    job_state = running\n"
	"    queue = batch\n"
	"    ncpus = 2\n"
	"    mem = 1G\n"
	"    walltime = 00:10:00\n"
	"    exec_host = n1\n"
	"    exec_cpus = 0-1\n"
	"    Output_Path = /home/alice/x.o12\n"
	"    Error_Path = /home/alice/x.e12\n"
	"    workdir = /home/alice\n"
	"    submit_time = 2026-11-22 11:09:09.123\n"
	"    dispatch_time = 2026-11-22 11:09:10.623\n"
	"    launch_time = 2026-11-22 11:09:10.624\n"
	"    wrap_time = 2026-11-22 11:09:10.625\n"
	"    fenced_time = 2026-11-22 11:09:10.626\n"
	"    exec_time = 2026-11-22 11:09:11.123\n"
	"Job Id: 13\n"
	"    Job_Name = a-very-long-job-name-indeed\n"
	"    Job_Owner = bob\n"
	"    job_state = completed\n"
	"    queue = short\n"
	"    ncpus = 1\n"
	"    mem = 0\n"
	"    walltime = 00:00:30\n"
	"    exec_host = n2\n"
	"    exec_cpus = 1\n"
	"    exit_status = 0\n"
	"    Output_Path = /w/o\n"
	"    Error_Path = /w/e\n"
	"    Join_Path = oe\n"
	"    workdir = /w\n"
	"    cpu_time = 00:00:01.25\n"
	"    mem_peak = 12M\n"
	"    submit_time = 2026-11-22 11:09:09.123\n"
	"    dispatch_time = 2026-11-22 11:09:14.123\n"
	"    exec_time = 2026-11-22 11:09:19.123\n"
	"    exit_time = 2026-11-22 11:10:49.123\n"
	"    released_time = 2026-11-22 11:10:49.127\n"
	"    done_time = 2026-11-22 11:10:49.133\n"
	"Job Id: 14\n"
	"    Job_Name = ünïcødé-job-name-long\n"
	"    Job_Owner = carol\n"
	"    job_state = queued\n"
	"    queue = batch\n"
	"    ncpus = 4\n"
	"    reason = waiting for 4 free CPUs\n"
	"    submit_time = 2026-11-22 11:09:09.123\n"
	"Job Id: 1234\n"
	"    Job_Name = two\\nlines\n"
	"    Job_Owner = dave\n"
	"    job_state = held\n"
	"    queue = batch\n"
	"    ncpus = 16\n"
	"    submit_time = 2026-11-22 11:09:09.123\n"
	"Job Id: 15\n"
	"    Job_Name = killed\n"
	"    Job_Owner = alice\n"
	"    job_state = failed\n"
	"    queue = batch\n"
	"    ncpus = 1\n"
	"    exec_host = n1\n"
	"    exit_status = 137\n"
	"    exit_signal = 9\n"
	"    reason = cannot open /etc/x.out:\\tPermission denied\n"
	"    submit_time = 2026-11-22 11:09:09.123\n"
	"    dispatch_time = 2026-11-22 11:09:09.124\n"
	"    exec_time = 2026-11-22 11:09:09.125\n"
	"    exit_time = 2026-11-22 11:09:12.125\n";

static const char queues_table[] =
	"Queue   Enabled  Started  Default  Priority  Queued  Held  Running  Limits\n"
	"------  -------  -------  -------  --------  ------  ----  -------  -----------------------------------------------------\n"
	"batch   yes      yes      yes             0       3     1       12  ncpus<=64 walltime<=24:00:00\n"
	"multi8  yes      no       no            100       0     0        2  ncpus=8 mem<=150G walltime<=24:00:00 reserve=realtime\n"
	"idle    no       yes      no             -5       0     0        0  -\n";

static const char nodes_table[] =
	"Node               State    NCPUS  Free  CPUs   Cgroup  RT   Jobs\n"
	"-----------------  -------  -----  ----  -----  ------  ---  -----\n"
	"n1                 up           2     0  0-1    v1      yes  12,15\n"
	"node-long-name-02  drained    128   128  0-127  v2      no   -\n"
	"n3                 down         2     2  2-3    none    no   -\n";

/* A pool with GPUs on some nodes: the GPUs column, free/total, "-" on the others. */
static const char nodes_gpus_json[] =
	"[\n"
	"{\"name\": \"g1\", \"state\": \"up\", \"cpus\": \"0-1\", \"ncpus\": 2, \"free\": 1, \"cgroup\": \"v1\", \"rt\": true, \"jobs\": [12], \"ngpus\": 2, \"gpus_free\": 1},\n"
	"{\"name\": \"n2\", \"state\": \"up\", \"cpus\": \"0-1\", \"ncpus\": 2, \"free\": 2, \"cgroup\": \"v1\", \"rt\": true, \"jobs\": [], \"ngpus\": 0, \"gpus_free\": 0}\n"
	"]\n";

static const char nodes_gpus_table[] =
	"Node  State  NCPUS  Free  GPUs  CPUs  Cgroup  RT   Jobs\n"
	"----  -----  -----  ----  ----  ----  ------  ---  ----\n"
	"g1    up         2     1   1/2  0-1   v1      yes  12\n"
	"n2    up         2     2     -  0-1   v1      yes  -\n";

/* Nodes that say their memory: Mem, free/offered; "-" for one that does not. */
static const char nodes_mem_json[] =
	"[\n"
	"{\"name\": \"m1\", \"state\": \"up\", \"cpus\": \"0-1\", \"ncpus\": 2, \"free\": 1, \"cgroup\": \"v1\", \"rt\": true, \"jobs\": [12], \"mem_free\": 1610612736, \"mem_assigned\": 2415919104},\n"
	"{\"name\": \"m2\", \"state\": \"up\", \"cpus\": \"0-63\", \"ncpus\": 64, \"free\": 64, \"cgroup\": \"v2\", \"rt\": false, \"jobs\": [], \"mem_free\": 536870912000, \"mem_assigned\": 0, \"ngpus\": 4, \"gpus_free\": 4},\n"
	"{\"name\": \"m3\", \"state\": \"down\", \"cpus\": \"0\", \"ncpus\": 1, \"free\": 1, \"cgroup\": \"none\", \"rt\": false, \"jobs\": [], \"mem_free\": 524288000, \"mem_assigned\": 0},\n"
	"{\"name\": \"m4\", \"state\": \"down\", \"cpus\": \"0\", \"ncpus\": 1, \"free\": 1, \"cgroup\": \"none\", \"rt\": false, \"jobs\": []}\n"
	"]\n";

static const char nodes_mem_table[] =
	"Node  State  NCPUS  Free        Mem  GPUs  CPUs  Cgroup  RT   Jobs\n"
	"----  -----  -----  ----  ---------  ----  ----  ------  ---  ----\n"
	"m1    up         2     1  1.5G/3.8G     -  0-1   v1      yes  12\n"
	"m2    up        64    64  500G/500G   4/4  0-63  v2      no   -\n"
	"m3    down       1     1  500M/500M     -  0     none    no   -\n"
	"m4    down       1     1          -     -  0     none    no   -\n";

static void tz_set(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fprintf(stderr, "fixture: %s at line %d\n", e.text, e.line);
	return j;
}

/* Output of one formatter, as a string the caller frees. */
enum fmt { FMT_JOBS, FMT_FULL, FMT_QUEUES, FMT_NODES };

static char *render(enum fmt which, const json_t *doc, int64_t now)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	json_t *job;
	int r = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	switch (which) {
	case FMT_JOBS:
		r = jobfmt_jobs_table(f, doc, now);
		break;
	case FMT_FULL:
		json_array_foreach(doc, i, job)
			jobfmt_job_full(f, job);
		break;
	case FMT_QUEUES:
		r = jobfmt_queues_table(f, doc);
		break;
	case FMT_NODES:
		r = jobfmt_nodes_table(f, doc);
		break;
	}
	CU_ASSERT_EQUAL(r, 0);
	fclose(f);
	return buf;
}

static void check(enum fmt which, const char *json, int64_t now, const char *expected)
{
	json_t *doc = load(json);
	char *out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	tz_set("UTC");
	out = render(which, doc, now);
	CU_ASSERT_STRING_EQUAL(out, expected);
	if (strcmp(out, expected) != 0)
		fprintf(stderr, "\n--- expected\n%s--- got\n%s---\n", expected, out);
	free(out);
	json_decref(doc);
}

static void test_jobs_table(void)
{
	/* Job 12 runs since exec = T0 + 2 s; now is 1 h 2 min 3 s later. */
	check(FMT_JOBS, jobs_json, T0 + 2000000000LL + 3723000000000LL, jobs_table);
}

static void test_jobs_table_empty(void)
{
	check(FMT_JOBS, "[]", T0, "");
}

static void test_job_full(void)
{
	check(FMT_FULL, jobs_json, 0, jobs_full);
}

static void test_queues_table(void)
{
	check(FMT_QUEUES, queues_json, 0, queues_table);
}

static void test_nodes_table(void)
{
	check(FMT_NODES, nodes_json, 0, nodes_table);
	check(FMT_NODES, nodes_gpus_json, 0, nodes_gpus_table);
	check(FMT_NODES, nodes_mem_json, 0, nodes_mem_table);
}

/* Wrongly typed members are shown as missing, never trusted. */
static void test_hostile(void)
{
	static const char job[] =
		"[{\"jobid\": 3, \"name\": 5, \"state\": [], \"ncpus\": \"2\", \"mem\": -1,"
		" \"times\": \"soon\", \"exit_status\": \"0\"}]";

	check(FMT_FULL, job, 0, "Job Id: 3\n");
	check(FMT_JOBS, job, T0,
	      "Job id  Name  User  State  Queue  NCPUS  Node  Elapsed\n"
	      "------  ----  ----  -----  -----  -----  ----  -------\n"
	      "3             ?     ?      -          -  -           -\n");
}

static void test_time_local(void)
{
	char buf[64];

	/* A POSIX TZ string needs no tzdata: UTC+5:30. */
	tz_set("XST-5:30");
	jobfmt_time(buf, sizeof(buf), T0);
	CU_ASSERT_STRING_EQUAL(buf, "2026-11-22 16:39:09.123");
	tz_set("UTC");
	jobfmt_time(buf, sizeof(buf), T0 + 876000000LL);
	CU_ASSERT_STRING_EQUAL(buf, "2026-11-22 11:09:09.999");
	jobfmt_time(buf, sizeof(buf), 0);
	CU_ASSERT_STRING_EQUAL(buf, "1970-01-01 00:00:00.000");
}

static const struct unit_test qstat_format_tests[] = {
	{ "jobs_table", test_jobs_table },
	{ "jobs_table_empty", test_jobs_table_empty },
	{ "job_full", test_job_full },
	{ "queues_table", test_queues_table },
	{ "nodes_table", test_nodes_table },
	{ "hostile", test_hostile },
	{ "time_local", test_time_local },
	{ NULL, NULL },
};

UNIT_SUITE(qstat_format, qstat_format_tests);
