/* SPDX-License-Identifier: MIT */
/* Slurm's compressed host lists (lib/hostlist.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "sort.h"

/* A name split as Slurm's hostlist splits it: prefix, then the trailing
 * digits (num, zero-padded to width characters; width 0 when it has no
 * leading zero), or no number (has_num false). */
struct host {
	const char *name;
	size_t prefix_len;
	size_t width;
	bool has_num;
	unsigned long long num;
};

static void host_split(const char *name, struct host *h)
{
	size_t n = strlen(name), k = n;

	while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9' && n - k < 18)
		k--;
	h->name = name;
	h->prefix_len = k;
	h->has_num = k < n;
	h->num = h->has_num ? strtoull(name + k, NULL, 10) : 0;
	/* "n9" and "n10" make n[9-10]; "n09" keeps its two digits. */
	h->width = h->has_num && name[k] == '0' && n - k > 1 ? n - k : 0;
}

static int host_cmp(const void *pa, const void *pb)
{
	const struct host *a = pa, *b = pb;
	size_t m = a->prefix_len < b->prefix_len ? a->prefix_len : b->prefix_len;
	int c = memcmp(a->name, b->name, m);

	if (c)
		return c;
	if (a->prefix_len != b->prefix_len)
		return a->prefix_len < b->prefix_len ? -1 : 1;
	if (a->has_num != b->has_num)
		return a->has_num ? 1 : -1;
	if (a->width != b->width)
		return a->width < b->width ? -1 : 1;
	return a->num < b->num ? -1 : a->num > b->num;
}

/* One prefix/width group: hosts [i, j) of one prefix and width. */
static bool same_group(const struct host *a, const struct host *b)
{
	return a->has_num && b->has_num && a->prefix_len == b->prefix_len && a->width == b->width &&
	       memcmp(a->name, b->name, a->prefix_len) == 0;
}

struct out {
	char *buf;
	size_t len, used;
};

static void out_put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(o->used < o->len ? o->buf + o->used : NULL, o->used < o->len ? o->len - o->used : 0,
		      fmt, ap);
	va_end(ap);
	if (r > 0)
		o->used += (size_t)r;
}

/* Writes hosts h[0..m) in their order: each run of one prefix and width
 * in brackets, consecutive numbers as ranges. */
static int compress_split(const struct host *h, size_t m, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < m;) {
		size_t j = i + 1;

		while (j < m && same_group(&h[i], &h[j]))
			j++;
		if (i > 0)
			out_put(&o, ",");
		if (j == i + 1) {
			out_put(&o, "%s", h[i].name);
			i = j;
			continue;
		}
		out_put(&o, "%.*s[", (int)h[i].prefix_len, h[i].name);
		for (size_t k = i; k < j;) {
			size_t e = k;

			while (e + 1 < j && h[e + 1].num == h[e].num + 1)
				e++;
			out_put(&o, "%s%0*llu", k > i ? "," : "", (int)h[k].width, h[k].num);
			if (e > k)
				out_put(&o, "-%0*llu", (int)h[e].width, h[e].num);
			k = e + 1;
		}
		out_put(&o, "]");
		i = j;
	}
	return o.used > INT32_MAX ? -ENOMEM : (int)o.used;
}

static int compress(const char *const *names, size_t n, bool sorted, char *buf, size_t len)
{
	struct host *h = calloc(n ? n : 1, sizeof(*h));
	size_t m = 0;
	int r;

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		host_split(names[i], &h[i]);
	if (sorted) {
		qp_sort(h, n, sizeof(*h), host_cmp);
		for (size_t i = 0; i < n; i++)   /* duplicates once */
			if (m == 0 || strcmp(h[m - 1].name, h[i].name) != 0)
				h[m++] = h[i];
	} else {
		m = n;
	}
	r = compress_split(h, m, buf, len);
	free(h);
	return r;
}

int hostlist_compress(const char *const *names, size_t n, char *buf, size_t len)
{
	return compress(names, n, true, buf, len);
}

int hostlist_compress_ordered(const char *const *names, size_t n, char *buf, size_t len)
{
	return compress(names, n, false, buf, len);
}

/* A host name's bytes with its NUL: DNS's 253, rounded up. */
#define HOST_MAX 256

/* The names hostlist_expand has made so far. */
struct names {
	char **v;
	size_t n, cap, max;
};

