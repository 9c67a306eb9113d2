/* SPDX-License-Identifier: MIT */
/* The agents' side of remote starts (qpool-rsh, pbsdsh): a task on a node
 * of the job, through the node's task socket (docs/PARALLEL.md). */
#ifndef QPOOL_TASKCLIENT_H
#define QPOOL_TASKCLIENT_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"
#include "wire.h"

/* The variable gded sets in every job: qnoded's task socket. */
#define TASKCLIENT_SOCKET_ENV "QPOOL_TASK_SOCKET"

/* A task's stdin window: an agent sends at most this much task.in data
 * (bytes of base64) that the task's gded has not acknowledged with
 * task.inack (taken by the task, or dropped because it closed its
 * stdin). Every hop between (qnoded, qpoold, the other node's qnoded,
 * gded) so holds at most this much of one task's stdin, and task.signal
 * never waits behind stdin the task does not read. qnoded stops reading
 * an agent that sends past twice this. */
#define TASKCLIENT_IN_WINDOW (1u << 20)

/* task.inack's bytes (as the wire gives them) off *in_flight, never
 * below 0: a gded that acknowledges more than it was sent moves nothing
 * past the start. */
static inline void taskclient_window_ack(size_t *in_flight, long long bytes)
{
	if (bytes > 0)
		*in_flight -= (size_t)bytes < *in_flight ? (size_t)bytes : *in_flight;
}

/* One remote task, from task.start to task.exit. */
struct taskclient {
	int fd;
	struct wirebuf in, out;
	bool started;        /* the start was answered ok */
	bool done;
	size_t in_flight;    /* task.in data sent and not acknowledged */
	int status;          /* once done: the exit code, 128+N for signal N,
	                      * 255 when it could not run or was lost */
	char host[64];
};

/* Connects to sock and queues task.start: argv (array of strings, taken
 * as it is: not stolen), run on host in cwd (NULL: the agent's own) with
 * env (an object of strings added to the job's environment there, not
 * stolen; NULL: none), with_stdin false giving the task /dev/null.
 * -errno with err set. */
int taskclient_start(struct taskclient *t, const char *sock, const char *host, const json_t *argv,
		     const char *cwd, const json_t *env, bool with_stdin, struct error *err);

/* Relays until every task of ts[0..n) is done: their output to fds 1 and
 * 2 (prefix, when not NULL, is written before each chunk: pbsdsh -v),
 * stdin_fd (-1: none) to ts[0], and SIGINT, SIGTERM, SIGHUP to every task
 * still running (the caller blocks them). Lines that tell why a task
 * could not run or was lost go to stderr, prefixed with prog. Returns 0
 * or -errno when it cannot poll. */
int taskclient_relay(struct taskclient *ts, size_t n, int stdin_fd, const char *prog);

void taskclient_close(struct taskclient *t);

#endif
