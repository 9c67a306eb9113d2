/* SPDX-License-Identifier: MIT */
/* srun: Slurm's job step. Inside a job, qexec's ranks under Slurm's options
 * and SLURM_* task variables; outside, a job for them, in the foreground. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base64.h"
#include "cmd.h"
#include "exe.h"
#include "hostlist.h"
#include "slurmopt.h"
#include "slurmstep.h"
#include "slurmtext.h"
#include "version.h"

#define MAX_NODES 256
/* --multi-prog's file travels to every node in the tasks' environment. */
#define MULTIPROG_MAX 65536

static const char usage_text[] =
	"Usage: srun [OPTIONS...] executable [args...]\n"
	"Runs a job step (Slurm's options; see srun(1)): inside a job, on its nodes;\n"
	"outside one, in a new job, in the foreground. Exits with the tasks' status.\n"
	"  -n, --ntasks=N             -N, --nodes=N              --ntasks-per-node=N\n"
	"  -c, --cpus-per-task=N      --mpi=pmi2|pmix|none       -l, --label\n"
	"  --multi-prog               -o, --output=pattern       -e, --error=pattern\n"
	"  -i, --input=pattern        -D, --chdir=dir            --export=ALL|NONE|VARS\n"
	"  -u, --unbuffered           --cpu-bind=type            -J, --job-name=name\n"
	"  --exclusive                -t, --time=[D-]H:M:S       -p, --partition=list\n"
	"  --mem=SIZE                 --mem-per-cpu=SIZE         -A, --account=name\n"
	"  -h, --help\n";

