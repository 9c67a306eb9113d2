/* SPDX-License-Identifier: MIT */
/* The pool fixture the pass's unit tests share (pool-fixture.h). */
#include <stdio.h>
#include <stdlib.h>

#include "pool-fixture.h"
#include "unit.h"

struct job *fx_job(int64_t id, const char *queue, unsigned ncpus, uint64_t walltime)
{
	struct job *j = calloc(1, sizeof(*j));

	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	j->id = id;
	snprintf(j->queue, sizeof(j->queue), "%s", queue);
	j->ncpus = ncpus;
	j->walltime = walltime;
	j->state = JOB_QUEUED;
	return j;
}

struct node *fx_node(struct pool *p, const char *name, const char *cpus)
{
	struct node *nd = pool_node_get(p, name);
	static int link;

	CU_ASSERT_PTR_NOT_NULL_FATAL(nd);
	cpumask_parse(cpus, &nd->cpus);
	nd->free = nd->cpus;
	nd->rt_free = nd->cpus;
	nd->state = NODE_UP;
	nd->link = &link;
	if (!nd->topology)
		nd->topology = json_object();
	return nd;
}

struct pool *fx_pool_one(const char *cpus)
{
	struct pool *p;

	CU_ASSERT_FATAL(pool_create(&p) == 0);
	fx_node(p, "n", cpus);
	pool_clock_set(p, 1000);
	return p;
}

struct config *fx_config(const char *name, unsigned n)
{
	struct config *c = calloc(1, sizeof(*c));

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	c->n_queues = n;
	c->queues = calloc(n, sizeof(*c->queues));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c->queues);
	snprintf(c->queues[0].name, QUEUE_NAME_MAX, "%s", name);
	for (unsigned i = 0; i < n; i++)
		c->queues[i].started = true;
	return c;
}

void fx_config_free(struct config *c)
{
	if (!c)
		return;
	free(c->queues);
	free(c);
}
