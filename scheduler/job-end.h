/* SPDX-License-Identifier: MIT */
/* A job's end and cancellation (job-end.c), the group commit's queue of replies. */
#ifndef QPOOL_JOB_END_H
#define QPOOL_JOB_END_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "job.h"
#include "jobstore.h"
#include "pool.h"

struct conn;
struct hctx;
struct server;

/* A request whose reply waits for the next group commit. */
struct pending {
	struct conn *conn;
	long long req_id;
	int64_t jobid;            /* done: the job; submit: the new id */
	struct job_submit submit; /* submit: strings owned here */
	struct nodesel *sel;      /* submit: which nodes, for the pooled job */
	char *gpu_model;          /* submit: its GPUs' model, for the pooled job; NULL: any */
	json_t *strings;          /* submit: keeps the request alive for submit's strings */
	struct job *pooled;       /* submit: in the pool before its commit (a pass joined it: commit.c) */
	bool is_done;
	bool requeue;             /* done: the node could not start it: back to the queue */
	bool no_room;             /* ... for lack of room (its report's "no_room") */
	struct job_result result; /* done */
	struct pending *next;
};

/* What the parts do at a job's end (job-end.c), set by server.c. */
typedef void job_ended_f(struct server *s, struct job *j, enum job_state state);

/* job-end.c: queues p's reply for the next group commit (server.c). */
void server_pending_add(struct hctx *h, struct pending *p);

/* server.c: a job back in the queue after its node prolog failed for the
 * [node] prolog_failures_max-th time (j->prolog_hold) is held, with why. */
void server_prolog_hold(struct hctx *h, struct job *j);

/* job-end.c: the job of a request's "jobid", checked for ownership
 * (owner or root); replies itself and returns NULL otherwise. */
struct job *job_for_change(struct conn *c, long long req_id, json_t *msg);

/* job-end.c: qdel -W force of a running job. */
void jobctl_delete_force(struct conn *c, long long req_id, struct job *j);

/* job-end.c: a pooled job has ended in state (its final record is written
 * or being written in the open transaction): counts it in its array, has
 * the parts do their part (s->job_ended_f: forgets its dependencies, marks
 * what waited on it, ...) and removes it from the pool. */
void server_job_finished(struct hctx *h, struct job *j, enum job_state state);

/* job-end.c: what qdel does to j: a queued or held job is cancelled (and
 * freed), a running one is asked to stop (exiting); why ends the reason
 * ("by alice"), which a running job's record keeps. The job's new state,
 * or -errno from the job store (nothing changed). */
int server_job_cancel(struct hctx *h, struct job *j, const char *why);
/* job-end.c: a running job back to wait when its node reports it gone
 * (qrerun, preemption): SIGTERM now, the store's state EXITING with why. */
int server_job_requeue(struct hctx *h, struct job *j, const char *why);

#endif
