/* SPDX-License-Identifier: MIT */
/* Preemption (preempt.c, docs/PREEMPTION.md). */
#ifndef QPOOL_PREEMPT_H
#define QPOOL_PREEMPT_H

struct server;

/* After a pass: the first job each preempting queue passed over for
 * room takes a node from running jobs of the queues it preempts. */
void preempt_pass(struct server *s);

#endif
