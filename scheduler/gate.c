/* SPDX-License-Identifier: MIT */
/* The budget of unauthenticated TCP peers: counts per source address in a
 * small array (its length is the number of addresses waiting now, at most
 * the total budget, 64 by default). */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"

struct gate_entry {
	struct gate_addr addr;
	unsigned n;
};

struct gate {
	struct gate_entry *e;
	size_t len, cap;
	unsigned total;
};

int gate_create(struct gate **ret)
{
	struct gate *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	*ret = g;
	return 0;
}

void gate_destroy(struct gate *g)
{
	if (!g)
		return;
	free(g->e);
	free(g);
}

struct gate_addr gate_addr_of(const struct sockaddr_storage *sa)
{
	struct gate_addr a = { { 0 } };

	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)sa;

		a.b[10] = a.b[11] = 0xff;
		memcpy(a.b + 12, &a4->sin_addr, 4);
	} else if (sa->ss_family == AF_INET6) {
		memcpy(a.b, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
	return a;
}

static struct gate_entry *entry_find(const struct gate *g, const struct gate_addr *addr)
{
	for (size_t i = 0; i < g->len; i++)
		if (memcmp(g->e[i].addr.b, addr->b, sizeof(addr->b)) == 0)
			return &g->e[i];
	return NULL;
}

int gate_enter(struct gate *g, const struct gate_addr *addr, unsigned max_total, unsigned max_per_addr)
{
	struct gate_entry *e = entry_find(g, addr);

	if (g->total >= max_total)
		return -EMFILE;
	if (e && e->n >= max_per_addr)
		return -EUSERS;
	if (!e) {
		if (max_per_addr == 0)
			return -EUSERS;
		if (g->len == g->cap) {
			size_t cap = g->cap ? g->cap * 2 : 16;
			struct gate_entry *n = realloc(g->e, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			g->e = n;
			g->cap = cap;
		}
		e = &g->e[g->len++];
		e->addr = *addr;
		e->n = 0;
	}
	e->n++;
	g->total++;
	return 0;
}

void gate_leave(struct gate *g, const struct gate_addr *addr)
{
	struct gate_entry *e = entry_find(g, addr);

	if (!e || e->n == 0)
		return;
	e->n--;
	g->total--;
	/* The last one of its address: its entry goes (the last takes its place). */
	if (e->n == 0)
		*e = g->e[--g->len];
}

unsigned gate_count(const struct gate *g)
{
	return g->total;
}

unsigned gate_count_addr(const struct gate *g, const struct gate_addr *addr)
{
	const struct gate_entry *e = entry_find(g, addr);

	return e ? e->n : 0;
}
