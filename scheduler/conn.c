/* SPDX-License-Identifier: MIT */
/* qpoold's connection layer: accept, read, authenticate, send and reply.
 * It knows nothing of handlers: each whole request goes to the callback
 * server.c gave at set-up (s->conn_message_f, the door), and a closed
 * connection is told the same way (s->conn_closed_f). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "cpuacct.h"
#include "log.h"
#include "peers.h"
#include "server-internal.h"
#include "timeutil.h"
#include "transport.h"

#define READS_PER_WAKE 16       /* reads of one connection per wake (see conn_update_events) */
#define STALL_SEC 10            /* a message must arrive whole within this */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

struct hctx *conn_ctx(const struct conn *c)
{
	return &c->server->h;
}

void conn_ref(struct conn *c)
{
	c->refs++;
}

static void conn_free(struct conn *c)
{
	sd_event_source_disable_unref(c->src);
	if (c->fd >= 0)
		close(c->fd);
	wirebuf_free(&c->in);
	wirebuf_free(&c->out);
	free(c);
}

void conn_unref(struct conn *c)
{
	if (c && --c->refs == 0)
		conn_free(c);
}

void conn_close(struct conn *c)
{
	struct server *s = c->server;

	if (c->closed)
		return;
	c->closed = true;
	s->conn_closed_f(c);
	/* Doubly linked: closing 20,000 idle connections in one tick must not
	 * walk the list for each. */
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = c->prev = NULL;
	s->n_conns--;
	conn_forget(c);
	sd_event_source_set_enabled(c->src, SD_EVENT_OFF);
	close(c->fd);
	c->fd = -1;
	conn_unref(c);
}

/* Connections are edge-triggered. sd-event polls epoll once per dispatched
 * source, even with sources still pending; level-triggered, every poll
 * walked every readable connection again (3.3 ms per poll with 10,000
 * chatty nodes). So each wake reads until the socket is empty. */
static void conn_update_events(struct conn *c)
{
	uint32_t ev = EPOLLIN | EPOLLET;

	if (c->out.off < c->out.len)
		ev |= EPOLLOUT;
	else if (c->out.cap > 65536)
		wirebuf_free(&c->out);   /* a big reply's buffer is given back once sent */
	/* sd-event re-arms an edge-triggered source at every call (an
	 * epoll_ctl each reply and each watcher's write); the mask unchanged,
	 * there is nothing to re-arm: input is read until EAGAIN, and the
	 * paths that stop early re-add the fd themselves. */
	if (ev == c->io_events)
		return;
	if (sd_event_source_set_io_events(c->src, ev) >= 0)
		c->io_events = ev;
}

void conn_send(struct conn *c, json_t *msg)
{
	int r;

	if (c->closed) {
		json_decref(msg);
		return;
	}
	r = wire_queue(&c->out, msg);
	if (r == -EMSGSIZE && json_object_get(msg, "ok")) {
		/* A reply that does not fit the frame still gets an answer: the
		 * client must never wait for one that will not come. */
		json_t *err = json_pack("{s:O, s:b, s:s, s:i}", "id", json_object_get(msg, "id"), "ok", 0,
					"error", "the answer is larger than a message may be (1 MiB); ask for less",
					"errno", EMSGSIZE);

		conn_log_warn(c, "reply above %u bytes refused", WIRE_MAX);
		r = err ? wire_queue(&c->out, err) : -ENOMEM;
		json_decref(err);
	}
	json_decref(msg);
	if (r < 0) {
		conn_log_warn(c, "cannot queue a reply: %s", strerror(-r));
		return;
	}
	r = wire_flush(c->fd, &c->out);
	if (r < 0) {
		conn_close(c);
		return;
	}
	conn_update_events(c);
}

