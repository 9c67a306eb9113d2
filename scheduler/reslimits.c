/* SPDX-License-Identifier: MIT */
/* Account limits (docs/LIMITS.md): a small table of the pool's accounts
 * with what their running jobs hold and their limits; the per-user ones
 * of a queue are counted with the queue's users in pool.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairshare.h"
#include "job.h"
#include "reslimits.h"
#include "pool-internal.h"

static struct pool_acct *acct_find(const struct pool *p, const char *name)
{
	for (size_t i = 0; name && i < p->n_accts; i++)
		if (!strcmp(p->accts[i].name, name))
			return &p->accts[i];
	return NULL;
}

static struct pool_acct *acct_get(struct pool *p, const char *name)
{
	struct pool_acct *a = acct_find(p, name);

	if (a || strlen(name) >= sizeof(a->name))
		return a;
	if (p->n_accts == p->cap_accts) {
		size_t cap = p->cap_accts ? 2 * p->cap_accts : 16;
		struct pool_acct *t = realloc(p->accts, cap * sizeof(*t));

		if (!t)
			return NULL;
		p->accts = t;
		p->cap_accts = cap;
	}
	a = &p->accts[p->n_accts++];
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->lim_cpus = a->lim_gpus = a->lim_jobs = -1;
	a->lim_cpu_mins = a->lim_gpu_mins = -1;
	a->t = pool_fairshare_now(p);
	return a;
}

static double halflife(const struct pool *p)
{
	return p->halflife > 0 ? p->halflife : 7 * 86400.0;
}

/* a's use decayed to now, as fair share's (fairshare.c): the exact
 * integral of what runs, without moving a. */
static void use_at(const struct pool *p, const struct pool_acct *a, double now, double *ret_cpu, double *ret_gpu)
{
	double h = halflife(p), dt = now - a->t, k = dt > 0 ? exp2(-dt / h) : 1;

	*ret_cpu = a->cpu_use * k + a->cpu_run * h / M_LN2 * (1 - k);
	*ret_gpu = a->gpu_use * k + a->gpu_run * h / M_LN2 * (1 - k);
}

static void use_advance(const struct pool *p, struct pool_acct *a, double now)
{
	if (now <= a->t)
		return;
	use_at(p, a, now, &a->cpu_use, &a->gpu_use);
	a->t = now;
}

void pool_acct_budgets_clear(struct pool *p)
{
	for (size_t i = 0; i < p->n_accts; i++)
		p->accts[i].lim_cpu_mins = p->accts[i].lim_gpu_mins = -1;
}

int pool_acct_budget_set(struct pool *p, const char *account, int64_t cpu_mins, int64_t gpu_mins)
{
	struct pool_acct *a = acct_get(p, account);

	if (!a)
		return -ENOMEM;
	a->lim_cpu_mins = cpu_mins;
	a->lim_gpu_mins = gpu_mins;
	return 0;
}

int pool_acct_usage_past(struct pool *p, const char *account, double cpus, double gpus, double t0, double t1,
			 double now)
{
	struct pool_acct *a = account ? acct_get(p, account) : NULL;
	double h = halflife(p), w;

	if (!a)
		return account ? -ENOMEM : 0;
	if (t1 <= t0)
		return 0;
	use_advance(p, a, now);
	w = h / M_LN2 * (exp2(-(now - t1) / h) - exp2(-(now - t0) / h));
	a->cpu_use += cpus * w;
	a->gpu_use += gpus * w;
	return 0;
}

void pool_acct_usage_adjust(struct pool *p, const struct job *j, double seconds, double now)
{
	struct pool_acct *a = j->account ? acct_find(p, j->account) : NULL;

	if (!a)
		return;
	use_advance(p, a, now);
	a->cpu_use += seconds * (double)job_cpus_held(j);
	a->gpu_use += seconds * (double)j->ngpus;
	if (a->cpu_use < 0)
		a->cpu_use = 0;
	if (a->gpu_use < 0)
		a->gpu_use = 0;
}

void pool_acct_limits_clear(struct pool *p)
{
	for (size_t i = 0; i < p->n_accts; i++)
		p->accts[i].lim_cpus = p->accts[i].lim_gpus = p->accts[i].lim_jobs = -1;
}

int pool_acct_limit_set(struct pool *p, const char *account, int64_t cpus, int64_t gpus, int64_t jobs)
{
	struct pool_acct *a = acct_get(p, account);

	if (!a)
		return -ENOMEM;
	a->lim_cpus = cpus;
	a->lim_gpus = gpus;
	a->lim_jobs = jobs;
	return 0;
}

