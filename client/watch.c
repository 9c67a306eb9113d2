/* SPDX-License-Identifier: MIT */
/* Watching qpoold's events, resumed across a takeover (docs/EVENTS.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sort.h"
#include "timeutil.h"
#include "watch.h"
#include "wire.h"

/* Between tries to reach a server after the one watched went away: a
 * takeover takes lease_time and a standby's poll (3.5 s by default). */
#define RESUME_PAUSE_MS 100

static int64_t last_cursor = -1;

int64_t watch_cursor_last(void)
{
	return last_cursor;
}

static json_t *watch_req(const struct watch_opts *o, int64_t since)
{
	json_t *req = json_pack("{s:s}", "op", "watch"), *jobs;

	if (!req)
		return NULL;
	if (since >= 0)
		json_object_set_new(req, "since", json_integer(since));
	if (o->n_jobs) {
		jobs = json_array();
		for (size_t i = 0; i < o->n_jobs; i++)
			json_array_append_new(jobs, json_integer(o->jobs[i]));
		json_object_set_new(req, "jobs", jobs);
	}
	return req;
}

/* Connects again and asks for the watch after cursor, until a server
 * answers or resume_sec has passed. > 0: a tick stopped it. */
static int resume(struct client *cl, const struct watch_opts *o, void *ud, int64_t cursor, json_t **ret_reply,
		  struct error *err)
{
	int64_t deadline = time_mono_ns() + (int64_t)(o->resume_sec ? o->resume_sec : 60) * NSEC_PER_SEC;
	int r;

	for (;;) {
		r = client_reconnect(cl, err);
		if (r == 0 && o->connected)
			r = o->connected(cl, ud);
		if (r == 0) {
			r = client_call(cl, watch_req(o, cursor), ret_reply, err);
			/* A refusal of the cursor itself is an answer. */
			if (r == 0 || r == -ERANGE || r == -EACCES || r == -EINVAL)
				return r;
		}
		if (time_mono_ns() > deadline)
			return r;
		(void)nanosleep(&(struct timespec){ .tv_nsec = RESUME_PAUSE_MS * 1000000L }, NULL);
		if (o->tick) {
			int t = o->tick(ud);

			if (t != 0)
				return t;
		}
	}
}

/* Waits for the next frame, ticking meanwhile. 0: one is there. */
static int wait_frame(struct client *cl, const struct watch_opts *o, void *ud)
{
	int r;

	if (!o->tick)
		return 0;
	while ((r = client_wait(cl, (int)o->tick_ms)) == 0) {
		r = o->tick(ud);
		if (r != 0)
			return r;
	}
	return 0;   /* readable, or an error client_recv tells */
}

int watch_run(struct client *cl, const struct watch_opts *o, watch_start_f start, watch_event_f event, void *ud,
	      struct error *err)
{
	json_t *reply = NULL, *frame = NULL;
	bool resumed = false;
	int64_t cursor;
	long long id;
	int r;

	r = client_call(cl, watch_req(o, o->since), &reply, err);
	for (;;) {
		json_t *evs, *ev;
		size_t i;

		if (r < 0)
			return r;
		cursor = wire_int(reply, "cursor", 0);
		last_cursor = cursor;
		id = wire_int(reply, "id", 0);
		r = start ? start(reply, resumed, ud) : 0;
		json_decref(reply);
		reply = NULL;
		if (r != 0)
			return r;
		for (;;) {
			r = wait_frame(cl, o, ud);
			if (r != 0)
				return r;
			r = client_recv(cl, &frame, err);
			if (r < 0)
				break;
			if (wire_int(frame, "id", -1) != id) {
				json_decref(frame);
				continue;
			}
			if (!wire_bool(frame, "ok", 0)) {
				int e = (int)wire_int(frame, "errno", EIO);

				r = error_set(err, -e, "%s (cursor %lld)", wire_str(frame, "error") ?: "watch ended",
					      (long long)cursor);
				json_decref(frame);
				return r;
			}
			evs = json_object_get(frame, "events");
			json_array_foreach(evs, i, ev) {
				int64_t seq = wire_int(ev, "seq", 0);

				/* Never twice, whatever a server sends. */
				if (seq <= cursor)
					continue;
				cursor = seq;
				last_cursor = seq;
				r = event(ev, ud);
				if (r != 0) {
					json_decref(frame);
					return r;
				}
			}
			if (wire_int(frame, "cursor", 0) > cursor)
				cursor = wire_int(frame, "cursor", 0);
			last_cursor = cursor;
			json_decref(frame);
		}
		/* The server went: the next active goes on from cursor. */
		resumed = true;
		if (o->lost)
			o->lost(err, ud);
		r = resume(cl, o, ud, cursor, &reply, err);
		if (r > 0)
			return r;
	}
}

