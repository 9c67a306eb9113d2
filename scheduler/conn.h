/* SPDX-License-Identifier: MIT */
/* qpoold's connection layer (conn.c, conns.c): a peer's connection, its replies. */
#ifndef QPOOL_CONN_H
#define QPOOL_CONN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "auth.h"
#include "gate.h"
#include "wire.h"

struct hctx;
struct node;
struct server;

struct conn {
	struct server *server;
	int fd;
	sd_event_source *src;
	struct wirebuf in;
	struct wirebuf out;
	uid_t uid;
	gid_t gid;
	pid_t pid;                /* Unix socket peers; 0 over TCP */
	bool tcp;                 /* came over TCP: identity from its MUNGE credential */
	bool authed;              /* uid and gid known (see conn_identified) */
	bool gated;               /* TCP, no credential yet: counted in server->gate */
	struct gate_addr addr;    /* TCP: its source address, the gate's key */
	struct auth_nonces nonces; /* TCP: the handshake's (its hello, its credential) */
	int64_t accepted;         /* monotonic ns of accept, for the auth timeout */
	char peer[64];            /* "ADDR:PORT" over TCP, "pid N" on the socket */
	struct node *node;        /* set once the peer registered as a node */
	bool closed;
	unsigned refs;
	int64_t partial_since;    /* monotonic ns a message began arriving; 0: none */
	int64_t last_active;      /* monotonic ns of its last whole message (or accept) */
	bool identified;          /* counted in server->peers under uid */
	size_t in_counted;        /* input buffer bytes counted for uid (conn_input_account) */
	bool throttled;           /* its unread replies are over OUT_HIGH: requests wait */
	uint32_t io_events;       /* the epoll mask last set on src (server.c) */
	bool watching;            /* holds a watch (watch.c) */
	const char *cpu_part;     /* its first request's name: what its CPU is charged to (cpuacct.c) */
	int64_t cpu_ns;           /* its CPU not charged yet (before its first request) */
	struct conn *next, *prev;
};

/* The connection layer's callbacks (conn.c), given by server.c at set-up:
 * a whole request of an authenticated peer (the door), and a connection
 * closing (what the parts above forget of it). */
typedef void conn_message_f(struct conn *c, const char *op, long long req_id, json_t *msg);
typedef void conn_closed_f(struct conn *c);

/* conn.c: the connection layer. conn_accept takes a peer's fd from a
 * listening socket; conns_check (1 s timer) closes stalled, idle and
 * credential-less peers. */
void conn_accept(struct server *s, int cfd, bool tcp);
void conns_check(struct server *s);
void conn_send(struct conn *c, json_t *msg);   /* steals msg */
/* Whole frames encoded once for several connections (watch.c). */
void conn_send_frames(struct conn *c, const void *frames, size_t len);
void conn_reply_ok(struct conn *c, long long req_id, json_t *reply);  /* steals reply (may be NULL) */
/* conn_reply_ok for a page of items in reply's array `key`: when the reply
 * would pass the wire's cap, items are dropped from the end (halving) and
 * "more" is set true, so the client asks again for the rest. */
void conn_reply_page(struct conn *c, long long req_id, json_t *reply, const char *key);
void conn_reply_err(struct conn *c, long long req_id, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void conn_ref(struct conn *c);
/* The handlers' context (hctx.h) a request on c is handled in. */
struct hctx *conn_ctx(const struct conn *c);
void conn_unref(struct conn *c);
/* The connection's peer is uid (known from SO_PEERCRED at accept, or from
 * a credential later): counts it in its uid's fair share. -EUSERS when the
 * uid holds max_conns_per_user already, -EMFILE when only the root reserve
 * is left and uid is not 0; the caller then refuses the connection. */
int conn_identified(struct conn *c, uid_t uid);
void conn_close(struct conn *c);
/* conns.c: the fair shares. conn_forget uncounts a connection; conn_refuse
 * tells a peer refused by conn_identified why, in one error frame; conn_idle
 * says whether c has been idle past idle_timeout at now; conns_log_flush
 * writes the summaries of suppressed lines; conns_root_reserve is the part
 * of max connections kept for uid 0. */
void conn_forget(struct conn *c);
void conn_refuse(struct conn *c, int r);
/* A TCP peer before its credential takes a place in the gate (per address
 * and in all, conns_unauth_max), never a user's slot: 0, or a negative
 * errno after telling the peer why (EBUSY: try again) in one frame and one
 * rate-limited line; the caller then frees c. conn_gate_leave gives the
 * place back (at its credential, or when it goes). */
int conn_gate_enter(struct conn *c, const struct sockaddr_storage *sa);
void conn_gate_leave(struct conn *c);
/* The gate's total budget: max_unauth_conns, at most a quarter of max_conns. */
unsigned conns_unauth_max(const struct server *s);
bool conn_idle(const struct conn *c, int64_t now);
void conns_log_flush(struct server *s, int64_t now);
unsigned conns_root_reserve(unsigned max_conns);
/* Counts c's input buffer for its uid; -ENOBUFS when the uid's
 * connections hold more than CONNS_INPUT_BUDGET in input buffers and c's
 * is a big one (root is not limited): the caller closes c. */
int conn_input_account(struct conn *c);
/* The loop's cached monotonic time, ns (cheap: no clock read per message). */
int64_t conn_now(struct server *s);
/* Logs a warning about a peer, at most PEERS_LOG_BURST per interval per uid
 * (the rest are counted and summed up in one line). */
void conn_log_warn(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
