/* SPDX-License-Identifier: MIT */
/* Summaries by queue, user, node or day, the J90-shaped per-queue overhead table, and what jobs held over a window. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acct.h"
#include "error.h"
#include "license.h"
#include "sort.h"
#include "timeutil.h"

static const char *const key_names[] = {
	[ACCT_BY_QUEUE] = "queue", [ACCT_BY_USER] = "user", [ACCT_BY_NODE] = "node", [ACCT_BY_DAY] = "day",
	[ACCT_BY_ACCOUNT] = "account", [ACCT_BY_PROJECT] = "project",
};

int acct_key_parse(const char *s, enum acct_key *ret)
{
	for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
		if (s && strcmp(s, key_names[i]) == 0) {
			*ret = (enum acct_key)i;
			return 0;
		}
	return -EINVAL;
}

#define SUMMARY_COLUMNS(key, title) {                                             \
	{ key, title, ACCT_CELL_TEXT },                                           \
	{ "jobs", "Jobs", ACCT_CELL_INT },                                        \
	{ "failed", "Failed", ACCT_CELL_INT },                                    \
	{ "cancelled", "Cancelled", ACCT_CELL_INT },                              \
	{ "core_hours", "Core-h", ACCT_CELL_REAL },                               \
	{ "wait_mean_s", "Wait s", ACCT_CELL_SECONDS },                           \
	{ "connect_mean_s", "Connect s", ACCT_CELL_SECONDS },                     \
	{ "startup_mean_ms", "Start ms", ACCT_CELL_MS },                          \
	{ "startup_median_ms", "Start med", ACCT_CELL_MS },                       \
	{ "startup_p95_ms", "Start p95", ACCT_CELL_MS },                          \
	{ "teardown_mean_ms", "Tear ms", ACCT_CELL_MS },                          \
	{ "teardown_median_ms", "Tear med", ACCT_CELL_MS },                       \
	{ "teardown_p95_ms", "Tear p95", ACCT_CELL_MS },                          \
	{ "cpu_delivered_pct", "CPU %", ACCT_CELL_PERCENT },                      \
}
#define SUMMARY_NCOLS 14

static const struct acct_column summary_columns[][SUMMARY_NCOLS] = {
	[ACCT_BY_QUEUE] = SUMMARY_COLUMNS("queue", "Queue"),
	[ACCT_BY_USER] = SUMMARY_COLUMNS("user", "User"),
	[ACCT_BY_NODE] = SUMMARY_COLUMNS("node", "Node"),
	[ACCT_BY_DAY] = SUMMARY_COLUMNS("day", "Day"),
	[ACCT_BY_ACCOUNT] = SUMMARY_COLUMNS("account", "Account"),
	[ACCT_BY_PROJECT] = SUMMARY_COLUMNS("project", "Project"),
};

struct keyed {
	char key[ACCT_NAME_MAX];
	size_t idx;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void job_key(const struct acct_job *j, enum acct_key key, char *buf, size_t len)
{
	const char *s = NULL;

	switch (key) {
	case ACCT_BY_QUEUE: s = j->queue; break;
	case ACCT_BY_USER: s = j->owner; break;
	case ACCT_BY_NODE: s = j->node; break;
	case ACCT_BY_ACCOUNT: s = j->account; break;
	case ACCT_BY_PROJECT: s = j->project; break;
	case ACCT_BY_DAY: {
		int64_t ns = j->t[ACCT_DONE] ? j->t[ACCT_DONE] : j->t[ACCT_SUBMIT];
		time_t t = (time_t)(ns / NSEC_PER_SEC);
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(buf, len, "%Y-%m-%d", &tm);
		return;
	}
	}
	snprintf(buf, len, "%s", s && *s ? s : "-");
}

/* Jobs sorted by key, then by their place in the input. */
static struct keyed *jobs_sort(const struct acct_job *jobs, size_t n, enum acct_key key)
{
	struct keyed *k = calloc(n ? n : 1, sizeof(*k));

	if (!k)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		job_key(&jobs[i], key, k[i].key, sizeof(k[i].key));
		k[i].idx = i;
	}
	qp_sort(k, n, sizeof(*k), keyed_cmp);
	return k;
}

static bool state_failed(const char *s)
{
	return strcmp(s, "failed") == 0 || strcmp(s, "timeout") == 0 || strcmp(s, "oom") == 0;
}

