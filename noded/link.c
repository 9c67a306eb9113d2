/* SPDX-License-Identifier: MIT */
/* qnoded's connection to qpoold: connect with back-off, register, heartbeat, dispatch. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "log.h"
#include "noded.h"
#include "timeutil.h"
#include "transport.h"
#include "wire.h"

#define RETRY_FIRST_US  200000ULL    /* 0.2 s, doubling ... */
#define RETRY_MAX_US   1000000ULL    /* ... up to 1 s */

enum link_state {
	LINK_DOWN,          /* waiting to retry */
	LINK_HELLO,         /* TCP: connected, awaiting the server's hello */
	LINK_PROVING,       /* TCP: our credential sent, awaiting the server's */
	LINK_REGISTERING,   /* connected, node.register sent */
	LINK_UP,            /* registered */
};

struct link_req {
	uint64_t id;
	link_reply_f cb;
	int64_t arg;
	struct link_req *next;
};

struct link {
	struct noded *nd;
	enum link_state state;
	int fd;
	sd_event_source *io;
	sd_event_source *retry;
	sd_event_source *heartbeat;
	sd_event_source *deadline;  /* bounds a TCP connect and handshake */
	uint64_t retry_us;
	size_t cur;              /* the entry of the server list tried last */
	size_t failed;           /* servers that failed in a row since registering */
	bool next_now;           /* the next server is tried after RETRY_FIRST_US */
	char *follow;            /* the active a standby named: tried next, once */
	bool standby_logged;     /* a standby reply was logged since registering */
	bool outage_logged;
	bool impostor_logged;    /* an unproven server was logged since the last registration */
	struct auth_nonces nonces;
	uint64_t next_id;
	struct wirebuf in, out;
	struct link_req *reqs;   /* awaiting replies, oldest last */
};

static void link_retry_schedule(struct link *l);
static void link_handshake(struct link *l, const json_t *msg);

/* The server the link is at or tries next: the active a standby named,
 * else the list's entry cur (the list is read from the config each time:
 * a simulating qnoded holds thousands of links). */
static const char *link_where(const struct link *l, struct transport_servers *list)
{
	struct error err;

	if (l->follow)
		return l->follow;
	if (transport_servers_of(l->nd->config, list, &err) < 0 || list->n == 0)
		return l->nd->config->socket;   /* checked by link_create */
	return list->addr[l->cur % list->n];
}

/* The server tried has failed (unreachable, lost, not qpoold, a standby
 * naming no active): the next one of the list is tried, at once until
 * each has failed once in a row, then at the back-off's pace. */
static void link_advance(struct link *l)
{
	struct transport_servers list;
	struct error err;
	size_t n = transport_servers_of(l->nd->config, &list, &err) < 0 ? 1 : list.n;

	if (l->follow) {
		free(l->follow);
		l->follow = NULL;
	}
	l->cur = (l->cur + 1) % (n ? n : 1);
	l->next_now = ++l->failed % n != 0;
}

bool link_registered(const struct link *l)
{
	return l && l->state == LINK_UP;
}

/* Closes the connection; every awaited reply is answered with NULL. */
static void link_drop(struct link *l)
{
	struct link_req *reqs = l->reqs;

	l->io = sd_event_source_disable_unref(l->io);
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	wirebuf_free(&l->in);
	wirebuf_free(&l->out);
	sd_event_source_set_enabled(l->heartbeat, SD_EVENT_OFF);
	sd_event_source_set_enabled(l->deadline, SD_EVENT_OFF);
	if (l->state == LINK_UP)
		tasks_link_lost(l->nd->tasks);
	l->state = LINK_DOWN;
	l->reqs = NULL;
	while (reqs) {
		struct link_req *q = reqs;

		reqs = q->next;
		if (q->cb)
			q->cb(l->nd, NULL, q->arg);
		free(q);
	}
}

