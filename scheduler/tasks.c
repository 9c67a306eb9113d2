/* SPDX-License-Identifier: MIT */
/* task.*: remote starts routed between the nodes of a running job
 * (docs/PARALLEL.md, "Remote start"), and ended when a node goes. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "hctx.h"
#include "log.h"
#include "ops.h"
#include "pool.h"
#include "tasks.h"
#include "wire.h"

#define TASK_ID_MAX 96
/* In-flight tasks the pool keeps track of, all jobs together: each is a
 * small record, and a node that floods task.start meets a refusal. */
#define TASKS_MAX 65536

/* One task between its origin (the agent's node) and its target. */
struct route {
	int64_t jobid;
	int64_t dispatch;
	char task[TASK_ID_MAX];
	char origin[64];
	char target[64];
	struct route *next;
};

struct task_routes {
	struct route *head;
	unsigned n;
};

/* The server's routes, made at the first task.start. */
static struct task_routes *routes_of(struct hctx *s)
{
	if (!s->tasks)
		s->tasks = calloc(1, sizeof(*s->tasks));
	return s->tasks;
}

/* Whether node name holds a share of j: an entry of its allocation. */
static bool job_has_node(const struct job *j, const char *name)
{
	return job_entry(j, name) != NULL;
}

static void route_free(struct task_routes *tr, struct route **pp)
{
	struct route *r = *pp;

	*pp = r->next;
	free(r);
	tr->n--;
}

static struct route **route_find(struct task_routes *tr, int64_t jobid, const char *task)
{
	for (struct route **pp = &tr->head; *pp; pp = &(*pp)->next)
		if ((*pp)->jobid == jobid && strcmp((*pp)->task, task) == 0)
			return pp;
	return NULL;
}

/* The job of a frame, running the run the frame names, with both ends
 * among its nodes; NULL with why set otherwise. */
static struct job *route_job(struct hctx *s, int64_t jobid, int64_t dispatch, const char *from,
			     const char *to, char *why, size_t len)
{
	struct job *j = pool_job_find(s->pool, jobid);

	/* The sender first: a node learns nothing about jobs it does not run. */
	if (!j || !job_has_node(j, from)) {
		snprintf(why, len, "node %s runs no share of job %lld", from, (long long)jobid);
		return NULL;
	}
	if (j->state != JOB_RUNNING || dispatch != j->t_dispatch) {
		snprintf(why, len, "job %lld is not running (it ended, or this is an older run of it)",
			 (long long)jobid);
		return NULL;
	}
	if (!job_has_node(j, to)) {
		snprintf(why, len, "%s is not a node of job %lld", to, (long long)jobid);
		return NULL;
	}
	return j;
}

/* Forgets the routes of jobs no longer running (ended meanwhile). */
static void routes_prune(struct hctx *s, struct task_routes *tr)
{
	for (struct route **pp = &tr->head; *pp;) {
		struct job *j = pool_job_find(s->pool, (*pp)->jobid);

		if (!j || j->state != JOB_RUNNING || j->t_dispatch != (*pp)->dispatch)
			route_free(tr, pp);
		else
			pp = &(*pp)->next;
	}
}

/* A frame to node name (reference stolen); false when it is not connected. */
static bool route_send(struct hctx *s, const char *name, json_t *msg)
{
	struct node *n = pool_node_find(s->pool, name);

	if (!n || !n->link) {
		json_decref(msg);
		return false;
	}
	conn_send(n->link, msg);
	return true;
}

/* An error: a reply to a request, a logged line for a frame without id
 * (debug only for a frame of a task that ended meanwhile: its two ends
 * race, e.g. a signal sent as the task exits). */
static void task_refuse(struct conn *c, long long req_id, int errnum, const char *op, const char *why)
{
	if (req_id)
		conn_reply_err(c, req_id, errnum, "%s", why);
	else if (errnum == ESRCH)
		log_debug("node %s: %s dropped: %s", c->node->name, op, why);
	else
		conn_log_warn(c, "node %s: %s dropped: %s", c->node->name, op, why);
}

