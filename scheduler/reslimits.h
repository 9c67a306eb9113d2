/* SPDX-License-Identifier: MIT */
/* Limits in resources (docs/LIMITS.md, reslimits.c): CPUs and GPUs one user's running
 * jobs hold in a queue (max_cpus_per_user, max_gpus_per_user), and what an
 * account's running jobs hold in all (GrpTRES cpu= and gres/gpu=,
 * GrpJobs). A job a limit holds waits, saying which and the count. */
#ifndef QPOOL_RESLIMITS_H
#define QPOOL_RESLIMITS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pool;
struct job;
struct queue_conf;

/* The account limits anew: clear, then set each (-1: none). */
void pool_acct_limits_clear(struct pool *p);
int pool_acct_limit_set(struct pool *p, const char *account, int64_t cpus, int64_t gpus, int64_t jobs);
/* Budgets (GrpTRESMins, docs/QOS.md): clear, then set each account's
 * CPU- and GPU-minutes (-1: none). */
void pool_acct_budgets_clear(struct pool *p);
int pool_acct_budget_set(struct pool *p, const char *account, int64_t cpu_mins, int64_t gpu_mins);
/* What a job of account ran from t0 to t1 (seconds) as of now: the
 * store's jobs at activation, decayed as fair share's use. */
int pool_acct_usage_past(struct pool *p, const char *account, double cpus, double gpus, double t0, double t1,
			 double now);
/* Adds seconds (negative: gives back) of what j holds to its account's
 * use (overhead and time lost to preemption are not charged). */
void pool_acct_usage_adjust(struct pool *p, const struct job *j, double seconds, double now);
/* Budgets on users (GrpTRESMins=cpu= on a user, fairshare.c): counted
 * from the user's fair-share use (a GPU weighs fairshare_gpu_weight CPUs)
 * with its running jobs' committed walltime; clear, set (-1: none), and
 * whether one holds j (1 with why: "AssocGrpCPUMinutesLimit: user ..."). */
void pool_user_budgets_clear(struct pool *p);
int pool_user_budget_set(struct pool *p, uid_t uid, const char *name, int64_t cpu_mins);
int pool_user_budget_blocks(const struct pool *p, const struct job *j, char *why, size_t len);
/* j starts (+1) or stops (-1) holding what it holds, for its account. */
void pool_acct_job(struct pool *p, const struct job *j, int sign);
/* Whether an account limit holds j now: 1 with why (Slurm's reason word
 * first: "AssocGrpCpuLimit: account physics: 4/4 CPUs in use"), else 0. */
int pool_acct_blocks(const struct pool *p, const struct job *j, char *why, size_t len);
/* The same for q's per-user limits and the account's, for a waiting job
 * (stat's reason); 1 with why, else 0. */
int pool_request_limit_wait(const struct pool *p, const struct queue_conf *q, const struct job *j, char *why,
			    size_t len);

#endif
