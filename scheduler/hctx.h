/* SPDX-License-Identifier: MIT */
/* What qpoold's handlers see (ops.h): the handlers' context. The config,
 * the job store, the pool, the group commit's queue, and the parts'
 * state (lease, dependencies, ties, task routes, accounts, QOS,
 * reservations, hooks, watchers), and the loop's sd_event for a part's
 * own sources; nothing else of the loop (event sources,
 * listening sockets, connections, peers, the gate, metrics, estimates'
 * bookkeeping): what a handler needs of those is a function. The context
 * is the first member of struct server (server-internal.h), its fields
 * named as the server's were, so server's files read them as before. */
#ifndef QPOOL_HCTX_H
#define QPOOL_HCTX_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct accounts;
struct config;
struct conn;
struct depend_index;
struct jobstore;
struct lease;
struct pending;
struct pool;
struct qos_set;
struct resvs;
struct srvhooks;
struct task_routes;
struct ties;
struct watchers;

/* A request the submit filter passed (door.c's request_run), given at set-up. */
typedef void hctx_pass_f(struct conn *c, const char *op, long long req_id, json_t *msg);

#define HCTX_FIELDS                                                                                          \
	sd_event *event;             /* the loop, for a part's own sources (watch.c's turns) */              \
	struct config *config;                                                                               \
	struct jobstore *store;                                                                              \
	struct pool *pool;                                                                                   \
	/* The group commit (job-end.c's server_pending_add): replies waiting for it. */                     \
	struct pending *pending;                                                                             \
	struct pending **pending_tail;                                                                       \
	unsigned n_pending;          /* in the list */                                                       \
	bool sched_dirty;            /* a pass is due */                                                     \
	bool nodes_noted;            /* a registration waits for nodes_known_flush */                        \
	unsigned n_lent;             /* jobs suspended by a preemption (suspend.c) */                        \
	hctx_pass_f *filter_pass_f;  /* a request the submit filter passed (door.c's request_run) */         \
	struct depend_index *deps;   /* depend.c: who waits on whom */                                       \
	struct task_routes *tasks;   /* tasks.c: remote starts in flight */                                  \
	struct ties *ties;           /* ties.c: jobs tied to a connection */                                 \
	struct srvhooks *hooks;      /* srvhook.c: the server's hooks in flight, their last outcome */       \
	struct watchers *watchers;   /* watch.c: the event stream's watchers */                              \
	struct lease *lease;         /* lease.c: active or standby */                                        \
	struct accounts *accounts;   /* accounts.c: the store's accounts, read at activation */              \
	struct qos_set *qos;         /* qos.c: the store's QOS and budgets, read at activation */            \
	struct resvs *resvs;         /* resv.c: the store's reservations, read at activation */

struct hctx {
	HCTX_FIELDS
};

/* What a pass may place changed: one runs after this loop iteration.
 * (A reply that waits for the group commit: job-end.h's server_pending_add.) */
static inline void hctx_resched(struct hctx *h)
{
	h->sched_dirty = true;
}

#endif
