/* SPDX-License-Identifier: MIT */
/* The handlers behind qpoold's one door (door.c): each op's, by the file
 * that keeps it. A handler is called only for its op, by a peer the door
 * let in (its table says who may ask), and replies, or queues a pending
 * reply, before it returns. */
#ifndef QPOOL_OPS_H
#define QPOOL_OPS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

struct conn;
struct hctx;

typedef void op_handler(struct conn *c, const char *op, long long req_id, json_t *msg);

/* requests.c: the commands' ops */
op_handler op_submit, op_stat, op_delete, op_tie, op_hold_release, op_queues, op_nodes, op_acct,
	op_stats;
/* requests.c: the name of a member of msg with the wrong type, or NULL */
const char *request_member_mistyped(const json_t *msg);
/* requests.c: the caps on waiting jobs (max_queued, max_queued_per_user)
 * for n more waiting jobs of uid in queue q, the submissions of this
 * iteration counted; queue_only: q's caps only (qmove: the job is in the
 * pool's counts already). 0, or -EDQUOT with one line in errbuf. */
int queued_limit_check(struct hctx *s, uid_t uid, const char *owner, const struct queue_conf *q,
		       char *errbuf, size_t errlen, uint64_t n, bool queue_only);
/* jobctl.c: qalter, qmove, qorder, qsig, qrerun */
op_handler op_alter_move, op_swap, op_signal, op_rerun;
/* admin.c: qmgr's ops and the dispatch order */
op_handler op_admin, op_order, op_hooks;
/* accounts.c: accounts and their users (docs/ACCOUNTS.md) */
op_handler op_accounts;
/* qos.c: QOS, the QOS users may use, budgets (docs/QOS.md) */
op_handler op_qos;
/* resv.c: reservations and maintenance windows (docs/RESERVATIONS.md) */
op_handler op_resv;
/* usage.c: fair share's use and shares (docs/FAIRSHARE.md) */
op_handler op_usage;
/* watch.c: the event stream (docs/EVENTS.md) */
op_handler op_watch;
/* suspend.c: scontrol suspend/resume, qsig -s suspend/resume */
op_handler op_suspend;
/* nodes.c: a node's link */
op_handler op_register, op_heartbeat, op_health, op_done, op_exited;
/* tasks.c: tasks across a job's nodes */
op_handler op_task_start, op_task_pass;

#endif
