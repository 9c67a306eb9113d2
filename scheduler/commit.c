/* SPDX-License-Identifier: MIT */
/* The group commit: every submission and result that arrived in one loop
 * iteration in one transaction, a pass's dispatches joined to it when
 * results are among them (issue 39), the replies and launches after it;
 * and how long results may wait for the next pass's commit. The pass is
 * pass.c's; the loop that calls both is server.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit.h"
#include "log.h"
#include "pass.h"
#include "server-internal.h"
#include "timeutil.h"

/* The pooled job of a submit whose row is written: queued (or held), its
 * resources, selection and array as the request gave them. NULL when out
 * of memory (logged: the job then stays in the store only, and the next
 * start reads it). Its dependencies are the caller's. */
static struct job *submit_pool(struct server *s, struct pending *p)
{
	json_t *attrs = json_object_get(p->strings, "attrs");
	struct job *j = calloc(1, sizeof(*j));
	const char *acct, *qos, *resv;

	if (!j) {
		log_err("out of memory: job %lld stays in the store only", (long long)p->jobid);
		return NULL;
	}
	j->id = p->jobid;
	snprintf(j->queue, sizeof(j->queue), "%s", p->submit.queue);
	j->uid = p->submit.uid;
	j->state = p->submit.hold ? JOB_HELD : JOB_QUEUED;
	j->ncpus = p->submit.ncpus;
	j->ngpus = p->submit.ngpus;
	j->mem = p->submit.mem;
	j->walltime = p->submit.walltime;
	j->t_submit = p->submit.t_submit;
	j->rerunnable = p->submit.rerunnable;
	j->priority = p->submit.priority;
	j->start_after = p->submit.start_after;
	if (p->submit.chunks_json) {
		json_t *chunks = json_loads(p->submit.chunks_json, 0, NULL);
		char why[160];

		(void)job_chunks_from_json(j, chunks, why, sizeof(why));
		json_decref(chunks);
	}
	if (p->submit.place)
		(void)job_place_parse(p->submit.place, j);
	if (p->submit.depend)
		j->depend = strdup(p->submit.depend);
	j->sel = p->sel;
	p->sel = NULL;
	j->gpu_model = p->gpu_model;
	p->gpu_model = NULL;
	if (job_licenses_set(j, wire_str(attrs, "Resource_List.licenses")) == -ENOMEM)
		log_err("out of memory: job %lld's licenses are not counted", (long long)p->jobid);
	if (job_noderes_set(j, wire_str(attrs, "Resource_List.node_res")) == -ENOMEM)
		log_err("out of memory: job %lld's node resources are not counted", (long long)p->jobid);
	acct = wire_str(attrs, "Account_Name");
	qos = wire_str(attrs, "Resource_List.qos");
	resv = wire_str(attrs, "reservation");
	j->account = acct ? strdup(acct) : NULL;
	j->qos = qos ? strdup(qos) : NULL;
	j->resv = resv ? strdup(resv) : NULL;
	if (p->submit.array_spec && pool_array_set(j, p->submit.array_spec, NULL) < 0) {
		log_err("out of memory: array %lld stays in the store only", (long long)p->jobid);
		job_free(j);
		return NULL;
	}
	if (pool_job_add(s->pool, j) < 0) {
		job_free(j);
		return NULL;
	}
	return j;
}

/* Whether this flush's submits join a pass to their commit: the pass
 * must decide what the pass after their commit would have decided, on
 * the same pool. So: submits and nothing else (results are applied after
 * the commit, and the pass after it saw them applied: a job they free
 * from max_running or release from a dependency would lose its turn to
 * a new one); nothing the loop does between the commit and the pass
 * still due (dependencies to decide, arrays to end); none naming
 * dependencies (a before* one changes other pooled jobs, which a failed
 * commit would have to undo); and the pool able to take a pass now (no
 * victim's room lent, room on the state directory, not stopping). */
static bool submits_join(struct server *s, const struct pending *list)
{
	if (s->state_full || s->n_lent || s->stopping || s->n_array_due || depend_recheck_due(&s->h))
		return false;
	for (const struct pending *p = list; p; p = p->next)
		if (p->is_done || p->submit.depend)
			return false;
	return true;
}

/* Group commit: every submission and completion that arrived in this loop
 * iteration goes into one transaction; replies follow the commit. A pass
 * joins the same transaction (issue 39: one commit, one fdatasync, where
 * there were two):
 *  - with submits alone (submits_join): their rows are written, their
 *    jobs put in the pool, the pass places over the pool with them
 *    (pass_place), and their dispatches are written; the events of the
 *    submits are written before the dispatches, so the stream still
 *    tells `queued` before `running`;
 *  - with results, when a pass is due (pass): the pass runs first, on the
 *    pool as it was before these results (and without this flush's
 *    submits, pooled after the commit), and its dispatches join.
 * Launches and replies go out only after that commit; a failed one rolls
 * back all, the dispatches undone in memory as a failed pass's are, the
 * new jobs out of the pool again, the results not applied. */
