/* SPDX-License-Identifier: MIT */
/* cgroups for qpool: v1/v2 detection, the node's parent groups, and the
 * per-job fence, behind one small ops table with a fake for tests. */
#ifndef QPOOL_CGROUP_H
#define QPOOL_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "parse.h"

enum cgroup_mode {
	CGROUP_MODE_NONE,   /* no usable hierarchy (or simulated node) */
	CGROUP_MODE_V1,     /* legacy or hybrid: one hierarchy per controller */
	CGROUP_MODE_V2,     /* unified hierarchy */
};

/* On the live host: the cgroup root libcgroup finds in the mount table
 * (v1: the directory holding the controller mounts; v2: the unified
 * mount). 0, or -ENOENT with err when none is mounted. */
int cgroup_discover(char *ret_root, size_t len, struct error *err);

/* "none", "v1", "v2". */
const char *cgroup_mode_name(enum cgroup_mode mode);

/* Parses "none"/"v1"/"v2"; 0 or -EINVAL. */
int cgroup_mode_parse(const char *s, enum cgroup_mode *ret);

/* Decides from the tree at root, so a fake tree in a temp dir is judged
 * like /sys/fs/cgroup: V2 when root/cgroup.controllers exists and lists
 * cpuset and memory; V1 when root has cpuacct (or "cpu,cpuacct") and memory
 * hierarchies; NONE otherwise. Returns 0 and *ret. */
int cgroup_detect(const char *root, enum cgroup_mode *ret);

/* qnoded, at start: creates the node's parent group `parent` (e.g.
 * "qpool/n1") in every hierarchy qpool uses (v1: cpuset, cpuacct, memory,
 * freezer, pids, cpu; v2: one directory, controllers enabled along the
 * path), and gives it cpus and mems (cpuset). Where v1 schedules RT tasks
 * by group (cpu.rt_runtime_us exists), also creates the shared realtime
 * group "<first>/.rt" and gives it and "<first>" the root's RT runtime
 * less 5% of the period (see CGROUP_JOB_REALTIME). Idempotent. */
int cgroup_node_setup(const char *root, enum cgroup_mode mode, const char *parent,
		      const struct cpumask *cpus, const char *mems, struct error *err);

/* Whether a realtime job can join the node's shared realtime group: true
 * where RT tasks are not scheduled by group (v2, or v1 without
 * cpu.rt_runtime_us), else whether cgroup_node_setup made "<first>/.rt",
 * which it does not when other pools on the host hold all the RT runtime. */
bool cgroup_node_rt_ready(const char *root, enum cgroup_mode mode, const char *parent);

/* qnoded, after cgroup_node_setup: the limits of the node's group, over
 * all its jobs together: memory (v1 memory.limit_in_bytes, v2
 * memory.max; 0: none) and tasks (pids.max; 0: "max"; skipped where the
 * pids controller is absent). So jobs cannot take the host's last memory
 * or pids, whatever each job's own limit. 0 or -errno with err set. */
int cgroup_node_limits(const char *root, enum cgroup_mode mode, const char *parent,
		       uint64_t mem, uint64_t pids_max, struct error *err);

/* The ids of the job groups (job.<id>) inside `parent` in any hierarchy,
 * each once, in *ret (malloc'd; NULL for mode none). Returns their
 * number or -errno. For qnoded at start: a group no job of its own
 * accounts for is a lost wrapper's leftover. */
int cgroup_node_job_ids(const char *root, enum cgroup_mode mode, const char *parent,
			uint64_t **ret);

/* qnoded, at a clean stop with no job left: removes `parent`, and its
 * first component (e.g. "qpool", with its realtime group) when no other
 * node's group is left in it. -EBUSY when a job group is still inside. */
int cgroup_node_teardown(const char *root, enum cgroup_mode mode, const char *parent);

/* One job's fence: its group `<parent>/job.<id>` in every hierarchy,
 * held as directory fds so the per-job path is mkdirat/openat/write only
 * (no path walks, no libcgroup: 4x the cost, docs/DESIGN-FACTS.md). */
struct cgroup_job;

