/* SPDX-License-Identifier: MIT */
/* Utilization: the pool's core time over a window, split by what it was doing. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "acct.h"
#include "timeutil.h"

static const char *const use_names[ACCT_USE_MAX] = {
	[ACCT_USE_EXECUTING] = "executing",
	[ACCT_USE_STARTING] = "starting",
	[ACCT_USE_TEARDOWN] = "tearing down",
	[ACCT_USE_RESERVED] = "reserved idle",
	[ACCT_USE_IDLE] = "idle",
};

const char *acct_use_name(enum acct_use u)
{
	return (unsigned)u < ACCT_USE_MAX ? use_names[u] : NULL;
}

/* Length of [a, b) inside [from, to). */
static int64_t clipped(int64_t a, int64_t b, int64_t from, int64_t to)
{
	if (a < from)
		a = from;
	if (b > to)
		b = to;
	return b > a ? b - a : 0;
}

int acct_utilization(const struct acct_job *jobs, size_t n_jobs, const struct acct_node *nodes,
		     size_t n_nodes, int64_t from, int64_t to, int64_t now_ns, struct acct_util *ret)
{
	struct acct_util u = { .from = from, .to = to };
	double busy = 0, capacity;

	if (to <= from)
		return -EINVAL;
	for (size_t i = 0; i < n_nodes; i++) {
		u.ncpus += nodes[i].ncpus;
		u.ngpus += nodes[i].ngpus;
	}
	for (size_t i = 0; i < n_jobs; i++) {
		const struct acct_job *j = &jobs[i];
		struct acct_phases p;
		double ncpus = (double)j->ncpus;
		int64_t run, connect;

		if (!acct_job_phases(j, now_ns, &p) || clipped(p.start, p.end, from, to) == 0)
			continue;
		u.jobs++;
		/* A job's GPUs are held from its dispatch to its release. */
		u.gpu_ns += (double)clipped(p.start, p.end, from, to) * (double)j->ngpus;
		run = clipped(p.exec, p.exit, from, to);
		u.core_ns[ACCT_USE_STARTING] += (double)clipped(p.start, p.exec, from, to) * ncpus;
		u.core_ns[ACCT_USE_EXECUTING] += (double)run * ncpus;
		u.core_ns[ACCT_USE_TEARDOWN] += (double)clipped(p.exit, p.end, from, to) * ncpus;
		connect = p.exit - p.exec;
		/* A realtime job reserves its CPUs for its whole connect time; what
		 * its processes did not use of them is reserved idle. Its CPU time
		 * is spread evenly over the connect time to clip it. */
		if (j->realtime && j->cpu_ns >= 0 && connect > 0 && run > 0) {
			double share = (double)run / (double)connect;
			double idle = (double)run * ncpus - (double)j->cpu_ns * share;

			if (idle > 0) {
				u.core_ns[ACCT_USE_RESERVED] += idle;
				u.core_ns[ACCT_USE_EXECUTING] -= idle;
			}
		}
	}
	for (int k = 0; k < ACCT_USE_IDLE; k++)
		busy += u.core_ns[k];
	capacity = (double)u.ncpus * (double)(to - from);
	/* More busy than capacity means nodes left the pool (their CPUs are
	 * not counted): the shares are then of what was measured. */
	u.core_ns[ACCT_USE_IDLE] = capacity > busy ? capacity - busy : 0;
	u.total_ns = capacity > busy ? capacity : busy;
	*ret = u;
	return 0;
}

double acct_util_percent(const struct acct_util *u, enum acct_use use)
{
	return u->total_ns > 0 ? 100.0 * u->core_ns[use] / u->total_ns : 0;
}

static const struct acct_column util_columns[] = {
	{ "state", "State", ACCT_CELL_TEXT },
	{ "core_seconds", "Core-seconds", ACCT_CELL_REAL },
	{ "core_hours", "Core-hours", ACCT_CELL_REAL },
	{ "percent", "Percent", ACCT_CELL_PERCENT },
};

static int util_row(struct acct_report *r, const char *name, double core_ns, double pct)
{
	int e = acct_report_text(r, name);

	e = e ? e : acct_report_real(r, core_ns / NSEC_PER_SEC);
	e = e ? e : acct_report_real(r, core_ns / NSEC_PER_SEC / 3600.0);
	return e ? e : acct_report_real(r, pct);
}

static void local_minute(char *buf, size_t len, int64_t ns)
{
	time_t t = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

int acct_report_utilization(const struct acct_util *u, struct acct_report **ret)
{
	struct acct_report *r = acct_report_create("utilization", util_columns, 4);
	char a[32], b[32];
	double sum = 0;
	int e;

	if (!r)
		return -ENOMEM;
	local_minute(a, sizeof(a), u->from);
	local_minute(b, sizeof(b), u->to);
	e = acct_report_caption(r, "Utilization of %lld cores from %s to %s (%.1f s), %zu jobs",
				(long long)u->ncpus, a, b, (double)(u->to - u->from) / NSEC_PER_SEC, u->jobs);
	e = e ? e : acct_report_meta(r, "from", json_integer(u->from));
	e = e ? e : acct_report_meta(r, "to", json_integer(u->to));
	e = e ? e : acct_report_meta(r, "ncpus", json_integer(u->ncpus));
	e = e ? e : acct_report_meta(r, "jobs", json_integer((json_int_t)u->jobs));
	for (int k = 0; k < ACCT_USE_MAX && !e; k++) {
		double pct = acct_util_percent(u, (enum acct_use)k);

		sum += pct;
		e = util_row(r, use_names[k], u->core_ns[k], pct);
	}
	e = e ? e : util_row(r, "total", u->total_ns, sum);
	/* GPUs beside the cores: GPU-seconds held and idle, of the pool's
	 * GPUs over the window (rows only for a pool with GPUs). */
	if (u->ngpus > 0 || u->gpu_ns > 0) {
		double cap = (double)u->ngpus * (double)(u->to - u->from), held = u->gpu_ns;
		double base = cap > held ? cap : held;

		e = e ? e : acct_report_meta(r, "ngpus", json_integer(u->ngpus));
		e = e ? e : util_row(r, "GPUs held", held, base > 0 ? held * 100 / base : 0);
		e = e ? e : util_row(r, "GPUs idle", base - held, base > 0 ? (base - held) * 100 / base : 0);
	}
	if (e) {
		acct_report_destroy(r);
		return e;
	}
	*ret = r;
	return 0;
}
