/* SPDX-License-Identifier: MIT */
/* The pool fixture the pass's unit tests share (test_pool*.c,
 * test_estimate.c): queued jobs, nodes up as registration leaves them,
 * a config of started queues. */
#ifndef QPOOL_TEST_POOL_FIXTURE_H
#define QPOOL_TEST_POOL_FIXTURE_H

#include <stdint.h>

#include "pool.h"

/* A queued job: id in queue, of ncpus, walltime seconds (0: none);
 * the caller sets the rest. */
struct job *fx_job(int64_t id, const char *queue, unsigned ncpus, uint64_t walltime);
/* Node name up with CPUs cpus (cpumask_parse's text), all free, linked,
 * topology {} (a registered node's without memory or NUMA). */
struct node *fx_node(struct pool *p, const char *name, const char *cpus);
/* A pool at clock 1000 with one node "n" of CPUs cpus. */
struct pool *fx_pool_one(const char *cpus);
/* A config of n started queues, the first named name (the rest for the
 * caller to name); fx_config_free frees it. */
struct config *fx_config(const char *name, unsigned n);
void fx_config_free(struct config *c);

#endif
