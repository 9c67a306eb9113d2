/* SPDX-License-Identifier: MIT */
/* qnoded's job files, result reading, restart take-over, /proc scanning and launcher, in temp dirs. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "noded.h"
#include "unit.h"
#include "wire.h"

static json_t *launch_job(void)
{
	return json_pack("{s:I, s:s, s:s, s:s, s:i, s:i, s:s, s:s, s:{s:s}, s:i, s:s, s:{s:I, s:I}}",
			 "jobid", (json_int_t)42, "name", "hello", "queue", "batch", "user", "alice",
			 "uid", 1234, "gid", 1235, "workdir", "/tmp", "cpus", "0-1",
			 "env", "FOO", "bar", "ncpus", 2, "script", "#!/bin/sh\necho hi\n",
			 "times", "submit", (json_int_t)100, "dispatch", (json_int_t)200);
}

static const struct user_info test_user = {
	.uid = 1234, .gid = 1235, .name = "alice", .home = "/home/alice", .shell = "/bin/bash",
	.groups = (gid_t[]){ 1235, 27, 100 }, .ngroups = 3,
};

static const struct spec_node test_node = {
	.name = "n1", .jobs_dir = "/var/lib/qpool/nodes/n1/jobs", .cgroup_mode = CGROUP_MODE_V1,
	.node_dir = "/var/lib/qpool/nodes/n1",
	.cgroup_root = "/sys/fs/cgroup", .cgroup_parent = "qpool/n1", .reclaim_threshold = 4096,
};

static void test_spec_build(void)
{
	json_t *job = launch_job(), *spec = NULL;
	struct error err = { "" };
	json_t *cg, *times;

	CU_ASSERT_EQUAL_FATAL(jobfile_spec_build(job, &test_user, &test_node, 300, &spec, &err), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "script"), "/var/lib/qpool/nodes/n1/jobs/42.sh");
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "nodefile"), "/var/lib/qpool/nodes/n1/jobs/42.nodes");
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "result"), "/var/lib/qpool/nodes/n1/jobs/42.result");
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "ctl"), "/var/lib/qpool/nodes/n1/jobs/42.ctl");
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "task_socket"), "/var/lib/qpool/nodes/n1/task.sock");
	CU_ASSERT_PTR_NULL(json_object_get(spec, "hwloc_xml"));   /* not written: none */
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "home"), "/home/alice");
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "shell"), "/bin/bash");
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "node"), "n1");
	/* the launch object is kept whole */
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "queue"), "batch");
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "cpus"), "0-1");
	CU_ASSERT_STRING_EQUAL(wire_str(json_object_get(spec, "env"), "FOO"), "bar");
	cg = json_object_get(spec, "cgroup");
	CU_ASSERT_STRING_EQUAL(wire_str(cg, "mode"), "v1");
	CU_ASSERT_STRING_EQUAL(wire_str(cg, "root"), "/sys/fs/cgroup");
	CU_ASSERT_STRING_EQUAL(wire_str(cg, "parent"), "qpool/n1");
	CU_ASSERT_EQUAL(wire_int(cg, "reclaim_threshold", -1), 4096);
	times = json_object_get(spec, "times");
	CU_ASSERT_EQUAL(wire_int(times, "submit", 0), 100);
	CU_ASSERT_EQUAL(wire_int(times, "dispatch", 0), 200);
	CU_ASSERT_EQUAL(wire_int(times, "launch", 0), 300);
	/* the user's cached groups, for gded's setgroups */
	{
		json_t *g = json_object_get(spec, "groups");

		CU_ASSERT_EQUAL_FATAL(json_array_size(g), 3);
		CU_ASSERT_EQUAL(json_integer_value(json_array_get(g, 0)), 1235);
		CU_ASSERT_EQUAL(json_integer_value(json_array_get(g, 1)), 27);
		CU_ASSERT_EQUAL(json_integer_value(json_array_get(g, 2)), 100);
	}
	/* the caller's message is untouched */
	CU_ASSERT_STRING_EQUAL(wire_str(job, "script"), "#!/bin/sh\necho hi\n");
	CU_ASSERT_PTR_NULL(json_object_get(json_object_get(job, "times"), "launch"));
	json_decref(spec);

	/* Another gid than the passwd one (newgrp): looked up for that gid,
	 * which comes first, as initgroups would have it. */
	spec = NULL;
	json_object_set_new(job, "gid", json_integer(4321));
	CU_ASSERT_EQUAL_FATAL(jobfile_spec_build(job, &test_user, &test_node, 300, &spec, &err), 0);
	CU_ASSERT(json_array_size(json_object_get(spec, "groups")) >= 1);
	CU_ASSERT_EQUAL(json_integer_value(json_array_get(json_object_get(spec, "groups"), 0)),
			4321);
	json_decref(spec);
	json_object_set_new(job, "gid", json_integer(1235));

	/* The node wrote its topology for the ranks: the spec says where. */
	{
		struct spec_node with_xml = test_node;

		with_xml.hwloc_xml = true;
		spec = NULL;
		CU_ASSERT_EQUAL_FATAL(jobfile_spec_build(job, &test_user, &with_xml, 300, &spec, &err), 0);
		CU_ASSERT_STRING_EQUAL(wire_str(spec, "hwloc_xml"), "/var/lib/qpool/nodes/n1/topology.xml");
		json_decref(spec);
	}

	/* The server's name for the uid must be this node's. */
	spec = NULL;
	json_object_set_new(job, "user", json_string("mallory"));
	CU_ASSERT_EQUAL(jobfile_spec_build(job, &test_user, &test_node, 300, &spec, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "job 42: uid 1234 is alice here, not mallory");
	CU_ASSERT_PTR_NULL(spec);
	json_object_set_new(job, "user", json_string("alice"));

	spec = NULL;
	json_object_del(job, "script");
	CU_ASSERT_EQUAL(jobfile_spec_build(job, &test_user, &test_node, 300, &spec, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "job 42: no script");
	json_object_set_new(job, "jobid", json_string("42"));
	CU_ASSERT_EQUAL(jobfile_spec_build(job, &test_user, &test_node, 300, &spec, &err), -EINVAL);
	CU_ASSERT_PTR_NULL(spec);
	json_decref(job);
}

static int open_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CU_ASSERT_FATAL(fd >= 0);
	return fd;
}