void conn_send_frames(struct conn *c, const void *frames, size_t len)
{
	if (c->closed)
		return;
	/* Nothing queued before them: sent straight from the caller's
	 * buffer (a watchers' frame shared by many), only what the socket
	 * did not take copied. */
	if (c->out.off == c->out.len) {
		ssize_t n;

		do
			n = send(c->fd, frames, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			conn_close(c);
			return;
		}
		if (n > 0) {
			frames = (const char *)frames + n;
			len -= (size_t)n;
		}
		if (len == 0)
			return;
	}
	if (wire_queue_frames(&c->out, frames, len) < 0) {
		conn_log_warn(c, "cannot queue a reply: out of memory");
		return;
	}
	if (wire_flush(c->fd, &c->out) < 0) {
		conn_close(c);
		return;
	}
	conn_update_events(c);
}

/* The members of every ok reply: its id, ok, and to a command the pool's
 * name, with which it prints job ids, the one qsub printed
 * (docs/PROTOCOL.md, "server"); a node has no use for it. */
static void reply_ok_stamp(struct conn *c, long long req_id, json_t *reply)
{
	json_object_set_new(reply, "id", json_integer(req_id));
	json_object_set_new(reply, "ok", json_true());
	if (!c->node && c->server->pool_name[0] && !json_object_get(reply, "server"))
		json_object_set_new(reply, "server", json_string(c->server->pool_name));
}

void conn_reply_page(struct conn *c, long long req_id, json_t *reply, const char *key)
{
	json_t *arr = json_object_get(reply, key);
	int r;

	reply_ok_stamp(c, req_id, reply);
	if (c->closed) {
		json_decref(reply);
		return;
	}
	/* Encoding is what tells the size: the common page is encoded once;
	 * one of big items (long paths, scripts, topologies) is halved until it
	 * fits, and "more" sends the client back for the rest. */
	while ((r = wire_queue(&c->out, reply)) == -EMSGSIZE && json_array_size(arr) > 1) {
		size_t keep = json_array_size(arr) / 2;

		while (json_array_size(arr) > keep)
			json_array_remove(arr, json_array_size(arr) - 1);
		json_object_set_new(reply, "more", json_true());
	}
	if (r == -EMSGSIZE) {
		conn_send(c, reply);   /* answers that the item itself is too large */
		return;
	}
	json_decref(reply);
	if (r < 0) {
		conn_log_warn(c, "cannot queue a reply: %s", strerror(-r));
		return;
	}
	if (wire_flush(c->fd, &c->out) < 0) {
		conn_close(c);
		return;
	}
	conn_update_events(c);
}

void conn_reply_ok(struct conn *c, long long req_id, json_t *reply)
{
	if (!reply)
		reply = json_object();
	reply_ok_stamp(c, req_id, reply);
	conn_send(c, reply);
}

void conn_reply_err(struct conn *c, long long req_id, int errnum, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	conn_send(c, json_pack("{s:I, s:b, s:s, s:i}", "id", (json_int_t)req_id, "ok", 0,
			       "error", text, "errno", errnum));
}

/* The one moment a connection's uid and gid become known, whichever way
 * it came: SO_PEERCRED at accept, or a MUNGE credential over TCP. The
 * uid's fair share is counted here (conn_identified): -EUSERS or -EMFILE
 * when it has no room, and the caller refuses the connection. */
static int conn_authenticated(struct conn *c, uid_t uid, gid_t gid)
{
	int r = conn_identified(c, uid);

	if (r < 0)
		return r;
	c->gid = gid;
	c->authed = true;
	return 0;
}

/* A peer refused before or at its credential gets its reason (id 0) and
 * is closed; nothing else was read from it, so nothing changed. */
static void conn_auth_refuse(struct conn *c, int errnum, const char *why)
{
	/* Rate-limited like every line about a peer; before a credential all
	 * such peers share one budget (uid -1). */
	if (peers_log_pass(c->server->peers, c->authed ? c->uid : (uid_t)-1, c->pid, conn_now(c->server)))
		log_warn("connection from %s refused: %s", c->peer, why);
	conn_reply_err(c, 0, errnum, "qpoold refused the connection: %s", why);
	conn_close(c);
}

