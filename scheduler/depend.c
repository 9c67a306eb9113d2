/* SPDX-License-Identifier: MIT */
/* Job dependencies in the server: -W depend at submit, holding, releasing, and the reason one can never be met. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depend.h"
#include "deps.h"
#include "hctx.h"
#include "jobstore.h"
#include "log.h"
#include "pool.h"
#include "timeutil.h"

/* PBS Pro holds such a job with a system hold; its comment says why. */
#define DEPEND_WAIT_REASON "waiting on dependencies"

/* The index from a job to the jobs that wait on it, so an event costs
 * the waiters of the job that changed, not every waiting job: one user's
 * 3,000 held jobs of 64 afterok items each cost ~7 s of server CPU per
 * dispatch or end when every event re-decided all of them and read every
 * ended item back from the store (issue 29). */

/* One after* item of a waiting job, an edge from the job it names (its
 * target) to the waiter. A waiter's edges are one block (j->dep_edges). */
struct dep_edge {
	struct job *waiter;
	struct dep_target *target;
	enum depend_type type;            /* the after* form */
	bool array;                       /* "ID[]", for the reason's text */
	struct dep_edge *tnext, *tprev;   /* the target's waiters */
};

/* A job some waiting job names: who waits on it, and its end once read
 * (a final row does not change: read once, not once per waiter). */
struct dep_target {
	int64_t id;
	struct dep_edge *waiters;
	bool ended;
	enum job_state state;
	bool ran;                         /* it had been dispatched */
	struct dep_target *hnext;         /* hash chain */
};

struct depend_index {
	struct dep_target **buckets;
	size_t cap;                       /* a power of two, or 0 */
	size_t n;                         /* targets */
	struct job *due;                  /* waiters to decide at the next recheck */
	uint64_t waiting;                 /* tracked jobs */
	uint64_t decided;
};

static struct depend_index *index_get(struct hctx *s)
{
	if (!s->deps)
		s->deps = calloc(1, sizeof(*s->deps));
	return s->deps;
}

void depend_destroy(struct hctx *s)
{
	struct depend_index *x = s->deps;

	if (!x)
		return;
	/* The edges are the jobs' (job_free frees them). */
	for (size_t b = 0; b < x->cap; b++)
		for (struct dep_target *t = x->buckets[b], *next; t; t = next) {
			next = t->hnext;
			free(t);
		}
	free(x->buckets);
	free(x);
	s->deps = NULL;
}

static size_t bucket_of(int64_t id, size_t cap)
{
	return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> 32) & (cap - 1);
}

static struct dep_target *target_find(const struct depend_index *x, int64_t id)
{
	if (!x || !x->cap)
		return NULL;
	for (struct dep_target *t = x->buckets[bucket_of(id, x->cap)]; t; t = t->hnext)
		if (t->id == id)
			return t;
	return NULL;
}

static int index_grow(struct depend_index *x)
{
	size_t cap = x->cap ? 2 * x->cap : 64;
	struct dep_target **b = calloc(cap, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < x->cap; i++)
		for (struct dep_target *t = x->buckets[i], *next; t; t = next) {
			size_t k = bucket_of(t->id, cap);

			next = t->hnext;
			t->hnext = b[k];
			b[k] = t;
		}
	free(x->buckets);
	x->buckets = b;
	x->cap = cap;
	return 0;
}

static struct dep_target *target_get(struct depend_index *x, int64_t id)
{
	struct dep_target *t = target_find(x, id);
	size_t k;

