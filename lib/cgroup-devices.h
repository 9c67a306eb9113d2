/* SPDX-License-Identifier: MIT */
/* The device fence of a job's group (docs/GPUS.md "The fence"): v1's
 * devices.deny lines and v2's BPF_PROG_TYPE_CGROUP_DEVICE program. */
#ifndef QPOOL_CGROUP_DEVICES_H
#define QPOOL_CGROUP_DEVICES_H

#include <linux/bpf.h>
#include <stddef.h>

#include "cgroup.h"
#include "error.h"

/* Instructions of the v2 program for at most CGROUP_DEVS_MAX denied
 * devices: 5 to read the context and check the type, 4 per device, 2 to
 * allow. */
#define CGROUP_DEVS_PROG_MAX (5 + 4 * CGROUP_DEVS_MAX + 2)

/* Builds, into prog (room for max instructions), the program that
 * returns 0 (deny) for any access to a character device numbered as one
 * of deny[0..n) and 1 (allow) for every other access: what runc's and
 * crun's device programs read, struct bpf_cgroup_dev_ctx's access_type
 * (type in its low 16 bits), major and minor. Returns the number of
 * instructions, -E2BIG when n > CGROUP_DEVS_MAX or max is too small,
 * -EINVAL for a number past CGROUP_DEV_MAJOR_MAX/MINOR_MAX. */
int cgroup_devs_prog_build(const struct cgroup_dev *deny, size_t n, struct bpf_insn *prog,
			   size_t max);

/* v1: writes "c MAJ:MIN rwm" to devices.deny of the group at dirfd for
 * each of deny[0..n). 0 or -errno with err naming the device. */
int cgroup_devs_v1_deny(int dirfd, const struct cgroup_dev *deny, size_t n, struct error *err);

/* v2: loads the program of cgroup_devs_prog_build and attaches it to the
 * group at dirfd (any fd of the group's directory, O_PATH included) with
 * BPF_F_ALLOW_MULTI, so the programs above it still apply; the program's
 * fd is closed, and the program goes with the group. 0 or -errno with
 * err (the verifier's first complaint when it refused the program). */
int cgroup_devs_v2_attach(int dirfd, const struct cgroup_dev *deny, size_t n, struct error *err);

#endif
