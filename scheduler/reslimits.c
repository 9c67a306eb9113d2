/* SPDX-License-Identifier: MIT */
/* Account limits (docs/LIMITS.md): a small table of the pool's accounts
 * with what their running jobs hold and their limits; the per-user ones
 * of a queue are counted with the queue's users in pool.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "reslimits.h"
#include "pool-internal.h"

uint64_t job_cpus_held(const struct job *j)
{
	uint64_t cpus = 0;

	for (unsigned i = 0; i < j->n_alloc; i++)
		cpus += j->alloc[i].ncpus;
	return cpus > j->ncpus ? cpus : j->ncpus;
}

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
	return a;
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
	if (sign > 0) {
		a->cpus += cpus;
		a->gpus += j->ngpus;
		a->jobs++;
	} else {
		a->cpus -= cpus <= a->cpus ? cpus : a->cpus;
		a->gpus -= j->ngpus <= a->gpus ? j->ngpus : a->gpus;
		a->jobs -= a->jobs > 0;
	}
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
	return 0;
}
