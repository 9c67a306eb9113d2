/* SPDX-License-Identifier: MIT */
/* What the server's files share: the context, connections, pending writes. */
#ifndef QPOOL_SERVER_INTERNAL_H
#define QPOOL_SERVER_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "jobstore.h"
#include "pool.h"
#include "server.h"
#include "wire.h"

struct conn {
	struct server *server;
	int fd;
	sd_event_source *src;
	struct wirebuf in;
	struct wirebuf out;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	struct node *node;        /* set once the peer registered as a node */
	bool closed;
	unsigned refs;
	int64_t partial_since;    /* monotonic ns a message began arriving; 0: none */
	struct conn *next;
};

/* A request whose reply waits for the next group commit. */
struct pending {
	struct conn *conn;
	long long req_id;
	int64_t jobid;            /* done: the job; submit: the new id */
	struct job_submit submit; /* submit: strings owned here */
	json_t *strings;          /* submit: keeps the request alive for submit's strings */
	bool is_done;
	struct job_result result; /* done */
	struct pending *next;
};

struct server {
	sd_event *event;
	struct config *config;
	struct jobstore *store;
	struct pool *pool;
	int listen_fd;
	sd_event_source *listen_src;
	sd_event_source *post_src;
	sd_event_source *more_src;   /* defer: another pass after a full one */
	sd_event_source *timer_src;
	struct conn *conns;
	unsigned n_conns;
	unsigned max_conns;
	struct pending *pending;
	struct pending **pending_tail;
	bool sched_dirty;
	struct {
		uid_t uid;
		char name[64];
	} users[64];              /* uid -> name cache, round robin */
	unsigned users_next;
};

/* server.c */
void conn_send(struct conn *c, json_t *msg);   /* steals msg */
void conn_reply_ok(struct conn *c, long long req_id, json_t *reply);  /* steals reply (may be NULL) */
void conn_reply_err(struct conn *c, long long req_id, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void conn_ref(struct conn *c);
void conn_unref(struct conn *c);
void server_pending_add(struct server *s, struct pending *p);
const char *server_user_name(struct server *s, uid_t uid);
/* Applies qmgr's stored settings: queue ones always, and with all the IQS
 * rotation and node drains too (at start). */
int server_admin_load(struct server *s, bool all);

/* requests.c: the client ops; nodes.c: the node ops. Each returns after
 * replying, or after queueing a pending reply. */
void request_handle(struct conn *c, const char *op, long long req_id, json_t *msg);
/* requests.c: the job of a request's "jobid", checked for ownership
 * (owner or root); replies itself and returns NULL otherwise. */
struct job *job_for_change(struct conn *c, long long req_id, json_t *msg);
/* jobctl.c: alter, move, swap, signal, rerun (qalter, qmove, qorder, qsig,
 * qrerun); and qdel -W force of a running job. */
void jobctl_request_handle(struct conn *c, const char *op, long long req_id, json_t *msg);
void jobctl_delete_force(struct conn *c, long long req_id, struct job *j);
/* admin.c: qmgr's ops (root only) and the dispatch order listing. */
void admin_request_handle(struct conn *c, const char *op, long long req_id, json_t *msg);
void node_request_handle(struct conn *c, const char *op, long long req_id, json_t *msg);
/* A node's connection went away. */
void node_link_lost(struct server *s, struct conn *c);
/* Sends job.launch for j to its node; the job row says what to run. */
int node_launch(struct server *s, struct job *j, struct node *n);
/* Sends job.signal; false when the node is not connected. */
bool node_signal(struct server *s, struct job *j, int sig);
/* Heartbeat watch: nodes silent past node_timeout go down. */
void nodes_check_timeouts(struct server *s);

#endif
