/* SPDX-License-Identifier: MIT */
/* Leadership without processes: two servers' lease turns on one store
 * file, with the caller's clock: the takeover, the standby reply naming
 * the active, the loss when another took it, the hand-over at a clean
 * stop, and qstat -B's "ha" object. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lease.h"
#include "timeutil.h"
#include "unit.h"

static struct jobstore *store_at(const char *dir)
{
	char path[512];
	struct jobstore *js = NULL;
	struct error err;

	snprintf(path, sizeof(path), "%s/qpool.db", dir);
	CU_ASSERT_EQUAL(jobstore_open(JOBSTORE_SQLITE, path, &js, &err), 0);
	return js;
}

static struct lease *lease_of(struct jobstore *js, const char *id, const char *addr, int64_t lease_ms)
{
	struct lease *l = NULL;
	struct error err;

	CU_ASSERT_EQUAL(lease_create(js, id, addr, lease_ms, 1000, &l, &err), 0);
	return l;
}

/* Waits (bounded: 10 s) until the store's clock passes the lease's end. */
static bool run_out_wait(struct jobstore *js)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	struct jobstore_lease x;

	for (int i = 0; i < 1000; i++) {
		if (jobstore_lease_read(js, &x) < 0)
			return false;
		if (x.now >= x.expires)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

static const char *text_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* The first server takes the lease at its first turn; the second stays a
 * standby whose reply names the first; the first's ha object lists the
 * second once it stamped its row. */
static void test_takeover_and_standby_reply(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *ja = store_at(dir), *jb = store_at(dir);
	struct lease *a = lease_of(ja, "a", "ha:15001", 60000), *b = lease_of(jb, "b", "hb:15001", 60000);
	const char *why = "unset";
	json_t *o, *sb;

	CU_ASSERT_FALSE(lease_active(a));
	CU_ASSERT_EQUAL(lease_next_at(a, 0, 0), 500000);
	CU_ASSERT_EQUAL_FATAL(lease_tick(a, 1, &why), LEASE_TAKEN);
	CU_ASSERT_PTR_NULL(why);
	CU_ASSERT_EQUAL(lease_loaded(a, 2), 0);
	CU_ASSERT_TRUE(lease_active(a));
	CU_ASSERT_EQUAL(lease_epoch(a), 1);
	CU_ASSERT_EQUAL(lease_next_at(a, 0, 0), 1000000);
	/* A quick renewal: the next 1 s after this one's start. */
	CU_ASSERT_EQUAL(lease_next_at(a, 2000 * NSEC_PER_MSEC, 2300 * NSEC_PER_MSEC), 3000000);
	/* One a slow store held 5 s: the next a tenth of 1 s after its end,
	 * not at once, so what waited is served first. */
	CU_ASSERT_EQUAL(lease_next_at(a, 2000 * NSEC_PER_MSEC, 7000 * NSEC_PER_MSEC), 7100000);
	CU_ASSERT_EQUAL(lease_tick(b, 1, &why), LEASE_NOTHING);
	CU_ASSERT_FALSE(lease_active(b));

	o = lease_standby_reply(b, 42, "hostb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "id")), 42);
	CU_ASSERT_TRUE(json_is_false(json_object_get(o, "ok")));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "errno")), EAGAIN);
	CU_ASSERT_TRUE(json_is_true(json_object_get(o, "standby")));
	CU_ASSERT_STRING_EQUAL(text_of(o, "active"), "ha:15001");
	CU_ASSERT_STRING_EQUAL(text_of(o, "error"), "qpoold on hostb is a standby; the active is ha:15001 (epoch 1)");
	json_decref(o);

	o = lease_ha_json(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_STRING_EQUAL(text_of(o, "role"), "active");
	CU_ASSERT_STRING_EQUAL(text_of(o, "active"), "ha:15001");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "epoch")), 1);
	sb = json_object_get(o, "standbys");
	CU_ASSERT_EQUAL_FATAL(json_array_size(sb), 1);
	CU_ASSERT_STRING_EQUAL(text_of(json_array_get(sb, 0), "address"), "hb:15001");
	json_decref(o);

	lease_destroy(a);
	lease_destroy(b);
	jobstore_close(ja);
	jobstore_close(jb);
	unit_tmpdir_remove(dir);
}

