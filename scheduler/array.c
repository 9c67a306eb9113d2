/* SPDX-License-Identifier: MIT */
/* Job arrays in the server: subjob rows at dispatch, the array's end, qdel/qhold/qrls of ID[] and ID[N], restart. */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "arrayspec.h"
#include "conn.h"
#include "hctx.h"
#include "job-end.h"
#include "jobid.h"
#include "jobstore.h"
#include "log.h"
#include "node-send.h"
#include "pool.h"
#include "sort.h"
#include "timeutil.h"
#include "users.h"
#include "wire.h"

/* Restart: the array's subjobs that have rows are not waiting; those
 * that ended are counted. Unfinished ones are loaded as jobs of their own
 * after the array (their ids are above its) and find it by array_id. */
struct load_ctx {
	struct hctx *s;
	struct job *a;
};

static int subjob_row(int64_t index, enum job_state state, int exit_status, void *ud)
{
	struct load_ctx *ctx = ud;
	struct pool_array_info info;

	pool_array_info(ctx->a, &info);
	pool_array_take(ctx->s->pool, ctx->a, arrayspec_pos(info.spec, index));
	if (job_state_finished(state))
		pool_array_ended(ctx->a, state);
	return 0;
}

int array_load(struct hctx *s, struct job *j)
{
	struct load_ctx ctx = { s, j };
	struct error err;
	int r;

	r = pool_array_set(j, j->array_spec, &err);
	if (r < 0) {
		log_err("job %lld: array %s: %s", (long long)j->id, j->array_spec, err.text);
		return r;
	}
	/* The array's row says queued until a subjob starts, then running
	 * (PBS's B), exiting while a qdel of it ends the running ones. In
	 * the pool it waits (queued or held) for its waiting subjobs. */
	if (j->state == JOB_RUNNING || j->state == JOB_EXITING)
		j->t_dispatch = j->t_dispatch ? j->t_dispatch : 1;
	if (j->state == JOB_EXITING)
		pool_array_stop(s->pool, j);
	if (j->state != JOB_HELD)
		j->state = JOB_QUEUED;
	return jobstore_subjobs_load(s->store, j->id, subjob_row, &ctx);
}

void array_loaded(struct hctx *s)
{
	for (struct job *j = pool_jobs(s->pool), *next; j; j = next) {
		next = j->next;
		if (j->array)
			array_check_done(s, j);
	}
}

int array_dispatch_record(struct hctx *s, struct job *sub, int64_t now)
{
	struct job *a = sub->parent;
	int r;

	r = jobstore_subjob_insert(s->store, sub->array_id, sub->id, sub->array_index, JOB_QUEUED, NULL);
	if (r == 0 && a && !a->t_dispatch)
		r = jobstore_job_set_state(s->store, a->id, JOB_RUNNING, NULL);
	return r;
}

void array_dispatch_done(struct hctx *s, struct job *sub, int64_t now)
{
	sub->fresh = false;
	if (sub->parent && !sub->parent->t_dispatch)
		sub->parent->t_dispatch = now;
}

void array_dispatch_undo(struct hctx *s, struct job *sub)
{
	struct job *a = sub->parent;
	struct pool_array_info info;
	int64_t pos;

	pool_array_info(a, &info);
	/* Its place before it is freed with it. */
	pos = arrayspec_pos(info.spec, sub->array_index);
	pool_job_remove(s->pool, sub);
	pool_array_untake(s->pool, a, pos);
}

/* The array's Exit_status, PBS Pro's rule: 0 when every subjob that ran
 * exited 0, 1 when any did not, 2 when none failed but some were
 * deleted. */
void array_check_done(struct hctx *s, struct job *a)
{
	struct pool_array_info info;
	enum job_state st;
	char reason[160];
	int status, r;

	pool_array_info(a, &info);
	if (info.untaken > 0 || info.live > 0)
		return;
	if (info.ended.failed > 0) {
		st = JOB_FAILED;
		status = 1;
	} else if (info.ended.cancelled > 0) {
		st = JOB_CANCELLED;
		status = 2;
	} else {
		st = JOB_COMPLETED;
		status = 0;
	}
	snprintf(reason, sizeof(reason), "subjobs: %lld completed, %lld failed, %lld deleted",
		 (long long)info.ended.ok, (long long)info.ended.failed, (long long)info.ended.cancelled);
	r = jobstore_begin(s->store);
	if (r == 0)
		r = jobstore_array_finish(s->store, a->id, st, status, reason, time_wall_ns());
	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0) {
		/* The next start finds it whole and ends it then. */
		jobstore_rollback(s->store);
		log_err("job %lld[]: cannot record its end: %s", (long long)a->id, strerror(-r));
		return;
	}
	log_info("job %lld[] %s: %s", (long long)a->id, job_state_name(st), reason);
	server_job_finished(s, a, st);
}

