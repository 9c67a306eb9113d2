/* SPDX-License-Identifier: MIT */
/* Preemption (docs/PREEMPTION.md): after a pass, the first job a queue
 * with `preempts` passed over for room takes a node from running jobs of
 * the queues it preempts: each gets its notice signal, and after its
 * queue's preempt_grace is requeued (a new attempt, the same id) or
 * cancelled; the preempting job starts in the pass after they end. An
 * array preempts for its next subjob, one subjob's room a round. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairshare.h"
#include "jobstore-internal.h"
#include "log.h"
#include "parse.h"
#include "preempt.h"
#include "qos-pool.h"
#include "qos.h"
#include "reslimits.h"
#include "server-internal.h"
#include "suspend.h"
#include "timeutil.h"

#define VICTIMS_MAX 64

struct preempt_timer {
	struct server *s;
	int64_t victim, by;
};

static int attrs_row(const struct jobstore_row *r, void *ud)
{
	char **ret = ud;

	if (!*ret && row_text(r, 0))
		*ret = strdup(row_text(r, 0));
	return 0;
}

/* The job's notice signal (-l signal=[B:]SIG[@S], sbatch --signal), or 0. */
static int notice_signal(struct server *s, int64_t id)
{
	struct jobstore_ev_params p = { .n = 1 };
	char *text = NULL, name[32];
	const char *sig;
	json_t *attrs;
	int r = 0;

	p.v[0].i = id;
	if (jobstore_sql_rows(s->store, "SELECT attrs FROM jobs WHERE id = $1", &p, attrs_row, &text) < 0 || !text)
		return 0;
	attrs = json_loads(text, 0, NULL);
	sig = json_string_value(json_object_get(attrs, "Resource_List.signal"));
	if (sig) {
		if (!strncmp(sig, "B:", 2))
			sig += 2;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(sig, "@"), sig);
		r = signal_parse(name);
	}
	json_decref(attrs);
	free(text);
	return r > 0 ? r : 0;
}

/* v gives way now: requeued (a rerunnable job of a requeue queue) or
 * cancelled, its CPUs back when its node reports it gone. */
static void preempt_end(struct server *s, struct job *v, int64_t by)
{
	const struct queue_conf *vq = config_queue(s->config, v->queue);
	char why[96];
	int r;

	snprintf(why, sizeof(why), "preempted by job %lld", (long long)by);
	/* Frozen on its node, its CPUs and GPUs lent to by until it ends
	 * (suspend.c); a job that cannot be frozen now is requeued. Its
	 * queue's preempt_mode or its QOS's PreemptMode says so. */
	if (vq && (vq->preempt_mode == QUEUE_PREEMPT_SUSPEND || pool_qos_suspends(s->pool, v->qos))) {
		char who[64];

		snprintf(who, sizeof(who), "preemption (job %lld)", (long long)by);
		r = server_job_suspend(&s->h, v, by, who);
		if (r == 0)
			return;
		log_warn("job %lld: cannot suspend it for job %lld: %s", (long long)v->id, (long long)by, strerror(-r));
	}
	/* (A victim's QOS of PreemptMode=cancel cancels too: docs/QOS.md.) */
	if (!vq || vq->preempt_mode == QUEUE_PREEMPT_CANCEL || !v->rerunnable || qos_preempt_cancels(s->qos, v->qos)) {
		log_info("job %lld: %s: cancelled", (long long)v->id, why);
		(void)server_job_cancel(&s->h, v, why);
		return;
	}
	/* The time it ran is not charged to its user's share: it is run
	 * again (docs/FAIRSHARE.md). Taken while it still counts as running. */
	if (v->t_dispatch) {
		double now = pool_fairshare_now(s->pool), ran = now - (double)v->t_dispatch / 1e9;

		if (ran > 0) {
			pool_usage_adjust(s->pool, v->uid, -ran * pool_usage_weight(s->pool, v), now);
			pool_acct_usage_adjust(s->pool, v, -ran, now);   /* nor to its budget */
		}
	}
	r = server_job_requeue(&s->h, v, why);
	if (r < 0)
		log_err("job %lld: cannot record its preemption: %s", (long long)v->id, strerror(-r));
	else
		log_info("job %lld: %s: requeued", (long long)v->id, why);
}