/* The first frame of a TCP connection carries its MUNGE credential, and
 * nothing but it is read before: the uid and gid come from munged's
 * decoding, never from a message, and its payload must carry this
 * connection's nonce (our hello). munge_decode asks the local munged over
 * its Unix socket (0.08-0.13 ms here), once per connection; our answer is
 * our own credential bound to the peer's nonce, so the peer knows it
 * speaks to qpoold (root) before it sends anything else. */
static void conn_auth(struct conn *c, json_t *msg)
{
	struct error err = { "" };
	json_t *proof;
	uid_t uid;
	gid_t gid;
	int r;

	r = auth_accept(c->server->config->munge_socket, c->fd, c->server->config->advertise, msg, &c->nonces, &uid, &gid, &err);
	if (r < 0) {
		conn_auth_refuse(c, -r, err.text);
		return;
	}
	if (!server_user_name(&c->server->h, uid)) {
		snprintf(err.text, sizeof(err.text), "uid %d (gid %d) is not a user of this host", (int)uid,
			 (int)gid);
		conn_auth_refuse(c, EACCES, err.text);
		return;
	}
	/* Past the gate: from here it holds a slot of its uid. */
	conn_gate_leave(c);
	r = conn_authenticated(c, uid, gid);
	if (r < 0) {
		conn_refuse(c, r);
		conn_close(c);
		return;
	}
	proof = auth_proof(c->server->config->munge_socket, &c->nonces, uid, &err);
	if (!proof) {
		conn_auth_refuse(c, EHOSTUNREACH, err.text);
		return;
	}
	log_debug("connection from %s is uid %d gid %d", c->peer, (int)uid, (int)gid);
	conn_send(c, proof);
}

static void conn_message(struct conn *c, json_t *msg)
{
	const char *op = wire_str(msg, "op");
	json_t *idv = json_object_get(msg, "id");
	long long req_id = json_is_integer(idv) ? (long long)json_integer_value(idv) : 0;

	c->last_active = conn_now(c->server);
	if (!c->authed) {
		conn_auth(c, msg);
		return;
	}
	if (!op) {
		/* A reply from a node (we send nodes no requests that expect one) or junk. */
		if (!json_object_get(msg, "ok"))
			conn_reply_err(c, req_id, EINVAL, "message without \"op\"");
		return;
	}
	if (!json_is_integer(idv)) {
		conn_reply_err(c, 0, EINVAL, "request without an integer \"id\"");
		return;
	}
	c->server->conn_message_f(c, op, req_id, msg);
}

/* A peer that sends requests and does not read the replies gets no more
 * of its requests handled while this much waits for it: 1,000 pipelined
 * stat requests would otherwise queue 1,000 replies of up to 1 MiB. */
#define OUT_HIGH (4u << 20)

static bool conn_throttled(const struct conn *c)
{
	return c->out.len - c->out.off > OUT_HIGH;
}

/* Handles the whole messages in c->in while the peer reads its replies. */
static void conn_process(struct conn *c)
{
	struct error err;
	json_t *msg;
	int r;

	while (!c->closed && !(c->throttled = conn_throttled(c)) && (r = wire_next(&c->in, &msg, &err)) != 0) {
		if (r < 0 && !c->authed) {
			char why[sizeof(err.text) + 40];

			snprintf(why, sizeof(why), "no credential (%s)", err.text);
			conn_auth_refuse(c, EACCES, why);
			break;
		}
		if (r < 0) {
			conn_log_warn(c, "%s; closing it", err.text);
			conn_reply_err(c, 0, -r, "%s", err.text);
			conn_close(c);
			break;
		}
		conn_message(c, msg);
		json_decref(msg);
	}
}

/* Its CPU, charged to its first request's name (cpuacct.c): the
 * connection is held to the iteration's end (its close may free it). */
static void conn_cpu_charge(void *ud, int64_t ns)
{
	struct conn *c = ud;

	c->cpu_ns += ns;
	if (!c->cpu_part)
		return;   /* kept until it names its first request */
	cpu_part_add(c->cpu_part, c->cpu_ns);
	c->cpu_ns = 0;
}

static void conn_cpu_release(void *ud)
{
	conn_unref(ud);
}

