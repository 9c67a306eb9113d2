/* SPDX-License-Identifier: MIT */
/* The submit request from a jobspec (client/jobsubmit.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "arrayspec.h"
#include "jobsubmit.h"

/* Slurm's array variables, whichever front end submitted (qsub -J and
 * -t, sbatch --array): the set's first and last index, its count, and
 * its step when it is one stepped range (else 1, as Slurm has it). */
static void array_env(const char *array, json_t *env)
{
	struct arrayspec a;
	struct error err;
	char text[4][24];

	if (!json_is_object(env) || arrayspec_parse(array, 't', true, &a, &err) < 0 || a.count < 1)
		return;
	snprintf(text[0], sizeof(text[0]), "%" PRId64, arrayspec_index(&a, 0));
	snprintf(text[1], sizeof(text[1]), "%" PRId64, arrayspec_index(&a, a.count - 1));
	snprintf(text[2], sizeof(text[2]), "%" PRId64, (int64_t)a.count);
	snprintf(text[3], sizeof(text[3]), "%" PRId64, a.n == 1 ? a.r[0].step : (int64_t)1);
	json_object_set_new(env, "SLURM_ARRAY_TASK_MIN", json_string(text[0]));
	json_object_set_new(env, "SLURM_ARRAY_TASK_MAX", json_string(text[1]));
	json_object_set_new(env, "SLURM_ARRAY_TASK_COUNT", json_string(text[2]));
	json_object_set_new(env, "SLURM_ARRAY_TASK_STEP", json_string(text[3]));
}

void jobsubmit_request(const struct jobspec *js, json_t *req)
{
	int64_t mem = jobspec_mem(js);
	mode_t mask;

	if (js->priority != JOBSPEC_PRIORITY_UNSET)
		json_object_set_new(req, "priority", json_integer(js->priority));
	if (js->queue)
		json_object_set_new(req, "queue", json_string(js->queue));
	if (js->ncpus >= 0)
		json_object_set_new(req, "ncpus", json_integer(js->ncpus));
	if (js->ngpus > 0)
		json_object_set_new(req, "ngpus", json_integer(js->ngpus));
	if (mem >= 0)
		json_object_set_new(req, "mem", json_integer(mem));
	if (js->mem_node > 0)
		json_object_set_new(req, "mem_node", json_true());
	if (js->walltime >= 0)
		json_object_set_new(req, "walltime", json_integer(js->walltime));
	if (js->n_chunks) {
		json_t *chunks = json_array();

		for (size_t i = 0; chunks && i < js->n_chunks; i++) {
			const struct jobspec_chunk *c = &js->chunks[i];

			json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I}",
				"count", (json_int_t)c->count, "ncpus", (json_int_t)c->ncpus,
				"mem", (json_int_t)jobspec_chunk_mem(js, c), "mpiprocs", (json_int_t)c->mpiprocs,
				"ompthreads", (json_int_t)c->ompthreads);

			if (o && c->ngpus > 0)
				json_object_set_new(o, "ngpus", json_integer(c->ngpus));
			if (o && c->features[0])
				json_object_set_new(o, "features", json_string(c->features));
			json_array_append_new(chunks, o);
		}
		json_object_set_new(req, "chunks", chunks);
	}
	if (js->n_chunks || js->place != JOBSPEC_PLACE_UNSET || js->excl > 0) {
		char place[32];

		snprintf(place, sizeof(place), "%s%s", jobspec_place_name(js->place),
			 js->excl > 1 ? ":excl:whole" : js->excl > 0 ? ":excl" : "");
		json_object_set_new(req, "place", json_string(place));
	}
	if (js->nodelist)
		json_object_set_new(req, "nodelist", json_string(js->nodelist));
	if (js->exclude)
		json_object_set_new(req, "exclude", json_string(js->exclude));
	if (js->constraint)
		json_object_set_new(req, "constraint", json_string(js->constraint));
	if (js->gpu_model)
		json_object_set_new(req, "gpu_model", json_string(js->gpu_model));
	if (js->licenses)
		json_object_set_new(req, "licenses", json_string(js->licenses));
	if (js->node_res)
		json_object_set_new(req, "node_res", json_string(js->node_res));
	if (js->rerunnable >= 0)
		json_object_set_new(req, "rerunnable", json_boolean(js->rerunnable));
	/* The submitter's umask goes with the job (umask(2) can only be read
	 * by setting it): its output files get the modes the user expects. */
	mask = umask(022);
	umask(mask);
	if (jobspec_attr(js, "umask"))   /* -W umask=, checked octal */
		mask = (mode_t)strtol(jobspec_attr(js, "umask"), NULL, 8);
	json_object_set_new(req, "umask", json_integer(mask & 0777));
	if (js->array) {
		json_object_set_new(req, "array", json_string(js->array));
		array_env(js->array, json_object_get(req, "env"));
	}
	if (js->depend)
		json_object_set_new(req, "depend", json_string(js->depend));
	if (js->depend && js->depend_lift > 0)
		json_object_set_new(req, "depend_lift", json_true());
}

json_t *jobsubmit_attrs(const struct jobspec *js)
{
	json_t *attrs = json_object();

	for (size_t i = 0; attrs && i < js->n_attrs; i++)
		json_object_set_new(attrs, js->attrs[i].name, json_string(js->attrs[i].value));
	return attrs;
}
