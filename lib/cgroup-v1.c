/* SPDX-License-Identifier: MIT */
/* cgroup v1: one hierarchy per controller, realtime groups, spare sets kept for the next job. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-devices.h"
#include "cgroup-internal.h"
#include "timeutil.h"
const char *const v1_names[V1_N] = {
	"cpuset", "cpuacct", "memory", "freezer", "pids", "cpu", "devices",
};
const bool v1_required[V1_N] = { true, true, true, false, false, false, false };

/* Opens <root>/<h>; cpuacct falls back to "cpu,cpuacct". -ENOENT when
 * the hierarchy is not mounted, and for cpu also when it is co-mounted
 * with cpuacct (a job then joins it as its cpuacct group). */
int v1_hier_open(const char *root, enum v1_hier h, char *ret_path, size_t len)
{
	int fd;

	snprintf(ret_path, len, "%s/%s", root, v1_names[h]);
	fd = cg_dir_open(AT_FDCWD, ret_path);
	if (fd == -ENOENT && h == V1_CPUACCT) {
		snprintf(ret_path, len, "%s/cpu,cpuacct", root);
		fd = cg_dir_open(AT_FDCWD, ret_path);
	}
	if (fd >= 0 && h == V1_CPU) {
		char acct[PATH_MAX];
		int afd = v1_hier_open(root, V1_CPUACCT, acct, sizeof(acct));

		if (afd >= 0 && cg_same_dir(fd, afd)) {
			close(fd);
			fd = -ENOENT;
		}
		if (afd >= 0)
			close(afd);
	}
	return fd;
}

/* The hierarchy of the cpu controller when the kernel schedules RT tasks
 * by group (CONFIG_RT_GROUP_SCHED: cpu.rt_runtime_us exists): V1_CPU, or
 * V1_CPUACCT when co-mounted. -1 when realtime needs no group setting. */
static int v1_rt_hier(const char *root)
{
	static const enum v1_hier each[] = { V1_CPU, V1_CPUACCT };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++) {
		int fd = v1_hier_open(root, each[i], path, sizeof(path));
		bool rt;

		if (fd < 0)
			continue;
		rt = faccessat(fd, "cpu.rt_runtime_us", F_OK, 0) == 0;
		close(fd);
		if (rt)
			return (int)each[i];
	}
	return -1;
}

/* The RT runtime the children of the hierarchy at hpath other than
 * `first` hold (us per period). */
static int64_t v1_rt_others(const char *hpath, const char *first)
{
	char path[PATH_MAX];
	struct dirent *e;
	int64_t sum = 0, v;
	DIR *d = opendir(hpath);

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' || strcmp(e->d_name, first) == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s/cpu.rt_runtime_us", hpath, e->d_name) >=
		    (int)sizeof(path))
			continue;
		if (cg_file_read_s64(AT_FDCWD, path, &v) == 0 && v > 0)
			sum += v;
	}
	closedir(d);
	return sum;
}

/* RT runtime for the realtime group: <first>/ and <first>/.rt get the
 * root's cpu.rt_runtime_us less 5% of the period (950000 -> 900000 us per
 * 1 s here), so qpool never takes the last of the host's RT budget from
 * other groups; the node groups keep 0, since no realtime task runs in
 * them. Kernel throttling stays on: -1 is never written. A root at -1
 * (throttling off) gets nothing: qnoded refuses realtime then. */
