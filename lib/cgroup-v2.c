/* SPDX-License-Identifier: MIT */
/* cgroup v2: one unified tree, controllers enabled down the path. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-devices.h"
#include "cgroup-internal.h"
#include "timeutil.h"

/* Enables the controllers for the children of fd. cpu and pids are
 * wanted, cpuset and memory required (cgroup_detect checked those). */
static int v2_enable(int fd)
{
	static const char *const each[] = { "+cpuset", "+memory", "+cpu", "+pids" };
	int r;

	if (cg_file_write(fd, "cgroup.subtree_control", V2_CONTROLLERS) == 0)
		return 0;
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++) {
		r = cg_file_write(fd, "cgroup.subtree_control", each[i]);
		if (r < 0 && i < 2)
			return r;
	}
	return 0;
}

int cgroup_v2_enable(const char *dir, struct error *err)
{
	int fd = cg_dir_open(AT_FDCWD, dir), r;

	if (fd < 0)
		return error_set(err, fd, "%s: %s", dir, strerror(-fd));
	r = v2_enable(fd);
	close(fd);
	if (r < 0)
		return error_set(err, r, "%s/cgroup.subtree_control: cannot enable %s: %s", dir,
				 V2_CONTROLLERS, strerror(-r));
	return 0;
}

static int v2_level(int fd, int dirfd, bool last, void *ctx)
{
	/* dirfd's subtree_control decides what fd gets; the last level's own
	 * decides what the job groups get. */
	int r = v2_enable(dirfd);

	if (r < 0 || !last)
		return r;
	return v2_enable(fd);
}

static int v2_node_setup(const char *root, const char *parent, const struct cpumask *cpus,
			 const char *mems, struct error *err)
{
	char failed[PATH_MAX] = "", cpulist[4096];
	int rootfd, fd, r = 0;

	rootfd = cg_dir_open(AT_FDCWD, root);
	if (rootfd < 0)
		return error_set(err, rootfd, "%s: %s", root, strerror(-rootfd));
	fd = cg_path_create(rootfd, parent, v2_level, NULL, failed, sizeof(failed));
	close(rootfd);
	if (fd < 0)
		return error_set(err, fd, "%s/%s (at %s): %s", root, parent, failed,
				 strerror(-fd));
	/* v2: an empty cpuset.cpus means the parent's effective set, so the
	 * shared ancestors need nothing, which is the union we want. */
	if (cpus && cpumask_count(cpus) > 0) {
		if (cpumask_format(cpus, cpulist, sizeof(cpulist)) >= (int)sizeof(cpulist)) {
			r = error_set(err, -ERANGE, "cpu list too long");
			goto done;
		}
		r = cg_file_write(fd, "cpuset.cpus", cpulist);
		if (r < 0) {
			r = error_set(err, r, "%s/%s/cpuset.cpus=%s: %s", root, parent, cpulist,
				      strerror(-r));
			goto done;
		}
	}
	if (mems && *mems) {
		r = cg_file_write(fd, "cpuset.mems", mems);
		if (r < 0) {
			r = error_set(err, r, "%s/%s/cpuset.mems=%s: %s", root, parent, mems,
				      strerror(-r));
			goto done;
		}
	}
done:
	close(fd);
	return r;
}

static int v2_node_teardown(const char *root, const char *parent)
{
	return cg_path_remove(root, parent);
}

/* The sum of memory.min over the child groups of dirfd ("max" and
 * unreadable ones count nothing: only job groups carry a number). */