static void link_lost(struct link *l, const char *why)
{
	/* Once per outage: a link that never came up again says nothing more. */
	if (l->state == LINK_UP || (l->state != LINK_DOWN && !l->outage_logged))
		log_warn("lost qpoold: %s; reconnecting", why);
	link_drop(l);
	l->outage_logged = true;
	l->retry_us = RETRY_FIRST_US;
	link_advance(l);
	link_retry_schedule(l);
}

/* Writes what the socket takes and asks for EPOLLOUT only while more is left. */
static int link_flush(struct link *l)
{
	int r = wire_flush(l->fd, &l->out);

	if (r < 0)
		return r;
	return sd_event_source_set_io_events(l->io, EPOLLIN | EPOLLET | (r == 1 ? EPOLLOUT : 0));
}

/* Queues req with id and awaits its reply (the credential's is id 0). */
static int link_send_id(struct link *l, json_t *req, uint64_t id, link_reply_f cb, int64_t arg)
{
	struct link_req *q;
	int r;

	q = calloc(1, sizeof(*q));
	if (!q) {
		json_decref(req);
		return -ENOMEM;
	}
	q->id = id;
	q->cb = cb;
	q->arg = arg;
	r = json_object_set_new(req, "id", json_integer((json_int_t)q->id)) < 0 ? -ENOMEM : 0;
	if (r == 0)
		r = wire_queue(&l->out, req);
	json_decref(req);
	if (r < 0) {
		free(q);
		return r;
	}
	q->next = l->reqs;
	l->reqs = q;
	r = link_flush(l);
	if (r < 0) {
		/* The request is queued with the others and answered NULL. */
		log_debug("send to qpoold: %s", strerror(-r));
		link_lost(l, strerror(-r));
	}
	return 0;
}

static int link_send(struct link *l, json_t *req, link_reply_f cb, int64_t arg)
{
	return link_send_id(l, req, ++l->next_id, cb, arg);
}

int link_call(struct link *l, json_t *req, link_reply_f cb, int64_t arg)
{
	if (!link_registered(l)) {
		json_decref(req);
		return -ENOTCONN;
	}
	return link_send(l, req, cb, arg);
}

size_t link_pending(const struct link *l)
{
	return l ? l->out.len - l->out.off : 0;
}

int link_notify(struct link *l, json_t *msg)
{
	int r;

	if (!msg)
		return -ENOMEM;
	if (!link_registered(l)) {
		json_decref(msg);
		return -ENOTCONN;
	}
	r = json_object_set_new(msg, "id", json_integer(0)) < 0 ? -ENOMEM : 0;
	if (r == 0)
		r = wire_queue(&l->out, msg);
	json_decref(msg);
	if (r < 0)
		return r;
	r = link_flush(l);
	if (r < 0) {
		/* Not link_lost here: its caller (tasks.c) is in the middle of
		 * its lists. The shutdown wakes the handler, which drops the
		 * link. */
		log_debug("send to qpoold: %s", strerror(-r));
		(void)shutdown(l->fd, SHUT_RDWR);
		return r;
	}
	return 0;
}

static void link_heartbeat_reply(struct noded *nd, const json_t *reply, int64_t arg)
{
	if (reply && !wire_bool(reply, "ok", 0))
		log_warn("qpoold refused a heartbeat: %s", wire_str(reply, "error") ?: "(no reason given)");
}

static void link_heartbeat_arm(struct link *l)
{
	uint64_t every = l->nd->config->heartbeat_interval;

	sd_event_source_set_time_relative(l->heartbeat, (every ? every : 1) * 1000000ULL);
	sd_event_source_set_enabled(l->heartbeat, SD_EVENT_ONESHOT);
}

static int link_on_heartbeat(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct link *l = userdata;
	json_t *req;

	link_heartbeat_arm(l);
	req = json_pack("{s:s}", "op", "node.heartbeat");
	if (req)
		link_call(l, req, link_heartbeat_reply, 0);
	return 0;
}