/* The array of a request's jobid, owned by the caller (or root); replies
 * and returns NULL otherwise. */
static struct job *array_for_change(struct conn *c, long long req_id, int64_t id)
{
	struct hctx *s = conn_ctx(c);
	struct job *a = pool_job_find(s->pool, id);
	json_t *row;

	if (!a || !a->array) {
		if (a || jobstore_job_get(s->store, id, false, &row) < 0) {
			conn_reply_err(c, req_id, ENOENT, "job %lld[]: no such array", (long long)id);
			return NULL;
		}
		conn_reply_err(c, req_id, json_object_get(row, "array") ? EALREADY : ENOENT,
			       json_object_get(row, "array") ? "job %lld[] has already finished" :
			       "job %lld[]: no such array", (long long)id);
		json_decref(row);
		return NULL;
	}
	if (c->uid != 0 && c->uid != a->uid) {
		conn_reply_err(c, req_id, EPERM, "job %lld[]: permission denied", (long long)id);
		return NULL;
	}
	return a;
}

/* One pooled subjob: qdel, qhold or qrls as for any job. Returns 0, or
 * -errno with text set. */
static int subjob_change(struct hctx *s, struct conn *c, struct job *j, const char *op, char *text, size_t len)
{
	const char *who = server_user_name(s, c->uid);
	struct job_result res = { .state = JOB_CANCELLED, .exit_status = -1 };
	bool hold = strcmp(op, "hold") == 0;
	int r = 0;

	if (strcmp(op, "delete") == 0) {
		if (j->state == JOB_QUEUED || j->state == JOB_HELD) {
			snprintf(res.reason, sizeof(res.reason), "cancelled by %s before it started", who ? who : "?");
			r = jobstore_job_finish(s->store, j->id, &res, time_wall_ns());
			if (r == 0)
				server_job_finished(s, j, JOB_CANCELLED);
		} else if (j->state == JOB_RUNNING) {
			r = jobstore_job_set_state(s->store, j->id, JOB_EXITING, "cancel requested");
			if (r == 0) {
				pool_job_state_set(s->pool, j, JOB_EXITING);
				(void)node_signal(s, j, SIGTERM);
			}
		}
	} else if ((hold && j->state == JOB_QUEUED) || (!hold && j->state == JOB_HELD)) {
		r = jobstore_job_set_state(s->store, j->id, hold ? JOB_HELD : JOB_QUEUED, NULL);
		if (r == 0)
			pool_job_state_set(s->pool, j, hold ? JOB_HELD : JOB_QUEUED);
	} else if (!hold && j->state != JOB_HELD) {
		snprintf(text, len, "job %lld[%lld] is %s; only held jobs can be released", (long long)j->array_id,
			 (long long)j->array_index, job_state_name(j->state));
		return -EBUSY;
	}
	if (r < 0)
		snprintf(text, len, "job store: %s", strerror(-r));
	return r;
}

/* A waiting subjob acted on alone gets its row (and, held, a job of its
 * own in the pool). */
static int waiting_change(struct hctx *s, struct conn *c, struct job *a, int64_t pos, const char *op,
			  char *text, size_t len)
{
	const char *who = server_user_name(s, c->uid);
	struct job_result res = { .state = JOB_CANCELLED, .exit_status = -1 };
	struct job *sub;
	int r;

	if (strcmp(op, "release") == 0) {
		struct pool_array_info info;
		long long index;

		pool_array_info(a, &info);
		index = (long long)arrayspec_index(info.spec, pos);
		if (a->state != JOB_HELD)
			snprintf(text, len, "job %lld[%lld] is queued; only held jobs can be released",
				 (long long)a->id, index);
		else
			snprintf(text, len, "job %lld[%lld] waits in its held array: release the array (%lld[])",
				 (long long)a->id, index, (long long)a->id);
		return -EBUSY;
	}
	sub = pool_subjob_make(a, pos);
	if (!sub)
		return -ENOMEM;
	if (strcmp(op, "delete") == 0) {
		snprintf(res.reason, sizeof(res.reason), "cancelled by %s before it started", who ? who : "?");
		r = jobstore_subjob_insert(s->store, a->id, sub->id, sub->array_index, JOB_QUEUED, NULL);
		if (r == 0)
			r = jobstore_job_finish(s->store, sub->id, &res, time_wall_ns());
		if (r == 0) {
			pool_array_take(s->pool, a, pos);
			pool_array_ended(a, JOB_CANCELLED);
		}
		job_free(sub);
	} else {
		r = jobstore_subjob_insert(s->store, a->id, sub->id, sub->array_index, JOB_HELD, NULL);
		sub->state = JOB_HELD;
		if (r == 0) {
			pool_array_take(s->pool, a, pos);
			r = pool_job_add(s->pool, sub);
		}
		if (r < 0)
			job_free(sub);
	}
	if (r < 0)
		snprintf(text, len, "job store: %s", strerror(-r));
	return r;
}

