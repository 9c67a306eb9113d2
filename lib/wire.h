/* SPDX-License-Identifier: MIT */
/* Length-prefixed JSON messages: 4-byte big-endian length, then a JSON object. */
#ifndef QPOOL_WIRE_H
#define QPOOL_WIRE_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

#define WIRE_MAX (1u << 20)   /* largest message body, bytes */
/* Jobs one watch may name: its answer's current states (~200 bytes a
 * job) stay within WIRE_MAX. */
#define WIRE_WATCH_JOBS_MAX 4096

/* job.signal's two signals a job never receives (docs/PREEMPTION.md):
 * gded freezes the job's processes (its cgroup's freezer) and stops its
 * walltime clock on the first, thaws them and starts the clock again on
 * the second. (SIGRTMIN + N is signal N for the job: docs/PROTOCOL.md.) */
#define WIRE_SIG_SUSPEND 10   /* SIGUSR1 */
#define WIRE_SIG_RESUME 12    /* SIGUSR2 */

/* A growable byte buffer, for both directions of a non-blocking stream. */
struct wirebuf {
	char *data;
	size_t len;
	size_t cap;
	size_t off;   /* consumed prefix (input) or written prefix (output) */
};

void wirebuf_free(struct wirebuf *b);
/* Room for more bytes after len (the consumed prefix dropped first);
 * 0 or -ENOMEM. */
int wirebuf_reserve(struct wirebuf *b, size_t more);

/* Reads what fd has into in. Returns bytes read (> 0), 0 at end of stream,
 * -EAGAIN when nothing is there, or another -errno. */
ssize_t wire_read(int fd, struct wirebuf *in);

/* Takes the next whole message out of in. Returns 1 and *ret (a JSON
 * object, caller's reference), 0 when no whole message is buffered yet,
 * -EMSGSIZE when the announced length is above WIRE_MAX, -EBADMSG when the
 * body is not a JSON object (err says where). The stream is unusable after
 * a negative return. */
int wire_next(struct wirebuf *in, json_t **ret, struct error *err);

/* The length the next message in in announces, or 0 while fewer than 4
 * bytes of it are buffered. */
size_t wire_announced(const struct wirebuf *in);

/* Appends msg, framed, to out. Returns 0, -EMSGSIZE, -ENOMEM. */
int wire_queue(struct wirebuf *out, const json_t *msg);

/* Appends len bytes of whole frames (as wire_queue made them) to out.
 * 0 or -ENOMEM. */
int wire_queue_frames(struct wirebuf *out, const void *frames, size_t len);

/* Writes as much of out as fd takes. Returns 0 when all is written, 1 when
 * some is left (EAGAIN), or -errno. */
int wire_flush(int fd, struct wirebuf *out);

/* Blocking helpers for clients and gded. */
int wire_send(int fd, const json_t *msg);
/* Returns 0 and *ret, -ECONNRESET at a clean end of stream, or -errno. */
int wire_recv(int fd, json_t **ret, struct error *err);
/* wire_recv keeping what follows the message in in, for a peer that may
 * answer two requests in one read. */
int wire_recv_buffered(int fd, struct wirebuf *in, json_t **ret, struct error *err);

/* Reads the whole of fd (at most max bytes) in large reads and parses it
 * as one JSON object. 0 and *ret; -EBADMSG (too large, not JSON, not an
 * object) or -errno, with err saying which, naming what. (jansson's own
 * json_loadfd reads one byte per syscall.) */
int wire_load_fd(int fd, size_t max, const char *what, json_t **ret, struct error *err);

/* Accessors that tolerate a missing or wrongly typed member (hostile input):
 * they return def (or NULL) instead. */
const char *wire_str(const json_t *o, const char *key);
long long wire_int(const json_t *o, const char *key, long long def);
int wire_bool(const json_t *o, const char *key, int def);

#endif
