/* SPDX-License-Identifier: MIT */
/* The server prolog and epilog around a job (srvjob.c). */
#ifndef QPOOL_SRVJOB_H
#define QPOOL_SRVJOB_H

#include "pool.h"

struct job;
struct node;
struct server;

/* srvjob.c: [server] server_prolog and server_epilog around a job
 * (qpool-hooks(5)). srvjob_launch sends a placed job to its nodes, after
 * the server prolog when one is set (a failure requeues the job, or holds
 * it after server_prolog_retries); srvjob_ended starts the server epilog
 * for a job whose end is committed. Without the keys each is one check. */
void srvjob_launch(struct server *s, struct job *j, struct node *n);
/* The launch before its dispatch's commit (docs/ARCHITECTURE.md, "The
 * launch before its commit"): sent held when nothing of the server's runs
 * first (no server prolog), the job is on one node and that node holds
 * launches; true when it went (the commit then releases or drops it). */
bool srvjob_launch_gated(struct server *s, struct job *j, struct node *n);
void srvjob_ended(struct server *s, struct job *j, enum job_state state);
/* A job whose server prolog runs is being deleted or rerun: the prolog
 * is killed, and its end (or requeue) follows from the loop. */
void srvjob_stop(struct server *s, struct job *j);

#endif
