/* SPDX-License-Identifier: MIT */
/* Suspend and resume (docs/PREEMPTION.md): an admin's (scontrol
 * suspend/resume, qsig -s suspend/resume) or a preemption's. The job's
 * gded freezes its cgroup and stops its walltime clock; the job stays
 * running for the pool, its memory counted; a preempted one lends its
 * CPUs and GPUs to its preemptor and takes them back, before any other
 * job can, when that one has ended. Time suspended is kept apart
 * (attrs.suspended_ns) and not charged to its user's share. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "fairshare.h"
#include "hctx.h"
#include "job-end.h"
#include "jobstore-internal.h"
#include "jobstore.h"
#include "log.h"
#include "node-send.h"
#include "ops.h"
#include "pool.h"
#include "suspend.h"
#include "timeutil.h"
#include "wire.h"

static int attrs_row(const struct jobstore_row *r, void *ud)
{
	char **ret = ud;

	if (!*ret && row_text(r, 0))
		*ret = strdup(row_text(r, 0));
	return 0;
}

int job_attrs_update(struct hctx *s, int64_t id, int (*fn)(json_t *attrs, void *ud), void *ud)
{
	static const struct jobstore_sql upd[] = { { "UPDATE jobs SET attrs = $1 WHERE id = $2", 2 } };
	struct jobstore_ev_params p = { .n = 1 };
	char *text = NULL, *out;
	json_t *attrs;
	int r;

	p.v[0].i = id;
	r = jobstore_sql_rows(s->store, "SELECT attrs FROM jobs WHERE id = $1", &p, attrs_row, &text);
	if (r < 0)
		return r;
	attrs = text ? json_loads(text, 0, NULL) : json_object();
	free(text);
	if (!json_is_object(attrs)) {
		json_decref(attrs);
		attrs = json_object();
	}
	r = fn(attrs, ud);
	out = r == 0 ? json_dumps(attrs, JSON_COMPACT) : NULL;
	json_decref(attrs);
	if (r < 0)
		return r;
	if (!out)
		return -ENOMEM;
	p = (struct jobstore_ev_params){ .n = 2 };
	p.v[0].text = out;
	p.v[0].is_text = true;
	p.v[1].i = id;
	r = jobstore_sql_write(s->store, upd, 1, &p);
	free(out);
	return r;
}

/* Thawed (resumed, or its run ended): its time suspended added, and no
 * longer suspended for a restarted qpoold. */
static int suspended_add(json_t *attrs, void *ud)
{
	int64_t add = *(const int64_t *)ud;

	(void)json_object_del(attrs, "suspended_by");
	if (!add)
		return 0;
	return json_object_set_new(attrs, "suspended_ns",
				   json_integer(json_integer_value(json_object_get(attrs, "suspended_ns")) + add));
}

/* Frozen: attrs.suspended_by, the preemptor's id ("0": an admin's), which
 * the active load reads back (jobstore-rows.c): the comment is the
 * people's text and may be changed. */
static int suspended_mark(json_t *attrs, void *ud)
{
	char by[24];

	snprintf(by, sizeof(by), "%lld", (long long)*(const int64_t *)ud);
	return json_object_set_new(attrs, "suspended_by", json_string(by));
}

/* A transaction of its own unless one is open; its end. */
static bool own_begin(struct hctx *s, int *r)
{
	bool own = !jobstore_in_tx(s->store);

	*r = own ? jobstore_begin(s->store) : 0;
	return own;
}

static int own_end(struct hctx *s, bool own, int r)
{
	if (own && r == 0)
		r = jobstore_commit(s->store);
	if (own && r < 0)
		jobstore_rollback(s->store);
	return r;
}

/* The suspension's record, one transaction: attrs.suspended_by and the
 * comment. */
static int suspend_record(struct hctx *s, struct job *j, int64_t by, const char *why)
{
	int r;
	bool own = own_begin(s, &r);

	if (r == 0)
		r = job_attrs_update(s, j->id, suspended_mark, &by);
	if (r == 0)
		r = jobstore_job_set_state(s->store, j->id, JOB_RUNNING, why);
	return own_end(s, own, r);
}

