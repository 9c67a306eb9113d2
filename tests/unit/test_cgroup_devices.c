/* SPDX-License-Identifier: MIT */
/* The device fence: v1's devices group on a fake tree, v2's program in an interpreter and in the kernel. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup-devices.h"
#include "unit.h"

static bool exists(const char *dir, const char *rel)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return stat(path, &st) == 0;
}

static const char *slurp(const char *dir, const char *rel)
{
	static char buf[512];
	char path[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "r");
	if (!f)
		return "<missing>";
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void unlink_rel(const char *dir, const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	unlink(path);
}

/* A v1 tree as cgroup_node_setup leaves it, with devices mounted or not. */
static char *v1_tree(bool devices)
{
	static const char *const hiers[] = { "cpuacct", "memory", "freezer", "pids" };
	char *d = unit_tmpdir(), rel[256];

	unit_write_file(d, "cpuset/cpuset.cpus", "0-7\n");
	unit_write_file(d, "cpuset/cpuset.mems", "0\n");
	unit_write_file(d, "cpuset/qpool/cpuset.cpus", "");
	unit_write_file(d, "cpuset/qpool/cpuset.mems", "");
	unit_write_file(d, "cpuset/qpool/n1/cpuset.cpus", "0-7\n");
	unit_write_file(d, "cpuset/qpool/n1/cpuset.mems", "0\n");
	for (size_t i = 0; i < 4; i++) {
		snprintf(rel, sizeof(rel), "%s/qpool/n1/cgroup.procs", hiers[i]);
		unit_write_file(d, rel, "");
	}
	if (devices)
		unit_write_file(d, "devices/devices.list", "a *:* rwm\n");
	return d;
}

static const struct cgroup_dev two[] = { { 195, 0 }, { 195, 2 } };

static void test_v1_devices(void)
{
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree(true);

	/* Node set-up makes nothing in devices: a node without GPUs pays
	 * nothing, nor does a job without a device fence. */
	cpumask_parse("0-7", &cpus);
	CU_ASSERT_EQUAL_FATAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT(!exists(d, "devices/qpool"));
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 1, 0, &job, &err), 0);
	/* What a group is kept with. */
	unit_write_file(d, "cpuacct/qpool/n1/job.1/cpuacct.usage", "5\n");
	unit_write_file(d, "freezer/qpool/n1/job.1/freezer.state", "THAWED\n");
	CU_ASSERT(!exists(d, "devices/qpool"));
	CU_ASSERT_EQUAL(cgroup_job_devices_deny(job, two, 2, &err), -EINVAL);
	CU_ASSERT_EQUAL(cgroup_job_devices_deny(job, two, 0, &err), 0);
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	CU_ASSERT(exists(d, "cpuset/qpool/n1/spare.0"));

	/* A fenced job: its group in devices (the node's parent made), the
	 * rules written there, one per write. */
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 2, CGROUP_JOB_DEVICES,
						&job, &err), 0);
	CU_ASSERT(exists(d, "devices/qpool/n1/job.2"));
	CU_ASSERT(exists(d, "cpuset/qpool/n1/job.2"));        /* the spare, taken */
	CU_ASSERT_EQUAL(cgroup_job_devices_deny(job, two, 2, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "job.2 devices.deny"));
	unit_write_file(d, "devices/qpool/n1/job.2/devices.deny", "");
	CU_ASSERT_EQUAL(cgroup_job_devices_deny(job, two, 2, &err), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "devices/qpool/n1/job.2/devices.deny"), "c 195:0 rwmc 195:2 rwm");
	/* At its end the group goes: never kept, so the next job cannot
	 * inherit its rules. */
	unlink_rel(d, "devices/qpool/n1/job.2/devices.deny");
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	CU_ASSERT(!exists(d, "devices/qpool/n1/job.2"));
	CU_ASSERT(!exists(d, "devices/qpool/n1/spare.0"));
	CU_ASSERT(exists(d, "cpuset/qpool/n1/spare.0"));
	/* A job whose wrapper died is found in devices too, and removed. */
	{
		char path[4096];

		snprintf(path, sizeof(path), "%s/devices/qpool/n1/job.3", d);
		CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
		CU_ASSERT_EQUAL_FATAL(cgroup_job_find(d, CGROUP_MODE_V1, "qpool/n1", 3, &job, &err), 0);
		CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
		cgroup_job_free(job);
		CU_ASSERT(!exists(d, "devices/qpool/n1/job.3"));
	}
	/* The node's teardown takes the devices parent with the others. */
	unlink_rel(d, "cpuacct/qpool/n1/spare.0/cpuacct.usage");
	unlink_rel(d, "freezer/qpool/n1/spare.0/freezer.state");
	unlink_rel(d, "cpuset/qpool/n1/cpuset.cpus");
	unlink_rel(d, "cpuset/qpool/n1/cpuset.mems");
	for (const char *const *h = (const char *const[]){ "cpuacct", "memory", "freezer", "pids", NULL };
	     *h; h++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "%s/qpool/n1/cgroup.procs", *h);
		unlink_rel(d, rel);
	}
	CU_ASSERT_EQUAL(cgroup_node_teardown(d, CGROUP_MODE_V1, "qpool/n1"), 0);
	CU_ASSERT(!exists(d, "devices/qpool"));
	unit_tmpdir_remove(d);

	/* A fence asked for where devices is not mounted: refused, nothing left. */
	d = v1_tree(false);
	CU_ASSERT_EQUAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 4, CGROUP_JOB_DEVICES, &job,
					  &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "devices: not mounted"));
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/job.4"));
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.4"));
	unit_tmpdir_remove(d);
}

