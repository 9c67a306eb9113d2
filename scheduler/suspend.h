/* SPDX-License-Identifier: MIT */
/* Suspend and resume (suspend.c, docs/PREEMPTION.md). */
#ifndef QPOOL_SUSPEND_H
#define QPOOL_SUSPEND_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct hctx;
struct job;

/* Freezes running job j (its gded stops its walltime clock). by: the
 * job that preempted it (its CPUs and GPUs are lent to that one until it
 * ends), 0 for an admin's. who names the asker for the comment. 0,
 * -EBUSY (not running), -EALREADY, -EHOSTUNREACH (node down). */
int server_job_suspend(struct hctx *s, struct job *j, int64_t by, const char *who);
/* Thaws it. 0, -EALREADY (not suspended), -EBUSY, -EADDRINUSE (what it
 * lent is still in use), -EHOSTUNREACH. */
int server_job_resume(struct hctx *s, struct job *j, const char *who);
/* Whether what j lent is free again. */
bool server_job_resumable(const struct job *j);
/* j ends (its result came) while suspended: its time suspended kept. */
void server_job_suspend_end(struct hctx *s, struct job *j);
/* j, read back at a start or takeover, before it enters the pool: sets
 * j->suspended and j->suspended_by as attrs.suspended_by (read by the
 * active load) says, or, in a store written before it, the comment. */
void suspend_load_state(struct job *j);
/* j, read back suspended and in the pool: a preemption's victim lends
 * its room to its preemptor again. */
void suspend_loaded(struct hctx *s, struct job *j);
/* Before each pass: preempted jobs whose preemptor has ended resume. */
void suspend_pass(struct hctx *s);
/* Runs fn on the job's attrs (a JSON object) and writes them back when
 * it returns 0. 0 or -errno. */
int job_attrs_update(struct hctx *s, int64_t id, int (*fn)(json_t *attrs, void *ud), void *ud);

#endif