static void link_register_reply(struct noded *nd, const json_t *reply, int64_t arg)
{
	struct link *l = nd->link;

	if (!reply)
		return;
	if (!wire_bool(reply, "ok", 0)) {
		/* e.g. the name is still held by a connection qpoold has not
		 * yet seen die: keep trying, quietly after the first time. */
		if (!l->outage_logged)
			log_err("qpoold refused registration of node %s: %s; retrying", nd->name,
				wire_str(reply, "error") ?: "(no reason given)");
		link_drop(l);
		l->outage_logged = true;
		l->retry_us = RETRY_MAX_US;
		link_retry_schedule(l);
		return;
	}
	l->state = LINK_UP;
	l->outage_logged = false;
	l->impostor_logged = false;
	l->standby_logged = false;
	l->failed = 0;
	l->next_now = false;
	l->retry_us = RETRY_FIRST_US;
	log_info("registered with qpoold as node %s (%zu running)", nd->name,
		 jobs_running_count(nd->jobs));
	link_heartbeat_arm(l);
	/* The results went with the registration; each is also sent as a
	 * job.done, whose ok (after qpoold's commit) is what frees its files. */
	jobs_results_send(nd->jobs);
}

/* The IPv4 address the link leaves this node from, into buf: where the
 * job's other nodes reach it (qpoold may see another: a relay's, a
 * NAT's). 0, or -ENOENT: not TCP over IPv4, or a loopback one. */
static int link_local_addr(int fd, char *buf, size_t len)
{
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);

	if (getsockname(fd, (struct sockaddr *)&sin, &slen) < 0 || slen != sizeof(sin) ||
	    sin.sin_family != AF_INET || (ntohl(sin.sin_addr.s_addr) >> 24) == 127 ||
	    !inet_ntop(AF_INET, &sin.sin_addr, buf, (socklen_t)len))
		return -ENOENT;
	return 0;
}

static json_t *link_register_msg(struct noded *nd, int fd)
{
	const struct node_topo *t = &nd->topo;
	char cpus[4096], addr[INET_ADDRSTRLEN];

	cpumask_format(&t->cpus, cpus, sizeof(cpus));
	return json_pack("{s:s, s:s, s:s, s:s, s:{s:i, s:i, s:i, s:i, s:I}, s:s*, s:s, s:b, s:s, s:o, s:o, s:s*, s:o*}",
			 "op", "node.register", "name", nd->name, "cpus", cpus, "mems", t->mems,
			 "topology", "packages", (int)t->packages, "numa", (int)t->numa,
			 "cores", (int)t->cores, "pus", (int)t->pus, "mem", (json_int_t)t->mem,
			 "hwloc", nd->topo_xml,
			 "cgroup", cgroup_mode_name(nd->cgroup_mode), "rt", nd->rt,
			 "rt_reason", nd->rt_reason, "running", jobs_running_json(nd->jobs),
			 "results", jobs_results_json(nd->jobs),
			 "addr", link_local_addr(fd, addr, sizeof(addr)) == 0 ? addr : NULL,
			 "gpus", nd->n_gpus ? gpu_list_json(nd->gpus, nd->n_gpus) : NULL);
}

/* A standby's reply (docs/PROTOCOL.md, "Standby, and the client's
 * rules"), to the registration or
 * to anything sent since this server stepped down: it did nothing. The
 * link goes to the active it names, else to the next server; every reply
 * awaited is answered NULL, so a job's result stays in its file and goes
 * to the active with the registration (link_register_reply). */
