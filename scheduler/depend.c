/* SPDX-License-Identifier: MIT */
/* Job dependencies in the server: -W depend at submit, holding, releasing, and the reason one can never be met. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depend.h"
#include "log.h"
#include "server-internal.h"
#include "timeutil.h"

/* PBS Pro holds such a job with a system hold; its comment says why. */
#define DEPEND_WAIT_REASON "waiting on dependencies"

void depend_track(struct server *s, struct job *j)
{
	if (j->dep_wait)
		return;
	j->dep_wait = true;
	j->dprev = NULL;
	j->dnext = s->dep_jobs;
	if (s->dep_jobs)
		s->dep_jobs->dprev = j;
	s->dep_jobs = j;
	s->dep_dirty = true;
}

void depend_forget(struct server *s, struct job *j)
{
	if (!j->dep_wait)
		return;
	if (j->dprev)
		j->dprev->dnext = j->dnext;
	else if (s->dep_jobs == j)
		s->dep_jobs = j->dnext;
	if (j->dnext)
		j->dnext->dprev = j->dprev;
	j->dnext = j->dprev = NULL;
	j->dep_wait = false;
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

int depend_submit_check(struct server *s, uid_t uid, const char *text, char *err, size_t len)
{
	struct depend_list d;
	struct error e;

	if (depend_parse(text, &d, &e) < 0) {
		snprintf(err, len, "%s", e.text);
		return -EINVAL;
	}
	for (size_t i = 0; i < d.n; i++) {
		struct job *t;

		if (d.items[i].type < DEPEND_BEFORE)
			continue;
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

int depend_before_record(struct server *s, int64_t id, const char *text)
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

void depend_before_apply(struct server *s, int64_t id, const char *text)
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

/* One after* item: met, not yet, or never (why in why). */
static enum verdict item_verdict(struct server *s, const struct depend_item *it, char *why, size_t len)
{
	enum depend_type t = depend_type_after(it->type);
	struct job *o = pool_job_find(s->pool, it->id);
	const char *state;
	enum job_state st;
	json_t *row;
	bool ran;

	if (o) {
		bool started = o->array ? o->t_dispatch != 0 : (o->state == JOB_RUNNING || o->state == JOB_EXITING);

		return t == DEPEND_AFTER && started ? DEP_MET : DEP_WAIT;
	}
	if (jobstore_job_get(s->store, it->id, false, &row) < 0) {
		snprintf(why, len, "job %lld does not exist", (long long)it->id);
		return DEP_NEVER;
	}
	state = json_string_value(json_object_get(row, "state"));
	if (!state || job_state_parse(state, &st) < 0)
		st = JOB_FAILED;
	ran = json_object_get(json_object_get(row, "times"), "dispatch") != NULL;
	if (json_object_get(row, "array_id")) {
		json_decref(row);
		snprintf(why, len, "job %lld is a subjob; name its array as ID[]", (long long)it->id);
		return DEP_NEVER;
	}
	json_decref(row);
	if (!job_state_finished(st))
		return DEP_WAIT;   /* not pooled yet: a submission in flight */
	switch (t) {
	case DEPEND_AFTER:
		if (ran)
			return DEP_MET;
		snprintf(why, len, "job %lld was deleted before it started", (long long)it->id);
		return DEP_NEVER;
	case DEPEND_AFTEROK:
		if (st == JOB_COMPLETED)
			return DEP_MET;
		snprintf(why, len, "job %lld %s", (long long)it->id,
			 st == JOB_CANCELLED ? "was deleted" : "failed");
		return DEP_NEVER;
	case DEPEND_AFTERNOTOK:
		if (st != JOB_COMPLETED && (st != JOB_CANCELLED || ran))
			return DEP_MET;
		snprintf(why, len, "job %lld %s", (long long)it->id,
			 st == JOB_COMPLETED ? "completed" : "was deleted before it started");
		return DEP_NEVER;
	default:
		return DEP_MET;
	}
}

/* Decides one waiting job: released when every after* item is met, held
 * with the reason when one never can be. */
static void depend_decide(struct server *s, struct job *j)
{
	struct depend_list d;
	char why[160] = "", reason[256];
	bool wait = false, user_hold;
	int r;

	if (!j->depend || depend_parse(j->depend, &d, NULL) < 0) {
		d.n = 0;
	}
	for (size_t i = 0; i < d.n; i++) {
		enum verdict v;

		if (d.items[i].type >= DEPEND_BEFORE)
			continue;
		v = item_verdict(s, &d.items[i], why, sizeof(why));
		if (v == DEP_NEVER) {
			snprintf(reason, sizeof(reason), "dependency %s:%lld%s can never be met: %s",
				 depend_type_name(d.items[i].type), (long long)d.items[i].id,
				 d.items[i].array ? "[]" : "", why);
			r = jobstore_job_set_state(s->store, j->id, JOB_HELD, reason);
			if (r < 0) {
				log_err("job %lld: cannot record its dependency: %s", (long long)j->id, strerror(-r));
				return;
			}
			log_info("job %lld: %s", (long long)j->id, reason);
			free(j->reason);
			j->reason = strdup(reason);
			/* Stays held (system hold); nothing will change it. */
			if (j->dprev)
				j->dprev->dnext = j->dnext;
			else
				s->dep_jobs = j->dnext;
			if (j->dnext)
				j->dnext->dprev = j->dprev;
			j->dnext = j->dprev = NULL;
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
	s->sched_dirty = true;
}

void depend_recheck(struct server *s)
{
	int r;

	if (!s->dep_dirty || !s->dep_jobs)
		return;
	s->dep_dirty = false;
	r = jobstore_begin(s->store);
	if (r < 0)
		return;
	for (struct job *j = s->dep_jobs, *next; j; j = next) {
		next = j->dnext;
		depend_decide(s, j);
	}
	if (jobstore_commit(s->store) < 0)
		jobstore_rollback(s->store);
}

/* A job the store has held for its dependencies, at restart. */
void depend_loaded(struct server *s, struct job *j)
{
	if (j->depend && j->state == JOB_HELD && j->reason &&
	    strncmp(j->reason, DEPEND_WAIT_REASON, strlen(DEPEND_WAIT_REASON)) == 0)
		depend_track(s, j);
	else if (j->depend && j->state == JOB_HELD && depend_is_reason(j->reason))
		j->dep_wait = true;   /* never to be met: held, not rechecked */
}
