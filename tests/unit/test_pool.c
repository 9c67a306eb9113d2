/* SPDX-License-Identifier: MIT */
/* The pool: job table, node CPUs, and the first-fit scheduling pass. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-fixture.h"
#include "pool.h"
#include "unit.h"

static struct job *job_new(int64_t id, const char *queue, unsigned ncpus)
{
	return fx_job(id, queue, ncpus, 0);
}

/* j, owned by uid: a job's owner is known when it enters the pool. */
static struct job *job_of(struct job *j, uid_t uid)
{
	j->uid = uid;
	return j;
}

static struct config *two_queues(void)
{
	struct config *c = fx_config("low", 2);

	snprintf(c->queues[1].name, QUEUE_NAME_MAX, "high");
	c->queues[1].priority = 10;
	return c;
}

static void test_table(void)
{
	struct pool *p;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	/* Enough jobs to grow the table several times, with removals between. */
	for (int64_t id = 1; id <= 5000; id++)
		CU_ASSERT_EQUAL(pool_job_add(p, job_new(id, "low", 1)), 0);
	for (int64_t id = 1; id <= 5000; id += 2)
		pool_job_remove(p, pool_job_find(p, id));
	for (int64_t id = 1; id <= 5000; id++) {
		struct job *j = pool_job_find(p, id);

		CU_ASSERT((id % 2 == 0) == (j != NULL));
	}
	{
		struct job *dup = job_new(2, "low", 1);

		CU_ASSERT_EQUAL(pool_job_add(p, dup), -EEXIST);
		job_free(dup);
	}
	/* Submit order is kept. */
	CU_ASSERT_EQUAL(pool_jobs(p)->id, 2);
	CU_ASSERT_EQUAL(pool_jobs(p)->next->id, 4);
	pool_destroy(p);
}

static void test_first_fit(void)
{
	struct config *c = two_queues();
	struct dispatch d[16];
	struct pool *p;
	struct node *a, *b;
	char buf[64];
	size_t n;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = fx_node(p, "a", "0-1");
	b = fx_node(p, "b", "2-5");
	pool_job_add(p, job_new(1, "low", 1));
	pool_job_add(p, job_new(2, "low", 4));   /* fits only b */
	pool_job_add(p, job_new(3, "high", 2));  /* served first */
	pool_job_add(p, job_new(4, "low", 1));
	pool_job_state_set(p, pool_job_find(p, 4), JOB_HELD);

	n = pool_schedule(p, c, d, 16);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_PTR_EQUAL(d[0].node, a);
	cpumask_format(&d[0].job->alloc[0].cpus, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "0-1");
	CU_ASSERT_EQUAL(d[1].job->id, 1);
	CU_ASSERT_PTR_EQUAL(d[1].node, b);
	cpumask_format(&b->free, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "3-5");
	/* Job 2 (4 CPUs) waits: 3 free on b. The held job never runs. */
	CU_ASSERT_EQUAL(pool_job_find(p, 2)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(pool_job_find(p, 4)->state, JOB_HELD);

	/* Job 3 ends: its CPUs come back; job 2 still does not fit on a. */
	pool_job_remove(p, pool_job_find(p, 3));
	CU_ASSERT_EQUAL(cpumask_count(&a->free), 2);
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 16), 0);
	/* Job 1 ends: b has 4 free, job 2 goes there. */
	pool_job_remove(p, pool_job_find(p, 1));
	n = pool_schedule(p, c, d, 16);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(d[0].job->id, 2);
	CU_ASSERT_EQUAL(cpumask_count(&b->free), 0);
	CU_ASSERT_EQUAL(pool_node_max_cpus(p), 4);
	pool_destroy(p);
	fx_config_free(c);
}

static void test_stopped_and_down(void)
{
	struct config *c = two_queues();
	struct dispatch d[4];
	struct pool *p;
	struct node *a;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = fx_node(p, "a", "0-3");
	pool_job_add(p, job_new(1, "high", 1));
	c->queues[1].started = false;
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 4), 0);
	c->queues[1].started = true;
	a->state = NODE_DRAINED;
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 4), 0);
	a->state = NODE_UP;
	a->link = NULL;
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 4), 0);
	pool_destroy(p);
	fx_config_free(c);
}