static int v1_rt_setup(const char *root, const char *parent, struct error *err)
{
	char path[PATH_MAX], first[NAME_MAX + 1], num[32];
	int64_t root_rt, period, cur = 0, most, want = 0, others;
	int h = v1_rt_hier(root), hfd = -1, fd = -1, rtfd = -1, r;
	size_t skip, len = cg_first_component(parent, &skip);
	const int order[2][2] = { { 0, 1 }, { 1, 0 } };

	if (h < 0)
		return 0;
	if (len == 0 || len > NAME_MAX)
		return error_set(err, -EINVAL, "bad cgroup parent \"%s\"", parent);
	memcpy(first, parent + skip, len);
	first[len] = '\0';
	hfd = v1_hier_open(root, h, path, sizeof(path));
	if (hfd < 0)
		return error_set(err, hfd, "%s: %s", path, strerror(-hfd));
	r = cg_file_read_s64(hfd, "cpu.rt_runtime_us", &root_rt);
	if (r == 0)
		r = cg_file_read_s64(hfd, "cpu.rt_period_us", &period);
	if (r < 0) {
		r = error_set(err, r, "%s/cpu.rt_runtime_us: %s", path, strerror(-r));
		goto done;
	}
	if (root_rt <= 0)
		goto done;
	most = root_rt - period / 20 > 0 ? root_rt - period / 20 : root_rt / 2;
	/* All of it held by other pools: no realtime group here. */
	if (root_rt - v1_rt_others(path, first) <= 0)
		goto done;
	fd = cg_dir_open(hfd, first);
	if (fd < 0) {
		r = error_set(err, fd, "%s/%s: %s", path, first, strerror(-fd));
		goto done;
	}
	if (mkdirat(fd, V1_RT_GROUP, 0755) < 0 && errno != EEXIST) {
		r = error_set(err, -errno, "%s/%s/" V1_RT_GROUP ": %m", path, first);
		goto done;
	}
	rtfd = cg_dir_open(fd, V1_RT_GROUP);
	if (rtfd < 0) {
		r = error_set(err, rtfd, "%s/%s/" V1_RT_GROUP ": %s", path, first, strerror(-rtfd));
		goto done;
	}
	/* Another pool on this host (its own cgroup_parent) may hold part of
	 * the root's budget, and may take it between our reading and our
	 * write; the kernel refuses more than is left (EINVAL). A group
	 * removed moments ago still holds its runtime for ~10-20 ms
	 * (measured, 6.x: the task group is freed after an RCU grace
	 * period). So on EINVAL what is left is read again and asked for,
	 * briefly; nothing left: no realtime here (qnoded refuses it). */
	for (int t = 0; t < 50; t++) {
		want = most;
		others = v1_rt_others(path, first);
		if (root_rt - others < want)
			want = root_rt - others;
		if (want < 0)
			want = 0;   /* none left: both groups at 0, no realtime */
		cur = 0;
		cg_file_read_s64(fd, "cpu.rt_runtime_us", &cur);
		snprintf(num, sizeof(num), "%" PRId64, want);
		/* A child may not hold more than its parent: raise the parent
		 * first, lower the child first. */
		for (int i = 0; i < 2; i++) {
			int which = order[want < cur][i];

			r = cg_file_write(which ? rtfd : fd, "cpu.rt_runtime_us", num);
			if (r < 0)
				break;
		}
		if (r != -EINVAL)
			break;
		cg_sleep_ms(5);
	}
	if (r < 0)
		r = error_set(err, r, "%s/%s/cpu.rt_runtime_us=%s: %s", path, first, num, strerror(-r));
done:
	if (rtfd >= 0)
		close(rtfd);
	if (fd >= 0)
		close(fd);
	close(hfd);
	return r;
}

/* After the node's group is gone: <first>/.rt and <first> go too when no
 * other node's group is left beside them (and no realtime job runs). */
static void v1_rt_teardown(const char *hpath, const char *parent)
{
	char dir[PATH_MAX], rt[PATH_MAX + 8];
	size_t skip, len = cg_first_component(parent, &skip);
	struct dirent *e;
	bool others = false;
	DIR *d;

	if (snprintf(dir, sizeof(dir), "%s/%.*s", hpath, (int)len, parent + skip) >=
	    (int)sizeof(dir))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, V1_RT_GROUP))
			others = true;
	closedir(d);
	if (others)
		return;
	snprintf(rt, sizeof(rt), "%s/" V1_RT_GROUP, dir);
	/* Runtime given back before rmdir: a removed group keeps it for a
	 * grace period, and the next set-up would find the budget taken.
	 * -EBUSY while a realtime task is still inside: then nothing goes. */
	if (cg_dir_write(rt, "cpu.rt_runtime_us", "0") < 0 && errno != ENOENT)
		return;
	cg_dir_write(dir, "cpu.rt_runtime_us", "0");
	if (rmdir(rt) == 0 || errno == ENOENT)
		rmdir(dir);
}

struct v1_cpuset_ctx {
	char root_cpus[4096];
	char root_mems[1024];
	const char *cpus;
	const char *mems;
};

static int v1_cpuset_level(int fd, int dirfd, bool last, void *ctx)
{
	struct v1_cpuset_ctx *c = ctx;
	int r;

	/* A child's CPUs must be a subset of its parent's, and several nodes
	 * on one host share the intermediate groups (qpool/): those get the
	 * root's whole set, the node's own group its CPUs. */
	r = cg_file_write(fd, "cpuset.cpus", last ? c->cpus : c->root_cpus);
	if (r < 0)
		return r;
	return cg_file_write(fd, "cpuset.mems", last ? c->mems : c->root_mems);
}

