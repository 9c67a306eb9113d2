/* SPDX-License-Identifier: MIT */
/* lib/cgroup on fake v1/v2 trees: detection, node set-up and the per-job fence. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "unit.h"

static const char *const v1_hiers[] = { "cpuset", "cpuacct", "memory", "freezer", "pids" };

/* Contents of dir/rel with the trailing newline cut, "<missing>" if absent. */
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
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static bool exists(const char *dir, const char *rel)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return stat(path, &st) == 0;
}

static void rm(const char *dir, const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	CU_ASSERT_EQUAL(unlink(path), 0);
}

static void mkdir_rel(const char *dir, const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	CU_ASSERT(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static void test_mode_names(void)
{
	enum cgroup_mode m;

	CU_ASSERT_STRING_EQUAL(cgroup_mode_name(CGROUP_MODE_V1), "v1");
	CU_ASSERT_STRING_EQUAL(cgroup_mode_name(CGROUP_MODE_V2), "v2");
	CU_ASSERT_STRING_EQUAL(cgroup_mode_name(CGROUP_MODE_NONE), "none");
	CU_ASSERT(cgroup_mode_parse("v2", &m) == 0 && m == CGROUP_MODE_V2);
	CU_ASSERT(cgroup_mode_parse("none", &m) == 0 && m == CGROUP_MODE_NONE);
	CU_ASSERT_EQUAL(cgroup_mode_parse("v3", &m), -EINVAL);
	CU_ASSERT_EQUAL(cgroup_mode_parse(NULL, &m), -EINVAL);
}

static enum cgroup_mode detect(const char *root)
{
	enum cgroup_mode m = 99;

	CU_ASSERT_EQUAL(cgroup_detect(root, &m), 0);
	return m;
}

static void test_detect(void)
{
	char *d;

	d = unit_tmpdir();
	CU_ASSERT_EQUAL(detect(d), CGROUP_MODE_NONE);          /* empty */
	mkdir_rel(d, "memory");
	CU_ASSERT_EQUAL(detect(d), CGROUP_MODE_NONE);          /* memory alone */
	mkdir_rel(d, "cpuacct");
	CU_ASSERT_EQUAL(detect(d), CGROUP_MODE_V1);
	unit_tmpdir_remove(d);

	d = unit_tmpdir();                                      /* co-mounted */
	mkdir_rel(d, "cpu,cpuacct");
	mkdir_rel(d, "memory");
	CU_ASSERT_EQUAL(detect(d), CGROUP_MODE_V1);
	unit_tmpdir_remove(d);

	d = unit_tmpdir();                                      /* hybrid */
	mkdir_rel(d, "cpuacct");
	mkdir_rel(d, "memory");
	unit_write_file(d, "unified/cgroup.controllers", "\n");
	CU_ASSERT_EQUAL(detect(d), CGROUP_MODE_V1);
	unit_tmpdir_remove(d);

	d = unit_tmpdir();                                      /* unified */
	unit_write_file(d, "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma\n");
	CU_ASSERT_EQUAL(detect(d), CGROUP_MODE_V2);
	unit_write_file(d, "cgroup.controllers", "cpu io memoryx pids\n");
	CU_ASSERT_EQUAL(detect(d), CGROUP_MODE_NONE);          /* no cpuset, no memory */
	unit_write_file(d, "cgroup.controllers", "cpuset io pids\n");
	CU_ASSERT_EQUAL(detect(d), CGROUP_MODE_NONE);
	unit_tmpdir_remove(d);
}

/* A fake v1 root with the files the kernel provides in the root and in
 * qpool/n1 (mkdir on cgroupfs makes them; here the test must). */
static char *v1_tree(void)
{
	char *d = unit_tmpdir(), rel[256];

	unit_write_file(d, "cpuset/cpuset.cpus", "0-7\n");
	unit_write_file(d, "cpuset/cpuset.mems", "0-1\n");
	for (const char *const *n = (const char *const[]){ "qpool", "qpool/n1", NULL }; *n; n++) {
		snprintf(rel, sizeof(rel), "cpuset/%s/cpuset.cpus", *n);
		unit_write_file(d, rel, "");
		snprintf(rel, sizeof(rel), "cpuset/%s/cpuset.mems", *n);
		unit_write_file(d, rel, "");
	}
	for (size_t i = 1; i < 5; i++) {
		snprintf(rel, sizeof(rel), "%s/qpool/n1/cgroup.procs", v1_hiers[i]);
		unit_write_file(d, rel, "");
	}
	return d;
}

static void test_v1_node(void)
{
	struct error err = { { 0 } };
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree();
	int r;

	CU_ASSERT_EQUAL(cpumask_parse("2-3", &cpus), 0);
	r = cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "1", &err);
	CU_ASSERT_EQUAL(r, 0);
	if (r)
		fprintf(stderr, "%s\n", err.text);
	/* qpool/ is shared by the nodes of this host: the root's whole set. */
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpuset/qpool/cpuset.cpus"), "0-7");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpuset/qpool/cpuset.mems"), "0-1");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpuset/qpool/n1/cpuset.cpus"), "2-3");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpuset/qpool/n1/cpuset.mems"), "1");
	for (size_t i = 0; i < 5; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "%s/qpool/n1", v1_hiers[i]);
		CU_ASSERT(exists(d, rel));
	}
	/* Idempotent. */
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "1", &err), 0);

	/* A parent holding anything is busy and stays. */
	CU_ASSERT_EQUAL(cgroup_node_teardown(d, CGROUP_MODE_V1, "qpool/n1"), -EBUSY);
	CU_ASSERT(exists(d, "cpuset/qpool/n1"));
	rm(d, "cpuset/qpool/n1/cpuset.cpus");
	rm(d, "cpuset/qpool/n1/cpuset.mems");
	for (size_t i = 1; i < 5; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "%s/qpool/n1/cgroup.procs", v1_hiers[i]);
		rm(d, rel);
	}
	CU_ASSERT_EQUAL(cgroup_node_teardown(d, CGROUP_MODE_V1, "qpool/n1"), 0);
	CU_ASSERT(!exists(d, "cpuset/qpool/n1"));
	CU_ASSERT(!exists(d, "memory/qpool"));                 /* empty: removed */
	CU_ASSERT(exists(d, "cpuset/qpool"));                  /* not empty: kept */
	unit_tmpdir_remove(d);
}

static void v1_job_files(const char *d, const char *job, bool memsw)
{
	static const char *const files[][2] = {
		{ "cpuset", "cpuset.cpus" }, { "cpuset", "cpuset.mems" },
		{ "cpuacct", "cpuacct.usage" }, { "memory", "memory.limit_in_bytes" },
		{ "memory", "memory.max_usage_in_bytes" }, { "memory", "memory.oom_control" },
		{ "memory", "memory.force_empty" }, { "freezer", "freezer.state" },
		{ "pids", "pids.max" },
	};
	char rel[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(rel, sizeof(rel), "%s/qpool/n1/%s/%s", files[i][0], job, files[i][1]);
		unit_write_file(d, rel, "");
	}
	for (size_t i = 0; i < 5; i++) {
		snprintf(rel, sizeof(rel), "%s/qpool/n1/%s/cgroup.procs", v1_hiers[i], job);
		unit_write_file(d, rel, "");
		snprintf(rel, sizeof(rel), "%s/qpool/n1/%s/tasks", v1_hiers[i], job);
		unit_write_file(d, rel, "");
	}
	if (memsw) {
		snprintf(rel, sizeof(rel), "memory/qpool/n1/%s/memory.memsw.limit_in_bytes", job);
		unit_write_file(d, rel, "");
	}
}

/* The files of job's group in hierarchy v1_hiers[h], gone as a real
 * group's are once it is empty. */
static void v1_hier_files_remove(const char *d, size_t h, const char *job)
{
	char rel[256];
	const char *names[] = { "cpuset.cpus", "cpuset.mems", "cpuacct.usage",
				"memory.limit_in_bytes", "memory.memsw.limit_in_bytes",
				"memory.max_usage_in_bytes", "memory.oom_control",
				"memory.usage_in_bytes", "memory.force_empty", "freezer.state", "pids.max", "cgroup.procs", "tasks" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(rel, sizeof(rel), "%s/qpool/n1/%s/%s", v1_hiers[h], job, names[i]);
		if (exists(d, rel))
			rm(d, rel);
	}
}

static void v1_job_files_remove(const char *d, const char *job)
{
	for (size_t h = 0; h < 5; h++)
		v1_hier_files_remove(d, h, job);
}

