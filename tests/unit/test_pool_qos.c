/* SPDX-License-Identifier: MIT */
/* QOS and budgets in the pass (docs/QOS.md): a QOS's priority orders a
 * queue's jobs ahead of its own order, a QOS's per-user CPU limit holds a
 * job with its reason, and an account's CPU-minute budget counts running
 * jobs' committed walltime and is not charged for time given back (a
 * preempted job's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-fixture.h"
#include "pool.h"
#include "qos-pool.h"
#include "reslimits.h"
#include "unit.h"

static struct job *qjob(int64_t id, uid_t uid, const char *qos, const char *account, uint64_t walltime)
{
	struct job *j = fx_job(id, "q", 1, walltime);

	j->uid = uid;
	j->qos = qos ? strdup(qos) : NULL;
	j->account = account ? strdup(account) : NULL;
	return j;
}

/* One CPU, an older job of QOS none and a later one of QOS high: high
 * first when its priority is above 0, the queue's order when it is 0. */
static void test_priority(void)
{
	for (int prio = 0; prio <= 10; prio += 10) {
		struct config *c = fx_config("q", 1);
		struct pool *p = fx_pool_one("0");
		struct dispatch d[4];

		CU_ASSERT_EQUAL(pool_qos_set(p, "high", prio, NULL, "", false), 0);
		pool_job_add(p, qjob(1, 100, NULL, NULL, 100));
		pool_job_add(p, qjob(2, 200, "high", NULL, 100));
		CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 4), 1);
		CU_ASSERT_EQUAL(d[0].job->id, prio ? 2 : 1);
		pool_destroy(p);
		fx_config_free(c);
	}
}

static void test_limit(void)
{
	struct config *c = fx_config("q", 1);
	struct pool *p = fx_pool_one("0-7");
	struct pool_qos_limits lim = { 2, -1, -1, -1, -1 };
	struct dispatch d[4];
	char why[200];

	CU_ASSERT_EQUAL(pool_qos_set(p, "lim", 0, &lim, "", false), 0);
	for (int i = 1; i <= 3; i++)
		pool_job_add(p, qjob(i, 100, "lim", NULL, 100));
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 4), 2);
	CU_ASSERT_EQUAL(pool_job_find(p, 3)->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(pool_request_limit_wait(p, &c->queues[0], pool_job_find(p, 3), why, sizeof(why)), 1);
	CU_ASSERT_STRING_EQUAL(why, "QOSMaxCpuPerUserLimit: qos lim: the user's jobs hold 2/2 CPUs, the job asks 1");
	/* Another user of the QOS is not held by the first's. */
	pool_job_add(p, qjob(4, 200, "lim", NULL, 100));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 4), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 4);
	/* One of the user's ends: its third starts. */
	pool_job_remove(p, pool_job_find(p, 1));
	CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 4), 1);
	CU_ASSERT_EQUAL(d[0].job->id, 3);
	CU_ASSERT_TRUE(pool_qos_preempts(p, "lim", "x") == false);
	pool_destroy(p);
	fx_config_free(c);
}

/* GrpTRES=cpu=3 over all users of the QOS, MaxJobsPerUser=1 per user. */
static void test_grp_jobs(void)
{
	struct config *c = fx_config("q", 1);
	struct pool *p = fx_pool_one("0-7");
	struct pool_qos_limits grp = { -1, -1, -1, 3, -1 }, jobs = { -1, -1, 1, -1, -1 };
	struct dispatch d[8];
	char why[200];

	CU_ASSERT_EQUAL(pool_qos_set(p, "grp", 0, &grp, "", false), 0);
	CU_ASSERT_EQUAL(pool_qos_set(p, "one", 0, &jobs, "", false), 0);
	for (int i = 1; i <= 4; i++)
		pool_job_add(p, qjob(i, 100 + i, "grp", NULL, 100));
	pool_job_add(p, qjob(5, 100, "one", NULL, 100));
	pool_job_add(p, qjob(6, 100, "one", NULL, 100));
	CU_ASSERT_EQUAL(pool_schedule(p, c, d, 8), 4);
	CU_ASSERT_EQUAL(pool_request_limit_wait(p, &c->queues[0], pool_job_find(p, 4), why, sizeof(why)), 1);
	CU_ASSERT_STRING_EQUAL(why, "QOSGrpCpuLimit: qos grp: 3/3 CPUs in use, the job asks 1");
	CU_ASSERT_EQUAL(pool_request_limit_wait(p, &c->queues[0], pool_job_find(p, 6), why, sizeof(why)), 1);
	CU_ASSERT_STRING_EQUAL(why, "QOSMaxJobsPerUserLimit: qos one: the user's jobs: 1/1 running");
	pool_destroy(p);
	fx_config_free(c);
}

