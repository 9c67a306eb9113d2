/* SPDX-License-Identifier: MIT */
/* The limits on a job's environment (qsub -v/-V), checked by qsub, qpoold and gded. */
#ifndef QPOOL_JOBENV_H
#define QPOOL_JOBENV_H

#include <jansson.h>

#include "error.h"

/* A job's environment is built by root (gded) before the drop, once per
 * job: it must stay small. A login shell's is ~100 variables and a few
 * KiB; a heavy module setup a few hundred and ~100 KiB. Above 256 KiB a
 * job could not be run anyway on a host with an 8 MiB stack (execve's
 * E2BIG at a quarter of it, with the script's own room). */
#define JOBENV_MAX_VARS 4096
#define JOBENV_MAX_BYTES (256 * 1024)   /* the sum of "NAME=VALUE\0" */

/* Checks an environment object (name -> string). 0; -E2BIG with err
 * saying which limit, and how far over ("the job's environment has 5000
 * variables; at most 4096"); -EINVAL when a member is not a string. */
int jobenv_check(const json_t *env, struct error *err);

/* This process's environment as an environment object: every variable
 * JSON can carry (UTF-8, a name without '=' of under 256 bytes), the
 * others left out. For qsub -V and qpool-rsh --env. NULL when out of
 * memory. */
json_t *jobenv_environ(void);

/* Sets PBS_O_*: where and by whom the job was submitted (HOME, LOGNAME,
 * PATH, SHELL, MAIL, LANG, TZ of this environment, the host, Linux, cwd,
 * and queue when not NULL), as PBS's qsub sets them; sbatch sets the
 * same (gded makes SLURM_SUBMIT_DIR and SLURM_SUBMIT_HOST of them). */
void jobenv_origin(json_t *env, const char *cwd, const char *queue);

#endif
