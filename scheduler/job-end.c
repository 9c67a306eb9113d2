/* SPDX-License-Identifier: MIT */
/* A job's end and cancellation, below the handlers and the parts: the job
 * a request names (job_for_change), qdel's cancel and its forced form,
 * qrerun's requeue, a job's end in the pool, and the group commit's queue
 * of replies (server_pending_add). What the parts do at a job's end is
 * the callback server.c gives at set-up (s->job_ended_f). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrayspec.h"
#include "depend.h"
#include "log.h"
#include "server-internal.h"
#include "timeutil.h"

void server_pending_add(struct hctx *h, struct pending *p)
{
	struct server *s = server_of(h);
	conn_ref(p->conn);
	s->n_pending++;
	*s->pending_tail = p;
	s->pending_tail = &p->next;
}

void server_job_finished(struct hctx *h, struct job *j, enum job_state state)
{
	struct server *s = server_of(h);
	struct job *a = j->parent;

	if (a) {
		pool_array_ended(a, state);
		if (s->n_array_due == s->cap_array_due) {
			size_t cap = s->cap_array_due ? 2 * s->cap_array_due : 16;
			int64_t *n = realloc(s->array_due, cap * sizeof(*n));

			if (n) {
				s->array_due = n;
				s->cap_array_due = cap;
			}
		}
		if (s->n_array_due < s->cap_array_due)
			s->array_due[s->n_array_due++] = a->id;
		else
			log_err("out of memory: array %lld ends at the next start", (long long)a->id);
	}
	depend_forget(&s->h, j);
	depend_job_changed(&s->h, j->id);
	/* A server without its parts (a unit test's) has none to tell. */
	if (s->job_ended_f)
		s->job_ended_f(s, j, state);
	pool_job_remove(s->pool, j);
}

/* The job for a delete/hold/release, checked for ownership; replies itself
 * and returns NULL when the request cannot go on. */
struct job *job_for_change(struct conn *c, long long req_id, json_t *msg)
{
	struct server *s = c->server;
	long long id = wire_int(msg, "jobid", 0);
	struct job *j;
	json_t *row;

	if (id <= 0) {
		conn_reply_err(c, req_id, EINVAL, "a job id is required");
		return NULL;
	}
	/* ID[N]: the subjob, once it is a job of its own. */
	if (json_is_integer(json_object_get(msg, "array_index"))) {
		struct job *a = pool_job_find(s->pool, id);
		struct pool_array_info info;
		int64_t pos = -1;

		if (a && a->array) {
			pool_array_info(a, &info);
			pos = arrayspec_pos(info.spec, wire_int(msg, "array_index", 0));
		}
		j = pos >= 0 ? pool_job_find(s->pool, id + 1 + pos) : NULL;
		if (!j) {
			conn_reply_err(c, req_id, ENOENT, "job %lld[%lld]: no such subjob running or waiting alone", id,
				       wire_int(msg, "array_index", 0));
			return NULL;
		}
		id = j->id;
	} else {
		j = pool_job_find(s->pool, id);
	}
	if (!j) {
		if (jobstore_job_get(s->store, id, false, &row) == 0) {
			conn_reply_err(c, req_id, EALREADY, "job %lld has already finished (%s)", id,
				       wire_str(row, "state"));
			json_decref(row);
		} else {
			conn_reply_err(c, req_id, ENOENT, "job %lld: no such job", id);
		}
		return NULL;
	}
	if (c->uid != 0 && c->uid != j->uid) {
		const char *owner = server_user_name(&s->h, j->uid);

		conn_reply_err(c, req_id, EPERM, "job %lld: permission denied (owned by %s)", id,
			       owner ? owner : "another user");
		return NULL;
	}
	return j;
}