static void conn_cpu_owner(struct conn *c)
{
	if (cpu_owner_is(c))
		return;
	conn_ref(c);
	cpu_owner(c, conn_cpu_charge, conn_cpu_release);
}

static int conn_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct conn *c = userdata;
	int r;

	if (!c->node)
		conn_cpu_owner(c);
	conn_ref(c);
	if (revents & EPOLLOUT) {
		r = wire_flush(fd, &c->out);
		if (r < 0) {
			conn_close(c);
			goto done;
		}
		conn_update_events(c);
		if (c->throttled && !conn_throttled(c)) {
			/* Drained: the requests that waited, then what the socket
			 * holds (re-adding the fd raises a fresh edge). */
			conn_process(c);
			if (!c->closed && !c->throttled) {
				sd_event_source_set_enabled(c->src, SD_EVENT_OFF);
				sd_event_source_set_enabled(c->src, SD_EVENT_ON);
			}
		}
	}
	if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		for (unsigned k = 0; !c->closed && !c->throttled; k++) {
			ssize_t n;

			if (k == READS_PER_WAKE) {
				/* A peer that keeps the socket full yields to the
				 * others: re-adding the fd raises a fresh edge. */
				sd_event_source_set_enabled(c->src, SD_EVENT_OFF);
				sd_event_source_set_enabled(c->src, SD_EVENT_ON);
				break;
			}
			n = wire_read(fd, &c->in);
			if (n == -EAGAIN)
				break;
			if (n == -EINTR)
				continue;
			if (n <= 0) {
				conn_close(c);
				goto done;
			}
			/* Before its credential a peer may send a credential only. */
			if (!c->authed && wire_announced(&c->in) > TRANSPORT_AUTH_BYTES) {
				conn_auth_refuse(c, EACCES, "no credential (first message too long for one)");
				goto done;
			}
			conn_process(c);
		}
	}
	if (c->closed)
		goto done;
	/* A message begun and not finished is timed (see conns_check); an
	 * emptied buffer that grew for a large message is given back. A
	 * throttled peer's waiting requests are not "unfinished": it is timed
	 * by idle_timeout instead. A whole message since the timer started
	 * (last_active) means the one left began since: a peer that streams
	 * (a node link carrying tasks' stdin) ends most reads mid-frame and
	 * is not stalled. */
	if (c->in.off < c->in.len && !c->throttled) {
		if (!c->partial_since || c->last_active > c->partial_since)
			c->partial_since = time_mono_ns();
	} else {
		c->partial_since = 0;
		if (c->in.off == c->in.len && c->in.cap > 65536)
			wirebuf_free(&c->in);
	}
	if (conn_input_account(c) < 0) {
		conn_log_warn(c, "its uid's connections hold more unfinished input than allowed; closing it");
		conn_reply_err(c, 0, ENOBUFS, "too much unfinished input from uid %d at once; "
			       "finish or close other connections first", (int)c->uid);
		conn_close(c);
	}
done:
	conn_unref(c);
	return 0;
}

/* The server's own fds (store, log) stay out of reach: past max_conns a
 * peer is closed unanswered, in one rate-limited line. */
static bool conns_full(struct server *s)
{
	if (s->n_conns < s->max_conns)
		return false;
	if (peers_log_pass(s->peers, (uid_t)-1, 0, conn_now(s)))
		log_warn("%u connections open; refusing another", s->n_conns);
	return true;
}

static struct conn *conn_new(struct server *s, int cfd, bool tcp)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->server = s;
	c->fd = cfd;
	c->tcp = tcp;
	c->refs = 1;
	c->accepted = time_mono_ns();
	c->last_active = conn_now(s);
	return c;
}

/* c, its identity known (or, over TCP, awaited), joins the loop. */
static int conn_start(struct server *s, struct conn *c)
{
	if (sd_event_add_io(s->event, &c->src, c->fd, EPOLLIN | EPOLLET, conn_io, c) < 0)
		return -ENOMEM;
	c->io_events = EPOLLIN | EPOLLET;
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->n_conns++;
	/* The server speaks first over TCP: its nonce, which the peer's
	 * credential must carry (docs/PROTOCOL.md, "The auth frame"). */
	if (c->tcp)
		conn_send(c, auth_hello(c->nonces.server));
	return 0;
}