enum {
	OPT_TPN = 0x100, OPT_MPI, OPT_MULTI, OPT_HET, OPT_CPU_BIND, OPT_EXCL, OPT_EXPORT, OPT_MEM,
	OPT_MEM_PER_CPU, OPT_USAGE, OPT_GPUS, OPT_PTY, OPT_NOTED, OPT_TASK,
	OPT_LAYOUT, OPT_NAMES, OPT_STEP,
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
	{ "overlap", no_argument, NULL, OPT_NOTED },
	{ "partition", required_argument, NULL, 'p' },
	{ "pty", no_argument, NULL, OPT_PTY },
	{ "qos", required_argument, NULL, 'q' },
	{ "quiet", no_argument, NULL, 'Q' },
	{ "time", required_argument, NULL, 't' },
	{ "unbuffered", no_argument, NULL, 'u' },
	{ "usage", no_argument, NULL, OPT_USAGE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "wait", required_argument, NULL, 'W' },
	/* Accepted, not enforced. */
	{ "hint", required_argument, NULL, OPT_NOTED },
	{ "mem-bind", required_argument, NULL, OPT_NOTED },
	{ "gpu-bind", required_argument, NULL, OPT_NOTED },
	{ "ntasks-per-core", required_argument, NULL, OPT_NOTED },
	{ "threads-per-core", required_argument, NULL, OPT_NOTED },
	{ "propagate", optional_argument, NULL, OPT_NOTED },
	{ "signal", required_argument, NULL, OPT_NOTED },
	{ "open-mode", required_argument, NULL, OPT_NOTED },
	{ "reservation", required_argument, NULL, OPT_NOTED },
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

static const char optstring[] = "+:A:c:C:D:e:hi:I::J:K::lm:n:N:o:Op:q:Qt:uvW:w:x:";

/* What srun was told: the allocation's part (for a job srun submits) in
 * job, the step's beside it. */
struct srun {
	struct slurmopt job;
	const char *mpi;          /* --mpi, else SLURM_MPI_TYPE; NULL: all */
	const char *output, *error, *input, *chdir, *export;
	const char *layout, *names;   /* the tasks' side */
	int64_t step;
	bool label, multi_prog, het, task;
};

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
	return *dst ? 0 : cmd_fail(1, "error: out of memory");
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

/* One option; 0, or an exit status after a message. */
static int option_apply(struct srun *s, int c, const char *arg, const char *word)
{
	struct slurmopt *o = &s->job;

	switch (c) {
	case 'n':
		if (count_parse(arg, 1048576, &o->ntasks) < 0)
			return cmd_fail(1, "error: Invalid number of tasks (-n %s)", arg);
		return 0;
	case 'N': {
		char lo[32], *dash;

		snprintf(lo, sizeof(lo), "%s", arg);
		dash = strchr(lo, '-');
		if (dash)
			*dash = '\0';
		if (count_parse(lo, 100000, &o->nodes_min) < 0 ||
		    (dash && count_parse(dash + 1, 100000, &o->nodes_max) < 0))
			return cmd_fail(1, "error: \"%s\" is not a valid node count", arg);
		if (!dash)
			o->nodes_max = o->nodes_min;
		return 0;
	}
	case 'c':
		if (count_parse(arg, 1024, &o->cpus_per_task) < 0)
			return cmd_fail(1, "error: Invalid --cpus-per-task argument: %s", arg);
		return 0;
	case OPT_TPN:
		if (count_parse(arg, 1024, &o->ntasks_per_node) < 0)
			return cmd_fail(1, "error: Invalid --ntasks-per-node argument: %s", arg);
		return 0;
	case 't':
		if (slurm_time_parse(arg, &o->time) < 0)
			return cmd_fail(1, "error: Invalid time limit specification");
		return 0;
	case OPT_MEM:
	case OPT_MEM_PER_CPU:
		if (slurm_mem_parse(arg, c == OPT_MEM ? &o->mem : &o->mem_per_cpu) < 0)
			return cmd_fail(1, "error: invalid memory constraint: %s", arg);
		return 0;
	case 'p':
		return str_dup(&o->partition, arg);
	case 'J':
		return str_dup(&o->job_name, arg);
	case 'A':
		return str_dup(&o->account, arg);
	case OPT_EXCL:
		o->exclusive = 1;
		return 0;
	case OPT_MPI:
		if (strcmp(arg, "pmi2") && strcmp(arg, "pmix") && strncmp(arg, "pmix_v", 6) &&
		    strcmp(arg, "none") && strcmp(arg, "pmi1") && strcmp(arg, "list"))
			return cmd_fail(1, "error: MPI: Cannot create context for %s", arg);
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
			fprintf(stderr, "srun: warning: --cpu-bind=%s: not enforced by qpool (the tasks run "
				"in the job's CPUs on each node)\n", arg);
		return 0;
	case OPT_GPUS:
		return cmd_fail(1, "error: Invalid generic resource (gres) specification: %s=%s "
				"(srun asks for no GPUs on this pool)", word, arg);
	case OPT_PTY:
		return cmd_fail(1, "error: --pty: not supported by qpool; salloc gives a shell in a "
				"new allocation");
	case 'h':
	case OPT_USAGE:
		fputs(usage_text, stdout);
		exit(0);
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
	default:
		/* -u (qpool does not buffer a task's output), -v, -Q, -I, -K,
		 * -O, -W, -m, -w, -x, -C, -q, --overlap...: accepted */
		return 0;
	}
}

/* Parses argv; *ret_first is the program's index. 0 or an exit status. */
static int options_parse(struct srun *s, int argc, char **argv, int *ret_first)
{
	int c, idx;

	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, &idx)) != -1) {
		const char *word = argv[optind - 1];
		char shown[64];
		int r;

		if (c == '?') {
			if (optopt)
				return cmd_fail(1, "invalid option -- '%c'", optopt);
			return cmd_fail(1, "unrecognized option '%.80s'", word);
		}
		if (c == ':') {
			if (strncmp(word, "--", 2) != 0)
				return cmd_fail(1, "option requires an argument -- '%c'", optopt);
			return cmd_fail(1, "option '%.80s' requires an argument", word);
		}
		snprintf(shown, sizeof(shown), "%s", word);
		shown[strcspn(shown, "=")] = '\0';
		r = option_apply(s, c, optarg, shown);
		if (r)
			return r;
	}
	*ret_first = optind;
	return 0;
}

