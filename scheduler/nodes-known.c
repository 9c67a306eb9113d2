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
	/* The node's GPUs ride in the topology text (no schema change): a
	 * server that just started knows them before the node is back. An
	 * entry that does not check out leaves the node without GPUs until
	 * it registers. */
	if (json_is_object(n->topology) && json_object_get(n->topology, "gpus")) {
		struct node_gpu *gpus;
		unsigned n_gpus;

		if (gpu_list_parse(json_object_get(n->topology, "gpus"), &cpus, &gpus, &n_gpus, NULL) == 0)
			pool_node_gpus_set(n, gpus, n_gpus);
		json_object_del(n->topology, "gpus");
	}
	free(n->features);
	n->features = NULL;
	if (json_is_string(json_object_get(n->topology, "features"))) {
		char canon[1200];

		if (nodesel_features_canon(json_string_value(json_object_get(n->topology, "features")), canon,
					   sizeof(canon), NULL) == 0 && canon[0])
			n->features = strdup(canon);
	}
	free(n->res);
	n->res = NULL;
	n->n_res = 0;
	if (json_is_string(json_object_get(n->topology, "resources"))) {
		struct noderes res[NODERES_MAX];
		size_t n_res;

		if (noderes_parse(json_string_value(json_object_get(n->topology, "resources")), res, NODERES_MAX,
				  &n_res, NULL) == 0 && n_res && (n->res = malloc(n_res * sizeof(*n->res)))) {
			memcpy(n->res, res, n_res * sizeof(*res));
			n->n_res = (unsigned)n_res;
		}
	}
	n->t_register = r->t_register;
	free(n->stored);
	n->stored = row_key(r);
	return 0;
}

int nodes_known_load(struct jobstore *js, struct pool *p)
{
	return jobstore_nodes_load(js, row_node, p);
}

void nodes_known_note(struct node *n, const char *address)
{
	const char *colon = strrchr(address, ':');

	/* Over TCP the address without its port, which changes with every
	 * connection; "[v6]:port" keeps its brackets. */
	if (colon)
		snprintf(n->address, sizeof(n->address), "%.*s", (int)(colon - address), address);
	else
		snprintf(n->address, sizeof(n->address), "local");
	n->noted = true;
}

/* Writes n's row if it differs from the stored one: 1, 0, or -errno.
 * *ret_key: the row's key, for n->stored once the transaction commits. */
static int node_write(struct jobstore *js, struct node *n, int64_t now, char **ret_key)
{
	char cpus[4096], *topology = NULL, *key;
	json_t *mem = json_object_get(n->topology, "mem");
	struct jobstore_node r = {
		.name = n->name, .cpus = cpus, .ncpus = (uint32_t)cpumask_count(&n->cpus), .mems = n->mems,
		.mem = json_is_integer(mem) && json_integer_value(mem) > 0 ? (uint64_t)json_integer_value(mem) : 0,
		.rt = n->rt, .cgroup = n->cgroup, .address = n->address, .t_register = now,
		.up_told = n->up_told_now,
	};
	int ret;

	*ret_key = NULL;
	cpumask_format(&n->cpus, cpus, sizeof(cpus));
	if (n->n_gpus) {
		/* The topology text as stored carries the GPUs (row_node). */
		json_t *t = n->topology ? json_copy(n->topology) : json_object();

		if (!t || json_object_set_new(t, "gpus", gpu_list_json(n->gpus, n->n_gpus)) < 0 ||
		    !(topology = json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS))) {
			json_decref(t);
			return -ENOMEM;
		}
		json_decref(t);
	} else if (n->topology && !(topology = json_dumps(n->topology, JSON_COMPACT | JSON_SORT_KEYS))) {
		return -ENOMEM;
	}
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
	free(topology);
	if (ret < 0) {
		free(key);
		return ret;
	}
	*ret_key = key;
	return 1;
}

int nodes_known_flush(struct jobstore *js, struct pool *p, int64_t now)
{
	unsigned written = 0;
	struct node *n;
	int r = 0;

	for (n = pool_nodes(p); n && !n->noted; n = n->next)
		;
	if (!n)
		return 0;
	r = jobstore_begin(js);
	for (; n && r >= 0; n = n->next) {
		char *key;

		if (!n->noted)
			continue;
		r = node_write(js, n, now, &key);
		if (r > 0) {
			/* Taken as stored now; undone below if the commit fails. */
			free(n->stored);
			n->stored = key;
			n->t_register = now;
			written++;
		}
	}
	if (r >= 0)
		r = jobstore_commit(js);
	if (r < 0) {
		jobstore_rollback(js);
		/* Unknown what the store holds of them: the next registration
		 * of each writes its row. */
		for (n = pool_nodes(p); n; n = n->next)
			if (n->noted) {
				free(n->stored);
				n->stored = NULL;
			}
	}
	for (n = pool_nodes(p); n; n = n->next)
		n->noted = n->up_told_now = false;
	return r < 0 ? r : (int)written;
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