static void test_v1_job(void)
{
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cgroup_usage u;
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree(), pid[24];
	int r;

	cpumask_parse("2-3", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	r = cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 42, 0, &job, &err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	for (size_t i = 0; i < 5; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "%s/qpool/n1/job.42", v1_hiers[i]);
		CU_ASSERT(exists(d, rel));
	}
	v1_job_files(d, "job.42", true);

	/* cpus from the job; mems unset: copied from the parent, since an
	 * empty v1 cpuset takes no task. */
	r = cgroup_job_configure(job, &(struct cgroup_limits){ .cpus = "3", .mem = 1ULL << 30 },
				 &err);
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpuset/qpool/n1/job.42/cpuset.cpus"), "3");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpuset/qpool/n1/job.42/cpuset.mems"), "0");
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.42/memory.limit_in_bytes"),
			       "1073741824");
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.42/memory.memsw.limit_in_bytes"),
			       "1073741824");
	CU_ASSERT_STRING_EQUAL(slurp(d, "pids/qpool/n1/job.42/pids.max"), "max");
	r = cgroup_job_configure(job, &(struct cgroup_limits){ .cpus = "", .mems = "0",
							       .pids_max = 4096 }, &err);
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpuset/qpool/n1/job.42/cpuset.cpus"), "2-3");
	CU_ASSERT_STRING_EQUAL(slurp(d, "pids/qpool/n1/job.42/pids.max"), "4096");

	/* The caller moves itself through "tasks" with pid 0 (no RCU wait);
	 * another process goes through cgroup.procs. */
	CU_ASSERT_EQUAL(cgroup_job_attach(job, 0), 0);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	CU_ASSERT_EQUAL(cgroup_job_attach(job, getpid()), 0);
	for (size_t i = 0; i < 5; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "%s/qpool/n1/job.42/tasks", v1_hiers[i]);
		CU_ASSERT_STRING_EQUAL(slurp(d, rel), "0");
		unit_write_file(d, rel, "");
		snprintf(rel, sizeof(rel), "%s/qpool/n1/job.42/cgroup.procs", v1_hiers[i]);
		CU_ASSERT_STRING_EQUAL(slurp(d, rel), pid);
		/* Empty again, or the kill below would kill this test. */
		unit_write_file(d, rel, "");
	}

	/* Empty: nothing to freeze. */
	CU_ASSERT_EQUAL(cgroup_job_kill(job, 100), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "freezer/qpool/n1/job.42/freezer.state"), "");
	/* A real process listed in the fake group: frozen, killed, thawed;
	 * the fake list never empties, so the drain times out. */
	{
		pid_t child = fork();
		int st = 0;

		if (child == 0) {
			pause();
			_exit(0);
		}
		CU_ASSERT_FATAL(child > 0);
		snprintf(pid, sizeof(pid), "%d\n", (int)child);
		unit_write_file(d, "freezer/qpool/n1/job.42/cgroup.procs", pid);
		CU_ASSERT_EQUAL(cgroup_job_kill(job, 50), -ETIME);
		CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
		CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		CU_ASSERT_STRING_EQUAL(slurp(d, "freezer/qpool/n1/job.42/freezer.state"),
				       "THAWED");
		unit_write_file(d, "freezer/qpool/n1/job.42/cgroup.procs", "");
		CU_ASSERT_EQUAL(cgroup_job_kill(job, 50), 0);
	}

	unit_write_file(d, "cpuacct/qpool/n1/job.42/cpuacct.usage", "123456789\n");
	unit_write_file(d, "memory/qpool/n1/job.42/memory.max_usage_in_bytes", "4096\n");
	unit_write_file(d, "memory/qpool/n1/job.42/memory.oom_control",
			"oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
	CU_ASSERT_EQUAL(cgroup_job_usage(job, &u), 0);
	CU_ASSERT_EQUAL(u.cpu_ns, 123456789);
	CU_ASSERT_EQUAL(u.mem_peak, 4096);
	CU_ASSERT(!u.oom);
	unit_write_file(d, "memory/qpool/n1/job.42/memory.oom_control",
			"oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
	CU_ASSERT_EQUAL(cgroup_job_usage(job, &u), 0);
	CU_ASSERT(u.oom);

	/* The fake dirs still hold files, so rmdir fails like a populated
	 * group would; force_empty has been written first all the same
	 * (threshold 0: whatever the host counts). */
	cgroup_job_reclaim_threshold(job, 0);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), -EBUSY);
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.42/memory.force_empty"), "0");
	/* No page cache left: nothing to reclaim, force_empty is skipped;
	 * with some, it is written. */
	unit_write_file(d, "memory/qpool/n1/job.42/memory.force_empty", "");
	unit_write_file(d, "memory/qpool/n1/job.42/memory.stat",
			"cache 0\nrss 0\nshmem 0\ntotal_cache 8192\n");
	CU_ASSERT_EQUAL(cgroup_job_remove(job), -EBUSY);
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.42/memory.force_empty"), "");
	unit_write_file(d, "memory/qpool/n1/job.42/memory.stat", "cache 4096\nrss 0\n");
	CU_ASSERT_EQUAL(cgroup_job_remove(job), -EBUSY);
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.42/memory.force_empty"), "0");
	/* Cache, but the host is below the threshold: left to the kernel.
	 * No host counts UINT_MAX memory cgroups; every host counts 1 (and
	 * one whose /proc/cgroups does not say is taken as at it). */
	unit_write_file(d, "memory/qpool/n1/job.42/memory.force_empty", "");
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), -EBUSY);
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.42/memory.force_empty"), "");
	cgroup_job_reclaim_threshold(job, 1);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), -EBUSY);
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.42/memory.force_empty"), "0");
	rm(d, "memory/qpool/n1/job.42/memory.stat");
	v1_job_files_remove(d, "job.42");
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	for (size_t i = 0; i < 5; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "%s/qpool/n1/job.42", v1_hiers[i]);
		CU_ASSERT(!exists(d, rel));
	}
	cgroup_job_free(job);
	cgroup_job_free(NULL);
	unit_tmpdir_remove(d);
}

static void test_v1_job_optional(void)
{
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	char *d = unit_tmpdir();
	int r;

	/* No freezer, no pids, no memsw: still a fence. cpuacct co-mounted. */
	unit_write_file(d, "cpuset/qpool/n1/cpuset.cpus", "0-1\n");
	unit_write_file(d, "cpuset/qpool/n1/cpuset.mems", "0\n");
	mkdir_rel(d, "cpu,cpuacct");
	mkdir_rel(d, "cpu,cpuacct/qpool");
	mkdir_rel(d, "cpu,cpuacct/qpool/n1");
	mkdir_rel(d, "memory");
	mkdir_rel(d, "memory/qpool");
	mkdir_rel(d, "memory/qpool/n1");
	r = cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 3, 0, &job, &err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT(exists(d, "cpu,cpuacct/qpool/n1/job.3"));
	unit_write_file(d, "cpuset/qpool/n1/job.3/cpuset.cpus", "");
	unit_write_file(d, "cpuset/qpool/n1/job.3/cpuset.mems", "");
	unit_write_file(d, "memory/qpool/n1/job.3/memory.limit_in_bytes", "");
	r = cgroup_job_configure(job, &(struct cgroup_limits){ .mem = 1000000 }, &err);
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpuset/qpool/n1/job.3/cpuset.cpus"), "0-1");
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.3/memory.limit_in_bytes"), "1000000");
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.3/memory.memsw.limit_in_bytes"));
	rm(d, "cpuset/qpool/n1/job.3/cpuset.cpus");
	rm(d, "cpuset/qpool/n1/job.3/cpuset.mems");
	rm(d, "memory/qpool/n1/job.3/memory.limit_in_bytes");
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.3"));
	cgroup_job_free(job);
	unit_tmpdir_remove(d);
}

static void test_v1_job_no_parent(void)
{
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	char *d = unit_tmpdir();
	int r;

	/* Node set-up did not run for memory: a clean error, nothing left. */
	mkdir_rel(d, "cpuset");
	mkdir_rel(d, "cpuset/qpool");
	mkdir_rel(d, "cpuset/qpool/n1");
	mkdir_rel(d, "cpuacct");
	mkdir_rel(d, "cpuacct/qpool");
	mkdir_rel(d, "cpuacct/qpool/n1");
	mkdir_rel(d, "memory");
	r = cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 9, 0, &job, &err);
	CU_ASSERT_EQUAL(r, -ENOENT);
	CU_ASSERT_PTR_NULL(job);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "memory/qpool/n1"));
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/job.9"));
	CU_ASSERT(!exists(d, "cpuacct/qpool/n1/job.9"));
	CU_ASSERT_EQUAL(cgroup_job_create(d, CGROUP_MODE_V1, "../x", 9, 0, &job, &err), -EINVAL);
	CU_ASSERT_EQUAL(cgroup_job_create(d, CGROUP_MODE_NONE, "qpool/n1", 9, 0, &job, &err),
			-EOPNOTSUPP);
	unit_tmpdir_remove(d);
}

