/* SPDX-License-Identifier: MIT */
/* qpoold's one door: every request of an authenticated peer comes in
 * here, is found by name in one table, checked against who may ask it,
 * and handed to its handler (ops.h). The connection layer (server.c)
 * knows nothing of ops: it calls door_request. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "ops.h"
#include "server-internal.h"
#include "timeutil.h"

/* Who may ask an op. */
enum who {
	WHO_USER,       /* any authenticated user; members type-checked */
	WHO_ROOT_NODE,  /* root, speaking for a node not yet registered */
	WHO_NODE,       /* root, on a registered node's link */
};

struct op {
	const char *name;
	enum who who;
	op_handler *fn;
};

/* Sorted by name (door_find's bsearch; a unit test checks the order). */
static const struct op ops[] = {
	{ "accounts", WHO_USER, op_accounts },    /* changes: root, op_accounts says */
	{ "acct", WHO_USER, op_acct },
	{ "admin", WHO_USER, op_admin },          /* root or an admin: op_admin says */
	{ "alter", WHO_USER, op_alter_move },
	{ "delete", WHO_USER, op_delete },
	{ "hold", WHO_USER, op_hold_release },
	{ "hooks", WHO_USER, op_hooks },          /* root: op_hooks says */
	{ "job.done", WHO_NODE, op_done },
	{ "job.exited", WHO_NODE, op_exited },
	{ "move", WHO_USER, op_alter_move },
	{ "node.health", WHO_NODE, op_health },
	{ "node.heartbeat", WHO_NODE, op_heartbeat },
	{ "node.register", WHO_ROOT_NODE, op_register },
	{ "nodes", WHO_USER, op_nodes },
	{ "order", WHO_USER, op_order },
	{ "qos", WHO_USER, op_qos },              /* changes: root, op_qos says */
	{ "queues", WHO_USER, op_queues },
	{ "release", WHO_USER, op_hold_release },
	{ "rerun", WHO_USER, op_rerun },
	{ "resv", WHO_USER, op_resv },            /* changes: root, op_resv says */
	{ "signal", WHO_USER, op_signal },
	{ "stat", WHO_USER, op_stat },
	{ "stats", WHO_USER, op_stats },
	{ "submit", WHO_USER, op_submit },
	{ "suspend", WHO_USER, op_suspend },      /* root: op_suspend says */
	{ "swap", WHO_USER, op_swap },
	{ "task.exit", WHO_NODE, op_task_pass },
	{ "task.in", WHO_NODE, op_task_pass },
	{ "task.inack", WHO_NODE, op_task_pass },
	{ "task.out", WHO_NODE, op_task_pass },
	{ "task.outack", WHO_NODE, op_task_pass },
	{ "task.signal", WHO_NODE, op_task_pass },
	{ "task.start", WHO_NODE, op_task_start },
	{ "task.started", WHO_NODE, op_task_pass },
	{ "tie", WHO_USER, op_tie },
	{ "usage", WHO_USER, op_usage },
	{ "watch", WHO_USER, op_watch },
};

static int op_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct op *)elem)->name);
}

static const struct op *door_find(const char *name)
{
	return bsearch(name, ops, sizeof(ops) / sizeof(ops[0]), sizeof(ops[0]), op_cmp);
}

bool door_table_sorted(void)
{
	for (size_t i = 1; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(ops[i - 1].name, ops[i].name) >= 0)
			return false;
	return true;
}

/* The names of a node's link: what only root may send. */
static bool node_name(const char *op)
{
	return !strncmp(op, "node.", 5) || !strncmp(op, "job.", 4) || !strncmp(op, "task.", 5);
}

void door_request(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	const struct op *o = door_find(op);
	const char *bad;

	/* A standby does nothing else: the client goes to the active. */
	if (server_standby(&c->server->h)) {
		server_standby_reply(c, req_id);
		return;
	}
	if (o ? o->who != WHO_USER : node_name(op)) {
		if (c->uid != 0) {
			if (c->tcp)
				log_warn("connection from %s refused: %s by uid %d, not root", c->peer, op,
					 (int)c->uid);
			conn_reply_err(c, req_id, EPERM, "%s: only root may speak for a node", op);
			return;
		}
		if ((!o || o->who == WHO_NODE) && !c->node) {
			conn_reply_err(c, req_id, ENOTCONN, "%s: register first", op);
			return;
		}
		if (c->node)
			c->node->last_seen = time_mono_ns();
	} else if ((bad = request_member_mistyped(msg))) {
		conn_reply_err(c, req_id, EINVAL, "%s: member \"%s\" has the wrong type", op, bad);
		return;
	}
	if (!o) {
		conn_reply_err(c, req_id, EOPNOTSUPP, "unknown request '%.40s'", op);
		return;
	}
	if (!c->cpu_part)
		c->cpu_part = o->name;   /* what its CPU is charged to (cpuacct.c) */
	/* The site's filter sees a submit, alter or move first; it hands
	 * the request on to request_run once it has spoken (filter.c). */
	if (o->who == WHO_USER && filter_wanted(&c->server->h, op)) {
		filter_request(c, op, req_id, msg);
		return;
	}
	o->fn(c, op, req_id, msg);
}

void request_run(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	const struct op *o = door_find(op);

	if (!o || o->who != WHO_USER) {
		conn_reply_err(c, req_id, EOPNOTSUPP, "unknown request '%.40s'", op);
		return;
	}
	o->fn(c, op, req_id, msg);
}