/* none and exclusive never share; realtime shares with none only. */
static void test_reserve_kinds(void)
{
	struct config *c = two_queues();
	struct dispatch d[8];
	struct pool *p;
	struct node *a;
	char buf[64];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = fx_node(p, "a", "0-3");
	a->rt = true;
	a->rt_free = a->cpus;
	c->queues[1].reserve = QUEUE_RESERVE_REALTIME;   /* high */
	pool_job_add(p, job_new(1, "high", 2));          /* rt on 0-1 */
	pool_job_add(p, job_new(2, "low", 4));           /* none: all 4, rt CPUs too */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	cpumask_format(&pool_job_find(p, 1)->alloc[0].cpus, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "0-1");
	CU_ASSERT_EQUAL(cpumask_count(&pool_job_find(p, 2)->alloc[0].cpus), 4);
	/* An exclusive job needs CPUs free in both senses: none left. */
	c->queues[0].reserve = QUEUE_RESERVE_EXCLUSIVE;
	pool_job_add(p, job_new(3, "low", 1));
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	pool_job_remove(p, pool_job_find(p, 2));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	cpumask_format(&pool_job_find(p, 3)->alloc[0].cpus, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "2");
	/* Its CPU is gone for realtime and none alike. */
	cpumask_format(&a->rt_free, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "3");
	cpumask_format(&a->free, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "0-1,3");
	/* A realtime queue never lands on a node without realtime. */
	pool_job_remove(p, pool_job_find(p, 1));
	a->rt = false;
	pool_job_add(p, job_new(4, "high", 1));
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	pool_destroy(p);
	fx_config_free(c);
}

/* A job that does not fit is passed over, unless the queue is strict. */
static void test_strict_and_user_limit(void)
{
	struct config *c = two_queues();
	struct dispatch d[8];
	struct pool *p;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	fx_node(p, "a", "0-1");
	pool_job_add(p, job_of(job_new(1, "low", 2), 7));
	pool_job_add(p, job_of(job_new(2, "low", 1), 7));
	pool_job_add(p, job_of(job_new(3, "low", 1), 8));
	/* One CPU taken by something else: job 1 (2 CPUs) cannot fit. */
	cpumask_clear(&pool_node_find(p, "a")->free, 1);
	c->queues[0].strict = true;
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	c->queues[0].strict = false;
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	/* IQS: user 8 was never served, so its job goes before user 7's second. */
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_EQUAL(pool_rotation_get(p, "low", 8), d[0].seq);
	pool_destroy(p);
	fx_config_free(c);
}

/* Thousands of nodes: found by name, listed in registration order. */
static void test_many_nodes(void)
{
	struct pool *p;
	char name[32];
	struct node *n;
	int k = 0;

	CU_ASSERT_FATAL(pool_create(&p) == 0);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "n%04d", i);
		CU_ASSERT_PTR_NOT_NULL_FATAL(pool_node_get(p, name));
	}
	for (int i = 4999; i >= 0; i--) {
		snprintf(name, sizeof(name), "n%04d", i);
		n = pool_node_find(p, name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(n);
		CU_ASSERT_STRING_EQUAL(n->name, name);
		CU_ASSERT_PTR_EQUAL(pool_node_get(p, name), n);
	}
	CU_ASSERT_PTR_NULL(pool_node_find(p, "n5000"));
	CU_ASSERT_PTR_NULL(pool_node_find(p, ""));
	for (n = pool_nodes(p); n; n = n->next, k++) {
		snprintf(name, sizeof(name), "n%04d", k);
		CU_ASSERT_STRING_EQUAL(n->name, name);
	}
	CU_ASSERT_EQUAL(k, 5000);
	pool_destroy(p);
}

/* Nodes that send the same topology share one load; another text gets
 * its own; the last put frees it (ASan checks the frees). */
