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

/* A task's stdin window (bytes of base64 task.in data, as sent): an
 * agent starts with TASKCLIENT_IN_START it may send before gded says
 * anything, and each task.inack's bytes let it send that much more.
 * gded grants back what the task took (or what was dropped because it
 * closed its stdin) and may grant more, up to TASKCLIENT_IN_WINDOW out at
 * once, out of a pool shared by the job's tasks on the node (gded's
 * inwin.h): what a job's gded holds of its tasks' stdin is bounded for
 * the job, however many tasks it starts, and every hop between (qnoded,
 * qpoold, the other node's qnoded) holds at most a window of one task's
 * stdin; task.signal never waits behind stdin the task does not read.
 * qnoded ends an agent (and its task) that sends past its window. */
#define TASKCLIENT_IN_START (16u << 10)
#define TASKCLIENT_IN_WINDOW (1u << 20)

/* task.inack's bytes (as the wire gives them) off *in_flight (task.in
 * data sent less what was granted: negative when the agent may send more
 * than TASKCLIENT_IN_START), never below what one whole window allows:
 * a gded that grants more than that moves nothing past it. */
static inline void taskclient_window_ack(long long *in_flight, long long bytes)
{
	const long long floor = -(long long)(TASKCLIENT_IN_WINDOW - TASKCLIENT_IN_START);

	if (bytes > 0)
		*in_flight = bytes > *in_flight - floor ? floor : *in_flight - bytes;
}

/* How many bytes of input an agent may read to send now, as task.in
 * data, with in_flight out (what base64 makes of it fits the window);
 * 0: none until a task.inack. At most max. */
static inline size_t taskclient_window_room(long long in_flight, size_t max)
{
	long long left = (long long)TASKCLIENT_IN_START - in_flight;
	size_t n = left >= 4 ? (size_t)(left / 4) * 3 : 0;

	return n < max ? n : max;
}

/* One remote task, from task.start to task.exit. */
struct taskclient {
	int fd;
	struct wirebuf in, out;
	bool started;        /* the start was answered ok */
	bool done;
	bool unsendable;     /* qnoded shut our way: what it sent is still read */
	long long in_flight; /* task.in data sent less what was granted */
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
