/* SPDX-License-Identifier: MIT */
/* The job store's nodes, on both backends: written at registration,
 * loaded at start, replaced whole, forgotten. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobstore.h"
#include "unit.h"

#define MAX_LOADED 4

struct loaded {
	unsigned n;
	struct {
		char name[64], cpus[64], mems[16], topology[128], cgroup[8], address[64];
		uint32_t ncpus;
		uint64_t mem;
		bool rt, has_topology;
		int64_t t_register;
	} v[MAX_LOADED];
};

static int collect(const struct jobstore_node *n, void *ud)
{
	struct loaded *l = ud;

	if (l->n == MAX_LOADED)
		return -E2BIG;
	snprintf(l->v[l->n].name, sizeof(l->v[0].name), "%s", n->name);
	snprintf(l->v[l->n].cpus, sizeof(l->v[0].cpus), "%s", n->cpus);
	snprintf(l->v[l->n].mems, sizeof(l->v[0].mems), "%s", n->mems);
	snprintf(l->v[l->n].topology, sizeof(l->v[0].topology), "%s", n->topology ? n->topology : "");
	snprintf(l->v[l->n].cgroup, sizeof(l->v[0].cgroup), "%s", n->cgroup);
	snprintf(l->v[l->n].address, sizeof(l->v[0].address), "%s", n->address);
	l->v[l->n].has_topology = n->topology != NULL;
	l->v[l->n].ncpus = n->ncpus;
	l->v[l->n].mem = n->mem;
	l->v[l->n].rt = n->rt;
	l->v[l->n].t_register = n->t_register;
	l->n++;
	return 0;
}

static int stop_at_first(const struct jobstore_node *n, void *ud)
{
	(*(unsigned *)ud)++;
	return -ECANCELED;
}

/* Every field comes back as written; a second put of a name replaces its
 * row whole (the node's topology changed); rows load in name order. */
static void test_round_trip(void)
{
	const struct jobstore_node big = {
		.name = "n2", .cpus = "0-127", .ncpus = 128, .mems = "0-7",
		.mem = 1ULL << 40,   /* past 32 bits: PostgreSQL's INTEGER would not hold it */
		.topology = "{\"packages\":2,\"numa\":8,\"cores\":64,\"pus\":128,\"mem\":1099511627776}",
		.rt = true, .cgroup = "v2", .address = "192.0.2.7", .t_register = 1700000000123456789LL,
	};
	struct jobstore_node small = {
		.name = "n1", .cpus = "0-1", .ncpus = 2, .mems = "0", .mem = 0, .topology = NULL,
		.rt = false, .cgroup = "none", .address = "local", .t_register = 5,
	};
	struct jobstore *js;
	struct loaded l = { 0 };
	struct error err;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_nodes_load(js, collect, &l), 0);
	CU_ASSERT_EQUAL(l.n, 0);
	CU_ASSERT_EQUAL(jobstore_begin(js), 0);
	CU_ASSERT_EQUAL(jobstore_node_put(js, &big), 0);
	CU_ASSERT_EQUAL(jobstore_node_put(js, &small), 0);
	CU_ASSERT_EQUAL(jobstore_commit(js), 0);
	CU_ASSERT_EQUAL_FATAL(jobstore_nodes_load(js, collect, &l), 0);
	CU_ASSERT_EQUAL_FATAL(l.n, 2);
	CU_ASSERT_STRING_EQUAL(l.v[0].name, "n1");
	CU_ASSERT_FALSE(l.v[0].has_topology);
	CU_ASSERT_STRING_EQUAL(l.v[0].address, "local");
	CU_ASSERT_STRING_EQUAL(l.v[1].name, "n2");
	CU_ASSERT_STRING_EQUAL(l.v[1].cpus, "0-127");
	CU_ASSERT_EQUAL(l.v[1].ncpus, 128);
	CU_ASSERT_STRING_EQUAL(l.v[1].mems, "0-7");
	CU_ASSERT(l.v[1].mem == 1ULL << 40);
	CU_ASSERT_STRING_EQUAL(l.v[1].topology, big.topology);
	CU_ASSERT(l.v[1].rt);
	CU_ASSERT_STRING_EQUAL(l.v[1].cgroup, "v2");
	CU_ASSERT_STRING_EQUAL(l.v[1].address, "192.0.2.7");
	CU_ASSERT(l.v[1].t_register == 1700000000123456789LL);

	/* n1 came back with more CPUs: its row is the new one, still one row. */
	small.cpus = "0-3";
	small.ncpus = 4;
	small.topology = "{\"pus\":4}";
	small.t_register = 6;
	CU_ASSERT_EQUAL(jobstore_node_put(js, &small), 0);
	l.n = 0;
	CU_ASSERT_EQUAL_FATAL(jobstore_nodes_load(js, collect, &l), 0);
	CU_ASSERT_EQUAL_FATAL(l.n, 2);
	CU_ASSERT_STRING_EQUAL(l.v[0].cpus, "0-3");
	CU_ASSERT_EQUAL(l.v[0].ncpus, 4);
	CU_ASSERT_STRING_EQUAL(l.v[0].topology, "{\"pus\":4}");
	CU_ASSERT(l.v[0].t_register == 6);

	/* A callback's error stops the load and is what it returns. */
	{
		unsigned calls = 0;

		CU_ASSERT_EQUAL(jobstore_nodes_load(js, stop_at_first, &calls), -ECANCELED);
		CU_ASSERT_EQUAL(calls, 1);
	}
	jobstore_close(js);
}