static void test_shared_topology(void)
{
	const char *a = "pack:2 core:4 pu:2", *b = "pack:1 core:8 pu:1";
	hwloc_topology_t t1, t2, t3;
	struct error err;
	struct pool *p;

	CU_ASSERT_FATAL(pool_create(&p) == 0);
	CU_ASSERT_FATAL(pool_topology_get(p, a, strlen(a), &t1, &err) == 0);
	CU_ASSERT_FATAL(pool_topology_get(p, a, strlen(a), &t2, &err) == 0);
	CU_ASSERT_FATAL(pool_topology_get(p, b, strlen(b), &t3, &err) == 0);
	CU_ASSERT_PTR_EQUAL(t1, t2);
	CU_ASSERT_PTR_NOT_EQUAL(t1, t3);
	CU_ASSERT_EQUAL(hwloc_get_nbobjs_by_type(t1, HWLOC_OBJ_PU), 16);
	CU_ASSERT_EQUAL(hwloc_get_nbobjs_by_type(t3, HWLOC_OBJ_PU), 8);
	pool_topology_put(p, t1);
	/* Still held once: the same text finds it again. */
	CU_ASSERT_FATAL(pool_topology_get(p, a, strlen(a), &t1, &err) == 0);
	CU_ASSERT_PTR_EQUAL(t1, t2);
	pool_topology_put(p, t1);
	pool_topology_put(p, t2);
	pool_topology_put(p, t3);
	CU_ASSERT(pool_topology_get(p, "<nonsense", 9, &t1, &err) < 0);
	/* What is still held when the pool goes is freed with it. */
	CU_ASSERT_FATAL(pool_topology_get(p, b, strlen(b), &t3, &err) == 0);
	pool_destroy(p);
}

/* The pass takes each queue's waiting jobs in the order iqs_order gives
 * (what qstat's dispatch order lists), also after requeues and holds and
 * with rotation stamps from earlier passes, batch after batch. */
static void test_pass_follows_iqs(void)
{
	struct config *c = two_queues();
	struct dispatch d[64];
	unsigned seed = 7;
	struct pool *p;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	fx_node(p, "a", "0-999");
	for (int64_t id = 1; id <= 400; id++) {
		seed = seed * 1103515245 + 12345;
		CU_ASSERT_EQUAL(pool_job_add(p, job_of(job_new(id, "low", 1), 1000 + (seed >> 16) % 7)), 0);
		if ((seed >> 8) % 11 == 0)
			pool_job_state_set(p, pool_job_find(p, id), JOB_HELD);
	}
	pool_rotation_set(p, "low", 1003, 5);
	pool_rotation_set(p, "low", 1005, 2);
	for (int round = 0; round < 8; round++) {
		json_t *order = pool_queue_order(p, &c->queues[0]);
		size_t n = pool_schedule(p, c, d, 40);

		CU_ASSERT(n > 0);
		for (size_t i = 0; i < n; i++) {
			json_t *e = json_array_get(order, i);

			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "hold")), "go");
			CU_ASSERT_EQUAL(json_integer_value(json_object_get(e, "jobid")), d[i].job->id);
		}
		json_decref(order);
		/* Some finish, some are requeued (older ids go back in place). */
		for (size_t i = 0; i < n; i++) {
			if (i % 3 == 0) {
				pool_job_release(p, d[i].job);
				pool_job_state_set(p, d[i].job, JOB_QUEUED);
			} else {
				pool_job_remove(p, d[i].job);
			}
		}
	}
	pool_destroy(p);
	fx_config_free(c);
}

/* A job's CPUs handed back early (job.exited) go to the next job; the
 * first job's own release later frees nothing the next one holds, even
 * when a restart claimed both again. */
