/* SPDX-License-Identifier: MIT */
/* tracejob: a job's history, one line per stamp, from the server's record of it. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "cmd.h"
#include "jobid.h"
#include "parse.h"
#include "pbsfmt.h"
#include "timeutil.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"usage: tracejob [-n DAYS] [--conf FILE] JOBID...\n"
	"Prints each job's history: every stamp qpoold, qnoded and gded took, in order,\n"
	"with who took it (S server, M node, A accounting) and what happened.\n"
	"A job id is 12, 12.server or 12.server@host.\n"
	"  -n DAYS       accepted for PBS scripts: qpool keeps every job's record\n"
	"      --conf FILE  configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"      --help    show this help\n";

/* PBS's "MM/DD/YYYY HH:MM:SS.mmm", local time. */
static void stamp_format(long long ns, char *buf, size_t len)
{
	time_t sec = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;
	size_t n;

	if (!localtime_r(&sec, &tm)) {
		snprintf(buf, len, "%lld", ns);
		return;
	}
	n = strftime(buf, len, "%m/%d/%Y %H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03lld", ns % NSEC_PER_SEC / NSEC_PER_MSEC);
}

static const char *or_q(const char *s)
{
	return s ? s : "?";
}

__attribute__((format(printf, 3, 4)))
static void line(long long ns, char who, const char *fmt, ...)
{
	char when[64];
	va_list ap;

	stamp_format(ns, when, sizeof(when));
	printf("%s  %c    ", when, who);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* One run's lines from its stamps; tag ("attempt 2: ") before each. */
static void run_trace(const json_t *job, const json_t *times, const json_t *result, const char *node,
		      const char *cpus, const char *tag)
{
	char status[160];
	long long t;

	if ((t = wire_int(times, "dispatch", -1)) >= 0)
		line(t, 'S', "%sjob run: sent to node %s, CPUs %s", tag, or_q(node), or_q(cpus));
	if ((t = wire_int(times, "launch", -1)) >= 0)
		line(t, 'M', "%snode %s received the job", tag, or_q(node));
	if ((t = wire_int(times, "wrap", -1)) >= 0)
		line(t, 'M', "%sgded started on %s", tag, or_q(node));
	if ((t = wire_int(times, "fenced", -1)) >= 0)
		line(t, 'M', "%scgroups ready on CPUs %s", tag, or_q(cpus));
	if ((t = wire_int(times, "exec", -1)) >= 0)
		line(t, 'M', "%sjob started as %s in %s", tag, or_q(wire_str(job, "owner")),
		     or_q(wire_str(job, "workdir")));
	if ((t = wire_int(times, "exit", -1)) >= 0) {
		if (wire_int(result, "exit_signal", 0) > 0)
			snprintf(status, sizeof(status), "killed by signal %lld", wire_int(result, "exit_signal", 0));
		else
			snprintf(status, sizeof(status), "exit status %lld", wire_int(result, "exit_status", -1));
		line(t, 'M', "%sjob ended: %s", tag, status);
	}
	if ((t = wire_int(times, "released", -1)) >= 0)
		line(t, 'M', "%scgroups removed, CPUs released on %s", tag, or_q(node));
}

static void job_trace(const json_t *job, const char *server)
{
	const json_t *times = json_object_get(job, "times"), *a;
	const json_t *attempts = json_object_get(json_object_get(job, "attrs"), "attempts");
	const char *node = wire_str(job, "node"), *state = wire_str(job, "state");
	char res[128], tmp[64], tag[32];
	long long t;
	size_t i;

	printf("Job: %lld.%s\n\n", wire_int(job, "jobid", 0), server);
	duration_format((uint64_t)wire_int(job, "walltime", 0), tmp, sizeof(tmp));
	snprintf(res, sizeof(res), "ncpus=%lld walltime=%s", wire_int(job, "ncpus", 0), tmp);
	if ((t = wire_int(times, "submit", -1)) >= 0) {
		line(t, 'S', "enqueued into %s, owner %s", or_q(wire_str(job, "queue")), or_q(wire_str(job, "owner")));
		line(t, 'A', "queued: %s, name %s", res, or_q(wire_str(job, "name")));
	}
	/* Each earlier attempt (a requeue: docs/PREEMPTION.md) with its
	 * own stamps, then the current one. */
	json_array_foreach(attempts, i, a) {
		const char *an = wire_str(a, "node");

		snprintf(tag, sizeof(tag), "attempt %zu: ", i + 1);
		run_trace(job, json_object_get(a, "times"), a, an, wire_str(a, "cpus"), tag);
		if ((t = wire_int(a, "end", -1)) >= 0)
			line(t, 'S', "%srequeued: %s", tag, or_q(wire_str(a, "reason")));
		if (wire_int(a, "suspended_ns", 0) > 0)
			line(t, 'S', "%ssuspended %.1f s in all", tag, (double)wire_int(a, "suspended_ns", 0) / 1e9);
	}
	if (json_array_size(attempts))
		snprintf(tag, sizeof(tag), "attempt %zu: ", json_array_size(attempts) + 1);
	else
		tag[0] = '\0';
	run_trace(job, times, job, node, wire_str(job, "cpus"), tag);
	if ((t = wire_int(times, "done", -1)) >= 0) {
		line(t, 'S', "job %s", or_q(state));
		if (wire_str(job, "reason"))
			line(t, 'S', "comment: %s", wire_str(job, "reason"));
		duration_format((uint64_t)(wire_int(job, "cpu_ns", 0) / NSEC_PER_SEC), tmp, sizeof(tmp));
		line(t, 'A', "end: state %s, resources_used.cput=%s", or_q(state), tmp);
	} else {
		printf("%*s  S    now %s%s%s\n", 23, "", state ? state : "?",
		       wire_str(job, "reason") ? ": " : "", wire_str(job, "reason") ? wire_str(job, "reason") : "");
	}
	putchar('\n');
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "conf", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL;
	struct client *cl = NULL;
	struct error err;
	char server[256];
	int c, status = 0;

	if (version_requested(argc, argv))
		return version_print("tracejob");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': break;
		case 'K': conf = optarg; break;
		case 'H':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_fail(2, "option -%c needs an argument (see tracejob --help)", optopt);
		default:
			if (optopt)
				return cmd_fail(2, "unknown option -%c (see tracejob --help)", optopt);
			return cmd_fail(2, "unknown option %s (see tracejob --help)", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return cmd_fail(2, "no job id given (see tracejob --help)");
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	for (int i = optind; i < argc; i++) {
		json_t *reply = NULL, *jobs;
		char *at = strchr(argv[i], '@');
		int64_t id;

		if (at)
			*at = '\0';
		if (jobid_parse(argv[i], &id) < 0) {
			status = cmd_fail(1, "%s: not a job id", argv[i]);
			continue;
		}
		if (client_call(cl, json_pack("{s:s, s:I, s:b}", "op", "stat", "jobid", (json_int_t)id,
					      "finished", 1), &reply, &err) < 0) {
			status = cmd_fail(1, "%s", err.text);
			continue;
		}
		jobs = json_object_get(reply, "jobs");
		/* The pool's name, as the reply gave it. */
		client_server_name(cl, server, sizeof(server));
		if (json_array_size(jobs) == 1)
			job_trace(json_array_get(jobs, 0), server);
		else
			status = cmd_fail(1, "job %lld: no such job", (long long)id);
		json_decref(reply);
	}
	client_close(cl);
	return status;
}
