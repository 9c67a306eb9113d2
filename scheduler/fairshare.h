/* SPDX-License-Identifier: MIT */
/* Fair share over use (docs/FAIRSHARE.md): each user's use, CPU-seconds
 * (a GPU counting fairshare_gpu_weight CPUs) decayed with a half-life,
 * kept per uid in the pool; a queue of order = fairshare serves its users
 * by use over share, least first. */
#ifndef QPOOL_FAIRSHARE_H
#define QPOOL_FAIRSHARE_H

#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

struct pool;
struct job;

/* The half-life (seconds, > 0) and a GPU's weight in CPUs. */
void pool_fairshare_config(struct pool *p, uint64_t halflife, uint64_t gpu_weight);
/* j starts (+1) or stops (-1) holding what it holds, at now (seconds). */
void pool_usage_job(struct pool *p, const struct job *j, int sign, double now);
/* What the job with weight w used from t0 to t1 (seconds, t1 <= now), as
 * of now: the store's finished and running jobs at activation. */
int pool_usage_past(struct pool *p, uid_t uid, double w, double t0, double t1, double now);
/* A job's CPUs and weighted GPUs: what it is charged for per second. */
double pool_usage_weight(const struct pool *p, const struct job *j);
/* Shares: uid's share (a fraction of the pool, > 0); users without one
 * get the default. Cleared before a new set. */
void pool_shares_clear(struct pool *p, double dflt);
int pool_share_set(struct pool *p, uid_t uid, double share);
void pool_share_default_set(struct pool *p, double dflt);
/* Adds delta CPU-seconds to uid's use as of now (a job's overhead given
 * back at its end); use never goes below 0. */
void pool_usage_adjust(struct pool *p, uid_t uid, double delta, double now);
/* uid's use as of now, its share, and use over share (the order's key). */
double pool_usage_get(struct pool *p, uid_t uid, double now);
double pool_share_get(const struct pool *p, uid_t uid);
double pool_fairshare_key(struct pool *p, uid_t uid, double now);
/* The current time in seconds, as fair share counts it (the pool's clock
 * when a test sets it). */
double pool_fairshare_now(const struct pool *p);
/* Every user with use or a share: uid, usage, share, running, key. */
json_t *pool_usage_json(struct pool *p, double now);

#endif