static void test_cpus_back(void)
{
	struct config *c = two_queues();
	struct dispatch d[4];
	struct job *j1, *j2;
	struct pool *p;
	struct node *a;
	char buf[64];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = fx_node(p, "a", "0");
	pool_job_add(p, job_new(1, "low", 1));
	pool_job_add(p, job_new(2, "low", 1));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 4), 1);
	j1 = pool_job_find(p, 1);
	j2 = pool_job_find(p, 2);
	CU_ASSERT_PTR_EQUAL(d[0].job, j1);
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 4), 0);   /* the CPU is taken */
	CU_ASSERT_TRUE(pool_job_cpus_back(p, j1));
	CU_ASSERT_FALSE(pool_job_cpus_back(p, j1));       /* once */
	CU_ASSERT_EQUAL(j1->state, JOB_RUNNING);
	cpumask_format(&a->free, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "0");
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 4), 1);
	CU_ASSERT_PTR_EQUAL(d[0].job, j2);
	cpumask_format(&a->free, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "");
	/* A re-registration claims both jobs the node still lists. */
	pool_job_claim(p, j1);
	pool_job_claim(p, j2);
	pool_job_remove(p, j1);
	cpumask_format(&a->free, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "");                   /* job 2 still holds CPU 0 */
	pool_job_remove(p, j2);
	cpumask_format(&a->free, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "0");
	pool_destroy(p);
	fx_config_free(c);
}

/* qorder: a user's two waiting jobs trade places, adjacent or not; jobs
 * of another user, or not queued, are refused; qmove re-indexes. */
static void test_swap_and_move(void)
{
	struct config *c = two_queues();
	struct dispatch d[8];
	struct pool *p;
	struct job *j[5];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	fx_node(p, "n1", "0");
	for (int i = 0; i < 4; i++) {
		j[i] = job_of(job_new(i + 1, "low", 1), 1000);
		CU_ASSERT_EQUAL_FATAL(pool_job_add(p, j[i]), 0);
	}
	j[4] = job_of(job_new(5, "low", 1), 2000);
	CU_ASSERT_EQUAL_FATAL(pool_job_add(p, j[4]), 0);
	CU_ASSERT_EQUAL(pool_job_swap(p, j[0], j[4]), -EINVAL);   /* two owners */
	CU_ASSERT_EQUAL(pool_job_swap(p, j[0], j[3]), 0);         /* ends: 4 2 3 1 */
	CU_ASSERT_EQUAL(pool_job_swap(p, j[1], j[2]), 0);         /* adjacent: 4 3 2 1 */
	CU_ASSERT_EQUAL(pool_job_swap(p, j[2], j[1]), 0);         /* and back: 4 2 3 1 */
	pool_job_state_set(p, j[1], JOB_HELD);
	CU_ASSERT_EQUAL(pool_job_swap(p, j[1], j[2]), -EINVAL);   /* held */
	/* One CPU: user 1000's first job in its order runs. */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 1), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 4);
	/* Moved to "high", job 3 is served before "low"'s. */
	CU_ASSERT_EQUAL(pool_job_move(p, j[2], "high"), 0);
	CU_ASSERT_STRING_EQUAL(j[2]->queue, "high");
	pool_job_release(p, d[0].job);
	pool_job_state_set(p, d[0].job, JOB_QUEUED);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 1), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	pool_destroy(p);
	fx_config_free(c);
}

/* A job across nodes: chunks of c, place pl. */
static struct job *job_wide(int64_t id, enum job_place pl, bool excl, unsigned nchunks,
			    const struct job_chunk *c, uint64_t walltime)
{
	struct job *j = job_new(id, "low", 0);

	j->chunks = calloc(nchunks, sizeof(*j->chunks));
	memcpy(j->chunks, c, nchunks * sizeof(*c));
	j->n_chunks = nchunks;
	for (unsigned i = 0; i < nchunks; i++)
		j->ncpus += c[i].count * c[i].ncpus;
	j->place = pl;
	j->excl = excl;
	j->walltime = walltime;
	return j;
}

static const char *mask_text(const struct cpumask *m)
{
	static char buf[4][64];
	static int k;

	k = (k + 1) % 4;
	cpumask_format(m, buf[k], sizeof(buf[k]));
	return buf[k];
}

