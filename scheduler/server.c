/* SPDX-License-Identifier: MIT */
/* qpoold's event-driven core: the loop, group commit, the scheduling pass,
 * and the set-up that gives the layers below their callbacks. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "auth.h"
#include "estimate.h"
#include "jobid.h"
#include "accounts.h"
#include "qos.h"
#include "resv.h"
#include "log.h"
#include "nodes-known.h"
#include "peers.h"
#include "preempt.h"
#include "server-internal.h"
#include "suspend.h"
#include "srvhook.h"
#include "timeutil.h"
#include "usage.h"
#include "transport.h"

/* Decisions per pass. A full pass leaves the rest to the next loop
 * iteration, so requests are served between batches: 4,096 at once made
 * a 190 ms pass on 1,000 simulated nodes of 128 PUs (~45 us a placement). */
#define DISPATCH_BATCH 512
#define TIMER_USEC 1000000      /* node timeout and stalled-client check */

/* The connection layer's callbacks (conn.c). */
static void conn_message(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	door_request(c, op, req_id, msg);
}

static void conn_closed(struct conn *c)
{
	struct server *s = c->server;

	if (c->node)
		node_link_lost(&s->h, c);
	ties_conn_closed(&s->h, c);
	watch_conn_closed(s, c);
}

static int listen_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct server *s = userdata;
	bool tcp = fd == s->tcp_fd;

	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_warn("accept: %m");
			return 0;
		}
		conn_accept(s, cfd, tcp);
	}
}

static size_t pass_decide(struct server *s, struct dispatch *d);
static int pass_write(struct server *s, struct dispatch *d, size_t n, int64_t now);
static void pass_undo(struct server *s, struct dispatch *d, size_t n, int r);
static void pass_apply(struct server *s, struct dispatch *d, size_t n, int64_t now);
static void estimates_replay(struct server *s, bool timer);

/* Group commit: every submission and completion that arrived in this loop
 * iteration goes into one transaction; replies follow the commit. With
 * pass (a pass is due and results are among them: issue 39), the pass
 * runs first, on the pool as it was before these results, and its
 * dispatches join the same transaction: one commit for a job's end and
 * its successor's start. Its launches and the results' replies go out
 * only after that commit; a failed one rolls back both, the dispatches
 * undone in memory as a failed pass's are, the results not applied. */
