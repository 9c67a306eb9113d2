/* SPDX-License-Identifier: MIT */
/* qstat: show jobs, queues (-Q) or nodes (-n) as tables, PBS-style detail or JSON. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "jobfmt.h"
#include "jobid.h"
#include "timeutil.h"
#include "wire.h"
#include "version.h"

static const char usage_text[] =
	"usage: qstat [-f] [-x] [-u USER] [--json] [JOBID...]\n"
	"       qstat -Q [--json]\n"
	"       qstat -Q --order QUEUE [--json]\n"
	"       qstat -n [--json]\n"
	"Shows jobs (by default those not finished), queues (-Q) or nodes (-n).\n"
	"  -f            full detail of each job\n"
	"  -x            include finished jobs\n"
	"  -u USER       only USER's jobs\n"
	"  -Q            the queues\n"
	"      --order QUEUE  the queue's dispatch order (per-user round robin) and why\n"
	"  -n            the nodes\n"
	"      --json    the server's objects as JSON\n"
	"      --conf FILE  configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"      --help    show this help\n";

static const char *arg_conf;
static const char *arg_user;
static const char *arg_order;
static bool arg_full, arg_finished, arg_json, arg_queues, arg_nodes;

static void json_print(const json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
}

/* -Q and -n: one table (or JSON under the same member). */
static int list_show(struct client *cl, const char *op)
{
	json_t *reply = NULL, *list;
	struct error err;
	int r;

	r = client_call_pages(cl, json_pack("{s:s}", "op", op), op, &reply, &err);
	if (r < 0)
		return cmd_fail(1, "%s", err.text);
	list = json_object_get(reply, op);
	if (!json_is_array(list)) {
		json_decref(reply);
		return cmd_fail(1, "qpoold's reply has no %s list", op);
	}
	if (arg_json) {
		json_t *doc = json_pack("{s:O}", op, list);

		json_print(doc);
		json_decref(doc);
		r = 0;
	} else {
		r = strcmp(op, "queues") == 0 ? jobfmt_queues_table(stdout, list)
					      : jobfmt_nodes_table(stdout, list);
	}
	json_decref(reply);
	return r < 0 ? cmd_fail(1, "out of memory") : 0;
}

/* Asks for jobs (jobid 0: all) and appends them to all. */
static int jobs_fetch(struct client *cl, int64_t jobid, json_t *all)
{
	json_t *req, *reply = NULL, *jobs;
	struct error err;
	int r;

	/* A job named by id is shown finished or not: the user asked for it. */
	req = json_pack("{s:s, s:b, s:b}", "op", "stat", "finished", arg_finished || jobid > 0,
			"full", arg_full || arg_json);
	if (!req)
		return cmd_fail(1, "out of memory");
	if (jobid > 0)
		json_object_set_new(req, "jobid", json_integer(jobid));
	if (arg_user)
		json_object_set_new(req, "user", json_string(arg_user));
	r = client_call_pages(cl, req, "jobs", &reply, &err);
	if (r < 0)
		return cmd_fail(1, "%s", err.text);
	jobs = json_object_get(reply, "jobs");
	if (!json_is_array(jobs)) {
		json_decref(reply);
		return cmd_fail(1, "qpoold's reply has no jobs list");
	}
	if (jobid > 0 && json_array_size(jobs) == 0) {
		json_decref(reply);
		return cmd_fail(1, "job %lld: no such job", (long long)jobid);
	}
	json_array_extend(all, jobs);
	json_decref(reply);
	return 0;
}

static int jobs_show(struct client *cl, char **ids, int n_ids)
{
	json_t *all = json_array();
	int status = 0;
	size_t i;
	json_t *job;

	if (!all)
		return cmd_fail(1, "out of memory");
	if (n_ids == 0)
		status = jobs_fetch(cl, 0, all);
	for (int k = 0; k < n_ids; k++) {
		int64_t id;

		if (jobid_parse(ids[k], &id) < 0)
			status = cmd_fail(1, "%s: not a job id", ids[k]);
		else if (jobs_fetch(cl, id, all))
			status = 1;
	}
	if (arg_json) {
		json_print(all);
	} else if (arg_full) {
		json_array_foreach(all, i, job) {
			if (i > 0)
				fputc('\n', stdout);
			jobfmt_job_full(stdout, job);
		}
	} else if (jobfmt_jobs_table(stdout, all, time_wall_ns()) < 0) {
		status = cmd_fail(1, "out of memory");
	}
	json_decref(all);
	return status;
}

/* -Q --order QUEUE: the IQS order of one queue. */
static int order_show(struct client *cl, const char *queue)
{
	json_t *reply = NULL;
	struct error err;
	int r;

	r = client_call_pages(cl, json_pack("{s:s, s:s}", "op", "order", "queue", queue), "order", &reply, &err);
	if (r < 0)
		return cmd_fail(1, "%s", err.text);
	json_object_del(reply, "id");
	json_object_del(reply, "ok");
	if (arg_json)
		json_print(reply);
	else if (jobfmt_order_table(stdout, reply) < 0)
		r = cmd_fail(1, "out of memory");
	json_decref(reply);
	return r < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "conf", required_argument, NULL, 'C' },
		{ "order", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct client *cl = NULL;
	struct error err;
	int c, status;

	if (version_requested(argc, argv))
		return version_print("qstat");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fxu:QnC:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': arg_full = true; break;
		case 'x': arg_finished = true; break;
		case 'u': arg_user = optarg; break;
		case 'Q': arg_queues = true; break;
		case 'n': arg_nodes = true; break;
		case 'J': arg_json = true; break;
		case 'C': arg_conf = optarg; break;
		case 'O': arg_order = optarg; arg_queues = true; break;
		case 'H':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			if (optopt == 'C')
				return cmd_fail(2, "option --conf needs an argument (see qstat --help)");
			return cmd_fail(2, "option -%c needs an argument (see qstat --help)", optopt);
		default:
			if (optopt)
				return cmd_fail(2, "unknown option -%c (see qstat --help)", optopt);
			return cmd_fail(2, "unknown option %s (see qstat --help)", argv[optind - 1]);
		}
	}
	if (arg_queues + arg_nodes > 1 ||
	    ((arg_queues || arg_nodes) && (optind < argc || arg_full || arg_finished || arg_user)))
		return cmd_fail(2, "-Q and -n take no job ids and no -f, -x, -u (see qstat --help)");
	if (client_open(arg_conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (arg_order)
		status = order_show(cl, arg_order);
	else if (arg_queues)
		status = list_show(cl, "queues");
	else if (arg_nodes)
		status = list_show(cl, "nodes");
	else
		status = jobs_show(cl, argv + optind, argc - optind);
	client_close(cl);
	if (fflush(stdout) != 0 && status == 0)
		status = cmd_fail(1, "cannot write: %s", strerror(errno));
	return status;
}
