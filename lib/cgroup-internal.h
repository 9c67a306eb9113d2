/* SPDX-License-Identifier: MIT */
/* What cgroup.c (the public calls), cgroup-v1.c and cgroup-v2.c (one
 * struct cgroup_ops each, as crun keeps one file per cgroup manager) and
 * cgroup-util.c (plain cgroupfs I/O on directory fds) share. Not for use
 * outside lib/cgroup*.c. */
#ifndef QPOOL_CGROUP_INTERNAL_H
#define QPOOL_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"

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

extern const char *const v1_names[V1_N];
extern const bool v1_required[V1_N];

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
 * the node's parent, K < V1_SPARES, in every hierarchy but devices
 * (docs/ARCHITECTURE.md, "Groups kept for the next job"). Creating and
 * removing a v1 group costs the machine far more than the two syscalls
 * show (the kernel frees it in workers after an RCU grace period):
 * bench/floor, a fork and exec of `true` with no scheduler, runs ~1,250
 * jobs/s on 2 CPUs with all six groups made and removed per job, ~1,600
 * with the five kept. Memory is kept only when the job left at most
 * V1_MEMORY_KEEP_MAX charged to it and no OOM kill (its count cannot be
 * reset): page cache a job leaves stays charged to its group, and would
 * count in the next job's peak. A job takes spare K by renaming it in
 * cpuset first (the rename is the claim: one taker wins), then in the
 * others; a job gives K back in the others first and in cpuset last, so
 * a cpuset spare is whole. Whatever a crash leaves half done is made
 * good by mkdir and rmdir. */
#define V1_SPARES 8
#define V1_SPARE_FMT "spare.%d"
/* What a kept memory group may still have charged, which the next job's
 * peak then includes: each CPU's charge batch (64 pages), the kernel's
 * objects of a trivial job, a small output's page cache (a `true` job
 * leaves ~350 KiB here). A group with more is removed. */
#define V1_MEMORY_KEEP_MAX (1024 * 1024)
_Static_assert(CGROUP_MEMORY_KEPT_MIN >= 16 * V1_MEMORY_KEEP_MAX,
	       "a limit a kept memory group is taken under holds what it may have kept");

#define V2_CONTROLLERS "+cpuset +cpu +memory +pids"
#define JOB_NAME_MAX 32

struct cgroup_job {
	const struct cgroup_ops *ops;
	char name[JOB_NAME_MAX];   /* "job.<id>" */
	unsigned flags;            /* enum cgroup_job_flags */
	int parent_fd[V1_N];       /* <root>/<h>/<parent>, O_PATH; -1: not used */
	bool parent_held[V1_N];    /* parent_fd is the process's held one
	                            * (cgroup_parents_hold): not ours to close */
	bool no_held;              /* open the parents by path (a held one was gone) */
	int fd[V1_N];              /* the job group, O_PATH; v2 uses [0] only */
	int tasks_fd[V1_N];        /* v1: its "tasks", O_RDWR, opened before the
	                            * job's children fork (cgroup_job_attach_prepare),
	                            * read empty at the kill; -1: none */
	int usage_fd;              /* v1: cpuacct.usage, O_RDWR, read at the end and
	                            * reset to 0 on the same fd for the spare; -1 */
	bool shared[V1_N];         /* fd is the shared realtime group: not ours to remove */
	bool found;                /* cgroup_job_find: opened what exists, created nothing */
	int spare;                 /* v1: the spare set it took, -1 none */
	bool mem_kept;             /* v1: the memory group is a spare, with the limits
	                            * of the job that left it (v1_memory_limit) */
	int oom_kill;              /* v1: 1 if cgroup_job_usage read an OOM kill in
	                            * memory.oom_control, 0 if none, -1 not read */
	unsigned reclaim_threshold; /* reclaim page cache before rmdir from this many memcgs */
	int depth;                 /* v2: components in <parent> (the groups that grant protection) */
	bool protected;            /* v2: memory.min written: its ancestors' sums count it */
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
	int (*job_freeze)(struct cgroup_job *job, bool frozen, int timeout_ms);
	int (*job_usage)(struct cgroup_job *job, struct cgroup_usage *ret);
	int (*job_remove)(struct cgroup_job *job);
};

extern const struct cgroup_ops cgroup_v1_ops;
extern const struct cgroup_ops cgroup_v2_ops;

/* cgroup-util.c */
typedef int (*cg_level_f)(int fd, int dirfd, bool last, void *ctx);
int cg_file_write(int dirfd, const char *file, const char *val);
ssize_t cg_file_read(int dirfd, const char *file, char *buf, size_t len);
int cg_parse_u64(const char *s, uint64_t *ret);
int cg_file_read_s64(int dirfd, const char *file, int64_t *ret);
int cg_file_read_u64(int dirfd, const char *file, uint64_t *ret);
int cg_keyed_u64(const char *text, const char *key, uint64_t *ret);
int cg_file_read_keyed(int dirfd, const char *file, const char *key, uint64_t *ret);
void cg_strip_newline(char *s);
int cg_dir_open(int dirfd, const char *path);
bool cg_is_dir(const char *root, const char *name);
void cg_fd_close(int *fd);
bool cg_same_dir(int a, int b);
size_t cg_first_component(const char *parent, size_t *ret_skip);
int cg_procs_signal(int dirfd, int sig);
void cg_sleep_ms(int ms);
int cg_procs_drain(int dirfd, int timeout_ms);
int cg_path_create(int rootfd, const char *parent, cg_level_f level, void *ctx,
		       char *ret_failed, size_t failed_len);
int cg_job_dir_make(const struct cgroup_job *job, int dirfd, const char *name);
int cg_path_remove(const char *root, const char *parent);
int cg_dir_write(const char *dir, const char *file, const char *val);
bool cg_memcgs_at_threshold(const struct cgroup_job *job);

/* What cg_job_dir_make's -EEXIST means, for err. */
#define JOB_EXISTS_TEXT "exists and holds processes of another run or another pool on this host; refused"

/* cgroup.c: the node's parent held by the process (cgroup_parents_hold)
 * for hierarchy h (v2: 0) when job's root, mode and parent are the held
 * ones: its fd (marked held in job), CG_HELD_SKIP when h is not used
 * there (not mounted; v1 cpu co-mounted with cpuacct), CG_HELD_NONE
 * when nothing is held for it (the caller opens it by path). */
#define CG_HELD_SKIP (-2)
#define CG_HELD_NONE (-3)
int cg_parent_held(struct cgroup_job *job, const char *root, const char *parent, int h);
/* /proc/cgroups held open with them (read with pread at 0), or -1. */
int cg_held_proc_cgroups(void);

/* cgroup-v1.c, for the public calls */
int v1_hier_open(const char *root, enum v1_hier h, char *ret_path, size_t len);

#endif