/* What a job group is given. */
struct cgroup_limits {
	const char *cpus;     /* kernel list; NULL or "": the parent's */
	const char *mems;     /* kernel list; NULL or "": the parent's */
	uint64_t mem;         /* bytes; 0: no limit */
	uint64_t pids_max;    /* tasks; 0: "max" */
};

/* What a job group used, read before it is removed. */
struct cgroup_usage {
	uint64_t cpu_ns;      /* v1 cpuacct.usage; v2 cpu.stat usage_usec */
	bool cpu_shared;      /* no group of its own to count CPU time (a
	                       * realtime job on v1 with cpu,cpuacct co-mounted):
	                       * cpu_ns is 0, the caller counts otherwise */
	uint64_t mem_peak;    /* v1 memory.max_usage_in_bytes; v2 memory.peak */
	bool oom;             /* the kernel's OOM killer killed a task of the group:
	                       * v1 memory.oom_control oom_kill (Linux >= 4.13),
	                       * v2 memory.events oom_kill */
};

enum cgroup_job_flags {
	/* The job runs SCHED_FIFO/RR. Where the kernel schedules RT tasks by
	 * group (v1 cpu.rt_runtime_us), a new group has no RT runtime and
	 * sched_setscheduler fails in it, so in the cpu hierarchy the job
	 * joins the shared group "<first>/.rt" (e.g. qpool/.rt) that
	 * cgroup_node_setup gave RT runtime. No effect elsewhere. */
	CGROUP_JOB_REALTIME = 1 << 0,
	/* The job's devices are fenced (cgroup_job_devices_deny): on v1 it
	 * also gets a group in the devices hierarchy, made for it and removed
	 * with it, never kept as a spare (a kept one would carry the last
	 * job's rules). Without it a job pays nothing for devices. No effect
	 * on v2, where the program attaches to the job's one group. */
	CGROUP_JOB_DEVICES = 1 << 1,
	/* The job's memory limit is under CGROUP_MEMORY_KEPT_MIN: on v1 its
	 * memory group is made for it, never a kept one, whose last job may
	 * have left up to 1 MiB charged that the kernel cannot all reclaim
	 * under so small a limit (the limit's write would fail). No effect
	 * on v2, where every group is made per job. */
	CGROUP_JOB_MEMORY_SMALL = 1 << 2,
};
#define CGROUP_MEMORY_KEPT_MIN (16ULL << 20)

/* A character device's number, as the fence names it. */
struct cgroup_dev {
	unsigned major;
	unsigned minor;
};
#define CGROUP_DEV_MAJOR_MAX 4095u      /* 12 bits (MAJOR of a dev_t) */
#define CGROUP_DEV_MINOR_MAX 1048575u   /* 20 bits */
#define CGROUP_DEVS_MAX 64              /* a node's GPUs (NODE_GPUS_MAX) */

/* Creates `<root>/<h>/<parent>/job.<jobid>` in each hierarchy (v1:
 * cpuset, cpuacct, memory, freezer, pids, cpu, skipping freezer, pids and
 * cpu when not mounted and cpu when co-mounted with cpuacct; v2: one
 * directory) and opens it. flags: enum cgroup_job_flags. A group that exists
 * already is never adopted: when empty (the kernel refuses rmdir of a
 * populated cgroup, so that is certain) it is removed and made anew; when
 * it holds processes the job is refused with -EEXIST (a stale copy of the
 * job still being killed, or another pool using the same parent and node
 * name). On failure nothing this call made is left behind. -EOPNOTSUPP for CGROUP_MODE_NONE; -errno otherwise, err says
 * which path. */
int cgroup_job_create(const char *root, enum cgroup_mode mode, const char *parent,
		      uint64_t jobid, unsigned flags, struct cgroup_job **ret, struct error *err);

/* The node's parent groups held open by this process and its forks
 * (qnoded's resident launcher, whose forks are the wrappers): each
 * hierarchy's <root>[/<h>]/<parent> as an O_PATH directory fd, so a
 * job's cgroup_job_create with the same root, mode and parent makes and
 * opens its groups relative to them, with no path walk (issue 39).
 * Anything else (another parent, a process that never called this)
 * opens them by path, as does a job whose held parent has gone (removed
 * and made again by a qnoded that restarted): cgroup_job_create then
 * tries again by path. A hierarchy not held (v1 devices before its first
 * job) is opened by path. /proc/cgroups, which each job's removal reads
 * (cgroup_job_reclaim_threshold), is held with them and read from its
 * start. Calling it again replaces what was held. 0 or
 * -errno with err; on failure nothing is held. */