/* Removes every spare below <hierarchy>/<parent>: at node set-up (a spare
 * of an earlier run may hold CPUs the node no longer has) and teardown. */
static void v1_spares_remove(const char *hpath, const char *parent)
{
	char path[PATH_MAX];

	for (int k = 0; k < V1_SPARES; k++)
		if (snprintf(path, sizeof(path), "%s/%s/" V1_SPARE_FMT, hpath, parent, k) <
		    (int)sizeof(path))
			(void)rmdir(path);
}

static int v1_node_setup(const char *root, const char *parent, const struct cpumask *cpus,
			 const char *mems, struct error *err)
{
	struct v1_cpuset_ctx ctx = { 0 };
	char path[PATH_MAX], failed[PATH_MAX] = "", cpulist[4096];

	for (int h = 0; h < V1_N; h++) {
		int rootfd, fd;

		/* Made by the first job that fences devices (v1_job_open). */
		if (h == V1_DEVICES)
			continue;
		rootfd = v1_hier_open(root, h, path, sizeof(path));
		if (rootfd == -ENOENT && !v1_required[h])
			continue;
		if (rootfd < 0)
			return error_set(err, rootfd, "%s: %s", path, strerror(-rootfd));
		if (h == V1_CPUSET) {
			ssize_t n = cg_file_read(rootfd, "cpuset.cpus", ctx.root_cpus,
					      sizeof(ctx.root_cpus));

			if (n >= 0)
				n = cg_file_read(rootfd, "cpuset.mems", ctx.root_mems,
					      sizeof(ctx.root_mems));
			if (n < 0) {
				close(rootfd);
				return error_set(err, (int)n, "%s/cpuset.cpus: %s", path,
						 strerror((int)-n));
			}
			cg_strip_newline(ctx.root_cpus);
			cg_strip_newline(ctx.root_mems);
			ctx.cpus = ctx.root_cpus;
			if (cpus && cpumask_count(cpus) > 0) {
				if (cpumask_format(cpus, cpulist, sizeof(cpulist)) >=
				    (int)sizeof(cpulist)) {
					close(rootfd);
					return error_set(err, -ERANGE, "cpu list too long");
				}
				ctx.cpus = cpulist;
			}
			ctx.mems = mems && *mems ? mems : ctx.root_mems;
		}
		/* Before the cpuset levels are written: a spare of an earlier
		 * run may hold CPUs this node no longer has. */
		v1_spares_remove(path, parent);
		fd = cg_path_create(rootfd, parent, h == V1_CPUSET ? v1_cpuset_level : NULL, &ctx,
				 failed, sizeof(failed));
		close(rootfd);
		if (fd < 0)
			return error_set(err, fd, "%s/%s (at %s): %s", path, parent, failed,
					 strerror(-fd));
		close(fd);
	}
	return v1_rt_setup(root, parent, err);
}

bool cgroup_node_rt_ready(const char *root, enum cgroup_mode mode, const char *parent)
{
	char path[PATH_MAX], rt[PATH_MAX * 2];
	int h = mode == CGROUP_MODE_V1 ? v1_rt_hier(root) : -1, fd;
	size_t skip, len;

	if (h < 0)
		return true;    /* RT tasks are not scheduled by group here */
	fd = v1_hier_open(root, h, path, sizeof(path));
	if (fd < 0)
		return false;
	close(fd);
	len = cg_first_component(parent, &skip);
	snprintf(rt, sizeof(rt), "%s/%.*s/" V1_RT_GROUP, path, (int)len, parent + skip);
	return cg_is_dir(rt, ".");
}

static int v1_node_teardown(const char *root, const char *parent)
{
	char path[PATH_MAX];
	int rt_h = v1_rt_hier(root), r = 0;

	for (int h = 0; h < V1_N; h++) {
		int fd = v1_hier_open(root, h, path, sizeof(path)), q;

		if (fd < 0)
			continue;
		close(fd);
		v1_spares_remove(path, parent);
		q = cg_path_remove(path, parent);
		if (q < 0 && r == 0)
			r = q;
		if (q == 0 && h == rt_h)
			v1_rt_teardown(path, parent);
	}
	return r;
}

/* Takes spare K for hierarchy h as the job's group (cpuset: the first
 * K there is, which claims it; the others: the K cpuset took). The
 * group's fd, or -ENOENT when there is none to take. */
