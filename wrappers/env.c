/* SPDX-License-Identifier: MIT */
/* The job's environment: the submitter's variables plus the PBS/qpool set. */
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gded-internal.h"
#include "jobid.h"

/* The array being built, and an index from name to slot so that
 * replacing a name costs O(1): with a scan per variable, 75,000
 * variables took 14 s of root's time per job (O(n^2) strncmp). */
struct envlist {
	char **v;
	size_t n;
	size_t cap;
	size_t *slot;    /* open addressing: index + 1 into v, 0 empty */
	size_t nslot;    /* a power of two, at least twice n */
};

static size_t name_len(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq ? (size_t)(eq - s) : strlen(s);
}

/* FNV-1a over the name. */
static size_t name_hash(const char *name, size_t len)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 1099511628211ULL;
	}
	return (size_t)h;
}

/* The slot of name in the index: the one holding it, or the empty one
 * where it would go. */
static size_t *env_slot(const struct envlist *e, const char *name, size_t len)
{
	size_t mask = e->nslot - 1, i = name_hash(name, len) & mask;

	for (;; i = (i + 1) & mask) {
		size_t *s = &e->slot[i];

		if (*s == 0)
			return s;
		if (strncmp(e->v[*s - 1], name, len) == 0 && e->v[*s - 1][len] == '=')
			return s;
	}
}

/* Doubles the index (and rehashes) when it would pass half full. */
static int env_index_grow(struct envlist *e)
{
	size_t nslot = e->nslot ? e->nslot * 2 : 64;
	size_t *old = e->slot;

	if (e->nslot && (e->n + 1) * 2 <= e->nslot)
		return 0;
	e->slot = calloc(nslot, sizeof(size_t));
	if (!e->slot) {
		e->slot = old;
		return -1;
	}
	e->nslot = nslot;
	for (size_t i = 0; i < e->n; i++)
		*env_slot(e, e->v[i], name_len(e->v[i])) = i + 1;
	free(old);
	return 0;
}

/* Sets name=value, replacing an earlier entry of the same name in its
 * place. */
static int env_set(struct envlist *e, const char *name, const char *value);

static int env_set_cb(void *e, const char *name, const char *value)
{
	return env_set(e, name, value);
}

static bool env_has_cb(const void *e, const char *name);

