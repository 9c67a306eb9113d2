/* SPDX-License-Identifier: MIT */
/* Nodes' links (nodes.c). */
#ifndef QPOOL_NODES_H
#define QPOOL_NODES_H

#include <stdint.h>

#include "pool.h"

struct conn;
struct hctx;
struct node;

/* nodes.c: drains a node (by who, with reason) or resumes it (DRAIN_NONE):
 * stored, then in the pool. 0 or -errno (nothing changed). */
int node_drain_set(struct hctx *s, struct node *n, enum node_drain_by by, const char *reason);
/* The same, asked by uid (an admin's drain or resume: its event's uid). */
int node_drain_set_by(struct hctx *s, struct node *n, enum node_drain_by by, const char *reason, int64_t uid);
/* A node's connection went away. */
void node_link_lost(struct hctx *s, struct conn *c);

/* Heartbeat watch: nodes silent past node_timeout go down. */
void nodes_check_timeouts(struct hctx *s);

#endif
