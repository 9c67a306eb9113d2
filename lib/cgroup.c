/* SPDX-License-Identifier: MIT */
/* cgroups v1/v2 behind one ops table: detection, node parents, the per-job fence. */
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
#include "cgroup.h"
#include "timeutil.h"

/*
 * Everything here is plain cgroupfs I/O on directory fds, and libcgroup is
 * not used at all, on purpose:
 *  - the per-job path must be cheap (docs/DESIGN-FACTS.md): libcgroup took ~1.5 ms
 *    per create+attach+delete against ~0.38 ms raw (it chowns every control
 *    file and re-reads /proc/mounts on each create), and ~1.25 ms against
 *    ~0.03 ms to read usage;
 *  - detection and node set-up take `root` as a parameter so the unit tests
 *    can run on a fake tree in a temp dir; libcgroup finds its hierarchies
 *    in /proc/mounts only and cannot be pointed at one;
 *  - what libcgroup would discover is two stat() calls here, since the
 *    mount root is configured (config key cgroup_root).
 * Each kernel layout is one struct cgroup_ops; CGROUP_MODE_NONE has none.
 */

/* v1 hierarchies a job joins, in attach order. cpuacct may be co-mounted
 * with cpu ("cpu,cpuacct"); freezer and pids are used when mounted; cpu
 * when it is a hierarchy of its own (then each job is one CFS entity,
 * however many processes it runs); devices only for a job whose devices
 * are fenced (CGROUP_JOB_DEVICES), so other jobs pay nothing for it. */
enum v1_hier {
	V1_CPUSET,
	V1_CPUACCT,
	V1_MEMORY,
	V1_FREEZER,
	V1_PIDS,
	V1_CPU,
	V1_DEVICES,
	V1_N,
};

static const char *const v1_names[V1_N] = {
	"cpuset", "cpuacct", "memory", "freezer", "pids", "cpu", "devices",
};
static const bool v1_required[V1_N] = { true, true, true, false, false, false, false };

/* The group every realtime job joins in the v1 cpu hierarchy, below the
 * first component of the node's parent ("qpool/.rt"). Node names cannot
 * start with a dot, so it never meets a node's group. Why one shared
 * group and not one per job: v1 RT group scheduling admits a group only
 * while the sum of its children's rt_runtime/rt_period fits the parent's
 * (kernel sched_rt_group.rst, tg_rt_schedulable), but a group's runtime is
 * a budget per CPU. Per-job groups would have to split the budget, e.g.
 * two 1-CPU jobs on 2 CPUs could get 0.45 s/s each and be throttled at
 * 45% of their CPU; in one shared group each CPU of each job gets the
 * whole 0.9 s/s, and jobs on disjoint CPUs do not compete. */
#define V1_RT_GROUP ".rt"

/* v1: groups a job leaves are kept for the next one, as "spare.K" below
 * the node's parent, K < V1_SPARES, in every hierarchy but memory
 * (docs/ARCHITECTURE.md, "Groups kept for the next job"). Creating and
 * removing a v1 group costs the machine far more than the two syscalls
 * show (the kernel frees it in workers after an RCU grace period):
 * bench/floor, a fork and exec of `true` with no scheduler, runs ~1,250
 * jobs/s on 2 CPUs with all six groups made and removed per job, ~1,600
 * with the five kept. Memory stays a group per job: page cache a job
 * leaves stays charged to its group, and would count in the next job's
 * peak. A job takes spare K by renaming it in cpuset first (the rename
 * is the claim: one taker wins), then in the others; a job gives K back
 * in the others first and in cpuset last, so a cpuset spare is whole.
 * Whatever a crash leaves half done is made good by mkdir and rmdir. */
#define V1_SPARES 8
#define V1_SPARE_FMT "spare.%d"

#define V2_CONTROLLERS "+cpuset +cpu +memory +pids"
#define JOB_NAME_MAX 32

struct cgroup_ops;

struct cgroup_job {
	const struct cgroup_ops *ops;
	char name[JOB_NAME_MAX];   /* "job.<id>" */
	unsigned flags;            /* enum cgroup_job_flags */
	int parent_fd[V1_N];       /* <root>/<h>/<parent>, O_PATH; -1: not used */
	int fd[V1_N];              /* the job group, O_PATH; v2 uses [0] only */
	bool shared[V1_N];         /* fd is the shared realtime group: not ours to remove */
	bool found;                /* cgroup_job_find: opened what exists, created nothing */
	int spare;                 /* v1: the spare set it took, -1 none */
	unsigned reclaim_threshold; /* reclaim page cache before rmdir from this many memcgs */
};

struct cgroup_ops {
	int (*node_setup)(const char *root, const char *parent, const struct cpumask *cpus,
			  const char *mems, struct error *err);
	int (*node_teardown)(const char *root, const char *parent);
	int (*job_open)(struct cgroup_job *job, const char *root, const char *parent,
			struct error *err);
	int (*job_configure)(struct cgroup_job *job, const struct cgroup_limits *lim,
			     struct error *err);
	int (*job_kill)(struct cgroup_job *job, int timeout_ms);
	int (*job_usage)(struct cgroup_job *job, struct cgroup_usage *ret);
	int (*job_remove)(struct cgroup_job *job);
};

/* --- small file helpers ------------------------------------------------ */

static int file_write(int dirfd, const char *file, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, r = 0;

	/* O_TRUNC is a no-op on cgroupfs and makes a fake tree read back
	 * exactly what was written. */
	fd = openat(dirfd, file, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	close(fd);
	return r;
}

/* Reads up to len-1 bytes and NUL-terminates. Returns the length or -errno. */
static ssize_t file_read(int dirfd, const char *file, char *buf, size_t len)
{
	size_t off = 0;
	int fd;

	fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < len - 1) {
		ssize_t n = read(fd, buf + off, len - 1 - off);

		if (n < 0) {
			int r = -errno;

			close(fd);
			return r;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	return (ssize_t)off;
}

static int parse_u64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || (*end && *end != '\n' && *end != ' '))
		return -EINVAL;
	*ret = v;
	return 0;
}

static int file_read_s64(int dirfd, const char *file, int64_t *ret)
{
	char buf[64], *end;
	ssize_t n = file_read(dirfd, file, buf, sizeof(buf));
	long long v;

	if (n < 0)
		return (int)n;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EINVAL;
	*ret = v;
	return 0;
}