static void pending_flush(struct server *s, bool pass)
{
	static struct dispatch d[DISPATCH_BATCH];
	struct pending *list = s->pending, *p, *next;
	int64_t now = time_wall_ns();
	char server[JOBID_SERVER_MAX];
	size_t n = 0;
	bool done = false;
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
	for (p = list; p && pass; p = p->next) {
		if (!p->is_done)
			continue;
		j = pool_job_find(s->pool, p->jobid);
		done = true;
		/* Only jobs that end: one that goes back to the queue (a
		 * requeue, qrerun, a preemption) changes what the pass
		 * would decide, and takes the pass after its commit. */
		if (p->requeue || !j || j->rerun || j->state != JOB_RUNNING)
			pass = false;
	}
	/* Only with results: a submit alone is not in the pool before its
	 * commit, so a pass first would gain nothing. Nor while preempted
	 * jobs are suspended (their resumes are the pass's too). The pass
	 * decides before the transaction opens, as schedule_pass does
	 * (suspend_pass and preempt_pass write in transactions of their
	 * own). */
	pass = pass && done && !s->state_full && !s->n_lent;
	if (pass) {
		s->sched_dirty = false;
		n = pass_decide(s, d);
	}

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
	if (r == 0 && n)
		r = pass_write(s, d, n, now);
	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0) {
		jobstore_rollback(s->store);
		if (n)   /* the joint commit (t-faults-joint looks for this line) */
			log_err("job store: cannot commit results with %zu dispatches: %s", n, strerror(-r));
		else
			log_err("job store: cannot commit %s", strerror(-r));
		if (r == -ESTALE)
			server_lease_refresh(s);
		if (r == -ENOSPC)
			server_space_exhausted(s);
		if (n)
			pass_undo(s, d, n, r);
	} else if (n) {
		/* Launches first: the successor's start is the critical path. */
		pass_apply(s, d, n, now);
	}
	if (pass && !s->state_full)
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
			j = calloc(1, sizeof(*j));

			if (!j) {
				log_err("out of memory: job %lld stays in the store only", (long long)p->jobid);
			} else {
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
				if (job_licenses_set(j, wire_str(json_object_get(p->strings, "attrs"),
								 "Resource_List.licenses")) == -ENOMEM)
					log_err("out of memory: job %lld's licenses are not counted", (long long)p->jobid);
				if (job_noderes_set(j, wire_str(json_object_get(p->strings, "attrs"),
								"Resource_List.node_res")) == -ENOMEM)
					log_err("out of memory: job %lld's node resources are not counted",
						(long long)p->jobid);
				{
					const char *acct = wire_str(json_object_get(p->strings, "attrs"), "Account_Name");
					const char *qos = wire_str(json_object_get(p->strings, "attrs"), "Resource_List.qos");

					j->account = acct ? strdup(acct) : NULL;
					j->qos = qos ? strdup(qos) : NULL;
					acct = wire_str(json_object_get(p->strings, "attrs"), "reservation");
					j->resv = acct ? strdup(acct) : NULL;
				}
				if (p->submit.array_spec && pool_array_set(j, p->submit.array_spec, NULL) < 0) {
					log_err("out of memory: array %lld stays in the store only", (long long)p->jobid);
					job_free(j);
				} else if (pool_job_add(s->pool, j) < 0) {
					job_free(j);
				} else if (p->submit.depend) {
					depend_before_apply(&s->h, p->jobid, p->submit.depend);
					if (p->submit.reason) {
						j->reason = strdup(p->submit.reason);
						depend_track(&s->h, j);
					}
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
				bool prolog = j->prolog_hold || p->prolog;

				log_info("job %lld requeued: %s", (long long)j->id, p->result.reason);
				pool_job_release(s->pool, j);
				pool_job_state_set(s->pool, j, JOB_QUEUED);
				/* Most likely the same file system: no pass until
				 * the next check has seen room (not for a prolog). */
				if (!prolog)
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
	/* Always another pass: the one above saw the pool before these
	 * results (a job still counted in max_running, its array's limit,
	 * its CPUs if no job.exited came first); it mostly finds nothing and
	 * commits nothing. */
	s->sched_dirty = true;
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

/* The pass's decisions: the jobs placed, in memory (RUNNING, their
 * CPUs taken), nothing written yet. */
static size_t pass_decide(struct server *s, struct dispatch *d)
{
	size_t n;

	suspend_pass(&s->h);
	n = pool_schedule(s->pool, s->config, d, DISPATCH_BATCH);
	preempt_pass(s);
	return n;
}

/* Their rows, in the transaction open. */
static int pass_write(struct server *s, struct dispatch *d, size_t n, int64_t now)
{
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		char cpus[4096];

		cpumask_format(&d[i].job->alloc[0].cpus, cpus, sizeof(cpus));
		/* Requeued while suspended (its node lost): a new run is not. */
		server_job_suspend_end(&s->h, d[i].job);
		if (d[i].job->fresh)
			r = array_dispatch_record(&s->h, d[i].job, now);
		if (r == 0)
			r = jobstore_job_dispatch(s->store, d[i].job->id, d[i].job->alloc[0].node, cpus,
						  d[i].job->alloc[0].mems, now);
		/* A one-node job's GPUs are kept in its allocation row too. */
		if (r == 0 && (d[i].job->n_alloc > 1 || d[i].job->ngpus))
			r = jobstore_alloc_insert(s->store, d[i].job);
		/* The estimate current when it starts, beside its start. */
		if (r == 0 && d[i].job->est_start && d[i].job->est_seen == s->est_replay)
			r = jobstore_job_estimate_set(s->store, d[i].job->id, false, d[i].job->est_start);
		/* Only a (queue, user)'s last stamp of the batch is kept. */
		if (r == 0 && pool_rotation_get(s->pool, d[i].job->queue, d[i].job->uid) == d[i].seq)
			r = jobstore_rotation_set(s->store, d[i].job->queue, d[i].job->uid, d[i].seq);
	}
	return r;
}

/* Their commit failed (rolled back): back to the queue in memory. */
static void pass_undo(struct server *s, struct dispatch *d, size_t n, int r)
{
	log_err("job store: cannot record dispatches: %s", strerror(-r));
	for (size_t i = 0; i < n; i++) {
		if (d[i].job->fresh) {
			array_dispatch_undo(&s->h, d[i].job);
			continue;
		}
		pool_job_release(s->pool, d[i].job);
		pool_job_state_set(s->pool, d[i].job, JOB_QUEUED);
	}
}

/* Committed: the launches. */
static void pass_apply(struct server *s, struct dispatch *d, size_t n, int64_t now)
{
	for (size_t i = 0; i < n; i++) {
		if (d[i].job->fresh)
			array_dispatch_done(&s->h, d[i].job, now);
		srvjob_launch(s, d[i].job, d[i].node);
		/* after:ID (and after:ARRAY[]) is met once ID starts. */
		depend_job_changed(&s->h, d[i].job->id);
		if (d[i].job->array_id)
			depend_job_changed(&s->h, d[i].job->array_id);
	}
	if (n == DISPATCH_BATCH)
		sd_event_source_set_enabled(s->more_src, SD_EVENT_ONESHOT);
}

/* One scheduling pass: decide, commit every dispatch in one transaction,
 * then send the launches. A crash between commit and send leaves jobs
 * that their node does not know; the node's next registration requeues
 * them. A full batch arms the defer source for another pass after the
 * event loop has looked at its other sources. */
static void schedule_pass(struct server *s)
{
	static struct dispatch d[DISPATCH_BATCH];
	size_t n;
	int64_t now;
	int r;

	/* No room for the launches' files or the dispatch commit: the jobs
	 * stay queued (space.c resumes). */
	if (s->state_full)
		return;
	n = pass_decide(s, d);
	if (n == 0)
		return;
	now = time_wall_ns();
	r = jobstore_begin(s->store);
	if (r == 0)
		r = pass_write(s, d, n, now);
	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0) {
		jobstore_rollback(s->store);
		if (r == -ENOSPC)
			server_space_exhausted(s);
		pass_undo(s, d, n, r);
		return;
	}
	pass_apply(s, d, n, now);
}