/* Scatter, pack and free; chunks of one node become one entry; the node
 * of the first chunk is the primary; excl keeps others off its nodes. */
static void test_chunks_place(void)
{
	struct config *c = two_queues();
	struct job_chunk two = { .count = 3, .ncpus = 2, .mpiprocs = 2 };
	struct job_chunk mixed[2] = { { .count = 1, .ncpus = 1, .mpiprocs = 1, .ompthreads = 1 },
				      { .count = 2, .ncpus = 3, .mpiprocs = 1, .mem = 100 } };
	struct dispatch d[8];
	struct node *a, *b, *n3;
	struct pool *p;
	struct job *j;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = fx_node(p, "a", "0-3");
	b = fx_node(p, "b", "0-3");
	n3 = fx_node(p, "c", "0-3");
	/* scatter 3x2: one entry per node. */
	pool_job_add(p, job_wide(1, JOB_PLACE_SCATTER, false, 1, &two, 60));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	j = d[0].job;
	CU_ASSERT_EQUAL_FATAL(j->n_alloc, 3);
	CU_ASSERT_STRING_EQUAL(j->alloc[0].node, "a");
	CU_ASSERT_STRING_EQUAL(j->alloc[1].node, "b");
	CU_ASSERT_STRING_EQUAL(j->alloc[2].node, "c");
	for (int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(j->alloc[i].ncpus, 2);
		CU_ASSERT_EQUAL(j->alloc[i].mpiprocs, 2);
		CU_ASSERT_EQUAL(cpumask_count(&j->alloc[i].cpus), 2);
	}
	CU_ASSERT_STRING_EQUAL(mask_text(&a->free), "2-3");
	CU_ASSERT_STRING_EQUAL(mask_text(&n3->free), "2-3");
	/* Every node lists it. */
	CU_ASSERT_PTR_EQUAL(pool_node_jobs(b)->job, j);
	/* The CPUs of one node come back alone; release gives back the rest. */
	CU_ASSERT_TRUE(pool_entry_cpus_back(p, &j->alloc[1]));
	CU_ASSERT_STRING_EQUAL(mask_text(&b->free), "0-3");
	CU_ASSERT_STRING_EQUAL(mask_text(&a->free), "2-3");
	pool_job_remove(p, j);
	CU_ASSERT_STRING_EQUAL(mask_text(&a->free), "0-3");
	CU_ASSERT_STRING_EQUAL(mask_text(&n3->free), "0-3");
	CU_ASSERT_PTR_NULL(pool_node_jobs(a));

	/* pack: all on one node; too wide for one: waits, nothing held. */
	two.count = 2;
	pool_job_add(p, job_wide(2, JOB_PLACE_PACK, false, 1, &two, 60));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->n_alloc, 1);
	CU_ASSERT_EQUAL(d[0].job->alloc[0].ncpus, 4);
	CU_ASSERT_EQUAL(d[0].job->alloc[0].mpiprocs, 4);
	pool_job_remove(p, d[0].job);

	/* free: the widest chunks are placed first (3 on a, 3 on b, then the
	 * 1 fills a); the node of the request's first chunk (the 1) is the
	 * primary; two chunks on one node are one entry, slots summed. */
	pool_job_add(p, job_wide(3, JOB_PLACE_FREE, false, 2, mixed, 60));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	j = d[0].job;
	CU_ASSERT_EQUAL_FATAL(j->n_alloc, 2);
	CU_ASSERT_STRING_EQUAL(j->alloc[0].node, "a");
	CU_ASSERT_EQUAL(j->alloc[0].ncpus, 4);           /* 3 + 1 on a */
	CU_ASSERT_EQUAL(j->alloc[0].mem, 100);
	CU_ASSERT_STRING_EQUAL(j->alloc[1].node, "b");
	CU_ASSERT_EQUAL(j->alloc[1].ncpus, 3);
	CU_ASSERT_EQUAL(j->alloc[1].mem, 100);
	CU_ASSERT_EQUAL(j->alloc[0].mpiprocs, 2);
	CU_ASSERT_EQUAL(j->alloc[0].ompthreads, 1);
	pool_job_remove(p, j);

	/* excl: only on empty nodes, and nothing beside it afterwards. */
	pool_job_add(p, job_new(4, "low", 1));          /* lands on a */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	two.count = 2;
	two.ncpus = 1;
	pool_job_add(p, job_wide(5, JOB_PLACE_SCATTER, true, 1, &two, 60));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	j = d[0].job;
	CU_ASSERT_EQUAL_FATAL(j->n_alloc, 2);
	CU_ASSERT_STRING_EQUAL(j->alloc[0].node, "b");
	CU_ASSERT_STRING_EQUAL(j->alloc[1].node, "c");
	pool_job_add(p, job_new(6, "low", 1));          /* only a is open */
	pool_job_add(p, job_new(7, "low", 4));          /* a has 3: waits */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 6);
	CU_ASSERT_STRING_EQUAL(job_node(d[0].job), "a");
	CU_ASSERT_EQUAL(pool_job_find(p, 7)->state, JOB_QUEUED);
	pool_job_remove(p, pool_job_find(p, 7));
	pool_job_remove(p, pool_job_find(p, 6));
	pool_job_remove(p, pool_job_find(p, 5));
	pool_job_remove(p, pool_job_find(p, 4));

	/* excl:whole (sbatch --exclusive): each node's free CPUs, all of
	 * them, its tasks as it asked; one node the same. */
	j = job_wide(8, JOB_PLACE_SCATTER, true, 1, &two, 60);
	j->whole = true;
	pool_job_add(p, j);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL_FATAL(j->n_alloc, 2);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(j->alloc[i].ncpus, 4);
		CU_ASSERT_EQUAL(cpumask_count(&j->alloc[i].cpus), 4);
		CU_ASSERT_EQUAL(j->alloc[i].mpiprocs, 2);   /* the chunk's, not the node's CPUs */
	}
	CU_ASSERT_STRING_EQUAL(mask_text(&a->free), "");
	j = job_new(9, "low", 1);
	j->excl = j->whole = true;
	pool_job_add(p, j);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_STRING_EQUAL(job_node(j), "c");
	CU_ASSERT_EQUAL(j->alloc[0].ncpus, 4);
	CU_ASSERT_STRING_EQUAL(mask_text(&j->alloc[0].cpus), "0-3");
	CU_ASSERT_EQUAL(j->ncpus, 1);
	pool_destroy(p);
	fx_config_free(c);
}

