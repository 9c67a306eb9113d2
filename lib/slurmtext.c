/* SPDX-License-Identifier: MIT */
/* Slurm's text forms (lib/slurmtext.h): times, sizes, begin times,
 * %-patterns, tasks per node. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "slurmtext.h"

/* Up to max unsigned numbers separated by sep; the count, or -1. */
static int numbers(const char *s, char sep, long long *v, int max)
{
	int n = 0;

	for (;;) {
		char *end;

		if (!isdigit((unsigned char)*s) || n == max)
			return -1;
		errno = 0;
		v[n++] = strtoll(s, &end, 10);
		if (errno || v[n - 1] > 100000000LL)
			return -1;
		if (*end == '\0')
			return n;
		if (*end != sep)
			return -1;
		s = end + 1;
	}
}

int slurm_time_parse(const char *s, int64_t *ret_seconds)
{
	const char *dash = strchr(s, '-');
	long long v[3], d;
	int n;

	if (!strcasecmp(s, "UNLIMITED") || !strcasecmp(s, "INFINITE") || !strcmp(s, "-1")) {
		*ret_seconds = 0;
		return 0;
	}
	if (dash) {
		char *end;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		d = strtoll(s, &end, 10);
		if (end != dash || d > 100000)
			return -EINVAL;
		n = numbers(dash + 1, ':', v, 3);
		if (n < 1)
			return -EINVAL;
		/* D-H, D-H:M, D-H:M:S */
		*ret_seconds = d * 86400 + v[0] * 3600 + (n > 1 ? v[1] * 60 : 0) + (n > 2 ? v[2] : 0);
		return 0;
	}
	n = numbers(s, ':', v, 3);
	if (n == 1)        /* M */
		*ret_seconds = v[0] * 60;
	else if (n == 2)   /* M:S */
		*ret_seconds = v[0] * 60 + v[1];
	else if (n == 3)   /* H:M:S */
		*ret_seconds = v[0] * 3600 + v[1] * 60 + v[2];
	else
		return -EINVAL;
	return 0;
}

int slurm_mem_parse(const char *s, int64_t *ret_bytes)
{
	char *end;
	unsigned long long v;
	int shift = 20;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case '\0':
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	/* "16G" and "16GB" as Slurm takes them. */
	if (*end && end[1] && (toupper((unsigned char)end[1]) != 'B' || end[2]))
		return -EINVAL;
	if (v > (UINT64_MAX >> 2) >> shift)
		return -EINVAL;
	*ret_bytes = (int64_t)(v << shift);
	return 0;
}

int slurm_path_expand(const char *pat, const char *name, const char *user, bool array, char *buf,
		      size_t len, bool *ret_warned, struct error *err)
{
	size_t at = 0;

	*ret_warned = false;
	for (const char *p = pat; *p; p++) {
		const char *add;
		char one[2] = { *p, 0 };

		if (*p != '%') {
			add = one;
		} else {
			p++;
			if (isdigit((unsigned char)*p)) {
				while (isdigit((unsigned char)*p))
					p++;
				*ret_warned = true;
			}
			switch (*p) {
			case '%':
				add = "%";
				break;
			case 'j':
			case 'J':   /* job.step: the batch script's is the job's */
				add = "^job_id^";
				break;
			case 'A':
				add = "^array_id^";
				break;
			case 'a':
				/* Not an array: Slurm's NO_VAL index. */
				add = array ? "^array_index^" : "4294967294";
				break;
			case 'x':
				add = name;
				break;
			case 'u':
				add = user;
				break;
			case 'N':
				add = "^node^";
				break;
			case 'n':
			case 't':
				add = "0";   /* the batch script: node 0, task 0 */
				break;
			case 's':
				add = "batch";
				break;
			default:
				return error_set(err, -EINVAL, "%s: %%%c is not a filename pattern", pat,
						 *p ? *p : ' ');
			}
		}
		if (at + strlen(add) >= len)
			return error_set(err, -ENAMETOOLONG, "%s: path too long", pat);
		memcpy(buf + at, add, strlen(add));
		at += strlen(add);
	}
	buf[at] = '\0';
	return 0;
}

int slurm_tasks_per_node_format(const uint64_t *counts, size_t n, char *buf, size_t len)
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

int slurm_begin_parse(const char *s, time_t now, time_t *ret)
{
	struct tm tm;
	int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
	char unit[16] = "";
	long long k;
	time_t t;

	localtime_r(&now, &tm);
	tm.tm_isdst = -1;
	if (!strncasecmp(s, "now", 3)) {
		if (!s[3]) {
			*ret = now;
			return 0;
		}
		if (sscanf(s + 3, "+%lld%15[a-z]%n", &k, unit, &n) < 1 || k < 0)
			return -EINVAL;
		if (!n)
			sscanf(s + 3, "+%*d%n", &n);
		if (s[3 + n])
			return -EINVAL;
		static const struct {
			const char *name;
			long long secs;
		} units[] = { { "", 1 }, { "seconds", 1 }, { "minutes", 60 }, { "hours", 3600 },
			      { "days", 86400 }, { "weeks", 604800 } };
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(unit, units[i].name) ||
			    (unit[0] && !strncmp(units[i].name, unit, strlen(unit)) && strcmp(units[i].name, "")))
				return k > 100LL * 365 * 86400 / units[i].secs ? -EINVAL :
					(*ret = now + (time_t)(k * units[i].secs), 0);
		return -EINVAL;
	}
	if (!strcasecmp(s, "today") || !strcasecmp(s, "midnight") || !strcasecmp(s, "tomorrow") ||
	    !strcasecmp(s, "noon")) {
		tm.tm_hour = !strcasecmp(s, "noon") ? 12 : 0;
		tm.tm_min = tm.tm_sec = 0;
		if (strcasecmp(s, "today") && strcasecmp(s, "noon"))
			tm.tm_mday++;
		t = mktime(&tm);
		if (!strcasecmp(s, "noon") && t <= now) {
			tm.tm_mday++;
			tm.tm_isdst = -1;
			t = mktime(&tm);
		}
		*ret = t;
		return 0;
	}
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && (s[n] == '\0' || s[n] == 'T')) {
		const char *p = s + n;
		int m = 0;

		if (*p == 'T' && sscanf(p + 1, "%2d:%2d%n", &h, &mi, &m) == 2) {
			p += 1 + m;
			if (*p == ':' && sscanf(p + 1, "%2d%n", &sec, &m) == 1)
				p += 1 + m;
		} else if (*p == 'T') {
			return -EINVAL;
		}
		if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
			return -EINVAL;
		tm = (struct tm){ .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
				  .tm_min = mi, .tm_sec = sec, .tm_isdst = -1 };
		*ret = mktime(&tm);
		return 0;
	}
	n = 0;
	if (sscanf(s, "%2d:%2d%n", &h, &mi, &n) == 2) {
		int m = 0;

		if (s[n] == ':' && sscanf(s + n + 1, "%2d%n", &sec, &m) == 1)
			n += 1 + m;
		if (s[n] || h > 23 || mi > 59 || sec > 59 || h < 0 || mi < 0 || sec < 0)
			return -EINVAL;
		tm.tm_hour = h;
		tm.tm_min = mi;
		tm.tm_sec = sec;
		t = mktime(&tm);
		if (t <= now) {
			tm.tm_mday++;
			tm.tm_isdst = -1;
			t = mktime(&tm);
		}
		*ret = t;
		return 0;
	}
	return -EINVAL;
}