/* Start estimates (estimate.c, docs/ESTIMATES.md): a replay beside the
 * pass, not in it, at most every estimate_interval seconds (the 1 s
 * timer runs one that a pass left due). Each job's first estimate is
 * recorded in the store, all of a replay's in one transaction. */
static void estimates_replay(struct server *s, bool timer)
{
	struct pool_estimate_stats st;
	int64_t mono = time_mono_ns();
	uint64_t ns;
	int r;

	if (!s->config->estimate_depth || (timer && !s->est_due))
		return;
	if (s->est_replay && mono - s->est_mono < (int64_t)s->config->estimate_interval * NSEC_PER_SEC) {
		s->est_due = true;
		return;
	}
	s->est_due = false;
	s->est_mono = mono;
	s->est_replay++;
	r = pool_estimate(s->pool, s->config, time(NULL), s->est_replay, &st);
	ns = (uint64_t)(time_mono_ns() - mono);
	s->est_ns_last = ns;
	if (ns > s->est_ns_max)
		s->est_ns_max = ns;
	if (r < 0)
		log_warn("start estimates: %s", strerror(-r));
	if (st.n_fresh) {
		r = jobstore_begin(s->store);
		for (size_t i = 0; i < st.n_fresh && r == 0; i++)
			r = jobstore_job_estimate_set(s->store, st.fresh[i]->id, true, st.fresh[i]->est_first);
		if (r == 0)
			r = jobstore_commit(s->store);
		if (r < 0) {
			jobstore_rollback(s->store);
			log_warn("job store: cannot record %zu first start estimates: %s", st.n_fresh, strerror(-r));
		}
	}
	free(st.fresh);
}

