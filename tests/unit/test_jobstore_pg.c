/* SPDX-License-Identifier: MIT */
/* The job store on both backends across nodes and in transactions; on
 * PostgreSQL alone: reopen, a newer schema, a wrong DSN, qpoold --migrate's copy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobstore-internal.h"
#include "jobstore.h"
#include "unit.h"

static const struct job_submit base = {
	.name = "hello", .queue = "batch", .owner = "alice", .uid = 1001, .gid = 1001,
	.ncpus = 2, .mem = 1 << 20, .walltime = 60, .workdir = "/home/alice",
	.stdout_path = "", .stderr_path = "", .env_json = "{\"A\":\"1\"}",
	.script = "#!/bin/sh\necho 'tab\there' \\\\n\n", .t_submit = 1000, .umask = -1,
};

static int collect(struct job *j, void *userdata)
{
	struct job **list = userdata;

	j->next = *list;
	*list = j;
	return 0;
}

static void list_free(struct job *list)
{
	while (list) {
		struct job *next = list->next;

		job_free(list);
		list = next;
	}
}

/* Inserts a job across two nodes and dispatches it with its rows. */
static int64_t wide_insert(struct jobstore *js)
{
	struct job_submit sub = base;
	struct job wide = { 0 };
	int64_t id = 0;

	sub.chunks_json = "[{\"count\":2,\"ncpus\":2,\"mpiprocs\":2,\"ompthreads\":0,\"mem\":0}]";
	sub.place = "scatter:excl";
	sub.ncpus = 4;
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &sub, &id), 0);
	wide.id = id;
	CU_ASSERT_EQUAL_FATAL(job_alloc_init(&wide, 2), 0);
	for (int i = 0; i < 2; i++) {
		wide.alloc[i].node = strdup(i ? "n2" : "n1");
		wide.alloc[i].ncpus = 2;
		wide.alloc[i].mpiprocs = 2;
		cpumask_parse(i ? "2-3" : "0-1", &wide.alloc[i].cpus);
		snprintf(wide.alloc[i].mems, sizeof(wide.alloc[i].mems), "0");
	}
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0-1", NULL, 5000), 0);
	CU_ASSERT_EQUAL(jobstore_alloc_insert(js, &wide), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	job_alloc_free(&wide);
	return id;
}

static void test_wide(void)
{
	struct job_result res = { .state = JOB_COMPLETED, .exit_status = 0, .cpu_ns = 11, .mem_peak = 13 };
	struct job *list = NULL, *j;
	struct jobstore *js;
	struct error err;
	json_t *row, *alloc;
	int64_t id;
	int seen = 0;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	id = wide_insert(js);
	res.times[STAMP_FENCED] = 5100;
	CU_ASSERT_EQUAL(jobstore_alloc_result(js, id, 1, &res, 6000,
					      "{\"status\":\"failed\",\"reason\":\"no cpuset\"}"), 0);
	CU_ASSERT_EQUAL(jobstore_alloc_result(js, id, 0, &res, 6000,
					      "{\"status\":\"exited\",\"exit_status\":3}"), 0);
	CU_ASSERT_EQUAL(jobstore_load_active(js, collect, &list), 0);
	for (j = list; j; j = j->next) {
		if (j->id != id)
			continue;
		seen++;
		CU_ASSERT_EQUAL(j->n_chunks, 1);
		CU_ASSERT_EQUAL(j->place, JOB_PLACE_SCATTER);
		CU_ASSERT_TRUE(j->excl);
		CU_ASSERT_EQUAL_FATAL(j->n_alloc, 2);
		CU_ASSERT_STRING_EQUAL(j->alloc[1].node, "n2");
		CU_ASSERT_EQUAL(cpumask_count(&j->alloc[1].cpus), 2);
		CU_ASSERT_TRUE(j->alloc[0].done && j->alloc[1].done);
		CU_ASSERT_PTR_NOT_NULL_FATAL(j->result);
		CU_ASSERT_EQUAL(j->result->exit_status, 3);
		CU_ASSERT_STRING_EQUAL(j->end_reason ? j->end_reason : "", "node n2 could not start: no cpuset");
	}
	CU_ASSERT_EQUAL(seen, 1);
	list_free(list);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, true, &row), 0);
	alloc = json_object_get(row, "alloc");
	CU_ASSERT_EQUAL(json_array_size(alloc), 2);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(json_array_get(alloc, 1), "times"),
							   "fenced")), 5100);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "exec_host")), "n1/0*2+n2/0*2");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "script")), base.script);
	json_decref(row);
	CU_ASSERT_EQUAL(jobstore_job_requeue(js, id, "test"), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, id, false, &row), 0);
	CU_ASSERT_PTR_NULL(json_object_get(row, "alloc"));
	/* The run that ended is kept as attempt 1 (docs/PREEMPTION.md). */
	{
		const json_t *att = json_object_get(json_object_get(row, "attrs"), "attempts");

		CU_ASSERT_EQUAL(json_array_size(att), 1);
		CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_array_get(att, 0), "attempt")), 1);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(att, 0), "node")) ?: "", "n1");
		CU_ASSERT_TRUE(json_integer_value(json_object_get(json_object_get(json_array_get(att, 0), "times"),
								  "dispatch")) > 0);
	}
	json_decref(row);
	jobstore_close(js);
}