int cgroup_parents_hold(const char *root, enum cgroup_mode mode, const char *parent,
			struct error *err);

/* Where qnoded names them for its resident launcher (gded --launcher):
 * cgroup_mode_name, the root and the node's parent. */
#define CGROUP_HOLD_ENV_MODE "QPOOL_CGROUP_MODE"
#define CGROUP_HOLD_ENV_ROOT "QPOOL_CGROUP_ROOT"
#define CGROUP_HOLD_ENV_PARENT "QPOOL_CGROUP_PARENT"

/* Whether each held parent is still the directory at its path (fstat
 * against stat); those that are not are opened again, all of them, at
 * most once per interval_ms (0: now). For the launcher, before a fork. */
void cgroup_parents_recheck(int interval_ms);

/* closefrom(lowfd) but for the held parents' fds (a forked wrapper's
 * start). */
void cgroup_parents_closefrom(int lowfd);

/* Opens the groups of job jobid under `parent` that exist, creating
 * nothing: for qnoded, to empty and remove what a wrapper that died left.
 * Hierarchies without the group are skipped; cgroup_job_kill then empties
 * every group found (each may hold part of the job). -ENOENT when there
 * is none at all; -errno with err set otherwise. */
int cgroup_job_find(const char *root, enum cgroup_mode mode, const char *parent,
		    uint64_t jobid, struct cgroup_job **ret, struct error *err);

/* Writes cpus/mems, the memory limit (v1 memory.limit_in_bytes and
 * memory.memsw.limit_in_bytes where it exists; v2 memory.max and
 * memory.swap.max) and pids.max. 0 or -errno with err set. */
int cgroup_job_configure(struct cgroup_job *job, const struct cgroup_limits *lim,
			 struct error *err);

/* Denies the group's tasks every access to the character devices
 * deny[0..n) (n <= CGROUP_DEVS_MAX; 0: nothing to do), before any task
 * joins: v1 "c MAJ:MIN rwm" in devices.deny of the job's devices group
 * (the job needs CGROUP_JOB_DEVICES, else -EINVAL); v2 a device program
 * attached to its group (lib/cgroup-devices.h). An open of such a device
 * in the group then fails with EPERM. 0 or -errno with err set. */
int cgroup_job_devices_deny(struct cgroup_job *job, const struct cgroup_dev *deny, size_t n,
			    struct error *err);

/* After cgroup_job_configure: reads back what the kernel gives the job
 * (v2 cpuset.cpus.effective and cpuset.mems.effective) and compares it,
 * as sets, with lim's cpus and mems (those unset are not checked). v1:
 * nothing to read, 0 (its kernel refuses, in cgroup_job_configure, a list
 * it would not grant). A delegated v2 tree takes any list and grants
 * its intersection with the parent's (or the parent's whole set when
 * that is empty), silently. 0 when they match or the file is absent (a
 * fake tree); -EXDEV with err naming the list got and the one allocated;
 * -errno with err on a read failure. */
int cgroup_job_cpuset_check(struct cgroup_job *job, const struct cgroup_limits *lim,
			    struct error *err);

/* Opens, before the job's children fork, what cgroup_job_attach(job, 0)
 * writes (v1: each group's "tasks"), so a child joins its groups with a
 * write each and no open (issue 39); they are closed on exec and by
 * cgroup_job_remove. v1's kill reads the list through them too. Best
 * effort: what cannot be opened is opened by the attach. No effect on v2. */
void cgroup_job_attach_prepare(struct cgroup_job *job);

/* What cgroup_job_attach(job, 0) writes, for a child that calls no
 * library (gded's spawn.c): each step is "0" written at offset 0 of fd
 * when name is NULL (v1's "tasks", opened by cgroup_job_attach_prepare),
 * else the caller's pid written to name opened under fd (O_WRONLY |
 * O_TRUNC). The number of steps, or -E2BIG past max. */
