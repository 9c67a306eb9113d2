/* SPDX-License-Identifier: MIT */
/* Golden-output tests for lib/pbsfmt: PBS Pro's qstat layouts, TZ=UTC, fixed clocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pbsfmt.h"
#include "unit.h"

/* 2026-11-22 11:09:09.123 UTC, the jobs' submit stamp. */
#define T0 1795345749123000000LL
/* Job 12 runs since exec = T0 + 2 s; now is 1 h 2 min 3 s later. */
#define NOW (T0 + 2000000000LL + 3723000000000LL)

static const char jobs_json[] =
	"[\n"
	"{\"jobid\": 12, \"name\": \"myjob\", \"owner\": \"alice\", \"queue\": \"batch\", \"state\": \"running\", \"ncpus\": 2, \"mem\": 1073741824, \"walltime\": 600, \"workdir\": \"/home/alice\", \"stdout\": \"/home/alice/x.o12\", \"stderr\": \"/home/alice/x.e12\", \"join\": false, \"node\": \"n1\", \"cpus\": \"0-1\", \"exit_status\": null, \"exit_signal\": null, \"reason\": null, \"cpu_ns\": null, \"mem_peak\": null, \"times\": {\"submit\": 1795345749123000000, \"dispatch\": 1795345750623000000, \"exec\": 1795345751123000000}, \"env\": {\"HOME\": \"/home/alice\"}},\n"
	"{\"jobid\": 13, \"name\": \"a-very-long-job-name-indeed\", \"owner\": \"bob-with-a-long-name\", \"queue\": \"short\", \"state\": \"completed\", \"ncpus\": 1, \"mem\": 0, \"walltime\": 30, \"workdir\": \"/w\", \"stdout\": \"/w/o\", \"stderr\": \"/w/e\", \"join\": true, \"node\": \"n2\", \"cpus\": \"1\", \"exit_status\": 0, \"exit_signal\": null, \"reason\": null, \"cpu_ns\": 1250000000, \"mem_peak\": 12582912, \"times\": {\"submit\": 1795345749123000000, \"dispatch\": 1795345754123000000, \"exec\": 1795345759123000000, \"exit\": 1795345849123000000, \"done\": 1795345849133000000}},\n"
	"{\"jobid\": 14, \"name\": \"waits\", \"owner\": \"carol\", \"queue\": \"batch\", \"state\": \"queued\", \"ncpus\": 4, \"node\": null, \"reason\": \"waiting for 4 free CPUs\", \"times\": {\"submit\": 1795345749123000000}},\n"
	"{\"jobid\": 1234, \"name\": \"two\\nlines\", \"owner\": \"dave\", \"queue\": \"batch\", \"state\": \"held\", \"ncpus\": 16, \"node\": null, \"times\": {\"submit\": 1795345749123000000}},\n"
	"{\"jobid\": 15, \"name\": \"killed\", \"owner\": \"alice\", \"queue\": \"batch\", \"state\": \"cancelled\", \"ncpus\": 1, \"node\": \"n1\", \"exit_status\": 137, \"exit_signal\": 9, \"reason\": \"cancelled by alice\", \"times\": {\"submit\": 1795345749123000000, \"dispatch\": 1795345749124000000, \"exec\": 1795345749125000000, \"exit\": 1795345752125000000}}\n"
	"]\n";

static const char classic[] =
	"Job id            Name             User              Time Use S Queue\n"
	"----------------  ---------------- ----------------  -------- - -----\n"
	"12.srv            myjob            alice                    0 R batch\n"
	"13.srv            a-very-long-job* bob-with-a-long*  00:00:01 F short\n"
	"14.srv            waits            carol                    0 Q batch\n"
	"1234.srv          two?lines        dave                     0 H batch\n"
	"15.srv            killed           alice                    0 F batch\n";

static const char alt_ns1[] =
	"\n"
	"srv: \n"
	"                                                            Req'd  Req'd   Elap\n"
	"Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time\n"
	"--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----\n"
	"12.srv          alice    batch    myjob          --   1   2    1gb 00:10 R 01:02 n1/0*2\n"
	"13.srv          bob-wit* short    a-very-lo*     --   1   1     -- 00:00 F 00:01 n2/0*1\n"
	"14.srv          carol    batch    waits          --  --   4     --    -- Q    -- -- waiting for 4 free CPUs\n"
	"1234.srv        dave     batch    two?lines      --  --  16     --    -- H    -- --\n"
	"15.srv          alice    batch    killed         --   1   1     --    -- F 00:00 n1/0*1 cancelled by alice\n";
