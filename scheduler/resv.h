/* SPDX-License-Identifier: MIT */
/* Reservations and maintenance windows (docs/RESERVATIONS.md): kept in the
 * job store (schema 15, the same SQL on both backends), a copy in memory
 * that submit checks and placement follows (pool_resv_set), the op that
 * makes, changes, lists and removes them (scontrol, pbs_rsub, pbs_rstat,
 * pbs_rdel), and the turn of the timer that moves standing ones on. */
#ifndef QPOOL_RESV_H
#define QPOOL_RESV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jobstore;
struct resvs;
struct pool;
struct hctx;

#define RESV_NAME_MAX 64
/* Slurm's words (scripts match them). */
#define RESV_DENIED "Access denied to requested reservation"
#define RESV_INVALID "Requested reservation is invalid"

/* What the store holds into *ret (an empty set when none); 0 or -errno. */
int resvs_load(struct jobstore *js, struct resvs **ret);
void resvs_free(struct resvs *r);
/* The reservations into the pool's placement; 0 or -ENOMEM. */
int resvs_apply(const struct resvs *r, struct pool *p);
/* The reservation a queue name stands for (PBS's qsub -q R12: its id,
 * or its name), or NULL. */
const char *resvs_by_queue(const struct resvs *r, const char *queue);
/* Whether user (uid, its account or NULL) may run jobs in reservation
 * name: 0, -ENOENT (RESV_INVALID) or -EPERM (RESV_DENIED) in why. */
int resvs_submit_check(const struct resvs *r, const char *name, const char *user, uid_t uid, const char *account,
		       char *why, size_t len);
/* The timer's turn: standing reservations past their end move to the next
 * occurrence, others past their end are removed, a window that requeues
 * the jobs crossing it does so at its start, and a pass follows any
 * start or end. */
void resv_tick(struct hctx *s);

#endif