static int v1_spare_take(struct cgroup_job *job, int h)
{
	char spare[24];

	for (int k = h == V1_CPUSET ? 0 : job->spare; k >= 0 && k < V1_SPARES; k++) {
		snprintf(spare, sizeof(spare), V1_SPARE_FMT, k);
		if (renameat(job->parent_fd[h], spare, job->parent_fd[h], job->name) == 0) {
			job->spare = k;
			return cg_dir_open(job->parent_fd[h], job->name);
		}
		/* Not there; or, in cpuset, a stale job group of that name
		 * (cg_job_dir_make's to judge). Only cpuset looks further. */
		if (h != V1_CPUSET || errno != ENOENT)
			break;
	}
	return -ENOENT;
}

/* Makes <root>/devices/<parent> (mkdir -p: several jobs may race, each
 * mkdir is atomic) and opens it; -errno with err. */
static int v1_devices_parent(const char *root, const char *parent, struct error *err)
{
	char path[PATH_MAX], failed[PATH_MAX] = "";
	int rootfd = v1_hier_open(root, V1_DEVICES, path, sizeof(path)), fd;

	if (rootfd < 0)
		return rootfd;
	fd = cg_path_create(rootfd, parent, NULL, NULL, failed, sizeof(failed));
	close(rootfd);
	if (fd < 0)
		return error_set(err, fd, "%s/%s (at %s): %s", path, parent, failed, strerror(-fd));
	return fd;
}

static int v1_job_open(struct cgroup_job *job, const char *root, const char *parent,
		       struct error *err)
{
	char path[PATH_MAX];
	int rt_h = job->flags & CGROUP_JOB_REALTIME ? v1_rt_hier(root) : -1;

	for (int h = 0; h < V1_N; h++) {
		int n, fd;

		if (h == V1_DEVICES && !job->found && !(job->flags & CGROUP_JOB_DEVICES))
			continue;
		n = snprintf(path, sizeof(path), "%s/%s/%s", root, v1_names[h], parent);
		if (n >= (int)sizeof(path))
			return error_set(err, -ENAMETOOLONG, "%s: path too long", root);
		/* Held by the launcher: no path walk, no co-mount check. */
		fd = cg_parent_held(job, root, parent, h);
		if (fd == CG_HELD_SKIP)
			continue;
		if (fd == CG_HELD_NONE)
			fd = cg_dir_open(AT_FDCWD, path);
		if (fd == -ENOENT && h == V1_CPUACCT) {
			snprintf(path, sizeof(path), "%s/cpu,cpuacct/%s", root, parent);
			fd = cg_dir_open(AT_FDCWD, path);
		}
		/* The node's parent in devices: made by its first job that
		 * needs it, as node set-up makes the others. */
		if (fd == -ENOENT && h == V1_DEVICES) {
			if (job->found)
				continue;
			/* A fence asked for cannot be skipped. */
			if (!cg_is_dir(root, v1_names[h]))
				return error_set(err, fd, "%s/devices: not mounted, no device fence",
						 root);
			fd = v1_devices_parent(root, parent, err);
			if (fd < 0)
				return fd;
		}
		/* The rare path: tell "not mounted" (fine for freezer, pids,
		 * cpu) from "node set-up did not run" (an error). */
		if (fd == -ENOENT && !v1_required[h] && !cg_is_dir(root, v1_names[h]))
			continue;
		if (fd < 0)
			return error_set(err, fd, "%s: %s", path, strerror(-fd));
		/* cpu co-mounted with cpuacct: joined as cpuacct already. */
		if (h == V1_CPU && !job->parent_held[h] && job->parent_fd[V1_CPUACCT] >= 0 &&
		    cg_same_dir(fd, job->parent_fd[V1_CPUACCT])) {
			close(fd);
			continue;
		}
		if (h == rt_h) {
			size_t skip, len = cg_first_component(parent, &skip);

			job->parent_fd[h] = fd;
			snprintf(path, sizeof(path), "%s/%s/%.*s/" V1_RT_GROUP, root, v1_names[h],
				 (int)len, parent + skip);
			if (h == V1_CPUACCT && !cg_is_dir(root, "cpuacct"))
				snprintf(path, sizeof(path), "%s/cpu,cpuacct/%.*s/" V1_RT_GROUP,
					 root, (int)len, parent + skip);
			fd = cg_dir_open(AT_FDCWD, path);
			if (fd < 0)
				return error_set(err, fd, "%s: %s (node set-up gives it RT runtime)",
						 path, strerror(-fd));
			job->fd[h] = fd;
			job->shared[h] = true;
			continue;
		}
		job->parent_fd[h] = fd;
		/* A kept group where there is one: never for a found job, in
		 * devices, or in memory under a small limit. */
		fd = -ENOENT;
		if (!job->found && h != V1_DEVICES &&
		    !(h == V1_MEMORY && (job->flags & CGROUP_JOB_MEMORY_SMALL)))
			fd = v1_spare_take(job, h);
		if (fd >= 0 && h == V1_MEMORY)
			job->mem_kept = true;
		if (fd < 0)
			fd = cg_job_dir_make(job, job->parent_fd[h], job->name);
		if (fd == -ENOENT && job->found)
			continue;
		if (fd == -EEXIST)
			return error_set(err, fd, "%s/%s " JOB_EXISTS_TEXT, path, job->name);
		if (fd < 0)
			return error_set(err, fd, "%s/%s: %s", path, job->name, strerror(-fd));
		job->fd[h] = fd;
	}
	return 0;
}