/* A node whose text has a tab (COPY's text format escapes it). */
static const struct jobstore_node node_n1 = {
	.name = "n1", .cpus = "0-3", .ncpus = 4, .mems = "0", .mem = 16ULL << 30,
	.topology = "{\"pus\":4,\"x\":\"a\\tb\"}", .rt = true, .cgroup = "v2", .address = "192.0.2.1",
	.t_register = 1700000000000000001LL,
};

static int node_row(const struct jobstore_node *n, void *ud)
{
	char *out = ud;
	size_t len = strlen(out);

	snprintf(out + len, 512 - len, "%s/%s/%u/%s/%llu/%s/%d/%s/%s/%lld;", n->name, n->cpus, n->ncpus, n->mems,
		 (unsigned long long)n->mem, n->topology ? n->topology : "-", n->rt, n->cgroup, n->address,
		 (long long)n->t_register);
	return 0;
}

static int admin_row(const char *key, long long a, long long b, const char *text, void *ud)
{
	char *out = ud;
	size_t n = strlen(out);

	snprintf(out + n, 512 - n, "%s/%lld/%lld/%s;", key, a, b, text ? text : "-");
	return 0;
}

/* A rolled back submit gives its ids back; an array reserves its block;
 * the qmgr settings and the rotation read back as written. */
/* What admin_load gave of the rotation, the queue and node n1 drained
 * for "maintenance": the node's b is when it was drained (wall s). */
static void check_admin_loaded(const char *out)
{
	const char *head = "batch/1001/7/-;batch/0/1/closed;n1/1/";
	long long t_drain = 0;
	char tail[32] = "";

	CU_ASSERT_EQUAL_FATAL(strncmp(out, head, strlen(head)), 0);
	CU_ASSERT_EQUAL(sscanf(out + strlen(head), "%lld/%31s", &t_drain, tail), 2);
	CU_ASSERT_TRUE(t_drain > 1700000000LL);
	CU_ASSERT_STRING_EQUAL(tail, "maintenance;");
}

static void test_ids_and_admin(void)
{
	struct jobstore_admin_cbs cbs = { admin_row, admin_row, admin_row };
	struct job_submit arr = base;
	struct jobstore *js;
	struct error err;
	int64_t a, b, c;
	char out[512] = "";

	arr.array_spec = "1-5";
	arr.array_count = 5;
	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &a), 0);
	jobstore_rollback(js);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &b), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &arr, &c), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL(a, b);
	CU_ASSERT_EQUAL(c, b + 1);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &a), 0);
	CU_ASSERT_EQUAL(a, c + 6);
	CU_ASSERT_EQUAL(jobstore_rotation_set(js, "batch", 1001, 7), 0);
	CU_ASSERT_EQUAL(jobstore_queue_admin_set(js, "batch", 0, -1, "closed"), 0);
	CU_ASSERT_EQUAL(jobstore_queue_admin_set(js, "batch", -1, 1, "closed"), 0);
	CU_ASSERT_EQUAL(jobstore_node_admin_set(js, "n1", true, "maintenance"), 0);
	CU_ASSERT_EQUAL(jobstore_admin_load(js, &cbs, out), 0);
	check_admin_loaded(out);
	jobstore_close(js);
}

