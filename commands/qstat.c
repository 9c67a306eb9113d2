/* SPDX-License-Identifier: MIT */
/* qstat: jobs in PBS's layouts (default, -a, -f, -F json) or qpool's (--table, --json); queues, server, nodes. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "cmd.h"
#include "jobfmt.h"
#include "jobid.h"
#include "pbsfmt.h"
#include "sort.h"
#include "timeutil.h"
#include "watch.h"
#include "wire.h"
#include "version.h"

static const char usage_text[] =
	"usage: qstat [-a|-T|-f|--table] [-x] [-i|-r] [-n] [-s] [-1] [-w] [-u USER[,USER...]]\n"
	"             [-F json|--json] [-t|-J] [JOBID|QUEUE|@SERVER...]\n"
	"       qstat -Q [-f] [--json] [QUEUE...]\n"
	"       qstat -Q --order QUEUE [--json]\n"
	"       qstat -B [-f]\n"
	"       qstat --nodes [--json]\n"
	"       qstat --follow [--since CURSOR] [-F json] [JOBID...]\n"
	"Shows jobs (by default those not finished), queues (-Q), the server (-B) or nodes.\n"
	"A job id is 12, 12.server or 12.server@host; an array 12[], a subjob 12[7].\n"
	"  -a            PBS's alternative table: memory, walltime, elapsed time\n"
	"  -T            -a with each waiting job's estimated start (Est Start) for the\n"
	"                elapsed time, the soonest first; \"--\": none\n"
	"  -f            full detail of each job (PBS attribute names)\n"
	"  -F json       -f as PBS's JSON document\n"
	"  -x            include finished jobs\n"
	"  -i / -r       only waiting (queued, held) / only running jobs (imply -a)\n"
	"  -n            each job's execution host (implies -a)\n"
	"  -s            each job's comment: why it waits or failed (implies -a)\n"
	"  -1            -n and -s on the job's own line\n"
	"  -w            wide: nothing cut\n"
	"  -u USERS      only these users' jobs (comma-separated; implies -a)\n"
	"  -t            with job arrays (ID[], state B once begun), their subjobs ID[N]\n"
	"  -J            job arrays only\n"
	"      --table   qpool's table: word states, CPUs, node, elapsed\n"
	"  -Q            the queues; with -f in PBS's attribute form\n"
	"      --order QUEUE  the queue's dispatch order (per-user round robin) and why\n"
	"  -B            the server's job counts\n"
	"      --nodes   the nodes (also: pbsnodes)\n"
	"      --follow  each change of a job's (or, for root, a node's) state as it is\n"
	"                committed, one line each, until interrupted; -F json: one JSON\n"
	"                object a line. --since CURSOR: from after that event on\n"
	"      --json    the server's objects as qpool's JSON\n"
	"      --conf FILE  configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"      --help    show this help\n";

enum layout { LAYOUT_CLASSIC, LAYOUT_ALT, LAYOUT_FULL, LAYOUT_TABLE };

static const char *arg_conf;
static const char *arg_users;
static const char *arg_order;
static bool arg_subjobs, arg_arrays_only;
static bool arg_finished, arg_json, arg_pbs_json, arg_queues, arg_nodes, arg_server, arg_full;
static bool arg_alt, arg_table, arg_idle, arg_running;
static struct pbsfmt_opts arg_opts;
static char server_name[256];
static bool arg_follow;
static long long arg_since = -1;

/* PBS indents -F json by 4; qpool's --json stays at 2. */
static void json_print(const json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(arg_pbs_json ? 4 : 2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
}

/* True when name is one of the comma-separated names in list. */
static bool list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *end = strchrnul(p, ',');

		if ((size_t)(end - p) == n && strncmp(p, name, n) == 0)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

/* One list op (queues, nodes): its array, or NULL after saying why. */
static json_t *list_fetch(struct client *cl, const char *op, json_t **ret_reply)
{
	struct error err;
	json_t *list;

	/* Paged: a pool of thousands of nodes answers in several replies. */
	if (client_call_pages(cl, json_pack("{s:s}", "op", op), op, ret_reply, &err) < 0) {
		cmd_fail(1, "%s", err.text);
		return NULL;
	}
	list = json_object_get(*ret_reply, op);
	if (!json_is_array(list)) {
		cmd_fail(1, "qpoold's reply has no %s list", op);
		return NULL;
	}
	return list;
}

/* -Q [QUEUE...], -B and --nodes. */
static int list_show(struct client *cl, const char *op, char **names, int n_names)
{
	json_t *reply = NULL, *list = list_fetch(cl, op, &reply), *shown;
	int status = 0, r = 0;
	size_t i;
	json_t *e;

	if (!list) {
		json_decref(reply);
		return 1;
	}
	shown = n_names ? json_array() : json_incref(list);
	for (int k = 0; k < n_names; k++) {
		bool found = false;

		json_array_foreach(list, i, e)
			if (strcmp(wire_str(e, "name") ? wire_str(e, "name") : "", names[k]) == 0) {
				json_array_append(shown, e);
				found = true;
			}
		if (!found)
			status = cmd_fail(1, "unknown %s '%s'", arg_queues ? "queue" : "node", names[k]);
	}
	if (arg_server) {
		client_server_name(cl, server_name, sizeof(server_name));
		pbsfmt_server(stdout, list, server_name, arg_full);
		pbsfmt_server_licenses(stdout, json_object_get(reply, "licenses"), arg_full);
		pbsfmt_server_ha(stdout, json_object_get(reply, "ha"), arg_full);
	} else if (arg_json) {
		json_t *doc = json_pack("{s:O}", op, shown);

		json_print(doc);
		json_decref(doc);
	} else if (arg_queues && arg_full) {
		json_array_foreach(shown, i, e) {
			if (i > 0)
				fputc('\n', stdout);
			pbsfmt_queue_full(stdout, e);
		}
	} else if (json_array_size(shown) > 0 || !n_names) {
		r = arg_queues ? jobfmt_queues_table(stdout, shown) : jobfmt_nodes_table(stdout, shown);
	}
	json_decref(shown);
	json_decref(reply);
	return r < 0 ? cmd_fail(1, "out of memory") : status;
}

/* Asks for jobs (jobid 0: all) and appends them to all. */
static int jobs_fetch(struct client *cl, int64_t jobid, int64_t index, json_t *all)
{
	bool one_user = arg_users && !strchr(arg_users, ',');
	json_t *req, *reply = NULL, *jobs;
	struct error err;
	int r;

	/* A job named by id is shown finished or not: the user asked for it. */
	req = json_pack("{s:s, s:b, s:b}", "op", "stat", "finished", arg_finished || jobid > 0,
			"full", arg_full || arg_json || arg_pbs_json);
	if (!req)
		return cmd_fail(1, "out of memory");
	if (jobid > 0)
		json_object_set_new(req, "jobid", json_integer(jobid));
	if (index >= 0)
		json_object_set_new(req, "array_index", json_integer(index));
	if (arg_subjobs)
		json_object_set_new(req, "subjobs", json_true());
	if (one_user)
		json_object_set_new(req, "user", json_string(arg_users));
	r = client_call_pages(cl, req, "jobs", &reply, &err);
	if (r == -ENOENT && jobid > 0) {
		char server[256], id[300];

		/* PBS's words, and qpoold's (a subjob's index, say). */
		client_server_name(cl, server, sizeof(server));
		if (index >= 0)
			jobid_format_array(jobid, index, server, id, sizeof(id));
		else
			jobid_format(jobid, server, id, sizeof(id));
		return cmd_fail(1, "Unknown Job Id %s (%s)", id, err.text);
	}
	if (r < 0)
		return cmd_fail(1, "%s", err.text);
	jobs = json_object_get(reply, "jobs");
	if (!json_is_array(jobs)) {
		json_decref(reply);
		return cmd_fail(1, "qpoold's reply has no jobs list");
	}
	if (jobid > 0 && json_array_size(jobs) == 0) {
		char server[256];

		/* PBS's words, which portals take for "the job is gone". */
		client_server_name(cl, server, sizeof(server));
		json_decref(reply);
		return cmd_fail(1, "Unknown Job Id %lld.%s", (long long)jobid, server);
	}
	/* -J: arrays only (and their subjobs with -t). */
	for (size_t k = 0; arg_arrays_only && k < json_array_size(jobs);) {
		json_t *o = json_array_get(jobs, k);

		if (json_object_get(o, "array") || json_object_get(o, "array_id"))
			k++;
		else
			json_array_remove(jobs, k);
	}
	json_array_extend(all, jobs);
	json_decref(reply);
	return 0;
}

/* -u with several users, -i, -r and QUEUE arguments, applied here. */
static bool job_shown(const json_t *job, char **queues, int n_queues)
{
	char s = pbsfmt_job_state(job, time_wall_ns());
	const char *q = wire_str(job, "queue");
	bool in_queue = n_queues == 0;

	if (arg_users && !list_has(arg_users, wire_str(job, "owner") ? wire_str(job, "owner") : ""))
		return false;
	if (arg_idle && s != 'Q' && s != 'H' && s != 'W')
		return false;
	if (arg_running && s != 'R' && s != 'E')
		return false;
	for (int k = 0; k < n_queues; k++)
		in_queue |= q && strcmp(q, queues[k]) == 0;
	return in_queue;
}

static int jobs_print(const json_t *jobs)
{
	int64_t now = time_wall_ns();
	size_t i;
	json_t *job;

	if (arg_pbs_json) {
		json_t *doc = pbsfmt_jobs_json(jobs, server_name, now);

		if (!doc)
			return cmd_fail(1, "out of memory");
		json_print(doc);
		json_decref(doc);
	} else if (arg_json) {
		json_print(jobs);
	} else if (arg_full) {
		json_array_foreach(jobs, i, job) {
			if (i > 0)
				fputc('\n', stdout);
			pbsfmt_job_full(stdout, job, server_name, now);
		}
	} else if (arg_table) {
		if (jobfmt_jobs_table(stdout, jobs, now) < 0)
			return cmd_fail(1, "out of memory");
	} else if (arg_alt) {
		pbsfmt_jobs_alt(stdout, jobs, server_name, now, &arg_opts);
	} else {
		pbsfmt_jobs_classic(stdout, jobs, server_name, &arg_opts);
	}
	return 0;
}

/* qstat -T: started jobs first, then waiting ones by estimated start,
 * the soonest first, then those with none; each group in id order. */
static int est_rank(const json_t *job)
{
	char st = pbsfmt_job_state(job, time_wall_ns());

	if (st != 'Q' && st != 'H' && st != 'W')
		return 0;
	return wire_int(job, "estimated_start", 0) > 0 ? 1 : 2;
}

static int est_cmp(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	int rx = est_rank(x), ry = est_rank(y);
	long long sx = wire_int(x, "estimated_start", 0), sy = wire_int(y, "estimated_start", 0);

	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (rx == 1 && sx != sy)
		return sx < sy ? -1 : 1;
	return wire_int(x, "jobid", 0) < wire_int(y, "jobid", 0) ? -1 :
	       wire_int(x, "jobid", 0) > wire_int(y, "jobid", 0);
}

static void jobs_sort_estimates(json_t *jobs)
{
	size_t n = json_array_size(jobs);
	json_t **v = malloc((n + 1) * sizeof(*v));

	if (!v)
		return;   /* id order, then */
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(jobs, i));
	qp_sort(v, n, sizeof(*v), est_cmp);
	json_array_clear(jobs);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(jobs, v[i]);
	free(v);
}