static int grace_over(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct preempt_timer *t = userdata;
	struct job *v = pool_job_find(t->s->pool, t->victim);

	if (v && v->state == JOB_RUNNING)
		preempt_end(t->s, v, t->by);
	sd_event_source_disable_unref(src);
	free(t);
	return 0;
}

static void preempt_victim(struct server *s, struct job *v, int64_t by)
{
	const struct queue_conf *vq = config_queue(s->config, v->queue);
	int sig = vq && vq->preempt_grace ? notice_signal(s, v->id) : 0;
	struct preempt_timer *t;

	v->preempted = true;
	log_info("job %lld (queue %s): gives way to job %lld", (long long)v->id, v->queue, (long long)by);
	/* Its own notice signal first, its queue's grace to act on it. */
	/* (SIGRTMIN + sig: gded forwards it to the job, as for qsig.) */
	if (sig && node_signal(&s->h, v, SIGRTMIN + sig) && (t = malloc(sizeof(*t)))) {
		*t = (struct preempt_timer){ s, v->id, by };
		if (sd_event_add_time_relative(s->event, NULL, CLOCK_MONOTONIC, vq->preempt_grace * 1000000ULL, 0,
					       grace_over, t) >= 0)
			return;
		free(t);
	}
	preempt_end(s, v, by);
}

void preempt_pass(struct server *s)
{
	int64_t now = time_wall_ns();

	s->preempt_due = 0;
	for (size_t i = 0; i < s->config->n_queues; i++) {
		const struct queue_conf *q = &s->config->queues[i];
		struct job *victims[VICTIMS_MAX], *j, *sub = NULL;
		int64_t id, wait = 0, pos;
		size_t n;

		if (!q->started || !(id = pool_queue_blocked(s->pool, q->name)))
			continue;
		j = pool_job_find(s->pool, id);
		/* A queue that preempts, or a job whose QOS does (docs/QOS.md). */
		if (!j || (!q->preempts[0] && !pool_qos_preempts_any(s->pool, j->qos)))
			continue;
		/* One preemption for a job (an array) at a time: a pass when
		 * its wait is over (server.c's timer), whatever else happens. */
		if (j && j->state == JOB_QUEUED && j->preempt_until > now &&
		    (!s->preempt_due || j->preempt_until < s->preempt_due))
			s->preempt_due = j->preempt_until;
		if (!j || j->state != JOB_QUEUED || j->start_after * 1000000000 > now || j->preempt_until > now)
			continue;
		/* An array: its next waiting subjob's room, one subjob a
		 * round (the pass makes the subjob it places the same way). */
		if (j->array) {
			if ((pos = pool_array_next_waiting(j, 0)) < 0 || !(sub = pool_subjob_make(j, pos)))
				continue;
		}
		n = place_preempt_pick(s->pool, s->config, q, sub ? sub : j, now, victims, VICTIMS_MAX);
		if (sub)
			job_free(sub);
		if (!n)
			continue;
		for (size_t k = 0; k < n; k++) {
			const struct queue_conf *vq = config_queue(s->config, victims[k]->queue);

			if (vq && (int64_t)vq->preempt_grace > wait)
				wait = (int64_t)vq->preempt_grace;
			preempt_victim(s, victims[k], j->id);
		}
		/* Its victims' grace, their kill grace and a margin: then it
		 * may take others if these did not free what it needs. */
		j->preempt_until = now + (wait + (int64_t)s->config->kill_grace + 10) * 1000000000;
		if (!s->preempt_due || j->preempt_until < s->preempt_due)
			s->preempt_due = j->preempt_until;
	}
}
