/* SPDX-License-Identifier: MIT */
/* The job's environment: the submitter's variables plus the PBS/qpool set. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gded.h"

struct envlist {
	char **v;
	size_t n;
	size_t cap;
};

/* Sets name=value, replacing an earlier entry of the same name. */
static int env_set(struct envlist *e, const char *name, const char *value)
{
	size_t len = strlen(name);
	char *s;

	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -1;
	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=') {
			free(e->v[i]);
			e->v[i] = s;
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
	return 0;
}

static bool env_has(const struct envlist *e, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=')
			return true;
	return false;
}

char **gded_env_build(const struct gded_job *job)
{
	struct envlist e = { 0 };
	char id[24], ncpus[24];
	const char *nodefile = job->nodefile ? job->nodefile : "";
	bool fail = false;

	snprintf(id, sizeof(id), "%" PRIu64, job->jobid);
	snprintf(ncpus, sizeof(ncpus), "%" PRIu64, job->ncpus);
	for (char **p = job->env; p && *p; p++) {
		char *eq = strchr(*p, '=');
		char name[256];

		if (!eq || (size_t)(eq - *p) >= sizeof(name))
			continue;
		memcpy(name, *p, (size_t)(eq - *p));
		name[eq - *p] = '\0';
		fail |= env_set(&e, name, eq + 1) < 0;
	}
	/* The submitter's PATH wins (qsub -V); everything else below is the
	 * batch system's word and overrides what the submitter passed. */
	if (!env_has(&e, "PATH"))
		fail |= env_set(&e, "PATH", GDED_PATH_DEFAULT) < 0;
	fail |= env_set(&e, "HOME", job->home) < 0;
	fail |= env_set(&e, "USER", job->user) < 0;
	fail |= env_set(&e, "LOGNAME", job->user) < 0;
	fail |= env_set(&e, "SHELL", job->shell) < 0;
	fail |= env_set(&e, "QPOOL_JOBID", id) < 0;
	fail |= env_set(&e, "QPOOL_QUEUE", job->queue) < 0;
	fail |= env_set(&e, "QPOOL_NODEFILE", nodefile) < 0;
	fail |= env_set(&e, "NCPUS", ncpus) < 0;
	fail |= env_set(&e, "OMP_NUM_THREADS", ncpus) < 0;
	fail |= env_set(&e, "PBS_JOBID", id) < 0;
	fail |= env_set(&e, "PBS_JOBNAME", job->name) < 0;
	fail |= env_set(&e, "PBS_O_WORKDIR", job->workdir) < 0;
	fail |= env_set(&e, "PBS_NODEFILE", nodefile) < 0;
	fail |= env_set(&e, "PBS_QUEUE", job->queue) < 0;
	fail |= env_set(&e, "PBS_ENVIRONMENT", "PBS_BATCH") < 0;
	if (fail) {
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