static void test_v2(void)
{
	static const char *const files[] = {
		"cpuset.cpus", "cpuset.mems", "memory.max", "memory.swap.max", "pids.max",
		"cgroup.procs", "cgroup.kill", "cpu.stat", "memory.peak", "memory.events",
		"memory.min",
	};
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cgroup_usage u;
	struct cpumask cpus = { { 0 } };
	char *d = unit_tmpdir(), rel[128];
	int r;

	unit_write_file(d, "cgroup.controllers", "cpuset cpu io memory pids\n");
	unit_write_file(d, "cgroup.subtree_control", "");
	unit_write_file(d, "qpool/cgroup.subtree_control", "");
	unit_write_file(d, "qpool/n1/cgroup.subtree_control", "");
	unit_write_file(d, "qpool/n1/cpuset.cpus", "");
	unit_write_file(d, "qpool/n1/cpuset.mems", "");
	unit_write_file(d, "qpool/memory.min", "");
	unit_write_file(d, "qpool/n1/memory.min", "");
	unit_write_file(d, "qpool/n2/memory.min", "1073741824");
	CU_ASSERT_EQUAL(detect(d), CGROUP_MODE_V2);
	cpumask_parse("0-3", &cpus);
	r = cgroup_node_setup(d, CGROUP_MODE_V2, "qpool/n1", &cpus, "0", &err);
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cgroup.subtree_control"), "+cpuset +cpu +memory +pids");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/cgroup.subtree_control"),
			       "+cpuset +cpu +memory +pids");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/cgroup.subtree_control"),
			       "+cpuset +cpu +memory +pids");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/cpuset.cpus"), "0-3");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/cpuset.mems"), "0");

	r = cgroup_job_create(d, CGROUP_MODE_V2, "qpool/n1", 7, 0, &job, &err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT(exists(d, "qpool/n1/job.7"));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(rel, sizeof(rel), "qpool/n1/job.7/%s", files[i]);
		unit_write_file(d, rel, "");
	}
	r = cgroup_job_configure(job, &(struct cgroup_limits){ .cpus = "1-2", .mems = "0",
							       .mem = 512ULL << 20, .pids_max = 100 },
				 &err);
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/cpuset.cpus"), "1-2");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/cpuset.mems"), "0");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/memory.max"), "536870912");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/memory.min"), "536870912");
	/* Each ancestor up to the first component grants what its children
	 * claim: here job.7's request, plus another node's 1 GiB at qpool. */
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/memory.min"), "536870912");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/memory.min"), "1610612736");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/memory.swap.max"), "0");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/pids.max"), "100");

	CU_ASSERT_EQUAL(cgroup_job_attach(job, 12345), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/cgroup.procs"), "12345");
	unit_write_file(d, "qpool/n1/job.7/cgroup.procs", "");
	CU_ASSERT_EQUAL(cgroup_job_kill(job, 100), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/cgroup.kill"), "1");

	unit_write_file(d, "qpool/n1/job.7/cpu.stat",
			"usage_usec 2500\nuser_usec 2000\nsystem_usec 500\n");
	unit_write_file(d, "qpool/n1/job.7/memory.peak", "8192\n");
	unit_write_file(d, "qpool/n1/job.7/memory.events",
			"low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n");
	CU_ASSERT_EQUAL(cgroup_job_usage(job, &u), 0);
	CU_ASSERT_EQUAL(u.cpu_ns, 2500000);
	CU_ASSERT_EQUAL(u.mem_peak, 8192);
	CU_ASSERT(u.oom);

	/* The fake dir holds files, so rmdir fails like a populated group.
	 * Page cache ("file") left in the group: reclaimed (memory.reclaim,
	 * Linux 5.19+) before the rmdir once the host is at the threshold, so
	 * the removed group does not stay dying; without cache, or below the
	 * threshold, nothing is written. */
	unit_write_file(d, "qpool/n1/job.7/memory.reclaim", "");
	unit_write_file(d, "qpool/n1/job.7/memory.stat", "anon 0\nfile 4194304\nshmem 0\n");
	cgroup_job_reclaim_threshold(job, 0);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), -EBUSY);
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/memory.reclaim"), "4194304");
	unit_write_file(d, "qpool/n1/job.7/memory.reclaim", "");
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), -EBUSY);
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/memory.reclaim"), "");
	unit_write_file(d, "qpool/n1/job.7/memory.stat", "anon 0\nfile 0\nshmem 0\n");
	cgroup_job_reclaim_threshold(job, 0);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), -EBUSY);
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/job.7/memory.reclaim"), "");
	rm(d, "qpool/n1/job.7/memory.reclaim");
	rm(d, "qpool/n1/job.7/memory.stat");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(rel, sizeof(rel), "qpool/n1/job.7/%s", files[i]);
		rm(d, rel);
	}
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	CU_ASSERT(!exists(d, "qpool/n1/job.7"));
	cgroup_job_free(job);
	/* Its request no longer counts above it. */
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/memory.min"), "0");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/memory.min"), "1073741824");
	rm(d, "qpool/n2/memory.min");
	snprintf(rel, sizeof(rel), "%s/qpool/n2", d);
	CU_ASSERT_EQUAL(rmdir(rel), 0);

	CU_ASSERT_EQUAL(cgroup_node_teardown(d, CGROUP_MODE_V2, "qpool/n1"), -EBUSY);
	rm(d, "qpool/n1/memory.min");
	rm(d, "qpool/memory.min");
	rm(d, "qpool/n1/cgroup.subtree_control");
	rm(d, "qpool/n1/cpuset.cpus");
	rm(d, "qpool/n1/cpuset.mems");
	rm(d, "qpool/cgroup.subtree_control");
	CU_ASSERT_EQUAL(cgroup_node_teardown(d, CGROUP_MODE_V2, "qpool/n1"), 0);
	CU_ASSERT(!exists(d, "qpool"));
	unit_tmpdir_remove(d);
}


/* RT runtime on a fake v1 tree with cpu as its own hierarchy: qpool/ and
 * the shared qpool/.rt get the root's runtime less 5% of the period; the
 * node group gets none; a realtime job joins qpool/.rt in cpu and its own
 * groups elsewhere; a normal job gets a cpu group of its own. */
/* The read-back after the fence: what the kernel grants, as sets, against
 * the allocation; v2's effective lists; none on v1. */
static void test_cpuset_check(void)
{
	static const struct {
		enum cgroup_mode mode;
		const char *cpus, *mems;        /* allocated */
		const char *got_cpus, *got_mems; /* read back; NULL: no file */
		int r;
		const char *text;               /* a part of err; NULL: none */
	} cases[] = {
		{ CGROUP_MODE_V2, "1-2", "0", "1-2\n", "0\n", 0, NULL },
		/* The same set, another spelling. */
		{ CGROUP_MODE_V2, "1,2,3", "0", "1-3\n", "0\n", 0, NULL },
		/* A delegated tree whose parent has only CPU 0: the kernel
		 * grants the parent's set instead of an empty one. */
		{ CGROUP_MODE_V2, "1", "0", "0\n", "0\n", -EXDEV,
		  "job.7 got cpus 0 (cpuset.cpus.effective), not 1 as allocated" },
		{ CGROUP_MODE_V2, "1-2", "0-1", "1-2\n", "0\n", -EXDEV,
		  "job.7 got memory nodes 0 (cpuset.mems.effective), not 0-1 as allocated" },
		{ CGROUP_MODE_V2, "1-2", "0", "\n", "0\n", -EXDEV, "got cpus none" },
		/* A fake tree without the files: nothing to check. */
		{ CGROUP_MODE_V2, "1-2", "0", NULL, NULL, 0, NULL },
		/* Unset: the parent's, not checked. */
		{ CGROUP_MODE_V2, NULL, NULL, "0-3\n", "0\n", 0, NULL },
		/* v1 is not read back: its kernel refuses a cpus or mems
		 * list that is not a subset of the parent's (EACCES), names
		 * what is offline (EINVAL) or is empty with tasks inside
		 * (ENOSPC), so the configure write fails instead, and what it
		 * took reads back as written. A file saying otherwise (only a
		 * fake tree can) is not looked at. */
		{ CGROUP_MODE_V1, "1", "0", "1\n", "0\n", 0, NULL },
		{ CGROUP_MODE_V1, "1", "0", "0-1\n", "0\n", 0, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool v2 = cases[i].mode == CGROUP_MODE_V2;
		const char *dir = v2 ? "qpool/n1/job.7" : "cpuset/qpool/n1/job.7";
		struct cgroup_limits lim = { .cpus = cases[i].cpus, .mems = cases[i].mems };
		struct error err = { { 0 } };
		struct cgroup_job *job = NULL;
		char *d = unit_tmpdir(), rel[128];
		int r;

		if (v2) {
			unit_write_file(d, "cgroup.controllers", "cpuset cpu io memory pids\n");
			unit_write_file(d, "qpool/n1/cgroup.subtree_control", "");
		} else {
			for (size_t h = 0; h < sizeof(v1_hiers) / sizeof(v1_hiers[0]); h++) {
				snprintf(rel, sizeof(rel), "%s/qpool/n1/cgroup.procs", v1_hiers[h]);
				unit_write_file(d, rel, "");
			}
		}
		r = cgroup_job_create(d, cases[i].mode, "qpool/n1", 7, 0, &job, &err);
		CU_ASSERT_EQUAL_FATAL(r, 0);
		snprintf(rel, sizeof(rel), "%s/%s", dir, v2 ? "cpuset.cpus.effective" : "cpuset.cpus");
		if (cases[i].got_cpus)
			unit_write_file(d, rel, cases[i].got_cpus);
		snprintf(rel, sizeof(rel), "%s/%s", dir, v2 ? "cpuset.mems.effective" : "cpuset.mems");
		if (cases[i].got_mems)
			unit_write_file(d, rel, cases[i].got_mems);
		r = cgroup_job_cpuset_check(job, &lim, &err);
		CU_ASSERT_EQUAL(r, cases[i].r);
		if (cases[i].text) {
			CU_ASSERT_PTR_NOT_NULL(strstr(err.text, cases[i].text));
			if (!strstr(err.text, cases[i].text))
				fprintf(stderr, "case %zu: %s\n", i, err.text);
		}
		cgroup_job_free(job);
		unit_tmpdir_remove(d);
	}
}

/* The node's parents held open (the resident launcher's, inherited by
 * its wrappers): a job's groups are made relative to them, not by path
 * (a parent moved behind the path's back still gets them); one removed
 * and made again is missed once, the job made by path, and held anew by
 * a recheck; another parent, or a dropped hold, goes by path. */
static void test_v1_held_parents(void)
{
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	char *d = v1_tree(), path[4096], cmd[4200];

	bool had_stdin = fcntl(0, F_GETFD) >= 0;

	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", NULL, NULL, &err), 0);
	CU_ASSERT_EQUAL_FATAL(cgroup_parents_hold(d, CGROUP_MODE_V1, "qpool/n1", &err), 0);
	/* The first hold closes nothing it did not open (fd 0 included). */
	CU_ASSERT(!had_stdin || fcntl(0, F_GETFD) >= 0);
	/* Held: the memory parent moved, the job's group follows it. */
	snprintf(path, sizeof(path), "%s/memory/qpool/n1", d);
	snprintf(cmd, sizeof(cmd), "%s/memory/qpool/moved", d);
	CU_ASSERT_EQUAL_FATAL(rename(path, cmd), 0);
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 1, 0, &job, &err), 0);
	CU_ASSERT(exists(d, "memory/qpool/moved/job.1"));
	CU_ASSERT(exists(d, "cpuset/qpool/n1/job.1"));
	CU_ASSERT(exists(d, "pids/qpool/n1/job.1"));
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	CU_ASSERT(!exists(d, "memory/qpool/moved/job.1"));
	/* Another parent: by path, what is held is not used. */
	job = NULL;
	CU_ASSERT_EQUAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n2", 2, 0, &job, &err), -ENOENT);
	CU_ASSERT_PTR_NULL(job);

	/* The held memory parent removed, made again at its path: this job
	 * goes by path, the next (after a recheck) by the new one held. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/memory/qpool/moved'", d);
	CU_ASSERT_EQUAL(system(cmd), 0);
	unit_write_file(d, "memory/qpool/n1/cgroup.procs", "");
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 3, 0, &job, &err), 0);
	CU_ASSERT(exists(d, "memory/qpool/n1/job.3"));
	CU_ASSERT(exists(d, "cpuset/qpool/n1/job.3"));
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	cgroup_parents_recheck(0);
	snprintf(cmd, sizeof(cmd), "%s/memory/qpool/again", d);
	CU_ASSERT_EQUAL_FATAL(rename(path, cmd), 0);
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 4, 0, &job, &err), 0);
	CU_ASSERT(exists(d, "memory/qpool/again/job.4"));
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);

	/* Dropped (mode none): by path again, which is gone in memory. */
	CU_ASSERT_EQUAL(cgroup_parents_hold(d, CGROUP_MODE_NONE, "qpool/n1", &err), 0);
	job = NULL;
	CU_ASSERT_EQUAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 5, 0, &job, &err), -ENOENT);
	CU_ASSERT_PTR_NULL(job);
	unit_tmpdir_remove(d);
}