static void test_write(void)
{
	char *dir = unit_tmpdir();
	int dirfd = open_dir(dir);
	json_t *spec = json_pack("{s:I, s:s}", "jobid", (json_int_t)42, "node", "n1"), *back;
	struct error err = { "" };
	struct stat st, st_old;
	char buf[64];
	int fd, old_fd;
	ssize_t n;

	/* a stale script from an earlier run is replaced, not reused */
	unit_write_file(dir, "42.sh", "old old old old old old");
	old_fd = openat(dirfd, "42.sh", O_RDONLY | O_CLOEXEC);   /* a user's handle */
	CU_ASSERT_FATAL(old_fd >= 0);
	CU_ASSERT_EQUAL_FATAL(jobfile_write(dirfd, 42, "echo hi\n", 1234, 1235, spec, &err), 0);
	CU_ASSERT_EQUAL_FATAL(fstatat(dirfd, "42.sh", &st, 0), 0);
	CU_ASSERT_EQUAL_FATAL(fstat(old_fd, &st_old), 0);
	CU_ASSERT_NOT_EQUAL(st.st_ino, st_old.st_ino);
	CU_ASSERT_EQUAL(st_old.st_nlink, 0);
	n = pread(old_fd, buf, sizeof(buf) - 1, 0);
	close(old_fd);
	CU_ASSERT_EQUAL(n, 23);   /* the old text, untouched */
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0500);
	CU_ASSERT_EQUAL(st.st_uid, 1234);
	CU_ASSERT_EQUAL(st.st_gid, 1235);
	fd = openat(dirfd, "42.sh", O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	CU_ASSERT_EQUAL(n, 8);
	buf[n > 0 ? n : 0] = '\0';
	CU_ASSERT_STRING_EQUAL(buf, "echo hi\n");

	CU_ASSERT_EQUAL_FATAL(fstatat(dirfd, "42.json", &st, 0), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0600);
	CU_ASSERT_EQUAL(st.st_uid, 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "42.json.tmp", &st, 0), 0);
	{
		char path[4096];

		snprintf(path, sizeof(path), "%s/42.json", dir);
		back = json_load_file(path, 0, NULL);
		CU_ASSERT(json_equal(back, spec));
		json_decref(back);
	}
	json_decref(spec);
	close(dirfd);
	unit_tmpdir_remove(dir);
}

