/* SPDX-License-Identifier: MIT */
/* qpoold's event-driven core: connections, group commit, the scheduling pass. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "auth.h"
#include "estimate.h"
#include "jobid.h"
#include "accounts.h"
#include "qos.h"
#include "resv.h"
#include "log.h"
#include "nodes-known.h"
#include "peers.h"
#include "preempt.h"
#include "server-internal.h"
#include "suspend.h"
#include "srvhook.h"
#include "timeutil.h"
#include "usage.h"
#include "transport.h"

#define READS_PER_WAKE 16       /* reads of one connection per wake (see conn_update_events) */
/* Decisions per pass. A full pass leaves the rest to the next loop
 * iteration, so requests are served between batches: 4,096 at once made
 * a 190 ms pass on 1,000 simulated nodes of 128 PUs (~45 us a placement). */
#define DISPATCH_BATCH 512
#define TIMER_USEC 1000000      /* node timeout and stalled-client check */
#define STALL_SEC 10            /* a message must arrive whole within this */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

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
	if (c->node)
		node_link_lost(s, c);
	ties_conn_closed(s, c);
	watch_conn_closed(s, c);
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

const char *server_user_name(struct server *s, uid_t uid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	unsigned i;

	/* getpwuid goes through nsswitch (~0.12 ms): cache per uid. */
	for (i = 0; i < sizeof(s->users) / sizeof(s->users[0]); i++)
		if (s->users[i].name[0] && s->users[i].uid == uid)
			return s->users[i].name;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
		return NULL;
	i = s->users_next++ % (sizeof(s->users) / sizeof(s->users[0]));
	s->users[i].uid = uid;
	snprintf(s->users[i].name, sizeof(s->users[i].name), "%s", pw.pw_name);
	return s->users[i].name;
}

void server_pending_add(struct server *s, struct pending *p)
{
	conn_ref(p->conn);
	s->n_pending++;
	*s->pending_tail = p;
	s->pending_tail = &p->next;
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
	if (!server_user_name(c->server, uid)) {
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
	door_request(c, op, req_id, msg);
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

static int conn_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct conn *c = userdata;
	int r;

	/* Its CPU, charged to its first request's name (cpuacct.c). */
	if (!c->node)
		cpu_owner_conn(c);
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

static void conn_accept(struct server *s, int cfd, bool tcp)
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
	cpu_owner_conn(c);   /* its accept is its CPU (cpuacct.c) */
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

static int listen_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct server *s = userdata;
	bool tcp = fd == s->tcp_fd;

	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_warn("accept: %m");
			return 0;
		}
		conn_accept(s, cfd, tcp);
	}
}

static size_t pass_decide(struct server *s, struct dispatch *d);
static int pass_write(struct server *s, struct dispatch *d, size_t n, int64_t now);
static void pass_undo(struct server *s, struct dispatch *d, size_t n, int r);
static void pass_apply(struct server *s, struct dispatch *d, size_t n, int64_t now);
static void estimates_replay(struct server *s, bool timer);

/* Group commit: every submission and completion that arrived in this loop
 * iteration goes into one transaction; replies follow the commit. With
 * pass (a pass is due and results are among them: issue 39), the pass
 * runs first, on the pool as it was before these results, and its
 * dispatches join the same transaction: one commit for a job's end and
 * its successor's start. Its launches and the results' replies go out
 * only after that commit; a failed one rolls back both, the dispatches
 * undone in memory as a failed pass's are, the results not applied. */
