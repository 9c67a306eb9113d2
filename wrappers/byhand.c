/* SPDX-License-Identifier: MIT */
/* gded by hand: `gded -n N [-m SIZE] [--rt POLICY:PRIO | --exclusive] [--cpus LIST] -- cmd`. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <hwloc.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "gded.h"
#include "placement.h"
#include "timeutil.h"

/* Exit statuses of gded by hand other than the command's own (those are
 * the command's status, or 128 + the signal that killed it). */
enum gded_byhand_exit {
	BYHAND_EXIT_USAGE = 2,      /* bad options, or not root: nothing was run */
	BYHAND_EXIT_SETUP = 125,    /* no fence: no free CPUs, cgroup or RT trouble */
	BYHAND_EXIT_NOEXEC = 126,   /* the command could not be executed */
	BYHAND_EXIT_NOTFOUND = 127, /* the command was not found */
};

#define BYHAND_PARENT "qpool/manual"
#define CGROUP_ROOT_DEFAULT "/sys/fs/cgroup"

struct byhand_opts {
	uint64_t ncpus;            /* 0: from --cpus */
	uint64_t mem;
	uint64_t pids_max;         /* 0: no limit */
	enum gded_reserve reserve;
	int rt_policy;
	int rt_priority;
	const char *cpus;          /* --cpus, or NULL: chosen */
	const char *cgroup_root;
	const char *proc_root;
	char **argv;
};

static void byhand_usage(FILE *f)
{
	fprintf(f, "usage: gded -n N [-m SIZE] [--rt fifo:PRIO | --rt rr:PRIO | --exclusive]\n"
		   "            [--cpus LIST] [--pids N] -- COMMAND [ARG...]\n"
		   "       gded --spec FILE\n"
		   "Runs COMMAND as root fenced like a job of N CPUs. See gded(8).\n");
}

/* "fifo:10" / "rr:5". */
static int rt_parse(const char *s, struct byhand_opts *o)
{
	const char *colon = strchr(s, ':');
	char *end;
	long prio;

	if (!colon)
		return -EINVAL;
	if (strncmp(s, "fifo", (size_t)(colon - s)) == 0 && colon - s == 4)
		o->rt_policy = SCHED_FIFO;
	else if (strncmp(s, "rr", (size_t)(colon - s)) == 0 && colon - s == 2)
		o->rt_policy = SCHED_RR;
	else
		return -EINVAL;
	errno = 0;
	prio = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || prio < sched_get_priority_min(o->rt_policy) ||
	    prio > sched_get_priority_max(o->rt_policy))
		return -EINVAL;
	o->rt_priority = (int)prio;
	o->reserve = GDED_RESERVE_REALTIME;
	return 0;
}