/* Mean, median and p95 of v (sorted in place), as three cells. */
static int stats_cells(struct acct_report *r, int64_t *v, size_t n)
{
	double sum = 0;
	int e;

	if (n == 0) {
		e = acct_report_null(r);
		e = e ? e : acct_report_null(r);
		return e ? e : acct_report_null(r);
	}
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	e = acct_report_int(r, (int64_t)(sum / (double)n + 0.5));
	e = e ? e : acct_report_int(r, acct_quantile(v, n, 0.5));
	return e ? e : acct_report_int(r, acct_quantile(v, n, 0.95));
}

static int mean_cell(struct acct_report *r, double sum, size_t n)
{
	return n ? acct_report_int(r, (int64_t)(sum / (double)n + 0.5)) : acct_report_null(r);
}

/* One summary row for the jobs k[0..n-1]. */
static int group_row(struct acct_report *r, const struct acct_job *jobs, const struct keyed *k, size_t n,
		     int64_t *startup, int64_t *teardown)
{
	size_t failed = 0, cancelled = 0, n_wait = 0, n_conn = 0, n_start = 0, n_tear = 0;
	double core_ns = 0, wait = 0, connect = 0, cpu = 0, cpu_cap = 0;
	int e;

	for (size_t i = 0; i < n; i++) {
		const struct acct_job *j = &jobs[k[i].idx];
		struct acct_derived d;

		acct_job_derive(j, &d);
		failed += state_failed(j->state);
		cancelled += strcmp(j->state, "cancelled") == 0;
		if (d.elapsed >= 0)
			core_ns += (double)d.elapsed * (double)j->ncpus;
		if (d.wait >= 0) {
			wait += (double)d.wait;
			n_wait++;
		}
		if (d.connect >= 0) {
			connect += (double)d.connect;
			n_conn++;
		}
		if (d.cpu_delivered >= 0) {
			cpu += (double)j->cpu_ns;
			cpu_cap += (double)d.connect * (double)j->ncpus;
		}
		if (d.startup >= 0)
			startup[n_start++] = d.startup;
		if (d.teardown >= 0)
			teardown[n_tear++] = d.teardown;
	}
	e = acct_report_text(r, k[0].key);
	e = e ? e : acct_report_int(r, (int64_t)n);
	e = e ? e : acct_report_int(r, (int64_t)failed);
	e = e ? e : acct_report_int(r, (int64_t)cancelled);
	e = e ? e : acct_report_real(r, core_ns / NSEC_PER_SEC / 3600.0);
	e = e ? e : mean_cell(r, wait, n_wait);
	e = e ? e : mean_cell(r, connect, n_conn);
	e = e ? e : stats_cells(r, startup, n_start);
	e = e ? e : stats_cells(r, teardown, n_tear);
	e = e ? e : cpu_cap > 0 ? acct_report_real(r, 100.0 * cpu / cpu_cap) : acct_report_null(r);
	return e;
}

int acct_report_summary(const struct acct_job *jobs, size_t n, enum acct_key key,
			struct acct_report **ret)
{
	struct acct_report *r = acct_report_create("summary", summary_columns[key], SUMMARY_NCOLS);
	struct keyed *k = jobs_sort(jobs, n, key);
	int64_t *startup = calloc(n ? n : 1, sizeof(*startup));
	int64_t *teardown = calloc(n ? n : 1, sizeof(*teardown));
	int e = -ENOMEM;

	if (!r || !k || !startup || !teardown)
		goto done;
	e = acct_report_meta(r, "by", json_string(key_names[key]));
	for (size_t i = 0, end; i < n && !e; i = end) {
		for (end = i + 1; end < n && strcmp(k[end].key, k[i].key) == 0; end++)
			;
		e = group_row(r, jobs, k + i, end - i, startup, teardown);
	}
done:
	free(teardown);
	free(startup);
	free(k);
	if (e) {
		acct_report_destroy(r);
		return e;
	}
	*ret = r;
	return 0;
}

static const struct acct_column overhead_columns[] = {
	{ "queue", "Queue", ACCT_CELL_TEXT },
	{ "job", "Job", ACCT_CELL_TEXT },
	{ "memory", "Memory", ACCT_CELL_BYTES },
	{ "connect_s", "Connect s", ACCT_CELL_SECONDS },
	{ "elapsed_s", "Elapsed s", ACCT_CELL_SECONDS },
	{ "overhead_ms", "Overhead ms", ACCT_CELL_MS },
	{ "overhead_pct", "Overhead %", ACCT_CELL_PERCENT },
};

