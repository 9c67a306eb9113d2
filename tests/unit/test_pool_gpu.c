/* SPDX-License-Identifier: MIT */
/* The pass with GPUs (docs/GPUS.md): all-or-nothing with the CPUs,
 * distinct GPUs per job, locality, backfill, the submit check. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-fixture.h"
#include "pool.h"
#include "unit.h"

static struct job *gjob(int64_t id, unsigned ncpus, unsigned ngpus, uint64_t walltime)
{
	struct job *j = fx_job(id, "q", ncpus, walltime);

	j->ngpus = ngpus;
	return j;
}

/* A node with CPUs cpus and n GPUs; gpu_cpus[i] (NULL: unknown) are
 * GPU i's close CPUs, on NUMA node numa[i]. */
static struct node *gnode(struct pool *p, const char *name, const char *cpus, unsigned n,
			  const char *const *gpu_cpus, const int *numa)
{
	struct node *nd = fx_node(p, name, cpus);

	nd->gpus = calloc(n ? n : 1, sizeof(*nd->gpus));
	for (unsigned i = 0; i < n; i++) {
		nd->gpus[i].index = i;
		nd->gpus[i].numa = numa ? numa[i] : -1;
		if (gpu_cpus && gpu_cpus[i])
			cpumask_parse(gpu_cpus[i], &nd->gpus[i].cpus);
	}
	nd->n_gpus = n;
	nd->gpus_free = n ? (UINT64_C(1) << n) - 1 : 0;
	return nd;
}

static struct config *one_queue(enum queue_gpu_locality loc)
{
	struct config *c = fx_config("q", 1);

	c->queues[0].gpu_locality = loc;
	return c;
}

static const char *cpus_text(const struct alloc_entry *e)
{
	static char buf[64];

	cpumask_format(&e->cpus, buf, sizeof(buf));
	return buf;
}

/* Two 1-GPU jobs on a 2-GPU node hold different GPUs; a third and a
 * 2-GPU job wait though CPUs are free; GPUs come back as jobs end. */
