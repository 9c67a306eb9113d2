/* SPDX-License-Identifier: MIT */
/* qacct: accounting reports (job detail, summaries, overhead, utilization, SVG timeline) from qpoold's records. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acct.h"
#include "client.h"
#include "cmd.h"
#include "jobid.h"
#include "timeutil.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"usage: qacct -j JOBID [--csv|--json]\n"
	"       qacct [--by queue|user|node|day|account|project] [--from T] [--to T] [-u USER] [--csv|--json]\n"
	"       qacct --overhead [--queue Q] [--from T] [--to T] [--csv|--json]\n"
	"       qacct --utilization [--from T] [--to T] [--csv|--json]\n"
	"       qacct --estimates [--by KEY] [--from T] [--to T] [-u USER] [--csv|--json]\n"
	"       qacct --held [--by KEY] [--from T] [--to T] [-u USER] [--csv|--json]\n"
	"       qacct --svg FILE [--from T] [--to T]\n"
	"Reports where the time of finished and running jobs went.\n"
	"  -j JOBID          one job: every stamp and derived figure\n"
	"      --by KEY      summary grouped by queue (default), user, node, day, account (-A) or project (-P)\n"
	"      --overhead    per-queue table of connect, elapsed and overhead per job\n"
	"      --queue Q     only queue Q (with --overhead)\n"
	"      --utilization the pool's core time split by state over the window\n"
	"      --estimates   how good start estimates were: median and p90 of |start - estimate|\n"
	"                    in seconds, for each job's first estimate and the one at its start\n"
	"      --held        memory (asked, peak used) and licenses held over the window, in\n"
	"                    MB-hours and license-hours, grouped as --by (default user)\n"
	"      --svg FILE    also write a timeline of every core and GPU over the window\n"
	"      --from T, --to T  window: \"YYYY-MM-DD[ HH:MM[:SS]]\" (local), -30m, -1h, -2d,\n"
	"                    now, or epoch seconds (default: first job's dispatch to now)\n"
	"  -u USER           only USER's jobs\n"
	"      --csv, --json machine-readable output\n"
	"  -f FILE           configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"      --help        show this help\n";

static const char *arg_conf, *arg_job, *arg_by, *arg_from, *arg_to, *arg_queue, *arg_svg, *arg_user;
static bool arg_overhead, arg_util, arg_estimates, arg_held;
static enum acct_format arg_format = ACCT_FORMAT_TEXT;

/* What one run of qacct works on, fetched once. */
struct data {
	json_t *acct, *queues, *nodes;
	struct acct_job *jobs;
	size_t n_jobs;
	struct acct_gpu_hold *holds;     /* the GPUs each job held, for --svg */
	size_t n_holds;
	int64_t now, from, to;
};

