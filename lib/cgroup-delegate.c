/* SPDX-License-Identifier: MIT */
/* cgroup v2 under systemd: the delegated group qpool's groups go under, its holder, and qnoded's choice. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cgroup.h"

bool cgroup_delegated_xattr(const char *dir)
{
	char mark[8] = "";

	return getxattr(dir, "trusted.delegate", mark, sizeof(mark) - 1) > 0 && mark[0] == '1';
}

/* A group path as the kernel writes it, "/a/b", checked and without its
 * leading '/' ("" for the root). */
static int group_path_clean(const char *what, const char *path, char *ret, size_t len,
			    struct error *err)
{
	const char *p = path;

	while (*p == '/')
		p++;
	if (strcmp(p, "..") == 0 || strncmp(p, "../", 3) == 0 || strstr(p, "/../") ||
	    (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0))
		return error_set(err, -EINVAL, "%s: odd cgroup path %s", what, path);
	if ((size_t)snprintf(ret, len, "%s", p) >= len)
		return error_set(err, -ENAMETOOLONG, "%s: cgroup path %s too long", what, path);
	return 0;
}

/* The caller's group in the unified hierarchy, without the leading '/'. */
static int own_group_read(const char *proc_cgroup, char *ret, size_t len, struct error *err)
{
	char line[4096], own[4096] = "";
	FILE *f;

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
	return group_path_clean(proc_cgroup, own, ret, len, err);
}

/* own is "<base>" or "<base>/<leaf_name>": the base, and the leaf to move
 * into ("" when in it already). Base "" (at the root, or a leaf right
 * under it): nothing delegated. */
static int own_group_split(const char *own, const char *leaf_name, char *ret_base, size_t base_len,
			   char *ret_leaf, size_t leaf_len, struct error *err)
{
	const char *last = strrchr(own, '/');

	ret_base[0] = ret_leaf[0] = '\0';
	if (!*own)
		return 0;
	last = last ? last + 1 : own;
	if (strcmp(last, leaf_name) == 0) {
		/* Already in its leaf (systemd's DelegateSubgroup=, or a move
		 * made before): the base is the leaf's parent. */
		size_t n = (size_t)(last - own);

		if (n > 0)
			n--;  /* the '/' before the leaf */
		if (n == 0)
			return 0;
		if (n >= base_len)
			return error_set(err, -ENAMETOOLONG, "cgroup path %s too long", own);
		memcpy(ret_base, own, n);
		ret_base[n] = '\0';
		return 0;
	}
	if ((size_t)snprintf(ret_base, base_len, "%s", own) >= base_len ||
	    (size_t)snprintf(ret_leaf, leaf_len, "%s/%s", own, leaf_name) >= leaf_len) {
		ret_base[0] = ret_leaf[0] = '\0';
		return error_set(err, -ENAMETOOLONG, "cgroup path %s too long", own);
	}
	return 0;
}

int cgroup_delegated_base(const char *proc_cgroup, bool delegated, char *ret_base, size_t base_len,
			  char *ret_leaf, size_t leaf_len, struct error *err)
{
	char own[PATH_MAX];
	int r;

	ret_base[0] = ret_leaf[0] = '\0';
	if (!delegated)
		return 0;
	r = own_group_read(proc_cgroup, own, sizeof(own), err);
	if (r < 0)
		return r;
	return own_group_split(own, CGROUP_SELF_LEAF, ret_base, base_len, ret_leaf, leaf_len, err);
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
		r = error_set(err, -errno, "%s: cannot move process %d there: %m", path, (int)getpid());
	close(fd);
	return r;
}

/* file's one line "/G": written to file.tmp, then renamed over file, so a
 * reader sees the old line or the new, never half of one. */
static int base_file_write(const char *file, const char *group, struct error *err)
{
	char tmp[PATH_MAX];
	FILE *f;
	int r = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", file) >= sizeof(tmp))
		return error_set(err, -ENAMETOOLONG, "%s: path too long", file);
	f = fopen(tmp, "we");
	if (!f)
		return error_set(err, -errno, "%s: %m", tmp);
	fprintf(f, "/%s\n", group);
	if (fflush(f) != 0 || ferror(f))
		r = error_set(err, -errno, "%s: %m", tmp);
	if (fclose(f) != 0 && r == 0)
		r = error_set(err, -errno, "%s: %m", tmp);
	if (r == 0 && rename(tmp, file) < 0)
		r = error_set(err, -errno, "rename %s to %s: %m", tmp, file);
	if (r < 0)
		(void)unlink(tmp);
	return r;
}

