/* SPDX-License-Identifier: MIT */
/* The nodes qpoold knows, in the job store (see nodes-known.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes-known.h"

/* What a row holds of n, as one string: a registration that changes none
 * of it writes nothing (a restart of qpoold makes every node register
 * again, and their rows are unchanged). t_register is not part of it. */
static char *row_key(const struct jobstore_node *r)
{
	char *key;

	if (asprintf(&key, "%s\n%s\n%llu\n%s\n%d\n%s\n%s", r->cpus, r->mems, (unsigned long long)r->mem,
		     r->topology ? r->topology : "", r->rt, r->cgroup, r->address) < 0)
		return NULL;
	return key;
}

static int row_node(const struct jobstore_node *r, void *ud)
{
	struct pool *p = ud;
	struct cpumask cpus;
	struct node *n;

	if (cpumask_parse(r->cpus ? r->cpus : "", &cpus) < 0 || cpumask_count(&cpus) == 0 || !r->name)
		return 0;
	n = pool_node_get(p, r->name);
	if (!n)
		return -ENOMEM;
	n->cpus = cpus;
	n->free = cpus;
	n->rt_free = cpus;
	snprintf(n->mems, sizeof(n->mems), "%s", r->mems ? r->mems : "0");
	snprintf(n->cgroup, sizeof(n->cgroup), "%s", r->cgroup ? r->cgroup : "none");
	snprintf(n->address, sizeof(n->address), "%s", r->address ? r->address : "");
	n->rt = r->rt;
	json_decref(n->topology);
	n->topology = r->topology ? json_loads(r->topology, 0, NULL) : NULL;
	n->t_register = r->t_register;
	free(n->stored);
	n->stored = row_key(r);
	return 0;
}

int nodes_known_load(struct jobstore *js, struct pool *p)
{
	return jobstore_nodes_load(js, row_node, p);
}

int nodes_known_save(struct jobstore *js, struct node *n, const char *address, int64_t now)
{
	char cpus[4096], *topology = NULL, *key;
	json_t *mem = json_object_get(n->topology, "mem");
	const char *colon = strrchr(address, ':');
	struct jobstore_node r = {
		.name = n->name, .cpus = cpus, .ncpus = (uint32_t)cpumask_count(&n->cpus), .mems = n->mems,
		.mem = json_is_integer(mem) && json_integer_value(mem) > 0 ? (uint64_t)json_integer_value(mem) : 0,
		.rt = n->rt, .cgroup = n->cgroup, .address = "local", .t_register = now,
	};
	char addr[sizeof(n->address)];
	int ret;

	/* Over TCP the address without its port, which changes with every
	 * connection; "[v6]:port" keeps its brackets. */
	if (colon) {
		snprintf(addr, sizeof(addr), "%.*s", (int)(colon - address), address);
		r.address = addr;
	}
	cpumask_format(&n->cpus, cpus, sizeof(cpus));
	if (n->topology && !(topology = json_dumps(n->topology, JSON_COMPACT | JSON_SORT_KEYS)))
		return -ENOMEM;
	r.topology = topology;
	key = row_key(&r);
	if (!key) {
		free(topology);
		return -ENOMEM;
	}
	if (n->stored && strcmp(n->stored, key) == 0) {
		free(key);
		free(topology);
		return 0;
	}
	ret = jobstore_node_put(js, &r);
	if (ret == 0) {
		free(n->stored);
		n->stored = key;
		key = NULL;
		n->t_register = now;
		snprintf(n->address, sizeof(n->address), "%s", r.address);
		ret = 1;
	}
	free(key);
	free(topology);
	return ret;
}

int nodes_known_delete(struct jobstore *js, struct pool *p, struct node *n)
{
	int r;

	if (n->link || pool_node_jobs(n))
		return -EBUSY;
	r = jobstore_node_delete(js, n->name);
	if (r < 0 && r != -ENOENT)
		return r;
	return pool_node_remove(p, n);
}
