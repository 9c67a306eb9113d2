/* SPDX-License-Identifier: MIT */
/* What MPI's own launchers read, set in the job so that a plain mpirun or
 * mpiexec starts its ranks on the job's nodes through qpool-rsh. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exe.h"
#include "gded.h"

/* qpool-rsh: beside gded (a build tree), else in ../bin (gded is in
 * sbindir, the commands in bindir), else by name from the job's PATH. */
static void agent_find(char *buf, size_t len)
{
	char dir[PATH_MAX];
	char *slash;

	if (exe_sibling("qpool-rsh", buf, len) == 0 && access(buf, X_OK) == 0)
		return;
	if (exe_sibling("", dir, sizeof(dir)) == 0) {
		dir[strlen(dir) - (dir[strlen(dir) - 1] == '/')] = '\0';
		slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(buf, len, "%s/bin/qpool-rsh", dir) < len && access(buf, X_OK) == 0)
				return;
		}
	}
	snprintf(buf, len, "qpool-rsh");
}

/* Found once a process: the resident launcher finds it before its first
 * fork (gded_mpienv_prepare), so a wrapper reads /proc/self/exe and
 * probes the paths no more (issue 39: 3.5% of a wrapper's CPU). */
static char agent[PATH_MAX];

void gded_mpienv_prepare(void)
{
	if (!agent[0])
		agent_find(agent, sizeof(agent));
}

int gded_mpienv_add(const struct gded_job *job, gded_env_has_f has, gded_env_set_f set, void *e)
{
	const char *nodefile = job->nodefile;
	struct {
		const char *name, *value;
	} vars[] = {
		/* Open MPI (Debian's has no tm module to read PBS itself,
		 * ompi_info lists plm isolated, rsh, slurm): start orted
		 * through the agent, take the hosts from the node file. */
		{ "OMPI_MCA_plm_rsh_agent", agent },
		{ "OMPI_MCA_orte_default_hostfile", nodefile },
		/* mpirun starts every node's orted itself: one hop through
		 * qpoold each, not a tree of agents called from orteds. */
		{ "OMPI_MCA_plm_rsh_no_tree_spawn", "1" },
		/* The job has SLURM_JOBID (wrappers/slurmenv.c), which makes
		 * Open MPI's slurm launcher take over and call srun: rsh it is. */
		{ "OMPI_MCA_plm", "rsh" },
		/* Its default transport probing costs ~200 ms per MPI_Init
		 * here (measured: mpirun -n 2 hello 385 ms, 158 with ob1);
		 * ARCHITECTURE.md, "MPI inside a job", says why ob1. */
		{ "OMPI_MCA_pml", "ob1" },
		/* MPICH's hydra: its rsh launcher is the agent. */
		{ "HYDRA_LAUNCHER", "rsh" },
		{ "HYDRA_LAUNCHER_EXEC", agent },
		{ "HYDRA_HOST_FILE", nodefile },
	};

	if (!nodefile || !*nodefile)
		return 0;
	gded_mpienv_prepare();
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (!has(e, vars[i].name) && set(e, vars[i].name, vars[i].value) < 0)
			return -1;
	return 0;
}
