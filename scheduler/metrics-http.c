/* SPDX-License-Identifier: MIT */
/* A small HTTP/1.x server on the event loop that answers GET /metrics. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "metrics-http.h"
#include "timeutil.h"
#include "transport.h"

/* One line per LOG_INTERVAL at most for refused requests: a scanner
 * hitting the port must not fill the journal. */
#define LOG_INTERVAL_NS (60LL * 1000000000LL)

struct http_conn {
	struct metrics_http *h;
	int fd;
	sd_event_source *io;
	sd_event_source *timer;
	char in[METRICS_HTTP_REQ_MAX];
	size_t n_in;
	char *out;             /* the whole response once the request is read */
	size_t n_out, off_out;
	struct http_conn *next, *prev;
};

struct metrics_http {
	sd_event *event;
	int fd;
	sd_event_source *src;
	metrics_render_f render;
	void *userdata;
	struct http_conn *conns;
	unsigned n_conns;
	unsigned long long refused;
	int64_t log_at;         /* monotonic ns of the last line; 0: none yet */
	unsigned long long log_quiet;   /* refusals not logged since */
};

static void refused_note(struct metrics_http *h, const char *what)
{
	int64_t now = time_mono_ns();

	h->refused++;
	if (h->log_at && now - h->log_at < LOG_INTERVAL_NS) {
		h->log_quiet++;
		return;
	}
	if (h->log_quiet)
		log_warn("metrics: %s (and %llu more since the last line)", what, h->log_quiet);
	else
		log_warn("metrics: %s", what);
	h->log_at = now;
	h->log_quiet = 0;
}

static void conn_free(struct http_conn *c)
{
	struct metrics_http *h = c->h;

	if (c->prev)
		c->prev->next = c->next;
	else
		h->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	h->n_conns--;
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	close(c->fd);
	free(c->out);
	free(c);
}

