/* SPDX-License-Identifier: MIT */
/* bench/hook-exec PATH [N]: the hook's own exec as gded's runner sees it.
 * Runs PATH N times (1) through lib/hook.c's hook_run with the argv,
 * environment and input gded gives a node prolog, and prints each run's
 * start to reaped in ms, one a line (bench/prolog-cost takes turns with
 * gded through it, so both see the same load). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"

int main(int argc, char **argv)
{
	/* A node prolog's input and environment, as wrappers/hooks.c makes
	 * them for a one-node `true` job (the size is what matters). */
	static const char input[] =
		"{\"version\":1,\"event\":\"prolog\",\"job\":{\"id\":123456,\"name\":\"bench\","
		"\"user\":\"qpbench\",\"uid\":1001,\"gid\":1001,\"queue\":\"batch\",\"ncpus\":1,"
		"\"mem\":0,\"walltime\":60,\"cpus\":\"0\",\"sister\":false},\"node\":{\"name\":\"pc1\"}}";
	char *env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "QPOOL_HOOK=prolog", "SLURM_JOB_ID=123456",
			"SLURM_JOB_UID=1001", "PBS_JOBID=123456", NULL };
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1;

	if (argc < 2 || n < 1) {
		fprintf(stderr, "usage: hook-exec PATH [N]\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		char *hargv[] = { argv[1], NULL };
		struct hook h;

		if (hook_run(&h, argv[1], hargv, env, input, strlen(input), 0, 10000) < 0 ||
		    h.outcome != HOOK_OK) {
			char why[200];

			fprintf(stderr, "hook-exec: %s: %s\n", argv[1], hook_describe(&h, why, sizeof(why)));
			hook_release(&h);
			return 1;
		}
		printf("%.4f\n", (double)(h.ended_ns - h.started_ns) / 1e6);
		hook_release(&h);
	}
	return 0;
}
