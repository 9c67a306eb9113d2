/* SPDX-License-Identifier: MIT */
/* Fair shares of qpoold's connections: a cap per uid, slots kept for root
 * and the nodes, idle clients closed, and log lines about peers rate-limited. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "server-internal.h"
#include "timeutil.h"

/* Slots of max_conns only uid 0 may take: one in 16, at least 16, at most
 * 1,024. With the hard limit of 20,000 fds here that keeps 1,024 slots for
 * qmgr and re-registering nodes however many other users connect. */
unsigned conns_root_reserve(unsigned max_conns)
{
	unsigned r = max_conns / 16;

	if (r < 16)
		r = 16;
	if (r > 1024)
		r = 1024;
	return r < max_conns ? r : max_conns / 2;
}

int64_t conn_now(struct server *s)
{
	uint64_t usec;

	if (sd_event_now(s->event, CLOCK_MONOTONIC, &usec) < 0)
		return time_mono_ns();
	return (int64_t)usec * 1000;
}

static void conn_refuse_text(struct conn *c, int r, const char *text);

unsigned conns_unauth_max(const struct server *s)
{
	uint64_t max = s->config->max_unauth_conns;

	return max < s->max_conns / 4 ? (unsigned)max : s->max_conns / 4;
}

int conn_identified(struct conn *c, uid_t uid)
{
	struct server *s = c->server;
	/* Peers past the gate; the gate's budget is kept out of theirs, so
	 * unauthenticated peers never hold a user's slot. */
	unsigned authed = s->n_conns - gate_count(s->gate);
	unsigned room = s->max_conns - conns_unauth_max(s);
	int r;

	c->uid = uid;
	/* The server's own fds (store, log) stay out of reach of everyone, and
	 * the last root_reserve slots out of reach of all but root. */
	if (authed >= room)
		return -EMFILE;
	if (uid != 0 && authed + s->root_reserve >= room)
		return -EMFILE;
	r = peers_conn_add(s->peers, uid, (unsigned)s->config->max_conns_per_user);
	if (r < 0)
		return r;
	c->identified = true;
	return 0;
}

int conn_gate_enter(struct conn *c, const struct sockaddr_storage *sa)
{
	struct server *s = c->server;
	unsigned per_addr = (unsigned)s->config->max_unauth_conns_per_addr;
	char text[200];
	int r;

	c->addr = gate_addr_of(sa);
	r = gate_enter(s->gate, &c->addr, conns_unauth_max(s), per_addr);
	if (r == 0) {
		c->gated = true;
		return 0;
	}
	if (r == -EUSERS)
		snprintf(text, sizeof(text), "qpoold: %u connections from this address await their credential "
			 "(max_unauth_conns_per_addr); try again", per_addr);
	else if (r == -EMFILE)
		snprintf(text, sizeof(text), "qpoold: %u connections await their credential (max_unauth_conns); "
			 "try again", gate_count(s->gate));
	else
		snprintf(text, sizeof(text), "qpoold: %s", strerror(-r));
	conn_refuse_text(c, -EBUSY, text);
	return r;
}

void conn_gate_leave(struct conn *c)
{
	if (!c->gated)
		return;
	gate_leave(c->server->gate, &c->addr);
	c->gated = false;
}

void conn_forget(struct conn *c)
{
	conn_gate_leave(c);
	if (!c->identified)
		return;
	peers_conn_del(c->server->peers, c->uid);
	if (c->in_counted)
		(void)peers_input_add(c->server->peers, c->uid, -(int64_t)c->in_counted);
	c->in_counted = 0;
	c->identified = false;
}

/* Input buffers one uid's connections may hold. Each connection may hold a
 * message of up to 1 MiB while it arrives; 256 connections (the default
 * cap) stalling such messages held 256 MiB for the 10 s until they were
 * closed. 32 MiB lets 32 full-size submissions arrive at once. */
#define CONNS_INPUT_BUDGET (32u << 20)
#define CONNS_INPUT_SMALL 65536

int conn_input_account(struct conn *c)
{
	struct server *s = c->server;
	uint64_t total;

	if (!c->identified || c->in.cap == c->in_counted)
		return 0;
	total = peers_input_add(s->peers, c->uid, (int64_t)c->in.cap - (int64_t)c->in_counted);
	c->in_counted = c->in.cap;
	if (c->uid != 0 && total > CONNS_INPUT_BUDGET && c->in.cap > CONNS_INPUT_SMALL)
		return -ENOBUFS;
	return 0;
}

/* Logs (rate-limited) and sends text as the answer to whatever the peer
 * asks first. */
static void conn_refuse_text(struct conn *c, int r, const char *text)
{
	struct wirebuf out = { 0 };
	json_t *msg;

	conn_log_warn(c, "connection refused: %s", text);
	/* One small frame; the socket's buffer holds it, so it never blocks.
	 * id 0: the answer to whatever the peer asks first. */
	msg = json_pack("{s:i, s:b, s:s, s:i}", "id", 0, "ok", 0, "error", text, "errno", -r);
	if (msg && wire_queue(&out, msg) == 0)
		(void)send(c->fd, out.data + out.off, out.len - out.off, MSG_DONTWAIT | MSG_NOSIGNAL);
	json_decref(msg);
	wirebuf_free(&out);
}

void conn_refuse(struct conn *c, int r)
{
	struct server *s = c->server;
	char text[200];

	if (r == -EUSERS)
		snprintf(text, sizeof(text), "qpoold: too many connections of uid %d (max_conns_per_user is %llu); "
			 "close some and try again", (int)c->uid, (unsigned long long)s->config->max_conns_per_user);
	else
		snprintf(text, sizeof(text), "qpoold: %u connections open, no room for another; try again later",
			 s->n_conns);
	conn_refuse_text(c, r, text);
}

bool conn_idle(const struct conn *c, int64_t now)
{
	uint64_t limit = c->server->config->idle_timeout;

	/* Nodes heartbeat and have node_timeout; a request in flight holds a
	 * reference (a pending commit) or output being read. A peer that
	 * stopped reading its replies (throttled) counts as idle: it handled
	 * no request since. */
	if (!limit || c->node || c->refs > 1 || c->partial_since)
		return false;
	if (c->out.off < c->out.len && !c->throttled)
		return false;
	return now - c->last_active > (int64_t)limit * NSEC_PER_SEC;
}

void conn_log_warn(struct conn *c, const char *fmt, ...)
{
	char text[400];
	va_list ap;

	/* Before its credential a TCP peer has no uid: such peers share one
	 * budget (uid -1), and the line names the address instead. */
	if (!peers_log_pass(c->server->peers, c->authed ? c->uid : (uid_t)-1, c->pid, conn_now(c->server)))
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (c->authed)
		log_warn("connection of %s uid %d: %s", c->peer, (int)c->uid, text);
	else
		log_warn("connection from %s: %s", c->peer, text);
}

static void suppressed_log(uid_t uid, pid_t pid, unsigned count, void *userdata)
{
	if (uid == (uid_t)-1) {
		log_warn("suppressed %u messages about peers without a credential in %llds", count,
			 (long long)(PEERS_LOG_INTERVAL_NS / NSEC_PER_SEC));
		return;
	}
	log_warn("suppressed %u messages about uid %d (last pid %d) in %llds", count, (int)uid, (int)pid,
		 (long long)(PEERS_LOG_INTERVAL_NS / NSEC_PER_SEC));
}

void conns_log_flush(struct server *s, int64_t now)
{
	peers_log_flush(s->peers, now, suppressed_log, s);
}
