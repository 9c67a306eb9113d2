/* SPDX-License-Identifier: MIT */
/* slurm/slurmfmt and lib/hostlist from tables: Slurm's states, reasons, times, fields and host lists. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostlist.h"
#include "slurmfmt.h"
#include "slurmsel.h"
#include "slurmtext.h"
#include "unit.h"

static json_t *job_of(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fprintf(stderr, "bad test json: %s: %s\n", text, e.text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	return j;
}

static void test_states(void)
{
	static const struct { const char *job; const char *state; const char *code; } t[] = {
		{ "{\"state\": \"queued\"}", "PENDING", "PD" },
		{ "{\"state\": \"held\"}", "PENDING", "PD" },
		{ "{\"state\": \"running\"}", "RUNNING", "R" },
		{ "{\"state\": \"exiting\"}", "COMPLETING", "CG" },
		{ "{\"state\": \"completed\"}", "COMPLETED", "CD" },
		{ "{\"state\": \"failed\"}", "FAILED", "F" },
		{ "{\"state\": \"failed\", \"reason\": \"killed: out of memory\"}", "OUT_OF_MEMORY", "OOM" },
		{ "{\"state\": \"oom\"}", "OUT_OF_MEMORY", "OOM" },
		{ "{\"state\": \"cancelled\"}", "CANCELLED", "CA" },
		{ "{\"state\": \"timeout\"}", "TIMEOUT", "TO" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *j = job_of(t[i].job);

		CU_ASSERT_STRING_EQUAL(slurmfmt_state(j), t[i].state);
		CU_ASSERT_STRING_EQUAL(slurmfmt_state_code(slurmfmt_state(j)), t[i].code);
		json_decref(j);
	}
}

static void test_state_parse(void)
{
	static const struct { const char *in; const char *out; } t[] = {
		{ "PD", "PENDING" }, { "pending", "PENDING" }, { "r", "RUNNING" }, { "CG", "COMPLETING" },
		{ "cd", "COMPLETED" }, { "F", "FAILED" }, { "ca", "CANCELLED" }, { "TO", "TIMEOUT" },
		{ "OOM", "OUT_OF_MEMORY" }, { "out_of_memory", "OUT_OF_MEMORY" }, { "NF", "NODE_FAIL" },
		{ "S", "SUSPENDED" }, { "bogus", NULL }, { "", NULL }, { "P", NULL },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *r = slurmfmt_state_parse(t[i].in);

		if (t[i].out) {
			CU_ASSERT_STRING_EQUAL(r ? r : "(null)", t[i].out);
		} else {
			CU_ASSERT_PTR_NULL(r);
		}
	}
}

static void test_acct_state(void)
{
	static const struct { const char *job; const char *out; } t[] = {
		{ "{\"state\": \"cancelled\", \"owner\": \"alice\", \"uid\": 1001, \"reason\": \"cancelled by alice\"}",
		  "CANCELLED by 1001" },
		{ "{\"state\": \"cancelled\", \"owner\": \"alice\", \"uid\": 1001, \"reason\": \"cancelled by root before it started\"}",
		  "CANCELLED by 0" },
		{ "{\"state\": \"cancelled\", \"owner\": \"alice\", \"uid\": 1001, \"reason\": \"cancelled by bob\"}",
		  "CANCELLED by bob" },
		{ "{\"state\": \"cancelled\", \"owner\": \"alice\"}", "CANCELLED" },
		{ "{\"state\": \"completed\"}", "COMPLETED" },
		/* qdel -W force is a cancel by that user too (issue 33). */
		{ "{\"state\": \"cancelled\", \"owner\": \"alice\", \"uid\": 1001,"
		  " \"reason\": \"deleted with -W force by alice\"}", "CANCELLED by 1001" },
		/* Slurm's batch step of a cancelled job: CANCELLED, no "by". */
		{ "{\"state\": \"cancelled\", \"owner\": \"alice\", \"uid\": 1001, \"reason\": \"cancelled by alice\","
		  " \"step\": \"batch\"}", "CANCELLED" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *j = job_of(t[i].job);

		slurmfmt_acct_state(j, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, t[i].out);
		json_decref(j);
	}
}

