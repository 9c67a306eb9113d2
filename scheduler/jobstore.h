/* SPDX-License-Identifier: MIT */
/* The job store, the single source of truth for jobs: one interface, two
 * backends behind it (SQLite in jobstore-sqlite.c, the only file that
 * includes sqlite3.h; PostgreSQL in jobstore-pg.c, the only one that
 * includes libpq-fe.h). */
#ifndef QPOOL_JOBSTORE_H
#define QPOOL_JOBSTORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "job.h"

struct jobstore;

enum jobstore_kind {
	JOBSTORE_SQLITE,        /* where: a file path; ":memory:" for tests */
	JOBSTORE_POSTGRESQL,    /* where: a libpq connection string */
};

/* Opens (creating, migrating) the store of kind at where. Returns -errno
 * with err set (one line naming what and where); a store newer than this
 * binary is refused with -EPROTO, and nothing is written. */
int jobstore_open(enum jobstore_kind kind, const char *where, struct jobstore **ret, struct error *err);
void jobstore_close(struct jobstore *js);

/* Schema version this binary writes. */
int jobstore_schema_version(void);

/* Group commit: callers wrap many writes in one transaction. On a handle
 * that holds the lease (jobstore_lease_acquire), begin first renews it at
 * its epoch in the same transaction: -ESTALE when another server took it
 * (nothing written; jobstore_lease_lost is then true for good). */
int jobstore_begin(struct jobstore *js);
/* Whether a transaction is open (jobstore_begin without its end). */
bool jobstore_in_tx(const struct jobstore *js);
int jobstore_commit(struct jobstore *js);
void jobstore_rollback(struct jobstore *js);

/* Copies the write-ahead log into the database once it holds enough
 * frames; a no-op otherwise. Never automatic: the caller runs it after
 * the replies of a commit are sent, so no client waits for it. Returns 0
 * or -errno (the log is then kept and the copy tried again later). */
int jobstore_checkpoint(struct jobstore *js);

struct job_submit {
	const char *name;
	const char *queue;
	const char *owner;
	uid_t uid;
	gid_t gid;
	uint32_t ncpus;
	uint32_t ngpus;            /* GPUs in all (stored in attrs_json, Resource_List.ngpus) */
	uint64_t mem;
	uint64_t walltime;
	const char *workdir;
	const char *stdout_path;   /* "" = default <workdir>/<name>.o<id> */
	const char *stderr_path;   /* "" = default <workdir>/<name>.e<id> */
	bool join;
	bool rerunnable;
	bool hold;
	const char *env_json;      /* JSON object text */
	const char *script;
	int64_t t_submit;
	int umask;                 /* the submitter's; -1: not given (022 at launch) */
	const char *attrs_json;    /* PBS attributes, JSON object text; NULL: none */
	int priority;              /* -p, 0 when not given */
	int64_t start_after;       /* -a, wall seconds; 0: none */
	const char *chunks_json;   /* a request across nodes: JSON array text; NULL: one node */
	const char *place;         /* "scatter", "free:excl", ...; NULL: none given */
	const char *array_spec;    /* -J/-t, canonical; NULL: not an array */
	int64_t array_count;       /* its subjobs: ids reserved after the array's */
	const char *depend;        /* -W depend, canonical; NULL: none */
	const char *reason;        /* why it is held (dependencies), or NULL */
};

/* Inserts a job (queued, or held) with its script. Returns 0 and the id. */
int jobstore_job_insert(struct jobstore *js, const struct job_submit *s, int64_t *ret_id);

int jobstore_job_set_state(struct jobstore *js, int64_t id, enum job_state state,
			   const char *reason);

/* Running on node with cpus (kernel list) since t_dispatch, its memory
 * counted on the NUMA nodes mems (kernel list; NULL or "": none kept,
 * counted over all the node's at a restart). */
int jobstore_job_dispatch(struct jobstore *js, int64_t id, const char *node,
			  const char *cpus, const char *mems, int64_t t_dispatch);

/* The allocation of a job across nodes (j->alloc, job order), one
 * job_alloc row per node; part of the dispatch transaction. */
int jobstore_alloc_insert(struct jobstore *js, const struct job *j);

/* Node idx's stamps and usage from its job.done, t_done when it came,
 * and its result object's text (kept so a restart knows it). */
int jobstore_alloc_result(struct jobstore *js, int64_t id, unsigned idx, const struct job_result *res,
			  int64_t t_done, const char *result_json);

/* Back to queued: node, CPUs, dispatch stamp and allocation rows cleared;
 * reason kept; attrs.run_count (the requeues) one more. */