static void test_result(void)
{
	char *dir = unit_tmpdir();
	int dirfd = open_dir(dir);
	struct error err = { "" };
	json_t *res = NULL, *times;

	CU_ASSERT_EQUAL(jobfile_result_read(dirfd, 7, 500, &res, &err), -ENOENT);

	unit_write_file(dir, "7.result", "{\"status\": \"exited\", \"exit_status\": 3,"
			" \"times\": {\"wrap\": 600, \"exit\": 900}}");
	CU_ASSERT_EQUAL_FATAL(jobfile_result_read(dirfd, 7, 500, &res, &err), 0);
	CU_ASSERT_EQUAL(wire_int(res, "jobid", 0), 7);
	CU_ASSERT_EQUAL(wire_int(res, "exit_status", 0), 3);
	times = json_object_get(res, "times");
	CU_ASSERT_EQUAL(wire_int(times, "launch", 0), 500);
	CU_ASSERT_EQUAL(wire_int(times, "wrap", 0), 600);
	json_decref(res);

	/* a stamp already there (qnoded's own failure record) is kept when
	 * the run's is not known */
	unit_write_file(dir, "8.result", "{\"status\": \"failed\", \"times\": {\"launch\": 1}}");
	CU_ASSERT_EQUAL_FATAL(jobfile_result_read(dirfd, 8, 0, &res, &err), 0);
	CU_ASSERT_EQUAL(wire_int(json_object_get(res, "times"), "launch", 0), 1);
	json_decref(res);

	/* What a crash can leave of a result gded did not sync is no result:
	 * torn, empty, or a kept inode's text of another job or run */
	unit_write_file(dir, "9.result", "{\"status\": \"exi");
	CU_ASSERT_EQUAL(jobfile_result_read(dirfd, 9, 500, &res, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "9.result"));
	unit_write_file(dir, "10.result", "[1, 2]");
	CU_ASSERT_EQUAL(jobfile_result_read(dirfd, 10, 500, &res, &err), -ENOENT);
	unit_write_file(dir, "12.result", "");
	CU_ASSERT_EQUAL(jobfile_result_read(dirfd, 12, 500, &res, &err), -ENOENT);
	unit_write_file(dir, "13.result", "{\"jobid\": 12, \"status\": \"exited\", \"exit_status\": 0,"
			" \"times\": {\"launch\": 500}}");
	CU_ASSERT_EQUAL(jobfile_result_read(dirfd, 13, 500, &res, &err), -ENOENT);
	unit_write_file(dir, "14.result", "{\"jobid\": 14, \"status\": \"exited\", \"exit_status\": 0,"
			" \"times\": {\"launch\": 499}}");
	CU_ASSERT_EQUAL(jobfile_result_read(dirfd, 14, 500, &res, &err), -ENOENT);
	/* ... and this run's is read, and synced on request */
	CU_ASSERT_EQUAL_FATAL(jobfile_result_read(dirfd, 14, 499, &res, &err), 0);
	json_decref(res);
	CU_ASSERT_EQUAL(jobfile_result_sync(dirfd, 14), 0);
	CU_ASSERT_EQUAL(jobfile_result_sync(dirfd, 15), -ENOENT);

	/* qnoded's own failure record round-trips */
	res = jobfile_result_failed(11, 700, "no user with uid 99 on node n1");
	CU_ASSERT_EQUAL_FATAL(jobfile_result_write(dirfd, 11, res), 0);
	json_decref(res);
	CU_ASSERT_EQUAL_FATAL(jobfile_result_read(dirfd, 11, 0, &res, &err), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(res, "status"), "failed");
	CU_ASSERT_STRING_EQUAL(wire_str(res, "reason"), "no user with uid 99 on node n1");
	CU_ASSERT_EQUAL(wire_int(json_object_get(res, "times"), "launch", 0), 700);
	CU_ASSERT(json_is_null(json_object_get(res, "exit_status")));
	json_decref(res);

	close(dirfd);
	unit_tmpdir_remove(dir);
}

static void test_ids_and_remove(void)
{
	char *dir = unit_tmpdir();
	int dirfd = open_dir(dir);
	int64_t *ids = NULL;
	struct stat st;
	int n;

	unit_write_file(dir, "12.json", "{}");
	unit_write_file(dir, "3.json", "{\"times\": {\"launch\": 77}}");
	unit_write_file(dir, "3.result", "{}");
	unit_write_file(dir, "3.sh", "");
	unit_write_file(dir, "3.nodes", "");
	unit_write_file(dir, "5.sh", "");
	unit_write_file(dir, "6.result", "{}");
	unit_write_file(dir, "4.result.tmp", "");
	unit_write_file(dir, "07.json", "");
	unit_write_file(dir, "x.json", "");
	unit_write_file(dir, "8.json.tmp", "");
	n = jobfile_ids(dirfd, &ids);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_EQUAL(ids[0], 3);
	CU_ASSERT_EQUAL(ids[1], 6);
	CU_ASSERT_EQUAL(ids[2], 12);
	free(ids);

	CU_ASSERT_EQUAL(jobfile_spec_launch(dirfd, 3), 77);
	CU_ASSERT_EQUAL(jobfile_spec_launch(dirfd, 12), 0);
	CU_ASSERT_EQUAL(jobfile_spec_launch(dirfd, 99), 0);

	jobfile_remove(dirfd, 3, false, false);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "3.json", &st, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "3.result", &st, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "3.sh", &st, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "3.nodes", &st, 0), 0);
	CU_ASSERT_EQUAL(fstatat(dirfd, "12.json", &st, 0), 0);

	/* After gded's result, only the spec, script and result are tried:
	 * gded removed what else it made. */
	unit_write_file(dir, "9.json", "{}");
	unit_write_file(dir, "9.result", "{}");
	unit_write_file(dir, "9.nodes", "");
	unit_write_file(dir, "9.ctl", "");
	jobfile_remove(dirfd, 9, false, true);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "9.json", &st, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "9.result", &st, 0), 0);
	CU_ASSERT_EQUAL(fstatat(dirfd, "9.nodes", &st, 0), 0);
	CU_ASSERT_EQUAL(fstatat(dirfd, "9.ctl", &st, 0), 0);
	close(dirfd);
	unit_tmpdir_remove(dir);
}