static void pending_flush(struct server *s, bool pass)
{
	static struct dispatch d[DISPATCH_BATCH];
	struct pending *list = s->pending, *p, *next;
	int64_t now = time_wall_ns();
	char server[JOBID_SERVER_MAX];
	size_t n = 0;
	bool done = false;
	struct job *j;
	int r;

	if (!list)
		return;
	/* The name qsub prints in ID.server: the pool's, whichever server
	 * answered and whichever host qsub runs on. */
	snprintf(server, sizeof(server), "%s", s->pool_name);
	s->pending = NULL;
	s->pending_tail = &s->pending;
	s->n_pending = 0;
	for (p = list; p && pass; p = p->next) {
		if (!p->is_done)
			continue;
		j = pool_job_find(s->pool, p->jobid);
		done = true;
		/* Only jobs that end: one that goes back to the queue (a
		 * requeue, qrerun, a preemption) changes what the pass
		 * would decide, and takes the pass after its commit. */
		if (p->requeue || !j || j->rerun || j->state != JOB_RUNNING)
			pass = false;
	}
	/* Only with results: a submit alone is not in the pool before its
	 * commit, so a pass first would gain nothing. Nor while preempted
	 * jobs are suspended (their resumes are the pass's too). The pass
	 * decides before the transaction opens, as schedule_pass does
	 * (suspend_pass and preempt_pass write in transactions of their
	 * own). */
	pass = pass && done && !s->state_full && !s->n_lent;
	if (pass) {
		s->sched_dirty = false;
		n = pass_decide(s, d);
	}

	r = jobstore_begin(s->store);
	for (p = list; p && r == 0; p = p->next) {
		j = p->is_done ? pool_job_find(s->pool, p->jobid) : NULL;
		if (!p->is_done) {
			r = jobstore_job_insert(s->store, &p->submit, &p->jobid);
			if (r == 0 && p->submit.depend)
				r = depend_before_record(s, p->jobid, p->submit.depend);
		}
		else if (p->requeue && j && j->state == JOB_RUNNING)
			r = jobstore_job_requeue_result(s->store, p->jobid, p->result.reason, &p->result);
		else if (!p->requeue && j && j->rerun)   /* qrerun: back to the queue, not finished */
			r = jobstore_job_requeue_result(s->store, p->jobid,
							j->lost ? p->result.reason : "requeued by qrerun", &p->result);
		else if (!p->requeue && j)
			r = jobstore_job_finish(s->store, p->jobid, &p->result, now);
	}
	if (r == 0 && n)
		r = pass_write(s, d, n, now);
	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0) {
		jobstore_rollback(s->store);
		if (n)   /* the joint commit (t-faults-joint looks for this line) */
			log_err("job store: cannot commit results with %zu dispatches: %s", n, strerror(-r));
		else
			log_err("job store: cannot commit %s", strerror(-r));
		if (r == -ESTALE)
			server_lease_refresh(s);
		if (r == -ENOSPC)
			server_space_exhausted(s);
		if (n)
			pass_undo(s, d, n, r);
	} else if (n) {
		/* Launches first: the successor's start is the critical path. */
		pass_apply(s, d, n, now);
	}
	if (pass && !s->state_full)
		estimates_replay(s, false);
	for (p = list; p; p = next) {
		next = p->next;
		if (r == -ENOSPC && p->is_done) {
			/* A completion is not lost for want of room: it waits,
			 * unanswered, and is committed when space returns. */
			p->next = s->retry;
			s->retry = p;
			continue;
		}
		if (r == -ESTALE) {
			/* Another server took the lease: nothing was written,
			 * and the peer goes there (a node keeps its result). */
			server_standby_reply(p->conn, p->req_id);
		} else if (r < 0) {
			conn_reply_err(p->conn, p->req_id, -r, "qpoold cannot record the job: %s%s", strerror(-r),
				       r == -ENOSPC ? " (state directory full)" : "");
		} else if (!p->is_done) {
			j = calloc(1, sizeof(*j));

			if (!j) {
				log_err("out of memory: job %lld stays in the store only", (long long)p->jobid);
			} else {
				j->id = p->jobid;
				snprintf(j->queue, sizeof(j->queue), "%s", p->submit.queue);
				j->uid = p->submit.uid;
				j->state = p->submit.hold ? JOB_HELD : JOB_QUEUED;
				j->ncpus = p->submit.ncpus;
				j->ngpus = p->submit.ngpus;
				j->mem = p->submit.mem;
				j->walltime = p->submit.walltime;
				j->t_submit = p->submit.t_submit;
				j->rerunnable = p->submit.rerunnable;
				j->priority = p->submit.priority;
				j->start_after = p->submit.start_after;
				if (p->submit.chunks_json) {
					json_t *chunks = json_loads(p->submit.chunks_json, 0, NULL);
					char why[160];

					(void)job_chunks_from_json(j, chunks, why, sizeof(why));
					json_decref(chunks);
				}
				if (p->submit.place)
					(void)job_place_parse(p->submit.place, j);
				if (p->submit.depend)
					j->depend = strdup(p->submit.depend);
				j->sel = p->sel;
				p->sel = NULL;
				j->gpu_model = p->gpu_model;
				p->gpu_model = NULL;
				if (job_licenses_set(j, wire_str(json_object_get(p->strings, "attrs"),
								 "Resource_List.licenses")) == -ENOMEM)
					log_err("out of memory: job %lld's licenses are not counted", (long long)p->jobid);
				if (job_noderes_set(j, wire_str(json_object_get(p->strings, "attrs"),
								"Resource_List.node_res")) == -ENOMEM)
					log_err("out of memory: job %lld's node resources are not counted",
						(long long)p->jobid);
				{
					const char *acct = wire_str(json_object_get(p->strings, "attrs"), "Account_Name");
					const char *qos = wire_str(json_object_get(p->strings, "attrs"), "Resource_List.qos");

					j->account = acct ? strdup(acct) : NULL;
					j->qos = qos ? strdup(qos) : NULL;
					acct = wire_str(json_object_get(p->strings, "attrs"), "reservation");
					j->resv = acct ? strdup(acct) : NULL;
				}
				if (p->submit.array_spec && pool_array_set(j, p->submit.array_spec, NULL) < 0) {
					log_err("out of memory: array %lld stays in the store only", (long long)p->jobid);
					job_free(j);
				} else if (pool_job_add(s->pool, j) < 0) {
					job_free(j);
				} else if (p->submit.depend) {
					depend_before_apply(s, p->jobid, p->submit.depend);
					if (p->submit.reason) {
						j->reason = strdup(p->submit.reason);
						depend_track(s, j);
					}
				}
			}
			server_metrics_submitted(s, p->submit.queue);
			conn_reply_ok(p->conn, p->req_id,
				      json_pack("{s:I, s:s, s:b}", "jobid", (json_int_t)p->jobid, "server", server,
						"array", p->submit.array_spec != NULL));
			log_debug("job %lld submitted", (long long)p->jobid);
		} else if (p->requeue) {
			j = pool_job_find(s->pool, p->jobid);
			/* Running: not already put back by a copy of this report. */
			if (j && j->state == JOB_RUNNING) {
				bool prolog = j->prolog_hold || p->prolog;

				log_info("job %lld requeued: %s", (long long)j->id, p->result.reason);
				pool_job_release(s->pool, j);
				pool_job_state_set(s->pool, j, JOB_QUEUED);
				/* Most likely the same file system: no pass until
				 * the next check has seen room (not for a prolog). */
				if (!prolog)
					server_space_exhausted(s);
				server_prolog_hold(s, j);
			}
			if (p->req_id)
				conn_reply_ok(p->conn, p->req_id, NULL);
		} else {
			j = pool_job_find(s->pool, p->jobid);
			if (j && j->rerun) {
				log_info("job %lld requeued%s%s", (long long)j->id, j->lost ? ": " : " by qrerun",
					 j->lost ? j->lost : "");
				j->rerun = false;
				pool_job_release(s->pool, j);
				pool_job_state_set(s->pool, j, JOB_QUEUED);
				server_prolog_hold(s, j);
			} else if (j) {
				/* A line per job is a write per job: jobs that
				 * completed are logged at debug level only. */
				log_msg(p->result.state == JOB_COMPLETED ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO,
					"job %lld %s on %s", (long long)j->id, job_state_name(p->result.state),
					job_node(j) ? job_node(j) : "?");
				server_job_finished(s, j, p->result.state);
			}
			/* Results sent inside a registration have no request id. */
			if (p->req_id)
				conn_reply_ok(p->conn, p->req_id, NULL);
		}
		conn_unref(p->conn);
		json_decref(p->strings);
		nodesel_destroy(p->sel);
		free(p->gpu_model);
		free(p);
	}
	/* Always another pass: the one above saw the pool before these
	 * results (a job still counted in max_running, its array's limit,
	 * its CPUs if no job.exited came first); it mostly finds nothing and
	 * commits nothing. */
	s->sched_dirty = true;
}