/* A job's files kept open (v1): its "tasks" opened before the fork, so a
 * child joins through them (here after the files went from the tree);
 * the kill's empty check reads them (no cgroup.procs, which this tree
 * lacks); cpuacct.usage read and reset for the spare on one fd. */
static void test_v1_kept_files(void)
{
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cgroup_usage u;
	char *d = v1_tree(), rel[128];

	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", NULL, NULL, &err), 0);
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 1, 0, &job, &err), 0);
	for (size_t h = 0; h < 5; h++) {
		snprintf(rel, sizeof(rel), "%s/qpool/n1/job.1/tasks", v1_hiers[h]);
		unit_write_file(d, rel, "");
	}
	unit_write_file(d, "cpuacct/qpool/n1/job.1/cpuacct.usage", "5000\n");
	unit_write_file(d, "memory/qpool/n1/job.1/memory.max_usage_in_bytes", "4096\n");
	unit_write_file(d, "freezer/qpool/n1/job.1/freezer.state", "THAWED\n");
	cgroup_job_attach_prepare(job);
	CU_ASSERT_EQUAL(cgroup_job_kill(job, 100), 0);
	for (size_t h = 0; h < 5; h++) {
		snprintf(rel, sizeof(rel), "%s/qpool/n1/job.1/tasks", v1_hiers[h]);
		rm(d, rel);
	}
	CU_ASSERT_EQUAL(cgroup_job_attach(job, 0), 0);
	CU_ASSERT_EQUAL(cgroup_job_usage(job, &u), 0);
	CU_ASSERT_EQUAL(u.cpu_ns, 5000);
	CU_ASSERT_EQUAL(u.mem_peak, 4096);
	rm(d, "memory/qpool/n1/job.1/memory.max_usage_in_bytes");
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	/* Reset through the fd it was read with (a fake file keeps the
	 * digits past the written one: "0000"). */
	CU_ASSERT_EQUAL(strtoull(slurp(d, "cpuacct/qpool/n1/spare.0/cpuacct.usage"), NULL, 10), 0);
	unit_tmpdir_remove(d);
}

static void test_v1_rt(void)
{
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cgroup_usage u;
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree();
	int r;

	unit_write_file(d, "cpu/cpu.rt_runtime_us", "950000\n");
	unit_write_file(d, "cpu/cpu.rt_period_us", "1000000\n");
	unit_write_file(d, "cpu/qpool/cpu.rt_runtime_us", "0\n");
	unit_write_file(d, "cpu/qpool/.rt/cpu.rt_runtime_us", "0\n");
	cpumask_parse("0-1", &cpus);
	r = cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err);
	CU_ASSERT_EQUAL(r, 0);
	if (r)
		fprintf(stderr, "%s\n", err.text);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpu/qpool/cpu.rt_runtime_us"), "900000");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpu/qpool/.rt/cpu.rt_runtime_us"), "900000");
	CU_ASSERT(exists(d, "cpu/qpool/n1"));
	CU_ASSERT(!exists(d, "cpu/qpool/n1/cpu.rt_runtime_us"));

	r = cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 5, CGROUP_JOB_REALTIME, &job, &err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT(!exists(d, "cpu/qpool/n1/job.5"));
	CU_ASSERT(exists(d, "cpuacct/qpool/n1/job.5"));
	for (size_t i = 0; i < 5; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "%s/qpool/n1/job.5/tasks", v1_hiers[i]);
		unit_write_file(d, rel, "");
	}
	unit_write_file(d, "cpu/qpool/.rt/tasks", "");
	CU_ASSERT_EQUAL(cgroup_job_attach(job, 0), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpu/qpool/.rt/tasks"), "0");
	unit_write_file(d, "cpuacct/qpool/n1/job.5/cpuacct.usage", "77\n");
	unit_write_file(d, "memory/qpool/n1/job.5/memory.max_usage_in_bytes", "1\n");
	CU_ASSERT_EQUAL(cgroup_job_usage(job, &u), 0);
	CU_ASSERT_EQUAL(u.cpu_ns, 77);      /* cpuacct is its own: still per job */
	CU_ASSERT(!u.cpu_shared);
	cgroup_job_free(job);

	r = cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 6, 0, &job, &err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT(exists(d, "cpu/qpool/n1/job.6"));
	cgroup_job_free(job);

	/* A host's root without RT throttling: nothing is given, no error. */
	unit_write_file(d, "cpu/cpu.rt_runtime_us", "-1\n");
	unit_write_file(d, "cpu/qpool/cpu.rt_runtime_us", "0\n");
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpu/qpool/cpu.rt_runtime_us"), "0");
	unit_tmpdir_remove(d);
}

/* Co-mounted cpu,cpuacct: the realtime job's cpuacct group is the shared
 * one, so its CPU time is not the group's (cpu_shared); teardown gives
 * the runtime back and removes qpool/.rt and qpool/ with the last node. */
static void test_v1_rt_comounted(void)
{
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cgroup_usage u;
	char *d = unit_tmpdir();
	int r;

	unit_write_file(d, "cpuset/cpuset.cpus", "0-1\n");
	unit_write_file(d, "cpuset/cpuset.mems", "0\n");
	for (const char *const *n = (const char *const[]){ "qpool", "qpool/n1", NULL }; *n; n++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "cpuset/%s/cpuset.cpus", *n);
		unit_write_file(d, rel, "");
		snprintf(rel, sizeof(rel), "cpuset/%s/cpuset.mems", *n);
		unit_write_file(d, rel, "");
	}
	unit_write_file(d, "cpu,cpuacct/qpool/cpu.rt_runtime_us", "0\n");
	unit_write_file(d, "cpu,cpuacct/qpool/.rt/cpu.rt_runtime_us", "0\n");
	unit_write_file(d, "cpu,cpuacct/cpu.rt_runtime_us", "950000\n");
	unit_write_file(d, "cpu,cpuacct/cpu.rt_period_us", "1000000\n");
	mkdir_rel(d, "memory");
	r = cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", NULL, NULL, &err);
	CU_ASSERT_EQUAL(r, 0);
	if (r)
		fprintf(stderr, "%s\n", err.text);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpu,cpuacct/qpool/cpu.rt_runtime_us"), "900000");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpu,cpuacct/qpool/.rt/cpu.rt_runtime_us"), "900000");
	r = cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 8, CGROUP_JOB_REALTIME, &job, &err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT(!exists(d, "cpu,cpuacct/qpool/n1/job.8"));
	unit_write_file(d, "memory/qpool/n1/job.8/memory.max_usage_in_bytes", "10\n");
	unit_write_file(d, "memory/qpool/n1/job.8/memory.failcnt", "12\n");
	CU_ASSERT_EQUAL(cgroup_job_usage(job, &u), 0);
	CU_ASSERT(u.cpu_shared);
	CU_ASSERT_EQUAL(u.cpu_ns, 0);
	/* No oom_kill line (kernel < 4.13): not an OOM, whatever failcnt says,
	 * since failcnt counts page-cache reclaim at the limit too. */
	CU_ASSERT(!u.oom);
	unit_write_file(d, "memory/qpool/n1/job.8/memory.oom_control",
			"oom_kill_disable 0\nunder_oom 1\noom_kill 1\n");
	CU_ASSERT_EQUAL(cgroup_job_usage(job, &u), 0);
	CU_ASSERT(u.oom);
	rm(d, "memory/qpool/n1/job.8/memory.max_usage_in_bytes");
	rm(d, "memory/qpool/n1/job.8/memory.failcnt");
	rm(d, "memory/qpool/n1/job.8/memory.oom_control");
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	CU_ASSERT(exists(d, "cpu,cpuacct/qpool/.rt"));       /* shared: stays */
	cgroup_job_free(job);
	/* Its cpuset group was kept; the set has no cpu,cpuacct group (it
	 * used the shared one), so the next job takes the cpuset spare and
	 * makes that one. */
	CU_ASSERT(exists(d, "cpuset/qpool/n1/spare.0"));
	r = cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 9, 0, &job, &err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT(exists(d, "cpuset/qpool/n1/job.9"));
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/spare.0"));
	CU_ASSERT(exists(d, "cpu,cpuacct/qpool/n1/job.9"));
	/* Its cpuacct.usage cannot be reset (a fake group has no files):
	 * nothing is kept, all is removed. */
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/job.9"));
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/spare.0"));
	CU_ASSERT(!exists(d, "cpu,cpuacct/qpool/n1/job.9"));
	cgroup_job_free(job);

	rm(d, "cpuset/qpool/n1/cpuset.cpus");
	rm(d, "cpuset/qpool/n1/cpuset.mems");
	rm(d, "cpuset/qpool/cpuset.cpus");
	rm(d, "cpuset/qpool/cpuset.mems");
	/* Runtime is written back to 0 before rmdir; the fake files keep the
	 * directories, so read them, then clear them like the kernel would. */
	CU_ASSERT_EQUAL(cgroup_node_teardown(d, CGROUP_MODE_V1, "qpool/n1"), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpu,cpuacct/qpool/.rt/cpu.rt_runtime_us"), "0");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpu,cpuacct/qpool/cpu.rt_runtime_us"), "0");
	CU_ASSERT(!exists(d, "cpu,cpuacct/qpool/n1"));
	rm(d, "cpu,cpuacct/qpool/.rt/cpu.rt_runtime_us");
	rm(d, "cpu,cpuacct/qpool/cpu.rt_runtime_us");
	CU_ASSERT_EQUAL(cgroup_node_teardown(d, CGROUP_MODE_V1, "qpool/n1"), 0);
	CU_ASSERT(!exists(d, "cpu,cpuacct/qpool"));
	unit_tmpdir_remove(d);
}