/* --- the tasks' side: srun --qpool-task ... -- PROGRAM --------------- */

static void env_num(const char *name, int64_t v)
{
	char text[24];

	snprintf(text, sizeof(text), "%" PRId64, v);
	setenv(name, text, 1);
}

/* Whether a variable is the launcher's, kept by --export=NONE: Slurm's,
 * and what the MPI library reads from qpool-pmi. */
static bool env_launcher(const char *kv)
{
	static const char *const keep[] = { "SLURM", "PMI", "PMIX", "OMPI_", "QPOOL_", "HWLOC_",
					    "FLUX_JOB_ID=", "MPI_LOCAL" };

	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (!strncmp(kv, keep[i], strlen(keep[i])))
			return true;
	return false;
}

/* Whether NAME (the start of kv, up to '=') is a bare word of spec. */
static bool env_named(const char *spec, const char *kv)
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

/* --export: ALL (the default), NONE (Slurm's and the launcher's
 * variables alone), or a list of NAME and NAME=value, with ALL in it (the
 * whole environment and those) or not (NONE's and those). */
static int env_export(const char *spec)
{
	char *copy, *save = NULL;

	if (!env_named(spec, "ALL")) {
		size_t n = 0, k = 0;
		char **keep;

		while (environ[n])
			n++;
		keep = calloc(n + 1, sizeof(char *));
		if (!keep)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			if (env_launcher(environ[i]) || env_named(spec, environ[i]))
				keep[k++] = environ[i];
		environ = keep;   /* the strings stay; exec follows */
	}
	copy = strdup(spec);
	if (!copy)
		return -ENOMEM;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(w, '=');

		if (eq) {
			*eq = '\0';
			setenv(w, eq + 1, 1);
		}
	}
	free(copy);
	return 0;
}

