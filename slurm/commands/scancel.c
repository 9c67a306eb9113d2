/* SPDX-License-Identifier: MIT */
/* scancel: cancel or signal qpool's jobs as Slurm's scancel does (the delete and signal ops). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "parse.h"
#include "slurmjobs.h"
#include "slurmsel.h"
#include "timeutil.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"Usage: scancel [-s SIGNAL] [-u USER] [--me] [-n NAME] [-t STATE] [-p PARTITION] [-b|-f] [-Q]\n"
	"               [JOBID[_TASK]...]\n"
	"Cancels qpool's jobs (or sends them a signal) as Slurm's scancel: the jobs named,\n"
	"and of those (or of all jobs) the ones every filter matches.\n"
	"  -s, --signal=SIGNAL    send SIGNAL (a name, SIGNAME or 1-30) to running jobs instead\n"
	"  -u, --user=USER        jobs of USER\n"
	"      --me               your own jobs\n"
	"  -n, --name=NAME        jobs named NAME (--jobname too)\n"
	"  -t, --state=STATE      jobs in STATE: PENDING (PD), RUNNING (R), SUSPENDED (S)\n"
	"  -p, --partition=PART   jobs of partition PART (a qpool queue)\n"
	"  -b, --batch            the signal goes to the batch script's processes\n"
	"  -f, --full             the signal goes to all of the job's processes (qpool's way)\n"
	"  -Q, --quiet            no error for jobs already finished\n"
	"      --conf FILE        configuration file\n"
	"      --help, --usage    show this help\n";

static const char *arg_conf;
static int arg_signal;
static bool arg_quiet;
static struct slurmsel arg_sel;

/* One job (or array task): delete or signal. */
static int job_act(struct client *cl, long long id, long long index, const char *shown)
{
	json_t *req, *reply = NULL;
	struct error err;
	int r;

	if (arg_signal)
		req = json_pack("{s:s, s:I, s:i}", "op", "signal", "jobid", (json_int_t)id, "signal", arg_signal);
	else
		req = json_pack("{s:s, s:I}", "op", "delete", "jobid", (json_int_t)id);
	if (!req)
		return cmd_fail(1, "out of memory");
	if (index >= 0) {
		json_object_set_new(req, "array_index", json_integer(index));
		json_object_set_new(req, "array_last", json_integer(index));
	}
	r = client_call(cl, req, &reply, &err);
	json_decref(reply);
	if (r == -EALREADY && arg_quiet)
		return 0;
	if (r < 0)
		return cmd_fail(1, "error: %s job error on job id %s: %s", arg_signal ? "Signal" : "Kill", shown,
				slurmjobs_error(r, &err));
	return 0;
}

static bool filtered(void)
{
	return arg_sel.users || arg_sel.names || arg_sel.partitions || arg_sel.n_states || arg_sel.uid >= 0;
}

int main(int argc, char **argv)
{
	enum { OPT_ME = 256, OPT_CONF, OPT_HELP };
	static const struct option longopts[] = {
		{ "signal", required_argument, NULL, 's' },
		{ "user", required_argument, NULL, 'u' },
		{ "name", required_argument, NULL, 'n' },
		{ "jobname", required_argument, NULL, 'n' },
		{ "state", required_argument, NULL, 't' },
		{ "partition", required_argument, NULL, 'p' },
		{ "batch", no_argument, NULL, 'b' },
		{ "full", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'Q' },
		{ "me", no_argument, NULL, OPT_ME },
		{ "conf", required_argument, NULL, OPT_CONF },
		{ "clusters", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "usage", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct slurmsel ids;
	struct client *cl = NULL;
	json_t *jobs = NULL;
	struct error err;
	int c, status = 0;
	size_t i;
	json_t *job;

	if (version_requested(argc, argv))
		return version_print("scancel");
	slurmsel_init(&arg_sel);
	slurmsel_init(&ids);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:u:n:t:p:bfQM:", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			arg_signal = signal_parse(optarg);
			if (arg_signal < 0)
				return cmd_fail(1, "error: Invalid job signal: %s", optarg);
			break;
		case 'u': arg_sel.users = optarg; break;
		case 'n': arg_sel.names = optarg; break;
		case 'p': arg_sel.partitions = optarg; break;
		case 't':
			if (slurmsel_states_set(&arg_sel, optarg, &err) < 0)
				return cmd_fail(1, "error: %s", err.text);
			for (int k = 0; k < arg_sel.n_states; k++)
				if (strcmp(arg_sel.states[k], "PENDING") != 0 &&
				    strcmp(arg_sel.states[k], "RUNNING") != 0 &&
				    strcmp(arg_sel.states[k], "SUSPENDED") != 0)
					return cmd_fail(1, "error: Invalid job state specified: %s", optarg);
			break;
		case 'b': case 'f': break;
		case 'Q': arg_quiet = true; break;
		case OPT_ME: arg_sel.uid = (long long)getuid(); break;
		case 'M': break;   /* one pool, one "cluster": any name is it */
		case OPT_CONF: arg_conf = optarg; break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:   /* '?' or ':' */
			return cmd_getopt_fail(c, argv);
		}
	}
	for (int k = optind; k < argc; k++)
		if (slurmsel_ids_add(&ids, argv[k], &err) < 0)
			return cmd_fail(1, "error: %s", err.text);
	if (ids.n_ids == 0 && !filtered())
		return cmd_fail(1, "error: No job identification provided");
	if (client_open(arg_conf, &cl, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	if (!filtered()) {
		/* Ids alone: each asked of qpoold as named, so one that does
		 * not exist or has ended is refused in Slurm's words. */
		for (int k = 0; k < ids.n_ids; k++) {
			char shown[64];

			if (ids.ids[k].index >= 0)
				snprintf(shown, sizeof(shown), "%lld_%lld", (long long)ids.ids[k].id,
					 (long long)ids.ids[k].index);
			else
				snprintf(shown, sizeof(shown), "%lld", (long long)ids.ids[k].id);
			if (job_act(cl, ids.ids[k].id, ids.ids[k].index, shown))
				status = 1;
		}
		goto done;
	}
	memcpy(arg_sel.ids, ids.ids, sizeof(ids.ids));
	arg_sel.n_ids = ids.n_ids;
	if (slurmjobs_fetch(cl, &arg_sel, SLURMJOBS_ALIVE, time_wall_ns(), &jobs, &err) < 0) {
		status = cmd_fail(1, "error: %s", err.text);
		goto done;
	}
	json_array_foreach(jobs, i, job) {
		bool task = json_is_integer(json_object_get(job, "array_id"));
		long long id = task ? wire_int(job, "array_id", 0) : wire_int(job, "jobid", 0);
		long long index = task ? wire_int(job, "array_index", 0) : -1;
		char shown[64];

		if (task)
			snprintf(shown, sizeof(shown), "%lld_%lld", id, index);
		else
			snprintf(shown, sizeof(shown), "%lld", id);
		/* A signal goes to running jobs only, as Slurm's. */
		if (arg_signal && strcmp(wire_str(job, "state") ? wire_str(job, "state") : "", "running") != 0)
			continue;
		if (job_act(cl, id, index, shown))
			status = 1;
	}
done:
	json_decref(jobs);
	client_close(cl);
	return status;
}