static int file_read_u64(int dirfd, const char *file, uint64_t *ret)
{
	char buf[64];
	ssize_t n = file_read(dirfd, file, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return parse_u64(buf, ret);
}

/* "key value" lines (cpu.stat, memory.events, memory.oom_control). */
static int keyed_u64(const char *text, const char *key, uint64_t *ret)
{
	size_t klen = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
			return parse_u64(p + klen + 1, ret);
	return -ENOENT;
}

static int file_read_keyed(int dirfd, const char *file, const char *key, uint64_t *ret)
{
	char buf[1024];
	ssize_t n = file_read(dirfd, file, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return keyed_u64(buf, key, ret);
}

static void strip_newline(char *s)
{
	s[strcspn(s, "\n")] = '\0';
}

static int dir_open(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static bool is_dir(const char *root, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s", root, name) >= (int)sizeof(path))
		return false;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* One directory, reached twice: a systemd hybrid tree has cpu and cpuacct
 * as symlinks to cpu,cpuacct. */
static bool same_dir(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Length of the first component of a group path ("qpool" of "qpool/n1"),
 * after *ret_skip leading slashes. */
static size_t first_component(const char *parent, size_t *ret_skip)
{
	size_t skip = strspn(parent, "/");

	*ret_skip = skip;
	return strcspn(parent + skip, "/");
}

/* Sends sig to every pid listed in dirfd/cgroup.procs. Returns how many
 * it listed (0: empty) or -errno. Reads in one buffer; pids past it are
 * caught by the caller's next pass. */
static int procs_signal(int dirfd, int sig)
{
	char buf[16384];
	ssize_t n = file_read(dirfd, "cgroup.procs", buf, sizeof(buf));
	int count = 0;

	if (n < 0)
		return (int)n;
	for (char *p = buf, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		long pid;

		*nl = '\0';
		pid = strtol(p, NULL, 10);
		if (pid > 0) {
			kill((pid_t)pid, sig);
			count++;
		}
	}
	return count;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * NSEC_PER_MSEC };

	nanosleep(&ts, NULL);
}

/* SIGKILLs whatever is listed until cgroup.procs reads empty. Killed tasks
 * leave the list once they have exited (zombies are not listed), so this
 * does not depend on anyone reaping them. */
static int procs_drain(int dirfd, int timeout_ms)
{
	int64_t deadline = time_mono_ns() + (int64_t)timeout_ms * NSEC_PER_MSEC;
	int wait_ms = 1;

	for (;;) {
		int n = procs_signal(dirfd, SIGKILL);

		if (n <= 0)
			return n;
		if (time_mono_ns() > deadline)
			return -ETIME;
		sleep_ms(wait_ms);
		if (wait_ms < 16)
			wait_ms *= 2;
	}
}

/* Walks `parent` below dirfd, creating each component. For every level
 * calls level(fd, last, ctx) so v1 cpuset can give intermediate groups
 * the root's CPUs and the last one the node's. Returns the last level's
 * fd or -errno. */
typedef int (*cgroup_level_f)(int fd, int dirfd, bool last, void *ctx);

static int path_create(int rootfd, const char *parent, cgroup_level_f level, void *ctx,
		       char *ret_failed, size_t failed_len)
{
	char comp[PATH_MAX];
	const char *p = parent;
	int dirfd = rootfd, r;

	while (*p == '/')
		p++;
	if (!*p)
		return -EINVAL;
	for (;;) {
		size_t len = strcspn(p, "/");
		bool last;
		int fd;

		if (len >= sizeof(comp) || (len == 2 && strncmp(p, "..", 2) == 0) ||
		    (len == 1 && *p == '.')) {
			r = -EINVAL;
			goto fail;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		while (*p == '/')
			p++;
		last = !*p;
		if (mkdirat(dirfd, comp, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			goto fail;
		}
		fd = dir_open(dirfd, comp);
		if (fd < 0) {
			r = fd;
			goto fail;
		}
		if (level) {
			r = level(fd, dirfd, last, ctx);
			if (r < 0) {
				close(fd);
				goto fail;
			}
		}
		if (dirfd != rootfd)
			close(dirfd);
		dirfd = fd;
		if (last)
			return fd;
	}
fail:
	snprintf(ret_failed, failed_len, "%s", comp);
	if (dirfd != rootfd)
		close(dirfd);
	return r;
}

/* Creates the job group `name` in dirfd and opens it. A group that exists
 * already is not this job's to adopt: it is removed when empty (rmdir of a
 * cgroup fails with EBUSY while it holds a task, so "empty" is the
 * kernel's word, atomic) and made anew, so no counter of an earlier
 * run leaks into this one; a populated one is refused with -EEXIST. In
 * find mode (job->found) nothing is created: -ENOENT when it is absent. */
static int job_dir_make(const struct cgroup_job *job, int dirfd, const char *name)
{
	if (!job->found && mkdirat(dirfd, name, 0755) < 0) {
		if (errno != EEXIST)
			return -errno;
		if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
			return errno == EBUSY || errno == ENOTEMPTY ? -EEXIST : -errno;
		if (mkdirat(dirfd, name, 0755) < 0)
			return errno == EEXIST ? -EEXIST : -errno;
	}
	return dir_open(dirfd, name);
}

/* What job_dir_make's -EEXIST means, for err. */
#define JOB_EXISTS_TEXT "exists and holds processes of another run or another pool on this host; refused"

/* rmdir root/parent, then its ancestors up to the first component while
 * they are empty. Returns 0, -EBUSY when parent still holds groups. */
static int path_remove(const char *root, const char *parent)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%s/%s", root, parent);
	if (n >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (rmdir(path) < 0) {
		if (errno == EBUSY || errno == ENOTEMPTY)
			return -EBUSY;
		if (errno != ENOENT)
			return -errno;
	}
	/* Other nodes on this host may share the ancestors (qpool/): busy
	 * ancestors are theirs and stay. */
	for (char *slash = strrchr(path, '/'); slash && slash > path + strlen(root);
	     slash = strrchr(path, '/')) {
		*slash = '\0';
		if (strlen(path) <= strlen(root))
			break;
		if (rmdir(path) < 0 && errno != ENOENT)
			break;
	}
	return 0;
}

/* --- cgroup v1 ---------------------------------------------------------- */

/* Opens <root>/<h>; cpuacct falls back to "cpu,cpuacct". -ENOENT when
 * the hierarchy is not mounted, and for cpu also when it is co-mounted
 * with cpuacct (a job then joins it as its cpuacct group). */
static int v1_hier_open(const char *root, enum v1_hier h, char *ret_path, size_t len)
{
	int fd;

	snprintf(ret_path, len, "%s/%s", root, v1_names[h]);
	fd = dir_open(AT_FDCWD, ret_path);
	if (fd == -ENOENT && h == V1_CPUACCT) {
		snprintf(ret_path, len, "%s/cpu,cpuacct", root);
		fd = dir_open(AT_FDCWD, ret_path);
	}
	if (fd >= 0 && h == V1_CPU) {
		char acct[PATH_MAX];
		int afd = v1_hier_open(root, V1_CPUACCT, acct, sizeof(acct));

		if (afd >= 0 && same_dir(fd, afd)) {
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
		if (file_read_s64(AT_FDCWD, path, &v) == 0 && v > 0)
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
	int64_t root_rt, period, cur = 0, want, others;
	int h = v1_rt_hier(root), hfd = -1, fd = -1, rtfd = -1, r;
	size_t skip, len = first_component(parent, &skip);
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
	r = file_read_s64(hfd, "cpu.rt_runtime_us", &root_rt);
	if (r == 0)
		r = file_read_s64(hfd, "cpu.rt_period_us", &period);
	if (r < 0) {
		r = error_set(err, r, "%s/cpu.rt_runtime_us: %s", path, strerror(-r));
		goto done;
	}
	if (root_rt <= 0)
		goto done;
	want = root_rt - period / 20 > 0 ? root_rt - period / 20 : root_rt / 2;
	/* Another pool on this host (its own cgroup_parent) may hold part of
	 * the root's budget already; the kernel would refuse more than is
	 * left (EINVAL). Take what is left, at most want. */
	others = v1_rt_others(path, first);
	if (root_rt - others < want)
		want = root_rt - others;
	if (want <= 0)
		goto done;
	fd = dir_open(hfd, first);
	if (fd < 0) {
		r = error_set(err, fd, "%s/%s: %s", path, first, strerror(-fd));
		goto done;
	}
	if (mkdirat(fd, V1_RT_GROUP, 0755) < 0 && errno != EEXIST) {
		r = error_set(err, -errno, "%s/%s/" V1_RT_GROUP ": %m", path, first);
		goto done;
	}
	rtfd = dir_open(fd, V1_RT_GROUP);
	if (rtfd < 0) {
		r = error_set(err, rtfd, "%s/%s/" V1_RT_GROUP ": %s", path, first, strerror(-rtfd));
		goto done;
	}
	file_read_s64(fd, "cpu.rt_runtime_us", &cur);
	snprintf(num, sizeof(num), "%" PRId64, want);
	/* A child may not hold more than its parent: raise the parent first,
	 * lower the child first. */
	for (int i = 0; i < 2; i++) {
		int which = order[want < cur][i];

		/* A group removed moments ago still holds its runtime for
		 * ~10-20 ms (measured, 6.x: the task group is freed after an
		 * RCU grace period), so the sum check can fail with EINVAL
		 * for a while after a teardown: try again, briefly. */
		for (int t = 0; t < 50; t++) {
			r = file_write(which ? rtfd : fd, "cpu.rt_runtime_us", num);
			if (r != -EINVAL)
				break;
			sleep_ms(5);
		}
		if (r < 0) {
			r = error_set(err, r, "%s/%s%s/cpu.rt_runtime_us=%s: %s", path, first,
				      which ? "/" V1_RT_GROUP : "", num, strerror(-r));
			goto done;
		}
	}
done:
	if (rtfd >= 0)
		close(rtfd);
	if (fd >= 0)
		close(fd);
	close(hfd);
	return r;
}

/* file_write on a path; sets errno on failure. */
static int dir_write(const char *dir, const char *file, const char *val)
{
	int fd = dir_open(AT_FDCWD, dir), r;

	if (fd < 0) {
		errno = -fd;
		return fd;
	}
	r = file_write(fd, file, val);
	close(fd);
	errno = r < 0 ? -r : 0;
	return r;
}

/* After the node's group is gone: <first>/.rt and <first> go too when no
 * other node's group is left beside them (and no realtime job runs). */
static void v1_rt_teardown(const char *hpath, const char *parent)
{
	char dir[PATH_MAX], rt[PATH_MAX + 8];
	size_t skip, len = first_component(parent, &skip);
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
	if (dir_write(rt, "cpu.rt_runtime_us", "0") < 0 && errno != ENOENT)
		return;
	dir_write(dir, "cpu.rt_runtime_us", "0");
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
	r = file_write(fd, "cpuset.cpus", last ? c->cpus : c->root_cpus);
	if (r < 0)
		return r;
	return file_write(fd, "cpuset.mems", last ? c->mems : c->root_mems);
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
			ssize_t n = file_read(rootfd, "cpuset.cpus", ctx.root_cpus,
					      sizeof(ctx.root_cpus));

			if (n >= 0)
				n = file_read(rootfd, "cpuset.mems", ctx.root_mems,
					      sizeof(ctx.root_mems));
			if (n < 0) {
				close(rootfd);
				return error_set(err, (int)n, "%s/cpuset.cpus: %s", path,
						 strerror((int)-n));
			}
			strip_newline(ctx.root_cpus);
			strip_newline(ctx.root_mems);
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
		fd = path_create(rootfd, parent, h == V1_CPUSET ? v1_cpuset_level : NULL, &ctx,
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
	len = first_component(parent, &skip);
	snprintf(rt, sizeof(rt), "%s/%.*s/" V1_RT_GROUP, path, (int)len, parent + skip);
	return is_dir(rt, ".");
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
		q = path_remove(path, parent);
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
			return dir_open(job->parent_fd[h], job->name);
		}
		/* Not there; or, in cpuset, a stale job group of that name
		 * (job_dir_make's to judge). Only cpuset looks further. */
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
	fd = path_create(rootfd, parent, NULL, NULL, failed, sizeof(failed));
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
		fd = dir_open(AT_FDCWD, path);
		if (fd == -ENOENT && h == V1_CPUACCT) {
			snprintf(path, sizeof(path), "%s/cpu,cpuacct/%s", root, parent);
			fd = dir_open(AT_FDCWD, path);
		}
		/* The node's parent in devices: made by its first job that
		 * needs it, as node set-up makes the others. */
		if (fd == -ENOENT && h == V1_DEVICES) {
			if (job->found)
				continue;
			/* A fence asked for cannot be skipped. */
			if (!is_dir(root, v1_names[h]))
				return error_set(err, fd, "%s/devices: not mounted, no device fence",
						 root);
			fd = v1_devices_parent(root, parent, err);
			if (fd < 0)
				return fd;
		}
		/* The rare path: tell "not mounted" (fine for freezer, pids,
		 * cpu) from "node set-up did not run" (an error). */
		if (fd == -ENOENT && !v1_required[h] && !is_dir(root, v1_names[h]))
			continue;
		if (fd < 0)
			return error_set(err, fd, "%s: %s", path, strerror(-fd));
		/* cpu co-mounted with cpuacct: joined as cpuacct already. */
		if (h == V1_CPU && job->parent_fd[V1_CPUACCT] >= 0 &&
		    same_dir(fd, job->parent_fd[V1_CPUACCT])) {
			close(fd);
			continue;
		}
		if (h == rt_h) {
			size_t skip, len = first_component(parent, &skip);

			job->parent_fd[h] = fd;
			snprintf(path, sizeof(path), "%s/%s/%.*s/" V1_RT_GROUP, root, v1_names[h],
				 (int)len, parent + skip);
			if (h == V1_CPUACCT && !is_dir(root, "cpuacct"))
				snprintf(path, sizeof(path), "%s/cpu,cpuacct/%.*s/" V1_RT_GROUP,
					 root, (int)len, parent + skip);
			fd = dir_open(AT_FDCWD, path);
			if (fd < 0)
				return error_set(err, fd, "%s: %s (node set-up gives it RT runtime)",
						 path, strerror(-fd));
			job->fd[h] = fd;
			job->shared[h] = true;
			continue;
		}
		job->parent_fd[h] = fd;
		fd = job->found || h == V1_MEMORY || h == V1_DEVICES ? -ENOENT : v1_spare_take(job, h);
		if (fd < 0)
			fd = job_dir_make(job, job->parent_fd[h], job->name);
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
		r = (int)file_read(job->parent_fd[V1_CPUSET], "cpuset.cpus", cpus, sizeof(cpus));
		if (r < 0)
			return error_set(err, r, "parent cpuset.cpus: %s", strerror(-r));
		strip_newline(cpus);
	}
	if (lim->mems && *lim->mems) {
		snprintf(mems, sizeof(mems), "%s", lim->mems);
	} else {
		r = (int)file_read(job->parent_fd[V1_CPUSET], "cpuset.mems", mems, sizeof(mems));
		if (r < 0)
			return error_set(err, r, "parent cpuset.mems: %s", strerror(-r));
		strip_newline(mems);
	}
	r = file_write(job->fd[V1_CPUSET], "cpuset.cpus", cpus);
	if (r < 0)
		return error_set(err, r, "%s cpuset.cpus=%s: %s", job->name, cpus, strerror(-r));
	r = file_write(job->fd[V1_CPUSET], "cpuset.mems", mems);
	if (r < 0)
		return error_set(err, r, "%s cpuset.mems=%s: %s", job->name, mems, strerror(-r));

	if (lim->mem > 0) {
		snprintf(num, sizeof(num), "%" PRIu64, lim->mem);
		r = file_write(job->fd[V1_MEMORY], "memory.limit_in_bytes", num);
		if (r < 0)
			return error_set(err, r, "%s memory.limit_in_bytes=%s: %s", job->name,
					 num, strerror(-r));
		/* Same value for memory+swap: the job may not swap past its
		 * limit. Absent without swap accounting (swapaccount=0). */
		r = file_write(job->fd[V1_MEMORY], "memory.memsw.limit_in_bytes", num);
		if (r < 0 && r != -ENOENT)
			return error_set(err, r, "%s memory.memsw.limit_in_bytes=%s: %s",
					 job->name, num, strerror(-r));
	}
	if (job->fd[V1_PIDS] >= 0) {
		if (lim->pids_max > 0)
			snprintf(num, sizeof(num), "%" PRIu64, lim->pids_max);
		else
			snprintf(num, sizeof(num), "max");
		r = file_write(job->fd[V1_PIDS], "pids.max", num);
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
		ssize_t n = file_read(fd, "freezer.state", state, sizeof(state));

		if (n < 0)
			return (int)n;
		if (strncmp(state, "FROZEN", 6) == 0)
			return 0;
		if (time_mono_ns() > deadline)
			return -ETIME;
		sleep_ms(1);
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
			if (job->fd[h] != procs && (r = procs_drain(job->fd[h], timeout_ms)) < 0)
				return r;
		}
		if (procs < 0)
			return 0;
	}

	/* The common case, a job that left nothing behind, costs one read:
	 * freezing and thawing an empty group is ~0.25 ms for nothing. */
	r = procs_signal(procs, 0);
	if (r <= 0)
		return r;
	/* Frozen tasks cannot fork while we read the list; SIGKILL stays
	 * pending and is delivered on THAWED. Without a freezer, the drain
	 * loop below repeats until forks stop. */
	if (fz >= 0 && file_write(fz, "freezer.state", "FROZEN") == 0) {
		frozen = true;
		v1_freeze_wait(fz, timeout_ms);
	}
	r = procs_signal(procs, SIGKILL);
	if (frozen)
		file_write(fz, "freezer.state", "THAWED");
	if (r < 0)
		return r;
	r = procs_drain(procs, timeout_ms);
	return r < 0 ? r : 0;
}

static int v1_job_usage(struct cgroup_job *job, struct cgroup_usage *ret)
{
	uint64_t v;
	int r;

	*ret = (struct cgroup_usage){ 0 };
	if (job->shared[V1_CPUACCT]) {
		ret->cpu_shared = true;
	} else {
		r = file_read_u64(job->fd[V1_CPUACCT], "cpuacct.usage", &ret->cpu_ns);
		if (r < 0)
			return r;
	}
	r = file_read_u64(job->fd[V1_MEMORY], "memory.max_usage_in_bytes", &ret->mem_peak);
	if (r < 0)
		return r;
	/* oom_kill in memory.oom_control since Linux 4.13. Before that there
	 * is no count to read, and memory.failcnt is no substitute: it counts
	 * every time usage met the limit, page-cache reclaim included. */
	if (file_read_keyed(job->fd[V1_MEMORY], "memory.oom_control", "oom_kill", &v) == 0)
		ret->oom = v > 0;
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

	if (file_read(fd, "memory.stat", buf, sizeof(buf)) < 0 ||
	    keyed_u64(buf, "cache", &cache) < 0)
		return true;
	return cache > 0;
}

int cgroup_proc_count(const char *text, const char *controller, unsigned long *ret)
{
	size_t len = strlen(controller);

	/* "#subsys_name hierarchy num_cgroups enabled", a line each. */
	for (const char *line = text; *line;) {
		const char *next = strchr(line, '\n');
		unsigned long hier, num;

		if (strncmp(line, controller, len) == 0 && (line[len] == ' ' || line[len] == '\t')) {
			if (sscanf(line + len, "%lu %lu", &hier, &num) != 2)
				return -EINVAL;
			*ret = num;
			return 0;
		}
		if (!next)
			break;
		line = next + 1;
	}
	return -ENOENT;
}

/* Whether the host has reached the job's reclaim threshold: memory
 * cgroups, live and dying, as /proc/cgroups counts them (the count v1
 * caps at 65,535). Unreadable: assume so. */
static bool memcgs_at_threshold(const struct cgroup_job *job)
{
	char buf[4096];
	unsigned long n;
	ssize_t len;
	int fd;

	if (job->reclaim_threshold == 0)
		return true;
	fd = open("/proc/cgroups", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return true;
	buf[len] = '\0';
	return cgroup_proc_count(buf, "memory", &n) < 0 || n >= job->reclaim_threshold;
}

/* After its memory group went (so no task of it is left anywhere): the
 * job's other groups become spare K, the first K whose cpuset spare is
 * free, their counters reset (cpuacct.usage; cpuset and pids.max are
 * written by every job, freezer is THAWED after a kill). What cannot be
 * given stays open for rmdir. A group that met another taker's spare K
 * (EEXIST) is removed: either is as good. */
static void v1_spare_give(struct cgroup_job *job)
{
	char spare[24];
	int k;

	if (job->found || job->fd[V1_CPUSET] < 0 || job->shared[V1_CPUSET])
		return;
	if (job->fd[V1_CPUACCT] >= 0 && !job->shared[V1_CPUACCT] &&
	    file_write(job->fd[V1_CPUACCT], "cpuacct.usage", "0") < 0)
		return;
	/* A frozen spare would stop the next job at its first instruction:
	 * whatever froze it (not qpool, which thaws after a kill), it goes. */
	if (job->fd[V1_FREEZER] >= 0) {
		char state[32];

		if (file_read(job->fd[V1_FREEZER], "freezer.state", state, sizeof(state)) < 0 ||
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
	 * are the job's, and a job without a device fence has no group there. */
	for (int h = V1_N - 1; h >= 0; h--) {
		if (h == V1_MEMORY || h == V1_DEVICES || job->shared[h] || job->parent_fd[h] < 0 ||
		    job->fd[h] < 0)
			continue;
		if (renameat(job->parent_fd[h], job->name, job->parent_fd[h], spare) == 0)
			fd_close(&job->fd[h]);
	}
}

static int v1_job_remove(struct cgroup_job *job)
{
	int r = 0;

	/* Page cache charged to the group keeps a removed memory cgroup alive
	 * as a dying one until the kernel reclaims the cache or its files go
	 * (docs/DESIGN-FACTS.md: 193 of 200 jobs writing 1 MiB), and v1 caps
	 * memory cgroups at 65,535. force_empty prevents that, but it evicts
	 * the job's output before the next job can read it and, on dirty
	 * pages, waits for their writeback: 5-100 ms a job here. So it runs
	 * only once the host counts reclaim_threshold memory cgroups, which
	 * bounds what dying groups qpool leaves. memory.stat first: on a
	 * group without page cache force_empty still drains every CPU's LRU
	 * and charge stock, 0.8-3 ms against ~0.05 ms. */
	if (job->fd[V1_MEMORY] >= 0 && v1_memory_cached(job->fd[V1_MEMORY]) &&
	    memcgs_at_threshold(job))
		file_write(job->fd[V1_MEMORY], "memory.force_empty", "0");
	/* Memory first: its rmdir, refused while a task is in the group, is
	 * the kernel's word that the job's other groups are empty too (the
	 * job's tasks join all of them before exec). */
	if (job->fd[V1_MEMORY] >= 0 && job->parent_fd[V1_MEMORY] >= 0) {
		if (unlinkat(job->parent_fd[V1_MEMORY], job->name, AT_REMOVEDIR) == 0 ||
		    errno == ENOENT) {
			fd_close(&job->fd[V1_MEMORY]);
			v1_spare_give(job);
		} else {
			r = errno == ENOTEMPTY || errno == EBUSY ? -EBUSY : -errno;
		}
	}
	for (int h = 0; h < V1_N; h++) {
		if (h == V1_MEMORY || job->shared[h] || job->parent_fd[h] < 0 || job->fd[h] < 0)
			continue;   /* memory: tried above */
		if (unlinkat(job->parent_fd[h], job->name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
			if (r == 0)
				r = errno == ENOTEMPTY ? -EBUSY : -errno;
			continue;
		}
		fd_close(&job->fd[h]);
	}
	return r;
}

static const struct cgroup_ops cgroup_v1_ops = {
	.node_setup = v1_node_setup,
	.node_teardown = v1_node_teardown,
	.job_open = v1_job_open,
	.job_configure = v1_job_configure,
	.job_kill = v1_job_kill,
	.job_usage = v1_job_usage,
	.job_remove = v1_job_remove,
};

/* --- cgroup v2 ---------------------------------------------------------- */

/* Enables the controllers for the children of fd. cpu and pids are
 * wanted, cpuset and memory required (cgroup_detect checked those). */
static int v2_enable(int fd)
{
	static const char *const each[] = { "+cpuset", "+memory", "+cpu", "+pids" };
	int r;

	if (file_write(fd, "cgroup.subtree_control", V2_CONTROLLERS) == 0)
		return 0;
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++) {
		r = file_write(fd, "cgroup.subtree_control", each[i]);
		if (r < 0 && i < 2)
			return r;
	}
	return 0;
}

int cgroup_v2_enable(const char *dir, struct error *err)
{
	int fd = dir_open(AT_FDCWD, dir), r;

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

	rootfd = dir_open(AT_FDCWD, root);
	if (rootfd < 0)
		return error_set(err, rootfd, "%s: %s", root, strerror(-rootfd));
	fd = path_create(rootfd, parent, v2_level, NULL, failed, sizeof(failed));
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
		r = file_write(fd, "cpuset.cpus", cpulist);
		if (r < 0) {
			r = error_set(err, r, "%s/%s/cpuset.cpus=%s: %s", root, parent, cpulist,
				      strerror(-r));
			goto done;
		}
	}
	if (mems && *mems) {
		r = file_write(fd, "cpuset.mems", mems);
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
	return path_remove(root, parent);
}

static int v2_job_open(struct cgroup_job *job, const char *root, const char *parent,
		       struct error *err)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", root, parent) >= (int)sizeof(path))
		return error_set(err, -ENAMETOOLONG, "%s: path too long", root);
	fd = dir_open(AT_FDCWD, path);
	if (fd < 0)
		return error_set(err, fd, "%s: %s", path, strerror(-fd));
	job->parent_fd[0] = fd;
	fd = job_dir_make(job, fd, job->name);
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
		r = file_write(fd, "cpuset.cpus", lim->cpus);
		if (r < 0)
			return error_set(err, r, "%s cpuset.cpus=%s: %s", job->name, lim->cpus,
					 strerror(-r));
	}
	if (lim->mems && *lim->mems) {
		r = file_write(fd, "cpuset.mems", lim->mems);
		if (r < 0)
			return error_set(err, r, "%s cpuset.mems=%s: %s", job->name, lim->mems,
					 strerror(-r));
	}
	if (lim->mem > 0) {
		snprintf(num, sizeof(num), "%" PRIu64, lim->mem);
		r = file_write(fd, "memory.max", num);
		if (r < 0)
			return error_set(err, r, "%s memory.max=%s: %s", job->name, num,
					 strerror(-r));
		/* No swap beyond the limit; absent when swap is not accounted. */
		r = file_write(fd, "memory.swap.max", "0");
		if (r < 0 && r != -ENOENT)
			return error_set(err, r, "%s memory.swap.max=0: %s", job->name,
					 strerror(-r));
	}
	if (lim->pids_max > 0)
		snprintf(num, sizeof(num), "%" PRIu64, lim->pids_max);
	else
		snprintf(num, sizeof(num), "max");
	r = file_write(fd, "pids.max", num);
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
	if (file_write(fd, "cgroup.kill", "1") < 0) {
		bool frozen = file_write(fd, "cgroup.freeze", "1") == 0;

		r = procs_signal(fd, SIGKILL);
		if (frozen)
			file_write(fd, "cgroup.freeze", "0");
		if (r < 0)
			return r;
	}
	r = procs_drain(fd, timeout_ms);
	return r < 0 ? r : 0;
}

static int v2_job_usage(struct cgroup_job *job, struct cgroup_usage *ret)
{
	uint64_t v;
	int r;

	*ret = (struct cgroup_usage){ 0 };
	r = file_read_keyed(job->fd[0], "cpu.stat", "usage_usec", &v);
	if (r < 0)
		return r;
	ret->cpu_ns = v * 1000;
	/* memory.peak since Linux 5.19. */
	if (file_read_u64(job->fd[0], "memory.peak", &v) == 0)
		ret->mem_peak = v;
	if (file_read_keyed(job->fd[0], "memory.events", "oom_kill", &v) == 0)
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
		if (file_read(job->fd[0], "memory.stat", buf, sizeof(buf)) < 0 ||
		    keyed_u64(buf, "file", &file) < 0 || file == 0 ||
		    (i == 0 && !memcgs_at_threshold(job)))
			break;
		snprintf(num, sizeof(num), "%" PRIu64, file);
		if (file_write(job->fd[0], "memory.reclaim", num) != -EAGAIN)
			break;
	}
	if (unlinkat(job->parent_fd[0], job->name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return errno == ENOTEMPTY ? -EBUSY : -errno;
	fd_close(&job->fd[0]);
	return 0;
}

static const struct cgroup_ops cgroup_v2_ops = {
	.node_setup = v2_node_setup,
	.node_teardown = v2_node_teardown,
	.job_open = v2_job_open,
	.job_configure = v2_job_configure,
	.job_kill = v2_job_kill,
	.job_usage = v2_job_usage,
	.job_remove = v2_job_remove,
};

/* --- public ------------------------------------------------------------- */

static const struct cgroup_ops *ops_for(enum cgroup_mode mode)
{
	switch (mode) {
	case CGROUP_MODE_V1:
		return &cgroup_v1_ops;
	case CGROUP_MODE_V2:
		return &cgroup_v2_ops;
	case CGROUP_MODE_NONE:
		break;
	}
	return NULL;
}

const char *cgroup_mode_name(enum cgroup_mode mode)
{
	switch (mode) {
	case CGROUP_MODE_V1:
		return "v1";
	case CGROUP_MODE_V2:
		return "v2";
	case CGROUP_MODE_NONE:
		break;
	}
	return "none";
}

int cgroup_mode_parse(const char *s, enum cgroup_mode *ret)
{
	if (!s)
		return -EINVAL;
	if (strcmp(s, "none") == 0)
		*ret = CGROUP_MODE_NONE;
	else if (strcmp(s, "v1") == 0)
		*ret = CGROUP_MODE_V1;
	else if (strcmp(s, "v2") == 0)
		*ret = CGROUP_MODE_V2;
	else
		return -EINVAL;
	return 0;
}

static bool word_in(const char *text, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = text; (p = strstr(p, word)); p += len)
		if ((p == text || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[len] == '\0' || p[len] == ' ' || p[len] == '\n'))
			return true;
	return false;
}

int cgroup_detect(const char *root, enum cgroup_mode *ret)
{
	char path[PATH_MAX], buf[512];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/cgroup.controllers", root) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	n = file_read(AT_FDCWD, path, buf, sizeof(buf));
	if (n >= 0 && word_in(buf, "cpuset") && word_in(buf, "memory")) {
		*ret = CGROUP_MODE_V2;
		return 0;
	}
	/* Hybrid systems have cgroup2 at root/unified with no controllers:
	 * root itself is a tmpfs of v1 mounts and is judged as v1. */
	if (is_dir(root, "memory") && (is_dir(root, "cpuacct") || is_dir(root, "cpu,cpuacct"))) {
		*ret = CGROUP_MODE_V1;
		return 0;
	}
	*ret = CGROUP_MODE_NONE;
	return 0;
}

int cgroup_node_setup(const char *root, enum cgroup_mode mode, const char *parent,
		      const struct cpumask *cpus, const char *mems, struct error *err)
{
	const struct cgroup_ops *ops = ops_for(mode);

	if (!ops)
		return 0;
	if (!parent || !*parent)
		return error_set(err, -EINVAL, "empty cgroup parent");
	return ops->node_setup(root, parent, cpus, mems, err);
}

/* Writes val to file in <root>[/<h>]/<parent>; a missing hierarchy (v1
 * pids not mounted) is skipped when !required. */
static int node_file_write(const char *root, const char *hier, const char *parent,
			   const char *file, const char *val, bool required, struct error *err)
{
	char path[PATH_MAX];
	int r;

	if (hier && !is_dir(root, hier) && !required)
		return 0;
	if (snprintf(path, sizeof(path), "%s%s%s/%s", root, hier ? "/" : "", hier ? hier : "",
		     parent) >= (int)sizeof(path))
		return error_set(err, -ENAMETOOLONG, "%s: path too long", root);
	r = dir_write(path, file, val);
	if (r < 0)
		return error_set(err, r, "%s/%s=%s: %s", path, file, val, strerror(-r));
	return 0;
}

int cgroup_node_limits(const char *root, enum cgroup_mode mode, const char *parent,
		       uint64_t mem, uint64_t pids_max, struct error *err)
{
	char mnum[32], pnum[32];
	bool v1 = mode == CGROUP_MODE_V1;
	int r;

	if (!ops_for(mode))
		return 0;
	if (!parent || !*parent || strstr(parent, ".."))
		return error_set(err, -EINVAL, "bad cgroup parent \"%s\"", parent ? parent : "");
	if (mem > 0)
		snprintf(mnum, sizeof(mnum), "%" PRIu64, mem);
	else
		snprintf(mnum, sizeof(mnum), v1 ? "-1" : "max");
	if (pids_max > 0)
		snprintf(pnum, sizeof(pnum), "%" PRIu64, pids_max);
	else
		snprintf(pnum, sizeof(pnum), "max");
	r = node_file_write(root, v1 ? "memory" : NULL, parent,
			    v1 ? "memory.limit_in_bytes" : "memory.max", mnum, true, err);
	if (r < 0)
		return r;
	/* v2 without the pids controller enabled has no pids.max: no cap. */
	if (!v1) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s/pids.max", root, parent);
		if (access(path, F_OK) < 0)
			return 0;
	}
	return node_file_write(root, v1 ? "pids" : NULL, parent, "pids.max", pnum, false, err);
}

/* Adds the ids of the job.<id> directories in dir to *ids (unique). */
static int job_ids_scan(const char *dir, uint64_t **ids, size_t *n, size_t *cap)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		unsigned long long id;
		char *end;
		bool seen = false;

		if (e->d_type != DT_DIR || strncmp(e->d_name, "job.", 4) != 0 ||
		    e->d_name[4] < '1' || e->d_name[4] > '9')
			continue;
		errno = 0;
		id = strtoull(e->d_name + 4, &end, 10);
		if (errno || *end)
			continue;
		for (size_t i = 0; i < *n && !seen; i++)
			seen = (*ids)[i] == id;
		if (seen)
			continue;
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 16;
			uint64_t *nids = realloc(*ids, ncap * sizeof(*nids));

			if (!nids) {
				closedir(d);
				return -ENOMEM;
			}
			*ids = nids;
			*cap = ncap;
		}
		(*ids)[(*n)++] = id;
	}
	closedir(d);
	return 0;
}

int cgroup_node_job_ids(const char *root, enum cgroup_mode mode, const char *parent,
			uint64_t **ret)
{
	char path[PATH_MAX];
	uint64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	if (!ops_for(mode)) {
		*ret = NULL;
		return 0;
	}
	if (!parent || !*parent || strstr(parent, ".."))
		return -EINVAL;
	if (mode == CGROUP_MODE_V2) {
		if (snprintf(path, sizeof(path), "%s/%s", root, parent) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		r = job_ids_scan(path, &ids, &n, &cap);
	} else {
		for (int h = 0; h < V1_N && r == 0; h++) {
			char hpath[PATH_MAX];
			int fd = v1_hier_open(root, h, hpath, sizeof(hpath));

			if (fd < 0)
				continue;
			close(fd);
			if (snprintf(path, sizeof(path), "%s/%s", hpath, parent) >= (int)sizeof(path))
				r = -ENAMETOOLONG;
			else
				r = job_ids_scan(path, &ids, &n, &cap);
		}
	}
	if (r < 0) {
		free(ids);
		return r;
	}
	*ret = ids;
	return (int)n;
}

int cgroup_node_teardown(const char *root, enum cgroup_mode mode, const char *parent)
{
	const struct cgroup_ops *ops = ops_for(mode);

	if (!ops)
		return 0;
	if (!parent || !*parent)
		return -EINVAL;
	return ops->node_teardown(root, parent);
}

int cgroup_job_create(const char *root, enum cgroup_mode mode, const char *parent,
		      uint64_t jobid, unsigned flags, struct cgroup_job **ret, struct error *err)
{
	const struct cgroup_ops *ops = ops_for(mode);
	struct cgroup_job *job;
	int r;

	if (!ops)
		return error_set(err, -EOPNOTSUPP, "no cgroup hierarchy (mode none)");
	if (!parent || !*parent || strstr(parent, ".."))
		return error_set(err, -EINVAL, "bad cgroup parent \"%s\"", parent ? parent : "");
	job = calloc(1, sizeof(*job));
	if (!job)
		return error_set(err, -ENOMEM, "out of memory");
	job->ops = ops;
	job->flags = flags;
	job->spare = -1;
	job->reclaim_threshold = CGROUP_RECLAIM_THRESHOLD_DEFAULT;
	snprintf(job->name, sizeof(job->name), "job.%" PRIu64, jobid);
	for (int h = 0; h < V1_N; h++)
		job->parent_fd[h] = job->fd[h] = -1;
	r = ops->job_open(job, root, parent, err);
	if (r < 0) {
		ops->job_remove(job);
		cgroup_job_free(job);
		return r;
	}
	*ret = job;
	return 0;
}

int cgroup_job_find(const char *root, enum cgroup_mode mode, const char *parent,
		    uint64_t jobid, struct cgroup_job **ret, struct error *err)
{
	const struct cgroup_ops *ops = ops_for(mode);
	struct cgroup_job *job;
	bool any = false;
	int r;

	if (!ops)
		return error_set(err, -EOPNOTSUPP, "no cgroup hierarchy (mode none)");
	if (!parent || !*parent || strstr(parent, ".."))
		return error_set(err, -EINVAL, "bad cgroup parent \"%s\"", parent ? parent : "");
	job = calloc(1, sizeof(*job));
	if (!job)
		return error_set(err, -ENOMEM, "out of memory");
	job->ops = ops;
	job->found = true;
	job->spare = -1;
	job->reclaim_threshold = CGROUP_RECLAIM_THRESHOLD_DEFAULT;
	snprintf(job->name, sizeof(job->name), "job.%" PRIu64, jobid);
	for (int h = 0; h < V1_N; h++)
		job->parent_fd[h] = job->fd[h] = -1;
	r = ops->job_open(job, root, parent, err);
	for (int h = 0; h < V1_N; h++)
		any |= job->fd[h] >= 0;
	if (r == 0 && !any)
		r = error_set(err, -ENOENT, "%s/%s: no such group", parent, job->name);
	if (r < 0) {
		cgroup_job_free(job);
		return r;
	}
	*ret = job;
	return 0;
}

int cgroup_job_configure(struct cgroup_job *job, const struct cgroup_limits *lim,
			 struct error *err)
{
	return job->ops->job_configure(job, lim, err);
}

int cgroup_job_devices_deny(struct cgroup_job *job, const struct cgroup_dev *deny, size_t n,
			    struct error *err)
{
	struct error e = { { 0 } };
	int r;

	if (n == 0)
		return 0;
	if (n > CGROUP_DEVS_MAX)
		return error_set(err, -E2BIG, "more than %d devices to deny", CGROUP_DEVS_MAX);
	if (job->ops == &cgroup_v2_ops)
		return cgroup_devs_v2_attach(job->fd[0], deny, n, err);
	if (job->fd[V1_DEVICES] < 0)
		return error_set(err, -EINVAL, "%s has no devices group", job->name);
	r = cgroup_devs_v1_deny(job->fd[V1_DEVICES], deny, n, &e);
	if (r < 0)
		return error_set(err, r, "%s %s", job->name, e.text);
	return 0;
}

/* One list of the job's cpuset against what was written: 0, 1 when the
 * file is not there (a fake tree), or -EXDEV with err naming both. */
static int cpuset_list_check(int fd, const char *name, const char *file, const char *what,
			     const char *want, struct error *err)
{
	struct cpumask w, g;
	char got[4096];
	ssize_t n;

	if (!want || !*want)
		return 0;
	n = file_read(fd, file, got, sizeof(got));
	if (n == -ENOENT)
		return 1;
	if (n < 0)
		return error_set(err, (int)n, "%s %s: %s", name, file, strerror((int)-n));
	strip_newline(got);
	if (cpumask_parse(want, &w) < 0)
		return error_set(err, -EINVAL, "%s: %s '%s' is not a list", name, what, want);
	if (cpumask_parse(got, &g) < 0)
		return error_set(err, -EINVAL, "%s %s: '%s' is not a list", name, file, got);
	if (memcmp(&w, &g, sizeof(w)) != 0)
		return error_set(err, -EXDEV, "%s got %s %s (%s), not %s as allocated", name, what,
				 got[0] ? got : "none", file, want);
	return 0;
}

int cgroup_job_cpuset_check(struct cgroup_job *job, const struct cgroup_limits *lim,
			    struct error *err)
{
	bool v2 = job->ops == &cgroup_v2_ops;
	int fd = v2 ? job->fd[0] : job->fd[V1_CPUSET], r;

	if (fd < 0)
		return 0;
	r = cpuset_list_check(fd, job->name, v2 ? "cpuset.cpus.effective" : "cpuset.cpus", "cpus",
			      lim->cpus, err);
	if (r < 0)
		return r;
	r = cpuset_list_check(fd, job->name, v2 ? "cpuset.mems.effective" : "cpuset.mems",
			      "memory nodes", lim->mems, err);
	return r < 0 ? r : 0;
}

int cgroup_job_attach(struct cgroup_job *job, pid_t pid)
{
	const char *file = "cgroup.procs";
	char num[24];
	int r;

	/* On v1, a write to cgroup.procs takes the global threadgroup rwsem for
	 * writing and waits for an RCU grace period: ~11 ms measured here on
	 * the first write of every launch. A thread moving itself through
	 * "tasks" with pid 0 skips that lock (kernel 6.x): 0.15 ms for all
	 * five hierarchies. A freshly forked child is one thread, so that moves
	 * the whole process. */
	if (pid <= 0 && job->ops == &cgroup_v1_ops) {
		file = "tasks";
		snprintf(num, sizeof(num), "0");
	} else {
		snprintf(num, sizeof(num), "%d", pid > 0 ? (int)pid : (int)getpid());
	}
	for (int h = 0; h < V1_N; h++) {
		if (job->fd[h] < 0)
			continue;
		r = file_write(job->fd[h], file, num);
		if (r < 0)
			return r;
	}
	return 0;
}

int cgroup_job_kill(struct cgroup_job *job, int timeout_ms)
{
	return job->ops->job_kill(job, timeout_ms);
}

int cgroup_job_usage(struct cgroup_job *job, struct cgroup_usage *ret)
{
	return job->ops->job_usage(job, ret);
}

void cgroup_job_reclaim_threshold(struct cgroup_job *job, unsigned threshold)
{
	job->reclaim_threshold = threshold;
}

int cgroup_job_remove(struct cgroup_job *job)
{
	return job->ops->job_remove(job);
}

void cgroup_job_free(struct cgroup_job *job)
{
	if (!job)
		return;
	for (int h = 0; h < V1_N; h++) {
		fd_close(&job->fd[h]);
		fd_close(&job->parent_fd[h]);
	}
	free(job);
}
