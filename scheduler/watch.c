/* SPDX-License-Identifier: MIT */
/* The event stream's watchers (docs/EVENTS.md): the `watch` op streams the
 * store's events from a cursor, then as they are committed; a watcher
 * that does not read is dropped at its cap, told why. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuacct.h"
#include "log.h"
#include "ops.h"
#include "config.h"
#include "conn.h"
#include "hctx.h"
#include "jobstore.h"
#include "pool.h"
#include "watch.h"
#include "sort.h"
#include "timeutil.h"
#include "wire.h"

/* Events read from the store per watcher and turn: ~150 bytes each as
 * JSON, so a frame stays far below the wire's 1 MiB. */
#define WATCH_BATCH 512
/* Old events are deleted this many per transaction, a batch a second
 * while there are more, else once a minute: no pass waits long on it. */
#define PRUNE_BATCH 2000
#define PRUNE_IDLE_SEC 60
#define FRAME_SLOTS 8
/* Watchers are written to at most this often: each write wakes each
 * watcher (~4 us of qpoold's CPU per watcher and write, bench/events),
 * and a pool ending 20 jobs a second commits 60 times a second. An end
 * after a quiet spell still goes out at once (qwait's latency). */
#define COALESCE_NS (20 * 1000000LL)
/* A watcher of the whole view (no job list: `qstat --follow`, a portal)
 * is told of every job's changes, so on a busy pool each of its turns is
 * a write, and a write wakes its peer (~5 us of qpoold's CPU): 50 such
 * watchers written at every 20 ms turn cost more than 50 `qstat` pollers
 * at 1 Hz. They are written together at most every BROAD_NS_PER_WATCHER
 * times their number (20 ms: 1 s for 50), between 20 ms and 1 s: the
 * writes of all of them stay near 50 a second however many there are, a
 * crowd of them is never further behind than a 1 Hz poller, and the
 * first event after a quiet spell still goes out at once. Watchers
 * naming jobs (qwait, sbatch --wait, srun, salloc) are written only for
 * their jobs and keep the 20 ms turn. */
#define BROAD_NS_PER_WATCHER (20 * 1000000LL)
#define BROAD_NS_MAX (1000 * 1000000LL)

struct watcher {
	struct conn *conn;
	long long req_id;
	int64_t cursor;           /* the last seq looked at */
	int64_t replay_until;     /* the last seq when it came: before it, a replay */
	bool all;                 /* root: every job's events and the nodes' */
	int64_t *jobs;            /* only these jobs' (sorted); NULL: all it may see */
	size_t n_jobs;
	bool more;                /* its last turn left it a batch behind */
	bool dead;                /* its connection closed during a turn: freed after it */
	struct watcher *next;
};

struct watchers {
	struct watcher *list;
	unsigned n;
	unsigned n_broad;         /* of them, watching the whole view */
	int64_t last_broad;       /* monotonic ns the broad ones were last written */
	uint64_t broad_committed; /* jobstore_events_committed at that time */
	bool broad_pending;       /* events committed since: the broad ones wait */
	bool broad_due;           /* in a turn: the broad ones are written */
	bool walking;             /* in a turn: a closed watcher is marked, not freed */
	uint64_t committed;       /* jobstore_events_committed at the last turn */
	bool behind;              /* a watcher has more to read */
	sd_event_source *more_src;
	sd_event_source *later_src;  /* the coalescing timer */
	int64_t last_turn;        /* monotonic ns of the last turn */
	int64_t next_prune;       /* monotonic ns */
	/* The events read for one cursor in this turn, shared by watchers
	 * there (most watchers are at the last seq): each event's JSON text
	 * written once, straight from its row, with what decides who sees
	 * it; a watcher's frame is the texts it may see, joined. */
	struct ev_item {
		int64_t seq, jobid, uid;
		size_t off, len;        /* its text in cache_text */
	} *items;
	size_t n_items, cap_items;
	struct wirebuf cache_text;
	bool cached;
	int64_t cache_from, cache_to;
	/* Frames encoded in this turn, for watchers of one view (root's, or
	 * one uid's, no job list) at one cursor with one request id (a
	 * command's first request: most watchers'): encoded once, copied to
	 * each. */
	struct frame_cache {
		long long req_id;
		int64_t view, from, to;
		struct wirebuf frame;   /* empty: nothing of it to send */
		bool used;
	} frames[FRAME_SLOTS];
	unsigned next_frame;
	/* Node events noted, written together (watch_note_node). */
	struct node_note {
		char *node;
		const char *state, *reason;   /* static text */
	} *notes;
	size_t n_notes, cap_notes;
	sd_event_source *notes_src;
};