static int overhead_row(struct acct_report *r, const char *queue, const char *job, int64_t mem,
			int64_t connect, int64_t elapsed, int64_t overhead)
{
	int e = acct_report_text(r, queue);

	e = e ? e : acct_report_text(r, job);
	e = e ? e : mem >= 0 ? acct_report_int(r, mem) : acct_report_null(r);
	e = e ? e : connect >= 0 ? acct_report_int(r, connect) : acct_report_null(r);
	e = e ? e : acct_report_int(r, elapsed);
	e = e ? e : acct_report_int(r, overhead);
	e = e ? e : elapsed > 0 ? acct_report_real(r, 100.0 * (double)overhead / (double)elapsed)
				: acct_report_null(r);
	return e;
}

int acct_report_overhead(const struct acct_job *jobs, size_t n, const char *queue,
			 struct acct_report **ret)
{
	struct acct_report *r = acct_report_create("overhead", overhead_columns, 7);
	struct keyed *k = jobs_sort(jobs, n, ACCT_BY_QUEUE);
	int e = -ENOMEM;

	if (!r || !k)
		goto done;
	e = queue ? acct_report_meta(r, "queue", json_string(queue)) : 0;
	for (size_t i = 0, end; i < n && !e; i = end) {
		double mem = 0, conn = 0, el = 0, over = 0;
		size_t n_rows = 0, n_mem = 0, n_conn = 0;

		for (end = i + 1; end < n && strcmp(k[end].key, k[i].key) == 0; end++)
			;
		if (queue && strcmp(k[i].key, queue) != 0)
			continue;
		for (size_t m = i; m < end && !e; m++) {
			const struct acct_job *j = &jobs[k[m].idx];
			struct acct_derived d;
			char id[32];

			acct_job_derive(j, &d);
			if (acct_job_active(j) || d.elapsed < 0)
				continue;
			snprintf(id, sizeof(id), "%lld", (long long)j->jobid);
			e = overhead_row(r, k[i].key, id, j->mem_peak, d.connect, d.elapsed, d.overhead);
			n_rows++;
			el += (double)d.elapsed;
			over += (double)d.overhead;
			if (j->mem_peak >= 0) {
				mem += (double)j->mem_peak;
				n_mem++;
			}
			if (d.connect >= 0) {
				conn += (double)d.connect;
				n_conn++;
			}
		}
		if (n_rows && !e)
			e = overhead_row(r, k[i].key, "mean", n_mem ? (int64_t)(mem / (double)n_mem) : -1,
					 n_conn ? (int64_t)(conn / (double)n_conn + 0.5) : -1,
					 (int64_t)(el / (double)n_rows + 0.5), (int64_t)(over / (double)n_rows + 0.5));
	}
done:
	free(k);
	if (e) {
		acct_report_destroy(r);
		return e;
	}
	*ret = r;
	return 0;
}

#define ESTIMATE_COLUMNS(key, title) {                                            \
	{ key, title, ACCT_CELL_TEXT },                                           \
	{ "jobs", "Jobs", ACCT_CELL_INT },                                        \
	{ "first_error_median_s", "First med s", ACCT_CELL_INT },                 \
	{ "first_error_p90_s", "First p90 s", ACCT_CELL_INT },                    \
	{ "start_error_median_s", "At-start med s", ACCT_CELL_INT },              \
	{ "start_error_p90_s", "At-start p90 s", ACCT_CELL_INT },                 \
	{ "met_pct", "Met %", ACCT_CELL_PERCENT },                                \
}
#define ESTIMATE_NCOLS 7

static const struct acct_column estimate_columns[][ESTIMATE_NCOLS] = {
	[ACCT_BY_QUEUE] = ESTIMATE_COLUMNS("queue", "Queue"),
	[ACCT_BY_USER] = ESTIMATE_COLUMNS("user", "User"),
	[ACCT_BY_NODE] = ESTIMATE_COLUMNS("node", "Node"),
	[ACCT_BY_DAY] = ESTIMATE_COLUMNS("day", "Day"),
	[ACCT_BY_ACCOUNT] = ESTIMATE_COLUMNS("account", "Account"),
	[ACCT_BY_PROJECT] = ESTIMATE_COLUMNS("project", "Project"),
};