	if (t)
		return t;
	if (x->n >= x->cap && index_grow(x) < 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->id = id;
	k = bucket_of(id, x->cap);
	t->hnext = x->buckets[k];
	x->buckets[k] = t;
	x->n++;
	return t;
}

static void target_drop(struct depend_index *x, struct dep_target *t)
{
	struct dep_target **pp = &x->buckets[bucket_of(t->id, x->cap)];

	while (*pp != t)
		pp = &(*pp)->hnext;
	*pp = t->hnext;
	x->n--;
	free(t);
}

static void due_add(struct depend_index *x, struct job *j)
{
	if (j->dep_due)
		return;
	j->dep_due = true;
	j->dprev = NULL;
	j->dnext = x->due;
	if (x->due)
		x->due->dprev = j;
	x->due = j;
}

static void due_remove(struct depend_index *x, struct job *j)
{
	if (!j->dep_due)
		return;
	if (j->dprev)
		j->dprev->dnext = j->dnext;
	else
		x->due = j->dnext;
	if (j->dnext)
		j->dnext->dprev = j->dprev;
	j->dnext = j->dprev = NULL;
	j->dep_due = false;
}

/* Takes j out of the index: no longer decided; dep_wait stays as it is. */
static void untrack(struct hctx *s, struct job *j)
{
	struct depend_index *x = s->deps;

	if (!x || !j->dep_tracked)
		return;
	due_remove(x, j);
	for (unsigned i = 0; i < j->n_dep_edges; i++) {
		struct dep_edge *e = &j->dep_edges[i];

		if (e->tprev)
			e->tprev->tnext = e->tnext;
		else
			e->target->waiters = e->tnext;
		if (e->tnext)
			e->tnext->tprev = e->tprev;
		if (!e->target->waiters)
			target_drop(x, e->target);
	}
	free(j->dep_edges);
	j->dep_edges = NULL;
	j->n_dep_edges = 0;
	j->dep_tracked = false;
	x->waiting--;
}

void depend_track(struct hctx *s, struct job *j)
{
	struct depend_index *x = index_get(s);
	struct depend_list d = { .n = 0 };
	unsigned n = 0;

	j->dep_wait = true;
	if (!x)
		goto oom;
	/* Again (a before* added an item): the edges are made anew. */
	untrack(s, j);
	if (j->depend && depend_parse(j->depend, &d, NULL) < 0)
		d.n = 0;
	for (size_t i = 0; i < d.n; i++)
		n += d.items[i].type < DEPEND_BEFORE;
	if (n && !(j->dep_edges = calloc(n, sizeof(*j->dep_edges))))
		goto oom;
	j->dep_tracked = true;
	x->waiting++;
	for (size_t i = 0; i < d.n; i++) {
		struct dep_edge *e = &j->dep_edges[j->n_dep_edges];

		if (d.items[i].type >= DEPEND_BEFORE)
			continue;
		e->target = target_get(x, d.items[i].id);
		if (!e->target) {
			untrack(s, j);
			goto oom;
		}
		e->waiter = j;
		e->type = depend_type_after(d.items[i].type);
		e->array = d.items[i].array;
		e->tnext = e->target->waiters;
		if (e->tnext)
			e->tnext->tprev = e;
		e->target->waiters = e;
		j->n_dep_edges++;
	}
	due_add(x, j);
	return;
oom:
	log_err("job %lld: out of memory: held for its dependencies until qpoold restarts", (long long)j->id);
}

void depend_forget(struct hctx *s, struct job *j)
{
	untrack(s, j);
	j->dep_wait = false;
}

void depend_job_changed(struct hctx *s, int64_t id)
{
	struct dep_target *t = target_find(s->deps, id);

	for (struct dep_edge *e = t ? t->waiters : NULL; e; e = e->tnext)
		due_add(s->deps, e->waiter);
}

bool depend_has_waiters(struct hctx *s, int64_t id)
{
	struct dep_target *t = s->deps ? target_find(s->deps, id) : NULL;

	return t && t->waiters;
}

void depend_stats(const struct hctx *s, struct depend_stats *ret)
{
	ret->decided = s->deps ? s->deps->decided : 0;
	ret->waiting = s->deps ? s->deps->waiting : 0;
}

bool depend_is_reason(const char *reason)
{
	return reason && (strncmp(reason, DEPEND_WAIT_REASON, strlen(DEPEND_WAIT_REASON)) == 0 ||
			  strncmp(reason, "dependency ", 11) == 0);
}

const char *depend_wait_reason(void)
{
	return DEPEND_WAIT_REASON;
}

int depend_submit_check(struct hctx *s, uid_t uid, const char *text, bool lift, char *ret_text, size_t ret_len,
			char *err, size_t len)
{
	struct depend_list d;
	struct error e;
	size_t kept = 0;

	if (depend_parse(text, &d, &e) < 0) {
		snprintf(err, len, "%s", e.text);
		return -EINVAL;
	}
	for (size_t i = 0; i < d.n; i++) {
		struct job *t;

		/* after*: a job this pool never had is refused, as PBS Pro
		 * refuses it (PBSE_UNKJOBID); held, it would wait for ever.
		 * The store keeps every job, so one not in it never was
		 * (docs/ARCHITECTURE.md). Slurm's dialect (lift) drops the
		 * item instead, as slurmctld lifts a dependency on a job it
		 * does not know and runs the job. */
		if (d.items[i].type < DEPEND_BEFORE) {
			json_t *row = NULL;

			if (pool_job_find(s->pool, d.items[i].id) ||
			    jobstore_job_get(s->store, d.items[i].id, false, &row) != -ENOENT) {
				json_decref(row);
				d.items[kept++] = d.items[i];
				continue;
			}
			if (lift)
				continue;
			snprintf(err, len, "Unknown Job Id %lld", (long long)d.items[i].id);
			return -ENOENT;
		}
		d.items[kept++] = d.items[i];
		/* before*: the named job must still be waiting, and be the
		 * submitter's own (it gets held on this job). */
		t = pool_job_find(s->pool, d.items[i].id);
		if (!t || (t->state != JOB_QUEUED && t->state != JOB_HELD) || (t->array && t->t_dispatch)) {
			snprintf(err, len, "-W depend=%s:%lld: job %lld is not waiting to start",
				 depend_type_name(d.items[i].type), (long long)d.items[i].id, (long long)d.items[i].id);
			return -EINVAL;
		}
		if (uid != 0 && t->uid != uid) {
			snprintf(err, len, "-W depend=%s:%lld: job %lld is not yours", depend_type_name(d.items[i].type),
				 (long long)d.items[i].id, (long long)d.items[i].id);
			return -EPERM;
		}
	}
	d.n = kept;
	if (ret_text)
		depend_format(&d, ret_text, ret_len);
	return 0;
}

/* The text after appending "TYPE:ID" to j's depend (NULL: none before). */
static char *depend_append(const char *old, enum depend_type t, int64_t id)
{
	char *s;

	if (asprintf(&s, "%s%s%s:%lld", old ? old : "", old ? "," : "", depend_type_name(t), (long long)id) < 0)
		return NULL;
	return s;
}

int depend_before_record(struct hctx *s, int64_t id, const char *text)
{
	struct depend_list d;
	int r = 0;

	if (!text || depend_parse(text, &d, NULL) < 0)
		return 0;
	for (size_t i = 0; i < d.n && r == 0; i++) {
		struct job *t;
		char *next;

		if (d.items[i].type < DEPEND_BEFORE)
			continue;
		t = pool_job_find(s->pool, d.items[i].id);
		if (!t)
			continue;
		next = depend_append(t->depend, depend_type_after(d.items[i].type), id);
		if (!next)
			return -ENOMEM;
		r = jobstore_job_depend_set(s->store, t->id, next);
		if (r == 0)
			r = jobstore_job_set_state(s->store, t->id, JOB_HELD, DEPEND_WAIT_REASON);
		free(next);
	}
	return r;
}

void depend_before_apply(struct hctx *s, int64_t id, const char *text)
{
	struct depend_list d;

	if (!text || depend_parse(text, &d, NULL) < 0)
		return;
	for (size_t i = 0; i < d.n; i++) {
		struct job *t;
		char *next;

		if (d.items[i].type < DEPEND_BEFORE)
			continue;
		t = pool_job_find(s->pool, d.items[i].id);
		if (!t)
			continue;
		next = depend_append(t->depend, depend_type_after(d.items[i].type), id);
		if (next) {
			free(t->depend);
			t->depend = next;
		}
		if (t->state == JOB_QUEUED)
			pool_job_state_set(s->pool, t, JOB_HELD);
		depend_track(s, t);
	}
}

enum verdict { DEP_WAIT, DEP_MET, DEP_NEVER };

/* Reads t's row when it is not pooled: 0 with t->ended set when its end
 * is known, 0 without when it has yet to end; -ENOENT when there is no
 * such job, -EINVAL for a subjob's (never waited on), why saying so. */
static int target_read(struct hctx *s, struct dep_target *t, char *why, size_t len)
{
	const char *state;
	enum job_state st;
	json_t *row;
	bool ran, subjob;

	if (jobstore_job_get(s->store, t->id, false, &row) < 0) {
		snprintf(why, len, "job %lld does not exist", (long long)t->id);
		return -ENOENT;
	}
	state = json_string_value(json_object_get(row, "state"));
	if (!state || job_state_parse(state, &st) < 0)
		st = JOB_FAILED;
	ran = json_object_get(json_object_get(row, "times"), "dispatch") != NULL;
	subjob = json_object_get(row, "array_id") != NULL;
	json_decref(row);
	if (subjob) {
		snprintf(why, len, "job %lld is a subjob; name its array as ID[]", (long long)t->id);
		return -EINVAL;
	}
	if (job_state_finished(st)) {
		t->ended = true;
		t->state = st;
		t->ran = ran;
	}
	return 0;
}

/* One after* item: met, not yet, or never (why in why). */
static enum verdict edge_verdict(struct hctx *s, const struct dep_edge *e, char *why, size_t len)
{
	struct dep_target *t = e->target;
	struct job *o = pool_job_find(s->pool, t->id);
	enum job_state st;