static const char full13[] =
	"Job Id: 13.srv\n"
	"    Job_Name = a-very-long-job-name-indeed\n"
	"    Job_Owner = bob-with-a-long-name@srv\n"
	"    resources_used.cput = 00:00:01\n"
	"    resources_used.mem = 12288kb\n"
	"    resources_used.ncpus = 1\n"
	"    resources_used.walltime = 00:01:30\n"
	"    job_state = F\n"
	"    queue = short\n"
	"    server = srv\n"
	"    ctime = Sun Nov 22 11:09:09 2026\n"
	"    Error_Path = srv:/w/e\n"
	"    exec_host = n2/0*1\n"
	"    exec_vnode = (n2:ncpus=1)\n"
	"    Hold_Types = n\n"
	"    Join_Path = oe\n"
	"    mtime = Sun Nov 22 11:10:49 2026\n"
	"    Output_Path = srv:/w/o\n"
	"    qtime = Sun Nov 22 11:09:09 2026\n"
	"    Resource_List.ncpus = 1\n"
	"    Resource_List.nodect = 1\n"
	"    Resource_List.place = pack\n"
	"    Resource_List.select = 1:ncpus=1\n"
	"    Resource_List.walltime = 00:00:30\n"
	"    stime = Sun Nov 22 11:09:19 2026\n"
	"    obittime = Sun Nov 22 11:10:49 2026\n"
	"    jobdir = /w\n"
	"    etime = Sun Nov 22 11:09:09 2026\n"
	"    Exit_status = 0\n"
	"    Variable_List = PBS_O_WORKDIR=/w,PBS_O_QUEUE=short\n"
	"    run_count = 1\n"
	"    qpool_state = completed\n"
	"    exec_cpus = 1\n"
	"    workdir = /w\n"
	"    cpu_time = 00:00:01.25\n"
	"    mem_peak = 12M\n"
	"    submit_time = 2026-11-22 11:09:09.123\n"
	"    dispatch_time = 2026-11-22 11:09:14.123\n"
	"    exec_time = 2026-11-22 11:09:19.123\n"
	"    exit_time = 2026-11-22 11:10:49.123\n"
	"    done_time = 2026-11-22 11:10:49.133\n";
static const char json12[] =
	"{\n"
	" \"timestamp\": 1795349474,\n"
	" \"pbs_version\": \"19.1.3\",\n"
	" \"pbs_server\": \"srv\",\n"
	" \"Jobs\": {\n"
	"  \"12.srv\": {\n"
	"   \"Job_Name\": \"myjob\",\n"
	"   \"Job_Owner\": \"alice@srv\",\n"
	"   \"resources_used\": {\n"
	"    \"ncpus\": 2,\n"
	"    \"walltime\": \"01:02:03\"\n"
	"   },\n"
	"   \"job_state\": \"R\",\n"
	"   \"queue\": \"batch\",\n"
	"   \"server\": \"srv\",\n"
	"   \"ctime\": \"Sun Nov 22 11:09:09 2026\",\n"
	"   \"Error_Path\": \"srv:/home/alice/x.e12\",\n"
	"   \"exec_host\": \"n1/0*2\",\n"
	"   \"exec_vnode\": \"(n1:ncpus=2)\",\n"
	"   \"Hold_Types\": \"n\",\n"
	"   \"Join_Path\": \"n\",\n"
	"   \"mtime\": \"Sun Nov 22 11:09:11 2026\",\n"
	"   \"Output_Path\": \"srv:/home/alice/x.o12\",\n"
	"   \"qtime\": \"Sun Nov 22 11:09:09 2026\",\n"
	"   \"Resource_List\": {\n"
	"    \"mem\": \"1048576kb\",\n"
	"    \"ncpus\": 2,\n"
	"    \"nodect\": 1,\n"
	"    \"place\": \"pack\",\n"
	"    \"select\": \"1:ncpus=2\",\n"
	"    \"walltime\": \"00:10:00\"\n"
	"   },\n"
	"   \"stime\": \"Sun Nov 22 11:09:11 2026\",\n"
	"   \"jobdir\": \"/home/alice\",\n"
	"   \"etime\": \"Sun Nov 22 11:09:09 2026\",\n"
	"   \"Variable_List\": {\n"
	"    \"PBS_O_WORKDIR\": \"/home/alice\",\n"
	"    \"PBS_O_QUEUE\": \"batch\",\n"
	"    \"HOME\": \"/home/alice\"\n"
	"   },\n"
	"   \"run_count\": 1,\n"
	"   \"qpool_state\": \"running\",\n"
	"   \"exec_cpus\": \"0-1\",\n"
	"   \"workdir\": \"/home/alice\",\n"
	"   \"submit_time\": \"2026-11-22 11:09:09.123\",\n"
	"   \"dispatch_time\": \"2026-11-22 11:09:10.623\",\n"
	"   \"exec_time\": \"2026-11-22 11:09:11.123\"\n"
	"  }\n"
	" }\n"
	"}\n";

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fprintf(stderr, "fixture: %s at line %d\n", e.text, e.line);
	return j;
}

