/* SPDX-License-Identifier: MIT */
/* A small HTTP/1.x server on the event loop that answers GET /metrics. */
#ifndef QPOOL_METRICS_HTTP_H
#define QPOOL_METRICS_HTTP_H

#include <stdio.h>
#include <systemd/sd-event.h>

#include "error.h"

struct metrics_http;

/* Writes the exposition body to out; 0 or -errno (the client gets 500). */
typedef int (*metrics_render_f)(void *userdata, FILE *out);

/* Listens on listen ("ADDR:PORT", "[ADDR]:PORT") and serves each GET (or
 * HEAD) of /metrics with render's text, one response per connection, then
 * closes it (docs/METRICS.md, "The endpoint"). Another method: 405; another
 * path: 404; a request over METRICS_HTTP_REQ_MAX bytes: 431; no whole
 * request and reply within METRICS_HTTP_TIMEOUT_SEC: closed; past
 * METRICS_HTTP_CONNS_MAX at once, the oldest is closed. 0, or -errno
 * with err's one line (-EADDRINUSE: the port is taken). */
int metrics_http_create(sd_event *e, const char *listen, metrics_render_f render, void *userdata,
			struct metrics_http **ret, struct error *err);

/* Closes the listener and every open connection; NULL is fine. */
void metrics_http_destroy(struct metrics_http *h);

/* Requests refused with 4xx, and connections closed for want of time or
 * room, since create (a metric of its own). */
unsigned long long metrics_http_refused(const struct metrics_http *h);

#define METRICS_HTTP_REQ_MAX 8192
#define METRICS_HTTP_TIMEOUT_SEC 10
#define METRICS_HTTP_CONNS_MAX 16

#endif
