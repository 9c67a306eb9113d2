/* SPDX-License-Identifier: MIT */
/* exe_sibling: a program beside this one; the process's OOM score adjustment and scheduler slice. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
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

int exe_oom_score_adj_set(int adj)
{
	char num[16];
	int fd, n, r = 0;

	n = snprintf(num, sizeof(num), "%d", adj);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, num, (size_t)n) != n)
		r = -errno;
	close(fd);
	return r;
}

int exe_sched_slice_set(uint64_t ns)
{
	struct exe_sched_attr a = { 0 };

	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) < 0)
		return -errno;
	if (a.sched_policy != SCHED_OTHER && a.sched_policy != SCHED_BATCH)
		return 0;
	if (a.sched_runtime == ns)
		return 0;
	a.size = sizeof(a);
	a.sched_flags &= EXE_SCHED_FLAG_RESET_ON_FORK;
	a.sched_runtime = ns;
	a.sched_deadline = a.sched_period = 0;
	if (syscall(SYS_sched_setattr, 0, &a, 0) < 0)
		return -errno;
	return 0;
}
