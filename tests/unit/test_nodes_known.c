/* SPDX-License-Identifier: MIT */
/* The known nodes across a restart: what a registration writes (only a
 * change), what a new pool loads, and what the fit checks make of it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nodes-known.h"
#include "unit.h"

/* A node as op_register leaves it: CPUs, NUMA nodes, topology summary. */
static struct node *node_registered(struct pool *p, const char *name, const char *cpus)
{
	struct node *n = pool_node_get(p, name);

	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	CU_ASSERT_EQUAL_FATAL(cpumask_parse(cpus, &n->cpus), 0);
	n->free = n->rt_free = n->cpus;
	snprintf(n->mems, sizeof(n->mems), "0");
	snprintf(n->cgroup, sizeof(n->cgroup), "v2");
	json_decref(n->topology);
	n->topology = json_pack("{s:i, s:i, s:i, s:i, s:I}", "packages", 1, "numa", 1, "cores", 4, "pus", 4,
				"mem", (json_int_t)(8LL << 30));
	n->state = NODE_UP;
	n->back = true;
	return n;
}

/* Registers n from address and flushes: the rows written. */
static int registered_flush(struct jobstore *js, struct pool *p, struct node *n, const char *address, int64_t now)
{
	nodes_known_note(n, address);
	return nodes_known_flush(js, p, now);
}

static void test_save_only_changes(void)
{
	struct jobstore *js;
	struct pool *p;
	struct error err;
	struct node *n;
	char name[16];

	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, ":memory:", &js, &err), 0);
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	CU_ASSERT_EQUAL(nodes_known_flush(js, p, 1), 0);   /* nothing noted */
	n = node_registered(p, "n1", "0-3");
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "192.0.2.1:40001", 100), 1);
	/* Registered again (a qnoded or qpoold restart), from another port. */
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "192.0.2.1:40002", 200), 0);
	CU_ASSERT(n->t_register == 100);
	CU_ASSERT_STRING_EQUAL(n->address, "192.0.2.1");
	/* Its CPUs changed: written. */
	CU_ASSERT_EQUAL(cpumask_parse("0-5", &n->cpus), 0);
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "192.0.2.1:40003", 300), 1);
	CU_ASSERT(n->t_register == 300);
	/* Its topology too; its address too. */
	json_object_set_new(n->topology, "numa", json_integer(2));
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "192.0.2.1:40004", 400), 1);
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "[2001:db8::1]:40004", 450), 1);
	CU_ASSERT_STRING_EQUAL(n->address, "[2001:db8::1]");
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "[2001:db8::1]:40005", 500), 0);
	/* A registration storm: 100 new nodes, one flush writes them all, a
	 * second (they all registered again) writes none. */
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		nodes_known_note(node_registered(p, name, "0"), "local");
	}
	CU_ASSERT_EQUAL(nodes_known_flush(js, p, 600), 100);
	for (n = pool_nodes(p); n; n = n->next)
		nodes_known_note(n, strcmp(n->name, "n1") == 0 ? "[2001:db8::1]:40006" : "local");
	CU_ASSERT_EQUAL(nodes_known_flush(js, p, 700), 0);
	pool_destroy(p);

	/* A new server's pool loads what the last writes held, and the same
	 * registrations then write nothing. */
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	CU_ASSERT_EQUAL(nodes_known_load(js, p), 0);
	n = pool_node_find(p, "n1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	CU_ASSERT_EQUAL(cpumask_count(&n->cpus), 6);
	CU_ASSERT(n->t_register == 450);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(n->topology, "numa")), 2);
	CU_ASSERT_PTR_NOT_NULL(pool_node_find(p, "s99"));
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "[2001:db8::1]:40006", 800), 0);
	pool_destroy(p);
	jobstore_close(js);
}