/* Operands: job ids (12, 12.server, 12.server@host), "@server" (every
 * job) or a queue name (or queue@server): the jobs in that queue. */
static int jobs_show(struct client *cl, char **args, int n_args)
{
	json_t *all = json_array(), *shown = json_array();
	char **queues = calloc((size_t)n_args + 1, sizeof(*queues));
	int status = 0, n_queues = 0, n_ids = 0;
	size_t i;
	json_t *job;

	if (!all || !shown || !queues) {
		status = cmd_fail(1, "out of memory");
		goto done;
	}
	for (int k = 0; k < n_args; k++) {
		char *at = strchr(args[k], '@');
		int64_t id, lo, hi;

		if (args[k][0] >= '0' && args[k][0] <= '9') {
			n_ids++;
			if (at)
				*at = '\0';
			if (jobid_parse_array(args[k], &id, &lo, &hi) < 0 || (lo >= 0 && hi != lo))
				status = cmd_fail(1, "%s: not a job id", args[k]);
			else if (jobs_fetch(cl, id, lo >= 0 ? lo : -1, all))
				status = 1;
		} else if (args[k][0] != '@') {
			if (at)
				*at = '\0';
			queues[n_queues++] = args[k];
		}
	}
	if (n_ids == 0 && jobs_fetch(cl, 0, -1, all) != 0) {
		status = 1;
		goto done;
	}
	json_array_foreach(all, i, job)
		if (job_shown(job, queues, n_queues))
			json_array_append(shown, job);
	if (arg_opts.estimates)
		jobs_sort_estimates(shown);
	/* The pool's name, as the server's replies gave it. */
	client_server_name(cl, server_name, sizeof(server_name));
	if (jobs_print(shown))
		status = 1;
done:
	free(queues);
	json_decref(all);
	json_decref(shown);
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

/* --follow: one line per event (docs/EVENTS.md): its cursor, time, job
 * id and state, then exit status, node and reason where it has them;
 * -F json: the event object with the job's full id. */
static int follow_event(const json_t *ev, void *ud)
{
	struct client *cl = ud;
	char id[128] = "", when[32];
	time_t t = (time_t)(wire_int(ev, "time", 0) / 1000000000LL);
	struct tm tm;

	client_server_name(cl, server_name, sizeof(server_name));
	if (json_object_get(ev, "jobid"))
		jobid_format(wire_int(ev, "jobid", 0), server_name, id, sizeof(id));
	if (arg_pbs_json) {
		json_t *o = json_deep_copy(ev);

		if (id[0])
			json_object_set_new(o, "jobid", json_string(id));
		json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
		printf("%lld %s %s %s", wire_int(ev, "seq", 0), when, id[0] ? id : "node", wire_str(ev, "state"));
		if (json_object_get(ev, "exit_status"))
			printf(" exit=%lld", wire_int(ev, "exit_status", 0));
		if (json_object_get(ev, "exit_signal"))
			printf(" signal=%lld", wire_int(ev, "exit_signal", 0));
		if (wire_str(ev, "node"))
			printf(" node=%s", wire_str(ev, "node"));
		if (wire_str(ev, "reason"))
			printf(" reason=\"%s\"", wire_str(ev, "reason"));
		/* A node's changer: the admin who drained or resumed it. */
		if (!id[0] && json_object_get(ev, "uid"))
			printf(" by_uid=%lld", wire_int(ev, "uid", 0));
		fputc('\n', stdout);
	}
	/* A script reading a pipe sees each event as it comes. */
	return fflush(stdout) == 0 ? 0 : -EPIPE;
}

static int follow(struct client *cl, char **ids, int n)
{
	struct watch_opts o = { .since = arg_since };
	int64_t *jobs = NULL;
	struct error err;
	int r;

	if (n > 0) {
		jobs = calloc((size_t)n, sizeof(*jobs));
		if (!jobs)
			return cmd_fail(1, "out of memory");
		for (int i = 0; i < n; i++) {
			int64_t lo, hi;

			if (jobid_parse_array(ids[i], &jobs[i], &lo, &hi) < 0 ||
			    (lo != JOBID_PLAIN && lo != JOBID_ARRAY_ALL)) {
				free(jobs);
				return cmd_fail(2, "%s: not a job id (12, 12.server or 12[])", ids[i]);
			}
		}
		o.jobs = jobs;
		o.n_jobs = (size_t)n;
	}
	r = watch_run(cl, &o, NULL, follow_event, cl, &err);
	free(jobs);
	if (r == -EPIPE)
		return 0;   /* the reader went: not an error of ours */
	return cmd_fail(1, "%s", err.text);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "conf", required_argument, NULL, 'C' },
		{ "order", required_argument, NULL, 'O' },
		{ "nodes", no_argument, NULL, 'N' },
		{ "table", no_argument, NULL, 1000 },
		{ "follow", no_argument, NULL, 'W' },
		{ "since", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct client *cl = NULL;
	struct error err;
	int c, status;

	if (version_requested(argc, argv))
		return version_print("qstat");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":afxu:QBnsw1irtJTF:", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': arg_alt = true; break;
		case 'f': arg_full = true; break;
		case 'x': arg_finished = true; break;
		case 'u': arg_users = optarg; break;
		case 'Q': arg_queues = true; break;
		case 'B': arg_server = true; break;
		case 'n': arg_opts.nodes = arg_alt = true; break;
		case 's': arg_opts.comments = arg_alt = true; break;
		case '1': arg_opts.one_line = true; break;
		case 'w': arg_opts.wide = true; break;
		case 'i': arg_idle = true; break;
		case 'r': arg_running = true; break;
		case 't': arg_subjobs = true; break;
		case 'J': arg_arrays_only = true; break;
		case 'F':
			if (strcmp(optarg, "json") != 0)
				return cmd_fail(2, "-F %s: only -F json is supported (see qstat --help)", optarg);
			arg_pbs_json = arg_full = true;
			break;
		case 'j': arg_json = true; break;
		case 1000: arg_table = true; break;
		case 'T': arg_opts.estimates = arg_alt = true; break;
		case 'W': arg_follow = true; break;
		case 'S': {
			char *end;

			errno = 0;
			arg_since = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end || arg_since < 0)
				return cmd_fail(2, "--since %s: not a cursor (an event's number, 0 or more)", optarg);
			break;
		}
		case 'N': arg_nodes = true; break;
		case 'C': arg_conf = optarg; break;
		case 'O': arg_order = optarg; arg_queues = true; break;
		case 'h':
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
	if (arg_since >= 0 && !arg_follow)
		return cmd_fail(2, "--since goes with --follow (see qstat --help)");
	if (arg_follow && (arg_queues || arg_nodes || arg_server || arg_order || arg_finished || arg_users ||
			   arg_alt || arg_table || arg_json || arg_idle || arg_running || arg_subjobs))
		return cmd_fail(2, "--follow takes only --since, -F json and job ids (see qstat --help)");
	if (arg_queues + arg_nodes + arg_server > 1)
		return cmd_fail(2, "-Q, -B and --nodes go alone (see qstat --help)");
	if ((arg_queues || arg_nodes || arg_server) &&
	    (arg_finished || arg_users || arg_alt || arg_table || arg_pbs_json || arg_idle || arg_running))
		return cmd_fail(2, "-Q, -B and --nodes take no -a, -x, -u, -i, -r, -F (see qstat --help)");
	/* PBS Pro shows -u (and -i, -r) in the alternative layout; tools that
	 * count a user's jobs (FireWorks) read its S and Queue columns. */
	if (arg_users || arg_idle || arg_running)
		arg_alt = true;
	if (arg_idle && arg_running)
		return cmd_fail(2, "-i and -r exclude each other (see qstat --help)");
	if (arg_json && arg_pbs_json)
		return cmd_fail(2, "--json and -F json exclude each other (see qstat --help)");
	if (client_open(arg_conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (arg_follow)
		status = follow(cl, argv + optind, argc - optind);
	else if (arg_order)
		status = order_show(cl, arg_order);
	else if (arg_queues || arg_server)
		status = list_show(cl, "queues", arg_server ? NULL : argv + optind,
				   arg_server ? 0 : argc - optind);
	else if (arg_nodes)
		status = list_show(cl, "nodes", argv + optind, argc - optind);
	else
		status = jobs_show(cl, argv + optind, argc - optind);
	client_close(cl);
	if (fflush(stdout) != 0 && status == 0)
		status = cmd_fail(1, "cannot write: %s", strerror(errno));
	return status;
}
