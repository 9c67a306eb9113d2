/* SPDX-License-Identifier: MIT */
/* qstat -t's pages (scheduler/array.c): each costs the arrays on it, not
 * every array before it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server-internal.h"
#include "unit.h"

#define ARRAYS 10000
#define PAGE 1000   /* requests.c's PAGE_JOBS */

/* n held arrays of two subjobs each, as qsub -h -J 1-2 makes them; root's
 * (a uid every test machine names), or uid's when not 0. */
static void arrays_submit(struct server *s, int n, uid_t uid, const char *owner)
{
	struct job_submit sub = {
		.name = "a", .queue = "batch", .owner = owner, .uid = uid, .gid = 0, .ncpus = 1,
		.workdir = "/tmp", .stdout_path = "", .stderr_path = "", .env_json = "{}", .script = "true\n",
		.umask = -1, .hold = true, .array_spec = "1-2", .array_count = 2,
	};

	CU_ASSERT_EQUAL_FATAL(jobstore_begin(s->store), 0);
	for (int i = 0; i < n; i++) {
		struct job *j = calloc(1, sizeof(*j));
		int64_t id;

		CU_ASSERT_EQUAL_FATAL(jobstore_job_insert(s->store, &sub, &id), 0);
		j->id = id;
		snprintf(j->queue, sizeof(j->queue), "batch");
		j->uid = uid;
		j->ncpus = 1;
		j->state = JOB_HELD;
		CU_ASSERT_EQUAL_FATAL(pool_array_set(j, "1-2", NULL), 0);
		CU_ASSERT_EQUAL_FATAL(pool_job_add(s->pool, j), 0);
	}
	CU_ASSERT_EQUAL_FATAL(jobstore_commit(s->store), 0);
}

/* One page as op_stat makes it: the store's rows, then the waiting subjobs. */
static json_t *page_get(struct server *s, const char *owner, int64_t after, bool *more)
{
	struct jobstore_filter f = { .owner = owner, .subjobs = true, .after = after, .limit = PAGE + 1 };
	json_t *jobs;

	CU_ASSERT_EQUAL_FATAL(jobstore_query(s->store, &f, &jobs), 0);
	*more = json_array_size(jobs) > PAGE;
	if (*more)
		json_array_remove(jobs, PAGE);
	CU_ASSERT_EQUAL_FATAL(array_stat_subjobs(&s->h, &f, PAGE, jobs, more), 0);
	return jobs;
}

/* Issue 29: 10,000 held arrays. Every id once, in order; each page reads
 * at most its own rows and arrays (the page before this read every array
 * below the page: ~3 s of server CPU per qstat -t). */
static void test_array_pages(void)
{
	struct server s;
	int64_t after = 0, seen = 0, pages = 0;
	bool more = true;
	struct error err;

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL_FATAL(pool_create(&s.pool), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, ":memory:", &s.store, &err), 0);
	arrays_submit(&s, ARRAYS, 0, "root");
	while (more) {
		uint64_t reads = jobstore_rows_read(s.store);
		json_t *jobs = page_get(&s, NULL, after, &more), *o;
		size_t i;

		CU_ASSERT(jobstore_rows_read(s.store) - reads <= 2 * (PAGE + 1));
		/* Only a last page may be empty ("more" can say "maybe"). */
		CU_ASSERT(json_array_size(jobs) > 0 || !more);
		json_array_foreach(jobs, i, o) {
			int64_t id = json_integer_value(json_object_get(o, "jobid"));

			CU_ASSERT(id > after);
			after = id;
			seen++;
		}
		json_decref(jobs);
		if (++pages > 100)
			break;
	}
	/* Each array: its row and its two waiting subjobs. */
	CU_ASSERT_EQUAL(seen, 3 * ARRAYS);

	/* Another user's listing reads none of root's arrays. */
	{
		uint64_t reads = jobstore_rows_read(s.store);
		json_t *jobs = page_get(&s, "nobody", 0, &more);

		CU_ASSERT_EQUAL(json_array_size(jobs), 0);
		CU_ASSERT_FALSE(more);
		CU_ASSERT_EQUAL(jobstore_rows_read(s.store) - reads, 0);
		json_decref(jobs);
	}
	/* The owner's own: a full page, as cheap as without -u. */
	{
		uint64_t reads = jobstore_rows_read(s.store);
		json_t *jobs = page_get(&s, "root", 0, &more);

		CU_ASSERT(json_array_size(jobs) >= PAGE);
		CU_ASSERT(more);
		CU_ASSERT(jobstore_rows_read(s.store) - reads <= 2 * (PAGE + 1));
		json_decref(jobs);
	}
	pool_destroy(s.pool);
	jobstore_close(s.store);
}

static const struct unit_test array_pages_tests[] = {
	{ "qstat -t pages over 10,000 held arrays", test_array_pages },
	{ NULL, NULL },
};

UNIT_SUITE(array_pages, array_pages_tests);
