/* SPDX-License-Identifier: MIT */
/* The job's private TMPDIR: made as root for the user before the job, locked while it runs, removed after it without following links. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gded-internal.h"

/* Bounds the walk: a job may leave a deep tree; each level holds an fd. */
#define TMPDIR_DEPTH_MAX 64
/* Rounds of make, lock, or clear a stale one, before another name. */
#define TMPDIR_TRIES 4

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
	/* Left empty, as most jobs leave it: one rmdir (which never follows
	 * a link in its place) instead of opening and reading it (issue 39:
	 * nine system calls a job). */
	if (rmdir(path) == 0 || errno == ENOENT)
		return 0;
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

/* Locks the directory at path for this gded: open without following a
 * link, flock it, and check path still names what was locked. The fd
 * (O_CLOEXEC) holds the lock; -EWOULDBLOCK when a live gded holds it,
 * -ESTALE when path changed meanwhile, -ELOOP or -ENOTDIR when something
 * else sits there. */
static int tmpdir_lock(const char *path)
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

/* Gives the directory gded just made at path, locked as fd, to the job's
 * user. On failure it is removed again (still empty: nobody else could
 * enter a root's 0700 directory). */
static int tmpdir_own(const struct gded_job *job, const char *path, int fd)
{
	if (fchown(fd, job->uid, job->gid) < 0 || fchmod(fd, 0700) < 0) {
		int r = -errno;

		rmdir(path);
		close(fd);
		return r;
	}
	return fd;
}

int gded_tmpdir_create(const struct gded_job *job, char *path, size_t len)
{
	int fd, r;

	for (int tries = 0; tries < TMPDIR_TRIES; tries++) {
		if (mkdir(path, 0700) == 0) {
			/* Ours, unless another gded locked it first. */
			fd = tmpdir_lock(path);
			if (fd >= 0)
				return tmpdir_own(job, path, fd);
			if (fd == -EWOULDBLOCK)
				break;
			continue;
		}
		if (errno != EEXIST)
			return -errno;
		fd = tmpdir_lock(path);
		if (fd == -EWOULDBLOCK)
			break;   /* a running job's: another pool's job with this id */
		if (fd == -ELOOP || fd == -ENOTDIR) {
			/* A link or a file in its place: removed, not followed. */
			if (unlink(path) < 0 && errno != ENOENT)
				return -errno;
			continue;
		}
		if (fd < 0)
			continue;
		/* What a former run of this id left (a requeue, a crash):
		 * nobody holds it. Removed, and made afresh. */
		r = gded_tmpdir_remove(path);
		close(fd);
		if (r < 0)
			return r;
	}
	/* The PBS name is taken: a name of its own next to it. */
	if (strlen(path) + sizeof(".XXXXXX") > len)
		return -ENAMETOOLONG;
	strcat(path, ".XXXXXX");
	if (!mkdtemp(path))
		return -errno;
	fd = tmpdir_lock(path);
	if (fd < 0) {
		rmdir(path);
		return fd;
	}
	return tmpdir_own(job, path, fd);
}
