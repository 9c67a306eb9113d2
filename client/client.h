/* SPDX-License-Identifier: MIT */
/* The commands' side of the qpoold protocol: connect, ask, get an answer. */
#ifndef QPOOL_CLIENT_H
#define QPOOL_CLIENT_H

#include <jansson.h>

#include "config.h"
#include "error.h"

struct client;

/* Loads the config (conf_arg from -f, may be NULL; see config_path) and
 * connects to qpoold's socket. On failure err says why in one line, e.g.
 * "cannot reach qpoold at /run/qpool/qpoold.sock: No such file or directory
 * (is qpoold running?)". */
int client_open(const char *conf_arg, struct client **ret, struct error *err);

void client_close(struct client *cl);

const struct config *client_config(const struct client *cl);
/* The server part of job ids as PBS prints them (ID.server): the pool's
 * name as the last reply of cl gave it (every server of a pool gives the
 * same: docs/HA.md, "What names a job id"). With no reply yet, or from a
 * qpoold that gives none: [server] name when set; else, reaching qpoold
 * by TCP, the short name of the list's first host (a numeric address
 * whole); else this host's short name. */
void client_server_name(const struct client *cl, char *buf, size_t len);

/* Sends req (reference stolen) with a fresh "id", waits for the reply with
 * that id. Returns 0 and *ret_reply (caller's reference) when the server
 * answered "ok": true; otherwise a negative errno with the server's message
 * (or the transport error) in err. */
int client_call(struct client *cl, json_t *req, json_t **ret_reply, struct error *err);

/* client_call for ops that answer in pages (stat, acct by job id; nodes,
 * order by position): asks again with "after" = the last job id and
 * "offset" = the items so far while the reply says "more", and returns the
 * last reply with its `key` array holding every page's items. req is
 * stolen. */
int client_call_pages(struct client *cl, json_t *req, const char *key, json_t **ret_reply,
		      struct error *err);

/* A stream's next frame (the watch op, docs/EVENTS.md), whatever its id.
 * 0 and *ret; -ECONNRESET when the server went away; -errno. */
int client_recv(struct client *cl, json_t **ret, struct error *err);
/* Whether client_recv would return without blocking (a whole message
 * buffered, or the socket readable): 1, 0 after timeout_ms (-1: no
 * limit), -errno. */
int client_wait(struct client *cl, int timeout_ms);

/* Drops the connection and connects again, the list raced afresh. */
int client_reconnect(struct client *cl, struct error *err);

#endif
