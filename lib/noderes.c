/* SPDX-License-Identifier: MIT */
/* A node's counted resources and a job's request of them (lib/noderes.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "license.h"
#include "noderes.h"
#include "parse.h"

#define NODERES_COUNT_MAX 1000000000000000ULL

static int value_parse(const char *s, struct noderes *r)
{
	size_t digits = strspn(s, "0123456789");
	uint64_t v = 0;

	if (digits == 0)
		return -EINVAL;
	if (!s[digits]) {
		for (size_t i = 0; i < digits; i++) {
			v = v * 10 + (uint64_t)(s[i] - '0');
			if (v > NODERES_COUNT_MAX)
				return -EINVAL;
		}
		r->value = v;
		r->bytes = false;
		return 0;
	}
	if (size_parse(s, &v) < 0)
		return -EINVAL;
	r->value = v;
	r->bytes = true;
	return 0;
}

int noderes_parse(const char *text, struct noderes *ret, size_t max, size_t *ret_n, struct error *err)
{
	const char *p = text ? text : "";
	size_t n = 0;

	for (;;) {
		char item[96], *colon;
		struct noderes r = { .value = 0 };
		size_t len, i;
		int rc;

		p += strspn(p, " \t,");
		if (!*p)
			break;
		len = strcspn(p, " \t,");
		if (len >= sizeof(item))
			return error_set(err, -EINVAL, "%.40s...: too long", p);
		memcpy(item, p, len);
		item[len] = '\0';
		p += len;
		colon = strchr(item, ':');
		if (!colon)
			return error_set(err, -EINVAL, "%s: not NAME:COUNT or NAME:SIZE", item);
		*colon = '\0';
		rc = license_name_check(item, strlen(item), err);
		if (rc < 0)
			return rc;
		if (!strcmp(item, "gpu"))
			return error_set(err, -EINVAL, "gpu: GPUs are the node's devices ([node] gpus), not a count");
		if (value_parse(colon + 1, &r) < 0)
			return error_set(err, -EINVAL, "%s:%s: not a count or a size (e.g. nvme:2, scratch:800G)", item,
					 colon + 1);
		if (strlen(item) >= sizeof(r.name))
			return error_set(err, -EINVAL, "%.40s...: a resource name is at most %zu characters", item,
					 sizeof(r.name) - 1);
		memcpy(r.name, item, strlen(item) + 1);
		for (i = 0; i < n && strcmp(ret[i].name, r.name) != 0; i++)
			;
		if (i < n) {
			if (ret[i].bytes != r.bytes)
				return error_set(err, -EINVAL, "%s: given as a count and as a size", r.name);
			ret[i].value += r.value;
			continue;
		}
		if (n == max)
			return error_set(err, -EINVAL, "more than %zu resources", max);
		ret[n++] = r;
	}
	*ret_n = n;
	return 0;
}

int noderes_format(const struct noderes *r, size_t n, char *buf, size_t len)
{
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(buf + at, len - at, "%s%s:%llu%s", i ? "," : "", r[i].name,
				 (unsigned long long)r[i].value, r[i].bytes ? "b" : "");

		if (w < 0 || (size_t)w >= len - at)
			return -ENOSPC;
		at += (size_t)w;
	}
	return (int)at;
}

uint64_t noderes_value(const struct noderes *r, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return r[i].value;
	return 0;
}

void noderes_item_format(const struct noderes *r, char *buf, size_t len)
{
	if (!r->bytes) {
		snprintf(buf, len, "%llu", (unsigned long long)r->value);
		return;
	}
	if (r->value % (1ULL << 30) == 0 && r->value)
		snprintf(buf, len, "%llugb", (unsigned long long)(r->value >> 30));
	else if (r->value % (1ULL << 20) == 0 && r->value)
		snprintf(buf, len, "%llumb", (unsigned long long)(r->value >> 20));
	else if (r->value % 1024 == 0 && r->value)
		snprintf(buf, len, "%llukb", (unsigned long long)(r->value >> 10));
	else
		snprintf(buf, len, "%llub", (unsigned long long)r->value);
}
