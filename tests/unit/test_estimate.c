/* SPDX-License-Identifier: MIT */
/* Start estimates (scheduler/estimate.c): the replay of walltimes for
 * every waiting job, and the one-node reservation the pass takes from
 * a job's estimate (docs/ESTIMATES.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "pool-fixture.h"
#include "pool.h"
#include "unit.h"

static struct job *job_add(struct pool *p, int64_t id, uid_t uid, unsigned ncpus, uint64_t walltime)
{
	struct job *j = fx_job(id, "batch", ncpus, walltime);

	j->uid = uid;
	CU_ASSERT_EQUAL(pool_job_add(p, j), 0);
	return j;
}

/* Each test's pool: the one queue "batch" (estimate_depth 100), nodes
 * n0 .. of 2 CPUs each, the clock at 1000; d for the passes. */
struct est {
	struct config c;
	struct queue_conf q;
	struct pool *p;
	struct dispatch d[16];
};

static void est_setup(struct est *e, unsigned nodes)
{
	char name[16];

	memset(e, 0, sizeof(*e));
	snprintf(e->q.name, sizeof(e->q.name), "batch");
	e->q.started = e->q.is_default = true;
	e->c.queues = &e->q;
	e->c.n_queues = 1;
	e->c.estimate_depth = 100;
	CU_ASSERT_EQUAL_FATAL(pool_create(&e->p), 0);
	for (unsigned i = 0; i < nodes; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		fx_node(e->p, name, "0-1");
	}
	pool_clock_set(e->p, 1000);
}

/* A pass: how many started. */
static int est_pass(struct est *e)
{
	return pool_schedule(e->p, &e->c, e->d, 16);
}

/* Replay `replay` at 1000, its stats into *st (NULL: not kept). */
static void est_replay(struct est *e, int replay, struct pool_estimate_stats *st)
{
	struct pool_estimate_stats mine;

	if (!st)
		st = &mine;
	CU_ASSERT_EQUAL(pool_estimate(e->p, &e->c, 1000, replay, st), 0);
	free(st->fresh);
	st->fresh = NULL;
}

/* A 2-CPU node running A (to 1008) and B (to 1004); waiting, in order: C
 * of 2 CPUs, D of 1 (2 s), E of 1 without a walltime, a held one and
 * one wider than the node. */
static void test_replay(void)
{
	static struct est x;
	struct pool_estimate_stats st;
	struct job *a, *b, *cj, *dj, *e, *h, *wide;
	struct pool *p;
	int64_t t;
	const char *v;

	est_setup(&x, 1);
	p = x.p;
	a = job_add(p, 1, 100, 1, 8);
	b = job_add(p, 2, 100, 1, 4);
	CU_ASSERT_EQUAL(est_pass(&x), 2);
	CU_ASSERT_EQUAL(a->state, JOB_RUNNING);
	CU_ASSERT_EQUAL(b->state, JOB_RUNNING);
	cj = job_add(p, 3, 100, 2, 3);
	dj = job_add(p, 4, 100, 1, 2);
	e = job_add(p, 5, 100, 1, 0);      /* no walltime: holds its CPU for ever */
	h = job_add(p, 6, 100, 1, 1);
	pool_job_state_set(p, h, JOB_HELD);
	wide = job_add(p, 7, 100, 4, 1);   /* wider than any node */
	est_replay(&x, 1, &st);
	/* C: both CPUs, when A ends (1008); D: B's CPU, 1004-1006, before C. */
	CU_ASSERT_TRUE(pool_job_estimate(cj, 1, &t, &v));
	CU_ASSERT_EQUAL(t, 1008);
	CU_ASSERT_STRING_EQUAL(v, "(n0:ncpus=2)");
	CU_ASSERT_TRUE(pool_job_estimate(dj, 1, &t, &v));
	CU_ASSERT_EQUAL(t, 1004);
	/* E: after C (1011), for ever. */
	CU_ASSERT_TRUE(pool_job_estimate(e, 1, &t, &v));
	CU_ASSERT_EQUAL(t, 1011);
	/* Held, and never fitting: none. */
	CU_ASSERT_FALSE(pool_job_estimate(h, 1, &t, &v));
	CU_ASSERT_FALSE(pool_job_estimate(wide, 1, &t, &v));
	CU_ASSERT_EQUAL(st.estimated, 3);
	CU_ASSERT_EQUAL(st.none, 1);
	CU_ASSERT_EQUAL(st.n_fresh, 3);
	CU_ASSERT_EQUAL(cj->est_first, 1008);
	/* A later replay: the first estimate stays; one from an older
	 * replay is not shown. */
	CU_ASSERT_FALSE(pool_job_estimate(cj, 2, &t, &v));
	x.c.estimate_depth = 1;
	est_replay(&x, 2, &st);
	CU_ASSERT_EQUAL(st.visited, 1);
	CU_ASSERT_EQUAL(st.n_fresh, 0);
	CU_ASSERT_TRUE(pool_job_estimate(cj, 2, &t, &v));
	CU_ASSERT_FALSE(pool_job_estimate(dj, 2, &t, &v));
	CU_ASSERT_EQUAL(cj->est_first, 1008);
	pool_destroy(p);
}

