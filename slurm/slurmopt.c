/* SPDX-License-Identifier: MIT */
/* Slurm's job options into qsub's jobspec: getopt_long over argv and #SBATCH lines. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arrayspec.h"
#include "gpu.h"
#include "hostlist.h"
#include "license.h"
#include "noderes.h"
#include "nodesel.h"
#include "parse.h"
#include "slurmopt.h"

#define SCRIPT_WORDS_MAX 4096

/* Long-only options: values above any character. The "noted" ones are
 * accepted and not enforced: one warning each. */
enum {
	OPT_EXPORT = 0x100, OPT_MAIL_TYPE, OPT_MAIL_USER, OPT_MEM, OPT_MEM_PER_CPU, OPT_NTASKS_PER_NODE,
	OPT_EXCLUSIVE, OPT_REQUEUE, OPT_NO_REQUEUE, OPT_OPEN_MODE, OPT_SIGNAL, OPT_PARSABLE, OPT_WRAP,
	OPT_BEGIN, OPT_GRES, OPT_GPUS_PER_NODE, OPT_GPUS_PER, OPT_GPUS_PER_TASK, OPT_USAGE, OPT_MINCPUS, OPT_TMP,
	OPT_NOTED,
	OPT_MEM_PER_GPU, OPT_RESERVATION,
};

static const struct option longopts[] = {
	{ "account", required_argument, NULL, 'A' },
	{ "array", required_argument, NULL, 'a' },
	{ "begin", required_argument, NULL, OPT_BEGIN },
	{ "chdir", required_argument, NULL, 'D' },
	{ "constraint", required_argument, NULL, 'C' },
	{ "cpus-per-task", required_argument, NULL, 'c' },
	{ "dependency", required_argument, NULL, 'd' },
	{ "exclude", required_argument, NULL, 'x' },
	{ "error", required_argument, NULL, 'e' },
	{ "exclusive", optional_argument, NULL, OPT_EXCLUSIVE },
	{ "export", required_argument, NULL, OPT_EXPORT },
	{ "gres", required_argument, NULL, OPT_GRES },
	{ "gpus", required_argument, NULL, 'G' },
	{ "gpus-per-node", required_argument, NULL, OPT_GPUS_PER_NODE },
	{ "gpus-per-task", required_argument, NULL, OPT_GPUS_PER_TASK },
	{ "gpus-per-socket", required_argument, NULL, OPT_GPUS_PER },
	{ "cpus-per-gpu", required_argument, NULL, OPT_GPUS_PER },
	{ "mem-per-gpu", required_argument, NULL, OPT_MEM_PER_GPU },
	{ "help", no_argument, NULL, 'h' },
	{ "hold", no_argument, NULL, 'H' },
	{ "input", required_argument, NULL, 'i' },
	{ "job-name", required_argument, NULL, 'J' },
	{ "mail-type", required_argument, NULL, OPT_MAIL_TYPE },
	{ "mail-user", required_argument, NULL, OPT_MAIL_USER },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "mem-per-cpu", required_argument, NULL, OPT_MEM_PER_CPU },
	{ "nodelist", required_argument, NULL, 'w' },
	{ "nodes", required_argument, NULL, 'N' },
	{ "ntasks", required_argument, NULL, 'n' },
	{ "ntasks-per-node", required_argument, NULL, OPT_NTASKS_PER_NODE },
	{ "tasks-per-node", required_argument, NULL, OPT_NTASKS_PER_NODE },   /* Slurm's alias */
	{ "no-requeue", no_argument, NULL, OPT_NO_REQUEUE },
	{ "open-mode", required_argument, NULL, OPT_OPEN_MODE },
	{ "output", required_argument, NULL, 'o' },
	{ "parsable", no_argument, NULL, OPT_PARSABLE },
	{ "partition", required_argument, NULL, 'p' },
	{ "qos", required_argument, NULL, 'q' },
	{ "quiet", no_argument, NULL, 'Q' },
	{ "requeue", no_argument, NULL, OPT_REQUEUE },
	{ "signal", required_argument, NULL, OPT_SIGNAL },
	{ "time", required_argument, NULL, 't' },
	{ "usage", no_argument, NULL, OPT_USAGE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "wait", no_argument, NULL, 'W' },
	{ "wrap", required_argument, NULL, OPT_WRAP },
	/* Accepted, not enforced: one warning each. */
	{ "acctg-freq", required_argument, NULL, OPT_NOTED },
	{ "clusters", required_argument, NULL, 'M' },
	{ "comment", required_argument, NULL, OPT_NOTED },
	{ "contiguous", no_argument, NULL, OPT_NOTED },
	{ "core-spec", required_argument, NULL, 'S' },
	{ "cores-per-socket", required_argument, NULL, OPT_NOTED },
	{ "cpu-freq", required_argument, NULL, OPT_NOTED },
	{ "deadline", required_argument, NULL, OPT_NOTED },
	{ "distribution", required_argument, NULL, 'm' },
	{ "get-user-env", optional_argument, NULL, OPT_NOTED },
	{ "hint", required_argument, NULL, OPT_NOTED },
	{ "kill-on-invalid-dep", required_argument, NULL, OPT_NOTED },
	{ "licenses", required_argument, NULL, 'L' },
	{ "mem-bind", required_argument, NULL, OPT_NOTED },
	{ "mincpus", required_argument, NULL, OPT_MINCPUS },
	{ "nice", optional_argument, NULL, OPT_NOTED },
	{ "no-kill", optional_argument, NULL, 'k' },
	{ "ntasks-per-core", required_argument, NULL, OPT_NOTED },
	{ "ntasks-per-socket", required_argument, NULL, OPT_NOTED },
	{ "overcommit", no_argument, NULL, 'O' },
	{ "oversubscribe", no_argument, NULL, 's' },
	{ "priority", required_argument, NULL, OPT_NOTED },
	{ "profile", required_argument, NULL, OPT_NOTED },
	{ "propagate", optional_argument, NULL, OPT_NOTED },
	{ "reservation", required_argument, NULL, OPT_RESERVATION },
	{ "sockets-per-node", required_argument, NULL, OPT_NOTED },
	{ "spread-job", no_argument, NULL, OPT_NOTED },
	{ "switches", required_argument, NULL, OPT_NOTED },
	{ "threads-per-core", required_argument, NULL, OPT_NOTED },
	{ "time-min", required_argument, NULL, OPT_NOTED },
	{ "tmp", required_argument, NULL, OPT_TMP },
	{ "wckey", required_argument, NULL, OPT_NOTED },
	{ NULL, 0, NULL, 0 },
};

/* Short options: with ':' after those that take an argument. */
static const char optstring[] = "+:A:a:C:c:D:d:e:G:hHi:J:kL:M:m:N:n:Oo:p:q:QS:st:vWw:x:";