/* All or nothing: a job that needs three nodes waits while one is busy,
 * holding no CPU anywhere; it starts when the third frees. */
static void test_all_or_nothing(void)
{
	struct config *c = two_queues();
	struct job_chunk ch = { .count = 3, .ncpus = 2, .mpiprocs = 2 };
	struct dispatch d[8];
	struct node *nd[3];
	struct pool *p;
	struct job *busy;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	nd[0] = fx_node(p, "a", "0-1");
	nd[1] = fx_node(p, "b", "0-1");
	nd[2] = fx_node(p, "c", "0-1");
	pool_job_add(p, job_new(1, "low", 1));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	busy = d[0].job;
	pool_job_add(p, job_wide(2, JOB_PLACE_SCATTER, false, 1, &ch, 60));
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	CU_ASSERT_EQUAL(pool_job_find(p, 2)->n_alloc, 0);
	CU_ASSERT_STRING_EQUAL(mask_text(&nd[0]->free), "1");
	CU_ASSERT_STRING_EQUAL(mask_text(&nd[1]->free), "0-1");
	CU_ASSERT_STRING_EQUAL(mask_text(&nd[2]->free), "0-1");
	pool_job_remove(p, busy);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 2);
	CU_ASSERT_EQUAL(d[0].job->n_alloc, 3);
	pool_destroy(p);
	fx_config_free(c);
}

/* EASY backfill on a fake clock: a blocked wide job gets a reservation at
 * the time its nodes free up (running jobs' dispatch + walltime); a later
 * job runs ahead only when its walltime ends by then, or off its nodes. */