/* ID[] (or the array's plain id): every subjob. */
static int whole_change(struct hctx *s, struct conn *c, struct job *a, const char *op, char *text, size_t len)
{
	bool del = strcmp(op, "delete") == 0, hold = strcmp(op, "hold") == 0;
	int r = 0;

	if (del) {
		r = jobstore_job_set_state(s->store, a->id, JOB_EXITING, "cancel requested");
		if (r == 0)
			pool_array_stop(s->pool, a);
	} else if ((hold && a->state == JOB_QUEUED) || (!hold && a->state == JOB_HELD)) {
		r = jobstore_job_set_state(s->store, a->id, hold ? JOB_HELD : JOB_QUEUED, NULL);
		if (r == 0)
			pool_job_state_set(s->pool, a, hold ? JOB_HELD : JOB_QUEUED);
	}
	for (struct job *j = pool_jobs(s->pool), *next; j && r == 0; j = next) {
		next = j->next;
		if (j->parent != a || (!del && j->state != (hold ? JOB_QUEUED : JOB_HELD)))
			continue;
		r = subjob_change(s, c, j, op, text, len);
	}
	if (r < 0 && !text[0])
		snprintf(text, len, "job store: %s", strerror(-r));
	return r;
}

/* ID[LO-HI] (and ID[N]: LO = HI): the array's subjobs in the range. Walks
 * the array's members in the range, never the range itself: one
 * qhold ID[0-999999999] on a 64-part array walked a billion indices in
 * qpoold's only thread (~2 min; a raw array_last of 2^62: for good). */
static int range_change(struct hctx *s, struct conn *c, struct job *a, const char *op, int64_t lo, int64_t hi,
			char *text, size_t len)
{
	struct pool_array_info info;
	int64_t first = 0, n;
	int r = 0;

	if (lo < 0 || hi < lo) {
		snprintf(text, len, "job %lld[%lld-%lld]: a range is LO-HI with 0 <= LO <= HI", (long long)a->id,
			 (long long)lo, (long long)hi);
		return -EINVAL;
	}
	pool_array_info(a, &info);
	n = arrayspec_span(info.spec, lo, hi, &first);
	if (n == 0) {
		if (lo == hi)
			snprintf(text, len, "job %lld[%lld]: no such subjob", (long long)a->id, (long long)lo);
		else
			snprintf(text, len, "job %lld[%lld-%lld]: no such subjob", (long long)a->id, (long long)lo,
				 (long long)hi);
		return -ENOENT;
	}
	for (int64_t pos = first; pos < first + n && r == 0; pos++) {
		struct job *sub = pool_job_find(s->pool, a->id + 1 + pos);

		if (sub)
			r = subjob_change(s, c, sub, op, text, len);
		else if (pool_array_waiting(a, pos))
			r = waiting_change(s, c, a, pos, op, text, len);
		else if (lo == hi) {
			snprintf(text, len, "job %lld[%lld] has already finished", (long long)a->id, (long long)lo);
			r = -EALREADY;
		}
	}
	return r;
}

bool array_request(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	int64_t id = wire_int(msg, "jobid", 0);
	bool has_index = json_is_integer(json_object_get(msg, "array_index"));
	struct job *a = pool_job_find(s->pool, id);
	char text[256] = "";
	int r;

	if (json_object_get(msg, "array") && !json_is_boolean(json_object_get(msg, "array"))) {
		conn_reply_err(c, req_id, EINVAL, "%s: member \"array\" has the wrong type", op);
		return true;
	}
	if (!has_index && !wire_bool(msg, "array", 0) && !(a && a->array))
		return false;
	a = array_for_change(c, req_id, id);
	if (!a)
		return true;
	r = jobstore_begin(s->store);
	if (r == 0 && !has_index) {
		r = whole_change(s, c, a, op, text, sizeof(text));
	} else if (r == 0) {
		r = range_change(s, c, a, op, wire_int(msg, "array_index", 0),
				 wire_int(msg, "array_last", wire_int(msg, "array_index", 0)), text, sizeof(text));
	}
	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0) {
		/* Refused before any write, or a store failure: nothing of it
		 * stays in the store; the pool may hold a change the store
		 * lost only on a store failure, logged. */
		jobstore_rollback(s->store);
		conn_reply_err(c, req_id, -r, "%s", text[0] ? text : strerror(-r));
		return true;
	}
	log_info("job %lld[]: %s by uid %d", (long long)id, op, (int)c->uid);
	hctx_resched(s);
	array_check_done(s, a);
	conn_reply_ok(c, req_id, NULL);
	return true;
}

