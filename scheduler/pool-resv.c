/* SPDX-License-Identifier: MIT */
/* Reservations as placement sees them (docs/RESERVATIONS.md): fixed
 * blocks of nodes over time. place.c asks one question, whether a job may
 * hold a node from one time to another; the rest (store, commands,
 * standing ones) is resv.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool-internal.h"
#include "sort.h"

struct pool_resv {
	char *name;
	int64_t start, end;      /* wall s, [start, end) */
	bool maint;
	bool all;                /* every node, those that come later too */
	char **nodes;            /* sorted, for bsearch */
	size_t n_nodes;
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void resv_clear(struct pool *p)
{
	for (size_t i = 0; i < p->n_resv; i++) {
		for (size_t k = 0; k < p->resv[i].n_nodes; k++)
			free(p->resv[i].nodes[k]);
		free(p->resv[i].nodes);
		free(p->resv[i].name);
	}
	free(p->resv);
	p->resv = NULL;
	p->n_resv = 0;
}

void pool_resv_free(struct pool *p)
{
	resv_clear(p);
}

int pool_resv_set(struct pool *p, const struct pool_resv_spec *v, size_t n)
{
	struct pool_resv *r = calloc(n ? n : 1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		r[i].start = v[i].start;
		r[i].end = v[i].end;
		r[i].maint = v[i].maint;
		r[i].all = v[i].all;
		r[i].name = strdup(v[i].name);
		r[i].nodes = calloc(v[i].n_nodes ? v[i].n_nodes : 1, sizeof(char *));
		if (!r[i].name || !r[i].nodes)
			goto oom;
		for (size_t k = 0; k < v[i].n_nodes; k++) {
			if (!(r[i].nodes[k] = strdup(v[i].nodes[k])))
				goto oom;
			r[i].n_nodes++;
		}
		qp_sort(r[i].nodes, r[i].n_nodes, sizeof(char *), name_cmp);
	}
	resv_clear(p);
	p->resv = r;
	p->n_resv = n;
	return 0;
oom:
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < r[i].n_nodes; k++)
			free(r[i].nodes[k]);
		free(r[i].nodes);
		free(r[i].name);
	}
	free(r);
	return -ENOMEM;
}

static bool resv_has(const struct pool_resv *r, const char *node)
{
	return r->all || bsearch(&node, r->nodes, r->n_nodes, sizeof(char *), name_cmp) != NULL;
}

static const struct pool_resv *resv_find(const struct pool *p, const char *name)
{
	for (size_t i = 0; name && i < p->n_resv; i++)
		if (!strcmp(p->resv[i].name, name))
			return &p->resv[i];
	return NULL;
}

void pool_resv_pass_begin(struct pool *p, int64_t now)
{
	for (struct node *n = p->nodes; n; n = n->next)
		n->resv_from = INT64_MAX;
	p->far_t = 0;
	/* By reservation, through the node table: the cost is the nodes
	 * reserved, not nodes times reservations. */
	for (size_t i = 0; i < p->n_resv; i++) {
		const struct pool_resv *r = &p->resv[i];

		if (r->end <= now)
			continue;
		if (r->all)
			for (struct node *n = p->nodes; n; n = n->next)
				n->resv_from = r->start < n->resv_from ? r->start : n->resv_from;
		for (size_t k = 0; !r->all && k < r->n_nodes; k++) {
			struct node *n = pool_node_find(p, r->nodes[k]);

			if (n && r->start < n->resv_from)
				n->resv_from = r->start;
		}
	}
	for (struct node *n = p->nodes; n; n = n->next)
		if (n->resv_from != INT64_MAX && n->resv_from > p->far_t)
			p->far_t = n->resv_from;
}

bool pool_resv_allows(const struct pool *p, const struct job *j, const char *node, int64_t start, int64_t end)
{
	const struct pool_resv *mine = NULL;

	if (j->resv) {
		/* A job of a reservation: only its nodes, only its times; one
		 * whose reservation is gone waits (its reason says so). */
		mine = resv_find(p, j->resv);
		if (!mine || !resv_has(mine, node) || start < mine->start || end > mine->end)
			return false;
	}
	for (size_t i = 0; i < p->n_resv; i++) {
		const struct pool_resv *r = &p->resv[i];

		if (r != mine && start < r->end && end > r->start && resv_has(r, node))
			return false;
	}
	return true;
}

