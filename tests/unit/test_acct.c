/* SPDX-License-Identifier: MIT */
/* accounting/: derived figures, utilization on a hand-computed pool, quantiles, time arguments, CSV, JSON, SVG. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acct.h"
#include "timeutil.h"
#include "unit.h"

/* All stamps are T0 + seconds; the window is [T0, T0 + 100 s). */
#define T0 1795345749000000000LL
#define S(x) ((int64_t)((x) * 1e9))
#define AT(x) (T0 + S(x))
#define MONO0 1000000000000LL

/* Two nodes of two CPUs:
 * job 1 (alice, batch, n1 CPUs 0-1): dispatch 10, exec 12, exit 42, released 43;
 *   the wall exit stamp says 42.5 (a clock step), gded's monotonic stamps
 *   say exec->exit 30 s, exit->released 1 s; 45 s of CPU.
 * job 2 (carol, rt = realtime, n2 CPU 0): dispatch 90, exec 91, exit 110,
 *   released 111, 9.5 s of CPU: in the window 9 of its 19 s connect.
 * job 3 (bob, batch, n2 CPU 1): running since -5, now = 50.
 * job 4 (bob, batch): queued, never dispatched.
 * Core seconds of the window (400 in all):
 *   starting   2x2 + 1            = 5      1.25 %
 *   executing  30x2 + 4.5 + 50    = 114.5  28.625 %
 *   teardown   1x2                = 2      0.5 %
 *   reserved   9 - 9.5 x 9/19     = 4.5    1.125 %
 *   idle       400 - 126          = 274    68.5 % */
static const char records_json[] =
	"[{\"jobid\": 1, \"name\": \"a\", \"owner\": \"alice\", \"queue\": \"batch\", \"state\": \"completed\","
	"  \"node\": \"n1\", \"cpus\": \"0-1\", \"ncpus\": 2, \"mem\": 0, \"mem_peak\": 1048576, \"cpu_ns\": 45000000000,"
	"  \"exit_status\": 0, \"exit_signal\": null, \"oom\": false,"
	"  \"times\": {\"submit\": 1795345754000000000, \"dispatch\": 1795345759000000000,"
	"    \"launch\": 1795345759500000000, \"wrap\": 1795345760000000000, \"fenced\": 1795345760500000000,"
	"    \"exec\": 1795345761000000000, \"exit\": 1795345791500000000, \"released\": 1795345792000000000,"
	"    \"done\": 1795345793000000000},"
	"  \"mono\": {\"wrap\": 999000000000, \"fenced\": 999500000000, \"exec\": 1000000000000,"
	"    \"exit\": 1030000000000, \"released\": 1031000000000}},"
	" {\"jobid\": 2, \"name\": \"r\", \"owner\": \"carol\", \"queue\": \"rt\", \"state\": \"completed\","
	"  \"node\": \"n2\", \"cpus\": \"0\", \"ncpus\": 1, \"cpu_ns\": 9500000000, \"mem_peak\": 2048,"
	"  \"times\": {\"submit\": 1795345838000000000, \"dispatch\": 1795345839000000000,"
	"    \"exec\": 1795345840000000000, \"exit\": 1795345859000000000, \"released\": 1795345860000000000,"
	"    \"done\": 1795345860100000000}, \"mono\": {}},"
	" {\"jobid\": 3, \"name\": \"x\", \"owner\": \"bob\", \"queue\": \"batch\", \"state\": \"running\","
	"  \"node\": \"n2\", \"cpus\": \"1\", \"ncpus\": 1, \"cpu_ns\": null, \"mem_peak\": null,"
	"  \"times\": {\"submit\": 1795345743000000000, \"dispatch\": 1795345744000000000}, \"mono\": {}},"
	" {\"jobid\": 4, \"name\": \"q\", \"owner\": \"bob\", \"queue\": \"batch\", \"state\": \"queued\","
	"  \"node\": null, \"cpus\": null, \"ncpus\": 1, \"times\": {\"submit\": 1795345744000000000}}]";

static const char queues_json[] =
	"[{\"name\": \"batch\", \"reserve\": \"none\"}, {\"name\": \"rt\", \"reserve\": \"realtime\"}]";
static const char acct_nodes_json[] = "[{\"name\": \"n1\", \"ncpus\": 2}, {\"name\": \"n2\", \"ncpus\": 2}]";
static const char node_list_json[] = "[{\"name\": \"n1\", \"cpus\": \"0-1\"}, {\"name\": \"n2\", \"cpus\": \"0-1\"}]";

#define N_JOBS 4

static void records_load(struct acct_job *jobs)
{
	json_t *arr = json_loads(records_json, 0, NULL), *q = json_loads(queues_json, 0, NULL);

	CU_ASSERT_FATAL(arr != NULL && q != NULL);
	CU_ASSERT_FATAL(json_array_size(arr) == N_JOBS);
	for (size_t i = 0; i < N_JOBS; i++)
		CU_ASSERT_FATAL(acct_job_from_json(json_array_get(arr, i), &jobs[i]) == 0);
	acct_jobs_mark_realtime(jobs, N_JOBS, q);
	json_decref(arr);
	json_decref(q);
}

static void nodes_load(const struct acct_job *jobs, struct acct_node **ret, size_t *ret_n)
{
	json_t *a = json_loads(acct_nodes_json, 0, NULL), *l = json_loads(node_list_json, 0, NULL);

	CU_ASSERT_FATAL(acct_nodes_build(a, l, jobs, N_JOBS, ret, ret_n) == 0);
	json_decref(a);
	json_decref(l);
}

