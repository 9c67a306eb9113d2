/* SPDX-License-Identifier: MIT */
/* QOS records and budgets (docs/QOS.md): kept in the job store (the same
 * SQL on both backends), a copy in memory that submit checks, and the op
 * that lists and changes them (sacctmgr ... qos, GrpTRESMins; qmgr). */
#ifndef QPOOL_QOS_H
#define QPOOL_QOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct jobstore;
struct pool;
struct qos_set;

/* Slurm's words for a QOS the user may not use, or that does not exist. */
#define QOS_REFUSED "Invalid qos specification"
/* The QOS that always exists. */
#define QOS_NORMAL "normal"

int qos_load(struct jobstore *js, struct qos_set **ret);
void qos_free(struct qos_set *q);
/* The QOS and budgets into the pool (at activation, after each change). */
void qos_apply(const struct qos_set *q, struct pool *p);
/* A job of user asking for QOS asked (NULL: none) with walltime
 * (seconds): 0 with *ret_qos the QOS it runs under (asked, else the
 * user's default; when the pool defines no QOS of its own, asked as it
 * is, unchecked, NULL when none),
 * or -EPERM with why (QOS_REFUSED; MaxWall: Slurm's policy words). */
int qos_submit_check(const struct qos_set *q, const char *user, bool is_root, const char *asked, uint64_t walltime,
		     const char **ret_qos, char *why, size_t len);
/* Whether a job of QOS name that is preempted is cancelled, not requeued. */
bool qos_preempt_cancels(const struct qos_set *q, const char *name);
json_t *qos_json(const struct qos_set *q);

#endif
