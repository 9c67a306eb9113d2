/* SPDX-License-Identifier: MIT */
/* What qpoold sends to nodes (node-send.c). */
#ifndef QPOOL_NODE_SEND_H
#define QPOOL_NODE_SEND_H

#include "pool.h"

struct hctx;
struct job;
struct node;
struct server;

/* What the parts do before a signal to a job goes out (node-send.c), set by server.c. */
typedef void job_signal_f(struct server *s, struct job *j, int sig);

/* node-send.c: sends job.launch for j to its node; the job row says what to run.
 * gated: the node holds it before anything of the job runs until
 * node_release sends job.go (its dispatch committed), or job.drop. */
int node_launch(struct server *s, struct job *j, struct node *n, bool gated);
/* A gated launch's end: job.go (go) or job.drop to the one-node job's node. */
void node_release(struct job *j, struct node *n, bool go);
/* Sends job.signal; false when the node is not connected. */
bool node_signal(struct hctx *h, struct job *j, int sig);

#endif
