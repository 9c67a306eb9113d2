/* SPDX-License-Identifier: MIT */
/* The server's dependencies (scheduler/depend.c): an event re-decides only
 * the waiters of the job that changed, and reads that job once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depend.h"
#include "server-internal.h"
#include "unit.h"

/* A server with what depend.c uses: a pool and a store on :memory:. */
static void server_init(struct server *s)
{
	struct error err;

	memset(s, 0, sizeof(*s));
	CU_ASSERT_EQUAL_FATAL(pool_create(&s->pool), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, ":memory:", &s->store, &err), 0);
}

static void server_fini(struct server *s)
{
	depend_destroy(&s->h);
	pool_destroy(s->pool);
	jobstore_close(s->store);
	free(s->array_due);
}

/* A job's row (held for its dependencies when depend is set), and the
 * pooled job as pending_flush makes it; not yet decided. */
static struct job *submit(struct server *s, const char *depend)
{
	struct job_submit sub = {
		.name = "j", .queue = "batch", .owner = "alice", .uid = 1000, .gid = 1000, .ncpus = 1,
		.workdir = "/tmp", .stdout_path = "", .stderr_path = "", .env_json = "{}", .script = "true\n",
		.umask = -1, .hold = depend != NULL, .depend = depend,
		.reason = depend ? depend_wait_reason() : NULL,
	};
	struct job *j = calloc(1, sizeof(*j));
	int64_t id;

	CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(s->store, &sub, &id), 0);
	j->id = id;
	snprintf(j->queue, sizeof(j->queue), "batch");
	j->uid = 1000;
	j->ncpus = 1;
	j->state = depend ? JOB_HELD : JOB_QUEUED;
	if (depend) {
		j->depend = strdup(depend);
		j->reason = strdup(depend_wait_reason());
	}
	CU_ASSERT_EQUAL_FATAL(pool_job_add(s->pool, j), 0);
	if (depend)
		depend_track(&s->h, j);
	return j;
}

/* Ends j in state as a node's report does: final row, then the pool. */
static void end(struct server *s, struct job *j, enum job_state state)
{
	struct job_result res = { .state = state, .exit_status = state == JOB_COMPLETED ? 0 : 1 };

	CU_ASSERT_EQUAL(jobstore_begin(s->store), 0);
	CU_ASSERT_EQUAL(jobstore_job_finish(s->store, j->id, &res, 1000), 0);
	CU_ASSERT_EQUAL(jobstore_commit(s->store), 0);
	server_job_finished(&s->h, j, state);
}

#define STORM_TARGETS 3000
#define STORM_WAITERS 3000
#define STORM_STEP 47   /* coprime with 3000, 63 * 47 < 3000: 64 distinct targets */

/* Issue 29: 3,000 held jobs of 64 afterok items each. One job's end costs
 * its own 64 waiters and one read of its row, not every waiter and every
 * ended item (~7 s of server CPU per event before). */
static void test_depend_storm(void)
{
	static struct job *t[STORM_TARGETS], *w[STORM_WAITERS];
	struct depend_stats st0, st1;
	struct server s;
	uint64_t reads;

	server_init(&s);
	CU_ASSERT_EQUAL_FATAL(jobstore_begin(s.store), 0);
	for (int i = 0; i < STORM_TARGETS; i++)
		t[i] = submit(&s, NULL);
	for (int i = 0; i < STORM_WAITERS; i++) {
		char text[DEPEND_TEXT_MAX];
		int n = snprintf(text, sizeof(text), "afterok");

		for (int k = 0; k < DEPEND_MAX; k++)
			n += snprintf(text + n, sizeof(text) - n, ":%lld",
				      (long long)t[(i + k * STORM_STEP) % STORM_TARGETS]->id);
		w[i] = submit(&s, text);
	}
	CU_ASSERT_EQUAL_FATAL(jobstore_commit(s.store), 0);
	depend_recheck(&s.h);
	depend_stats(&s.h, &st0);
	CU_ASSERT_EQUAL(st0.waiting, STORM_WAITERS);
	CU_ASSERT(st0.decided >= STORM_WAITERS);

	/* Ten ends, one event each: 64 waiters each, one row read. */
	for (int e = 0; e < 10; e++) {
		reads = jobstore_rows_read(s.store);
		depend_stats(&s.h, &st0);
		end(&s, t[e * STORM_STEP], JOB_COMPLETED);
		depend_recheck(&s.h);
		depend_stats(&s.h, &st1);
		CU_ASSERT_EQUAL(st1.decided - st0.decided, DEPEND_MAX);
		CU_ASSERT(jobstore_rows_read(s.store) - reads <= 1);
		CU_ASSERT_EQUAL(st1.waiting, STORM_WAITERS);
	}
	/* Nothing changed: a recheck decides nobody. */
	depend_stats(&s.h, &st0);
	depend_recheck(&s.h);
	depend_stats(&s.h, &st1);
	CU_ASSERT_EQUAL(st1.decided, st0.decided);

	/* Waiter 0's last items end: it, and only it, is released. */
	for (int k = 1; k < DEPEND_MAX; k++)
		if (k >= 10)
			end(&s, t[k * STORM_STEP], JOB_COMPLETED);
	depend_recheck(&s.h);
	CU_ASSERT_EQUAL(w[0]->state, JOB_QUEUED);
	CU_ASSERT_FALSE(w[0]->dep_wait);
	CU_ASSERT_PTR_NULL(w[0]->reason);
	CU_ASSERT_EQUAL(w[1]->state, JOB_HELD);
	depend_stats(&s.h, &st1);
	CU_ASSERT_EQUAL(st1.waiting, STORM_WAITERS - 1);
	server_fini(&s);
}

