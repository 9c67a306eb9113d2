/* SPDX-License-Identifier: MIT */
/* Job records: from the acct reply's JSON, derived figures, phases, time arguments, quantiles. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acct.h"
#include "gpu.h"
#include "timeutil.h"

static const char *const stamp_names[ACCT_STAMP_MAX] = {
	[ACCT_SUBMIT] = "submit",     [ACCT_DISPATCH] = "dispatch", [ACCT_LAUNCH] = "launch",
	[ACCT_WRAP] = "wrap",         [ACCT_FENCED] = "fenced",     [ACCT_EXEC] = "exec",
	[ACCT_EXIT] = "exit",         [ACCT_RELEASED] = "released", [ACCT_DONE] = "done",
};

const char *acct_stamp_name(enum acct_stamp s)
{
	return (unsigned)s < ACCT_STAMP_MAX ? stamp_names[s] : NULL;
}

static void str_copy(char *dst, size_t len, const json_t *v)
{
	const char *s = json_string_value(v);

	snprintf(dst, len, "%s", s ? s : "");
}

static int64_t int_or(const json_t *v, int64_t dflt)
{
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

int acct_gpu_holds_add(const json_t *o, size_t job, struct acct_gpu_hold **holds, size_t *n)
{
	const json_t *alloc = json_object_get(o, "alloc"), *e, *g;
	struct acct_gpu_hold *v;
	size_t i, k;

	if (!json_array_size(alloc))
		return 0;
	v = realloc(*holds, (*n + json_array_size(alloc)) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	*holds = v;
	json_array_foreach(alloc, i, e) {
		struct acct_gpu_hold *h = &v[*n];

		h->job = job;
		h->gpus = 0;
		str_copy(h->node, sizeof(h->node), json_object_get(e, "node"));
		json_array_foreach(json_object_get(e, "gpus"), k, g)
			if (json_is_integer(g) && json_integer_value(g) >= 0 && json_integer_value(g) < NODE_GPUS_MAX)
				h->gpus |= UINT64_C(1) << json_integer_value(g);
		if (h->gpus && h->node[0])
			(*n)++;
	}
	return 0;
}

int acct_job_from_json(const json_t *o, struct acct_job *ret)
{
	const json_t *times, *mono;

	if (!json_is_object(o) || !json_is_integer(json_object_get(o, "jobid")))
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->jobid = json_integer_value(json_object_get(o, "jobid"));
	str_copy(ret->name, sizeof(ret->name), json_object_get(o, "name"));
	str_copy(ret->owner, sizeof(ret->owner), json_object_get(o, "owner"));
	str_copy(ret->queue, sizeof(ret->queue), json_object_get(o, "queue"));
	str_copy(ret->account, sizeof(ret->account),
		 json_object_get(json_object_get(o, "attrs"), "Account_Name"));
	str_copy(ret->project, sizeof(ret->project), json_object_get(json_object_get(o, "attrs"), "project"));
	ret->est_first = strtoll(json_string_value(json_object_get(json_object_get(o, "attrs"),
								    "estimated.first_start_time")) ?: "0", NULL, 10);
	ret->est_start = strtoll(json_string_value(json_object_get(json_object_get(o, "attrs"),
								    "estimated.start_time")) ?: "0", NULL, 10);
	str_copy(ret->state, sizeof(ret->state), json_object_get(o, "state"));
	str_copy(ret->node, sizeof(ret->node), json_object_get(o, "node"));
	str_copy(ret->cpus, sizeof(ret->cpus), json_object_get(o, "cpus"));
	ret->ncpus = int_or(json_object_get(o, "ncpus"), 0);
	ret->ngpus = int_or(json_object_get(o, "ngpus"), 0);
	ret->mem = int_or(json_object_get(o, "mem"), 0);
	ret->mem_peak = int_or(json_object_get(o, "mem_peak"), -1);
	ret->licenses = json_string_value(json_object_get(json_object_get(o, "attrs"),
							  "Resource_List.licenses"));
	ret->cpu_ns = int_or(json_object_get(o, "cpu_ns"), -1);
	ret->exit_status = int_or(json_object_get(o, "exit_status"), -1);
	ret->exit_signal = int_or(json_object_get(o, "exit_signal"), -1);
	ret->oom = json_is_true(json_object_get(o, "oom"));
	times = json_object_get(o, "times");
	mono = json_object_get(o, "mono");
	for (int i = 0; i < ACCT_STAMP_MAX; i++) {
		ret->t[i] = int_or(json_object_get(times, stamp_names[i]), 0);
		if (i >= ACCT_WRAP && i <= ACCT_RELEASED)
			ret->mono[i] = int_or(json_object_get(mono, stamp_names[i]), 0);
	}
	return 0;
}

bool acct_job_active(const struct acct_job *j)
{
	return strcmp(j->state, "running") == 0 || strcmp(j->state, "exiting") == 0;
}

/* b - a on one clock, or -1 when either is absent or time ran backwards. */
static int64_t span(int64_t a, int64_t b)
{
	return a && b && b >= a ? b - a : -1;
}

