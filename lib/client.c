/* SPDX-License-Identifier: MIT */
/* Blocking request/response with qpoold, over its Unix socket or TCP. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
	/* Over TCP, munged makes the credential while the handshake is under
	 * way; the Unix socket connects at once either way. */
	r = transport_connect(cl->config, transport_server(cl->config) != NULL, &cl->fd, &tcp, err);
	if (r < 0)
		goto done;
	if (tcp) {
		/* The credential goes first; the request follows at once, and
		 * a refusal comes back as the answer to id 0 (client_call). */
		json_t *auth = auth_frame(cl->config->munge_socket, err);

		if (!auth) {
			r = -EHOSTUNREACH;
			goto done;
		}
		r = transport_connect_finish(cl->fd, transport_server(cl->config), err);
		if (r == 0) {
			r = wire_send(cl->fd, auth);
			if (r < 0)
				error_set(err, r, "send to qpoold: %s", strerror(-r));
		}
		json_decref(auth);
		if (r < 0)
			goto done;
	}
	r = 0;
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
		/* The answer to the credential: only a refusal matters. */
		if (wire_int(reply, "id", -1) == 0 && !wire_bool(reply, "ok", 1))
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