static void schedule(struct server *s)
{
	schedule_pass(s);
	if (!s->state_full)
		estimates_replay(s, false);
}

/* What the parts do at a job's end (job-end.c's server_job_finished,
 * after its dependencies, before its removal from the pool). */
static void job_ended(struct server *s, struct job *j, enum job_state state)
{
	srvjob_ended(s, j, state);
	server_metrics_ended(s, j->queue, state);
	server_job_suspend_end(&s->h, j);
	usage_job_finished(&s->h, j);
}

/* What a signal to a job sets off before it goes to the nodes (node-send.c). */
static void job_signal(struct server *s, struct job *j, int sig)
{
	/* SIGTERM thaws a suspended job (gded): its suspension ends. */
	if (sig == SIGTERM && j->suspended)
		server_job_suspend_end(&s->h, j);
	/* No node has it yet: its server prolog is what runs. */
	if (j->srv_prolog && j->state == JOB_EXITING)
		srvjob_stop(s, j);
}

/* Arrays whose subjobs ended: end those with nothing left. */
static void arrays_due_check(struct server *s)
{
	for (size_t i = 0; i < s->n_array_due; i++) {
		struct job *a = pool_job_find(s->pool, s->array_due[i]);

		if (a && a->array)
			array_check_done(&s->h, a);
	}
	s->n_array_due = 0;
}

/* How long results of jobs that ended may wait for the next pass's
 * commit (issue 39): a job's end and another job's dispatch are then one
 * fdatasync, not two. */
#define LINGER_NS (2 * NSEC_PER_MSEC)

static int linger_handler(sd_event_source *src, uint64_t usec, void *userdata)
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
static bool pending_linger(struct server *s)
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

static int post_handler(sd_event_source *src, void *userdata)
{
	struct server *s = userdata;
	int r;

	if (server_standby(&s->h))
		return 0;
	if (!pending_linger(s)) {
		s->linger_since = 0;
		pending_flush(s, s->sched_dirty);
	}
	if (s->nodes_noted) {
		s->nodes_noted = false;
		r = nodes_known_flush(s->store, s->pool, time_wall_ns());
		if (r < 0)
			log_warn("job store: cannot record registered nodes (%s); a restart before their "
				 "next registration does not know them", strerror(-r));
	}
	arrays_due_check(s);
	depend_recheck(&s->h);
	if (s->sched_dirty) {
		s->sched_dirty = false;
		schedule(s);
	}
	/* The fence refused a write: another server is active. */
	if (jobstore_lease_lost(s->store)) {
		server_step_down(s, "the job store refused a write (lease taken, -ESTALE)");
		return 0;
	}
	/* What this iteration committed, to the watchers. */
	watch_flush(s);
	/* After the replies and launches: a checkpoint (two fsyncs, ~1 ms)
	 * delays no answer that is already out. */
	r = jobstore_checkpoint(s->store);
	if (r < 0)
		log_warn("job store: checkpoint: %s", strerror(-r));
	return 0;
}

/* The last pass was full: run another. Post sources run only after some
 * other source was dispatched, so this one marks the pass due and the post
 * handler, which runs right after it, does it with the group commit. */
static int more_handler(sd_event_source *src, void *userdata)
{
	struct server *s = userdata;

	s->sched_dirty = true;
	return 0;
}

