/* SPDX-License-Identifier: MIT */
/* noded/linkrace: servers on loopback that speak, speak late, refuse or stay silent, raced. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linkrace.h"
#include "unit.h"

enum fake_kind {
	FAKE_SPEAKS,      /* accepts and sends a hello at once */
	FAKE_LATE,        /* ... 100 ms after the accept */
	FAKE_BUSY,        /* accepts and sends a busy server's refusal */
	FAKE_HUGE,        /* accepts and announces a 64 KiB first frame */
	FAKE_SILENT,      /* the kernel completes the connect; nothing is sent */
	FAKE_CLOSED,      /* nobody listens: the connect is refused */
};

struct fake {
	enum fake_kind kind;
	int fd, conn;
	sd_event_source *io, *late;
	char addr[TRANSPORT_ADDR_MAX];
};

struct outcome {
	bool done;
	int fd;
	size_t idx;
	char op[32];
	char tried[512];
};

static void fake_send(struct fake *f)
{
	json_t *m = f->kind == FAKE_BUSY ? json_pack("{s:i, s:b, s:s}", "id", 0, "ok", 0, "error", "busy")
					 : json_pack("{s:s, s:s}", "op", "hello", "nonce", "n");
	struct wirebuf out = { 0 };

	if (f->kind == FAKE_HUGE) {
		static const char huge[8192] = { 0, 1, 0, 0 };

		CU_ASSERT_EQUAL(write(f->conn, huge, sizeof(huge)), (ssize_t)sizeof(huge));
		json_decref(m);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(wire_queue(&out, m), 0);
	CU_ASSERT_EQUAL(write(f->conn, out.data, out.len), (ssize_t)out.len);
	wirebuf_free(&out);
	json_decref(m);
}

static int fake_on_late(sd_event_source *s, uint64_t usec, void *userdata)
{
	fake_send(userdata);
	return 0;
}

static int fake_on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fake *f = userdata;

	f->conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (f->conn < 0)
		return 0;
	sd_event_source_set_enabled(s, SD_EVENT_OFF);
	if (f->kind == FAKE_LATE) {
		CU_ASSERT_EQUAL(sd_event_add_time_relative(sd_event_source_get_event(s), &f->late, CLOCK_MONOTONIC,
							   100000, 1000, fake_on_late, f), 0);
	} else {
		fake_send(f);
	}
	return 0;
}