static void test_backfill(void)
{
	struct config *c = two_queues();
	struct job_chunk ch = { .count = 2, .ncpus = 4, .mpiprocs = 4 };
	struct dispatch d[8];
	struct pool *p;
	struct job *j;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	fx_node(p, "a", "0-3");
	fx_node(p, "b", "0-3");
	fx_node(p, "c", "0-1");
	pool_clock_set(p, 1000);
	j = job_new(1, "low", 4);                 /* a, until 1100 */
	j->walltime = 100;
	pool_job_add(p, j);
	j = job_new(2, "low", 3);                 /* b, until 2000 */
	j->walltime = 1000;
	pool_job_add(p, j);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	CU_ASSERT_STRING_EQUAL(job_node(pool_job_find(p, 2)), "b");

	pool_clock_set(p, 1050);
	pool_job_add(p, job_wide(3, JOB_PLACE_SCATTER, false, 1, &ch, 100));  /* a and b whole: at 2000 */
	j = job_new(4, "low", 1);                 /* ends 1550: before 2000 */
	j->walltime = 500;
	pool_job_add(p, j);
	j = job_new(5, "low", 1);                 /* ends 6050: would delay job 3 */
	j->walltime = 5000;
	pool_job_add(p, j);
	j = job_new(6, "low", 3);                 /* too wide for c: would need b */
	j->walltime = 5000;
	pool_job_add(p, j);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	CU_ASSERT_EQUAL(d[0].job->id, 4);
	CU_ASSERT_STRING_EQUAL(job_node(d[0].job), "b");   /* a reserved node, in time */
	CU_ASSERT_EQUAL(d[1].job->id, 5);
	CU_ASSERT_STRING_EQUAL(job_node(d[1].job), "c");   /* off the reserved nodes */
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(pool_job_find(p, 6)->state, JOB_QUEUED);

	/* Without the wide job, job 6 would have run: the reservation held it. */
	pool_clock_set(p, 2000);
	pool_job_remove(p, pool_job_find(p, 1));
	pool_job_remove(p, pool_job_find(p, 2));
	pool_job_remove(p, pool_job_find(p, 4));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_EQUAL(d[0].job->n_alloc, 2);
	pool_destroy(p);
	fx_config_free(c);
}

/* Backfill within IQS: the round robin picks whose blocked wide job gets
 * the reservation; a later user's long job is passed over, their short
 * one (ending before the reservation) starts, and only the user whose
 * job started has their rotation stamp advanced. */
static void test_backfill_iqs(void)
{
	struct config *c = two_queues();
	struct job_chunk ch = { .count = 2, .ncpus = 2, .mpiprocs = 2 };
	struct dispatch d[8];
	struct pool *p;
	struct job *j;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	fx_node(p, "a", "0-1");
	fx_node(p, "b", "0-1");
	pool_clock_set(p, 1000);
	j = job_of(job_new(1, "low", 2), 3000);      /* a, until 1100 */
	j->walltime = 100;
	pool_job_add(p, j);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	pool_clock_set(p, 1050);
	pool_job_add(p, job_of(job_wide(2, JOB_PLACE_SCATTER, false, 1, &ch, 100), 1000));
	j = job_of(job_new(3, "low", 1), 2000);      /* ends 6050 */
	j->walltime = 5000;
	pool_job_add(p, j);
	j = job_of(job_new(4, "low", 1), 2000);      /* ends 1060 */
	j->walltime = 10;
	pool_job_add(p, j);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 4);
	CU_ASSERT_STRING_EQUAL(job_node(d[0].job), "b");
	CU_ASSERT_EQUAL(pool_job_find(p, 2)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(pool_rotation_get(p, "low", 1000), 0);
	CU_ASSERT(pool_rotation_get(p, "low", 2000) > 0);
	/* At 1100 both nodes are free: the wide job goes before user 2000's
	 * long one, which then has no room. */
	pool_clock_set(p, 1100);
	pool_job_remove(p, pool_job_find(p, 1));
	pool_job_remove(p, pool_job_find(p, 4));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 2);
	pool_destroy(p);
	fx_config_free(c);
}

