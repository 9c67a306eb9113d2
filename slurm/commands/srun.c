/* SPDX-License-Identifier: MIT */
/* srun: Slurm's job step. Inside a job, qexec's ranks under Slurm's options
 * and SLURM_* task variables; outside, a job for them, in the foreground. */
#include <errno.h>
#include <fcntl.h>
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
#include "slurmstep.h"
#include "srunopt.h"
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
	"  --pty (one task, on a terminal)                          -h, --help\n";

/* --- the tasks' side: srun --qpool-task ... -- PROGRAM --------------- */

static void env_num(const char *name, int64_t v)
{
	char text[24];

	snprintf(text, sizeof(text), "%" PRId64, v);
	setenv(name, text, 1);
}

/* --export: the environment srunopt_export_keeps keeps, then the list's
 * NAME=value words. */
static int env_export(const char *spec)
{
	char *copy, *save = NULL, **keep;
	size_t n = 0, k = 0;

	while (environ[n])
		n++;
	keep = calloc(n + 1, sizeof(char *));
	copy = strdup(spec);
	if (!keep || !copy) {
		free(keep);
		free(copy);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (srunopt_export_keeps(spec, environ[i]))
			keep[k++] = environ[i];
	environ = keep;   /* the strings stay; exec follows */
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
static int task_run(struct srunopt *s, char **cmd)
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
		static char text[MULTIPROG_MAX + 4];
		struct error err;
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
static int output_truncate(const char *pat, const struct slurmstep_ids *ids0, const char names[][64],
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

/* A step's place in its job: the job's nodes and slots, the step's nodes
 * (names[first..first + used)) and its tasks on each. */
struct step {
	char names[MAX_NODES][64];
	int slots[MAX_NODES], ranks[MAX_NODES];
	int nnodes, first, used;
	char home[64];                 /* the job's first node, where srun runs */
	bool chosen;                   /* -w or -x changed the nodes' list */
	int64_t ntasks, ppn;
	char list[MAX_NODES * 65];     /* the step's nodes, a comma list */
	char layout[MAX_NODES * 8];    /* tasks on each, a comma list */
};

/* Whether list (-w's or -x's) names node, one of the job's. */
static bool list_names(char **names, int n, const char *node)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], node))
			return true;
	return false;
}

/* -w and -x inside a job: the step's nodes are the job's, -w's first
 * and then the others, -x's left out, each group in the job's order; -N
 * defaults to -w's count, as Slurm's. *nodes is -N's, 0 when not given,
 * set to -w's count then. 0 or an exit status after a message. */
static int step_choose(const struct slurmopt *o, const char *jobid, struct step *st, int64_t *nodes)
{
	char **w = NULL, **x = NULL, names[MAX_NODES][64];
	int nw = 0, nx = 0, slots[MAX_NODES], n = 0, named = 0, r = 0;

	if (!o->nodelist && !o->exclude)
		return 0;
	if ((o->nodelist && (nw = hostlist_expand(o->nodelist, MAX_NODES * 4, &w)) <= 0) ||
	    (o->exclude && (nx = hostlist_expand(o->exclude, MAX_NODES * 4, &x)) <= 0)) {
		r = cmd_fail(1, "error: %s %s: not a host list", nw <= 0 && o->nodelist ? "--nodelist" : "--exclude",
			     nw <= 0 && o->nodelist ? o->nodelist : o->exclude);
		goto done;
	}
	for (int i = 0; i < nw && !r; i++) {
		bool found = false;

		for (int j = 0; j < st->nnodes && !found; j++)
			found = !strcmp(w[i], st->names[j]);
		if (!found || list_names(x, nx, w[i]))
			r = cmd_fail(1, "error: Unable to create step for job %s: Requested node configuration is "
				     "not available (--nodelist: %s is %s)", jobid, w[i],
				     found ? "also in --exclude" : "not one of the job's nodes");
	}
	if (r)
		goto done;
	/* a name given twice is once: one pass over the job's nodes a group */
	for (int pass = 0; pass < 2; pass++)
		for (int j = 0; j < st->nnodes; j++)
			if (list_names(w, nw, st->names[j]) == (pass == 0) && !list_names(x, nx, st->names[j])) {
				memcpy(names[n], st->names[j], sizeof(names[n]));
				slots[n++] = st->slots[j];
				named += pass == 0;
			}
	if (n == 0) {
		r = cmd_fail(1, "error: Unable to create step for job %s: Requested node configuration is not "
			     "available (--exclude leaves none of the job's nodes)", jobid);
		goto done;
	}
	if (nw > 0 && *nodes <= 0) {
		*nodes = named;
	} else if (nw > 0 && *nodes < named) {
		r = cmd_fail(1, "error: Unable to create step for job %s: Requested node configuration is "
			     "not available (-N %" PRId64 " with %d nodes in --nodelist)", jobid, *nodes, named);
		goto done;
	}
	st->chosen = n != st->nnodes;
	for (int j = 0; j < n; j++) {
		st->chosen |= strcmp(names[j], st->names[j]) != 0;
		memcpy(st->names[j], names[j], sizeof(names[j]));
		st->slots[j] = slots[j];
	}
	st->nnodes = n;
done:
	hostlist_free(w, nw > 0 ? (size_t)nw : 0);
	hostlist_free(x, nx > 0 ? (size_t)nx : 0);
	return r;
}

