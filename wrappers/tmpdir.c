/* SPDX-License-Identifier: MIT */
/* The job's private TMPDIR: made as root for the user before the job, removed after it without following links. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gded-internal.h"

/* Bounds the walk: a job may leave a deep tree; each level holds an fd. */
#define TMPDIR_DEPTH_MAX 64

int gded_tmpdir_path(const struct gded_job *job, char *buf, size_t len)
{
	int n;

	if (!job->tmpdir_base || !job->tmpdir_base[0])
		return -ENOENT;
	/* PBS Pro's name, pbs.ID.server: a user's script may look for it. */
	if (job->server && job->server[0])
		n = snprintf(buf, len, "%s/pbs.%" PRIu64 ".%s", job->tmpdir_base, job->jobid, job->server);
	else
		n = snprintf(buf, len, "%s/pbs.%" PRIu64, job->tmpdir_base, job->jobid);
	/* A sister adds its node's name: nodes of one job that share a host
	 * (several qnoded on it) share the tmpdir base too, and each node
	 * removes its own directory at its own teardown. */
	if (n >= 0 && (size_t)n < len && job->node_index > 0 && job->node && job->node[0])
		n += snprintf(buf + n, len - (size_t)n, ".%s", job->node);
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

int gded_tmpdir_remove(const char *path)
{
	const char *slash = strrchr(path, '/');
	char parent[PATH_MAX];
	int pfd, dfd, r;

	if (!slash || (size_t)(slash - path) >= sizeof(parent))
		return -EINVAL;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	pfd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	dfd = openat(pfd, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		r = errno == ENOENT ? 0 : -errno;
		/* A link in its place is removed, its target left alone. */
		if (errno == ENOTDIR || errno == ELOOP)
			r = unlinkat(pfd, slash + 1, 0) < 0 ? -errno : 0;
		close(pfd);
		return r;
	}
	r = tree_empty(dfd, 0);
	if (unlinkat(pfd, slash + 1, AT_REMOVEDIR) < 0 && r == 0)
		r = -errno;
	close(pfd);
	return r;
}

int gded_tmpdir_create(const struct gded_job *job, const char *path)
{
	int fd, r;

	/* What a former run of this id left (a requeue) goes first. */
	r = gded_tmpdir_remove(path);
	if (r < 0)
		return r;
	if (mkdir(path, 0700) < 0)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = fchown(fd, job->uid, job->gid) < 0 || fchmod(fd, 0700) < 0 ? -errno : 0;
	close(fd);
	return r;
}