/* The median and p90 of v[0..n) (sorted in place) as two cells. */
static int quantile_cells(struct acct_report *r, int64_t *v, size_t n)
{
	int e;

	if (!n) {
		e = acct_report_null(r);
		return e ? e : acct_report_null(r);
	}
	e = acct_report_int(r, acct_quantile(v, n, 0.5));
	return e ? e : acct_report_int(r, acct_quantile(v, n, 0.9));
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

int acct_report_estimates(const struct acct_job *jobs, size_t n, enum acct_key key, struct acct_report **ret)
{
	struct acct_report *r = acct_report_create("estimates", estimate_columns[key], ESTIMATE_NCOLS);
	struct keyed *k = jobs_sort(jobs, n, key);
	int64_t *first = calloc(n ? n : 1, sizeof(*first)), *at = calloc(n ? n : 1, sizeof(*at));
	int e = -ENOMEM;

	if (!r || !k || !first || !at)
		goto done;
	e = acct_report_meta(r, "by", json_string(key_names[key]));
	for (size_t i = 0, end; i < n && !e; i = end) {
		size_t n_first = 0, n_at = 0, met = 0, used = 0;

		for (end = i + 1; end < n && strcmp(k[end].key, k[i].key) == 0; end++)
			;
		for (size_t m = i; m < end; m++) {
			const struct acct_job *j = &jobs[k[m].idx];
			int64_t start = j->t[ACCT_DISPATCH] / NSEC_PER_SEC;

			if (j->t[ACCT_DISPATCH] <= 0 || (!j->est_first && !j->est_start))
				continue;
			used++;
			if (j->est_first)
				first[n_first++] = abs64(start - j->est_first);
			if (j->est_start) {
				at[n_at++] = abs64(start - j->est_start);
				met += start <= j->est_start;
			}
		}
		if (!used)
			continue;
		e = acct_report_text(r, k[i].key);
		e = e ? e : acct_report_int(r, (int64_t)used);
		e = e ? e : quantile_cells(r, first, n_first);
		e = e ? e : quantile_cells(r, at, n_at);
		e = e ? e : n_at ? acct_report_real(r, 100.0 * (double)met / (double)n_at) : acct_report_null(r);
	}
done:
	free(first);
	free(at);
	free(k);
	if (e) {
		acct_report_destroy(r);
		return e;
	}
	*ret = r;
	return 0;
}

/* ---- what jobs held over a window ---- */

static const struct acct_column held_columns[][7] = {
#define HELD_COLUMNS(key, title) {                                                \
	{ key, title, ACCT_CELL_TEXT },                                           \
	{ "resource", "Resource", ACCT_CELL_TEXT },                               \
	{ "unit", "Unit", ACCT_CELL_TEXT },                                       \
	{ "jobs", "Jobs", ACCT_CELL_INT },                                        \
	{ "job_hours", "Job-h", ACCT_CELL_REAL },                                 \
	{ "unit_hours", "Unit-h", ACCT_CELL_REAL },                               \
	{ "max", "Max", ACCT_CELL_REAL },                                         \
}
	[ACCT_BY_QUEUE] = HELD_COLUMNS("queue", "Queue"),
	[ACCT_BY_USER] = HELD_COLUMNS("user", "User"),
	[ACCT_BY_NODE] = HELD_COLUMNS("node", "Node"),
	[ACCT_BY_DAY] = HELD_COLUMNS("day", "Day"),
	[ACCT_BY_ACCOUNT] = HELD_COLUMNS("account", "Account"),
	[ACCT_BY_PROJECT] = HELD_COLUMNS("project", "Project"),
#undef HELD_COLUMNS
};

/* One resource of one group. rank orders the rows: mem, mem_peak, licenses. */
struct held {
	char name[LICENSE_NAME_MAX + 8];
	int rank;
	size_t jobs;
	double hours, unit_hours, max;
};

static int held_cmp(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	return x->rank != y->rank ? x->rank - y->rank : strcmp(x->name, y->name);
}

