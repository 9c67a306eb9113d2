/* SPDX-License-Identifier: MIT */
/* How qpool's programs find each other: beside their own executable. */
#ifndef QPOOL_EXE_H
#define QPOOL_EXE_H

#include <stddef.h>
#include <stdint.h>

/* The OOM score adjustment of qpool's root daemons (qpoold, qnoded, and
 * gded, which inherits qnoded's): a host-wide OOM kills jobs first. Not
 * -1000, which would exempt a daemon that leaks from the OOM killer
 * altogether and leave the host nothing to kill. */
#define EXE_DAEMON_OOM_SCORE_ADJ (-900)

/* The path of the program name in the directory of /proc/self/exe (an
 * install or a build tree alike). Returns 0, -ENAMETOOLONG or -errno. */
int exe_sibling(const char *name, char *buf, size_t len);

/* Writes adj to /proc/self/oom_score_adj: open, write, close, nothing
 * allocated, so a forked child may call it before exec (the job gets 0
 * back from gded's -900). Lowering needs CAP_SYS_RESOURCE. 0 or -errno. */
int exe_oom_score_adj_set(int adj);

/* The time slice qpool's daemons ask of the fair scheduler (qpoold,
 * qnoded, and the launcher and wrappers, which inherit qnoded's): the
 * kernel's shortest, 0.1 ms. On an EEVDF kernel (Linux 6.12+) a task
 * with a shorter slice than the running one preempts it when it wakes
 * or is forked, so a launch's five hops (qpoold, qnoded, the launcher,
 * gded, the job's child) each run at once on a node whose CPUs are all
 * busy with jobs, rather than each waiting out a running job's slice
 * (~3 ms here). The share of CPU is unchanged: weight is nice's, not
 * the slice's. */
#define EXE_DAEMON_SLICE_NS 100000

/* The kernel's struct sched_attr (include/uapi/linux/sched/types.h,
 * SCHED_ATTR_SIZE_VER0 part): glibc 2.36 has no sched_setattr. Also
 * used by raw system calls (wrappers/spawn.c). */
struct exe_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	/* cppcheck-suppress unusedStructMember ; read by the kernel, kept as got */
	int32_t sched_nice;
	/* cppcheck-suppress unusedStructMember ; read by the kernel, kept as got */
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

#define EXE_SCHED_FLAG_RESET_ON_FORK 0x01

/* Sets the calling thread's fair-scheduler slice (sched_setattr's
 * sched_runtime, nice and policy kept); 0 gives back the kernel's
 * default, which the job's child does before exec. Nothing allocated:
 * a forked child may call it. Does nothing under a real-time policy.
 * A kernel before 6.12 takes and ignores it. 0 or -errno. */
int exe_sched_slice_set(uint64_t ns);

#endif