static int env_set(struct envlist *e, const char *name, const char *value)
{
	size_t len = strlen(name), *slot;
	char *s;

	if (env_index_grow(e) < 0 || asprintf(&s, "%s=%s", name, value) < 0)
		return -1;
	slot = env_slot(e, name, len);
	if (*slot) {
		free(e->v[*slot - 1]);
		e->v[*slot - 1] = s;
		return 0;
	}
	if (e->n + 2 > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 32;
		char **v = realloc(e->v, cap * sizeof(char *));

		if (!v) {
			free(s);
			return -1;
		}
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
	*slot = e->n;
	return 0;
}

static bool env_has(const struct envlist *e, const char *name)
{
	return e->nslot && *env_slot(e, name, strlen(name)) != 0;
}

static bool env_has_cb(const void *e, const char *name)
{
	return env_has(e, name);
}

/* The GPU variables name this node's GPUs of the job (wrappers/gpus.c):
 * never the submitter's, never the first node's in a task's. */
static bool env_gpu_name(const char *name, size_t len)
{
	static const char *const gpu[] = {
		"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
		"SLURM_JOB_GPUS",
	};

	for (size_t i = 0; i < sizeof(gpu) / sizeof(gpu[0]); i++)
		if (strlen(gpu[i]) == len && strncmp(name, gpu[i], len) == 0)
			return true;
	return false;
}

char **gded_env_build(const struct gded_job *job, const char *tmpdir)
{
	struct envlist e = { 0 };
	char id[24], pbs_id[24 + 72], ncpus[24], np_text[24], gpufile[PATH_MAX];
	const char *nodefile = job->nodefile ? job->nodefile : "";
	bool fail = false;

	snprintf(id, sizeof(id), "%" PRIu64, job->jobid);
	snprintf(ncpus, sizeof(ncpus), "%" PRIu64, job->ncpus);
	/* A subjob is ID[N].server to PBS tools; qpool's own id stays the
	 * subjob's number (QPOOL_JOBID, its files, TMPDIR). */
	if (job->array_id)
		jobid_format_array((int64_t)job->array_id, (int64_t)job->array_index, job->server, pbs_id,
				   sizeof(pbs_id));
	else
		jobid_format((int64_t)job->jobid, job->server, pbs_id, sizeof(pbs_id));
	for (char **p = job->env; p && *p; p++) {
		char *eq = strchr(*p, '=');
		char name[256];

		if (!eq || (size_t)(eq - *p) >= sizeof(name) || env_gpu_name(*p, (size_t)(eq - *p)))
			continue;
		memcpy(name, *p, (size_t)(eq - *p));
		name[eq - *p] = '\0';
		fail |= env_set(&e, name, eq + 1) < 0;
	}
	/* PATH: the submitter's own (qsub -V or -v PATH) wins; else the PATH
	 * qsub ran with (PBS_O_PATH), so what the user runs by hand, qstat
	 * included, is found in the job too; else a fixed one. */
	if (!env_has(&e, "PATH")) {
		const char *o = NULL;

		for (char **p = job->env; p && *p && !o; p++)
			if (strncmp(*p, "PBS_O_PATH=", 11) == 0)
				o = *p + 11;
		fail |= env_set(&e, "PATH", o && *o ? o : GDED_PATH_DEFAULT) < 0;
	}
	/* Where qsub ran: qsub sets PBS_O_WORKDIR; a spec without it (an
	 * older qsub, gded by hand) has the job's directory. */
	if (!env_has(&e, "PBS_O_WORKDIR"))
		fail |= env_set(&e, "PBS_O_WORKDIR", job->workdir) < 0;
	if (!env_has(&e, "PBS_O_QUEUE"))
		fail |= env_set(&e, "PBS_O_QUEUE", job->queue) < 0;
	/* Everything below is the batch system's word and overrides what
	 * the submitter passed. */
	fail |= env_set(&e, "HOME", job->home) < 0;
	fail |= env_set(&e, "USER", job->user) < 0;
	fail |= env_set(&e, "LOGNAME", job->user) < 0;
	fail |= env_set(&e, "SHELL", job->shell) < 0;
	fail |= env_set(&e, "QPOOL_JOBID", id) < 0;
	fail |= env_set(&e, "QPOOL_QUEUE", job->queue) < 0;
	fail |= env_set(&e, "QPOOL_NODEFILE", nodefile) < 0;
	fail |= env_set(&e, "NCPUS", ncpus) < 0;
	fail |= env_set(&e, "OMP_NUM_THREADS", job->ompthreads ? job->ompthreads : ncpus) < 0;
	fail |= env_set(&e, "PBS_JOBID", pbs_id) < 0;
	fail |= env_set(&e, "PBS_JOBNAME", job->name) < 0;
	fail |= env_set(&e, "PBS_JOBDIR", job->workdir) < 0;
	fail |= env_set(&e, "PBS_NODEFILE", nodefile) < 0;
	fail |= env_set(&e, "PBS_QUEUE", job->queue) < 0;
	fail |= env_set(&e, "PBS_ENVIRONMENT", job->interactive ? "PBS_INTERACTIVE" : "PBS_BATCH") < 0;
	fail |= env_set(&e, "ENVIRONMENT", job->interactive ? "INTERACTIVE" : "BATCH") < 0;
	/* Torque's counts, PBS Pro's node number and first task (the
	 * script; tasks get theirs from the control socket): from the alloc
	 * of a job across nodes or of a one-node job with MPI slots or
	 * threads of its own; else a slot a CPU. */
	if (job->nalloc) {
		const struct gded_alloc *me = &job->alloc[job->node_index];
		uint64_t np = 0, omp = me->ompthreads;
		char n[24], ppn[24], nodenum[24], ompn[24];

		for (size_t i = 0; i < job->nalloc; i++)
			np += job->alloc[i].mpiprocs;
		if (omp == 0 && job->ompthreads)
			omp = strtoull(job->ompthreads, NULL, 10);
		if (omp == 0)
			omp = me->mpiprocs ? job->ncpus / me->mpiprocs : job->ncpus;
		if (omp == 0)
			omp = 1;
		snprintf(n, sizeof(n), "%zu", job->nalloc);
		snprintf(ppn, sizeof(ppn), "%" PRIu64, job->alloc[0].mpiprocs);
		snprintf(nodenum, sizeof(nodenum), "%" PRIu64, job->node_index);
		snprintf(np_text, sizeof(np_text), "%" PRIu64, np);
		snprintf(ompn, sizeof(ompn), "%" PRIu64, omp);
		fail |= env_set(&e, "OMP_NUM_THREADS", ompn) < 0;
		fail |= env_set(&e, "PBS_NP", np_text) < 0;
		fail |= env_set(&e, "PBS_NUM_PPN", ppn) < 0;
		fail |= env_set(&e, "PBS_NUM_NODES", n) < 0;
		fail |= env_set(&e, "PBS_NODENUM", nodenum) < 0;
		fail |= env_set(&e, "PBS_VNODENUM", nodenum) < 0;
		if (me->addr)
			fail |= env_set(&e, "QPOOL_NODE_ADDR", me->addr) < 0;
	} else {
		fail |= env_set(&e, "PBS_NP", ncpus) < 0;
		fail |= env_set(&e, "PBS_NUM_PPN", ncpus) < 0;
		fail |= env_set(&e, "PBS_NUM_NODES", "1") < 0;
		fail |= env_set(&e, "PBS_NODENUM", "0") < 0;
		fail |= env_set(&e, "PBS_VNODENUM", "0") < 0;
	}
	fail |= env_set(&e, "PBS_TASKNUM", "1") < 0;
	if (job->task_socket)
		fail |= env_set(&e, "QPOOL_TASK_SOCKET", job->task_socket) < 0;
	if (job->hwloc_xml)
		fail |= env_set(&e, "QPOOL_HWLOC_XML", job->hwloc_xml) < 0;
	if (job->server)
		fail |= env_set(&e, "PBS_SERVER", job->server) < 0;
	if (job->array_id) {
		char index[24], array[24 + 72];

		snprintf(index, sizeof(index), "%" PRIu64, job->array_index);
		jobid_format_array((int64_t)job->array_id, JOBID_ARRAY_ALL, job->server, array, sizeof(array));
		fail |= env_set(&e, "PBS_ARRAY_INDEX", index) < 0;   /* PBS Pro */
		fail |= env_set(&e, "PBS_ARRAY_ID", array) < 0;
		fail |= env_set(&e, "PBS_ARRAYID", index) < 0;       /* Torque */
	}
	if (tmpdir)
		fail |= env_set(&e, "TMPDIR", tmpdir) < 0;
	fail |= gded_gpuenv_add(job, gded_gpufile_path(job, gpufile, sizeof(gpufile)) == 0 ?
				gpufile : NULL, env_set_cb, &e) < 0;
	fail |= gded_slurmenv_add(job, env_has_cb, env_set_cb, &e) < 0;
	fail |= gded_mpienv_add(job, env_has_cb, env_set_cb, &e) < 0;
	free(e.slot);
	if (fail) {
		gded_env_free(e.v);
		return NULL;
	}
	return e.v;
}

/* The batch system's own variables whose value is this node's: a task's
 * requested environment (qexec's, from the first node) never replaces
 * them. PBS_* and QPOOL_* are all the batch system's word, but
 * PBS_TASKNUM, which is the task's. */
static bool env_node_own(const char *name)
{
	if (strcmp(name, "PBS_TASKNUM") == 0)
		return false;
	static const char *const own[] = {
		"TMPDIR", "HOME", "USER", "LOGNAME", "SHELL", "HOSTNAME",
		"NCPUS",                                               /* this node's share */
		"SLURM_NODEID", "SLURMD_NODENAME", "SLURM_CPUS_ON_NODE", "SLURM_MEM_PER_NODE",
		"OMPI_MCA_orte_default_hostfile", "HYDRA_HOST_FILE",   /* the node's nodefile */
	};

	if (strncmp(name, "PBS_", 4) == 0 || strncmp(name, "QPOOL_", 6) == 0 ||
	    env_gpu_name(name, strlen(name)))
		return true;
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(name, own[i]) == 0)
			return true;
	return false;
}

char **gded_env_task(char *const *base, const json_t *over, const char *tasknum)
{
	struct envlist e = { 0 };
	const char *key;
	json_t *v;
	bool fail = false;

	for (char *const *p = base; p && *p && !fail; p++) {
		const char *eq = strchr(*p, '=');
		char name[256];

		if (!eq || (size_t)(eq - *p) >= sizeof(name))
			continue;
		memcpy(name, *p, (size_t)(eq - *p));
		name[eq - *p] = '\0';
		fail |= env_set(&e, name, eq + 1) < 0;
	}
	fail |= env_set(&e, "PBS_TASKNUM", tasknum) < 0;
	/* The caller checked every name and value. */
	json_object_foreach((json_t *)over, key, v)
		if (!fail && json_is_string(v) && !env_node_own(key))
			fail |= env_set(&e, key, json_string_value(v)) < 0;
	free(e.slot);
	if (fail || !e.v) {
		gded_env_free(e.v);
		return NULL;
	}
	return e.v;
}

void gded_env_free(char **env)
{
	if (!env)
		return;
	for (char **p = env; *p; p++)
		free(*p);
	free(env);
}