/* The step's tasks and nodes from the options and the job. 0 or an exit
 * status after a message. */
static int step_plan(const struct srunopt *s, const char *jobid, struct step *st)
{
	const struct slurmopt *o = &s->job;
	const char *nodefile = getenv("PBS_NODEFILE"), *v;
	int64_t nodes = o->nodes_min;
	int r;

	if (!nodefile)
		return cmd_fail(1, "error: job %s: no PBS_NODEFILE: srun runs steps inside qpool's jobs",
				jobid);
	r = nodefile_read(nodefile, st->names, st->slots, &st->nnodes);
	if (r < 0 || st->nnodes == 0)
		return cmd_fail(1, "error: %s: %s", nodefile, r < 0 ? strerror(-r) : "no node");
	memcpy(st->home, st->names[0], sizeof(st->home));
	st->chosen = false;
	r = step_choose(o, jobid, st, &nodes);
	if (r)
		return r;
	if (nodes > st->nnodes)
		return cmd_fail(1, "error: Unable to create step for job %s: Requested node configuration "
				"is not available (the job has %d node%s)", jobid, st->nnodes,
				st->nnodes == 1 ? "" : "s");
	/* the tasks: -n; else --ntasks-per-node on each node (-N's or the
	 * job's); else one a node of -N; else the job's SLURM_NTASKS; else
	 * one a slot */
	st->ntasks = o->ntasks;
	st->ppn = o->ntasks_per_node;
	if (st->ppn < 0 && nodes > 0)
		st->ppn = st->ntasks > 0 ? (st->ntasks + nodes - 1) / nodes : 1;
	if (st->ntasks < 0 && o->ntasks_per_node > 0)
		st->ntasks = o->ntasks_per_node * (nodes > 0 ? nodes : st->nnodes);
	else if (st->ntasks < 0 && nodes > 0)
		st->ntasks = nodes;
	if (st->ntasks < 0 && (v = getenv("SLURM_NTASKS"))) {
		char *end;
		long long n = strtoll(v, &end, 10);

		if (*v && !*end && n > 0 && n <= 1048576)
			st->ntasks = n;
	}
	if (st->ntasks < 0) {
		st->ntasks = 0;
		for (int i = 0; i < st->nnodes; i++)
			st->ntasks += st->slots[i];
	}
	st->first = 0;
	st->used = slurmstep_layout(st->slots, st->nnodes, st->ntasks, st->ppn, st->ranks);
	if (st->used < 0) {
		uint64_t counts[MAX_NODES];
		char asked[64], have[MAX_NODES * 8];

		if (st->ppn > 0)
			snprintf(asked, sizeof(asked), "%" PRId64 " tasks, %" PRId64 " a node", st->ntasks, st->ppn);
		else
			snprintf(asked, sizeof(asked), "%" PRId64 " tasks", st->ntasks);
		for (int i = 0; i < st->nnodes; i++)
			counts[i] = (uint64_t)st->slots[i];
		hostlist_counts_format(counts, (size_t)st->nnodes, have, sizeof(have));
		return cmd_fail(1, "error: Unable to create step for job %s: More processors requested "
				"than permitted (%s; the job's slots: %s)", jobid, asked, have);
	}
	return 0;
}

