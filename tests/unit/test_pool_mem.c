/* SPDX-License-Identifier: MIT */
/* The pass with memory counted (docs/ARCHITECTURE.md, "Memory counted"):
 * jobs on a node never hold more than it offers; memory comes back with
 * the CPUs; chunks and backfill count it per node. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "pool-fixture.h"
#include "pool.h"
#include "pool-internal.h"
#include "unit.h"

#define MiB (UINT64_C(1) << 20)

static struct job *mjob(int64_t id, unsigned ncpus, uint64_t mem, uint64_t walltime)
{
	struct job *j = fx_job(id, "q", ncpus, walltime);

	j->mem = mem;
	return j;
}

/* Chunks of one kind: count of ncpus and mem each. */
static struct job *mchunks(int64_t id, unsigned count, unsigned ncpus, uint64_t mem, uint64_t walltime,
			   enum job_place place)
{
	struct job *j = mjob(id, count * ncpus, count * mem, walltime);

	j->chunks = calloc(1, sizeof(*j->chunks));
	*j->chunks = (struct job_chunk){ .count = count, .ncpus = ncpus, .mpiprocs = 1, .mem = mem };
	j->n_chunks = 1;
	j->place = place;
	return j;
}

/* A node with CPUs cpus offering mem bytes (0: it did not say). */
static struct node *mnode(struct pool *p, const char *name, const char *cpus, uint64_t mem)
{
	struct node *nd = fx_node(p, name, cpus);

	if (mem) {
		json_decref(nd->topology);
		nd->topology = json_pack("{s:I}", "mem", (json_int_t)mem);
	}
	return nd;
}

/* The case: a node offering 3,802 MiB, two jobs of 2,300 MiB. The
 * second waits with a reason naming memory and the node, and starts when
 * the first's processes are gone; a job without mem is not counted. */
