/* SPDX-License-Identifier: MIT */
/* QOS in the pool (docs/QOS.md): a small table, one row per QOS a record
 * or a running job names, with its limits and what its running jobs hold,
 * in all and per user. A QOS no longer in the records keeps its row
 * (limits none, priority 0) while jobs hold what they hold. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "pool-internal.h"
#include "qos-pool.h"
#include "reslimits.h"

struct pool_qos_user {
	uid_t uid;
	uint64_t cpus, gpus, jobs;
};

struct pool_qos {
	char name[64];
	int64_t priority;
	struct pool_qos_limits lim;
	char preempt[256];            /* ",a,b,": the QOS it may preempt */
	bool suspends;                /* PreemptMode=suspend: its jobs preempted are frozen */
	uint64_t cpus, gpus, jobs;    /* held by its running jobs */
	struct pool_qos_user *users;
	size_t n_users, cap_users;
};

static const struct pool_qos_limits none = { -1, -1, -1, -1, -1 };

static struct pool_qos *qos_find(const struct pool *p, const char *name)
{
	for (size_t i = 0; name && i < p->n_qos; i++)
		if (!strcmp(p->qos[i].name, name))
			return &p->qos[i];
	return NULL;
}

static struct pool_qos *qos_get(struct pool *p, const char *name)
{
	struct pool_qos *q = qos_find(p, name);

	if (q || strlen(name) >= sizeof(q->name))
		return q;
	if (p->n_qos == p->cap_qos) {
		size_t cap = p->cap_qos ? 2 * p->cap_qos : 8;
		struct pool_qos *t = realloc(p->qos, cap * sizeof(*t));

		if (!t)
			return NULL;
		p->qos = t;
		p->cap_qos = cap;
	}
	q = &p->qos[p->n_qos++];
	memset(q, 0, sizeof(*q));
	snprintf(q->name, sizeof(q->name), "%s", name);
	q->lim = none;
	return q;
}

static struct pool_qos_user *user_get(struct pool_qos *q, uid_t uid)
{
	for (size_t i = 0; i < q->n_users; i++)
		if (q->users[i].uid == uid)
			return &q->users[i];
	if (q->n_users == q->cap_users) {
		size_t cap = q->cap_users ? 2 * q->cap_users : 8;
		struct pool_qos_user *t = realloc(q->users, cap * sizeof(*t));

		if (!t)
			return NULL;
		q->users = t;
		q->cap_users = cap;
	}
	q->users[q->n_users] = (struct pool_qos_user){ .uid = uid };
	return &q->users[q->n_users++];
}

static const struct pool_qos_user *user_find(const struct pool_qos *q, uid_t uid)
{
	for (size_t i = 0; i < q->n_users; i++)
		if (q->users[i].uid == uid)
			return &q->users[i];
	return NULL;
}

void pool_qos_clear(struct pool *p)
{
	for (size_t i = 0; i < p->n_qos; i++) {
		p->qos[i].priority = 0;
		p->qos[i].lim = none;
		p->qos[i].preempt[0] = '\0';
		p->qos[i].suspends = false;
	}
	p->qos_ordered = false;
}

int pool_qos_set(struct pool *p, const char *name, int64_t priority, const struct pool_qos_limits *lim,
		 const char *preempt, bool suspends)
{
	struct pool_qos *q = qos_get(p, name);

	if (!q)
		return -ENOMEM;
	q->priority = priority;
	q->lim = lim ? *lim : none;
	snprintf(q->preempt, sizeof(q->preempt), ",%s,", preempt ? preempt : "");
	q->suspends = suspends;
	if (priority)
		p->qos_ordered = true;
	return 0;
}

static void sub(uint64_t *v, uint64_t d)
{
	*v -= d <= *v ? d : *v;
}

void pool_qos_job(struct pool *p, const struct job *j, int sign)
{
	struct pool_qos *q = j->qos ? qos_get(p, j->qos) : NULL;
	struct pool_qos_user *u = q ? user_get(q, j->uid) : NULL;
	uint64_t cpus = job_cpus_held(j);

	if (!q || !u)
		return;
	if (sign > 0) {
		q->cpus += cpus;
		q->gpus += j->ngpus;
		q->jobs++;
		u->cpus += cpus;
		u->gpus += j->ngpus;
		u->jobs++;
	} else {
		sub(&q->cpus, cpus);
		sub(&q->gpus, j->ngpus);
		sub(&q->jobs, 1);
		sub(&u->cpus, cpus);
		sub(&u->gpus, j->ngpus);
		sub(&u->jobs, 1);
	}
}

