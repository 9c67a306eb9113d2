/* SPDX-License-Identifier: MIT */
/* The server's settings: qmgr's stored ones (queues, IQS rotation, node
 * drains) and qpool.conf read again (qmgr's reload, SIGHUP). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "server-internal.h"
#include "srvhook.h"
#include "usage.h"

static int admin_rotation(const char *queue, long long uid, long long seq, const char *text, void *ud)
{
	struct server *s = ud;

	return pool_rotation_set(s->pool, queue, (uid_t)uid, (uint64_t)seq);
}

/* qmgr's queue settings win over the file's until qmgr changes them again. */
static int admin_queue(const char *queue, long long enabled, long long started, const char *reason, void *ud)
{
	struct server *s = ud;
	struct queue_conf *q = (struct queue_conf *)config_queue(s->config, queue);

	if (!q)
		return 0;
	if (enabled >= 0)
		q->enabled = enabled;
	if (started >= 0)
		q->started = started;
	snprintf(q->reason, sizeof(q->reason), "%s", reason ? reason : "");
	return 0;
}

static int admin_node(const char *node, long long drain, long long t_drain, const char *reason, void *ud)
{
	struct server *s = ud;
	struct node *n = pool_node_get(s->pool, node);

	if (!n)
		return -ENOMEM;
	n->drain = drain > 0;
	n->drain_by = drain > 0 ? (drain <= DRAIN_HOOK ? (uint8_t)drain : DRAIN_ADMIN) : DRAIN_NONE;
	free(n->drain_reason);
	n->drain_reason = reason ? strdup(reason) : NULL;
	/* Stored in s; -1: drained before the store kept the time. */
	n->drain_time = drain > 0 && t_drain > 0 ? t_drain * 1000000000LL : 0;
	return 0;
}

static int admin_none(const char *key, long long a, long long b, const char *text, void *ud)
{
	return 0;
}

int server_admin_load(struct server *s, bool all)
{
	struct jobstore_admin_cbs cbs = {
		.rotation = all ? admin_rotation : admin_none,
		.queue = admin_queue,
		.node = all ? admin_node : admin_none,
	};

	return jobstore_admin_load(s->store, &cbs, s);
}

int server_reload(struct server *s, struct error *err)
{
	struct config *c;
	int r;

	r = config_load(s->config->path, &c, err);
	if (r < 0)
		return r;
	if (strcmp(c->socket, s->config->socket) != 0 || strcmp(c->state_dir, s->config->state_dir) != 0 ||
	    strcmp(c->listen, s->config->listen) != 0 || strcmp(c->munge_socket, s->config->munge_socket) != 0 ||
	    c->store != s->config->store || strcmp(c->store_dsn, s->config->store_dsn) != 0 ||
	    strcmp(c->metrics_listen, s->config->metrics_listen) != 0) {
		config_destroy(c);
		return error_set(err, -EINVAL, "%s: socket, listen, metrics_listen, munge_socket, state_dir, store and store_dsn"
				 " take effect only at restart", s->config->path);
	}
	/* The lease's length is written at each renewal: all servers must
	 * agree on it while one holds the lease. */
	if (strcmp(c->advertise, s->config->advertise) != 0 || strcmp(c->server_id, s->config->server_id) != 0 ||
	    c->lease_time != s->config->lease_time || c->lease_renew != s->config->lease_renew) {
		config_destroy(c);
		return error_set(err, -EINVAL, "%s: advertise, server_id, lease_time and lease_renew take effect only at restart",
				 s->config->path);
	}
	/* A hook that may not run: the whole reload is refused, so the hook
	 * in use stays (qpool-hooks(5)). */
	r = srvhooks_config_check(c, err);
	if (r < 0) {
		config_destroy(c);
		return r;
	}
	/* A queue that still holds jobs cannot go away under them. */
	for (size_t i = 0; i < s->config->n_queues; i++) {
		const char *name = s->config->queues[i].name;
		unsigned n = 0;

		if (config_queue(c, name))
			continue;
		for (struct job *j = pool_jobs(s->pool); j; j = j->next)
			if (strcmp(j->queue, name) == 0)
				n++;
		if (n) {
			config_destroy(c);
			return error_set(err, -EBUSY, "%s: queue %s still holds %u job%s; "
					 "disable it and let them finish first", s->config->path, name, n,
					 n == 1 ? "" : "s");
		}
	}
	config_destroy(s->config);
	s->config = c;
	usage_configure(s);
	(void)server_admin_load(s, false);
	/* A [server] name set or changed renames the pool now. */
	if (s->config->server_name[0] && strcmp(s->config->server_name, s->pool_name) != 0 &&
	    !server_standby(s) && server_pool_name_settle(s) < 0)
		log_err("job store: cannot keep the pool's name %s", s->pool_name);
	s->sched_dirty = true;
	return 0;
}