void server_prolog_hold(struct server *s, struct job *j)
{
	char why[160];

	if (!j->prolog_hold || j->state != JOB_QUEUED)
		return;
	j->prolog_hold = false;
	snprintf(why, sizeof(why), "held: its node prolog failed %u times (prolog_failures_max)",
		 j->prolog_failures);
	if (jobstore_job_set_state(s->store, j->id, JOB_HELD, why) < 0) {
		log_warn("job %lld: cannot hold it after its prolog failures", (long long)j->id);
		return;
	}
	pool_job_state_set(s->pool, j, JOB_HELD);
	free(j->reason);
	j->reason = strdup(why);
	log_warn("job %lld %s", (long long)j->id, why);
}

/* The pass's decisions: the jobs placed, in memory (RUNNING, their
 * CPUs taken), nothing written yet. */
static size_t pass_decide(struct server *s, struct dispatch *d)
{
	size_t n;

	suspend_pass(s);
	n = pool_schedule(s->pool, s->config, d, DISPATCH_BATCH);
	preempt_pass(s);
	return n;
}

/* Their rows, in the transaction open. */
static int pass_write(struct server *s, struct dispatch *d, size_t n, int64_t now)
{
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		char cpus[4096];

		cpumask_format(&d[i].job->alloc[0].cpus, cpus, sizeof(cpus));
		/* Requeued while suspended (its node lost): a new run is not. */
		server_job_suspend_end(s, d[i].job);
		if (d[i].job->fresh)
			r = array_dispatch_record(s, d[i].job, now);
		if (r == 0)
			r = jobstore_job_dispatch(s->store, d[i].job->id, d[i].job->alloc[0].node, cpus, now);
		/* A one-node job's GPUs are kept in its allocation row too. */
		if (r == 0 && (d[i].job->n_alloc > 1 || d[i].job->ngpus))
			r = jobstore_alloc_insert(s->store, d[i].job);
		/* The estimate current when it starts, beside its start. */
		if (r == 0 && d[i].job->est_start && d[i].job->est_seen == s->est_replay)
			r = jobstore_job_estimate_set(s->store, d[i].job->id, false, d[i].job->est_start);
		/* Only a (queue, user)'s last stamp of the batch is kept. */
		if (r == 0 && pool_rotation_get(s->pool, d[i].job->queue, d[i].job->uid) == d[i].seq)
			r = jobstore_rotation_set(s->store, d[i].job->queue, d[i].job->uid, d[i].seq);
	}
	return r;
}

