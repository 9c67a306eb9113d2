/* SPDX-License-Identifier: MIT */
/* gded: run one batch job fenced in its cgroup and write its result file. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exe.h"
#include "gded.h"
#include "log.h"
#include "timeutil.h"
#include "version.h"

enum gded_exit {
	GDED_EXIT_OK = 0,        /* result written, whatever became of the job */
	GDED_EXIT_NORESULT = 1,  /* the result file could not be written */
	GDED_EXIT_USAGE = 2,     /* bad options or spec: nothing was run */
	GDED_EXIT_CLEANUP = 3,   /* result written, but the job's cgroup is left */
	GDED_EXIT_BYHAND_SETUP = 125,  /* by hand: gded-byhand could not be run */
};

static const char *arg_spec;

static void usage(FILE *f)
{
	fprintf(f, "usage: gded --spec FILE [--notify FD]\n"
		   "       gded -n N [-m SIZE] [--rt fifo:PRIO | --rt rr:PRIO | --exclusive]\n"
		   "            [--cpus LIST] -- COMMAND [ARG...]\n"
		   "Runs the batch job described by the launch spec FILE and writes its\n"
		   "result file, or runs COMMAND by hand under the same fence. See gded(8).\n");
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "spec", required_argument, NULL, 's' },
		{ "notify", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			arg_spec = optarg;
			break;
		case 'N': {
			char *end;
			long fd;

			/* The socket qnoded passed: never stdio, and not the job's. */
			errno = 0;
			fd = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || fd < 3 || fd > INT_MAX ||
			    fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0)
				return -EINVAL;
			gded_notify_set((int)fd);
			break;
		}
		case 'h':
			usage(stdout);
			exit(GDED_EXIT_OK);
		default:
			return -EINVAL;
		}
	}
	if (!arg_spec || optind != argc)
		return -EINVAL;
	return 0;
}

/* By hand runs now and then, and alone needs hwloc (to place the
 * command); a job's gded runs for every job. So by hand is a binary of its
 * own, gded-byhand beside gded, and gded links jansson in and neither
 * hwloc nor the libudev and libm it pulls: one library (libc) to map per
 * job instead of five, measured ~0.3 ms less per exec here. argv is
 * passed as it is, so the command line still reads "gded -n ...". */
static int byhand_exec(char **argv)
{
	char path[PATH_MAX];
	int r;

	r = exe_sibling("gded-byhand", path, sizeof(path));
	if (r < 0) {
		fprintf(stderr, "gded: cannot find gded-byhand beside itself: %s\n", strerror(-r));
		return GDED_EXIT_BYHAND_SETUP;
	}
	execv(path, argv);
	fprintf(stderr, "gded: cannot run %s for the by-hand form: %m\n", path);
	return GDED_EXIT_BYHAND_SETUP;
}

int main(int argc, char **argv)
{
	struct gded_result res = { 0 };
	struct gded_job job = { 0 };
	struct error err = { { 0 } };
	sigset_t mask;
	int rc = GDED_EXIT_USAGE, r;

	if (version_requested(argc, argv))
		return version_print("gded");
	/* Anything but --spec or --help is the by-hand form. */
	if (argc > 1 && strncmp(argv[1], "--spec", 6) != 0 && strcmp(argv[1], "--help") != 0 &&
	    strcmp(argv[1], "-h") != 0)
		return byhand_exec(argv);

	res.wall[GDED_STAMP_WRAP] = time_wall_ns();
	res.mono[GDED_STAMP_WRAP] = time_mono_ns();
	/* Before anything else: a SIGTERM (cancel) during set-up must be
	 * queued for the signalfd, not kill gded without a result. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	for (int sig = GDED_SIGFWD_MIN; sig <= GDED_SIGFWD_MAX; sig++)
		sigaddset(&mask, sig);   /* qsig: forwarded to the job */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	gded_stdio_ensure();
	log_init("gded", LOG_LEVEL_INFO);

	if (parse_args(argc, argv) < 0) {
		usage(stderr);
		goto done;
	}
	r = gded_spec_load(arg_spec, &job, &err);
	if (r < 0) {
		log_err("%s", err.text);
		goto done;
	}
	rc = GDED_EXIT_OK;
	r = gded_run(&job, &res, &err);
	if (r < 0) {
		log_err("job %llu: %s", (unsigned long long)job.jobid, err.text);
		rc = GDED_EXIT_CLEANUP;
	}
	r = gded_result_write(job.result, &res, &err);
	if (r < 0) {
		log_err("job %llu: %s", (unsigned long long)job.jobid, err.text);
		rc = GDED_EXIT_NORESULT;
	}
done:
	gded_job_clear(&job);
	return rc;
}
