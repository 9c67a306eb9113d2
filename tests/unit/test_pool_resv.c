/* SPDX-License-Identifier: MIT */
/* Reservations as placement sees them (scheduler/pool-resv.c): the one
 * question, a pass around them, the reason with its remedy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-fixture.h"
#include "pool.h"
#include "unit.h"

static struct job *job_new(int64_t id, unsigned ncpus, uint64_t walltime, const char *resv)
{
	struct job *j = fx_job(id, "low", ncpus, walltime);

	j->resv = resv ? strdup(resv) : NULL;
	return j;
}

/* "m": a window on a, [1100, 1200); "u": b for users, [1050, 1150). */
static void two_resvs(struct pool *p)
{
	static const char *const a[] = { "a" }, *const b[] = { "b" };
	const struct pool_resv_spec v[] = {
		{ "m", 1100, 1200, true, false, a, 1 },
		{ "u", 1050, 1150, false, false, b, 1 },
	};

	CU_ASSERT_EQUAL_FATAL(pool_resv_set(p, v, 2), 0);
}

static void test_allows(void)
{
	struct pool *p;
	struct job *plain = job_new(1, 1, 0, NULL), *in_u = job_new(2, 1, 0, "u"), *gone = job_new(3, 1, 0, "x");

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	two_resvs(p);
	/* Outside: only what ends by the start, or starts at the end. */
	CU_ASSERT_TRUE(pool_resv_allows(p, plain, "a", 1000, 1100));
	CU_ASSERT_FALSE(pool_resv_allows(p, plain, "a", 1000, 1101));
	CU_ASSERT_FALSE(pool_resv_allows(p, plain, "a", 1150, 1160));
	CU_ASSERT_TRUE(pool_resv_allows(p, plain, "a", 1200, 1300));
	CU_ASSERT_FALSE(pool_resv_allows(p, plain, "a", 1000, INT64_MAX));   /* no walltime */
	CU_ASSERT_TRUE(pool_resv_allows(p, plain, "c", 1000, INT64_MAX));
	/* Inside: its nodes, its times. */
	CU_ASSERT_TRUE(pool_resv_allows(p, in_u, "b", 1050, 1150));
	CU_ASSERT_FALSE(pool_resv_allows(p, in_u, "b", 1049, 1100));
	CU_ASSERT_FALSE(pool_resv_allows(p, in_u, "b", 1060, 1151));
	CU_ASSERT_FALSE(pool_resv_allows(p, in_u, "a", 1200, 1210));
	CU_ASSERT_FALSE(pool_resv_allows(p, in_u, "c", 1060, 1070));
	CU_ASSERT_FALSE(pool_resv_allows(p, gone, "c", 1060, 1070));
	/* The next edge a pass must follow. */
	CU_ASSERT_EQUAL(pool_resv_next_edge(p, 1000), 1050);
	CU_ASSERT_EQUAL(pool_resv_next_edge(p, 1060), 1100);
	CU_ASSERT_EQUAL(pool_resv_next_edge(p, 1100), 1150);
	CU_ASSERT_EQUAL(pool_resv_next_edge(p, 1199), 1200);
	CU_ASSERT_EQUAL(pool_resv_next_edge(p, 1200), 0);
	/* Set again: the old set is gone. */
	CU_ASSERT_EQUAL(pool_resv_set(p, NULL, 0), 0);
	CU_ASSERT_TRUE(pool_resv_allows(p, plain, "a", 1000, INT64_MAX));
	job_free(plain);
	job_free(in_u);
	job_free(gone);
	pool_destroy(p);
}

