/* SPDX-License-Identifier: MIT */
/* jobid_parse: "12", "12.server" and "12.server@host" all name job 12; and the printed form. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jobid.h"

int jobid_parse(const char *s, int64_t *ret)
{
	int64_t v = 0;
	const char *p = s;

	if (!s || *p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - (*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*p - '0');
	}
	/* What follows the number names a server, which qpool does not
	 * check (there is one); but "12x" or "12 " is a typing error. */
	if (*p != '\0' && *p != '.' && *p != '@')
		return -EINVAL;
	if (v == 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* A decimal index of at most 9 digits at *p; advances *p. */
static int index_parse(const char **p, int64_t *ret)
{
	int64_t v = 0;
	int nd = 0;

	for (; **p >= '0' && **p <= '9'; (*p)++) {
		if (++nd > 9)
			return -ERANGE;
		v = v * 10 + (**p - '0');
	}
	*ret = v;
	return nd ? 0 : -EINVAL;
}

int jobid_parse_array(const char *s, int64_t *ret_id, int64_t *ret_lo, int64_t *ret_hi)
{
	const char *b = s ? strchr(s, '[') : NULL;
	const char *p;
	char num[32];
	int64_t lo = JOBID_PLAIN, hi = JOBID_PLAIN;
	int r;

	if (!b)
		r = jobid_parse(s, ret_id);
	else if ((size_t)(b - s) >= sizeof(num))
		r = -ERANGE;
	else {
		memcpy(num, s, (size_t)(b - s));
		num[b - s] = '\0';
		r = jobid_parse(num, ret_id);
		if (strchr(num, '.') || strchr(num, '@'))
			r = -EINVAL;
	}
	if (r < 0 || !b)
		goto done;
	p = b + 1;
	if (*p == ']') {
		lo = hi = JOBID_ARRAY_ALL;
		p++;
	} else {
		r = index_parse(&p, &lo);
		hi = lo;
		if (r == 0 && *p == '-') {
			p++;
			r = index_parse(&p, &hi);
		}
		if (r < 0)
			goto done;
		if (*p != ']' || hi < lo) {
			r = -EINVAL;
			goto done;
		}
		p++;
	}
	if (*p != '\0' && *p != '.' && *p != '@')
		r = -EINVAL;
done:
	if (r == 0) {
		*ret_lo = lo;
		*ret_hi = hi;
	}
	return r;
}

void jobid_server_name(const char *configured, char *buf, size_t len)
{
	char host[256];

	if (len == 0)
		return;
	if (len > JOBID_SERVER_MAX)
		len = JOBID_SERVER_MAX;
	if (configured && *configured) {
		snprintf(buf, len, "%s", configured);
		return;
	}
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
	if (!host[0])
		snprintf(host, sizeof(host), "localhost");
	/* Cut to fit: a host name may be longer than an id's server part. */
	host[len - 1 < sizeof(host) - 1 ? len - 1 : sizeof(host) - 1] = '\0';
	memcpy(buf, host, strlen(host) + 1);
}

int jobid_format(int64_t id, const char *server, char *buf, size_t len)
{
	if (!server || !*server)
		return snprintf(buf, len, "%" PRId64, id);
	return snprintf(buf, len, "%" PRId64 ".%s", id, server);
}

int jobid_format_array(int64_t id, int64_t index, const char *server, char *buf, size_t len)
{
	char ix[24];

	if (index == JOBID_PLAIN)
		return jobid_format(id, server, buf, len);
	if (index == JOBID_ARRAY_ALL)
		ix[0] = '\0';
	else
		snprintf(ix, sizeof(ix), "%" PRId64, index);
	if (!server || !*server)
		return snprintf(buf, len, "%" PRId64 "[%s]", id, ix);
	return snprintf(buf, len, "%" PRId64 "[%s].%s", id, ix, server);
}
