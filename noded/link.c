/* SPDX-License-Identifier: MIT */
/* qnoded's connection to qpoold: connect with back-off, register, heartbeat,
 * and each op to the handler the table link_create was given names. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "linkrace.h"
#include "log.h"
#include "noded.h"
#include "timeutil.h"
#include "transport.h"
#include "wire.h"

#define RETRY_FIRST_US  200000ULL    /* 0.2 s, doubling ... */
#define RETRY_MAX_US   1000000ULL    /* ... up to 1 s */

enum link_state {
	LINK_DOWN,          /* waiting to retry */
	LINK_DIALLING,      /* TCP, a list: every server dialled at once (linkrace.c) */
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
	const struct link_handlers *h;   /* what the link hands up */
	enum link_state state;
	int fd;
	sd_event_source *io;
	sd_event_source *retry;
	sd_event_source *heartbeat;
	sd_event_source *deadline;  /* bounds a TCP connect and handshake */
	sd_event_source *silence;   /* bounds a registered server's silence (link_on_silence) */
	int64_t heard;           /* monotonic ns of the last bytes read from the server */
	uint64_t retry_us;
	size_t cur;              /* the entry of the server list tried last */
	size_t avoid;            /* the entry left last: the race takes it last; SIZE_MAX: none */
	struct link_race *race;
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
	int64_t epoch;           /* the highest lease epoch a server registered this node at */
	int64_t lower_since;     /* monotonic ns since only lower epochs answer; 0: none */
	json_t *early;           /* [op, stamp] pairs sent before the registration's reply */
};

static void link_retry_schedule(struct link *l);
static void link_handshake(struct link *l, const json_t *msg);

/* The entry of list the link is at, or SIZE_MAX (an active a standby
 * named that is not listed). */
static size_t link_index(const struct link *l, const struct transport_servers *list)
{
	if (!l->follow)
		return list->n ? l->cur % list->n : SIZE_MAX;
	for (size_t i = 0; i < list->n; i++)
		if (strcmp(list->addr[i], l->follow) == 0)
			return i;
	return SIZE_MAX;
}

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
	bool listed = transport_servers_of(l->nd->config, &list, &err) >= 0;
	size_t n = listed ? list.n : 1;

	l->avoid = listed ? link_index(l, &list) : SIZE_MAX;
	if (l->follow) {
		/* The active a standby named is in the list: the walk goes on
		 * after it, not after the standby. The server after the one
		 * lost is likeliest the next active (every standby names it),
		 * and entries behind are often the dead ones of the last
		 * failovers, each a connect timeout (t-ha-hosts.sh, (c)). */
		for (size_t i = 0; listed && i < list.n; i++)
			if (strcmp(list.addr[i], l->follow) == 0)
				l->cur = i;
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

	link_race_destroy(l->race);
	l->race = NULL;
	l->io = sd_event_source_disable_unref(l->io);
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	wirebuf_free(&l->in);
	wirebuf_free(&l->out);
	sd_event_source_set_enabled(l->heartbeat, SD_EVENT_OFF);
	sd_event_source_set_enabled(l->deadline, SD_EVENT_OFF);
	sd_event_source_set_enabled(l->silence, SD_EVENT_OFF);
	if (l->state == LINK_UP)
		l->h->lost(l->nd);
	l->state = LINK_DOWN;
	l->reqs = NULL;
	/* Sent by a server whose registration never completed: not obeyed. */
	json_array_clear(l->early);
	while (reqs) {
		struct link_req *q = reqs;

		reqs = q->next;
		if (q->cb)
			q->cb(l->nd, NULL, q->arg);
		free(q);
	}
}

/* link_lost without its line: the caller said why. */
static void link_reset(struct link *l)
{
	link_drop(l);
	l->outage_logged = true;
	l->retry_us = RETRY_FIRST_US;
	link_advance(l);
	link_retry_schedule(l);
}

static void link_lost(struct link *l, const char *why)
{
	/* Once per outage: a link that never came up again says nothing more. */
	if (l->state == LINK_UP || (l->state != LINK_DOWN && !l->outage_logged))
		log_warn("lost qpoold: %s; reconnecting", why);
	link_reset(l);
}

