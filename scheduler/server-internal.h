/* SPDX-License-Identifier: MIT */
/* What the server's files share: the context, connections, pending writes. */
#ifndef QPOOL_SERVER_INTERNAL_H
#define QPOOL_SERVER_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "auth.h"
#include "config.h"
#include "gate.h"
#include "hctx.h"
#include "jobid.h"
#include "jobstore.h"
#include "lease.h"
#include "peers.h"
#include "pool.h"
#include "server.h"
#include "wire.h"

/* The parts' headers, for the loop's files. */
#include "array.h"
#include "conn.h"
#include "deps.h"
#include "door.h"
#include "job-end.h"
#include "loop.h"
#include "node-send.h"
#include "nodes.h"
#include "ops.h"
#include "server-lease.h"
#include "space.h"
#include "srvjob.h"
#include "tasks.h"
#include "ties.h"
#include "users.h"
#include "watch.h"

/* What a new active reads from the store (server-lease.c's takeover:
 * server_state_load); 0 or -errno. */
typedef int server_state_load_f(struct server *s);

/* The server whose handlers' context h is (its first member). */
static inline struct server *server_of(struct hctx *h)
{
	return (struct server *)h;
}

struct server {
	/* What handlers see (hctx.h), first: its fields read here as the
	 * server's own (s->pool), and &s->h is the handlers' context. */
	union {
		struct hctx h;
		struct {
			HCTX_FIELDS
		};
	};
	conn_message_f *conn_message_f;
	conn_closed_f *conn_closed_f;
	job_ended_f *job_ended_f;
	job_signal_f *job_signal_f;
	server_state_load_f *state_load_f;
	int listen_fd;
	sd_event_source *listen_src;
	int tcp_fd;                  /* [server] listen, or -1 */
	sd_event_source *tcp_src;
	sd_event_source *post_src;
	sd_event_source *more_src;   /* defer: another pass after a full one */
	sd_event_source *timer_src;
	struct conn *conns;
	unsigned n_conns;
	unsigned max_conns;
	unsigned root_reserve;    /* of max_conns, slots only uid 0 may take */
	struct peers *peers;      /* per uid: connections, log rate */
	struct gate *gate;        /* TCP peers awaiting their credential */
	bool state_full;          /* state_dir below state_min_free: no submit, no dispatch */
	bool commit_failed;       /* the last dispatch commit failed: launches wait for
	                           * their commit (pass.c) */
	struct pending *retry;    /* completions whose commit found the disk full */
	sd_event_source *linger_src; /* ends a hold of results (pending_linger) */
	int64_t linger_since;        /* mono ns the results waiting began; 0: none wait */
	int64_t preempt_due;      /* the first blocked job's preempt_until (wall ns): a pass then; 0 none */
	/* Start estimates (estimate.c): the last replay's number and
	 * monotonic start, whether one is due, what they cost. */
	uint64_t est_replay;
	int64_t est_mono;
	bool est_due;
	uint64_t est_ns_last, est_ns_max;
	int64_t *array_due;       /* arrays whose end may have come (array.c) */
	size_t n_array_due, cap_array_due;
	struct {
		uid_t uid;
		char name[64];
	} users[64];              /* uid -> name cache, round robin */
	unsigned users_next;
	sd_event_source *lease_src;  /* server-lease.c: its turns */
	bool stepping_down;          /* lost it: the loop ends, main starts a standby */
	bool stopping;               /* server_destroy: links closing are not nodes going down */
	char pool_name[JOBID_SERVER_MAX];   /* the suffix of job ids, the store's (server-lease.c) */
	struct server_metrics *metrics;     /* metrics.c: counters and the HTTP endpoint */
};

/* metrics.c: the counters the metrics endpoint serves (docs/METRICS.md),
 * and the endpoint itself when [server] metrics_listen is set. start: 0,
 * or -errno with err's one line (the port taken: -EADDRINUSE). */
int server_metrics_start(struct server *s, struct error *err);
void server_metrics_stop(struct server *s);
void server_metrics_submitted(struct server *s, const char *queue);
void server_metrics_ended(struct server *s, const char *queue, enum job_state state);

/* server.c: what a new active reads from the store (jobs, admin settings,
 * known nodes). 0 or -errno. */
int server_state_load(struct server *s);

/* settings.c (with server_reload): applies qmgr's stored settings: queue ones always, and with all the IQS
 * rotation and node drains too (at start). */
int server_admin_load(struct server *s, bool all);

#endif
