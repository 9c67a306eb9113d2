/* SPDX-License-Identifier: MIT */
/* jobid_parse: "12" and "12.host" both name job 12. */
#include <errno.h>

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
	if (*p != '\0' && *p != '.')
		return -EINVAL;
	if (v == 0)
		return -EINVAL;
	*ret = v;
	return 0;
}