int server_job_suspend(struct hctx *s, struct job *j, int64_t by, const char *who)
{
	char why[128];

	if (j->state != JOB_RUNNING)
		return -EBUSY;
	if (j->suspended)
		return -EALREADY;
	if (!node_signal(s, j, WIRE_SIG_SUSPEND))
		return -EHOSTUNREACH;
	j->suspended = true;
	j->t_suspend = time_wall_ns();
	j->suspended_by = by;
	/* The comment says so for people; attrs.suspended_by for a
	 * restarted qpoold. */
	snprintf(why, sizeof(why), "suspended by %s", who);
	if (suspend_record(s, j, by, why) < 0)
		log_warn("job %lld: cannot record its suspension", (long long)j->id);
	if (by) {
		for (unsigned i = 0; i < j->n_alloc; i++)
			pool_entry_lend(s->pool, &j->alloc[i]);
		s->n_lent++;
	}
	log_info("job %lld: suspended by %s", (long long)j->id, who);
	hctx_resched(s);
	return 0;
}

bool server_job_resumable(const struct job *j)
{
	for (unsigned i = 0; i < j->n_alloc; i++)
		if (!pool_entry_lent_free(&j->alloc[i]))
			return false;
	return true;
}

/* The time it was suspended: kept in its record (attrs.suspended_by
 * removed in the same write), given back to its user. */
static int suspended_account(struct hctx *s, struct job *j)
{
	int64_t now = time_wall_ns(), spent = now - j->t_suspend;
	double fnow = pool_fairshare_now(s->pool);
	int r;

	if (spent < 0)
		spent = 0;
	j->suspended_ns += spent;
	r = job_attrs_update(s, j->id, suspended_add, &spent);
	if (r < 0)
		log_warn("job %lld: cannot record its time suspended", (long long)j->id);
	if (spent)
		pool_usage_adjust(s->pool, j->uid, -(double)spent / 1e9 * pool_usage_weight(s->pool, j), fnow);
	return r;
}

int server_job_resume(struct hctx *s, struct job *j, const char *who)
{
	bool own;
	int r;

	if (!j->suspended)
		return -EALREADY;
	if (j->state != JOB_RUNNING)
		return -EBUSY;
	if (!server_job_resumable(j))
		return -EADDRINUSE;
	if (!node_signal(s, j, WIRE_SIG_RESUME))
		return -EHOSTUNREACH;
	for (unsigned i = 0; i < j->n_alloc; i++)
		pool_entry_reclaim(s->pool, &j->alloc[i]);
	/* Its time suspended, attrs.suspended_by removed and the comment
	 * cleared: one transaction. */
	own = own_begin(s, &r);
	if (r == 0)
		r = suspended_account(s, j);
	if (r == 0)
		r = jobstore_job_set_state(s->store, j->id, JOB_RUNNING, NULL);
	if (own_end(s, own, r) < 0)
		log_warn("job %lld: cannot record its resumption", (long long)j->id);
	if (j->suspended_by && s->n_lent)
		s->n_lent--;
	j->suspended = false;
	j->suspended_by = 0;
	j->preempted = false;
	log_info("job %lld: resumed by %s", (long long)j->id, who);
	return 0;
}

void suspend_load_state(struct job *j)
{
	long long by;

	if (j->state != JOB_RUNNING) {
		j->suspended = false;
		j->suspended_by = 0;
		return;
	}
	/* attrs.suspended_by, read by the active load: suspended, by it. */
	if (j->suspended)
		return;
	/* Upgrade path: a store written before attrs.suspended_by kept the
	 * suspension only in the comment server_job_suspend wrote ("suspended
	 * by uid 0", "suspended by preemption (job N)"); read it for such a
	 * job, once, as it is loaded. Its next suspension or resumption
	 * writes attrs.suspended_by (or removes it), and the comment is never
	 * read again for it. */
	if (!j->reason || strncmp(j->reason, "suspended by", 12) != 0)
		return;
	j->suspended = true;
	if (sscanf(j->reason, "suspended by preemption (job %lld)", &by) == 1 && by > 0)
		j->suspended_by = by;
}

