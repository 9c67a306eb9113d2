/* SPDX-License-Identifier: MIT */
/* cgroups for qpool: v1/v2 detection, the node's parent groups, and the
 * per-job fence, behind one small ops table with a fake for tests. */
#ifndef QPOOL_CGROUP_H
#define QPOOL_CGROUP_H

#include <stdint.h>

#include "error.h"
#include "parse.h"

enum cgroup_mode {
	CGROUP_MODE_NONE,   /* no usable hierarchy (or simulated node) */
	CGROUP_MODE_V1,     /* legacy or hybrid: one hierarchy per controller */
	CGROUP_MODE_V2,     /* unified hierarchy */
};

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
 * freezer, pids; v2: one directory, controllers enabled along the path),
 * and gives it cpus and mems (cpuset). Idempotent. */
int cgroup_node_setup(const char *root, enum cgroup_mode mode, const char *parent,
		      const struct cpumask *cpus, const char *mems, struct error *err);

/* qnoded, at a clean stop with no job left: removes `parent`, and its
 * first component (e.g. "qpool") when that is empty too. -EBUSY when a job
 * group is still inside. */
int cgroup_node_teardown(const char *root, enum cgroup_mode mode, const char *parent);

#endif