	if (o) {
		bool started = o->array ? o->t_dispatch != 0 : (o->state == JOB_RUNNING || o->state == JOB_EXITING);

		return e->type == DEPEND_AFTER && started ? DEP_MET : DEP_WAIT;
	}
	if (!t->ended && target_read(s, t, why, len) < 0)
		return DEP_NEVER;
	if (!t->ended)
		return DEP_WAIT;   /* not pooled yet: a submission in flight */
	st = t->state;
	switch (e->type) {
	case DEPEND_AFTER:
		if (t->ran)
			return DEP_MET;
		snprintf(why, len, "job %lld was deleted before it started", (long long)t->id);
		return DEP_NEVER;
	case DEPEND_AFTEROK:
		if (st == JOB_COMPLETED)
			return DEP_MET;
		snprintf(why, len, "job %lld %s", (long long)t->id, st == JOB_CANCELLED ? "was deleted" : "failed");
		return DEP_NEVER;
	case DEPEND_AFTERNOTOK:
		if (st != JOB_COMPLETED && (st != JOB_CANCELLED || t->ran))
			return DEP_MET;
		snprintf(why, len, "job %lld %s", (long long)t->id,
			 st == JOB_COMPLETED ? "completed" : "was deleted before it started");
		return DEP_NEVER;
	default:
		return DEP_MET;
	}
}

/* Decides one waiting job: released when every after* item is met, held
 * with the reason when one never can be. */
static void depend_decide(struct hctx *s, struct job *j)
{
	char why[160] = "", reason[256];
	bool wait = false, user_hold;
	int r;

	s->deps->decided++;
	for (unsigned i = 0; i < j->n_dep_edges; i++) {
		const struct dep_edge *e = &j->dep_edges[i];
		enum verdict v = edge_verdict(s, e, why, sizeof(why));

		if (v == DEP_NEVER) {
			snprintf(reason, sizeof(reason), "dependency %s:%lld%s can never be met: %s",
				 depend_type_name(e->type), (long long)e->target->id, e->array ? "[]" : "", why);
			r = jobstore_job_set_state(s->store, j->id, JOB_HELD, reason);
			if (r < 0) {
				log_err("job %lld: cannot record its dependency: %s", (long long)j->id, strerror(-r));
				return;
			}
			log_info("job %lld: %s", (long long)j->id, reason);
			free(j->reason);
			j->reason = strdup(reason);
			/* Stays held (system hold); nothing will change it. */
			untrack(s, j);
			return;
		}
		if (v == DEP_WAIT)
			wait = true;
	}
	if (wait)
		return;
	/* Submitted with -h too: its owner's hold stays. */
	user_hold = j->reason && strcmp(j->reason, DEPEND_WAIT_REASON_USER) == 0;
	r = jobstore_job_set_state(s->store, j->id, user_hold ? JOB_HELD : JOB_QUEUED, NULL);
	if (r < 0) {
		log_err("job %lld: cannot release it: %s", (long long)j->id, strerror(-r));
		return;
	}
	depend_forget(s, j);
	free(j->reason);
	j->reason = NULL;
	if (j->state == JOB_HELD && !user_hold)
		pool_job_state_set(s->pool, j, JOB_QUEUED);
	hctx_resched(s);
}

bool depend_recheck_due(const struct hctx *s)
{
	return s->deps && s->deps->due;
}

void depend_recheck(struct hctx *s)
{
	struct depend_index *x = s->deps;
	struct job *j;
	int r;

	if (!x || !x->due)
		return;
	r = jobstore_begin(s->store);
	if (r < 0)
		return;
	while ((j = x->due)) {
		due_remove(x, j);
		depend_decide(s, j);
	}
	if (jobstore_commit(s->store) < 0)
		jobstore_rollback(s->store);
}

/* A job the store has held for its dependencies, at restart. */
void depend_loaded(struct hctx *s, struct job *j)
{
	if (j->depend && j->state == JOB_HELD && j->reason &&
	    strncmp(j->reason, DEPEND_WAIT_REASON, strlen(DEPEND_WAIT_REASON)) == 0)
		depend_track(s, j);
	else if (j->depend && j->state == JOB_HELD && depend_is_reason(j->reason))
		j->dep_wait = true;   /* never to be met: held, not rechecked */
}