/* Adds amount held for hours to the entry named name in v (appended if new). */
static int held_add(struct held **v, size_t *n, size_t *cap, const char *name, int rank, double amount,
		    double hours)
{
	struct held *h = NULL;

	for (size_t i = 0; i < *n && !h; i++)
		if (strcmp((*v)[i].name, name) == 0)
			h = &(*v)[i];
	if (!h) {
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 8;
			struct held *nv = realloc(*v, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			*v = nv;
			*cap = ncap;
		}
		h = &(*v)[(*n)++];
		*h = (struct held){ .rank = rank };
		snprintf(h->name, sizeof(h->name), "%s", name);
	}
	h->jobs++;
	h->hours += hours;
	h->unit_hours += amount * hours;
	if (amount > h->max)
		h->max = amount;
	return 0;
}

/* The rows of one group, jobs k[0..n-1]. */
static int held_group(struct acct_report *r, const struct acct_job *jobs, const struct keyed *k, size_t n,
		      int64_t from, int64_t to, int64_t now_ns, struct held **v, size_t *cap)
{
	size_t nv = 0;
	int e = 0;

	for (size_t i = 0; i < n && !e; i++) {
		const struct acct_job *j = &jobs[k[i].idx];
		struct license l[LICENSES_MAX];
		struct acct_phases p;
		struct error err;
		char name[LICENSE_NAME_MAX + 8];
		size_t nl = 0;
		int64_t a, b;
		double hours;

		if (!acct_job_phases(j, now_ns, &p))
			continue;
		a = p.start > from ? p.start : from;
		b = p.end < to ? p.end : to;
		if (b <= a)
			continue;
		hours = (double)(b - a) / NSEC_PER_SEC / 3600.0;
		if (j->mem > 0)
			e = held_add(v, &nv, cap, "mem", 0, (double)j->mem / 1048576.0, hours);
		if (!e && j->mem_peak > 0)
			e = held_add(v, &nv, cap, "mem_peak", 1, (double)j->mem_peak / 1048576.0, hours);
		/* Stored canonical by qpoold; a text that no longer parses is skipped. */
		if (j->licenses && license_request_parse(j->licenses, l, LICENSES_MAX, &nl, &err) < 0)
			nl = 0;
		for (size_t m = 0; m < nl && !e; m++) {
			snprintf(name, sizeof(name), "license:%.*s", LICENSE_NAME_MAX - 1, l[m].name);
			e = held_add(v, &nv, cap, name, 2, (double)l[m].count, hours);
		}
	}
	qp_sort(*v, nv, sizeof(**v), held_cmp);
	for (size_t i = 0; i < nv && !e; i++) {
		const struct held *h = &(*v)[i];

		e = acct_report_text(r, k[0].key);
		e = e ? e : acct_report_text(r, h->name);
		e = e ? e : acct_report_text(r, h->rank < 2 ? "MB" : "license");
		e = e ? e : acct_report_int(r, (int64_t)h->jobs);
		e = e ? e : acct_report_real(r, h->hours);
		e = e ? e : acct_report_real(r, h->unit_hours);
		e = e ? e : acct_report_real(r, h->max);
	}
	return e;
}

static void held_time(char *buf, size_t len, int64_t ns)
{
	time_t t = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

int acct_report_held(const struct acct_job *jobs, size_t n, enum acct_key key, int64_t from,
		     int64_t to, int64_t now_ns, struct acct_report **ret)
{
	struct acct_report *r;
	struct keyed *k;
	struct held *v = NULL;
	char a[32], b[32];
	size_t cap = 0;
	int e = -ENOMEM;

	if (to <= from)
		return -EINVAL;
	r = acct_report_create("held", held_columns[key], 7);
	k = jobs_sort(jobs, n, key);
	if (!r || !k)
		goto done;
	e = acct_report_meta(r, "by", json_string(key_names[key]));
	e = e ? e : acct_report_meta(r, "from", json_integer(from));
	e = e ? e : acct_report_meta(r, "to", json_integer(to));
	held_time(a, sizeof(a), from);
	held_time(b, sizeof(b), to);
	e = e ? e : acct_report_caption(r, "Held from %s to %s (MB = 2^20 bytes; mem_peak as if held all along)",
					a, b);
	for (size_t i = 0, end; i < n && !e; i = end) {
		for (end = i + 1; end < n && strcmp(k[end].key, k[i].key) == 0; end++)
			;
		e = held_group(r, jobs, k + i, end - i, from, to, now_ns, &v, &cap);
	}
done:
	free(v);
	free(k);
	if (e) {
		acct_report_destroy(r);
		return e;
	}
	*ret = r;
	return 0;
}