static struct job *waiter(struct server *s, const char *type, int64_t id)
{
	char text[64];

	snprintf(text, sizeof(text), "%s:%lld", type, (long long)id);
	return submit(s, text);
}

static uint64_t decided(const struct server *s)
{
	struct depend_stats st;

	depend_stats(&s->h, &st);
	return st.decided;
}

/* Each kind, each decided when (and only when) the job it names changes. */
static void test_depend_kinds(void)
{
	struct job *a, *b, *c, *d, *e, *f, *w1, *w2, *w3, *w4, *w5;
	struct server s;
	uint64_t n;
	char text[64];

	server_init(&s);
	a = submit(&s, NULL);
	b = submit(&s, NULL);
	c = submit(&s, NULL);
	w1 = waiter(&s, "after", a->id);
	w2 = waiter(&s, "afterok", b->id);
	w3 = waiter(&s, "afternotok", b->id);
	w4 = waiter(&s, "afterany", c->id);
	w5 = waiter(&s, "afterok", 999999);
	depend_recheck(&s.h);
	CU_ASSERT_EQUAL(w5->state, JOB_HELD);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w5->reason);
	CU_ASSERT_STRING_EQUAL(w5->reason, "dependency afterok:999999 can never be met: job 999999 does not exist");
	CU_ASSERT(w5->dep_wait);   /* held: only root may lift it */

	/* a starts: w1 alone. */
	n = decided(&s);
	pool_job_state_set(s.pool, a, JOB_RUNNING);
	depend_job_changed(&s.h, a->id);
	depend_recheck(&s.h);
	CU_ASSERT_EQUAL(decided(&s) - n, 1);
	CU_ASSERT_EQUAL(w1->state, JOB_QUEUED);
	CU_ASSERT_EQUAL(w2->state, JOB_HELD);

	/* b fails: afterok never, afternotok met. */
	n = decided(&s);
	end(&s, b, JOB_FAILED);
	depend_recheck(&s.h);
	CU_ASSERT_EQUAL(decided(&s) - n, 2);
	CU_ASSERT_EQUAL(w2->state, JOB_HELD);
	CU_ASSERT_STRING_EQUAL(w2->reason, "dependency afterok:2 can never be met: job 2 failed");
	CU_ASSERT_EQUAL(w3->state, JOB_QUEUED);

	/* qdel of c: afterany is met. */
	CU_ASSERT_EQUAL(server_job_cancel(&s.h, c, "by alice"), JOB_CANCELLED);
	depend_recheck(&s.h);
	CU_ASSERT_EQUAL(w4->state, JOB_QUEUED);

	/* A before* on d adds an item: d now waits on f and on e. */
	f = submit(&s, NULL);
	snprintf(text, sizeof(text), "afterok:%lld", (long long)f->id);
	d = submit(&s, text);
	e = submit(&s, NULL);
	snprintf(text, sizeof(text), "beforeok:%lld", (long long)d->id);
	depend_before_apply(&s.h, e->id, text);
	depend_recheck(&s.h);
	end(&s, f, JOB_COMPLETED);
	depend_recheck(&s.h);
	CU_ASSERT_EQUAL(d->state, JOB_HELD);
	end(&s, e, JOB_COMPLETED);
	depend_recheck(&s.h);
	CU_ASSERT_EQUAL(d->state, JOB_QUEUED);
	server_fini(&s);
}

static int load_one(struct job *j, void *ud)
{
	struct server *s = ud;
	int r = pool_job_add(s->pool, j);

	if (r < 0) {
		job_free(j);
		return r;
	}
	depend_loaded(&s->h, j);
	return 0;
}

/* A restart finds its waiters in the store: each job they name that has
 * ended is read once, not once per waiter. */
static void test_depend_restart(void)
{
	struct job *x, *z, *w;
	struct depend_stats st;
	struct server s;
	int64_t z_id, w_id;
	uint64_t reads;
	char text[64];

	server_init(&s);
	x = submit(&s, NULL);
	z = submit(&s, NULL);
	snprintf(text, sizeof(text), "afterok:%lld:%lld", (long long)x->id, (long long)z->id);
	z_id = z->id;
	for (int i = 0; i < 50; i++)
		w = submit(&s, text);
	w_id = w->id;
	depend_recheck(&s.h);
	end(&s, x, JOB_COMPLETED);
	depend_recheck(&s.h);
	CU_ASSERT_EQUAL(w->state, JOB_HELD);

	/* qpoold stops and starts again on the same store. */
	depend_destroy(&s.h);
	pool_destroy(s.pool);
	CU_ASSERT_EQUAL_FATAL(pool_create(&s.pool), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_load_active(s.store, load_one, &s), 0);
	depend_stats(&s.h, &st);
	CU_ASSERT_EQUAL(st.waiting, 50);
	reads = jobstore_rows_read(s.store);
	depend_recheck(&s.h);
	CU_ASSERT_EQUAL(jobstore_rows_read(s.store) - reads, 1);
	z = pool_job_find(s.pool, z_id);
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	end(&s, z, JOB_COMPLETED);
	depend_recheck(&s.h);
	depend_stats(&s.h, &st);
	CU_ASSERT_EQUAL(st.waiting, 0);
	for (int i = 0; i < 50; i++) {
		struct job *j = pool_job_find(s.pool, w_id - i);

		CU_ASSERT(j && j->state == JOB_QUEUED);
	}
	server_fini(&s);
}

static const struct unit_test depend_index_tests[] = {
	{ "a storm: one end re-decides its own waiters", test_depend_storm },
	{ "after, afterok, afternotok, afterany, before, qdel", test_depend_kinds },
	{ "a restart reads an ended job once", test_depend_restart },
	{ NULL, NULL },
};

UNIT_SUITE(depend_index, depend_index_tests);
