/* SPDX-License-Identifier: MIT */
/* A job's TMPDIR as gded makes it and anyone may remove it: its name,
 * its lock, its removal without following links, and the reaping of one
 * a lost wrapper left (wrappers/tmpdir.c makes it). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpdir.h"

/* Bounds the walk: a job may leave a deep tree; each level holds an fd. */
#define TMPDIR_DEPTH_MAX 64

int tmpdir_name(char *buf, size_t len, const char *base, uint64_t jobid, const char *server,
		const char *node)
{
	int n;

	if (!base || !base[0])
		return -ENOENT;
	/* PBS Pro's name, pbs.ID.server: a user's script may look for it. */
	if (server && server[0])
		n = snprintf(buf, len, "%s/pbs.%" PRIu64 ".%s", base, jobid, server);
	else
		n = snprintf(buf, len, "%s/pbs.%" PRIu64, base, jobid);
	if (n >= 0 && (size_t)n < len && node && node[0])
		n += snprintf(buf + n, len - (size_t)n, ".%s", node);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Empties the directory open at dfd, at depth, never following a link:
 * every step is relative to a directory fd opened O_NOFOLLOW, so a link
 * the user planted (or swaps in meanwhile) is removed, not entered. */
static int tree_empty(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	int r = 0;

	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((e = readdir(d))) {
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			r = r ?: -errno;
			continue;
		}
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || depth >= TMPDIR_DEPTH_MAX) {
			r = r ?: (sub < 0 ? -errno : -ELOOP);
			if (sub >= 0)
				close(sub);
			continue;
		}
		tree_empty(sub, depth + 1);
		if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0)
			r = r ?: -errno;
	}
	closedir(d);
	return r;
}

/* Splits path into its parent directory (into parent, "/" for a name
 * at the root) and its last name (returned, pointing into path). */
static const char *path_split(const char *path, char parent[PATH_MAX])
{
	const char *slash = strrchr(path, '/');

	if (!slash || (size_t)(slash - path) >= PATH_MAX)
		return NULL;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	if (!parent[0])
		strcpy(parent, "/");
	return slash + 1;
}

int tmpdir_remove(const char *path)
{
	char parent[PATH_MAX];
	const char *name;
	int pfd, dfd, r;

	/* Left empty, as most jobs leave it: one rmdir (which never follows
	 * a link in its place) instead of opening and reading it (issue 39:
	 * nine system calls a job). */
	if (rmdir(path) == 0 || errno == ENOENT)
		return 0;
	if (!(name = path_split(path, parent)))
		return -EINVAL;
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		r = errno == ENOENT ? 0 : -errno;
		/* A link in its place is removed, its target left alone. */
		if (errno == ENOTDIR || errno == ELOOP)
			r = unlinkat(pfd, name, 0) < 0 ? -errno : 0;
		close(pfd);
		return r;
	}
	r = tree_empty(dfd, 0);
	if (unlinkat(pfd, name, AT_REMOVEDIR) < 0 && r == 0)
		r = -errno;
	close(pfd);
	return r;
}

int tmpdir_lock(const char *path)
{
	struct stat a, b;
	int fd;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;

		close(fd);
		return r;
	}
	if (fstat(fd, &a) < 0 || lstat(path, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Whether name is prefix itself or prefix.XXXXXX (mkdtemp's six). */
static bool tmpdir_named(const char *name, const char *prefix, size_t plen)
{
	if (strncmp(name, prefix, plen) != 0)
		return false;
	if (name[plen] == '\0')
		return true;
	return name[plen] == '.' && strlen(name + plen + 1) == 6;
}

int tmpdir_reap(const char *path, uid_t uid)
{
	char parent[PATH_MAX], one[PATH_MAX];
	const char *prefix;
	struct dirent *e;
	struct stat st;
	int n = 0, r = 0;
	size_t plen;
	DIR *d;

	if (!(prefix = path_split(path, parent)))
		return -EINVAL;
	plen = strlen(prefix);
	d = opendir(parent);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		int fd;

		if (!tmpdir_named(e->d_name, prefix, plen))
			continue;
		/* The user's own, made whole (a directory gded is still
		 * making is root's until it is locked and given away). */
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != uid)
			continue;
		if ((size_t)snprintf(one, sizeof(one), "%s/%s", parent, e->d_name) >= sizeof(one))
			continue;
		fd = tmpdir_lock(one);
		if (fd < 0)
			continue;   /* a running job's, or gone meanwhile */
		if ((r = tmpdir_remove(one)) == 0)
			n++;
		close(fd);
		if (r < 0)
			break;
	}
	closedir(d);
	return r < 0 ? r : n;
}
