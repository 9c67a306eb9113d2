/* SPDX-License-Identifier: MIT */
/* Which jobs a Slurm command means: -u, -n, -p, -t, -j lists as squeue and scancel take them. */
#ifndef QPOOL_SLURMSEL_H
#define QPOOL_SLURMSEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define SLURMSEL_MAX_IDS 256
#define SLURMSEL_MAX_STATES 32

/* A job as Slurm names one: "12" (a job, or a whole array) or "12_3"
 * (task 3 of array 12); index -1 for the first form. */
struct slurmsel_id {
	int64_t id;
	int64_t index;
	char step[16];   /* sacct's "12.batch", "12.0": the step; "" the job */
};

/* A selection: each list NULL or comma-separated, all must match. */
struct slurmsel {
	const char *users;
	const char *names;
	const char *partitions;
	long long uid;                            /* --me; -1: any (slurmsel_init) */
	const char *states[SLURMSEL_MAX_STATES];  /* Slurm long names */
	int n_states;
	struct slurmsel_id ids[SLURMSEL_MAX_IDS];
	int n_ids;
	bool steps;                               /* ids may name a step (sacct) */
};

/* An empty selection: every job. */
void slurmsel_init(struct slurmsel *sel);

/* Parses "12" or "12_3" into *ret. 0 or -EINVAL. */
int slurmsel_id_parse(const char *s, struct slurmsel_id *ret);

/* Adds a comma list of job ids (-j, or the operands); with sel->steps
 * an id may name a step, "12.batch", "12_3.0" (Slurm's batch, extern,
 * interactive or a number). On -EINVAL err holds Slurm's words,
 * "Invalid job id specified" with the id. */
int slurmsel_ids_add(struct slurmsel *sel, const char *list, struct error *err);

/* Sets the states of a -t list (long names, short codes, "all"). On
 * -EINVAL err holds "Invalid job state specified: X". */
int slurmsel_states_set(struct slurmsel *sel, const char *list, struct error *err);

/* True when a state list includes a finished state (the stat op is then
 * asked for finished jobs). */
bool slurmsel_wants_finished(const struct slurmsel *sel);

/* True when the job matches every list of sel (ids included: the job
 * itself, its array, or its task). */
bool slurmsel_match(const struct slurmsel *sel, const json_t *job);

/* Whether sacct shows a row of a job slurmsel_match took: the job's
 * own (step NULL) or one of its steps ("batch"). With no ids, or an id
 * of the whole job, every row; else the rows whose step an id names. */
bool slurmsel_step_wanted(const struct slurmsel *sel, const json_t *job, const char *step);

/* True when name is one of the comma-separated names of list. */
bool slurmsel_list_has(const char *list, const char *name);
/* A -u/-A/-p style filter: true with no list, else for a name in it. */
bool slurmsel_list_wants(const char *list, const char *name);

#endif