enum fmt { FMT_CLASSIC, FMT_ALT, FMT_FULL, FMT_JSON };

static void check(enum fmt which, size_t only, const struct pbsfmt_opts *o, const char *expected)
{
	json_t *jobs = load(jobs_json), *sel;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(jobs);
	setenv("TZ", "UTC", 1);
	tzset();
	sel = only ? json_pack("[O]", json_array_get(jobs, only - 1)) : json_incref(jobs);
	f = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	switch (which) {
	case FMT_CLASSIC:
		pbsfmt_jobs_classic(f, sel, "srv", o);
		break;
	case FMT_ALT:
		pbsfmt_jobs_alt(f, sel, "srv", NOW, o);
		break;
	case FMT_FULL:
		pbsfmt_job_full(f, json_array_get(sel, 0), "srv", NOW);
		break;
	case FMT_JSON: {
		json_t *doc = pbsfmt_jobs_json(sel, "srv", NOW);

		json_dumpf(doc, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		fputc('\n', f);
		json_decref(doc);
		break;
	}
	}
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, expected);
	if (strcmp(buf, expected) != 0)
		fprintf(stderr, "\n--- expected\n%s--- got\n%s---\n", expected, buf);
	free(buf);
	json_decref(sel);
	json_decref(jobs);
}

static void test_classic(void)
{
	const struct pbsfmt_opts o = { 0 };

	check(FMT_CLASSIC, 0, &o, classic);
}

static void test_alt(void)
{
	const struct pbsfmt_opts o = { .nodes = true, .comments = true, .one_line = true };

	check(FMT_ALT, 0, &o, alt_ns1);
}

static void test_full(void)
{
	check(FMT_FULL, 2, NULL, full13);
}

static void test_json(void)
{
	check(FMT_JSON, 1, NULL, json12);
}

static void test_state_letters(void)
{
	static const char *const words[] = {
		"queued", "held", "running", "exiting", "waiting", "completed", "failed",
		"cancelled", "timeout", "oom", "bogus",
	};
	const char *letters = "QHREWFFFFF?";

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		CU_ASSERT_EQUAL(pbsfmt_state_letter(words[i]), letters[i]);
	CU_ASSERT_EQUAL(pbsfmt_state_letter(NULL), '?');
}

/* qsub -a: queued until its time shows W, then Q. */
static void test_waiting(void)
{
	json_t *job = json_pack("{s:s, s:{s:s}}", "state", "queued", "attrs", "Execution_Time", "1795345800");

	CU_ASSERT_EQUAL(pbsfmt_job_state(job, 1795345799LL * 1000000000LL), 'W');
	CU_ASSERT_EQUAL(pbsfmt_job_state(job, 1795345800LL * 1000000000LL), 'Q');
	json_object_set_new(job, "state", json_string("held"));
	CU_ASSERT_EQUAL(pbsfmt_job_state(job, 0), 'H');
	json_decref(job);
}

