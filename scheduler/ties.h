/* SPDX-License-Identifier: MIT */
/* Jobs tied to a connection (ties.c). */
#ifndef QPOOL_TIES_H
#define QPOOL_TIES_H

#include <stdint.h>

struct conn;
struct hctx;

/* ties.c: a job tied to a connection (the `tie` request, docs/PROTOCOL.md)
 * is cancelled once no connection has held it for a grace period, checked
 * by ties_check from the 1 s timer. ties_add: 0, -ENOSPC past the caps,
 * -ENOMEM. */
int ties_add(struct hctx *s, struct conn *c, int64_t jobid);
void ties_conn_closed(struct hctx *s, const struct conn *c);
void ties_check(struct hctx *s);
void ties_destroy(struct hctx *s);

#endif
