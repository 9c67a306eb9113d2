/* SPDX-License-Identifier: MIT */
/* Pool-wide licenses in the pass (docs/RESOURCES.md, "Licenses"): running
 * jobs never hold more than [licenses] gives, one that waits says why, a
 * license comes back when its holder ends, and the first job waiting for
 * one holds it against later jobs that would not end before it starts;
 * a node's counted resources are held by one job at a time when it has one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-fixture.h"
#include "pool.h"
#include "unit.h"

static struct job *ljob(int64_t id, const char *licenses, uint64_t walltime)
{
	struct job *j = fx_job(id, "q", 1, walltime);

	CU_ASSERT_EQUAL(job_licenses_set(j, licenses), 0);
	return j;
}

static struct config *lconfig(uint64_t matlab)
{
	struct config *c = fx_config("q", 1);

	snprintf(c->licenses[0].name, sizeof(c->licenses[0].name), "matlab");
	c->licenses[0].count = matlab;
	snprintf(c->licenses[1].name, sizeof(c->licenses[1].name), "comsol");
	c->licenses[1].count = 5;
	c->n_licenses = 2;
	return c;
}

static long long used_of(struct pool *p, struct config *c, const char *name)
{
	json_t *a = pool_licenses_json(p, c), *o;
	long long used = -1;
	size_t i;

	json_array_foreach(a, i, o)
		if (strcmp(json_string_value(json_object_get(o, "name")), name) == 0)
			used = json_integer_value(json_object_get(o, "used"));
	json_decref(a);
	return used;
}

static void test_counts(void)
{
	struct config *c = lconfig(2);
	struct pool *p = fx_pool_one("0-7");
	struct dispatch d[8];
	char buf[200];

	pool_job_add(p, ljob(1, "matlab:1", 100));
	pool_job_add(p, ljob(2, "matlab:1,comsol:2", 100));
	pool_job_add(p, ljob(3, "matlab:1", 100));
	pool_job_add(p, ljob(4, NULL, 100));   /* asks none: not held up */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 3);
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(pool_job_find(p, 4)->state, JOB_RUNNING);
	CU_ASSERT_EQUAL(used_of(p, c, "matlab"), 2);
	CU_ASSERT_EQUAL(used_of(p, c, "comsol"), 2);
	CU_ASSERT_EQUAL(pool_request_lic_wait(p, c, pool_job_find(p, 3), buf, sizeof(buf)), 1);
	CU_ASSERT_STRING_EQUAL(buf, "waiting for licenses: matlab: 2/2 in use, asks 1");
	CU_ASSERT_EQUAL(pool_request_lic_wait(p, c, pool_job_find(p, 4), buf, sizeof(buf)), 0);
	/* Nothing more while both are held. */
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	/* Job 2 ends: its licenses come back, job 3 takes one. */
	pool_job_remove(p, pool_job_find(p, 2));
	CU_ASSERT_EQUAL(used_of(p, c, "matlab"), 1);
	CU_ASSERT_EQUAL(used_of(p, c, "comsol"), 0);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_EQUAL(used_of(p, c, "matlab"), 2);
	/* A requeue (release) gives them back too. */
	pool_job_release(p, pool_job_find(p, 3));
	pool_job_state_set(p, pool_job_find(p, 3), JOB_QUEUED);
	CU_ASSERT_EQUAL(used_of(p, c, "matlab"), 1);
	/* A reload that lowers the total: no more start while over it. */
	c->licenses[0].count = 1;
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	pool_destroy(p);
	fx_config_free(c);
}

static void test_reservation(void)
{
	struct config *c = lconfig(4);
	struct pool *p = fx_pool_one("0-7");
	struct dispatch d[8];

	/* Two holders: one ends at 1100, the other at 2000; 2 left free. */
	pool_job_add(p, ljob(1, "matlab:1", 100));
	pool_job_add(p, ljob(2, "matlab:1", 1000));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	/* Job 3 needs 3: it can have them at 1100. Job 4 (to 1500) would
	 * hold one past that and waits though 2 are free; job 5 (to 1050)
	 * ends before and runs. */
	pool_job_add(p, ljob(3, "matlab:3", 10));
	pool_job_add(p, ljob(4, "matlab:1", 500));
	pool_job_add(p, ljob(5, "matlab:1", 50));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 5);
	CU_ASSERT_EQUAL(pool_job_find(p, 4)->state, JOB_QUEUED);
	/* Job 1 and 5 end at 1100: job 3 starts with the 3 free. */
	pool_clock_set(p, 1100);
	pool_job_remove(p, pool_job_find(p, 1));
	pool_job_remove(p, pool_job_find(p, 5));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_EQUAL(used_of(p, c, "matlab"), 4);
	pool_destroy(p);
	fx_config_free(c);
}

/* Counted node resources (docs/RESOURCES.md): one node with nvme:1. */
static void test_node_resources(void)
{
	struct config *c = lconfig(2);
	struct pool *p = fx_pool_one("0-7");
	struct node *a;
	struct dispatch d[8];
	struct job *j;

	fx_node(p, "m", "0-7");
	a = pool_node_find(p, "n");
	a->res = calloc(1, sizeof(*a->res));
	snprintf(a->res[0].name, sizeof(a->res[0].name), "nvme");
	a->res[0].value = 1;
	a->n_res = 1;
	j = ljob(1, NULL, 100);
	CU_ASSERT_EQUAL(job_noderes_set(j, "nvme:1"), 0);
	pool_job_add(p, j);
	j = ljob(2, NULL, 100);
	CU_ASSERT_EQUAL(job_noderes_set(j, "nvme:1"), 0);
	pool_job_add(p, j);
	pool_job_add(p, ljob(3, NULL, 100));
	/* Two chunks of nvme:1 each: one node has it: never now. */
	j = ljob(4, NULL, 100);
	j->chunks = calloc(1, sizeof(*j->chunks));
	*j->chunks = (struct job_chunk){ .count = 2, .ncpus = 1, .mpiprocs = 1 };
	j->n_chunks = 1;
	j->ncpus = 2;
	j->place = JOB_PLACE_SCATTER;
	CU_ASSERT_EQUAL(job_noderes_set(j, "nvme:1"), 0);
	pool_job_add(p, j);
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	CU_ASSERT_STRING_EQUAL(pool_job_find(p, 1)->alloc[0].node, "n");
	CU_ASSERT_EQUAL(pool_job_find(p, 2)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_RUNNING);
	CU_ASSERT_EQUAL(pool_job_find(p, 4)->state, JOB_QUEUED);
	pool_job_remove(p, pool_job_find(p, 1));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 2);
	CU_ASSERT_STRING_EQUAL(d[0].job->alloc[0].node, "n");
	pool_destroy(p);
	fx_config_free(c);
}

static const struct unit_test pool_license_tests[] = {
	{ "node_resources", test_node_resources },
	{ "counts", test_counts },
	{ "reservation", test_reservation },
	{ NULL, NULL },
};

UNIT_SUITE(pool_license, pool_license_tests);
