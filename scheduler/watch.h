/* SPDX-License-Identifier: MIT */
/* The event stream (watch.c). */
#ifndef QPOOL_WATCH_H
#define QPOOL_WATCH_H

struct conn;
struct hctx;

/* watch.c: the event stream (docs/EVENTS.md). op_watch (ops.h) answers the
 * `watch` op and keeps the connection as a watcher; watch_flush sends each
 * watcher what was committed since (after each loop iteration);
 * watch_conn_closed forgets a connection's watch; watch_prune deletes
 * events past event_retention, a batch at a time (from the 1 s timer). */
void watch_flush(struct hctx *s);
void watch_conn_closed(struct hctx *s, const struct conn *c);
void watch_prune(struct hctx *s);
unsigned watch_count(const struct hctx *s);
void watch_destroy(struct hctx *s);
/* A node's change that is not a store write of its own (its link closed
 * or back, docs/EVENTS.md): noted, and written as events in one
 * transaction once the loop has nothing more pressing (an idle-priority
 * turn), so a thousand links closing at once are one commit, not a
 * thousand. watch_notes_flush writes what is noted now. */
void watch_note_node(struct hctx *h, const char *node, const char *state, const char *reason);
void watch_notes_flush(struct hctx *s);

#endif