static void watch_turn(struct hctx *s);

static int notes_handler(sd_event_source *src, void *userdata)
{
	watch_notes_flush(userdata);
	return 0;
}

static int more_handler(sd_event_source *src, void *userdata)
{
	cpu_owner_part("watch");
	watch_turn(userdata);
	return 0;
}

static int later_handler(sd_event_source *src, uint64_t usec, void *userdata)
{
	cpu_owner_part("watch");
	watch_turn(userdata);
	return 0;
}

static struct watchers *watchers_get(struct hctx *s)
{
	struct watchers *w = s->watchers;

	if (w)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	if (sd_event_add_defer(s->event, &w->more_src, more_handler, s) < 0 ||
	    sd_event_source_set_enabled(w->more_src, SD_EVENT_OFF) < 0 ||
	    sd_event_add_time_relative(s->event, &w->later_src, CLOCK_MONOTONIC, 1000, 1000, later_handler, s) < 0 ||
	    sd_event_source_set_enabled(w->later_src, SD_EVENT_OFF) < 0) {
		sd_event_source_disable_unref(w->more_src);
		sd_event_source_disable_unref(w->later_src);
		free(w);
		return NULL;
	}
	if (sd_event_add_defer(s->event, &w->notes_src, notes_handler, s) < 0 ||
	    sd_event_source_set_priority(w->notes_src, SD_EVENT_PRIORITY_IDLE) < 0 ||
	    sd_event_source_set_enabled(w->notes_src, SD_EVENT_OFF) < 0) {
		sd_event_source_disable_unref(w->notes_src);
		sd_event_source_disable_unref(w->more_src);
		sd_event_source_disable_unref(w->later_src);
		free(w);
		return NULL;
	}
	w->committed = jobstore_events_committed(s->store);
	s->watchers = w;
	return w;
}

