/* SPDX-License-Identifier: MIT */
/* Slurm's job options (sbatch, later srun and salloc) into qsub's job
 * description, purely: argv and #SBATCH lines in, struct jobspec out. */
#ifndef QPOOL_SLURMOPT_H
#define QPOOL_SLURMOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"
#include "jobscript.h"
#include "slurmtext.h"

/* What the options say. Numbers are -1 when unset; strings NULL; all
 * strings owned. */
struct slurmopt {
	char *job_name;          /* -J */
	char *output;            /* -o, as given (with its %-patterns) */
	char *error;             /* -e */
	char *input;             /* -i */
	char *partition;         /* -p, may be a comma list */
	char *array;             /* -a, Slurm's list form */
	char *dependency;        /* -d, as given */
	char *signal;            /* --signal, as given (checked) */
	char *begin;             /* --begin, as given */
	char *chdir;             /* -D */
	char *export;            /* --export, as given; NULL: ALL */
	char *mail_type;         /* --mail-type, as given */
	char *mail_user;
	char *wrap;              /* --wrap: the command */
	char *account;           /* -A */
	char *qos;               /* -q, --qos */
	char *nodelist;          /* -w, as given (a host list) */
	char *exclude;           /* -x */
	char *constraint;        /* -C, checked */
	char *licenses;          /* -L, checked (lib/license.h) */
	char *reservation;       /* --reservation (docs/RESERVATIONS.md) */
	char *node_res;          /* --gres other than gpu, --tmp: NAME:VALUE,... (lib/noderes.h) */
	int64_t time;            /* -t in seconds; 0 UNLIMITED; -1 unset */
	int64_t nodes_min;       /* -N N or N-M */
	int64_t nodes_max;
	int64_t ntasks;          /* -n */
	int64_t ntasks_per_node;
	int64_t cpus_per_task;   /* -c */
	int64_t mincpus;         /* --mincpus: each node's CPUs at least */
	int64_t mem;             /* --mem bytes per node; 0: the whole node */
	int64_t mem_per_cpu;     /* --mem-per-cpu bytes; 0: the whole node */
	int64_t mem_per_gpu;     /* --mem-per-gpu bytes; 0: the whole node */
	int64_t gpus_per_node;   /* --gpus-per-node, --gres=gpu[:TYPE]:G */
	int64_t gpus;            /* --gpus, -G: the job's in all */
	int64_t gpus_per_task;   /* --gpus-per-task */
	char *gpu_model;         /* the TYPE of --gres=gpu:TYPE:G, --gpus=TYPE:G, --gpus-per-*=TYPE:G,
	                          * canonical (lib/gpu.h); NULL: any */
	int exclusive;           /* --exclusive: 1; =user, =mcs, =topo: 2, 3, 4 */
	int hold;                /* -H: 1 */
	int requeue;             /* --requeue 1, --no-requeue 0 */
	int parsable;            /* --parsable: 1 */
	int wait;                /* -W: 1 */
	int help;                /* -h, --help, --usage: 1 */
	/* One line each, for sbatch's standard error: what was accepted but
	 * qpool does not enforce ("--gres-flags=...: not enforced by qpool"). */
	char **warnings;
	size_t n_warnings;
};

void slurmopt_init(struct slurmopt *o);

/* Frees what o owns and re-initialises it. */
void slurmopt_clear(struct slurmopt *o);

/* Applies argv[1..argc) (argv[0] is ignored) as sbatch reads its command
 * line and each #SBATCH line: getopt_long, long options abbreviated to
 * any unique prefix, stopping at the first word that is not an option
 * (the script, or its arguments). Later options override earlier ones.
 * *ret_optind is the index of that first word. Returns 0, or -EINVAL with
 * err in Slurm's words ("unrecognized option '--bogus'", "Invalid --time
 * specification"), -ENOMEM. */
int slurmopt_parse(struct slurmopt *o, int argc, char **argv, int *ret_optind, struct error *err);

/* --exclusive[=user|mcs|topo] (arg NULL: none) into o->exclusive. 0, or
 * -EINVAL with Slurm's words for any other arg. */
int slurmopt_exclusive(struct slurmopt *o, const char *arg, struct error *err);

/* Splits the #SBATCH lines of a script into one argv (argv[0] "sbatch"),
 * as sbatch reads them: lines starting with "#SBATCH" from the top, up
 * to the first line that is neither blank nor a '#' comment; words split
 * on blanks with '...' and "..." quoting; an unquoted '#' after a blank
 * starts a comment. The caller frees each word and the array. Returns
 * the count, or -ENOMEM, -E2BIG past 4096 words. */
int slurmopt_script_argv(const char *text, size_t len, char ***ret_argv);

/* Fills js (initialised by the caller) with what qsub would send for o:
 * name, queue (the first of a comma list: the caller tries the others),
 * walltime, ncpus, or chunks across nodes as -l select= makes them, mem,
 * place, paths, array, dependency (without singleton, which the caller
 * resolves), hold, rerun, mail, account. user names %u. Warnings for what
 * qpool does not enforce go into js->warnings. 0, -EINVAL with err in
 * Slurm's words, -ENOMEM. */
int slurmopt_jobspec(const struct slurmopt *o, const char *user, struct jobspec *js, struct error *err);

/* The qsub options that ask for what o asks: -N, -q, -l (walltime,
 * ncpus or select= and place=, mem), -A; for a front end that submits
 * through qsub or qexec (srun and salloc outside a job). js is filled as
 * slurmopt_jobspec fills it (its warnings are the caller's to print).
 * *ret_argv is NULL-terminated; the caller frees each word and the
 * array. 0, -EINVAL with err, -ENOMEM. */
int slurmopt_qsub_argv(const struct slurmopt *o, const char *user, struct jobspec *js, char ***ret_argv,
		       struct error *err);

/* The SLURM_* variables of the request that the allocation alone does
 * not tell (SLURM_NTASKS, SLURM_CPUS_PER_TASK, SLURM_NTASKS_PER_NODE),
 * set in env; an array's are jobsubmit_request's. 0 or -ENOMEM. */
int slurmopt_env(const struct slurmopt *o, json_t *env);

/* slurmopt_env's variables set in this process's environment, which a
 * job made with qsub -V gets (salloc, srun outside a job): what gded
 * cannot tell from the allocation. 0 or -ENOMEM. */
int slurmopt_env_export(const struct slurmopt *o);

#endif