static void test_from_json(void)
{
	struct acct_job jobs[N_JOBS];

	records_load(jobs);
	CU_ASSERT_EQUAL(jobs[0].jobid, 1);
	CU_ASSERT_STRING_EQUAL(jobs[0].owner, "alice");
	CU_ASSERT_STRING_EQUAL(jobs[0].cpus, "0-1");
	CU_ASSERT_EQUAL(jobs[0].t[ACCT_EXEC], AT(12));
	CU_ASSERT_EQUAL(jobs[0].mono[ACCT_EXIT], MONO0 + S(30));
	CU_ASSERT_EQUAL(jobs[0].mono[ACCT_SUBMIT], 0);
	CU_ASSERT_EQUAL(jobs[0].exit_signal, -1);
	CU_ASSERT_EQUAL(jobs[2].cpu_ns, -1);
	CU_ASSERT_STRING_EQUAL(jobs[3].node, "");
	CU_ASSERT_FALSE(jobs[0].realtime);
	CU_ASSERT_TRUE(jobs[1].realtime);
	CU_ASSERT_TRUE(acct_job_active(&jobs[2]));
	CU_ASSERT_FALSE(acct_job_active(&jobs[0]));
	CU_ASSERT_EQUAL(acct_job_from_json(json_null(), &jobs[0]), -EINVAL);
}

static void test_derive(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_derived d;

	records_load(jobs);
	acct_job_derive(&jobs[0], &d);
	CU_ASSERT_EQUAL(d.wait, S(5));
	CU_ASSERT_EQUAL(d.startup, S(2));
	CU_ASSERT_EQUAL(d.connect, S(30));     /* monotonic, not the stepped wall 30.5 */
	CU_ASSERT_EQUAL(d.teardown, S(1));     /* monotonic, not the wall 0.5 */
	CU_ASSERT_EQUAL(d.elapsed, S(33));
	CU_ASSERT_EQUAL(d.overhead, S(3));
	CU_ASSERT_EQUAL(d.report, S(1));
	CU_ASSERT_DOUBLE_EQUAL(d.cpu_delivered, 0.75, 1e-9);

	acct_job_derive(&jobs[1], &d);        /* no monotonic stamps: wall */
	CU_ASSERT_EQUAL(d.connect, S(19));
	CU_ASSERT_EQUAL(d.teardown, S(1));
	CU_ASSERT_DOUBLE_EQUAL(d.cpu_delivered, 9.5 / 19, 1e-9);

	acct_job_derive(&jobs[2], &d);        /* running: only wait known */
	CU_ASSERT_EQUAL(d.wait, S(1));
	CU_ASSERT_EQUAL(d.startup, -1);
	CU_ASSERT_EQUAL(d.connect, -1);
	CU_ASSERT_EQUAL(d.elapsed, -1);
	CU_ASSERT(d.cpu_delivered < 0);

	acct_job_derive(&jobs[3], &d);
	CU_ASSERT_EQUAL(d.wait, -1);

	/* A wall clock stepped back between two stamps is unknown, not negative. */
	jobs[1].t[ACCT_EXEC] = jobs[1].t[ACCT_DISPATCH] - 1;
	acct_job_derive(&jobs[1], &d);
	CU_ASSERT_EQUAL(d.startup, -1);
}

static void test_phases(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_phases p;

	records_load(jobs);
	CU_ASSERT_TRUE(acct_job_phases(&jobs[0], AT(50), &p));
	CU_ASSERT_EQUAL(p.start, AT(10));
	CU_ASSERT_EQUAL(p.exec, AT(12));
	CU_ASSERT_EQUAL(p.exit, AT(42));
	CU_ASSERT_EQUAL(p.end, AT(43));
	CU_ASSERT_TRUE(acct_job_phases(&jobs[2], AT(50), &p));
	CU_ASSERT_EQUAL(p.exec, AT(-5));
	CU_ASSERT_EQUAL(p.exit, AT(50));
	CU_ASSERT_EQUAL(p.end, AT(50));
	CU_ASSERT_FALSE(acct_job_phases(&jobs[3], AT(50), &p));
}

