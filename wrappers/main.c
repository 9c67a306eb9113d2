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
static int arg_notify = -1;

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
			    fcntl((int)fd, F_GETFD) < 0)
				return -EINVAL;
			arg_notify = (int)fd;
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

/* One job: the spec at spec_path, the notify socket notify_fd (-1: none;
 * made close-on-exec here). What `gded --spec` runs after an exec, and
 * what each wrapper the resident launcher forks runs. The exit status. */
static int job_main(const char *spec_path, int notify_fd)
{
	struct gded_result res = { 0 };
	struct gded_job job = { 0 };
	struct error err = { { 0 } };
	sigset_t mask;
	int rc = GDED_EXIT_USAGE, r;

	res.wall[GDED_STAMP_WRAP] = time_wall_ns();
	res.mono[GDED_STAMP_WRAP] = time_mono_ns();
	/* Before anything else: a SIGTERM (cancel) during set-up must be
	 * queued for the signalfd, not kill gded without a result. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	for (int sig = GDED_SIGFWD_MIN; sig <= GDED_SIGFWD_MAX; sig++)
		sigaddset(&mask, sig);   /* qsig: forwarded to the job */
	sigaddset(&mask, SIGUSR1);   /* suspend (WIRE_SIG_SUSPEND) */
	sigaddset(&mask, SIGUSR2);   /* resume */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	gded_stdio_ensure();
	log_init("gded", LOG_LEVEL_INFO);

	if (notify_fd >= 0) {
		if (fcntl(notify_fd, F_SETFD, FD_CLOEXEC) < 0) {
			log_err("--notify %d: %m", notify_fd);
			goto done;
		}
		gded_notify_set(notify_fd);
	}
	r = gded_spec_load(spec_path, &job, &err);
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

int main(int argc, char **argv)
{
	if (version_requested(argc, argv))
		return version_print("gded");
	/* qnoded's resident launcher: its socket is fd 3 (docs/ARCHITECTURE.md). */
	if (argc >= 2 && strcmp(argv[1], "--launcher") == 0)
		return gded_launcher_run(argc, argv, 3, job_main);
	/* Anything but --spec or --help is the by-hand form. */
	if (argc > 1 && strncmp(argv[1], "--spec", 6) != 0 && strcmp(argv[1], "--help") != 0 &&
	    strcmp(argv[1], "-h") != 0)
		return byhand_exec(argv);
	if (parse_args(argc, argv) < 0) {
		gded_stdio_ensure();
		usage(stderr);
		return GDED_EXIT_USAGE;
	}
	return job_main(arg_spec, arg_notify);
}
