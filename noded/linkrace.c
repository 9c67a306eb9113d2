/* SPDX-License-Identifier: MIT */
/* A race of TCP connects to qpoold: every server of a list dialled at once, the first to speak wins. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "linkrace.h"

enum race_rank {
	RANK_PREFERRED,   /* the active a standby named */
	RANK_PLAIN,
	RANK_LAST,        /* the server just left, or a busy one's refusal */
};

enum race_step {
	STEP_DIALLING,    /* connect or hello under way */
	STEP_SPOKE,       /* its first frame is in */
	STEP_FAILED,
};

struct race_entry {
	struct link_race *race;
	int fd;
	sd_event_source *io;
	struct wirebuf in;
	json_t *first;
	enum race_step step;
	enum race_rank rank;
	unsigned seq;         /* the order in which entries spoke */
	int error;            /* STEP_FAILED: -errno, -ETIMEDOUT at the deadline */
};

struct link_race {
	sd_event *ev;
	struct transport_servers list;
	struct race_entry e[TRANSPORT_SERVERS_MAX];
	sd_event_source *timer;
	uint64_t deadline;    /* CLOCK_MONOTONIC, µs */
	uint64_t grace;       /* 0 until one spoke and a better one is awaited */
	unsigned spoke;
	link_race_done_f done;
	void *userdata;
};

static void race_entry_close(struct race_entry *x)
{
	x->io = sd_event_source_disable_unref(x->io);
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
	wirebuf_free(&x->in);
	json_decref(x->first);
	x->first = NULL;
}

static void race_fail_entry(struct race_entry *x, int error)
{
	race_entry_close(x);
	x->step = STEP_FAILED;
	x->error = error;
}

static int race_arm(struct link_race *r)
{
	uint64_t at = r->grace && r->grace < r->deadline ? r->grace : r->deadline;
	int q = sd_event_source_set_time(r->timer, at);

	return q < 0 ? q : sd_event_source_set_enabled(r->timer, SD_EVENT_ONESHOT);
}

/* The race is over: the winner (or nobody) is handed over, every other
 * connection closed. r is not touched after done, which may free it. */
static void race_finish(struct link_race *r, struct race_entry *win)
{
	char tried[512];
	size_t used = 0;

	sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
	tried[0] = '\0';
	for (size_t i = 0; i < r->list.n; i++) {
		struct race_entry *x = &r->e[i];
		const char *why;
		int k;

		if (win && i == (size_t)(win - r->e))
			continue;
		why = x->step == STEP_FAILED ? (x->error == -ETIMEDOUT ? "no answer" : strerror(-x->error))
					     : "not chosen";
		race_entry_close(x);
		k = snprintf(tried + used, sizeof(tried) - used, "%s%s (%s)", used ? ", " : "", r->list.addr[i], why);
		if (k > 0 && (size_t)k < sizeof(tried) - used)
			used += (size_t)k;
	}
	if (win) {
		struct wirebuf in = win->in;
		json_t *first = win->first;
		int fd = win->fd;

		win->io = sd_event_source_disable_unref(win->io);
		win->fd = -1;
		win->first = NULL;
		memset(&win->in, 0, sizeof(win->in));
		r->done(r->userdata, fd, (size_t)(win - r->e), first, &in, NULL);
		return;
	}
	r->done(r->userdata, -1, 0, NULL, NULL, tried);
}

/* After every change: wins the best entry that spoke when none better is
 * still dialling (or the grace ran out), fails when none is left. */
static bool race_decide(struct link_race *r, bool grace_over)
{
	struct race_entry *best = NULL;
	enum race_rank dialling = RANK_LAST + 1;
	uint64_t now;

	for (size_t i = 0; i < r->list.n; i++) {
		struct race_entry *x = &r->e[i];

		if (x->step == STEP_DIALLING && x->rank < dialling)
			dialling = x->rank;
		if (x->step == STEP_SPOKE &&
		    (!best || x->rank < best->rank || (x->rank == best->rank && x->seq < best->seq)))
			best = x;
	}
	if (best && (best->rank <= dialling || grace_over)) {
		race_finish(r, best);
		return true;
	}
	if (!best && dialling > RANK_LAST) {
		race_finish(r, NULL);
		return true;
	}
	if (best && !r->grace && sd_event_now(r->ev, CLOCK_MONOTONIC, &now) >= 0) {
		r->grace = now + LINK_RACE_GRACE_MS * 1000ULL;
		(void)race_arm(r);
	}
	return false;
}