static void link_follow(struct link *l, const json_t *msg)
{
	struct transport_servers list;
	const char *active = wire_str(msg, "active");
	bool named = false;
	struct error err;
	size_t n;

	if (!l->standby_logged)
		log_info("%s; following %s", wire_str(msg, "error") ?: "qpoold is a standby",
			 active ? active : "the next server");
	l->standby_logged = true;
	l->outage_logged = true;
	if (active && strcmp(active, link_where(l, &list)) != 0 && strlen(active) < TRANSPORT_ADDR_MAX &&
	    transport_addr_check(active, &err) == 0)
		named = true;
	n = transport_servers_of(l->nd->config, &list, &err) < 0 ? 1 : list.n;
	link_drop(l);
	if (named) {
		char *to = strdup(active);

		if (to) {
			free(l->follow);
			l->follow = to;
			/* As link_advance: servers that name each other back
			 * off once a round. */
			l->next_now = ++l->failed % n != 0 || l->failed == 1;
		} else {
			link_advance(l);
		}
	} else {
		link_advance(l);
	}
	link_retry_schedule(l);
}

static void link_dispatch(struct link *l, json_t *msg, int64_t stamp)
{
	const char *op = wire_str(msg, "op");

	if (l->state == LINK_HELLO || l->state == LINK_PROVING) {
		link_handshake(l, msg);
		return;
	}
	if (!op && wire_bool(msg, "standby", 0)) {
		link_follow(l, msg);
		return;
	}
	if (op) {
		if (strcmp(op, "job.launch") == 0)
			jobs_launch(l->nd->jobs, msg, stamp);
		else if (strcmp(op, "job.signal") == 0)
			jobs_signal(l->nd->jobs, msg);
		else if (strncmp(op, "task.", 5) == 0)
			tasks_link_frame(l->nd->tasks, op, msg);
		else
			log_warn("qpoold sent unknown op \"%s\": ignored", op);
		return;
	}
	/* A reply: match it to its request. */
	if (json_is_integer(json_object_get(msg, "id"))) {
		uint64_t id = (uint64_t)wire_int(msg, "id", 0);

		for (struct link_req **pp = &l->reqs; *pp; pp = &(*pp)->next) {
			struct link_req *q = *pp;

			if (q->id != id)
				continue;
			*pp = q->next;
			if (q->cb)
				q->cb(l->nd, msg, q->arg);
			free(q);
			return;
		}
	}
	log_warn("qpoold sent a message with neither op nor a known id: ignored");
}