/* Kept inodes: a finished job's spec and result (0600, ours, one link)
 * become spares and the next spec and result are written over them, cut
 * to length; the script never is; a file with a second link is unlinked;
 * jobfile_spares_clear removes what is left. */
static void test_spares(void)
{
	char *dir = unit_tmpdir();
	int dirfd = open_dir(dir);
	struct error err = { "" };
	json_t *spec = json_pack("{s:s, s:s}", "name", "a-rather-long-job-name-for-a-long-spec", "x", "yyyyyyyyyyyyyyyy");
	json_t *res;
	struct stat st, st2;
	ino_t spec_ino;

	jobfile_spares_clear(dirfd);
	jobfile_spares_keep(true);
	CU_ASSERT_EQUAL_FATAL(jobfile_write(dirfd, 1, "echo one\n", getuid(), getgid(), spec, &err), 0);
	res = jobfile_result_failed(1, 5, "a long reason for the first job's end, longer than the next");
	CU_ASSERT_EQUAL_FATAL(jobfile_result_write(dirfd, 1, res), 0);
	json_decref(res);
	CU_ASSERT_EQUAL_FATAL(fstatat(dirfd, "1.json", &st, 0), 0);
	spec_ino = st.st_ino;
	CU_ASSERT_EQUAL_FATAL(fstatat(dirfd, "1.sh", &st, 0), 0);
	jobfile_remove(dirfd, 1, true, false);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "1.json", &st, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "1.sh", &st, 0), 0);
	CU_ASSERT_EQUAL(fstatat(dirfd, ".spare.0", &st, 0), 0);
	CU_ASSERT_EQUAL(fstatat(dirfd, ".spare.1", &st, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, ".spare.2", &st, 0), 0);

	/* The next job: its result.tmp and spec are the kept inodes; the
	 * shorter text leaves nothing of the longer one behind. */
	CU_ASSERT_EQUAL(jobfile_result_tmp_ready(dirfd, 2), 1);
	json_object_set_new(spec, "name", json_string("b"));
	CU_ASSERT_EQUAL_FATAL(jobfile_write(dirfd, 2, "echo two\n", getuid(), getgid(), spec, &err), 0);
	CU_ASSERT_EQUAL_FATAL(fstatat(dirfd, "2.json", &st, 0), 0);
	CU_ASSERT_EQUAL(st.st_ino, spec_ino);   /* the last kept, taken first */
	CU_ASSERT_EQUAL_FATAL(fstatat(dirfd, "2.sh", &st2, 0), 0);
	CU_ASSERT_EQUAL(st2.st_uid, getuid());
	CU_ASSERT_EQUAL(jobfile_spec_launch(dirfd, 2), 0);
	CU_ASSERT_EQUAL(fstatat(dirfd, "2.result.tmp", &st2, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, ".spare.0", &st, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, ".spare.1", &st, 0), 0);
	res = jobfile_result_failed(2, 6, "short");
	CU_ASSERT_EQUAL_FATAL(jobfile_result_write(dirfd, 2, res), 0);
	json_decref(res);
	CU_ASSERT_EQUAL_FATAL(jobfile_result_read(dirfd, 2, 0, &res, &err), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(res, "reason"), "short");
	json_decref(res);
	{
		char buf[4096];
		int fd = openat(dirfd, "2.json", O_RDONLY);
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		json_t *o;

		close(fd);
		CU_ASSERT_FATAL(n > 0);
		buf[n] = 0;
		o = json_loads(buf, 0, NULL);
		CU_ASSERT_PTR_NOT_NULL(o);
		CU_ASSERT_STRING_EQUAL(wire_str(o, "name"), "b");
		json_decref(o);
	}

	/* A result with a second link is not kept. */
	CU_ASSERT_EQUAL(linkat(dirfd, "2.result", dirfd, "other-link", 0), 0);
	jobfile_remove(dirfd, 2, true, false);
	CU_ASSERT_EQUAL(fstatat(dirfd, "other-link", &st, 0), 0);
	CU_ASSERT_EQUAL(st.st_nlink, 1);
	CU_ASSERT_EQUAL(fstatat(dirfd, ".spare.2", &st, 0), 0);   /* the spec */
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, ".spare.3", &st, 0), 0);
	unlinkat(dirfd, "other-link", 0);

	jobfile_spares_clear(dirfd);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, ".spare.2", &st, 0), 0);
	json_decref(spec);
	close(dirfd);
	unit_tmpdir_remove(dir);
}

