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