static void test_two_jobs_one_node(void)
{
	struct config *c = fx_config("q", 1);
	struct dispatch d[8];
	struct pool *p;
	struct node *a;
	char why[240];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = mnode(p, "a", "0-3", 3802 * MiB);
	pool_job_add(p, mjob(1, 1, 2300 * MiB, 0));
	pool_job_add(p, mjob(2, 1, 2300 * MiB, 0));
	pool_job_add(p, mjob(3, 1, 0, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	CU_ASSERT_EQUAL(d[0].job->id, 1);
	CU_ASSERT_EQUAL(d[1].job->id, 3);
	CU_ASSERT_EQUAL(pool_job_find(p, 2)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(a->mem_used, 2300 * MiB);
	CU_ASSERT_EQUAL(pool_node_mem_free(a), 1502 * MiB);
	CU_ASSERT_EQUAL(pool_request_mem_wait(p, pool_job_find(p, 2), why, sizeof(why)), 1);
	CU_ASSERT_STRING_EQUAL(why, "waits for memory: 2300 MiB on a node; a has 1502 MiB free of 3802");
	/* Its processes gone (job.exited): the memory goes back with the CPUs. */
	CU_ASSERT(pool_job_cpus_back(p, pool_job_find(p, 1)));
	CU_ASSERT_EQUAL(a->mem_used, 0);
	CU_ASSERT_EQUAL(pool_request_mem_wait(p, pool_job_find(p, 2), why, sizeof(why)), 0);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 2);
	CU_ASSERT_EQUAL(a->mem_used, 2300 * MiB);
	/* Job 1's result: nothing given back twice. */
	pool_job_remove(p, pool_job_find(p, 1));
	CU_ASSERT_EQUAL(a->mem_used, 2300 * MiB);
	/* A restart claims what is there again: counted once. */
	pool_entry_claim(p, &pool_job_find(p, 2)->alloc[0]);
	pool_entry_claim(p, &pool_job_find(p, 2)->alloc[0]);
	CU_ASSERT_EQUAL(a->mem_used, 2300 * MiB);
	pool_job_release(p, pool_job_find(p, 2));
	CU_ASSERT_EQUAL(a->mem_used, 0);
	pool_destroy(p);
	fx_config_free(c);
}

/* A node that did not say its memory counts none; the per-CPU default
 * auto is the smallest offer per CPU of the nodes that did. */
static void test_unsaid_and_auto(void)
{
	struct config *c = fx_config("q", 1);
	struct dispatch d[8];
	struct pool *p;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	CU_ASSERT_EQUAL(pool_mem_per_cpu_auto(p), 0);
	mnode(p, "old", "0-3", 0);
	CU_ASSERT_EQUAL(pool_mem_per_cpu_auto(p), 0);
	pool_job_add(p, mjob(1, 1, 100000 * MiB, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(pool_node_mem_free(pool_node_find(p, "old")), UINT64_MAX);
	mnode(p, "a", "0-3", 8192 * MiB);
	mnode(p, "b", "0-7", 8192 * MiB);
	CU_ASSERT_EQUAL(pool_mem_per_cpu_auto(p), 1024 * MiB);
	pool_destroy(p);
	fx_config_free(c);
}

/* Chunks with mem: per node. a holds 2 GiB of its 3; two chunks of 2 GiB
 * go to b and c though a has the CPUs; with only a and b, the job waits. */
static void test_chunks(void)
{
	struct config *c = fx_config("q", 1);
	struct dispatch d[8];
	struct pool *p;
	struct job *j;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	mnode(p, "a", "0-7", 3072 * MiB);
	mnode(p, "b", "0-7", 3072 * MiB);
	pool_job_add(p, mjob(1, 1, 2048 * MiB, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	j = mchunks(2, 2, 1, 2048 * MiB, 0, JOB_PLACE_FREE);
	pool_job_add(p, j);
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	CU_ASSERT_EQUAL(j->state, JOB_QUEUED);
	mnode(p, "c", "0-7", 3072 * MiB);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL_FATAL(j->n_alloc, 2);
	CU_ASSERT_STRING_EQUAL(j->alloc[0].node, "b");
	CU_ASSERT_STRING_EQUAL(j->alloc[1].node, "c");
	CU_ASSERT_EQUAL(j->alloc[0].mem, 2048 * MiB);
	CU_ASSERT_EQUAL(pool_node_find(p, "c")->mem_used, 2048 * MiB);
	/* place=pack: the sum on one node. */
	pool_job_add(p, mchunks(3, 2, 1, 1024 * MiB, 0, JOB_PLACE_PACK));
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	pool_job_release(p, j);
	pool_job_state_set(p, j, JOB_COMPLETED);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_STRING_EQUAL(d[0].job->alloc[0].node, "b");
	CU_ASSERT_EQUAL(pool_node_find(p, "b")->mem_used, 2048 * MiB);
	pool_destroy(p);
	fx_config_free(c);
}

/* Backfill counts memory: a wide job blocked by memory alone gets the
 * reservation; a long job that would hold its node past it waits, a
 * short one runs. */
static void test_backfill(void)
{
	struct config *c = fx_config("q", 1);
	struct dispatch d[8];
	struct pool *p;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	mnode(p, "a", "0-7", 4096 * MiB);
	mnode(p, "b", "0-7", 4096 * MiB);
	pool_clock_set(p, 1000);
	pool_job_add(p, mjob(1, 1, 3072 * MiB, 100));   /* a until 1100 */
	pool_job_add(p, mjob(2, 1, 3072 * MiB, 100));   /* b until 1100 */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	pool_job_add(p, mchunks(3, 2, 1, 2048 * MiB, 100, JOB_PLACE_SCATTER));
	pool_job_add(p, mjob(4, 1, 512 * MiB, 5000));    /* would hold a past 1100 */
	pool_job_add(p, mjob(5, 1, 512 * MiB, 50));      /* ends 1050 */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 5);
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(pool_job_find(p, 4)->state, JOB_QUEUED);
	pool_clock_set(p, 1100);
	pool_job_remove(p, pool_job_find(p, 1));
	pool_job_remove(p, pool_job_find(p, 2));
	pool_job_remove(p, pool_job_find(p, 5));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_EQUAL(d[1].job->id, 4);
	pool_destroy(p);
	fx_config_free(c);
}

static const char *cpus_of(const struct job *j, char *buf, size_t len)
{
	cpumask_format(&j->alloc[0].cpus, buf, len);
	return buf;
}

/* Memory by NUMA node (docs/RESOURCES.md): a node of two NUMA nodes of
 * 8 GiB and 4 cores each. A first job of 2 CPUs and 6 GiB holds most of
 * NUMA 0; a second of 1 CPU and 6 GiB, which best fit alone would put in
 * NUMA 0's free cores, gets NUMA 1's. A third of 3 GiB fits the node's
 * count (4 GiB free) but no NUMA node's (2 GiB each): placed all the
 * same, where placement alone puts it (NUMA 0), bound to both NUMA
 * nodes. A node of one
 * NUMA node places as before. */
static void test_numa(void)
{
	const char *topo = "pack:2 numa:1(memory=8GiB) core:4 pu:1";
	struct config *c = fx_config("q", 1);
	struct dispatch d[8];
	char buf[64];
	struct error err;
	struct pool *p;
	struct node *a;
	uint64_t numa_mem;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = mnode(p, "a", "0-7", 16384 * MiB);
	CU_ASSERT_EQUAL_FATAL(pool_topology_get(p, topo, strlen(topo), &a->topo, &err), 0);
	CU_ASSERT_EQUAL_FATAL(placement_numa_count(a->topo), 2);
	numa_mem = placement_numa_mem(a->topo, 0);
	CU_ASSERT_EQUAL(numa_mem, 8192 * MiB);
	pool_job_add(p, mjob(1, 2, 6144 * MiB, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_STRING_EQUAL(cpus_of(d[0].job, buf, sizeof(buf)), "0-1");
	CU_ASSERT_STRING_EQUAL(d[0].job->alloc[0].mems, "0");
	pool_job_add(p, mjob(2, 1, 6144 * MiB, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_STRING_EQUAL(cpus_of(d[0].job, buf, sizeof(buf)), "4");
	CU_ASSERT_STRING_EQUAL(d[0].job->alloc[0].mems, "1");
	pool_job_add(p, mjob(3, 1, 3072 * MiB, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_STRING_EQUAL(cpus_of(d[0].job, buf, sizeof(buf)), "2");
	CU_ASSERT_STRING_EQUAL(d[0].job->alloc[0].mems, "0-1");
	/* Its 3 GiB is spread over both: 512 MiB left on each. */
	{
		uint64_t nf[PLACE_NUMA_MAX];

		CU_ASSERT_EQUAL_FATAL(place_numa_free(a, nf, PLACE_NUMA_MAX), 2);
		CU_ASSERT_EQUAL(nf[0], 512 * MiB);
		CU_ASSERT_EQUAL(nf[1], 512 * MiB);
	}
	/* Job 1 gone: NUMA 0 has its memory back, a job of 4 GiB goes there. */
	pool_job_release(p, pool_job_find(p, 1));
	pool_job_remove(p, pool_job_find(p, 1));
	pool_job_add(p, mjob(4, 1, 4096 * MiB, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_STRING_EQUAL(d[0].job->alloc[0].mems, "0");
	pool_destroy(p);

	/* One NUMA node: what placement alone gives. */
	topo = "pack:1 numa:1(memory=8GiB) core:4 pu:1";
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = mnode(p, "a", "0-3", 8192 * MiB);
	CU_ASSERT_EQUAL_FATAL(pool_topology_get(p, topo, strlen(topo), &a->topo, &err), 0);
	pool_job_add(p, mjob(1, 1, 6144 * MiB, 0));
	pool_job_add(p, mjob(2, 1, 1024 * MiB, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	CU_ASSERT_STRING_EQUAL(cpus_of(d[1].job, buf, sizeof(buf)), "1");
	CU_ASSERT_STRING_EQUAL(d[1].job->alloc[0].mems, "0");
	pool_destroy(p);
	fx_config_free(c);
}

static const struct unit_test pool_mem_tests[] = {
	{ "numa", test_numa },
	{ "two_jobs_one_node", test_two_jobs_one_node },
	{ "unsaid_and_auto", test_unsaid_and_auto },
	{ "chunks", test_chunks },
	{ "backfill", test_backfill },
	{ NULL, NULL },
};

UNIT_SUITE(pool_mem, pool_mem_tests);