/* The monotonic span when gded took both stamps, else the wall one: the
 * monotonic clock does not step when NTP or an admin sets the time. */
static int64_t best_span(const struct acct_job *j, enum acct_stamp a, enum acct_stamp b)
{
	if (j->mono[a] && j->mono[b])
		return span(j->mono[a], j->mono[b]);
	return span(j->t[a], j->t[b]);
}

void acct_job_derive(const struct acct_job *j, struct acct_derived *ret)
{
	struct acct_derived d = { .cpu_delivered = -1 };

	d.wait = span(j->t[ACCT_SUBMIT], j->t[ACCT_DISPATCH]);
	d.startup = span(j->t[ACCT_DISPATCH], j->t[ACCT_EXEC]);
	d.connect = best_span(j, ACCT_EXEC, ACCT_EXIT);
	d.teardown = best_span(j, ACCT_EXIT, ACCT_RELEASED);
	if (d.startup >= 0 && d.connect >= 0 && d.teardown >= 0)
		d.elapsed = d.startup + d.connect + d.teardown;
	else
		/* A job that never reached exec held its CPUs all the same. */
		d.elapsed = span(j->t[ACCT_DISPATCH], j->t[ACCT_RELEASED]);
	d.overhead = d.elapsed < 0 ? -1 : d.elapsed - (d.connect > 0 ? d.connect : 0);
	if (d.overhead < -1)
		d.overhead = -1;
	d.report = span(j->t[ACCT_RELEASED], j->t[ACCT_DONE]);
	if (j->cpu_ns >= 0 && d.connect > 0 && j->ncpus > 0)
		d.cpu_delivered = (double)j->cpu_ns / ((double)d.connect * (double)j->ncpus);
	*ret = d;
}

static json_t *seconds_json(int64_t ns)
{
	return ns < 0 ? json_null() : json_real((double)ns / NSEC_PER_SEC);
}

json_t *acct_derived_json(const struct acct_derived *d)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "wait", seconds_json(d->wait),
			 "startup", seconds_json(d->startup), "connect", seconds_json(d->connect),
			 "teardown", seconds_json(d->teardown), "elapsed", seconds_json(d->elapsed),
			 "overhead", seconds_json(d->overhead), "report", seconds_json(d->report),
			 "cpu_delivered", d->cpu_delivered < 0 ? json_null() : json_real(d->cpu_delivered));
}

