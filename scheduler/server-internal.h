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
#include "jobid.h"
#include "jobstore.h"
#include "lease.h"
#include "peers.h"
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
	pid_t pid;                /* Unix socket peers; 0 over TCP */
	bool tcp;                 /* came over TCP: identity from its MUNGE credential */
	bool authed;              /* uid and gid known (see conn_identified) */
	bool gated;               /* TCP, no credential yet: counted in server->gate */
	struct gate_addr addr;    /* TCP: its source address, the gate's key */
	struct auth_nonces nonces; /* TCP: the handshake's (its hello, its credential) */
	int64_t accepted;         /* monotonic ns of accept, for the auth timeout */
	char peer[64];            /* "ADDR:PORT" over TCP, "pid N" on the socket */
	struct node *node;        /* set once the peer registered as a node */
	bool closed;
	unsigned refs;
	int64_t partial_since;    /* monotonic ns a message began arriving; 0: none */
	int64_t last_active;      /* monotonic ns of its last whole message (or accept) */
	bool identified;          /* counted in server->peers under uid */
	size_t in_counted;        /* input buffer bytes counted for uid (conn_input_account) */
	bool throttled;           /* its unread replies are over OUT_HIGH: requests wait */
	uint32_t io_events;       /* the epoll mask last set on src (server.c) */
	bool watching;            /* holds a watch (watch.c) */
	const char *cpu_part;     /* its first request's name: what its CPU is charged to (cpuacct.c) */
	int64_t cpu_ns;           /* its CPU not charged yet (before its first request) */
	struct conn *next, *prev;
};