int64_t pool_resv_next_edge(const struct pool *p, int64_t now)
{
	int64_t next = 0;

	for (size_t i = 0; i < p->n_resv; i++) {
		int64_t t = p->resv[i].start > now ? p->resv[i].start : p->resv[i].end;

		if (t > now && (!next || t < next))
			next = t;
	}
	return next;
}

/* "08:00" today, else "Mon 08:00" within a week, else the date. */
static void when(int64_t t, int64_t now, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	localtime_r(&tt, &tm);
	strftime(buf, len, t - now < 86400 ? "%H:%M:%S" : t - now < 7 * 86400 ? "%a %H:%M" : "%Y-%m-%dT%H:%M",
		 &tm);
}

static void hms(int64_t s, char *buf, size_t len)
{
	snprintf(buf, len, "%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
		 (long long)(s % 60));
}

/* Whether n has j's CPUs free now, by count. */
static bool node_room(const struct node *n, const struct job *j)
{
	return pool_node_usable(n) && !n->n_excl && cpumask_count(&n->free) >= job_widest_cpus(j);
}

int pool_request_resv_wait(const struct pool *p, const struct job *j, int64_t now, char *buf, size_t len)
{
	const struct pool_resv *mine = j->resv ? resv_find(p, j->resv) : NULL;
	int64_t end = j->walltime ? now + (int64_t)j->walltime : INT64_MAX;
	const struct pool_resv *block = NULL;
	char at[40], w[32];

	/* qstat asks this of every waiting job: no reservation, no cost. */
	if (!p->n_resv && !j->resv)
		return 0;
	if (j->resv) {
		if (!mine)
			return snprintf(buf, len, "Reservation: reservation %s does not exist (any more)", j->resv), 1;
		if (now < mine->start) {
			when(mine->start, now, at, sizeof(at));
			return snprintf(buf, len, "Reservation: waits for reservation %s to start at %s", mine->name, at), 1;
		}
		if (end > mine->end) {
			when(mine->end, now, at, sizeof(at));
			hms(mine->end - now, w, sizeof(w));
			return snprintf(buf, len, "Reservation: would outlast reservation %s (ends at %s); with walltime <= %s it fits",
					mine->name, at, w), 1;
		}
		return 0;
	}
	/* A job that would fit a node by its free CPUs now, but for a
	 * reservation it would run into: the earliest such, with the remedy.
	 * Walked by reservation (a node found with room ends each walk), not
	 * by node and reservation: qstat asks it of every waiting job. */
	for (size_t i = 0; i < p->n_resv; i++) {
		const struct pool_resv *r = &p->resv[i];
		bool room = false;

		if (now >= r->end || end <= r->start || (block && r->start >= block->start))
			continue;
		if (r->all)
			for (const struct node *n = p->nodes; n && !room; n = n->next)
				room = node_room(n, j);
		for (size_t k = 0; !r->all && k < r->n_nodes && !room; k++) {
			const struct node *n = pool_node_find(p, r->nodes[k]);

			room = n && node_room(n, j);
		}
		if (room)
			block = r;
	}
	if (!block)
		return 0;
	when(block->start, now, at, sizeof(at));
	{
		char nodes[64];
		size_t k = 0;

		if (block->all)
			snprintf(nodes, sizeof(nodes), "all nodes");
		else
			for (size_t i = 0; i < block->n_nodes && k < sizeof(nodes); i++)
				k += (size_t)snprintf(nodes + k, sizeof(nodes) - k, "%s%s", i ? "," : "", block->nodes[i]);
		if (block->start <= now)
			return snprintf(buf, len, "%s %s is in reservation %s until %s",
					block->maint ? "ReqNodeNotAvail: maintenance:" : "Reservation:", nodes, block->name,
					(when(block->end, now, at, sizeof(at)), at)), 1;
		hms(block->start - now, w, sizeof(w));
		return snprintf(buf, len, "%s runs into %s at %s on %s; with walltime <= %s it starts now",
				block->maint ? "ReqNodeNotAvail:" : "Reservation:",
				block->maint ? "maintenance" : "reservation", at, nodes, w), 1;
	}
}