int server_job_cancel(struct hctx *h, struct job *j, const char *why)
{
	struct server *s = server_of(h);
	struct job_result res = { .state = JOB_CANCELLED, .exit_status = -1 };
	int r;

	if (j->state == JOB_QUEUED || j->state == JOB_HELD) {
		snprintf(res.reason, sizeof(res.reason), "cancelled %s before it started", why);
		r = jobstore_job_finish(s->store, j->id, &res, time_wall_ns());
		if (r < 0)
			return r;
		server_job_finished(&s->h, j, JOB_CANCELLED);
		return JOB_CANCELLED;
	}
	/* Running: the node's wrapper stops it (SIGTERM, SIGKILL after
	 * kill_grace) and its report ends the job as cancelled. The report
	 * cannot know who asked: end_reason keeps it for the record
	 * (nodes.c). */
	if (j->state == JOB_RUNNING) {
		char reason[160];

		snprintf(reason, sizeof(reason), "cancel requested %s", why);
		r = jobstore_job_set_state(s->store, j->id, JOB_EXITING, reason);
		if (r < 0)
			return r;
		pool_job_state_set(s->pool, j, JOB_EXITING);
		if (!j->end_reason && asprintf(&j->end_reason, "cancelled %s", why) < 0)
			j->end_reason = NULL;
	}
	if (!node_signal(&s->h, j, SIGTERM))
		log_info("job %lld: node %s is down; it is stopped when the node returns",
			 (long long)j->id, job_node(j) ? job_node(j) : "?");
	return (int)j->state;
}

/* rerun (qrerun): the running job is stopped like qdel's, and its result
 * puts it back in the queue instead of finishing it (server.c). */
int server_job_requeue(struct hctx *h, struct job *j, const char *why)
{
	struct server *s = server_of(h);
	int r = jobstore_job_set_state(s->store, j->id, JOB_EXITING, why);

	if (r < 0)
		return r;
	j->rerun = true;
	pool_job_state_set(s->pool, j, JOB_EXITING);
	if (!node_signal(&s->h, j, SIGTERM))
		log_info("job %lld: node %s is down; it is requeued when the node returns or is lost",
			 (long long)j->id, job_node(j) ? job_node(j) : "?");
	return 0;
}

void jobctl_delete_force(struct conn *c, long long req_id, struct job *j)
{
	struct server *s = c->server;
	struct job_result res = { .state = JOB_CANCELLED, .exit_status = -1 };
	const char *who = server_user_name(&s->h, c->uid);
	char reason[sizeof(res.reason)];
	int r;

	/* A node that answers still runs the job: its CPUs are the job's
	 * until the node reports its processes gone, or the next job would
	 * share them for up to kill_grace and this one's usage be lost. So
	 * the job is cancelled as by qdel (SIGTERM: gded records a cancel)
	 * and then killed at once (SIGKILL forwarded to it, no grace), and
	 * ends by its node's report. */
	snprintf(reason, sizeof(reason), "deleted with -W force by %s", who ? who : "?");
	r = server_job_cancel(&s->h, j, "with -W force");
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	/* Deleted, not requeued, whatever a qrerun before asked. */
	j->rerun = false;
	free(j->end_reason);
	j->end_reason = strdup(reason);
	if (node_signal(&s->h, j, SIGRTMIN + SIGKILL)) {
		log_info("job %lld: forced delete by uid %d; it ends when node %s reports it", (long long)j->id,
			 (int)c->uid, job_node(j) ? job_node(j) : "?");
		conn_reply_ok(c, req_id, json_pack("{s:s}", "state", job_state_name(j->state)));
		return;
	}
	/* Its node is down: nothing can be waited for (PBS's force). The
	 * node, back, hears at registration that the job is not its own and
	 * kills it (nodes.c, node_reconcile). */
	memcpy(res.reason, reason, sizeof(res.reason));
	r = jobstore_job_finish(s->store, j->id, &res, time_wall_ns());
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	log_info("job %lld force-deleted by uid %d (node %s down)", (long long)j->id, (int)c->uid,
		 job_node(j) ? job_node(j) : "?");
	server_job_finished(&s->h, j, JOB_CANCELLED);
	s->sched_dirty = true;
	conn_reply_ok(c, req_id, json_pack("{s:s}", "state", job_state_name(JOB_CANCELLED)));
}

void server_prolog_hold(struct hctx *h, struct job *j)
{
	struct server *s = server_of(h);
	char why[160];

	if (!j->prolog_hold || j->state != JOB_QUEUED)
		return;
	j->prolog_hold = false;
	snprintf(why, sizeof(why), "held: its node prolog failed %u times (prolog_failures_max)",
		 j->prolog_failures);
	if (jobstore_job_set_state(s->store, j->id, JOB_HELD, why) < 0) {
		log_warn("job %lld: cannot hold it after its prolog failures", (long long)j->id);
		return;
	}
	pool_job_state_set(s->pool, j, JOB_HELD);
	free(j->reason);
	j->reason = strdup(why);
	log_warn("job %lld %s", (long long)j->id, why);
}
