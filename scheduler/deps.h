/* SPDX-License-Identifier: MIT */
/* Dependencies between jobs, -W depend (depend.c). */
#ifndef QPOOL_DEPS_H
#define QPOOL_DEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct hctx;
struct job;

/* depend.c: -W depend. */
int depend_submit_check(struct hctx *s, uid_t uid, const char *text, bool lift, char *ret_text, size_t ret_len,
			char *err, size_t len);
/* In the submit's transaction: before* items put after* ones on their jobs. */
int depend_before_record(struct hctx *s, int64_t id, const char *text);
void depend_before_apply(struct hctx *s, int64_t id, const char *text);
/* depend_track holds j for its dependencies (j->depend) and indexes its
 * after* items by the jobs they name, to be decided at the next recheck;
 * again after j->depend grew. depend_forget takes it out (released, ended).
 * depend_loaded tracks a job the store held for them, at start. */
void depend_track(struct hctx *s, struct job *j);
void depend_forget(struct hctx *s, struct job *j);
void depend_loaded(struct hctx *s, struct job *j);
/* Job id started or ended (or its array's first subjob started): its
 * waiters, and only they, are decided at the next recheck. */
void depend_job_changed(struct hctx *s, int64_t id);
/* Whether any job waits on ID (server.c: its end is not held back). */
bool depend_has_waiters(struct hctx *s, int64_t id);
/* Decides the waiters marked since the last one: releases those whose
 * dependencies are met, marks those that never can be; its own
 * transaction. A job that ended is read from the store once. */
void depend_recheck(struct hctx *s);
/* Whether depend_recheck has waiters to decide (commit.c: a pass joined
 * to a submit's commit would run before it). */
bool depend_recheck_due(const struct hctx *s);
const char *depend_wait_reason(void);
/* What the dependency bookkeeping has cost (tests, the stats op): waiting
 * jobs decided since the start, and jobs waiting now (tracked). */
struct depend_stats {
	uint64_t decided;
	uint64_t waiting;
};
void depend_stats(const struct hctx *s, struct depend_stats *ret);
void depend_destroy(struct hctx *s);
#define DEPEND_WAIT_REASON_USER "waiting on dependencies; then held by its owner (qsub -h)"
bool depend_is_reason(const char *reason);

#endif
