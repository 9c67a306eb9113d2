/* SPDX-License-Identifier: MIT */
/* exe_sibling: a program beside this one. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exe.h"

int exe_sibling(const char *name, char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/%s", self, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}