static void test_utilization(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_node *nodes;
	struct acct_util u;
	size_t n_nodes;
	double sum = 0;

	records_load(jobs);
	nodes_load(jobs, &nodes, &n_nodes);
	CU_ASSERT_EQUAL(n_nodes, 2);
	CU_ASSERT_EQUAL_FATAL(acct_utilization(jobs, N_JOBS, nodes, n_nodes, T0, AT(100), AT(50), &u), 0);
	CU_ASSERT_EQUAL(u.ncpus, 4);
	CU_ASSERT_EQUAL(u.jobs, 3);
	CU_ASSERT_DOUBLE_EQUAL(u.total_ns, 400e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(acct_util_percent(&u, ACCT_USE_STARTING), 1.25, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(acct_util_percent(&u, ACCT_USE_EXECUTING), 28.625, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(acct_util_percent(&u, ACCT_USE_TEARDOWN), 0.5, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(acct_util_percent(&u, ACCT_USE_RESERVED), 1.125, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(acct_util_percent(&u, ACCT_USE_IDLE), 68.5, 1e-6);
	for (int k = 0; k < ACCT_USE_MAX; k++)
		sum += acct_util_percent(&u, (enum acct_use)k);
	CU_ASSERT_DOUBLE_EQUAL(sum, 100, 0.1);
	CU_ASSERT_EQUAL(acct_utilization(jobs, N_JOBS, nodes, n_nodes, AT(5), AT(5), AT(50), &u), -EINVAL);
	free(nodes);
}

/* Clipping: a window inside job 1's execution is all executing on n1. */
static void test_window_clip(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_node *nodes;
	struct acct_util u;
	size_t n_nodes;

	records_load(jobs);
	nodes_load(jobs, &nodes, &n_nodes);
	/* [20, 30): job 1 executes on 2 cores, job 3 on 1: 30 of 40 core-s. */
	CU_ASSERT_EQUAL_FATAL(acct_utilization(jobs, N_JOBS, nodes, n_nodes, AT(20), AT(30), AT(50), &u), 0);
	CU_ASSERT_EQUAL(u.jobs, 2);
	CU_ASSERT_DOUBLE_EQUAL(acct_util_percent(&u, ACCT_USE_EXECUTING), 75, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(acct_util_percent(&u, ACCT_USE_STARTING), 0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(acct_util_percent(&u, ACCT_USE_IDLE), 25, 1e-6);
	/* [200, 300): after everything but the running job, up to now = 250. */
	CU_ASSERT_EQUAL_FATAL(acct_utilization(jobs, N_JOBS, nodes, n_nodes, AT(200), AT(300), AT(250), &u), 0);
	CU_ASSERT_EQUAL(u.jobs, 1);
	CU_ASSERT_DOUBLE_EQUAL(acct_util_percent(&u, ACCT_USE_EXECUTING), 12.5, 1e-6);
	/* A window before any dispatch: all idle. */
	CU_ASSERT_EQUAL_FATAL(acct_utilization(jobs, N_JOBS, nodes, n_nodes, AT(-100), AT(-50), AT(50), &u), 0);
	CU_ASSERT_EQUAL(u.jobs, 0);
	CU_ASSERT_DOUBLE_EQUAL(acct_util_percent(&u, ACCT_USE_IDLE), 100, 1e-9);
	free(nodes);
}

static void test_quantile(void)
{
	int64_t v[] = { 400, 100, 300, 200 };
	int64_t one[] = { 7 };

	CU_ASSERT_EQUAL(acct_quantile(v, 4, 0.5), 250);
	CU_ASSERT_EQUAL(acct_quantile(v, 4, 0.95), 385);
	CU_ASSERT_EQUAL(acct_quantile(v, 4, 0), 100);
	CU_ASSERT_EQUAL(acct_quantile(v, 4, 1), 400);
	CU_ASSERT_EQUAL(acct_quantile(one, 1, 0.95), 7);
	CU_ASSERT_EQUAL(acct_quantile(v, 0, 0.5), -1);
}

static void test_time_parse(void)
{
	const char *tz = getenv("TZ");
	char *saved = tz ? strdup(tz) : NULL;
	int64_t now = S(1700000000), t;

	setenv("TZ", "UTC", 1);
	tzset();
	CU_ASSERT(acct_time_parse("2023-11-14 22:13:20", now, &t) == 0 && t == S(1700000000));
	CU_ASSERT(acct_time_parse("2023-11-14T22:13", now, &t) == 0 && t == S(1700000000 - 20));
	CU_ASSERT(acct_time_parse("2023-11-14", now, &t) == 0 && t == S(1699920000));
	CU_ASSERT(acct_time_parse("-1h", now, &t) == 0 && t == now - S(3600));
	CU_ASSERT(acct_time_parse("-30m", now, &t) == 0 && t == now - S(1800));
	CU_ASSERT(acct_time_parse("-2d", now, &t) == 0 && t == now - S(2 * 86400));
	CU_ASSERT(acct_time_parse("now", now, &t) == 0 && t == now);
	CU_ASSERT(acct_time_parse("1700000000", now, &t) == 0 && t == S(1700000000));
	CU_ASSERT(acct_time_parse("1700000000.25", now, &t) == 0 && t == S(1700000000) + 250000000);
	CU_ASSERT_EQUAL(acct_time_parse("yesterday", now, &t), -EINVAL);
	CU_ASSERT_EQUAL(acct_time_parse("-5x", now, &t), -EINVAL);
	CU_ASSERT_EQUAL(acct_time_parse("-h", now, &t), -EINVAL);
	CU_ASSERT_EQUAL(acct_time_parse("2023-13-01", now, &t), -EINVAL);
	CU_ASSERT_EQUAL(acct_time_parse("2023-11-14 22:13:20x", now, &t), -EINVAL);
	CU_ASSERT_EQUAL(acct_time_parse("", now, &t), -EINVAL);
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved);
}

/* What the memstream f wrote into *buf, as a string the caller frees. */
static char *memfile_text(FILE *f, char **buf)
{
	fclose(f);
	return *buf;
}

static void test_csv_quoting(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain", "plain" },
		{ "a,b", "\"a,b\"" },
		{ "say \"hi\"", "\"say \"\"hi\"\"\"" },
		{ "two\nlines", "\"two\nlines\"" },
		{ " lead", "\" lead\"" },
		{ "", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		size_t len;
		FILE *f = open_memstream(&buf, &len);

		acct_csv_field(f, cases[i].in);
		memfile_text(f, &buf);
		CU_ASSERT_STRING_EQUAL(buf, cases[i].out);
		free(buf);
	}
}

static char *report_text(struct acct_report *r, enum acct_format fmt)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_EQUAL(acct_report_print(r, fmt, f), 0);
	return memfile_text(f, &buf);
}

static void test_summary_json(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_report *r = NULL;
	json_t *doc, *rows, *batch;
	char *text;

	records_load(jobs);
	CU_ASSERT_EQUAL_FATAL(acct_report_summary(jobs, N_JOBS, ACCT_BY_QUEUE, &r), 0);
	text = report_text(r, ACCT_FORMAT_JSON);
	doc = json_loads(text, 0, NULL);
	CU_ASSERT_FATAL(doc != NULL);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "by")), "queue");
	rows = json_object_get(doc, "rows");
	CU_ASSERT_EQUAL_FATAL(json_array_size(rows), 2);
	batch = json_array_get(rows, 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(batch, "queue")), "batch");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(batch, "jobs")), 3);
	/* Only job 1 finished in batch: 33 s x 2 cores. */
	CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(batch, "core_hours")), 66.0 / 3600, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(batch, "startup_mean_ms")), 2000, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(batch, "teardown_p95_ms")), 1000, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(batch, "cpu_delivered_pct")), 75, 1e-6);
	CU_ASSERT_TRUE(json_is_null(json_object_get(json_array_get(rows, 1), "wait_mean_s")) == 0);
	json_decref(doc);
	free(text);

	/* The same report as CSV: a header and one line per group. */
	text = report_text(r, ACCT_FORMAT_CSV);
	CU_ASSERT(strncmp(text, "queue,jobs,failed,cancelled,core_hours,", 39) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\nbatch,3,0,0,0.018333,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\nrt,1,"));
	free(text);
	acct_report_destroy(r);
}