static void test_distinct_and_wait(void)
{
	struct config *c = one_queue(QUEUE_GPU_PREFER);
	struct dispatch d[8];
	struct pool *p;
	struct node *a;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = gnode(p, "a", "0-7", 2, NULL, NULL);
	pool_job_add(p, gjob(1, 1, 1, 0));
	pool_job_add(p, gjob(2, 1, 1, 0));
	pool_job_add(p, gjob(3, 1, 1, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	CU_ASSERT_EQUAL(d[0].job->alloc[0].gpus, 1);
	CU_ASSERT_EQUAL(d[1].job->alloc[0].gpus, 2);
	CU_ASSERT_EQUAL(a->gpus_free, 0);
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(cpumask_count(&a->free), 6);   /* CPUs were not the limit */

	/* Job 1 ends: job 3 gets its GPU. */
	pool_job_remove(p, pool_job_find(p, 1));
	CU_ASSERT_EQUAL(a->gpus_free, 1);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_EQUAL(d[0].job->alloc[0].gpus, 1);

	/* A 2-GPU job waits while one is busy, and starts when it ends. */
	pool_job_remove(p, pool_job_find(p, 3));
	pool_job_add(p, gjob(4, 2, 2, 0));
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	CU_ASSERT_EQUAL(pool_job_find(p, 4)->state, JOB_QUEUED);
	/* Its processes gone (job.exited): GPUs go back with the CPUs. */
	CU_ASSERT(pool_job_cpus_back(p, pool_job_find(p, 2)));
	CU_ASSERT_EQUAL(a->gpus_free, 3);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 4);
	CU_ASSERT_EQUAL(d[0].job->alloc[0].gpus, 3);
	CU_ASSERT_EQUAL(a->gpus_free, 0);
	/* Job 2's result comes: its GPU is job 4's now, not freed twice. */
	pool_job_remove(p, pool_job_find(p, 2));
	CU_ASSERT_EQUAL(a->gpus_free, 0);
	pool_job_release(p, pool_job_find(p, 4));
	CU_ASSERT_EQUAL(a->gpus_free, 3);
	pool_destroy(p);
	fx_config_free(c);
}

/* A GPU job goes where GPUs are free, not to the first node with CPUs;
 * a node without GPUs takes the CPU jobs. */
static void test_nodes_without_gpus(void)
{
	struct config *c = one_queue(QUEUE_GPU_PREFER);
	struct dispatch d[8];
	struct pool *p;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	gnode(p, "cpu", "0-3", 0, NULL, NULL);
	gnode(p, "gpu", "0-3", 1, NULL, NULL);
	pool_job_add(p, gjob(1, 1, 1, 0));
	pool_job_add(p, gjob(2, 1, 0, 0));
	pool_job_add(p, gjob(3, 1, 1, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	CU_ASSERT_STRING_EQUAL(d[0].job->alloc[0].node, "gpu");
	CU_ASSERT_STRING_EQUAL(d[1].job->alloc[0].node, "cpu");
	CU_ASSERT_EQUAL(d[1].job->alloc[0].gpus, 0);
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	pool_destroy(p);
	fx_config_free(c);
}

/* select=2:ncpus=1:ngpus=1 scattered: one GPU on each node; with one
 * node's GPU busy, none of it starts. */
static void test_chunks(void)
{
	struct config *c = one_queue(QUEUE_GPU_PREFER);
	struct job_chunk ch = { .count = 2, .ncpus = 1, .ngpus = 1, .mpiprocs = 1 };
	struct dispatch d[8];
	struct pool *p;
	struct job *j;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	gnode(p, "a", "0-3", 1, NULL, NULL);
	gnode(p, "b", "0-3", 1, NULL, NULL);
	pool_job_add(p, gjob(1, 1, 1, 0));       /* a's GPU */
	j = gjob(2, 2, 2, 0);
	j->chunks = calloc(1, sizeof(*j->chunks));
	*j->chunks = ch;
	j->n_chunks = 1;
	j->place = JOB_PLACE_FREE;
	pool_job_add(p, j);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 1);
	/* Free placement would put both chunks on b by CPUs: not by GPUs. */
	CU_ASSERT_EQUAL(j->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(j->n_alloc, 0);
	CU_ASSERT_EQUAL(pool_node_find(p, "b")->gpus_free, 1);
	pool_job_remove(p, pool_job_find(p, 1));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL_FATAL(j->n_alloc, 2);
	CU_ASSERT_EQUAL(j->alloc[0].gpus, 1);
	CU_ASSERT_EQUAL(j->alloc[1].gpus, 1);
	CU_ASSERT_STRING_NOT_EQUAL(j->alloc[0].node, j->alloc[1].node);
	pool_destroy(p);
	fx_config_free(c);
}

/* Locality on a synthetic topology: GPU 0 on NUMA 0 (CPUs 0-3), GPU 1 on
 * NUMA 1 (CPUs 4-7). A 1-GPU job whose GPU is on NUMA 1 gets CPUs 4-7's;
 * with those CPUs taken, prefer places it on others, require waits. */
static void test_locality(void)
{
	static const char *const gcpus[] = { "0-3", "4-7" };
	static const int numa[] = { 0, 1 };
	const char *topo = "pack:2 numa:1 core:4 pu:1";
	struct config *c = one_queue(QUEUE_GPU_PREFER);
	struct dispatch d[8];
	struct error err;
	struct pool *p;
	struct node *a;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = gnode(p, "a", "0-7", 2, gcpus, numa);
	CU_ASSERT_EQUAL_FATAL(pool_topology_get(p, topo, strlen(topo), &a->topo, &err), 0);
	a->gpus_free = 2;                          /* GPU 0 held elsewhere */
	pool_job_add(p, gjob(1, 2, 1, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->alloc[0].gpus, 2);
	CU_ASSERT_STRING_EQUAL(cpus_text(&d[0].job->alloc[0]), "4-5");
	/* The GPU that is free has the CPUs of its NUMA node, not the lowest. */
	a->gpus_free = 3;
	pool_job_release(p, pool_job_find(p, 1));
	pool_job_remove(p, pool_job_find(p, 1));
	cpumask_parse("4-7", &a->free);           /* NUMA 0's CPUs busy */
	pool_job_add(p, gjob(2, 2, 1, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->alloc[0].gpus, 2);
	CU_ASSERT_STRING_EQUAL(cpus_text(&d[0].job->alloc[0]), "4-5");
	pool_job_remove(p, pool_job_find(p, 2));

	/* Only NUMA 0's CPUs free and only GPU 1 (NUMA 1) free. */
	cpumask_parse("0-3", &a->free);
	a->gpus_free = 2;
	pool_job_add(p, gjob(3, 2, 1, 0));
	c->queues[0].gpu_locality = QUEUE_GPU_REQUIRE;
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	c->queues[0].gpu_locality = QUEUE_GPU_PREFER;
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->alloc[0].gpus, 2);
	CU_ASSERT_STRING_EQUAL(cpus_text(&d[0].job->alloc[0]), "0-1");
	pool_destroy(p);
	fx_config_free(c);
}

/* A blocked 2-GPU job's reservation counts GPUs: a long 1-GPU job does
 * not take the free GPU it waits for; a short one, ending first, does. */
static void test_backfill(void)
{
	struct config *c = one_queue(QUEUE_GPU_PREFER);
	struct dispatch d[8];
	struct pool *p;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	gnode(p, "a", "0-7", 2, NULL, NULL);
	pool_clock_set(p, 1000);
	pool_job_add(p, gjob(1, 1, 1, 100));          /* until 1100 */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	pool_job_add(p, gjob(2, 1, 2, 100));          /* both GPUs: at 1100 */
	pool_job_add(p, gjob(3, 1, 1, 5000));         /* would hold one until 6000 */
	pool_job_add(p, gjob(4, 1, 1, 50));           /* ends 1050 */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 4);
	CU_ASSERT_EQUAL(pool_job_find(p, 2)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	pool_clock_set(p, 1100);
	pool_job_remove(p, pool_job_find(p, 1));
	pool_job_remove(p, pool_job_find(p, 4));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 2);
	pool_destroy(p);
	fx_config_free(c);
}

/* What no known node could ever hold is refused, with why. */
static void test_request_check(void)
{
	struct job_chunk ch = { .count = 2, .ncpus = 1, .ngpus = 3, .mpiprocs = 1 };
	struct pool *p;
	struct job *j;
	char why[200];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	gnode(p, "cpu", "0-3", 0, NULL, NULL);
	j = gjob(1, 1, 1, 0);
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "ngpus=1: no node of this pool has GPUs");
	gnode(p, "gpu", "0-3", 2, NULL, NULL);
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);
	j->ngpus = 4;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "ngpus=4: more GPUs than any node has (the largest has 2)");
	/* A node known from the store, down, counts. */
	pool_node_get(p, "big")->cpus = pool_node_find(p, "gpu")->cpus;
	pool_node_find(p, "big")->n_gpus = 4;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);
	job_free(j);
	j = gjob(2, 2, 6, 0);
	j->chunks = calloc(1, sizeof(*j->chunks));
	*j->chunks = ch;
	j->n_chunks = 1;
	j->place = JOB_PLACE_SCATTER;
	/* One chunk fits big; the other needs 3 GPUs too, and gpu has 2. */
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "2 CPUs and 6 GPUs in 2 chunks do not fit the pool's 3 nodes even when all "
			       "are free");
	j->chunks[0].ngpus = 5;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "a chunk of ngpus=5 asks for more GPUs than any node has (the largest has 4)");
	j->chunks[0].ngpus = 2;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);
	job_free(j);
	pool_destroy(p);
}