static void test_pass(void)
{
	struct config c = { 0 };
	struct queue_conf q = { 0 };
	struct dispatch d[8];
	struct pool *p;
	struct node *a, *b;
	char why[256];
	size_t n;

	snprintf(q.name, QUEUE_NAME_MAX, "low");
	q.started = true;
	c.n_queues = 1;
	c.queues = &q;
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = fx_node(p, "a", "0");
	b = fx_node(p, "b", "1");
	pool_clock_set(p, 1000);
	two_resvs(p);
	/* 150 s would run into m on a and u on b; 50 s fits a's time. */
	pool_job_add(p, job_new(1, 1, 150, NULL));
	pool_job_add(p, job_new(2, 1, 100, NULL));
	n = pool_schedule(p, &c, d, 8);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(d[0].job->id, 2);
	CU_ASSERT_PTR_EQUAL(d[0].node, a);
	CU_ASSERT_EQUAL(pool_request_resv_wait(p, pool_job_find(p, 1), 1000, why, sizeof(why)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "Reservation: runs into reservation at "));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, " on b; with walltime <= 0:00:50 it starts now"));
	/* u's job waits for u's start, then runs on b. */
	pool_job_add(p, job_new(3, 1, 100, "u"));
	CU_ASSERT_EQUAL(pool_schedule(p, &c, d, 8), 0);
	CU_ASSERT_EQUAL(pool_request_resv_wait(p, pool_job_find(p, 3), 1000, why, sizeof(why)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "Reservation: waits for reservation u to start at "));
	pool_clock_set(p, 1050);
	n = pool_schedule(p, &c, d, 8);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_PTR_EQUAL(d[0].node, b);
	/* After both: job 1 runs. */
	pool_job_remove(p, pool_job_find(p, 2));
	pool_job_remove(p, pool_job_find(p, 3));
	pool_clock_set(p, 1200);
	n = pool_schedule(p, &c, d, 8);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(d[0].job->id, 1);
	pool_destroy(p);
}

/* The EASY reservation of a blocked wide job plans no start that runs
 * into a reservation: a and b whole at 2000 for 100 s, a window on a
 * from 2050 (it plans nothing), or from 2100 (it plans 2000). */
static void easy_case(int64_t window_start, int64_t want_resv_t)
{
	static const char *const a_only[] = { "a" };
	const struct pool_resv_spec w = { "w", window_start, 3000, true, false, a_only, 1 };
	struct job_chunk ch = { .count = 2, .ncpus = 2, .mpiprocs = 2 };
	struct config c = { 0 };
	struct queue_conf q = { 0 };
	struct dispatch d[8];
	struct pool *p;
	struct node *a, *b;
	struct job *j;

	snprintf(q.name, QUEUE_NAME_MAX, "low");
	q.started = true;
	c.n_queues = 1;
	c.queues = &q;
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = fx_node(p, "a", "0-1");
	b = fx_node(p, "b", "2-3");
	fx_node(p, "c", "4");   /* a free CPU: a pass runs */
	pool_clock_set(p, 1000);
	pool_job_add(p, job_new(1, 2, 1000, NULL));   /* a, until 2000 */
	pool_job_add(p, job_new(2, 2, 1000, NULL));   /* b, until 2000 */
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, &c, d, 8), 2);
	CU_ASSERT_EQUAL_FATAL(pool_resv_set(p, &w, 1), 0);
	j = job_new(3, 0, 100, NULL);
	j->chunks = calloc(1, sizeof(*j->chunks));
	j->chunks[0] = ch;
	j->n_chunks = 1;
	j->ncpus = 4;
	j->place = JOB_PLACE_SCATTER;
	pool_job_add(p, j);
	pool_clock_set(p, 1050);
	CU_ASSERT_EQUAL(pool_schedule(p, &c, d, 8), 0);
	CU_ASSERT_EQUAL(a->resv_t, want_resv_t);
	CU_ASSERT_EQUAL(b->resv_t, want_resv_t);
	pool_destroy(p);
}

static void test_easy(void)
{
	easy_case(2050, 0);
	easy_case(2100, 2000);
}

static const struct unit_test pool_resv_tests[] = {
	{ "allows", test_allows },
	{ "pass", test_pass },
	{ "easy", test_easy },
	{ NULL, NULL },
};

UNIT_SUITE(pool_resv, pool_resv_tests);