static void fake_start(sd_event *ev, struct fake *f, enum fake_kind kind)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);

	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->conn = -1;
	f->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	CU_ASSERT_FATAL(f->fd >= 0);
	CU_ASSERT_EQUAL_FATAL(bind(f->fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	CU_ASSERT_EQUAL_FATAL(getsockname(f->fd, (struct sockaddr *)&sin, &len), 0);
	snprintf(f->addr, sizeof(f->addr), "127.0.0.1:%u", ntohs(sin.sin_port));
	if (kind == FAKE_CLOSED) {
		close(f->fd);   /* the port is free again: a connect is refused */
		f->fd = -1;
		return;
	}
	CU_ASSERT_EQUAL_FATAL(listen(f->fd, 4), 0);
	if (kind != FAKE_SILENT) {
		CU_ASSERT_EQUAL_FATAL(sd_event_add_io(ev, &f->io, f->fd, EPOLLIN, fake_on_accept, f), 0);
	}
}

static void fake_stop(struct fake *f)
{
	sd_event_source_disable_unref(f->io);
	sd_event_source_disable_unref(f->late);
	if (f->conn >= 0)
		close(f->conn);
	if (f->fd >= 0)
		close(f->fd);
}

static void on_done(void *userdata, int fd, size_t idx, json_t *first, struct wirebuf *in, const char *tried)
{
	struct outcome *o = userdata;

	o->done = true;
	o->fd = fd;
	o->idx = idx;
	snprintf(o->op, sizeof(o->op), "%s", first ? (wire_str(first, "op") ?: "refusal") : "");
	snprintf(o->tried, sizeof(o->tried), "%s", tried ? tried : "");
	json_decref(first);
	if (in)
		wirebuf_free(in);
}

/* Races servers of the given kinds; the outcome, the race's own time in ms. */
static unsigned race(const enum fake_kind *kinds, size_t n, size_t prefer, size_t avoid, unsigned timeout_ms,
		     struct outcome *o)
{
	struct transport_servers list = { .n = n };
	struct fake f[4];
	struct link_race *r = NULL;
	uint64_t t0, t1;
	sd_event *ev;

	memset(o, 0, sizeof(*o));
	o->fd = -2;
	CU_ASSERT_EQUAL_FATAL(sd_event_new(&ev), 0);
	for (size_t i = 0; i < n; i++) {
		fake_start(ev, &f[i], kinds[i]);
		memcpy(list.addr[i], f[i].addr, sizeof(f[i].addr));
	}
	sd_event_now(ev, CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL_FATAL(link_race_start(ev, &list, prefer, avoid, timeout_ms, on_done, o, &r), 0);
	for (int i = 0; i < 1000 && !o->done; i++)
		CU_ASSERT(sd_event_run(ev, 100000) >= 0);
	sd_event_now(ev, CLOCK_MONOTONIC, &t1);
	CU_ASSERT(o->done);
	link_race_destroy(r);
	if (o->fd >= 0)
		close(o->fd);
	for (size_t i = 0; i < n; i++)
		fake_stop(&f[i]);
	sd_event_unref(ev);
	return (unsigned)((t1 - t0) / 1000);
}

static void test_silent_first(void)
{
	struct outcome o;
	unsigned ms = race((enum fake_kind[]){ FAKE_SILENT, FAKE_SPEAKS }, 2, SIZE_MAX, SIZE_MAX, 5000, &o);

	CU_ASSERT(o.fd >= 0);
	CU_ASSERT_EQUAL(o.idx, 1);
	CU_ASSERT_STRING_EQUAL(o.op, "hello");
	/* Not the silent entry's deadline: a wide margin under it. */
	CU_ASSERT(ms < 4000);
}

static void test_all_refused(void)
{
	struct outcome o;

	race((enum fake_kind[]){ FAKE_CLOSED, FAKE_CLOSED }, 2, SIZE_MAX, SIZE_MAX, 5000, &o);
	CU_ASSERT_EQUAL(o.fd, -1);
	CU_ASSERT(strstr(o.tried, "Connection refused") != NULL);
	CU_ASSERT(strstr(o.tried, ", ") != NULL);
}

static void test_all_silent(void)
{
	struct outcome o;
	unsigned ms = race((enum fake_kind[]){ FAKE_SILENT, FAKE_SILENT }, 2, SIZE_MAX, SIZE_MAX, 200, &o);

	CU_ASSERT_EQUAL(o.fd, -1);
	CU_ASSERT(strstr(o.tried, "no answer") != NULL);
	CU_ASSERT(ms >= 200);
}

static void test_preferred_late(void)
{
	struct outcome o;

	/* The named active speaks 100 ms after a standby: still taken. */
	race((enum fake_kind[]){ FAKE_SPEAKS, FAKE_LATE }, 2, 1, SIZE_MAX, 5000, &o);
	CU_ASSERT(o.fd >= 0);
	CU_ASSERT_EQUAL(o.idx, 1);
}

static void test_preferred_silent(void)
{
	struct outcome o;
	unsigned ms = race((enum fake_kind[]){ FAKE_SILENT, FAKE_SPEAKS }, 2, 0, SIZE_MAX, 5000, &o);

	/* The named active never speaks: the other after the grace. */
	CU_ASSERT(o.fd >= 0);
	CU_ASSERT_EQUAL(o.idx, 1);
	CU_ASSERT(ms >= LINK_RACE_GRACE_MS && ms < 4000);
}

static void test_avoided_and_busy(void)
{
	struct outcome o;

	race((enum fake_kind[]){ FAKE_SPEAKS, FAKE_LATE }, 2, SIZE_MAX, 0, 5000, &o);
	CU_ASSERT_EQUAL(o.idx, 1);
	race((enum fake_kind[]){ FAKE_BUSY, FAKE_LATE }, 2, SIZE_MAX, SIZE_MAX, 5000, &o);
	CU_ASSERT_EQUAL(o.idx, 1);
	CU_ASSERT_STRING_EQUAL(o.op, "hello");
	/* Alone, the avoided one and the busy one are still taken. */
	race((enum fake_kind[]){ FAKE_SPEAKS, FAKE_CLOSED }, 2, SIZE_MAX, 0, 5000, &o);
	CU_ASSERT_EQUAL(o.idx, 0);
	race((enum fake_kind[]){ FAKE_BUSY, FAKE_SILENT }, 2, SIZE_MAX, SIZE_MAX, 5000, &o);
	CU_ASSERT_EQUAL(o.idx, 0);
	CU_ASSERT_STRING_EQUAL(o.op, "refusal");
}

static void test_huge_first_frame(void)
{
	struct outcome o;

	/* A peer announcing more than a hello is not qpoold: not buffered. */
	race((enum fake_kind[]){ FAKE_HUGE, FAKE_LATE }, 2, SIZE_MAX, SIZE_MAX, 5000, &o);
	CU_ASSERT_EQUAL(o.idx, 1);
	race((enum fake_kind[]){ FAKE_HUGE }, 1, SIZE_MAX, SIZE_MAX, 5000, &o);
	CU_ASSERT_EQUAL(o.fd, -1);
	CU_ASSERT(strstr(o.tried, "Protocol error") != NULL);
}

static const struct unit_test linkrace_tests[] = {
	{ "huge_first_frame", test_huge_first_frame },
	{ "silent_first", test_silent_first },
	{ "all_refused", test_all_refused },
	{ "all_silent", test_all_silent },
	{ "preferred_late", test_preferred_late },
	{ "preferred_silent", test_preferred_silent },
	{ "avoided_and_busy", test_avoided_and_busy },
	{ NULL, NULL },
};

UNIT_SUITE(noded_linkrace, linkrace_tests);