/* GPU models: a job of a model gets GPUs of that model only, on a node
 * that has as many of them; one of a model no node has is refused. */
static void test_model(void)
{
	struct config *c = one_queue(QUEUE_GPU_PREFER);
	struct dispatch d[8];
	struct pool *p;
	struct node *a, *b;
	struct job *j;
	char why[200];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = gnode(p, "a", "0-7", 2, NULL, NULL);
	b = gnode(p, "b", "0-7", 2, NULL, NULL);
	snprintf(a->gpus[0].model, GPU_MODEL_MAX, "a100");
	snprintf(a->gpus[1].model, GPU_MODEL_MAX, "v100");
	snprintf(b->gpus[0].model, GPU_MODEL_MAX, "v100");
	snprintf(b->gpus[1].model, GPU_MODEL_MAX, "v100");
	j = gjob(1, 1, 2, 0);
	j->gpu_model = strdup("v100");
	pool_job_add(p, j);                     /* two v100: only b has them */
	j = gjob(2, 1, 1, 0);
	j->gpu_model = strdup("a100");
	pool_job_add(p, j);
	j = gjob(3, 1, 1, 0);
	j->gpu_model = strdup("a100");
	pool_job_add(p, j);                     /* the one a100 is taken */
	j = gjob(4, 1, 1, 0);
	j->gpu_model = strdup("v100");
	pool_job_add(p, j);                     /* a's v100 */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 3);
	CU_ASSERT_STRING_EQUAL(pool_job_find(p, 1)->alloc[0].node, "b");
	CU_ASSERT_EQUAL(pool_job_find(p, 1)->alloc[0].gpus, 3);
	CU_ASSERT_STRING_EQUAL(pool_job_find(p, 2)->alloc[0].node, "a");
	CU_ASSERT_EQUAL(pool_job_find(p, 2)->alloc[0].gpus, 1);
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	CU_ASSERT_STRING_EQUAL(pool_job_find(p, 4)->alloc[0].node, "a");
	CU_ASSERT_EQUAL(pool_job_find(p, 4)->alloc[0].gpus, 2);
	/* The a100 free again: job 3 takes it, not a v100. */
	pool_job_remove(p, pool_job_find(p, 2));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_EQUAL(d[0].job->alloc[0].gpus, 1);

	j = gjob(9, 1, 1, 0);
	j->gpu_model = strdup("h100");
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "gpu_model=h100: no node of this pool has GPUs of that model");
	free(j->gpu_model);
	j->gpu_model = strdup("a100");
	j->ngpus = 2;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "ngpus=2 gpu_model=a100: more GPUs of that model than any node has "
			       "(the largest has 1)");
	j->ngpus = 1;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);
	job_free(j);
	pool_destroy(p);
	fx_config_free(c);
}

