/* SPDX-License-Identifier: MIT */
/* srun's options: getopt_long over its command line, into struct srunopt. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "license.h"
#include "srunopt.h"

enum {
	OPT_TPN = 0x100, OPT_MPI, OPT_MULTI, OPT_HET, OPT_CPU_BIND, OPT_EXCL, OPT_EXPORT, OPT_MEM,
	OPT_MEM_PER_CPU, OPT_USAGE, OPT_GPUS, OPT_PTY, OPT_NOTED, OPT_TASK,
	OPT_LAYOUT, OPT_NAMES, OPT_STEP, OPT_X11, OPT_RESERVATION, OPT_OVERLAP,
};

static const struct option longopts[] = {
	{ "account", required_argument, NULL, 'A' },
	{ "chdir", required_argument, NULL, 'D' },
	{ "constraint", required_argument, NULL, 'C' },
	{ "cpu-bind", required_argument, NULL, OPT_CPU_BIND },
	{ "cpu_bind", required_argument, NULL, OPT_CPU_BIND },
	{ "cpus-per-task", required_argument, NULL, 'c' },
	{ "distribution", required_argument, NULL, 'm' },
	{ "error", required_argument, NULL, 'e' },
	{ "exclusive", optional_argument, NULL, OPT_EXCL },
	{ "exact", no_argument, NULL, OPT_EXCL },   /* a step's own CPUs (Slurm 21.08) */
	{ "exclude", required_argument, NULL, 'x' },
	{ "export", required_argument, NULL, OPT_EXPORT },
	{ "gres", required_argument, NULL, OPT_GPUS },
	{ "gpus", required_argument, NULL, OPT_GPUS },
	{ "gpus-per-node", required_argument, NULL, OPT_GPUS },
	{ "gpus-per-task", required_argument, NULL, OPT_GPUS },
	{ "help", no_argument, NULL, 'h' },
	{ "het-group", required_argument, NULL, OPT_HET },
	{ "pack-group", required_argument, NULL, OPT_HET },   /* before Slurm 20.02 */
	{ "immediate", optional_argument, NULL, 'I' },
	{ "input", required_argument, NULL, 'i' },
	{ "job-name", required_argument, NULL, 'J' },
	{ "kill-on-bad-exit", optional_argument, NULL, 'K' },
	{ "label", no_argument, NULL, 'l' },
	{ "licenses", required_argument, NULL, 'L' },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "mem-per-cpu", required_argument, NULL, OPT_MEM_PER_CPU },
	{ "mpi", required_argument, NULL, OPT_MPI },
	{ "multi-prog", no_argument, NULL, OPT_MULTI },
	{ "nodelist", required_argument, NULL, 'w' },
	{ "nodes", required_argument, NULL, 'N' },
	{ "ntasks", required_argument, NULL, 'n' },
	{ "ntasks-per-node", required_argument, NULL, OPT_TPN },
	{ "tasks-per-node", required_argument, NULL, OPT_TPN },
	{ "output", required_argument, NULL, 'o' },
	{ "overcommit", no_argument, NULL, 'O' },
	{ "overlap", no_argument, NULL, OPT_OVERLAP },
	{ "partition", required_argument, NULL, 'p' },
	{ "pty", no_argument, NULL, OPT_PTY },
	{ "qos", required_argument, NULL, 'q' },
	{ "quiet", no_argument, NULL, 'Q' },
	{ "time", required_argument, NULL, 't' },
	{ "unbuffered", no_argument, NULL, 'u' },
	{ "usage", no_argument, NULL, OPT_USAGE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "wait", required_argument, NULL, 'W' },
	{ "x11", optional_argument, NULL, OPT_X11 },   /* srun --x11 --pty bash */
	/* Accepted, not enforced: one warning each. */
	{ "hint", required_argument, NULL, OPT_NOTED },
	{ "mem-bind", required_argument, NULL, OPT_NOTED },
	{ "gpu-bind", required_argument, NULL, OPT_NOTED },
	{ "ntasks-per-core", required_argument, NULL, OPT_NOTED },
	{ "threads-per-core", required_argument, NULL, OPT_NOTED },
	{ "propagate", optional_argument, NULL, OPT_NOTED },
	{ "signal", required_argument, NULL, OPT_NOTED },
	{ "open-mode", required_argument, NULL, OPT_NOTED },
	{ "reservation", required_argument, NULL, OPT_RESERVATION },
	{ "comment", required_argument, NULL, OPT_NOTED },
	{ "wckey", required_argument, NULL, OPT_NOTED },
	{ "nice", optional_argument, NULL, OPT_NOTED },
	/* The tasks' side (srun runs itself as each task): not for users. */
	{ "qpool-task", no_argument, NULL, OPT_TASK },
	{ "qpool-layout", required_argument, NULL, OPT_LAYOUT },
	{ "qpool-names", required_argument, NULL, OPT_NAMES },
	{ "qpool-step", required_argument, NULL, OPT_STEP },
	{ NULL, 0, NULL, 0 },
};

