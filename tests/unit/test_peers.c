/* SPDX-License-Identifier: MIT */
/* lib/peers: per-uid connection caps and log rate limits. */
#include <errno.h>

#include "peers.h"
#include "unit.h"

static void test_conn_cap(void)
{
	struct peers *p;

	CU_ASSERT_EQUAL_FATAL(peers_create(&p), 0);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(peers_conn_add(p, 1001, 3), 0);
	CU_ASSERT_EQUAL(peers_conn_add(p, 1001, 3), -EUSERS);
	CU_ASSERT_EQUAL(peers_conns(p, 1001), 3);
	/* Another user has a share of its own; root has no cap here. */
	CU_ASSERT_EQUAL(peers_conn_add(p, 1002, 3), 0);
	for (int i = 0; i < 10; i++)
		CU_ASSERT_EQUAL(peers_conn_add(p, 0, 3), 0);
	peers_conn_del(p, 1001);
	CU_ASSERT_EQUAL(peers_conn_add(p, 1001, 3), 0);
	/* 0: no cap. */
	CU_ASSERT_EQUAL(peers_conn_add(p, 1001, 0), 0);
	/* Many uids: the table grows and keeps every count. */
	for (uid_t u = 2000; u < 3000; u++)
		CU_ASSERT_EQUAL(peers_conn_add(p, u, 1), 0);
	for (uid_t u = 2000; u < 3000; u++)
		CU_ASSERT_EQUAL(peers_conn_add(p, u, 1), -EUSERS);
	CU_ASSERT_EQUAL(peers_conns(p, 1001), 4);
	CU_ASSERT_EQUAL(peers_conns(p, 0), 10);
	CU_ASSERT_EQUAL(peers_conns(p, 4242), 0);
	/* Input bytes per uid: added, taken back, never below 0. */
	CU_ASSERT_EQUAL(peers_input_add(p, 1001, 1 << 20), 1 << 20);
	CU_ASSERT_EQUAL(peers_input_add(p, 1001, 4096), (1 << 20) + 4096);
	CU_ASSERT_EQUAL(peers_input_add(p, 1002, 100), 100);
	CU_ASSERT_EQUAL(peers_input_add(p, 1001, -(1 << 20)), 4096);
	CU_ASSERT_EQUAL(peers_input_add(p, 1001, -8192), 0);
	peers_destroy(p);
}

struct seen {
	unsigned calls, count;
	uid_t uid;
	pid_t pid;
};

static void note_suppressed(uid_t uid, pid_t pid, unsigned count, void *ud)
{
	struct seen *s = ud;

	s->calls++;
	s->count = count;
	s->uid = uid;
	s->pid = pid;
}

static void test_log_rate(void)
{
	const int64_t t0 = 1000000000LL;
	struct seen seen = { 0 };
	struct peers *p;
	unsigned passed = 0;

	CU_ASSERT_EQUAL_FATAL(peers_create(&p), 0);
	for (int i = 0; i < 1000; i++)
		passed += peers_log_pass(p, 1001, 77 + (i == 999), t0 + i);
	CU_ASSERT_EQUAL(passed, PEERS_LOG_BURST);
	/* Another uid is not silenced by the first. */
	CU_ASSERT_TRUE(peers_log_pass(p, 1002, 5, t0));
	/* Before the interval ends: no summary yet. */
	peers_log_flush(p, t0 + PEERS_LOG_INTERVAL_NS / 2, note_suppressed, &seen);
	CU_ASSERT_EQUAL(seen.calls, 0);
	peers_log_flush(p, t0 + PEERS_LOG_INTERVAL_NS, note_suppressed, &seen);
	CU_ASSERT_EQUAL(seen.calls, 1);
	CU_ASSERT_EQUAL(seen.count, 1000 - PEERS_LOG_BURST);
	CU_ASSERT_EQUAL(seen.uid, 1001);
	CU_ASSERT_EQUAL(seen.pid, 78);
	/* A new interval: lines pass again, and nothing more to sum up. */
	CU_ASSERT_TRUE(peers_log_pass(p, 1001, 77, t0 + PEERS_LOG_INTERVAL_NS + 1));
	peers_log_flush(p, t0 + 3 * PEERS_LOG_INTERVAL_NS, note_suppressed, &seen);
	CU_ASSERT_EQUAL(seen.calls, 1);
	peers_destroy(p);
}

static const struct unit_test peers_tests[] = {
	{ "conn_cap", test_conn_cap },
	{ "log_rate", test_log_rate },
	{ NULL, NULL },
};

UNIT_SUITE(peers, peers_tests);