int jobstore_job_requeue(struct jobstore *js, int64_t id, const char *reason);
/* The same, the run's stamps, CPU time and exit from its result: the
 * run ends as an entry of attrs.attempts either way. */
int jobstore_job_requeue_result(struct jobstore *js, int64_t id, const char *reason,
				const struct job_result *res);

/* qalter, qmove: a queued or held job's name, queue, ncpus, mem,
 * walltime, join and rerunnable become a's, and stdout_path and
 * stderr_path unless NULL (the rest of a is not read). -ENOENT when the job
 * is not queued or held. */
int jobstore_job_alter(struct jobstore *js, int64_t id, const struct job_submit *a);

/* qalter -a, scontrol update StartTime=: the job starts no earlier than
 * t (wall seconds; 0: no such time), recorded as attrs.Execution_Time.
 * A running job keeps it for its start after a requeue. -ENOENT when
 * the job has ended or is not there. */
int jobstore_job_begin_set(struct jobstore *js, int64_t id, int64_t t);

/* A start estimate (docs/ESTIMATES.md), wall seconds, recorded in the
 * job's attrs: the first it got (first: estimated.first_start_time) or
 * the one current when it started (estimated.start_time). No row: 0. */
int jobstore_job_estimate_set(struct jobstore *js, int64_t id, bool first, int64_t t);

/* Final record: state, status, usage and every stamp the node took. */
int jobstore_job_finish(struct jobstore *js, int64_t id, const struct job_result *res,
			int64_t t_done);

/* Calls cb for every unfinished job (queued, held, running, exiting) in
 * submit order; cb takes ownership of the job. */
int jobstore_load_active(struct jobstore *js, int (*cb)(struct job *j, void *userdata),
			 void *userdata);

struct jobstore_filter {
	int64_t jobid;          /* 0: any */
	const char *owner;      /* NULL: any */
	bool finished;          /* include finished jobs */
	int64_t from;           /* 0, or only jobs not done before (wall ns) */
	int64_t to;             /* 0, or only jobs submitted by (wall ns) */
	int64_t after;          /* only ids above this (paging) */
	unsigned limit;         /* at most this many; 0: all */
	bool subjobs;           /* include array subjobs (always with a jobid) */
	bool no_arrays;         /* leave out arrays' own rows (not with a jobid) */
	bool payload;           /* include env and script ... */
	uid_t payload_uid;      /* ... of this uid's jobs only, (uid_t)-1: none, 0: all */
};

/* Job objects (docs/PROTOCOL.md) matching f, in id order. */
int jobstore_query(struct jobstore *js, const struct jobstore_filter *f, json_t **ret_array);

/* The job part of job.launch (docs/PROTOCOL.md): jobid, name, queue,
 * user, uid, gid, workdir, stdout, stderr, join, env, ncpus, mem,
 * walltime, script, umask (022 for a job stored without one) and times
 * (submit, dispatch). -ENOENT. */
int jobstore_job_launch(struct jobstore *js, int64_t id, json_t **ret);

/* Job rows read so far by jobstore_query and jobstore_job_get: what a
 * request or an event cost the store (tests and bench count it). */
uint64_t jobstore_rows_read(const struct jobstore *js);

struct histogram;
/* The time each successful jobstore_commit took (the metrics endpoint). */
const struct histogram *jobstore_commit_latency(const struct jobstore *js);

/* The one job object, with env and script when payload; -ENOENT. */
int jobstore_job_get(struct jobstore *js, int64_t id, bool payload, json_t **ret);

/* Job arrays. A subjob's row, copied from its array's (array_id) with
 * id, index, state and reason; 0 or -ENOENT (no such array). */
int jobstore_subjob_insert(struct jobstore *js, int64_t array_id, int64_t id, int64_t index,
			   enum job_state state, const char *reason);
/* cb for every subjob row of the array (any state). */
int jobstore_subjobs_load(struct jobstore *js, int64_t array_id,
			  int (*cb)(int64_t index, enum job_state state, int exit_status, void *ud), void *ud);
/* The array's final record: state, status, reason, and its subjobs' CPU
 * time summed, peak memory, first dispatch and exec, last exit and release. */
int jobstore_array_finish(struct jobstore *js, int64_t id, enum job_state state, int exit_status,
			  const char *reason, int64_t t_done);
/* -W depend (canonical text; NULL: none), e.g. after a before* on another job. */
int jobstore_job_depend_set(struct jobstore *js, int64_t id, const char *depend);