/* Opens pattern's file for this task onto fd. 0 or an exit status. */
static int task_redirect(const char *pat, const struct slurmstep_ids *ids, int fd, int flags)
{
	char path[PATH_MAX];
	struct error err;
	int f;

	if (!strcmp(pat, "none") || !strcmp(pat, "/dev/null"))
		pat = "/dev/null";
	if (slurmstep_path_expand(pat, ids, path, sizeof(path), &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	/* one file for each task is this task's: truncated; one shared is
	 * truncated once by srun before the tasks start, then appended to */
	if (flags != O_RDONLY)
		flags |= O_CREAT | (slurmstep_path_per_task(pat) ? O_TRUNC : O_APPEND);
	f = open(path, flags | O_CLOEXEC, 0644);
	if (f < 0)
		return cmd_fail(1, "error: %s: %s", path, strerror(errno));
	if (dup2(f, fd) < 0)
		return cmd_fail(1, "error: %s: %s", path, strerror(errno));
	close(f);
	return 0;
}

/* Splits a comma list into at most max words in place. */
static int list_split(char *list, char **words, int max)
{
	int n = 0;

	for (char *save = NULL, *w = strtok_r(list, ",", &save); w && n < max; w = strtok_r(NULL, ",", &save))
		words[n++] = w;
	return n;
}

/* One task: its SLURM_* variables, then the program. */
static int task_run(struct srun *s, char **cmd)
{
	static int ranks[MAX_NODES];
	static char *names[MAX_NODES];
	char layout[4096], nodes[MAX_NODES * 65], jobid[32];
	const char *rank = getenv("QPOOL_RANK"), *local = getenv("QPOOL_LOCAL_RANK"), *v;
	struct slurmstep_ids ids;
	char **argv = cmd;
	int64_t task;
	int nnodes, nnames, node, r;

	if (!rank || !local || !s->layout || !s->names)
		return cmd_fail(1, "error: --qpool-task is srun's own, for its tasks");
	snprintf(layout, sizeof(layout), "%s", s->layout);
	snprintf(nodes, sizeof(nodes), "%s", s->names);
	{
		char *w[MAX_NODES];

		nnodes = list_split(layout, w, MAX_NODES);
		for (int i = 0; i < nnodes; i++)
			ranks[i] = atoi(w[i]);
	}
	nnames = list_split(nodes, names, MAX_NODES);
	task = strtoll(rank, NULL, 10);
	node = slurmstep_node_of(ranks, nnodes, task);
	if (node < 0 || node >= nnames)
		return cmd_fail(1, "error: task %s is not in the step's layout %s", rank, s->layout);
	env_num("SLURM_PROCID", task);
	setenv("SLURM_LOCALID", local, 1);
	env_num("SLURM_NODEID", node);
	setenv("SLURMD_NODENAME", names[node], 1);
	env_num("SLURM_TASK_PID", getpid());
	if (s->multi_prog) {
		struct error err;

		static char text[MULTIPROG_MAX + 4];
		size_t n = 0;

		/* base64: qpool-rsh's environment carries no newlines */
		v = getenv("SRUN_QPOOL_MULTIPROG");
		if (!v || strlen(v) > base64_encoded_len(MULTIPROG_MAX) ||
		    base64_decode(v, strlen(v), text, &n) < 0)
			return cmd_fail(1, "error: --multi-prog: the configuration did not reach task %s", rank);
		text[n] = '\0';
		r = slurmstep_multiprog_argv(text, task, &argv, &err);
		if (r < 0)
			return cmd_fail(1, "error: %s", r == -ENOMEM ? "out of memory" : err.text);
	}
	unsetenv("SRUN_QPOOL_MULTIPROG");
	if (s->export && env_export(s->export) < 0)
		return cmd_fail(1, "error: out of memory");
	if (s->chdir && chdir(s->chdir) < 0)
		return cmd_fail(1, "error: chdir(%s): %s", s->chdir, strerror(errno));
	snprintf(jobid, sizeof(jobid), "%s", getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "0");
	ids = (struct slurmstep_ids){
		.jobid = jobid, .step = s->step, .task = task, .node = node, .nodename = names[node],
		.user = getenv("SLURM_JOB_USER") ? getenv("SLURM_JOB_USER") : "",
		.name = getenv("SLURM_JOB_NAME") ? getenv("SLURM_JOB_NAME") : "",
		.array_job = getenv("SLURM_ARRAY_JOB_ID"), .array_task = getenv("SLURM_ARRAY_TASK_ID"),
	};
	if (s->input && (r = task_redirect(s->input, &ids, 0, O_RDONLY)))
		return r;
	if (s->output && (r = task_redirect(s->output, &ids, 1, O_WRONLY)))
		return r;
	if ((s->error || s->output) && (r = task_redirect(s->error ? s->error : s->output, &ids, 2, O_WRONLY)))
		return r;
	execvp(argv[0], argv);
	r = errno;
	fprintf(stderr, "srun: error: %s: task %" PRId64 ": %s: %s\n", names[node], task, argv[0], strerror(r));
	return r == ENOENT ? 2 : 126;
}

/* --- inside a job: the step, through qexec ------------------------------ */

/* The job's nodes and their MPI slots, $PBS_NODEFILE's first-seen order. */
static int nodefile_read(const char *path, char names[][64], int *slots, int *ret_n)
{
	FILE *f = fopen(path, "re");
	char line[300];
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int i;

		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0])
			continue;
		for (i = 0; i < n && strcmp(names[i], line); i++)
			;
		if (i == n) {
			if (n == MAX_NODES || strlen(line) >= 64) {
				fclose(f);
				return -E2BIG;
			}
			memcpy(names[n], line, strlen(line) + 1);
			slots[n++] = 0;
		}
		slots[i]++;
	}
	fclose(f);
	*ret_n = n;
	return 0;
}