void slurmopt_init(struct slurmopt *o)
{
	*o = (struct slurmopt){
		.time = -1, .nodes_min = -1, .nodes_max = -1, .ntasks = -1, .ntasks_per_node = -1,
		.cpus_per_task = -1, .mincpus = -1, .mem = -1, .mem_per_cpu = -1, .mem_per_gpu = -1,
		.gpus_per_node = -1, .gpus = -1, .gpus_per_task = -1, .exclusive = -1, .hold = -1,
		.requeue = -1, .parsable = -1, .wait = -1, .help = -1,
	};
}

void slurmopt_clear(struct slurmopt *o)
{
	char **owned[] = { &o->job_name, &o->output, &o->error, &o->input, &o->partition, &o->array,
			  &o->dependency, &o->begin, &o->chdir, &o->export, &o->mail_type,
			  &o->mail_user, &o->wrap, &o->account, &o->signal, &o->nodelist, &o->exclude,
			  &o->constraint, &o->gpu_model, &o->licenses, &o->node_res, &o->qos, &o->reservation };

	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
		char *str = *owned[i];

		free(str);
	}
	for (size_t i = 0; i < o->n_warnings; i++)
		free(o->warnings[i]);
	free(o->warnings);
	slurmopt_init(o);
}

static int str_set(char **dst, const char *s)
{
	char *d = strdup(s);

	if (!d)
		return -ENOMEM;
	free(*dst);
	*dst = d;
	return 0;
}