/* A strict queue starts its jobs in order: a 1-CPU job behind a 2-CPU
 * one is estimated after it, not in the hole before it. */
static void test_strict(void)
{
	static struct est x;
	struct job *wide, *narrow;

	est_setup(&x, 1);
	x.q.strict = true;
	(void)job_add(x.p, 1, 100, 1, 8);
	CU_ASSERT_EQUAL(est_pass(&x), 1);
	wide = job_add(x.p, 2, 100, 2, 3);
	narrow = job_add(x.p, 3, 100, 1, 2);
	est_replay(&x, 1, NULL);
	CU_ASSERT_EQUAL(wide->est_start, 1008);
	CU_ASSERT_EQUAL(narrow->est_start, 1011);
	pool_destroy(x.p);
}

/* A job across nodes: two chunks of 2 CPUs, scatter, on three 2-CPU
 * nodes each full with one job (ends 1005, 1003, 1009): it starts
 * when the second node frees, on the two that end first. */
static void test_chunks(void)
{
	static struct est e;
	struct job *x;
	struct pool *p;
	int64_t t;
	const char *v;

	est_setup(&e, 3);
	p = e.p;
	(void)job_add(p, 1, 100, 2, 5);
	(void)job_add(p, 2, 100, 2, 3);
	(void)job_add(p, 3, 100, 2, 9);
	CU_ASSERT_EQUAL(est_pass(&e), 3);
	x = job_add(p, 4, 100, 4, 10);
	x->chunks = calloc(1, sizeof(*x->chunks));
	x->chunks[0] = (struct job_chunk){ .count = 2, .ncpus = 2, .mpiprocs = 2 };
	x->n_chunks = 1;
	x->place = JOB_PLACE_SCATTER;
	est_replay(&e, 1, NULL);
	CU_ASSERT_TRUE_FATAL(pool_job_estimate(x, 1, &t, &v));
	CU_ASSERT_EQUAL(t, 1005);
	CU_ASSERT_STRING_EQUAL(v, "(n0:ncpus=2)+(n1:ncpus=2)");
	pool_destroy(p);
}

/* No starvation: a 2-CPU job first in its turn holds its node from its
 * estimate; a 1-CPU job that would run past it does not start there, one
 * that ends by then does. */
static void test_reservation(void)
{
	static struct est x;
	struct job *a, *b, *wide, *narrow, *shorty;
	struct pool *p;

	est_setup(&x, 1);
	p = x.p;
	a = job_add(p, 1, 200, 1, 10);
	b = job_add(p, 2, 200, 1, 3);
	CU_ASSERT_EQUAL(est_pass(&x), 2);
	wide = job_add(p, 3, 100, 2, 5);      /* another user: first in turn */
	narrow = job_add(p, 4, 200, 1, 20);
	est_replay(&x, 1, NULL);
	CU_ASSERT_EQUAL(wide->est_start, 1010);
	/* B ends at 1003: its CPU is free. */
	pool_clock_set(p, 1003);
	pool_job_remove(p, b);
	CU_ASSERT_EQUAL(est_pass(&x), 0);
	CU_ASSERT_EQUAL(narrow->state, JOB_QUEUED);   /* 1003 + 20 runs past 1010 */
	shorty = job_add(p, 5, 200, 1, 7);             /* ends at 1010: fits */
	CU_ASSERT_EQUAL(est_pass(&x), 1);
	CU_ASSERT_EQUAL(shorty->state, JOB_RUNNING);
	/* At 1010 A and the short one have ended: the wide job starts. */
	pool_clock_set(p, 1010);
	pool_job_remove(p, a);
	pool_job_remove(p, shorty);
	CU_ASSERT_EQUAL(est_pass(&x), 1);
	CU_ASSERT_EQUAL(wide->state, JOB_RUNNING);
	pool_destroy(p);
}

static const struct unit_test estimate_tests[] = {
	{ "replay", test_replay },
	{ "chunks", test_chunks },
	{ "strict", test_strict },
	{ "reservation", test_reservation },
	{ NULL, NULL },
};

UNIT_SUITE(estimate, estimate_tests);