/* The step's number: the job's srun steps count from 0, in a file of the
 * job's own temporary directory (gded's, one per job). */
static int64_t step_next(void)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX], text[24] = "";
	int64_t step = 0;
	ssize_t n;
	int fd;

	if (!dir || !*dir || snprintf(path, sizeof(path), "%s/.srun-steps", dir) >= (int)sizeof(path))
		return 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX) == 0 && (n = pread(fd, text, sizeof(text) - 1, 0)) >= 0) {
		text[n] = '\0';
		step = strtoll(text, NULL, 10);
		n = snprintf(text, sizeof(text), "%" PRId64 "\n", step + 1);
		if (pwrite(fd, text, (size_t)n, 0) != n)
			step = 0;
	}
	close(fd);
	return step;
}

/* Truncates a shared output file (one for all tasks, or per node) once,
 * before the tasks append to it. */
static int output_truncate(const char *pat, const struct slurmstep_ids *ids0, char names[][64],
			   int nnodes)
{
	struct slurmstep_ids ids = *ids0;
	char path[PATH_MAX];
	struct error err;

	if (!pat || slurmstep_path_per_task(pat) || !strcmp(pat, "none") || !strcmp(pat, "/dev/null"))
		return 0;
	for (int i = 0; i < (slurmstep_path_per_node(pat) ? nnodes : 1); i++) {
		int fd;

		ids.node = i;
		ids.nodename = names[i];
		if (slurmstep_path_expand(pat, &ids, path, sizeof(path), &err) < 0)
			return cmd_fail(1, "error: %s", err.text);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return cmd_fail(1, "error: %s: %s", path, strerror(errno));
		close(fd);
	}
	return 0;
}

/* The MPI types qexec serves for --mpi. */
static const char *mpi_qexec(const char *mpi)
{
	if (!mpi)
		return "all";
	if (!strcmp(mpi, "none"))
		return "none";
	if (!strcmp(mpi, "pmi2") || !strcmp(mpi, "pmi1"))
		return "pmi";
	return "all";   /* pmix: qpool-pmi serves PMIx beside PMI-1/2 */
}