void pending_flush(struct server *s, bool pass)
{
	static struct dispatch d[DISPATCH_BATCH];
	struct pending *list = s->pending, *p, *next;
	int64_t now = time_wall_ns(), t_dispatch = now;
	char server[JOBID_SERVER_MAX];
	size_t n = 0;
	bool done = false, results_ok = true, joined;
	struct job *j;
	int r;

	if (!list)
		return;
	/* The name qsub prints in ID.server: the pool's, whichever server
	 * answered and whichever host qsub runs on. */
	snprintf(server, sizeof(server), "%s", s->pool_name);
	s->pending = NULL;
	s->pending_tail = &s->pending;
	s->n_pending = 0;
	for (p = list; p; p = p->next) {
		if (!p->is_done)
			continue;
		j = pool_job_find(s->pool, p->jobid);
		done = true;
		/* Only jobs that end: one that goes back to the queue (a
		 * requeue, qrerun, a preemption) changes what the pass
		 * would decide, and takes the pass after its commit. */
		if (p->requeue || !j || j->rerun || j->state != JOB_RUNNING)
			results_ok = false;
	}
	joined = submits_join(s, list);
	/* Results alone: nor while preempted jobs are suspended (their
	 * resumes are the pass's too). The pass decides before the
	 * transaction opens, as schedule_pass does (suspend_pass and
	 * preempt_pass write in transactions of their own). */
	pass = !joined && pass && done && results_ok && !s->state_full && !s->n_lent;
	if (pass || joined)
		s->sched_dirty = false;
	if (pass)
		n = pass_decide(s, d);

	r = jobstore_begin(s->store);
	for (p = list; p && r == 0; p = p->next) {
		j = p->is_done ? pool_job_find(s->pool, p->jobid) : NULL;
		if (!p->is_done) {
			r = jobstore_job_insert(s->store, &p->submit, &p->jobid);
			if (r == 0 && p->submit.depend)
				r = depend_before_record(&s->h, p->jobid, p->submit.depend);
		}
		else if (p->requeue && j && j->state == JOB_RUNNING)
			r = jobstore_job_requeue_result(s->store, p->jobid, p->result.reason, &p->result);
		else if (!p->requeue && j && j->rerun)   /* qrerun: back to the queue, not finished */
			r = jobstore_job_requeue_result(s->store, p->jobid,
							j->lost ? p->result.reason : "requeued by qrerun", &p->result);
		else if (!p->requeue && j)
			r = jobstore_job_finish(s->store, p->jobid, &p->result, now);
	}
	if (r == 0 && joined) {
		/* The submits' `queued`, each its own event before its start. */
		r = jobstore_events_write(s->store);
		for (p = list; p && r == 0; p = p->next)
			if (!p->is_done)
				p->pooled = submit_pool(s, p);
		if (r == 0)
			n = pass_place(s, d);
		/* The dispatch stamp once decided, after the submits' writes. */
		t_dispatch = time_wall_ns();
	}
	if (r == 0 && n)
		r = pass_write(s, d, n, t_dispatch);
	if (r == 0 && n)
		pass_launch_early(s, d, n);
	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0) {
		jobstore_rollback(s->store);
		if (n)   /* the joint commit (t-faults-joint, t-onecommit look for this line) */
			log_err("job store: cannot commit %s with %zu dispatches: %s",
				joined ? "submits" : "results", n, strerror(-r));
		else
			log_err("job store: cannot commit %s", strerror(-r));
		if (r == -ESTALE)
			server_lease_refresh(s);
		if (r == -ENOSPC)
			server_space_exhausted(s);
		if (n)
			pass_undo(s, d, n, r);
		/* The new jobs out of the pool again (their subjobs the pass
		 * made are gone with pass_undo): no job that has no row. */
		for (p = list; p; p = p->next)
			if (p->pooled) {
				pool_job_remove(s->pool, p->pooled);
				p->pooled = NULL;
			}
	} else if (n) {
		/* Launches first: the successor's start is the critical path. */
		pass_apply(s, d, n, t_dispatch);
	}
	/* Their pass saw the whole pool; with its preemptions it is a
	 * whole pass, and none need follow. */
	if (joined && r == 0)
		pass_finish(s);
	if ((pass || joined) && !s->state_full)
		estimates_replay(s, false);
	for (p = list; p; p = next) {
		next = p->next;
		if (r == -ENOSPC && p->is_done) {
			/* A completion is not lost for want of room: it waits,
			 * unanswered, and is committed when space returns. */
			p->next = s->retry;
			s->retry = p;
			continue;
		}
		if (r == -ESTALE) {
			/* Another server took the lease: nothing was written,
			 * and the peer goes there (a node keeps its result). */
			server_standby_reply(p->conn, p->req_id);
		} else if (r < 0) {
			conn_reply_err(p->conn, p->req_id, -r, "qpoold cannot record the job: %s%s", strerror(-r),
				       r == -ENOSPC ? " (state directory full)" : "");
		} else if (!p->is_done) {
			j = joined ? p->pooled : submit_pool(s, p);
			if (j && p->submit.depend) {
				depend_before_apply(&s->h, p->jobid, p->submit.depend);
				if (p->submit.reason) {
					j->reason = strdup(p->submit.reason);
					depend_track(&s->h, j);
				}
			}
			server_metrics_submitted(s, p->submit.queue);
			conn_reply_ok(p->conn, p->req_id,
				      json_pack("{s:I, s:s, s:b}", "jobid", (json_int_t)p->jobid, "server", server,
						"array", p->submit.array_spec != NULL));
			log_debug("job %lld submitted", (long long)p->jobid);
		} else if (p->requeue) {
			j = pool_job_find(s->pool, p->jobid);
			/* Running: not already put back by a copy of this report. */
			if (j && j->state == JOB_RUNNING) {
				log_info("job %lld requeued: %s", (long long)j->id, p->result.reason);
				pool_job_release(s->pool, j);
				pool_job_state_set(s->pool, j, JOB_QUEUED);
				/* No room on the node: most likely the same file
				 * system, so no pass until the next check has seen
				 * room. Any other requeue (a prolog, a cpuset, a
				 * launch dropped before its start) is not the disk's. */
				if (p->no_room)
					server_space_exhausted(s);
				server_prolog_hold(&s->h, j);
			}
			if (p->req_id)
				conn_reply_ok(p->conn, p->req_id, NULL);
		} else {
			j = pool_job_find(s->pool, p->jobid);
			if (j && j->rerun) {
				log_info("job %lld requeued%s%s", (long long)j->id, j->lost ? ": " : " by qrerun",
					 j->lost ? j->lost : "");
				j->rerun = false;
				pool_job_release(s->pool, j);
				pool_job_state_set(s->pool, j, JOB_QUEUED);
				server_prolog_hold(&s->h, j);
			} else if (j) {
				/* A line per job is a write per job: jobs that
				 * completed are logged at debug level only. */
				log_msg(p->result.state == JOB_COMPLETED ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO,
					"job %lld %s on %s", (long long)j->id, job_state_name(p->result.state),
					job_node(j) ? job_node(j) : "?");
				server_job_finished(&s->h, j, p->result.state);
			}
			/* Results sent inside a registration have no request id. */
			if (p->req_id)
				conn_reply_ok(p->conn, p->req_id, NULL);
		}
		conn_unref(p->conn);
		json_decref(p->strings);
		nodesel_destroy(p->sel);
		free(p->gpu_model);
		free(p);
	}
	/* Another pass: the one above saw the pool before these results (a
	 * job still counted in max_running, its array's limit, its CPUs if
	 * no job.exited came first), or none saw these submits; it mostly
	 * finds nothing and commits nothing. Not after a joined pass that
	 * committed: nothing changed since it (a full batch has armed the
	 * next, pass_apply). */
	if (!joined || r < 0)
		s->sched_dirty = true;
}

