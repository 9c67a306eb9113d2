/* SPDX-License-Identifier: MIT */
/* qnoded's remote starts: which job a caller is in, from a fake /proc and cgroup tree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noded.h"
#include "unit.h"

/* A node n1 under parent qpool, its /proc and cgroup root in dir. */
static void node_fake(struct noded *nd, struct config *c, const char *dir, enum cgroup_mode mode,
		      const char *root_suffix)
{
	static char proc[4096];

	memset(nd, 0, sizeof(*nd));
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(c->cgroup_root, sizeof(c->cgroup_root), "%s/cg%s", dir, root_suffix);
	nd->config = c;
	nd->name = "n1";
	nd->proc_root = proc;
	nd->cgroup_mode = mode;
	snprintf(nd->cgroup_parent, sizeof(nd->cgroup_parent), "qpool/n1");
}

static void test_job_of_pid_v1(void)
{
	char *dir = unit_tmpdir();
	struct config *c = calloc(1, sizeof(*c));
	struct noded nd;
	int64_t id = 0;

	node_fake(&nd, c, dir, CGROUP_MODE_V1, "");
	/* In job 12's groups, listed in its memory group's cgroup.procs. */
	unit_write_file(dir, "proc/100/cgroup",
			"6:cpuset:/qpool/n1/job.12\n4:memory:/qpool/n1/job.12\n1:name=systemd:/\n0::/\n");
	unit_write_file(dir, "cg/memory/qpool/n1/job.12/cgroup.procs", "99\n100\n");
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 100, &id), 0);
	CU_ASSERT_EQUAL(id, 12);
	/* Its /proc says job 12, the group does not list it. */
	unit_write_file(dir, "proc/101/cgroup", "4:memory:/qpool/n1/job.12\n");
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 101, &id), -ESRCH);
	/* Another node's job, a name that only starts like one, no job. */
	unit_write_file(dir, "proc/102/cgroup", "4:memory:/qpool/n2/job.12\n");
	unit_write_file(dir, "cg/memory/qpool/n2/job.12/cgroup.procs", "102\n");
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 102, &id), -ESRCH);
	unit_write_file(dir, "proc/103/cgroup", "4:memory:/qpool/n1/job.12x\n");
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 103, &id), -ESRCH);
	unit_write_file(dir, "proc/104/cgroup", "4:memory:/user.slice\n");
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 104, &id), -ESRCH);
	/* Only the memory line counts (a realtime job's v1 cpu group is shared). */
	unit_write_file(dir, "proc/105/cgroup", "2:cpu:/qpool/n1/job.12\n4:memory:/\n");
	unit_write_file(dir, "cg/cpu/qpool/n1/job.12/cgroup.procs", "105\n");
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 105, &id), -ESRCH);
	/* No such process. */
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 999, &id), -ESRCH);
	nd.cgroup_mode = CGROUP_MODE_NONE;
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 100, &id), -EOPNOTSUPP);
	free(c);
	unit_tmpdir_remove(dir);
}

static void test_job_of_pid_v2(void)
{
	char *dir = unit_tmpdir();
	struct config *c = calloc(1, sizeof(*c));
	struct noded nd;
	int64_t id = 0;

	/* Node groups under a delegated base: cgroup_root is <mount>/base. */
	node_fake(&nd, c, dir, CGROUP_MODE_V2, "/base");
	unit_write_file(dir, "proc/200/cgroup", "0::/base/qpool/n1/job.7\n");
	unit_write_file(dir, "cg/base/qpool/n1/job.7/cgroup.procs", "200\n");
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 200, &id), 0);
	CU_ASSERT_EQUAL(id, 7);
	/* A look-alike in a user's delegated subtree: not listed in ours. */
	unit_write_file(dir, "proc/201/cgroup", "0::/user.slice/user@1000.service/qpool/n1/job.7\n");
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 201, &id), -ESRCH);
	/* A sub-group of the job's group counts as the job. */
	unit_write_file(dir, "proc/202/cgroup", "0::/base/qpool/n1/job.7/task\n");
	unit_write_file(dir, "cg/base/qpool/n1/job.7/task/cgroup.procs", "202\n");
	CU_ASSERT_EQUAL(tasks_job_of_pid(&nd, 202, &id), 0);
	CU_ASSERT_EQUAL(id, 7);
	free(c);
	unit_tmpdir_remove(dir);
}

static const struct unit_test noded_tasks_tests[] = {
	{ "job_of_pid_v1", test_job_of_pid_v1 },
	{ "job_of_pid_v2", test_job_of_pid_v2 },
	{ NULL, NULL },
};

UNIT_SUITE(noded_tasks, noded_tasks_tests);