/* qacct --estimates: |start - estimate| over the jobs that started with
 * one, median and p90, and the share that started by the at-start one;
 * from the record's attrs. */
static void test_estimates_report(void)
{
	struct acct_job jobs[12];
	struct acct_report *r = NULL;
	json_t *doc, *row, *rec;
	char *text;

	memset(jobs, 0, sizeof(jobs));
	rec = json_pack("{s:I, s:s, s:s, s:{s:s, s:s}, s:{s:I}}", "jobid", (json_int_t)1, "queue", "batch", "state",
			"completed", "attrs", "estimated.first_start_time", "1000", "estimated.start_time", "1010",
			"times", "dispatch", (json_int_t)1005 * 1000000000);
	CU_ASSERT_EQUAL_FATAL(acct_job_from_json(rec, &jobs[0]), 0);
	json_decref(rec);
	CU_ASSERT_EQUAL(jobs[0].est_first, 1000);
	CU_ASSERT_EQUAL(jobs[0].est_start, 1010);
	/* Jobs 2..10: started k s before their at-start estimate, 2k after
	 * their first; 11 started late by 30 s; 12 had none. */
	for (int k = 1; k < 12; k++) {
		struct acct_job *j = &jobs[k];

		snprintf(j->queue, sizeof(j->queue), "batch");
		j->jobid = k + 1;
		j->t[ACCT_DISPATCH] = (int64_t)(2000 + k) * 1000000000;
		if (k < 10) {
			j->est_start = 2000 + k + k;
			j->est_first = 2000 + k - 2 * k;
		} else if (k == 10) {
			j->est_start = 2000 + k - 30;
			j->est_first = 2000 + k;
		}
	}
	CU_ASSERT_EQUAL_FATAL(acct_report_estimates(jobs, 12, ACCT_BY_QUEUE, &r), 0);
	text = report_text(r, ACCT_FORMAT_JSON);
	doc = json_loads(text, 0, NULL);
	CU_ASSERT_FATAL(doc != NULL);
	CU_ASSERT_EQUAL_FATAL(json_array_size(json_object_get(doc, "rows")), 1);
	row = json_array_get(json_object_get(doc, "rows"), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "jobs")), 11);
	/* At start: 5 (job 1), 1..9, 30: median 5, p90 9. First: 5, 2..18, 0. */
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "start_error_median_s")), 5);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "start_error_p90_s")), 18 / 2);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "first_error_median_s")), 8);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "first_error_p90_s")), 16);
	CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(row, "met_pct")), 1000.0 / 11, 1e-6);
	json_decref(doc);
	free(text);
	acct_report_destroy(r);
}