static int timer_handler(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct server *s = userdata;

	conns_check(s);
	if (server_standby(&s->h))
		goto rearm;
	server_space_check(s);
	nodes_check_timeouts(&s->h);
	ties_check(&s->h);
	watch_prune(s);
	watch_flush(s);
	if (pool_deferred_due(s->pool, time(NULL)))
		s->sched_dirty = true;
	/* A preemption's wait is over: its job may take others (preempt.c),
	 * or its suspended victims are thawed, even when nothing else stirs. */
	if (s->preempt_due && time_wall_ns() >= s->preempt_due) {
		s->preempt_due = 0;
		s->sched_dirty = true;
	}
	estimates_replay(s, true);
	resv_tick(&s->h);
rearm:
	sd_event_source_set_time_relative(src, TIMER_USEC);
	sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
	return 0;
}

static int load_job(struct job *j, void *userdata)
{
	struct server *s = userdata;
	const struct queue_conf *q = config_queue(s->config, j->queue);
	int r;

	/* The store keeps a running job's CPUs (claim = cpus: SMT siblings
	 * are not kept); its reserve kind is taken back from its queue. */
	j->reserve = q ? q->reserve : QUEUE_RESERVE_NONE;
	if (j->array_spec && array_load(&s->h, j) < 0) {
		job_free(j);
		return -EINVAL;
	}
	/* Its nodes are down until they register; one that never does within
	 * twice node_timeout is lost and the job requeued or failed. Twice:
	 * after a takeover, a node whose link to the old active was cut
	 * learns it only when its own TCP_USER_TIMEOUT (node_timeout) fires,
	 * counted from the cut, and then walks its server list, each dead
	 * entry costing a connect timeout; this server's clock starts a
	 * lease later. With once, such a node came back seconds too late and
	 * its running jobs were requeued and killed (t-ha-hosts.sh, (c)). */
	/* Suspended when the last server stopped (suspend.c): its gded
	 * keeps it frozen. Its clock apart restarts from now. */
	suspend_load_state(j);
	if (j->suspended)
		j->t_suspend = time_wall_ns();
	r = pool_job_add(s->pool, j);
	/* A preemption's victim (attrs.suspended_by names the preemptor)
	 * lends its CPUs and GPUs to it again and resumes when it ends, as
	 * before. */
	if (r == 0 && j->suspended)
		suspend_loaded(&s->h, j);
	for (unsigned i = 0; r == 0 && i < j->n_alloc; i++)
		if (j->alloc[i].where && !j->alloc[i].where->down_since)
			j->alloc[i].where->down_since = time_mono_ns() +
				(int64_t)s->config->node_timeout * NSEC_PER_SEC;
	if (r == 0)
		depend_loaded(&s->h, j);

	if (r < 0)
		job_free(j);
	return r;
}

static int dir_make(const char *path, mode_t mode, struct error *err)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return error_set(err, -errno, "mkdir %s: %s", path, strerror(errno));
	if (chmod(path, mode) < 0)
		return error_set(err, -errno, "chmod %s: %s", path, strerror(errno));
	return 0;
}

static int store_file_private(const char *db, struct error *err)
{
	static const char *suffix[] = { "", "-wal", "-shm" };
	char path[PATH_MAX + 32];
	int fd;

	fd = open(db, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return error_set(err, -errno, "%s: %s", db, strerror(errno));
	close(fd);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", db, suffix[i]);
		if (chmod(path, 0600) < 0 && errno != ENOENT)
			return error_set(err, -errno, "chmod %s: %s", path, strerror(errno));
	}
	return 0;
}