/* --exclusive (--exact): a step that fits on one node goes to the job's
 * nodes in turn by its number, the first from there that holds it, so
 * that one-node steps started together (a task farm: srun --exclusive
 * -n1 ... &) spread over the job instead of all running on its first. */
static void step_place(const struct srunopt *s, struct step *st)
{
	int64_t need = st->ppn > 0 && st->ppn < st->ntasks ? -1 : st->ntasks;

	if (s->job.exclusive <= 0 || st->used != 1 || need < 0 || s->job.nodes_min > 1 || s->job.nodelist)
		return;
	for (int k = 0; k < st->nnodes; k++) {
		int i = (int)((s->step + k) % st->nnodes);

		if (st->slots[i] >= need) {
			st->ranks[0] = 0;
			st->ranks[i] = (int)need;
			st->first = i;
			return;
		}
	}
}

/* The step's variables, as Slurm sets them in its tasks, in this
 * environment (which qexec hands every task). */
static void step_env(const struct srunopt *s, struct step *st)
{
	const char *namev[MAX_NODES];
	uint64_t counts[MAX_NODES];
	char text[MAX_NODES * 65];

	st->list[0] = st->layout[0] = '\0';
	for (int i = 0; i < st->used; i++) {
		int n = st->first + i;

		namev[i] = st->names[n];
		counts[i] = (uint64_t)st->ranks[n];
		snprintf(st->list + strlen(st->list), sizeof(st->list) - strlen(st->list), "%s%s", i ? "," : "",
			 st->names[n]);
		snprintf(st->layout + strlen(st->layout), sizeof(st->layout) - strlen(st->layout), "%s%d",
			 i ? "," : "", st->ranks[n]);
	}
	env_num("SLURM_STEP_ID", s->step);
	env_num("SLURM_STEPID", s->step);
	env_num("SLURM_STEP_NUM_TASKS", st->ntasks);
	env_num("SLURM_NTASKS", st->ntasks);
	env_num("SLURM_NPROCS", st->ntasks);
	env_num("SLURM_STEP_NUM_NODES", st->used);
	env_num("SLURM_NNODES", st->used);
	if (hostlist_compress_ordered(namev, (size_t)st->used, text, sizeof(text)) >= 0) {
		setenv("SLURM_STEP_NODELIST", text, 1);
		setenv("SLURM_NODELIST", text, 1);
	}
	hostlist_counts_format(counts, (size_t)st->used, text, sizeof(text));
	setenv("SLURM_STEP_TASKS_PER_NODE", text, 1);
	setenv("SLURM_TASKS_PER_NODE", text, 1);
	if (s->job.cpus_per_task > 0)
		env_num("SLURM_CPUS_PER_TASK", s->job.cpus_per_task);
	if (s->mpi)
		setenv("SLURM_MPI_TYPE", s->mpi, 1);
	if (s->label)
		setenv("SLURM_LABELIO", "1", 1);
	if (s->job.job_name)
		setenv("SLURM_STEP_NAME", s->job.job_name, 1);
}

/* --multi-prog: the configuration checked against the step's tasks, in
 * the tasks' environment (base64: a remote task's environment holds no
 * newline). 0 or an exit status after a message. */
static int multiprog_load(const char *path, int64_t ntasks)
{
	static char text[MULTIPROG_MAX + 1];
	struct error err;
	char *coded;
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f)
		return cmd_fail(1, "error: Unable to open configuration file %s: %s", path, strerror(errno));
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	if (n > MULTIPROG_MAX || memchr(text, '\0', n))
		return cmd_fail(1, "error: %s: not a configuration file of at most %d bytes", path,
				MULTIPROG_MAX);
	text[n] = '\0';
	if (slurmstep_multiprog_check(text, ntasks, &err) < 0)
		return cmd_fail(1, "error: %s: %s", path, err.text);
	coded = malloc(base64_encoded_len(n) + 1);
	if (!coded)
		return cmd_fail(1, "error: out of memory");
	base64_encode(text, n, coded);
	setenv("SRUN_QPOOL_MULTIPROG", coded, 1);
	free(coded);
	return 0;
}