/* On the live host, what libcgroup finds in the mount table is a root
 * that our own detection judges usable (v1 here, v2 under systemd). */
/* An existing job group is never adopted: one that holds anything (here a
 * file stands for a task: the kernel refuses rmdir of a populated
 * cgroup as a fake tree refuses it of a non-empty directory) is refused
 * with -EEXIST and left as it was, and what the call made is removed; an
 * empty one is removed and made anew. */
static void test_v1_job_exists(void)
{
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree();
	int r;

	cpumask_parse("2-3", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	unit_write_file(d, "memory/qpool/n1/job.7/cgroup.procs", "4242\n");
	r = cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 7, 0, &job, &err);
	CU_ASSERT_EQUAL(r, -EEXIST);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "memory/qpool/n1/job.7 exists and holds processes"));
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.7/cgroup.procs"), "4242");
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/job.7"));     /* made by the call: removed */
	CU_ASSERT(!exists(d, "cpuacct/qpool/n1/job.7"));
	rm(d, "memory/qpool/n1/job.7/cgroup.procs");

	/* Empty: made anew, so nothing written into the old one survives. */
	mkdir_rel(d, "pids/qpool/n1/job.7");
	r = cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 7, 0, &job, &err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT(exists(d, "memory/qpool/n1/job.7"));
	CU_ASSERT(exists(d, "pids/qpool/n1/job.7"));
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.7"));
	unit_tmpdir_remove(d);
}

/* cgroup_job_find opens what a dead wrapper left, creates nothing, and
 * kill empties every group found (a job half attached); -ENOENT when
 * nothing is there. */
static void test_v1_job_find(void)
{
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree();
	int r;

	cpumask_parse("2-3", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT_EQUAL(cgroup_job_find(d, CGROUP_MODE_V1, "qpool/n1", 9, &job, &err), -ENOENT);
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/job.9"));
	unit_write_file(d, "memory/qpool/n1/job.9/cgroup.procs", "");
	unit_write_file(d, "pids/qpool/n1/job.9/cgroup.procs", "");
	r = cgroup_job_find(d, CGROUP_MODE_V1, "qpool/n1", 9, &job, &err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/job.9"));
	CU_ASSERT(!exists(d, "freezer/qpool/n1/job.9"));
	CU_ASSERT_EQUAL(cgroup_job_kill(job, 100), 0);
	rm(d, "memory/qpool/n1/job.9/cgroup.procs");
	rm(d, "pids/qpool/n1/job.9/cgroup.procs");
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.9"));
	CU_ASSERT(!exists(d, "pids/qpool/n1/job.9"));
	/* A found job's groups are removed, never kept as spares. */
	CU_ASSERT(!exists(d, "pids/qpool/n1/spare.0"));
	unit_tmpdir_remove(d);
}

static bool in_hiers(const char *d, const char *name, const char *const *hiers, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "%s/qpool/n1/%s", hiers[i], name);
		if (!exists(d, rel))
			return false;
	}
	return true;
}

/* v1 groups kept for the next job: given back once the memory group is
 * gone, counters reset; taken by the next job; a frozen one or one with
 * no free slot removed; a half set made whole; all gone at teardown. */
static void test_v1_spares(void)
{
	static const char *const kept[] = { "cpuset", "cpuacct", "freezer", "pids" };
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree(), rel[128];

	cpumask_parse("2-3", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 1, 0, &job, &err), 0);
	v1_job_files(d, "job.1", false);
	unit_write_file(d, "cpuacct/qpool/n1/job.1/cpuacct.usage", "5000\n");
	unit_write_file(d, "freezer/qpool/n1/job.1/freezer.state", "THAWED\n");
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	/* Memory still holds a task (its files, here): nothing is given. */
	CU_ASSERT_EQUAL(cgroup_job_remove(job), -EBUSY);
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/spare.0"));
	CU_ASSERT(in_hiers(d, "job.1", v1_hiers, 5));
	v1_hier_files_remove(d, 2, "job.1");   /* memory */
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.1"));
	CU_ASSERT(!exists(d, "memory/qpool/n1/spare.0"));
	CU_ASSERT(in_hiers(d, "spare.0", kept, 4));
	for (size_t i = 0; i < 4; i++) {
		snprintf(rel, sizeof(rel), "%s/qpool/n1/job.1", kept[i]);
		CU_ASSERT(!exists(d, rel));
	}
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpuacct/qpool/n1/spare.0/cpuacct.usage"), "0");

	/* The next job takes it (the groups' files come along); memory is
	 * made anew. */
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 2, 0, &job, &err), 0);
	CU_ASSERT(in_hiers(d, "job.2", v1_hiers, 5));
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/spare.0"));
	CU_ASSERT(!exists(d, "pids/qpool/n1/spare.0"));
	CU_ASSERT(exists(d, "pids/qpool/n1/job.2/pids.max"));
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.2/memory.limit_in_bytes"));
	CU_ASSERT_EQUAL(cgroup_job_configure(job, &(struct cgroup_limits){ .cpus = "3", .mems = "0" },
					     &err), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpuset/qpool/n1/job.2/cpuset.cpus"), "3");
	CU_ASSERT_STRING_EQUAL(slurp(d, "pids/qpool/n1/job.2/pids.max"), "max");
	/* Frozen by someone: not kept. */
	unit_write_file(d, "freezer/qpool/n1/job.2/freezer.state", "FROZEN\n");
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), -EBUSY);
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/spare.0"));
	CU_ASSERT(exists(d, "cpuset/qpool/n1/job.2"));
	v1_job_files_remove(d, "job.2");
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/job.2"));

	/* A half set (a crash between renames): what is missing is made. */
	mkdir_rel(d, "cpuset/qpool/n1/spare.0");
	mkdir_rel(d, "pids/qpool/n1/spare.0");
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 3, 0, &job, &err), 0);
	CU_ASSERT(in_hiers(d, "job.3", v1_hiers, 5));
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/spare.0"));
	CU_ASSERT(!exists(d, "pids/qpool/n1/spare.0"));
	/* Every slot taken: removed, not kept. */
	for (int k = 0; k < 8; k++) {
		snprintf(rel, sizeof(rel), "cpuset/qpool/n1/spare.%d", k);
		mkdir_rel(d, rel);
	}
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	CU_ASSERT(!exists(d, "pids/qpool/n1/job.3"));
	CU_ASSERT(!exists(d, "pids/qpool/n1/spare.0"));
	CU_ASSERT(!exists(d, "cpuset/qpool/n1/spare.8"));

	/* Teardown removes the spares with the node's group. */
	rm(d, "cpuset/qpool/n1/cpuset.cpus");
	rm(d, "cpuset/qpool/n1/cpuset.mems");
	for (size_t i = 1; i < 5; i++) {
		snprintf(rel, sizeof(rel), "%s/qpool/n1/cgroup.procs", v1_hiers[i]);
		rm(d, rel);
	}
	CU_ASSERT_EQUAL(cgroup_node_teardown(d, CGROUP_MODE_V1, "qpool/n1"), 0);
	CU_ASSERT(!exists(d, "cpuset/qpool/n1"));
	unit_tmpdir_remove(d);
}

/* Job `id` made on the v1 tree, limited to 1 GiB, and ended with what
 * its memory group reads: usage_in_bytes, oom_kill, tasks. Returns
 * cgroup_job_remove's answer. */
static int v1_memory_job_end(const char *d, uint64_t id, const char *usage, int oom,
			     const char *tasks)
{
	struct cgroup_limits lim = { .cpus = "3", .mems = "0", .mem = 1ULL << 30 };
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cgroup_usage u;
	char name[32], rel[128], text[64];
	int r;

	snprintf(name, sizeof(name), "job.%" PRIu64, id);
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", id, 0, &job, &err), 0);
	v1_job_files(d, name, true);
	CU_ASSERT_EQUAL(cgroup_job_configure(job, &lim, &err), 0);
	snprintf(rel, sizeof(rel), "memory/qpool/n1/%s/memory.limit_in_bytes", name);
	CU_ASSERT_STRING_EQUAL(slurp(d, rel), "1073741824");
	snprintf(rel, sizeof(rel), "cpuacct/qpool/n1/%s/cpuacct.usage", name);
	unit_write_file(d, rel, "5000\n");
	snprintf(rel, sizeof(rel), "freezer/qpool/n1/%s/freezer.state", name);
	unit_write_file(d, rel, "THAWED\n");
	snprintf(rel, sizeof(rel), "memory/qpool/n1/%s/memory.max_usage_in_bytes", name);
	unit_write_file(d, rel, "9000000\n");
	snprintf(rel, sizeof(rel), "memory/qpool/n1/%s/memory.usage_in_bytes", name);
	unit_write_file(d, rel, usage);
	snprintf(rel, sizeof(rel), "memory/qpool/n1/%s/memory.oom_control", name);
	snprintf(text, sizeof(text), "oom_kill_disable 0\nunder_oom 0\noom_kill %d\n", oom);
	unit_write_file(d, rel, text);
	snprintf(rel, sizeof(rel), "memory/qpool/n1/%s/tasks", name);
	unit_write_file(d, rel, tasks);
	CU_ASSERT_EQUAL(cgroup_job_usage(job, &u), 0);
	CU_ASSERT_EQUAL(u.mem_peak, 9000000);
	CU_ASSERT_EQUAL(u.oom, oom > 0);
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	r = cgroup_job_remove(job);
	if (r == -EBUSY) {   /* the fake's rmdir: a group with files is busy */
		v1_hier_files_remove(d, 2, name);
		r = cgroup_job_remove(job);
	}
	cgroup_job_free(job);
	return r;
}

/* v1 memory groups kept too (issue 39), when no task, no OOM kill and
 * at most 1 MiB charged are left: limits kept, peak reset, taken
 * by the next job but one under a small limit; any other is removed and
 * the others kept as before. */