void conn_accept(struct server *s, int cfd, bool tcp)
{
	struct conn *c;
	int r;

	if (conns_full(s)) {
		close(cfd);
		return;
	}
	c = conn_new(s, cfd, tcp);
	if (!c) {
		close(cfd);
		return;
	}
	if (tcp) {
		struct sockaddr_storage sa = { 0 };
		socklen_t sl = sizeof(sa);

		transport_tcp_tune(cfd);
		transport_peer_name(cfd, c->peer, sizeof(c->peer));
		(void)getpeername(cfd, (struct sockaddr *)&sa, &sl);
		/* Until its credential a TCP peer waits in the gate, a budget of
		 * its own, per address and in all: never in a user's slot. */
		if (conn_gate_enter(c, &sa) < 0 || auth_nonce(c->nonces.server) < 0) {
			conn_forget(c);
			conn_free(c);
			return;
		}
	} else {
		struct ucred cred;
		socklen_t len = sizeof(cred);

		/* Identity comes from the kernel, never from the message. */
		if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			log_warn("SO_PEERCRED: %m");
			conn_free(c);
			return;
		}
		c->pid = cred.pid;
		snprintf(c->peer, sizeof(c->peer), "pid %d", (int)cred.pid);
		r = conn_authenticated(c, cred.uid, cred.gid);
		if (r < 0) {
			conn_refuse(c, r);
			conn_free(c);
			return;
		}
	}
	if (conn_start(s, c) < 0) {
		conn_forget(c);
		conn_free(c);
		return;
	}
	conn_cpu_owner(c);   /* its accept is its CPU (cpuacct.c) */
}

int server_conn_open(struct server *s, int fd, uid_t uid, gid_t gid)
{
	struct conn *c;
	int r, fl = fcntl(fd, F_GETFL);

	/* As accept4's SOCK_NONBLOCK gives every other connection. */
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || !(c = conn_new(s, fd, false))) {
		r = errno ? -errno : -ENOMEM;
		close(fd);
		return r;
	}
	snprintf(c->peer, sizeof(c->peer), "fd %d", fd);
	r = conn_authenticated(c, uid, gid);
	if (r == 0 && (r = conn_start(s, c)) < 0)
		conn_forget(c);
	if (r < 0)
		conn_free(c);
	return r;
}

/* Bytes the kernel holds for c that qpoold has not read yet. A deadline is
 * the peer's, not ours: when qpoold itself was late (a long commit, a
 * loaded host) and a peer's credential waits unread, its input handler,
 * due in the same pass, reads it; the timer must not refuse it first. */
static bool conn_unread(const struct conn *c)
{
	int n = 0;

	return ioctl(c->fd, FIONREAD, &n) == 0 && n > 0;
}

/* A peer that starts a message and never finishes it holds a buffer and a
 * slot: close it after STALL_SEC, so slow or stuck clients cannot pile up.
 * Idle clients go after idle_timeout (conns_idle). */
void conns_check(struct server *s)
{
	int64_t now = time_mono_ns();

	for (struct conn *c = s->conns, *next; c; c = next) {
		next = c->next;
		if (c->partial_since && now - c->partial_since > STALL_SEC * NSEC_PER_SEC) {
			conn_log_warn(c, "message unfinished after %ds; closing it", STALL_SEC);
			conn_close(c);
		} else if (conn_idle(c, now)) {
			conn_close(c);
		} else if (!c->authed && now - c->accepted > TRANSPORT_AUTH_SEC * NSEC_PER_SEC &&
			   !conn_unread(c)) {
			conn_auth_refuse(c, EACCES, "no credential within " STRINGIFY(TRANSPORT_AUTH_SEC) " s");
		}
	}
	conns_log_flush(s, now);
}