/* Runs the step: qexec -n N [--ppn M] --mpi=X [--label] [--stdin]
 * [--hosts NODE:SLOTS] -- srun --qpool-task ... -- PROGRAM, here, or on
 * the node step_place chose through qpool-rsh. Returns only on failure. */
static int step_exec(const struct srunopt *s, const struct step *st, char **cmd, const char *cwd)
{
	char self[PATH_MAX], qexec[PATH_MAX], rsh[PATH_MAX], nbuf[24], pbuf[24], sbuf[40], mbuf[32];
	char hosts[MAX_NODES * 72], *chdir_arg = NULL, **v;
	size_t ncmd = 0, k = 0;

	if (exe_sibling("srun", self, sizeof(self)) < 0 || exe_sibling("qexec", qexec, sizeof(qexec)) < 0 ||
	    exe_sibling("qpool-rsh", rsh, sizeof(rsh)) < 0)
		return cmd_fail(1, "error: cannot find qexec and qpool-rsh beside srun");
	while (cmd[ncmd])
		ncmd++;
	v = calloc(ncmd + 40, sizeof(char *));
	/* the tasks start where srun runs, as Slurm's do */
	if (!v || asprintf(&chdir_arg, "--chdir=%s%s%s", s->chdir && s->chdir[0] == '/' ? "" : cwd,
			   s->chdir && s->chdir[0] != '/' ? "/" : "", s->chdir ? s->chdir : "") < 0)
		return cmd_fail(1, "error: out of memory");
	snprintf(nbuf, sizeof(nbuf), "%" PRId64, st->ntasks);
	snprintf(pbuf, sizeof(pbuf), "%" PRId64, st->ppn);
	snprintf(mbuf, sizeof(mbuf), "--mpi=%s", srunopt_qexec_mpi(s->mpi));
	snprintf(sbuf, sizeof(sbuf), "--qpool-step=%" PRId64, s->step);
	v[k++] = qexec;
	v[k++] = "-n";
	v[k++] = nbuf;
	if (st->ppn > 0) {
		v[k++] = "--ppn";
		v[k++] = pbuf;
	}
	v[k++] = mbuf;
	if (s->label)
		v[k++] = "--label";
	if (!s->input)
		v[k++] = "--stdin";   /* srun's input to task 0 (Slurm: to every task) */
	/* a step on other nodes than the job's first ones, in their order:
	 * their list (qexec's first is where it runs) */
	if (st->first || st->chosen) {
		hosts[0] = '\0';
		for (int i = 0; i < st->used; i++)
			snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts), "%s%s:%d", i ? "," : "",
				 st->names[st->first + i], st->slots[st->first + i]);
		v[k++] = "--hosts";
		v[k++] = hosts;
	}
	v[k++] = "--";
	v[k++] = self;
	v[k++] = "--qpool-task";
	v[k++] = "--qpool-layout";
	v[k++] = (char *)st->layout;
	v[k++] = "--qpool-names";
	v[k++] = (char *)st->list;
	v[k++] = sbuf;
	v[k++] = chdir_arg;
	if (s->multi_prog)
		v[k++] = "--multi-prog";
	if (s->output) {
		v[k++] = "-o";
		v[k++] = (char *)s->output;
	}
	if (s->error) {
		v[k++] = "-e";
		v[k++] = (char *)s->error;
	}
	if (s->input) {
		v[k++] = "-i";
		v[k++] = (char *)s->input;
	}
	if (s->export) {
		v[k++] = "--export";
		v[k++] = (char *)s->export;
	}
	v[k++] = "--";
	if (s->multi_prog)
		v[k++] = "true";   /* the configuration's programs replace it */
	else
		for (size_t i = 0; i < ncmd; i++)
			v[k++] = cmd[i];
	v[k] = NULL;
	fflush(stdout);
	if (!strcmp(st->names[st->first], st->home)) {
		execv(qexec, v);
		return cmd_fail(1, "error: %s: %s", qexec, strerror(errno));
	}
	{
		/* qpool-rsh joins its arguments for the job's shell: one, quoted */
		char *line = NULL;
		size_t len = 0;

		for (size_t i = 0; i < k; i++)
			if (cmd_quote(&line, &len, v[i]) < 0)
				return cmd_fail(1, "error: out of memory");
		execl(rsh, "qpool-rsh", "--env", st->names[st->first], "exec", line, (char *)NULL);
		return cmd_fail(1, "error: %s: %s", rsh, strerror(errno));
	}
}