static void test_restart_fit(void)
{
	struct job one = { .ncpus = 1 }, four = { .ncpus = 4 }, five = { .ncpus = 5 };
	struct jobstore *js;
	struct pool *p;
	struct error err;
	struct node *n;
	char why[200];

	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, ":memory:", &js, &err), 0);
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	nodes_known_note(node_registered(p, "n1", "0-3"), "local");
	nodes_known_note(node_registered(p, "n2", "0-1"), "local");
	CU_ASSERT_EQUAL(nodes_known_flush(js, p, 1), 2);
	pool_destroy(p);

	/* Restarted: a node named by a running job's row or a qmgr drain
	 * only (CPUs unknown) is known before the stored ones are loaded. */
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	CU_ASSERT_PTR_NOT_NULL(pool_node_get(p, "drained-only"));
	CU_ASSERT_EQUAL(pool_request_check(p, &five, why, sizeof(why)), 0);   /* nothing known: it waits */
	CU_ASSERT_EQUAL(nodes_known_load(js, p), 0);
	CU_ASSERT_EQUAL(pool_request_check(p, &one, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(pool_request_check(p, &four, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(pool_request_check(p, &five, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "ncpus=5: more CPUs than any node has (the largest has 4)");
	CU_ASSERT_EQUAL(pool_node_max_cpus(p), 4);
	/* Known, not back: nothing is placed there, and a waiting job says
	 * which down nodes it waits for. */
	for (n = pool_nodes(p); n; n = n->next) {
		CU_ASSERT_FALSE(pool_node_usable(n));
		CU_ASSERT_FALSE(n->back);
	}
	CU_ASSERT_EQUAL(pool_request_wait_reason(p, &one, why, sizeof(why)), 1);
	CU_ASSERT_STRING_EQUAL(why, "waits for node(s) down: n1, n2");
	CU_ASSERT_EQUAL(pool_request_wait_reason(p, &four, why, sizeof(why)), 1);
	CU_ASSERT_STRING_EQUAL(why, "waits for node(s) down: n1");
	/* n2 is back: a 1-CPU job no longer waits for a down node; a 4-CPU
	 * one still waits for n1. */
	n = pool_node_find(p, "n2");
	n->link = n;   /* any non-NULL connection */
	n->state = NODE_UP;
	CU_ASSERT_EQUAL(pool_request_wait_reason(p, &one, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(pool_request_wait_reason(p, &four, why, sizeof(why)), 1);
	CU_ASSERT_STRING_EQUAL(why, "waits for node(s) down: n1");

	/* Deleting: refused while connected; n1 goes for good. */
	CU_ASSERT_EQUAL(nodes_known_delete(js, p, n), -EBUSY);
	n->link = NULL;
	CU_ASSERT_EQUAL(nodes_known_delete(js, p, pool_node_find(p, "n1")), 0);
	CU_ASSERT_PTR_NULL(pool_node_find(p, "n1"));
	CU_ASSERT_PTR_NOT_NULL(pool_node_find(p, "n2"));
	CU_ASSERT_PTR_NOT_NULL(pool_node_find(p, "drained-only"));
	CU_ASSERT_EQUAL(pool_request_check(p, &four, why, sizeof(why)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(why, "ncpus=4: more CPUs than any node has (the largest has 2)");
	pool_destroy(p);
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	CU_ASSERT_EQUAL(nodes_known_load(js, p), 0);
	CU_ASSERT_PTR_NULL(pool_node_find(p, "n1"));
	CU_ASSERT_PTR_NOT_NULL(pool_node_find(p, "n2"));
	pool_destroy(p);
	jobstore_close(js);
}

/* A node's GPUs ride in its stored topology text: a new server's pool
 * has them (all free, locality kept) before the node is back, and the
 * node object's topology does not show them twice. */
static void test_gpus_kept(void)
{
	struct node_gpu *g = calloc(2, sizeof(*g));
	struct jobstore *js;
	struct pool *p;
	struct error err;
	struct node *n;
	json_t *arr;
	char *text;

	CU_ASSERT_EQUAL_FATAL(jobstore_open(JOBSTORE_SQLITE, ":memory:", &js, &err), 0);
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	n = node_registered(p, "g1", "0-3");
	for (unsigned i = 0; i < 2; i++) {
		g[i].index = i;
		snprintf(g[i].file, sizeof(g[i].file), "/dev/nvidia%u", i);
		g[i].major = 195;
		g[i].minor = i;
		g[i].numa = (int)i;
	}
	cpumask_parse("2-3", &g[1].cpus);
	pool_node_gpus_set(n, g, 2);
	CU_ASSERT_EQUAL(n->gpus_free, 3);
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "local", 100), 1);
	CU_ASSERT_PTR_NULL(json_object_get(n->topology, "gpus"));
	/* The same GPUs again: nothing written. */
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "local", 200), 0);
	pool_destroy(p);

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	CU_ASSERT_EQUAL(nodes_known_load(js, p), 0);
	n = pool_node_find(p, "g1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	CU_ASSERT_FALSE(n->back);
	CU_ASSERT_EQUAL_FATAL(n->n_gpus, 2);
	CU_ASSERT_EQUAL(n->gpus_free, 3);
	CU_ASSERT_STRING_EQUAL(n->gpus[1].file, "/dev/nvidia1");
	CU_ASSERT_EQUAL(n->gpus[1].minor, 1);
	CU_ASSERT_EQUAL(n->gpus[1].numa, 1);
	CU_ASSERT_EQUAL(cpumask_count(&n->gpus[1].cpus), 2);
	CU_ASSERT_PTR_NULL(json_object_get(n->topology, "gpus"));
	CU_ASSERT_PTR_NOT_NULL(json_object_get(n->topology, "mem"));
	arr = pool_node_gpus_json(n);
	text = json_dumps(arr, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(arr);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"file\":\"/dev/nvidia0\""));
	CU_ASSERT_PTR_NULL(strstr(text, "\"job\""));
	free(text);
	/* Registered again unchanged: nothing written. */
	n->back = true;
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "local", 300), 0);
	/* Registered with none: written, and a new pool has none. */
	pool_node_gpus_set(n, NULL, 0);
	CU_ASSERT_EQUAL(registered_flush(js, p, n, "local", 400), 1);
	pool_destroy(p);
	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	CU_ASSERT_EQUAL(nodes_known_load(js, p), 0);
	n = pool_node_find(p, "g1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	CU_ASSERT_EQUAL(n->n_gpus, 0);
	pool_destroy(p);
	jobstore_close(js);
}

/* A registration (or the store) frees no GPU a running job holds there,
 * and the node object names the holder of each held GPU. */
static void test_gpus_held(void)
{
	struct job *j = calloc(1, sizeof(*j));
	struct node_gpu *g = calloc(3, sizeof(*g));
	struct pool *p;
	struct node *n;
	json_t *arr;

	CU_ASSERT_EQUAL_FATAL(pool_create(&p), 0);
	n = node_registered(p, "g1", "0-3");
	j->id = 77;
	snprintf(j->queue, sizeof(j->queue), "batch");
	j->ncpus = 1;
	j->state = JOB_RUNNING;
	CU_ASSERT_EQUAL_FATAL(job_alloc_init(j, 1), 0);
	j->alloc[0].node = strdup("g1");
	j->alloc[0].ncpus = 1;
	cpumask_parse("0", &j->alloc[0].cpus);
	j->alloc[0].claim = j->alloc[0].cpus;
	j->alloc[0].gpus = 1ULL << 1;
	CU_ASSERT_EQUAL_FATAL(pool_job_add(p, j), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pool_node_jobs(n));
	for (unsigned i = 0; i < 3; i++) {
		g[i].index = i;
		snprintf(g[i].file, sizeof(g[i].file), "/dev/nvidia%u", i);
		g[i].minor = i;
		g[i].numa = -1;
	}
	pool_node_gpus_set(n, g, 3);
	CU_ASSERT_EQUAL(n->gpus_free, 0x5);
	CU_ASSERT_EQUAL(pool_node_gpus_free(n), 2);
	arr = pool_node_gpus_json(n);
	CU_ASSERT_EQUAL_FATAL(json_array_size(arr), 3);
	CU_ASSERT_PTR_NULL(json_object_get(json_array_get(arr, 0), "job"));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_array_get(arr, 1), "job")), 77);
	CU_ASSERT_PTR_NULL(json_object_get(json_array_get(arr, 2), "job"));
	json_decref(arr);
	/* Its processes gone (CPUs back early): it holds nothing at the
	 * next registration. */
	j->alloc[0].cpus_back = true;
	pool_node_gpus_set(n, calloc(3, sizeof(*g)), 3);
	CU_ASSERT_EQUAL(n->gpus_free, 0x7);
	pool_destroy(p);
}

static const struct unit_test nodes_known_tests[] = {
	{ "gpus_held", test_gpus_held },
	{ "gpus_kept", test_gpus_kept },
	{ "save_only_changes", test_save_only_changes },
	{ "restart_fit", test_restart_fit },
	{ NULL, NULL },
};

UNIT_SUITE(nodes_known, nodes_known_tests);
