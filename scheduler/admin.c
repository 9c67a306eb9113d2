/* SPDX-License-Identifier: MIT */
/* qmgr's ops: enable/disable and start/stop queues, drain/resume and
 * delete nodes, reload; and the IQS dispatch order of a queue, with reasons. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "conn.h"
#include "hctx.h"
#include "jobstore.h"
#include "log.h"
#include "loop.h"
#include "nodes-known.h"
#include "nodes.h"
#include "ops.h"
#include "pool.h"
#include "srvhook.h"
#include "users.h"
#include "wire.h"

#define ORDER_PAGE 1000

static void queue_action(struct conn *c, long long req_id, const char *action, const char *target,
			 const char *reason)
{
	struct hctx *s = conn_ctx(c);
	struct queue_conf *q = (struct queue_conf *)config_queue(s->config, target);
	int enabled = -1, started = -1;
	int r;

	if (!q) {
		conn_reply_err(c, req_id, ENOENT, "unknown queue '%s'", target);
		return;
	}
	if (strcmp(action, "enable") == 0)
		enabled = 1;
	else if (strcmp(action, "disable") == 0)
		enabled = 0;
	else if (strcmp(action, "start") == 0)
		started = 1;
	else
		started = 0;
	/* The reason stays while the queue is disabled or stopped. */
	if (enabled == 1 && q->started)
		reason = NULL;
	if (started == 1 && q->enabled)
		reason = NULL;
	if (!reason && (enabled == 0 || started == 0))
		reason = q->reason[0] ? q->reason : NULL;
	r = jobstore_queue_admin_set(s->store, q->name, enabled, started, reason);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	if (enabled >= 0)
		q->enabled = enabled;
	if (started >= 0)
		q->started = started;
	snprintf(q->reason, sizeof(q->reason), "%s", reason ? reason : "");
	log_info("queue %s: %s by uid %d%s%s", q->name, action, (int)c->uid, reason ? ": " : "",
		 reason ? reason : "");
	hctx_resched(s);
	conn_reply_ok(c, req_id, NULL);
}

/* drain/resume a node, by "by": admin (qmgr, pbsnodes, scontrol by
 * hand), health or hook (the same commands run from the health check or
 * a node prolog/epilog, e.g. LBNL NHC: docs/HOOKS.md). An admin's drain
 * wins over any; a check's drain of a node someone else drained leaves
 * it as it is (who and why); a check may resume only a drain by a check. */
static void node_action(struct conn *c, long long req_id, const char *action, const char *target,
			const char *reason, const char *by_name)
{
	struct hctx *s = conn_ctx(c);
	struct node *n = pool_node_find(s->pool, target);
	bool drain = strcmp(action, "drain") == 0;
	enum node_drain_by by = DRAIN_ADMIN;
	int r;

	if (by_name && strcmp(by_name, "health") == 0)
		by = DRAIN_HEALTH;
	else if (by_name && strcmp(by_name, "hook") == 0)
		by = DRAIN_HOOK;
	else if (by_name && strcmp(by_name, "admin") != 0) {
		conn_reply_err(c, req_id, EINVAL, "by: admin, health or hook, not '%.40s'", by_name);
		return;
	}
	if (!n) {
		conn_reply_err(c, req_id, ENOENT, "unknown node '%s'", target);
		return;
	}
	if (by != DRAIN_ADMIN && n->drain && n->drain_by != by) {
		if (!drain) {
			conn_reply_err(c, req_id, EPERM,
				       "node %s was drained by %s (%s); a %s resumes only its own drains", n->name,
				       node_drain_by_name(n->drain_by), n->drain_reason ? n->drain_reason : "no reason",
				       by == DRAIN_HEALTH ? "health check" : "hook");
			return;
		}
		log_info("node %s: drain by %s left as it is: drained by %s", n->name, node_drain_by_name(by),
			 node_drain_by_name(n->drain_by));
		conn_reply_ok(c, req_id, NULL);
		return;
	}
	/* The same drain again (NHC's at each failing run): nothing to write. */
	if (drain && n->drain && n->drain_by == by &&
	    strcmp(n->drain_reason ? n->drain_reason : "", reason ? reason : "") == 0) {
		conn_reply_ok(c, req_id, NULL);
		return;
	}
	r = node_drain_set_by(s, n, drain ? by : DRAIN_NONE, reason, (int64_t)c->uid);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	log_info("node %s: %s by uid %d (%s)%s%s", n->name, action, (int)c->uid, node_drain_by_name(by),
		 drain && reason ? ": " : "", drain && reason ? reason : "");
	hctx_resched(s);
	conn_reply_ok(c, req_id, NULL);
}

/* delete: the node is forgotten for good (store and pool), so jobs that
 * only it could hold are refused again. Not while it is connected (it
 * would be known again at once) nor while it has jobs (their records
 * name it, and it must report them). */