static int inside(struct srun *s, int argc, char **argv, int first, const char *jobid)
{
	static char names[MAX_NODES][64];
	static int slots[MAX_NODES], ranks[MAX_NODES];
	const char *nodefile = getenv("PBS_NODEFILE"), *namev[MAX_NODES];
	const struct slurmopt *o = &s->job;
	char self[PATH_MAX], qexec[PATH_MAX], cwd[PATH_MAX], list[MAX_NODES * 65], tpn[MAX_NODES * 8];
	char layout[MAX_NODES * 8], nbuf[24], pbuf[24], sbuf[24], mbuf[32], chdir_arg[PATH_MAX + 16];
	char *qv[64 + 1], **full;
	uint64_t counts[MAX_NODES];
	int64_t ntasks = o->ntasks, ppn = o->ntasks_per_node, nodes = o->nodes_min;
	int nnodes = 0, used, r, k = 0;
	struct slurmstep_ids ids;
	const char *v;

	if (!nodefile)
		return cmd_fail(1, "error: job %s: no PBS_NODEFILE: srun runs steps inside qpool's jobs",
				jobid);
	r = nodefile_read(nodefile, names, slots, &nnodes);
	if (r < 0 || nnodes == 0)
		return cmd_fail(1, "error: %s: %s", nodefile, r < 0 ? strerror(-r) : "no node");
	if (nodes > nnodes)
		return cmd_fail(1, "error: Unable to create step for job %s: Requested node configuration "
				"is not available (the job has %d node%s)", jobid, nnodes, nnodes == 1 ? "" : "s");
	/* the tasks: -n; else --ntasks-per-node on each node (-N's or the
	 * job's); else one a node of -N; else the job's SLURM_NTASKS; else
	 * one a slot */
	if (ppn < 0 && nodes > 0)
		ppn = ntasks > 0 ? (ntasks + nodes - 1) / nodes : 1;
	if (ntasks < 0 && o->ntasks_per_node > 0)
		ntasks = o->ntasks_per_node * (nodes > 0 ? nodes : nnodes);
	else if (ntasks < 0 && nodes > 0)
		ntasks = nodes;
	if (ntasks < 0 && (v = getenv("SLURM_NTASKS")) && count_parse(v, 1048576, &ntasks) < 0)
		ntasks = -1;
	if (ntasks < 0) {
		ntasks = 0;
		for (int i = 0; i < nnodes; i++)
			ntasks += slots[i];
	}
	used = slurmstep_layout(slots, nnodes, ntasks, ppn, ranks);
	if (used < 0)
		return cmd_fail(1, "error: Unable to create step for job %s: More processors requested "
				"than permitted (%" PRId64 " tasks%s%s)", jobid, ntasks, ppn > 0 ? ", " : "",
				ppn > 0 ? "that many per node" : "");
	if (exe_sibling("srun", self, sizeof(self)) < 0 || exe_sibling("qexec", qexec, sizeof(qexec)) < 0)
		return cmd_fail(1, "error: cannot find qexec beside srun");
	if (!getcwd(cwd, sizeof(cwd)))
		return cmd_fail(1, "error: cannot tell the working directory: %s", strerror(errno));
	layout[0] = '\0';
	for (int i = 0; i < used; i++) {
		namev[i] = names[i];
		counts[i] = (uint64_t)ranks[i];
		snprintf(layout + strlen(layout), sizeof(layout) - strlen(layout), "%s%d", i ? "," : "", ranks[i]);
	}
	list[0] = '\0';
	for (int i = 0; i < used; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "," : "", names[i]);
	/* the step's variables, as Slurm sets them in its tasks */
	env_num("SLURM_STEP_NUM_TASKS", ntasks);
	env_num("SLURM_NTASKS", ntasks);
	env_num("SLURM_NPROCS", ntasks);
	env_num("SLURM_STEP_NUM_NODES", used);
	env_num("SLURM_NNODES", used);
	{
		char compressed[sizeof(list)];

		if (hostlist_compress_ordered(namev, (size_t)used, compressed, sizeof(compressed)) >= 0) {
			setenv("SLURM_STEP_NODELIST", compressed, 1);
			setenv("SLURM_NODELIST", compressed, 1);
		}
	}
	slurm_tasks_per_node_format(counts, (size_t)used, tpn, sizeof(tpn));
	setenv("SLURM_STEP_TASKS_PER_NODE", tpn, 1);
	setenv("SLURM_TASKS_PER_NODE", tpn, 1);
	if (o->cpus_per_task > 0)
		env_num("SLURM_CPUS_PER_TASK", o->cpus_per_task);
	if (s->mpi)
		setenv("SLURM_MPI_TYPE", s->mpi, 1);
	if (s->label)
		setenv("SLURM_LABELIO", "1", 1);
	if (o->job_name)
		setenv("SLURM_STEP_NAME", o->job_name, 1);
	if (s->multi_prog) {
		static char text[MULTIPROG_MAX + 1];
		struct error err;
		char *coded;
		size_t n;
		FILE *f = fopen(argv[first], "re");

		if (!f)
			return cmd_fail(1, "error: Unable to open configuration file %s: %s", argv[first],
					strerror(errno));
		n = fread(text, 1, sizeof(text), f);
		fclose(f);
		if (n > MULTIPROG_MAX || memchr(text, '\0', n))
			return cmd_fail(1, "error: %s: not a configuration file of at most %d bytes",
					argv[first], MULTIPROG_MAX);
		text[n] = '\0';
		if (slurmstep_multiprog_check(text, ntasks, &err) < 0)
			return cmd_fail(1, "error: %s: %s", argv[first], err.text);
		coded = malloc(base64_encoded_len(n) + 1);
		if (!coded)
			return cmd_fail(1, "error: out of memory");
		base64_encode(text, n, coded);
		setenv("SRUN_QPOOL_MULTIPROG", coded, 1);
		free(coded);
	}
	s->step = step_next();
	env_num("SLURM_STEP_ID", s->step);
	env_num("SLURM_STEPID", s->step);
	v = getenv("SLURM_JOB_ID");
	ids = (struct slurmstep_ids){
		.jobid = v ? v : jobid, .step = s->step, .task = -1, .node = 0, .nodename = names[0],
		.user = getenv("SLURM_JOB_USER") ? getenv("SLURM_JOB_USER") : "",
		.name = getenv("SLURM_JOB_NAME") ? getenv("SLURM_JOB_NAME") : "",
		.array_job = getenv("SLURM_ARRAY_JOB_ID"), .array_task = getenv("SLURM_ARRAY_TASK_ID"),
	};
	r = output_truncate(s->output, &ids, names, used);
	if (!r && s->error && strcmp(s->error, s->output ? s->output : ""))
		r = output_truncate(s->error, &ids, names, used);
	if (r)
		return r;
	/* qexec -n N [--ppn M] --mpi=X [--label] -- srun --qpool-task ... -- PROGRAM */
	snprintf(nbuf, sizeof(nbuf), "%" PRId64, ntasks);
	snprintf(mbuf, sizeof(mbuf), "--mpi=%s", mpi_qexec(s->mpi));
	qv[k++] = "qexec";
	qv[k++] = "-n";
	qv[k++] = nbuf;
	if (ppn > 0) {
		snprintf(pbuf, sizeof(pbuf), "%" PRId64, ppn);
		qv[k++] = "--ppn";
		qv[k++] = pbuf;
	}
	qv[k++] = mbuf;
	if (s->label)
		qv[k++] = "--label";
	qv[k++] = "--";
	qv[k++] = self;
	qv[k++] = "--qpool-task";
	qv[k++] = "--qpool-layout";
	qv[k++] = layout;
	qv[k++] = "--qpool-names";
	qv[k++] = list;
	snprintf(sbuf, sizeof(sbuf), "--qpool-step=%" PRId64, s->step);
	qv[k++] = sbuf;
	/* the tasks start where srun runs, as Slurm's do */
	snprintf(chdir_arg, sizeof(chdir_arg), "--chdir=%s", s->chdir ? s->chdir : cwd);
	if (s->chdir && s->chdir[0] != '/')
		snprintf(chdir_arg, sizeof(chdir_arg), "--chdir=%s/%s", cwd, s->chdir);
	qv[k++] = chdir_arg;
	if (s->multi_prog)
		qv[k++] = "--multi-prog";
	if (s->label)
		qv[k++] = "--label";
	qv[k] = NULL;
	full = calloc((size_t)(k + 8 + argc - first + 1), sizeof(char *));
	if (!full)
		return cmd_fail(1, "error: out of memory");
	memcpy(full, qv, (size_t)k * sizeof(char *));
	if (s->output) {
		full[k++] = "-o";
		full[k++] = (char *)s->output;
	}
	if (s->error) {
		full[k++] = "-e";
		full[k++] = (char *)s->error;
	}
	if (s->input) {
		full[k++] = "-i";
		full[k++] = (char *)s->input;
	}
	if (s->export) {
		full[k++] = "--export";
		full[k++] = (char *)s->export;
	}
	full[k++] = "--";
	if (s->multi_prog)
		full[k++] = "true";   /* the configuration's programs replace it */
	else
		for (int i = first; i < argc; i++)
			full[k++] = argv[i];
	full[k] = NULL;
	fflush(stdout);
	execv(qexec, full);
	return cmd_fail(1, "error: %s: %s", qexec, strerror(errno));
}