static int byhand_parse(int argc, char **argv, struct byhand_opts *o)
{
	static const struct option opts[] = {
		{ "ncpus", required_argument, NULL, 'n' },
		{ "mem", required_argument, NULL, 'm' },
		{ "rt", required_argument, NULL, 'r' },
		{ "exclusive", no_argument, NULL, 'x' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "pids", required_argument, NULL, 'p' },
		{ "cgroup-root", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct byhand_opts){ .cgroup_root = CGROUP_ROOT_DEFAULT, .proc_root = "/proc" };
	while ((c = getopt_long(argc, argv, "+n:m:h", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'n':
			errno = 0;
			o->ncpus = strtoull(optarg, &end, 10);
			if (errno || *end || o->ncpus == 0 || o->ncpus > CPUMASK_MAX) {
				fprintf(stderr, "gded: -n %s: not a CPU count\n", optarg);
				return -EINVAL;
			}
			break;
		case 'm':
			if (size_parse(optarg, &o->mem) < 0 || o->mem == 0) {
				fprintf(stderr, "gded: -m %s: not a size\n", optarg);
				return -EINVAL;
			}
			break;
		case 'r':
			if (o->reserve == GDED_RESERVE_EXCLUSIVE || rt_parse(optarg, o) < 0) {
				fprintf(stderr, "gded: --rt %s: want fifo:PRIO or rr:PRIO (1-99), "
						"without --exclusive\n", optarg);
				return -EINVAL;
			}
			break;
		case 'x':
			if (o->reserve == GDED_RESERVE_REALTIME) {
				fprintf(stderr, "gded: --exclusive and --rt exclude each other\n");
				return -EINVAL;
			}
			o->reserve = GDED_RESERVE_EXCLUSIVE;
			break;
		case 'c':
			o->cpus = optarg;
			break;
		case 'p':
			errno = 0;
			o->pids_max = strtoull(optarg, &end, 10);
			if (errno || *end || o->pids_max == 0) {
				fprintf(stderr, "gded: --pids %s: not a task count\n", optarg);
				return -EINVAL;
			}
			break;
		case 'C':
			o->cgroup_root = optarg;
			break;
		case 'h':
			byhand_usage(stdout);
			exit(0);
		default:
			byhand_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind >= argc || (!o->ncpus && !o->cpus)) {
		byhand_usage(stderr);
		return -EINVAL;
	}
	o->argv = argv + optind;
	return 0;
}

/* The CPUs in the cpuset.cpus of every job group qpool/<node>/job.* on this
 * host (gded by hand included). Unreadable groups (one being removed)
 * are skipped: this is a snapshot, not a lock. */
static void claimed_cpus(const char *cpuset_root, struct cpumask *ret)
{
	char path[PATH_MAX + 300];
	struct dirent *n, *j;
	DIR *top, *node;

	memset(ret, 0, sizeof(*ret));
	if (snprintf(path, sizeof(path), "%s/qpool", cpuset_root) >= (int)sizeof(path))
		return;
	top = opendir(path);
	if (!top)
		return;
	while ((n = readdir(top))) {
		if (n->d_type != DT_DIR || n->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/qpool/%s", cpuset_root, n->d_name);
		node = opendir(path);
		if (!node)
			continue;
		while ((j = readdir(node))) {
			char file[PATH_MAX + 600], buf[4096];
			struct cpumask m;
			ssize_t len;
			int fd;

			if (j->d_type != DT_DIR || strncmp(j->d_name, "job.", 4) != 0)
				continue;
			snprintf(file, sizeof(file), "%s/%s/cpuset.cpus", path, j->d_name);
			fd = open(file, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			len = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (len <= 0)
				continue;
			buf[len] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			if (cpumask_parse(buf, &m) == 0)
				for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
					ret->bits[i] |= m.bits[i];
		}
		closedir(node);
	}
	closedir(top);
}

/* Picks the job's CPUs and memory nodes: --cpus as given, else
 * placement_choose on the machine's topology over the allowed CPUs that
 * no job group claims. */
static int cpus_choose(const struct byhand_opts *o, enum cgroup_mode mode, char *cpus,
		       size_t cpus_len, char *mems, size_t mems_len)
{
	struct cpumask allowed = { { 0 } }, claimed, free_cpus = { { 0 } };
	struct placement pl;
	struct error err = { { 0 } };
	hwloc_topology_t topo = NULL;
	char root[PATH_MAX + 16], list[4096];
	cpu_set_t set;
	int r;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		fprintf(stderr, "gded: sched_getaffinity: %m\n");
		return -errno;
	}
	for (unsigned i = 0; i < CPU_SETSIZE && i < CPUMASK_MAX; i++)
		if (CPU_ISSET(i, &set))
			cpumask_set(&allowed, i);
	if (o->cpus) {
		struct cpumask want;

		if (cpumask_parse(o->cpus, &want) < 0 || !cpumask_subset(&want, &allowed) ||
		    (o->ncpus && cpumask_count(&want) != o->ncpus)) {
			cpumask_format(&allowed, list, sizeof(list));
			fprintf(stderr, "gded: --cpus %s: want %s%llu of the CPUs %s\n", o->cpus,
				o->ncpus ? "exactly " : "", (unsigned long long)o->ncpus, list);
			return -EINVAL;
		}
		cpumask_format(&want, cpus, cpus_len);
		mems[0] = '\0';     /* the parent's */
		return 0;
	}
	snprintf(root, sizeof(root), "%s%s", o->cgroup_root, mode == CGROUP_MODE_V1 ? "/cpuset" : "");
	claimed_cpus(root, &claimed);
	for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
		free_cpus.bits[i] = allowed.bits[i] & ~claimed.bits[i];
	if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0) {
		r = -errno;
		fprintf(stderr, "gded: cannot load the machine's topology: %m\n");
		goto done;
	}
	r = placement_choose(topo, &free_cpus, (unsigned)o->ncpus, false, &pl, &err);
	if (r < 0) {
		cpumask_format(&free_cpus, list, sizeof(list));
		fprintf(stderr, "gded: no %llu free CPUs (free now: %s): %s\n",
			(unsigned long long)o->ncpus, list[0] ? list : "none", err.text);
		goto done;
	}
	cpumask_format(&pl.cpus, cpus, cpus_len);
	if (cpumask_count(&pl.mems) > 0)
		cpumask_format(&pl.mems, mems, mems_len);
	else
		mems[0] = '\0';
done:
	if (topo)
		hwloc_topology_destroy(topo);
	return r;
}

/* gded refuses --rt where qnoded would: kernel RT throttling must stay on. */
static bool rt_throttled(const char *proc_root)
{
	char path[PATH_MAX], buf[32] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/sys/kernel/sched_rt_runtime_us", proc_root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;   /* no such knob: nothing is switched off */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n <= 0 || strtol(buf, NULL, 10) >= 0;
}

static int exit_status(const struct gded_result *res)
{
	switch (res->status) {
	case GDED_STATUS_EXITED:
		return res->exit_status;
	case GDED_STATUS_SIGNALED:
		return 128 + res->exit_signal;
	case GDED_STATUS_FAILED:
		break;
	}
	if (res->exec_errno == ENOENT)
		return BYHAND_EXIT_NOTFOUND;
	if (res->exec_errno)
		return BYHAND_EXIT_NOEXEC;
	return BYHAND_EXIT_SETUP;
}

/* Commands by hand share qpool/manual and qpool/.rt: one's teardown must
 * not remove them between another's set-up and its job's group (seen as
 * "qpool/.rt: No such file" with two run side by side). Each holds a shared
 * flock on the cgroup root from before its set-up to its end; the teardown
 * runs only under the exclusive lock, taken without waiting: when another
 * command still holds its shared lock, that one tears down at its end.
 * Returns the locked fd, or -1 (no lock: as before, best effort). */
static int byhand_lock(const char *cgroup_root)
{
	int fd = open(cgroup_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && flock(fd, LOCK_SH) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* True when this command may tear down: no other holds the lock. */
static bool byhand_last(int fd)
{
	if (fd < 0)
		return true;
	flock(fd, LOCK_UN);
	return flock(fd, LOCK_EX | LOCK_NB) == 0;
}

int gded_byhand_main(int argc, char **argv)
{
	struct byhand_opts o;
	struct gded_result res = { 0 };
	struct gded_job job;
	struct error err = { { 0 } };
	enum cgroup_mode mode;
	char cpus[4096], mems[1024];
	int rc = BYHAND_EXIT_SETUP, r, lockfd;

	res.wall[GDED_STAMP_WRAP] = time_wall_ns();
	res.mono[GDED_STAMP_WRAP] = time_mono_ns();
	gded_stdio_ensure();
	if (byhand_parse(argc, argv, &o) < 0)
		return BYHAND_EXIT_USAGE;
	if (getuid() != 0 || geteuid() != 0) {
		fprintf(stderr, "gded: running a command by hand needs root\n");
		return BYHAND_EXIT_USAGE;
	}
	if (o.reserve == GDED_RESERVE_REALTIME && !rt_throttled(o.proc_root)) {
		fprintf(stderr, "gded: kernel RT throttling is off (sched_rt_runtime_us = -1): "
				"refusing --rt\n");
		return BYHAND_EXIT_SETUP;
	}
	r = cgroup_detect(o.cgroup_root, &mode);
	if (r < 0 || mode == CGROUP_MODE_NONE) {
		fprintf(stderr, "gded: no usable cgroup hierarchy at %s\n", o.cgroup_root);
		return BYHAND_EXIT_SETUP;
	}
	if (cpus_choose(&o, mode, cpus, sizeof(cpus), mems, sizeof(mems)) < 0)
		return o.cpus ? BYHAND_EXIT_USAGE : BYHAND_EXIT_SETUP;
	lockfd = byhand_lock(o.cgroup_root);
	r = cgroup_node_setup(o.cgroup_root, mode, BYHAND_PARENT, NULL, NULL, &err);
	if (r < 0) {
		fprintf(stderr, "gded: cgroup set-up of %s: %s\n", BYHAND_PARENT, err.text);
		goto done;
	}
	job = (struct gded_job){
		.jobid = (uint64_t)getpid(),
		.name = o.argv[0],
		.queue = "manual",
		.node = "localhost",
		.user = "root",
		.home = "/",
		.shell = "/bin/sh",
		.ncpus = o.cpus ? 0 : o.ncpus,
		.mem = o.mem,
		.kill_grace = GDED_KILL_GRACE_DEFAULT,
		.pids_max = o.pids_max,
		.cpus = cpus,
		.mems = mems,
		.reserve = o.reserve,
		.rt_policy = o.rt_policy,
		.rt_priority = o.rt_priority,
		.argv = o.argv,
		.cg_mode = mode,
		.cg_root = o.cgroup_root,
		.cg_parent = BYHAND_PARENT,
		.cg_reclaim_threshold = CGROUP_RECLAIM_THRESHOLD_DEFAULT,
	};
	r = gded_run(&job, &res, &err);
	if (r < 0)
		fprintf(stderr, "gded: %s\n", err.text);
	if (res.status == GDED_STATUS_FAILED)
		fprintf(stderr, "gded: %s\n", res.reason);
	else if (res.oom)
		fprintf(stderr, "gded: the command was %s\n", res.reason);
	rc = exit_status(&res);
done:
	/* -EBUSY: another command by hand still runs there. */
	if (byhand_last(lockfd))
		cgroup_node_teardown(o.cgroup_root, mode, BYHAND_PARENT);
	if (lockfd >= 0)
		close(lockfd);
	return rc;
}
