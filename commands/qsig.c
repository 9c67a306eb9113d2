/* SPDX-License-Identifier: MIT */
/* qsig: send a signal to running jobs (through each job's gded). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "cmd.h"
#include "jobid.h"
#include "parse.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"usage: qsig [-f FILE] [-s SIGNAL] JOBID...\n"
	"Sends SIGNAL (default SIGTERM) to each running job's processes.\n"
	"SIGNAL is a name (TERM, SIGUSR1, ...), a number 1-30, or suspend / resume (root:\n"
	"the job's processes frozen, its walltime clock stopped; admin-suspend / admin-resume alike).\n"
	"A job id is 12, 12.server or 12.server@host.\n"
	"  -s SIGNAL  the signal\n"
	"  -f FILE    configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"  --help     show this help\n";

/* suspend and resume are not signals: the suspend op (docs/PREEMPTION.md). */
#define QSIG_SUSPEND (-10)
#define QSIG_RESUME (-11)

/* 1-30 from "USR1", "SIGUSR1", "10"; QSIG_SUSPEND or QSIG_RESUME from
 * PBS's "suspend", "resume", "admin-suspend", "admin-resume"; -1 otherwise. */
static int qsig_signal(const char *s)
{
	if (strcasecmp(s, "suspend") == 0 || strcasecmp(s, "admin-suspend") == 0)
		return QSIG_SUSPEND;
	if (strcasecmp(s, "resume") == 0 || strcasecmp(s, "admin-resume") == 0)
		return QSIG_RESUME;
	return signal_parse(s);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL;
	struct client *cl = NULL;
	struct error err;
	int c, sig = SIGTERM, status = 0;

	if (version_requested(argc, argv))
		return version_print("qsig");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:s:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf = optarg;
			break;
		case 's':
			sig = qsig_signal(optarg);
			if (sig == -1)
				return cmd_fail(2, "-s %s: not a signal qsig sends (a name or 1-30)", optarg);
			break;
		case 'H':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_fail(2, "option -%c needs an argument (see qsig --help)", optopt);
		default:
			if (optopt)
				return cmd_fail(2, "unknown option -%c (see qsig --help)", optopt);
			return cmd_fail(2, "unknown option %s (see qsig --help)", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return cmd_fail(2, "no job id given (see qsig --help)");
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	for (int i = optind; i < argc; i++) {
		json_t *reply = NULL;
		char *at = strchr(argv[i], '@');
		int64_t id, lo, hi;

		if (at)
			*at = '\0';
		if (jobid_parse_array(argv[i], &id, &lo, &hi) < 0) {
			status = cmd_fail(1, "%s: not a job id", argv[i]);
			continue;
		}
		if (sig == QSIG_SUSPEND || sig == QSIG_RESUME) {
			json_t *req = json_pack("{s:s, s:I, s:b}", "op", "suspend", "jobid", (json_int_t)id, "resume",
						sig == QSIG_RESUME);

			if (lo >= 0)
				json_object_set_new(req, "array_index", json_integer(lo));
			if (client_call(cl, req, &reply, &err) < 0)
				status = cmd_fail(1, "%s", err.text);
			json_decref(reply);
			continue;
		}
		if (lo != JOBID_PLAIN && (lo == JOBID_ARRAY_ALL || hi > lo)) {
			/* Every running subjob of the array (or of the range). */
			json_t *jobs, *job;
			size_t k;

			if (client_call_pages(cl, json_pack("{s:s, s:I, s:b}", "op", "stat", "jobid", (json_int_t)id,
							    "subjobs", 1), "jobs", &reply, &err) < 0) {
				status = cmd_fail(1, "%s", err.text);
				continue;
			}
			jobs = json_object_get(reply, "jobs");
			json_array_foreach(jobs, k, job) {
				json_t *r2 = NULL;
				long long ix = wire_int(job, "array_index", -1);

				if (!json_object_get(job, "array_id") || strcmp(wire_str(job, "state") ?: "", "running") ||
				    (lo >= 0 && (ix < lo || ix > hi)))
					continue;
				if (client_call(cl, json_pack("{s:s, s:I, s:I, s:i}", "op", "signal", "jobid",
							      (json_int_t)id, "array_index", (json_int_t)ix, "signal",
							      sig), &r2, &err) < 0)
					status = cmd_fail(1, "%s", err.text);
				json_decref(r2);
			}
			json_decref(reply);
			continue;
		}
		if (client_call(cl, lo >= 0 ? json_pack("{s:s, s:I, s:I, s:i}", "op", "signal", "jobid", (json_int_t)id,
							"array_index", (json_int_t)lo, "signal", sig)
					    : json_pack("{s:s, s:I, s:i}", "op", "signal", "jobid", (json_int_t)id,
							"signal", sig), &reply, &err) < 0)
			status = cmd_fail(1, "%s", err.text);
		json_decref(reply);
	}
	client_close(cl);
	return status;
}
