/* SPDX-License-Identifier: MIT */
/* Fair share at the server (usage.c, docs/FAIRSHARE.md). */
#ifndef QPOOL_USAGE_H
#define QPOOL_USAGE_H

struct hctx;
struct job;

/* The pool's half-life and GPU weight from the config (start, reload). */
void usage_configure(struct hctx *s);
/* The use of the store's jobs within 30 half-lives (activation, after
 * the active jobs are in the pool). 0 or -errno (logged). */
int usage_load(struct hctx *s);
/* Its read of the store: uid, ncpus, t_exec, end, state, attrs of each
 * job that ran and ended after $1 (wall ns) or has not ended. */
extern const char usage_load_sql[];
/* j ends: its overhead before exec and after exit given back. */
void usage_job_finished(struct hctx *s, const struct job *j);

#endif
