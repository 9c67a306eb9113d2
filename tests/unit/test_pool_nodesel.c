/* SPDX-License-Identifier: MIT */
/* The pass with node selections (docs/RESOURCES.md): an excluded node is
 * never used, a node list's nodes all are, features filter the nodes,
 * a matching OR puts all of a job's nodes on one alternative, and the
 * waiting reason names busy or down nodes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-fixture.h"
#include "pool.h"
#include "unit.h"

static struct job *sjob(int64_t id, unsigned count, unsigned ncpus, const char *nodelist, const char *exclude,
			const char *constraint)
{
	struct job *j = fx_job(id, "q", count * ncpus, 0);
	struct error err;

	if (count > 1) {
		j->chunks = calloc(1, sizeof(*j->chunks));
		*j->chunks = (struct job_chunk){ .count = count, .ncpus = ncpus, .mpiprocs = 1 };
		j->n_chunks = 1;
		j->place = JOB_PLACE_SCATTER;
	}
	CU_ASSERT_EQUAL(nodesel_create(nodelist, exclude, constraint, &j->sel, &err), 0);
	return j;
}

static struct node *snode(struct pool *p, const char *name, const char *features)
{
	struct node *nd = fx_node(p, name, "0-1");

	nd->features = features ? strdup(features) : NULL;
	return nd;
}

/* The nodes of a placed job, sorted by name, "a b". */
static void nodes_of(const struct job *j, char *buf, size_t len)
{
	const char *names[8];
	size_t at = 0;

	for (unsigned i = 0; i < j->n_alloc && i < 8; i++)
		names[i] = j->alloc[i].node;
	for (unsigned i = 1; i < j->n_alloc && i < 8; i++)
		for (unsigned k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
			const char *t = names[k];

			names[k] = names[k - 1];
			names[k - 1] = t;
		}
	buf[0] = '\0';
	for (unsigned i = 0; i < j->n_alloc && i < 8; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? " " : "", names[i]);
}

static void test_names(void)
{
	struct config *c = fx_config("q", 1);
	struct dispatch d[8];
	struct pool *p;
	char buf[64];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	snode(p, "a", NULL);
	snode(p, "b", NULL);
	snode(p, "c", NULL);
	pool_job_add(p, sjob(1, 1, 2, NULL, "a,b", NULL));   /* only c */
	pool_job_add(p, sjob(2, 2, 1, "a,b", NULL, NULL));   /* both */
	pool_job_add(p, sjob(3, 1, 1, NULL, "a,b", NULL));   /* c is full: waits */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	nodes_of(pool_job_find(p, 1), buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "c");
	nodes_of(pool_job_find(p, 2), buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "a b");
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(pool_request_sel_wait(p, pool_job_find(p, 3), buf, sizeof(buf)), 1);
	CU_ASSERT_STRING_EQUAL(buf, "waiting for free CPUs on the 1 node(s) it may use");
	pool_destroy(p);
	fx_config_free(c);
}

static void test_features(void)
{
	struct config *c = fx_config("q", 1);
	struct dispatch d[8];
	struct pool *p;
	struct node *r2b;
	char buf[64];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	snode(p, "r1a", "rack1,ib");
	snode(p, "r1b", "rack1");
	snode(p, "r2a", "rack2,ib");
	r2b = snode(p, "r2b", "rack2,ib");
	/* One CPU of r1a taken: three nodes across racks have room for a
	 * 2-CPU chunk, no rack has two. */
	pool_job_add(p, sjob(1, 1, 1, "r1a", NULL, NULL));
	pool_job_add(p, sjob(2, 1, 2, NULL, NULL, "rack2&ib"));
	pool_job_add(p, sjob(3, 2, 2, NULL, NULL, "[rack1|rack2]"));
	pool_job_add(p, sjob(4, 1, 1, NULL, NULL, "ib&(rack1|rack2)"));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 3);
	nodes_of(pool_job_find(p, 2), buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "r2a");
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	nodes_of(pool_job_find(p, 4), buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "r1a");
	/* r2a's job ends: rack2 has two free nodes. */
	pool_job_release(p, pool_job_find(p, 2));
	pool_job_remove(p, pool_job_find(p, 2));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	nodes_of(pool_job_find(p, 3), buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "r2a r2b");
	/* A node list naming a down node: ReqNodeNotAvail's words. */
	r2b->link = NULL;
	pool_job_add(p, sjob(5, 1, 1, "r2b", NULL, NULL));
	CU_ASSERT_EQUAL(pool_request_sel_wait(p, pool_job_find(p, 5), buf, sizeof(buf)), 1);
	CU_ASSERT_STRING_EQUAL(buf, "waits for node(s) down or drained: r2b");
	pool_destroy(p);
	fx_config_free(c);
}

/* Jobs of one selection that found no node: the pass looks at the nodes
 * for the first alone; the others, and a job without one behind them,
 * still get their answer. */
static void test_miss_memo(void)
{
	struct config *c = fx_config("q", 1);
	struct pool_stats st;
	struct dispatch d[8];
	struct pool *p;
	char name[16];

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	snode(p, "rare", "rare");
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		snode(p, name, NULL);
	}
	pool_job_add(p, sjob(1, 1, 2, "rare", NULL, NULL));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	for (int i = 2; i < 52; i++)
		pool_job_add(p, sjob(i, 1, 1, NULL, NULL, "rare"));
	pool_job_add(p, sjob(52, 1, 2, NULL, NULL, NULL));
	pool_stats_get(p, &st);
	uint64_t before = st.node_looks;
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 52);
	pool_stats_get(p, &st);
	CU_ASSERT(st.node_looks - before < 250);
	if (st.node_looks - before >= 250)
		fprintf(stderr, "memo: %llu node looks\n", (unsigned long long)(st.node_looks - before));
	/* The rare node frees: the first of them starts there. */
	pool_job_release(p, pool_job_find(p, 1));
	pool_job_remove(p, pool_job_find(p, 1));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 8), 2);
	CU_ASSERT_STRING_EQUAL(d[0].job->alloc[0].node, "rare");
	pool_destroy(p);
	fx_config_free(c);
}

static const struct unit_test pool_nodesel_tests[] = {
	{ "miss_memo", test_miss_memo },
	{ "names", test_names },
	{ "features", test_features },
	{ NULL, NULL },
};

UNIT_SUITE(pool_nodesel, pool_nodesel_tests);