/* Their commit failed (rolled back): back to the queue in memory. */
static void pass_undo(struct server *s, struct dispatch *d, size_t n, int r)
{
	log_err("job store: cannot record dispatches: %s", strerror(-r));
	for (size_t i = 0; i < n; i++) {
		if (d[i].job->fresh) {
			array_dispatch_undo(s, d[i].job);
			continue;
		}
		pool_job_release(s->pool, d[i].job);
		pool_job_state_set(s->pool, d[i].job, JOB_QUEUED);
	}
}

/* Committed: the launches. */
static void pass_apply(struct server *s, struct dispatch *d, size_t n, int64_t now)
{
	for (size_t i = 0; i < n; i++) {
		if (d[i].job->fresh)
			array_dispatch_done(s, d[i].job, now);
		srvjob_launch(s, d[i].job, d[i].node);
		/* after:ID (and after:ARRAY[]) is met once ID starts. */
		depend_job_changed(s, d[i].job->id);
		if (d[i].job->array_id)
			depend_job_changed(s, d[i].job->array_id);
	}
	if (n == DISPATCH_BATCH)
		sd_event_source_set_enabled(s->more_src, SD_EVENT_ONESHOT);
}

/* One scheduling pass: decide, commit every dispatch in one transaction,
 * then send the launches. A crash between commit and send leaves jobs
 * that their node does not know; the node's next registration requeues
 * them. A full batch arms the defer source for another pass after the
 * event loop has looked at its other sources. */
static void schedule_pass(struct server *s)
{
	static struct dispatch d[DISPATCH_BATCH];
	size_t n;
	int64_t now;
	int r;

	/* No room for the launches' files or the dispatch commit: the jobs
	 * stay queued (space.c resumes). */
	if (s->state_full)
		return;
	n = pass_decide(s, d);
	if (n == 0)
		return;
	now = time_wall_ns();
	r = jobstore_begin(s->store);
	if (r == 0)
		r = pass_write(s, d, n, now);
	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0) {
		jobstore_rollback(s->store);
		if (r == -ENOSPC)
			server_space_exhausted(s);
		pass_undo(s, d, n, r);
		return;
	}
	pass_apply(s, d, n, now);
}

/* Start estimates (estimate.c, docs/ESTIMATES.md): a replay beside the
 * pass, not in it, at most every estimate_interval seconds (the 1 s
 * timer runs one that a pass left due). Each job's first estimate is
 * recorded in the store, all of a replay's in one transaction. */
static void estimates_replay(struct server *s, bool timer)
{
	struct pool_estimate_stats st;
	int64_t mono = time_mono_ns();
	uint64_t ns;
	int r;

	if (!s->config->estimate_depth || (timer && !s->est_due))
		return;
	if (s->est_replay && mono - s->est_mono < (int64_t)s->config->estimate_interval * NSEC_PER_SEC) {
		s->est_due = true;
		return;
	}
	s->est_due = false;
	s->est_mono = mono;
	s->est_replay++;
	r = pool_estimate(s->pool, s->config, time(NULL), s->est_replay, &st);
	ns = (uint64_t)(time_mono_ns() - mono);
	s->est_ns_last = ns;
	if (ns > s->est_ns_max)
		s->est_ns_max = ns;
	if (r < 0)
		log_warn("start estimates: %s", strerror(-r));
	if (st.n_fresh) {
		r = jobstore_begin(s->store);
		for (size_t i = 0; i < st.n_fresh && r == 0; i++)
			r = jobstore_job_estimate_set(s->store, st.fresh[i]->id, true, st.fresh[i]->est_first);
		if (r == 0)
			r = jobstore_commit(s->store);
		if (r < 0) {
			jobstore_rollback(s->store);
			log_warn("job store: cannot record %zu first start estimates: %s", st.n_fresh, strerror(-r));
		}
	}
	free(st.fresh);
}

static void schedule(struct server *s)
{
	schedule_pass(s);
	if (!s->state_full)
		estimates_replay(s, false);
}

void server_job_finished(struct server *s, struct job *j, enum job_state state)
{
	struct job *a = j->parent;

	if (a) {
		pool_array_ended(a, state);
		if (s->n_array_due == s->cap_array_due) {
			size_t cap = s->cap_array_due ? 2 * s->cap_array_due : 16;
			int64_t *n = realloc(s->array_due, cap * sizeof(*n));

			if (n) {
				s->array_due = n;
				s->cap_array_due = cap;
			}
		}
		if (s->n_array_due < s->cap_array_due)
			s->array_due[s->n_array_due++] = a->id;
		else
			log_err("out of memory: array %lld ends at the next start", (long long)a->id);
	}
	srvjob_ended(s, j, state);
	server_metrics_ended(s, j->queue, state);
	depend_forget(s, j);
	depend_job_changed(s, j->id);
	server_job_suspend_end(s, j);
	usage_job_finished(s, j);
	pool_job_remove(s->pool, j);
}

/* Arrays whose subjobs ended: end those with nothing left. */
static void arrays_due_check(struct server *s)
{
	for (size_t i = 0; i < s->n_array_due; i++) {
		struct job *a = pool_job_find(s->pool, s->array_due[i]);

		if (a && a->array)
			array_check_done(s, a);
	}
	s->n_array_due = 0;
}