static void test_v1_memory_spares(void)
{
	static const char *const all[] = { "cpuset", "cpuacct", "memory", "freezer", "pids" };
	struct error err = { { 0 } };
	struct cgroup_job *job = NULL;
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree();

	cpumask_parse("2-3", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT_EQUAL(v1_memory_job_end(d, 1, "356352\n", 0, ""), 0);
	CU_ASSERT(in_hiers(d, "spare.0", all, 5));
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.1"));
	/* Its limits stay (the next job keeps or changes them), its peak not. */
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/spare.0/memory.limit_in_bytes"), "1073741824");
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/spare.0/memory.memsw.limit_in_bytes"), "1073741824");
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/spare.0/memory.max_usage_in_bytes"), "0");

	/* A job under a small limit takes the others, not memory's: its own
	 * is made. Its end gives back the others; memory's spare waits. */
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 7,
						CGROUP_JOB_MEMORY_SMALL, &job, &err), 0);
	CU_ASSERT(in_hiers(d, "job.7", all, 5));
	CU_ASSERT(exists(d, "memory/qpool/n1/spare.0"));
	CU_ASSERT(!exists(d, "pids/qpool/n1/spare.0"));
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.7/memory.usage_in_bytes"));
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	CU_ASSERT(in_hiers(d, "spare.0", all, 5));
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.7"));

	/* Taken by the next job with the others, and with job 1's limits:
	 * the same limit is not written again (memsw's marker stays),
	 * none is written as none, and a limit over an unreadable one ("-1"
	 * here, not the kernel's number) is written after none. */
	unit_write_file(d, "memory/qpool/n1/spare.0/memory.memsw.limit_in_bytes", "unwritten");
	CU_ASSERT_EQUAL_FATAL(cgroup_job_create(d, CGROUP_MODE_V1, "qpool/n1", 2, 0, &job, &err), 0);
	CU_ASSERT(in_hiers(d, "job.2", all, 5));
	CU_ASSERT(!exists(d, "memory/qpool/n1/spare.0"));
	CU_ASSERT(exists(d, "memory/qpool/n1/job.2/memory.usage_in_bytes"));
	{
		struct cgroup_limits lim = { .cpus = "3", .mems = "0", .mem = 1ULL << 30 };

		CU_ASSERT_EQUAL(cgroup_job_configure(job, &lim, &err), 0);
		CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.2/memory.memsw.limit_in_bytes"), "unwritten");
		lim.mem = 0;
		CU_ASSERT_EQUAL(cgroup_job_configure(job, &lim, &err), 0);
		CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.2/memory.limit_in_bytes"), "-1");
		CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.2/memory.memsw.limit_in_bytes"), "-1");
		lim.mem = 2ULL << 30;
		CU_ASSERT_EQUAL(cgroup_job_configure(job, &lim, &err), 0);
		CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.2/memory.limit_in_bytes"), "2147483648");
		CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/job.2/memory.memsw.limit_in_bytes"), "2147483648");
	}
	v1_hier_files_remove(d, 2, "job.2");
	cgroup_job_reclaim_threshold(job, UINT_MAX);
	CU_ASSERT_EQUAL(cgroup_job_remove(job), 0);
	cgroup_job_free(job);
	/* Its memory files gone (the fake's empty group): nothing to read,
	 * not kept; the others are. */
	CU_ASSERT(!exists(d, "memory/qpool/n1/spare.0"));
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.2"));
	CU_ASSERT(exists(d, "cpuset/qpool/n1/spare.0"));

	/* More than 1 MiB charged, an OOM kill, a task: removed, the rest kept. */
	CU_ASSERT_EQUAL(v1_memory_job_end(d, 3, "1048577\n", 0, ""), 0);
	CU_ASSERT(!exists(d, "memory/qpool/n1/spare.0"));
	CU_ASSERT(!exists(d, "memory/qpool/n1/job.3"));
	CU_ASSERT(exists(d, "pids/qpool/n1/spare.0"));
	CU_ASSERT_EQUAL(v1_memory_job_end(d, 4, "4096\n", 1, ""), 0);
	CU_ASSERT(!exists(d, "memory/qpool/n1/spare.0"));
	CU_ASSERT(exists(d, "pids/qpool/n1/spare.0"));
	CU_ASSERT_EQUAL(v1_memory_job_end(d, 5, "4096\n", 0, "4242\n"), 0);
	CU_ASSERT(!exists(d, "memory/qpool/n1/spare.0"));
	CU_ASSERT(exists(d, "pids/qpool/n1/spare.0"));
	/* 1 MiB exactly: kept. */
	CU_ASSERT_EQUAL(v1_memory_job_end(d, 6, "1048576\n", 0, ""), 0);
	CU_ASSERT(in_hiers(d, "spare.0", all, 5));

	unit_tmpdir_remove(d);
}

