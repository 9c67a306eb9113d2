/* SPDX-License-Identifier: MIT */
/* The pool's nodes: by name (open-addressing hash) in registration order,
 * their shared topologies, and what a node offers (whether it takes jobs,
 * its memory). Below placement (place.c, place-numa.c), reservations
 * (pool-resv.c) and the pass (pool.c), which all look nodes up here. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "pool-internal.h"

/* Nodes of one pool are mostly alike: they share one loaded topology per
 * distinct hwloc text (placement only reads it). */
struct shared_topo {
	char *text;
	size_t len;
	hwloc_topology_t topo;
	unsigned refs;
	struct shared_topo *next;
};

static size_t name_hash(const char *name)
{
	uint64_t h = 14695981039346656037ULL;   /* FNV-1a */

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ULL;
	return (size_t)h;
}

struct node *pool_node_find(const struct pool *p, const char *name)
{
	if (!p->node_cap)
		return NULL;
	for (size_t i = name_hash(name) & (p->node_cap - 1); p->node_table[i];
	     i = (i + 1) & (p->node_cap - 1))
		if (strcmp(p->node_table[i]->name, name) == 0)
			return p->node_table[i];
	return NULL;
}

static void node_table_put(struct node **table, size_t cap, struct node *n)
{
	size_t i = name_hash(n->name) & (cap - 1);

	while (table[i])
		i = (i + 1) & (cap - 1);
	table[i] = n;
}

struct node *pool_node_get(struct pool *p, const char *name)
{
	struct node *n = pool_node_find(p, name);

	if (n)
		return n;
	/* Keep the table at most half full. */
	if (2 * (p->node_used + 1) > p->node_cap) {
		size_t cap = p->node_cap ? 2 * p->node_cap : 64;
		struct node **t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (struct node *o = p->nodes; o; o = o->next)
			node_table_put(t, cap, o);
		free(p->node_table);
		p->node_table = t;
		p->node_cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n || !(n->name = strdup(name))) {
		free(n);
		return NULL;
	}
	n->state = NODE_DOWN;
	node_table_put(p->node_table, p->node_cap, n);
	p->node_used++;
	/* Keep nodes in registration order for listings. */
	if (p->nodes_tail)
		p->nodes_tail->next = n;
	else
		p->nodes = n;
	p->nodes_tail = n;
	return n;
}

int pool_topology_get(struct pool *p, const char *text, size_t len, hwloc_topology_t *ret, struct error *err)
{
	struct shared_topo *t;
	int r;

	for (t = p->topos; t; t = t->next)
		if (t->len == len && memcmp(t->text, text, len) == 0) {
			t->refs++;
			*ret = t->topo;
			return 0;
		}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->text = malloc(len ? len : 1))) {
		free(t);
		return error_set(err, -ENOMEM, "out of memory");
	}
	memcpy(t->text, text, len);
	t->len = len;
	r = placement_topology_load(text, len, &t->topo, err);
	if (r < 0) {
		free(t->text);
		free(t);
		return r;
	}
	t->refs = 1;
	t->next = p->topos;
	p->topos = t;
	*ret = t->topo;
	return 0;
}

void pool_topology_put(struct pool *p, hwloc_topology_t topo)
{
	for (struct shared_topo **tp = &p->topos, *t; (t = *tp); tp = &t->next)
		if (t->topo == topo) {
			if (--t->refs == 0) {
				*tp = t->next;
				hwloc_topology_destroy(t->topo);
				free(t->text);
				free(t);
			}
			return;
		}
}

void pool_topologies_free(struct pool *p)
{
	for (struct shared_topo *t = p->topos, *n; t; t = n) {
		n = t->next;
		hwloc_topology_destroy(t->topo);
		free(t->text);
		free(t);
	}
	p->topos = NULL;
}

struct node *pool_nodes(const struct pool *p)
{
	return p->nodes;
}

unsigned pool_node_max_cpus(const struct pool *p)
{
	unsigned max = 0;

	for (struct node *n = p->nodes; n; n = n->next) {
		unsigned c = cpumask_count(&n->cpus);

		if (c > max)
			max = c;
	}
	return max;
}

int pool_node_remove(struct pool *p, struct node *n)
{
	struct node **np;

	if (n->link || n->jobs)
		return -EBUSY;
	for (np = &p->nodes; *np && *np != n; np = &(*np)->next)
		;
	if (!*np)
		return -ENOENT;
	*np = n->next;
	if (p->nodes_tail == n) {
		p->nodes_tail = NULL;
		for (struct node *o = p->nodes; o; o = o->next)
			p->nodes_tail = o;
	}
	/* Open addressing without tombstones: the table is built again (an
	 * admin's command; nodes are few thousand at most). */
	memset(p->node_table, 0, p->node_cap * sizeof(*p->node_table));
	for (struct node *o = p->nodes; o; o = o->next)
		node_table_put(p->node_table, p->node_cap, o);
	p->node_used--;
	if (n->topo)
		pool_topology_put(p, n->topo);
	free(n->name);
	free(n->rt_reason);
	free(n->drain_reason);
	free(n->features);
	free(n->res);
	free(n->stored);
	free(n->gpus);
	json_decref(n->topology);
	free(n);
	return 0;
}

bool pool_node_usable(const struct node *n)
{
	return n->state == NODE_UP && n->link && !n->drain;
}

uint64_t pool_node_mem(const struct node *n)
{
	json_int_t m = json_integer_value(json_object_get(n->topology, "mem"));

	return m > 0 ? (uint64_t)m : 0;
}

uint64_t pool_node_mem_free(const struct node *n)
{
	uint64_t m = pool_node_mem(n);

	if (!m)
		return UINT64_MAX;
	return m > n->mem_used ? m - n->mem_used : 0;
}

uint64_t pool_mem_per_cpu_auto(const struct pool *p)
{
	uint64_t best = 0;

	for (const struct node *n = p->nodes; n; n = n->next) {
		unsigned c = cpumask_count(&n->cpus);
		uint64_t m = pool_node_mem(n);

		if (c && m && (!best || m / c < best))
			best = m / c;
	}
	return best;
}

uint64_t pool_mem_node_max(const struct pool *p)
{
	uint64_t best = 0;

	for (const struct node *n = p->nodes; n; n = n->next)
		if (pool_node_mem(n) > best)
			best = pool_node_mem(n);
	return best;
}
