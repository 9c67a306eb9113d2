/* SPDX-License-Identifier: MIT */
/* What handlers may ask of qpoold's loop (loop.c, settings.c), whose
 * fields they do not see (hctx.h). */
#ifndef QPOOL_LOOP_H
#define QPOOL_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct error;
struct hctx;

/* settings.c: server_reload (server.h), asked by qmgr. */
int server_reload_ctx(struct hctx *h, struct error *err);

/* qpoold itself stops or steps down: its links closing are not nodes
 * going down. */
bool server_leaving(struct hctx *h);

/* The start estimates' replays (estimate.c, run by the loop): the last
 * one's number (a job's estimate is of it), what they cost in ns. */
struct server_est_stats {
	uint64_t replay;
	uint64_t ns_last, ns_max;
};
void server_est_stats(struct hctx *h, struct server_est_stats *ret);

#endif
