/* SPDX-License-Identifier: MIT */
/* Pool-wide licenses in placement (docs/RESOURCES.md, "Licenses"): what
 * running jobs hold never passes [licenses]' counts, and the first job of
 * a pass that waits for a license holds it against later jobs that would
 * not end before it can start (EASY backfill, as for CPUs). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-internal.h"

static struct pool_license *lic_find(const struct pool *p, const char *name)
{
	for (size_t i = 0; i < p->n_lic; i++)
		if (strcmp(p->lic[i].name, name) == 0)
			return &p->lic[i];
	return NULL;
}

static struct pool_license *lic_get(struct pool *p, const char *name)
{
	struct pool_license *l = lic_find(p, name);

	if (l)
		return l;
	if (p->n_lic == p->cap_lic) {
		size_t cap = p->cap_lic ? p->cap_lic * 2 : 8;
		struct pool_license *n = realloc(p->lic, cap * sizeof(*n));

		if (!n)
			return NULL;
		p->lic = n;
		p->cap_lic = cap;
	}
	l = &p->lic[p->n_lic++];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	return l;
}

/* Room for one more holder. 0 or -ENOMEM. */
static int holders_reserve(struct pool *p)
{
	if (p->n_lic_holders == p->cap_lic_holders) {
		size_t cap = p->cap_lic_holders ? p->cap_lic_holders * 2 : 64;
		struct job **n = realloc(p->lic_holders, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->lic_holders = n;
		p->cap_lic_holders = cap;
	}
	return 0;
}

int pool_license_take(struct pool *p, struct job *j)
{
	if (!j->n_lic || j->lic_held)
		return 0;
	if (holders_reserve(p) < 0)
		return -ENOMEM;
	for (unsigned i = 0; i < j->n_lic; i++)
		if (!lic_get(p, j->lic[i].name))
			return -ENOMEM;
	for (unsigned i = 0; i < j->n_lic; i++)
		lic_find(p, j->lic[i].name)->used += j->lic[i].count;
	j->lic_slot = p->n_lic_holders;
	p->lic_holders[p->n_lic_holders++] = j;
	j->lic_held = true;
	return 0;
}

void pool_license_give(struct pool *p, struct job *j)
{
	struct job *last;

	if (!j->lic_held)
		return;
	for (unsigned i = 0; i < j->n_lic; i++) {
		struct pool_license *l = lic_find(p, j->lic[i].name);

		if (l)
			l->used = l->used > j->lic[i].count ? l->used - j->lic[i].count : 0;
	}
	last = p->lic_holders[--p->n_lic_holders];
	p->lic_holders[j->lic_slot] = last;
	last->lic_slot = j->lic_slot;
	j->lic_held = false;
}

void pool_licenses_pass_begin(struct pool *p, const struct config *c)
{
	for (size_t i = 0; i < p->n_lic; i++) {
		p->lic[i].conf = false;
		p->lic[i].total = 0;
		p->lic[i].resv = false;
	}
	for (size_t i = 0; i < c->n_licenses; i++) {
		struct pool_license *l = lic_get(p, c->licenses[i].name);

		if (l) {
			l->total = c->licenses[i].count;
			l->conf = true;
		}
	}
}

static uint64_t lic_free(const struct pool_license *l)
{
	return l->total > l->used ? l->total - l->used : 0;
}

/* Wall seconds at which j ends by its walltime; INT64_MAX: no limit. */
static int64_t job_end(const struct job *j, int64_t start)
{
	return j->walltime ? start + (int64_t)j->walltime : INT64_MAX;
}

struct lic_end {
	int64_t t;
	uint64_t count;
};

/* A max-heap by end time of at most cap ends. */
static void heap_down(struct lic_end *h, size_t n, size_t i)
{
	for (;;) {
		size_t big = i, l = 2 * i + 1, r = l + 1;
		struct lic_end tmp;

		if (l < n && h[l].t > h[big].t)
			big = l;
		if (r < n && h[r].t > h[big].t)
			big = r;
		if (big == i)
			return;
		tmp = h[i], h[i] = h[big], h[big] = tmp;
		i = big;
	}
}

static void heap_up(struct lic_end *h, size_t i)
{
	while (i > 0 && h[(i - 1) / 2].t < h[i].t) {
		struct lic_end tmp = h[i];

		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

/* The first job to wait for l, short of need - free of it: from when
 * enough of its holders end (by their walltimes) it can have them; what
 * is free then beyond need is spare. The earliest such time is kept
 * with a heap of the soonest ends whose counts cover the shortfall
 * (O(holders log k), not a sort of every holder each pass: 10,000
 * holders sorted cost ~1 ms a pass in bench/pass-gpu). */
static void lic_reserve(struct pool *p, struct pool_license *l, uint64_t need)
{
	uint64_t avail = lic_free(l), deficit = need - avail, sum = 0, freed = 0;
	size_t cap = p->n_lic_holders, n = 0;
	struct lic_end *h;

	l->resv = true;
	l->resv_t = INT64_MAX;
	l->resv_spare = 0;
	h = cap ? malloc(cap * sizeof(*h)) : NULL;
	if (!h)
		return;   /* no one else takes it this pass */
	for (size_t i = 0; i < p->n_lic_holders; i++) {
		const struct job *j = p->lic_holders[i];

		for (unsigned k = 0; k < j->n_lic; k++) {
			struct lic_end e = { job_end(j, j->t_dispatch / 1000000000), j->lic[k].count };

			if (strcmp(j->lic[k].name, l->name) != 0 || e.t == INT64_MAX)
				continue;
			if (sum >= deficit && e.t >= h[0].t)
				continue;
			h[n] = e;
			heap_up(h, n++);
			sum += e.count;
			/* Drop the latest while the rest still cover it. */
			while (n > 1 && sum - h[0].count >= deficit) {
				sum -= h[0].count;
				h[0] = h[--n];
				heap_down(h, n, 0);
			}
		}
	}
	if (n && sum >= deficit) {
		l->resv_t = h[0].t;
		/* Everything that has ended by then is free then. */
		for (size_t i = 0; i < p->n_lic_holders; i++) {
			const struct job *j = p->lic_holders[i];

			for (unsigned k = 0; k < j->n_lic; k++)
				if (strcmp(j->lic[k].name, l->name) == 0 &&
				    job_end(j, j->t_dispatch / 1000000000) <= l->resv_t)
					freed += j->lic[k].count;
		}
		l->resv_spare = avail + freed > need ? avail + freed - need : 0;
	}
	free(h);
}

bool pool_licenses_fit(struct pool *p, const struct job *j, int64_t now)
{
	int64_t end = job_end(j, now);
	bool fit = true;

	for (unsigned i = 0; i < j->n_lic; i++) {
		struct pool_license *l = lic_find(p, j->lic[i].name);
		uint64_t need = j->lic[i].count;

		if (!l || !l->conf || need > lic_free(l) ||
		    (l->resv && end > l->resv_t && need > l->resv_spare)) {
			fit = false;
			break;
		}
	}
	/* Taking them after placement cannot then fail. */
	if (fit)
		return holders_reserve(p) == 0;
	/* Reserve what it waits for, when no job before it did. */
	for (unsigned i = 0; i < j->n_lic; i++) {
		struct pool_license *l = lic_find(p, j->lic[i].name);

		/* Only those it lacks: one free now is not held from others. */
		if (l && l->conf && !l->resv && j->lic[i].count <= l->total && j->lic[i].count > lic_free(l))
			lic_reserve(p, l, j->lic[i].count);
	}
	return false;
}

void pool_licenses_pass_took(struct pool *p, const struct job *j, int64_t now)
{
	int64_t end = job_end(j, now);

	for (unsigned i = 0; i < j->n_lic; i++) {
		struct pool_license *l = lic_find(p, j->lic[i].name);

		if (l && l->resv && end > l->resv_t)
			l->resv_spare = l->resv_spare > j->lic[i].count ? l->resv_spare - j->lic[i].count : 0;
	}
}

void pool_licenses_free(struct pool *p)
{
	free(p->lic);
	free(p->lic_holders);
}

int pool_request_lic_wait(struct pool *p, const struct config *c, const struct job *j, char *buf, size_t len)
{
	size_t at = 0;

	if (!j->n_lic)
		return 0;
	pool_licenses_pass_begin(p, c);
	for (unsigned i = 0; i < j->n_lic; i++) {
		const struct pool_license *l = lic_find(p, j->lic[i].name);
		uint64_t used = l ? l->used : 0, total = l && l->conf ? l->total : 0;
		int w;

		if (l && l->conf && j->lic[i].count <= lic_free(l))
			continue;
		w = snprintf(buf + at, len - at, "%s%s: %llu/%llu in use, asks %llu", at ? "; " : "waiting for licenses: ",
			     j->lic[i].name, (unsigned long long)used, (unsigned long long)total,
			     (unsigned long long)j->lic[i].count);
		if (w < 0 || (size_t)w >= len - at)
			break;
		at += (size_t)w;
	}
	return at > 0;
}

json_t *pool_licenses_json(struct pool *p, const struct config *c)
{
	json_t *a = json_array();

	pool_licenses_pass_begin(p, c);
	for (size_t i = 0; a && i < p->n_lic; i++) {
		const struct pool_license *l = &p->lic[i];

		if (!l->conf && !l->used)
			continue;
		json_array_append_new(a, json_pack("{s:s, s:I, s:I}", "name", l->name, "total", (json_int_t)l->total,
						   "used", (json_int_t)l->used));
	}
	return a;
}
