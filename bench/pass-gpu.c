/* SPDX-License-Identifier: MIT */
/* bench/pass-gpu: the scheduling pass alone, in process, with GPUs
 * (issue 27): NODES simulated nodes of one shared synthetic topology
 * (bench/sim's "pack:2 numa:2 core:16 pu:2"), 8 GPUs each, two on each
 * NUMA node with its CPUs; JOBS queued jobs of 1 CPU, every tenth one of
 * 4 CPUs and 1 GPU, for 10 users. Passes of at most 512 decisions (as
 * qpoold's) run until the pool is full, then one pass over the full pool,
 * then one after a hundredth of the running jobs ended (the steady state).
 *   pass-gpu NODES JOBS [EVERY [FEAT [MODELS [USERS [ORDER [LIC [MEM]]]]]]]
 *   (every EVERY-th job asks for a GPU; 0: none; every FEAT-th job (offset
 *   by 3 from the GPU jobs) asks for -C fast, a feature of every other
 *   node: docs/RESOURCES.md; 0 or absent: none; MODELS 1: GPUs 0-3 of each
 *   node are a100, 4-7 v100, and the GPU jobs ask for a100 and v100 in
 *   turn: docs/GPUS.md; USERS, ORDER: below; every LIC-th job (offset by
 *   7) asks for one of a pool-wide license of NODES counts, so some of
 *   them wait for it: docs/RESOURCES.md, "Licenses"; MEM > 0: every job
 *   asks for MEM MiB per CPU and each node offers 256 GiB, counted as
 *   qpoold counts memory: docs/ARCHITECTURE.md, "Memory counted")
 * QP_BENCH_RESV=N adds N reservations (resv_add below).
 * Prints one JSON line: passes while filling (count, mean and max ms),
 * the full pool's pass (ms), jobs and GPU jobs placed, GPUs left free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fairshare.h"
#include "placement.h"
#include "pool.h"

#define BATCH 512
#define GPUS 8

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* QP_BENCH_RESV=N (docs/RESERVATIONS.md): N reservations of 10 nodes
 * each (N above nodes/10: they wrap), for nobody, from half an hour ahead
 * for two hours: the jobs (an hour's walltime) keep off them, and every
 * node placement looks at asks. 0 or -ENOMEM. */
static int resv_add(struct pool *p, long n, long nodes, int64_t now)
{
	struct pool_resv_spec *v = calloc((size_t)n, sizeof(*v));
	char (*names)[32] = calloc((size_t)n * 10, sizeof(*names)), (*rnames)[32] = calloc((size_t)n, sizeof(*rnames));
	const char **ptrs = calloc((size_t)n * 10, sizeof(*ptrs));
	int r = -12;

	if (v && names && rnames && ptrs) {
		for (long i = 0; i < n; i++) {
			for (long k = 0; k < 10; k++) {
				snprintf(names[i * 10 + k], sizeof(names[0]), "sim%ld", (i * 10 + k) % nodes);
				ptrs[i * 10 + k] = names[i * 10 + k];
			}
			snprintf(rnames[i], sizeof(rnames[0]), "r%ld", i);
			/* Wrapped ones a day apart: reservations never overlap. */
			v[i] = (struct pool_resv_spec){ rnames[i], now + 1800 + (i * 10 / nodes) * 86400,
							now + 9000 + (i * 10 / nodes) * 86400, true, false,
							ptrs + i * 10, 10 };
		}
		r = pool_resv_set(p, v, (size_t)n);
	}
	free(v);
	free(names);
	free(rnames);
	free(ptrs);
	return r;
}

