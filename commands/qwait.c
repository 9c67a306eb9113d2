/* SPDX-License-Identifier: MIT */
/* qwait: waits for jobs to end, told by the event stream, not polling. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "jobid.h"
#include "version.h"
#include "watch.h"
#include "wire.h"

static const char usage_text[] =
	"usage: qwait [--conf FILE] JOBID...\n"
	"Waits until each job has ended and prints one line per job as it ends:\n"
	"its id, its final state and its exit status. Exits with the exit status of\n"
	"the last job to end (128 + N for a job killed by signal N, 1 for one that\n"
	"never ran). A job id is 12, 12.server or an array's 12[]; at most 4096 at once.\n"
	"      --conf FILE  configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"      --help    show this help\n";

static const char *arg_conf;
static char server_name[JOBID_SERVER_MAX];

static void ended(const json_t *ev, void *ud)
{
	char id[128];
	long long sig = wire_int(ev, "exit_signal", 0);

	/* The pool's name, as the watch's answer gave it. */
	client_server_name(ud, server_name, sizeof(server_name));
	jobid_format(wire_int(ev, "jobid", 0), server_name, id, sizeof(id));
	if (sig > 0)
		printf("%s %s %d (signal %lld)\n", id, wire_str(ev, "state"), watch_exit_code(ev), sig);
	else
		printf("%s %s %d\n", id, wire_str(ev, "state"), watch_exit_code(ev));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "conf", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct client *cl = NULL;
	struct error err;
	int64_t *ids;
	int c, n, r, code = 0;

	if (version_requested(argc, argv))
		return version_print("qwait");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': arg_conf = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_fail(2, "option --conf needs an argument (see qwait --help)");
		default:
			return cmd_fail(2, "unknown option %s (see qwait --help)", argv[optind - 1]);
		}
	}
	n = argc - optind;
	if (n == 0)
		return cmd_fail(2, "no job id given (see qwait --help)");
	if (n > WIRE_WATCH_JOBS_MAX)
		return cmd_fail(2, "%d job ids: at most %d at once (an array's 12[] is one; xargs -n %d qwait splits a list)",
				n, WIRE_WATCH_JOBS_MAX, WIRE_WATCH_JOBS_MAX);
	ids = calloc((size_t)n, sizeof(*ids));
	if (!ids)
		return cmd_fail(1, "out of memory");
	for (int i = 0; i < n; i++) {
		int64_t lo, hi;

		if (jobid_parse_array(argv[optind + i], &ids[i], &lo, &hi) < 0 ||
		    (lo != JOBID_PLAIN && lo != JOBID_ARRAY_ALL)) {
			free(ids);
			return cmd_fail(2, "%s: not a job id (12, 12.server or 12[])", argv[optind + i]);
		}
	}
	if (client_open(arg_conf, &cl, &err) < 0) {
		free(ids);
		return cmd_fail(1, "%s", err.text);
	}
	r = watch_jobs_end(cl, ids, (size_t)n, ended, cl, &code, &err);
	client_close(cl);
	free(ids);
	if (r < 0)
		return cmd_fail(1, "%s", err.text);
	return code;
}