static int jobid_cmp(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "jobid"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "jobid"));

	return x < y ? -1 : x > y;
}

/* qstat -t: array a's waiting subjobs above f->after and up to last, to
 * jobs, until *added reaches page; *top: the highest id added. owner:
 * f->owner's uid, or NULL when it has none. */
static void waiting_rows_add(struct hctx *s, const struct jobstore_filter *f, const uid_t *owner,
			     struct job *a, int64_t last, size_t page, json_t *jobs, size_t *added, int64_t *top)
{
	struct pool_array_info info;
	json_t *row;
	int64_t pos;

	pool_array_info(a, &info);
	pos = info.untaken ? pool_array_next_waiting(a, f->after > a->id ? f->after - a->id : 0) : -1;
	if (pos < 0 || a->id + 1 + pos > last)
		return;
	/* Another user's (qstat -u) is known without its row; the row's
	 * owner, the name at submit, decides the rest. */
	if (owner && a->uid != *owner)
		return;
	if (jobstore_job_get(s->store, a->id, false, &row) < 0)
		return;
	if (f->owner && strcmp(f->owner, json_string_value(json_object_get(row, "owner"))) != 0) {
		json_decref(row);
		return;
	}
	for (; pos >= 0 && a->id + 1 + pos <= last && *added < page; pos = pool_array_next_waiting(a, pos + 1)) {
		json_array_append_new(jobs, array_waiting_row(row, a, arrayspec_index(info.spec, pos)));
		++*added;
		if (a->id + 1 + pos > *top)
			*top = a->id + 1 + pos;
	}
	json_decref(row);
}

int array_stat_subjobs(struct hctx *s, const struct jobstore_filter *f, size_t page, json_t *jobs, bool *more)
{
	int64_t after = f->after, last = INT64_MAX, top = 0;
	size_t n = json_array_size(jobs), added = 0;
	struct passwd pw, *pwr = NULL;
	char pwbuf[4096];
	json_t **v, *o;
	size_t i;

	if (*more && n)
		last = json_integer_value(json_object_get(json_array_get(jobs, n - 1), "jobid"));
	/* From the page's cursor on, in id order, until the page is full:
	 * reading every array below the page made each page cost every
	 * array (10,000 held ones: ~3 s of server CPU per qstat -t). */
	/* qstat -u NAME: its uid, once a page (a name per array would be an
	 * nsswitch lookup per array once past the server's name cache). */
	if (f->owner && getpwnam_r(f->owner, &pw, pwbuf, sizeof(pwbuf), &pwr) != 0)
		pwr = NULL;
	if (f->jobid) {
		struct job *a = pool_job_find(s->pool, f->jobid);

		if (a && a->array && a->id + 1 <= last)
			waiting_rows_add(s, f, pwr ? &pw.pw_uid : NULL, a, last, page, jobs, &added, &top);
	} else {
		struct job *a;

		for (i = pool_arrays_seek(s->pool, after);
		     added < page && (a = pool_arrays_at(s->pool, i)) && a->id + 1 <= last; i++)
			waiting_rows_add(s, f, pwr ? &pw.pw_uid : NULL, a, last, page, jobs, &added, &top);
	}
	/* qstat -x -t ID[] of an ended array: the subjobs dropped with it
	 * (qdel ID[]) have no row; they are shown cancelled. */
	if (f->jobid && !pool_job_find(s->pool, f->jobid)) {
		json_t *row = NULL, *seen;
		struct arrayspec spec;
		char key[24];

		if (jobstore_job_get(s->store, f->jobid, false, &row) == 0 && json_object_get(row, "array") &&
		    arrayspec_parse(json_string_value(json_object_get(row, "array")), 't', true, &spec, NULL) == 0 &&
		    (seen = json_object())) {
			json_array_foreach(jobs, i, o) {
				snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(json_object_get(o, "jobid")));
				json_object_set_new(seen, key, json_true());
			}
			for (int64_t pos = after > f->jobid ? after - f->jobid : 0;
			     pos < spec.count && f->jobid + 1 + pos <= last && added < page; pos++) {
				snprintf(key, sizeof(key), "%lld", (long long)(f->jobid + 1 + pos));
				if (json_object_get(seen, key))
					continue;
				json_array_append_new(jobs, array_row_as_subjob(row, f->jobid, pos,
					arrayspec_index(&spec, pos), JOB_CANCELLED));
				added++;
				top = f->jobid + 1 + pos;
			}
			json_decref(seen);
		}
		json_decref(row);
	}
	if (!added)
		return 0;
	n = json_array_size(jobs);
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	json_array_foreach(jobs, i, o)
		v[i] = json_incref(o);
	qp_sort(v, n, sizeof(*v), jobid_cmp);
	json_array_clear(jobs);
	/* A full page of waiting ones ends the page: what lies above its
	 * last is for the next. */
	if (added == page)
		*more = true;
	for (i = 0; i < n; i++) {
		if (added == page && json_integer_value(json_object_get(v[i], "jobid")) > top) {
			json_decref(v[i]);
			continue;
		}
		json_array_append_new(jobs, v[i]);
	}
	free(v);
	return 0;
}