/* How long results of jobs that ended may wait for the next pass's
 * commit (issue 39): a job's end and another job's dispatch are then one
 * fdatasync, not two. */
#define LINGER_NS (2 * NSEC_PER_MSEC)

static int linger_handler(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct server *s = userdata;

	/* Due whatever the clocks say: the post handler, right after,
	 * commits what waits. */
	if (s->linger_since)
		s->linger_since = 1;
	return 0;
}

/* Whether the pending results may wait, at most LINGER_NS, for the next
 * pass: only results of jobs that end and whose CPUs are already back
 * (job.exited came first, so no job waits for those CPUs), nothing else
 * pending and no pass due now. What waits is unanswered and unapplied:
 * nothing is told before it is on disk. */
static bool pending_linger(struct server *s)
{
	int64_t now = time_mono_ns();

	if (!s->pending || s->sched_dirty || s->n_lent || s->state_full || s->stopping || !s->linger_src)
		return false;
	if (s->linger_since && now - s->linger_since >= LINGER_NS)
		return false;
	for (struct pending *p = s->pending; p; p = p->next) {
		struct job *j = p->is_done ? pool_job_find(s->pool, p->jobid) : NULL;

		if (!j || p->requeue || j->rerun || j->state != JOB_RUNNING || !j->n_alloc)
			return false;
		/* A job another waits on: its end is on that one's way. */
		if (depend_has_waiters(s, j->id) || (j->array_id && depend_has_waiters(s, j->array_id)))
			return false;
		for (unsigned i = 0; i < j->n_alloc; i++)
			if (!j->alloc[i].cpus_back)
				return false;
	}
	if (!s->linger_since) {
		s->linger_since = now;
		if (sd_event_source_set_time_relative(s->linger_src, LINGER_NS / 1000) < 0 ||
		    sd_event_source_set_enabled(s->linger_src, SD_EVENT_ONESHOT) < 0) {
			s->linger_since = 0;
			return false;
		}
	}
	return true;
}

static int post_handler(sd_event_source *src, void *userdata)
{
	struct server *s = userdata;
	int r;

	if (server_standby(s))
		return 0;
	if (!pending_linger(s)) {
		s->linger_since = 0;
		pending_flush(s, s->sched_dirty);
	}
	if (s->nodes_noted) {
		s->nodes_noted = false;
		r = nodes_known_flush(s->store, s->pool, time_wall_ns());
		if (r < 0)
			log_warn("job store: cannot record registered nodes (%s); a restart before their "
				 "next registration does not know them", strerror(-r));
	}
	arrays_due_check(s);
	depend_recheck(s);
	if (s->sched_dirty) {
		s->sched_dirty = false;
		schedule(s);
	}
	/* The fence refused a write: another server is active. */
	if (jobstore_lease_lost(s->store)) {
		server_step_down(s, "the job store refused a write (lease taken, -ESTALE)");
		return 0;
	}
	/* What this iteration committed, to the watchers. */
	watch_flush(s);
	/* After the replies and launches: a checkpoint (two fsyncs, ~1 ms)
	 * delays no answer that is already out. */
	r = jobstore_checkpoint(s->store);
	if (r < 0)
		log_warn("job store: checkpoint: %s", strerror(-r));
	return 0;
}

/* The last pass was full: run another. Post sources run only after some
 * other source was dispatched, so this one marks the pass due and the post
 * handler, which runs right after it, does it with the group commit. */
