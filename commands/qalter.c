/* SPDX-License-Identifier: MIT */
/* qalter: change a queued or held job's name, resources, output paths, join or rerun flag, begin time. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "jobattr.h"
#include "jobid.h"
#include "jobscript.h"
#include "parse.h"
#include "version.h"

static const char usage_text[] =
	"usage: qalter [-f FILE] [-N name] [-l resource=value,...] [-o path] [-e path]\n"
	"              [-j oe|n] [-r y|n] [-a [[[[CC]YY]MM]DD]hhmm[.SS]] JOBID...\n"
	"Changes queued or held jobs, checked as qsub checks a new job against its queue.\n"
	"A job id is 12, 12.server or 12.server@host.\n"
	"  -N name       the job's name\n"
	"  -l list       resources as qsub takes them: ncpus=N, mem=SIZE, walltime=TIME,\n"
	"                a one-node select= or nodes=, mpiprocs=N, ompthreads=N\n"
	"  -o, -e path   standard output / error file (relative to this directory)\n"
	"  -j oe|n       join standard error into standard output, or not\n"
	"  -r y|n        rerunnable or not\n"
	"  -a datetime   not to start before then (a running job: after a requeue)\n"
	"  -f FILE       configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"  --help        show this help\n";

/* Sets key to path as qsub takes it: [host:]path, made absolute against
 * this directory. 0, or 1 after a message. */
static int path_set(json_t *req, const char *opt, const char *key, const char *path)
{
	char cwd[PATH_MAX], abs[PATH_MAX];
	int r;

	if (!getcwd(cwd, sizeof(cwd)))
		return cmd_fail(1, "cannot tell the current directory for %s", path);
	r = cmd_output_path(cwd, opt, path, abs, sizeof(abs));
	if (r)
		return r;
	return json_object_set_new(req, key, json_string(abs)) < 0 ? 1 : 0;
}

/* The request's shape attributes, into req's "attrs": those -l named,
 * and, when -l gave the job a new shape (ncpus=, select=, nodes=), null
 * for the ones it left out, so that the old request's slots go with it
 * as in qsub. -l resources qalter does not apply are refused, not
 * dropped. 0, or an exit status after a message. */
static int request_shape(const struct jobspec *js, json_t *req)
{
	json_t *attrs = json_object();

	if (!attrs)
		return cmd_fail(1, "out of memory");
	if (js->nodelist || js->exclude || js->constraint) {
		json_decref(attrs);
		return cmd_fail(2, "-l host=, vnode= or node features: qalter cannot change where a job "
				"may run (qdel the job and submit it again)");
	}
	for (size_t i = 0; i < js->n_attrs; i++) {
		const char *name = js->attrs[i].name;

		if (jobattr_is_shape(name)) {
			if (json_object_set_new(attrs, name, json_string(js->attrs[i].value)) < 0) {
				json_decref(attrs);
				return cmd_fail(1, "out of memory");
			}
		} else if (!strncmp(name, "Resource_List.", strlen("Resource_List.")) &&
			   strcmp(name, "Resource_List.mem") != 0) {
			json_decref(attrs);
			return cmd_fail(2, "-l %s: qalter cannot change it (qdel the job and submit it again)",
					name + strlen("Resource_List."));
		}
	}
	for (size_t i = 0; js->ncpus >= 0 && i < JOBATTR_SHAPE_N; i++)
		if (!json_object_get(attrs, jobattr_shape[i]) &&
		    json_object_set_new(attrs, jobattr_shape[i], json_null()) < 0) {
			json_decref(attrs);
			return cmd_fail(1, "out of memory");
		}
	if (json_object_size(attrs) == 0) {
		json_decref(attrs);
		return 0;
	}
	return json_object_set_new(req, "attrs", attrs) < 0 ? cmd_fail(1, "out of memory") : 0;
}

/* The alter request of what js sets, into *ret (NULL when it sets
 * nothing). 0, or an exit status after a message. */