static int race_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct race_entry *x = userdata;
	struct link_race *r = x->race;
	struct error err;
	ssize_t n;
	int q;

	for (;;) {
		n = wire_read(x->fd, &x->in);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		/* A server's hello is a few dozen bytes: a peer announcing
		 * more is not qpoold, and is not buffered. */
		if (wire_announced(&x->in) > TRANSPORT_AUTH_BYTES) {
			n = -EPROTO;
			break;
		}
		/* The first frame is whole: nothing more is read here. */
		if (x->in.len - x->in.off >= 4 && x->in.len - x->in.off >= 4 + wire_announced(&x->in)) {
			n = -EAGAIN;
			break;
		}
	}
	q = wire_next(&x->in, &x->first, &err);
	if (q == 1) {
		x->io = sd_event_source_disable_unref(x->io);
		x->step = STEP_SPOKE;
		x->seq = ++r->spoke;
		/* A qpoold busy with other handshakes answers its hello's
		 * place with a refusal: taken only when nothing else speaks. */
		if (wire_int(x->first, "id", -1) == 0 && !wire_bool(x->first, "ok", 1))
			x->rank = RANK_LAST;
	} else if (q < 0 || (n != -EAGAIN)) {
		race_fail_entry(x, q < 0 ? -EPROTO : n == 0 ? -ECONNRESET : (int)n);
	} else {
		return 0;
	}
	(void)race_decide(r, false);
	return 0;
}

static int race_on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct link_race *r = userdata;
	bool grace_over = r->grace && usec >= r->grace && r->spoke;

	/* The first run, armed by start: no one has spoken, no grace yet. */
	if (!r->spoke)
		r->grace = 0;
	if (usec >= r->deadline)
		for (size_t i = 0; i < r->list.n; i++)
			if (r->e[i].step == STEP_DIALLING)
				race_fail_entry(&r->e[i], -ETIMEDOUT);
	if (!race_decide(r, grace_over))
		(void)race_arm(r);
	return 0;
}

int link_race_start(sd_event *ev, const struct transport_servers *list, size_t prefer, size_t avoid,
		    unsigned timeout_ms, link_race_done_f done, void *userdata, struct link_race **ret)
{
	struct link_race *r;
	uint64_t now;
	int q;

	if (list->n == 0 || list->n > TRANSPORT_SERVERS_MAX)
		return -EINVAL;
	for (size_t i = 0; i < list->n; i++)
		if (list->addr[i][0] == '/')
			return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ev = ev;
	r->list = *list;
	r->done = done;
	r->userdata = userdata;
	for (size_t i = 0; i < list->n; i++) {
		r->e[i].race = r;
		r->e[i].fd = -1;
		r->e[i].rank = i == prefer ? RANK_PREFERRED : i == avoid ? RANK_LAST : RANK_PLAIN;
	}
	q = sd_event_now(ev, CLOCK_MONOTONIC, &now);
	if (q < 0)
		goto fail;
	r->deadline = now + timeout_ms * 1000ULL;
	q = sd_event_add_time(ev, &r->timer, CLOCK_MONOTONIC, r->deadline, 1000, race_on_timer, r);
	if (q < 0)
		goto fail;
	for (size_t i = 0; i < list->n; i++) {
		struct race_entry *x = &r->e[i];
		struct error err;
		bool tcp;

		/* A refused connect or an unknown name fails this entry alone,
		 * decided on the loop like any other end. */
		q = transport_connect(list->addr[i], true, 0, &x->fd, &tcp, &err);
		if (q == 0)
			q = sd_event_add_io(ev, &x->io, x->fd, EPOLLIN, race_on_io, x);
		if (q < 0)
			race_fail_entry(x, q);
	}
	/* Every entry may have failed at once: decided on the loop, so done
	 * never runs inside start. */
	r->grace = now;
	q = race_arm(r);
	if (q < 0)
		goto fail;
	*ret = r;
	return 0;
fail:
	link_race_destroy(r);
	return q;
}

const char *link_race_addr(const struct link_race *r, size_t idx)
{
	return idx < r->list.n ? r->list.addr[idx] : "";
}

void link_race_destroy(struct link_race *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->list.n; i++)
		race_entry_close(&r->e[i]);
	sd_event_source_disable_unref(r->timer);
	free(r);
}