static int more_handler(sd_event_source *src, void *userdata)
{
	struct server *s = userdata;

	s->sched_dirty = true;
	return 0;
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
static void conns_check(struct server *s)
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

static int timer_handler(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct server *s = userdata;

	conns_check(s);
	if (server_standby(s))
		goto rearm;
	server_space_check(s);
	nodes_check_timeouts(s);
	ties_check(s);
	watch_prune(s);
	watch_flush(s);
	if (pool_deferred_due(s->pool, time(NULL)))
		s->sched_dirty = true;
	/* A preemption's wait is over: its job may take others (preempt.c),
	 * or its suspended victims are thawed, even when nothing else stirs. */
	if (s->preempt_due && time_wall_ns() >= s->preempt_due) {
		s->preempt_due = 0;
		s->sched_dirty = true;
	}
	estimates_replay(s, true);
	resv_tick(s);
rearm:
	sd_event_source_set_time_relative(src, TIMER_USEC);
	sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
	return 0;
}

static int load_job(struct job *j, void *userdata)
{
	struct server *s = userdata;
	const struct queue_conf *q = config_queue(s->config, j->queue);
	int r;

	/* The store keeps a running job's CPUs (claim = cpus: SMT siblings
	 * are not kept); its reserve kind is taken back from its queue. */
	j->reserve = q ? q->reserve : QUEUE_RESERVE_NONE;
	if (j->array_spec && array_load(s, j) < 0) {
		job_free(j);
		return -EINVAL;
	}
	/* Its nodes are down until they register; one that never does within
	 * twice node_timeout is lost and the job requeued or failed. Twice:
	 * after a takeover, a node whose link to the old active was cut
	 * learns it only when its own TCP_USER_TIMEOUT (node_timeout) fires,
	 * counted from the cut, and then walks its server list, each dead
	 * entry costing a connect timeout; this server's clock starts a
	 * lease later. With once, such a node came back seconds too late and
	 * its running jobs were requeued and killed (t-ha-hosts.sh, (c)). */
	/* Suspended when the last server stopped (suspend.c): its gded
	 * keeps it frozen. Its clock apart restarts from now. */
	if (j->state == JOB_RUNNING && j->reason && strncmp(j->reason, "suspended by", 12) == 0) {
		j->suspended = true;
		j->t_suspend = time_wall_ns();
	}
	r = pool_job_add(s->pool, j);
	/* A preemption's victim (its comment names the preemptor) lends its
	 * CPUs and GPUs to it again and resumes when it ends, as before. */
	if (r == 0 && j->suspended)
		suspend_loaded(s, j);
	for (unsigned i = 0; r == 0 && i < j->n_alloc; i++)
		if (j->alloc[i].where && !j->alloc[i].where->down_since)
			j->alloc[i].where->down_since = time_mono_ns() +
				(int64_t)s->config->node_timeout * NSEC_PER_SEC;
	if (r == 0)
		depend_loaded(s, j);

	if (r < 0)
		job_free(j);
	return r;
}

static int admin_rotation(const char *queue, long long uid, long long seq, const char *text, void *ud)
{
	struct server *s = ud;

	return pool_rotation_set(s->pool, queue, (uid_t)uid, (uint64_t)seq);
}

/* qmgr's queue settings win over the file's until qmgr changes them again. */
static int admin_queue(const char *queue, long long enabled, long long started, const char *reason, void *ud)
{
	struct server *s = ud;
	struct queue_conf *q = (struct queue_conf *)config_queue(s->config, queue);

	if (!q)
		return 0;
	if (enabled >= 0)
		q->enabled = enabled;
	if (started >= 0)
		q->started = started;
	snprintf(q->reason, sizeof(q->reason), "%s", reason ? reason : "");
	return 0;
}

static int admin_node(const char *node, long long drain, long long t_drain, const char *reason, void *ud)
{
	struct server *s = ud;
	struct node *n = pool_node_get(s->pool, node);

	if (!n)
		return -ENOMEM;
	n->drain = drain > 0;
	n->drain_by = drain > 0 ? (drain <= DRAIN_HOOK ? (uint8_t)drain : DRAIN_ADMIN) : DRAIN_NONE;
	free(n->drain_reason);
	n->drain_reason = reason ? strdup(reason) : NULL;
	/* Stored in s; -1: drained before the store kept the time. */
	n->drain_time = drain > 0 && t_drain > 0 ? t_drain * 1000000000LL : 0;
	return 0;
}

static int admin_none(const char *key, long long a, long long b, const char *text, void *ud)
{
	return 0;
}

int server_admin_load(struct server *s, bool all)
{
	struct jobstore_admin_cbs cbs = {
		.rotation = all ? admin_rotation : admin_none,
		.queue = admin_queue,
		.node = all ? admin_node : admin_none,
	};

	return jobstore_admin_load(s->store, &cbs, s);
}

static int dir_make(const char *path, mode_t mode, struct error *err)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return error_set(err, -errno, "mkdir %s: %s", path, strerror(errno));
	if (chmod(path, mode) < 0)
		return error_set(err, -errno, "chmod %s: %s", path, strerror(errno));
	return 0;
}

static int store_file_private(const char *db, struct error *err)
{
	static const char *suffix[] = { "", "-wal", "-shm" };
	char path[PATH_MAX + 32];
	int fd;

	fd = open(db, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return error_set(err, -errno, "%s: %s", db, strerror(errno));
	close(fd);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", db, suffix[i]);
		if (chmod(path, 0600) < 0 && errno != ENOENT)
			return error_set(err, -errno, "chmod %s: %s", path, strerror(errno));
	}
	return 0;
}

