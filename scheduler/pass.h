/* SPDX-License-Identifier: MIT */
/* The scheduling pass (pass.c): decided in memory, written in an open
 * transaction, undone or launched after it. */
#ifndef QPOOL_PASS_H
#define QPOOL_PASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct server;
struct dispatch;

/* Decisions per pass. A full pass leaves the rest to the next loop
 * iteration, so requests are served between batches: 4,096 at once made
 * a 190 ms pass on 1,000 simulated nodes of 128 PUs (~45 us a placement). */
#define DISPATCH_BATCH 512

/* The pass's decisions: the jobs placed, in memory (RUNNING, their CPUs
 * taken), nothing written yet; at most DISPATCH_BATCH into d. */
size_t pass_decide(struct server *s, struct dispatch *d);
/* The placements of pass_decide alone (no resumes, no preemption), for a
 * pass inside an open transaction; at most DISPATCH_BATCH into d. */
size_t pass_place(struct server *s, struct dispatch *d);
/* The rest of a pass pass_place began (its preemptions), once its
 * commit is done. */
void pass_finish(struct server *s);
/* Their rows, in the transaction open. 0 or -errno. */
int pass_write(struct server *s, struct dispatch *d, size_t n, int64_t now);
/* Their commit failed with r (rolled back): back to the queue in memory. */
/* Between pass_write and the commit: the launches that may go first, held. */
void pass_launch_early(struct server *s, struct dispatch *d, size_t n);
void pass_undo(struct server *s, struct dispatch *d, size_t n, int r);
/* Committed: the launches; a full batch arms another pass. */
void pass_apply(struct server *s, struct dispatch *d, size_t n, int64_t now);
/* A pass in a transaction of its own, then the estimates' replay. */
void pass_schedule(struct server *s);
/* Start estimates (docs/ESTIMATES.md), at most every estimate_interval
 * seconds; timer: the 1 s timer's call, which runs only one left due. */
void estimates_replay(struct server *s, bool timer);

#endif
