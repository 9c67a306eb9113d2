/* SPDX-License-Identifier: MIT */
/* The job store's lease: two handles on one store (a SQLite file, or one
 * PostgreSQL database in the _pg suites), as two qpoold share one store:
 * acquire, renew, expiry, release, and the fence that refuses a writer
 * whose lease another server took. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobstore.h"
#include "unit.h"

static const struct job_submit sub = {
	.name = "fenced", .queue = "batch", .owner = "alice", .uid = 1001, .gid = 1001,
	.ncpus = 1, .walltime = 60, .workdir = "/tmp", .stdout_path = "", .stderr_path = "",
	.env_json = "{}", .script = "#!/bin/sh\n", .t_submit = 1,
};

/* Another handle on the store of this test (dir's file, or the suite's
 * PostgreSQL database). */
static struct jobstore *open_at(const char *dir)
{
	char path[512];
	struct jobstore *js = NULL;
	struct error err;

	if (unit_store_dsn()) {
		CU_ASSERT_EQUAL(jobstore_open(JOBSTORE_POSTGRESQL, unit_store_dsn(), &js, &err), 0);
		return js;
	}
	snprintf(path, sizeof(path), "%s/qpool.db", dir);
	CU_ASSERT_EQUAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), 0);
	return js;
}

/* The test's first handle: on PostgreSQL the database is emptied first. */
static struct jobstore *open_first(const char *dir)
{
	struct jobstore *js = NULL;
	struct error err;

	if (!unit_store_dsn())
		return open_at(dir);
	CU_ASSERT_EQUAL(unit_store_open(&js, &err), 0);
	return js;
}

static unsigned jobs_in(struct jobstore *js)
{
	struct jobstore_filter f = { .finished = true };
	json_t *arr;
	unsigned n;

	if (jobstore_query(js, &f, &arr) < 0)
		return ~0u;
	n = json_array_size(arr);
	json_decref(arr);
	return n;
}

/* Waits (bounded: 10 s) until the store's clock passes the lease's end. */
static bool lease_expired_wait(struct jobstore *js)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	struct jobstore_lease l;

	for (int i = 0; i < 1000; i++) {
		if (jobstore_lease_read(js, &l) < 0)
			return false;
		if (l.now >= l.expires)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/* A fresh store's lease is free: the first server takes it at epoch 1, a
 * second one is refused while it runs, and reads name the holder. */
static void test_acquire(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *a = open_first(dir), *b = open_at(dir);
	struct jobstore_lease l;
	int64_t ea = 0, eb = 0;

	CU_ASSERT_EQUAL_FATAL(jobstore_lease_read(a, &l), 0);
	CU_ASSERT_STRING_EQUAL(l.holder, "");
	CU_ASSERT_EQUAL(l.epoch, 0);
	CU_ASSERT_EQUAL(jobstore_lease_acquire(a, "h1:/run/a.sock", "h1:15001", 60000, &ea), 0);
	CU_ASSERT_EQUAL(ea, 1);
	CU_ASSERT_EQUAL(jobstore_lease_acquire(b, "h2:/run/b.sock", "h2:15001", 60000, &eb), -EBUSY);
	CU_ASSERT_EQUAL_FATAL(jobstore_lease_read(b, &l), 0);
	CU_ASSERT_STRING_EQUAL(l.holder, "h1:/run/a.sock");
	CU_ASSERT_STRING_EQUAL(l.address, "h1:15001");
	CU_ASSERT_EQUAL(l.epoch, 1);
	CU_ASSERT(l.expires > l.now && l.expires <= l.now + 60000);
	/* The holder writes; the refused one is not fenced (it never held it). */
	CU_ASSERT_EQUAL(jobstore_begin(a), 0);
	CU_ASSERT_EQUAL(jobstore_commit(a), 0);
	CU_ASSERT_FALSE(jobstore_lease_lost(b));
	CU_ASSERT_EQUAL(jobstore_lease_acquire(a, "", "x", 1000, &ea), -EINVAL);
	jobstore_close(a);
	jobstore_close(b);
	unit_tmpdir_remove(dir);
}

/* The lease runs out unless renewed; once it did, another server takes it
 * at the next epoch, and the old holder's writes are refused from then on,
 * its transaction written nothing. */
static void test_expiry_fences_old_writer(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *a = open_first(dir), *b = open_at(dir);
	struct jobstore_lease before, after;
	int64_t ea = 0, eb = 0, id;

	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(a, "a", "ha:1", 200, &ea), 0);
	CU_ASSERT_EQUAL(jobstore_lease_read(a, &before), 0);
	CU_ASSERT_EQUAL(jobstore_lease_renew(a), 0);
	CU_ASSERT_EQUAL(jobstore_lease_read(a, &after), 0);
	CU_ASSERT(after.expires >= before.expires);
	CU_ASSERT_EQUAL(jobstore_lease_acquire(b, "b", "hb:1", 200, &eb), -EBUSY);

	CU_ASSERT_FATAL(lease_expired_wait(b));
	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(b, "b", "hb:1", 60000, &eb), 0);
	CU_ASSERT_EQUAL(eb, ea + 1);

	/* The old holder, back from its pause, tries to write. */
	CU_ASSERT_EQUAL(jobstore_begin(a), -ESTALE);
	CU_ASSERT_TRUE(jobstore_lease_lost(a));
	CU_ASSERT_EQUAL(jobstore_lease_renew(a), -ESTALE);
	CU_ASSERT_EQUAL(jobstore_begin(a), -ESTALE);
	CU_ASSERT_EQUAL(jobs_in(b), 0);

	/* The new one writes as before. */
	CU_ASSERT_EQUAL(jobstore_begin(b), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(b, &sub, &id), 0);
	CU_ASSERT_EQUAL(jobstore_commit(b), 0);
	CU_ASSERT_EQUAL(jobs_in(a), 1);
	CU_ASSERT_EQUAL(jobstore_lease_read(a, &after), 0);
	CU_ASSERT_STRING_EQUAL(after.holder, "b");
	CU_ASSERT_EQUAL(after.epoch, eb);
	jobstore_close(a);
	jobstore_close(b);
	unit_tmpdir_remove(dir);
}