/* Writes num to the memory limit and to memory+swap's, in the order
 * that keeps memsw at or above the other throughout: raising, memsw
 * first. memsw is absent without swap accounting (swapaccount=0). */
static int v1_memory_write(struct cgroup_job *job, const char *num, bool raise, struct error *err)
{
	static const char *const file[2] = { "memory.limit_in_bytes", "memory.memsw.limit_in_bytes" };

	for (int i = 0; i < 2; i++) {
		int f = i == raise ? 0 : 1;
		int r = cg_file_write(job->fd[V1_MEMORY], file[f], num);

		if (r == -ENOENT && f == 1)
			continue;
		if (r < 0)
			return error_set(err, r, "%s %s=%s: %s", job->name, file[f], num, strerror(-r));
	}
	return 0;
}

/* The job's memory limit, memory+swap the same (the job may not swap
 * past its limit); mem 0: none. A new group has none. A kept one has the
 * limits of the job that left it (issue 39: putting them back and
 * writing them again was four of a job's files): read, and written only
 * when this job's differs. The kernel reads back a limit in whole pages,
 * and none as the largest. */
static int v1_memory_limit(struct cgroup_job *job, uint64_t mem, struct error *err)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), most = (uint64_t)INT64_MAX / page;
	uint64_t none = most * page, want = mem && mem / page < most ? mem / page * page : none, cur = none;
	char num[32];
	int r;

	if (job->fd[V1_MEMORY] < 0)
		return 0;
	/* Unreadable, or not the kernel's number ("-1" in the unit tests'
	 * files): none first, from whatever it is. */
	if (job->mem_kept && cg_file_read_u64(job->fd[V1_MEMORY], "memory.limit_in_bytes", &cur) < 0) {
		r = v1_memory_write(job, "-1", true, err);
		if (r < 0)
			return r;
		cur = none;
	}
	if (cur == want)
		return 0;
	if (mem)
		snprintf(num, sizeof(num), "%" PRIu64, mem);
	else
		snprintf(num, sizeof(num), "-1");
	return v1_memory_write(job, num, want > cur, err);
}

static int v1_job_configure(struct cgroup_job *job, const struct cgroup_limits *lim,
			    struct error *err)
{
	char cpus[4096], mems[1024], num[32];
	int r;

	/* A new v1 cpuset group starts empty and takes no task until both are
	 * set (cgroup.clone_children is 0): copy the parent's when unset. */
	if (lim->cpus && *lim->cpus) {
		snprintf(cpus, sizeof(cpus), "%s", lim->cpus);
	} else {
		r = (int)cg_file_read(job->parent_fd[V1_CPUSET], "cpuset.cpus", cpus, sizeof(cpus));
		if (r < 0)
			return error_set(err, r, "parent cpuset.cpus: %s", strerror(-r));
		cg_strip_newline(cpus);
	}
	if (lim->mems && *lim->mems) {
		snprintf(mems, sizeof(mems), "%s", lim->mems);
	} else {
		r = (int)cg_file_read(job->parent_fd[V1_CPUSET], "cpuset.mems", mems, sizeof(mems));
		if (r < 0)
			return error_set(err, r, "parent cpuset.mems: %s", strerror(-r));
		cg_strip_newline(mems);
	}
	r = cg_file_write(job->fd[V1_CPUSET], "cpuset.cpus", cpus);
	if (r < 0)
		return error_set(err, r, "%s cpuset.cpus=%s: %s", job->name, cpus, strerror(-r));
	r = cg_file_write(job->fd[V1_CPUSET], "cpuset.mems", mems);
	if (r < 0)
		return error_set(err, r, "%s cpuset.mems=%s: %s", job->name, mems, strerror(-r));

