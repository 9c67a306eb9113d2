/* SPDX-License-Identifier: MIT */
/* A site's hook: an executable the admin names, run out of process as
 * root with a clean environment, a JSON document on its stdin, its stdout
 * collected (bounded), its stderr kept for the log, and killed with its
 * whole process group at its time bound. Nothing of it runs in the
 * caller: a hook that crashes, hangs or floods costs its own process.
 *
 * Two ways to run one:
 * - hook_run: start and wait, for callers that may block (gded, qnoded's
 *   helpers, tests);
 * - hook_start, then hook_fds/hook_pump on the caller's event loop and
 *   hook_expire at the deadline, for qpoold, which must never block. */
#ifndef QPOOL_HOOK_H
#define QPOOL_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HOOK_OUT_MAX     (64 * 1024)  /* stdout beyond this: the hook failed */
#define HOOK_ERR_KEEP    4096         /* stderr kept for the log */
#define HOOK_CONTRACT    1            /* the JSON document's "version" */

enum hook_outcome {
	HOOK_RUNNING = 0,
	HOOK_OK,          /* exited 0 */
	HOOK_FAILED,      /* exited non-zero */
	HOOK_SIGNALED,    /* killed by a signal not ours */
	HOOK_TIMEOUT,     /* killed at its bound */
	HOOK_OVERFLOW,    /* printed more than its stdout bound: killed */
	HOOK_NOSTART,     /* could not be started (fork, exec, pipes) */
};

struct hook {
	pid_t pid;
	int pidfd;               /* readable once the hook exited; -1 after */
	int in, out, err;        /* our ends, non-blocking; -1 once closed */
	const char *input;       /* not owned; must outlive the run */
	size_t input_len, input_off;
	char *outbuf;            /* stdout, NUL-terminated; owned */
	size_t out_len, out_cap, out_max;
	char errbuf[HOOK_ERR_KEEP + 1];
	size_t err_len;
	bool err_cut;            /* stderr was longer than HOOK_ERR_KEEP */
	int64_t started_ns;      /* monotonic */
	int64_t ended_ns;
	int status;              /* wait status once exited */
	bool exited;
	enum hook_outcome outcome;
	int start_errno;         /* HOOK_NOSTART: why */
};

/* 0 if PATH may be run as a hook: an absolute path to a regular file,
 * executable, owned by root and writable by nobody else, in directories
 * owned by root and writable by nobody else (so no user can swap it).
 * Otherwise -errno and WHY says which, in one line. */
int hook_path_check(const char *path, char *why, size_t whylen);

/* Start PATH with ARGV (argv[0] included; NULL-terminated) and ENV (NULL:
 * only PATH=/usr/sbin:/usr/bin:/sbin:/bin; else those entries alone), in
 * its own session and process group, cwd /, umask 022, signals default,
 * no descriptors but 0, 1, 2. INPUT (may be NULL) is written to its stdin,
 * which is then closed. OUT_MAX 0 means HOOK_OUT_MAX. Returns 0, or
 * -errno with h->outcome HOOK_NOSTART (nothing left to clean up). */
int hook_start(struct hook *h, const char *path, char *const argv[], char *const env[],
	       const char *input, size_t input_len, size_t out_max);

/* The descriptors an event loop waits on: up to four (stdin for writing,
 * stdout, stderr and the pidfd for reading); returns how many, each with
 * POLLIN or POLLOUT in EVENTS. */
int hook_fds(const struct hook *h, int fds[4], short events[4]);

/* Do what can be done without blocking: feed stdin, read stdout and
 * stderr, reap the hook once it exited. Returns 1 when the run is over
 * (h->outcome set), 0 while it goes on. */
int hook_pump(struct hook *h);

/* Its time is up (or the caller gives up on it): kill its process group,
 * reap it, and end the run as HOOK_TIMEOUT unless it had already ended. */
void hook_expire(struct hook *h);

/* Start and wait at most TIMEOUT_MS (> 0); the outcome is in h. */
int hook_run(struct hook *h, const char *path, char *const argv[], char *const env[],
	     const char *input, size_t input_len, size_t out_max, int timeout_ms);

/* The first line of its stderr ("" when none), at most LEN-1 bytes. */
const char *hook_err_line(const struct hook *h, char *buf, size_t len);

/* One line for the log and for users: "exit 3: <stderr's first line>",
 * "killed after 2000 ms (its time bound)", "printed more than 65536
 * bytes", ... */
const char *hook_describe(const struct hook *h, char *buf, size_t len);

/* Milliseconds from start to end (or to now while running). */
int64_t hook_elapsed_ms(const struct hook *h);

/* The CLOCK_MONOTONIC time, in microseconds, at which a hook started by
 * hook_start has had TIMEOUT_US: for sd_event_add_time, and hook_run's
 * own bound. Counted from the stamp its elapsed time counts from (rounded
 * up), not from the event loop's cached now, which is older by what the
 * loop did first and made "killed after 1997 ms" of a 2 s bound. */
static inline uint64_t hook_deadline_us(const struct hook *h, uint64_t timeout_us)
{
	return ((uint64_t)h->started_ns + 999) / 1000 + timeout_us;
}

/* Close what is open and free the output. A hook still running is killed
 * first (hook_expire). */
void hook_release(struct hook *h);

#endif