static void test_overhead_and_util_reports(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_report *r = NULL;
	struct acct_node *nodes;
	struct acct_util u;
	size_t n_nodes;
	json_t *doc, *rows;
	char *text;
	double sum = 0;
	size_t i;
	json_t *row;

	records_load(jobs);
	CU_ASSERT_EQUAL_FATAL(acct_report_overhead(jobs, N_JOBS, "batch", &r), 0);
	text = report_text(r, ACCT_FORMAT_JSON);
	doc = json_loads(text, 0, NULL);
	rows = json_object_get(doc, "rows");
	CU_ASSERT_EQUAL_FATAL(json_array_size(rows), 2);     /* job 1 and the mean */
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(rows, 0), "job")), "1");
	CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(json_array_get(rows, 0), "overhead_ms")), 3000, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(json_array_get(rows, 0), "elapsed_s")), 33, 1e-9);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(rows, 1), "job")), "mean");
	json_decref(doc);
	free(text);
	acct_report_destroy(r);

	nodes_load(jobs, &nodes, &n_nodes);
	CU_ASSERT_EQUAL_FATAL(acct_utilization(jobs, N_JOBS, nodes, n_nodes, T0, AT(100), AT(50), &u), 0);
	CU_ASSERT_EQUAL_FATAL(acct_report_utilization(&u, &r), 0);
	text = report_text(r, ACCT_FORMAT_JSON);
	doc = json_loads(text, 0, NULL);
	CU_ASSERT_FATAL(doc != NULL);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(doc, "ncpus")), 4);
	rows = json_object_get(doc, "rows");
	CU_ASSERT_EQUAL(json_array_size(rows), ACCT_USE_MAX + 1);
	json_array_foreach(rows, i, row)
		if (i < ACCT_USE_MAX)
			sum += json_real_value(json_object_get(row, "percent"));
	CU_ASSERT_DOUBLE_EQUAL(sum, 100, 0.1);
	CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(json_array_get(rows, ACCT_USE_RESERVED), "core_seconds")),
			       4.5, 1e-6);
	json_decref(doc);
	free(text);
	text = report_text(r, ACCT_FORMAT_TEXT);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "Utilization of 4 cores"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "idle                274.000       0.076     68.5"));
	free(text);
	acct_report_destroy(r);
	free(nodes);
}


/* Golden text tables. QPOOL_GOLDEN_PRINT=1 prints what the code makes, to
 * paste here after a deliberate change of format. */
static const char golden_summary[] =
	"Queue  Jobs  Failed  Cancelled  Core-h  Wait s  Connect s  Start ms  Start med  Start p95  Tear ms  Tear med  Tear p95  CPU %\n"
	"-----  ----  ------  ---------  ------  ------  ---------  --------  ---------  ---------  -------  --------  --------  -----\n"
	"batch     3       0          0   0.018   3.000     30.000   2000.00    2000.00    2000.00  1000.00   1000.00   1000.00   75.0\n"
	"rt        1       0          0   0.006   1.000     19.000   1000.00    1000.00    1000.00  1000.00   1000.00   1000.00   50.0\n";
static const char golden_overhead[] =
	"Queue  Job   Memory  Connect s  Elapsed s  Overhead ms  Overhead %\n"
	"-----  ----  ------  ---------  ---------  -----------  ----------\n"
	"batch  1       1.0M     30.000     33.000      3000.00         9.1\n"
	"batch  mean    1.0M     30.000     33.000      3000.00         9.1\n"
	"rt     2       2.0K     19.000     21.000      2000.00         9.5\n"
	"rt     mean    2.0K     19.000     21.000      2000.00         9.5\n";

static void golden_check(const char *name, const char *got, const char *want)
{
	if (getenv("QPOOL_GOLDEN_PRINT"))
		printf("\n--- %s\n%s", name, got);
	CU_ASSERT_STRING_EQUAL(got, want);
}

static void test_golden_tables(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_report *r = NULL;
	char *text;

	records_load(jobs);
	CU_ASSERT_EQUAL_FATAL(acct_report_summary(jobs, N_JOBS, ACCT_BY_QUEUE, &r), 0);
	text = report_text(r, ACCT_FORMAT_TEXT);
	golden_check("summary", text, golden_summary);
	free(text);
	acct_report_destroy(r);
	CU_ASSERT_EQUAL_FATAL(acct_report_overhead(jobs, N_JOBS, NULL, &r), 0);
	text = report_text(r, ACCT_FORMAT_TEXT);
	golden_check("overhead", text, golden_overhead);
	free(text);
	acct_report_destroy(r);
}

static void test_job_report(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_report *r = NULL;
	char *text;

	records_load(jobs);
	CU_ASSERT_EQUAL_FATAL(acct_report_job(&jobs[0], &r), 0);
	text = report_text(r, ACCT_FORMAT_CSV);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\nconnect,30.000000,s\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\nexec_mono_ns,1000000000000,ns\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\ncpu_delivered,75.00,%\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\nexit_signal,,\r\n"));
	free(text);
	acct_report_destroy(r);
}

/* A job with GPUs: its count, each node's GPUs and its GPU-hours (2
 * GPUs for its 33 s from dispatch to released); nothing for one without. */
static void test_job_gpus(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_report *r = NULL;
	json_t *rec = json_loads(records_json, 0, NULL), *j0;
	char *text;

	records_load(jobs);
	j0 = json_array_get(rec, 0);
	CU_ASSERT_EQUAL_FATAL(acct_report_job(&jobs[0], &r), 0);
	CU_ASSERT_EQUAL(acct_report_job_gpus(r, &jobs[0], j0), 0);
	text = report_text(r, ACCT_FORMAT_CSV);
	CU_ASSERT_PTR_NULL(strstr(text, "gpu"));
	free(text);
	json_object_set_new(j0, "ngpus", json_integer(2));
	json_object_set_new(j0, "alloc", json_pack("[{s:s, s:[i, i]}]", "node", "n1", "gpus", 0, 2));
	CU_ASSERT_EQUAL(acct_report_job_gpus(r, &jobs[0], j0), 0);
	text = report_text(r, ACCT_FORMAT_CSV);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\nngpus,2,\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\ngpus,n1:0,2,\r\n") || strstr(text, "\r\ngpus,\"n1:0,2\",\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\ngpu_hours,0.0183,h\r\n"));
	free(text);
	acct_report_destroy(r);
	json_decref(rec);
}

/* GPUs beside the cores: job 1 holds 2 GPUs from dispatch (5 s) to
 * released (38 s), 66 of the 400 GPU-seconds of 4 GPUs over 100 s. */