bool watch_state_ended(const char *state)
{
	static const char *const ends[] = { "completed", "failed", "cancelled", "timeout", "oom" };

	for (size_t i = 0; state && i < sizeof(ends) / sizeof(ends[0]); i++)
		if (strcmp(state, ends[i]) == 0)
			return true;
	return false;
}

int watch_exit_code(const json_t *ev)
{
	long long status = wire_int(ev, "exit_status", -1), sig = wire_int(ev, "exit_signal", 0);

	if (sig > 0)
		return 128 + (int)sig;
	return status >= 0 && status <= 255 ? (int)status : 1;
}

/* One job awaited: its id and where the caller gave it. */
struct awaited {
	int64_t id;
	size_t k;
};

struct jobs_end {
	const int64_t *ids;
	size_t n, left;
	struct awaited *by_id;     /* the ids sorted: each lookup a search */
	bool *done;
	void (*ended)(const json_t *ev, void *ud);
	void *ud;
	int code;
	struct error *err;
};

static int cmp_awaited(const void *a, const void *b)
{
	const struct awaited *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id ? 1 : x->k < y->k ? -1 : x->k > y->k;
}

/* The awaited entries for id: from *first to the one returned (an id
 * given twice is there twice, side by side; none when id is not
 * awaited). */
static const struct awaited *awaited_span(const struct jobs_end *je, int64_t id,
					  const struct awaited **first)
{
	const struct awaited *end = je->by_id + je->n, *a;
	size_t lo = 0, hi = je->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (je->by_id[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = je->by_id + lo;
	for (a = *first; a < end && a->id == id; a++)
		;
	return a;
}

/* One end, once per job. Returns 1 when it was the last one awaited. */
static int job_end(struct jobs_end *je, const json_t *ev)
{
	int64_t id = wire_int(ev, "jobid", 0);
	const struct awaited *a, *end;

	if (!watch_state_ended(wire_str(ev, "state")))
		return 0;
	for (end = awaited_span(je, id, &a); a < end; a++) {
		if (je->done[a->k])
			continue;
		je->done[a->k] = true;
		je->left--;
		je->code = watch_exit_code(ev);
		if (je->ended)
			je->ended(ev, je->ud);
	}
	return je->left == 0 ? 1 : 0;
}

static int jobs_start(const json_t *reply, bool resumed, void *ud)
{
	struct jobs_end *je = ud;
	json_t *cur = json_object_get(reply, "current"), *o;
	const struct awaited *a, *end;
	bool *found;
	size_t i;
	int r = 0;

	/* Every job must be there (and the caller's) when the wait begins. */
	if (!resumed) {
		found = calloc(je->n ? je->n : 1, sizeof(bool));
		if (!found)
			return error_set(je->err, -ENOMEM, "out of memory");
		json_array_foreach(cur, i, o) {
			int64_t id = wire_int(o, "jobid", 0);

			for (end = awaited_span(je, id, &a); a < end; a++)
				found[a->k] = true;
		}
		for (size_t k = 0; k < je->n; k++) {
			if (!found[k]) {
				free(found);
				return error_set(je->err, -ENOENT, "%lld: no such job of yours", (long long)je->ids[k]);
			}
		}
		free(found);
	}
	json_array_foreach(cur, i, o)
		if (job_end(je, o) > 0)
			r = 1;
	return r;
}

static int jobs_event(const json_t *ev, void *ud)
{
	return job_end(ud, ev);
}

int watch_jobs_end(struct client *cl, const int64_t *ids, size_t n,
		   void (*ended)(const json_t *ev, void *ud), void *ud, int *ret_code, struct error *err)
{
	struct watch_opts o = { .since = -1, .jobs = ids, .n_jobs = n };
	struct jobs_end je = { .ids = ids, .n = n, .left = n, .ended = ended, .ud = ud, .err = err };
	int r;

	je.done = calloc(n ? n : 1, sizeof(bool));
	je.by_id = calloc(n ? n : 1, sizeof(*je.by_id));
	if (!je.done || !je.by_id) {
		free(je.done);
		free(je.by_id);
		return error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < n; k++)
		je.by_id[k] = (struct awaited){ ids[k], k };
	qp_sort(je.by_id, n, sizeof(*je.by_id), cmp_awaited);
	r = watch_run(cl, &o, jobs_start, jobs_event, &je, err);
	free(je.done);
	free(je.by_id);
	if (r < 0)
		return r;
	*ret_code = je.code;
	return 0;
}