/* What no set of the known nodes could ever hold is refused, with why. */
static void test_request_check(void)
{
	struct job_chunk ch = { .count = 5, .ncpus = 1, .mpiprocs = 1 };
	struct pool *p;
	struct job *j;
	char why[200];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	j = job_wide(1, JOB_PLACE_SCATTER, false, 1, &ch, 60);
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);   /* no node yet: waits */
	fx_node(p, "a", "0-3");
	fx_node(p, "b", "0-3");
	fx_node(p, "c", "0-3");
	pool_node_get(p, "d")->cpus = pool_node_find(p, "a")->cpus;       /* down, still counts */
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "place=scatter: 5 chunks need 5 nodes, the pool has 4");
	j->place = JOB_PLACE_FREE;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);
	j->place = JOB_PLACE_PACK;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "place=pack: 5 CPUs on one node, more than any node has (the largest has 4)");
	j->chunks[0].ncpus = 8;
	j->place = JOB_PLACE_FREE;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "a chunk of ncpus=8 is wider than any node (the largest has 4 CPUs)");
	j->chunks[0].ncpus = 3;
	j->ncpus = 15;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "15 CPUs in 5 chunks do not fit the pool's 4 nodes even when all are free");
	job_free(j);
	j = job_new(2, "low", 6);
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "ncpus=6: more CPUs than any node has (the largest has 4)");
	job_free(j);
	/* Memory: what the largest node offers its jobs, once every node
	 * with CPUs has said it (node.register's topology "mem"). */
	j = job_new(3, "low", 1);
	j->mem = 40ULL << 30;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);   /* no node said: not known */
	for (const char *const *n = (const char *const[]){ "a", "b", "c", "d", NULL }; *n; n++) {
		struct node *nd = pool_node_find(p, *n);

		json_decref(nd->topology);
		nd->topology = json_pack("{s:I}", "mem", (json_int_t)(**n == 'b' ? 16ULL << 30 : 8ULL << 30));
	}
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "mem=40G: more memory than any node offers its jobs (the largest offers 16G)");
	j->mem = 16ULL << 30;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);
	job_free(j);
	ch = (struct job_chunk){ .count = 2, .ncpus = 1, .mpiprocs = 1, .mem = 12ULL << 30 };
	j = job_wide(4, JOB_PLACE_FREE, false, 1, &ch, 60);
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);   /* a chunk fits b */
	j->chunks[0].mem = 17ULL << 30;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "a chunk of mem=17G: more memory than any node offers its jobs (the largest offers 16G)");
	j->chunks[0].mem = 12ULL << 30;
	j->place = JOB_PLACE_PACK;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "place=pack: mem=24G: more memory than any node offers its jobs (the largest offers 16G)");
	/* A node with CPUs that did not say its memory: nothing is refused on it. */
	json_decref(pool_node_find(p, "c")->topology);
	pool_node_find(p, "c")->topology = NULL;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);
	job_free(j);
	pool_destroy(p);
}

static const struct unit_test pool_tests[] = {
	{ "chunks_place", test_chunks_place },
	{ "all_or_nothing", test_all_or_nothing },
	{ "backfill", test_backfill },
	{ "backfill_iqs", test_backfill_iqs },
	{ "request_check", test_request_check },
	{ "cpus_back", test_cpus_back },
	{ "many_nodes", test_many_nodes },
	{ "shared_topology", test_shared_topology },
	{ "pass_follows_iqs", test_pass_follows_iqs },
	{ "reserve_kinds", test_reserve_kinds },
	{ "strict_and_user_limit", test_strict_and_user_limit },
	{ "table", test_table },
	{ "swap_and_move", test_swap_and_move },
	{ "first_fit", test_first_fit },
	{ "stopped_and_down", test_stopped_and_down },
	{ NULL, NULL },
};

UNIT_SUITE(pool, pool_tests);
