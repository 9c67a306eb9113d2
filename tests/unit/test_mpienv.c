/* SPDX-License-Identifier: MIT */
/* The MPI launcher variables in a job's environment (wrappers/mpienv.c). */
#include <string.h>

#include "gded.h"
#include "unit.h"

static const char *env_get(char **env, const char *name)
{
	size_t len = strlen(name);

	for (char **p = env; *p; p++)
		if (strncmp(*p, name, len) == 0 && (*p)[len] == '=')
			return *p + len + 1;
	return NULL;
}

static void test_mpienv_defaults(void)
{
	struct gded_job job = {
		.jobid = 3, .name = "mpi", .queue = "q", .user = "ann", .home = "/h", .shell = "/bin/sh",
		.workdir = "/w", .ncpus = 2, .nodefile = "/state/nodes/n1/jobs/3.nodes",
	};
	char **env = gded_env_build(&job, NULL);
	const char *agent;

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	agent = env_get(env, "OMPI_MCA_plm_rsh_agent");
	CU_ASSERT_PTR_NOT_NULL_FATAL(agent);
	/* Beside the running program, in ../bin, or by name: always qpool-rsh. */
	CU_ASSERT_STRING_EQUAL(strrchr(agent, '/') ? strrchr(agent, '/') + 1 : agent, "qpool-rsh");
	CU_ASSERT_STRING_EQUAL(env_get(env, "HYDRA_LAUNCHER_EXEC"), agent);
	CU_ASSERT_STRING_EQUAL(env_get(env, "HYDRA_LAUNCHER"), "rsh");
	CU_ASSERT_STRING_EQUAL(env_get(env, "OMPI_MCA_orte_default_hostfile"), job.nodefile);
	CU_ASSERT_STRING_EQUAL(env_get(env, "HYDRA_HOST_FILE"), job.nodefile);
	CU_ASSERT_STRING_EQUAL(env_get(env, "OMPI_MCA_pml"), "ob1");
	CU_ASSERT_STRING_EQUAL(env_get(env, "OMPI_MCA_plm_rsh_no_tree_spawn"), "1");
	gded_env_free(env);
}

static void test_mpienv_user_wins(void)
{
	char *vars[] = { "OMPI_MCA_pml=ucx", "HYDRA_LAUNCHER=ssh", "OMPI_MCA_plm_rsh_agent=/opt/my-rsh", NULL };
	struct gded_job job = {
		.jobid = 4, .name = "mpi", .queue = "q", .user = "ann", .home = "/h", .shell = "/bin/sh",
		.workdir = "/w", .ncpus = 2, .nodefile = "/state/4.nodes", .env = vars,
	};
	char **env = gded_env_build(&job, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_STRING_EQUAL(env_get(env, "OMPI_MCA_pml"), "ucx");
	CU_ASSERT_STRING_EQUAL(env_get(env, "HYDRA_LAUNCHER"), "ssh");
	CU_ASSERT_STRING_EQUAL(env_get(env, "OMPI_MCA_plm_rsh_agent"), "/opt/my-rsh");
	/* What the user did not set is still set. */
	CU_ASSERT_STRING_EQUAL(env_get(env, "HYDRA_HOST_FILE"), "/state/4.nodes");
	gded_env_free(env);
}

static void test_mpienv_no_nodefile(void)
{
	struct gded_job job = {
		.jobid = 5, .name = "n", .queue = "q", .user = "ann", .home = "/h", .shell = "/bin/sh",
		.workdir = "/w", .ncpus = 1,
	};
	char **env = gded_env_build(&job, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_PTR_NULL(env_get(env, "OMPI_MCA_plm_rsh_agent"));
	CU_ASSERT_PTR_NULL(env_get(env, "HYDRA_HOST_FILE"));
	gded_env_free(env);
}

static const struct unit_test mpienv_tests[] = {
	{ "defaults", test_mpienv_defaults },
	{ "the job's own values win", test_mpienv_user_wins },
	{ "nothing without a node file", test_mpienv_no_nodefile },
	{ NULL, NULL },
};

UNIT_SUITE(mpienv, mpienv_tests);