struct cgroup_attach_step {
	int fd;
	const char *name;
};
ssize_t cgroup_job_attach_plan(const struct cgroup_job *job, struct cgroup_attach_step *step,
			       size_t max);

/* Moves pid into the group in every hierarchy; pid 0 is the caller, which
 * on v1 must be single-threaded (it moves itself through "tasks", which
 * avoids the RCU wait of cgroup.procs). Safe to call in a forked child: no
 * allocation. 0 or -errno. */
int cgroup_job_attach(struct cgroup_job *job, pid_t pid);

/* Kills every process in the group and waits until it is empty (v1:
 * freezer FROZEN, SIGKILL each pid, THAWED; v2: cgroup.kill, else the same
 * loop). Returns the number of processes it signalled, or -ETIME when the
 * group is still populated after timeout_ms, or -errno. */
int cgroup_job_kill(struct cgroup_job *job, int timeout_ms);

/* Freezes (frozen true) or thaws every process of the group: v1
 * freezer.state FROZEN/THAWED, v2 cgroup.freeze; waits up to timeout_ms
 * for the kernel to report the state reached. 0, -ETIME when it was not
 * reached in time, -ENOTSUP without a freezer (a v1 host without the
 * freezer hierarchy), or -errno. */
int cgroup_job_freeze(struct cgroup_job *job, bool frozen, int timeout_ms);

/* Reads the group's CPU time, peak memory and OOM kills. Counters the
 * kernel does not provide are left 0. 0 or -errno. */
int cgroup_job_usage(struct cgroup_job *job, struct cgroup_usage *ret);

/* cgroup_job_remove empties the memory group of page cache (v1:
 * memory.force_empty; v2: memory.reclaim, Linux 5.19+) before removing it
 * once the host counts this many memory cgroups, live and dying
 * (/proc/cgroups); below, the cache stays and the removed group lingers
 * as a dying one until the kernel reclaims the cache. 0: always. A new or
 * found group starts with the default. */
#define CGROUP_RECLAIM_THRESHOLD_DEFAULT 4096
void cgroup_job_reclaim_threshold(struct cgroup_job *job, unsigned threshold);

/* Removes the group from every hierarchy (see
 * cgroup_job_reclaim_threshold). Tries every hierarchy; returns 0 or the
 * first -errno (-EBUSY while populated). May be called again after a
 * failure. */
int cgroup_job_remove(struct cgroup_job *job);

/* The num_cgroups of controller in text, /proc/cgroups' format. 0, or
 * -ENOENT when the controller is not listed, -EINVAL when its line is
 * malformed. */
int cgroup_proc_count(const char *text, const char *controller, unsigned long *ret);

/* Closes the fds and frees job; does not remove the group. NULL is fine. */
void cgroup_job_free(struct cgroup_job *job);

/* cgroup v2: enables the controllers qpool's groups need (+cpuset
 * +memory required, +cpu +pids when offered) for the children of the group
 * at dir, a path. The group must hold no process (v2's no-internal-process
 * rule). 0 or -errno with err set. */
int cgroup_v2_enable(const char *dir, struct error *err);

/* cgroup v2 under systemd (lib/cgroup-delegate.c). A unit with Delegate=yes
 * is handed its group; qpool's groups go below such a group, never at the
 * root systemd manages. v2 forbids processes in a group whose controllers
 * are enabled for children (cgroups(7), "no internal processes"), and
 * systemd before 254 (no DelegateSubgroup=) starts a unit's new main
 * process in the unit's top group. So the groups are held by a unit that
 * is never restarted, qpool-cgroup.service, whose one process
 * (`qnoded --cgroup-holder`) sits in a leaf of its own group:
 *   <holder's group>/holder        the holder process
 *   <holder's group>/qpool/<node>  the node parent, its job groups below
 *   <holder's group>/wrappers      the jobs' gded processes (qnoded moves them)
 * and qnoded.service stays a plain group systemd can restart at will.
 * Without the holder, a delegated qnoded uses its own group the same way,
 * moving itself into the leaf CGROUP_SELF_LEAF (with systemd 254's
 * DelegateSubgroup=qnoded, systemd starts it there). */