static int listen_open(struct server *s, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = s->config->socket;
	char dir[PATH_MAX];
	char *slash;
	int fd, r;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return error_set(err, -errno, "mkdir %s: %s", dir, strerror(errno));
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, -errno, "socket: %s", strerror(errno));
	/* A socket file nobody answers on is stale; one that answers is another qpoold. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return error_set(err, -EADDRINUSE, "another qpoold is serving %s", path);
	}
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, -errno, "socket: %s", strerror(errno));
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || listen(fd, SOMAXCONN) < 0) {
		r = error_set(err, -errno, "listen on %s: %s", path, strerror(errno));
		close(fd);
		return r;
	}
	s->listen_fd = fd;
	return 0;
}

int server_state_load(struct server *s)
{
	int r;

	/* The known nodes first: a restarted server accepts what fits them
	 * before they register again (they are down until then). */
	r = nodes_known_load(s->store, s->pool);
	if (r == 0)
		r = jobstore_load_active(s->store, load_job, s);
	if (r == 0)
		r = server_admin_load(s, true);
	if (r == 0) {
		accounts_free(s->accounts);
		s->accounts = NULL;
		r = accounts_load(s->store, &s->accounts);
	}
	if (r == 0) {
		qos_free(s->qos);
		s->qos = NULL;
		r = qos_load(s->store, &s->qos);
	}
	if (r == 0) {
		accounts_apply(s->accounts, s->pool);
		qos_apply(s->qos, s->pool);
		r = usage_load(s);
	}
	if (r == 0) {
		resvs_free(s->resvs);
		s->resvs = NULL;
		r = resvs_load(s->store, &s->resvs);
		if (r == 0)
			r = resvs_apply(s->resvs, s->pool);
		if (r == 0)
			resv_tick(s);   /* one that ended while no server ran moves on now */
	}
	if (r == 0)
		array_loaded(s);
	return r;
}

int server_create(sd_event *e, struct config *config, struct server **ret, struct error *err)
{
	struct server *s;
	char path[PATH_MAX + 16];
	int r;

	s = calloc(1, sizeof(*s));
	if (!s) {
		config_destroy(config);
		return error_set(err, -ENOMEM, "out of memory");
	}
	s->event = sd_event_ref(e);
	s->config = config;
	/* Until the store's is read at the takeover (server-lease.c). */
	jobid_server_name(config->server_name, s->pool_name, sizeof(s->pool_name));
	s->listen_fd = -1;
	s->tcp_fd = -1;
	s->pending_tail = &s->pending;
	/* One fd per client or node: as many as the hard limit allows. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
			(void)getrlimit(RLIMIT_NOFILE, &rl);
			s->max_conns = rl.rlim_cur > 128 ? (unsigned)(rl.rlim_cur - 64) : 64;
		} else {
			s->max_conns = 960;
		}
		s->root_reserve = conns_root_reserve(s->max_conns);
	}
	/* A hook no one may run is refused here, before anything is opened:
	 * one line, and qpoold does not start. */
	r = srvhooks_config_check(config, err);
	if (r < 0)
		goto done;
	r = peers_create(&s->peers);
	if (r == 0)
		r = gate_create(&s->gate);
	if (r == 0)
		r = srvhooks_create(e, &s->hooks);
	if (r < 0) {
		error_set(err, r, "out of memory");
		goto done;
	}

	/* 0711: users reach their own job files by name, list nothing. */
	r = dir_make(config->state_dir, 0711, err);
	if (r < 0)
		goto done;
	if (config->store == CONFIG_STORE_POSTGRESQL) {
		r = jobstore_open(JOBSTORE_POSTGRESQL, config->store_dsn, &s->store, err);
	} else {
		snprintf(path, sizeof(path), "%s/qpool.db", config->state_dir);
		/* The store holds every user's scripts and environments, and a
		 * user who knows its name can open it despite the 0711
		 * directory: 0600. SQLite gives -wal and -shm the mode of the
		 * database file. */
		r = store_file_private(path, err);
		if (r == 0)
			r = jobstore_open(JOBSTORE_SQLITE, path, &s->store, err);
	}
	if (r < 0)
		goto done;
	r = pool_create(&s->pool);
	if (r == 0)
		usage_configure(s);
	if (r < 0) {
		error_set(err, r, "out of memory");
		goto done;
	}
	/* Jobs and settings are loaded when this server takes the lease
	 * (server_state_load); until then it is a standby. */
	server_space_check(s);
	r = listen_open(s, err);
	if (r < 0)
		goto done;
	if (config->listen[0]) {
		/* Every TCP peer authenticates with munged: without one, no
		 * TCP peer could ever be served. */
		r = auth_probe(config->munge_socket, err);
		if (r == 0)
			r = transport_listen_tcp(config->listen, &s->tcp_fd, err);
		if (r < 0)
			goto done;
		r = sd_event_add_io(e, &s->tcp_src, s->tcp_fd, EPOLLIN, listen_io, s);
		if (r < 0) {
			error_set(err, r, "event loop: %s", strerror(-r));
			goto done;
		}
	}
	r = sd_event_add_io(e, &s->listen_src, s->listen_fd, EPOLLIN, listen_io, s);
	if (r >= 0)
		r = sd_event_add_post(e, &s->post_src, post_handler, s);
	if (r >= 0)
		r = sd_event_add_defer(e, &s->more_src, more_handler, s);
	if (r >= 0)
		r = sd_event_source_set_enabled(s->more_src, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_time_relative(e, &s->timer_src, CLOCK_MONOTONIC, TIMER_USEC, 0, timer_handler, s);
	/* 1 us accuracy: sd-event's default (0) would let it slip 250 ms. */
	if (r >= 0)
		r = sd_event_add_time_relative(e, &s->linger_src, CLOCK_MONOTONIC, LINGER_NS / 1000, 1,
					       linger_handler, s);
	if (r >= 0)
		r = sd_event_source_set_enabled(s->linger_src, SD_EVENT_OFF);
	if (r < 0) {
		error_set(err, r, "event loop: %s", strerror(-r));
		goto done;
	}
	/* Before the lease: a server that cannot serve the metrics it was
	 * told to never becomes the active one (docs/METRICS.md). */
	r = server_metrics_start(s, err);
	if (r < 0)
		goto done;
	r = server_lease_start(s, err);
done:
	if (r < 0) {
		server_destroy(s);
		return r;
	}
	*ret = s;
	return 0;
}

void server_destroy(struct server *s)
{
	if (!s)
		return;
	/* Node events noted before the stop are kept (the lease still held). */
	watch_notes_flush(s);
	s->stopping = true;
	/* Hooks in flight are killed, their requests never committed. */
	srvhooks_destroy(s->hooks);
	s->hooks = NULL;
	/* Replies that wait for a commit: commit them now, so nothing acknowledged is lost. */
	pending_flush(s, false);
	/* A clean stop hands the lease on at once. */
	server_lease_stop(s);
	/* Completions still without room: their nodes send them again. */
	for (struct pending *p = s->retry, *next; p; p = next) {
		next = p->next;
		conn_unref(p->conn);
		json_decref(p->strings);
		nodesel_destroy(p->sel);
		free(p->gpu_model);
		free(p);
	}
	s->retry = NULL;
	free(s->array_due);
	while (s->conns)
		conn_close(s->conns);
	server_metrics_stop(s);
	accounts_free(s->accounts);
	qos_free(s->qos);
	resvs_free(s->resvs);
	sd_event_source_disable_unref(s->listen_src);
	sd_event_source_disable_unref(s->tcp_src);
	if (s->tcp_fd >= 0)
		close(s->tcp_fd);
	sd_event_source_disable_unref(s->post_src);
	sd_event_source_disable_unref(s->more_src);
	sd_event_source_disable_unref(s->timer_src);
	sd_event_source_disable_unref(s->linger_src);
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		unlink(s->config->socket);
	}
	task_routes_destroy(s);
	ties_destroy(s);
	watch_destroy(s);
	depend_destroy(s);
	pool_destroy(s->pool);
	peers_destroy(s->peers);
	gate_destroy(s->gate);
	jobstore_close(s->store);
	config_destroy(s->config);
	sd_event_unref(s->event);
	free(s);
}

