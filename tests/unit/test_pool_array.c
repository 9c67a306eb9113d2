/* SPDX-License-Identifier: MIT */
/* The pool's job arrays: subjobs made only when placed, IQS fairness with arrays, %MAX, counts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-fixture.h"
#include "pool.h"
#include "unit.h"

static struct job *job_new(int64_t id, uid_t uid)
{
	struct job *j = fx_job(id, "q", 1, 0);

	j->uid = uid;
	return j;
}

static struct job *array_new(int64_t id, uid_t uid, const char *spec)
{
	struct job *j = job_new(id, uid);

	CU_ASSERT_EQUAL_FATAL(pool_array_set(j, spec, NULL), 0);
	return j;
}

/* Ends a dispatched job as the server does: counted in its array, removed. */
static void finish(struct pool *p, struct job *j)
{
	if (j->parent)
		pool_array_ended(j->parent, JOB_COMPLETED);
	pool_job_remove(p, j);
}

/* One user's array of 1,000 does not starve another user's single job:
 * round robin gives the second user the second CPU of the first pass. */
static void test_array_fair(void)
{
	struct config *c = fx_config("q", 1);
	struct dispatch d[8];
	struct pool *p;
	struct pool_waiting w;
	size_t n;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	fx_node(p, "n1", "0-1");
	CU_ASSERT_EQUAL(pool_job_add(p, array_new(1, 1000, "1-1000")), 0);
	CU_ASSERT_EQUAL(pool_job_add(p, job_new(1002, 2000)), 0);
	/* The array counts each waiting subjob for the max_queued limits. */
	pool_waiting_count(p, "q", 1000, &w);
	CU_ASSERT_EQUAL(w.user, 1000);
	CU_ASSERT_EQUAL(w.all, 1001);
	n = pool_schedule(p, c, d, 8);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(d[0].job->uid + d[1].job->uid, 3000);
	for (size_t i = 0; i < n; i++) {
		if (d[i].job->uid == 1000) {
			CU_ASSERT_EQUAL(d[i].job->id, 2);           /* array + 1 + position 0 */
			CU_ASSERT_EQUAL(d[i].job->array_id, 1);
			CU_ASSERT_EQUAL(d[i].job->array_index, 1);
			CU_ASSERT(d[i].job->fresh);
			CU_ASSERT_PTR_EQUAL(pool_job_find(p, 2), d[i].job);
		} else {
			CU_ASSERT_EQUAL(d[i].job->id, 1002);
		}
	}
	pool_waiting_count(p, "q", 1000, &w);
	CU_ASSERT_EQUAL(w.user, 999);
	/* Only the dispatched subjob is a job: the pool holds 3. */
	n = 0;
	for (struct job *j = pool_jobs(p); j; j = j->next)
		n++;
	CU_ASSERT_EQUAL(n, 3);
	pool_destroy(p);
	fx_config_free(c);
}

/* %MAX holds the array to MAX running however many CPUs are free; the
 * array's subjobs come in index order; it ends when all have ended. */
static void test_array_max_and_end(void)
{
	struct config *c = fx_config("q", 1);
	struct pool_array_info info;
	struct dispatch d[8];
	struct pool *p;
	struct job *a;
	size_t n, total = 0;
	int64_t next_index = 0;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	fx_node(p, "n1", "0-7");
	a = array_new(10, 1000, "0-8:2%2");
	CU_ASSERT_EQUAL(pool_job_add(p, a), 0);
	for (int round = 0; round < 10 && total < 5; round++) {
		n = pool_schedule(p, c, d, 8);
		CU_ASSERT(n <= 2);
		pool_array_info(a, &info);
		CU_ASSERT(info.running <= 2);
		for (size_t i = 0; i < n; i++) {
			CU_ASSERT_EQUAL(d[i].job->array_index, next_index);
			next_index += 2;
			d[i].job->fresh = false;
		}
		for (size_t i = 0; i < n; i++)
			finish(p, d[i].job);
		total += n;
	}
	CU_ASSERT_EQUAL(total, 5);
	pool_array_info(a, &info);
	CU_ASSERT_EQUAL(info.untaken, 0);
	CU_ASSERT_EQUAL(info.live, 0);
	CU_ASSERT_EQUAL(info.ended.ok, 5);
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 0);
	pool_destroy(p);
	fx_config_free(c);
}

/* Taken positions (a restart's rows, a subjob held alone) are skipped;
 * untaking gives one back; stopping drops the rest. */