/* Writes what the socket takes and asks for EPOLLOUT only while more is
 * left. Unchanged events are not set again: sd-event re-arms an
 * edge-triggered source with an epoll_ctl each time (two a job, issue
 * 39), which only matters to a reader that stops before EAGAIN, and
 * link_on_io reads to EAGAIN. */
static int link_flush(struct link *l)
{
	uint32_t want, cur;
	int r = wire_flush(l->fd, &l->out);

	if (r < 0)
		return r;
	want = EPOLLIN | EPOLLET | (r == 1 ? EPOLLOUT : 0);
	if (sd_event_source_get_io_events(l->io, &cur) >= 0 && cur == want)
		return 0;
	return sd_event_source_set_io_events(l->io, want);
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
	/* Results qpoold refused to record (a failed commit) go again; those
	 * awaiting a reply are not sent twice. */
	else if (reply)
		nd->link->h->results_send(nd);
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

/* An op no row names: one line, and an error answer with the op's id, as
 * qpoold answers an unknown request (it reads a node's answers, which
 * carry "ok" and no op, as nothing). A failed send is a dead link: the
 * shutdown wakes link_on_io, which drops it (not link_lost here: an
 * early op's caller walks its list). */
static void link_op_unknown(struct link *l, const char *op, const json_t *msg)
{
	json_t *reply;
	int r;

	log_warn("qpoold sent unknown op \"%.40s\": answered with an error", op);
	reply = json_pack("{s:I, s:b, s:s+, s:i}", "id", (json_int_t)wire_int(msg, "id", 0), "ok", 0,
			  "error", "unknown op ", op, "errno", EOPNOTSUPP);
	if (!reply || l->fd < 0)
		goto done;
	r = wire_queue(&l->out, reply);
	if (r == 0)
		r = link_flush(l);
	if (r < 0)
		(void)shutdown(l->fd, SHUT_RDWR);
done:
	json_decref(reply);
}

/* An op from qpoold to the handler the table names for it: a row whose
 * name ends in '.' takes the family of that prefix, any other only its
 * own name. */
static void link_op(struct link *l, const char *op, json_t *msg, int64_t stamp)
{
	for (const struct link_op *o = l->h->ops; o->name; o++) {
		size_t n = strlen(o->name);

		if (n && o->name[n - 1] == '.' ? strncmp(op, o->name, n) == 0 : strcmp(op, o->name) == 0) {
			o->handle(l->nd, op, msg, stamp);
			return;
		}
	}
	link_op_unknown(l, op, msg);
}

/* The ops a server sent while registering this node (the kills of its
 * reconcile come before its reply), now that its epoch is known good. */
static void link_early_run(struct link *l)
{
	json_t *early = l->early, *pair;
	size_t i;

	l->early = json_array();
	if (!l->early) {
		l->early = early;   /* out of memory: they are dropped */
		json_array_clear(early);
		return;
	}
	json_array_foreach(early, i, pair) {
		json_t *msg = json_array_get(pair, 0);

		link_op(l, wire_str(msg, "op"), msg, (int64_t)json_integer_value(json_array_get(pair, 1)));
	}
	json_decref(early);
}

/* A lower epoch that lasts is a store whose lease began again (qpoold
 * --migrate starts it at 1), not a deposed server: one of those steps
 * down within its lease and then answers as a standby. After twice
 * node_timeout of nothing but lower epochs the node follows it. */
static bool link_epoch_began_again(struct link *l, int64_t epoch)
{
	int64_t now = time_mono_ns();
	int64_t limit = 2 * (int64_t)l->nd->config->node_timeout * NSEC_PER_SEC;

	if (!l->lower_since) {
		struct transport_servers list;

		/* Once until the node registers again: it retries often. */
		log_warn("qpoold at %s registered this node at epoch %lld, older than epoch %lld: "
			 "a deposed server, not obeyed", link_where(l, &list), (long long)epoch,
			 (long long)l->epoch);
		l->lower_since = now;
	}
	if (now - l->lower_since < limit)
		return false;
	log_warn("only epoch %lld, older than %lld, for %llus: the store's lease began again; following it",
		 (long long)epoch, (long long)l->epoch, (unsigned long long)(limit / NSEC_PER_SEC));
	l->epoch = epoch;
	return true;
}

static void link_register_reply(struct noded *nd, const json_t *reply, int64_t arg)
{
	struct link *l = nd->link;

	if (!reply)
		return;
	if (wire_bool(reply, "ok", 0) && wire_int(reply, "epoch", 0) < l->epoch &&
	    !link_epoch_began_again(l, wire_int(reply, "epoch", 0))) {
		/* A server at an older epoch than one this node registered with
		 * was deposed, whether it knows yet or not: what it sent (a
		 * reconcile's kill, a launch) is dropped unread, and the next
		 * server is tried (docs/HA.md, "Nodes follow the newest epoch"). */
		link_lost(l, "a deposed server");
		return;
	}
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
	l->lower_since = 0;
	if (wire_int(reply, "epoch", 0) > l->epoch)
		l->epoch = wire_int(reply, "epoch", 0);
	link_early_run(l);
	l->outage_logged = false;
	l->impostor_logged = false;
	l->standby_logged = false;
	l->failed = 0;
	l->avoid = SIZE_MAX;
	l->next_now = false;
	l->retry_us = RETRY_FIRST_US;
	log_info("registered with qpoold as node %s (%zu running)", nd->name,
		 l->h->running_count(nd));
	link_heartbeat_arm(l);
	/* The results went with the registration; each is also sent as a
	 * job.done, whose ok (after qpoold's commit) is what frees its files. */
	l->h->results_send(nd);
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

static json_t *link_register_msg(const struct link *l, int fd)
{
	struct noded *nd = l->nd;
	const struct node_topo *t = &nd->topo;
	char cpus[4096], addr[INET_ADDRSTRLEN];

	cpumask_format(&t->cpus, cpus, sizeof(cpus));
	/* "gate": a launch may come held, before its dispatch's commit, and
	 * wait for job.go (jobs.c); a simulated node starts at once. */
	return json_pack("{s:s, s:s, s:s, s:s, s:{s:i, s:i, s:i, s:i, s:I}, s:s*, s:s, s:b, s:s, s:o, s:o, s:s*, s:o*, "
			 "s:s*, s:s*, s:b}",
			 "op", "node.register", "name", nd->name, "cpus", cpus, "mems", t->mems,
			 "topology", "packages", (int)t->packages, "numa", (int)t->numa,
			 "cores", (int)t->cores, "pus", (int)t->pus, "mem", (json_int_t)t->mem,
			 "hwloc", nd->topo_xml,
			 "cgroup", cgroup_mode_name(nd->cgroup_mode), "rt", nd->rt,
			 "rt_reason", nd->rt_reason, "running", l->h->running_json(nd),
			 "results", l->h->results_json(nd),
			 "addr", link_local_addr(fd, addr, sizeof(addr)) == 0 ? addr : NULL,
			 "gpus", nd->n_gpus ? gpu_list_json(nd->gpus, nd->n_gpus) : NULL,
			 "features", nd->features[0] ? nd->features : NULL,
			 "resources", nd->config->resources[0] ? nd->config->resources : NULL,
			 "gate", !nd->simulated);
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
	bool named = false, listed;
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
	listed = transport_servers_of(l->nd->config, &list, &err) >= 0;
	n = listed ? list.n : 1;
	link_drop(l);
	if (named) {
		char *to = strdup(active);

		if (to) {
			/* The race that follows prefers the named active and
			 * takes this standby last. */
			l->avoid = listed ? link_index(l, &list) : SIZE_MAX;
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
		/* Before the registration's reply, the server's epoch is not
		 * known: its ops wait for it (link_register_reply). */
		if (l->state == LINK_REGISTERING) {
			json_t *pair = json_pack("[O, I]", msg, (json_int_t)stamp);

			if (!pair || json_array_append_new(l->early, pair) < 0)
				log_warn("out of memory: \"%s\" from qpoold dropped", op);
			return;
		}
		link_op(l, op, msg, stamp);
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
		l->heard = time_mono_ns();
		while ((r = wire_next(&l->in, &msg, &err)) == 1) {
			link_dispatch(l, msg, stamp);
			json_decref(msg);
			if (l->fd < 0)
				return 0;   /* dropped while handling it */
		}
		if (r < 0) {
			/* Framing is lost: the stream cannot be resynchronised.
			 * One line says so. */
			log_err("from qpoold: %s; reconnecting", err.text);
			link_reset(l);
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

/* The server's silence allowed: node_timeout, as the server allows the
 * node's. A server that serves answers each heartbeat (every
 * heartbeat_interval, shorter) and the registration. */
static uint64_t link_silence_limit_us(const struct link *l)
{
	return (uint64_t)l->nd->config->node_timeout * 1000000ULL;
}

static void link_silence_arm(struct link *l, uint64_t in_us)
{
	sd_event_source_set_time_relative(l->silence, in_us);
	sd_event_source_set_enabled(l->silence, SD_EVENT_ONESHOT);
}

/* A registered (or registering) server that has sent nothing for
 * node_timeout while the node heartbeats is not serving: stopped
 * (SIGSTOP, a frozen VM), hung, or past a cut its kernel does not report.
 * A stopped process's kernel still acknowledges every byte, so neither
 * TCP_USER_TIMEOUT nor a full send buffer ends the link; meanwhile a
 * standby takes the lease and gives the node twice node_timeout to come
 * back before its jobs are requeued (docs/HA.md, "A node leaves a silent
 * server"). The link is dropped and the race finds the active. */
static int link_on_silence(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct link *l = userdata;
	int64_t quiet = time_mono_ns() - l->heard;
	uint64_t limit = link_silence_limit_us(l);
	char why[96];

	if (l->state != LINK_REGISTERING && l->state != LINK_UP)
		return 0;
	if (quiet < 0 || (uint64_t)quiet / 1000 < limit) {
		link_silence_arm(l, limit - (quiet < 0 ? 0 : (uint64_t)quiet / 1000));
		return 0;
	}
	snprintf(why, sizeof(why), "no answer for %llus (node_timeout)",
		 (unsigned long long)(limit / 1000000ULL));
	link_lost(l, why);
	return 0;
}

static int link_register(struct link *l)
{
	struct transport_servers list;
	json_t *req;

	/* Only now: the peer has proven it is qpoold. */
	sd_event_source_set_enabled(l->deadline, SD_EVENT_OFF);
	l->heard = time_mono_ns();
	link_silence_arm(l, link_silence_limit_us(l));
	log_info("connected to qpoold at %s", link_where(l, &list));
	l->state = LINK_REGISTERING;
	req = link_register_msg(l, l->fd);
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
		r = auth_frame(c->munge_socket, l->fd, msg, &l->nonces, &auth, &err);
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

/* The servers a round dials at once, into ret: the list, and first the
 * active a standby named when it is not listed; *ret_prefer is that
 * active's entry, *ret_avoid the one the link left last (SIZE_MAX:
 * none). False: a single server, or a Unix socket among them, tried
 * alone as before. */
static bool link_race_list(const struct link *l, struct transport_servers *ret, size_t *ret_prefer,
			   size_t *ret_avoid)
{
	struct transport_servers list;
	struct error err;
	size_t at;

	*ret_prefer = *ret_avoid = SIZE_MAX;
	if (transport_servers_of(l->nd->config, &list, &err) < 0)
		return false;
	at = link_index(l, &list);
	ret->n = 0;
	if (l->follow && at == SIZE_MAX)
		memcpy(ret->addr[ret->n++], l->follow, strlen(l->follow) + 1);
	for (size_t i = 0; i < list.n && ret->n < TRANSPORT_SERVERS_MAX; i++) {
		if (list.addr[i][0] == '/')
			return false;
		if (l->follow && i == at)
			*ret_prefer = ret->n;
		if (i == l->avoid && i != at)
			*ret_avoid = ret->n;
		memcpy(ret->addr[ret->n], list.addr[i], sizeof(list.addr[i]));
		ret->n++;
	}
	if (l->follow && at == SIZE_MAX)
		*ret_prefer = 0;
	return list.n > 1;
}

/* The link takes fd, connected (or connecting) to where it is at. */
static int link_attach(struct link *l, int fd, bool tcp)
{
	const struct config *c = l->nd->config;
	struct transport_servers list;
	const char *where = link_where(l, &list);
	struct error err = { "" };
	int r;

	l->fd = fd;
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

static int link_connect(struct link *l)
{
	struct transport_servers list;
	struct error err = { "" };
	bool tcp;
	int fd, r;

	r = transport_connect(link_where(l, &list), true, 0, &fd, &tcp, &err);
	if (r < 0) {
		l->fd = -1;
		return r;
	}
	return link_attach(l, fd, tcp);
}

/* The race's winner spoke first (its hello, or a busy server's refusal):
 * the link is at it now, and goes on with it as after its own connect. */
static void link_race_done(void *userdata, int fd, size_t idx, json_t *first, struct wirebuf *in,
			   const char *tried)
{
	struct link *l = userdata;
	struct transport_servers list;
	char where[TRANSPORT_ADDR_MAX];
	struct error err;
	int r;

	/* The list is the race's own: the config's may have changed since. */
	memcpy(where, link_race_addr(l->race, idx), sizeof(where));
	link_race_destroy(l->race);
	l->race = NULL;
	l->state = LINK_DOWN;
	if (fd < 0) {
		/* A round in which no server answered: the back-off's pace. */
		if (!l->outage_logged)
			log_warn("cannot reach qpoold at %s; retrying", tried);
		l->outage_logged = true;
		free(l->follow);
		l->follow = NULL;
		l->next_now = false;
		link_retry_schedule(l);
		return;
	}
	if (transport_servers_of(l->nd->config, &list, &err) < 0)
		list.n = 0;
	if (!l->follow || strcmp(where, l->follow) != 0) {
		free(l->follow);
		l->follow = NULL;
		for (size_t i = 0; i < list.n; i++)
			if (strcmp(list.addr[i], where) == 0)
				l->cur = i;
		/* No longer listed: it is where the link is, as a named one. */
		if (list.n == 0 || strcmp(list.addr[l->cur % list.n], where) != 0)
			l->follow = strdup(where);
	}
	r = link_attach(l, fd, true);
	if (r < 0) {
		json_decref(first);
		wirebuf_free(in);
		link_lost(l, strerror(-r));
		return;
	}
	/* The bytes after the first frame, read with it, are the link's. */
	wirebuf_free(&l->in);
	l->in = *in;
	link_handshake(l, first);
	json_decref(first);
}

static int link_on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct link *l = userdata;
	struct transport_servers list;
	size_t prefer, avoid;
	int r;

	if (link_race_list(l, &list, &prefer, &avoid)) {
		/* Several TCP servers: each dialled at once, the first to speak
		 * taken; a dead or cut-off one costs nothing (docs/HA.md). */
		r = link_race_start(l->nd->event, &list, prefer, avoid, transport_connect_ms(&list),
				    link_race_done, l, &l->race);
		if (r == 0) {
			l->state = LINK_DIALLING;
			return 0;
		}
	} else {
		r = link_connect(l);
	}
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

int link_create(struct noded *nd, const struct link_handlers *h, struct link **ret)
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
	l->h = h;
	l->fd = -1;
	l->avoid = SIZE_MAX;
	l->retry_us = RETRY_FIRST_US;
	l->early = json_array();
	if (!l->early) {
		free(l);
		return -ENOMEM;
	}
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
	r = sd_event_add_time_relative(nd->event, &l->silence, CLOCK_MONOTONIC, 0, 1000,
				       link_on_silence, l);
	if (r < 0)
		goto fail;
	sd_event_source_set_enabled(l->silence, SD_EVENT_OFF);
	nd->link = l;
	*ret = l;
	return 0;
fail:
	link_destroy(l);
	return r;
}

int link_create_fd(struct noded *nd, const struct link_handlers *h, int fd, struct link **ret)
{
	struct link *l;
	int r;

	r = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ? -errno : 0;
	if (r == 0)
		r = link_create(nd, h, &l);
	if (r < 0) {
		close(fd);
		return r;
	}
	/* No dialling now: the link has its server; after a loss it dials
	 * the config's, as any link. */
	sd_event_source_set_enabled(l->retry, SD_EVENT_OFF);
	l->fd = fd;
	r = sd_event_add_io(nd->event, &l->io, fd, EPOLLIN | EPOLLET, link_on_io, l);
	if (r == 0)
		r = link_register(l);
	if (r < 0) {
		link_destroy(l);
		return r;
	}
	*ret = l;
	return 0;
}

void link_destroy(struct link *l)
{
	if (!l)
		return;
	link_drop(l);
	sd_event_source_disable_unref(l->retry);
	sd_event_source_disable_unref(l->heartbeat);
	sd_event_source_disable_unref(l->deadline);
	sd_event_source_disable_unref(l->silence);
	free(l->follow);
	json_decref(l->early);
	if (l->nd && l->nd->link == l)
		l->nd->link = NULL;
	free(l);
}
