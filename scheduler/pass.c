/* SPDX-License-Identifier: MIT */
/* The scheduling pass: its decisions in memory (pass_decide), their rows
 * in a transaction someone else opened (pass_write), undone when that
 * transaction fails (pass_undo) or the launches once it is committed
 * (pass_apply); a pass of its own (pass_schedule) and the start
 * estimates' replay beside it. Below the group commit (commit.c), which
 * joins a pass to the results' transaction. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "log.h"
#include "node-send.h"
#include "pass.h"
#include "preempt.h"
#include "server-internal.h"
#include "srvjob.h"
#include "suspend.h"
#include "timeutil.h"

/* The pass's decisions: the jobs placed, in memory (RUNNING, their
 * CPUs taken), nothing written yet. */
size_t pass_decide(struct server *s, struct dispatch *d)
{
	size_t n;

	suspend_pass(&s->h);
	n = pool_schedule(s->pool, s->config, d, DISPATCH_BATCH);
	preempt_pass(s);
	return n;
}

/* The placements alone, inside the group commit's transaction with the
 * submits it places (commit.c): no resumes (it runs only when no victim's
 * room is lent, so suspend_pass would do nothing) and no preemption,
 * whose writes and signals a failed commit would not undo; the pass that
 * a flush always leaves due runs them, in the same loop iteration. */
size_t pass_place(struct server *s, struct dispatch *d)
{
	return pool_schedule(s->pool, s->config, d, DISPATCH_BATCH);
}

/* What pass_decide does after the placements, for a pass that
 * pass_place began and whose commit is done: the preemptions (their
 * writes are transactions of their own). */
void pass_finish(struct server *s)
{
	preempt_pass(s);
}

/* Their rows, in the transaction open. */
int pass_write(struct server *s, struct dispatch *d, size_t n, int64_t now)
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

/* Their rows written, in the transaction not yet committed: the launches
 * that may go now, held by their nodes until the commit (pass_apply
 * releases them, pass_undo drops them). The commit's wait for the disk
 * then overlaps the launch's files, fork and fence (issue 39). Not after
 * a failed commit: the next is likely to fail too. */
void pass_launch_early(struct server *s, struct dispatch *d, size_t n)
{
	if (s->commit_failed)
		return;
	for (size_t i = 0; i < n; i++)
		d[i].gated = srvjob_launch_gated(s, d[i].job, d[i].node);
}

/* Their commit failed (rolled back): back to the queue in memory, a
 * launch sent early dropped on its node (nothing of the job ran). */
void pass_undo(struct server *s, struct dispatch *d, size_t n, int r)
{
	log_err("job store: cannot record dispatches: %s", strerror(-r));
	s->commit_failed = true;
	for (size_t i = 0; i < n; i++) {
		if (d[i].gated)
			node_release(d[i].job, d[i].node, false);
		if (d[i].job->fresh) {
			array_dispatch_undo(&s->h, d[i].job);
			continue;
		}
		pool_job_release(s->pool, d[i].job);
		pool_job_state_set(s->pool, d[i].job, JOB_QUEUED);
	}
}

/* Committed: the launches, or the release of those sent early. */
void pass_apply(struct server *s, struct dispatch *d, size_t n, int64_t now)
{
	s->commit_failed = false;
	for (size_t i = 0; i < n; i++) {
		if (d[i].job->fresh)
			array_dispatch_done(&s->h, d[i].job, now);
		if (d[i].gated)
			node_release(d[i].job, d[i].node, true);
		else
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
	if (r == 0) {
		pass_launch_early(s, d, n);
		r = jobstore_commit(s->store);
	}
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
void estimates_replay(struct server *s, bool timer)
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

void pass_schedule(struct server *s)
{
	schedule_pass(s);
	if (!s->state_full)
		estimates_replay(s, false);
}
