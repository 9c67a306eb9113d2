/* SPDX-License-Identifier: MIT */
/* Size, walltime, boolean and CPU-list parsers: strict, no locale, no strtod. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "parse.h"

/* Parses a run of decimal digits; no sign, no blanks. */
static int digits_parse(const char **p, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*ret = v;
	return 0;
}

int size_parse(const char *s, uint64_t *ret_bytes)
{
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = {
		{ "", 0 }, { "b", 0 },
		{ "k", 10 }, { "kb", 10 }, { "kib", 10 },
		{ "m", 20 }, { "mb", 20 }, { "mib", 20 },
		{ "g", 30 }, { "gb", 30 }, { "gib", 30 },
		{ "t", 40 }, { "tb", 40 }, { "tib", 40 },
		{ "p", 50 }, { "pb", 50 }, { "pib", 50 },
		/* PBS's words: 8 bytes each on every host qpool runs on. */
		{ "w", 3 }, { "kw", 13 }, { "mw", 23 }, { "gw", 33 }, { "tw", 43 },
	};
	uint64_t v;
	int r;

	if (!s)
		return -EINVAL;
	r = digits_parse(&s, &v);
	if (r < 0)
		return r;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(s, units[i].suffix) != 0)
			continue;
		if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
			return -ERANGE;
		*ret_bytes = v << units[i].shift;
		return 0;
	}
	return -EINVAL;
}

void size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	unsigned i = 0;

	if (bytes == 0 || bytes % 1024) {
		snprintf(buf, len, "%" PRIu64, bytes);
		return;
	}
	bytes /= 1024;
	while (i < 3 && bytes % 1024 == 0) {
		bytes /= 1024;
		i++;
	}
	snprintf(buf, len, "%" PRIu64 "%c", bytes, units[i]);
}

int duration_parse(const char *s, uint64_t *ret_seconds)
{
	uint64_t field[4];
	unsigned n = 0;
	uint64_t total = 0;
	static const uint64_t mult[] = { 86400, 3600, 60, 1 };
	int r;

	if (!s)
		return -EINVAL;
	for (;;) {
		if (n == 4)
			return -EINVAL;
		r = digits_parse(&s, &field[n]);
		if (r < 0)
			return r;
		n++;
		if (*s == '\0')
			break;
		if (*s != ':')
			return -EINVAL;
		s++;
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned pos = 4 - n + i;

		/* Only the leading field may exceed its natural range. */
		if (i > 0 && ((pos == 1 && field[i] > 23) || (pos >= 2 && field[i] > 59)))
			return -EINVAL;
		if (field[i] > (UINT64_MAX - total) / mult[pos])
			return -ERANGE;
		total += field[i] * mult[pos];
	}
	*ret_seconds = total;
	return 0;
}

void duration_format(uint64_t seconds, char *buf, size_t len)
{
	snprintf(buf, len, "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64,
		 seconds / 3600, seconds / 60 % 60, seconds % 60);
}

int bool_parse(const char *s, bool *ret)
{
	static const char *yes[] = { "yes", "true", "on", "1" };
	static const char *no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

unsigned cpumask_count(const struct cpumask *m)
{
	unsigned n = 0;

	for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
		n += (unsigned)__builtin_popcountll(m->bits[i]);
	return n;
}

int cpumask_next(const struct cpumask *m, int start)
{
	if (start < 0)
		start = 0;
	for (unsigned w = (unsigned)start / 64; w < CPUMASK_MAX / 64; w++) {
		uint64_t bits = m->bits[w];

		if (w == (unsigned)start / 64)
			bits &= ~0ULL << (start % 64);
		if (bits)
			return (int)(w * 64 + (unsigned)__builtin_ctzll(bits));
	}
	return -1;
}

bool cpumask_subset(const struct cpumask *sub, const struct cpumask *m)
{
	for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
		if (sub->bits[i] & ~m->bits[i])
			return false;
	return true;
}

int cpumask_parse(const char *s, struct cpumask *ret)
{
	struct cpumask m = { { 0 } };
	int r;

	while (*s == ' ' || *s == '\n')
		s++;
	while (*s && *s != '\n') {
		uint64_t lo, hi;

		r = digits_parse(&s, &lo);
		if (r < 0)
			return r;
		hi = lo;
		if (*s == '-') {
			s++;
			r = digits_parse(&s, &hi);
			if (r < 0)
				return r;
		}
		if (hi < lo)
			return -EINVAL;
		if (hi >= CPUMASK_MAX)
			return -ERANGE;
		for (uint64_t c = lo; c <= hi; c++)
			cpumask_set(&m, (unsigned)c);
		if (*s == ',') {
			s++;
			if (!isdigit((unsigned char)*s))
				return -EINVAL;
		} else if (*s && *s != '\n') {
			return -EINVAL;
		}
	}
	*ret = m;
	return 0;
}

int cpumask_format(const struct cpumask *m, char *buf, size_t len)
{
	size_t n = 0;
	int c = cpumask_next(m, 0);

	if (len)
		buf[0] = '\0';
	while (c >= 0) {
		int end = c;
		int w;

		while (cpumask_test(m, (unsigned)end + 1))
			end++;
		if (end == c)
			w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0,
				     "%s%d", n ? "," : "", c);
		else
			w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0,
				     "%s%d-%d", n ? "," : "", c, end);
		n += (size_t)w;
		c = cpumask_next(m, end + 1);
	}
	return (int)n;
}