/* A chunk's own features (select=1:ncpus=2:bigmem=true+2:ncpus=1): that
 * chunk on a bigmem node, the others anywhere; a chunk's feature no node
 * has is refused. */
static void test_chunk_features(void)
{
	struct config *c = one_queue(QUEUE_GPU_PREFER);
	struct dispatch d[8];
	struct pool *p;
	struct job *j;
	char why[200];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	gnode(p, "a", "0-1", 0, NULL, NULL);
	gnode(p, "b", "0-1", 0, NULL, NULL);
	gnode(p, "big", "0-1", 0, NULL, NULL)->features = strdup("bigmem,ib");
	j = gjob(1, 4, 0, 0);
	j->chunks = calloc(2, sizeof(*j->chunks));
	j->chunks[0] = (struct job_chunk){ .count = 1, .ncpus = 2, .mpiprocs = 2 };
	snprintf(j->chunks[0].features, sizeof(j->chunks[0].features), "bigmem");
	j->chunks[1] = (struct job_chunk){ .count = 2, .ncpus = 1, .mpiprocs = 1 };
	j->n_chunks = 2;
	j->place = JOB_PLACE_FREE;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), 0);
	pool_job_add(p, j);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL_FATAL(j->n_alloc, 2);
	for (unsigned k = 0; k < j->n_alloc; k++)
		CU_ASSERT_EQUAL(j->alloc[k].ncpus, 2);   /* big: chunk 1; a: the two others */
	CU_ASSERT(!strcmp(j->alloc[0].node, "big") || !strcmp(j->alloc[1].node, "big"));
	CU_ASSERT(!strcmp(j->alloc[0].node, "a") || !strcmp(j->alloc[1].node, "a"));

	j = gjob(2, 1, 0, 0);
	j->chunks = calloc(1, sizeof(*j->chunks));
	j->chunks[0] = (struct job_chunk){ .count = 1, .ncpus = 1, .mpiprocs = 1 };
	snprintf(j->chunks[0].features, sizeof(j->chunks[0].features), "ib,nosuch");
	j->n_chunks = 1;
	CU_ASSERT_EQUAL(pool_request_check(p, j, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "chunk 1: ib,nosuch: no node of this pool has those features");
	job_free(j);
	pool_destroy(p);
	fx_config_free(c);
}