int pending_linger_handler(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct server *s = userdata;

	/* Due whatever the clocks say: the post handler, right after,
	 * commits what waits. */
	if (s->linger_since)
		s->linger_since = 1;
	return 0;
}

/* Whether the pending results may wait, at most LINGER_NS, for the next
 * pass: only results of jobs that end and whose CPUs are already back
 * (job.exited came first, so no job waits for those CPUs), nothing else
 * pending and no pass due now. What waits is unanswered and unapplied:
 * nothing is told before it is on disk. */
bool pending_linger(struct server *s)
{
	int64_t now = time_mono_ns();

	if (!s->pending || s->sched_dirty || s->n_lent || s->state_full || s->stopping || !s->linger_src)
		return false;
	if (s->linger_since && now - s->linger_since >= LINGER_NS)
		return false;
	for (struct pending *p = s->pending; p; p = p->next) {
		struct job *j = p->is_done ? pool_job_find(s->pool, p->jobid) : NULL;

		if (!j || p->requeue || j->rerun || j->state != JOB_RUNNING || !j->n_alloc)
			return false;
		/* A job another waits on: its end is on that one's way. */
		if (depend_has_waiters(&s->h, j->id) || (j->array_id && depend_has_waiters(&s->h, j->array_id)))
			return false;
		for (unsigned i = 0; i < j->n_alloc; i++)
			if (!j->alloc[i].cpus_back)
				return false;
	}
	if (!s->linger_since) {
		s->linger_since = now;
		if (sd_event_source_set_time_relative(s->linger_src, LINGER_NS / 1000) < 0 ||
		    sd_event_source_set_enabled(s->linger_src, SD_EVENT_ONESHOT) < 0) {
			s->linger_since = 0;
			return false;
		}
	}
	return true;
}