static int listen_open(struct server *s, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = s->config->socket;
	char dir[PATH_MAX];
	char *slash;
	int fd, r;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return error_set(err, -errno, "mkdir %s: %s", dir, strerror(errno));
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, -errno, "socket: %s", strerror(errno));
	/* A socket file nobody answers on is stale; one that answers is another qpoold. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return error_set(err, -EADDRINUSE, "another qpoold is serving %s", path);
	}
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, -errno, "socket: %s", strerror(errno));
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || listen(fd, SOMAXCONN) < 0) {
		r = error_set(err, -errno, "listen on %s: %s", path, strerror(errno));
		close(fd);
		return r;
	}
	s->listen_fd = fd;
	return 0;
}

int server_state_load(struct server *s)
{
	int r;

	/* The known nodes first: a restarted server accepts what fits them
	 * before they register again (they are down until then). */
	r = nodes_known_load(s->store, s->pool);
	if (r == 0)
		r = jobstore_load_active(s->store, load_job, s);
	if (r == 0)
		r = server_admin_load(s, true);
	if (r == 0) {
		accounts_free(s->accounts);
		s->accounts = NULL;
		r = accounts_load(s->store, &s->accounts);
	}
	if (r == 0) {
		qos_free(s->qos);
		s->qos = NULL;
		r = qos_load(s->store, &s->qos);
	}
	if (r == 0) {
		accounts_apply(s->accounts, s->pool);
		qos_apply(s->qos, s->pool);
		r = usage_load(&s->h);
	}
	if (r == 0) {
		resvs_free(s->resvs);
		s->resvs = NULL;
		r = resvs_load(s->store, &s->resvs);
		if (r == 0)
			r = resvs_apply(s->resvs, s->pool);
		if (r == 0)
			resv_tick(&s->h);   /* one that ended while no server ran moves on now */
	}
	if (r == 0)
		array_loaded(&s->h);
	return r;
}