static uint64_t v2_children_min(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	uint64_t sum = 0, v;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((e = readdir(d))) {
		int c;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		c = openat(dirfd, e->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (c < 0)
			continue;
		if (cg_file_read_u64(c, "memory.min", &v) == 0 && sum + v >= sum)
			sum += v;
		close(c);
	}
	closedir(d);
	return sum;
}

/* Protection is only as good as each ancestor's: the kernel's effective
 * memory.min of a group is bounded by its parent's, and where cgroup2 is
 * mounted with memory_recursiveprot (systemd does) a parent's protection
 * that its children do not claim is spread over them by usage, so a
 * parent of "max" would protect a neighbour that asked for nothing as
 * much as the job that asked. So every group from the job's parent up to
 * the first component of <parent> gets exactly the sum of its children's
 * memory.min, under an flock of that first component (shared by the
 * node groups of the host; gded of each job runs this at configure and
 * remove). Groups above the root are the site's (docs/RESOURCES.md).
 * Best effort: protection is no reason to fail a job. */
static void v2_protect_update(struct cgroup_job *job)
{
	int fds[16], n = 0;
	char num[32];

	if (job->depth <= 0 || job->depth > (int)(sizeof(fds) / sizeof(fds[0])))
		return;
	fds[n] = openat(job->parent_fd[0], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fds[n] >= 0 && n + 1 < job->depth) {
		fds[n + 1] = openat(fds[n], "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		n++;
	}
	if (fds[n] < 0)
		goto done;
	if (flock(fds[n], LOCK_EX) < 0)
		goto done;
	for (int i = 0; i <= n; i++) {
		snprintf(num, sizeof(num), "%" PRIu64, v2_children_min(fds[i]));
		cg_file_write(fds[i], "memory.min", num);
	}
	flock(fds[n], LOCK_UN);
done:
	for (int i = 0; i <= n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static int v2_job_open(struct cgroup_job *job, const char *root, const char *parent,
		       struct error *err)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", root, parent) >= (int)sizeof(path))
		return error_set(err, -ENAMETOOLONG, "%s: path too long", root);
	/* Held by the launcher (cgroup_parents_hold): no path walk. */
	fd = cg_parent_held(job, root, parent, 0);
	if (fd < 0)
		fd = cg_dir_open(AT_FDCWD, path);
	if (fd < 0)
		return error_set(err, fd, "%s: %s", path, strerror(-fd));
	job->parent_fd[0] = fd;
	job->depth = 1;
	for (const char *p = parent; *p; p++)
		job->depth += *p == '/';
	fd = cg_job_dir_make(job, fd, job->name);
	if (fd == -ENOENT && job->found)
		return 0;
	if (fd == -EEXIST)
		return error_set(err, fd, "%s/%s " JOB_EXISTS_TEXT, path, job->name);
	if (fd < 0)
		return error_set(err, fd, "%s/%s: %s", path, job->name, strerror(-fd));
	job->fd[0] = fd;
	return 0;
}

static int v2_job_configure(struct cgroup_job *job, const struct cgroup_limits *lim,
			    struct error *err)
{
	char num[32];
	int fd = job->fd[0], r;

	/* Unset cpus/mems stay empty: v2 then uses the parent's. */
	if (lim->cpus && *lim->cpus) {
		r = cg_file_write(fd, "cpuset.cpus", lim->cpus);
		if (r < 0)
			return error_set(err, r, "%s cpuset.cpus=%s: %s", job->name, lim->cpus,
					 strerror(-r));
	}
	if (lim->mems && *lim->mems) {
		r = cg_file_write(fd, "cpuset.mems", lim->mems);
		if (r < 0)
			return error_set(err, r, "%s cpuset.mems=%s: %s", job->name, lim->mems,
					 strerror(-r));
	}
	if (lim->mem > 0) {
		snprintf(num, sizeof(num), "%" PRIu64, lim->mem);
		r = cg_file_write(fd, "memory.max", num);
		if (r < 0)
			return error_set(err, r, "%s memory.max=%s: %s", job->name, num,
					 strerror(-r));
		/* The request is also the job's protection: memory.min, not
		 * memory.low, which Debian 13's 6.12 let go at a pressure that
		 * unprotected cache could have met (docs/RESOURCES.md "Memory
		 * protection"). Absent only without the memory controller. */
		r = cg_file_write(fd, "memory.min", num);
		if (r < 0 && r != -ENOENT)
			return error_set(err, r, "%s memory.min=%s: %s", job->name, num,
					 strerror(-r));
		if (r == 0) {
			job->protected = true;
			v2_protect_update(job);
		}
		/* No swap beyond the limit; absent when swap is not accounted. */
		r = cg_file_write(fd, "memory.swap.max", "0");
		if (r < 0 && r != -ENOENT)
			return error_set(err, r, "%s memory.swap.max=0: %s", job->name,
					 strerror(-r));
	}
	if (lim->pids_max > 0)
		snprintf(num, sizeof(num), "%" PRIu64, lim->pids_max);
	else
		snprintf(num, sizeof(num), "max");
	r = cg_file_write(fd, "pids.max", num);
	/* Without the pids controller the file is absent: no limit. */
	if (r < 0 && r != -ENOENT)
		return error_set(err, r, "%s pids.max=%s: %s", job->name, num, strerror(-r));
	return 0;
}

static int v2_job_kill(struct cgroup_job *job, int timeout_ms)
{
	int fd = job->fd[0], r;

	/* cgroup.kill (Linux 5.14) kills the whole group atomically, forks
	 * included. Before it: freeze, signal each, thaw, drain. */
	if (cg_file_write(fd, "cgroup.kill", "1") < 0) {
		bool frozen = cg_file_write(fd, "cgroup.freeze", "1") == 0;

		r = cg_procs_signal(fd, SIGKILL);
		if (frozen)
			cg_file_write(fd, "cgroup.freeze", "0");
		if (r < 0)
			return r;
	}
	r = cg_procs_drain(fd, timeout_ms);
	return r < 0 ? r : 0;
}

/* cgroup.freeze (Linux 5.2): the kernel says it is done with "frozen 1"
 * (or 0) in cgroup.events, which may lag the write while tasks leave
 * system calls. */
static int v2_job_freeze(struct cgroup_job *job, bool frozen, int timeout_ms)
{
	int64_t deadline = time_mono_ns() + (int64_t)timeout_ms * NSEC_PER_MSEC;
	uint64_t v;
	int r;

	r = cg_file_write(job->fd[0], "cgroup.freeze", frozen ? "1" : "0");
	if (r < 0)
		return r == -ENOENT ? -ENOTSUP : r;
	for (;;) {
		r = cg_file_read_keyed(job->fd[0], "cgroup.events", "frozen", &v);
		if (r < 0)
			return r;
		if ((v != 0) == frozen)
			return 0;
		if (time_mono_ns() > deadline)
			return -ETIME;
		cg_sleep_ms(1);
	}
}

static int v2_job_usage(struct cgroup_job *job, struct cgroup_usage *ret)
{
	uint64_t v;
	int r;

	*ret = (struct cgroup_usage){ 0 };
	r = cg_file_read_keyed(job->fd[0], "cpu.stat", "usage_usec", &v);
	if (r < 0)
		return r;
	ret->cpu_ns = v * 1000;
	/* memory.peak since Linux 5.19. */
	if (cg_file_read_u64(job->fd[0], "memory.peak", &v) == 0)
		ret->mem_peak = v;
	if (cg_file_read_keyed(job->fd[0], "memory.events", "oom_kill", &v) == 0)
		ret->oom = v > 0;
	return 0;
}

static int v2_job_remove(struct cgroup_job *job)
{
	char buf[4096], num[24];
	uint64_t file = 0;

	if (job->fd[0] < 0)
		return 0;
	/* As v1's force_empty (v1_job_remove): page cache charged to the
	 * group keeps it dying after rmdir, and memory cgroup ids are capped
	 * at 65,535 on v2 too; 50 jobs leaving 4 MiB each left 50 dying groups
	 * on Debian 12 (t-gded-teardown in make vm-check). memory.reclaim
	 * (Linux 5.19+; absent before, then nothing is done) evicts the
	 * "file" amount of memory.stat, shmem included; -EAGAIN when not all
	 * of it could go is no failure: what is left stays with the kernel.
	 * Dirty pages are only written back when reclaim meets them, so the
	 * write is tried again, three times at most, while some is left. */
	for (int i = 0; i < 3; i++) {
		if (cg_file_read(job->fd[0], "memory.stat", buf, sizeof(buf)) < 0 ||
		    cg_keyed_u64(buf, "file", &file) < 0 || file == 0 ||
		    (i == 0 && !cg_memcgs_at_threshold(job)))
			break;
		snprintf(num, sizeof(num), "%" PRIu64, file);
		if (cg_file_write(job->fd[0], "memory.reclaim", num) != -EAGAIN)
			break;
	}
	if (unlinkat(job->parent_fd[0], job->name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return errno == ENOTEMPTY ? -EBUSY : -errno;
	cg_fd_close(&job->fd[0]);
	/* A group found after its wrapper died may have been protected. */
	if (job->protected || job->found)
		v2_protect_update(job);
	return 0;
}

const struct cgroup_ops cgroup_v2_ops = {
	.node_setup = v2_node_setup,
	.node_teardown = v2_node_teardown,
	.job_open = v2_job_open,
	.job_configure = v2_job_configure,
	.job_kill = v2_job_kill,
	.job_freeze = v2_job_freeze,
	.job_usage = v2_job_usage,
	.job_remove = v2_job_remove,
};