/* A budget of 1 CPU-minute: a job of walltime 60 commits it all; a
 * second waits; the first's 30 s given back (preempted), the second
 * (walltime 40) fits; charged, it would not. */
static void test_budget(void)
{
	for (int give_back = 0; give_back <= 1; give_back++) {
		struct config *c = fx_config("q", 1);
		struct pool *p = fx_pool_one("0-7");
		struct dispatch d[4];
		char why[240];
		struct job *j1;

		CU_ASSERT_EQUAL(pool_acct_budget_set(p, "phys", 1, -1), 0);
		pool_job_add(p, qjob(1, 100, NULL, "phys", 60));
		pool_job_add(p, qjob(2, 100, NULL, "phys", 40));
		CU_ASSERT_EQUAL_FATAL(pool_schedule(p, c, d, 4), 1);
		CU_ASSERT_EQUAL(d[0].job->id, 1);
		CU_ASSERT_EQUAL(pool_request_limit_wait(p, &c->queues[0], pool_job_find(p, 2), why, sizeof(why)), 1);
		CU_ASSERT_STRING_EQUAL(why, "AssocGrpCPUMinutesLimit: account phys: 0.0/1 CPU-minutes used, running jobs "
				       "commit 1.0 more, the job asks 0.7");
		pool_clock_set(p, 1030);
		j1 = pool_job_find(p, 1);
		if (give_back)
			pool_acct_usage_adjust(p, j1, -30, 1030);
		pool_job_remove(p, j1);
		CU_ASSERT_EQUAL(pool_schedule(p, c, d, 4), give_back ? 1 : 0);
		if (!give_back) {
			CU_ASSERT_EQUAL(pool_request_limit_wait(p, &c->queues[0], pool_job_find(p, 2), why, sizeof(why)),
					1);
			CU_ASSERT_PTR_NOT_NULL(strstr(why, "account phys: 0.5/1 CPU-minutes used, running jobs commit 0.0"));
		}
		pool_destroy(p);
		fx_config_free(c);
	}
}

/* A QOS's PreemptMode=suspend, kept by pool_qos_set and dropped by
 * pool_qos_clear until set again; an unknown QOS or none does not. */
static void test_suspends(void)
{
	struct pool *p = fx_pool_one("0");

	CU_ASSERT_EQUAL(pool_qos_set(p, "scav", 0, NULL, "", true), 0);
	CU_ASSERT_EQUAL(pool_qos_set(p, "high", 10, NULL, "scav", false), 0);
	CU_ASSERT_TRUE(pool_qos_suspends(p, "scav"));
	CU_ASSERT_FALSE(pool_qos_suspends(p, "high"));
	CU_ASSERT_FALSE(pool_qos_suspends(p, "nosuch"));
	CU_ASSERT_FALSE(pool_qos_suspends(p, NULL));
	CU_ASSERT_TRUE(pool_qos_preempts(p, "high", "scav"));
	pool_qos_clear(p);
	CU_ASSERT_FALSE(pool_qos_suspends(p, "scav"));
	CU_ASSERT_EQUAL(pool_qos_set(p, "scav", 0, NULL, "", false), 0);
	CU_ASSERT_FALSE(pool_qos_suspends(p, "scav"));
	pool_destroy(p);
}

static const struct unit_test pool_qos_tests[] = {
	{ "priority", test_priority },
	{ "limit", test_limit },
	{ "group and jobs limits", test_grp_jobs },
	{ "budget", test_budget },
	{ "PreemptMode=suspend", test_suspends },
	{ NULL, NULL },
};

UNIT_SUITE(pool_qos, pool_qos_tests);