int server_create(sd_event *e, struct config *config, struct server **ret, struct error *err)
{
	struct server *s;
	char path[PATH_MAX + 16];
	int r;

	s = calloc(1, sizeof(*s));
	if (!s) {
		config_destroy(config);
		return error_set(err, -ENOMEM, "out of memory");
	}
	s->event = sd_event_ref(e);
	s->conn_message_f = conn_message;
	s->conn_closed_f = conn_closed;
	s->job_ended_f = job_ended;
	s->job_signal_f = job_signal;
	s->state_load_f = server_state_load;
	s->filter_pass_f = request_run;
	s->config = config;
	/* Until the store's is read at the takeover (server-lease.c). */
	jobid_server_name(config->server_name, s->pool_name, sizeof(s->pool_name));
	s->listen_fd = -1;
	s->tcp_fd = -1;
	s->pending_tail = &s->pending;
	/* One fd per client or node: as many as the hard limit allows. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
			(void)getrlimit(RLIMIT_NOFILE, &rl);
			s->max_conns = rl.rlim_cur > 128 ? (unsigned)(rl.rlim_cur - 64) : 64;
		} else {
			s->max_conns = 960;
		}
		s->root_reserve = conns_root_reserve(s->max_conns);
	}
	/* A hook no one may run is refused here, before anything is opened:
	 * one line, and qpoold does not start. */
	r = srvhooks_config_check(config, err);
	if (r < 0)
		goto done;
	r = peers_create(&s->peers);
	if (r == 0)
		r = gate_create(&s->gate);
	if (r == 0)
		r = srvhooks_create(e, &s->hooks);
	if (r < 0) {
		error_set(err, r, "out of memory");
		goto done;
	}

	/* 0711: users reach their own job files by name, list nothing. */
	r = dir_make(config->state_dir, 0711, err);
	if (r < 0)
		goto done;
	if (config->store == CONFIG_STORE_POSTGRESQL) {
		r = jobstore_open(JOBSTORE_POSTGRESQL, config->store_dsn, &s->store, err);
	} else {
		snprintf(path, sizeof(path), "%s/qpool.db", config->state_dir);
		/* The store holds every user's scripts and environments, and a
		 * user who knows its name can open it despite the 0711
		 * directory: 0600. SQLite gives -wal and -shm the mode of the
		 * database file. */
		r = store_file_private(path, err);
		if (r == 0)
			r = jobstore_open(JOBSTORE_SQLITE, path, &s->store, err);
	}
	if (r < 0)
		goto done;
	r = pool_create(&s->pool);
	if (r == 0)
		usage_configure(&s->h);
	if (r < 0) {
		error_set(err, r, "out of memory");
		goto done;
	}
	/* Jobs and settings are loaded when this server takes the lease
	 * (server_state_load); until then it is a standby. */
	server_space_check(s);
	r = listen_open(s, err);
	if (r < 0)
		goto done;
	if (config->listen[0]) {
		/* Every TCP peer authenticates with munged: without one, no
		 * TCP peer could ever be served. */
		r = auth_probe(config->munge_socket, err);
		if (r == 0)
			r = transport_listen_tcp(config->listen, &s->tcp_fd, err);
		if (r < 0)
			goto done;
		r = sd_event_add_io(e, &s->tcp_src, s->tcp_fd, EPOLLIN, listen_io, s);
		if (r < 0) {
			error_set(err, r, "event loop: %s", strerror(-r));
			goto done;
		}
	}
	r = sd_event_add_io(e, &s->listen_src, s->listen_fd, EPOLLIN, listen_io, s);
	if (r >= 0)
		r = sd_event_add_post(e, &s->post_src, post_handler, s);
	if (r >= 0)
		r = sd_event_add_defer(e, &s->more_src, more_handler, s);
	if (r >= 0)
		r = sd_event_source_set_enabled(s->more_src, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_time_relative(e, &s->timer_src, CLOCK_MONOTONIC, TIMER_USEC, 0, timer_handler, s);
	/* 1 us accuracy: sd-event's default (0) would let it slip 250 ms. */
	if (r >= 0)
		r = sd_event_add_time_relative(e, &s->linger_src, CLOCK_MONOTONIC, LINGER_NS / 1000, 1,
					       linger_handler, s);
	if (r >= 0)
		r = sd_event_source_set_enabled(s->linger_src, SD_EVENT_OFF);
	if (r < 0) {
		error_set(err, r, "event loop: %s", strerror(-r));
		goto done;
	}
	/* Before the lease: a server that cannot serve the metrics it was
	 * told to never becomes the active one (docs/METRICS.md). */
	r = server_metrics_start(s, err);
	if (r < 0)
		goto done;
	r = server_lease_start(s, err);
done:
	if (r < 0) {
		server_destroy(s);
		return r;
	}
	*ret = s;
	return 0;
}

void server_destroy(struct server *s)
{
	if (!s)
		return;
	/* Node events noted before the stop are kept (the lease still held). */
	watch_notes_flush(s);
	s->stopping = true;
	/* Hooks in flight are killed, their requests never committed. */
	srvhooks_destroy(s->hooks);
	s->hooks = NULL;
	/* Replies that wait for a commit: commit them now, so nothing acknowledged is lost. */
	pending_flush(s, false);
	/* A clean stop hands the lease on at once. */
	server_lease_stop(s);
	/* Completions still without room: their nodes send them again. */
	for (struct pending *p = s->retry, *next; p; p = next) {
		next = p->next;
		conn_unref(p->conn);
		json_decref(p->strings);
		nodesel_destroy(p->sel);
		free(p->gpu_model);
		free(p);
	}
	s->retry = NULL;
	free(s->array_due);
	while (s->conns)
		conn_close(s->conns);
	server_metrics_stop(s);
	accounts_free(s->accounts);
	qos_free(s->qos);
	resvs_free(s->resvs);
	sd_event_source_disable_unref(s->listen_src);
	sd_event_source_disable_unref(s->tcp_src);
	if (s->tcp_fd >= 0)
		close(s->tcp_fd);
	sd_event_source_disable_unref(s->post_src);
	sd_event_source_disable_unref(s->more_src);
	sd_event_source_disable_unref(s->timer_src);
	sd_event_source_disable_unref(s->linger_src);
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		unlink(s->config->socket);
	}
	task_routes_destroy(&s->h);
	ties_destroy(&s->h);
	watch_destroy(s);
	depend_destroy(&s->h);
	pool_destroy(s->pool);
	peers_destroy(s->peers);
	gate_destroy(s->gate);
	jobstore_close(s->store);
	config_destroy(s->config);
	sd_event_unref(s->event);
	free(s);
}
