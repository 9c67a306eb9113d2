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
#include "cgroup-internal.h"
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
	n = cg_file_read(AT_FDCWD, path, buf, sizeof(buf));
	if (n >= 0 && word_in(buf, "cpuset") && word_in(buf, "memory")) {
		*ret = CGROUP_MODE_V2;
		return 0;
	}
	/* Hybrid systems have cgroup2 at root/unified with no controllers:
	 * root itself is a tmpfs of v1 mounts and is judged as v1. */
	if (cg_is_dir(root, "memory") && (cg_is_dir(root, "cpuacct") || cg_is_dir(root, "cpu,cpuacct"))) {
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

	if (hier && !cg_is_dir(root, hier) && !required)
		return 0;
	if (snprintf(path, sizeof(path), "%s%s%s/%s", root, hier ? "/" : "", hier ? hier : "",
		     parent) >= (int)sizeof(path))
		return error_set(err, -ENAMETOOLONG, "%s: path too long", root);
	r = cg_dir_write(path, file, val);
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

/* ---- the node's parents, held by the resident launcher ---- */

/* What cgroup_parents_hold opened: fd[h] an O_PATH fd of path[h],
 * CG_HELD_SKIP or CG_HELD_NONE. Inherited by the launcher's forks. */
static struct {
	bool set;
	enum cgroup_mode mode;
	char root[PATH_MAX];
	char parent[PATH_MAX];
	char path[V1_N][PATH_MAX];
	int fd[V1_N];
	int proc_cgroups;       /* /proc/cgroups (the reclaim threshold's count) */
	int64_t checked_ns;
} held = { .proc_cgroups = -1 };

int cg_held_proc_cgroups(void)
{
	return held.set ? held.proc_cgroups : -1;
}

/* Closes what is held. Nothing is open unless held.set (the fds start
 * zeroed: never closed then, fd 0 is not ours). */
static void held_drop(void)
{
	for (int h = 0; h < V1_N; h++) {
		if (held.set && held.fd[h] >= 0)
			close(held.fd[h]);
		held.fd[h] = CG_HELD_NONE;
		held.path[h][0] = '\0';
	}
	if (held.set && held.proc_cgroups >= 0)
		close(held.proc_cgroups);
	held.proc_cgroups = -1;
	held.set = false;
}

/* v1 hierarchy h's parent: its fd, CG_HELD_SKIP where v1_job_open skips
 * h (an optional hierarchy not mounted; cpu co-mounted with cpuacct),
 * else CG_HELD_NONE (the job's own open says what is wrong). */
static int held_open_v1(int h)
{
	char hpath[PATH_MAX];
	int rootfd = v1_hier_open(held.root, h, hpath, sizeof(hpath)), fd;

	if (rootfd == -ENOENT && h == V1_CPU && cg_is_dir(held.root, v1_names[h]))
		return CG_HELD_SKIP;   /* co-mounted: joined as cpuacct */
	if (rootfd == -ENOENT && !v1_required[h] && h != V1_DEVICES &&
	    !cg_is_dir(held.root, v1_names[h]))
		return CG_HELD_SKIP;
	if (rootfd < 0)
		return CG_HELD_NONE;
	fd = cg_dir_open(rootfd, held.parent);
	close(rootfd);
	if (fd < 0 || snprintf(held.path[h], sizeof(held.path[h]), "%s/%s", hpath, held.parent) >=
			      (int)sizeof(held.path[h])) {
		if (fd >= 0)
			close(fd);
		return CG_HELD_NONE;
	}
	return fd;
}

int cgroup_parents_hold(const char *root, enum cgroup_mode mode, const char *parent,
			struct error *err)
{
	char r[PATH_MAX], p[PATH_MAX];

	/* root and parent may be held's own (a recheck). */
	snprintf(r, sizeof(r), "%s", root);
	snprintf(p, sizeof(p), "%s", parent ? parent : "");
	held_drop();
	if (!ops_for(mode))
		return 0;
	if (!*p || strstr(p, ".."))
		return error_set(err, -EINVAL, "bad cgroup parent \"%s\"", p);
	if (strlen(r) >= sizeof(held.root) || strlen(p) >= sizeof(held.parent))
		return error_set(err, -ENAMETOOLONG, "%s/%s: path too long", r, p);
	held.mode = mode;
	snprintf(held.root, sizeof(held.root), "%s", r);
	snprintf(held.parent, sizeof(held.parent), "%s", p);
	if (mode == CGROUP_MODE_V2) {
		int fd;

		if (snprintf(held.path[0], sizeof(held.path[0]), "%s/%s", r, p) >=
		    (int)sizeof(held.path[0]))
			return error_set(err, -ENAMETOOLONG, "%s/%s: path too long", r, p);
		fd = cg_dir_open(AT_FDCWD, held.path[0]);
		if (fd < 0)
			return error_set(err, fd, "%s: %s", held.path[0], strerror(-fd));
		held.fd[0] = fd;
	} else {
		for (int h = 0; h < V1_N; h++)
			held.fd[h] = held_open_v1(h);
	}
	/* Read by every job's teardown (cg_memcgs_at_threshold). */
	held.proc_cgroups = open("/proc/cgroups", O_RDONLY | O_CLOEXEC);
	held.set = true;
	held.checked_ns = time_mono_ns();
	return 0;
}

void cgroup_parents_recheck(int interval_ms)
{
	int64_t now;
	bool stale = false;

	if (!held.set)
		return;
	now = time_mono_ns();
	if (interval_ms > 0 && now - held.checked_ns < (int64_t)interval_ms * NSEC_PER_MSEC)
		return;
	held.checked_ns = now;
	for (int h = 0; h < V1_N && !stale; h++) {
		struct stat a, b;

		if (held.fd[h] < 0)
			continue;
		stale = stat(held.path[h], &a) < 0 || fstat(held.fd[h], &b) < 0 ||
			a.st_dev != b.st_dev || a.st_ino != b.st_ino;
	}
	if (stale)
		(void)cgroup_parents_hold(held.root, held.mode, held.parent, NULL);
}

void cgroup_parents_closefrom(int lowfd)
{
	int keep[V1_N + 1], n = 0, from = lowfd;

	for (int h = 0; h <= V1_N && held.set; h++) {
		int fd = h < V1_N ? held.fd[h] : held.proc_cgroups, i;

		if (fd < lowfd)
			continue;
		for (i = n; i > 0 && keep[i - 1] > fd; i--)
			keep[i] = keep[i - 1];
		keep[i] = fd;
		n++;
	}
	for (int i = 0; i < n; i++) {
		if (keep[i] > from)
			close_range((unsigned)from, (unsigned)keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	close_range((unsigned)from, ~0U, 0);
}

int cg_parent_held(struct cgroup_job *job, const char *root, const char *parent, int h)
{
	int fd;

	if (!held.set || job->no_held || job->found || job->ops != ops_for(held.mode) ||
	    strcmp(root, held.root) != 0 || strcmp(parent, held.parent) != 0)
		return CG_HELD_NONE;
	fd = held.fd[h];
	if (fd >= 0)
		job->parent_held[h] = true;
	return fd;
}

/* Back to what cgroup_job_create starts with, fds closed (not the held). */
static void job_reset(struct cgroup_job *job)
{
	for (int h = 0; h < V1_N; h++) {
		cg_fd_close(&job->fd[h]);
		if (!job->parent_held[h])
			cg_fd_close(&job->parent_fd[h]);
		job->parent_fd[h] = -1;
		job->parent_held[h] = false;
		job->shared[h] = false;
	}
	job->spare = -1;
	job->protected = false;
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
		job->parent_fd[h] = job->fd[h] = job->tasks_fd[h] = -1;
	job->usage_fd = -1;
	job->oom_kill = -1;
	r = ops->job_open(job, root, parent, err);
	if (r == -ENOENT) {
		bool any = false;

		for (int h = 0; h < V1_N; h++)
			any |= job->parent_held[h];
		/* A held parent gone (removed, made again): by path. */
		if (any) {
			ops->job_remove(job);
			job_reset(job);
			job->no_held = true;
			r = ops->job_open(job, root, parent, err);
		}
	}
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
		job->parent_fd[h] = job->fd[h] = job->tasks_fd[h] = -1;
	job->usage_fd = -1;
	job->oom_kill = -1;
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
	n = cg_file_read(fd, file, got, sizeof(got));
	if (n == -ENOENT)
		return 1;
	if (n < 0)
		return error_set(err, (int)n, "%s %s: %s", name, file, strerror((int)-n));
	cg_strip_newline(got);
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
	int fd = job->fd[0], r;

	/* v1 grants what it takes: a write of cpuset.cpus or cpuset.mems
	 * that is not a subset of the parent's is refused (EACCES), one
	 * naming an offline or absent CPU or node too (EINVAL, ERANGE), an
	 * empty one while tasks are inside too (ENOSPC), and
	 * cgroup_job_configure fails on it
	 * (kernel/cgroup/cpuset.c, validate_change, update_cpumask). What it
	 * accepted is what it reads back, so the read-back would cost two
	 * opens a job to compare the list with itself (issue 39). Only v2
	 * grants silently less than it was given (the effective lists). */
	if (job->ops != &cgroup_v2_ops || fd < 0)
		return 0;
	r = cpuset_list_check(fd, job->name, "cpuset.cpus.effective", "cpus", lim->cpus, err);
	if (r < 0)
		return r;
	r = cpuset_list_check(fd, job->name, "cpuset.mems.effective", "memory nodes", lim->mems,
			      err);
	return r < 0 ? r : 0;
}

void cgroup_job_attach_prepare(struct cgroup_job *job)
{
	if (job->ops != &cgroup_v1_ops)
		return;
	for (int h = 0; h < V1_N; h++) {
		if (job->fd[h] < 0 || job->tasks_fd[h] >= 0)
			continue;
		job->tasks_fd[h] = openat(job->fd[h], "tasks", O_RDWR | O_CLOEXEC);
		if (job->tasks_fd[h] < 0)
			job->tasks_fd[h] = -1;
	}
}

ssize_t cgroup_job_attach_plan(const struct cgroup_job *job, struct cgroup_attach_step *step,
			       size_t max)
{
	bool v1 = job->ops == &cgroup_v1_ops;
	size_t n = 0;

	for (int h = 0; h < V1_N; h++) {
		if (job->fd[h] < 0)
			continue;
		if (n == max)
			return -E2BIG;
		if (v1 && job->tasks_fd[h] >= 0)
			step[n++] = (struct cgroup_attach_step){ .fd = job->tasks_fd[h] };
		else
			step[n++] = (struct cgroup_attach_step){ .fd = job->fd[h],
								 .name = v1 ? "tasks" : "cgroup.procs" };
	}
	return (ssize_t)n;
}

int cgroup_job_attach(struct cgroup_job *job, pid_t pid)
{
	const char *file = "cgroup.procs";
	bool self_v1 = pid <= 0 && job->ops == &cgroup_v1_ops;
	char num[24];
	int r;

	/* On v1, a write to cgroup.procs takes the global threadgroup rwsem for
	 * writing and waits for an RCU grace period: ~11 ms measured here on
	 * the first write of every launch. A thread moving itself through
	 * "tasks" with pid 0 skips that lock (kernel 6.x): 0.15 ms for all
	 * five hierarchies. A freshly forked child is one thread, so that moves
	 * the whole process. */
	if (self_v1) {
		file = "tasks";
		snprintf(num, sizeof(num), "0");
	} else {
		snprintf(num, sizeof(num), "%d", pid > 0 ? (int)pid : (int)getpid());
	}
	for (int h = 0; h < V1_N; h++) {
		if (job->fd[h] < 0)
			continue;
		/* Opened before the fork (cgroup_job_attach_prepare): one
		 * write, no open, in the child. */
		if (self_v1 && job->tasks_fd[h] >= 0) {
			ssize_t n = pwrite(job->tasks_fd[h], num, strlen(num), 0);

			if (n < 0)
				return -errno;
			if ((size_t)n != strlen(num))
				return -EIO;
			continue;
		}
		r = cg_file_write(job->fd[h], file, num);
		if (r < 0)
			return r;
	}
	return 0;
}

int cgroup_job_kill(struct cgroup_job *job, int timeout_ms)
{
	return job->ops->job_kill(job, timeout_ms);
}

int cgroup_job_freeze(struct cgroup_job *job, bool frozen, int timeout_ms)
{
	return job->ops->job_freeze(job, frozen, timeout_ms);
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
		cg_fd_close(&job->fd[h]);
		cg_fd_close(&job->tasks_fd[h]);
		if (!job->parent_held[h])
			cg_fd_close(&job->parent_fd[h]);
	}
	cg_fd_close(&job->usage_fd);
	free(job);
}