/* qstat ID[N] of a subjob that has no row: the array's, as that subjob. */
int array_subjob_row(struct hctx *s, int64_t id, int64_t index, json_t **ret)
{
	struct job *a = pool_job_find(s->pool, id);
	struct pool_array_info info;
	json_t *row;
	int64_t pos;
	int r;

	r = jobstore_job_get(s->store, id, false, &row);
	if (r < 0)
		return r;
	if (!json_object_get(row, "array")) {
		json_decref(row);
		return -ENOENT;
	}
	if (!a || !a->array) {
		/* The array has ended: every subjob that ran has its row. */
		struct arrayspec spec;

		pos = arrayspec_parse(json_string_value(json_object_get(row, "array")), 't', true, &spec, NULL) < 0 ?
		      -1 : arrayspec_pos(&spec, index);
		r = pos < 0 ? -ENOENT : jobstore_job_get(s->store, id + 1 + pos, false, ret);
		if (r == -ENOENT && pos >= 0) {
			*ret = array_row_as_subjob(row, id, pos, index, JOB_CANCELLED);
			r = *ret ? 0 : -ENOMEM;
		}
		json_decref(row);
		return r;
	}
	pool_array_info(a, &info);
	pos = arrayspec_pos(info.spec, index);
	if (pos < 0) {
		json_decref(row);
		return -ENOENT;
	}
	if (pool_job_find(s->pool, id + 1 + pos) || !pool_array_waiting(a, pos)) {
		json_decref(row);
		r = jobstore_job_get(s->store, id + 1 + pos, false, ret);
		return r;
	}
	*ret = array_waiting_row(row, a, index);
	json_decref(row);
	return *ret ? 0 : -ENOMEM;
}

json_t *array_waiting_row(const json_t *array_row, const struct job *a, int64_t index)
{
	struct pool_array_info info;

	pool_array_info(a, &info);
	return array_row_as_subjob(array_row, a->id, arrayspec_pos(info.spec, index), index,
				   a->state == JOB_HELD ? JOB_HELD : JOB_QUEUED);
}

json_t *array_row_as_subjob(const json_t *array_row, int64_t id, int64_t pos, int64_t index, enum job_state state)
{
	json_t *o = json_deep_copy(array_row);
	char num[24];

	if (!o)
		return NULL;
	json_object_set_new(o, "jobid", json_integer(id + 1 + pos));
	json_object_del(o, "array");
	json_object_set_new(o, "array_id", json_integer(id));
	json_object_set_new(o, "array_index", json_integer(index));
	json_object_set_new(o, "state", json_string(job_state_name(state)));
	json_object_del(o, "depend");
	if (job_state_finished(state)) {
		/* Dropped with its array (qdel ID[]) before it started. */
		json_object_set_new(o, "reason", json_string("deleted with its array before it started"));
		json_object_set_new(o, "exit_status", json_null());
		json_object_set_new(o, "cpu_ns", json_null());
		json_object_set_new(o, "mem_peak", json_null());
		json_object_set_new(o, "times", json_pack("{s:O?}", "submit",
			json_object_get(json_object_get(array_row, "times"), "submit")));
	}
	snprintf(num, sizeof(num), "%lld", (long long)index);
	for (const char *k = "stdout"; k; k = strcmp(k, "stdout") == 0 ? "stderr" : NULL) {
		const char *p = json_string_value(json_object_get(o, k));
		const char *hat = p ? strstr(p, "^array_index^") : NULL;
		char buf[4096];

		if (hat) {
			snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(hat - p), p, num, hat + 13);
			json_object_set_new(o, k, json_string(buf));
		}
	}
	return o;
}