/* An array's subjobs ask for its GPUs: two of a 1-GPU array run on a
 * 2-GPU node, the third waits; an array of a model, one per GPU of it. */
static void test_array(void)
{
	struct config *c = one_queue(QUEUE_GPU_PREFER);
	struct dispatch d[8];
	struct pool *p;
	struct job *a = gjob(1, 1, 1, 0);
	size_t n;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	gnode(p, "a", "0-7", 2, NULL, NULL);
	CU_ASSERT_EQUAL_FATAL(pool_array_set(a, "1-3", NULL), 0);
	pool_job_add(p, a);
	n = pool_schedule(p, c, d, 8);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(d[0].job->ngpus, 1);
	CU_ASSERT_EQUAL(d[0].job->alloc[0].gpus | d[1].job->alloc[0].gpus, 3);
	CU_ASSERT_EQUAL(pool_node_find(p, "a")->gpus_free, 0);
	pool_destroy(p);

	/* Of a model: its subjobs keep it, one a100 runs one of them. */
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	snprintf(gnode(p, "b", "0-7", 2, NULL, NULL)->gpus[1].model, GPU_MODEL_MAX, "a100");
	a = gjob(2, 1, 1, 0);
	a->gpu_model = strdup("a100");
	CU_ASSERT_EQUAL_FATAL(pool_array_set(a, "1-3", NULL), 0);
	pool_job_add(p, a);
	n = pool_schedule(p, c, d, 8);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(d[0].job->gpu_model, "a100");
	CU_ASSERT_EQUAL(d[0].job->alloc[0].gpus, 2);
	CU_ASSERT_EQUAL(pool_node_find(p, "b")->gpus_free, 1);
	pool_destroy(p);
	fx_config_free(c);
}

/* What a pass costs, in looks (docs/GPUS.md): nodes at the front with
 * no room are looked at once a pass, not once a job; a node where
 * placement refused a job is not tried again for as large a one, and
 * bounds the pass. */
static void test_pass_looks(void)
{
	struct config *c = one_queue(QUEUE_GPU_PREFER);
	const char *topo = "core:4 pu:2";
	struct dispatch d[128];
	struct pool_stats st;
	struct error err;
	struct pool *p;
	struct node *last = NULL;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	for (int i = 0; i < 100; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%d", i);
		last = gnode(p, name, "0-63", 1, NULL, NULL);
		if (i < 99)
			memset(&last->free, 0, sizeof(last->free));   /* full */
	}
	for (int64_t id = 1; id <= 64; id++)
		pool_job_add(p, gjob(id, 1, 0, 0));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 128), 64);
	pool_stats_get(p, &st);
	/* 99 full nodes once, then the last for each job: not 64 x 100. */
	CU_ASSERT(st.node_looks <= 99 + 64 + 64);
	pool_destroy(p);

	/* Free CPUs that are not whole cores (smt = no): the first job's
	 * refusal ends the pass; its placement is tried once. */
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	last = gnode(p, "a", "0-7", 0, NULL, NULL);
	CU_ASSERT_EQUAL_FATAL(pool_topology_get(p, topo, strlen(topo), &last->topo, &err), 0);
	cpumask_parse("1,3,5,7", &last->free);
	for (int64_t id = 1; id <= 50; id++)
		pool_job_add(p, gjob(id, 1, 0, 0));
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 128), 0);
	pool_stats_get(p, &st);
	CU_ASSERT_EQUAL(st.place_tries, 1);
	pool_destroy(p);
	fx_config_free(c);
}

static const struct unit_test pool_gpu_tests[] = {
	{ "pass_looks", test_pass_looks },
	{ "array", test_array },
	{ "distinct_and_wait", test_distinct_and_wait },
	{ "nodes_without_gpus", test_nodes_without_gpus },
	{ "chunks", test_chunks },
	{ "locality", test_locality },
	{ "backfill", test_backfill },
	{ "request_check", test_request_check },
	{ "model", test_model },
	{ "chunk_features", test_chunk_features },
	{ NULL, NULL },
};

UNIT_SUITE(pool_gpu, pool_gpu_tests);