/* Runs the subset of eBPF the builder emits on ctx; -1 on anything else
 * (an unknown instruction, a jump out of the program, no exit). */
static int prog_run(const struct bpf_insn *prog, int n, const struct bpf_cgroup_dev_ctx *ctx)
{
	uint64_t r[11] = { 0 };
	int steps = 0;

	for (int pc = 0; pc >= 0 && pc < n && steps < 10000; pc++, steps++) {
		const struct bpf_insn *i = &prog[pc];

		switch (i->code) {
		case BPF_LDX | BPF_W | BPF_MEM:
			if (i->src_reg != BPF_REG_1 || i->off < 0 || i->off > 8 || i->off % 4)
				return -1;
			r[i->dst_reg] = ((const uint32_t *)ctx)[i->off / 4];
			break;
		case BPF_ALU64 | BPF_AND | BPF_K:
			r[i->dst_reg] &= (uint64_t)(int64_t)i->imm;
			break;
		case BPF_ALU64 | BPF_MOV | BPF_K:
			r[i->dst_reg] = (uint64_t)(int64_t)i->imm;
			break;
		case BPF_JMP | BPF_JNE | BPF_K:
			if (r[i->dst_reg] != (uint64_t)(int64_t)i->imm)
				pc += i->off;
			break;
		case BPF_JMP | BPF_EXIT:
			return (int)r[0];
		default:
			return -1;
		}
	}
	return -1;
}

static int verdict(const struct bpf_insn *prog, int n, unsigned type, unsigned access,
		   unsigned major, unsigned minor)
{
	struct bpf_cgroup_dev_ctx ctx = { .access_type = access << 16 | type, .major = major,
					  .minor = minor };

	return prog_run(prog, n, &ctx);
}

static void test_prog_build(void)
{
	static const struct cgroup_dev deny[] = { { 195, 0 }, { 195, 2 }, { 226, 128 } };
	struct bpf_insn prog[CGROUP_DEVS_PROG_MAX];
	struct cgroup_dev many[CGROUP_DEVS_MAX + 1];
	int n;

	n = cgroup_devs_prog_build(deny, 3, prog, CGROUP_DEVS_PROG_MAX);
	CU_ASSERT_EQUAL_FATAL(n, 5 + 4 * 3 + 2);
	/* Each denied number, for every access: 0. */
	for (size_t i = 0; i < 3; i++)
		for (unsigned acc = 1; acc < 8; acc++)
			CU_ASSERT_EQUAL(verdict(prog, n, BPF_DEVCG_DEV_CHAR, acc, deny[i].major,
						deny[i].minor), 0);
	/* Everything else: 1. Its own GPU, the same major or minor of
	 * another, the same numbers as a block device, /dev/null. */
	CU_ASSERT_EQUAL(verdict(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 195, 1), 1);
	CU_ASSERT_EQUAL(verdict(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 195, 128), 1);
	CU_ASSERT_EQUAL(verdict(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 226, 0), 1);
	CU_ASSERT_EQUAL(verdict(prog, n, BPF_DEVCG_DEV_BLOCK, BPF_DEVCG_ACC_READ, 195, 0), 1);
	CU_ASSERT_EQUAL(verdict(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_WRITE, 1, 3), 1);
	/* The high half is the access, not the type. */
	CU_ASSERT_EQUAL(verdict(prog, n, BPF_DEVCG_DEV_CHAR, 0xffff, 226, 128), 0);
	/* Nothing denied: allows all. */
	n = cgroup_devs_prog_build(deny, 0, prog, CGROUP_DEVS_PROG_MAX);
	CU_ASSERT_EQUAL(verdict(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 195, 0), 1);
	/* The bounds. */
	for (size_t i = 0; i <= CGROUP_DEVS_MAX; i++)
		many[i] = (struct cgroup_dev){ 195, (unsigned)i };
	n = cgroup_devs_prog_build(many, CGROUP_DEVS_MAX, prog, CGROUP_DEVS_PROG_MAX);
	CU_ASSERT_EQUAL(n, CGROUP_DEVS_PROG_MAX);
	CU_ASSERT_EQUAL(verdict(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 195, 63), 0);
	CU_ASSERT_EQUAL(verdict(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 195, 64), 1);
	CU_ASSERT_EQUAL(cgroup_devs_prog_build(many, CGROUP_DEVS_MAX + 1, prog, CGROUP_DEVS_PROG_MAX),
			-E2BIG);
	CU_ASSERT_EQUAL(cgroup_devs_prog_build(deny, 3, prog, 10), -E2BIG);
	many[0] = (struct cgroup_dev){ 4096, 0 };
	CU_ASSERT_EQUAL(cgroup_devs_prog_build(many, 1, prog, CGROUP_DEVS_PROG_MAX), -EINVAL);
	many[0] = (struct cgroup_dev){ 195, 1u << 20 };
	CU_ASSERT_EQUAL(cgroup_devs_prog_build(many, 1, prog, CGROUP_DEVS_PROG_MAX), -EINVAL);
}

