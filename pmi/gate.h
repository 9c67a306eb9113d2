/* SPDX-License-Identifier: MIT */
/* qpool-pmi's doors: connections accepted but not yet introduced. Each
 * has until its deadline to send its first message (a sister's hello, a
 * PMI_PORT client's initack), which the loop reads as it reads every other
 * socket: a silent peer costs an fd and a slot, never the loop's time. */
#ifndef QPOOL_PMI_GATE_H
#define QPOOL_PMI_GATE_H

#include <sys/types.h>

#include "wire.h"

/* Connections held at once per door; a new one past that drops the
 * oldest (a stranger that holds the door full cannot shut out a peer
 * whose first message follows its connect at once). */
#define GATE_MAX 32

struct gate_conn {
	int fd;               /* non-blocking */
	long long deadline;   /* monotonic ms */
	struct wirebuf in;    /* what it sent so far */
};

struct gate;

/* deadline_ms: how long a connection may take to send its first message.
 * NULL on ENOMEM. */
struct gate *gate_create(int deadline_ms);
/* Closes what is still held. NULL is fine. */
void gate_destroy(struct gate *g);

/* Holds fd (made non-blocking) from now. Returns 1 when the oldest had
 * to be dropped for it, else 0. */
int gate_add(struct gate *g, int fd, long long now_ms);
int gate_count(const struct gate *g);
struct gate_conn *gate_at(struct gate *g, int i);
/* Lets go of entry i: closes its fd unless take; *ret_in (when not NULL)
 * gets its buffer, else the buffer is freed. Entries after i move down. */
void gate_remove(struct gate *g, int i, int take, struct wirebuf *ret_in);
/* Drops every connection past its deadline; returns how many. NULL: 0. */
int gate_expire(struct gate *g, long long now_ms);
/* Milliseconds until the first deadline, -1 when nothing is held. */
int gate_timeout(const struct gate *g, long long now_ms);

/* The uid that owns the other end of fd, a TCP connection over IPv4 on
 * this host (the kernel's sock_diag: what SO_PEERCRED is to a Unix
 * socket). 0 and *ret_uid, -ENOENT when the peer socket is gone, or
 * another -errno. */
int gate_peer_uid(int fd, uid_t *ret_uid);

/* Every connected IPv4 TCP socket of this process on local_port (0: on
 * any port) whose other end is a socket of this host owned by another
 * uid than ours is severed: its
 * descriptor is made a dead Unix socket (dup2, so the number stays valid
 * for whoever holds it), which reads as an end of stream (writes fail
 * with EPIPE: SIGPIPE must be ignored) and drops the TCP socket with
 * whatever the peer had queued. Returns how many. For the sockets this
 * process did not open itself (libpmix's: see pmix.c). */
int gate_sever_strangers(int local_port);

#endif
