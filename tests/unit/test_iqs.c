/* SPDX-License-Identifier: MIT */
/* IQS ordering from tables: round robin, rotation memory, holds, limits. */
#include <stdio.h>
#include <string.h>

#include "iqs.h"
#include "unit.h"

#define A 1001
#define B 1002
#define C 1003

struct case_ {
	const char *name;
	struct iqs_job jobs[24];
	size_t n;
	struct iqs_user users[4];
	size_t n_users;
	struct iqs_limits lim;
	int64_t want[24];          /* ids in order */
	enum iqs_hold holds[24];   /* per position; default IQS_GO */
};

static void run_case(const struct case_ *c)
{
	struct iqs_entry e[24];
	size_t got = iqs_order(c->jobs, c->n, c->users, c->n_users, &c->lim, e);

	CU_ASSERT_EQUAL_FATAL(got, c->n);
	for (size_t i = 0; i < got; i++) {
		if (e[i].job->id != c->want[i] || e[i].hold != c->holds[i])
			fprintf(stderr, "\n  %s: place %zu is job %lld (%s), want %lld (%s)", c->name, i + 1,
				(long long)e[i].job->id, iqs_hold_name(e[i].hold), (long long)c->want[i],
				iqs_hold_name(c->holds[i]));
		CU_ASSERT_EQUAL(e[i].job->id, c->want[i]);
		CU_ASSERT_EQUAL(e[i].hold, c->holds[i]);
	}
}

static void test_round_robin(void)
{
	/* Three users with 4, 3 and 1 jobs, submitted user by user. */
	struct case_ c = {
		.name = "4-3-1",
		.jobs = { { 1, A, 0 }, { 2, A, 0 }, { 3, A, 0 }, { 4, A, 0 },
			  { 5, B, 0 }, { 6, B, 0 }, { 7, B, 0 }, { 8, C, 0 } },
		.n = 8,
		.want = { 1, 5, 8, 2, 6, 3, 7, 4 },
	};

	run_case(&c);
}

static void test_priority_within_user(void)
{
	/* qsub -p: A's job 3 (priority 5) goes before A's older ones, but
	 * B still gets the second place: priority orders a user's own jobs. */
	struct case_ c = {
		.name = "-p",
		.jobs = { { 1, A, 0, 0 }, { 2, A, 0, 0 }, { 3, A, 0, 5 }, { 4, B, 0, 0 },
			  { 5, B, 0, -1 }, { 6, B, 0, 0 } },
		.n = 6,
		.want = { 3, 4, 1, 6, 2, 5 },
	};

	run_case(&c);
}

static void test_hog_then_one(void)
{
	/* A submitted 40 and was served once; B's one job goes next, not 41st. */
	struct case_ c = { .name = "40+1", .n = 21, .n_users = 1 };

	for (int i = 0; i < 20; i++)
		c.jobs[i] = (struct iqs_job){ .id = i + 2, .uid = A };
	c.jobs[20] = (struct iqs_job){ .id = 42, .uid = B };
	c.users[0] = (struct iqs_user){ .uid = A, .last_served = 1, .running = 1 };
	c.want[0] = 42;
	for (int i = 0; i < 20; i++)
		c.want[i + 1] = i + 2;
	run_case(&c);
}

static void test_rotation_memory(void)
{
	/* A's oldest job is older, but A was served after B: B goes first. */
	struct case_ c = {
		.name = "rotation",
		.jobs = { { 10, A, 0 }, { 11, A, 0 }, { 12, B, 0 } },
		.n = 3,
		.users = { { A, 7, 0 }, { B, 5, 0 } },
		.n_users = 2,
		.want = { 12, 10, 11 },
	};

	run_case(&c);
	/* Never-served users come before every served one. */
	c.users[1].last_served = 0;
	c.users[0].last_served = 1;
	run_case(&c);
	/* Equal standing: whose oldest job is oldest. */
	c.users[0].last_served = 0;
	memcpy(c.want, (int64_t[]){ 10, 12, 11 }, 3 * sizeof(int64_t));
	run_case(&c);
}

static void test_held_and_limits(void)
{
	struct case_ held = {
		.name = "held",
		.jobs = { { 1, A, 1 }, { 2, A, 0 }, { 3, B, 0 }, { 4, B, 1 } },
		.n = 4,
		.want = { 2, 3, 1, 4 },
		.holds = { IQS_GO, IQS_GO, IQS_HELD, IQS_HELD },
	};
	struct case_ per_user = {
		.name = "per-user limit",
		.jobs = { { 1, A, 0 }, { 2, A, 0 }, { 3, A, 0 }, { 4, B, 0 } },
		.n = 4,
		.users = { { A, 3, 1 } },
		.n_users = 1,
		.lim = { .max_running_per_user = 2, .running = 1 },
		.want = { 4, 1, 2, 3 },
		.holds = { IQS_GO, IQS_GO, IQS_USER_LIMIT, IQS_USER_LIMIT },
	};
	struct case_ queue = {
		.name = "queue limit",
		.jobs = { { 1, A, 0 }, { 2, B, 0 }, { 3, C, 0 } },
		.n = 3,
		.lim = { .max_running = 3, .running = 1 },
		.want = { 1, 2, 3 },
		.holds = { IQS_GO, IQS_GO, IQS_QUEUE_LIMIT },
	};

	run_case(&held);
	run_case(&per_user);
	run_case(&queue);
}

static void test_empty(void)
{
	struct iqs_limits lim = { 0 };
	struct iqs_entry e[1];

	CU_ASSERT_EQUAL(iqs_order(NULL, 0, NULL, 0, &lim, e), 0);
}

static const struct unit_test iqs_tests[] = {
	{ "round_robin", test_round_robin },
	{ "priority_within_user", test_priority_within_user },
	{ "hog_then_one", test_hog_then_one },
	{ "rotation_memory", test_rotation_memory },
	{ "held_and_limits", test_held_and_limits },
	{ "empty", test_empty },
	{ NULL, NULL },
};

UNIT_SUITE(iqs, iqs_tests);