static const char optstring[] = "+:A:c:C:D:e:hi:I::J:K::lL:m:n:N:o:Op:q:Qt:uvW:w:x:";

/* A count: digits only, 1..max. */
static int count_parse(const char *s, int64_t max, int64_t *ret)
{
	char *end;
	long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 1 || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int str_dup(char **dst, const char *s)
{
	free(*dst);
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

/* Whether --cpu-bind's list asks for a binding: a word but Slurm's
 * quiet and verbose (q, v) and none (no), which ask for none. */
static bool cpu_bind_binds(const char *arg)
{
	static const char *const plain[] = { "q", "quiet", "v", "verbose", "none", "no" };

	for (const char *p = arg; *p;) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
			if (strlen(plain[i]) == n && !strncmp(p, plain[i], n))
				break;
		if (n && i == sizeof(plain) / sizeof(plain[0]))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/* Appends a warning line to s. 0 or -ENOMEM. */
static int warn(struct srunopt *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int warn(struct srunopt *s, const char *fmt, ...)
{
	char **w = realloc(s->warnings, (s->n_warnings + 1) * sizeof(char *));
	va_list ap;
	int r;

	if (!w)
		return -ENOMEM;
	s->warnings = w;
	va_start(ap, fmt);
	r = vasprintf(&w[s->n_warnings], fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	s->n_warnings++;
	return 0;
}

/* One option; 0, -EINVAL with err, -ENOMEM. */
static int option_apply(struct srunopt *s, int c, const char *arg, const char *word, struct error *err)
{
	struct slurmopt *o = &s->job;

	switch (c) {
	case 'n':
		if (count_parse(arg, 1048576, &o->ntasks) < 0)
			return error_set(err, -EINVAL, "Invalid number of tasks (-n %s)", arg);
		return 0;
	case 'N': {
		char lo[32], *dash;

		snprintf(lo, sizeof(lo), "%s", arg);
		dash = strchr(lo, '-');
		if (dash)
			*dash = '\0';
		if (count_parse(lo, 100000, &o->nodes_min) < 0 ||
		    (dash && count_parse(dash + 1, 100000, &o->nodes_max) < 0))
			return error_set(err, -EINVAL, "\"%s\" is not a valid node count", arg);
		if (!dash)
			o->nodes_max = o->nodes_min;
		return 0;
	}
	case 'c':
		if (count_parse(arg, 1024, &o->cpus_per_task) < 0)
			return error_set(err, -EINVAL, "Invalid --cpus-per-task argument: %s", arg);
		return 0;
	case OPT_TPN:
		if (count_parse(arg, 1024, &o->ntasks_per_node) < 0)
			return error_set(err, -EINVAL, "Invalid --ntasks-per-node argument: %s", arg);
		return 0;
	case 't':
		if (slurm_time_parse(arg, &o->time) < 0)
			return error_set(err, -EINVAL, "Invalid time limit specification");
		return 0;
	case OPT_MEM:
	case OPT_MEM_PER_CPU:
		if (slurm_mem_parse(arg, c == OPT_MEM ? &o->mem : &o->mem_per_cpu) < 0)
			return error_set(err, -EINVAL, "invalid memory constraint: %s", arg);
		return 0;
	case 'p':
		return str_dup(&o->partition, arg);
	case 'J':
		return str_dup(&o->job_name, arg);
	case 'A':
		return str_dup(&o->account, arg);
	case 'q':
		return str_dup(&o->qos, arg);
	case OPT_RESERVATION:
		/* Outside a job the new job's (qsub -q NAME, docs/RESERVATIONS.md);
		 * a step inside one runs on what its job holds. */
		return str_dup(&o->reservation, arg);
	case 'L': {
		struct license l[LICENSES_MAX];
		struct error why;
		size_t n;

		/* Outside a job the new job's (given to qsub); a step inside
		 * one runs on what its job holds. */
		if (license_request_parse(arg, l, LICENSES_MAX, &n, &why) < 0)
			return error_set(err, -EINVAL, "Invalid license specification: %s=%s: %s", word, arg,
					 why.text);
		return str_dup(&o->licenses, arg);
	}
	case OPT_EXCL:
		return slurmopt_exclusive(o, arg, err);
	case OPT_MPI:
		if (strcmp(arg, "pmi2") && strcmp(arg, "pmix") && strncmp(arg, "pmix_v", 6) &&
		    strcmp(arg, "none") && strcmp(arg, "pmi1") && strcmp(arg, "list"))
			return error_set(err, -EINVAL, "MPI: Cannot create context for %s", arg);
		s->mpi = arg;
		return 0;
	case 'l':
		s->label = true;
		return 0;
	case OPT_MULTI:
		s->multi_prog = true;
		return 0;
	case OPT_HET:
		s->het = true;
		return 0;
	case 'o':
		s->output = arg;
		return 0;
	case 'e':
		s->error = arg;
		return 0;
	case 'i':
		s->input = arg;
		return 0;
	case 'D':
		s->chdir = arg;
		return 0;
	case OPT_EXPORT:
		s->export = arg;
		return 0;
	case OPT_CPU_BIND:
		/* each node's tasks run in the job's CPU fence there; qpool-pmi
		 * hands Open MPI the node's topology and it binds within it */
		if (cpu_bind_binds(arg))
			return warn(s, "--cpu-bind=%s: not enforced by qpool (the tasks run in the job's "
				    "CPUs on each node)", arg);
		return 0;
	case OPT_GPUS:
		return error_set(err, -EINVAL, "Invalid generic resource (gres) specification: %s=%s "
				"(srun asks for no GPUs on this pool)", word, arg);
	case OPT_PTY:
		s->pty = true;
		return 0;
	case OPT_X11:
		return warn(s, "--x11: X11 forwarding is not done by qpool (the task gets srun's DISPLAY, "
			    "which reaches a display only on srun's own host)");
	case 'h':
	case OPT_USAGE:
		o->help = true;
		return 0;
	case OPT_TASK:
		s->task = true;
		return 0;
	case OPT_LAYOUT:
		s->layout = arg;
		return 0;
	case OPT_NAMES:
		s->names = arg;
		return 0;
	case OPT_STEP:
		s->step = strtoll(arg, NULL, 10);
		return 0;
	case 'w':
	case 'x':
	case 'C':
		/* Outside a job qsub has no words for them (refused there,
		 * slurmopt_qsub_argv); inside one -w and -x choose the step's
		 * nodes (srun.c, step_choose) and -C is warned about. */
		return str_dup(c == 'w' ? &o->nodelist : c == 'x' ? &o->exclude : &o->constraint, arg);
	case 'm': {
		size_t n = strcspn(arg, ":,");

		/* The nodes' part: qexec deals tasks node after node (block);
		 * "*" is Slurm's default, block. */
		if ((n == 5 && !strncmp(arg, "block", 5)) || (n == 1 && arg[0] == '*'))
			return 0;
		return warn(s, "--distribution=%s: not enforced by qpool (tasks are dealt out in blocks, "
			    "node after node)", arg);
	}
	case 'K':
		/* A failing task ends the step (qpool-pmi's rule): =1 is
		 * applied, =0 cannot be. */
		if (arg && !strcmp(arg, "0"))
			return warn(s, "--kill-on-bad-exit=0: not enforced by qpool (a failing task ends the step)");
		return 0;
	case 'I':
		return warn(s, "--immediate: not enforced by qpool (srun waits for the job or its step)");
	case 'O':
		return warn(s, "--overcommit: not enforced by qpool (a task takes one of the job's slots)");
	case 'W':
		return warn(s, "--wait=%s: not enforced by qpool (a failing task ends the step at once)", arg);
	case OPT_NOTED:
		return warn(s, "%s%s%s: not enforced by qpool (ignored)", word, arg ? "=" : "", arg ? arg : "");
	default:
		/* -u (qpool does not buffer a task's output), -v, -Q, --overlap
		 * (qpool counts no step's CPUs: steps share the job's): applied */
		return 0;
	}
}

int srunopt_parse(struct srunopt *s, int argc, char **argv, int *ret_first, struct error *err)
{
	int c, idx;

	optind = 0;   /* glibc: a full re-initialisation */
	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, &idx)) != -1) {
		const char *word = argv[optind - 1];
		char shown[64];
		int r;

		if (c == '?') {
			if (optopt)
				return error_set(err, -EINVAL, "invalid option -- '%c'", optopt);
			return error_set(err, -EINVAL, "unrecognized option '%.80s'", word);
		}
		if (c == ':') {
			if (strncmp(word, "--", 2) != 0)
				return error_set(err, -EINVAL, "option requires an argument -- '%c'", optopt);
			return error_set(err, -EINVAL, "option '%.80s' requires an argument", word);
		}
		snprintf(shown, sizeof(shown), "%s", word);
		shown[strcspn(shown, "=")] = '\0';
		r = option_apply(s, c, optarg, shown, err);
		if (r)
			return r;
	}
	*ret_first = optind;
	return 0;
}

int srunopt_mpi_set(struct srunopt *s, const char *mpi, struct error *err)
{
	return option_apply(s, OPT_MPI, mpi, "--mpi", err);
}

void srunopt_init(struct srunopt *s)
{
	*s = (struct srunopt){ .step = 0 };
	slurmopt_init(&s->job);
}

void srunopt_clear(struct srunopt *s)
{
	slurmopt_clear(&s->job);
	for (size_t i = 0; i < s->n_warnings; i++)
		free(s->warnings[i]);
	free(s->warnings);
	srunopt_init(s);
}

const char *srunopt_qexec_mpi(const char *mpi)
{
	if (!mpi)
		return "all";
	if (!strcmp(mpi, "none"))
		return "none";
	if (!strcmp(mpi, "pmi2") || !strcmp(mpi, "pmi1"))
		return "pmi";
	return "all";   /* pmix: qpool-pmi serves PMIx beside PMI-1/2 */
}

/* Whether NAME (the start of kv, up to '=') is a bare word of spec. */
static bool export_named(const char *spec, const char *kv)
{
	size_t len = strcspn(kv, "=");

	for (const char *p = spec; *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncmp(p, kv, len))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

bool srunopt_export_keeps(const char *spec, const char *kv)
{
	static const char *const launcher[] = { "SLURM", "PMI", "PMIX", "OMPI_", "QPOOL_", "HWLOC_",
						"FLUX_JOB_ID=", "MPI_LOCAL" };

	if (export_named(spec, "ALL") || export_named(spec, kv))
		return true;
	for (size_t i = 0; i < sizeof(launcher) / sizeof(launcher[0]); i++)
		if (!strncmp(kv, launcher[i], strlen(launcher[i])))
			return true;
	return false;
}
