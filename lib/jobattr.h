/* SPDX-License-Identifier: MIT */
/* The names a job's recorded PBS attributes may have (qsub -W NAME=VALUE). */
#ifndef QPOOL_JOBATTR_H
#define QPOOL_JOBATTR_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

/* Longest recorded attribute name, in bytes. */
#define JOBATTR_NAME_MAX 64

/* Whether name may be recorded beside a job: PBS's grammar (a letter,
 * then letters, digits, '_' and '.'; no empty part between dots; at most
 * JOBATTR_NAME_MAX bytes), and not an attribute qpool or PBS sets itself
 * (Job_Owner, euser, job_state, exec_host, Exit_status, resources_used.*,
 * Output_Path, qpool_state, ...: compared without case, and for "A.b" by
 * A, Resource_List.b excepted). 0, or -EINVAL with a line in err (which
 * may be NULL). */
int jobattr_name_check(const char *name, struct error *err);

static inline bool jobattr_name_ok(const char *name)
{
	return jobattr_name_check(name, NULL) == 0;
}

/* Most MPI slots a job's node file lists (its lines). */
#define JOBATTR_SLOTS_MAX (1u << 20)

/* A one-chunk select's mpiprocs, which qsub records as the attribute
 * Resource_List.mpiprocs (the chunk itself becomes plain ncpus): true with
 * the count when value is a decimal count in 1..JOBATTR_SLOTS_MAX. gded
 * (its PBS_NODEFILE lines, PBS_NP) and qnoded (which shared node file)
 * read it by this one rule, so they agree. */
bool jobattr_mpiprocs(const char *value, uint64_t *ret);

/* A one-node job's shape as qsub records it beside its CPUs: the request
 * as written and its MPI slots and threads (docs/PARALLEL.md), which
 * gded reads; what qalter -l of a new shape replaces (commands/qalter.c,
 * the server's alter). JOBATTR_SHAPE_N names. */
#define JOBATTR_SHAPE_N 5
extern const char *const jobattr_shape[JOBATTR_SHAPE_N];

/* Whether name is one of jobattr_shape. */
bool jobattr_is_shape(const char *name);

#endif