static int names_add(struct names *ns, const char *name)
{
	if (ns->n == ns->max)
		return -E2BIG;
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 16;
		char **v = realloc(ns->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ns->v = v;
		ns->cap = cap;
	}
	if (!(ns->v[ns->n] = strdup(name)))
		return -ENOMEM;
	ns->n++;
	return 0;
}

/* A bound of a bracket's range: digits only, at most 18 of them. */
static int bound_parse(const char *s, size_t len, unsigned long long *ret)
{
	if (len == 0 || len > 18)
		return -EINVAL;
	*ret = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		*ret = *ret * 10 + (unsigned long long)(s[i] - '0');
	}
	return 0;
}

/* Expands one term: head (already expanded, hlen bytes in a buffer of
 * HOST_MAX) followed by rest[0..rlen), whose first bracket is expanded
 * here and the others by recursion. */
static int term_expand(char *head, size_t hlen, const char *rest, size_t rlen, struct names *ns)
{
	const char *open = memchr(rest, '[', rlen), *close;
	size_t plen;

	if (!open) {
		if (memchr(rest, ']', rlen) || hlen + rlen >= HOST_MAX)
			return -EINVAL;
		memcpy(head + hlen, rest, rlen);
		head[hlen + rlen] = '\0';
		return hlen + rlen > 0 ? names_add(ns, head) : 0;
	}
	plen = (size_t)(open - rest);
	close = memchr(open, ']', rlen - plen);
	if (!close || memchr(rest, ']', plen) || memchr(open + 1, '[', (size_t)(close - open - 1)) ||
	    hlen + plen >= HOST_MAX)
		return -EINVAL;
	memcpy(head + hlen, rest, plen);
	for (const char *r = open + 1; r < close;) {
		const char *comma = memchr(r, ',', (size_t)(close - r)), *end = comma ? comma : close;
		const char *dash = memchr(r, '-', (size_t)(end - r));
		unsigned long long lo, hi;
		size_t width = (size_t)((dash ? dash : end) - r);
		int e;

		if (bound_parse(r, width, &lo) < 0 || (dash && bound_parse(dash + 1, (size_t)(end - dash - 1), &hi) < 0))
			return -EINVAL;
		if (!dash)
			hi = lo;
		if (hi < lo)
			return -EINVAL;
		if (hi - lo >= ns->max)
			return -E2BIG;
		for (unsigned long long k = lo; k <= hi; k++) {
			int w = snprintf(head + hlen + plen, HOST_MAX - hlen - plen, "%0*llu", (int)width, k);

			if (w < 0 || (size_t)w >= HOST_MAX - hlen - plen)
				return -EINVAL;
			e = term_expand(head, hlen + plen + (size_t)w, close + 1, rlen - (size_t)(close + 1 - rest), ns);
			if (e < 0)
				return e;
		}
		r = comma ? comma + 1 : close;
	}
	return 0;
}

int hostlist_expand(const char *list, size_t max, char ***ret_names)
{
	struct names ns = { .max = max };
	char head[HOST_MAX];
	int e = 0;

	*ret_names = NULL;
	for (const char *s = list; *s && e == 0;) {
		size_t len = 0;
		int depth = 0;

		/* A term ends at a comma or a blank outside brackets. */
		while (s[len] && (depth || (s[len] != ',' && s[len] != ' ' && s[len] != '\t' && s[len] != '\n'))) {
			depth += s[len] == '[' ? 1 : s[len] == ']' ? -1 : 0;
			len++;
		}
		e = term_expand(head, 0, s, len, &ns);
		s += len;
		if (*s)
			s++;
	}
	if (e == 0 && ns.n > INT32_MAX)
		e = -E2BIG;
	if (e < 0) {
		hostlist_free(ns.v, ns.n);
		return e;
	}
	*ret_names = ns.v;
	return (int)ns.n;
}

void hostlist_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int hostlist_counts_format(const uint64_t *counts, size_t n, char *buf, size_t len)
{
	size_t at = 0;
	int total = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		int k;

		while (j < n && counts[j] == counts[i])
			j++;
		if (j - i > 1)
			k = snprintf(buf ? buf + at : NULL, at < len ? len - at : 0, "%s%" PRIu64 "(x%zu)", i ? "," : "",
				     counts[i], j - i);
		else
			k = snprintf(buf ? buf + at : NULL, at < len ? len - at : 0, "%s%" PRIu64, i ? "," : "", counts[i]);
		total += k;
		at += (size_t)k;
		i = j;
	}
	return total;
}
