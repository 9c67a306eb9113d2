/* SPDX-License-Identifier: MIT */
/* Blocking request/response with qpoold, over its Unix socket or TCP. */
#include <errno.h>
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
	int fd;
	struct wirebuf in;
	long long next_id;
};

/* Bounds each step of the TCP handshake: a peer that accepts and says
 * nothing must not hang a command. */
#define HANDSHAKE_TIMEOUT_SEC 30
#define CLIENT_BUSY_WAIT_MS 10000

/* The TCP handshake (docs/PROTOCOL.md, "The auth frame"): the server's
 * hello, our credential bound to its nonce, its credential bound to ours. */
static int client_handshake(struct client *cl, struct error *err)
{
	const char *where = transport_server(cl->config);
	struct timeval tv = { .tv_sec = HANDSHAKE_TIMEOUT_SEC };
	struct auth_nonces n;
	json_t *msg = NULL, *auth = NULL;
	char why[sizeof(err->text)];
	int r;

	(void)setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = wire_recv_buffered(cl->fd, &cl->in, &msg, err);
	if (r < 0)
		goto lost;
	/* A server with no room for us says so instead of its hello. */
	if (wire_int(msg, "id", -1) == 0 && !wire_bool(msg, "ok", 1) && wire_str(msg, "error")) {
		r = (int)wire_int(msg, "errno", EACCES);
		r = error_set(err, r > 0 ? -r : -EACCES, "%s", wire_str(msg, "error"));
		goto done;
	}
	r = auth_frame(cl->config->munge_socket, msg, &n, &auth, err);
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
	if (r < 0)
		goto lost;
	r = auth_proof_check(cl->config->munge_socket, msg, &n, err);
	if (r == -EPERM) {
		snprintf(why, sizeof(why), "%s", err->text);
		error_set(err, r, "%s is not qpoold: %s; nothing sent", where, why);
	}
	if (r < 0)
		goto done;
	tv.tv_sec = 0;
	(void)setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = 0;
	goto done;
lost:
	if (r == -EAGAIN)
		snprintf(why, sizeof(why), "no answer within %d s", HANDSHAKE_TIMEOUT_SEC);
	else
		snprintf(why, sizeof(why), "%s", r == -ECONNRESET ? "it closed the connection" : err->text);
	r = error_set(err, r, "%s did not complete qpoold's handshake: %s", where, why);
done:
	json_decref(msg);
	json_decref(auth);
	return r;
}

int client_open(const char *conf_arg, struct client **ret, struct error *err)
{
	struct client *cl;
	bool tcp;
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
	/* A qpoold busy with other peers' handshakes (EBUSY: its budget of
	 * unauthenticated connections, per address and in all) is asked
	 * again, 10 s at most: a burst of qsubs from one login host waits. */
	for (unsigned ms = 50, waited = 0;; waited += ms, ms = ms * 2 > 1000 ? 1000 : ms * 2) {
		r = transport_connect(cl->config, false, &cl->fd, &tcp, err);
		if (r < 0)
			goto done;
		/* Nothing is sent to a server that has not proven it is qpoold. */
		r = tcp ? client_handshake(cl, err) : transport_unix_server_check(cl->fd, cl->config->socket, err);
		if (r != -EBUSY || waited >= CLIENT_BUSY_WAIT_MS)
			break;
		close(cl->fd);
		cl->fd = -1;
		wirebuf_free(&cl->in);
		(void)nanosleep(&(struct timespec){ .tv_nsec = (long)ms * 1000000L }, NULL);
	}
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
	if (cl->fd >= 0)
		close(cl->fd);
	wirebuf_free(&cl->in);
	config_destroy(cl->config);
	free(cl);
}

const struct config *client_config(const struct client *cl)
{
	return cl->config;
}

int client_call(struct client *cl, json_t *req, json_t **ret_reply, struct error *err)
{
	long long id = cl->next_id++;
	json_t *reply = NULL;
	int r;

	json_object_set_new(req, "id", json_integer(id));
	r = wire_send(cl->fd, req);
	json_decref(req);
	if (r < 0) {
		/* qpoold may have refused the connection before the request
		 * arrived; its one-line reason is still there to read. */
		if ((r == -EPIPE || r == -ECONNRESET) && wire_recv(cl->fd, &reply, err) == 0) {
			if (!wire_bool(reply, "ok", 1) && wire_str(reply, "error")) {
				r = (int)wire_int(reply, "errno", EPIPE);
				error_set(err, -r, "%s", wire_str(reply, "error"));
				json_decref(reply);
				return r > 0 ? -r : -EPIPE;
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
	if (!wire_bool(reply, "ok", 0)) {
		const char *msg = wire_str(reply, "error");

		r = (int)wire_int(reply, "errno", EINVAL);
		error_set(err, r > 0 ? -r : -EINVAL, "%s", msg ? msg : "request failed");
		json_decref(reply);
		return r > 0 ? -r : -EINVAL;
	}
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
	const char *addr = transport_server(cl->config);
	char host[JOBID_SERVER_MAX];
	size_t n;

	if (cl->config->server_name[0] || !addr || !*addr) {
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