/* An expired lease nobody took is still its holder's: its epoch did not
 * move, so nobody else wrote, and the next begin renews it. */
static void test_expired_untaken_renews(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *a = open_first(dir);
	struct jobstore_lease l;
	int64_t ea = 0;

	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(a, "a", "ha:1", 50, &ea), 0);
	CU_ASSERT_FATAL(lease_expired_wait(a));
	CU_ASSERT_EQUAL(jobstore_begin(a), 0);
	CU_ASSERT_EQUAL(jobstore_commit(a), 0);
	CU_ASSERT_EQUAL(jobstore_lease_read(a, &l), 0);
	CU_ASSERT_EQUAL(l.epoch, ea);
	jobstore_close(a);
	unit_tmpdir_remove(dir);
}

/* A restart of the same server (same holder id) takes its lease back at
 * once, at a new epoch, which fences its previous incarnation; a clean
 * stop (release) hands it to another server at once. */
static void test_same_holder_and_release(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *a = open_first(dir), *a2 = open_at(dir), *b = open_at(dir);
	int64_t ea = 0, ea2 = 0, eb = 0;

	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(a, "a", "ha:1", 60000, &ea), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(a2, "a", "ha:1", 60000, &ea2), 0);
	CU_ASSERT_EQUAL(ea2, ea + 1);
	CU_ASSERT_EQUAL(jobstore_begin(a), -ESTALE);
	CU_ASSERT_EQUAL(jobstore_lease_acquire(b, "b", "hb:1", 60000, &eb), -EBUSY);
	CU_ASSERT_EQUAL(jobstore_lease_release(a2), 0);
	CU_ASSERT_EQUAL(jobstore_begin(a2), -ESTALE);
	CU_ASSERT_EQUAL(jobstore_lease_acquire(b, "b", "hb:1", 60000, &eb), 0);
	CU_ASSERT_EQUAL(eb, ea2 + 1);
	jobstore_close(a);
	jobstore_close(a2);
	jobstore_close(b);
	unit_tmpdir_remove(dir);
}

struct seen {
	unsigned n;
	char line[4][128];
};

static int seen_collect(const char *id, const char *address, const char *role, int64_t age_ms, void *ud)
{
	struct seen *s = ud;

	if (s->n < 4)
		snprintf(s->line[s->n++], sizeof(s->line[0]), "%s %s %s %s", id, address, role,
			 age_ms >= 0 && age_ms < 10000 ? "recent" : "old");
	return 0;
}