/* --pty's refusals, inside a job or outside: one task, on a terminal that
 * is its input and output. 0 or 1 after a message. */
static int pty_check(const struct srunopt *s)
{
	const struct slurmopt *o = &s->job;
	int64_t tasks = o->ntasks > 0 ? o->ntasks : o->ntasks_per_node > 0 ?
			o->ntasks_per_node * (o->nodes_min > 0 ? o->nodes_min : 1) : o->nodes_min;

	/* Slurm runs task 0 on the terminal and the others without one;
	 * qpool starts the one task, so it asks for one */
	if (tasks > 1)
		return cmd_fail(1, "error: --pty runs one task, on a terminal; %" PRId64 " tasks asked for "
				"(ask for -n1; srun -n N inside the job starts more)", tasks);
	if (s->output || s->error || s->input || s->multi_prog || s->label)
		return cmd_fail(1, "error: --pty: the terminal is the task's input and output; -o, -e, -i, "
				"--multi-prog and --label do not go with it");
	return 0;
}

/* Set in the srun that qexec runs inside the job an srun outside one
 * made (SRUN_QPOOL_SAID): that srun said its warnings already, and the
 * job has its -t and --mem. */
static bool arg_said;

/* -C and the step limits: not enforced for a step, so one warning each,
 * never a silent drop (-w and -x are: step_choose). */
static void step_nodes_said(const struct srunopt *s)
{
	const struct slurmopt *o = &s->job;

	if (arg_said)
		return;
	if (o->constraint)
		fprintf(stderr, "srun: warning: --constraint=%s: not enforced by qpool inside a job (the step "
			"runs on the job's nodes)\n", o->constraint);
	/* Slurm's step limits; qpool fences the job, not its steps. */
	if (o->time >= 0)
		fprintf(stderr, "srun: warning: --time: not enforced by qpool for a step (the job's walltime "
			"holds)\n");
	if (o->mem >= 0 || o->mem_per_cpu >= 0)
		fprintf(stderr, "srun: warning: %s: not enforced by qpool for a step (the job's memory holds)\n",
			o->mem >= 0 ? "--mem" : "--mem-per-cpu");
}

/* srun --pty inside a job: task 0 is this process, on the job's node
 * where srun runs (salloc's shell: the job's first node), in the job's
 * fence already, on srun's own terminal (salloc's pty); the step's
 * variables set, then the program exec'd as qexec's task 0 would be. */
static int pty_inside(struct srunopt *s, char **cmd, const char *jobid)
{
	static struct step st;
	int r = pty_check(s);

	if (r)
		return r;
	if (s->job.ntasks < 0)
		s->job.ntasks = 1;   /* not the job's SLURM_NTASKS */
	r = step_plan(s, jobid, &st);
	if (r)
		return r;
	if (strcmp(st.names[st.first], st.home))
		return cmd_fail(1, "error: --pty runs its task where srun runs, on %s; --nodelist and --exclude "
				"may not move it to %s", st.home, st.names[st.first]);
	s->step = step_next();
	step_nodes_said(s);
	step_env(s, &st);
	s->layout = st.layout;
	s->names = st.list;
	setenv("QPOOL_RANK", "0", 1);
	setenv("QPOOL_LOCAL_RANK", "0", 1);
	return task_run(s, cmd);
}