/* An active that stopped renewing (paused) finds at its next turn that the
 * standby took the lease at the next epoch: it is lost, it is a standby
 * from then on, its writes are refused, and its reply names the new one. */
static void test_lost_when_taken(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *ja = store_at(dir), *jb = store_at(dir);
	struct lease *a = lease_of(ja, "a", "ha:1", 100), *b = lease_of(jb, "b", "hb:1", 60000);
	const char *why = NULL;
	json_t *o;

	CU_ASSERT_EQUAL_FATAL(lease_tick(a, 1, &why), LEASE_TAKEN);
	CU_ASSERT_EQUAL(lease_tick(b, 1, &why), LEASE_NOTHING);
	CU_ASSERT_FATAL(run_out_wait(jb));
	CU_ASSERT_EQUAL_FATAL(lease_tick(b, 2, &why), LEASE_TAKEN);
	CU_ASSERT_EQUAL(lease_epoch(b), 2);
	CU_ASSERT_EQUAL(lease_tick(a, 3, &why), LEASE_LOST);
	CU_ASSERT_STRING_EQUAL(why ? why : "", "another server took the lease");
	CU_ASSERT_FALSE(lease_active(a));
	CU_ASSERT_EQUAL(jobstore_begin(ja), -ESTALE);
	lease_refresh(a);
	o = lease_standby_reply(a, 1, "hosta");
	CU_ASSERT_STRING_EQUAL(text_of(o, "active"), "hb:1");
	CU_ASSERT_STRING_EQUAL(text_of(o, "error"), "qpoold on hosta is a standby; the active is hb:1 (epoch 2)");
	json_decref(o);
	lease_destroy(a);
	lease_destroy(b);
	jobstore_close(ja);
	jobstore_close(jb);
	unit_tmpdir_remove(dir);
}

/* A clean stop of the active hands the lease on at the standby's next
 * turn; with nobody active, the reply says so and names no address. */
static void test_clean_stop_hands_over(void)
{
	char *dir = unit_tmpdir();
	struct jobstore *ja = store_at(dir), *jb = store_at(dir);
	struct lease *a = lease_of(ja, "a", "ha:1", 60000), *b = lease_of(jb, "b", "hb:1", 60000);
	const char *why = NULL;
	json_t *o;

	CU_ASSERT_EQUAL_FATAL(lease_tick(a, 1, &why), LEASE_TAKEN);
	lease_destroy(a);
	lease_refresh(b);
	o = lease_standby_reply(b, 1, "hostb");
	CU_ASSERT_PTR_NULL(json_object_get(o, "active"));
	CU_ASSERT_STRING_EQUAL(text_of(o, "error"), "qpoold on hostb is a standby; no server is active");
	json_decref(o);
	CU_ASSERT_EQUAL(lease_tick(b, 1, &why), LEASE_TAKEN);
	CU_ASSERT_EQUAL(lease_epoch(b), 2);
	lease_destroy(b);
	jobstore_close(ja);
	jobstore_close(jb);
	unit_tmpdir_remove(dir);
}

/* Bad ids are refused at creation with a line naming the key. */
static void test_create_refuses(void)
{
	struct lease *l = NULL;
	struct error err;
	char longid[JOBSTORE_HOLDER_MAX + 8];

	memset(longid, 'x', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	CU_ASSERT_EQUAL(lease_create(NULL, "", "a:1", 1000, 100, &l, &err), -ENAMETOOLONG);
	CU_ASSERT_EQUAL(lease_create(NULL, longid, "a:1", 1000, 100, &l, &err), -ENAMETOOLONG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "server_id"));
	CU_ASSERT_EQUAL(lease_create(NULL, "a", longid, 1000, 100, &l, &err), -ENAMETOOLONG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "advertise"));
	CU_ASSERT_PTR_NULL(l);
}

static const struct unit_test lease_tests[] = {
	{ "takeover_and_standby_reply", test_takeover_and_standby_reply },
	{ "lost_when_taken", test_lost_when_taken },
	{ "clean_stop_hands_over", test_clean_stop_hands_over },
	{ "create_refuses", test_create_refuses },
	{ NULL, NULL },
};

UNIT_SUITE(lease, lease_tests);