/* Each server stamps its row; the list names them by id with their role. */
static void test_servers_seen(void)
{
	struct jobstore *js;
	struct error err;
	struct seen s = { 0 };

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_server_seen(js, "b", "hb:1", "standby"), 0);
	CU_ASSERT_EQUAL(jobstore_server_seen(js, "a", "ha:1", "standby"), 0);
	CU_ASSERT_EQUAL(jobstore_server_seen(js, "a", "ha:2", "active"), 0);
	CU_ASSERT_EQUAL(jobstore_servers_load(js, seen_collect, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 2);
	CU_ASSERT_STRING_EQUAL(s.line[0], "a ha:2 active recent");
	CU_ASSERT_STRING_EQUAL(s.line[1], "b hb:1 standby recent");
	jobstore_close(js);
}

/* The active's renewal with its stamp (docs/HA.md, "The lease's
 * commit"): one transaction moves the lease's end and writes the row as
 * active; a holder whose lease another server took writes neither. */
static void test_renew_seen(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *a = open_first(dir), *b = open_at(dir);
	struct jobstore_lease before, after;
	struct seen s = { 0 };
	int64_t ea = 0, eb = 0;

	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(a, "a", "ha:1", 300, &ea), 0);
	CU_ASSERT_EQUAL(jobstore_server_seen(a, "a", "ha:1", "standby"), 0);
	CU_ASSERT_EQUAL(jobstore_lease_read(a, &before), 0);
	CU_ASSERT_EQUAL(jobstore_lease_renew_seen(a, "ha:2"), 0);
	CU_ASSERT_EQUAL(jobstore_lease_read(b, &after), 0);
	CU_ASSERT(after.expires >= before.expires);
	CU_ASSERT_EQUAL(after.epoch, ea);
	CU_ASSERT_EQUAL(jobstore_servers_load(b, seen_collect, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 1);
	CU_ASSERT_STRING_EQUAL(s.line[0], "a ha:2 active recent");

	CU_ASSERT_FATAL(lease_expired_wait(b));
	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(b, "b", "hb:1", 60000, &eb), 0);
	CU_ASSERT_EQUAL(jobstore_lease_renew_seen(a, "ha:3"), -ESTALE);
	CU_ASSERT_TRUE(jobstore_lease_lost(a));
	CU_ASSERT_EQUAL(jobstore_lease_read(a, &after), 0);
	CU_ASSERT_STRING_EQUAL(after.holder, "b");
	s.n = 0;
	CU_ASSERT_EQUAL(jobstore_servers_load(b, seen_collect, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 1);
	CU_ASSERT_STRING_EQUAL(s.line[0], "a ha:2 active recent");
	jobstore_close(a);
	jobstore_close(b);
	unit_tmpdir_remove(dir);
}

/* The pool's name (docs/HA.md, "What names a job id"): none in a fresh
 * store; what one server writes, the other reads; a rename replaces it;
 * a server whose lease was taken cannot write it (the fence). */
static void test_pool_name(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *a = open_first(dir), *b = open_at(dir);
	char name[64] = "";
	int64_t ea = 0, eb = 0;

	CU_ASSERT_EQUAL(jobstore_pool_name_read(a, name, sizeof(name)), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(a, "a", "ha:1", 200, &ea), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_begin(a), 0);
	CU_ASSERT_EQUAL(jobstore_pool_name_set(a, "h1"), 0);
	CU_ASSERT_EQUAL(jobstore_commit(a), 0);
	CU_ASSERT_EQUAL(jobstore_pool_name_read(b, name, sizeof(name)), 0);
	CU_ASSERT_STRING_EQUAL(name, "h1");

	CU_ASSERT_FATAL(lease_expired_wait(b));
	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(b, "b", "hb:1", 60000, &eb), 0);
	CU_ASSERT_EQUAL(jobstore_begin(a), -ESTALE);
	CU_ASSERT_EQUAL_FATAL(jobstore_begin(b), 0);
	CU_ASSERT_EQUAL(jobstore_pool_name_set(b, "pool1"), 0);
	CU_ASSERT_EQUAL(jobstore_commit(b), 0);
	CU_ASSERT_EQUAL(jobstore_pool_name_read(a, name, sizeof(name)), 0);
	CU_ASSERT_STRING_EQUAL(name, "pool1");
	jobstore_close(a);
	jobstore_close(b);
	unit_tmpdir_remove(dir);
}

