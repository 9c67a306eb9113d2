/* SPDX-License-Identifier: MIT */
/* srun's options, purely: its command line in, what the step and (outside
 * a job) the allocation ask for out. */
#ifndef QPOOL_SRUNOPT_H
#define QPOOL_SRUNOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "slurmopt.h"

/* What srun was told. Strings point into the argv parsed (or the value
 * given to srunopt_mpi_set), but those of job, which it owns. */
struct srunopt {
	/* the allocation's options, as sbatch's: -n -N -c --ntasks-per-node
	 * -t -p --mem --mem-per-cpu -J -A --exclusive */
	struct slurmopt job;
	const char *mpi;            /* --mpi; NULL: not given */
	const char *output, *error, *input;   /* -o -e -i patterns */
	const char *chdir;          /* -D */
	const char *export;         /* --export; NULL: ALL */
	bool label;                 /* -l */
	bool multi_prog;            /* --multi-prog */
	bool het;                   /* --het-group (a ':' word is the caller's to find) */
	bool pty;                   /* --pty: the program on a terminal, task 0 */
	bool help;                  /* -h, --usage */
	/* The tasks' side, srun run by qexec as each task's first program:
	 * --qpool-task, the ranks on each node and the nodes' names (comma
	 * lists), the step's number. Not for users. */
	bool task;
	const char *layout, *names;
	int64_t step;
	/* One line each for srun's standard error: accepted, not enforced. */
	char **warnings;
	size_t n_warnings;
};

void srunopt_init(struct srunopt *s);

/* Frees what s owns and re-initialises it. */
void srunopt_clear(struct srunopt *s);

/* Applies argv[1..argc) as srun reads its command line: getopt_long with
 * unique prefixes of long options, stopping at the first word that is not
 * an option (the program). *ret_first is its index. 0, or -EINVAL with
 * err in Slurm's words (getopt's own, "unrecognized option '--bogus'",
 * start with "unrecognized", "invalid option" or "option"; the others are
 * srun's "error: " lines), -ENOMEM. */
int srunopt_parse(struct srunopt *s, int argc, char **argv, int *ret_first, struct error *err);

/* --mpi=mpi (as SLURM_MPI_TYPE gives it): pmi2, pmi1, pmix, pmix_vN, none,
 * list. 0 or -EINVAL with err. */
int srunopt_mpi_set(struct srunopt *s, const char *mpi, struct error *err);

/* qexec's --mpi for Slurm's: "all" (pmix, and none given), "pmi" (pmi2,
 * pmi1), "none". */
const char *srunopt_qexec_mpi(const char *mpi);

/* Whether a task keeps kv ("NAME=value") under --export=spec: ALL keeps
 * all; otherwise Slurm's variables and those the MPI library reads from
 * the launcher (SLURM*, PMI*, OMPI_*, HWLOC_*, QPOOL_*, ...) and the
 * NAMEs the list gives bare. (NAME=value words are set by the caller.) */
bool srunopt_export_keeps(const char *spec, const char *kv);

#endif