/* A request whose reply waits for the next group commit. */
struct pending {
	struct conn *conn;
	long long req_id;
	int64_t jobid;            /* done: the job; submit: the new id */
	struct job_submit submit; /* submit: strings owned here */
	struct nodesel *sel;      /* submit: which nodes, for the pooled job */
	char *gpu_model;          /* submit: its GPUs' model, for the pooled job; NULL: any */
	json_t *strings;          /* submit: keeps the request alive for submit's strings */
	bool is_done;
	bool requeue;             /* done: the node could not start it for lack of room */
	bool prolog;              /* ... or its node prolog failed */
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
	struct pending *retry;    /* completions whose commit found the disk full */
	bool nodes_noted;         /* a registration waits for nodes_known_flush */
	struct pending *pending;
	struct pending **pending_tail;
	unsigned n_pending;       /* in the list */
	bool sched_dirty;
	sd_event_source *linger_src; /* ends a hold of results (pending_linger) */
	int64_t linger_since;        /* mono ns the results waiting began; 0: none wait */
	unsigned n_lent;          /* jobs suspended by a preemption (suspend.c) */
	int64_t preempt_due;      /* the first blocked job's preempt_until (wall ns): a pass then; 0 none */
	/* Start estimates (estimate.c): the last replay's number and
	 * monotonic start, whether one is due, what they cost. */
	uint64_t est_replay;
	int64_t est_mono;
	bool est_due;
	uint64_t est_ns_last, est_ns_max;
	struct depend_index *deps;   /* depend.c: who waits on whom */
	int64_t *array_due;       /* arrays whose end may have come (array.c) */
	size_t n_array_due, cap_array_due;
	struct {
		uid_t uid;
		char name[64];
	} users[64];              /* uid -> name cache, round robin */
	unsigned users_next;
	struct task_routes *tasks;   /* tasks.c: remote starts in flight */
	struct ties *ties;           /* ties.c: jobs tied to a connection */
	struct srvhooks *hooks;      /* srvhook.c: the server's hooks in flight, their last outcome */
	struct watchers *watchers;   /* watch.c: the event stream's watchers */
	struct lease *lease;         /* lease.c: active or standby */
	struct accounts *accounts;   /* accounts.c: the store's accounts, read at activation */
	struct qos_set *qos;         /* qos.c: the store's QOS and budgets, read at activation */
	struct resvs *resvs;         /* resv.c: the store's reservations, read at activation */
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

/* server-lease.c: the lease's turns on the loop, takeover and step-down. */
int server_lease_start(struct server *s, struct error *err);
void server_lease_stop(struct server *s);
bool server_standby(const struct server *s);
/* Answers req_id with the standby reply (docs/PROTOCOL.md). */
void server_standby_reply(struct conn *c, long long req_id);
/* The pool's name (docs/HA.md, "What names a job id") from the store,
 * written there first when unset or when [server] name differs: into
 * s->pool_name. 0 or -errno (the name meant is used in memory all the
 * same; -ESTALE: the lease was lost). */
int server_pool_name_settle(struct server *s);
/* Leaves the loop for a fresh standby; logs why, with the epoch. */
void server_step_down(struct server *s, const char *why);
/* role, id, active, epoch, standbys: for qstat -B and qmgr. */
json_t *server_ha_json(struct server *s);
/* After a write the fence refused: the lease as it is now, for the
 * standby replies that follow. */
void server_lease_refresh(struct server *s);
/* server.c: what a new active reads from the store (jobs, admin settings,
 * known nodes). 0 or -errno. */
int server_state_load(struct server *s);

/* server.c */
void conn_send(struct conn *c, json_t *msg);   /* steals msg */
/* Whole frames encoded once for several connections (watch.c). */
void conn_send_frames(struct conn *c, const void *frames, size_t len);
void conn_reply_ok(struct conn *c, long long req_id, json_t *reply);  /* steals reply (may be NULL) */
/* conn_reply_ok for a page of items in reply's array `key`: when the reply
 * would pass the wire's cap, items are dropped from the end (halving) and
 * "more" is set true, so the client asks again for the rest. */
void conn_reply_page(struct conn *c, long long req_id, json_t *reply, const char *key);
void conn_reply_err(struct conn *c, long long req_id, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void conn_ref(struct conn *c);
void conn_unref(struct conn *c);
void server_pending_add(struct server *s, struct pending *p);
/* The connection's peer is uid (known from SO_PEERCRED at accept, or from
 * a credential later): counts it in its uid's fair share. -EUSERS when the
 * uid holds max_conns_per_user already, -EMFILE when only the root reserve
 * is left and uid is not 0; the caller then refuses the connection. */
int conn_identified(struct conn *c, uid_t uid);
void conn_close(struct conn *c);
/* conns.c: the fair shares. conn_forget uncounts a connection; conn_refuse
 * tells a peer refused by conn_identified why, in one error frame; conn_idle
 * says whether c has been idle past idle_timeout at now; conns_log_flush
 * writes the summaries of suppressed lines; conns_root_reserve is the part
 * of max connections kept for uid 0. */
void conn_forget(struct conn *c);
void conn_refuse(struct conn *c, int r);
/* A TCP peer before its credential takes a place in the gate (per address
 * and in all, conns_unauth_max), never a user's slot: 0, or a negative
 * errno after telling the peer why (EBUSY: try again) in one frame and one
 * rate-limited line; the caller then frees c. conn_gate_leave gives the
 * place back (at its credential, or when it goes). */
int conn_gate_enter(struct conn *c, const struct sockaddr_storage *sa);
void conn_gate_leave(struct conn *c);
/* The gate's total budget: max_unauth_conns, at most a quarter of max_conns. */
unsigned conns_unauth_max(const struct server *s);
bool conn_idle(const struct conn *c, int64_t now);
void conns_log_flush(struct server *s, int64_t now);
unsigned conns_root_reserve(unsigned max_conns);
/* Counts c's input buffer for its uid; -ENOBUFS when the uid's
 * connections hold more than CONNS_INPUT_BUDGET in input buffers and c's
 * is a big one (root is not limited): the caller closes c. */
int conn_input_account(struct conn *c);
/* The loop's cached monotonic time, ns (cheap: no clock read per message). */
int64_t conn_now(struct server *s);
/* Logs a warning about a peer, at most PEERS_LOG_BURST per interval per uid
 * (the rest are counted and summed up in one line). */
void conn_log_warn(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *server_user_name(struct server *s, uid_t uid);
/* Applies qmgr's stored settings: queue ones always, and with all the IQS
 * rotation and node drains too (at start). */
int server_admin_load(struct server *s, bool all);

/* space.c: room in the state directory. server_space_check (each second)
 * sets or clears state_full from statvfs and, when room returns, retries
 * the completions that waited and runs a pass; server_state_full re-checks
 * a full one; server_space_exhausted marks it full after a commit failed
 * with ENOSPC; server_space_refuse writes qsub's one line, returns -ENOSPC. */
void server_space_check(struct server *s);
bool server_state_full(struct server *s);
void server_space_exhausted(struct server *s);

/* server.c: a job back in the queue after its node prolog failed for the
 * [node] prolog_failures_max-th time (j->prolog_hold) is held, with why. */
void server_prolog_hold(struct server *s, struct job *j);
int server_space_refuse(struct server *s, char *buf, size_t len);

/* door.c: a request of an authenticated peer, to its handler (ops.h) by
 * one table of who may ask what; door_table_sorted for the unit test. */
void door_request(struct conn *c, const char *op, long long req_id, json_t *msg);
bool door_table_sorted(void);
/* door.c: request_run is the door past the submit filter (its checks
 * done): the op's handler. filter.c: whether op goes through [server]
 * submit_filter first, and running it: the request goes on to
 * request_run, or is answered with the filter's refusal (qpool-hooks(5)). */
void request_run(struct conn *c, const char *op, long long req_id, json_t *msg);
bool filter_wanted(const struct server *s, const char *op);
void filter_request(struct conn *c, const char *op, long long req_id, json_t *msg);
/* requests.c: the job of a request's "jobid", checked for ownership
 * (owner or root); replies itself and returns NULL otherwise. */
struct job *job_for_change(struct conn *c, long long req_id, json_t *msg);
/* requests.c: the caps on waiting jobs (max_queued, max_queued_per_user)
 * for n more waiting jobs of uid in queue q, the submissions of this
 * iteration counted; queue_only: q's caps only (qmove: the job is in the
 * pool's counts already). 0, or -EDQUOT with one line in errbuf. */
int queued_limit_check(struct server *s, uid_t uid, const char *owner, const struct queue_conf *q,
		       char *errbuf, size_t errlen, uint64_t n, bool queue_only);
/* jobctl.c: qdel -W force of a running job. */
void jobctl_delete_force(struct conn *c, long long req_id, struct job *j);
/* tasks.c: task.* from a node, routed to another node of the job
 * (docs/PARALLEL.md, "Remote start"); task_routes_node_gone ends the tasks
 * in flight to or from a node whose link went; task_routes_destroy frees. */
void task_routes_node_gone(struct server *s, const char *name);
void task_routes_destroy(struct server *s);
/* nodes.c: drains a node (by who, with reason) or resumes it (DRAIN_NONE):
 * stored, then in the pool. 0 or -errno (nothing changed). */
int node_drain_set(struct server *s, struct node *n, enum node_drain_by by, const char *reason);
/* The same, asked by uid (an admin's drain or resume: its event's uid). */
int node_drain_set_by(struct server *s, struct node *n, enum node_drain_by by, const char *reason, int64_t uid);
/* A node's connection went away. */
void node_link_lost(struct server *s, struct conn *c);
/* Sends job.launch for j to its node; the job row says what to run. */
int node_launch(struct server *s, struct job *j, struct node *n);
/* Sends job.signal; false when the node is not connected. */
bool node_signal(struct server *s, struct job *j, int sig);
/* Heartbeat watch: nodes silent past node_timeout go down. */
void nodes_check_timeouts(struct server *s);

/* A pooled job has ended in state (its final record is written or being
 * written in the open transaction): counts it in its array, forgets its
 * dependencies, removes it from the pool and marks what waited on it. */
void server_job_finished(struct server *s, struct job *j, enum job_state state);
/* srvjob.c: [server] server_prolog and server_epilog around a job
 * (qpool-hooks(5)). srvjob_launch sends a placed job to its nodes, after
 * the server prolog when one is set (a failure requeues the job, or holds
 * it after server_prolog_retries); srvjob_ended starts the server epilog
 * for a job whose end is committed. Without the keys each is one check. */
void srvjob_launch(struct server *s, struct job *j, struct node *n);
void srvjob_ended(struct server *s, struct job *j, enum job_state state);
/* A job whose server prolog runs is being deleted or rerun: the prolog
 * is killed, and its end (or requeue) follows from the loop. */
void srvjob_stop(struct server *s, struct job *j);
/* requests.c: what qdel does to j: a queued or held job is cancelled (and
 * freed), a running one is asked to stop (exiting); why ends the reason
 * ("by alice"), which a running job's record keeps. The job's new state,
 * or -errno from the job store (nothing changed). */
int server_job_cancel(struct server *s, struct job *j, const char *why);
/* jobctl.c: a running job back to wait when its node reports it gone
 * (qrerun, preemption): SIGTERM now, the store's state EXITING with why. */
int server_job_requeue(struct server *s, struct job *j, const char *why);

/* ties.c: a job tied to a connection (the `tie` request, docs/PROTOCOL.md)
 * is cancelled once no connection has held it for a grace period, checked
 * by ties_check from the 1 s timer. ties_add: 0, -ENOSPC past the caps,
 * -ENOMEM. */
int ties_add(struct server *s, struct conn *c, int64_t jobid);
void ties_conn_closed(struct server *s, const struct conn *c);
void ties_check(struct server *s);
void ties_destroy(struct server *s);

/* qpoold's CPU by part (cpuacct.c): cpu_thread_ns is this thread's CPU
 * clock; the loop's iteration is charged to its owner, set by the
 * handler sd-event dispatched: a client connection (cpu_owner_conn, its
 * part its first request's name) or a part (cpu_owner_part, static
 * text); cpu_charge adds ns timed inside another's iteration to part;
 * cpu_parts_json is {part: ns} for the `stats` op. */
int64_t cpu_thread_ns(void);
void cpu_owner_conn(struct conn *c);
void cpu_owner_part(const char *part);
void cpu_charge(const char *part, int64_t ns);
json_t *cpu_parts_json(void);

/* watch.c: the event stream (docs/EVENTS.md). op_watch (ops.h) answers the
 * `watch` op and keeps the connection as a watcher; watch_flush sends each
 * watcher what was committed since (after each loop iteration);
 * watch_conn_closed forgets a connection's watch; watch_prune deletes
 * events past event_retention, a batch at a time (from the 1 s timer). */
void watch_flush(struct server *s);
void watch_conn_closed(struct server *s, const struct conn *c);
void watch_prune(struct server *s);
unsigned watch_count(const struct server *s);
void watch_destroy(struct server *s);
/* A node's change that is not a store write of its own (its link closed
 * or back, docs/EVENTS.md): noted, and written as events in one
 * transaction once the loop has nothing more pressing (an idle-priority
 * turn), so a thousand links closing at once are one commit, not a
 * thousand. watch_notes_flush writes what is noted now. */
void watch_note_node(struct server *s, const char *node, const char *state, const char *reason);
void watch_notes_flush(struct server *s);

/* array.c: job arrays (ID[], ID[N]). */
int array_load(struct server *s, struct job *j);
void array_loaded(struct server *s);
int array_dispatch_record(struct server *s, struct job *sub, int64_t now);
void array_dispatch_done(struct server *s, struct job *sub, int64_t now);
void array_dispatch_undo(struct server *s, struct job *sub);
/* Ends the array when nothing of it waits or runs: its own commit. */
void array_check_done(struct server *s, struct job *a);
/* delete/hold/release of ID[], ID[N], ID[A-B] or an array's plain id:
 * true when it was one (and has been answered). */
bool array_request(struct conn *c, const char *op, long long req_id, json_t *msg);
int array_subjob_row(struct server *s, int64_t id, int64_t index, json_t **ret);
/* qstat -t: to a page of rows (jobs, from the store for f, "more" in
 * *more), the arrays' subjobs that have no row yet, made from their
 * array's row with the ids they will have, so pages stay in id order. At
 * most page of them: a full page sets *more, and the client asks again
 * after the last id. 0 or -ENOMEM. */
int array_stat_subjobs(struct server *s, const struct jobstore_filter *f, size_t page, json_t *jobs, bool *more);
json_t *array_waiting_row(const json_t *array_row, const struct job *a, int64_t index);
/* The array's row as its subjob at pos (index) in state. */
json_t *array_row_as_subjob(const json_t *array_row, int64_t id, int64_t pos, int64_t index, enum job_state state);

/* depend.c: -W depend. */
int depend_submit_check(struct server *s, uid_t uid, const char *text, bool lift, char *ret_text, size_t ret_len,
			char *err, size_t len);
/* In the submit's transaction: before* items put after* ones on their jobs. */
int depend_before_record(struct server *s, int64_t id, const char *text);
void depend_before_apply(struct server *s, int64_t id, const char *text);
/* depend_track holds j for its dependencies (j->depend) and indexes its
 * after* items by the jobs they name, to be decided at the next recheck;
 * again after j->depend grew. depend_forget takes it out (released, ended).
 * depend_loaded tracks a job the store held for them, at start. */
void depend_track(struct server *s, struct job *j);
void depend_forget(struct server *s, struct job *j);
void depend_loaded(struct server *s, struct job *j);
/* Job id started or ended (or its array's first subjob started): its
 * waiters, and only they, are decided at the next recheck. */
void depend_job_changed(struct server *s, int64_t id);
/* Whether any job waits on ID (server.c: its end is not held back). */
bool depend_has_waiters(struct server *s, int64_t id);
/* Decides the waiters marked since the last one: releases those whose
 * dependencies are met, marks those that never can be; its own
 * transaction. A job that ended is read from the store once. */
void depend_recheck(struct server *s);
const char *depend_wait_reason(void);
/* What the dependency bookkeeping has cost (tests, the stats op): waiting
 * jobs decided since the start, and jobs waiting now (tracked). */
struct depend_stats {
	uint64_t decided;
	uint64_t waiting;
};
void depend_stats(const struct server *s, struct depend_stats *ret);
void depend_destroy(struct server *s);
#define DEPEND_WAIT_REASON_USER "waiting on dependencies; then held by its owner (qsub -h)"
bool depend_is_reason(const char *reason);

#endif