int pbs_datetime_parse(const char *s, time_t now, time_t *ret)
{
	struct tm tm;
	size_t nd = strspn(s, "0123456789");
	int f[6] = { 0 }, nf = (int)nd / 2, sec = 0;
	bool year = false, mon = false, day = false;
	time_t t;

	localtime_r(&now, &tm);
	for (int i = 0; i < nf; i++)
		f[i] = (s[2 * i] - '0') * 10 + (s[2 * i + 1] - '0');
	if (s[nd] == '.')
		sec = (s[nd + 1] - '0') * 10 + (s[nd + 2] - '0');
	int i = 0;
	if (nf == 6) {
		tm.tm_year = f[0] * 100 + f[1] - 1900;
		i = 2, year = true;
	} else if (nf == 5) {
		tm.tm_year = 2000 + f[0] - 1900;
		i = 1, year = true;
	}
	if (nf >= 4) {
		tm.tm_mon = f[i++] - 1;
		mon = true;
	}
	if (nf >= 3) {
		tm.tm_mday = f[i++];
		day = true;
	}
	tm.tm_hour = f[i++];
	tm.tm_min = f[i];
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	if (tm.tm_hour > 23 || tm.tm_min > 59 || sec > 60 || (mon && (tm.tm_mon < 0 || tm.tm_mon > 11)) ||
	    (day && (tm.tm_mday < 1 || tm.tm_mday > 31)))
		return -EINVAL;
	t = mktime(&tm);
	/* A moment already past, given without its day (month, year), is
	 * the next one: tomorrow (next month, next year). */
	if (t <= now && !year) {
		if (!day)
			tm.tm_mday++;
		else if (!mon)
			tm.tm_mon++;
		else
			tm.tm_year++;
		tm.tm_isdst = -1;
		t = mktime(&tm);
	}
	*ret = t;
	return t == (time_t)-1 ? -EINVAL : 0;
}

bool utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned char c = *p;
		unsigned n;
		uint32_t cp, min;

		if (c < 0x80) {
			p++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			n = 1, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return false;
		}
		if ((size_t)(end - p) <= n)
			return false;
		for (unsigned i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += n + 1;
	}
	return true;
}

int signal_parse(const char *s)
{
	char *end;
	long n;

	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	n = strtol(s, &end, 10);
	if (*s && *end == '\0')
		return n >= 1 && n <= 30 ? (int)n : -1;
	for (int sig = 1; sig <= 30; sig++) {
		const char *abbrev = sigabbrev_np(sig);

		if (abbrev && strcasecmp(abbrev, s) == 0)
			return sig;
	}
	return -1;
}

int end_notice_parse(const char *s, struct end_notice *ret)
{
	char name[16];
	const char *at;
	size_t n;

	*ret = (struct end_notice){ .secs = END_NOTICE_SECS_DEFAULT };
	if (!strncasecmp(s, "B:", 2)) {
		ret->batch = true;
		s += 2;
	}
	at = strchr(s, '@');
	n = at ? (size_t)(at - s) : strlen(s);
	if (n == 0 || n >= sizeof(name))
		return -EINVAL;
	memcpy(name, s, n);
	name[n] = '\0';
	ret->sig = signal_parse(name);
	if (ret->sig < 0)
		return -EINVAL;
	if (at) {
		char *end;
		unsigned long secs;

		errno = 0;
		secs = strtoul(at + 1, &end, 10);
		if (!isdigit((unsigned char)at[1]) || *end || errno || secs > END_NOTICE_SECS_MAX)
			return -EINVAL;
		ret->secs = (unsigned)secs;
	}
	return 0;
}