static int inside(struct srunopt *s, int argc, char **argv, int first, const char *jobid)
{
	static struct step st;
	char cwd[PATH_MAX];
	struct slurmstep_ids ids;
	const char *v = getenv("SLURM_JOB_ID");
	int r;

	r = step_plan(s, jobid, &st);
	if (r)
		return r;
	if (!getcwd(cwd, sizeof(cwd)))
		return cmd_fail(1, "error: cannot tell the working directory: %s", strerror(errno));
	if (s->multi_prog && (r = multiprog_load(argv[first], st.ntasks)))
		return r;
	s->step = step_next();
	step_place(s, &st);
	step_nodes_said(s);
	step_env(s, &st);
	ids = (struct slurmstep_ids){
		.jobid = v ? v : jobid, .step = s->step, .task = -1, .node = 0, .nodename = st.names[st.first],
		.user = getenv("SLURM_JOB_USER") ? getenv("SLURM_JOB_USER") : "",
		.name = getenv("SLURM_JOB_NAME") ? getenv("SLURM_JOB_NAME") : "",
		.array_job = getenv("SLURM_ARRAY_JOB_ID"), .array_task = getenv("SLURM_ARRAY_TASK_ID"),
	};
	r = output_truncate(s->output, &ids, st.names + st.first, st.used);
	if (!r && s->error && strcmp(s->error, s->output ? s->output : ""))
		r = output_truncate(s->error, &ids, st.names + st.first, st.used);
	if (r)
		return r;
	return step_exec(s, &st, argv + first, cwd);
}

/* --- outside a job: one for the step, srun inside it, in the foreground - */

/* The new allocation's qsub options into *ret (NULL-ended, the caller's
 * to free), the job named after the program as Slurm names it; its
 * warnings said. Status 0 or the exit status after a message. */
static int alloc_args(struct srunopt *s, const char *program, char ***ret)
{
	const char *user = getenv("USER") ? getenv("USER") : getenv("LOGNAME");
	struct jobspec js;
	struct error err;
	int r;

	if (!s->job.job_name) {
		const char *base = strrchr(program, '/');

		base = base ? base + 1 : program;
		if (*base && strlen(base) <= 200 && !(s->job.job_name = strdup(base)))
			return cmd_fail(1, "error: out of memory");
	}
	jobspec_init(&js);
	r = slurmopt_qsub_argv(&s->job, user ? user : "nobody", &js, ret, &err);
	if (r < 0) {
		jobspec_clear(&js);
		return cmd_fail(1, "error: %s", r == -ENOMEM ? "out of memory" : err.text);
	}
	for (size_t i = 0; i < js.n_warnings; i++)
		if (!strstr(js.warnings[i], "--cpu-bind"))
			fprintf(stderr, "srun: warning: %s\n", js.warnings[i]);
	jobspec_clear(&js);
	return 0;
}

static int outside(struct srunopt *s, int argc, char **argv, int first)
{
	char self[PATH_MAX], qexec[PATH_MAX], **qargs = NULL, **full;
	int k = 0, r;
	size_t nq = 0;

	if (exe_sibling("srun", self, sizeof(self)) < 0 || exe_sibling("qexec", qexec, sizeof(qexec)) < 0)
		return cmd_fail(1, "error: cannot find qexec beside srun");
	r = alloc_args(s, argv[first], &qargs);
	if (r)
		return r;
	while (qargs[nq])
		nq++;
	full = calloc(nq + (size_t)argc + 16, sizeof(char *));
	if (!full)
		return cmd_fail(1, "error: out of memory");
	/* qexec -n 1 --mpi=none [-N NAME] -q ... -l ... -- srun ARGS: srun
	 * inside the job makes the step of the same options */
	full[k++] = "srun";   /* qexec's refusal in Slurm's words */
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
	setenv("SRUN_QPOOL_SAID", "1", 1);
	execv(qexec, full);
	return cmd_fail(1, "error: %s: %s", qexec, strerror(errno));
}

/* --- outside a job, --pty: the program on the job's terminal (qsub -I) - */

/* srun --pty CMD: qsub -I -V [the allocation's options] [-d DIR] -- CMD,
 * as srun (Slurm's lines): a new job whose script execs CMD on its
 * terminal on the job's first node; srun's terminal relayed, its status
 * CMD's. Returns only on failure. */
