/* SPDX-License-Identifier: MIT */
/* The lease on qpoold's loop (server-lease.c). */
#ifndef QPOOL_SERVER_LEASE_H
#define QPOOL_SERVER_LEASE_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"

struct conn;
struct hctx;
struct server;

/* server-lease.c: the lease's turns on the loop, takeover and step-down. */
int server_lease_start(struct server *s, struct error *err);
void server_lease_stop(struct server *s);
bool server_standby(const struct hctx *s);
/* Answers req_id with the standby reply (docs/PROTOCOL.md). */
void server_standby_reply(struct conn *c, long long req_id);
/* The pool's name (docs/HA.md, "What names a job id") from the store,
 * written there first when unset or when [server] name differs: into
 * s->pool_name. 0 or -errno (the name meant is used in memory all the
 * same; -ESTALE: the lease was lost). */
int server_pool_name_settle(struct server *s);
/* Leaves the loop for a fresh standby; logs why, with the epoch. */
void server_step_down(struct server *s, const char *why);
/* role, id, active, epoch, standbys: for qstat -B and qmgr. */
json_t *server_ha_json(struct hctx *s);
/* After a write the fence refused: the lease as it is now, for the
 * standby replies that follow. */
void server_lease_refresh(struct server *s);

#endif
