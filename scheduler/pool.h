/* SPDX-License-Identifier: MIT */
/* The pool in memory: unfinished jobs (by id, in submit order) and nodes
 * with their free CPUs; the scheduling pass that matches them. */
#ifndef QPOOL_POOL_H
#define QPOOL_POOL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "job.h"
#include "parse.h"

enum node_state {
	NODE_UP,
	NODE_DOWN,      /* not connected, or silent past node_timeout */
	NODE_DRAINED,   /* running jobs finish, nothing new starts */
};

const char *node_state_name(enum node_state s);

struct node {
	char *name;
	enum node_state state;
	struct cpumask cpus;     /* the node's CPUs */
	struct cpumask free;     /* not allocated to a job */
	char mems[64];
	json_t *topology;
	char cgroup[8];
	bool rt;
	char *rt_reason;
	void *link;              /* the server's connection, NULL when down */
	int64_t last_seen;       /* monotonic ns of the last message */
	struct node *next;
};

struct pool;

int pool_create(struct pool **ret);
void pool_destroy(struct pool *p);

/* Jobs: the pool owns them. Added in submit order (ids ascending). */
int pool_job_add(struct pool *p, struct job *j);
struct job *pool_job_find(const struct pool *p, int64_t id);
/* Unlinks and frees; releases its CPUs on its node. */
void pool_job_remove(struct pool *p, struct job *j);
/* First job in submit order (then j->next), for listings. */
struct job *pool_jobs(const struct pool *p);

/* Nodes: found or created by name; never freed while the pool lives. */
struct node *pool_node_get(struct pool *p, const char *name);
struct node *pool_node_find(const struct pool *p, const char *name);
struct node *pool_nodes(const struct pool *p);
/* Most CPUs any known node has; 0 with no node. */
unsigned pool_node_max_cpus(const struct pool *p);

/* Marks j's CPUs used on its node (after a restart or a reconcile). */
void pool_job_claim(struct pool *p, struct job *j);
/* Gives j's CPUs back to its node and forgets the node. */
void pool_job_release(struct pool *p, struct job *j);

/* One dispatch decision of a pass. */
struct dispatch {
	struct job *job;
	struct node *node;
};

/* One scheduling pass: queues by priority (higher first, then config
 * order), jobs in submit order within a queue; each queued job of a started
 * queue goes to the first up node with enough free CPUs and takes the
 * lowest-numbered ones. The chosen jobs are marked running and their CPUs
 * allocated in memory; the caller commits, or undoes with pool_job_release
 * and state = queued. Returns the number of decisions written to ret
 * (at most max). */
size_t pool_schedule(struct pool *p, const struct config *c, struct dispatch *ret, size_t max);

#endif