int pool_qos_blocks(const struct pool *p, const struct job *j, char *why, size_t len)
{
	const struct pool_qos *q = qos_find(p, j->qos);
	const struct pool_qos_user *u;
	uint64_t ucpus = 0, ugpus = 0, ujobs = 0;

	if (!q)
		return 0;
	if ((u = user_find(q, j->uid))) {
		ucpus = u->cpus;
		ugpus = u->gpus;
		ujobs = u->jobs;
	}
	if (q->lim.max_jobs_per_user >= 0 && ujobs + 1 > (uint64_t)q->lim.max_jobs_per_user) {
		snprintf(why, len, "QOSMaxJobsPerUserLimit: qos %s: the user's jobs: %" PRIu64 "/%" PRId64 " running",
			 q->name, ujobs, q->lim.max_jobs_per_user);
		return 1;
	}
	if (q->lim.max_cpus_per_user >= 0 && ucpus + j->ncpus > (uint64_t)q->lim.max_cpus_per_user) {
		snprintf(why, len, "QOSMaxCpuPerUserLimit: qos %s: the user's jobs hold %" PRIu64 "/%" PRId64
			 " CPUs, the job asks %u", q->name, ucpus, q->lim.max_cpus_per_user, j->ncpus);
		return 1;
	}
	if (q->lim.max_gpus_per_user >= 0 && j->ngpus && ugpus + j->ngpus > (uint64_t)q->lim.max_gpus_per_user) {
		snprintf(why, len, "QOSMaxGRESPerUser: qos %s: the user's jobs hold %" PRIu64 "/%" PRId64
			 " GPUs, the job asks %u", q->name, ugpus, q->lim.max_gpus_per_user, j->ngpus);
		return 1;
	}
	if (q->lim.grp_cpus >= 0 && q->cpus + j->ncpus > (uint64_t)q->lim.grp_cpus) {
		snprintf(why, len, "QOSGrpCpuLimit: qos %s: %" PRIu64 "/%" PRId64 " CPUs in use, the job asks %u",
			 q->name, q->cpus, q->lim.grp_cpus, j->ncpus);
		return 1;
	}
	if (q->lim.grp_gpus >= 0 && j->ngpus && q->gpus + j->ngpus > (uint64_t)q->lim.grp_gpus) {
		snprintf(why, len, "QOSGrpGRES: qos %s: %" PRIu64 "/%" PRId64 " GPUs in use, the job asks %u",
			 q->name, q->gpus, q->lim.grp_gpus, j->ngpus);
		return 1;
	}
	return 0;
}

int64_t pool_qos_priority(const struct pool *p, const struct job *j)
{
	const struct pool_qos *q = j->qos && p->qos_ordered ? qos_find(p, j->qos) : NULL;

	return q ? q->priority : 0;
}

size_t pool_qos_tiers(const struct pool *p, int64_t *tiers, size_t max)
{
	size_t n = 1;

	tiers[0] = 0;
	for (size_t i = 0; p->qos_ordered && i < p->n_qos; i++) {
		int64_t v = p->qos[i].priority;
		size_t k = 0;

		while (k < n && tiers[k] != v)
			k++;
		if (k == n && n < max)
			tiers[n++] = v;
	}
	for (size_t i = 1; i < n; i++)   /* descending: a handful */
		for (size_t k = i; k > 0 && tiers[k] > tiers[k - 1]; k--) {
			int64_t t = tiers[k];

			tiers[k] = tiers[k - 1];
			tiers[k - 1] = t;
		}
	return n;
}

bool pool_qos_ordered(const struct pool *p)
{
	return p->qos_ordered;
}

bool pool_qos_preempts(const struct pool *p, const char *by, const char *victim)
{
	const struct pool_qos *q = qos_find(p, by);
	char key[70];

	if (!q || !victim || q->preempt[1] == ',')
		return false;
	snprintf(key, sizeof(key), ",%s,", victim);
	return strstr(q->preempt, key) != NULL;
}

bool pool_qos_preempts_any(const struct pool *p, const char *by)
{
	const struct pool_qos *q = qos_find(p, by);

	return q && q->preempt[1] && q->preempt[1] != ',';
}

bool pool_qos_suspends(const struct pool *p, const char *name)
{
	const struct pool_qos *q = qos_find(p, name);

	return q && q->suspends;
}

void pool_qos_free(struct pool *p)
{
	for (size_t i = 0; i < p->n_qos; i++)
		free(p->qos[i].users);
	free(p->qos);
	p->qos = NULL;
	p->n_qos = p->cap_qos = 0;
}
