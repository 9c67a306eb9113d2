/* SPDX-License-Identifier: MIT */
/* The nodes qpoold knows, kept in the job store: written when a
 * registration changes what is known of a node, loaded at start so the
 * fit checks count the nodes not back yet, forgotten by qmgr delete node. */
#ifndef QPOOL_NODES_KNOWN_H
#define QPOOL_NODES_KNOWN_H

#include <stdint.h>

#include "jobstore.h"
#include "pool.h"

/* Adds every stored node to p, down and not back: its CPUs, NUMA nodes,
 * topology summary, realtime flag and cgroup mode, so a job that fits it
 * is accepted; nothing is placed there before it registers. A row that
 * cannot be read (a bad CPU list) is skipped. 0 or -errno. */
int nodes_known_load(struct jobstore *js, struct pool *p);

/* n registered (its fields set) from address ("ADDR:PORT" over TCP,
 * anything else: "local"): its row is due for the next
 * nodes_known_flush, which writes it if something changed. */
void nodes_known_note(struct node *n, const char *address);

/* Writes the rows of the nodes noted since the last flush whose CPUs,
 * NUMA nodes, memory, topology summary, rt, cgroup mode or address
 * changed, with t_register now (wall ns), in one transaction: a
 * registration storm of N new nodes costs one commit, not N; an
 * unchanged registration (every node after a qpoold restart) costs
 * none. Returns the number of rows written, or -errno (those rows are
 * then written again at their node's next registration). */
int nodes_known_flush(struct jobstore *js, struct pool *p, int64_t now);

/* Forgets n for good: its row and qmgr settings in the store, then its
 * place in p. -EBUSY while it is connected or has jobs (nothing
 * changed); -ENOENT when neither the store nor p knew it; 0 or -errno. */
int nodes_known_delete(struct jobstore *js, struct pool *p, struct node *n);

#endif
