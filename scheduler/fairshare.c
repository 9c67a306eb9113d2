/* SPDX-License-Identifier: MIT */
/* Fair share's use per user (docs/FAIRSHARE.md). A user's use u at time t
 * with running weight r (CPUs, weighted GPUs) moves to t' as
 *   u' = u k + r h / ln 2 (1 - k),   k = 2^-((t' - t) / h),
 * the exact decayed integral of r over [t, t'], so use is kept in O(1)
 * per job start and end and read in O(1) at any time. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fairshare.h"
#include "job.h"
#include "pool-internal.h"
#include "reslimits.h"

void pool_fairshare_config(struct pool *p, uint64_t halflife, uint64_t gpu_weight)
{
	double now = pool_fairshare_now(p);

	/* Use so far is kept as it is; it decays by the new half-life on. */
	for (size_t i = 0; i < p->usage_cap; i++)
		if (p->usage[i].used)
			(void)pool_usage_get(p, p->usage[i].uid, now);
	p->halflife = halflife ? (double)halflife : 7 * 86400.0;
	p->gpu_weight = (double)gpu_weight;
}

double pool_fairshare_now(const struct pool *p)
{
	struct timespec ts;

	if (p->clock)
		return (double)p->clock;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double halflife(const struct pool *p)
{
	return p->halflife > 0 ? p->halflife : 7 * 86400.0;
}

static size_t slot(uid_t uid, size_t cap)
{
	return ((size_t)uid * 2654435761u) & (cap - 1);
}

static struct usage_rec *rec_find(const struct pool *p, uid_t uid)
{
	if (!p->usage_cap)
		return NULL;
	for (size_t s = slot(uid, p->usage_cap);; s = (s + 1) & (p->usage_cap - 1)) {
		if (!p->usage[s].used)
			return NULL;
		if (p->usage[s].uid == uid)
			return &p->usage[s];
	}
}

static struct usage_rec *rec_get(struct pool *p, uid_t uid, double now)
{
	struct usage_rec *r = rec_find(p, uid);

	if (r)
		return r;
	if ((p->usage_used + 1) * 2 > p->usage_cap) {
		size_t cap = p->usage_cap ? p->usage_cap * 2 : 64;
		struct usage_rec *t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t i = 0; i < p->usage_cap; i++)
			if (p->usage[i].used) {
				size_t s = slot(p->usage[i].uid, cap);

				while (t[s].used)
					s = (s + 1) & (cap - 1);
				t[s] = p->usage[i];
			}
		free(p->usage);
		p->usage = t;
		p->usage_cap = cap;
	}
	{
		size_t s = slot(uid, p->usage_cap);

		while (p->usage[s].used)
			s = (s + 1) & (p->usage_cap - 1);
		p->usage[s] = (struct usage_rec){ .uid = uid, .used = true, .t = now };
		p->usage_used++;
		return &p->usage[s];
	}
}

/* r's use moved on to now. */
static void advance(const struct pool *p, struct usage_rec *r, double now)
{
	double h = halflife(p), dt = now - r->t, k;

	if (dt <= 0)
		return;
	k = exp2(-dt / h);
	r->usage = r->usage * k + r->running * h / M_LN2 * (1 - k);
	r->t = now;
}

double pool_usage_weight(const struct pool *p, const struct job *j)
{
	return (double)job_cpus_held(j) + p->gpu_weight * j->ngpus;
}

void pool_usage_job(struct pool *p, const struct job *j, int sign, double now)
{
	struct usage_rec *r = rec_get(p, j->uid, now);

	if (!r)
		return;
	advance(p, r, now);
	r->running += sign * pool_usage_weight(p, j);
	if (j->budget_end > 0)
		r->end_w += sign * pool_usage_weight(p, j) * j->budget_end;
	if (r->running < 0.5)
		r->running = r->end_w = 0;
}

void pool_user_budgets_clear(struct pool *p)
{
	for (size_t i = 0; i < p->usage_cap; i++)
		p->usage[i].budget_name[0] = '\0';
	p->user_budgets = 0;
}

