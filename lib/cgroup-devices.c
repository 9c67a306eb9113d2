/* SPDX-License-Identifier: MIT */
/* The device fence of a job's group: v1 devices.deny, v2 a cgroup device BPF program. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup-devices.h"

/*
 * v2 has no devices controller: the kernel's only device fence there is a
 * BPF_PROG_TYPE_CGROUP_DEVICE program attached to the group (Linux 4.15),
 * run on every open and mknod of a device by a task of the group or of a
 * group below; the access is refused (EPERM) unless every program attached
 * along the path returns 1. runc and crun build theirs from raw
 * instructions, as this file does, so qpool needs no libbpf, no clang and
 * no object file: the program is a few dozen instructions.
 */

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off,
				  .imm = imm };
}

/* r<dst> = *(u32 *)(r1 + off) */
static struct bpf_insn ld_ctx(uint8_t dst, int16_t off)
{
	return insn(BPF_LDX | BPF_W | BPF_MEM, dst, BPF_REG_1, off, 0);
}

/* if r<dst> != imm goto pc + 1 + off */
static struct bpf_insn jne(uint8_t dst, int32_t imm, int16_t off)
{
	return insn(BPF_JMP | BPF_JNE | BPF_K, dst, 0, off, imm);
}

static struct bpf_insn ret(int32_t value, struct bpf_insn *exit_insn)
{
	*exit_insn = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, value);
}

int cgroup_devs_prog_build(const struct cgroup_dev *deny, size_t n, struct bpf_insn *prog,
			   size_t max)
{
	size_t pc = 0;

	if (n > CGROUP_DEVS_MAX || max < 5 + 4 * n + 2)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		if (deny[i].major > CGROUP_DEV_MAJOR_MAX || deny[i].minor > CGROUP_DEV_MINOR_MAX)
			return -EINVAL;
	/* r2 = access_type & 0xffff (the type; the access is in the high
	 * half), r3 = major, r4 = minor. */
	prog[pc++] = ld_ctx(BPF_REG_2, offsetof(struct bpf_cgroup_dev_ctx, access_type));
	prog[pc++] = insn(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xffff);
	prog[pc++] = ld_ctx(BPF_REG_3, offsetof(struct bpf_cgroup_dev_ctx, major));
	prog[pc++] = ld_ctx(BPF_REG_4, offsetof(struct bpf_cgroup_dev_ctx, minor));
	/* A block device: none of ours, allowed. */
	prog[pc++] = jne(BPF_REG_2, BPF_DEVCG_DEV_CHAR, (int16_t)(4 * n));
	for (size_t i = 0; i < n; i++) {
		prog[pc++] = jne(BPF_REG_3, (int32_t)deny[i].major, 3);
		prog[pc++] = jne(BPF_REG_4, (int32_t)deny[i].minor, 2);
		prog[pc] = ret(0, &prog[pc + 1]);
		pc += 2;
	}
	prog[pc] = ret(1, &prog[pc + 1]);
	pc += 2;
	return (int)pc;
}

int cgroup_devs_v1_deny(int dirfd, const struct cgroup_dev *deny, size_t n, struct error *err)
{
	char line[48];
	int fd, r = 0;

	fd = openat(dirfd, "devices.deny", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, -errno, "devices.deny: %m");
	/* One rule per write: the kernel parses one per write(2). */
	for (size_t i = 0; i < n && r == 0; i++) {
		int len = snprintf(line, sizeof(line), "c %u:%u rwm", deny[i].major, deny[i].minor);

		if (write(fd, line, (size_t)len) != len)
			r = error_set(err, -errno, "devices.deny \"%s\": %m", line);
	}
	close(fd);
	return r;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int cgroup_devs_v2_attach(int dirfd, const struct cgroup_dev *deny, size_t n, struct error *err)
{
	struct bpf_insn prog[CGROUP_DEVS_PROG_MAX];
	union bpf_attr attr;
	char log[1024];
	int len, prog_fd = -1, cg_fd = -1, r;

	len = cgroup_devs_prog_build(deny, n, prog, sizeof(prog) / sizeof(prog[0]));
	if (len < 0)
		return error_set(err, len, "device program: %s", strerror(-len));
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	attr.insns = (uint64_t)(uintptr_t)prog;
	attr.insn_cnt = (uint32_t)len;
	attr.license = (uint64_t)(uintptr_t)"MIT";
	prog_fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (prog_fd < 0) {
		r = -errno;
		/* Again with the verifier's log, for the one line. */
		log[0] = '\0';
		attr.log_buf = (uint64_t)(uintptr_t)log;
		attr.log_size = sizeof(log);
		attr.log_level = 1;
		prog_fd = sys_bpf(BPF_PROG_LOAD, &attr);
		if (prog_fd >= 0)
			close(prog_fd);
		log[strcspn(log, "\n")] = '\0';
		return error_set(err, r, "bpf(BPF_PROG_LOAD) of the device program: %s%s%s",
				 strerror(-r), log[0] ? ": " : "", log);
	}
	/* The attach wants a descriptor of the directory itself; an O_PATH
	 * one is refused by older kernels. */
	cg_fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0) {
		r = error_set(err, -errno, "cgroup directory: %m");
		goto done;
	}
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cg_fd;
	attr.attach_bpf_fd = (uint32_t)prog_fd;
	attr.attach_type = BPF_CGROUP_DEVICE;
	attr.attach_flags = BPF_F_ALLOW_MULTI;
	r = sys_bpf(BPF_PROG_ATTACH, &attr) < 0 ? -errno : 0;
	if (r < 0)
		error_set(err, r, "bpf(BPF_PROG_ATTACH) of the device program: %s", strerror(-r));
done:
	if (cg_fd >= 0)
		close(cg_fd);
	close(prog_fd);
	return r;
}
