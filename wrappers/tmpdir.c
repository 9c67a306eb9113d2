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
#include "tmpdir.h"

/* Rounds of make, lock, or clear a stale one, before another name. */
#define TMPDIR_TRIES 4

int gded_tmpdir_path(const struct gded_job *job, char *buf, size_t len)
{
	/* A sister adds its node's name: nodes of one job that share a host
	 * (several qnoded on it) share the tmpdir base too, and each node
	 * removes its own directory at its own teardown. */
	return tmpdir_name(buf, len, job->tmpdir_base, job->jobid, job->server,
			   job->node_index > 0 ? job->node : NULL);
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
		r = tmpdir_remove(path);
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