int pool_user_budget_set(struct pool *p, uid_t uid, const char *name, int64_t cpu_mins)
{
	struct usage_rec *r = rec_get(p, uid, pool_fairshare_now(p));

	if (!r)
		return -ENOMEM;
	r->lim_cpu_mins = cpu_mins;
	snprintf(r->budget_name, sizeof(r->budget_name), "%s", cpu_mins >= 0 ? name : "");
	p->user_budgets += cpu_mins >= 0;
	return 0;
}

int pool_user_budget_blocks(const struct pool *p, const struct job *j, char *why, size_t len)
{
	const struct usage_rec *r = p->user_budgets ? rec_find(p, j->uid) : NULL;
	double now, h, dt, k, used, committed, asks, lim;

	if (!r || !r->budget_name[0])
		return 0;
	now = pool_fairshare_now(p);
	h = halflife(p);
	dt = now - r->t;
	k = dt > 0 ? exp2(-dt / h) : 1;
	used = r->usage * k + r->running * h / M_LN2 * (1 - k);
	committed = r->end_w - r->running * now;
	if (committed < 0)
		committed = 0;
	asks = (double)j->walltime * pool_usage_weight(p, j);
	lim = (double)r->lim_cpu_mins * 60;
	if (used < lim && used + committed + asks <= lim)
		return 0;
	snprintf(why, len, "AssocGrpCPUMinutesLimit: user %s: %.1f/%" PRId64 " CPU-minutes used, running jobs commit "
		 "%.1f more, the job asks %.1f", r->budget_name, used / 60, r->lim_cpu_mins, committed / 60, asks / 60);
	return 1;
}

int pool_usage_past(struct pool *p, uid_t uid, double w, double t0, double t1, double now)
{
	struct usage_rec *r = rec_get(p, uid, now);
	double h = halflife(p);

	if (!r)
		return -ENOMEM;
	if (t1 > now)
		t1 = now;
	if (t1 <= t0)
		return 0;
	advance(p, r, now);
	r->usage += w * h / M_LN2 * (exp2(-(now - t1) / h) - exp2(-(now - t0) / h));
	return 0;
}

void pool_shares_clear(struct pool *p, double dflt)
{
	for (size_t i = 0; i < p->usage_cap; i++)
		p->usage[i].share = 0;
	p->share_default = dflt;
}

int pool_share_set(struct pool *p, uid_t uid, double share)
{
	struct usage_rec *r = rec_get(p, uid, pool_fairshare_now(p));

	if (!r)
		return -ENOMEM;
	r->share = share;
	return 0;
}

void pool_share_default_set(struct pool *p, double dflt)
{
	p->share_default = dflt;
}

void pool_usage_adjust(struct pool *p, uid_t uid, double delta, double now)
{
	struct usage_rec *r = rec_find(p, uid);

	if (!r)
		return;
	advance(p, r, now);
	r->usage += delta;
	if (r->usage < 0)
		r->usage = 0;
}

double pool_usage_get(struct pool *p, uid_t uid, double now)
{
	struct usage_rec *r = rec_find(p, uid);

	if (!r)
		return 0;
	advance(p, r, now);
	return r->usage;
}

double pool_share_get(const struct pool *p, uid_t uid)
{
	const struct usage_rec *r = rec_find(p, uid);

	if (r && r->share > 0)
		return r->share;
	return p->share_default > 0 ? p->share_default : 1;
}

double pool_fairshare_key(struct pool *p, uid_t uid, double now)
{
	return pool_usage_get(p, uid, now) / pool_share_get(p, uid);
}

json_t *pool_usage_json(struct pool *p, double now)
{
	json_t *arr = json_array();
	double total = 0;

	for (size_t i = 0; i < p->usage_cap; i++)
		if (p->usage[i].used) {
			advance(p, &p->usage[i], now);
			total += p->usage[i].usage;
		}
	for (size_t i = 0; arr && i < p->usage_cap; i++) {
		const struct usage_rec *r = &p->usage[i];
		double share = pool_share_get(p, r->uid), eff = total > 0 ? r->usage / total : 0;

		if (!r->used)
			continue;
		/* effective: its part of all use; factor: Slurm's classic
		 * 2^-(effective / share) (1 unused, 0.5 at its share). */
		json_array_append_new(arr, json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "uid", (json_int_t)r->uid,
						     "usage", r->usage, "share", share, "running", r->running,
						     "key", r->usage / share, "effective", eff,
						     "factor", exp2(-eff / share)));
	}
	return arr;
}