static int fetch(struct client *cl, json_t *req, json_t **ret, const char *member)
{
	struct error err;

	if (!req)
		return cmd_fail(1, "out of memory");
	if (client_call_pages(cl, req, member, ret, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (!json_is_array(json_object_get(*ret, member)))
		return cmd_fail(1, "qpoold's reply has no %s list", member);
	return 0;
}

static int data_load(struct client *cl, int64_t jobid, int64_t from, int64_t to, struct data *d)
{
	json_t *req = json_pack("{s:s}", "op", "acct"), *arr;
	size_t i;
	json_t *o;

	if (req && jobid > 0)
		json_object_set_new(req, "jobid", json_integer(jobid));
	if (req && from)
		json_object_set_new(req, "from", json_integer(from));
	if (req && to)
		json_object_set_new(req, "to", json_integer(to));
	if (req && arg_user)
		json_object_set_new(req, "user", json_string(arg_user));
	if (fetch(cl, req, &d->acct, "jobs") || fetch(cl, json_pack("{s:s}", "op", "queues"), &d->queues, "queues") ||
	    fetch(cl, json_pack("{s:s}", "op", "nodes"), &d->nodes, "nodes"))
		return 1;
	arr = json_object_get(d->acct, "jobs");
	d->now = json_integer_value(json_object_get(d->acct, "now"));
	d->jobs = calloc(json_array_size(arr) + 1, sizeof(*d->jobs));
	if (!d->jobs)
		return cmd_fail(1, "out of memory");
	json_array_foreach(arr, i, o) {
		if (acct_job_from_json(o, &d->jobs[d->n_jobs]) < 0)
			continue;
		if (acct_gpu_holds_add(o, d->n_jobs, &d->holds, &d->n_holds) < 0)
			return cmd_fail(1, "out of memory");
		d->n_jobs++;
	}
	acct_jobs_mark_realtime(d->jobs, d->n_jobs, json_object_get(d->queues, "queues"));
	/* The window: as asked, else from the first dispatch to now. */
	d->to = to ? to : d->now;
	d->from = from;
	for (size_t k = 0; !from && k < d->n_jobs; k++)
		if (d->jobs[k].t[ACCT_DISPATCH] && (!d->from || d->jobs[k].t[ACCT_DISPATCH] < d->from))
			d->from = d->jobs[k].t[ACCT_DISPATCH];
	if (!d->from || d->from >= d->to)
		d->from = d->to - NSEC_PER_SEC * 3600;
	return 0;
}

static void data_free(struct data *d)
{
	free(d->jobs);
	free(d->holds);
	json_decref(d->acct);
	json_decref(d->queues);
	json_decref(d->nodes);
}

static int report_show(struct acct_report *rep, int r)
{
	if (r < 0)
		return cmd_fail(1, "cannot build the report: %s", strerror(-r));
	r = acct_report_print(rep, arg_format, stdout);
	acct_report_destroy(rep);
	return r < 0 ? cmd_fail(1, "cannot write the report: %s", strerror(-r)) : 0;
}

static int job_show(const struct data *d)
{
	struct acct_report *rep = NULL;
	struct acct_derived der;
	int r;

	if (d->n_jobs == 0)
		return cmd_fail(1, "job %s: no such job", arg_job);
	r = acct_report_job(&d->jobs[0], &rep);
	if (r == 0 && ((r = acct_report_job_nodes(rep, json_array_get(json_object_get(d->acct, "jobs"), 0))) < 0 ||
		       (r = acct_report_job_attempts(rep, json_array_get(json_object_get(d->acct, "jobs"), 0))) < 0 ||
		       (r = acct_report_job_gpus(rep, &d->jobs[0],
						 json_array_get(json_object_get(d->acct, "jobs"), 0))) < 0 ||
		       (r = acct_report_job_licenses(rep, &d->jobs[0],
						     json_array_get(json_object_get(d->acct, "jobs"), 0))) < 0)) {
		acct_report_destroy(rep);
		rep = NULL;
	}
	if (r == 0) {
		acct_job_derive(&d->jobs[0], &der);
		acct_report_meta(rep, "record", json_incref(json_array_get(json_object_get(d->acct, "jobs"), 0)));
		acct_report_meta(rep, "derived", acct_derived_json(&der));
	}
	return report_show(rep, r);
}

static int nodes_of(const struct data *d, struct acct_node **ret, size_t *ret_n)
{
	int r = acct_nodes_build(json_object_get(d->acct, "nodes"), json_object_get(d->nodes, "nodes"), d->jobs,
				 d->n_jobs, ret, ret_n);

	return r < 0 ? cmd_fail(1, "out of memory") : 0;
}

static int util_show(const struct data *d)
{
	struct acct_node *nodes = NULL;
	struct acct_report *rep = NULL;
	struct acct_util u;
	size_t n_nodes;
	int r;

	if (nodes_of(d, &nodes, &n_nodes))
		return 1;
	r = acct_utilization(d->jobs, d->n_jobs, nodes, n_nodes, d->from, d->to, d->now, &u);
	free(nodes);
	if (r < 0)
		return cmd_fail(1, "--from must be before --to");
	r = acct_report_utilization(&u, &rep);
	return report_show(rep, r);
}

static int svg_write(const struct data *d)
{
	struct acct_node *nodes = NULL;
	size_t n_nodes;
	FILE *f;
	int r;

	if (nodes_of(d, &nodes, &n_nodes))
		return 1;
	f = fopen(arg_svg, "we");
	if (!f) {
		free(nodes);
		return cmd_fail(1, "cannot create %s: %s", arg_svg, strerror(errno));
	}
	r = acct_svg_write(f, d->jobs, d->n_jobs, nodes, n_nodes, d->holds, d->n_holds, d->from, d->to, d->now);
	free(nodes);
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == -EINVAL)
		return cmd_fail(1, "--from must be before --to");
	return r < 0 ? cmd_fail(1, "cannot write %s: %s", arg_svg, strerror(-r)) : 0;
}

/* Parsed before connecting, so a usage error never waits on the server. */
static int64_t arg_jobid, arg_index = -1, arg_from_ns, arg_to_ns;
static enum acct_key arg_key = ACCT_BY_QUEUE;

static int args_check(void)
{
	int64_t now = time_wall_ns();

	int64_t lo, hi;

	/* ID[] is the array's own record; ID[N] a subjob's. */
	if (arg_job && (jobid_parse_array(arg_job, &arg_jobid, &lo, &hi) < 0 || hi != lo))
		return cmd_fail(2, "%s: not a job id", arg_job);
	if (arg_job && lo >= 0)
		arg_index = lo;
	if (arg_from && acct_time_parse(arg_from, now, &arg_from_ns) < 0)
		return cmd_fail(2, "--from %s: not a time (YYYY-MM-DD[ HH:MM[:SS]], -1h, -30m, or epoch seconds)", arg_from);
	if (arg_to && acct_time_parse(arg_to, now, &arg_to_ns) < 0)
		return cmd_fail(2, "--to %s: not a time (YYYY-MM-DD[ HH:MM[:SS]], -1h, -30m, or epoch seconds)", arg_to);
	if (arg_from && arg_to && arg_from_ns >= arg_to_ns)
		return cmd_fail(2, "--from must be before --to");
	if (arg_by && acct_key_parse(arg_by, &arg_key) < 0)
		return cmd_fail(2, "--by %s: not one of queue, user, node, day, account, project", arg_by);
	return 0;
}

static int run(struct client *cl)
{
	struct data d = { 0 };
	struct acct_report *rep = NULL;
	int status, r;

	if (arg_index >= 0) {
		/* A subjob's record is under its own number: ask for it. */
		json_t *reply = NULL;
		struct error err;

		if (client_call(cl, json_pack("{s:s, s:I, s:I, s:b}", "op", "stat", "jobid", (json_int_t)arg_jobid,
					      "array_index", (json_int_t)arg_index, "finished", 1), &reply, &err) < 0)
			return cmd_fail(1, "%s", err.text);
		arg_jobid = wire_int(json_array_get(json_object_get(reply, "jobs"), 0), "jobid", arg_jobid);
		json_decref(reply);
	}
	status = data_load(cl, arg_jobid, arg_from_ns, arg_to_ns, &d);
	if (status)
		goto done;
	if (arg_job) {
		status = job_show(&d);
	} else if (arg_overhead) {
		r = acct_report_overhead(d.jobs, d.n_jobs, arg_queue, &rep);
		status = report_show(rep, r);
	} else if (arg_util) {
		status = util_show(&d);
	} else if (arg_estimates) {
		r = acct_report_estimates(d.jobs, d.n_jobs, arg_key, &rep);
		status = report_show(rep, r);
	} else if (arg_held) {
		r = acct_report_held(d.jobs, d.n_jobs, arg_by ? arg_key : ACCT_BY_USER, d.from, d.to, d.now, &rep);
		status = report_show(rep, r);
	} else if (!arg_svg || arg_by) {
		r = acct_report_summary(d.jobs, d.n_jobs, arg_key, &rep);
		status = report_show(rep, r);
	}
	if (status == 0 && arg_svg)
		status = svg_write(&d);
done:
	data_free(&d);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 'T' },
		{ "overhead", no_argument, NULL, 'O' },
		{ "queue", required_argument, NULL, 'q' },
		{ "utilization", no_argument, NULL, 'U' },
		{ "estimates", no_argument, NULL, 'E' },
		{ "held", no_argument, NULL, 'L' },
		{ "svg", required_argument, NULL, 'S' },
		{ "csv", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct client *cl = NULL;
	struct error err;
	int c, status, modes;

	if (version_requested(argc, argv))
		return version_print("qacct");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":j:f:u:", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': arg_job = optarg; break;
		case 'f': arg_conf = optarg; break;
		case 'u': arg_user = optarg; break;
		case 'b': arg_by = optarg; break;
		case 'F': arg_from = optarg; break;
		case 'T': arg_to = optarg; break;
		case 'O': arg_overhead = true; break;
		case 'q': arg_queue = optarg; break;
		case 'U': arg_util = true; break;
		case 'E': arg_estimates = true; break;
		case 'L': arg_held = true; break;
		case 'S': arg_svg = optarg; break;
		case 'c': arg_format = ACCT_FORMAT_CSV; break;
		case 'J': arg_format = ACCT_FORMAT_JSON; break;
		case 'H':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			if (optopt)
				return cmd_fail(2, "option -%c needs an argument (see qacct --help)", optopt);
			return cmd_fail(2, "option %s needs an argument (see qacct --help)", argv[optind - 1]);
		default:
			if (optopt)
				return cmd_fail(2, "unknown option -%c (see qacct --help)", optopt);
			return cmd_fail(2, "unknown option %s (see qacct --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_fail(2, "unexpected argument '%s' (see qacct --help)", argv[optind]);
	modes = !!arg_job + arg_overhead + arg_util + arg_estimates + arg_held + (!!arg_by && !arg_estimates && !arg_held);
	if (modes > 1)
		return cmd_fail(2, "-j, --by, --overhead, --utilization, --estimates and --held are separate reports (--by "
				"groups --estimates and --held) (see qacct --help)");
	if (arg_queue && !arg_overhead)
		return cmd_fail(2, "--queue goes with --overhead (see qacct --help)");
	if (arg_held && arg_svg)
		return cmd_fail(2, "--held takes no --svg (see qacct --help)");
	if (arg_job && (arg_from || arg_to || arg_svg))
		return cmd_fail(2, "-j takes no window and no --svg (see qacct --help)");
	status = args_check();
	if (status)
		return status;
	if (client_open(arg_conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	status = run(cl);
	client_close(cl);
	if (fflush(stdout) != 0 && status == 0)
		status = cmd_fail(1, "cannot write: %s", strerror(errno));
	return status;
}