/* The job groups a node's group holds, in any hierarchy, each once. */
static void test_node_job_ids(void)
{
	struct error err = { { 0 } };
	struct cpumask cpus = { { 0 } };
	uint64_t *ids = NULL;
	char *d = v1_tree();
	int n;

	cpumask_parse("2-3", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT_EQUAL(cgroup_node_job_ids(d, CGROUP_MODE_V1, "qpool/n1", &ids), 0);
	free(ids);
	ids = NULL;
	mkdir_rel(d, "memory/qpool/n1/job.12");
	mkdir_rel(d, "pids/qpool/n1/job.12");
	mkdir_rel(d, "cpuset/qpool/n1/job.3");
	mkdir_rel(d, "cpuset/qpool/n1/job.x");
	mkdir_rel(d, "cpuset/qpool/n1/job.04");
	n = cgroup_node_job_ids(d, CGROUP_MODE_V1, "qpool/n1", &ids);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT((ids[0] == 3 && ids[1] == 12) || (ids[0] == 12 && ids[1] == 3));
	free(ids);
	CU_ASSERT_EQUAL(cgroup_node_job_ids(d, CGROUP_MODE_NONE, "qpool/n1", &ids), 0);
	unit_tmpdir_remove(d);
}

/* The node's group over all its jobs: memory and pids caps. */
static void test_node_limits(void)
{
	struct error err = { { 0 } };
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree();

	cpumask_parse("2-3", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	unit_write_file(d, "memory/qpool/n1/memory.limit_in_bytes", "");
	unit_write_file(d, "pids/qpool/n1/pids.max", "");
	CU_ASSERT_EQUAL(cgroup_node_limits(d, CGROUP_MODE_V1, "qpool/n1", 3ULL << 30, 24576, &err), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/memory.limit_in_bytes"), "3221225472");
	CU_ASSERT_STRING_EQUAL(slurp(d, "pids/qpool/n1/pids.max"), "24576");
	CU_ASSERT_EQUAL(cgroup_node_limits(d, CGROUP_MODE_V1, "qpool/n1", 0, 0, &err), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "memory/qpool/n1/memory.limit_in_bytes"), "-1");
	CU_ASSERT_STRING_EQUAL(slurp(d, "pids/qpool/n1/pids.max"), "max");
	/* No node set-up: the error names the path. */
	CU_ASSERT(cgroup_node_limits(d, CGROUP_MODE_V1, "qpool/n2", 1, 1, &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "qpool/n2"));
	unit_tmpdir_remove(d);

	d = unit_tmpdir();
	unit_write_file(d, "cgroup.controllers", "cpuset cpu memory pids\n");
	unit_write_file(d, "qpool/n1/memory.max", "");
	unit_write_file(d, "qpool/n1/pids.max", "");
	CU_ASSERT_EQUAL(cgroup_node_limits(d, CGROUP_MODE_V2, "qpool/n1", 1ULL << 30, 100, &err), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/memory.max"), "1073741824");
	CU_ASSERT_STRING_EQUAL(slurp(d, "qpool/n1/pids.max"), "100");
	unit_tmpdir_remove(d);
}

/* Two pools, each its own parent: the second gets what RT budget the
 * first left, not a request the kernel would refuse. */
/* Other pools hold the whole RT budget: the node's set-up makes no
 * realtime group, and the node must then say it has no realtime. */
static void test_v1_rt_none_left(void)
{
	struct error err = { { 0 } };
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree();

	unit_write_file(d, "cpu/cpu.rt_runtime_us", "950000\n");
	unit_write_file(d, "cpu/cpu.rt_period_us", "1000000\n");
	unit_write_file(d, "cpu/other/cpu.rt_runtime_us", "950000\n");
	cpumask_parse("0-1", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT(!exists(d, "cpu/qpool/.rt"));
	CU_ASSERT(!cgroup_node_rt_ready(d, CGROUP_MODE_V1, "qpool/n1"));
	CU_ASSERT(cgroup_node_rt_ready(d, CGROUP_MODE_V2, "qpool/n1"));
	unit_write_file(d, "cpu/other/cpu.rt_runtime_us", "0\n");
	unit_write_file(d, "cpu/qpool/cpu.rt_runtime_us", "0\n");
	unit_write_file(d, "cpu/qpool/.rt/cpu.rt_runtime_us", "0\n");  /* the kernel makes it */
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT(cgroup_node_rt_ready(d, CGROUP_MODE_V1, "qpool/n1"));
	unit_tmpdir_remove(d);
}

static void test_v1_rt_two_pools(void)
{
	struct error err = { { 0 } };
	struct cpumask cpus = { { 0 } };
	char *d = v1_tree();

	unit_write_file(d, "cpu/cpu.rt_runtime_us", "950000\n");
	unit_write_file(d, "cpu/cpu.rt_period_us", "1000000\n");
	unit_write_file(d, "cpu/other/cpu.rt_runtime_us", "800000\n");
	unit_write_file(d, "cpu/qpool/cpu.rt_runtime_us", "0\n");
	unit_write_file(d, "cpu/qpool/.rt/cpu.rt_runtime_us", "0\n");
	cpumask_parse("0-1", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(d, CGROUP_MODE_V1, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpu/qpool/cpu.rt_runtime_us"), "150000");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cpu/qpool/.rt/cpu.rt_runtime_us"), "150000");
	unit_tmpdir_remove(d);
}

static void test_proc_count(void)
{
	static const char text[] =
		"#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
		"cpuset\t3\t12\t1\n"
		"memory_x\t9\t1\t1\n"
		"memory\t7\t849\t1\n"
		"pids\t5\t33\t1\n";
	unsigned long n = 0;

	CU_ASSERT_EQUAL(cgroup_proc_count(text, "memory", &n), 0);
	CU_ASSERT_EQUAL(n, 849);
	CU_ASSERT_EQUAL(cgroup_proc_count(text, "cpuset", &n), 0);
	CU_ASSERT_EQUAL(n, 12);
	CU_ASSERT_EQUAL(cgroup_proc_count(text, "freezer", &n), -ENOENT);
	CU_ASSERT_EQUAL(cgroup_proc_count("memory\t7\n", "memory", &n), -EINVAL);
	CU_ASSERT_EQUAL(cgroup_proc_count("memory\tx\t3\t1\n", "memory", &n), -EINVAL);
	CU_ASSERT_EQUAL(cgroup_proc_count("", "memory", &n), -ENOENT);
	/* A cgroup2-only host still lists the controller, hierarchy 0. */
	CU_ASSERT_EQUAL(cgroup_proc_count("memory 0 120 1\n", "memory", &n), 0);
	CU_ASSERT_EQUAL(n, 120);
}

static void test_discover_live(void)
{
	char root[4096];
	struct error err;
	enum cgroup_mode mode;
	FILE *f = fopen("/proc/mounts", "r");
	char line[1024];
	bool mounted = false;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, " cgroup2 ") || (strstr(line, " cgroup ") && strstr(line, "memory")))
			mounted = true;
	if (f)
		fclose(f);
	if (!mounted)
		return;   /* no cgroup mounts: nothing to discover */
	CU_ASSERT_EQUAL_FATAL(cgroup_discover(root, sizeof(root), &err), 0);
	CU_ASSERT_EQUAL(cgroup_detect(root, &mode), 0);
	CU_ASSERT_NOT_EQUAL(mode, CGROUP_MODE_NONE);
}

/* v2 under systemd: the base is qnoded's own delegated group, read from a
 * fake /proc/self/cgroup; qnoded moves into its leaf, and the node parent
 * set up below the base enables controllers there, never above it. */
static void test_v2_delegated(void)
{
	static const struct {
		const char *proc;
		bool delegated;
		const char *base, *leaf;
	} cases[] = {
		{ "0::/system.slice/qnoded.service\n", true, "system.slice/qnoded.service",
		  "system.slice/qnoded.service/qnoded" },
		/* Hybrid: v1 lines first. */
		{ "12:memory:/system.slice/qnoded.service\n1:name=systemd:/x\n0::/system.slice/qnoded.service\n",
		  true, "system.slice/qnoded.service", "system.slice/qnoded.service/qnoded" },
		/* DelegateSubgroup=qnoded (systemd 254+): in the leaf already. */
		{ "0::/system.slice/qnoded.service/qnoded\n", true, "system.slice/qnoded.service", "" },
		{ "0::/\n", true, "", "" },
		{ "0::/qnoded\n", true, "", "" },
		{ "4:memory:/\n1:cpu:/\n", true, "", "" },
		{ "0::/system.slice/qnoded.service\n", false, "", "" },
	};
	char *d = unit_tmpdir(), proc[4096], base[256], leaf[256], root[4096], pid[32];
	struct error err = { { 0 } };
	struct cpumask cpus = { { 0 } };

	snprintf(proc, sizeof(proc), "%s/proc-self-cgroup", d);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unit_write_file(d, "proc-self-cgroup", cases[i].proc);
		CU_ASSERT_EQUAL(cgroup_delegated_base(proc, cases[i].delegated, base, sizeof(base), leaf,
						      sizeof(leaf), &err), 0);
		if (strcmp(base, cases[i].base) || strcmp(leaf, cases[i].leaf))
			fprintf(stderr, "\n  case %zu: base '%s' leaf '%s'", i, base, leaf);
		CU_ASSERT_STRING_EQUAL(base, cases[i].base);
		CU_ASSERT_STRING_EQUAL(leaf, cases[i].leaf);
	}
	unit_write_file(d, "proc-self-cgroup", "0::/a/../../b\n");
	CU_ASSERT_EQUAL(cgroup_delegated_base(proc, true, base, sizeof(base), leaf, sizeof(leaf), &err), -EINVAL);
	CU_ASSERT_EQUAL(cgroup_delegated_base("/nonexistent", true, base, sizeof(base), leaf, sizeof(leaf), &err),
			-ENOENT);

	/* The fake v2 tree: systemd's part, then the unit's delegated group. */
	unit_write_file(d, "cg/cgroup.controllers", "cpuset cpu io memory pids\n");
	unit_write_file(d, "cg/cgroup.subtree_control", "systemd's\n");
	unit_write_file(d, "cg/system.slice/cgroup.subtree_control", "systemd's\n");
	unit_write_file(d, "cg/system.slice/qnoded.service/cgroup.controllers", "cpuset cpu io memory pids\n");
	unit_write_file(d, "cg/system.slice/qnoded.service/cgroup.subtree_control", "");
	unit_write_file(d, "cg/system.slice/qnoded.service/qpool/cgroup.subtree_control", "");
	unit_write_file(d, "cg/system.slice/qnoded.service/qpool/n1/cgroup.subtree_control", "");
	unit_write_file(d, "cg/system.slice/qnoded.service/qpool/n1/cpuset.cpus", "");
	unit_write_file(d, "cg/system.slice/qnoded.service/qpool/n1/cpuset.mems", "");
	snprintf(root, sizeof(root), "%s/cg", d);
	CU_ASSERT_EQUAL(cgroup_self_move(root, "system.slice/qnoded.service/qnoded", &err), 0);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/qnoded.service/qnoded/cgroup.procs"), pid);
	/* The base's directory is the root the node set-up is given. */
	snprintf(root, sizeof(root), "%s/cg/system.slice/qnoded.service", d);
	CU_ASSERT_EQUAL(detect(root), CGROUP_MODE_V2);
	cpumask_parse("0-1", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(root, CGROUP_MODE_V2, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/qnoded.service/cgroup.subtree_control"),
			       "+cpuset +cpu +memory +pids");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/qnoded.service/qpool/n1/cpuset.cpus"), "0-1");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/cgroup.subtree_control"), "systemd's");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/cgroup.subtree_control"), "systemd's");
	unit_tmpdir_remove(d);
}

/* Fake trees cannot carry trusted.* xattrs without CAP_SYS_ADMIN: there,
 * a group is delegated when it holds the file "fake.delegate" (1). */
static bool fake_delegated(const char *dir)
{
	return strcmp(slurp(dir, "fake.delegate"), "1") == 0;
}

/* A fake v2 tree laid out like /sys/fs/cgroup on Debian 12 with the two
 * units started: systemd's part, the holder's delegated group, qnoded's
 * plain one. Returns the tree's root (d/cg). */
static void v2_systemd_tree(const char *d, char *root, size_t len)
{
	unit_write_file(d, "cg/cgroup.controllers", "cpuset cpu io memory pids\n");
	unit_write_file(d, "cg/cgroup.subtree_control", "systemd's\n");
	unit_write_file(d, "cg/system.slice/cgroup.subtree_control", "systemd's\n");
	unit_write_file(d, "cg/system.slice/qpool-cgroup.service/cgroup.controllers",
			"cpuset cpu io memory pids\n");
	unit_write_file(d, "cg/system.slice/qpool-cgroup.service/cgroup.subtree_control", "");
	unit_write_file(d, "cg/system.slice/qpool-cgroup.service/cgroup.procs", "");
	unit_write_file(d, "cg/system.slice/qpool-cgroup.service/fake.delegate", "1");
	unit_write_file(d, "cg/system.slice/qnoded.service/cgroup.subtree_control", "");
	unit_write_file(d, "cg/system.slice/qnoded.service/cgroup.procs", "");
	mkdir_rel(d, "run");
	snprintf(root, len, "%s/cg", d);
}

/* qpool-cgroup.service's process: out of its unit's group into the leaf
 * "holder", controllers enabled for the unit group's children, the group
 * written where qnoded reads it; nothing done outside a systemd unit, at
 * the root, or in a group not delegated. */