void acct_jobs_mark_realtime(struct acct_job *jobs, size_t n, const json_t *queues)
{
	size_t i;
	const json_t *q;

	json_array_foreach(queues, i, q) {
		const char *name = json_string_value(json_object_get(q, "name"));
		const char *reserve = json_string_value(json_object_get(q, "reserve"));

		if (!name || !reserve || strcmp(reserve, "realtime") != 0)
			continue;
		for (size_t k = 0; k < n; k++)
			if (strcmp(jobs[k].queue, name) == 0)
				jobs[k].realtime = true;
	}
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

bool acct_job_phases(const struct acct_job *j, int64_t now_ns, struct acct_phases *ret)
{
	const int64_t *t = j->t;
	bool active = acct_job_active(j);
	struct acct_phases p;

	if (!t[ACCT_DISPATCH])
		return false;
	p.start = t[ACCT_DISPATCH];
	if (t[ACCT_RELEASED])
		p.end = t[ACCT_RELEASED];
	else if (active)
		p.end = now_ns;
	else if (t[ACCT_DONE])
		p.end = t[ACCT_DONE];
	else
		p.end = t[ACCT_EXIT] ? t[ACCT_EXIT] : p.start;
	if (p.end < p.start)
		p.end = p.start;
	/* qpoold learns exec and exit only with the result: an active job is
	 * counted as executing from its dispatch. */
	if (t[ACCT_EXEC])
		p.exec = t[ACCT_EXEC];
	else
		p.exec = active ? p.start : t[ACCT_EXIT] ? t[ACCT_EXIT] : p.end;
	p.exec = clamp(p.exec, p.start, p.end);
	/* Same-host durations come from the monotonic clock, as in derive. */
	if (t[ACCT_EXEC] && j->mono[ACCT_EXEC] && j->mono[ACCT_EXIT] && j->mono[ACCT_EXIT] >= j->mono[ACCT_EXEC])
		p.exit = p.exec + (j->mono[ACCT_EXIT] - j->mono[ACCT_EXEC]);
	else
		p.exit = t[ACCT_EXIT] ? t[ACCT_EXIT] : p.end;
	p.exit = clamp(p.exit, p.exec, p.end > p.exit ? p.end : p.exit);
	if (t[ACCT_RELEASED] && j->mono[ACCT_EXIT] && j->mono[ACCT_RELEASED] &&
	    j->mono[ACCT_RELEASED] >= j->mono[ACCT_EXIT])
		p.end = p.exit + (j->mono[ACCT_RELEASED] - j->mono[ACCT_EXIT]);
	if (p.end < p.exit)
		p.end = p.exit;
	*ret = p;
	return true;
}

int acct_nodes_build(const json_t *acct_nodes, const json_t *node_list, const struct acct_job *jobs,
		     size_t n_jobs, struct acct_node **ret_nodes, size_t *ret_n)
{
	size_t cap = json_array_size(acct_nodes) + json_array_size(node_list) + n_jobs;
	struct acct_node *nodes = calloc(cap ? cap : 1, sizeof(*nodes));
	size_t n = 0, i;
	const json_t *o;

	if (!nodes)
		return -ENOMEM;
	json_array_foreach(acct_nodes, i, o) {
		const char *name = json_string_value(json_object_get(o, "name"));

		if (!name)
			continue;
		snprintf(nodes[n].name, sizeof(nodes[n].name), "%s", name);
		nodes[n].ncpus = int_or(json_object_get(o, "ncpus"), 0);
		nodes[n].ngpus = int_or(json_object_get(o, "ngpus"), 0);
		n++;
	}
	json_array_foreach(node_list, i, o) {
		const char *name = json_string_value(json_object_get(o, "name"));
		const char *cpus = json_string_value(json_object_get(o, "cpus"));
		size_t k;

		if (!name)
			continue;
		for (k = 0; k < n && strcmp(nodes[k].name, name) != 0; k++)
			;
		if (k == n) {
			snprintf(nodes[n].name, sizeof(nodes[n].name), "%s", name);
			nodes[n].ncpus = int_or(json_object_get(o, "ncpus"), 0);
			n++;
		}
		if (cpus && cpumask_parse(cpus, &nodes[k].cpus) == 0 && nodes[k].ncpus == 0)
			nodes[k].ncpus = cpumask_count(&nodes[k].cpus);
	}
	/* Only the count known: number the CPUs from 0, as a node's own are. */
	for (size_t k = 0; k < n; k++)
		if (cpumask_count(&nodes[k].cpus) == 0)
			for (int64_t c = 0; c < nodes[k].ncpus && c < CPUMASK_MAX; c++)
				cpumask_set(&nodes[k].cpus, (unsigned)c);
	/* A node that is gone from the pool still counts for the jobs it ran. */
	for (size_t j = 0; j < n_jobs; j++) {
		struct cpumask m;
		size_t k;

		if (!jobs[j].node[0])
			continue;
		for (k = 0; k < n && strcmp(nodes[k].name, jobs[j].node) != 0; k++)
			;
		if (k == n) {
			snprintf(nodes[n].name, sizeof(nodes[n].name), "%s", jobs[j].node);
			n++;
		}
		if (cpumask_parse(jobs[j].cpus, &m) < 0)
			continue;
		for (int c = cpumask_next(&m, 0); c >= 0; c = cpumask_next(&m, c + 1))
			if (!cpumask_test(&nodes[k].cpus, (unsigned)c)) {
				cpumask_set(&nodes[k].cpus, (unsigned)c);
				if ((int64_t)cpumask_count(&nodes[k].cpus) > nodes[k].ncpus)
					nodes[k].ncpus = cpumask_count(&nodes[k].cpus);
			}
	}
	*ret_nodes = nodes;
	*ret_n = n;
	return 0;
}

/* Digits with an optional fraction, as seconds, into ns. */
static int seconds_parse(const char *s, int64_t *ret_ns)
{
	int64_t sec = 0, frac = 0, scale = NSEC_PER_SEC;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (sec > (INT64_MAX / NSEC_PER_SEC) / 10)
			return -EINVAL;
		sec = sec * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++)
			if (scale >= 10) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
	}
	if (*p)
		return -EINVAL;
	*ret_ns = sec * NSEC_PER_SEC + frac;
	return 0;
}