static void test_array_take(void)
{
	struct pool_array_info info;
	struct pool *p;
	struct job *a;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = array_new(1, 1000, "1,3,5-9");
	CU_ASSERT_EQUAL(pool_job_add(p, a), 0);
	pool_array_take(p, a, 0);
	pool_array_take(p, a, 2);
	pool_array_take(p, a, 2);   /* twice: no change */
	pool_array_info(a, &info);
	CU_ASSERT_EQUAL(info.untaken, 5);
	CU_ASSERT_EQUAL(pool_array_next_waiting(a, 0), 1);
	CU_ASSERT_EQUAL(pool_array_next_waiting(a, 2), 3);
	CU_ASSERT(!pool_array_waiting(a, 0) && pool_array_waiting(a, 1) && !pool_array_waiting(a, 2));
	CU_ASSERT(!pool_array_waiting(a, -1) && pool_array_waiting(a, 6) && !pool_array_waiting(a, 7));
	pool_array_untake(p, a, 0);
	CU_ASSERT_EQUAL(pool_array_next_waiting(a, 0), 0);
	CU_ASSERT(pool_array_waiting(a, 0));
	pool_array_stop(p, a);
	CU_ASSERT(!pool_array_waiting(a, 1));
	pool_array_info(a, &info);
	CU_ASSERT_EQUAL(info.untaken, 0);
	CU_ASSERT_EQUAL(info.ended.cancelled, 6);
	CU_ASSERT_EQUAL(pool_array_next_waiting(a, 0), -1);
	pool_destroy(p);
}

/* 100,000 waiting subjobs are one job and a bitmap, not 100,000 jobs. */
static void test_array_memory(void)
{
	struct pool *p;
	struct job *a;
	struct pool_waiting w;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	a = array_new(1, 1000, "1-100000");
	CU_ASSERT_EQUAL(pool_job_add(p, a), 0);
	pool_waiting_count(p, "q", 1000, &w);
	CU_ASSERT_EQUAL(w.user, 100000);
	CU_ASSERT_PTR_EQUAL(pool_jobs(p), a);
	CU_ASSERT_PTR_NULL(a->next);
	pool_destroy(p);
}

/* The arrays in id order, for qstat -t's pages: a page starts at the
 * array whose subjob ids can lie above its cursor. */
static void test_array_seek(void)
{
	struct pool *p;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	CU_ASSERT_PTR_NULL(pool_arrays_at(p, pool_arrays_seek(p, 0)));
	CU_ASSERT_EQUAL(pool_job_add(p, array_new(10, 1000, "1-5")), 0);
	CU_ASSERT_EQUAL(pool_job_add(p, job_new(16, 1000)), 0);
	CU_ASSERT_EQUAL(pool_job_add(p, array_new(20, 1000, "1-5")), 0);
	CU_ASSERT_EQUAL(pool_job_add(p, array_new(30, 1000, "1-5")), 0);
	CU_ASSERT_EQUAL(pool_arrays_at(p, pool_arrays_seek(p, 0))->id, 10);
	CU_ASSERT_EQUAL(pool_arrays_at(p, pool_arrays_seek(p, 12))->id, 10);   /* 12: its subjob */
	CU_ASSERT_EQUAL(pool_arrays_at(p, pool_arrays_seek(p, 20))->id, 20);
	CU_ASSERT_EQUAL(pool_arrays_at(p, pool_arrays_seek(p, 99))->id, 30);
	CU_ASSERT_EQUAL(pool_arrays_at(p, pool_arrays_seek(p, 22) + 1)->id, 30);
	CU_ASSERT_PTR_NULL(pool_arrays_at(p, pool_arrays_seek(p, 30) + 1));
	/* Gone from the pool, gone from the order. */
	pool_job_remove(p, pool_job_find(p, 20));
	pool_job_remove(p, pool_job_find(p, 16));
	CU_ASSERT_EQUAL(pool_arrays_at(p, pool_arrays_seek(p, 22))->id, 10);
	CU_ASSERT_EQUAL(pool_arrays_at(p, pool_arrays_seek(p, 22) + 1)->id, 30);
	pool_destroy(p);
}

static const struct unit_test tests[] = {
	{ "array_seek", test_array_seek },
	{ "array_fair", test_array_fair },
	{ "array_max_and_end", test_array_max_and_end },
	{ "array_take", test_array_take },
	{ "array_memory", test_array_memory },
	{ NULL, NULL },
};

UNIT_SUITE(pool_array, tests);