/* Waits (bounded: 10 s) until the store's clock passes at, as js reads it. */
static bool store_clock_wait(struct jobstore *js, int64_t at)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	struct jobstore_lease l;

	for (int i = 0; i < 1000; i++) {
		if (jobstore_lease_read(js, &l) < 0)
			return false;
		if (l.now >= at)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/* PostgreSQL: the holder's renewal at begin keeps the lease row locked to
 * its commit, so a takeover after the lease's committed end waits for
 * that transaction (and gives up, -EBUSY, at its lock timeout) instead of
 * writing beside it; the transaction commits whole, and the takeover
 * comes after. */
static void test_takeover_waits_for_transaction(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *a = open_first(dir), *b = open_at(dir);
	struct jobstore_lease l;
	int64_t ea = 0, eb = 0, id;

	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(a, "a", "ha:1", 3000, &ea), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_lease_read(a, &l), 0);
	CU_ASSERT_FATAL(store_clock_wait(a, l.expires - 500));
	CU_ASSERT_EQUAL_FATAL(jobstore_begin(a), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(a, &sub, &id), 0);
	/* b sees the committed row: expired. Its UPDATE waits on a's lock. */
	CU_ASSERT_FATAL(store_clock_wait(b, l.expires));
	CU_ASSERT_EQUAL(jobstore_lease_acquire(b, "b", "hb:1", 3000, &eb), -EBUSY);
	CU_ASSERT_EQUAL(jobstore_commit(a), 0);
	CU_ASSERT_EQUAL(jobs_in(b), 1);
	CU_ASSERT_EQUAL(jobstore_lease_read(b, &l), 0);
	CU_ASSERT_STRING_EQUAL(l.holder, "a");
	CU_ASSERT_EQUAL(l.epoch, ea);
	CU_ASSERT(l.expires > l.now);
	jobstore_close(a);
	jobstore_close(b);
	unit_tmpdir_remove(dir);
}

/* PostgreSQL: a holder stuck inside a transaction (paused, hung) does not
 * keep the lease for ever: the server ends its session after a lease of
 * idling, its transaction is rolled back, another server takes over, and
 * the stuck one, back, is refused. */
static void test_stuck_holder_loses(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *a = open_first(dir), *b = open_at(dir);
	struct jobstore_lease l;
	int64_t ea = 0, eb = 0, id;
	int r = -EBUSY;

	CU_ASSERT_EQUAL_FATAL(jobstore_lease_acquire(a, "a", "ha:1", 500, &ea), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_begin(a), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(a, &sub, &id), 0);
	CU_ASSERT_EQUAL(jobstore_lease_read(a, &l), 0);
	CU_ASSERT_FATAL(store_clock_wait(b, l.expires));
	/* Each try waits for a's lock at most half of b's lease: 10 s in all. */
	for (int i = 0; i < 10 && r == -EBUSY; i++)
		r = jobstore_lease_acquire(b, "b", "hb:1", 2000, &eb);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT_EQUAL(eb, ea + 1);
	CU_ASSERT(jobstore_commit(a) < 0);
	CU_ASSERT_EQUAL(jobs_in(b), 0);
	CU_ASSERT_EQUAL(jobstore_begin(a), -ESTALE);
	CU_ASSERT_TRUE(jobstore_lease_lost(a));
	jobstore_close(a);
	jobstore_close(b);
	unit_tmpdir_remove(dir);
}

static const struct unit_test jobstore_lease_pg_tests[] = {
	{ "takeover_waits_for_transaction", test_takeover_waits_for_transaction },
	{ "stuck_holder_loses", test_stuck_holder_loses },
	{ NULL, NULL },
};

UNIT_PG_SUITE(jobstore_lease_lock, jobstore_lease_pg_tests);

static const struct unit_test jobstore_lease_tests[] = {
	{ "acquire", test_acquire },
	{ "expiry_fences_old_writer", test_expiry_fences_old_writer },
	{ "expired_untaken_renews", test_expired_untaken_renews },
	{ "same_holder_and_release", test_same_holder_and_release },
	{ "servers_seen", test_servers_seen },
	{ "renew_seen", test_renew_seen },
	{ "pool_name", test_pool_name },
	{ NULL, NULL },
};

UNIT_STORE_SUITE(jobstore_lease, jobstore_lease_tests);
