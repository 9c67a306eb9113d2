/* SPDX-License-Identifier: MIT */
/* Jobs by id (open-addressing hash), nodes by name, and first-fit placement. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

struct pool {
	struct job *head, *tail;      /* submit order */
	struct job **table;           /* hash by id; NULL empty, TOMB deleted */
	size_t cap, used, tombs;
	struct node *nodes;
};

static struct job tomb;
#define TOMB (&tomb)

const char *node_state_name(enum node_state s)
{
	static const char *names[] = { "up", "down", "drained" };

	return (unsigned)s < 3 ? names[s] : "unknown";
}

int pool_create(struct pool **ret)
{
	struct pool *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->cap = 1024;
	p->table = calloc(p->cap, sizeof(*p->table));
	if (!p->table) {
		free(p);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

void pool_destroy(struct pool *p)
{
	if (!p)
		return;
	for (struct job *j = p->head, *n; j; j = n) {
		n = j->next;
		job_free(j);
	}
	for (struct node *nd = p->nodes, *n; nd; nd = n) {
		n = nd->next;
		free(nd->name);
		free(nd->rt_reason);
		json_decref(nd->topology);
		free(nd);
	}
	free(p->table);
	free(p);
}

static size_t slot_of(int64_t id, size_t cap)
{
	/* Fibonacci hashing spreads consecutive ids. */
	return (size_t)(((uint64_t)id * 11400714819323198485ULL) >> 20) & (cap - 1);
}

static int table_grow(struct pool *p)
{
	size_t cap = p->used * 4 > p->cap ? p->cap * 2 : p->cap;
	struct job **t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++) {
		struct job *j = p->table[i];
		size_t s;

		if (!j || j == TOMB)
			continue;
		for (s = slot_of(j->id, cap); t[s]; s = (s + 1) & (cap - 1))
			;
		t[s] = j;
	}
	free(p->table);
	p->table = t;
	p->cap = cap;
	p->tombs = 0;
	return 0;
}

int pool_job_add(struct pool *p, struct job *j)
{
	size_t s;

	if ((p->used + p->tombs + 1) * 2 > p->cap) {
		int r = table_grow(p);

		if (r < 0)
			return r;
	}
	for (s = slot_of(j->id, p->cap); p->table[s] && p->table[s] != TOMB; s = (s + 1) & (p->cap - 1))
		if (p->table[s]->id == j->id)
			return -EEXIST;
	if (p->table[s] == TOMB)
		p->tombs--;
	p->table[s] = j;
	p->used++;
	j->next = NULL;
	j->prev = p->tail;
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	return 0;
}

struct job *pool_job_find(const struct pool *p, int64_t id)
{
	for (size_t s = slot_of(id, p->cap); p->table[s]; s = (s + 1) & (p->cap - 1))
		if (p->table[s] != TOMB && p->table[s]->id == id)
			return p->table[s];
	return NULL;
}

void pool_job_remove(struct pool *p, struct job *j)
{
	for (size_t s = slot_of(j->id, p->cap); p->table[s]; s = (s + 1) & (p->cap - 1))
		if (p->table[s] == j) {
			p->table[s] = TOMB;
			p->used--;
			p->tombs++;
			break;
		}
	pool_job_release(p, j);
	if (j->prev)
		j->prev->next = j->next;
	else
		p->head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		p->tail = j->prev;
	job_free(j);
}

struct job *pool_jobs(const struct pool *p)
{
	return p->head;
}

struct node *pool_node_find(const struct pool *p, const char *name)
{
	for (struct node *n = p->nodes; n; n = n->next)
		if (strcmp(n->name, name) == 0)
			return n;
	return NULL;
}

struct node *pool_node_get(struct pool *p, const char *name)
{
	struct node *n = pool_node_find(p, name);
	struct node **tail;

	if (n)
		return n;
	n = calloc(1, sizeof(*n));
	if (!n || !(n->name = strdup(name))) {
		free(n);
		return NULL;
	}
	n->state = NODE_DOWN;
	/* Keep nodes in registration order for listings. */
	for (tail = &p->nodes; *tail; tail = &(*tail)->next)
		;
	*tail = n;
	return n;
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

void pool_job_claim(struct pool *p, struct job *j)
{
	struct node *n = j->node ? pool_node_find(p, j->node) : NULL;

	if (!n)
		return;
	for (int c = cpumask_next(&j->cpus, 0); c >= 0; c = cpumask_next(&j->cpus, c + 1))
		cpumask_clear(&n->free, (unsigned)c);
}

void pool_job_release(struct pool *p, struct job *j)
{
	struct node *n = j->node ? pool_node_find(p, j->node) : NULL;

	if (n)
		for (int c = cpumask_next(&j->cpus, 0); c >= 0; c = cpumask_next(&j->cpus, c + 1))
			if (cpumask_test(&n->cpus, (unsigned)c))
				cpumask_set(&n->free, (unsigned)c);
	free(j->node);
	j->node = NULL;
	memset(&j->cpus, 0, sizeof(j->cpus));
}

/* The lowest-numbered n free CPUs of node, or false when it has fewer. */
static bool node_fit(const struct node *nd, unsigned n, struct cpumask *ret)
{
	struct cpumask m = { { 0 } };
	unsigned got = 0;

	if (nd->state != NODE_UP || !nd->link || cpumask_count(&nd->free) < n)
		return false;
	for (int c = cpumask_next(&nd->free, 0); c >= 0 && got < n; c = cpumask_next(&nd->free, c + 1)) {
		cpumask_set(&m, (unsigned)c);
		got++;
	}
	*ret = m;
	return true;
}

static int queue_order_cmp(const void *a, const void *b)
{
	const struct queue_conf *qa = *(const struct queue_conf *const *)a;
	const struct queue_conf *qb = *(const struct queue_conf *const *)b;

	if (qa->priority != qb->priority)
		return qa->priority > qb->priority ? -1 : 1;
	return qa < qb ? -1 : qa > qb;
}

size_t pool_schedule(struct pool *p, const struct config *c, struct dispatch *ret, size_t max)
{
	const struct queue_conf **order;
	size_t n = 0;
	unsigned free_total = 0;

	for (struct node *nd = p->nodes; nd; nd = nd->next)
		if (nd->state == NODE_UP && nd->link)
			free_total += cpumask_count(&nd->free);
	if (free_total == 0 || c->n_queues == 0)
		return 0;
	order = malloc(c->n_queues * sizeof(*order));
	if (!order)
		return 0;
	for (size_t i = 0; i < c->n_queues; i++)
		order[i] = &c->queues[i];
	qsort(order, c->n_queues, sizeof(*order), queue_order_cmp);

	for (size_t qi = 0; qi < c->n_queues && n < max && free_total; qi++) {
		const struct queue_conf *q = order[qi];

		if (!q->started)
			continue;
		for (struct job *j = p->head; j && n < max && free_total; j = j->next) {
			struct cpumask cpus;

			if (j->state != JOB_QUEUED || strcmp(j->queue, q->name) != 0 || j->ncpus > free_total)
				continue;
			for (struct node *nd = p->nodes; nd; nd = nd->next) {
				if (!node_fit(nd, j->ncpus, &cpus))
					continue;
				j->node = strdup(nd->name);
				if (!j->node)
					break;
				j->cpus = cpus;
				j->state = JOB_RUNNING;
				pool_job_claim(p, j);
				free_total -= j->ncpus;
				ret[n].job = j;
				ret[n].node = nd;
				n++;
				break;
			}
		}
	}
	free(order);
	return n;
}