/* The cgroup2 mount: /sys/fs/cgroup on a v2 host, its "unified" mount on
 * a hybrid one; NULL when neither. */
static const char *v2_mount(void)
{
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
		return "/sys/fs/cgroup";
	if (access("/sys/fs/cgroup/unified/cgroup.procs", F_OK) == 0)
		return "/sys/fs/cgroup/unified";
	return NULL;
}

/* The program in the kernel (as root, where cgroup2 is mounted): a child
 * in the group opens two device files of numbers no driver serves: the
 * allowed one fails with ENXIO (the fence let it through), the denied
 * one with EPERM. The kernel runs cgroup2's device programs for every
 * open, on a hybrid host too. */
static void test_v2_kernel(void)
{
	static const struct cgroup_dev deny[] = { { 195, 1 } };
	struct error err = { { 0 } };
	const char *mnt = v2_mount();
	char *d, grp[256], own[4096], other[4096], procs[300];
	int fd, status, r;
	pid_t pid;

	if (geteuid() != 0 || !mnt) {
		fprintf(stderr, "(v2 device program: not root or no cgroup2 mount, not run) ");
		return;
	}
	d = unit_tmpdir();
	snprintf(own, sizeof(own), "%s/nvidia0", d);
	snprintf(other, sizeof(other), "%s/nvidia1", d);
	CU_ASSERT_EQUAL_FATAL(mknod(own, S_IFCHR | 0666, makedev(195, 0)), 0);
	CU_ASSERT_EQUAL_FATAL(mknod(other, S_IFCHR | 0666, makedev(195, 1)), 0);
	snprintf(grp, sizeof(grp), "%s/qpool-unit-devices.%d", mnt, (int)getpid());
	CU_ASSERT_EQUAL_FATAL(mkdir(grp, 0755), 0);
	fd = open(grp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CU_ASSERT_FATAL(fd >= 0);
	r = cgroup_devs_v2_attach(fd, deny, 1, &err);
	if (r < 0)
		fprintf(stderr, "%s\n", err.text);
	CU_ASSERT_EQUAL(r, 0);
	close(fd);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", grp);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		FILE *f = fopen(procs, "w");
		int a, b;

		if (!f || fprintf(f, "0\n") < 0 || fclose(f) != 0)
			_exit(100);
		a = open(own, O_RDONLY) < 0 ? errno : 0;
		b = open(other, O_RDONLY) < 0 ? errno : 0;
		_exit((a == ENXIO ? 1 : 0) | (b == EPERM ? 2 : 0));
	}
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status));
	CU_ASSERT_EQUAL(WEXITSTATUS(status) & 1, 1);   /* its own: ENXIO */
	CU_ASSERT_EQUAL(WEXITSTATUS(status) & 2, 2);   /* the other: EPERM */
	/* The program goes with the group. */
	CU_ASSERT_EQUAL(rmdir(grp), 0);
	unit_tmpdir_remove(d);
}

static const struct unit_test cgroup_devices_tests[] = {
	{ "v1: a devices group for a fenced job only, never kept", test_v1_devices },
	{ "v2: the device program denies exactly the given numbers", test_prog_build },
	{ "v2: the device program in the kernel: EPERM denied, ENXIO allowed", test_v2_kernel },
	{ NULL, NULL },
};

UNIT_SUITE(cgroup_devices, cgroup_devices_tests);