#define CGROUP_SELF_LEAF "qnoded"
#define CGROUP_HOLDER_LEAF "holder"
/* Where qnoded moves the jobs' wrappers (gded) in the holder's group. */
#define CGROUP_WRAPPERS_LEAF "wrappers"
/* Where the holder writes its group ("/system.slice/qpool-cgroup.service",
 * relative to the v2 root, one line): the unit's RuntimeDirectory, removed
 * when the holder stops. Not /run/qpool: qpoold.service's RuntimeDirectory,
 * removed whenever qpoold stops. */
#define CGROUP_HOLDER_BASE_FILE "/run/qpool-cgroup/base"

/* Whether the group at dir (a path) was delegated: systemd (251 and later)
 * marks a delegated group with the xattr trusted.delegate=1. */
typedef bool (*cgroup_delegated_f)(const char *dir);

/* The live check: reads trusted.delegate (needs CAP_SYS_ADMIN). */
bool cgroup_delegated_xattr(const char *dir);

/* Where a process finds its cgroups: the live host's files, or a fake
 * tree's in tests. */
struct cgroup_host {
	const char *root;               /* the v2 mount, e.g. /sys/fs/cgroup */
	const char *proc_cgroup;        /* the caller's /proc/self/cgroup */
	const char *holder_file;        /* CGROUP_HOLDER_BASE_FILE */
	bool systemd;                   /* started by systemd (INVOCATION_ID) */
	cgroup_delegated_f delegated;   /* cgroup_delegated_xattr */
};

/* The delegated base, relative to the v2 root, read from proc_cgroup
 * (/proc/self/cgroup's "0::PATH" line). "" (the root, as without systemd)
 * when !delegated, when there is no v2 line or the path is "/". ret_leaf is
 * where qnoded must move itself first ("<base>/qnoded"), "" when it is in
 * that leaf already (then the base is the leaf's parent). 0 or -errno. */
int cgroup_delegated_base(const char *proc_cgroup, bool delegated, char *ret_base, size_t base_len,
			  char *ret_leaf, size_t leaf_len, struct error *err);

/* Moves the calling process into root/leaf, creating it. 0 or -errno. */
int cgroup_self_move(const char *root, const char *leaf, struct error *err);

/* The holder, at start, on a v2 host->root: takes its own group G from
 * host->proc_cgroup, checks host->delegated(root/G), moves itself into
 * G/holder (so G holds no process), enables the controllers in G
 * (cgroup_v2_enable) and writes "/G" to host->holder_file (atomically, by
 * rename). Returns 1 with G (no leading '/') in ret_group when it holds a
 * group; 0 when there is nothing to hold (!host->systemd, or the caller
 * sits at the root); -EPERM with err when G was not delegated (a unit
 * without Delegate=yes, or systemd before 251: nothing is changed);
 * -errno with err otherwise. Already in G/holder (a second call) is fine. */
int cgroup_holder_setup(const struct cgroup_host *host, char *ret_group, size_t len,
			struct error *err);

/* Where qnoded's node groups go, as cgroup_base_choose decides. */
enum cgroup_base_from {
	CGROUP_BASE_ROOT,       /* the v2 root: no systemd, or at the root */
	CGROUP_BASE_HOLDER,     /* the holder's group, from host->holder_file */
	CGROUP_BASE_OWN,        /* qnoded's own delegated group (no holder) */
	CGROUP_BASE_UNDELEGATED,/* qnoded's own group, not delegated: the root
	                         * is used; ret_base names the group, for a log */
};

/* qnoded, on a v2 host->root: the base for its node groups, relative to
 * the root. First the holder's: when host->holder_file exists, the group
 * it names must exist and be delegated, else -ENOENT / -EPERM / -EINVAL
 * with err (one line: qnoded must not put groups elsewhere while the
 * holder's group may hold running jobs). Else, started by systemd in a
 * delegated group, its own (ret_leaf as for cgroup_delegated_base; ""
 * for the others); else the root. 0 or -errno. */
int cgroup_base_choose(const struct cgroup_host *host, enum cgroup_base_from *ret_from,
		       char *ret_base, size_t base_len, char *ret_leaf, size_t leaf_len,
		       struct error *err);

#endif
