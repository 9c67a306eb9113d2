/* SPDX-License-Identifier: MIT */
/* salloc: Slurm's interactive allocation: a shell in a new job (qsub -I), or
 * a command run inside one in the foreground (qexec), with SLURM_* set. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "exe.h"
#include "slurmopt.h"
#include "version.h"

static const char usage_text[] =
	"Usage: salloc [OPTIONS...] [command [args...]]\n"
	"Makes a job (Slurm's options, as sbatch's; see salloc(1)) and, once it runs, gives a\n"
	"shell in it on its first node, or runs command there with its output here; the job\n"
	"ends when the shell or command does. Exits with the command's status.\n"
	"  -J, --job-name=name        -p, --partition=list       -t, --time=[D-]H:M:S\n"
	"  -N, --nodes=N[-M]          -n, --ntasks=N             --ntasks-per-node=N\n"
	"  -c, --cpus-per-task=N      --mem=SIZE                 --mem-per-cpu=SIZE\n"
	"  --exclusive                -A, --account=name         -h, --help\n";

int main(int argc, char **argv)
{
	const char *user = getenv("USER") ? getenv("USER") : getenv("LOGNAME");
	char prog[PATH_MAX], **qargs = NULL, **full = NULL;
	struct slurmopt o;
	struct jobspec js;
	struct error err;
	int first = argc, status, r, k = 0;
	size_t nq = 0;

	if (version_requested(argc, argv))
		return version_print("salloc");
	slurmopt_init(&o);
	jobspec_init(&js);
	r = slurmopt_parse(&o, argc, argv, &first, &err);
	if (r < 0) {
		status = cmd_fail(1, r == -ENOMEM ? "error: out of memory" :
				  strncmp(err.text, "unrecognized", 12) && strncmp(err.text, "invalid option", 14) &&
				  strncmp(err.text, "option", 6) ? "error: %s" : "%s", err.text);
		goto done;
	}
	if (o.help > 0) {
		fputs(usage_text, stdout);
		status = 0;
		goto done;
	}
	if (o.wrap || o.array || o.dependency || o.hold > 0 || o.output || o.error) {
		status = cmd_fail(1, "error: --wrap, --array, --dependency, --hold, --output and --error are "
				  "sbatch's; salloc runs its command in the foreground");
		goto done;
	}
	/* the job's name: -J, else the command's, else Slurm's word */
	if (!o.job_name) {
		const char *base = first < argc ? strrchr(argv[first], '/') : NULL;

		base = first >= argc ? "interactive" : base ? base + 1 : argv[first];
		o.job_name = strdup(*base && strlen(base) <= 200 ? base : "interactive");
		if (!o.job_name) {
			status = cmd_fail(1, "error: out of memory");
			goto done;
		}
	}
	r = slurmopt_qsub_argv(&o, user ? user : "nobody", &js, &qargs, &err);
	if (r < 0) {
		/* Slurm's fatal() for options that exclude each other */
		status = cmd_fail(1, "%s%s", r != -ENOMEM && strstr(err.text, "mutually exclusive") ? "fatal: " :
				  "error: ", r == -ENOMEM ? "out of memory" : err.text);
		goto done;
	}
	for (size_t i = 0; i < js.n_warnings; i++)
		fprintf(stderr, "salloc: warning: %s\n", js.warnings[i]);
	while (qargs[nq])
		nq++;
	full = calloc(nq + (size_t)(argc - first) + 8, sizeof(char *));
	if (!full || slurmopt_env_export(&o) < 0) {
		status = cmd_fail(1, "error: out of memory");
		goto done;
	}
	/* a new allocation, even from inside a job: not that job's */
	unsetenv("PBS_JOBID");
	unsetenv("PBS_NODEFILE");
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_JOBID");
	if (first >= argc) {
		/* qsub -I: the user's shell on the job's first node, on a pty */
		if (exe_sibling("qsub", prog, sizeof(prog)) < 0) {
			status = cmd_fail(1, "error: cannot find qsub beside salloc");
			goto done;
		}
		full[k++] = "qsub";
		full[k++] = "-I";
		full[k++] = "-V";
		for (size_t i = 0; i < nq; i++)
			full[k++] = qargs[i];
	} else {
		/* qexec outside a job: the command once, on the first node,
		 * its output relayed here, its status salloc's */
		if (exe_sibling("qexec", prog, sizeof(prog)) < 0) {
			status = cmd_fail(1, "error: cannot find qexec beside salloc");
			goto done;
		}
		full[k++] = "salloc";   /* qexec's refusal in Slurm's words */
		full[k++] = "-n";
		full[k++] = "1";
		full[k++] = "--mpi=none";
		for (size_t i = 0; i < nq; i++)
			full[k++] = qargs[i];
		full[k++] = "--";
		for (int i = first; i < argc; i++)
			full[k++] = argv[i];
	}
	full[k] = NULL;
	fflush(stdout);
	execv(prog, full);
	status = cmd_fail(1, "error: %s: %s", prog, strerror(errno));
done:
	for (size_t i = 0; qargs && qargs[i]; i++)
		free(qargs[i]);
	free(qargs);
	free(full);
	slurmopt_clear(&o);
	jobspec_clear(&js);
	return status;
}
