/* SPDX-License-Identifier: MIT */
/* The submit request from a jobspec (lib/jobsubmit.h). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "jobsubmit.h"

void jobsubmit_request(const struct jobspec *js, json_t *req)
{
	mode_t mask;

	if (js->priority != JOBSPEC_PRIORITY_UNSET)
		json_object_set_new(req, "priority", json_integer(js->priority));
	if (js->queue)
		json_object_set_new(req, "queue", json_string(js->queue));
	if (js->ncpus >= 0)
		json_object_set_new(req, "ncpus", json_integer(js->ncpus));
	if (js->ngpus > 0)
		json_object_set_new(req, "ngpus", json_integer(js->ngpus));
	if (js->mem >= 0)
		json_object_set_new(req, "mem", json_integer(js->mem));
	if (js->walltime >= 0)
		json_object_set_new(req, "walltime", json_integer(js->walltime));
	if (js->n_chunks) {
		json_t *chunks = json_array();

		for (size_t i = 0; chunks && i < js->n_chunks; i++) {
			const struct jobspec_chunk *c = &js->chunks[i];

			json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I}",
				"count", (json_int_t)c->count, "ncpus", (json_int_t)c->ncpus,
				"mem", (json_int_t)c->mem, "mpiprocs", (json_int_t)c->mpiprocs,
				"ompthreads", (json_int_t)c->ompthreads);

			if (o && c->ngpus > 0)
				json_object_set_new(o, "ngpus", json_integer(c->ngpus));
			json_array_append_new(chunks, o);
		}
		json_object_set_new(req, "chunks", chunks);
	}
	if (js->n_chunks || js->place != JOBSPEC_PLACE_UNSET || js->excl > 0) {
		char place[32];

		snprintf(place, sizeof(place), "%s%s", jobspec_place_name(js->place), js->excl > 0 ? ":excl" : "");
		json_object_set_new(req, "place", json_string(place));
	}
	if (js->rerunnable >= 0)
		json_object_set_new(req, "rerunnable", json_boolean(js->rerunnable));
	/* The submitter's umask goes with the job (umask(2) can only be read
	 * by setting it): its output files get the modes the user expects. */
	mask = umask(022);
	umask(mask);
	if (jobspec_attr(js, "umask"))   /* -W umask=, checked octal */
		mask = (mode_t)strtol(jobspec_attr(js, "umask"), NULL, 8);
	json_object_set_new(req, "umask", json_integer(mask & 0777));
	if (js->array)
		json_object_set_new(req, "array", json_string(js->array));
	if (js->depend)
		json_object_set_new(req, "depend", json_string(js->depend));
}
