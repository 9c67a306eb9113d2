/* SPDX-License-Identifier: MIT */
/* scheduler/pool: the live counts of waiting jobs that qsub's caps read. */
#include <stdio.h>
#include <stdlib.h>

#include "pool.h"
#include "unit.h"

static struct job *waiting_job(int64_t id, const char *queue, uid_t uid, enum job_state state)
{
	struct job *j = calloc(1, sizeof(*j));

	j->id = id;
	snprintf(j->queue, sizeof(j->queue), "%s", queue);
	j->uid = uid;
	j->ncpus = 1;
	j->state = state;
	return j;
}

static void test_counts_follow_states(void)
{
	struct pool *p;
	struct pool_waiting w;
	struct job *j;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	CU_ASSERT_EQUAL(pool_job_add(p, waiting_job(1, "a", 1001, JOB_QUEUED)), 0);
	CU_ASSERT_EQUAL(pool_job_add(p, waiting_job(2, "a", 1001, JOB_HELD)), 0);
	CU_ASSERT_EQUAL(pool_job_add(p, waiting_job(3, "a", 1002, JOB_QUEUED)), 0);
	CU_ASSERT_EQUAL(pool_job_add(p, waiting_job(4, "b", 1001, JOB_QUEUED)), 0);
	CU_ASSERT_EQUAL(pool_job_add(p, waiting_job(5, "b", 1001, JOB_RUNNING)), 0);
	pool_waiting_count(p, "a", 1001, &w);
	CU_ASSERT_EQUAL(w.all, 4);
	CU_ASSERT_EQUAL(w.queue, 3);
	CU_ASSERT_EQUAL(w.user, 3);
	CU_ASSERT_EQUAL(w.queue_user, 2);
	/* Held to queued keeps it waiting; queued to running does not. */
	j = pool_job_find(p, 2);
	pool_job_state_set(p, j, JOB_QUEUED);
	j = pool_job_find(p, 1);
	pool_job_state_set(p, j, JOB_RUNNING);
	pool_waiting_count(p, "a", 1001, &w);
	CU_ASSERT_EQUAL(w.all, 3);
	CU_ASSERT_EQUAL(w.queue_user, 1);
	/* A job that goes is uncounted; a queue or user never seen is 0. */
	pool_job_remove(p, pool_job_find(p, 4));
	pool_waiting_count(p, "b", 1001, &w);
	CU_ASSERT_EQUAL(w.queue, 0);
	CU_ASSERT_EQUAL(w.user, 1);
	pool_waiting_count(p, "nosuch", 4242, &w);
	CU_ASSERT_EQUAL(w.all, 2);
	CU_ASSERT_EQUAL(w.queue + w.user + w.queue_user, 0);
	pool_destroy(p);
}

static const struct unit_test pool_waiting_tests[] = {
	{ "counts_follow_states", test_counts_follow_states },
	{ NULL, NULL },
};

UNIT_SUITE(pool_waiting, pool_waiting_tests);
