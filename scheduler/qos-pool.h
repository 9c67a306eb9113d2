/* SPDX-License-Identifier: MIT */
/* QOS in the pool (docs/QOS.md, qos-pool.c): each QOS's priority, its
 * limits and what its running jobs hold (per user and in all), and the QOS
 * it may preempt. Filled from the store's records by qos_apply (qos.c). */
#ifndef QPOOL_QOS_POOL_H
#define QPOOL_QOS_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pool;
struct job;

/* A QOS's limits; -1: none. */
struct pool_qos_limits {
	int64_t max_cpus_per_user, max_gpus_per_user, max_jobs_per_user;
	int64_t grp_cpus, grp_gpus;
};

/* The QOS anew: clear (what running jobs hold is kept), then set each.
 * preempt: the QOS it may preempt, a comma list ("" none); suspends: its
 * PreemptMode is suspend. */
void pool_qos_clear(struct pool *p);
int pool_qos_set(struct pool *p, const char *name, int64_t priority, const struct pool_qos_limits *lim,
		 const char *preempt, bool suspends);
/* j starts (+1) or stops (-1) holding what it holds, for its QOS. */
void pool_qos_job(struct pool *p, const struct job *j, int sign);
/* Whether a limit of j's QOS holds j now: 1 with why (Slurm's reason word
 * first: "QOSMaxCpuPerUserLimit: qos high: ..."), else 0. */
int pool_qos_blocks(const struct pool *p, const struct job *j, char *why, size_t len);
/* j's QOS priority (0: none, or no QOS). */
int64_t pool_qos_priority(const struct pool *p, const struct job *j);
/* The QOS priorities jobs are served by, highest first, at most max
 * (docs/QOS.md): one, 0, when no QOS has a priority; priorities beyond max
 * distinct ones go with the last tier. Returns how many. */
size_t pool_qos_tiers(const struct pool *p, int64_t *tiers, size_t max);
/* Whether any QOS has a priority other than 0 (the pass orders by it). */
bool pool_qos_ordered(const struct pool *p);
/* Whether a job of QOS by may preempt a running job of QOS victim; and
 * whether QOS by preempts any. */
bool pool_qos_preempts(const struct pool *p, const char *by, const char *victim);
bool pool_qos_preempts_any(const struct pool *p, const char *by);
/* Whether a job of QOS name that is preempted is suspended (its QOS's
 * PreemptMode=suspend, docs/QOS.md). */
bool pool_qos_suspends(const struct pool *p, const char *name);
void pool_qos_free(struct pool *p);

#endif