/* Sets c->out to a whole response; body may be NULL (none). */
static int respond(struct http_conn *c, const char *status, const char *extra, const char *type,
		   const char *body, size_t n_body, bool head)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -errno;
	fprintf(f, "HTTP/1.1 %s\r\nServer: qpoold\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		"Connection: close\r\n%s\r\n", status, type, n_body, extra ? extra : "");
	if (body && !head)
		fwrite(body, 1, n_body, f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	c->out = buf;
	c->n_out = len;
	c->off_out = 0;
	return 0;
}

static int respond_text(struct http_conn *c, const char *status, const char *extra, const char *text, bool head)
{
	return respond(c, status, extra, "text/plain; charset=utf-8", text, strlen(text), head);
}

/* The request line is in c->in (headers may follow): builds the reply. */
static int request_handle(struct http_conn *c)
{
	struct metrics_http *h = c->h;
	char method[16], target[256], *body = NULL;
	size_t n_body = 0, plen;
	int major, minor, r;
	bool head;
	FILE *f;

	if (sscanf(c->in, "%15s %255s HTTP/%d.%d", method, target, &major, &minor) != 4 || major != 1) {
		refused_note(h, "a request that is not HTTP/1.x: 400");
		return respond_text(c, "400 Bad Request", NULL, "bad request\n", false);
	}
	head = strcmp(method, "HEAD") == 0;
	if (strcmp(method, "GET") != 0 && !head) {
		refused_note(h, "a request other than GET or HEAD: 405");
		return respond_text(c, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", "only GET /metrics\n", false);
	}
	plen = strcspn(target, "?#");
	if (plen != strlen("/metrics") || strncmp(target, "/metrics", plen) != 0) {
		refused_note(h, "a GET of a path other than /metrics: 404");
		return respond_text(c, "404 Not Found", NULL, "not found: qpoold serves /metrics only\n", head);
	}
	f = open_memstream(&body, &n_body);
	if (!f)
		return -errno;
	r = h->render(h->userdata, f);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0) {
		free(body);
		log_err("metrics: cannot render: %s", strerror(-r));
		return respond_text(c, "500 Internal Server Error", NULL, "metrics unavailable\n", head);
	}
	/* Prometheus's text exposition format, version 0.0.4. */
	r = respond(c, "200 OK", NULL, "text/plain; version=0.0.4; charset=utf-8", body, n_body, head);
	free(body);
	return r;
}

/* A whole head has arrived: the blank line that ends it. */
static bool head_complete(const struct http_conn *c)
{
	return memmem(c->in, c->n_in, "\r\n\r\n", 4) || memmem(c->in, c->n_in, "\n\n", 2);
}

static int conn_write(struct http_conn *c)
{
	while (c->off_out < c->n_out) {
		ssize_t n = send(c->fd, c->out + c->off_out, c->n_out - c->off_out, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return -errno;
		c->off_out += (size_t)n;
	}
	return 1;
}

static int conn_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct http_conn *c = userdata;
	int r;

	if (!c->out) {
		for (;;) {
			ssize_t n;

			if (c->n_in == sizeof(c->in) - 1) {
				refused_note(c->h, "a request head over the size limit: 431");
				r = respond_text(c, "431 Request Header Fields Too Large", NULL, "request too large\n", false);
				goto reply;
			}
			n = recv(fd, c->in + c->n_in, sizeof(c->in) - 1 - c->n_in, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				return 0;
			if (n <= 0) {     /* gone, or closed before a whole request */
				conn_free(c);
				return 0;
			}
			c->n_in += (size_t)n;
			c->in[c->n_in] = '\0';
			if (head_complete(c))
				break;
		}
		r = request_handle(c);
reply:
		if (r < 0) {
			conn_free(c);
			return 0;
		}
		/* Whatever else the client sends is not read: one reply, then close. */
		r = sd_event_source_set_io_events(c->io, EPOLLOUT);
		if (r < 0) {
			conn_free(c);
			return 0;
		}
	}
	r = conn_write(c);
	if (r != 0) {
		if (r > 0)
			(void)shutdown(c->fd, SHUT_WR);
		conn_free(c);
	}
	return 0;
}

static int conn_timeout(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct http_conn *c = userdata;

	refused_note(c->h, "a client that did not send or read in time: closed");
	conn_free(c);
	return 0;
}

static int listen_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct metrics_http *h = userdata;

	for (;;) {
		struct http_conn *c;
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0)
			return 0;    /* EAGAIN, or a peer gone before accept: the next wakeup */
		if (h->n_conns >= METRICS_HTTP_CONNS_MAX) {
			/* The oldest goes, not the newcomer: clients that hold
			 * connections open without a request cannot lock a
			 * scraper out for the whole timeout. */
			struct http_conn *old = h->conns;

			while (old->next)
				old = old->next;
			refused_note(h, "too many clients at once: the oldest closed");
			conn_free(old);
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(cfd);
			continue;
		}
		c->h = h;
		c->fd = cfd;
		c->next = h->conns;
		if (h->conns)
			h->conns->prev = c;
		h->conns = c;
		h->n_conns++;
		if (sd_event_add_io(h->event, &c->io, cfd, EPOLLIN, conn_io, c) < 0 ||
		    sd_event_add_time_relative(h->event, &c->timer, CLOCK_MONOTONIC,
					       METRICS_HTTP_TIMEOUT_SEC * 1000000ULL, 0, conn_timeout, c) < 0)
			conn_free(c);
	}
}

int metrics_http_create(sd_event *e, const char *listen, metrics_render_f render, void *userdata,
			struct metrics_http **ret, struct error *err)
{
	struct metrics_http *h = calloc(1, sizeof(*h));
	int r;

	if (!h)
		return error_set(err, -ENOMEM, "out of memory");
	h->event = sd_event_ref(e);
	h->render = render;
	h->userdata = userdata;
	h->fd = -1;
	r = transport_listen_tcp(listen, &h->fd, err);
	if (r < 0) {
		/* err: "listen on ADDR:PORT: Address already in use" */
		char why[sizeof(err->text)];

		snprintf(why, sizeof(why), "%s", err->text);
		error_set(err, r, "metrics_listen: %s", why);
		goto done;
	}
	r = sd_event_add_io(e, &h->src, h->fd, EPOLLIN, listen_io, h);
	if (r < 0)
		error_set(err, r, "event loop: %s", strerror(-r));
done:
	if (r < 0) {
		metrics_http_destroy(h);
		return r;
	}
	*ret = h;
	return 0;
}

void metrics_http_destroy(struct metrics_http *h)
{
	if (!h)
		return;
	while (h->conns)
		conn_free(h->conns);
	sd_event_source_disable_unref(h->src);
	if (h->fd >= 0)
		close(h->fd);
	sd_event_unref(h->event);
	free(h);
}

unsigned long long metrics_http_refused(const struct metrics_http *h)
{
	return h ? h->refused : 0;
}