/* --- outside a job: one for the step, srun inside it, in the foreground - */

static int outside(struct srun *s, int argc, char **argv, int first)
{
	const char *user = getenv("USER") ? getenv("USER") : getenv("LOGNAME");
	char self[PATH_MAX], qexec[PATH_MAX], **qargs = NULL, **full;
	struct jobspec js;
	struct error err;
	int k = 0, r;
	size_t nq = 0;

	if (exe_sibling("srun", self, sizeof(self)) < 0 || exe_sibling("qexec", qexec, sizeof(qexec)) < 0)
		return cmd_fail(1, "error: cannot find qexec beside srun");
	/* the job is named after the program, as Slurm names it */
	if (!s->job.job_name) {
		const char *base = strrchr(argv[first], '/');

		base = base ? base + 1 : argv[first];
		if (*base && strlen(base) <= 200 && str_dup(&s->job.job_name, base))
			return 1;
	}
	jobspec_init(&js);
	r = slurmopt_qsub_argv(&s->job, user ? user : "nobody", &js, &qargs, &err);
	if (r < 0) {
		jobspec_clear(&js);
		return cmd_fail(1, "error: %s", r == -ENOMEM ? "out of memory" : err.text);
	}
	for (size_t i = 0; i < js.n_warnings; i++)
		if (!strstr(js.warnings[i], "--cpu-bind"))
			fprintf(stderr, "srun: warning: %s\n", js.warnings[i]);
	jobspec_clear(&js);
	while (qargs[nq])
		nq++;
	full = calloc(nq + (size_t)argc + 16, sizeof(char *));
	if (!full)
		return cmd_fail(1, "error: out of memory");
	/* qexec -n 1 --mpi=none [-N NAME] -q ... -l ... -- srun ARGS: srun
	 * inside the job makes the step of the same options */
	full[k++] = "qexec";
	full[k++] = "-n";
	full[k++] = "1";
	full[k++] = "--mpi=none";
	for (size_t i = 0; i < nq; i++)
		full[k++] = qargs[i];
	full[k++] = "--";
	full[k++] = self;
	for (int i = 1; i < argc; i++)
		full[k++] = argv[i];
	full[k] = NULL;
	fflush(stdout);
	execv(qexec, full);
	return cmd_fail(1, "error: %s: %s", qexec, strerror(errno));
}