/* A group commit with one bad job: the commit fails (PostgreSQL finds
 * out at COMMIT, SQLite at the insert), none of the group is kept, and
 * the next group gets the ids the failed one had. */
static void test_group_fails_whole(void)
{
	struct job_submit bad = base;
	struct jobstore_filter all = { .finished = true };
	struct jobstore *js;
	struct error err;
	int64_t a = 0, b = 0, c = 0;
	json_t *list;
	int r;

	bad.name = NULL;   /* NOT NULL */
	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &a), 0);
	r = jobstore_job_insert(js, &bad, &b);
	if (r == 0)
		r = jobstore_commit(js);
	CU_ASSERT(r < 0);
	jobstore_rollback(js);
	CU_ASSERT_EQUAL(jobstore_query(js, &all, &list), 0);
	CU_ASSERT_EQUAL(json_array_size(list), 0);
	json_decref(list);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &c), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL(c, a);
	/* A dispatch of a job the store does not have: the same, whether
	 * the backend says so at once or at commit. */
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &b), 0);
	r = jobstore_job_dispatch(js, 999, "n1", "0", NULL, 5);
	if (r == 0)
		r = jobstore_commit(js);
	CU_ASSERT_EQUAL(r, -ENOENT);
	jobstore_rollback(js);
	CU_ASSERT_EQUAL(jobstore_job_get(js, b, false, &list), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(js, c, true, &list), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(list, "script")), base.script);
	json_decref(list);
	jobstore_close(js);
}

static const struct unit_test both_tests[] = {
	{ "wide", test_wide },
	{ "ids_and_admin", test_ids_and_admin },
	{ "group_fails_whole", test_group_fails_whole },
	{ NULL, NULL },
};

UNIT_STORE_SUITE(jobstore_more, both_tests);

static int psql(const char *sql)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "psql -qX -v ON_ERROR_STOP=1 '%s' -c \"%s\" >/dev/null 2>&1", unit_store_dsn(), sql);
	return system(cmd);
}

/* psql's one value of sql, as a number; -1 on error. */
static long long psql_value(const char *sql)
{
	char cmd[4096];
	long long v = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "psql -qXAt '%s' -c \"%s\" 2>/dev/null", unit_store_dsn(), sql);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	pclose(f);
	return v;
}

static void test_reopen(void)
{
	struct job_submit arr = base;
	struct jobstore *js;
	struct error err;
	int64_t a, b;

	arr.array_spec = "1-3";
	arr.array_count = 3;
	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &arr, &a), 0);
	jobstore_close(js);
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_POSTGRESQL, unit_store_dsn(), &js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &b), 0);
	CU_ASSERT_EQUAL(b, a + 4);
	jobstore_close(js);
	CU_ASSERT_EQUAL(psql_value("SELECT max(version) FROM schema_version"), jobstore_schema_version());
}

/* A store written by a newer qpoold: refused, one line naming it, and
 * nothing written. */
static void test_newer_schema(void)
{
	struct jobstore *js;
	struct error err;
	char sql[128];
	long long rows;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	jobstore_close(js);
	rows = psql_value("SELECT count(*) FROM schema_version");
	CU_ASSERT(rows > 0);
	snprintf(sql, sizeof(sql), "INSERT INTO schema_version VALUES (%d)", jobstore_schema_version() + 1);
	CU_ASSERT_EQUAL_FATAL(psql(sql), 0);
	CU_ASSERT_EQUAL(jobstore_open(JOBSTORE_POSTGRESQL, unit_store_dsn(), &js, &err), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "newer than this qpoold"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "/qpool"));
	CU_ASSERT_PTR_NULL(strchr(err.text, '\n'));
	CU_ASSERT_EQUAL(psql_value("SELECT count(*) FROM schema_version"), rows + 1);
}

