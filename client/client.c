/* SPDX-License-Identifier: MIT */
/* Blocking request/response with qpoold, over its Unix socket or TCP. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "client.h"
#include "jobid.h"
#include "transport.h"
#include "wire.h"

struct client {
	struct config *config;
	struct transport_servers servers;
	size_t cur;                      /* the entry of servers last tried */
	char where[TRANSPORT_ADDR_MAX];  /* the server connected to */
	int fd;
	struct wirebuf in;
	long long next_id;
	char pool[JOBID_SERVER_MAX];     /* the pool's name, as a reply gave it ("server") */
};

/* Bounds each step of the TCP handshake with qpoold alone: a peer that
 * accepts and says nothing must not hang a command. A server of a list
 * gets TRANSPORT_CONNECT_LIST_MS, then the next one is asked. */
#define HANDSHAKE_TIMEOUT_SEC 30
/* A server's hello comes at accept. One that accepted and said nothing
 * for this long is connected to again (nothing was sent, so nothing can
 * be done twice), until the handshake's own timeout: seen over lossy,
 * loaded links (t-hosts-netem), where a connection now and then got no
 * hello at all in 30 s and the next one got it at once. */
#define HELLO_TIMEOUT_MS 5000
#define CLIENT_BUSY_WAIT_MS 10000
/* How long standbys that name no active are asked again: a takeover
 * leaves none for lease_time plus a standby's poll (3.5 s by default). */
#define CLIENT_STANDBY_WAIT_MS 10000
/* Once a server of a list took the connection, how long one before it in
 * the list still may: the list's order is the admin's preference. */
#define CLIENT_RACE_GRACE_MS 100

/* One request's walk through standbys. */
struct client_hops {
	size_t standbys;     /* standby replies since the last pause */
	unsigned waited_ms;
	unsigned pause_ms;
};

/* The TCP handshake (docs/PROTOCOL.md, "The auth frame"): the server's
 * hello, our credential bound to its nonce, its credential bound to ours. */
static int client_handshake(struct client *cl, const char *where, unsigned timeout_ms, struct error *err)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	struct auth_nonces n;
	json_t *msg = NULL, *auth = NULL;
	char why[sizeof(err->text)];
	const char *step = "";
	int r;

	if (timeout_ms > HELLO_TIMEOUT_MS) {
		struct timeval htv = { .tv_sec = HELLO_TIMEOUT_MS / 1000, .tv_usec = (HELLO_TIMEOUT_MS % 1000) * 1000 };

		(void)setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &htv, sizeof(htv));
	} else {
		(void)setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	r = wire_recv_buffered(cl->fd, &cl->in, &msg, err);
	if (r == -EAGAIN && timeout_ms > HELLO_TIMEOUT_MS) {
		r = error_set(err, -ETIME, "%s did not complete qpoold's handshake: no hello within %u s", where,
			      HELLO_TIMEOUT_MS / 1000);
		goto done;
	}
	if (r < 0) {
		step = "its hello";
		goto lost;
	}
	(void)setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* A server with no room for us says so instead of its hello. */
	if (wire_int(msg, "id", -1) == 0 && !wire_bool(msg, "ok", 1) && wire_str(msg, "error")) {
		r = (int)wire_int(msg, "errno", EACCES);
		r = error_set(err, r > 0 ? -r : -EACCES, "%s", wire_str(msg, "error"));
		goto done;
	}
	r = auth_frame(cl->config->munge_socket, cl->fd, msg, &n, &auth, err);
	if (r == -EPROTO) {
		snprintf(why, sizeof(why), "%s", err->text);
		error_set(err, r, "%s is not qpoold: %s; nothing sent", where, why);
	}
	if (r < 0)
		goto done;
	json_decref(msg);
	msg = NULL;
	r = wire_send(cl->fd, auth);
	if (r < 0) {
		error_set(err, r, "send to qpoold: %s", strerror(-r));
		goto done;
	}
	r = wire_recv_buffered(cl->fd, &cl->in, &msg, err);
	if (r < 0) {
		step = "its credential";
		goto lost;
	}
	r = auth_proof_check(cl->config->munge_socket, msg, &n, err);
	if (r == -EPERM) {
		snprintf(why, sizeof(why), "%s", err->text);
		error_set(err, r, "%s is not qpoold: %s; nothing sent", where, why);
	}
	if (r < 0)
		goto done;
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	(void)setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = 0;
	goto done;
lost:
	if (r == -EAGAIN)
		snprintf(why, sizeof(why), "no answer within %u s (waiting for %s)", timeout_ms / 1000, step);
	else
		snprintf(why, sizeof(why), "%s", r == -ECONNRESET ? "it closed the connection" : err->text);
	r = error_set(err, r, "%s did not complete qpoold's handshake: %s", where, why);
done:
	json_decref(msg);
	json_decref(auth);
	return r;
}

