/* SPDX-License-Identifier: MIT */
/* Licenses' names, counts and requests (lib/license.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "license.h"

int license_name_check(const char *name, size_t len, struct error *err)
{
	if (len == 0)
		return error_set(err, -EINVAL, "an empty license name");
	if (len >= LICENSE_NAME_MAX)
		return error_set(err, -EINVAL, "license name %.*s...: longer than %d bytes", 20, name,
				 LICENSE_NAME_MAX - 1);
	if (!isalnum((unsigned char)name[0]))
		return error_set(err, -EINVAL, "license name %.*s: must start with a letter or digit", (int)len,
				 name);
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '-' && name[i] != '.')
			return error_set(err, -EINVAL, "license name %.*s: only letters, digits, '_', '-', '.'",
					 (int)len, name);
	return 0;
}

int license_count_parse(const char *text, uint64_t *ret)
{
	uint64_t v = 0;

	if (!text || !*text)
		return -EINVAL;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > LICENSE_COUNT_MAX)
			return -EINVAL;
	}
	*ret = v;
	return 0;
}

int license_request_parse(const char *text, struct license *ret, size_t max, size_t *ret_n,
			  struct error *err)
{
	const char *p = text;
	size_t n = 0;

	if (!text || !*text)
		return error_set(err, -EINVAL, "an empty license list");
	for (;;) {
		size_t len = strcspn(p, ",");
		size_t nlen = strcspn(p, ":,@|");
		char count[24];
		uint64_t c = 1;
		size_t i;
		int r;

		if (p[nlen] == '@')
			return error_set(err, -EINVAL, "%.*s: remote licenses (name@server) are not supported; "
					 "qpool counts the licenses of its [licenses] only", (int)len, p);
		if (p[nlen] == '|')
			return error_set(err, -EINVAL, "%s: alternatives (a|b) are not supported", text);
		r = license_name_check(p, nlen, err);
		if (r < 0)
			return r;
		if (p[nlen] == ':') {
			size_t clen = len - nlen - 1;

			if (clen == 0 || clen >= sizeof(count))
				return error_set(err, -EINVAL, "%.*s: not a count", (int)len, p);
			memcpy(count, p + nlen + 1, clen);
			count[clen] = '\0';
			if (license_count_parse(count, &c) < 0 || c == 0)
				return error_set(err, -EINVAL, "%.*s: the count must be 1 to %llu", (int)len, p,
						 (unsigned long long)LICENSE_COUNT_MAX);
		}
		for (i = 0; i < n; i++)
			if (strlen(ret[i].name) == nlen && strncmp(ret[i].name, p, nlen) == 0)
				break;
		if (i == n) {
			if (n == max)
				return error_set(err, -EINVAL, "more than %zu licenses in one request", max);
			memcpy(ret[n].name, p, nlen);
			ret[n].name[nlen] = '\0';
			ret[n].count = 0;
			n++;
		}
		ret[i].count += c;
		if (ret[i].count > LICENSE_COUNT_MAX)
			return error_set(err, -EINVAL, "%s: more than %llu", ret[i].name,
					 (unsigned long long)LICENSE_COUNT_MAX);
		if (!p[len])
			break;
		p += len + 1;
		if (!*p)
			return error_set(err, -EINVAL, "%s: a trailing comma", text);
	}
	*ret_n = n;
	return 0;
}

int license_request_format(const struct license *l, size_t n, char *buf, size_t len)
{
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(buf + at, len - at, "%s%s:%llu", i ? "," : "", l[i].name,
				 (unsigned long long)l[i].count);

		if (w < 0 || (size_t)w >= len - at)
			return -ENOSPC;
		at += (size_t)w;
	}
	return (int)at;
}