static void test_utilization_gpus(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_report *r = NULL;
	struct acct_node *nodes;
	struct acct_util u;
	size_t n_nodes;
	char *text;

	records_load(jobs);
	nodes_load(jobs, &nodes, &n_nodes);
	CU_ASSERT_EQUAL_FATAL(acct_utilization(jobs, N_JOBS, nodes, n_nodes, T0, AT(100), AT(50), &u), 0);
	CU_ASSERT_EQUAL_FATAL(acct_report_utilization(&u, &r), 0);
	text = report_text(r, ACCT_FORMAT_CSV);
	CU_ASSERT_PTR_NULL(strstr(text, "GPUs"));     /* a pool without GPUs: as before */
	free(text);
	acct_report_destroy(r);
	jobs[0].ngpus = 2;
	for (size_t i = 0; i < n_nodes; i++)
		nodes[i].ngpus = 2;
	CU_ASSERT_EQUAL_FATAL(acct_utilization(jobs, N_JOBS, nodes, n_nodes, T0, AT(100), AT(50), &u), 0);
	CU_ASSERT_EQUAL(u.ngpus, 4);
	CU_ASSERT_DOUBLE_EQUAL(u.gpu_ns, 66e9, 1);
	CU_ASSERT_EQUAL_FATAL(acct_report_utilization(&u, &r), 0);
	text = report_text(r, ACCT_FORMAT_CSV);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\nGPUs held,66.0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\nGPUs idle,334.0"));
	free(text);
	acct_report_destroy(r);
	free(nodes);
}

/* A small XML well-formedness check: balanced, properly nested tags,
 * quoted attributes, entities only of the five predefined kinds. Returns
 * the number of elements named tag with class="core", or -1. */
static int xml_check(const char *s, int *ret_cores)
{
	const char *stack[4096];
	size_t depth = 0, nlen[4096];
	int cores = 0, elements = 0;

	if (strncmp(s, "<?xml", 5) == 0)
		s = strstr(s, "?>") + 2;
	while (*s) {
		if (*s == '&') {
			if (strncmp(s, "&lt;", 4) && strncmp(s, "&gt;", 4) && strncmp(s, "&amp;", 5) &&
			    strncmp(s, "&quot;", 6) && strncmp(s, "&apos;", 6))
				return -1;
			s++;
			continue;
		}
		if (*s != '<') {
			if ((unsigned char)*s < ' ' && *s != '\n' && *s != '\t' && *s != '\r')
				return -1;
			s++;
			continue;
		}
		s++;
		if (*s == '/') {
			const char *name = ++s;
			size_t n = strcspn(s, ">");

			if (depth == 0 || n != nlen[depth - 1] || strncmp(name, stack[depth - 1], n) != 0)
				return -1;
			depth--;
			s += n + 1;
			continue;
		}
		{
			const char *name = s;
			size_t n = strcspn(s, " />");
			bool self = false;

			if (n == 0)
				return -1;
			elements++;
			s += n;
			if (n == 1 && *name == 'g' && strncmp(s, " class=\"core\"", 13) == 0)
				cores++;
			for (;;) {
				s += strspn(s, " \n");
				if (*s == '>') {
					s++;
					break;
				}
				if (s[0] == '/' && s[1] == '>') {
					self = true;
					s += 2;
					break;
				}
				s += strcspn(s, "=\"<> ");
				if (*s != '=' || s[1] != '"')
					return -1;
				s += 2;
				for (; *s && *s != '"'; s++)
					if (*s == '<')
						return -1;
				if (!*s)
					return -1;
				s++;
			}
			if (!self) {
				if (depth == 4096)
					return -1;
				stack[depth] = name;
				nlen[depth++] = n;
			}
		}
	}
	*ret_cores = cores;
	return depth == 0 && elements > 0 ? 0 : -1;
}

static void test_svg(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_node *nodes;
	size_t n_nodes, len;
	char *buf = NULL;
	FILE *f;
	int cores = 0;

	records_load(jobs);
	snprintf(jobs[0].owner, sizeof(jobs[0].owner), "a<&>\"b");   /* escaped in <title> */
	nodes_load(jobs, &nodes, &n_nodes);
	f = open_memstream(&buf, &len);
	CU_ASSERT_EQUAL(acct_svg_write(f, jobs, N_JOBS, nodes, n_nodes, NULL, 0, T0, AT(100), AT(50)), 0);
	fclose(f);
	CU_ASSERT_EQUAL(xml_check(buf, &cores), 0);
	CU_ASSERT_EQUAL(cores, 4);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "data-core=\"n1:0\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "data-core=\"n2:1\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "a&lt;&amp;&gt;&quot;b"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "class=\"executing\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "class=\"teardown\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "class=\"legend\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "class=\"axis\""));
	/* The checker itself rejects a broken document. */
	CU_ASSERT_EQUAL(xml_check("<svg><g></svg></g>", &cores), -1);
	CU_ASSERT_EQUAL(xml_check("<svg a=b/>", &cores), -1);
	CU_ASSERT_EQUAL(xml_check("<svg>&nbsp;</svg>", &cores), -1);
	free(buf);
	f = open_memstream(&buf, &len);
	CU_ASSERT_EQUAL(acct_svg_write(f, jobs, N_JOBS, nodes, n_nodes, NULL, 0, T0, T0, AT(50)), -EINVAL);
	fclose(f);
	free(buf);
	free(nodes);
}