static void test_reasons(void)
{
	static const struct { const char *job; const char *out; } t[] = {
		{ "{\"state\": \"held\"}", "JobHeldUser" },
		{ "{\"state\": \"held\", \"reason\": \"waiting on dependencies\"}", "Dependency" },
		{ "{\"state\": \"held\", \"reason\": \"dependency afterok:12 can never be met: failed\"}",
		  "DependencyNeverSatisfied" },
		{ "{\"state\": \"queued\", \"reason\": \"waiting for 4 free CPUs\"}", "Resources" },
		{ "{\"state\": \"queued\", \"reason\": \"queue stopped\"}", "PartitionInactive" },
		{ "{\"state\": \"queued\", \"reason\": \"waits for node(s) down: n1\"}", "ReqNodeNotAvail" },
		{ "{\"state\": \"queued\", \"attrs\": {\"Execution_Time\": \"4000000000\"}}", "BeginTime" },
		{ "{\"state\": \"queued\", \"attrs\": {\"Execution_Time\": \"1000\"}}", "Priority" },
		{ "{\"state\": \"queued\"}", "Priority" },
		{ "{\"state\": \"running\"}", "None" },
		{ "{\"state\": \"completed\"}", "None" },
		{ "{\"state\": \"cancelled\"}", "None" },
		{ "{\"state\": \"failed\", \"reason\": \"exit status 3\"}", "NonZeroExitCode" },
		{ "{\"state\": \"timeout\"}", "TimeLimit" },
		{ "{\"state\": \"failed\", \"reason\": \"killed: out of memory\"}", "OutOfMemory" },
		{ "{\"state\": \"oom\"}", "OutOfMemory" },
		{ "{\"state\": \"failed\", \"reason\": \"node lost\"}", "NodeDown" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *j = job_of(t[i].job);

		CU_ASSERT_STRING_EQUAL(slurmfmt_reason(j, 2000000000LL * 1000000000LL), t[i].out);
		json_decref(j);
	}
}

static void test_durations(void)
{
	static const struct { long long secs; const char *squeue, *sacct; } t[] = {
		{ 0, "0:00", "00:00:00" },
		{ 5, "0:05", "00:00:05" },
		{ 65, "1:05", "00:01:05" },
		{ 3599, "59:59", "00:59:59" },
		{ 3600, "1:00:00", "01:00:00" },
		{ 86399, "23:59:59", "23:59:59" },
		{ 86400, "1-00:00:00", "1-00:00:00" },
		{ 90061, "1-01:01:01", "1-01:01:01" },
		{ 30 * 86400 + 5, "30-00:00:05", "30-00:00:05" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		slurmfmt_duration(buf, sizeof(buf), t[i].secs);
		CU_ASSERT_STRING_EQUAL(buf, t[i].squeue);
		slurmfmt_elapsed(buf, sizeof(buf), t[i].secs);
		CU_ASSERT_STRING_EQUAL(buf, t[i].sacct);
	}
	slurmfmt_duration(buf, sizeof(buf), -1);
	CU_ASSERT_STRING_EQUAL(buf, "INVALID");
}

static void test_time_parse(void)
{
	/* 2026-11-22 11:09:09 UTC; sacct -S/-E's times (not a start's). */
	const time_t now = 1795345749;
	static const struct { const char *in; long long secs; } ok[] = {
		{ "now", 1795345749 }, { "now-1hour", 1795345749 - 3600 }, { "now-2hours", 1795345749 - 7200 },
		{ "now-30", 1795345749 - 30 }, { "now+1day", 1795345749 + 86400 },
		{ "now-10minutes", 1795345749 - 600 }, { "midnight", 1795305600 }, { "noon", 1795348800 },
		{ "2026-11-22", 1795305600 }, { "2026-11-22T10:00", 1795341600 },
		{ "2026-11-22T10:00:30", 1795341630 }, { "11/21", 1795219200 }, { "11/21/26", 1795219200 },
		{ "08:30", 1795336200 }, { "08:30:15", 1795336215 }, { "today", 1795305600 },
		{ "tomorrow", 1795392000 }, { "13:00", 1795352400 },   /* today's, though later */
	};
	static const char *const bad[] = { "yesterday", "now-", "now-1parsec", "2026-13-01", "2026-11-22 10:00",
					    "25:00", "2026-11-22T10", "" };
	char *old_tz = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
	time_t v;

	setenv("TZ", "UTC", 1);
	tzset();
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = 0;
		CU_ASSERT_EQUAL(slurm_when_parse(ok[i].in, now, false, &v), 0);
		if (v != ok[i].secs)
			fprintf(stderr, "%s: %lld, want %lld\n", ok[i].in, (long long)v, ok[i].secs);
		CU_ASSERT_EQUAL(v, ok[i].secs);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(slurm_when_parse(bad[i], now, false, &v), -EINVAL);
	if (old_tz)
		setenv("TZ", old_tz, 1);
	else
		unsetenv("TZ");
	free(old_tz);
	tzset();
}

static void test_hostlist(void)
{
	static const struct { const char *names[8]; const char *out; } t[] = {
		{ { "n1" }, "n1" },
		{ { "n1", "n2", "n3" }, "n[1-3]" },
		{ { "n3", "n1", "n2", "n7" }, "n[1-3,7]" },
		{ { "n9", "n10", "n11" }, "n[9-11]" },
		{ { "n01", "n02", "n04" }, "n[01-02,04]" },
		{ { "login", "n1", "n2" }, "login,n[1-2]" },
		{ { "n1", "n1", "n2" }, "n[1-2]" },
		{ { "gpu-a1", "cpu-b2", "cpu-b3" }, "cpu-b[2-3],gpu-a1" },
		{ { "host", "host2" }, "host,host2" },
		{ { "rack1-n1", "rack1-n2", "rack2-n1" }, "rack1-n[1-2],rack2-n1" },
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t n = 0;

		while (n < 8 && t[i].names[n])
			n++;
		CU_ASSERT_EQUAL(hostlist_compress(t[i].names, n, buf, sizeof(buf)), (int)strlen(t[i].out));
		CU_ASSERT_STRING_EQUAL(buf, t[i].out);
	}
	/* A cut buffer: the length it needs, a NUL-terminated prefix. */
	{
		const char *names[] = { "n1", "n2", "n5" };

		CU_ASSERT_EQUAL(hostlist_compress(names, 3, buf, 4), 8);
		CU_ASSERT_STRING_EQUAL(buf, "n[1");
		CU_ASSERT_EQUAL(hostlist_compress(names, 0, buf, sizeof(buf)), 0);
		CU_ASSERT_STRING_EQUAL(buf, "");
	}
}

/* scontrol show hostnames: a list expanded in its order. */
static void test_hostlist_expand(void)
{
	static const struct { const char *list; const char *out; int count; } t[] = {
		{ "n1", "n1", 1 },
		{ "n[1-3,7],login", "n1 n2 n3 n7 login", 5 },
		{ "n[08-10]", "n08 n09 n10", 3 },
		{ "n[8-10]", "n8 n9 n10", 3 },
		{ "r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2", 4 },
		{ "a[1-2]-ib,b", "a1-ib a2-ib b", 3 },
		{ "n2,n1 n1", "n2 n1 n1", 3 },
		{ "", "", 0 },
		{ "n[1-3", NULL, -EINVAL },
		{ "n[3-1]", NULL, -EINVAL },
		{ "n[a]", NULL, -EINVAL },
		{ "n[1-]", NULL, -EINVAL },
		{ "n]1", NULL, -EINVAL },
		{ "n[1-[2]]", NULL, -EINVAL },
		{ "n[1-100000]", NULL, -E2BIG },
		{ "n[1-999999999999999999]", NULL, -E2BIG },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char **names = NULL, buf[256] = "";
		int n = hostlist_expand(t[i].list, 1000, &names);

		if (n != t[i].count)
			fprintf(stderr, "'%s': %d, want %d\n", t[i].list, n, t[i].count);
		CU_ASSERT_EQUAL(n, t[i].count);
		for (int k = 0; k < n; k++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", k ? " " : "", names[k]);
		if (t[i].out) {
			CU_ASSERT_STRING_EQUAL(buf, t[i].out);
		} else {
			CU_ASSERT_PTR_NULL(names);
		}
		hostlist_free(names, n > 0 ? (size_t)n : 0);
	}
}

static void test_job_ids_and_nodes(void)
{
	static const struct { const char *job; const char *id, *nodes; } t[] = {
		{ "{\"jobid\": 12, \"node\": \"n1\"}", "12", "n1" },
		{ "{\"jobid\": 13, \"array_id\": 12, \"array_index\": 3}", "12_3", "" },
		{ "{\"jobid\": 12, \"array\": \"1-9:2\"}", "12_[1-9:2]", "" },
		{ "{\"jobid\": 14, \"node\": \"n2\", \"alloc\": [{\"node\": \"n2\"}, {\"node\": \"n1\"}, {\"node\": \"n3\"}]}",
		  "14", "n[1-3]" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *j = job_of(t[i].job);

		slurmfmt_job_id(j, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, t[i].id);
		slurmfmt_job_nodes(j, buf, sizeof(buf), NULL);
		CU_ASSERT_STRING_EQUAL(buf, t[i].nodes);
		json_decref(j);
	}
}

static void test_fields(void)
{
	/* Runs from exec 100 s to exit 165 s; now is later. */
	json_t *j = job_of("{\"jobid\": 21, \"name\": \"a-long-job-name\", \"owner\": \"alice\", \"uid\": 1001,"
			   " \"queue\": \"batch\", \"state\": \"failed\", \"ncpus\": 4, \"mem\": 2147483648,"
			   " \"walltime\": 5400, \"node\": \"n2\", \"exit_status\": 3, \"exit_signal\": null,"
			   " \"cpu_ns\": 61000000000, \"mem_peak\": 10485760, \"workdir\": \"/w\","
			   " \"stdout\": \"/w/o.txt\", \"stderr\": \"/w/e.txt\", \"priority\": 7,"
			   " \"attrs\": {\"Account_Name\": \"proj\"},"
			   " \"times\": {\"submit\": 90000000000, \"exec\": 100000000000, \"exit\": 165000000000}}");
	json_t *k = job_of("{\"jobid\": 22, \"state\": \"cancelled\", \"exit_status\": 271, \"exit_signal\": 15,"
			   " \"walltime\": 0, \"times\": {\"submit\": 90000000000}}");
	json_t *r = job_of("{\"jobid\": 23, \"state\": \"running\", \"walltime\": 5400,"
			   " \"times\": {\"exec\": 100000000000}}");
	static const struct { const char *name; enum slurmfmt_view view; int which; const char *out; } t[] = {
		{ "JobID", SLURMFMT_SACCT, 0, "21" },
		{ "jobname", SLURMFMT_SACCT, 0, "a-long-job-name" },
		{ "Partition", SLURMFMT_SACCT, 0, "batch" },
		{ "Account", SLURMFMT_SACCT, 0, "proj" },
		{ "AllocCPUS", SLURMFMT_SACCT, 0, "4" },
		{ "State", SLURMFMT_SACCT, 0, "FAILED" },
		{ "ExitCode", SLURMFMT_SACCT, 0, "3:0" },
		{ "ExitCode", SLURMFMT_SACCT, 1, "0:15" },
		{ "Elapsed", SLURMFMT_SACCT, 0, "00:01:05" },
		{ "ElapsedRaw", SLURMFMT_SACCT, 0, "65" },
		{ "Timelimit", SLURMFMT_SACCT, 0, "01:30:00" },
		{ "Timelimit", SLURMFMT_SACCT, 1, "UNLIMITED" },
		{ "Start", SLURMFMT_SACCT, 0, "1970-01-01T00:01:40" },
		{ "End", SLURMFMT_SACCT, 0, "1970-01-01T00:02:45" },
		{ "Start", SLURMFMT_SACCT, 1, "Unknown" },
		{ "MaxRSS", SLURMFMT_SACCT, 0, "10240K" },
		{ "TotalCPU", SLURMFMT_SACCT, 0, "00:01:01" },
		{ "ReqMem", SLURMFMT_SACCT, 0, "2G" },
		{ "NodeList", SLURMFMT_SACCT, 0, "n2" },
		{ "NodeList", SLURMFMT_SACCT, 1, "None assigned" },
		{ "NNodes", SLURMFMT_SACCT, 0, "1" },
		{ "TimeUsed", SLURMFMT_SQUEUE, 0, "1:05" },
		{ "TimeLimit", SLURMFMT_SQUEUE, 0, "1:30:00" },
		{ "StateCompact", SLURMFMT_SQUEUE, 0, "F" },
		{ "StartTime", SLURMFMT_SQUEUE, 1, "N/A" },
		{ "ReasonList", SLURMFMT_SQUEUE, 0, "n2" },
		/* PSI/J's squeue -O JobArrayID,StateCompact,Reason: %i's id. */
		{ "JobArrayID", SLURMFMT_SQUEUE, 0, "21" },
		{ "STDOUT", SLURMFMT_SQUEUE, 0, "/w/o.txt" },
		{ "stderr", SLURMFMT_SQUEUE, 0, "/w/e.txt" },
		{ "PriorityLong", SLURMFMT_SQUEUE, 0, "7" },
		{ "TimeLeft", SLURMFMT_SQUEUE, 0, "0:00" },
		{ "TimeLeft", SLURMFMT_SQUEUE, 1, "UNLIMITED" },
		{ "TimeLeft", SLURMFMT_SQUEUE, 2, "1:28:20" },
		/* A script's "sacct --format=JobID,MaxRSS,AveRSS,NTasks,AveCPU"
		 * (issue 33): the job's row has no task figures, as Slurm's
		 * allocation row; its batch step is one task measured whole. */
		{ "NTasks", SLURMFMT_SACCT, 0, "" },
		{ "NTasks", SLURMFMT_SACCT, 3, "1" },
		{ "AveRSS", SLURMFMT_SACCT, 3, "10240K" },
		{ "AveCPU", SLURMFMT_SACCT, 3, "00:01:01" },
		{ "MinCPU", SLURMFMT_SACCT, 3, "00:01:01" },
		{ "MaxRSS", SLURMFMT_SACCT, 3, "10240K" },
		{ "TotalCPU", SLURMFMT_SACCT, 3, "00:01:01" },
		{ "AveRSS", SLURMFMT_SACCT, 0, "" },
		{ "AveCPU", SLURMFMT_SACCT, 0, "" },
		/* Running: nothing measured yet, as Slurm before the step ends. */
		{ "AveRSS", SLURMFMT_SACCT, 4, "" },
		{ "AveCPU", SLURMFMT_SACCT, 4, "" },
		{ "NTasks", SLURMFMT_SACCT, 4, "1" },
	};
	char buf[128];
	char *old_tz = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
	json_t *step = json_deep_copy(j), *rstep = json_deep_copy(r);
	const json_t *jobs[] = { j, k, r, step, rstep };

	json_object_set_new(step, "step", json_string("batch"));
	json_object_set_new(rstep, "step", json_string("batch"));
	setenv("TZ", "UTC", 1);
	tzset();
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct slurmfmt_field *f = slurmfmt_field_name(t[i].name, t[i].view);

		if (!f)
			fprintf(stderr, "%s: no such field\n", t[i].name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		slurmfmt_field_value(f, t[i].view, jobs[t[i].which], 200LL * 1000000000LL, buf, sizeof(buf));
		if (strcmp(buf, t[i].out) != 0)
			fprintf(stderr, "%s: '%s', want '%s'\n", t[i].name, buf, t[i].out);
		CU_ASSERT_STRING_EQUAL(buf, t[i].out);
	}
	CU_ASSERT_PTR_NULL(slurmfmt_field_name("NoSuchField", SLURMFMT_SACCT));
	CU_ASSERT_PTR_NULL(slurmfmt_field_name("Elapsed", SLURMFMT_SQUEUE));
	if (old_tz)
		setenv("TZ", old_tz, 1);
	else
		unsetenv("TZ");
	free(old_tz);
	tzset();
	json_decref(j);
	json_decref(k);
	json_decref(r);
	json_decref(step);
	json_decref(rstep);
}

static void test_format(void)
{
	struct slurmfmt_item it[16];
	char bad, buf[64];
	int n;

	n = slurmfmt_format_parse("%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R", it, 16, &bad);
	CU_ASSERT_EQUAL(n, 15);
	CU_ASSERT_EQUAL(it[0].width, 18);
	CU_ASSERT_TRUE(it[0].right);
	CU_ASSERT_STRING_EQUAL(slurmfmt_field_header(it[0].field, SLURMFMT_SQUEUE), "JOBID");
	CU_ASSERT_STRING_EQUAL(it[1].text, " ");
	CU_ASSERT_STRING_EQUAL(slurmfmt_field_header(it[14].field, SLURMFMT_SQUEUE), "NODELIST(REASON)");
	CU_ASSERT_EQUAL(it[14].width, 0);
	n = slurmfmt_format_parse("%i|%10j 100%%", it, 16, &bad);
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_STRING_EQUAL(it[1].text, "|");
	CU_ASSERT_FALSE(it[2].right);
	CU_ASSERT_EQUAL(it[2].width, 10);
	CU_ASSERT_STRING_EQUAL(it[3].text, " 100%");
	CU_ASSERT_EQUAL(slurmfmt_format_parse("%i %@", it, 16, &bad), -EINVAL);
	CU_ASSERT_EQUAL(bad, '@');
	/* Every letter Slurm documents is a field, none refused. */
	for (const char *c = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"; *c; c++)
		CU_ASSERT_PTR_NOT_NULL(slurmfmt_field_letter(*c));
	/* ... and so is every -O name Open OnDemand asks for. */
	for (const char *const *name = (const char *const[]){ "Account", "JobID", "BatchHost", "MinCpus",
		"NumCPUs", "MinTmpDisk", "NumNodes", "EndTime", "Dependency", "Feature", "ArrayJobID",
		"GroupName", "GroupID", "OverSubscribe", "Sockets", "JobArrayID", "Cores", "Name", "Threads",
		"Comment", "ArrayTaskID", "TimeLimit", "TimeLeft", "MinMemory", "TimeUsed", "ReqNodes",
		"NodeList", "Command", "Contiguous", "QOS", "Partition", "PriorityLong", "Reason", "StartTime",
		"StateCompact", "State", "UserName", "UserID", "Reservation", "SubmitTime", "WCKey", "Licenses",
		"ExcNodes", "CoreSpec", "Nice", "SchedNodes", "SCT", "WorkDir", "tres-alloc", "tres-per-node",
		NULL }; *name; name++)
		CU_ASSERT_PTR_NOT_NULL(slurmfmt_field_name(*name, SLURMFMT_SQUEUE));
	for (const char *const *name = (const char *const[]){ "User", "Group", "JobId", "JobName",
		"Elapsed", "ReqMem", "AllocCPUS", "ReqCPUS", "Timelimit", "State", "TotalCPU", "MaxRSS",
		"Partition", "Submit", "Start", "End", "ReqTRES", "AllocTRES", NULL }; *name; name++)
		CU_ASSERT_PTR_NOT_NULL(slurmfmt_field_name(*name, SLURMFMT_SACCT));
	CU_ASSERT_EQUAL(slurmfmt_format_parse("%.5", it, 16, &bad), -EINVAL);
	slurmfmt_cell(buf, sizeof(buf), "abcdefghij", 8, true);
	CU_ASSERT_STRING_EQUAL(buf, "abcdefgh");
	slurmfmt_cell(buf, sizeof(buf), "R", 2, true);
	CU_ASSERT_STRING_EQUAL(buf, " R");
	slurmfmt_cell(buf, sizeof(buf), "R", 3, false);
	CU_ASSERT_STRING_EQUAL(buf, "R  ");
}

static void test_selection(void)
{
	static const struct { const char *in; long long id, index; } ok[] = {
		{ "12", 12, -1 }, { "12_3", 12, 3 }, { "1_0", 1, 0 },
	};
	static const char *const bad[] = { "", "0", "x", "12_", "_3", "12_x", "12.batch", "-1", "12_3_4", "1234567890123456789" };
	struct slurmsel_id id;
	struct slurmsel sel;
	struct error err;
	json_t *task = job_of("{\"jobid\": 13, \"array_id\": 12, \"array_index\": 1, \"owner\": \"bob\", \"uid\": 1002,"
			      " \"name\": \"arr\", \"queue\": \"short\", \"state\": \"queued\"}");
	json_t *job = job_of("{\"jobid\": 20, \"owner\": \"alice\", \"uid\": 1001, \"name\": \"x\", \"queue\": \"batch\","
			     " \"state\": \"completed\"}");

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CU_ASSERT_EQUAL(slurmsel_id_parse(ok[i].in, &id), 0);
		CU_ASSERT_EQUAL(id.id, ok[i].id);
		CU_ASSERT_EQUAL(id.index, ok[i].index);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(slurmsel_id_parse(bad[i], &id), -EINVAL);

	slurmsel_init(&sel);
	CU_ASSERT_TRUE(slurmsel_match(&sel, task));
	CU_ASSERT_TRUE(slurmsel_match(&sel, job));
	CU_ASSERT_EQUAL(slurmsel_ids_add(&sel, "12", &err), 0);      /* the array: its tasks */
	CU_ASSERT_TRUE(slurmsel_match(&sel, task));
	CU_ASSERT_FALSE(slurmsel_match(&sel, job));
	slurmsel_init(&sel);
	CU_ASSERT_EQUAL(slurmsel_ids_add(&sel, "12_2,20", &err), 0);
	CU_ASSERT_FALSE(slurmsel_match(&sel, task));
	CU_ASSERT_TRUE(slurmsel_match(&sel, job));
	CU_ASSERT_EQUAL(slurmsel_ids_add(&sel, "20,x", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "Invalid job id specified: x");
	/* Steps only where the command takes them (sacct -j 12.batch). */
	slurmsel_init(&sel);
	CU_ASSERT_EQUAL(slurmsel_ids_add(&sel, "20.batch", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "Invalid job id specified: 20.batch");
	sel.steps = true;
	CU_ASSERT_EQUAL(slurmsel_ids_add(&sel, "20.batch", &err), 0);
	CU_ASSERT_TRUE(slurmsel_match(&sel, job));
	CU_ASSERT_FALSE(slurmsel_step_wanted(&sel, job, NULL));
	CU_ASSERT_TRUE(slurmsel_step_wanted(&sel, job, "batch"));
	CU_ASSERT_EQUAL(slurmsel_ids_add(&sel, "12_1.0", &err), 0);
	CU_ASSERT_TRUE(slurmsel_match(&sel, task));
	CU_ASSERT_FALSE(slurmsel_step_wanted(&sel, task, NULL));
	CU_ASSERT_FALSE(slurmsel_step_wanted(&sel, task, "batch"));
	CU_ASSERT_EQUAL(slurmsel_ids_add(&sel, "20", &err), 0);       /* the whole job: every row */
	CU_ASSERT_TRUE(slurmsel_step_wanted(&sel, job, NULL));
	CU_ASSERT_EQUAL(slurmsel_ids_add(&sel, "20.", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "Invalid job id specified: 20.");
	CU_ASSERT_EQUAL(slurmsel_ids_add(&sel, "20.bogus", &err), -EINVAL);
	CU_ASSERT_EQUAL(slurmsel_ids_add(&sel, "x.0", &err), -EINVAL);
	slurmsel_init(&sel);
	CU_ASSERT_TRUE(slurmsel_step_wanted(&sel, job, "batch"));

	slurmsel_init(&sel);
	CU_ASSERT_EQUAL(slurmsel_states_set(&sel, "pd,R", &err), 0);
	CU_ASSERT_FALSE(slurmsel_wants_finished(&sel));
	CU_ASSERT_TRUE(slurmsel_match(&sel, task));
	CU_ASSERT_FALSE(slurmsel_match(&sel, job));
	CU_ASSERT_EQUAL(slurmsel_states_set(&sel, "CD", &err), 0);
	CU_ASSERT_TRUE(slurmsel_wants_finished(&sel));
	CU_ASSERT_TRUE(slurmsel_match(&sel, job));
	CU_ASSERT_EQUAL(slurmsel_states_set(&sel, "all", &err), 0);
	CU_ASSERT_TRUE(slurmsel_match(&sel, task));
	CU_ASSERT_EQUAL(slurmsel_states_set(&sel, "R,nope", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "Invalid job state specified: nope");

	slurmsel_init(&sel);
	sel.users = "carol,bob";
	CU_ASSERT_TRUE(slurmsel_match(&sel, task));
	CU_ASSERT_FALSE(slurmsel_match(&sel, job));
	sel.users = "bo";   /* whole names only */
	CU_ASSERT_FALSE(slurmsel_match(&sel, task));
	slurmsel_init(&sel);
	sel.partitions = "batch";
	CU_ASSERT_FALSE(slurmsel_match(&sel, task));
	sel.partitions = NULL;
	sel.names = "arr";
	CU_ASSERT_TRUE(slurmsel_match(&sel, task));
	sel.names = NULL;
	sel.uid = 1001;
	CU_ASSERT_FALSE(slurmsel_match(&sel, task));
	CU_ASSERT_TRUE(slurmsel_match(&sel, job));
	json_decref(task);
	json_decref(job);
}

/* scontrol show job's NumNodes, NumTasks, CPUs/Task, MinMemoryNode,
 * Restarts and Dependency (issue 33). */
static void test_job_request(void)
{
	static const struct {
		const char *job;
		long long nodes, tasks, cpt, mem;
	} t[] = {
		/* sbatch -N2 -n8 -c5 --mem=64G: two chunks of 4 tasks */
		{ "{\"ncpus\": 40, \"mem\": 137438953472, \"attrs\": {\"Resource_List.nodect\": \"2\","
		  " \"Slurm_ntasks\": \"8\", \"Slurm_cpus_per_task\": \"5\"}, \"chunks\": [{\"count\": 2,"
		  " \"ncpus\": 20, \"mem\": 68719476736, \"mpiprocs\": 4}]}", 2, 8, 5, 68719476736LL },
		/* the same by qsub -l select=2:ncpus=20:mpiprocs=4 */
		{ "{\"ncpus\": 40, \"chunks\": [{\"count\": 2, \"ncpus\": 20, \"mpiprocs\": 4}]}", 2, 8, 5, 0 },
		/* sbatch -N1 -n4 -c2: one node, ncpus=8 */
		{ "{\"ncpus\": 8, \"mem\": 2147483648, \"attrs\": {\"Slurm_ntasks\": \"4\","
		  " \"Slurm_cpus_per_task\": \"2\"}}", 1, 4, 2, 2147483648LL },
		/* sbatch -N1 -n4 */
		{ "{\"ncpus\": 4, \"attrs\": {\"Slurm_ntasks\": \"4\"}}", 1, 4, 1, 0 },
		/* qsub -l ncpus=6: one task of six */
		{ "{\"ncpus\": 6}", 1, 1, 6, 0 },
		/* running on two nodes */
		{ "{\"ncpus\": 2, \"alloc\": [{\"node\": \"n1\"}, {\"node\": \"n2\"}],"
		  " \"chunks\": [{\"count\": 2, \"ncpus\": 1, \"mpiprocs\": 1}]}", 2, 2, 1, 0 },
	};
	static const struct { const char *job; const char *dep; long long restarts; } d[] = {
		{ "{\"state\": \"held\", \"reason\": \"waiting on dependencies\", \"depend\": \"afterany:12\","
		  " \"attrs\": {\"Slurm_dependency\": \"singleton\"}}", "singleton(unfulfilled)", 0 },
		{ "{\"state\": \"held\", \"reason\": \"waiting on dependencies\", \"depend\": \"afterok:12\"}",
		  "afterok:12(unfulfilled)", 0 },
		{ "{\"state\": \"held\", \"reason\": \"dependency afterok:12 can never be met: failed\","
		  " \"depend\": \"afterok:12\"}", "afterok:12(failed)", 0 },
		{ "{\"state\": \"queued\", \"attrs\": {\"Slurm_dependency\": \"singleton\", \"run_count\": \"3\"}}",
		  "(null)", 3 },
		{ "{\"state\": \"running\", \"depend\": \"afterok:12\"}", "(null)", 0 },
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *j = job_of(t[i].job);
		struct slurmfmt_tasks r;

		slurmfmt_job_tasks(j, &r);
		if (r.nodes != t[i].nodes || r.tasks != t[i].tasks || r.cpus_per_task != t[i].cpt ||
		    r.mem_per_node != t[i].mem)
			fprintf(stderr, "%zu: nodes %lld tasks %lld cpt %lld mem %lld\n", i, r.nodes, r.tasks,
				r.cpus_per_task, r.mem_per_node);
		CU_ASSERT_EQUAL(r.nodes, t[i].nodes);
		CU_ASSERT_EQUAL(r.tasks, t[i].tasks);
		CU_ASSERT_EQUAL(r.cpus_per_task, t[i].cpt);
		CU_ASSERT_EQUAL(r.mem_per_node, t[i].mem);
		json_decref(j);
	}
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		json_t *j = job_of(d[i].job);

		slurmfmt_dependency(j, 0, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, d[i].dep);
		CU_ASSERT_EQUAL(slurmfmt_job_restarts(j), d[i].restarts);
		json_decref(j);
	}
}

/* Output a node could not write where asked (a missing directory): the
 * views show where it went (issue 33). */
static void test_job_output(void)
{
	json_t *j = job_of("{\"stdout\": \"/gone/o.txt\", \"stderr\": \"/gone/e.txt\", \"reason\":"
			   " \"output undelivered (/gone/o.txt: No such file or directory): kept in"
			   " /home/alice/12.srv.OU on n1; error undelivered (/gone/e.txt: No such file or directory):"
			   " kept in /home/alice/12.srv.ER on n1\"}");
	json_t *k = job_of("{\"stdout\": \"/w/o.txt\", \"join\": true, \"reason\": \"exit status 1\"}");
	char buf[256];

	CU_ASSERT_TRUE(slurmfmt_job_output(j, false, buf, sizeof(buf)));
	CU_ASSERT_STRING_EQUAL(buf, "/home/alice/12.srv.OU");
	CU_ASSERT_TRUE(slurmfmt_job_output(j, true, buf, sizeof(buf)));
	CU_ASSERT_STRING_EQUAL(buf, "/home/alice/12.srv.ER");
	slurmfmt_field_value(slurmfmt_field_name("STDOUT", SLURMFMT_SQUEUE), SLURMFMT_SQUEUE, j, 0, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "/home/alice/12.srv.OU");
	CU_ASSERT_FALSE(slurmfmt_job_output(k, false, buf, sizeof(buf)));
	CU_ASSERT_STRING_EQUAL(buf, "/w/o.txt");
	CU_ASSERT_FALSE(slurmfmt_job_output(k, true, buf, sizeof(buf)));
	CU_ASSERT_STRING_EQUAL(buf, "/w/o.txt");
	json_decref(j);
	json_decref(k);
}

static const struct unit_test slurmfmt_tests[] = {
	{ "job_output", test_job_output },
	{ "job_request", test_job_request },
	{ "selection", test_selection },
	{ "states", test_states },
	{ "state_parse", test_state_parse },
	{ "acct_state", test_acct_state },
	{ "reasons", test_reasons },
	{ "durations", test_durations },
	{ "time_parse", test_time_parse },
	{ "hostlist", test_hostlist },
	{ "hostlist_expand", test_hostlist_expand },
	{ "job_ids_and_nodes", test_job_ids_and_nodes },
	{ "fields", test_fields },
	{ "format", test_format },
	{ NULL, NULL },
};

UNIT_SUITE(slurmfmt, slurmfmt_tests);