int main(int argc, char **argv)
{
	struct srun s = { .step = 0 };
	const char *jobid = getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : getenv("PBS_JOBID");
	int first = 0, r;

	if (version_requested(argc, argv))
		return version_print("srun");
	slurmopt_init(&s.job);
	r = options_parse(&s, argc, argv, &first);
	if (r)
		return r;
	if (s.task)
		return first < argc ? task_run(&s, argv + first) : cmd_fail(1, "error: no program");
	if (s.mpi && !strcmp(s.mpi, "list")) {
		printf("MPI plugin types are...\n\tnone\n\tpmi2\n\tpmix\n");
		return 0;
	}
	if (!s.mpi && getenv("SLURM_MPI_TYPE") && *getenv("SLURM_MPI_TYPE")) {
		r = option_apply(&s, OPT_MPI, getenv("SLURM_MPI_TYPE"), "--mpi");
		if (r)
			return r;
	}
	for (int i = first; i < argc && !s.het; i++)
		s.het = !strcmp(argv[i], ":");
	if (s.het)
		return cmd_fail(1, "error: heterogeneous job steps (--het-group, ':') are not supported by "
				"qpool: a step runs one allocation's tasks; --multi-prog runs several programs");
	if (first >= argc)
		return cmd_fail(1, "fatal: No command given to execute.");
	if (jobid)
		return inside(&s, argc, argv, first, jobid);
	return outside(&s, argc, argv, first);
}
