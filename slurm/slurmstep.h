/* SPDX-License-Identifier: MIT */
/* srun's job steps, purely: where the tasks go, --multi-prog's lines, a
 * step's %-patterns (srun -o/-e/-i). */
#ifndef QPOOL_SLURMSTEP_H
#define QPOOL_SLURMSTEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* The tasks of a step on the job's nodes, as qexec deals its ranks out:
 * slots[i] MPI slots on node i ($PBS_NODEFILE order); with ppn > 0 at
 * most ppn on a node and every node used gets ppn (the last one what is
 * left); node after node. ret_ranks[i] gets node i's count. Returns the
 * number of nodes used (those after get 0), -E2BIG when ntasks do not
 * fit (ret_ranks then unspecified), -EINVAL for ntasks < 1. */
int slurmstep_layout(const int *slots, int nnodes, int64_t ntasks, int64_t ppn, int *ret_ranks);

/* The node (index into ranks[0..nnodes)) of task `task` of a layout. -1
 * when the layout has fewer tasks. */
int slurmstep_node_of(const int *ranks, int nnodes, int64_t task);

/* --multi-prog's configuration, Slurm's format: a line per set of tasks,
 * "TASKS PROGRAM [ARG...]", TASKS being '*' or a comma list of N and N-M;
 * words split on blanks with '...' and "..." quoting; in words, %t is
 * the task's number and %o its offset among the line's tasks; '#' lines
 * and blank lines are skipped. */

/* Checks that each task 0..ntasks-1 has exactly one line and no line
 * names a task past them. 0, or -EINVAL with err in Slurm's words. */
int slurmstep_multiprog_check(const char *text, int64_t ntasks, struct error *err);

/* Task `task`'s program and arguments, NULL-terminated; the caller frees
 * each word and the array. 0, -ENOENT (no line for it), -EINVAL (a bad
 * line) with err, -ENOMEM. */
int slurmstep_multiprog_argv(const char *text, int64_t task, char ***ret_argv, struct error *err);

/* What a step's %-pattern names. Numbers are -1 when not known. */
struct slurmstep_ids {
	const char *jobid;       /* %j */
	int64_t step;            /* %s */
	int64_t task;            /* %t */
	int64_t node;            /* %n, the node's index in the step */
	const char *nodename;    /* %N */
	const char *user;        /* %u */
	const char *name;        /* %x, the job's name */
	const char *array_job;   /* %A: the array's id, else the job's */
	const char *array_task;  /* %a: NULL when not an array (Slurm's 4294967294) */
};

/* An srun --output/--error/--input pattern for one task: %j, %J
 * (job.step), %s, %t, %n, %N, %u, %x, %A, %a, %%; a width (%3t) pads a
 * number with zeros, as Slurm does. 0, -EINVAL (not a pattern, or %t
 * and %n unknown), -ENAMETOOLONG. */
int slurmstep_path_expand(const char *pat, const struct slurmstep_ids *ids, char *buf, size_t len,
			  struct error *err);

/* Whether a pattern names one file per task (it has %t). */
bool slurmstep_path_per_task(const char *pat);

/* Whether a pattern differs from node to node (%n or %N, no %t). */
bool slurmstep_path_per_node(const char *pat);

#endif