/* Deleting forgets the row and the node's qmgr settings; a name the store
 * never had is -ENOENT; a node known only by its qmgr drain is deleted. */
static void test_delete(void)
{
	const struct jobstore_node n1 = {
		.name = "n1", .cpus = "0", .ncpus = 1, .mems = "0", .cgroup = "v2", .address = "local",
		.t_register = 1,
	};
	struct jobstore *js;
	struct loaded l = { 0 };
	struct error err;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_node_put(js, &n1), 0);
	CU_ASSERT_EQUAL(jobstore_node_admin_set(js, "n1", true, "broken fan"), 0);
	CU_ASSERT_EQUAL(jobstore_node_admin_set(js, "only-drained", true, NULL), 0);
	CU_ASSERT_EQUAL(jobstore_node_delete(js, "n1"), 0);
	CU_ASSERT_EQUAL(jobstore_node_delete(js, "n1"), -ENOENT);
	CU_ASSERT_EQUAL(jobstore_node_delete(js, "never"), -ENOENT);
	CU_ASSERT_EQUAL(jobstore_node_delete(js, "only-drained"), 0);
	CU_ASSERT_EQUAL(jobstore_nodes_load(js, collect, &l), 0);
	CU_ASSERT_EQUAL(l.n, 0);
	jobstore_close(js);
}

struct drained {
	unsigned n;
	long long drain, t_drain;
	char reason[32];
};

static int drained_cb(const char *node, long long drain, long long t_drain, const char *reason, void *ud)
{
	struct drained *d = ud;

	if (strcmp(node, "n1") != 0)
		return 0;
	d->n++;
	d->drain = drain;
	d->t_drain = t_drain;
	snprintf(d->reason, sizeof(d->reason), "%s", reason ? reason : "");
	return 0;
}

static int ignore_cb(const char *key, long long a, long long b, const char *text, void *ud)
{
	return 0;
}

/* A drain keeps its time (wall s) in the store, so a restarted or new
 * active qpoold tells when a node was drained; a resume clears it. */
static void test_drain_time(void)
{
	const struct jobstore_admin_cbs cbs = { .rotation = ignore_cb, .queue = ignore_cb, .node = drained_cb };
	struct jobstore *js;
	struct drained d = { 0 };
	struct error err;
	long long t0 = (long long)time(NULL);
	int64_t stored = -1;

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	CU_ASSERT_EQUAL(jobstore_node_admin_set_by(js, "n1", 1, "broken fan", 0, &stored), 0);
	CU_ASSERT_EQUAL(jobstore_admin_load(js, &cbs, &d), 0);
	CU_ASSERT_EQUAL(d.n, 1);
	CU_ASSERT_EQUAL(d.drain, 1);
	CU_ASSERT_STRING_EQUAL(d.reason, "broken fan");
	CU_ASSERT_TRUE(d.t_drain >= t0 - 1 && d.t_drain <= (long long)time(NULL) + 1);
	/* The second it returned is the one a restart reads back: qpoold
	 * shows the same drain time before and after (t-iqs). */
	CU_ASSERT_EQUAL(stored, d.t_drain);
	CU_ASSERT_EQUAL(jobstore_node_admin_set_by(js, "n1", 0, NULL, 0, &stored), 0);
	CU_ASSERT_EQUAL(stored, 0);
	d = (struct drained){ 0 };
	CU_ASSERT_EQUAL(jobstore_admin_load(js, &cbs, &d), 0);
	CU_ASSERT_EQUAL(d.n, 1);
	CU_ASSERT_EQUAL(d.drain, 0);
	CU_ASSERT_EQUAL(d.t_drain, -1);
	jobstore_close(js);
}

static const struct unit_test jobstore_nodes_tests[] = {
	{ "round_trip", test_round_trip },
	{ "delete", test_delete },
	{ "drain time", test_drain_time },
	{ NULL, NULL },
};

UNIT_STORE_SUITE(jobstore_nodes, jobstore_nodes_tests);
