/* SPDX-License-Identifier: MIT */
/* The event stream in the job store, on both backends: an event per
 * change, committed with it or not at all, in order, pruned by age. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobstore.h"
#include "unit.h"

static const struct job_submit base = {
	.name = "ev", .queue = "batch", .owner = "alice", .uid = 1001, .gid = 1001,
	.ncpus = 1, .mem = 1 << 20, .walltime = 60, .workdir = "/tmp",
	.stdout_path = "", .stderr_path = "", .env_json = "{}",
	.script = "#!/bin/sh\n", .t_submit = 1000,
};

#define MAX_SEEN 32
struct seen {
	unsigned n;
	struct {
		int64_t seq, jobid, uid, exit_status;
		char state[16], node[16];
	} v[MAX_SEEN];
};

static int collect(const struct jobstore_event *e, void *ud)
{
	struct seen *s = ud;

	if (s->n == MAX_SEEN)
		return -E2BIG;
	s->v[s->n].seq = e->seq;
	s->v[s->n].jobid = e->jobid;
	s->v[s->n].uid = e->uid;
	s->v[s->n].exit_status = e->exit_status;
	snprintf(s->v[s->n].state, sizeof(s->v[0].state), "%s", e->state);
	snprintf(s->v[s->n].node, sizeof(s->v[0].node), "%s", e->node ? e->node : "");
	s->n++;
	return 0;
}

/* submit, dispatch, finish: three events of the job's states, in order;
 * a rolled-back change leaves none; a write outside a transaction gets
 * its own, event included. */
static void test_job_life(void)
{
	struct job_result res = { .state = JOB_FAILED, .exit_status = 3 };
	struct jobstore *js;
	struct seen s = { 0 };
	struct error err;
	int64_t id, id2, first, last;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_events_bounds(js, &first, &last), 0);
	CU_ASSERT_EQUAL(last, 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id2), 0);
	jobstore_rollback(js);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id, "n1", "0", NULL, 2000), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_finish(js, id, &res, 3000), 0);   /* its own transaction */
	CU_ASSERT_EQUAL(jobstore_events_committed(js), 3);
	CU_ASSERT_EQUAL_FATAL(jobstore_events_read(js, 0, 100, collect, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 3);
	CU_ASSERT_EQUAL(s.v[0].seq, 1);
	CU_ASSERT_EQUAL(s.v[2].seq, 3);
	CU_ASSERT_STRING_EQUAL(s.v[0].state, "queued");
	CU_ASSERT_STRING_EQUAL(s.v[1].state, "running");
	CU_ASSERT_STRING_EQUAL(s.v[1].node, "n1");
	CU_ASSERT_STRING_EQUAL(s.v[2].state, "failed");
	CU_ASSERT_EQUAL(s.v[2].exit_status, 3);
	CU_ASSERT_EQUAL(s.v[2].uid, 1001);
	CU_ASSERT_EQUAL(s.v[2].jobid, id);
	s.n = 0;
	CU_ASSERT_EQUAL(jobstore_events_read(js, 2, 100, collect, &s), 0);
	CU_ASSERT_EQUAL(s.n, 1);
	CU_ASSERT_EQUAL(jobstore_events_bounds(js, &first, &last), 0);
	CU_ASSERT_EQUAL(first, 1);
	CU_ASSERT_EQUAL(last, 3);
	jobstore_close(js);
}

/* Jobs of one transaction: one event each, numbered in the order of
 * their changes, a node's between them in its place; a job changed again
 * in the same transaction has its one event, its state as committed. */
static void test_batch_order(void)
{
	struct jobstore *js;
	struct seen s = { 0 };
	struct error err;
	int64_t id[4];

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id[0]), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id[1]), 0);
	CU_ASSERT_EQUAL(jobstore_event_node(js, "n9", "down", NULL), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id[2]), 0);
	CU_ASSERT_EQUAL(jobstore_job_set_state(js, id[0], JOB_HELD, "h"), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_events_read(js, 0, 100, collect, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 4);
	for (unsigned i = 0; i < s.n; i++)
		CU_ASSERT_EQUAL(s.v[i].seq, i + 1);
	CU_ASSERT_EQUAL(s.v[0].jobid, id[0]);
	CU_ASSERT_STRING_EQUAL(s.v[0].state, "held");
	CU_ASSERT_EQUAL(s.v[1].jobid, id[1]);
	CU_ASSERT_STRING_EQUAL(s.v[1].state, "queued");
	CU_ASSERT_STRING_EQUAL(s.v[2].node, "n9");
	CU_ASSERT_EQUAL(s.v[3].jobid, id[2]);
	jobstore_close(js);
}

/* A run of ids (a submit group: id, id + 1, ...) is one range insert,
 * any other list the list's own: both numbered on from the last event,
 * in the order of the changes, each job's state as committed. */
