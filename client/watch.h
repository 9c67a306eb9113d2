/* SPDX-License-Identifier: MIT */
/* The client side of the event stream (docs/EVENTS.md): watch from a
 * cursor, and after a lost connection resume from the last cursor on
 * whichever server is active, so no event is missed and none comes twice. */
#ifndef QPOOL_WATCH_H
#define QPOOL_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "client.h"
#include "error.h"

struct watch_opts {
	int64_t since;            /* the cursor to start after; -1: from now */
	const int64_t *jobs;      /* only these jobs' events; NULL: all one may see */
	size_t n_jobs;
	unsigned resume_sec;      /* how long to try again after a lost server; 0: 60 */
	/* A waiter with more to do (qexec relays the job's output and
	 * handles signals): tick every tick_ms while waiting, reconnecting
	 * included; returns as the callbacks below. */
	unsigned tick_ms;
	int (*tick)(void *ud);
	/* The connection was lost (err says why): resuming. */
	void (*lost)(const struct error *err, void *ud);
	/* On each new connection of a resume, before the watch is asked
	 * for (qexec ties its job to it again); < 0: stop. */
	int (*connected)(struct client *cl, void *ud);
};

/* start: the watch's first answer (cursor, last, current: the named
 * jobs' states), again after each resume (resumed true). event: each
 * event, in order. A callback returns 0 to go on, > 0 to stop (returned
 * by watch_run), < 0 for an error (returned, err its to set). */
typedef int (*watch_start_f)(const json_t *reply, bool resumed, void *ud);
typedef int (*watch_event_f)(const json_t *event, void *ud);

/* Runs the watch on cl until a callback stops it. -errno with err one
 * line: a refused cursor (-ERANGE), a watch dropped unread (-ENOBUFS,
 * naming the cursor to resume from), no server for resume_sec. */
int watch_run(struct client *cl, const struct watch_opts *o, watch_start_f start, watch_event_f event, void *ud,
	      struct error *err);

/* Whether state (a job state's word) is an end: completed, failed,
 * cancelled, timeout, oom. */
bool watch_state_ended(const char *state);
/* A job's exit status as the shell sees it from an end event or state:
 * its exit code, 128 + N when killed by signal N, 1 when it has none
 * (deleted before it ran). */
int watch_exit_code(const json_t *ev);

/* Waits on the stream for the end of jobs ids[0..n), calling ended (when
 * not NULL) with each one's end as it comes (a job that had ended
 * already comes first). Returns 0 and the exit code of the last to end;
 * -ENOENT with err naming a job that is not there (or not the caller's);
 * else as watch_run. */
int watch_jobs_end(struct client *cl, const int64_t *ids, size_t n,
		   void (*ended)(const json_t *ev, void *ud), void *ud, int *ret_code, struct error *err);

/* The cursor the stream had reached (the last event given to event). */
int64_t watch_cursor_last(void);

#endif
