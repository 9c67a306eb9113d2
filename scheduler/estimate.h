/* SPDX-License-Identifier: MIT */
/* Start estimates for waiting jobs (docs/ESTIMATES.md): one replay of the
 * pool's time, beside the scheduling pass. */
#ifndef QPOOL_ESTIMATE_H
#define QPOOL_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "pool.h"

struct pool_estimate_stats {
	size_t visited;     /* waiting jobs the replay reached (at most estimate_depth) */
	size_t estimated;   /* of them given a start */
	size_t none;        /* of them that never fit what is known */
	struct job **fresh; /* those given their first estimate (malloc'd; the caller frees) */
	size_t n_fresh;
};

/* Replays the pool from now (wall s): running jobs end at dispatch +
 * walltime, then the first c->estimate_depth waiting jobs in pass order
 * each take the first time their counts fit until their own end. Sets
 * their est_start and est_vnode (0 and NULL: none), est_first when it
 * was 0 (those listed in ret->fresh), and est_seen = replay. 0 or
 * -ENOMEM. */
int pool_estimate(struct pool *p, const struct config *c, int64_t now, uint64_t replay,
		  struct pool_estimate_stats *ret);
/* j's estimate from the replay numbered replay: true with the start and
 * exec_vnode; false when it has none (not queued, never fits, or beyond
 * that replay's depth). */
bool pool_job_estimate(const struct job *j, uint64_t replay, int64_t *ret_start, const char **ret_vnode);

#endif