	r = v1_memory_limit(job, lim->mem, err);
	if (r < 0)
		return r;
	if (job->fd[V1_PIDS] >= 0) {
		if (lim->pids_max > 0)
			snprintf(num, sizeof(num), "%" PRIu64, lim->pids_max);
		else
			snprintf(num, sizeof(num), "max");
		r = cg_file_write(job->fd[V1_PIDS], "pids.max", num);
		if (r < 0)
			return error_set(err, r, "%s pids.max=%s: %s", job->name, num,
					 strerror(-r));
	}
	return 0;
}

/* Waits for freezer.state to read FROZEN (it passes through FREEZING). */
static int v1_freeze_wait(int fd, int timeout_ms)
{
	int64_t deadline = time_mono_ns() + (int64_t)timeout_ms * NSEC_PER_MSEC;
	char state[32];

	for (;;) {
		ssize_t n = cg_file_read(fd, "freezer.state", state, sizeof(state));

		if (n < 0)
			return (int)n;
		if (strncmp(state, "FROZEN", 6) == 0)
			return 0;
		if (time_mono_ns() > deadline)
			return -ETIME;
		cg_sleep_ms(1);
	}
}

static int v1_job_kill(struct cgroup_job *job, int timeout_ms)
{
	/* The list comes from a group of the job's own: the cpu(acct) group
	 * of a realtime job is shared. */
	int fz = job->fd[V1_FREEZER], procs = fz >= 0 ? fz : job->fd[V1_MEMORY], r;
	bool frozen = false;

	/* Found after its wrapper died, a job may be in some hierarchies
	 * only (the wrapper, or its child joining them, was cut short):
	 * empty every group of its own. Not on the wrapper's path, where
	 * the child joined them all before exec. */
	if (job->found) {
		for (int h = 0; h < V1_N; h++) {
			if (job->fd[h] < 0 || job->shared[h])
				continue;
			if (procs < 0)
				procs = job->fd[h];
			if (job->fd[h] != procs && (r = cg_procs_drain(job->fd[h], timeout_ms)) < 0)
				return r;
		}
		if (procs < 0)
			return 0;
	}

	/* The common case, a job that left nothing behind, costs one read:
	 * freezing and thawing an empty group is ~0.25 ms for nothing. Its
	 * "tasks", kept open since the fork (cgroup_job_attach_prepare),
	 * reads empty exactly when cgroup.procs does: no open. */
	if (!job->found) {
		int tfd = job->tasks_fd[fz >= 0 ? V1_FREEZER : V1_MEMORY];
		char c;

		if (tfd >= 0 && pread(tfd, &c, 1, 0) == 0)
			return 0;
	}
	r = cg_procs_signal(procs, 0);
	if (r <= 0)
		return r;
	/* Frozen tasks cannot fork while we read the list; SIGKILL stays
	 * pending and is delivered on THAWED. Without a freezer, the drain
	 * loop below repeats until forks stop. */
	if (fz >= 0 && cg_file_write(fz, "freezer.state", "FROZEN") == 0) {
		frozen = true;
		v1_freeze_wait(fz, timeout_ms);
	}
	r = cg_procs_signal(procs, SIGKILL);
	if (frozen)
		cg_file_write(fz, "freezer.state", "THAWED");
	if (r < 0)
		return r;
	r = cg_procs_drain(procs, timeout_ms);
	return r < 0 ? r : 0;
}

/* Suspend (docs/PREEMPTION.md): FROZEN waits for the state to settle,
 * THAWED is at once. -ENOTSUP without a freezer hierarchy. */
static int v1_job_freeze(struct cgroup_job *job, bool frozen, int timeout_ms)
{
	int fz = job->fd[V1_FREEZER], r;

	if (fz < 0)
		return -ENOTSUP;
	r = cg_file_write(fz, "freezer.state", frozen ? "FROZEN" : "THAWED");
	if (r < 0 || !frozen)
		return r;
	return v1_freeze_wait(fz, timeout_ms);
}