static void test_bad_dsn(void)
{
	struct jobstore *js = NULL;
	struct error err;

	CU_ASSERT(jobstore_open(JOBSTORE_POSTGRESQL, "host=/nonexistent-qpool port=1 dbname=x connect_timeout=2",
				&js, &err) < 0);
	CU_ASSERT_PTR_NULL(js);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "/nonexistent-qpool"));
	CU_ASSERT_PTR_NULL(strchr(err.text, '\n'));
	CU_ASSERT(jobstore_open(JOBSTORE_POSTGRESQL, "no_such_option=1", &js, &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "no_such_option"));
	CU_ASSERT_PTR_NULL(strchr(err.text, '\n'));
}

/* qpoold --migrate's copy: every table, the same ids, ids continue past
 * an array's reserved block; refused on a store that is not empty. */
static void test_copy(void)
{
	struct jobstore_admin_cbs cbs = { admin_row, admin_row, admin_row };
	struct job_result res = { .state = JOB_COMPLETED, .exit_status = 4, .cpu_ns = 9, .mem_peak = 10 };
	struct job_submit arr = base;
	struct jobstore_filter all = { .finished = true, .subjobs = false };
	struct jobstore *from, *to;
	struct error err;
	int64_t id1, id2, wide, jobs = 0, next, held;
	struct jobstore_lease lease;
	json_t *row, *list;
	char out[512] = "";

	arr.array_spec = "1-9";
	arr.array_count = 9;
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, ":memory:", &from, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(from, &base, &id1), 0);
	res.times[STAMP_EXEC] = 1500;
	CU_ASSERT_EQUAL(jobstore_job_dispatch(from, id1, "n1", "0-1", NULL, 1200), 0);
	CU_ASSERT_EQUAL(jobstore_job_finish(from, id1, &res, 2000), 0);
	wide = wide_insert(from);
	CU_ASSERT_EQUAL(jobstore_job_insert(from, &arr, &id2), 0);
	CU_ASSERT_EQUAL(jobstore_subjob_insert(from, id2, id2 + 1, 1, JOB_RUNNING, NULL), 0);
	CU_ASSERT_EQUAL(jobstore_rotation_set(from, "batch", 1001, 7), 0);
	CU_ASSERT_EQUAL(jobstore_queue_admin_set(from, "batch", 0, 1, "closed"), 0);
	CU_ASSERT_EQUAL(jobstore_node_admin_set(from, "n1", true, "maintenance"), 0);
	CU_ASSERT_EQUAL(jobstore_node_put(from, &node_n1), 0);
	CU_ASSERT_EQUAL(jobstore_server_seen(from, "old", "old:15001", "active"), 0);
	CU_ASSERT_EQUAL(jobstore_lease_acquire(from, "old", "old:15001", 60000, &held), 0);

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&to, &err), 0);
	CU_ASSERT_EQUAL(jobstore_copy(from, to, &jobs, &err), 0);
	CU_ASSERT_EQUAL(jobs, 4);
	/* Leadership is not copied: the new store's lease is free. */
	CU_ASSERT_EQUAL(jobstore_lease_read(to, &lease), 0);
	CU_ASSERT_STRING_EQUAL(lease.holder, "");
	CU_ASSERT_EQUAL(lease.epoch, 0);
	CU_ASSERT_EQUAL(psql_value("SELECT count(*) FROM servers"), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(to, id1, true, &row), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "state")), "completed");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "exit_status")), 4);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "cpu_ns")), 9);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(row, "times"), "exec")), 1500);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "script")), base.script);
	json_decref(row);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(to, wide, false, &row), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(row, "alloc")), 2);
	json_decref(row);
	CU_ASSERT_EQUAL_FATAL(jobstore_job_get(to, id2 + 1, true, &row), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(row, "array_index")), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(row, "script")), base.script);
	json_decref(row);
	CU_ASSERT_EQUAL(jobstore_query(to, &all, &list), 0);
	CU_ASSERT_EQUAL(json_array_size(list), 3);
	json_decref(list);
	CU_ASSERT_EQUAL(jobstore_admin_load(to, &cbs, out), 0);
	check_admin_loaded(out);
	out[0] = '\0';
	CU_ASSERT_EQUAL(jobstore_nodes_load(to, node_row, out), 0);
	CU_ASSERT_STRING_EQUAL(out, "n1/0-3/4/0/17179869184/{\"pus\":4,\"x\":\"a\\tb\"}/1/v2/192.0.2.1/1700000000000000001;");
	/* The next id is past the array's block. */
	CU_ASSERT_EQUAL(jobstore_job_insert(to, &base, &next), 0);
	CU_ASSERT_EQUAL(next, id2 + 10);

	/* Again onto the same store: refused, and nothing written. */
	CU_ASSERT_EQUAL(jobstore_copy(from, to, &jobs, &err), -ENOTEMPTY);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "not empty"));
	CU_ASSERT_PTR_NULL(strchr(err.text, '\n'));
	CU_ASSERT_EQUAL(psql_value("SELECT count(*) FROM jobs"), 5);
	jobstore_close(to);
	/* SQLite is never a target. */
	CU_ASSERT_EQUAL(jobstore_copy(from, from, &jobs, &err), -EOPNOTSUPP);
	jobstore_close(from);
}