static void node_delete(struct conn *c, long long req_id, const char *target)
{
	struct hctx *s = conn_ctx(c);
	struct node *n = pool_node_find(s->pool, target);
	int r;

	if (!n) {
		conn_reply_err(c, req_id, ENOENT, "unknown node '%s'", target);
		return;
	}
	if (n->link) {
		conn_reply_err(c, req_id, EBUSY, "node %s is up: stop its qnoded first, or it registers again",
			       n->name);
		return;
	}
	if (pool_node_jobs(n)) {
		conn_reply_err(c, req_id, EBUSY, "node %s has job %lld; delete it when no job is there",
			       n->name, (long long)pool_node_jobs(n)->job->id);
		return;
	}
	log_info("node %s: deleted by uid %d", target, (int)c->uid);
	r = nodes_known_delete(s->store, s->pool, n);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	hctx_resched(s);
	conn_reply_ok(c, req_id, NULL);
}

void op_admin(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	const char *action = wire_str(msg, "action");
	const char *target = wire_str(msg, "target");
	const char *reason = wire_str(msg, "reason");
	static const char *queue_actions[] = { "enable", "disable", "start", "stop" };
	struct error err;

	if (c->uid != 0) {
		conn_reply_err(c, req_id, EPERM, "only root may change queues and nodes");
		return;
	}
	if (!action) {
		conn_reply_err(c, req_id, EINVAL, "admin: no action");
		return;
	}
	if (reason && strlen(reason) >= 128) {
		conn_reply_err(c, req_id, EINVAL, "reason: at most 127 bytes");
		return;
	}
	if (strcmp(action, "reload") == 0) {
		if (server_reload_ctx(conn_ctx(c), &err) < 0) {
			log_err("reload refused, old config kept: %s", err.text);
			conn_reply_err(c, req_id, EINVAL, "reload refused, old config kept: %s", err.text);
			return;
		}
		log_info("config reloaded by uid %d", (int)c->uid);
		conn_reply_ok(c, req_id, NULL);
		return;
	}
	if (!target) {
		conn_reply_err(c, req_id, EINVAL, "%s: which queue or node?", action);
		return;
	}
	for (size_t i = 0; i < 4; i++)
		if (strcmp(action, queue_actions[i]) == 0) {
			queue_action(c, req_id, action, target, reason);
			return;
		}
	if (strcmp(action, "drain") == 0 || strcmp(action, "resume") == 0) {
		node_action(c, req_id, action, target, reason, wire_str(msg, "by"));
		return;
	}
	if (strcmp(action, "delete") == 0) {
		node_delete(c, req_id, target);
		return;
	}
	conn_reply_err(c, req_id, EINVAL, "unknown action '%.40s'", action);
}

void op_order(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	const char *name = wire_str(msg, "queue");
	const struct queue_conf *q = name ? config_queue(s->config, name) : NULL;
	long long offset = wire_int(msg, "offset", 0);
	json_t *order, *e;
	size_t i, total;
	bool more;

	if (!q) {
		conn_reply_err(c, req_id, ENOENT, "unknown queue '%s'", name ? name : "");
		return;
	}
	if (offset < 0) {
		conn_reply_err(c, req_id, EINVAL, "offset must not be negative");
		return;
	}
	/* A page from offset (at most ORDER_PAGE places; conn_reply_page gives
	 * fewer if they pass the wire's cap): a queue of 10,000 jobs made one
	 * reply above 1 MiB. The order is computed afresh for each page. */
	order = pool_queue_order_page(s->pool, q, (size_t)offset, ORDER_PAGE, &total);
	json_array_foreach(order, i, e) {
		const char *owner = server_user_name(s, (uid_t)json_integer_value(json_object_get(e, "uid")));

		json_object_set_new(e, "owner", json_string(owner ? owner : "?"));
	}
	more = total > (size_t)offset + ORDER_PAGE;
	conn_reply_page(c, req_id, json_pack("{s:s, s:s, s:b, s:b, s:I, s:I, s:o, s:b}", "queue", q->name,
					     "kind", q->order == QUEUE_ORDER_FAIRSHARE ? "fairshare" : "round_robin",
					     "enabled", q->enabled, "started", q->started,
					     "max_running", (json_int_t)q->max_running,
					     "max_running_per_user", (json_int_t)q->max_running_per_user,
					     "order", order, "more", more), "order");
}

/* hooks (qmgr's list hook): the server's hooks and their last outcome. */
void op_hooks(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	if (c->uid != 0) {
		conn_reply_err(c, req_id, EPERM, "only root may list the hooks");
		return;
	}
	conn_reply_ok(c, req_id, json_pack("{s:o}", "hooks", srvhooks_json(conn_ctx(c)->hooks, conn_ctx(c)->config)));
}