static void test_run_and_list(void)
{
	struct jobstore *js;
	struct seen s = { 0 };
	struct error err;
	int64_t id[5];

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_event_node(js, "n1", "up", NULL), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	for (int i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id[i]), 0);
	CU_ASSERT_EQUAL(jobstore_job_set_state(js, id[4], JOB_HELD, "h"), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_set_state(js, id[3], JOB_HELD, "h"), 0);
	CU_ASSERT_EQUAL(jobstore_job_set_state(js, id[0], JOB_HELD, "h"), 0);
	CU_ASSERT_EQUAL(jobstore_job_set_state(js, id[2], JOB_HELD, "h"), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_events_read(js, 0, 100, collect, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 9);
	for (unsigned i = 0; i < s.n; i++)
		CU_ASSERT_EQUAL(s.v[i].seq, i + 1);
	CU_ASSERT_STRING_EQUAL(s.v[0].node, "n1");
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(s.v[1 + i].jobid, id[i]);
		CU_ASSERT_EQUAL(s.v[1 + i].uid, 1001);
		CU_ASSERT_STRING_EQUAL(s.v[1 + i].state, i == 4 ? "held" : "queued");
	}
	CU_ASSERT_EQUAL(s.v[6].jobid, id[3]);
	CU_ASSERT_EQUAL(s.v[7].jobid, id[0]);
	CU_ASSERT_EQUAL(s.v[8].jobid, id[2]);
	CU_ASSERT_STRING_EQUAL(s.v[8].state, "held");
	jobstore_close(js);
}

/* Node events; pruning keeps the last event, so the sequence goes on. */
static void test_nodes_prune(void)
{
	struct jobstore *js;
	struct seen s = { 0 };
	struct error err;
	int64_t first, last;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_node_admin_set(js, "n1", true, "fan"), 0);
	CU_ASSERT_EQUAL(jobstore_event_node(js, "n1", "down", "silent"), 0);
	CU_ASSERT_EQUAL(jobstore_node_admin_set_by(js, "n1", false, NULL, 1234, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_events_read(js, 0, 100, collect, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 3);
	CU_ASSERT_STRING_EQUAL(s.v[0].state, "drained");
	CU_ASSERT_EQUAL(s.v[0].uid, -1);
	CU_ASSERT_STRING_EQUAL(s.v[1].state, "down");
	CU_ASSERT_EQUAL(s.v[1].uid, -1);
	CU_ASSERT_EQUAL(s.v[1].jobid, 0);
	CU_ASSERT_STRING_EQUAL(s.v[2].state, "resumed");
	CU_ASSERT_EQUAL(s.v[2].uid, 1234);
	CU_ASSERT_EQUAL(s.v[2].jobid, 0);
	CU_ASSERT_EQUAL(jobstore_events_prune(js, INT64_MAX, 1), 1);
	CU_ASSERT_EQUAL(jobstore_events_prune(js, INT64_MAX, 100), 1);
	CU_ASSERT_EQUAL(jobstore_events_prune(js, INT64_MAX, 100), 0);
	CU_ASSERT_EQUAL(jobstore_events_bounds(js, &first, &last), 0);
	CU_ASSERT_EQUAL(first, 3);
	CU_ASSERT_EQUAL(last, 3);
	CU_ASSERT_EQUAL(jobstore_event_node(js, "n1", "down", NULL), 0);
	CU_ASSERT_EQUAL(jobstore_events_bounds(js, &first, &last), 0);
	CU_ASSERT_EQUAL(last, 4);
	jobstore_close(js);
}

/* A submit and its dispatch in one transaction (commit.c's joined pass):
 * the submits' events written first are `queued`, the dispatch's its own
 * `running` after them, all counted at the commit; rolled back, none is
 * kept or counted. Outside a transaction: -EINVAL. */
static void test_written_early(void)
{
	struct jobstore *js;
	struct seen s = { 0 };
	struct error err;
	int64_t id[2], gone;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_events_write(js), -EINVAL);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &gone), 0);
	CU_ASSERT_EQUAL(jobstore_events_write(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, gone, "n1", "0", NULL, 2000), 0);
	jobstore_rollback(js);
	CU_ASSERT_EQUAL(jobstore_events_committed(js), 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id[0]), 0);
	CU_ASSERT_EQUAL(jobstore_job_insert(js, &base, &id[1]), 0);
	CU_ASSERT_EQUAL(jobstore_events_write(js), 0);
	CU_ASSERT_EQUAL(jobstore_job_dispatch(js, id[1], "n1", "0", NULL, 2000), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL(jobstore_events_committed(js), 3);
	CU_ASSERT_EQUAL_FATAL(jobstore_events_read(js, 0, 100, collect, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 3);
	CU_ASSERT_EQUAL(s.v[0].jobid, id[0]);
	CU_ASSERT_STRING_EQUAL(s.v[0].state, "queued");
	CU_ASSERT_EQUAL(s.v[1].jobid, id[1]);
	CU_ASSERT_STRING_EQUAL(s.v[1].state, "queued");
	CU_ASSERT_EQUAL(s.v[2].jobid, id[1]);
	CU_ASSERT_STRING_EQUAL(s.v[2].state, "running");
	CU_ASSERT_STRING_EQUAL(s.v[2].node, "n1");
	for (unsigned i = 0; i < s.n; i++)
		CU_ASSERT_EQUAL(s.v[i].seq, i + 1);
	jobstore_close(js);
}

static const struct unit_test jobstore_events_tests[] = {
	{ "written_early", test_written_early },
	{ "job_life", test_job_life },
	{ "nodes_prune", test_nodes_prune },
	{ "batch_order", test_batch_order },
	{ "run_and_list", test_run_and_list },
	{ NULL, NULL },
};

UNIT_STORE_SUITE(jobstore_events, jobstore_events_tests);
