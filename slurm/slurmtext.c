/* SPDX-License-Identifier: MIT */
/* Slurm's text forms (slurm/slurmtext.h): times, sizes, begin times,
 * %-patterns. */
#include <ctype.h>
#include <errno.h>
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
	long long v[3], d, secs;
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
		secs = d * 86400 + v[0] * 3600 + (n > 1 ? v[1] * 60 : 0) + (n > 2 ? v[2] : 0);
	} else {
		n = numbers(s, ':', v, 3);
		if (n == 1)        /* M */
			secs = v[0] * 60;
		else if (n == 2)   /* M:S */
			secs = v[0] * 60 + v[1];
		else if (n == 3)   /* H:M:S */
			secs = v[0] * 3600 + v[1] * 60 + v[2];
		else
			return -EINVAL;
	}
	/* Slurm keeps a time limit in whole minutes, rounded up
	 * (time_str2mins): "0:20" is a minute. */
	*ret_seconds = (secs + 59) / 60 * 60;
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

/* "-2hours", "+30" after "now": the offset in seconds ("" is 0). */
static int offset_parse(const char *s, int64_t *ret_secs)
{
	static const struct { const char *unit; int64_t secs; } units[] = {
		{ "", 1 }, { "seconds", 1 }, { "minutes", 60 }, { "hours", 3600 },
		{ "days", 86400 }, { "weeks", 604800 },
	};
	char *end;
	long long n;

	if (*s == '\0') {
		*ret_secs = 0;
		return 0;
	}
	if (*s != '-' && *s != '+')
		return -EINVAL;
	errno = 0;
	n = strtoll(s + 1, &end, 10);
	if (errno || end == s + 1 || n < 0 || n > 1000000000LL)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t k = strlen(end);

		/* Slurm takes the unit's singular and plural, and prefixes
		 * of them ("now-1hour", "now-2min"; "now-2h" is not one). */
		if ((k == 0 && units[i].unit[0] == '\0') ||
		    (k > 0 && units[i].unit[0] && strncasecmp(end, units[i].unit, k) == 0 && k >= 3) ||
		    (k > 0 && units[i].unit[0] && k == strlen(units[i].unit) - 1 &&
		     strncasecmp(end, units[i].unit, k) == 0)) {
			*ret_secs = (*s == '-' ? -n : n) * units[i].secs;
			return 0;
		}
	}
	return -EINVAL;
}

static int tm_time(struct tm *tm, time_t *ret)
{
	time_t t;

	tm->tm_isdst = -1;
	t = mktime(tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*ret = t;
	return 0;
}

/* "HH:MM[:SS]" at s into tm: the characters read, or -1. */
static int clock_parse(const char *s, struct tm *tm)
{
	int n = 0, k = 0;

	if (!isdigit((unsigned char)*s) || sscanf(s, "%2d:%2d%n", &tm->tm_hour, &tm->tm_min, &n) != 2)
		return -1;
	tm->tm_sec = 0;
	if (s[n] == ':' && sscanf(s + n + 1, "%2d%n", &tm->tm_sec, &k) == 1)
		n += 1 + k;
	if (tm->tm_hour < 0 || tm->tm_hour > 23 || tm->tm_min < 0 || tm->tm_min > 59 || tm->tm_sec < 0 ||
	    tm->tm_sec > 59)
		return -1;
	return n;
}

/* "YYYY-MM-DD[THH:MM[:SS]]" or "MM/DD[/YY]" (this year) into tm. */
static int date_parse(const char *s, const struct tm *today, struct tm *tm)
{
	int n = 0, k = 0, yy;

	memset(tm, 0, sizeof(*tm));
	if (sscanf(s, "%4d-%2d-%2d%n", &tm->tm_year, &tm->tm_mon, &tm->tm_mday, &n) == 3 && n == 10) {
		tm->tm_year -= 1900;
		if (s[n] == 'T') {
			if ((k = clock_parse(s + n + 1, tm)) < 0)
				return -EINVAL;
			n += 1 + k;
		}
	} else if (isdigit((unsigned char)*s) && sscanf(s, "%2d/%2d%n", &tm->tm_mon, &tm->tm_mday, &n) == 2) {
		tm->tm_year = today->tm_year;
		if (s[n] == '/' && isdigit((unsigned char)s[n + 1]) && sscanf(s + n + 1, "%2d%n", &yy, &k) == 1) {
			tm->tm_year = 100 + yy;
			n += 1 + k;
		}
	} else {
		return -EINVAL;
	}
	tm->tm_mon -= 1;
	if (s[n] || tm->tm_mon < 0 || tm->tm_mon > 11 || tm->tm_mday < 1 || tm->tm_mday > 31)
		return -EINVAL;
	return 0;
}

int slurm_when_parse(const char *s, time_t now, bool future, time_t *ret)
{
	struct tm today, tm;
	int64_t off;
	int n;

	if (!localtime_r(&now, &today))
		return -EINVAL;
	if (!strncasecmp(s, "now", 3)) {
		if (offset_parse(s + 3, &off) < 0)
			return -EINVAL;
		*ret = now + (time_t)off;
		return 0;
	}
	tm = today;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	if (!strcasecmp(s, "today") || !strcasecmp(s, "tomorrow")) {
		if (!strcasecmp(s, "tomorrow"))
			tm.tm_mday++;
		return tm_time(&tm, ret);
	}
	if (!strcasecmp(s, "noon"))
		tm.tm_hour = 12;
	else if (strcasecmp(s, "midnight") && ((n = clock_parse(s, &tm)) < 0 || s[n]))
		return date_parse(s, &today, &tm) < 0 ? -EINVAL : tm_time(&tm, ret);
	/* A time of day: today's; for a start, the next one. */
	if (tm_time(&tm, ret) < 0)
		return -EINVAL;
	if (future && *ret <= now) {
		tm.tm_mday++;
		return tm_time(&tm, ret);
	}
	return 0;
}