static const char queues_json[] =
	"[{\"name\": \"multi8\", \"default\": false, \"enabled\": true, \"started\": false, \"priority\": 100,"
	" \"ncpus\": 8, \"mem_max\": 161061273600, \"walltime_max\": 86400, \"walltime_default\": 3600,"
	" \"reserve\": \"realtime\", \"max_running\": 2, \"reason\": \"maintenance\","
	" \"queued\": 3, \"held\": 1, \"running\": 2},"
	" {\"name\": \"batch\", \"default\": true, \"enabled\": true, \"started\": true, \"queued\": 1, \"held\": 0, \"running\": 4}]";

static const char queue_server[] =
	"Queue: multi8\n"
	"    queue_type = Execution\n"
	"    Priority = 100\n"
	"    total_jobs = 6\n"
	"    state_count = Transit:0 Queued:3 Held:1 Waiting:0 Running:2 Exiting:0 Begun:0\n"
	"    resources_max.ncpus = 8\n"
	"    resources_max.mem = 157286400kb\n"
	"    resources_max.walltime = 24:00:00\n"
	"    resources_default.walltime = 01:00:00\n"
	"    max_running = 2\n"
	"    enabled = True\n"
	"    started = False\n"
	"    qpool_reserve = realtime\n"
	"    comment = maintenance\n"
	"Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status\n"
	"---------------- ----- ----- ----- ----- ----- ----- ----- ----- -----------\n"
	"srv                  0    11     4     6     1     0     0     0 Active\n"
	"Server: srv\n"
	"    server_state = Active\n"
	"    server_host = srv\n"
	"    total_jobs = 11\n"
	"    state_count = Transit:0 Queued:4 Held:1 Waiting:0 Running:6 Exiting:0 Begun:0\n"
	"    pbs_version = " PBSFMT_PBS_VERSION "\n";

/* qstat -Qf and -B, -Bf. */
static void test_queue_and_server(void)
{
	json_t *queues = load(queues_json);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(queues);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	pbsfmt_queue_full(f, json_array_get(queues, 0));
	pbsfmt_server(f, queues, "srv", false);
	pbsfmt_server(f, queues, "srv", true);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, queue_server);
	if (strcmp(buf, queue_server) != 0)
		fprintf(stderr, "\n--- expected\n%s--- got\n%s---\n", queue_server, buf);
	free(buf);
	json_decref(queues);
}

/* qstat -B's leadership lines: short, full, none listed, none sent. */
static void test_server_ha(void)
{
	json_t *ha = load("{\"role\": \"active\", \"id\": \"s1:/run/a.sock\", \"active\": \"s1:15001\","
			  " \"epoch\": 7, \"standbys\": [{\"id\": \"s2\", \"address\": \"s2:15001\"},"
			  " {\"id\": \"s3\", \"address\": \"s3:15001\"}]}");
	json_t *alone = load("{\"role\": \"active\", \"active\": \"s1:15001\", \"epoch\": 1, \"standbys\": []}");
	static const char want[] =
		"Active: s1:15001 (epoch 7), this server active; standbys: s2:15001,s3:15001\n"
		"    server_role = active\n    active_server = s1:15001\n    server_epoch = 7\n"
		"    standby_servers = s2:15001,s3:15001\n"
		"Active: s1:15001 (epoch 1), this server active; standbys: none\n"
		"    server_role = active\n    active_server = s1:15001\n    server_epoch = 1\n"
		"    standby_servers = \n";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(ha);
	CU_ASSERT_PTR_NOT_NULL_FATAL(alone);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	pbsfmt_server_ha(f, ha, false);
	pbsfmt_server_ha(f, ha, true);
	pbsfmt_server_ha(f, alone, false);
	pbsfmt_server_ha(f, alone, true);
	pbsfmt_server_ha(f, NULL, true);   /* an older server: nothing */
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, want);
	if (strcmp(buf, want) != 0)
		fprintf(stderr, "\n--- expected\n%s--- got\n%s---\n", want, buf);
	free(buf);
	json_decref(ha);
	json_decref(alone);
}

static const struct unit_test pbs_format_tests[] = {
	{ "classic", test_classic },
	{ "alt", test_alt },
	{ "full", test_full },
	{ "json", test_json },
	{ "state_letters", test_state_letters },
	{ "waiting", test_waiting },
	{ "queue_and_server", test_queue_and_server },
	{ "server_ha", test_server_ha },
	{ NULL, NULL },
};

UNIT_SUITE(pbs_format, pbs_format_tests);