void suspend_loaded(struct hctx *s, struct job *j)
{
	if (!j->suspended || j->suspended_by <= 0)
		return;
	for (unsigned i = 0; i < j->n_alloc; i++)
		pool_entry_lend(s->pool, &j->alloc[i]);
	s->n_lent++;
}

void server_job_suspend_end(struct hctx *s, struct job *j)
{
	if (!j->suspended)
		return;
	(void)suspended_account(s, j);
	if (j->suspended_by && s->n_lent)
		s->n_lent--;
	j->suspended = false;
	j->suspended_by = 0;
}

void suspend_pass(struct hctx *s)
{
	/* Before any job is placed: a victim whose preemptor has ended takes
	 * its CPUs back first. */
	if (!s->n_lent)
		return;
	for (struct node *n = pool_nodes(s->pool); n; n = n->next)
		for (struct alloc_entry *e = pool_node_jobs(n), *next; e; e = next) {
			struct job *j = e->job, *by;
			int64_t was = j->suspended_by;

			next = e->nnext;
			if (!j->suspended || !was || j->state != JOB_RUNNING)
				continue;
			/* Its preemptor runs, or waits to start (no longer than
			 * its preemption's wait: then it did not get the room).
			 * An array stays queued while it has subjobs: the one
			 * that took the room ends, the room is free, and it
			 * resumes (server_job_resume refuses while the room is
			 * in use), though other subjobs run on. */
			by = pool_job_find(s->pool, was);
			if (by && (by->state == JOB_RUNNING || by->state == JOB_EXITING ||
				   (by->state == JOB_QUEUED && by->preempt_until > time_wall_ns())))
				continue;
			if (server_job_resume(s, j, "the end of its preemptor") == 0)
				log_info("job %lld: resumed, its preemptor %lld%s has ended", (long long)j->id,
					 (long long)was, by && by->array ? "'s subjob" : "");
		}
}

/* suspend (scontrol suspend, qsig -s suspend) and resume: root only, as
 * Slurm allows only operators and PBS managers. */
void op_suspend(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	bool resume = wire_bool(msg, "resume", 0);
	struct job *j;
	char who[64];
	int r;

	if (c->uid != 0) {
		conn_reply_err(c, req_id, EPERM, "only root may %s jobs", resume ? "resume" : "suspend");
		return;
	}
	j = job_for_change(c, req_id, msg);
	if (!j)
		return;
	snprintf(who, sizeof(who), "uid %d", (int)c->uid);
	r = resume ? server_job_resume(s, j, who) : server_job_suspend(s, j, 0, who);
	switch (r) {
	case 0:
		conn_reply_ok(c, req_id, json_pack("{s:s}", "state", resume ? "running" : "suspended"));
		return;
	case -EALREADY:
		conn_reply_err(c, req_id, EALREADY, "job %lld is %s", (long long)j->id,
			       resume ? "not suspended" : "already suspended");
		return;
	case -EBUSY:
		conn_reply_err(c, req_id, EBUSY, "job %lld is %s; only running jobs can be %s", (long long)j->id,
			       job_state_name(j->state), resume ? "resumed" : "suspended");
		return;
	case -EADDRINUSE:
		conn_reply_err(c, req_id, EBUSY, "job %lld: its CPUs are in use by job %lld, which preempted it; "
			       "it resumes when that job ends", (long long)j->id, (long long)j->suspended_by);
		return;
	case -EHOSTUNREACH:
		conn_reply_err(c, req_id, EHOSTUNREACH, "job %lld: node %s is down", (long long)j->id,
			       job_node(j) ? job_node(j) : "?");
		return;
	default:
		conn_reply_err(c, req_id, -r, "job %lld: %s", (long long)j->id, strerror(-r));
	}
}