static int warn(char ***v, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int warn(char ***v, size_t *n, const char *fmt, ...)
{
	char **w = realloc(*v, (*n + 1) * sizeof(char *));
	va_list ap;
	int r;

	if (!w)
		return -ENOMEM;
	*v = w;
	va_start(ap, fmt);
	r = vasprintf(&w[*n], fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	/* One line each: a script that repeats a directive is told once. */
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(w[i], w[*n])) {
			free(w[*n]);
			return 0;
		}
	(*n)++;
	return 0;
}

/* A count: digits only, 1..max (0..max when zero_ok). */
static int count_parse(const char *s, int64_t max, bool zero_ok, int64_t *ret)
{
	char *end;
	long long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v > max || (v == 0 && !zero_ok))
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Whether word (an option as typed, "--na" or "--na=x") is a prefix of
 * more than one long option and of none exactly. */
static bool option_ambiguous(const char *word)
{
	size_t len = strcspn(word + 2, "="), hits = 0;

	for (const struct option *lo = longopts; lo->name; lo++) {
		if (strncmp(lo->name, word + 2, len) != 0)
			continue;
		if (strlen(lo->name) == len)
			return false;
		hits++;
	}
	return hits > 1;
}

/* The GPUs' TYPE (a model, docs/GPUS.md) from m[0..len) of word=arg:
 * one per job. */
static int gpu_type_set(struct slurmopt *o, const char *word, const char *arg, const char *m, size_t len,
			struct error *err)
{
	char model[GPU_MODEL_MAX];
	struct error why;

	if (gpu_model_canon(m, len, model, &why) < 0)
		return error_set(err, -EINVAL, "Invalid generic resource (gres) specification: %s=%s (%s)", word,
				 arg, why.text);
	if (o->gpu_model && strcmp(o->gpu_model, model) != 0)
		return error_set(err, -EINVAL, "Invalid generic resource (gres) specification: %s=%s (a job's "
				 "GPUs are of one type on qpool; %s given already)", word, arg, o->gpu_model);
	if (!o->gpu_model && !(o->gpu_model = strdup(model)))
		return error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* [TYPE:]G of --gpus, --gpus-per-node, --gpus-per-task into *ret (0 to
 * a node's most times the nodes, lib/gpu.h) and the type. */
static int gpus_typed(struct slurmopt *o, const char *word, const char *arg, int64_t *ret, struct error *err)
{
	const char *colon = strrchr(arg, ':');
	int r = count_parse(colon ? colon + 1 : arg, NODE_GPUS_MAX * 100000LL, true, ret) < 0 ? -EINVAL : 0;

	if (r < 0)
		return error_set(err, -EINVAL, "%s=%s: not a number of GPUs", word, arg);
	if (colon)
		r = gpu_type_set(o, word, arg, arg, (size_t)(colon - arg), err);
	return r;
}

/* NAME:VALUE onto o->node_res, checked (lib/noderes.h); Slurm's words. */
static int node_res_add(struct slurmopt *o, const char *word, const char *arg, const char *name,
			const char *value, struct error *err)
{
	struct noderes r[NODERES_MAX];
	struct error why;
	char item[160], *grown;
	size_t n, nl = strcspn(name, ":");

	snprintf(item, sizeof(item), "%.*s:%s", (int)nl, name, value);
	if (noderes_parse(item, r, NODERES_MAX, &n, &why) < 0)
		return error_set(err, -EINVAL, "Invalid generic resource (gres) specification: %s=%s: %s", word, arg,
				 why.text);
	if (!o->node_res)
		return (o->node_res = strdup(item)) ? 0 : -ENOMEM;
	if (asprintf(&grown, "%s,%s", o->node_res, item) < 0)
		return -ENOMEM;
	free(o->node_res);
	o->node_res = grown;
	return 0;
}

/* --gres=gpu[:TYPE][:G][,...]: GPUs per node (1 when no count) of that
 * type (model) when given; another NAME[:N] is a node's counted
 * resource (docs/RESOURCES.md). */
static int gres_parse(struct slurmopt *o, const char *word, const char *arg, struct error *err)
{
	char buf[128], *save = NULL, *item;
	size_t len = strlen(arg);

	if (len >= sizeof(buf))
		return error_set(err, -EINVAL, "Invalid generic resource (gres) specification: %.40s...", arg);
	memcpy(buf, arg, len + 1);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *p = strchr(item, ':'), *q;
		int r;

		if (strncmp(item, "gpu", 3) != 0 || (item[3] && item[3] != ':')) {
			/* Another gres: a node's counted resource (docs/RESOURCES.md). */
			r = node_res_add(o, word, arg, item, p ? p + 1 : "1", err);
			if (r < 0)
				return r;
			continue;
		}
		o->gpus_per_node = 1;
		if (!p)
			continue;
		q = strrchr(item, ':');
		if (isdigit((unsigned char)q[1]) || q[1] == '-') {
			if (count_parse(q + 1, NODE_GPUS_MAX * 100000LL, true, &o->gpus_per_node) < 0)
				return error_set(err, -EINVAL, "%s=%s: not a number of GPUs", word, arg);
		} else {
			q = item + strlen(item);
		}
		if (q > p + 1) {
			r = gpu_type_set(o, word, arg, p + 1, (size_t)(q - p - 1), err);
			if (r < 0)
				return r;
		} else if (q == p + 1 && *q) {
			return error_set(err, -EINVAL, "Invalid generic resource (gres) specification: %s=%s",
					 word, arg);
		}
	}
	return 0;
}

static int option_apply(struct slurmopt *o, int c, const char *arg, const char *word, struct error *err)
{
	switch (c) {
	case 'A':
		return str_set(&o->account, arg);
	case 'a':
		return str_set(&o->array, arg);
	case OPT_BEGIN:
		return str_set(&o->begin, arg);
	case 'D':
		return str_set(&o->chdir, arg);
	case 'd':
		return str_set(&o->dependency, arg);
	case 'e':
		return str_set(&o->error, arg);
	case 'i':
		return str_set(&o->input, arg);
	case 'J':
		return str_set(&o->job_name, arg);
	case 'o':
		return str_set(&o->output, arg);
	case 'p':
		return str_set(&o->partition, arg);
	case OPT_EXPORT:
		return str_set(&o->export, arg);
	case OPT_MAIL_TYPE:
		return str_set(&o->mail_type, arg);
	case OPT_MAIL_USER:
		return str_set(&o->mail_user, arg);
	case OPT_WRAP:
		return str_set(&o->wrap, arg);
	case 't':
		if (slurm_time_parse(arg, &o->time) < 0)
			return error_set(err, -EINVAL, "Invalid --time specification");
		return 0;
	case 'N': {
		char lo[32], *dash;

		snprintf(lo, sizeof(lo), "%s", arg);
		dash = strchr(lo, '-');
		if (dash)
			*dash = '\0';
		if (count_parse(lo, 100000, false, &o->nodes_min) < 0 ||
		    (dash && count_parse(dash + 1, 100000, false, &o->nodes_max) < 0) ||
		    (dash && o->nodes_max < o->nodes_min))
			return error_set(err, -EINVAL, "invalid node count `%s'", arg);
		if (!dash)
			o->nodes_max = o->nodes_min;
		return 0;
	}
	case 'n':
		if (count_parse(arg, JOBSPEC_NCPUS_MAX, false, &o->ntasks) < 0)
			return error_set(err, -EINVAL, "invalid number of tasks (-n %s)", arg);
		return 0;
	case OPT_NTASKS_PER_NODE:
		if (count_parse(arg, JOBSPEC_NCPUS_MAX, false, &o->ntasks_per_node) < 0)
			return error_set(err, -EINVAL, "Invalid --ntasks-per-node argument: %s", arg);
		return 0;
	case 'c':
		if (count_parse(arg, JOBSPEC_NCPUS_MAX, false, &o->cpus_per_task) < 0)
			return error_set(err, -EINVAL, "invalid number of cpus per task (-c %s)", arg);
		return 0;
	case OPT_MINCPUS:
		if (count_parse(arg, JOBSPEC_NCPUS_MAX, false, &o->mincpus) < 0)
			return error_set(err, -EINVAL, "invalid --mincpus argument: %s", arg);
		return 0;
	case OPT_MEM:
		if (slurm_mem_parse(arg, &o->mem) < 0)
			return error_set(err, -EINVAL, "invalid memory constraint %s", arg);
		return 0;
	case OPT_MEM_PER_CPU:
		if (slurm_mem_parse(arg, &o->mem_per_cpu) < 0)
			return error_set(err, -EINVAL, "invalid memory constraint %s", arg);
		return 0;
	case OPT_MEM_PER_GPU:
		if (slurm_mem_parse(arg, &o->mem_per_gpu) < 0)
			return error_set(err, -EINVAL, "invalid memory constraint %s", arg);
		return 0;
	case OPT_EXCLUSIVE:
		return slurmopt_exclusive(o, arg, err);
	case 'H':
		o->hold = 1;
		return 0;
	case OPT_REQUEUE:
		o->requeue = 1;
		return 0;
	case OPT_NO_REQUEUE:
		o->requeue = 0;
		return 0;
	case OPT_PARSABLE:
		o->parsable = 1;
		return 0;
	case 'W':
		o->wait = 1;
		return 0;
	case 'h':
	case OPT_USAGE:
		o->help = 1;
		return 0;
	case 'Q':
	case 'v':
		return 0;
	case OPT_OPEN_MODE:
		if (strcmp(arg, "append") && strcmp(arg, "truncate"))
			return error_set(err, -EINVAL, "Invalid --open-mode argument: %s. Ignored", arg);
		if (!strcmp(arg, "append"))
			return warn(&o->warnings, &o->n_warnings,
				    "--open-mode=append: not enforced by qpool (outputs are truncated)");
		return 0;
	case OPT_TMP: {
		/* Slurm's --tmp=SIZE[units], megabytes without a unit: a node
		 * resource called tmp (docs/RESOURCES.md). */
		char v[64];

		if (strlen(arg) >= 40 || !*arg)
			return error_set(err, -EINVAL, "Invalid --tmp specification: %s", arg);
		snprintf(v, sizeof(v), "%s%s", arg, arg[strspn(arg, "0123456789")] ? "" : "M");
		return node_res_add(o, word, arg, "tmp", v, err);
	}
	case OPT_GRES:
		if (!strcasecmp(arg, "none"))
			return 0;
		return gres_parse(o, word, arg, err);
	case OPT_GPUS_PER_NODE:
		/* --gpus-per-node=[TYPE:]G: the type is the GPUs' model */
		return gpus_typed(o, word, arg, &o->gpus_per_node, err);
	case 'G':
		/* --gpus=[TYPE:]G */
		return gpus_typed(o, word, arg, &o->gpus, err);
	case OPT_GPUS_PER_TASK:
		/* --gpus-per-task=[TYPE:]G: each task's, so each node's share
		 * holds its tasks' */
		return gpus_typed(o, word, arg, &o->gpus_per_task, err);
	case OPT_GPUS_PER:
		return error_set(err, -EINVAL, "%s=%s: not supported by qpool (give --gpus-per-node, "
				 "--gpus-per-task or --gres=gpu:N)", word, arg);
	case 'C': {
		struct error why;

		if (nodesel_constraint_check(arg, &why) < 0)
			return error_set(err, -EINVAL, "Invalid feature specification: %s=%s: %s", word, arg,
					 why.text);
		return str_set(&o->constraint, arg);
	}
	case OPT_RESERVATION:
		/* docs/RESERVATIONS.md: whether it exists and the user may
		 * use it is qpoold's to say, in Slurm's words. */
		if (!*arg || strlen(arg) >= 64 || strpbrk(arg, " ,=\"'"))
			return error_set(err, -EINVAL, "Requested reservation is invalid: %s", arg);
		return str_set(&o->reservation, arg);
	case 'L': {
		struct license l[LICENSES_MAX];
		struct error why;
		size_t n;

		/* Slurm's ESLURM_INVALID_LICENSES; whether the pool has
		 * them is qpoold's to say. */
		if (license_request_parse(arg, l, LICENSES_MAX, &n, &why) < 0)
			return error_set(err, -EINVAL, "Invalid license specification: %s=%s: %s", word, arg,
					 why.text);
		return str_set(&o->licenses, arg);
	}
	case 'w':
	case 'x': {
		char **names = NULL;
		int n;

		/* Slurm reads a node list from a file when the argument holds
		 * a '/'; qpool takes the list itself. */
		if (strchr(arg, '/'))
			return error_set(err, -EINVAL, "%s=%s: a node list from a file is not supported by "
					 "qpool (give the names)", word, arg);
		n = hostlist_expand(arg, NODESEL_NAMES_MAX, &names);
		hostlist_free(names, n > 0 ? (size_t)n : 0);
		if (n <= 0)
			return error_set(err, -EINVAL, "Invalid node name specified: %s=%s", word, arg);
		return str_set(c == 'w' ? &o->nodelist : &o->exclude, arg);
	}
	case OPT_SIGNAL: {
		struct end_notice n;

		/* [{R|B}:]SIG[@SECONDS]: qpool has no reservations to signal. */
		if (end_notice_parse(arg, &n) < 0)
			return error_set(err, -EINVAL, "Invalid --signal specification");
		return str_set(&o->signal, arg);
	}
	case 'q':
		return str_set(&o->qos, arg);
	default:
		return warn(&o->warnings, &o->n_warnings, "%s%s%s: not enforced by qpool (ignored)", word,
			    arg ? "=" : "", arg ? arg : "");
	}
}

static const char *const exclusive_kinds[] = { "user", "mcs", "topo" };

int slurmopt_exclusive(struct slurmopt *o, const char *arg, struct error *err)
{
	if (!arg) {
		o->exclusive = 1;
		return 0;
	}
	for (int i = 0; i < 3; i++)
		if (!strcmp(arg, exclusive_kinds[i])) {
			o->exclusive = 2 + i;
			return 0;
		}
	return error_set(err, -EINVAL, "invalid exclusive option %s", arg);
}

int slurmopt_parse(struct slurmopt *o, int argc, char **argv, int *ret_optind, struct error *err)
{
	int c, idx, r;

	optind = 0;   /* glibc: a full re-initialisation, for each argv */
	opterr = 0;
	for (;;) {
		const char *word;
		char shown[64];

		/* getopt_long sets idx for a long option only: a short one (or
		 * a long one's value in its own word) leaves it -1. */
		idx = -1;
		c = getopt_long(argc, argv, optstring, longopts, &idx);
		if (c == -1)
			break;
		word = argv[optind - 1];

		if (c == '?') {
			if (optopt)
				return error_set(err, -EINVAL, "invalid option -- '%c'", optopt);
			if (word[0] == '-' && word[1] == '-' && option_ambiguous(word))
				return error_set(err, -EINVAL, "option '%.*s' is ambiguous",
						 (int)strcspn(word, "=") < 80 ? (int)strcspn(word, "=") : 80, word);
			return error_set(err, -EINVAL, "unrecognized option '%.80s'", word);
		}
		if (c == ':') {
			if (strncmp(word, "--", 2) != 0)
				return error_set(err, -EINVAL, "option requires an argument -- '%c'", optopt);
			return error_set(err, -EINVAL, "option '%.80s' requires an argument", word);
		}
		/* The name shown in messages: the long one, as Slurm's are;
		 * a short option's is the first long one with its letter. */
		if (idx >= 0)
			snprintf(shown, sizeof(shown), "--%s", longopts[idx].name);
		else
			for (const struct option *lo = longopts; lo->name; lo++)
				if (lo->val == c) {
					snprintf(shown, sizeof(shown), "--%s", lo->name);
					break;
				}
		r = option_apply(o, c, optarg, shown, err);
		if (r < 0)
			return r;
	}
	/* sbatch's separator of a heterogeneous job's components. */
	if (optind < argc && !strcmp(argv[optind], ":"))
		return error_set(err, -EINVAL, "heterogeneous jobs (sbatch ... : ...) are not supported by qpool; "
				 "submit the components as separate jobs");
	*ret_optind = optind;
	return 0;
}

/* Appends one word of s[0..n) to *v. */
static int word_add(char ***v, size_t *nv, const char *s, size_t n)
{
	char **w;

	if (*nv + 2 > SCRIPT_WORDS_MAX)
		return -E2BIG;
	w = realloc(*v, (*nv + 2) * sizeof(char *));
	if (!w)
		return -ENOMEM;
	*v = w;
	w[*nv] = strndup(s, n);
	if (!w[*nv])
		return -ENOMEM;
	w[++*nv] = NULL;
	return 0;
}

/* Splits line[0..len) into words onto *v. */
static int line_words(const char *line, size_t len, char ***v, size_t *nv)
{
	char *word = malloc(len + 1);
	size_t i = 0;
	int r = 0;

	if (!word)
		return -ENOMEM;
	while (i < len && r == 0) {
		size_t n = 0;
		char quote = 0;

		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
			i++;
		if (i == len || line[i] == '#')
			break;
		for (; i < len; i++) {
			char ch = line[i];

			if (quote) {
				if (ch == quote)
					quote = 0;
				else
					word[n++] = ch;
			} else if (ch == '\'' || ch == '"') {
				quote = ch;
			} else if (ch == ' ' || ch == '\t' || ch == '\r') {
				break;
			} else {
				word[n++] = ch;
			}
		}
		r = word_add(v, nv, word, n);
	}
	free(word);
	return r;
}

int slurmopt_script_argv(const char *text, size_t len, char ***ret_argv)
{
	char **v = NULL;
	size_t nv = 0, at = 0;
	bool first = true;
	int r = word_add(&v, &nv, "sbatch", 6);

	while (r == 0 && at < len) {
		const char *line = text + at, *nl = memchr(line, '\n', len - at);
		size_t n = nl ? (size_t)(nl - line) : len - at, blank = 0;

		at += n + (nl != NULL);
		while (blank < n && (line[blank] == ' ' || line[blank] == '\t' || line[blank] == '\r'))
			blank++;
		if (first && n >= 2 && !strncmp(line, "#!", 2)) {
			first = false;
			continue;
		}
		first = false;
		/* As sbatch reads them: the words after the magic word, blank
		 * or not ("#SBATCH--time=5" is --time=5). */
		if (n >= 7 && !strncmp(line, "#SBATCH", 7)) {
			r = line_words(line + 7, n - 7, &v, &nv);
			continue;
		}
		/* Directives stop at the first command. */
		if (blank < n && line[blank] != '#')
			break;
	}
	if (r < 0) {
		for (size_t i = 0; i < nv; i++)
			free(v[i]);
		free(v);
		return r;
	}
	*ret_argv = v;
	return (int)nv;
}

/* --dependency into PBS's depend= text: Slurm's types are PBS's; a bare
 * id list is afterany; singleton is left to the caller. */
static int dependency_pbs(const char *dep, char *buf, size_t len, struct error *err)
{
	size_t at = 0;

	buf[0] = '\0';
	if (strchr(dep, '?'))
		return error_set(err, -EINVAL, "--dependency=%s: '?' (any of) is not supported by qpool; "
				 "use ',' (all of)", dep);
	for (const char *p = dep; *p;) {
		size_t n = strcspn(p, ",");
		char part[512];
		const char *type = "afterany", *ids = part;
		int k;

		if (n >= sizeof(part))
			return error_set(err, -EINVAL, "Invalid dependency specification: %s", dep);
		memcpy(part, p, n);
		part[n] = '\0';
		p += n + (p[n] == ',');
		if (!strcmp(part, "singleton"))
			continue;
		if (!isdigit((unsigned char)part[0])) {
			char *colon = strchr(part, ':');

			if (!colon)
				return error_set(err, -EINVAL, "Invalid dependency specification: %s", dep);
			*colon = '\0';
			type = part;
			ids = colon + 1;
			if (strcmp(type, "after") && strcmp(type, "afterok") && strcmp(type, "afternotok") &&
			    strcmp(type, "afterany"))
				return error_set(err, -EINVAL, "--dependency=%s: %s is not supported by qpool "
						 "(after, afterok, afternotok, afterany, singleton)", dep, type);
		}
		if (!*ids || strspn(ids, "0123456789:") != strlen(ids))
			return error_set(err, -EINVAL, "Invalid dependency specification: %s", dep);
		k = snprintf(buf + at, len - at, "%s%s:%s", at ? "," : "", type, ids);
		if (k < 0 || (size_t)k >= len - at)
			return error_set(err, -EINVAL, "--dependency=%s: too long", dep);
		at += (size_t)k;
	}
	return 0;
}

/* --mail-type's list into PBS's -m letters; the types qpool sends no
 * mail for (it mails at begin, end and failure) each a warning onto js. */
static int mail_points(const char *types, char *buf, struct jobspec *js, struct error *err)
{
	static const struct {
		const char *name, *letters;
	} map[] = {
		{ "NONE", "" }, { "BEGIN", "b" }, { "END", "e" }, { "FAIL", "a" }, { "REQUEUE", "a" },
		{ "ALL", "abe" }, { "INVALID_DEPEND", "a" }, { "STAGE_OUT", "" }, { "TIME_LIMIT", "" },
		{ "TIME_LIMIT_90", "" }, { "TIME_LIMIT_80", "" }, { "TIME_LIMIT_50", "" },
		{ "ARRAY_TASKS", "" },
	};
	bool a = false, b = false, e = false;

	for (const char *p = types; *p;) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (strlen(map[i].name) == n && !strncasecmp(p, map[i].name, n))
				break;
		if (i == sizeof(map) / sizeof(map[0]))
			return error_set(err, -EINVAL, "--mail-type=%s invalid", types);
		if (!map[i].letters[0] && strcmp(map[i].name, "NONE") &&
		    warn(&js->warnings, &js->n_warnings, "--mail-type=%.*s: not enforced by qpool (mail "
			 "is sent at begin, end and failure only)", (int)n, p) < 0)
			return -ENOMEM;
		a |= strchr(map[i].letters, 'a') != NULL;
		b |= strchr(map[i].letters, 'b') != NULL;
		e |= strchr(map[i].letters, 'e') != NULL;
		p += n + (p[n] == ',');
	}
	snprintf(buf, 4, "%s%s%s", a ? "a" : "", b ? "b" : "", e ? "e" : "");
	if (!buf[0])
		strcpy(buf, "n");
	return 0;
}

/* jobspec_option with a formatted argument. */
static int jobspec_set(struct jobspec *js, int opt, struct error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int jobspec_set(struct jobspec *js, int opt, struct error *err, const char *fmt, ...)
{
	char arg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(arg, sizeof(arg), fmt, ap);
	va_end(ap);
	return jobspec_option(js, opt, arg, err);
}

/* The CPUs, tasks and nodes: one node's ncpus, or chunks across nodes. */
static int resources(const struct slurmopt *o, struct jobspec *js, struct error *err)
{
	int64_t cpt = o->cpus_per_task > 0 ? o->cpus_per_task : 1;
	int64_t nodes = o->nodes_min, tasks = o->ntasks, tpn = o->ntasks_per_node;
	char mem[64] = "", gpus[32] = "";
	int r;

	/* -w: every node named is the job's, as Slurm allocates them; a
	 * count beside it must match (qpool adds no node of its own). */
	if (o->nodelist) {
		char **names = NULL;
		int k = hostlist_expand(o->nodelist, NODESEL_NAMES_MAX, &names);
		int64_t uniq = 0;

		for (int i = 0; i < k; i++) {
			int d = 0;

			for (int m = 0; m < i && !d; m++)
				d = !strcmp(names[m], names[i]);
			uniq += !d;
		}
		hostlist_free(names, k > 0 ? (size_t)k : 0);
		if (nodes < 0)
			nodes = uniq;
		else if (nodes != uniq)
			return error_set(err, -EINVAL, "Node count specification invalid: --nodes=%" PRId64
					 " with --nodelist of %" PRId64 " nodes (qpool uses the list's nodes only)",
					 nodes, uniq);
	}
	/* -N, -n and a --ntasks-per-node they leave no room for: sbatch's
	 * warning, in its words; -n's tasks are dealt out over -N's nodes. */
	if (nodes > 0 && tasks > 0 && tpn > 0 && tasks > nodes * tpn) {
		r = warn(&js->warnings, &js->n_warnings, "can't honor --ntasks-per-node set to %" PRId64 " which "
			 "doesn't match the requested tasks %" PRId64 " with the number of requested nodes %" PRId64
			 ". Ignoring --ntasks-per-node.", tpn, tasks, nodes);
		if (r < 0)
			return r;
	}
	if (nodes < 0 && tasks > 0 && tpn > 0)
		nodes = (tasks + tpn - 1) / tpn;
	if (nodes < 0)
		nodes = tasks > 1 ? -1 : 1;
	if (tasks < 0)
		tasks = (nodes > 0 ? nodes : 1) * (tpn > 0 ? tpn : 1);
	/* As Slurm: fewer tasks than nodes shrinks the nodes. */
	if (nodes > tasks) {
		r = warn(&js->warnings, &js->n_warnings, "can't run %" PRId64 " processes on %" PRId64
			 " nodes, setting nnodes to %" PRId64, tasks, nodes, tasks);
		if (r < 0)
			return r;
		nodes = tasks;
	}
	/* Two GPU counts of one job that disagree: refused, where one of them
	 * used to win unsaid (--gpus-per-node over --gpus, either over
	 * --gpus-per-task). Counts that agree stand together. */
	if (o->gpus > 0 && o->gpus_per_node > 0 && nodes > 0 && o->gpus != o->gpus_per_node * nodes)
		return error_set(err, -EINVAL, "--gpus=%" PRId64 " and --gpus-per-node=%" PRId64 " over %" PRId64
				 " node%s disagree (give one of them)", o->gpus, o->gpus_per_node, nodes,
				 nodes == 1 ? "" : "s");
	if (o->gpus_per_task > 0 && (o->gpus > 0 || (o->gpus_per_node > 0 && nodes > 0))) {
		int64_t total = o->gpus > 0 ? o->gpus : o->gpus_per_node * nodes;

		if (total != o->gpus_per_task * tasks)
			return error_set(err, -EINVAL, "--gpus-per-task=%" PRId64 " for %" PRId64 " task%s and %s=%"
					 PRId64 " disagree (give one of them)", o->gpus_per_task, tasks,
					 tasks == 1 ? "" : "s", o->gpus > 0 ? "--gpus" : "--gpus-per-node",
					 o->gpus > 0 ? o->gpus : o->gpus_per_node);
	}
	/* --ntasks alone: Slurm spreads them as it finds room; so does
	 * place=free, one task per chunk. */
	if (nodes < 0) {
		int64_t per = o->mem_per_cpu > 0 ? o->mem_per_cpu * cpt
			      : o->mem_per_gpu > 0 && o->gpus > 0 ? o->mem_per_gpu * (o->gpus / tasks)
			      : o->mem_per_gpu > 0 && o->gpus_per_task > 0 ? o->mem_per_gpu * o->gpus_per_task : 0;

		if (per)
			snprintf(mem, sizeof(mem), ":mem=%" PRId64 , per);
		if (o->mem > 0)
			return error_set(err, -EINVAL, "--mem with --ntasks and no --nodes: give --nodes "
					 "or --mem-per-cpu (qpool places tasks, not nodes)");
		if (o->mincpus > 0)
			return error_set(err, -EINVAL, "--mincpus with --ntasks and no --nodes: give --nodes "
					 "(qpool places tasks, not nodes)");
		/* GPUs go with tasks only when they divide evenly among them. */
		if (o->gpus_per_node > 0 || (o->gpus > 0 && o->gpus % tasks))
			return error_set(err, -EINVAL, "%s with --ntasks and no --nodes: give --nodes "
					 "(qpool places tasks, not nodes)",
					 o->gpus_per_node > 0 ? "--gpus-per-node" : "--gpus");
		if (o->gpus > 0)
			snprintf(gpus, sizeof(gpus), ":ngpus=%" PRId64, o->gpus / tasks);
		else if (o->gpus_per_task > 0)
			snprintf(gpus, sizeof(gpus), ":ngpus=%" PRId64, o->gpus_per_task);
		r = jobspec_set(js, 'l', err, "select=%" PRId64 ":ncpus=%" PRId64 ":mpiprocs=1%s%s", tasks,
				cpt, mem, gpus);
		return r ? r : jobspec_option(js, 'l', "place=free", err);
	}
	if (nodes == 0)   /* nodes >= 1 from here: tasks >= 1 bounds it */
		return error_set(err, -EINVAL, "invalid node count `0'");
	/* --gpus=G over N nodes: G/N each, when they divide (docs/GPUS.md);
	 * --gpus-per-node wins. */
	if (o->gpus_per_node > 0)
		snprintf(gpus, sizeof(gpus), ":ngpus=%" PRId64, o->gpus_per_node);
	else if (o->gpus > 0 && o->gpus % nodes)
		return error_set(err, -EINVAL, "--gpus=%" PRId64 " over %" PRId64 " nodes: not the same "
				 "number on each (give --gpus-per-node)", o->gpus, nodes);
	else if (o->gpus > 0)
		snprintf(gpus, sizeof(gpus), ":ngpus=%" PRId64, o->gpus / nodes);
	int64_t node_gpus = o->gpus_per_node > 0 ? o->gpus_per_node : o->gpus > 0 ? o->gpus / nodes : 0;
	/* N nodes: the tasks dealt out as Slurm's block distribution does,
	 * the first nodes one more when they do not divide. */
	int64_t base = tasks / nodes, extra = tasks % nodes;
	char select[512];
	size_t at = 0;

	for (int part = 0; part < 2; part++) {
		int64_t count = part == 0 ? extra : nodes - extra, t = part == 0 ? base + 1 : base;
		int64_t ncpus = t * cpt;

		if (count == 0 || t == 0)
			continue;
		/* --gpus-per-task: each node's share has its tasks' GPUs. */
		if (o->gpus_per_task > 0 && o->gpus_per_node <= 0 && o->gpus <= 0) {
			node_gpus = t * o->gpus_per_task;
			snprintf(gpus, sizeof(gpus), ":ngpus=%" PRId64, node_gpus);
		}
		/* --mincpus: each node's share is at least that many CPUs, as
		 * Slurm allocates them (a node with fewer cannot take it). */
		if (o->mincpus > ncpus)
			ncpus = o->mincpus;
		mem[0] = '\0';
		if (o->mem > 0)
			snprintf(mem, sizeof(mem), ":mem=%" PRId64 , o->mem);
		else if (o->mem_per_cpu > 0)
			snprintf(mem, sizeof(mem), ":mem=%" PRId64 , o->mem_per_cpu * t * cpt);
		else if (o->mem_per_gpu > 0)
			snprintf(mem, sizeof(mem), ":mem=%" PRId64 , o->mem_per_gpu * node_gpus);
		at += (size_t)snprintf(select + at, sizeof(select) - at, "%s%" PRId64 ":ncpus=%" PRId64
				       ":mpiprocs=%" PRId64 "%s%s", at ? "+" : "", count, ncpus, t, mem, gpus);
	}
	if (nodes == 1) {
		int64_t ncpus = tasks * cpt > o->mincpus ? tasks * cpt : o->mincpus;

		r = jobspec_set(js, 'l', err, "ncpus=%" PRId64, ncpus);
		/* Fewer tasks than CPUs (-c, --mincpus): a node file line a
		 * task, as PBS Pro's mpiprocs gives, so that an mpirun in the
		 * job starts --ntasks ranks, not one a CPU (docs/PARALLEL.md). */
		if (!r && ncpus != tasks)
			r = jobspec_set(js, 'l', err, "mpiprocs=%" PRId64, tasks);
		if (!r && gpus[0])
			r = jobspec_set(js, 'l', err, "ngpus=%s", gpus + 7);
		if (!r && (o->mem > 0 || o->mem_per_cpu > 0 || o->mem_per_gpu > 0))
			r = jobspec_set(js, 'l', err, "mem=%" PRId64,
					o->mem > 0 ? o->mem : o->mem_per_cpu > 0 ? o->mem_per_cpu * tasks * cpt
					: o->mem_per_gpu * node_gpus);
		return r;
	}
	r = jobspec_set(js, 'l', err, "select=%s", select);
	return r ? r : jobspec_option(js, 'l', "place=scatter", err);
}

int slurmopt_jobspec(const struct slurmopt *o, const char *user, struct jobspec *js, struct error *err)
{
	const char *name = o->job_name ? o->job_name : NULL;
	char path[4096], text[4096];
	bool warned, same = false;
	int r = 0;

	/* sbatch's fatal(): one way of asking for memory, wherever each
	 * was given (the script or the command line). */
	if ((o->mem >= 0) + (o->mem_per_cpu >= 0) + (o->mem_per_gpu >= 0) > 1)
		return error_set(err, -EINVAL, "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
	/* --mem-per-gpu is memory for each GPU the job has on a node: with
	 * none it would ask for nothing (qpool refuses rather than guess). */
	if (o->mem_per_gpu > 0 && o->gpus_per_node <= 0 && o->gpus <= 0 && o->gpus_per_task <= 0)
		return error_set(err, -EINVAL, "--mem-per-gpu=%" PRId64 "M without GPUs: give --gpus, "
				 "--gpus-per-node, --gpus-per-task or --gres=gpu:N", o->mem_per_gpu >> 20);
	if (o->job_name)
		r = jobspec_option(js, 'N', o->job_name, err);
	if (!r && o->partition) {
		size_t n = strcspn(o->partition, ",");

		snprintf(text, sizeof(text), "%.*s", (int)n, o->partition);
		r = jobspec_option(js, 'q', text, err);
	}
	if (!r && o->time > 0)
		r = jobspec_set(js, 'l', err, "walltime=%" PRId64, o->time);
	/* UNLIMITED (0, INFINITE, -1): a qpool job always has a limit, the
	 * queue's walltime_default when it asks for none; said, since a job
	 * that meant to run for days would end at that default. */
	if (!r && o->time == 0)
		r = warn(&js->warnings, &js->n_warnings, "--time=UNLIMITED: not enforced by qpool (the job gets "
			 "its queue's default walltime; give --time to run longer)");
	if (!r)
		r = resources(o, js, err);
	/* Slurm's --exclusive: no other job on the nodes, and the job gets
	 * each node's CPUs, all of them (docs/SLURM-TOOLS.md). */
	if (!r && o->exclusive > 0) {
		r = jobspec_option(js, 'l', js->n_chunks ? "place=scatter:excl" : "place=excl", err);
		js->excl = 2;
	}
	/* Nodes shared only by the user's own jobs (or an MCS label's, or a
	 * topology block's): qpool has no such sharing, and gives the job
	 * its nodes whole, which keeps others off them as asked. */
	if (!r && o->exclusive > 1)
		r = warn(&js->warnings, &js->n_warnings, "--exclusive=%s: not enforced by qpool as asked (the "
			 "job gets its nodes whole: no other job on them, its user's own neither)",
			 exclusive_kinds[o->exclusive - 2]);
	if (!r && o->nodes_max > o->nodes_min)
		r = warn(&js->warnings, &js->n_warnings, "--nodes=%" PRId64 "-%" PRId64 ": the job gets "
			 "%" PRId64 " nodes (qpool does not grow a job to the maximum)", o->nodes_min,
			 o->nodes_max, o->nodes_min);
	/* --mem=0: all the memory of each node, as Slurm gives it; qpoold
	 * counts it (docs/ARCHITECTURE.md, "Memory counted"). */
	if (!r && (o->mem == 0 || o->mem_per_cpu == 0 || o->mem_per_gpu == 0))
		js->mem_node = 1;
	for (int k = 0; k < 2 && !r; k++) {
		const char *pat = k == 0 ? o->output : o->error;

		if (!pat)
			continue;
		r = slurm_path_expand(pat, name ? name : "sbatch", user, o->array != NULL, path,
				      sizeof(path), &warned, err);
		/* --error naming the output's file: one stream into it, as
		 * slurmstepd opens the one file once (two opens would each
		 * write from offset 0 over the other). */
		if (!r && k == 1 && js->stdout_path && !strcmp(path, js->stdout_path)) {
			same = true;
			continue;
		}
		if (!r)
			r = jobspec_option(js, k == 0 ? 'o' : 'e', path, err);
		if (!r && warned)
			r = warn(&js->warnings, &js->n_warnings, "%s: a width in a %%-pattern is not "
				 "enforced by qpool (numbers are not padded)", pat);
	}
	if (!r && o->input && strcmp(o->input, "/dev/null"))
		r = error_set(err, -EINVAL, "--input=%s: qpool batch jobs read /dev/null", o->input);
	/* Slurm joins the error stream into the output unless --error is
	 * given (apart from it). */
	if (!r)
		r = jobspec_option(js, 'j', o->error && !same ? "n" : "oe", err);
	if (!r && o->array) {
		struct arrayspec a;

		if (arrayspec_parse(o->array, 't', true, &a, err) < 0)
			return error_set(err, -EINVAL, "invalid --array specification: %s", o->array);
		r = jobspec_option(js, 't', o->array, err);
	}
	if (!r && o->signal)
		r = jobspec_set(js, 'l', err, "signal=%s", o->signal);
	if (!r && o->dependency) {
		r = dependency_pbs(o->dependency, text, sizeof(text), err);
		if (!r && text[0])
			r = jobspec_set(js, 'W', err, "depend=%s", text);
		/* Slurm lifts a dependency on a job it does not know ("job is
		 * gone, dependency lifted") and runs the job; PBS refuses it. */
		js->depend_lift = 1;
	}
	if (!r && o->hold > 0)
		r = jobspec_option(js, 'h', NULL, err);
	if (!r && o->requeue >= 0)
		r = jobspec_option(js, 'r', o->requeue ? "y" : "n", err);
	if (!r && o->mail_type) {
		r = mail_points(o->mail_type, text, js, err);
		if (!r)
			r = jobspec_option(js, 'm', text, err);
	}
	if (!r && o->mail_user)
		r = jobspec_option(js, 'M', o->mail_user, err);
	if (!r && o->account)
		r = jobspec_option(js, 'A', o->account, err);
	/* --qos: PBS's form, -l qos=NAME (docs/QOS.md). */
	if (!r && o->qos)
		r = jobspec_set(js, 'l', err, "qos=%s", o->qos);
	if (!r && o->reservation)
		r = jobspec_reservation_set(js, o->reservation);
	if (!r && o->chdir)
		r = jobspec_option(js, 'd', o->chdir, err);
	if (!r && o->nodelist && !(js->nodelist = strdup(o->nodelist)))
		r = -ENOMEM;
	if (!r && o->exclude && !(js->exclude = strdup(o->exclude)))
		r = -ENOMEM;
	if (!r && o->constraint && !(js->constraint = strdup(o->constraint)))
		r = -ENOMEM;
	if (!r && o->gpu_model && !(js->gpu_model = strdup(o->gpu_model)))
		r = -ENOMEM;
	if (!r && o->licenses && !(js->licenses = strdup(o->licenses)))
		r = -ENOMEM;
	if (!r && o->node_res && !(js->node_res = strdup(o->node_res)))
		r = -ENOMEM;
	for (size_t i = 0; i < o->n_warnings && !r; i++)
		r = warn(&js->warnings, &js->n_warnings, "%s", o->warnings[i]);
	return r;
}

/* Appends the option opt with its argument (printf-formatted) to *v. */
static int qsub_arg(char ***v, size_t *nv, const char *opt, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int qsub_arg(char ***v, size_t *nv, const char *opt, const char *fmt, ...)
{
	char **w = realloc(*v, (*nv + 3) * sizeof(char *));
	va_list ap;
	int r;

	if (!w)
		return -ENOMEM;
	*v = w;
	w[*nv] = strdup(opt);
	va_start(ap, fmt);
	r = vasprintf(&w[*nv + 1], fmt, ap);
	va_end(ap);
	if (!w[*nv] || r < 0) {
		free(w[*nv]);
		w[*nv] = NULL;
		return -ENOMEM;
	}
	*nv += 2;
	w[*nv] = NULL;
	return 0;
}

int slurmopt_qsub_argv(const struct slurmopt *o, const char *user, struct jobspec *js, char ***ret_argv,
		       struct error *err)
{
	char **v = calloc(1, sizeof(char *));
	size_t nv = 0;
	bool chunks = false;
	int r = v ? slurmopt_jobspec(o, user, js, err) : -ENOMEM;

	/* qsub has no words for these: refused, not dropped. */
	if (!r && (o->nodelist || o->exclude || o->constraint || o->node_res))
		r = error_set(err, -EINVAL, "%s: not supported by qpool's salloc and srun outside a job "
			      "(sbatch takes it)", o->nodelist ? "--nodelist" : o->exclude ? "--exclude" :
			      o->constraint ? "--constraint" : "--gres or --tmp (a node resource)");
	if (!r && js->name)
		r = qsub_arg(&v, &nv, "-N", "%s", js->name);
	if (!r && js->queue)
		r = qsub_arg(&v, &nv, "-q", "%s", js->queue);
	/* One -l per license: commas split qsub's -l. */
	for (const char *p = js->licenses; !r && p && *p;) {
		size_t k = strcspn(p, ",");

		r = qsub_arg(&v, &nv, "-l", "licenses=%.*s", (int)k, p);
		p += k + (p[k] == ',');
	}
	if (!r && js->walltime > 0)
		r = qsub_arg(&v, &nv, "-l", "walltime=%" PRId64, js->walltime);
	/* a node's CPUs when there is no select (first: a plain ncpus=
	 * after qexec's own select= asks for one node), then select= and
	 * place= (across nodes) and mem= as recorded */
	if (!r) {
		chunks = jobspec_attr(js, "Resource_List.select") || jobspec_attr(js, "Resource_List.nodes");
		if (!chunks && js->ncpus > 0)
			r = qsub_arg(&v, &nv, "-l", "ncpus=%" PRId64, js->ncpus);
	}
	for (size_t i = 0; !r && i < js->n_attrs; i++) {
		const char *key = js->attrs[i].name;

		if (strncmp(key, "Resource_List.", 14) || !strcmp(key + 14, "nodect"))
			continue;
		r = qsub_arg(&v, &nv, "-l", "%s=%s", key + 14, js->attrs[i].value);
	}
	if (!r && o->account)
		r = qsub_arg(&v, &nv, "-A", "%s", o->account);
	/* qsub's word for a reservation is its queue (qsub -q R12). */
	if (!r && o->reservation && o->partition)
		r = error_set(err, -EINVAL, "--reservation with --partition: not supported by qpool's salloc and srun "
			      "outside a job (sbatch takes both)");
	else if (!r && o->reservation)
		r = qsub_arg(&v, &nv, "-q", "%s", o->reservation);
	if (r < 0) {
		for (size_t i = 0; v && i < nv; i++)
			free(v[i]);
		free(v);
		return r;
	}
	*ret_argv = v;
	return 0;
}

static int env_int(json_t *env, const char *name, int64_t v)
{
	char text[24];

	snprintf(text, sizeof(text), "%" PRId64, v);
	return json_object_set_new(env, name, json_string(text)) < 0 ? -ENOMEM : 0;
}

int slurmopt_env(const struct slurmopt *o, json_t *env)
{
	int r = 0;

	if (o->ntasks > 0)
		r |= env_int(env, "SLURM_NTASKS", o->ntasks);
	if (o->ntasks > 0)
		r |= env_int(env, "SLURM_NPROCS", o->ntasks);
	if (o->ntasks_per_node > 0)
		r |= env_int(env, "SLURM_NTASKS_PER_NODE", o->ntasks_per_node);
	if (o->cpus_per_task > 0)
		r |= env_int(env, "SLURM_CPUS_PER_TASK", o->cpus_per_task);
	if (o->mem_per_cpu > 0)
		r |= env_int(env, "SLURM_MEM_PER_CPU", o->mem_per_cpu >> 20);
	if (o->mem_per_gpu > 0)
		r |= env_int(env, "SLURM_MEM_PER_GPU", o->mem_per_gpu >> 20);
	return r ? -ENOMEM : 0;
}

int slurmopt_env_export(const struct slurmopt *o)
{
	json_t *env = json_object();

	if (!env || slurmopt_env(o, env) < 0) {
		json_decref(env);
		return -ENOMEM;
	}
	for (void *it = json_object_iter(env); it; it = json_object_iter_next(env, it))
		if (setenv(json_object_iter_key(it), json_string_value(json_object_iter_value(it)), 1) < 0) {
			json_decref(env);
			return -ENOMEM;
		}
	json_decref(env);
	return 0;
}