static void test_v2_holder(void)
{
	char *d = unit_tmpdir(), root[4096], proc[4096], file[4096], group[256], pid[32];
	struct cgroup_host host = { .root = root, .proc_cgroup = proc, .holder_file = file,
				    .systemd = true, .delegated = fake_delegated };
	struct error err = { { 0 } };

	v2_systemd_tree(d, root, sizeof(root));
	snprintf(proc, sizeof(proc), "%s/proc-self-cgroup", d);
	snprintf(file, sizeof(file), "%s/run/base", d);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());

	/* Outside systemd: nothing, even in a delegated group. */
	unit_write_file(d, "proc-self-cgroup", "0::/system.slice/qpool-cgroup.service\n");
	host.systemd = false;
	CU_ASSERT_EQUAL(cgroup_holder_setup(&host, group, sizeof(group), &err), 0);
	CU_ASSERT(!exists(d, "run/base"));
	host.systemd = true;
	/* At the root (a container's): nothing to hold. */
	unit_write_file(d, "proc-self-cgroup", "0::/\n");
	CU_ASSERT_EQUAL(cgroup_holder_setup(&host, group, sizeof(group), &err), 0);
	CU_ASSERT(!exists(d, "run/base"));

	/* Not delegated (Delegate= missing, or systemd < 251): refused with
	 * one line, nothing moved or enabled. */
	unit_write_file(d, "proc-self-cgroup", "0::/system.slice/qnoded.service\n");
	CU_ASSERT_EQUAL(cgroup_holder_setup(&host, group, sizeof(group), &err), -EPERM);
	CU_ASSERT(strstr(err.text, "/system.slice/qnoded.service was not delegated") != NULL);
	CU_ASSERT(strchr(err.text, '\n') == NULL);
	CU_ASSERT(!exists(d, "cg/system.slice/qnoded.service/holder"));
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/qnoded.service/cgroup.subtree_control"), "");
	CU_ASSERT(!exists(d, "run/base"));

	/* Delegated: the holder's set-up, hybrid-style v1 lines first. */
	unit_write_file(d, "proc-self-cgroup",
			"12:memory:/system.slice/qpool-cgroup.service\n0::/system.slice/qpool-cgroup.service\n");
	CU_ASSERT_EQUAL(cgroup_holder_setup(&host, group, sizeof(group), &err), 1);
	CU_ASSERT_STRING_EQUAL(group, "system.slice/qpool-cgroup.service");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/qpool-cgroup.service/holder/cgroup.procs"), pid);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/qpool-cgroup.service/cgroup.subtree_control"),
			       "+cpuset +cpu +memory +pids");
	CU_ASSERT_STRING_EQUAL(slurp(d, "run/base"), "/system.slice/qpool-cgroup.service");
	CU_ASSERT(!exists(d, "run/base.tmp"));
	/* Never above its own group. */
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/cgroup.subtree_control"), "systemd's");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/cgroup.subtree_control"), "systemd's");

	/* Again, from the leaf (a second call): the same group. */
	unit_write_file(d, "proc-self-cgroup", "0::/system.slice/qpool-cgroup.service/holder\n");
	rm(d, "run/base");
	CU_ASSERT_EQUAL(cgroup_holder_setup(&host, group, sizeof(group), &err), 1);
	CU_ASSERT_STRING_EQUAL(group, "system.slice/qpool-cgroup.service");
	CU_ASSERT_STRING_EQUAL(slurp(d, "run/base"), "/system.slice/qpool-cgroup.service");

	/* No run directory (RuntimeDirectory= missing): an error that says where. */
	snprintf(file, sizeof(file), "%s/nodir/base", d);
	CU_ASSERT_EQUAL(cgroup_holder_setup(&host, group, sizeof(group), &err), -ENOENT);
	CU_ASSERT(strstr(err.text, "nodir/base") != NULL);
	unit_tmpdir_remove(d);
}

/* qnoded's base: the holder's group when its file is there (qnoded then
 * stays in its own plain group, moving nowhere and enabling nothing
 * there), else its own delegated group (moving into its leaf), else the
 * root; a holder file naming a group missing or not delegated refused
 * with one line. Then the node set-up and a job attach under the base. */
static void test_v2_base_choose(void)
{
	char *d = unit_tmpdir(), root[4096], proc[4096], file[4096], base[256], leaf[256], dir[4500];
	struct cgroup_host host = { .root = root, .proc_cgroup = proc, .holder_file = file,
				    .systemd = true, .delegated = fake_delegated };
	struct error err = { { 0 } };
	struct cpumask cpus = { { 0 } };
	struct cgroup_job *job = NULL;
	enum cgroup_base_from from;

	v2_systemd_tree(d, root, sizeof(root));
	snprintf(proc, sizeof(proc), "%s/proc-self-cgroup", d);
	snprintf(file, sizeof(file), "%s/run/base", d);
	unit_write_file(d, "proc-self-cgroup", "0::/system.slice/qnoded.service\n");

	/* No holder, qnoded's group not delegated (systemd < 251, or a
	 * unit without Delegate=): the root, as before. */
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), 0);
	CU_ASSERT_EQUAL(from, CGROUP_BASE_UNDELEGATED);
	CU_ASSERT_STRING_EQUAL(base, "system.slice/qnoded.service");
	CU_ASSERT_STRING_EQUAL(leaf, "");
	/* Not under systemd, or v1 (qnoded never asks there): the root. */
	host.systemd = false;
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), 0);
	CU_ASSERT_EQUAL(from, CGROUP_BASE_ROOT);
	CU_ASSERT_STRING_EQUAL(base, "");
	host.systemd = true;
	/* No holder, qnoded's own group delegated: its own, through its leaf. */
	unit_write_file(d, "cg/system.slice/qnoded.service/fake.delegate", "1");
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), 0);
	CU_ASSERT_EQUAL(from, CGROUP_BASE_OWN);
	CU_ASSERT_STRING_EQUAL(base, "system.slice/qnoded.service");
	CU_ASSERT_STRING_EQUAL(leaf, "system.slice/qnoded.service/qnoded");

	/* The holder's file wins, under systemd or not. */
	unit_write_file(d, "run/base", "/system.slice/qpool-cgroup.service\n");
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), 0);
	CU_ASSERT_EQUAL(from, CGROUP_BASE_HOLDER);
	CU_ASSERT_STRING_EQUAL(base, "system.slice/qpool-cgroup.service");
	CU_ASSERT_STRING_EQUAL(leaf, "");
	host.systemd = false;
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), 0);
	CU_ASSERT_EQUAL(from, CGROUP_BASE_HOLDER);
	host.systemd = true;

	/* Refused, each with one line: not delegated, missing, odd. */
	rm(d, "cg/system.slice/qpool-cgroup.service/fake.delegate");
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), -EPERM);
	CU_ASSERT(strstr(err.text, "/system.slice/qpool-cgroup.service, which was not delegated") != NULL);
	CU_ASSERT(strchr(err.text, '\n') == NULL);
	CU_ASSERT_STRING_EQUAL(base, "");
	unit_write_file(d, "cg/system.slice/qpool-cgroup.service/fake.delegate", "1");
	unit_write_file(d, "run/base", "/system.slice/gone.service\n");
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), -ENOENT);
	CU_ASSERT(strstr(err.text, "/system.slice/gone.service, which is not there") != NULL);
	unit_write_file(d, "run/base", "/system.slice/../../etc\n");
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), -EINVAL);
	unit_write_file(d, "run/base", "/\n");
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), -EINVAL);
	unit_write_file(d, "run/base", "");
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), -EINVAL);

	/* What qnoded does with the holder's base: the node parent and a job
	 * group below it; controllers only there and below, none in
	 * qnoded's own group, which keeps no child group. */
	unit_write_file(d, "run/base", "/system.slice/qpool-cgroup.service\n");
	CU_ASSERT_EQUAL(cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), &err), 0);
	snprintf(dir, sizeof(dir), "%s/%s", root, base);
	unit_write_file(d, "cg/system.slice/qpool-cgroup.service/qpool/cgroup.subtree_control", "");
	unit_write_file(d, "cg/system.slice/qpool-cgroup.service/qpool/n1/cgroup.subtree_control", "");
	unit_write_file(d, "cg/system.slice/qpool-cgroup.service/qpool/n1/cpuset.cpus", "");
	unit_write_file(d, "cg/system.slice/qpool-cgroup.service/qpool/n1/cpuset.mems", "");
	CU_ASSERT_EQUAL(detect(dir), CGROUP_MODE_V2);
	cpumask_parse("0-1", &cpus);
	CU_ASSERT_EQUAL(cgroup_node_setup(dir, CGROUP_MODE_V2, "qpool/n1", &cpus, "0", &err), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/qpool-cgroup.service/qpool/n1/cgroup.subtree_control"),
			       "+cpuset +cpu +memory +pids");
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/qpool-cgroup.service/qpool/n1/cpuset.cpus"), "0-1");
	CU_ASSERT_EQUAL(cgroup_job_create(dir, CGROUP_MODE_V2, "qpool/n1", 5, 0, &job, &err), 0);
	unit_write_file(d, "cg/system.slice/qpool-cgroup.service/qpool/n1/job.5/cgroup.procs", "");
	CU_ASSERT_EQUAL(cgroup_job_attach(job, 4242), 0);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/qpool-cgroup.service/qpool/n1/job.5/cgroup.procs"),
			       "4242");
	cgroup_job_free(job);
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/qnoded.service/cgroup.subtree_control"), "");
	CU_ASSERT(!exists(d, "cg/system.slice/qnoded.service/qnoded"));
	CU_ASSERT(!exists(d, "cg/system.slice/qnoded.service/qpool"));
	CU_ASSERT_STRING_EQUAL(slurp(d, "cg/system.slice/cgroup.subtree_control"), "systemd's");
	unit_tmpdir_remove(d);
}

static const struct unit_test cgroup_tests[] = {
	{ "discover_live", test_discover_live },
	{ "/proc/cgroups counts", test_proc_count },
	{ "mode names", test_mode_names },
	{ "detect v1 v2 hybrid empty", test_detect },
	{ "v1 node set-up and teardown", test_v1_node },
	{ "v1 job create configure kill usage remove", test_v1_job },
	{ "v1 job without freezer, pids, memsw", test_v1_job_optional },
	{ "v1 job without node set-up", test_v1_job_no_parent },
	{ "v2 node and job", test_v2 },
	{ "cpuset read-back after the fence, v1 and v2", test_cpuset_check },
	{ "v2 under systemd: delegated base and own leaf", test_v2_delegated },
	{ "v2 under systemd: the holder's set-up", test_v2_holder },
	{ "v2 under systemd: qnoded's base, the holder's first", test_v2_base_choose },
	{ "v1 RT runtime for the shared realtime group", test_v1_rt },
	{ "v1 realtime with cpu,cpuacct co-mounted; OOM count", test_v1_rt_comounted },
	{ "v1 existing job group: refused when populated, remade when empty", test_v1_job_exists },
	{ "v1 job groups found after a dead wrapper", test_v1_job_find },
	{ "v1 groups kept for the next job", test_v1_spares },
	{ "v1 memory groups kept when clean", test_v1_memory_spares },
	{ "v1 node parents held by the launcher", test_v1_held_parents },
	{ "v1 a job's tasks and usage files kept open", test_v1_kept_files },
	{ "node group memory and pids limits, v1 and v2", test_node_limits },
	{ "job groups in a node group", test_node_job_ids },
	{ "v1 RT budget left by another pool", test_v1_rt_two_pools },
	{ "v1 RT budget all held by other pools: no realtime group, node says so", test_v1_rt_none_left },
	{ NULL, NULL },
};

UNIT_SUITE(cgroup, cgroup_tests);
