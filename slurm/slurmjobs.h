/* SPDX-License-Identifier: MIT */
/* The jobs a Slurm command asks qpoold for, and Slurm's JSON of them. */
#ifndef QPOOL_SLURMJOBS_H
#define QPOOL_SLURMJOBS_H

#include <jansson.h>
#include <stdint.h>

#include "client.h"
#include "error.h"
#include "slurmsel.h"

/* How long squeue keeps showing a finished job: Slurm's MinJobAge default. */
#define SLURMJOBS_MIN_JOB_AGE 300

enum slurmjobs_age {
	SLURMJOBS_ALIVE,   /* pending and running jobs only (scancel) */
	SLURMJOBS_RECENT,  /* and, when sel names ids or finished states, those
	                    * that ended within SLURMJOBS_MIN_JOB_AGE (squeue) */
	SLURMJOBS_ANY,     /* any age (scontrol show job) */
};

/* Asks qpoold (the stat op, with arrays' tasks) for the jobs sel means,
 * one row per job or array task (arrays' own rows left out), in id order.
 * Returns 0 and *ret (caller's), or a negative errno with err. */
int slurmjobs_fetch(struct client *cl, const struct slurmsel *sel, enum slurmjobs_age age, int64_t now_ns,
		    json_t **ret, struct error *err);

/* The envelope of Slurm's --json documents: meta (plugin, Slurm
 * version it follows, client), errors, warnings. NULL when out of
 * memory. */
json_t *slurmjobs_json(const json_t *jobs, int64_t now_ns);

/* One job as squeue --json and scontrol --json write it (Slurm 24.05's
 * data_parser: numbers as {set, infinite, number}, job_state a list). */
json_t *slurmjobs_job_json(const json_t *job, int64_t now_ns);

/* One job as sacct --json writes it: state {current, reason}, time
 * {elapsed, submission, start, end, limit}, exit_code, nodes, ... */
json_t *slurmjobs_acct_json(const json_t *job, int64_t now_ns);

/* A job op's refusal (r, a negative errno, and qpoold's text in err) in
 * Slurm's words where Slurm has them: ENOENT "Invalid job id
 * specified", EALREADY "Job/step already completing or completed",
 * EPERM "Access/permission denied"; else qpoold's text. */
const char *slurmjobs_error(int r, const struct error *err);

#endif
