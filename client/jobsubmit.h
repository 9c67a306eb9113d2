/* SPDX-License-Identifier: MIT */
/* The submit request's members that come from a jobspec, one writer for
 * qsub and sbatch (docs/PROTOCOL.md, op submit). */
#ifndef QPOOL_JOBSUBMIT_H
#define QPOOL_JOBSUBMIT_H

#include <jansson.h>

#include "jobscript.h"

/* Sets in req what js asks for: priority, queue, ncpus, mem, walltime,
 * chunks, place (with :excl), rerunnable, array, depend, and umask (the
 * submitter's, or -W umask=). Members js leaves unset are not set. For an
 * array, Slurm's SLURM_ARRAY_TASK_MIN, _MAX, _COUNT and _STEP go into
 * req's "env" object (set it first). */
void jobsubmit_request(const struct jobspec *js, json_t *req);

/* The attributes js records (its attrs), as a JSON object; NULL: no memory. */
json_t *jobsubmit_attrs(const struct jobspec *js);

#endif