static char *svg_of(const struct acct_job *jobs, const struct acct_node *nodes, size_t n_nodes,
		    const struct acct_gpu_hold *holds, size_t n_holds)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_EQUAL(acct_svg_write(f, jobs, N_JOBS, nodes, n_nodes, holds, n_holds, T0, AT(100), AT(50)), 0);
	fclose(f);
	return buf;
}

/* The text of the lane <g ... data-gpu="id"> up to its </g>, or NULL. */
static char *svg_lane(const char *svg, const char *id)
{
	char key[64];
	const char *s, *e;

	snprintf(key, sizeof(key), "data-gpu=\"%s\"", id);
	s = strstr(svg, key);
	e = s ? strstr(s, "</g>") : NULL;
	return e ? strndup(s, (size_t)(e - s)) : NULL;
}

/* GPU lanes: n1 has 2 GPUs, n2 one: 3 lanes below the 4 cores. Job 1
 * held n1's GPU 1 and job 3 n2's GPU 0 (their records' alloc): each is
 * drawn in its lane only. A pool without GPUs gets no lane, whatever the
 * records say, and the same bytes as without records of GPUs. */
static void test_svg_gpus(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_node *nodes;
	struct acct_gpu_hold *holds = NULL;
	size_t n_nodes, n_holds = 0;
	json_t *rec = json_loads(records_json, 0, NULL);
	char *plain, *svg, *lane;
	const char *s;
	int cores = 0, lanes = 0;

	CU_ASSERT_FATAL(rec != NULL);
	records_load(jobs);
	nodes_load(jobs, &nodes, &n_nodes);
	json_object_set_new(json_array_get(rec, 0), "alloc",
			    json_pack("[{s:s, s:[i]}]", "node", "n1", "gpus", 1));
	json_object_set_new(json_array_get(rec, 2), "alloc",
			    json_pack("[{s:s, s:[i, i]}, {s:s, s:[]}]", "node", "n2", "gpus", 0, 64, "node", "n1", "gpus"));
	for (size_t i = 0; i < N_JOBS; i++)
		CU_ASSERT_EQUAL(acct_gpu_holds_add(json_array_get(rec, i), i, &holds, &n_holds), 0);
	CU_ASSERT_EQUAL_FATAL(n_holds, 2);    /* no entry for a node without GPUs of the job */
	CU_ASSERT_EQUAL(holds[0].job, 0);
	CU_ASSERT_EQUAL(holds[0].gpus, 2);
	CU_ASSERT_EQUAL(holds[1].job, 2);
	CU_ASSERT_STRING_EQUAL(holds[1].node, "n2");
	CU_ASSERT_EQUAL(holds[1].gpus, 1);    /* index 64 is past a node's GPUs */

	plain = svg_of(jobs, nodes, n_nodes, NULL, 0);
	svg = svg_of(jobs, nodes, n_nodes, holds, n_holds);
	CU_ASSERT_STRING_EQUAL(svg, plain);
	CU_ASSERT_PTR_NULL(strstr(svg, "gpu"));
	free(svg);

	nodes[0].ngpus = 2;
	nodes[1].ngpus = 1;
	svg = svg_of(jobs, nodes, n_nodes, holds, n_holds);
	CU_ASSERT_EQUAL(xml_check(svg, &cores), 0);
	CU_ASSERT_EQUAL(cores, 4);
	for (s = svg; (s = strstr(s, "<g class=\"gpu\"")) != NULL; s++)
		lanes++;
	CU_ASSERT_EQUAL(lanes, 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "qpool cores and GPUs from"));
	/* The lanes follow the cores: the last core's row before the first lane. */
	CU_ASSERT_TRUE(strstr(svg, "data-core=\"n2:1\"") < strstr(svg, "data-gpu=\"n1:gpu0\""));
	lane = svg_lane(svg, "n1:gpu0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(lane);
	CU_ASSERT_PTR_NULL(strstr(lane, "<title>job"));
	CU_ASSERT_PTR_NOT_NULL(strstr(lane, ">n1:gpu0</text>"));
	free(lane);
	lane = svg_lane(svg, "n1:gpu1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(lane);
	CU_ASSERT_PTR_NOT_NULL(strstr(lane, "<rect class=\"executing\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(lane, "<title>job 1 (alice, batch) executing"));
	CU_ASSERT_PTR_NULL(strstr(lane, "<title>job 3 "));
	free(lane);
	lane = svg_lane(svg, "n2:gpu0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(lane);
	CU_ASSERT_PTR_NOT_NULL(strstr(lane, "<title>job 3 (bob, batch) executing"));
	CU_ASSERT_PTR_NULL(strstr(lane, "<title>job 1 "));
	free(lane);
	free(svg);
	free(plain);
	free(holds);
	free(nodes);
	json_decref(rec);
}

static void test_nodes_build(void)
{
	struct acct_job jobs[N_JOBS];
	struct acct_node *nodes;
	size_t n;
	json_t *a = json_loads("[{\"name\": \"n1\", \"ncpus\": 2}]", 0, NULL);

	records_load(jobs);
	/* n2 has left the pool: it is added with the CPUs its jobs held. */
	CU_ASSERT_EQUAL_FATAL(acct_nodes_build(a, NULL, jobs, N_JOBS, &nodes, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_STRING_EQUAL(nodes[1].name, "n2");
	CU_ASSERT_EQUAL(nodes[1].ncpus, 2);
	CU_ASSERT_EQUAL(cpumask_count(&nodes[0].cpus), 2);
	free(nodes);
	json_decref(a);
}

/* qacct --held: memory asked and used, and licenses, in unit-hours over
 * a window of one hour [T0, T0 + 3600):
 * job 10 (alice, 1 GiB, peak 512 MiB, matlab:2) holds 0-3600: 1 h;
 * job 11 (alice, 2 GiB, matlab:1,comsol:3) holds 1800-5400: 0.5 h in it;
 * job 12 (bob, nothing asked) gives no row; job 13 (bob, 100 MiB) ended
 * before the window. */
static void test_held(void)
{
	static const char held_json[] =
		"[{\"jobid\": 10, \"owner\": \"alice\", \"state\": \"completed\", \"ncpus\": 1,"
		"  \"mem\": 1073741824, \"mem_peak\": 536870912,"
		"  \"attrs\": {\"Resource_List.licenses\": \"matlab:2\"},"
		"  \"times\": {\"dispatch\": 1795345749000000000, \"exec\": 1795345749000000000,"
		"    \"exit\": 1795349349000000000, \"released\": 1795349349000000000}},"
		" {\"jobid\": 11, \"owner\": \"alice\", \"state\": \"completed\", \"ncpus\": 1,"
		"  \"mem\": 2147483648, \"mem_peak\": null,"
		"  \"attrs\": {\"Resource_List.licenses\": \"matlab:1,comsol:3\"},"
		"  \"times\": {\"dispatch\": 1795347549000000000, \"exec\": 1795347549000000000,"
		"    \"exit\": 1795351149000000000, \"released\": 1795351149000000000}},"
		" {\"jobid\": 12, \"owner\": \"bob\", \"state\": \"running\", \"ncpus\": 1, \"mem\": 0,"
		"  \"times\": {\"dispatch\": 1795348749000000000}},"
		" {\"jobid\": 13, \"owner\": \"bob\", \"state\": \"completed\", \"ncpus\": 1, \"mem\": 104857600,"
		"  \"times\": {\"dispatch\": 1795345649000000000, \"exec\": 1795345649000000000,"
		"    \"exit\": 1795345700000000000, \"released\": 1795345700000000000}}]";
	static const struct { const char *res, *unit; int jobs; double hours, unit_hours, max; } want[] = {
		{ "mem", "MB", 2, 1.5, 1024 + 2048 * 0.5, 2048 },
		{ "mem_peak", "MB", 1, 1, 512, 512 },
		{ "license:comsol", "license", 1, 0.5, 1.5, 3 },
		{ "license:matlab", "license", 2, 1.5, 2.5, 2 },
	};
	json_t *arr = json_loads(held_json, 0, NULL), *doc, *rows, *row;
	struct acct_job jobs[4];
	struct acct_report *r = NULL;
	char *text;

	CU_ASSERT_FATAL(arr != NULL && json_array_size(arr) == 4);
	for (size_t i = 0; i < 4; i++)
		CU_ASSERT_FATAL(acct_job_from_json(json_array_get(arr, i), &jobs[i]) == 0);
	CU_ASSERT_EQUAL(acct_report_held(jobs, 4, ACCT_BY_USER, AT(3600), AT(0), AT(3600), &r), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(acct_report_held(jobs, 4, ACCT_BY_USER, AT(0), AT(3600), AT(3600), &r), 0);
	text = report_text(r, ACCT_FORMAT_JSON);
	doc = json_loads(text, 0, NULL);
	CU_ASSERT_FATAL(doc != NULL);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "by")), "user");
	rows = json_object_get(doc, "rows");
	CU_ASSERT_EQUAL_FATAL(json_array_size(rows), 4);
	for (size_t i = 0; i < 4; i++) {
		row = json_array_get(rows, i);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "user")), "alice");
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "resource")), want[i].res);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "unit")), want[i].unit);
		CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "jobs")), want[i].jobs);
		CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(row, "job_hours")), want[i].hours, 1e-6);
		CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(row, "unit_hours")), want[i].unit_hours,
				       1e-6);
		CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(row, "max")), want[i].max, 1e-6);
	}
	json_decref(doc);
	free(text);
	text = report_text(r, ACCT_FORMAT_CSV);
	CU_ASSERT(strncmp(text, "user,resource,unit,jobs,job_hours,unit_hours,max\r\n", 49) == 0);
	free(text);
	acct_report_destroy(r);
	json_decref(arr);
}

static const struct unit_test acct_tests[] = {
	{ "from_json", test_from_json },
	{ "derive", test_derive },
	{ "phases", test_phases },
	{ "utilization", test_utilization },
	{ "window_clip", test_window_clip },
	{ "quantile", test_quantile },
	{ "time_parse", test_time_parse },
	{ "csv_quoting", test_csv_quoting },
	{ "summary_json", test_summary_json },
	{ "estimates_report", test_estimates_report },
	{ "overhead_and_util_reports", test_overhead_and_util_reports },
	{ "job_report", test_job_report },
	{ "job_gpus", test_job_gpus },
	{ "utilization_gpus", test_utilization_gpus },
	{ "golden_tables", test_golden_tables },
	{ "svg", test_svg },
	{ "svg_gpus", test_svg_gpus },
	{ "nodes_build", test_nodes_build },
	{ "held", test_held },
	{ NULL, NULL },
};

UNIT_SUITE(acct, acct_tests);