static int request_build(const struct jobspec *js, json_t **ret)
{
	json_t *req = json_pack("{s:s}", "op", "alter");
	int r = 0;

	*ret = NULL;
	if (!req)
		return cmd_fail(1, "out of memory");
	r = request_shape(js, req);
	if (r) {
		json_decref(req);
		return r;
	}
	if (js->name)
		r |= json_object_set_new(req, "name", json_string(js->name));
	if (js->ncpus >= 0)
		r |= json_object_set_new(req, "ncpus", json_integer(js->ncpus));
	if (js->mem >= 0)
		r |= json_object_set_new(req, "mem", json_integer(js->mem));
	if (js->walltime >= 0)
		r |= json_object_set_new(req, "walltime", json_integer(js->walltime));
	if (js->join >= 0)
		r |= json_object_set_new(req, "join", json_boolean(js->join));
	if (js->rerunnable >= 0)
		r |= json_object_set_new(req, "rerunnable", json_boolean(js->rerunnable));
	if (js->start_after) {
		time_t when;

		if (pbs_datetime_parse(js->start_after, time(NULL), &when) < 0) {
			json_decref(req);
			return cmd_fail(2, "-a %s: not a date and time", js->start_after);
		}
		r |= json_object_set_new(req, "begin", json_integer((json_int_t)when));
	}
	if (r) {
		json_decref(req);
		return cmd_fail(1, "out of memory");
	}
	if ((js->stdout_path && (r = path_set(req, "-o", "stdout", js->stdout_path))) ||
	    (js->stderr_path && (r = path_set(req, "-e", "stderr", js->stderr_path)))) {
		json_decref(req);
		return r;
	}
	if (json_object_size(req) == 1)
		json_decref(req);
	else
		*ret = req;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL;
	struct client *cl = NULL;
	struct jobspec js;
	struct error err;
	json_t *req;
	int c, status = 0;

	if (version_requested(argc, argv))
		return version_print("qalter");
	jobspec_init(&js);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:N:l:o:e:j:r:a:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf = optarg;
			break;
		case 'N': case 'l': case 'o': case 'e': case 'j': case 'r': case 'a':
			if (jobspec_option(&js, c, optarg, &err) < 0) {
				jobspec_clear(&js);
				return cmd_fail(2, "%s", err.text);
			}
			/* A job's shape across nodes is fixed at qsub. */
			if (js.n_chunks) {
				jobspec_clear(&js);
				return cmd_fail(2, "-l %s: qalter cannot ask for chunks across nodes "
						"(qdel the job and submit it again)", optarg);
			}
			/* So are its GPUs (docs/GPUS.md), not silently kept. */
			if (js.ngpus >= 0 || js.gpu_model) {
				jobspec_clear(&js);
				return cmd_fail(2, "-l %s: qalter cannot change a job's GPUs "
						"(qdel the job and submit it again)", optarg);
			}
			break;
		case 'H':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_fail(2, "option -%c needs an argument (see qalter --help)", optopt);
		default:
			if (optopt)
				return cmd_fail(2, "unknown option -%c (see qalter --help)", optopt);
			return cmd_fail(2, "unknown option %s (see qalter --help)", argv[optind - 1]);
		}
	}
	status = request_build(&js, &req);
	jobspec_clear(&js);
	if (status)
		return status;
	if (!req)
		return cmd_fail(2, "nothing to change (see qalter --help)");
	if (optind == argc) {
		json_decref(req);
		return cmd_fail(2, "no job id given (see qalter --help)");
	}
	if (client_open(conf, &cl, &err) < 0) {
		json_decref(req);
		return cmd_fail(1, "%s", err.text);
	}
	for (int i = optind; i < argc; i++) {
		json_t *reply = NULL;
		char *at = strchr(argv[i], '@');
		int64_t id;

		if (at)
			*at = '\0';
		if (jobid_parse(argv[i], &id) < 0) {
			status = cmd_fail(1, "%s: not a job id", argv[i]);
			continue;
		}
		json_object_set_new(req, "jobid", json_integer(id));
		if (client_call(cl, json_incref(req), &reply, &err) < 0)
			status = cmd_fail(1, "%s", err.text);
		json_decref(reply);
	}
	json_decref(req);
	client_close(cl);
	return status;
}
