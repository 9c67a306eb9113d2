/* SPDX-License-Identifier: MIT */
/* cgroup v2 under systemd: the subtree delegated to qnoded, and its own leaf in it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"

int cgroup_delegated_base(const char *proc_cgroup, bool delegated, char *ret_base, size_t base_len,
			  char *ret_leaf, size_t leaf_len, struct error *err)
{
	char line[4096], own[4096] = "";
	const char *p, *last;
	FILE *f;

	ret_base[0] = ret_leaf[0] = '\0';
	if (!delegated)
		return 0;
	f = fopen(proc_cgroup, "re");
	if (!f)
		return error_set(err, -errno, "%s: %m", proc_cgroup);
	/* cgroups(7): "0::PATH" is the process's group in the unified
	 * hierarchy (v2, or hybrid); v1 lines have a controller list. */
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(own, sizeof(own), "%s", line + 3);
			break;
		}
	fclose(f);
	for (p = own; *p == '/'; p++)
		;
	/* At the root (a container's, or no systemd unit): nothing delegated. */
	if (!*p)
		return 0;
	if (strstr(p, "/../") || strncmp(p, "../", 3) == 0)
		return error_set(err, -EINVAL, "%s: odd cgroup path %s", proc_cgroup, own);
	last = strrchr(p, '/');
	last = last ? last + 1 : p;
	if (strcmp(last, CGROUP_SELF_LEAF) == 0) {
		/* Already in its leaf (systemd's DelegateSubgroup=, or a move
		 * made before an exec): the base is the leaf's parent. */
		size_t n = (size_t)(last - p);

		if (n > 0)
			n--;  /* the '/' before the leaf */
		if (n == 0)
			return 0;
		if (n >= base_len)
			return error_set(err, -ENAMETOOLONG, "cgroup path %s too long", own);
		memcpy(ret_base, p, n);
		ret_base[n] = '\0';
		return 0;
	}
	if ((size_t)snprintf(ret_base, base_len, "%s", p) >= base_len ||
	    (size_t)snprintf(ret_leaf, leaf_len, "%s/%s", p, CGROUP_SELF_LEAF) >= leaf_len) {
		ret_base[0] = ret_leaf[0] = '\0';
		return error_set(err, -ENAMETOOLONG, "cgroup path %s too long", own);
	}
	return 0;
}

int cgroup_self_move(const char *root, const char *leaf, struct error *err)
{
	char path[PATH_MAX + 32], pid[32];
	int fd, n, r = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, leaf) >= sizeof(path))
		return error_set(err, -ENAMETOOLONG, "%s/%s: path too long", root, leaf);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return error_set(err, -errno, "mkdir %s: %m", path);
	strcat(path, "/cgroup.procs");
	/* O_CREAT for fake trees; cgroupfs made the file with the directory. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_set(err, -errno, "%s: %m", path);
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (write(fd, pid, (size_t)n) != n)
		r = error_set(err, -errno, "%s: cannot move qnoded there: %m", path);
	close(fd);
	return r;
}
