/* SPDX-License-Identifier: MIT */
/* Where the live host's cgroup hierarchies are mounted, as libcgroup reads
 * the mount table: the one place qpool uses libcgroup, and its ECG* codes. */
#include <errno.h>
#include <libcgroup.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"

/* The per-job path and the node set-up stay plain cgroupfs on directory
 * fds (docs/DESIGN-FACTS.md: libcgroup at 4x their cost, and its view cannot
 * be pointed at a fake tree for tests); discovery is what it does better:
 * hierarchies mounted somewhere other than /sys/fs/cgroup. */
int cgroup_discover(char *ret_root, size_t len, struct error *err)
{
	char *mnt = NULL;
	char *slash;
	int r;

	r = cgroup_init();
	if (r != 0)
		return error_set(err, -ENOENT, "libcgroup: %s", cgroup_strerror(r));
	/* v1: the memory hierarchy is mounted at <root>/memory (or
	 * <root>/memory,...); v2: the unified mount is the root. */
	r = cgroup_get_subsys_mount_point("memory", &mnt);
	if (r != 0 || !mnt)
		return error_set(err, -ENOENT, "libcgroup: no memory controller mounted: %s",
				 cgroup_strerror(r));
	slash = strrchr(mnt, '/');
	if (slash && slash != mnt && strncmp(slash + 1, "memory", 6) == 0 &&
	    (slash[7] == '\0' || slash[7] == ','))
		*slash = '\0';
	if (strlen(mnt) >= len) {
		free(mnt);
		return error_set(err, -ENAMETOOLONG, "cgroup root path too long");
	}
	strcpy(ret_root, mnt);
	free(mnt);
	return 0;
}