void pool_acct_job(struct pool *p, const struct job *j, int sign)
{
	struct pool_acct *a = j->account ? acct_get(p, j->account) : NULL;
	uint64_t cpus = job_cpus_held(j);

	if (!a)
		return;
	use_advance(p, a, pool_fairshare_now(p));
	if (sign > 0) {
		a->cpus += cpus;
		a->gpus += j->ngpus;
		a->jobs++;
		/* What it commits of a budget: to its walltime's end
		 * (j->budget_end, holds_change's). */
		a->cpu_run += (double)cpus;
		a->gpu_run += (double)j->ngpus;
		if (j->budget_end > 0) {
			a->cpu_end += (double)cpus * j->budget_end;
			a->gpu_end += (double)j->ngpus * j->budget_end;
		}
	} else {
		a->cpus -= cpus <= a->cpus ? cpus : a->cpus;
		a->gpus -= j->ngpus <= a->gpus ? j->ngpus : a->gpus;
		a->jobs -= a->jobs > 0;
		a->cpu_run -= (double)cpus;
		a->gpu_run -= (double)j->ngpus;
		if (j->budget_end > 0) {
			a->cpu_end -= (double)cpus * j->budget_end;
			a->gpu_end -= (double)j->ngpus * j->budget_end;
		}
		if (a->cpu_run <= 0.5)
			a->cpu_run = a->cpu_end = 0;
		if (a->gpu_run <= 0.5)
			a->gpu_run = a->gpu_end = 0;
	}
}

/* Whether a's budget (lim minutes) holds a job asking `asks` seconds:
 * use so far, what running jobs commit to their walltime's end, and the
 * job's own walltime (docs/QOS.md, "Budgets"). */
static int budget_over(const struct pool_acct *a, const char *word, const char *what, int64_t lim, double used, double run,
		       double end_sum, double now, double asks, char *why, size_t len)
{
	double committed = end_sum - run * now;

	if (lim < 0)
		return 0;
	if (committed < 0)
		committed = 0;
	if (used + committed + asks <= (double)lim * 60 && used < (double)lim * 60)
		return 0;
	snprintf(why, len, "%s: account %s: %.1f/%" PRId64 " %s-minutes used, running jobs commit %.1f more,"
		 " the job asks %.1f", word, a->name, used / 60, lim, what, committed / 60, asks / 60);
	return 1;
}

int pool_acct_blocks(const struct pool *p, const struct job *j, char *why, size_t len)
{
	const struct pool_acct *a = acct_find(p, j->account);

	if (!a)
		return 0;
	if (a->lim_jobs >= 0 && a->jobs + 1 > (uint64_t)a->lim_jobs) {
		snprintf(why, len, "AssocGrpJobsLimit: account %s: %" PRIu64 "/%" PRId64 " jobs running", a->name,
			 a->jobs, a->lim_jobs);
		return 1;
	}
	if (a->lim_cpus >= 0 && a->cpus + j->ncpus > (uint64_t)a->lim_cpus) {
		snprintf(why, len, "AssocGrpCpuLimit: account %s: %" PRIu64 "/%" PRId64 " CPUs in use, the job asks %u",
			 a->name, a->cpus, a->lim_cpus, j->ncpus);
		return 1;
	}
	if (a->lim_gpus >= 0 && j->ngpus && a->gpus + j->ngpus > (uint64_t)a->lim_gpus) {
		snprintf(why, len, "AssocGrpGRES: account %s: %" PRIu64 "/%" PRId64 " GPUs in use, the job asks %u",
			 a->name, a->gpus, a->lim_gpus, j->ngpus);
		return 1;
	}
	if (a->lim_cpu_mins >= 0 || (a->lim_gpu_mins >= 0 && j->ngpus)) {
		double now = pool_fairshare_now(p), cpu, gpu, wall = (double)j->walltime;

		use_at(p, a, now, &cpu, &gpu);
		if (budget_over(a, "AssocGrpCPUMinutesLimit", "CPU", a->lim_cpu_mins, cpu, a->cpu_run, a->cpu_end, now, wall * j->ncpus, why, len))
			return 1;
		if (j->ngpus && budget_over(a, "AssocGrpGRESMinutes", "GPU", a->lim_gpu_mins, gpu, a->gpu_run, a->gpu_end, now,
					    wall * j->ngpus, why, len))
			return 1;
	}
	return 0;
}
