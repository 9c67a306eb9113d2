/* SPDX-License-Identifier: MIT */
/* Slurm's job variables (SLURM_*), beside the PBS ones, whichever front
 * end submitted the job: what scripts and tools written for Slurm read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gded.h"
#include "hostlist.h"
#include "parse.h"

/* The value of name in the job's spec environment, or NULL. */
static const char *spec_env(const struct gded_job *job, const char *name)
{
	size_t n = strlen(name);

	for (char **p = job->env; p && *p; p++)
		if (!strncmp(*p, name, n) && (*p)[n] == '=')
			return *p + n + 1;
	return NULL;
}

int gded_slurmenv_add(const struct gded_job *job, gded_env_has_f has, gded_env_set_f set, void *e)
{
	size_t nnodes = job->nalloc > 1 ? job->nalloc : 1;
	const char **names = calloc(nnodes, sizeof(char *));
	uint64_t *tasks = calloc(nnodes, sizeof(uint64_t)), *cpus = calloc(nnodes, sizeof(uint64_t));
	uint64_t ntasks = 0, mem = job->mem, cpn = job->ncpus;
	const char *v;
	char *list = NULL, *tpn = NULL, *cpj = NULL;
	char id[24], n[24], uid[24], gid[24], nt[24], on[24], memtext[24], nodeid[24];
	size_t l1, l2, l3;
	int k, r = -1;

	if (!names || !tasks || !cpus)
		goto done;
	if (job->nalloc > 1) {
		for (size_t i = 0; i < job->nalloc; i++) {
			names[i] = job->alloc[i].node;
			tasks[i] = job->alloc[i].mpiprocs;
			cpus[i] = job->alloc[i].ncpus;
			ntasks += tasks[i];
		}
		mem = job->alloc[job->node_index].mem;
		cpn = job->alloc[job->node_index].ncpus;
	} else {
		/* One node: sbatch's --ntasks, else a task per --cpus-per-task
		 * CPUs, else (qsub) as PBS_NP counts them: a task per MPI slot
		 * of its alloc, when it has one (mpiprocs), else per CPU. */
		uint64_t cpt = (v = spec_env(job, "SLURM_CPUS_PER_TASK")) ? strtoull(v, NULL, 10) : 0;

		struct cpumask held;

		names[0] = job->node ? job->node : "";
		cpus[0] = job->ncpus;
		/* sbatch --exclusive: every free CPU of the node, more than
		 * it asked for; its tasks stay what it asked for. */
		if (job->cpus && cpumask_parse(job->cpus, &held) == 0 && cpumask_count(&held) > job->ncpus)
			cpus[0] = cpn = cpumask_count(&held);
		v = spec_env(job, "SLURM_NTASKS");
		ntasks = v ? strtoull(v, NULL, 10) : cpt ? job->ncpus / cpt :
			 job->nalloc == 1 ? job->alloc[0].mpiprocs : job->ncpus;
		if (ntasks == 0)
			ntasks = 1;
		tasks[0] = ntasks;
	}
	k = hostlist_compress_ordered(names, nnodes, NULL, 0);
	if (k < 0)
		goto done;
	l1 = (size_t)k + 1;
	l2 = (size_t)hostlist_counts_format(tasks, nnodes, NULL, 0) + 1;
	l3 = (size_t)hostlist_counts_format(cpus, nnodes, NULL, 0) + 1;
	list = malloc(l1);
	tpn = malloc(l2);
	cpj = malloc(l3);
	if (!list || !tpn || !cpj)
		goto done;
	hostlist_compress_ordered(names, nnodes, list, l1);
	hostlist_counts_format(tasks, nnodes, tpn, l2);
	hostlist_counts_format(cpus, nnodes, cpj, l3);
	snprintf(id, sizeof(id), "%" PRIu64, job->jobid);
	snprintf(n, sizeof(n), "%zu", nnodes);
	snprintf(uid, sizeof(uid), "%u", (unsigned)job->uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned)job->gid);
	snprintf(nt, sizeof(nt), "%" PRIu64, ntasks);
	snprintf(on, sizeof(on), "%" PRIu64, cpn);
	snprintf(memtext, sizeof(memtext), "%" PRIu64, mem >> 20);
	snprintf(nodeid, sizeof(nodeid), "%" PRIu64, job->node_index);

	const struct {
		const char *name, *value;
		bool request;   /* sbatch's word, when it sent one */
	} vars[] = {
		{ "SLURM_JOB_ID", id, false },
		{ "SLURM_JOBID", id, false },
		{ "SLURM_JOB_NAME", job->name, false },
		{ "SLURM_JOB_PARTITION", job->queue, false },
		{ "SLURM_JOB_USER", job->user, false },
		{ "SLURM_JOB_UID", uid, false },
		{ "SLURM_JOB_GID", gid, false },
		{ "SLURM_JOB_NODELIST", list, false },
		{ "SLURM_NODELIST", list, false },
		{ "SLURM_JOB_NUM_NODES", n, false },
		{ "SLURM_NNODES", n, false },
		{ "SLURM_NODEID", nodeid, false },
		{ "SLURMD_NODENAME", names[job->nalloc > 1 ? job->node_index : 0], false },
		{ "SLURM_CPUS_ON_NODE", on, false },
		{ "SLURM_JOB_CPUS_PER_NODE", cpj, false },
		{ "SLURM_TASKS_PER_NODE", tpn, false },
		{ "SLURM_NTASKS", nt, true },
		{ "SLURM_NPROCS", nt, true },
		{ "SLURM_MEM_PER_NODE", mem ? memtext : NULL, false },
		{ "SLURM_SUBMIT_DIR", (v = spec_env(job, "PBS_O_WORKDIR")) ? v : job->workdir, false },
		{ "SLURM_SUBMIT_HOST", (v = spec_env(job, "PBS_O_HOST")) ? v : names[0], false },
	};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if (!vars[i].value || (vars[i].request && has(e, vars[i].name) && spec_env(job, vars[i].name)))
			continue;
		if (set(e, vars[i].name, vars[i].value) < 0)
			goto done;
	}
	if (job->array_id) {
		char a[24], x[24];

		snprintf(a, sizeof(a), "%" PRIu64, job->array_id);
		snprintf(x, sizeof(x), "%" PRIu64, job->array_index);
		if (set(e, "SLURM_ARRAY_JOB_ID", a) < 0 || set(e, "SLURM_ARRAY_TASK_ID", x) < 0)
			goto done;
	}
	r = 0;
done:
	free(names);
	free(tasks);
	free(cpus);
	free(list);
	free(tpn);
	free(cpj);
	return r;
}