static void test_cmdline_match(void)
{
	static const char *jobs = "/var/lib/qpool/nodes/n1/jobs";
	static const struct {
		const char *argv[5];
		size_t n;
		bool match;
		int64_t jobid;
	} cases[] = {
		{ { "gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/17.json" }, 3, true, 17 },
		{ { "/usr/sbin/gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/5.json" }, 3, true, 5 },
		{ { "/usr/sbin/gded", "--spec", "/var/lib/qpool/nodes/n2/jobs/5.json" }, 3, false, 0 },
		{ { "/usr/sbin/gded", "--spec", "/var/lib/qpool/nodes/n1/jobs2/5.json" }, 3, false, 0 },
		{ { "/usr/sbin/xgded", "--spec", "/var/lib/qpool/nodes/n1/jobs/5.json" }, 3, false, 0 },
		{ { "gded", "-s", "/var/lib/qpool/nodes/n1/jobs/5.json" }, 3, false, 0 },
		{ { "gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/5.json", "x" }, 4, false, 0 },
		{ { "gded", "--spec" }, 2, false, 0 },
		{ { "/usr/sbin/gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/9.json", "--notify", "3" }, 5, true, 9 },
		{ { "/usr/sbin/gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/9.json", "--notify", "x" }, 5, false, 0 },
		{ { "/usr/sbin/gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/9.json", "--other", "3" }, 5, false, 0 },
		{ { "/usr/sbin/gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/9.json", "--notify", "" }, 5, false, 0 },
		{ { "gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/5.sh" }, 3, false, 0 },
		{ { "gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/05.json" }, 3, false, 0 },
		{ { "gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/sub/5.json" }, 3, false, 0 },
		{ { "gded", "--spec", "/var/lib/qpool/nodes/n1/jobs/5.json.tmp" }, 3, false, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t id = 0;
		bool m = procscan_cmdline_match((char *const *)cases[i].argv, cases[i].n, jobs, &id);

		CU_ASSERT_EQUAL(m, cases[i].match);
		if (m)
			CU_ASSERT_EQUAL(id, cases[i].jobid);
	}
}

/* A fake /proc: cmdline files are NUL-separated like the kernel's. */
/* /proc/<pid>/status with its Uid: line (real, then effective, saved, fs). */
static void fake_status(const char *root, const char *rel, uid_t real, uid_t eff)
{
	char text[128];

	snprintf(text, sizeof(text), "Name:\tgded\nUid:\t%u\t%u\t%u\t%u\n", (unsigned)real,
		 (unsigned)eff, (unsigned)eff, (unsigned)eff);
	unit_write_file(root, rel, text);
}

static void fake_proc(const char *root, int pid, uid_t uid, const char *cmdline, size_t len)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	CU_ASSERT_FATAL(mkdir(path, 0555) == 0);
	CU_ASSERT_FATAL(chown(path, uid, 0) == 0);
	snprintf(path, sizeof(path), "%s/%d/cmdline", root, pid);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(write(fd, cmdline, len) == (ssize_t)len);
	close(fd);
	snprintf(path, sizeof(path), "%d/status", pid);
	fake_status(root, path, uid, uid);
}

#define CMD(s) s, sizeof(s)   /* with the final NUL, as the kernel writes it */

static int cmp_pid(const void *a, const void *b)
{
	return ((const struct proc_gded *)a)->pid - ((const struct proc_gded *)b)->pid;
}

static void test_proc_scan(void)
{
	char *root = unit_tmpdir();
	struct proc_gded *found = NULL;
	int n;

	fake_proc(root, 100, 0, CMD("/usr/sbin/gded\0--spec\0/s/nodes/n1/jobs/7.json"));
	fake_proc(root, 101, 1000, CMD("gded\0--spec\0/s/nodes/n1/jobs/8.json"));
	fake_proc(root, 102, 0, CMD("gded\0--spec\0/s/nodes/n1/jobs/9.json\0-v"));
	fake_proc(root, 103, 0, CMD("gded\0--spec\0/s/nodes/n1/jobs/10.json"));
	fake_proc(root, 104, 0, CMD("gded\0--spec\0/s/nodes/n2/jobs/11.json"));
	fake_proc(root, 105, 0, "", 0);
	fake_proc(root, 106, 0, CMD("bash\0-c\0gded --spec /s/nodes/n1/jobs/12.json"));
	/* A user's setuid-root program run as `exec -a gded ... --spec`: /proc
	 * shows it as root's, but its real uid is the user's. */
	fake_proc(root, 107, 0, CMD("gded\0--spec\0/s/nodes/n1/jobs/13.json"));
	fake_status(root, "107/status", 1000, 0);
	/* A wrapper the resident launcher forked: its command line written
	 * over the launcher's longer one, NULs after it. The launcher's own
	 * is not a wrapper's; a user's process of that form is not root's. */
	fake_proc(root, 108, 0, CMD("/usr/sbin/gded\0--spec\0/s/nodes/n1/jobs/14.json\0--notify\0" "3\0\0\0\0"));
	fake_proc(root, 109, 0, CMD("/usr/sbin/gded\0--launcher\0\0\0\0\0\0\0"));
	fake_proc(root, 110, 1000, CMD("gded\0--spec\0/s/nodes/n1/jobs/15.json\0--notify\0" "3\0\0\0"));
	unit_write_file(root, "self/status", "CapEff:\t0\n");
	unit_write_file(root, "sys/kernel/sched_rt_runtime_us", "950000\n");

	n = procscan_gded_find(root, "/s/nodes/n1/jobs", &found);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	qsort(found, (size_t)n, sizeof(*found), cmp_pid);
	CU_ASSERT_EQUAL(found[0].pid, 100);
	CU_ASSERT_EQUAL(found[0].jobid, 7);
	CU_ASSERT_EQUAL(found[1].pid, 103);
	CU_ASSERT_EQUAL(found[1].jobid, 10);
	CU_ASSERT_EQUAL(found[2].pid, 108);
	CU_ASSERT_EQUAL(found[2].jobid, 14);
	free(found);
	CU_ASSERT(procscan_gded_check(root, "/s/nodes/n1/jobs", 108, 14));

	CU_ASSERT(procscan_gded_check(root, "/s/nodes/n1/jobs", 103, 10));
	CU_ASSERT(!procscan_gded_check(root, "/s/nodes/n1/jobs", 103, 7));
	CU_ASSERT(!procscan_gded_check(root, "/s/nodes/n1/jobs", 101, 8));
	CU_ASSERT(!procscan_gded_check(root, "/s/nodes/n1/jobs", 999, 8));
	CU_ASSERT(!procscan_gded_check(root, "/s/nodes/n1/jobs", 107, 13));
	unit_tmpdir_remove(root);
}