/* qpoold --migrate copies every table of the schema, every column: a
 * table added by a later schema and not to jobstore_tables[] (or, left
 * behind on purpose, to jobstore_tables_uncopied[]) would be left behind
 * unseen. (schema_version and job_seq are the store's own.) */
static void test_tables_all(void)
{
	struct jobstore *js;
	struct error err;
	char sql[512];
	long long n = 0;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	jobstore_close(js);
	for (const struct jobstore_table *t = jobstore_tables; t->name; t++, n++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM information_schema.columns"
			 " WHERE table_schema = 'public' AND table_name = '%s'", t->name);
		CU_ASSERT_EQUAL(psql_value(sql), t->ncols);
	}
	for (const char *const *u = jobstore_tables_uncopied; *u; u++, n++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM information_schema.tables"
			 " WHERE table_schema = 'public' AND table_name = '%s'", *u);
		CU_ASSERT_EQUAL(psql_value(sql), 1);
	}
	CU_ASSERT_EQUAL(psql_value("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
				   " AND table_name NOT IN ('schema_version', 'job_seq')"), n);
}

/* A store that holds only a node's row is not empty either. */
static void test_copy_onto_nodes(void)
{
	struct jobstore *from, *to;
	struct error err;
	int64_t id, jobs = 0;

	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, ":memory:", &from, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(from, &base, &id), 0);
	CU_ASSERT_EQUAL_FATAL(unit_store_open(&to, &err), 0);
	CU_ASSERT_EQUAL(jobstore_node_put(to, &node_n1), 0);
	CU_ASSERT_EQUAL(jobstore_copy(from, to, &jobs, &err), -ENOTEMPTY);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "1 other rows"));
	CU_ASSERT_EQUAL(psql_value("SELECT count(*) FROM jobs"), 0);
	jobstore_close(to);
	jobstore_close(from);
}

/* A store a qpoold of schema 7 made (before the nodes table and the
 * lease) is brought to this schema at open, its rows kept, and then keeps
 * nodes and a free lease. */