static void sleep_ms(unsigned ms)
{
	(void)nanosleep(&(struct timespec){ .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L }, NULL);
}

static void client_disconnect(struct client *cl)
{
	if (cl->fd >= 0)
		close(cl->fd);
	cl->fd = -1;
	wirebuf_free(&cl->in);
	cl->where[0] = '\0';
}

/* Connects to where and makes it prove it is qpoold. *ret_next says
 * whether another server may do better: not when our own munged cannot
 * be asked or the server refused our credential (every server of the
 * pool would). */
static int client_connect_to(struct client *cl, const char *where, int fd, struct error *err, bool *ret_next)
{
	unsigned timeout_ms = cl->servers.n > 1 ? TRANSPORT_CONNECT_LIST_MS : HANDSHAKE_TIMEOUT_SEC * 1000;
	bool tcp;
	int r;

	*ret_next = true;
	/* A qpoold busy with other peers' handshakes (EBUSY: its budget of
	 * unauthenticated connections, per address and in all) is asked
	 * again, 10 s at most: a burst of qsubs from one login host waits. */
	for (unsigned ms = 50, waited = 0, hello_waited = 0;; waited += ms, ms = ms * 2 > 1000 ? 1000 : ms * 2) {
		if (fd >= 0) {
			cl->fd = fd;
			fd = -1;
			tcp = true;
			r = 0;
		} else {
			r = transport_connect(where, false, transport_connect_ms(&cl->servers), &cl->fd, &tcp, err);
		}
		if (r < 0) {
			cl->fd = -1;
			return r;
		}
		/* Nothing is sent to a server that has not proven it is qpoold. */
		r = tcp ? client_handshake(cl, where, timeout_ms, err) : transport_unix_server_check(cl->fd, where, err);
		if (r == -ETIME) {
			/* No hello (HELLO_TIMEOUT_MS): a new connection, at once. */
			hello_waited += HELLO_TIMEOUT_MS;
			if (hello_waited >= timeout_ms)
				break;
			client_disconnect(cl);
			continue;
		}
		if (r != -EBUSY || waited >= CLIENT_BUSY_WAIT_MS)
			break;
		client_disconnect(cl);
		sleep_ms(ms);
	}
	if (r < 0) {
		client_disconnect(cl);
		*ret_next = r != -EHOSTUNREACH && r != -EACCES && r != -EINVAL && r != -ENOMEM;
		return r;
	}
	snprintf(cl->where, sizeof(cl->where), "%s", where);
	return 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Dials every server of a list of TCP addresses at once, from entry start,
 * and returns the first in list order that takes the connection within
 * TRANSPORT_CONNECT_LIST_MS, its socket (blocking) in *ret_fd; the other
 * connections are closed unused. why[k] is 0 for entry k when it took the
 * connection, else why not (-ETIMEDOUT: no answer). A dead host (its
 * address gone, its link cut) then costs no command its connect timeout,
 * as asking in turn did (t-ha-hosts). -1 when none connected or the list
 * names a Unix socket (why untouched). */
static ssize_t client_race(const struct client *cl, size_t start, int *ret_fd, int *why)
{
	struct pollfd p[TRANSPORT_SERVERS_MAX];
	size_t n = cl->servers.n, best = n;
	int64_t deadline = mono_ms() + TRANSPORT_CONNECT_LIST_MS;

	for (size_t i = 0; i < n; i++)
		if (cl->servers.addr[i][0] == '/')
			return -1;
	for (size_t i = 0; i < n; i++) {
		struct error e;
		bool tcp;

		p[i] = (struct pollfd){ .fd = -1, .events = POLLOUT };
		why[(start + i) % n] = transport_connect(cl->servers.addr[(start + i) % n], true, 0, &p[i].fd, &tcp, &e);
		if (why[(start + i) % n] < 0)
			p[i].fd = -1;
		else
			why[(start + i) % n] = -ETIMEDOUT;
	}
	for (;;) {
		int64_t left = deadline - mono_ms();
		size_t pending = 0;

		for (size_t i = 0; i < best; i++)
			pending += p[i].fd >= 0;
		if (!pending || left <= 0 || poll(p, best, (int)left) < 0)
			break;
		for (size_t i = 0; i < best; i++) {
			int so = 0;
			socklen_t sl = sizeof(so);

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			if (getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &so, &sl) < 0 || so) {
				why[(start + i) % n] = so ? -so : -errno;
				close(p[i].fd);
				p[i].fd = -1;
				continue;
			}
			why[(start + i) % n] = 0;
			if (best == n)
				deadline = mono_ms() + CLIENT_RACE_GRACE_MS;
			best = i;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (i != best && p[i].fd >= 0)
			close(p[i].fd);
	if (best == n || fcntl(p[best].fd, F_SETFL, 0) < 0) {
		if (best < n)
			close(p[best].fd);
		return -1;
	}
	*ret_fd = p[best].fd;
	return (ssize_t)((start + best) % n);
}

/* Tries the list from entry start on, each once: the one client_race
 * found first, then the others it connected to. With one server its
 * error is the answer; with several, one line names each and why. */
static int client_connect_list(struct client *cl, size_t start, struct error *err)
{
	char tried[sizeof(err->text)];
	size_t used = 0;
	int r = -EHOSTUNREACH, fd = -1, why[TRANSPORT_SERVERS_MAX];
	ssize_t first;

	for (size_t k = 0; k < cl->servers.n; k++)
		why[k] = 0;
	first = cl->servers.n > 1 ? client_race(cl, start, &fd, why) : -1;
	tried[0] = '\0';
	for (size_t i = 0; i <= cl->servers.n; i++) {
		size_t k = i == 0 ? (size_t)first : (start + i - 1) % cl->servers.n;
		bool next = true;

		if ((i == 0 && first < 0) || (i > 0 && first >= 0 && k == (size_t)first))
			continue;
		r = why[k];
		/* Once one server took the connection the race stopped waiting
		 * for the others: they are unknown, not timed out, and are
		 * dialled afresh when the one taken fails its handshake (a
		 * relay's refusal). */
		if (r == -ETIMEDOUT && first >= 0)
			r = 0;
		if (r == 0)
			r = client_connect_to(cl, cl->servers.addr[k], i == 0 ? fd : -1, err, &next);
		if (r == 0) {
			cl->cur = k;
			return 0;
		}
		if (!next || cl->servers.n == 1)
			return r;
		if (used < sizeof(tried))
			used += (size_t)snprintf(tried + used, sizeof(tried) - used, "%s%s (%s)", used ? ", " : "",
						 cl->servers.addr[k],
						 r == -EPROTO || r == -EPERM ? "not qpoold"
						 : r == -EADDRNOTAVAIL	     ? "a relay to another qpoold"
									     : strerror(-r));
	}
	return error_set(err, r, "no qpoold answered at %s", tried);
}

int client_open(const char *conf_arg, struct client **ret, struct error *err)
{
	struct client *cl;
	int r;

	cl = calloc(1, sizeof(*cl));
	if (!cl)
		return error_set(err, -ENOMEM, "out of memory");
	cl->fd = -1;
	cl->next_id = 1;
	r = config_load(config_path(conf_arg), &cl->config, err);
	/* A login host may have no config file at all, only $QPOOL_SERVER
	 * (and munge's default socket). */
	if (r == -ENOENT && !(conf_arg && *conf_arg) && !getenv("QPOOL_CONF") && transport_server(NULL))
		r = config_default(&cl->config);
	if (r < 0)
		goto done;
	r = transport_servers_of(cl->config, &cl->servers, err);
	if (r < 0) {
		char why[sizeof(err->text)];

		snprintf(why, sizeof(why), "%s", err->text);
		/* The file's list was checked by config_load. */
		r = error_set(err, r, "QPOOL_SERVER: %s", why);
		goto done;
	}
	r = client_connect_list(cl, 0, err);
done:
	if (r < 0) {
		client_close(cl);
		return r;
	}
	*ret = cl;
	return 0;
}

void client_close(struct client *cl)
{
	if (!cl)
		return;
	client_disconnect(cl);
	config_destroy(cl->config);
	free(cl);
}

const struct config *client_config(const struct client *cl)
{
	return cl->config;
}

/* Sends req (borrowed) with a fresh id and waits for its reply, ok or
 * not. */
static int client_exchange(struct client *cl, json_t *req, json_t **ret_reply, struct error *err)
{
	long long id = cl->next_id++;
	json_t *reply = NULL;
	int r;

	json_object_set_new(req, "id", json_integer(id));
	r = wire_send(cl->fd, req);
	if (r < 0) {
		/* qpoold may have refused the connection before the request
		 * arrived; its one-line reason is still there to read. */
		if ((r == -EPIPE || r == -ECONNRESET) && wire_recv(cl->fd, &reply, err) == 0) {
			if (!wire_bool(reply, "ok", 1) && wire_str(reply, "error")) {
				*ret_reply = reply;
				return 0;
			}
			json_decref(reply);
		}
		return error_set(err, r, "send to qpoold: %s", strerror(-r));
	}
	for (;;) {
		r = wire_recv_buffered(cl->fd, &cl->in, &reply, err);
		if (r < 0) {
			if (r == -ECONNRESET)
				error_set(err, r, "qpoold closed the connection");
			return r;
		}
		/* id 0: qpoold refuses the connection itself (too many, a bad
		 * frame); that error is the answer. */
		if (wire_int(reply, "id", -1) == id ||
		    (wire_int(reply, "id", -1) == 0 && !wire_bool(reply, "ok", 1)))
			break;
		json_decref(reply);
	}
	*ret_reply = reply;
	return 0;
}

/* The standby reply (docs/PROTOCOL.md, "Standby, and the client's
 * rules"): the connection goes to the active it names, else to the next
 * server of the list. When every server has been asked and each was a
 * standby (a takeover under way), the round starts again after a pause,
 * CLIENT_STANDBY_WAIT_MS in all; then the standby's line is the error. */
static int client_follow(struct client *cl, const json_t *reply, struct client_hops *h, struct error *err)
{
	const char *active = wire_str(reply, "active");
	char to[TRANSPORT_ADDR_MAX] = "";
	struct error e;
	bool next;

	/* The active is any qpoold the standby names: the handshake proves
	 * it is root's on a host of this pool's MUNGE key, as it proves each
	 * listed one. Only a HOST:PORT is followed. */
	if (active && strcmp(active, cl->where) != 0 && strlen(active) < sizeof(to) &&
	    transport_addr_check(active, &e) == 0)
		snprintf(to, sizeof(to), "%s", active);
	error_set(err, -EAGAIN, "%s", wire_str(reply, "error") ?: "qpoold is a standby");
	client_disconnect(cl);
	if (++h->standbys > cl->servers.n) {
		if (h->waited_ms >= CLIENT_STANDBY_WAIT_MS)
			return -EAGAIN;
		sleep_ms(h->pause_ms);
		h->waited_ms += h->pause_ms;
		h->pause_ms = h->pause_ms * 2 > 1000 ? 1000 : h->pause_ms * 2;
		h->standbys = 0;
	}
	/* A listed active is asked first, in a race with the others: the
	 * active a standby names may be the one that just died, its host
	 * gone (no answer for TRANSPORT_CONNECT_LIST_MS). */
	for (size_t k = 0; to[0] && k < cl->servers.n; k++)
		if (strcmp(cl->servers.addr[k], to) == 0)
			return client_connect_list(cl, k, err);
	if (to[0] && client_connect_to(cl, to, -1, &e, &next) == 0)
		return 0;
	return client_connect_list(cl, cl->cur + 1, err);
}

int client_call(struct client *cl, json_t *req, json_t **ret_reply, struct error *err)
{
	struct client_hops h = { .pause_ms = 100 };
	json_t *reply = NULL;
	int r;

	for (;;) {
		r = client_exchange(cl, req, &reply, err);
		if (r < 0 || !wire_bool(reply, "standby", 0))
			break;
		/* A standby did nothing: the same request goes to the active,
		 * a qsub included (it cannot be submitted twice). */
		r = client_follow(cl, reply, &h, err);
		json_decref(reply);
		reply = NULL;
		if (r < 0)
			break;
	}
	json_decref(req);
	if (r < 0)
		return r;
	if (!wire_bool(reply, "ok", 0)) {
		const char *msg = wire_str(reply, "error");

		r = (int)wire_int(reply, "errno", EINVAL);
		error_set(err, r > 0 ? -r : -EINVAL, "%s", msg ? msg : "request failed");
		json_decref(reply);
		return r > 0 ? -r : -EINVAL;
	}
	/* The pool's name, which every server of the pool gives alike. */
	if (wire_str(reply, "server") && *wire_str(reply, "server") &&
	    strlen(wire_str(reply, "server")) < sizeof(cl->pool))
		snprintf(cl->pool, sizeof(cl->pool), "%s", wire_str(reply, "server"));
	*ret_reply = reply;
	return 0;
}

int client_call_pages(struct client *cl, json_t *req, const char *key, json_t **ret_reply,
		      struct error *err)
{
	json_t *all = json_array(), *reply = NULL;
	int r = 0;

	if (!all) {
		json_decref(req);
		return error_set(err, -ENOMEM, "out of memory");
	}
	for (;;) {
		json_t *page, *copy = json_deep_copy(req);
		size_t n;

		if (!copy) {
			r = error_set(err, -ENOMEM, "out of memory");
			break;
		}
		json_decref(reply);
		reply = NULL;
		r = client_call(cl, copy, &reply, err);
		if (r < 0)
			break;
		page = json_object_get(reply, key);
		if (!json_is_array(page)) {
			r = error_set(err, -EBADMSG, "qpoold's reply has no %s list", key);
			break;
		}
		json_array_extend(all, page);
		n = json_array_size(page);
		if (!wire_bool(reply, "more", 0) || n == 0)
			break;
		/* Jobs page by id ("after"), nodes and orders by position
		 * ("offset"); each op reads the one it pages by. */
		json_object_set_new(req, "after",
				    json_integer(json_integer_value(json_object_get(json_array_get(page, n - 1), "jobid"))));
		json_object_set_new(req, "offset", json_integer((json_int_t)json_array_size(all)));
	}
	json_decref(req);
	if (r < 0) {
		json_decref(reply);
		json_decref(all);
		return r;
	}
	json_object_set_new(reply, key, all);
	json_object_del(reply, "more");
	*ret_reply = reply;
	return 0;
}

void client_server_name(const struct client *cl, char *buf, size_t len)
{
	/* An older qpoold gives no name: the first server of the list, so a
	 * job's id does not change with the server that happened to answer. */
	const char *addr = cl->servers.n ? cl->servers.addr[0] : NULL;
	char host[JOBID_SERVER_MAX];
	size_t n;

	if (cl->pool[0]) {
		snprintf(buf, len, "%s", cl->pool);
		return;
	}
	if (cl->config->server_name[0] || !addr || !*addr || addr[0] == '/') {
		jobid_server_name(cl->config->server_name, buf, len);
		return;
	}
	if (addr[0] == '[') {           /* [v6]:port */
		addr++;
		n = strcspn(addr, "]");
	} else {
		n = strcspn(addr, ":");
		/* A host name is cut to its first label, as PBS prints it; an
		 * IPv4 address stays whole. */
		if (strspn(addr, "0123456789.") < n)
			n = strcspn(addr, ".:");
	}
	if (n >= sizeof(host))
		n = sizeof(host) - 1;
	memcpy(host, addr, n);
	host[n] = '\0';
	jobid_server_name(host, buf, len);
}

int client_recv(struct client *cl, json_t **ret, struct error *err)
{
	int r;

	if (cl->fd < 0)
		return error_set(err, -ECONNRESET, "not connected to qpoold");
	r = wire_recv_buffered(cl->fd, &cl->in, ret, err);
	if (r == -ECONNRESET)
		error_set(err, r, "qpoold closed the connection");
	return r;
}

int client_wait(struct client *cl, int timeout_ms)
{
	size_t have;
	struct pollfd p;
	int r;

	if (cl->fd < 0)
		return -ECONNRESET;
	have = cl->in.len - cl->in.off;
	if (have >= 4 && have - 4 >= wire_announced(&cl->in))
		return 1;
	p = (struct pollfd){ .fd = cl->fd, .events = POLLIN };
	r = poll(&p, 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r > 0;
}

int client_reconnect(struct client *cl, struct error *err)
{
	client_disconnect(cl);
	return client_connect_list(cl, 0, err);
}