void op_task_start(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	const char *to = wire_str(msg, "to"), *task = wire_str(msg, "task");
	int64_t jobid = wire_int(msg, "jobid", 0), dispatch = wire_int(msg, "dispatch", 0);
	json_t *argv = json_object_get(msg, "argv"), *fwd;
	struct task_routes *tr = routes_of(s);
	struct route *r;
	char why[200];
	struct job *j;

	if (!to || !task || jobid <= 0 || strlen(task) >= TASK_ID_MAX || strlen(to) >= sizeof(r->target) ||
	    !json_is_array(argv) || json_array_size(argv) == 0) {
		task_refuse(c, req_id, EINVAL, "task.start",
			    "task.start needs jobid, dispatch, to, task and argv (a non-empty array)");
		return;
	}
	j = route_job(s, jobid, dispatch, c->node->name, to, why, sizeof(why));
	if (!j) {
		task_refuse(c, req_id, ESRCH, "task.start", why);
		return;
	}
	if (!tr) {
		task_refuse(c, req_id, ENOMEM, "task.start", "qpoold is out of memory");
		return;
	}
	if (route_find(tr, jobid, task)) {
		task_refuse(c, req_id, EEXIST, "task.start", "a task of that name runs already");
		return;
	}
	if (tr->n >= TASKS_MAX)
		routes_prune(s, tr);
	if (tr->n >= TASKS_MAX) {
		task_refuse(c, req_id, EAGAIN, "task.start", "qpoold routes too many tasks now; try again later");
		return;
	}
	r = calloc(1, sizeof(*r));
	fwd = json_deep_copy(msg);
	if (!r || !fwd) {
		free(r);
		json_decref(fwd);
		task_refuse(c, req_id, ENOMEM, "task.start", "qpoold is out of memory");
		return;
	}
	r->jobid = jobid;
	r->dispatch = j->t_dispatch;
	snprintf(r->task, sizeof(r->task), "%s", task);
	snprintf(r->origin, sizeof(r->origin), "%s", c->node->name);
	snprintf(r->target, sizeof(r->target), "%s", to);
	json_object_set_new(fwd, "id", json_integer(0));
	json_object_set_new(fwd, "from", json_string(c->node->name));
	json_object_set_new(fwd, "dispatch", json_integer(j->t_dispatch));
	if (!route_send(s, to, fwd)) {
		free(r);
		snprintf(why, sizeof(why), "node %s is not connected", to);
		task_refuse(c, req_id, EHOSTUNREACH, "task.start", why);
		return;
	}
	r->next = tr->head;
	tr->head = r;
	tr->n++;
	if (req_id)
		conn_reply_ok(c, req_id, NULL);
}

/* task.started, task.out, task.inack, task.exit (target → origin) and
 * task.in, task.signal, task.outack (origin → target): only along a route task.start
 * made, in its direction, for the job's current run. */
void op_task_pass(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	const char *to = wire_str(msg, "to"), *task = wire_str(msg, "task");
	int64_t jobid = wire_int(msg, "jobid", 0);
	bool back = strcmp(op, "task.started") == 0 || strcmp(op, "task.out") == 0 ||
		    strcmp(op, "task.inack") == 0 || strcmp(op, "task.exit") == 0;
	struct task_routes *tr = s->tasks;
	struct route **pp, *r;
	char why[200];
	json_t *fwd;

	if (!back && strcmp(op, "task.in") != 0 && strcmp(op, "task.signal") != 0 &&
	    strcmp(op, "task.outack") != 0) {
		task_refuse(c, req_id, EOPNOTSUPP, op, "unknown task op");
		return;
	}
	if (!to || !task || jobid <= 0) {
		task_refuse(c, req_id, EINVAL, op, "a task frame needs jobid, to and task");
		return;
	}
	pp = tr ? route_find(tr, jobid, task) : NULL;
	r = pp ? *pp : NULL;
	if (!r || strcmp(back ? r->target : r->origin, c->node->name) != 0 ||
	    strcmp(back ? r->origin : r->target, to) != 0) {
		task_refuse(c, req_id, ESRCH, op, "no such task between these nodes");
		return;
	}
	if (!route_job(s, jobid, r->dispatch, c->node->name, to, why, sizeof(why))) {
		route_free(tr, pp);
		task_refuse(c, req_id, ESRCH, op, why);
		return;
	}
	fwd = json_deep_copy(msg);
	if (!fwd) {
		task_refuse(c, req_id, ENOMEM, op, "qpoold is out of memory");
		return;
	}
	json_object_set_new(fwd, "id", json_integer(0));
	json_object_set_new(fwd, "from", json_string(c->node->name));
	(void)route_send(s, to, fwd);
	if (strcmp(op, "task.exit") == 0 || (strcmp(op, "task.started") == 0 && !wire_bool(msg, "ok", 0)))
		route_free(tr, pp);
	if (req_id)
		conn_reply_ok(c, req_id, NULL);
}

void task_routes_node_gone(struct hctx *s, const char *name)
{
	struct task_routes *tr = s->tasks;
	char line[160];

	if (!tr)
		return;
	snprintf(line, sizeof(line), "lost node %s", name);
	for (struct route **pp = &tr->head; *pp;) {
		struct route *r = *pp;

		if (strcmp(r->target, name) == 0) {
			/* Its agent hears the end, as if the task was killed. */
			(void)route_send(s, r->origin,
					 json_pack("{s:s, s:i, s:I, s:I, s:s, s:s, s:s, s:i, s:s}", "op", "task.exit",
						   "id", 0, "jobid", (json_int_t)r->jobid, "dispatch",
						   (json_int_t)r->dispatch, "to", r->origin, "from", name, "task",
						   r->task, "signal", SIGKILL, "error", line));
		} else if (strcmp(r->origin, name) == 0) {
			/* Nobody is left to read it. */
			(void)route_send(s, r->target,
					 json_pack("{s:s, s:i, s:I, s:I, s:s, s:s, s:s, s:i}", "op", "task.signal",
						   "id", 0, "jobid", (json_int_t)r->jobid, "dispatch",
						   (json_int_t)r->dispatch, "to", r->target, "from", name, "task",
						   r->task, "signal", SIGKILL));
		} else {
			pp = &r->next;
			continue;
		}
		route_free(tr, pp);
	}
}

void task_routes_destroy(struct hctx *s)
{
	if (!s->tasks)
		return;
	while (s->tasks->head)
		route_free(s->tasks, &s->tasks->head);
	free(s->tasks);
	s->tasks = NULL;
}