int main(int argc, char **argv)
{
	const char *topo_text = "pack:2 numa:2 core:16 pu:2";
	long nodes = argc > 2 ? atol(argv[1]) : 0, jobs = argc > 2 ? atol(argv[2]) : 0;
	long every = argc > 3 ? atol(argv[3]) : 10;   /* 0: no GPU job, the baseline */
	long feat = argc > 4 ? atol(argv[4]) : 0;     /* 0: no job asks for a feature */
	long models = argc > 5 ? atol(argv[5]) : 0;   /* 1: GPU models (a100, v100) */
	/* USERS > 0: the jobs spread over that many users, 10 per account of
	 * 100 with shares 1..100, each with some past use; ORDER 1: the queue
	 * is order = fairshare (0: round robin over the same users). */
	long users = argc > 6 ? atol(argv[6]) : 0, fairshare = argc > 7 ? atol(argv[7]) : 0;
	long lic = argc > 8 ? atol(argv[8]) : 0;      /* 0: no job asks for a license */
	long mem = argc > 9 ? atol(argv[9]) : 0;      /* MiB per CPU; 0: no job asks for memory */
	json_t *node_mem = mem > 0 ? json_pack("{s:I}", "mem", (json_int_t)256 << 30) : NULL;
	long lplaced = 0;
	struct nodesel *fast = NULL;
	long fplaced = 0;
	static struct dispatch d[BATCH];
	struct config c = { 0 };
	struct queue_conf q = { .started = true };
	struct error err;
	struct pool *p;
	double t, sum = 0, max = 0, full, steady;
	size_t steady_n;
	long passes = 0, placed = 0, gplaced = 0;
	uint64_t gfree = 0;
	size_t n;

	if (nodes <= 0 || jobs <= 0) {
		fprintf(stderr, "usage: pass-gpu NODES JOBS\n");
		return 2;
	}
	snprintf(q.name, sizeof(q.name), "batch");
	q.is_default = true;
	q.order = fairshare ? QUEUE_ORDER_FAIRSHARE : QUEUE_ORDER_ROUND_ROBIN;
	c.queues = &q;
	c.n_queues = 1;
	if (lic) {
		snprintf(c.licenses[0].name, sizeof(c.licenses[0].name), "matlab");
		c.licenses[0].count = (uint64_t)nodes;
		c.n_licenses = 1;
	}
	if (pool_create(&p) < 0)
		return 1;
	if (feat && nodesel_create(NULL, NULL, "fast", &fast, &err) < 0)
		return 1;
	for (long i = 0; i < nodes; i++) {
		char name[32];
		struct node *nd;

		snprintf(name, sizeof(name), "sim%ld", i);
		nd = pool_node_get(p, name);
		if (!nd || pool_topology_get(p, topo_text, strlen(topo_text), &nd->topo, &err) < 0) {
			fprintf(stderr, "pass-gpu: %s\n", nd ? err.text : "out of memory");
			return 1;
		}
		placement_topology_cpus(nd->topo, &nd->cpus);
		nd->free = nd->cpus;
		nd->rt_free = nd->cpus;
		nd->state = NODE_UP;
		nd->link = nd;
		/* What the node offers its jobs is its topology's "mem". */
		if (node_mem)
			nd->topology = json_incref(node_mem);
		nd->gpus = calloc(GPUS, sizeof(*nd->gpus));
		if (!nd->gpus)
			return 1;
		/* 4 NUMA nodes of 16 PUs: GPUs 2k and 2k+1 on NUMA node k. */
		for (unsigned g = 0; g < GPUS; g++) {
			char cpus[16];

			nd->gpus[g].index = g;
			nd->gpus[g].numa = (int)(g / 2);
			snprintf(cpus, sizeof(cpus), "%u-%u", g / 2 * 16, g / 2 * 16 + 15);
			cpumask_parse(cpus, &nd->gpus[g].cpus);
			if (models)
				snprintf(nd->gpus[g].model, sizeof(nd->gpus[g].model), "%s",
					 g < GPUS / 2 ? "a100" : "v100");
		}
		nd->n_gpus = GPUS;
		nd->gpus_free = (UINT64_C(1) << GPUS) - 1;
		if (feat && i % 2 == 0 && !(nd->features = strdup("fast,ib")))
			return 1;
	}
	pool_clock_set(p, 1000000);
	if (getenv("QP_BENCH_RESV") && atol(getenv("QP_BENCH_RESV")) > 0 &&
	    resv_add(p, atol(getenv("QP_BENCH_RESV")), nodes, 1000000) < 0)
		return 1;
	if (users > 0) {
		pool_fairshare_config(p, 86400, 0);
		for (long u = 0; u < users; u++) {
			/* account u / 10 of 100: shares 1..100 of 5,050. */
			if (pool_share_set(p, (uid_t)(1000 + u), (double)(u / 10 % 100 + 1) / 5050.0 / 10) < 0 ||
			    pool_usage_past(p, (uid_t)(1000 + u), 4, 0, (double)(u * 37 % 1000), 1000000) < 0)
				return 1;
		}
	}
	for (long id = 1; id <= jobs; id++) {
		struct job *j = calloc(1, sizeof(*j));

		if (!j)
			return 1;
		j->id = id;
		snprintf(j->queue, sizeof(j->queue), "batch");
		j->uid = (uid_t)(1000 + id % (users > 0 ? users : 10));
		j->state = JOB_QUEUED;
		j->walltime = 3600;
		j->ncpus = every && id % every == 0 ? 4 : 1;
		j->ngpus = every && id % every == 0 ? 1 : 0;
		j->mem = (uint64_t)(mem > 0 ? mem : 0) * j->ncpus << 20;
		if (feat && id % feat == 3 % feat)
			j->sel = nodesel_ref(fast);
		if (models && j->ngpus && !(j->gpu_model = strdup(id / every % 2 ? "a100" : "v100")))
			return 1;
		if (lic && id % lic == 7 % lic && job_licenses_set(j, "matlab:1") < 0)
			return 1;
		if (pool_job_add(p, j) < 0)
			return 1;
	}
	do {
		t = now_ms();
		n = pool_schedule(p, &c, d, BATCH);
		t = now_ms() - t;
		for (size_t i = 0; i < n; i++) {
			gplaced += d[i].job->ngpus > 0;
			fplaced += d[i].job->sel != NULL;
			lplaced += d[i].job->n_lic > 0;
		}
		placed += (long)n;
		if (n) {
			passes++;
			sum += t;
			if (t > max)
				max = t;
		}
	} while (n == BATCH);
	t = now_ms();
	n = pool_schedule(p, &c, d, BATCH);
	full = now_ms() - t;
	for (struct node *nd = pool_nodes(p); nd; nd = nd->next)
		gfree += (uint64_t)__builtin_popcountll(nd->gpus_free);
	/* The steady state: a hundredth of the running jobs end, one pass
	 * fills what they leave. */
	{
		struct job *j = pool_jobs(p), *next;
		long k = 0;

		for (; j; j = next) {
			next = j->next;
			if (j->state == JOB_RUNNING && k++ % 100 == 0)
				pool_job_remove(p, j);
		}
	}
	t = now_ms();
	steady_n = pool_schedule(p, &c, d, BATCH);
	steady = now_ms() - t;
	printf("{\"nodes\": %ld, \"gpus_per_node\": %d, \"jobs\": %ld, \"passes\": %ld, "
	       "\"pass_ms_mean\": %.3f, \"pass_ms_max\": %.3f, \"full_pass_ms\": %.3f, "
	       "\"placed\": %ld, \"gpu_jobs_placed\": %ld, \"gpus_free\": %llu, \"full_pass_placed\": %zu, "
	       "\"steady_pass_ms\": %.3f, \"steady_pass_placed\": %zu, \"feature_every\": %ld, "
	       "\"feature_jobs_placed\": %ld, \"gpu_models\": %ld, \"users\": %ld, \"fairshare\": %ld,"
	       " \"license_every\": %ld, \"license_jobs_placed\": %ld, \"mem_per_cpu_mib\": %ld}\n",
	       nodes, GPUS, jobs, passes, passes ? sum / (double)passes : 0, max, full, placed, gplaced,
	       (unsigned long long)gfree, n, steady, steady_n, feat, fplaced, models, users, fairshare, lic, lplaced, mem);
	pool_destroy(p);
	json_decref(node_mem);
	nodesel_destroy(fast);
	return 0;
}