static void test_rt_check(void)
{
	static const struct {
		const char *runtime, *capeff;
		bool rt;
		const char *reason;
	} cases[] = {
		{ "950000\n", "000001ffffffffff", true, "" },
		{ "-1\n", "000001ffffffffff", false, "kernel RT throttling is off (sched_rt_runtime_us = -1)" },
		{ "950000\n", "0000000000000000", false, "qnoded lacks CAP_SYS_NICE" },
		/* everything but CAP_SYS_NICE (bit 23) */
		{ "950000\n", "000001ffff7fffff", false, "qnoded lacks CAP_SYS_NICE" },
		{ "950000\n", "0000000000800000", true, "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *root = unit_tmpdir();
		char status[256], reason[160] = "x";
		bool rt = !cases[i].rt;

		snprintf(status, sizeof(status), "Name:\tqnoded\nCapInh:\t0\nCapEff:\t%s\nCapBnd:\t0\n",
			 cases[i].capeff);
		unit_write_file(root, "self/status", status);
		unit_write_file(root, "sys/kernel/sched_rt_runtime_us", cases[i].runtime);
		procscan_rt_check(root, &rt, reason, sizeof(reason));
		CU_ASSERT_EQUAL(rt, cases[i].rt);
		CU_ASSERT_STRING_EQUAL(reason, cases[i].reason);
		unit_tmpdir_remove(root);
	}
}

static void test_users(void)
{
	struct usercache *uc = usercache_create();
	const struct user_info *u = NULL, *again = NULL;

	CU_ASSERT_EQUAL_FATAL(usercache_lookup(uc, 0, &u), 0);
	CU_ASSERT_STRING_EQUAL(u->name, "root");
	CU_ASSERT_EQUAL(u->gid, 0);
	/* getgrouplist: the passwd gid is among the groups */
	CU_ASSERT_FATAL(u->ngroups >= 1);
	CU_ASSERT_EQUAL(u->groups[0], 0);
	CU_ASSERT(u->home[0] == '/');
	CU_ASSERT_EQUAL(usercache_lookup(uc, 0, &again), 0);
	CU_ASSERT_PTR_EQUAL(again, u);
	CU_ASSERT_EQUAL(usercache_lookup(uc, 3999999, &u), -ENOENT);
	usercache_destroy(uc);
	usercache_destroy(NULL);
}

static void test_names(void)
{
	CU_ASSERT(noded_name_valid("n1"));
	CU_ASSERT(noded_name_valid("node-07.rack_2"));
	CU_ASSERT(!noded_name_valid(""));
	CU_ASSERT(!noded_name_valid(".."));
	CU_ASSERT(!noded_name_valid("-v"));
	CU_ASSERT(!noded_name_valid("a/b"));
	CU_ASSERT(!noded_name_valid("a b"));
	CU_ASSERT(noded_name_valid("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk"));
	CU_ASSERT(!noded_name_valid("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl"));
}

/* The real launcher, with a shell script standing in for gded. */
static void test_launch(void)
{
	char *dir = unit_tmpdir();
	char gded[4096], spec[4096], out[4096], buf[256];
	struct error err = { "" };
	struct pollfd pfd;
	siginfo_t info = { 0 };
	pid_t pid = 0;
	int pidfd = -1, notify = -1, fd;
	bool child = false;
	ssize_t n;

	snprintf(gded, sizeof(gded), "%s/gded", dir);
	snprintf(spec, sizeof(spec), "%s/5.json", dir);
	snprintf(out, sizeof(out), "%s/args", dir);
	unit_write_file(dir, "gded", "#!/bin/sh\n"
			"echo \"$# $1 $2 $3 $4 $(ps -o sid= -p $$ | tr -d ' ') $$\" > \"$(dirname \"$2\")/args\"\n"
			"printf x >&3\n"
			"exit 3\n");
	CU_ASSERT_FATAL(chmod(gded, 0755) == 0);

	CU_ASSERT_EQUAL_FATAL(launch_gded(gded, spec, &pid, &pidfd, &notify, &child, &err), 0);
	CU_ASSERT_FATAL(notify >= 0);
	CU_ASSERT_TRUE(child);
	pfd.fd = pidfd;
	pfd.events = POLLIN;
	CU_ASSERT_EQUAL(poll(&pfd, 1, 10000), 1);
	CU_ASSERT_EQUAL(waitid(P_PID, (id_t)pid, &info, WEXITED), 0);
	CU_ASSERT_EQUAL(info.si_code, CLD_EXITED);
	CU_ASSERT_EQUAL(info.si_status, 3);
	close(pidfd);
	/* What the wrapper wrote on its fd 3 is on ours; then the end. */
	CU_ASSERT_EQUAL(read(notify, buf, sizeof(buf)), 1);
	CU_ASSERT_EQUAL(buf[0], 'x');
	CU_ASSERT_EQUAL(read(notify, buf, sizeof(buf)), 0);
	close(notify);
	fd = open(out, O_RDONLY | O_CLOEXEC);
	CU_ASSERT_FATAL(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	{
		/* --spec and the path, --notify 3; a session of its own */
		char expect[4096 + 64];

		snprintf(expect, sizeof(expect), "4 --spec %s --notify 3 %d %d\n", spec, (int)pid, (int)pid);
		CU_ASSERT_STRING_EQUAL(buf, expect);
	}

	snprintf(gded, sizeof(gded), "%s/missing", dir);
	CU_ASSERT_EQUAL(launch_gded(gded, spec, &pid, &pidfd, &notify, &child, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "cannot run"));
	unit_tmpdir_remove(dir);
}

/* job.launch's gpus (node indices) become the spec's GPUs with their
 * device numbers, and gpus_node lists every GPU of the node; an index
 * the node does not have fails the spec in one line (docs/GPUS.md). */
static void test_spec_gpus(void)
{
	static const struct node_gpu gpus[2] = {
		{ .index = 0, .file = "/dev/nvidia0", .major = 195, .minor = 0, .numa = 0 },
		{ .index = 1, .file = "/dev/nvidia1", .major = 195, .minor = 1, .numa = 1 },
	};
	struct spec_node with_gpus = test_node;
	json_t *job = launch_job(), *spec = NULL;
	struct error err = { "" };
	char *text;

	/* A node without GPUs, a job without: the spec has neither key. */
	CU_ASSERT_EQUAL_FATAL(jobfile_spec_build(job, &test_user, &test_node, 300, &spec, &err), 0);
	CU_ASSERT_PTR_NULL(json_object_get(spec, "gpus"));
	CU_ASSERT_PTR_NULL(json_object_get(spec, "gpus_node"));
	json_decref(spec);

	with_gpus.gpus = gpus;
	with_gpus.n_gpus = 2;
	spec = NULL;
	CU_ASSERT_EQUAL_FATAL(jobfile_spec_build(job, &test_user, &with_gpus, 300, &spec, &err), 0);
	CU_ASSERT_PTR_NULL(json_object_get(spec, "gpus"));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(spec, "gpus_node")), 2);
	json_decref(spec);

	json_object_set_new(job, "gpus", json_pack("[i]", 1));
	spec = NULL;
	CU_ASSERT_EQUAL_FATAL(jobfile_spec_build(job, &test_user, &with_gpus, 300, &spec, &err), 0);
	text = json_dumps(json_object_get(spec, "gpus"), JSON_COMPACT | JSON_SORT_KEYS);
	CU_ASSERT_STRING_EQUAL(text, "[{\"file\":\"/dev/nvidia1\",\"index\":1,\"major\":195,\"minor\":1}]");
	free(text);
	text = json_dumps(json_object_get(spec, "gpus_node"), JSON_COMPACT | JSON_SORT_KEYS);
	CU_ASSERT_STRING_EQUAL(text, "[{\"major\":195,\"minor\":0},{\"major\":195,\"minor\":1}]");
	free(text);
	json_decref(spec);

	json_object_set_new(job, "gpus", json_pack("[i, i]", 0, 2));
	spec = NULL;
	CU_ASSERT_EQUAL(jobfile_spec_build(job, &test_user, &with_gpus, 300, &spec, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "job 42: GPU 2: this node has only 2 GPUs");
	CU_ASSERT_PTR_NULL(spec);
	CU_ASSERT_EQUAL(jobfile_spec_build(job, &test_user, &test_node, 300, &spec, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "job 42: GPU 0: this node has 0 GPUs");
	CU_ASSERT_PTR_NULL(spec);
	json_decref(job);
}

/* Shared node files: <name>.<n>, n lines "<name>", 0444, ours, in a 0711
 * directory; made once; a restart sweeps all but such names. A job on
 * this node only gets one in its spec; a multi-node job its own. */
static void test_nodefiles(void)
{
	char *dir = unit_tmpdir(), path[PATH_MAX], want[PATH_MAX], text[64];
	struct spec_node node = test_node;
	struct nodefiles *nf = NULL;
	struct error err = { "" };
	json_t *job = launch_job(), *spec = NULL;
	struct stat st, st2;
	int fd, dirfd;
	ssize_t n;

	CU_ASSERT_EQUAL_FATAL(nodefiles_open(dir, "n1", &nf, &err), 0);
	snprintf(want, sizeof(want), "%s/nodefiles", dir);
	CU_ASSERT_EQUAL_FATAL(stat(want, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0711);
	CU_ASSERT_EQUAL(nodefiles_get(nf, 3, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/nodefiles/n1.3", dir);
	CU_ASSERT_STRING_EQUAL(path, want);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0444);
	CU_ASSERT_EQUAL(st.st_uid, geteuid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(n, 9);
	text[n] = '\0';
	CU_ASSERT_STRING_EQUAL(text, "n1\nn1\nn1\n");
	/* made once: the second ask writes nothing */
	CU_ASSERT_EQUAL(nodefiles_get(nf, 3, path, sizeof(path)), 0);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st2), 0);
	CU_ASSERT_EQUAL(st2.st_ino, st.st_ino);
	CU_ASSERT_EQUAL(nodefiles_get(nf, 0, path, sizeof(path)), -ERANGE);
	CU_ASSERT_EQUAL(nodefiles_get(nf, NODEFILES_NCPUS_MAX + 1, path, sizeof(path)), -ERANGE);
	CU_ASSERT_EQUAL(nodefiles_get(nf, 130, path, sizeof(path)), 0);   /* a bitmap word further */
	CU_ASSERT_EQUAL(stat(path, &st2), 0);
	CU_ASSERT_EQUAL(st2.st_size, 130 * 3);

	/* In a spec: single-node (no alloc, or one entry) shares; two entries do not. */
	node.nodefiles = nf;
	CU_ASSERT_EQUAL_FATAL(jobfile_spec_build(job, &test_user, &node, 300, &spec, &err), 0);
	snprintf(want, sizeof(want), "%s/nodefiles/n1.2", dir);
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "nodefile"), want);
	CU_ASSERT_TRUE(json_is_true(json_object_get(spec, "nodefile_shared")));
	json_decref(spec);
	json_object_set_new(job, "alloc", json_pack("[{s:s, s:i}]", "node", "n1", "ncpus", 2));
	CU_ASSERT_EQUAL_FATAL(jobfile_spec_build(job, &test_user, &node, 300, &spec, &err), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "nodefile"), want);
	json_decref(spec);
	json_object_set_new(job, "alloc", json_pack("[{s:s, s:i}, {s:s, s:i}]", "node", "n1", "ncpus", 2,
						    "node", "n2", "ncpus", 2));
	CU_ASSERT_EQUAL_FATAL(jobfile_spec_build(job, &test_user, &node, 300, &spec, &err), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(spec, "nodefile"), "/var/lib/qpool/nodes/n1/jobs/42.nodes");
	CU_ASSERT_PTR_NULL(json_object_get(spec, "nodefile_shared"));
	json_decref(spec);
	nodefiles_close(nf);

	/* A restart keeps n1.<n> and sweeps the rest. */
	snprintf(want, sizeof(want), "%s/nodefiles", dir);
	dirfd = open_dir(want);
	close(openat(dirfd, ".tmp.5", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	close(openat(dirfd, "n1.07", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	close(openat(dirfd, "n2.1", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	CU_ASSERT_EQUAL_FATAL(nodefiles_open(dir, "n1", &nf, &err), 0);
	CU_ASSERT_EQUAL(fstatat(dirfd, "n1.3", &st, 0), 0);
	CU_ASSERT_EQUAL(fstatat(dirfd, "n1.130", &st, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, ".tmp.5", &st, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "n1.07", &st, 0), 0);
	CU_ASSERT_NOT_EQUAL(fstatat(dirfd, "n2.1", &st, 0), 0);
	/* A name that cannot name a file of its own (main.c checks the rest). */
	CU_ASSERT_EQUAL(nodefiles_open(dir, "../n1", &nf, &err) < 0, true);
	CU_ASSERT_EQUAL(nodefiles_open(dir, ".n1", &nf, &err) < 0, true);
	CU_ASSERT_EQUAL(nodefiles_open(dir, "", &nf, &err) < 0, true);
	nodefiles_close(nf);
	close(dirfd);
	json_decref(job);
	unit_tmpdir_remove(dir);
}

static const struct unit_test noded_files_tests[] = {
	{ "spec_build", test_spec_build },
	{ "spec_gpus", test_spec_gpus },
	{ "write", test_write },
	{ "result", test_result },
	{ "ids_and_remove", test_ids_and_remove },
	{ "spares", test_spares },
	{ "nodefiles", test_nodefiles },
	{ "cmdline_match", test_cmdline_match },
	{ "proc_scan", test_proc_scan },
	{ "rt_check", test_rt_check },
	{ "users", test_users },
	{ "names", test_names },
	{ "launch", test_launch },
	{ NULL, NULL },
};

UNIT_SUITE(noded_files, noded_files_tests);