static int relative_parse(const char *s, int64_t now_ns, int64_t *ret_ns)
{
	char *end;
	long long n;
	int64_t unit;

	errno = 0;
	n = strtoll(s + 1, &end, 10);
	if (errno || end == s + 1 || n < 0 || !isdigit((unsigned char)s[1]))
		return -EINVAL;
	switch (*end) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	case 'w': unit = 7 * 86400; break;
	default: return -EINVAL;
	}
	if (end[1] || n > (INT64_MAX / NSEC_PER_SEC) / unit)
		return -EINVAL;
	*ret_ns = now_ns - n * unit * NSEC_PER_SEC;
	return 0;
}

int acct_time_parse(const char *s, int64_t now_ns, int64_t *ret_ns)
{
	static const char *const formats[] = {
		"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d",
	};
	time_t t;

	if (!s || !*s)
		return -EINVAL;
	if (strcmp(s, "now") == 0) {
		*ret_ns = now_ns;
		return 0;
	}
	if (*s == '-')
		return relative_parse(s, now_ns, ret_ns);
	if (strchr(s, '-') == NULL)
		return seconds_parse(s, ret_ns);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		struct tm tm = { 0 };
		const char *end = strptime(s, formats[i], &tm);

		if (!end || *end)
			continue;
		tm.tm_isdst = -1;
		t = mktime(&tm);
		if (t == (time_t)-1)
			return -EINVAL;
		*ret_ns = (int64_t)t * NSEC_PER_SEC;
		return 0;
	}
	return -EINVAL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int64_t acct_quantile(int64_t *v, size_t n, double q)
{
	double pos, frac;
	size_t lo;

	if (n == 0)
		return -1;
	qsort(v, n, sizeof(*v), cmp_i64);
	if (q <= 0)
		return v[0];
	if (q >= 1)
		return v[n - 1];
	pos = q * (double)(n - 1);
	lo = (size_t)pos;
	frac = pos - (double)lo;
	if (lo + 1 >= n)
		return v[n - 1];
	/* Rounded to the nearest ns, without libm. */
	return v[lo] + (int64_t)((double)(v[lo + 1] - v[lo]) * frac + 0.5);
}
