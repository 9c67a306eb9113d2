/* SPDX-License-Identifier: MIT */
/* A job's TMPDIR: its name, its lock, its removal (gded makes it). */
#ifndef QPOOL_TMPDIR_H
#define QPOOL_TMPDIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The job's TMPDIR under base: base/pbs.ID.server, PBS Pro's name, and
 * .node after it for a sister's. 0, -ENOENT without a base, or
 * -ENAMETOOLONG. */
int tmpdir_name(char *buf, size_t len, const char *base, uint64_t jobid, const char *server,
		const char *node);

/* Locks the directory at path: open without following a link, flock
 * it, and check path still names what was locked. The fd (O_CLOEXEC)
 * holds the lock; -EWOULDBLOCK when a live gded holds it, -ESTALE when
 * path changed meanwhile, -ELOOP or -ENOTDIR when something else sits
 * there. */
int tmpdir_lock(const char *path);

/* Removes path and everything under it without following symbolic links;
 * for after the job's processes are gone. 0 (also when absent) or the
 * first -errno met. */
int tmpdir_remove(const char *path);

/* Removes what a job whose wrapper was lost left under path's name (as
 * tmpdir_name gives it): path itself and path.XXXXXX (the name a job
 * gets when path is held), each only when uid owns it and nobody holds
 * its lock. For after the job's processes are gone. The count removed,
 * or the first -errno met. */
int tmpdir_reap(const char *path, uid_t uid);

#endif