int server_reload(struct server *s, struct error *err)
{
	struct config *c;
	int r;

	r = config_load(s->config->path, &c, err);
	if (r < 0)
		return r;
	if (strcmp(c->socket, s->config->socket) != 0 || strcmp(c->state_dir, s->config->state_dir) != 0 ||
	    strcmp(c->listen, s->config->listen) != 0 || strcmp(c->munge_socket, s->config->munge_socket) != 0 ||
	    c->store != s->config->store || strcmp(c->store_dsn, s->config->store_dsn) != 0 ||
	    strcmp(c->metrics_listen, s->config->metrics_listen) != 0) {
		config_destroy(c);
		return error_set(err, -EINVAL, "%s: socket, listen, metrics_listen, munge_socket, state_dir, store and store_dsn"
				 " take effect only at restart", s->config->path);
	}
	/* The lease's length is written at each renewal: all servers must
	 * agree on it while one holds the lease. */
	if (strcmp(c->advertise, s->config->advertise) != 0 || strcmp(c->server_id, s->config->server_id) != 0 ||
	    c->lease_time != s->config->lease_time || c->lease_renew != s->config->lease_renew) {
		config_destroy(c);
		return error_set(err, -EINVAL, "%s: advertise, server_id, lease_time and lease_renew take effect only at restart",
				 s->config->path);
	}
	/* A hook that may not run: the whole reload is refused, so the hook
	 * in use stays (qpool-hooks(5)). */
	r = srvhooks_config_check(c, err);
	if (r < 0) {
		config_destroy(c);
		return r;
	}
	/* A queue that still holds jobs cannot go away under them. */
	for (size_t i = 0; i < s->config->n_queues; i++) {
		const char *name = s->config->queues[i].name;
		unsigned n = 0;

		if (config_queue(c, name))
			continue;
		for (struct job *j = pool_jobs(s->pool); j; j = j->next)
			if (strcmp(j->queue, name) == 0)
				n++;
		if (n) {
			config_destroy(c);
			return error_set(err, -EBUSY, "%s: queue %s still holds %u job%s; "
					 "disable it and let them finish first", s->config->path, name, n,
					 n == 1 ? "" : "s");
		}
	}
	config_destroy(s->config);
	s->config = c;
	usage_configure(s);
	(void)server_admin_load(s, false);
	/* A [server] name set or changed renames the pool now. */
	if (s->config->server_name[0] && strcmp(s->config->server_name, s->pool_name) != 0 &&
	    !server_standby(s) && server_pool_name_settle(s) < 0)
		log_err("job store: cannot keep the pool's name %s", s->pool_name);
	s->sched_dirty = true;
	return 0;
}