/* The IQS rotation stamp of (queue, uid); part of the dispatch transaction. */
int jobstore_rotation_set(struct jobstore *js, const char *queue, uid_t uid, uint64_t seq);

/* qmgr's settings: enabled/started -1 leaves that one as it was. */
int jobstore_queue_admin_set(struct jobstore *js, const char *queue, int enabled, int started,
			     const char *reason);
/* drain: 0 not drained, else who drained it (enum node_drain_by), kept
 * in the same column: a store of before this knew only 1, the admin. */
int jobstore_node_admin_set(struct jobstore *js, const char *node, int drain, const char *reason);
/* The same, by_uid who asked (its event's uid; -1: qpoold itself, a
 * health check's or a wrapper's drain); *ret_t_drain (may be NULL) the
 * wall seconds the store kept as the drain's time (0: resumed). */
int jobstore_node_admin_set_by(struct jobstore *js, const char *node, int drain, const char *reason, int64_t by_uid,
			       int64_t *ret_t_drain);

/* Loads what jobstore_*_set stored, one callback per row:
 * rotation(queue, uid, seq, NULL), queue(queue, enabled, started, reason)
 * (-1: never set), node(node, drain, -1, reason). */
struct jobstore_admin_cbs {
	int (*rotation)(const char *key, long long a, long long b, const char *text, void *ud);
	int (*queue)(const char *key, long long a, long long b, const char *text, void *ud);
	int (*node)(const char *key, long long a, long long b, const char *text, void *ud);
};
int jobstore_admin_load(struct jobstore *js, const struct jobstore_admin_cbs *cbs, void *ud);

/* A node as qpoold last saw it register: what the fit checks need to
 * count it while it is away (after a restart or a takeover). */
struct jobstore_node {
	const char *name;
	const char *cpus;          /* kernel list, e.g. "0-7,16-23" */
	uint32_t ncpus;            /* CPUs in cpus */
	const char *mems;          /* NUMA nodes, kernel list */
	uint64_t mem;              /* bytes of memory; 0: not reported */
	const char *topology;      /* JSON object text (packages, numa, cores, pus, mem); NULL: none */
	bool rt;                   /* it allows realtime jobs */
	const char *cgroup;        /* "v1", "v2", "none" */
	const char *address;       /* where it registered from: an IP address, or "local" */
	int64_t t_register;        /* wall ns of the registration that wrote the row */
	bool up_told;              /* this registration's "up" event is already
	                            * in the stream: the row is written without one */
};

/* Writes node n's row (inserted, or replaced whole by name). 0 or -errno. */
int jobstore_node_put(struct jobstore *js, const struct jobstore_node *n);
/* Forgets node name for good: its row and its qmgr settings. 0, or
 * -ENOENT when the store had neither. */
int jobstore_node_delete(struct jobstore *js, const char *name);
/* cb for every stored node, in name order; the strings live for the
 * call only. A negative return of cb stops the load and is returned. */
int jobstore_nodes_load(struct jobstore *js, int (*cb)(const struct jobstore_node *n, void *ud), void *ud);

/* "sqlite PATH" or "postgresql HOST:PORT/DB", for messages. */
void jobstore_describe(struct jobstore *js, char *buf, size_t size);

/* qpoold --migrate: every row of from (jobs with their payloads and
 * allocations, finished ones with their accounting, the IQS rotation, the
 * qmgr settings, the known nodes) into to, in one transaction of to, and to's ids continue
 * past from's. to must be empty: -ENOTEMPTY, nothing written; to a backend
 * that cannot be a target, -EOPNOTSUPP. Returns 0 and the jobs copied. */
int jobstore_copy(struct jobstore *from, struct jobstore *to, int64_t *ret_jobs, struct error *err);

/* The event stream (docs/EVENTS.md). Every change of a job's state that
 * goes through this door (insert, set_state, dispatch, requeue, finish,
 * subjob_insert, array_finish) and of a node's (node_put: "up",
 * node_admin_set: "drained"/"resumed", node_delete: "deleted") becomes an
 * event row, written just before the commit of the transaction that holds
 * the change; a write made outside jobstore_begin is wrapped in a
 * transaction of its own. A job event carries the job row as committed. */
struct jobstore_event {
	int64_t seq;            /* 1, 2, ... in commit order, pool-wide */
	int64_t t;              /* wall ns of the change */
	int64_t epoch;          /* the lease's epoch of the writer (0: none) */
	int64_t jobid;          /* 0: a node's event */
	int64_t uid;            /* the job's owner; -1: a node's event */
	const char *node;       /* the job's node, or the node; NULL: none */
	const char *state;      /* job_state_name's words, or a node's */
	int64_t exit_status;    /* -1: none */
	int64_t exit_signal;    /* 0: none */
	const char *reason;     /* NULL: none */
};