static int link_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct link *l = userdata;
	struct error err = { "" };
	json_t *msg;
	ssize_t n;
	int r;

	if (revents & EPOLLOUT) {
		r = link_flush(l);
		if (r < 0) {
			link_lost(l, strerror(-r));
			return 0;
		}
	}
	if (!(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return 0;
	for (;;) {
		int64_t stamp;

		n = wire_read(l->fd, &l->in);
		if (n == -EAGAIN)
			break;
		if (n == -EINTR)
			continue;
		if (n <= 0) {
			link_lost(l, n == 0 ? "connection closed" : strerror((int)-n));
			return 0;
		}
		/* job.launch's "launch" stamp: when its bytes arrived. */
		stamp = time_wall_ns();
		while ((r = wire_next(&l->in, &msg, &err)) == 1) {
			link_dispatch(l, msg, stamp);
			json_decref(msg);
			if (l->fd < 0)
				return 0;   /* dropped while handling it */
		}
		if (r < 0) {
			/* Framing is lost: the stream cannot be resynchronised. */
			log_err("from qpoold: %s", err.text);
			link_lost(l, "bad framing");
			return 0;
		}
	}
	return 0;
}

/* The peer at the server's address has not proven it is qpoold: one line
 * per outage, nothing more is sent to it nor taken from it, and the link
 * retries at the slowest pace (the real qpoold comes back). */
static void link_refuse_server(struct link *l, const char *why)
{
	if (!l->impostor_logged)
		log_err("refusing the server: %s; retrying", why);
	l->impostor_logged = true;
	l->outage_logged = true;
	link_drop(l);
	l->retry_us = RETRY_MAX_US;
	link_advance(l);
	link_retry_schedule(l);
}

static int link_register(struct link *l)
{
	struct transport_servers list;
	json_t *req;

	/* Only now: the peer has proven it is qpoold. */
	sd_event_source_set_enabled(l->deadline, SD_EVENT_OFF);
	log_info("connected to qpoold at %s", link_where(l, &list));
	l->state = LINK_REGISTERING;
	req = link_register_msg(l->nd, l->fd);
	if (!req) {
		link_drop(l);
		return -ENOMEM;
	}
	return link_send(l, req, link_register_reply, 0);
}

/* The TCP handshake, a message at a time (docs/PROTOCOL.md, "The auth
 * frame"): the server's hello gets our credential bound to its nonce; its
 * answer must be its credential, root's, bound to ours. Until then no
 * message is obeyed. */
static void link_handshake(struct link *l, const json_t *msg)
{
	const struct config *c = l->nd->config;
	struct transport_servers list;
	const char *where = link_where(l, &list);
	struct error err = { "" };
	char why[sizeof(err.text) + PATH_MAX];
	json_t *auth;
	int r;

	if (l->state == LINK_HELLO) {
		if (wire_int(msg, "id", -1) == 0 && !wire_bool(msg, "ok", 1)) {
			/* A qpoold busy with other handshakes: just later. */
			if (!l->outage_logged)
				log_warn("qpoold at %s: %s; retrying", where, wire_str(msg, "error") ?: "refused");
			l->outage_logged = true;
			link_drop(l);
			l->retry_us = RETRY_MAX_US;
			link_retry_schedule(l);
			return;
		}
		auth = NULL;
		r = auth_frame(c->munge_socket, msg, &l->nonces, &auth, &err);
		if (r == -EPROTO) {
			snprintf(why, sizeof(why), "%s is not qpoold: %s", where, err.text);
			link_refuse_server(l, why);
			return;
		}
		if (r < 0 || wire_queue(&l->out, auth) < 0) {
			json_decref(auth);
			if (!l->outage_logged)
				log_warn("%s; retrying", r < 0 ? err.text : "out of memory");
			link_lost(l, "no credential");
			return;
		}
		json_decref(auth);
		l->state = LINK_PROVING;
		r = link_flush(l);
		if (r < 0)
			link_lost(l, strerror(-r));
		return;
	}
	r = auth_proof_check(c->munge_socket, msg, &l->nonces, &err);
	if (r == -EACCES) {
		if (!l->outage_logged)
			log_err("qpoold refused node %s's credential: %s; retrying", l->nd->name, err.text);
		l->outage_logged = true;
		link_drop(l);
		l->retry_us = RETRY_MAX_US;
		link_retry_schedule(l);
		return;
	}
	if (r == -EHOSTUNREACH) {
		/* Our own munged cannot check it: not the server's fault. */
		if (!l->outage_logged)
			log_warn("%s; retrying", err.text);
		link_lost(l, "cannot check the server's credential");
		return;
	}
	if (r < 0) {
		snprintf(why, sizeof(why), "%s is not qpoold: %s", where, err.text);
		link_refuse_server(l, why);
		return;
	}
	if (link_register(l) < 0)
		link_lost(l, "out of memory");
}

/* A TCP server that neither answers the SYN nor speaks (a host gone, a
 * cut path) is left after the list's connect timeout for the next one. */
static int link_on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct link *l = userdata;

	if (l->state == LINK_HELLO || l->state == LINK_PROVING)
		link_lost(l, "no answer to the connect or handshake");
	return 0;
}