static int v1_job_usage(struct cgroup_job *job, struct cgroup_usage *ret)
{
	uint64_t v;
	int r;

	*ret = (struct cgroup_usage){ 0 };
	if (job->shared[V1_CPUACCT]) {
		ret->cpu_shared = true;
	} else {
		/* Kept open for the reset when the group becomes a spare. */
		char buf[64];
		ssize_t n;

		if (job->usage_fd < 0)
			job->usage_fd = openat(job->fd[V1_CPUACCT], "cpuacct.usage", O_RDWR | O_CLOEXEC);
		if (job->usage_fd < 0) {
			job->usage_fd = -1;
			return -errno;
		}
		n = pread(job->usage_fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			return -errno;
		buf[n] = '\0';
		r = cg_parse_u64(buf, &ret->cpu_ns);
		if (r < 0)
			return r;
	}
	r = cg_file_read_u64(job->fd[V1_MEMORY], "memory.max_usage_in_bytes", &ret->mem_peak);
	if (r < 0)
		return r;
	/* oom_kill in memory.oom_control since Linux 4.13. Before that there
	 * is no count to read, and memory.failcnt is no substitute: it counts
	 * every time usage met the limit, page-cache reclaim included. */
	if (cg_file_read_keyed(job->fd[V1_MEMORY], "memory.oom_control", "oom_kill", &v) == 0) {
		ret->oom = v > 0;
		job->oom_kill = v > 0;
	}
	return 0;
}

/* Whether page cache (shmem included) is still charged to the memory
 * group, the only charge that outlives the job's tasks and keeps a
 * removed group alive (kernel memory is reparented at rmdir since Linux
 * 5.9). Unreadable: assume so. */
static bool v1_memory_cached(int fd)
{
	char buf[4096];
	uint64_t cache = 1;

	if (cg_file_read(fd, "memory.stat", buf, sizeof(buf)) < 0 ||
	    cg_keyed_u64(buf, "cache", &cache) < 0)
		return true;
	return cache > 0;
}

/* Whether the job's memory group may be kept as a spare (issue 39: its
 * mkdir and rmdir were a sixth of gded's CPU a job), readied for the
 * next job if so: no task is in it, which says none is left in the
 * job's other groups either (its tasks join every group before exec);
 * no OOM kill counted (oom_kill cannot be reset); at most
 * V1_MEMORY_KEEP_MAX still charged (usage_in_bytes, a counter's read:
 * no statistics flushed). Its peak goes back to what is charged now; its
 * limits stay, for the next job to keep or change (v1_memory_limit). */
static bool v1_memory_keep(struct cgroup_job *job)
{
	int fd = job->fd[V1_MEMORY], tfd = job->tasks_fd[V1_MEMORY];
	uint64_t usage, oom = 1;
	char c[2];

	if (job->found || fd < 0 || job->parent_fd[V1_MEMORY] < 0)
		return false;
	if (tfd >= 0 ? pread(tfd, c, 1, 0) != 0 : cg_file_read(fd, "tasks", c, sizeof(c)) != 0)
		return false;
	/* cgroup_job_usage's read when it made one, else this one. */
	if (job->oom_kill >= 0)
		oom = (uint64_t)job->oom_kill;
	else
		(void)cg_file_read_keyed(fd, "memory.oom_control", "oom_kill", &oom);
	if (oom > 0 || cg_file_read_u64(fd, "memory.usage_in_bytes", &usage) < 0 ||
	    usage > V1_MEMORY_KEEP_MAX)
		return false;
	return cg_file_write(fd, "memory.max_usage_in_bytes", "0") == 0;
}

/* Once no task of the job is left anywhere (its memory group removed,
 * or kept by v1_memory_keep): the job's groups become spare K, the
 * first K whose cpuset spare is free, their counters reset
 * (cpuacct.usage; cpuset and pids.max are written by every job, freezer
 * is THAWED after a kill). What cannot be given stays open for rmdir. A
 * group that met another taker's spare K (EEXIST) is removed: either is
 * as good. */
static void v1_spare_give(struct cgroup_job *job)
{
	char spare[24];
	int k;

	if (job->found || job->fd[V1_CPUSET] < 0 || job->shared[V1_CPUSET])
		return;
	if (job->fd[V1_CPUACCT] >= 0 && !job->shared[V1_CPUACCT]) {
		int fd = job->usage_fd;

		/* On the fd its usage was read through, when it was. */
		if (fd >= 0 ? pwrite(fd, "0", 1, 0) != 1
			    : cg_file_write(job->fd[V1_CPUACCT], "cpuacct.usage", "0") < 0)
			return;
	}
	/* A frozen spare would stop the next job at its first instruction:
	 * whatever froze it (not qpool, which thaws after a kill), it goes. */
	if (job->fd[V1_FREEZER] >= 0) {
		char state[32];

		if (cg_file_read(job->fd[V1_FREEZER], "freezer.state", state, sizeof(state)) < 0 ||
		    strncmp(state, "THAWED", 6) != 0)
			return;
	}
	for (k = 0; k < V1_SPARES; k++) {
		snprintf(spare, sizeof(spare), V1_SPARE_FMT, k);
		if (faccessat(job->parent_fd[V1_CPUSET], spare, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT)
			break;
	}
	if (k == V1_SPARES)
		return;
	/* Down to V1_CPUSET (0): cpuset last. Devices is not kept: its rules
	 * are the job's, and a job without a device fence has no group there.
	 * Memory is given when kept (its fd is closed once removed). */
	for (int h = V1_N - 1; h >= 0; h--) {
		if (h == V1_DEVICES || job->shared[h] || job->parent_fd[h] < 0 || job->fd[h] < 0)
			continue;
		if (renameat(job->parent_fd[h], job->name, job->parent_fd[h], spare) == 0)
			cg_fd_close(&job->fd[h]);
	}
}

static int v1_job_remove(struct cgroup_job *job)
{
	bool keep = v1_memory_keep(job);
	int r = 0;

	/* No file of the job's groups stays open past their removal. */
	for (int h = 0; h < V1_N; h++)
		cg_fd_close(&job->tasks_fd[h]);
	/* Kept: every group given at once (what is not stays open, for
	 * the removals below). */
	if (keep)
		v1_spare_give(job);

	/* Page cache charged to the group keeps a removed memory cgroup alive
	 * as a dying one until the kernel reclaims the cache or its files go
	 * (docs/DESIGN-FACTS.md: 193 of 200 jobs writing 1 MiB), and v1 caps
	 * memory cgroups at 65,535. force_empty prevents that, but it evicts
	 * the job's output before the next job can read it and, on dirty
	 * pages, waits for their writeback: 5-100 ms a job here. So it runs
	 * only once the host counts reclaim_threshold memory cgroups, which
	 * bounds what dying groups qpool leaves. memory.stat before it: on a
	 * group without page cache force_empty still drains every CPU's LRU
	 * and charge stock, 0.8-3 ms against ~0.05 ms. The count first: below
	 * the threshold (the common case) memory.stat, whose read flushes
	 * the memory controller's per-CPU statistics, is not read at all
	 * (issue 39). */
	if (!keep && job->fd[V1_MEMORY] >= 0 && cg_memcgs_at_threshold(job) &&
	    v1_memory_cached(job->fd[V1_MEMORY]))
		cg_file_write(job->fd[V1_MEMORY], "memory.force_empty", "0");
	/* Memory first: its rmdir, refused while a task is in the group, is
	 * the kernel's word that the job's other groups are empty too (the
	 * job's tasks join all of them before exec). */
	if (job->fd[V1_MEMORY] >= 0 && job->parent_fd[V1_MEMORY] >= 0) {
		if (unlinkat(job->parent_fd[V1_MEMORY], job->name, AT_REMOVEDIR) == 0 ||
		    errno == ENOENT) {
			cg_fd_close(&job->fd[V1_MEMORY]);
			if (!keep)
				v1_spare_give(job);
		} else {
			r = errno == ENOTEMPTY || errno == EBUSY ? -EBUSY : -errno;
		}
	}
	if (r == 0)
		cg_fd_close(&job->usage_fd);
	for (int h = 0; h < V1_N; h++) {
		if (h == V1_MEMORY || job->shared[h] || job->parent_fd[h] < 0 || job->fd[h] < 0)
			continue;   /* memory: tried above */
		if (unlinkat(job->parent_fd[h], job->name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
			if (r == 0)
				r = errno == ENOTEMPTY ? -EBUSY : -errno;
			continue;
		}
		cg_fd_close(&job->fd[h]);
	}
	return r;
}

const struct cgroup_ops cgroup_v1_ops = {
	.node_setup = v1_node_setup,
	.node_teardown = v1_node_teardown,
	.job_open = v1_job_open,
	.job_configure = v1_job_configure,
	.job_kill = v1_job_kill,
	.job_freeze = v1_job_freeze,
	.job_usage = v1_job_usage,
	.job_remove = v1_job_remove,
};
