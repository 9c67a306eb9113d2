/* SPDX-License-Identifier: MIT */
/* Job array index sets: parsing -J and -t, positions and indices. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arrayspec.h"

/* A decimal number of at most 9 digits at *p; advances *p. */
static int number(const char **p, int64_t *ret)
{
	int64_t v = 0;
	int nd = 0;

	while (**p >= '0' && **p <= '9') {
		if (++nd > 9)
			return -ERANGE;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	if (nd == 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

int arrayspec_parse(const char *s, int opt, bool list, struct arrayspec *ret, struct error *err)
{
	const char *form = list ? "N or START-END[:STEP], joined with ','" : "START-END[:STEP]";
	const char *p = s;
	int64_t prev_hi = -1;

	memset(ret, 0, sizeof(*ret));
	if (!s || !*s)
		return error_set(err, -EINVAL, "-%c: expected %s[%%MAX]", opt, form);
	for (;;) {
		struct arrayspec_range r = { .step = 1 };
		int rc = number(&p, &r.lo);

		if (rc == 0) {
			r.hi = r.lo;
			if (*p == '-') {
				p++;
				rc = number(&p, &r.hi);
				if (rc == 0 && *p == ':') {
					p++;
					rc = number(&p, &r.step);
					if (rc == 0 && r.step == 0)
						return error_set(err, -EINVAL, "-%c %s: STEP must be 1 or more", opt, s);
				}
			} else if (!list) {
				rc = -EINVAL;
			}
		}
		if (rc == -ERANGE || (rc == 0 && (r.lo > ARRAYSPEC_INDEX_MAX || r.hi > ARRAYSPEC_INDEX_MAX)))
			return error_set(err, -EINVAL, "-%c %s: indices are 0 to %d", opt, s, ARRAYSPEC_INDEX_MAX);
		if (rc < 0)
			return error_set(err, -EINVAL, "-%c %s: expected %s[%%MAX]", opt, s, form);
		if (r.hi < r.lo || (!list && r.hi == r.lo))
			return error_set(err, -EINVAL, "-%c %s: START must be below END", opt, s);
		r.hi = r.lo + (r.hi - r.lo) / r.step * r.step;
		if (r.lo <= prev_hi)
			return error_set(err, -EINVAL, "-%c %s: parts must ascend without overlap", opt, s);
		if (ret->n == ARRAYSPEC_RANGES_MAX)
			return error_set(err, -EINVAL, "-%c %s: more than %d parts", opt, s, ARRAYSPEC_RANGES_MAX);
		ret->r[ret->n++] = r;
		ret->count += (r.hi - r.lo) / r.step + 1;
		if (ret->count > ARRAYSPEC_COUNT_MAX)
			return error_set(err, -EINVAL, "-%c %s: more than %d subjobs", opt, s, ARRAYSPEC_COUNT_MAX);
		prev_hi = r.hi;
		if (*p == ',' && list) {
			p++;
			continue;
		}
		break;
	}
	if (*p == '%') {
		p++;
		if (number(&p, &ret->max_running) < 0 || ret->max_running == 0 || *p)
			return error_set(err, -EINVAL, "-%c %s: %%MAX must be a number of 1 or more", opt, s);
	}
	if (*p)
		return error_set(err, -EINVAL, "-%c %s: expected %s[%%MAX]", opt, s, form);
	return 0;
}

int arrayspec_format(const struct arrayspec *a, char *buf, size_t len)
{
	size_t at = 0;
	int n;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < a->n; i++) {
		const struct arrayspec_range *r = &a->r[i];

		if (r->lo == r->hi)
			n = snprintf(buf + at, at < len ? len - at : 0, "%s%lld", i ? "," : "", (long long)r->lo);
		else if (r->step == 1)
			n = snprintf(buf + at, at < len ? len - at : 0, "%s%lld-%lld", i ? "," : "",
				     (long long)r->lo, (long long)r->hi);
		else
			n = snprintf(buf + at, at < len ? len - at : 0, "%s%lld-%lld:%lld", i ? "," : "",
				     (long long)r->lo, (long long)r->hi, (long long)r->step);
		at += (size_t)n;
	}
	if (a->max_running)
		at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%%%lld", (long long)a->max_running);
	return (int)at;
}

int64_t arrayspec_index(const struct arrayspec *a, int64_t pos)
{
	if (pos < 0)
		return -1;
	for (size_t i = 0; i < a->n; i++) {
		int64_t k = (a->r[i].hi - a->r[i].lo) / a->r[i].step + 1;

		if (pos < k)
			return a->r[i].lo + pos * a->r[i].step;
		pos -= k;
	}
	return -1;
}

int64_t arrayspec_pos(const struct arrayspec *a, int64_t index)
{
	int64_t base = 0;

	for (size_t i = 0; i < a->n; i++) {
		const struct arrayspec_range *r = &a->r[i];

		if (index >= r->lo && index <= r->hi)
			return ((index - r->lo) % r->step) != 0 ? -1 : base + (index - r->lo) / r->step;
		base += (r->hi - r->lo) / r->step + 1;
	}
	return -1;
}

int64_t arrayspec_span(const struct arrayspec *a, int64_t lo, int64_t hi, int64_t *ret_first)
{
	int64_t base = 0, first = -1, last = -1;

	for (size_t i = 0; i < a->n; i++) {
		const struct arrayspec_range *r = &a->r[i];
		int64_t k = (r->hi - r->lo) / r->step + 1;

		/* Within the part, lo and hi become offsets from r->lo no
		 * larger than the part: nothing below overflows. */
		if (lo <= r->hi && hi >= r->lo) {
			int64_t from = lo > r->lo ? (lo - r->lo + r->step - 1) / r->step : 0;
			int64_t to = hi < r->hi ? (hi - r->lo) / r->step : k - 1;

			if (from <= to) {
				if (first < 0)
					first = base + from;
				last = base + to;
			}
		}
		base += k;
	}
	if (first < 0)
		return 0;
	*ret_first = first;
	return last - first + 1;
}