static int link_connect(struct link *l)
{
	const struct config *c = l->nd->config;
	struct transport_servers list;
	const char *where = link_where(l, &list);
	struct error err = { "" };
	bool tcp;
	int r;

	r = transport_connect(where, true, 0, &l->fd, &tcp, &err);
	if (r < 0) {
		l->fd = -1;
		return r;
	}
	if (tcp) {
		/* A link whose peer went silent (a cut cable) fails after
		 * node_timeout rather than TCP's ~15 minutes of retries, so the
		 * node reconnects and re-registers once the path is back. */
		unsigned ms = (unsigned)(c->node_timeout * 1000);

		(void)setsockopt(l->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
	}
	/* Edge-triggered (each wake reads until empty): a simulating qnoded
	 * holds thousands of links, and sd-event polls once per dispatch. */
	r = sd_event_add_io(l->nd->event, &l->io, l->fd, EPOLLIN | EPOLLET, link_on_io, l);
	if (r < 0)
		goto fail;
	if (tcp) {
		/* The server speaks first (its hello); nothing is sent before. */
		l->state = LINK_HELLO;
		(void)transport_servers_of(c, &list, &err);
		sd_event_source_set_time_relative(l->deadline, transport_connect_ms(&list) * 1000ULL);
		sd_event_source_set_enabled(l->deadline, SD_EVENT_ONESHOT);
		return 0;
	}
	/* On the socket the kernel names its owner: qpoold runs as root. */
	r = transport_unix_server_check(l->fd, where, &err);
	if (r < 0) {
		link_refuse_server(l, err.text);
		return 0;   /* retried by link_refuse_server */
	}
	return link_register(l);
fail:
	link_drop(l);
	return r;
}

static int link_on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct link *l = userdata;
	struct transport_servers list;
	int r;

	r = link_connect(l);
	if (r == 0)
		return 0;
	if (!l->outage_logged) {
		log_warn("cannot reach qpoold at %s: %s; retrying", link_where(l, &list), strerror(-r));
		l->outage_logged = true;
	}
	link_advance(l);
	link_retry_schedule(l);
	return 0;
}

static void link_retry_schedule(struct link *l)
{
	uint64_t delay = l->retry_us;

	if (l->next_now) {
		/* Another server: at once; the back-off is kept for the round. */
		l->next_now = false;
		sd_event_source_set_time_relative(l->retry, RETRY_FIRST_US);
		sd_event_source_set_enabled(l->retry, SD_EVENT_ONESHOT);
		return;
	}
	l->retry_us = l->retry_us * 2 > RETRY_MAX_US ? RETRY_MAX_US : l->retry_us * 2;
	sd_event_source_set_time_relative(l->retry, delay);
	sd_event_source_set_enabled(l->retry, SD_EVENT_ONESHOT);
}

int link_create(struct noded *nd, struct link **ret)
{
	struct transport_servers list;
	struct error err;
	struct link *l;
	int r;

	/* main checked the list; a simulated node's is the same. */
	r = transport_servers_of(nd->config, &list, &err);
	if (r < 0)
		return r;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->nd = nd;
	l->fd = -1;
	l->retry_us = RETRY_FIRST_US;
	/* Accuracy 1 ms: sd-event's default (0 = 250 ms) would stretch the
	 * 0.2 s retry. */
	r = sd_event_add_time_relative(nd->event, &l->retry, CLOCK_MONOTONIC, 0, 1000,
				       link_on_retry, l);
	if (r < 0)
		goto fail;
	r = sd_event_add_time_relative(nd->event, &l->heartbeat, CLOCK_MONOTONIC, 0, 1000,
				       link_on_heartbeat, l);
	if (r < 0)
		goto fail;
	sd_event_source_set_enabled(l->heartbeat, SD_EVENT_OFF);
	r = sd_event_add_time_relative(nd->event, &l->deadline, CLOCK_MONOTONIC, 0, 1000,
				       link_on_deadline, l);
	if (r < 0)
		goto fail;
	sd_event_source_set_enabled(l->deadline, SD_EVENT_OFF);
	nd->link = l;
	*ret = l;
	return 0;
fail:
	link_destroy(l);
	return r;
}

void link_destroy(struct link *l)
{
	if (!l)
		return;
	link_drop(l);
	sd_event_source_disable_unref(l->retry);
	sd_event_source_disable_unref(l->heartbeat);
	sd_event_source_disable_unref(l->deadline);
	free(l->follow);
	if (l->nd && l->nd->link == l)
		l->nd->link = NULL;
	free(l);
}