int cgroup_holder_setup(const struct cgroup_host *host, char *ret_group, size_t len,
			struct error *err)
{
	char own[PATH_MAX], group[PATH_MAX] = "", leaf[PATH_MAX] = "", dir[PATH_MAX * 2 + 2];
	int r;

	ret_group[0] = '\0';
	if (!host->systemd)
		return 0;
	r = own_group_read(host->proc_cgroup, own, sizeof(own), err);
	if (r == 0)
		r = own_group_split(own, CGROUP_HOLDER_LEAF, group, sizeof(group), leaf, sizeof(leaf), err);
	if (r < 0 || !group[0])
		return r;
	snprintf(dir, sizeof(dir), "%s/%s", host->root, group);
	if (!host->delegated(dir))
		return error_set(err, -EPERM,
				 "cgroup /%s was not delegated (no trusted.delegate xattr: the unit needs "
				 "Delegate=yes, and systemd 251 or later): holding nothing", group);
	/* First out of G: then G holds no process, and v2 lets its
	 * controllers be enabled for its children. */
	if (leaf[0]) {
		r = cgroup_self_move(host->root, leaf, err);
		if (r < 0)
			return r;
	}
	r = cgroup_v2_enable(dir, err);
	if (r < 0)
		return r;
	r = base_file_write(host->holder_file, group, err);
	if (r < 0)
		return r;
	if ((size_t)snprintf(ret_group, len, "%s", group) >= len)
		return error_set(err, -ENAMETOOLONG, "cgroup path %s too long", group);
	return 1;
}

/* The holder's group from its file: 1 with it in ret, 0 when there is no
 * file, -errno with err when the file is there but wrong. */
static int holder_base_read(const struct cgroup_host *host, char *ret, size_t len, struct error *err)
{
	char line[PATH_MAX + 2] = "", dir[PATH_MAX * 2 + 2];
	struct stat st;
	FILE *f;
	int r;

	f = fopen(host->holder_file, "re");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		return error_set(err, -errno, "%s: %m", host->holder_file);
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	if (line[0] != '/')
		return error_set(err, -EINVAL, "%s: '%s' is not a cgroup path", host->holder_file, line);
	r = group_path_clean(host->holder_file, line, ret, len, err);
	if (r < 0)
		return r;
	if (!ret[0])
		return error_set(err, -EINVAL, "%s names the root cgroup, not a delegated group",
				 host->holder_file);
	snprintf(dir, sizeof(dir), "%s/%s", host->root, ret);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return error_set(err, -ENOENT, "%s names cgroup %s, which is not there", host->holder_file,
				 line);
	if (!host->delegated(dir))
		return error_set(err, -EPERM,
				 "%s names cgroup %s, which was not delegated (no trusted.delegate xattr): "
				 "refusing to put node groups there", host->holder_file, line);
	return 1;
}

int cgroup_base_choose(const struct cgroup_host *host, enum cgroup_base_from *ret_from,
		       char *ret_base, size_t base_len, char *ret_leaf, size_t leaf_len,
		       struct error *err)
{
	char dir[PATH_MAX * 2 + 2];
	int r;

	*ret_from = CGROUP_BASE_ROOT;
	ret_base[0] = ret_leaf[0] = '\0';
	r = holder_base_read(host, ret_base, base_len, err);
	if (r < 0) {
		ret_base[0] = '\0';
		return r;
	}
	if (r > 0) {
		*ret_from = CGROUP_BASE_HOLDER;
		return 0;
	}
	r = cgroup_delegated_base(host->proc_cgroup, host->systemd, ret_base, base_len, ret_leaf,
				  leaf_len, err);
	if (r < 0 || !ret_base[0])
		return r;
	snprintf(dir, sizeof(dir), "%s/%s", host->root, ret_base);
	if (!host->delegated(dir)) {
		ret_leaf[0] = '\0';
		*ret_from = CGROUP_BASE_UNDELEGATED;
		return 0;
	}
	*ret_from = CGROUP_BASE_OWN;
	return 0;
}