/* A node's change of state, as an event of the open transaction (node
 * states the store keeps no row for: "down", "offline"). Outside one, its
 * own. 0 or -errno. */
int jobstore_event_node(struct jobstore *js, const char *node, const char *state, const char *reason);
/* cb for each event after seq `after`, in order, at most limit; the
 * strings live for the call only. 0 or -errno (or cb's negative return). */
int jobstore_events_read(struct jobstore *js, int64_t after, unsigned limit,
			 int (*cb)(const struct jobstore_event *e, void *ud), void *ud);
/* The first and last seq kept (0, 0: none yet). */
int jobstore_events_bounds(struct jobstore *js, int64_t *ret_first, int64_t *ret_last);
/* Deletes at most limit events older than before (wall ns), oldest
 * first, the last event always kept; its own transaction. Returns the
 * number deleted or -errno. */
int jobstore_events_prune(struct jobstore *js, int64_t before, unsigned limit);
/* Writes the events noted so far in the open transaction now, each job's
 * as its row stands now, so that a later change of the same job in the
 * same transaction is an event of its own (a submit's `queued` before the
 * dispatch that joins its commit). They are committed or rolled back with
 * the transaction. 0, -EINVAL outside a transaction, or -errno. */
int jobstore_events_write(struct jobstore *js);
/* Events this handle has committed since it was opened: a watcher's
 * cue that there is something new to read. */
uint64_t jobstore_events_committed(const struct jobstore *js);

/* Leadership (docs/HA.md). Times are ms on the store's clock. */
#define JOBSTORE_HOLDER_MAX 256
struct jobstore_lease {
	char holder[JOBSTORE_HOLDER_MAX];    /* "" when never held */
	char address[JOBSTORE_HOLDER_MAX];   /* the holder's advertised HOST:PORT */
	int64_t epoch;                       /* +1 at each acquisition */
	int64_t expires;
	int64_t now;                         /* the store's clock at the read */
};

/* Takes the lease for lease_ms when it is free, expired, or holder's own
 * (a restart of the same server): its epoch goes up by one and is returned;
 * from then on this handle's writes are fenced at it (jobstore_begin).
 * -EBUSY: another holder's lease runs; -EINVAL: holder empty or too long. */
int jobstore_lease_acquire(struct jobstore *js, const char *holder, const char *address, int64_t lease_ms,
			   int64_t *ret_epoch);
/* Extends the lease held by this handle by its lease_ms from now.
 * -ESTALE: it is no longer this handle's (lost for good); -EBUSY: the
 * store was busy (try again; the lease may still run out). */
int jobstore_lease_renew(struct jobstore *js);
/* The same, with this holder's stamp in the servers table (role
 * "active", address ADDRESS) in the renewal's own transaction: one
 * commit, not two. A stamp that cannot be written costs the stamp only:
 * the renewal is then made alone. Returns what jobstore_lease_renew
 * does. Not a job store commit in the metrics, as the renewal is not. */
int jobstore_lease_renew_seen(struct jobstore *js, const char *address);
/* Ends the lease now if this handle still holds it, so a standby takes
 * over at its next poll; this handle then writes nothing more. */
int jobstore_lease_release(struct jobstore *js);
/* True once this handle held the lease and a renewal or a begin found it
 * taken: every write of this handle is refused from then on. */
bool jobstore_lease_lost(const struct jobstore *js);
int jobstore_lease_read(struct jobstore *js, struct jobstore_lease *ret);

/* The pool's name, the suffix of every job id its servers print
 * (docs/HA.md, "What names a job id"): into buf; -ENOENT when none was
 * set yet. Set writes it (a write: between jobstore_begin and commit). */
int jobstore_pool_name_read(struct jobstore *js, char *buf, size_t size);
int jobstore_pool_name_set(struct jobstore *js, const char *name);

/* Servers seen: id's row (address, "active"/"standby") stamped now. */
int jobstore_server_seen(struct jobstore *js, const char *id, const char *address, const char *role);
/* A standby's stamp (role "standby"), in a transaction of its own that
 * does not wait for the disk, as a renewal does (docs/HA.md). */
int jobstore_standby_seen(struct jobstore *js, const char *id, const char *address);
/* cb for every server row, by id, with how long ago it was seen (ms). */
int jobstore_servers_load(struct jobstore *js,
			  int (*cb)(const char *id, const char *address, const char *role, int64_t age_ms,
				    void *ud),
			  void *ud);

#endif