static void watcher_free(struct watcher *w)
{
	if (!w)
		return;
	if (w->conn) {
		w->conn->watching = false;
		conn_unref(w->conn);
	}
	free(w->jobs);
	free(w);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Appends len bytes of text to b; 0 or -ENOMEM. */
static int put(struct wirebuf *b, const char *text, size_t len)
{
	if (wirebuf_reserve(b, len) < 0)
		return -ENOMEM;
	memcpy(b->data + b->len, text, len);
	b->len += len;
	return 0;
}

static int putf(struct wirebuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int putf(struct wirebuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (wirebuf_reserve(b, 128) < 0)
		return -ENOMEM;
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len)
		return -ENOMEM;   /* the formats here are far below 128 bytes */
	b->len += (size_t)n;
	return 0;
}

/* A decimal integer; 0 or -ENOMEM. By hand: vsnprintf was a third of
 * writing an event. */
static int put_i64(struct wirebuf *b, int64_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	return put(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* ,"key":N */
static int put_key_i64(struct wirebuf *b, const char *key, size_t key_len, int64_t v)
{
	int r = put(b, key, key_len);

	return r == 0 ? put_i64(b, v) : r;
}
#define PUT_KEY_I64(b, lit, v) put_key_i64(b, lit, sizeof(lit) - 1, v)

/* ,"key":"text" as JSON writes it; text not valid UTF-8 is left out, as
 * jansson refuses it (the member was missing before too). Runs of plain
 * characters are copied whole. */
static int put_str(struct wirebuf *b, const char *key, const char *text)
{
	size_t n = strlen(text), run = 0;
	const unsigned char *t = (const unsigned char *)text;
	bool ascii = true;
	int r;

	for (size_t i = 0; i < n && ascii; i++)
		ascii = t[i] < 0x80;
	if (!ascii) {
		json_t *j = json_stringn(text, n);

		if (!j)
			return 0;
		json_decref(j);
	}
	r = put(b, ",\"", 2);
	if (r == 0)
		r = put(b, key, strlen(key));
	if (r == 0)
		r = put(b, "\":\"", 3);
	for (size_t i = 0; i < n && r == 0; i++) {
		if (t[i] != '"' && t[i] != '\\' && t[i] >= 0x20)
			continue;
		r = put(b, text + run, i - run);
		if (r == 0 && (t[i] == '"' || t[i] == '\\'))
			r = putf(b, "\\%c", t[i]);
		else if (r == 0)
			r = putf(b, "\\u%04x", t[i]);
		run = i + 1;
	}
	if (r == 0)
		r = put(b, text + run, n - run);
	return r == 0 ? put(b, "\"", 1) : r;
}

/* One event as its JSON object (docs/EVENTS.md's members), written
 * once per turn from its row, no object built. */
static int collect(const struct jobstore_event *e, void *ud)
{
	struct watchers *ws = ud;
	struct wirebuf *b = &ws->cache_text;
	struct ev_item *it;
	int r;

	if (ws->n_items == ws->cap_items) {
		size_t cap = ws->cap_items ? ws->cap_items * 2 : 64;
		void *p = realloc(ws->items, cap * sizeof(*ws->items));

		if (!p)
			return -ENOMEM;
		ws->items = p;
		ws->cap_items = cap;
	}
	it = &ws->items[ws->n_items];
	*it = (struct ev_item){ .seq = e->seq, .jobid = e->jobid, .uid = e->uid, .off = b->len };
	r = PUT_KEY_I64(b, "{\"seq\":", e->seq);
	if (r == 0)
		r = PUT_KEY_I64(b, ",\"time\":", e->t);
	if (r == 0)
		r = PUT_KEY_I64(b, ",\"epoch\":", e->epoch);
	if (r == 0)
		r = put_str(b, "state", e->state ? e->state : "");
	/* A job's owner; a node's changer (an admin's drain or resume),
	 * none when qpoold changed it. */
	if (r == 0 && e->jobid)
		r = PUT_KEY_I64(b, ",\"jobid\":", e->jobid);
	if (r == 0 && (e->jobid || e->uid >= 0))
		r = PUT_KEY_I64(b, ",\"uid\":", e->uid);
	if (r == 0 && e->node)
		r = put_str(b, "node", e->node);
	if (r == 0 && e->exit_status >= 0)
		r = PUT_KEY_I64(b, ",\"exit_status\":", e->exit_status);
	if (r == 0 && e->exit_signal > 0)
		r = PUT_KEY_I64(b, ",\"exit_signal\":", e->exit_signal);
	if (r == 0 && e->reason)
		r = put_str(b, "reason", e->reason);
	if (r == 0)
		r = put(b, "}", 1);
	if (r < 0)
		return r;
	it->len = b->len - it->off;
	ws->n_items++;
	return 0;
}

/* The events after cursor (at most WATCH_BATCH) into the cache, read
 * once per cursor and turn. */
static int events_after(struct hctx *s, struct watchers *ws, int64_t cursor)
{
	int r;

	if (ws->cached && ws->cache_from == cursor)
		return 0;
	ws->cached = false;
	ws->n_items = 0;
	ws->cache_text.len = ws->cache_text.off = 0;
	r = jobstore_events_read(s->store, cursor, WATCH_BATCH, collect, ws);
	if (r < 0)
		return r;
	ws->cached = true;
	ws->cache_from = cursor;
	ws->cache_to = ws->n_items ? ws->items[ws->n_items - 1].seq : cursor;
	return 0;
}

static bool visible(const struct watcher *w, const struct ev_item *ev)
{
	if (!ev->jobid)   /* a node's: to root, naming no jobs */
		return w->all && !w->jobs;
	if (!w->all && ev->uid != (int64_t)w->conn->uid)
		return false;
	if (!w->jobs)
		return true;
	return bsearch(&ev->jobid, w->jobs, w->n_jobs, sizeof(ev->jobid), cmp_i64) != NULL;
}

static size_t out_pending(const struct conn *c)
{
	return c->out.len - c->out.off;
}

/* The frame slot of w's view at its cursor: found (used), or a free one
 * made ready for it (not used yet). */
static struct frame_cache *frame_find(struct watchers *ws, const struct watcher *w, int64_t to)
{
	int64_t view = w->all ? -1 : (int64_t)w->conn->uid;
	struct frame_cache *fc;

	for (unsigned k = 0; k < FRAME_SLOTS; k++) {
		fc = &ws->frames[k];
		if (fc->used && fc->req_id == w->req_id && fc->view == view && fc->from == w->cursor && fc->to == to)
			return fc;
	}
	fc = &ws->frames[ws->next_frame++ % FRAME_SLOTS];
	fc->used = false;
	fc->req_id = w->req_id;
	fc->view = view;
	fc->from = w->cursor;
	fc->to = to;
	fc->frame.len = fc->frame.off = 0;
	return fc;
}

static void frames_clear(struct watchers *ws)
{
	for (unsigned k = 0; k < FRAME_SLOTS; k++) {
		ws->frames[k].used = false;
		ws->frames[k].frame.len = ws->frames[k].frame.off = 0;
	}
}

/* w's peer left more than cap unread: dropped, told why. Returns -1. */
static int watcher_drop(struct watcher *w, size_t cap)
{
	struct conn *c = w->conn;

	log_warn("watch of %s (uid %d) dropped: %zu bytes of events unread (watch_buffer %zu)", c->peer,
		 (int)c->uid, out_pending(c), cap);
	/* Past the cap on purpose by this one frame: the reason is what the
	 * peer reads next, when it reads. */
	conn_send(c, json_pack("{s:I, s:b, s:s, s:i, s:I}", "id", (json_int_t)w->req_id, "ok", 0, "error",
			       "watch dropped: its events were not read (watch_buffer); resume with --since",
			       "errno", ENOBUFS, "cursor", (json_int_t)w->cursor));
	return -1;
}

/* One turn of w: one batch after its cursor into its connection. Returns
 * 1 when it has more to read, 0 when it is at the last event, -1 when it
 * was dropped (w is then freed by the caller). */
static int watcher_turn(struct hctx *s, struct watchers *ws, struct watcher *w)
{
	size_t cap = s->config->watch_buffer;
	struct conn *c = w->conn;
	struct wirebuf own = { 0 }, *b;
	struct frame_cache *fc;
	int64_t to;
	size_t i, n = 0;
	bool full;
	int r;

	if (c->closed)
		return -1;
	if (out_pending(c) > cap)
		return watcher_drop(w, cap);
	/* A broad watcher's live events wait for the broad turn, unless a
	 * burst left it batches behind: those go at the loop's pace. */
	if (!w->jobs && !ws->broad_due && w->cursor >= w->replay_until && !w->more)
		return 0;
	/* A replay goes at the pace the peer reads; live events do not
	 * wait, so a peer that stops reading reaches the cap. */
	if (w->cursor < w->replay_until && out_pending(c) > cap / 2)
		return 1;
	if (events_after(s, ws, w->cursor) < 0)
		return 1;
	if (ws->n_items == 0)
		return 0;
	to = ws->cache_to;
	full = ws->n_items == WATCH_BATCH;
	fc = w->jobs ? NULL : frame_find(ws, w, to);
	if (fc && fc->used) {
		w->cursor = to;
		if (fc->frame.len)
			conn_send_frames(c, fc->frame.data, fc->frame.len);
		if (out_pending(c) > cap)
			return watcher_drop(w, cap);
		return full ? 1 : 0;
	}
	/* The frame: {"id":N,"ok":true,"events":[...],"cursor":N}, its
	 * length ahead (the wire's 4 bytes, big-endian). */
	b = fc ? &fc->frame : &own;
	b->len = b->off = 0;
	r = putf(b, "....{\"id\":%lld,\"ok\":true,\"events\":[", (long long)w->req_id);
	for (i = 0; i < ws->n_items && r == 0; i++) {
		const struct ev_item *ev = &ws->items[i];

		if (!visible(w, ev))
			continue;
		if (n++)
			r = put(b, ",", 1);
		if (r == 0)
			r = put(b, ws->cache_text.data + ev->off, ev->len);
	}
	if (r == 0)
		r = putf(b, "],\"cursor\":%lld}", (long long)to);
	if (r < 0) {
		/* Nothing sent: the cursor stays, tried again next turn. */
		b->len = 0;
		wirebuf_free(&own);
		return 1;
	}
	if (b->len - 4 > WIRE_MAX) {
		/* 512 events over 1 MiB (reasons of kilobytes): told, dropped,
		 * never skipped. */
		b->len = 0;
		wirebuf_free(&own);
		log_warn("watch of %s (uid %d) dropped: events after %lld exceed a frame", c->peer, (int)c->uid,
			 (long long)w->cursor);
		conn_send(c, json_pack("{s:I, s:b, s:s, s:i, s:I}", "id", (json_int_t)w->req_id, "ok", 0, "error",
				       "watch dropped: its next events exceed a frame", "errno", EMSGSIZE, "cursor",
				       (json_int_t)w->cursor));
		return -1;
	}
	w->cursor = to;
	if (n == 0)
		b->len = 0;
	if (fc)
		fc->used = true;
	if (b->len) {
		size_t size = b->len - 4;
		unsigned char *p = (unsigned char *)b->data;

		p[0] = (unsigned char)(size >> 24);
		p[1] = (unsigned char)(size >> 16);
		p[2] = (unsigned char)(size >> 8);
		p[3] = (unsigned char)size;
		conn_send_frames(c, b->data, b->len);
	}
	wirebuf_free(&own);
	if (out_pending(c) > cap)
		return watcher_drop(w, cap);
	return full ? 1 : 0;
}

static int64_t broad_interval(const struct watchers *ws)
{
	int64_t ns = (int64_t)ws->n_broad * BROAD_NS_PER_WATCHER;

	return ns < COALESCE_NS ? COALESCE_NS : ns > BROAD_NS_MAX ? BROAD_NS_MAX : ns;
}

void watch_flush(struct hctx *s)
{
	struct watchers *ws = s->watchers;
	bool fresh;
	int64_t now, due;
	uint64_t at = 0;
	int enabled = SD_EVENT_OFF;

	if (!ws || !ws->list)
		return;
	fresh = jobstore_events_committed(s->store) != ws->committed;
	if (!fresh && !ws->behind && !ws->broad_pending)
		return;
	now = time_mono_ns();
	due = ws->last_turn + COALESCE_NS;
	/* Only the broad watchers wait (nothing new, or no watcher names
	 * jobs): their turn, not the next 20 ms, so a busy pool watched by
	 * them alone wakes qpoold once per their interval, not per commit. */
	if ((!fresh || ws->n_broad == ws->n) && !ws->behind && ws->last_broad + broad_interval(ws) > due)
		due = ws->last_broad + broad_interval(ws);
	if (now >= due) {
		watch_turn(s);
		return;
	}
	/* One timer for all: moved earlier when a sooner turn is wanted. */
	(void)sd_event_source_get_enabled(ws->later_src, &enabled);
	if (enabled != SD_EVENT_OFF)
		(void)sd_event_source_get_time(ws->later_src, &at);
	if (enabled == SD_EVENT_OFF || at > (uint64_t)due / 1000) {
		(void)sd_event_source_set_time(ws->later_src, (uint64_t)due / 1000);
		(void)sd_event_source_set_enabled(ws->later_src, SD_EVENT_ONESHOT);
	}
}

static void watch_turn(struct hctx *s)
{
	struct watchers *ws = s->watchers;
	struct watcher **pw, *w;
	bool more = false;
	int64_t cpu0;

	if (!ws || !ws->list)
		return;
	/* The turn's CPU, its sends and closes with it, is the watchers'
	 * (cpuacct.c; bench/events compares it with the pollers'). */
	cpu0 = cpu_thread_ns();
	ws->last_turn = time_mono_ns();
	ws->committed = jobstore_events_committed(s->store);
	ws->broad_due = ws->last_turn >= ws->last_broad + broad_interval(ws);
	if (ws->broad_due) {
		ws->last_broad = ws->last_turn;
		ws->broad_committed = ws->committed;
	}
	ws->broad_pending = ws->n_broad && ws->committed != ws->broad_committed;
	/* A write that fails closes the connection, and its close frees
	 * its watcher (watch_conn_closed): not under this walk's feet. */
	ws->walking = true;
	for (pw = &ws->list; (w = *pw);) {
		int r = w->dead ? -1 : watcher_turn(s, ws, w);

		if (w->dead)
			r = -1;
		if (r < 0) {
			*pw = w->next;
			ws->n--;
			ws->n_broad -= !w->jobs;
			watcher_free(w);
			continue;
		}
		w->more = r > 0;
		more |= r > 0;
		pw = &w->next;
	}
	ws->walking = false;
	/* One closed behind the walk (not by its own write). */
	for (pw = &ws->list; (w = *pw);) {
		if (w->dead) {
			*pw = w->next;
			ws->n--;
			ws->n_broad -= !w->jobs;
			watcher_free(w);
			continue;
		}
		pw = &w->next;
	}
	ws->cached = false;
	frames_clear(ws);
	ws->behind = more;
	if (more)
		(void)sd_event_source_set_enabled(ws->more_src, SD_EVENT_ONESHOT);
	cpu_charge("watch", cpu_thread_ns() - cpu0);
}

void op_watch(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	struct watchers *ws = watchers_get(s);
	json_t *jobs = json_object_get(msg, "jobs"), *current = NULL, *v;
	struct watcher *w = NULL;
	int64_t first, last, since;
	size_t i;
	int r;

	if (!ws) {
		conn_reply_err(c, req_id, ENOMEM, "watch: out of memory");
		return;
	}
	r = jobstore_events_bounds(s->store, &first, &last);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	since = wire_int(msg, "since", last);
	if (since < 0 || since > last) {
		conn_reply_err(c, req_id, ERANGE, "cursor %lld is not an event of this pool yet (the last is %lld)",
			       (long long)since, (long long)last);
		return;
	}
	/* first is the oldest kept; since itself need not be (it was read). */
	if (first && since < first - 1) {
		conn_reply_err(c, req_id, ERANGE, "cursor %lld is older than the events kept (the oldest is %lld;"
			       " event_retention)", (long long)since, (long long)first);
		return;
	}
	if (jobs && (!json_is_array(jobs) || json_array_size(jobs) > WIRE_WATCH_JOBS_MAX)) {
		conn_reply_err(c, req_id, EINVAL, "watch: \"jobs\" is a list of at most %d job ids", WIRE_WATCH_JOBS_MAX);
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w || (jobs && json_array_size(jobs) && !(w->jobs = calloc(json_array_size(jobs), sizeof(int64_t)))))
		goto nomem;
	w->req_id = req_id;
	w->cursor = since;
	w->replay_until = last;
	w->all = c->uid == 0;
	/* Each named job's state now (at last), so a client learns of an
	 * end that came before it asked; then its events after since. */
	if (jobs && json_array_size(jobs)) {
		current = json_array();
		if (!current)
			goto nomem;
		json_array_foreach(jobs, i, v) {
			json_t *row = NULL;

			if (!json_is_integer(v)) {
				json_decref(current);
				free(w->jobs);
				free(w);
				conn_reply_err(c, req_id, EINVAL, "watch: \"jobs\" is a list of job ids");
				return;
			}
			w->jobs[w->n_jobs++] = json_integer_value(v);
			if (jobstore_job_get(s->store, json_integer_value(v), false, &row) < 0)
				continue;
			if (w->all || json_integer_value(json_object_get(row, "uid")) == (json_int_t)c->uid)
				json_array_append_new(current, json_pack("{s:O, s:O, s:O*, s:O*, s:O*, s:O*, s:O*}",
						"jobid", json_object_get(row, "jobid"), "state", json_object_get(row, "state"),
						"exit_status", json_object_get(row, "exit_status"), "exit_signal",
						json_object_get(row, "exit_signal"), "uid", json_object_get(row, "uid"),
						"node", json_object_get(row, "node"), "reason", json_object_get(row, "reason")));
			json_decref(row);
		}
		qp_sort(w->jobs, w->n_jobs, sizeof(int64_t), cmp_i64);
	}
	conn_ref(c);
	c->watching = true;
	w->conn = c;
	w->next = ws->list;
	ws->list = w;
	ws->n++;
	ws->n_broad += !w->jobs;
	ws->behind = ws->behind || since < last;
	conn_reply_ok(c, req_id, json_pack("{s:I, s:I, s:I, s:o*}", "cursor", (json_int_t)since, "last",
					   (json_int_t)last, "first", (json_int_t)first, "current", current));
	if (since < last)
		(void)sd_event_source_set_enabled(ws->more_src, SD_EVENT_ONESHOT);
	return;
nomem:
	if (w)
		free(w->jobs);
	free(w);
	conn_reply_err(c, req_id, ENOMEM, "watch: out of memory");
}

void watch_conn_closed(struct hctx *s, const struct conn *c)
{
	struct watchers *ws = s->watchers;
	struct watcher **pw, *w;

	if (!ws || !c->watching)
		return;
	for (pw = &ws->list; (w = *pw);) {
		if (w->conn == c && ws->walking) {
			w->dead = true;
			pw = &w->next;
			continue;
		}
		if (w->conn == c) {
			*pw = w->next;
			ws->n--;
			ws->n_broad -= !w->jobs;
			watcher_free(w);
			continue;
		}
		pw = &w->next;
	}
}

unsigned watch_count(const struct hctx *s)
{
	return s->watchers ? s->watchers->n : 0;
}

void watch_prune(struct hctx *s)
{
	struct watchers *ws = watchers_get(s);
	int64_t now = time_mono_ns();
	int n;

	if (!ws || now < ws->next_prune)
		return;
	n = jobstore_events_prune(s->store, time_wall_ns() - (int64_t)s->config->event_retention * NSEC_PER_SEC,
				  PRUNE_BATCH);
	if (n < 0)
		log_warn("job store: cannot prune old events: %s", strerror(-n));
	ws->next_prune = now + (n == PRUNE_BATCH ? 1 : PRUNE_IDLE_SEC) * NSEC_PER_SEC;
}

void watch_note_node(struct hctx *s, const char *node, const char *state, const char *reason)
{
	struct watchers *ws = watchers_get(s);
	struct node_note *n;

	if (!ws)
		goto now;
	if (ws->n_notes == ws->cap_notes) {
		size_t cap = ws->cap_notes ? ws->cap_notes * 2 : 16;
		void *p = realloc(ws->notes, cap * sizeof(*ws->notes));

		if (!p)
			goto now;
		ws->notes = p;
		ws->cap_notes = cap;
	}
	n = &ws->notes[ws->n_notes];
	n->node = strdup(node);
	if (!n->node)
		goto now;
	n->state = state;
	n->reason = reason;
	ws->n_notes++;
	(void)sd_event_source_set_enabled(ws->notes_src, SD_EVENT_ONESHOT);
	return;
now:
	/* No memory to note it: written alone. */
	if (jobstore_event_node(s->store, node, state, reason) < 0)
		log_warn("node %s: cannot store its %s event", node, state);
}

void watch_notes_flush(struct hctx *s)
{
	struct watchers *ws = s->watchers;
	int r;

	if (!ws || !ws->n_notes)
		return;
	r = jobstore_begin(s->store);
	for (size_t i = 0; i < ws->n_notes && r == 0; i++)
		r = jobstore_event_node(s->store, ws->notes[i].node, ws->notes[i].state, ws->notes[i].reason);
	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0) {
		jobstore_rollback(s->store);
		log_warn("job store: cannot store %zu node events: %s", ws->n_notes, strerror(-r));
	}
	for (size_t i = 0; i < ws->n_notes; i++)
		free(ws->notes[i].node);
	ws->n_notes = 0;
}

void watch_destroy(struct hctx *s)
{
	struct watchers *ws = s->watchers;

	if (!ws)
		return;
	for (size_t i = 0; i < ws->n_notes; i++)
		free(ws->notes[i].node);
	free(ws->notes);
	sd_event_source_disable_unref(ws->notes_src);
	while (ws->list) {
		struct watcher *w = ws->list;

		ws->list = w->next;
		watcher_free(w);
	}
	free(ws->items);
	wirebuf_free(&ws->cache_text);
	for (unsigned k = 0; k < FRAME_SLOTS; k++)
		wirebuf_free(&ws->frames[k].frame);
	sd_event_source_disable_unref(ws->more_src);
	sd_event_source_disable_unref(ws->later_src);
	free(ws);
	s->watchers = NULL;
}