static int pty_outside(struct srunopt *s, int argc, char **argv, int first)
{
	const struct slurmopt *o = &s->job;
	char qsub[PATH_MAX], **qargs = NULL, **full;
	size_t nq = 0;
	int k = 0, r;

	r = pty_check(s);
	if (r)
		return r;
	if (s->export && strcmp(s->export, "ALL"))
		return cmd_fail(1, "error: --pty --export=%s: the terminal's task gets srun's whole "
				"environment on qpool (--export=ALL)", s->export);
	if (exe_sibling("qsub", qsub, sizeof(qsub)) < 0)
		return cmd_fail(1, "error: cannot find qsub beside srun");
	r = alloc_args(s, argv[first], &qargs);
	if (r)
		return r;
	while (qargs[nq])
		nq++;
	full = calloc(nq + (size_t)(argc - first) + 8, sizeof(char *));
	if (!full || slurmopt_env_export(o) < 0)
		return cmd_fail(1, "error: out of memory");
	full[k++] = "srun";   /* qsub's lines in Slurm's words */
	full[k++] = "-I";
	full[k++] = "-V";
	for (size_t i = 0; i < nq; i++)
		full[k++] = qargs[i];
	if (s->chdir) {
		full[k++] = "-d";
		full[k++] = (char *)s->chdir;
	}
	full[k++] = "--";
	for (int i = first; i < argc; i++)
		full[k++] = argv[i];
	full[k] = NULL;
	fflush(stdout);
	execv(qsub, full);
	return cmd_fail(1, "error: %s: %s", qsub, strerror(errno));
}

/* Prints a refusal of srunopt_parse or srunopt_mpi_set: getopt's words
 * as they are, srun's after "error: ". Returns 1. */
static int refused(int r, const struct error *err)
{
	if (r == -ENOMEM)
		return cmd_fail(1, "error: out of memory");
	if (!strncmp(err->text, "unrecognized", 12) || !strncmp(err->text, "invalid option", 14) ||
	    !strncmp(err->text, "option", 6))
		return cmd_fail(1, "%s", err->text);
	return cmd_fail(1, "error: %s", err->text);
}

static int run(struct srunopt *s, int argc, char **argv)
{
	const char *jobid = getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : getenv("PBS_JOBID");
	const char *mpi_env = getenv("SLURM_MPI_TYPE");
	struct error err;
	int first = 0, r;

	r = srunopt_parse(s, argc, argv, &first, &err);
	if (r < 0)
		return refused(r, &err);
	if (s->help) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (s->task)
		return first < argc ? task_run(s, argv + first) : cmd_fail(1, "error: no program");
	arg_said = jobid && getenv("SRUN_QPOOL_SAID");
	unsetenv("SRUN_QPOOL_SAID");   /* not the tasks' own sruns */
	for (size_t i = 0; i < s->n_warnings && !arg_said; i++)
		fprintf(stderr, "srun: warning: %s\n", s->warnings[i]);
	if (s->mpi && !strcmp(s->mpi, "list")) {
		printf("MPI plugin types are...\n\tnone\n\tpmi2\n\tpmix\n");
		return 0;
	}
	if (!s->mpi && mpi_env && *mpi_env && (r = srunopt_mpi_set(s, mpi_env, &err)) < 0)
		return refused(r, &err);
	for (int i = first; i < argc && !s->het; i++)
		s->het = !strcmp(argv[i], ":");
	if (s->het)
		return cmd_fail(1, "error: heterogeneous job steps (--het-group, ':') are not supported by "
				"qpool: a step runs one allocation's tasks; --multi-prog runs several programs");
	if (first >= argc)
		return cmd_fail(1, "fatal: No command given to execute.");
	if (s->pty && jobid)
		return pty_inside(s, argv + first, jobid);
	if (s->pty)
		return pty_outside(s, argc, argv, first);
	if (jobid)
		return inside(s, argc, argv, first, jobid);
	return outside(s, argc, argv, first);
}

int main(int argc, char **argv)
{
	struct srunopt s;
	int status;

	if (version_requested(argc, argv))
		return version_print("srun");
	srunopt_init(&s);
	status = run(&s, argc, argv);
	srunopt_clear(&s);
	return status;
}