static void test_upgrade_from_7(void)
{
	struct jobstore *js;
	struct error err;
	struct jobstore_lease l;
	int64_t a, b, epoch;
	char out[512] = "";

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &a), 0);
	jobstore_close(js);
	CU_ASSERT_EQUAL_FATAL(psql("DROP TABLE reservations, budgets, qos_users, qos, account_users, accounts, nodes, lease, servers, pool, events; ALTER TABLE job_alloc DROP COLUMN gpus;"
				   " ALTER TABLE node_admin DROP COLUMN t_drain;"
				   " DELETE FROM schema_version WHERE version > 7"), 0);
	CU_ASSERT_EQUAL_FATAL(psql_value("SELECT max(version) FROM schema_version"), 7);
	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_POSTGRESQL, unit_store_dsn(), &js, &err), 0);
	CU_ASSERT_EQUAL(psql_value("SELECT max(version) FROM schema_version"), jobstore_schema_version());
	CU_ASSERT_EQUAL(jobstore_schema_version(), 19);
	CU_ASSERT_EQUAL(jobstore_pool_name_read(js, out, sizeof(out)), -ENOENT);
	CU_ASSERT_EQUAL(psql_value("SELECT count(*) FROM information_schema.columns"
				   " WHERE table_name = 'job_alloc' AND column_name = 'gpus'"), 1);
	CU_ASSERT_EQUAL(jobstore_lease_read(js, &l), 0);
	CU_ASSERT_STRING_EQUAL(l.holder, "");
	CU_ASSERT_EQUAL(jobstore_lease_acquire(js, "a", "ha:1", 60000, &epoch), 0);
	CU_ASSERT_EQUAL(epoch, 1);
	CU_ASSERT_EQUAL(jobstore_node_put(js, &node_n1), 0);
	CU_ASSERT_EQUAL(jobstore_nodes_load(js, node_row, out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "n1/0-3/4/"));
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &b), 0);
	CU_ASSERT_EQUAL(b, a + 1);
	jobstore_close(js);
}

/* Another writer moved job_seq behind this one's count: its next commit
 * fails, nothing of it kept, and the ids after are past the other's. */
static void test_foreign_writer(void)
{
	struct jobstore *js;
	struct error err;
	int64_t a, b, c;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &a), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL_FATAL(psql("UPDATE job_seq SET last = last + 100"), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &b), 0);
	CU_ASSERT(jobstore_commit(js) < 0);
	jobstore_rollback(js);
	CU_ASSERT_EQUAL(psql_value("SELECT count(*) FROM jobs"), 1);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &c), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL(c, a + 101);
	jobstore_close(js);
}

/* The server drops qpoold's connection (a restart, a failover): the
 * transaction it cuts fails, nothing of it kept, and the store connects
 * again by itself for the next one. */
static void test_reconnect(void)
{
	struct jobstore *js;
	struct error err;
	int64_t a, b, c;
	int r;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &a), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL_FATAL(psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
				   " WHERE datname = current_database() AND pid <> pg_backend_pid()"), 0);
	r = jobstore_begin(js);
	if (r == 0)
		r = jobstore_job_insert(js, &base, &b);
	if (r == 0)
		r = jobstore_commit(js);
	if (r < 0)
		jobstore_rollback(js);
	CU_ASSERT_EQUAL(psql_value("SELECT count(*) FROM jobs"), r == 0 ? 2 : 1);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &c), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL(c, r == 0 ? b + 1 : a + 1);
	CU_ASSERT_EQUAL(psql_value("SELECT count(*) FROM jobs"), r == 0 ? 3 : 2);
	jobstore_close(js);
}

static const struct unit_test pg_tests[] = {
	{ "foreign_writer", test_foreign_writer },
	{ "reconnect", test_reconnect },
	{ "reopen", test_reopen },
	{ "newer_schema", test_newer_schema },
	{ "bad_dsn", test_bad_dsn },
	{ "copy", test_copy },
	{ "copy_onto_nodes", test_copy_onto_nodes },
	{ "tables_all", test_tables_all },
	{ "upgrade_from_7", test_upgrade_from_7 },
	{ NULL, NULL },
};

UNIT_PG_SUITE(jobstore_server, pg_tests);
