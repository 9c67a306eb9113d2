/* SPDX-License-Identifier: MIT */
/* Tasks' stdin windows: what gded grants, bounded for the job (inwin.h),
 * and how an agent counts them (taskclient.h). */
#include "gded-internal.h"
#include "inwin.h"
#include "taskclient.h"
#include "unit.h"

/* GDED_TASKS_MAX tasks, each sent its whole window and taking nothing:
 * the sum never passes the job's bound, however they come. */
static void test_inwin_bound_many_tasks(void)
{
	static struct inwin w[GDED_TASKS_MAX];
	struct inwin_job j = { 0 };
	size_t sum = 0;

	for (size_t i = 0; i < GDED_TASKS_MAX; i++) {
		inwin_open(&j, &w[i]);
		/* The first 8 KiB were taken: each is granted what its share lets. */
		inwin_consume(&j, &w[i], 8192);
		(void)inwin_grant(&j, &w[i], true, i + 1);
	}
	for (size_t i = 0; i < GDED_TASKS_MAX; i++) {
		CU_ASSERT(w[i].win <= TASKCLIENT_IN_WINDOW);
		sum += w[i].win;
	}
	CU_ASSERT(j.extra <= INWIN_JOB_EXTRA);
	CU_ASSERT(sum <= (size_t)GDED_TASKS_MAX * TASKCLIENT_IN_START + INWIN_JOB_EXTRA);
	/* 300 tasks: about 13 MiB, not 300 windows of 1 MiB. */
	sum = 0;
	for (size_t i = 0; i < 300; i++)
		sum += w[i].win;
	CU_ASSERT(sum <= 300 * TASKCLIENT_IN_START + INWIN_JOB_EXTRA);
	for (size_t i = 0; i < GDED_TASKS_MAX; i++)
		inwin_release(&j, &w[i]);
	CU_ASSERT_EQUAL(j.extra, 0);
}

/* One task alone grows to a whole window as it takes its input; a
 * second one shares the pool; a task whose stdin closed is granted back
 * its start only, to drop what still comes. */
static void test_inwin_grant_share(void)
{
	struct inwin_job j = { 0 };
	struct inwin a = { 0 }, b = { 0 }, c = { 0 };
	size_t g;

	inwin_open(&j, &a);
	CU_ASSERT_EQUAL(a.win, TASKCLIENT_IN_START);
	CU_ASSERT_EQUAL(inwin_grant(&j, &a, true, 1), TASKCLIENT_IN_WINDOW - TASKCLIENT_IN_START);
	CU_ASSERT_EQUAL(a.win, TASKCLIENT_IN_WINDOW);
	/* Less than INWIN_GRANT_MIN back: nothing yet. */
	inwin_consume(&j, &a, 100);
	CU_ASSERT_EQUAL(inwin_grant(&j, &a, true, 1), 0);
	inwin_consume(&j, &a, INWIN_GRANT_MIN);
	CU_ASSERT_EQUAL(inwin_grant(&j, &a, true, 1), INWIN_GRANT_MIN + 100);
	/* The pool taken by others: b keeps its start, and gets its share
	 * once it is free. */
	j.extra += INWIN_JOB_EXTRA - (TASKCLIENT_IN_WINDOW - TASKCLIENT_IN_START);
	inwin_open(&j, &b);
	inwin_consume(&j, &b, TASKCLIENT_IN_START);
	CU_ASSERT_EQUAL(inwin_grant(&j, &b, true, 2), TASKCLIENT_IN_START);
	CU_ASSERT_EQUAL(j.extra, INWIN_JOB_EXTRA);
	j.extra -= INWIN_JOB_EXTRA - (TASKCLIENT_IN_WINDOW - TASKCLIENT_IN_START);
	inwin_consume(&j, &b, TASKCLIENT_IN_START);
	g = inwin_grant(&j, &b, true, 2);
	CU_ASSERT_EQUAL(g, TASKCLIENT_IN_WINDOW);
	CU_ASSERT_EQUAL(j.extra, 2 * (TASKCLIENT_IN_WINDOW - TASKCLIENT_IN_START));
	inwin_release(&j, &b);
	/* Its stdin closed: back to its start, no more. */
	inwin_open(&j, &c);
	inwin_consume(&j, &c, TASKCLIENT_IN_START);
	CU_ASSERT_EQUAL(inwin_grant(&j, &c, false, 1), TASKCLIENT_IN_START);
	CU_ASSERT_EQUAL(inwin_grant(&j, &c, false, 1), 0);
	/* A sender past its window empties it, no further. */
	inwin_consume(&j, &c, 10 * TASKCLIENT_IN_WINDOW);
	CU_ASSERT_EQUAL(c.win, 0);
	inwin_release(&j, &c);
	inwin_release(&j, &a);
	CU_ASSERT_EQUAL(j.extra, 0);
}

/* The agent: it starts with TASKCLIENT_IN_START, reads only what fits in
 * base64, and a grant past a whole window counts for a window only. */
static void test_taskclient_window(void)
{
	long long f = 0;

	CU_ASSERT_EQUAL(taskclient_window_room(0, 49152), TASKCLIENT_IN_START / 4 * 3);
	CU_ASSERT_EQUAL(taskclient_window_room(0, 100), 100);
	CU_ASSERT_EQUAL(taskclient_window_room(TASKCLIENT_IN_START - 3, 49152), 0);
	CU_ASSERT_EQUAL(taskclient_window_room(TASKCLIENT_IN_START - 4, 49152), 3);
	CU_ASSERT_EQUAL(taskclient_window_room(3 * (long long)TASKCLIENT_IN_WINDOW, 49152), 0);
	f = TASKCLIENT_IN_START;
	taskclient_window_ack(&f, 4096);
	CU_ASSERT_EQUAL(f, TASKCLIENT_IN_START - 4096);
	taskclient_window_ack(&f, 0);
	taskclient_window_ack(&f, -5);
	CU_ASSERT_EQUAL(f, TASKCLIENT_IN_START - 4096);
	/* Granted a whole window ahead: 64 KiB may go at once. */
	f = 0;
	taskclient_window_ack(&f, TASKCLIENT_IN_WINDOW - TASKCLIENT_IN_START);
	CU_ASSERT_EQUAL(taskclient_window_room(f, 49152), 49152);
	taskclient_window_ack(&f, 1LL << 40);
	CU_ASSERT_EQUAL(f, -(long long)(TASKCLIENT_IN_WINDOW - TASKCLIENT_IN_START));
}

static const struct unit_test inwin_tests[] = {
	{ "the job's stdin bound holds for GDED_TASKS_MAX tasks", test_inwin_bound_many_tasks },
	{ "a window grows alone, shares the pool, shrinks when closed", test_inwin_grant_share },
	{ "an agent reads what fits its window", test_taskclient_window },
	{ NULL, NULL },
};

UNIT_SUITE(inwin, inwin_tests);
