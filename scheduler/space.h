/* SPDX-License-Identifier: MIT */
/* Room in the state directory (space.c). */
#ifndef QPOOL_SPACE_H
#define QPOOL_SPACE_H

#include <stdbool.h>
#include <stddef.h>

struct hctx;
struct server;

/* space.c: room in the state directory. server_space_check (each second)
 * sets or clears state_full from statvfs and, when room returns, retries
 * the completions that waited and runs a pass; server_state_full re-checks
 * a full one; server_space_exhausted marks it full after a commit failed
 * with ENOSPC; server_space_refuse writes qsub's one line, returns -ENOSPC. */
void server_space_check(struct server *s);
bool server_state_full(struct hctx *h);
void server_space_exhausted(struct server *s);

int server_space_refuse(struct hctx *h, char *buf, size_t len);

#endif
