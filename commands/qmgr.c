/* SPDX-License-Identifier: MIT */
/* qmgr: the admin's command: list queues and nodes, enable/disable and
 * start/stop queues, drain/resume nodes, reload qpool.conf. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "jobfmt.h"
#include "wire.h"
#include "version.h"

static const char usage_text[] =
	"usage: qmgr [-f FILE] COMMAND [ARGS]\n"
	"Changes apply at once and survive a qpoold restart (root only, except listings).\n"
	"  queues                   the queues, their state and limits\n"
	"  nodes                    the nodes and their state\n"
	"  enable QUEUE             accept submissions\n"
	"  disable QUEUE [REASON]   refuse submissions; qsub shows REASON\n"
	"  start QUEUE              dispatch its jobs\n"
	"  stop QUEUE [REASON]      dispatch nothing more (running jobs go on)\n"
	"  drain NODE [REASON]      running jobs finish, nothing new starts there\n"
	"  resume NODE              take new jobs again\n"
	"  reload                   re-read qpool.conf (an invalid file is refused)\n"
	"  -f FILE                  configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n";

static int list(struct client *cl, const char *what)
{
	json_t *reply;
	struct error err;
	int r;

	if (client_call_pages(cl, json_pack("{s:s}", "op", what), what, &reply, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (strcmp(what, "queues") == 0) {
		size_t i;
		json_t *q;

		r = jobfmt_queues_table(stdout, json_object_get(reply, "queues"));
		json_array_foreach(json_object_get(reply, "queues"), i, q)
			if (wire_str(q, "reason") && *wire_str(q, "reason"))
				printf("queue %s: %s\n", wire_str(q, "name"), wire_str(q, "reason"));
	} else {
		size_t i;
		json_t *n;

		r = jobfmt_nodes_table(stdout, json_object_get(reply, "nodes"));
		json_array_foreach(json_object_get(reply, "nodes"), i, n)
			if (wire_str(n, "reason"))
				printf("node %s drained: %s\n", wire_str(n, "name"), wire_str(n, "reason"));
	}
	json_decref(reply);
	return r < 0 ? cmd_fail(1, "out of memory") : 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *cmd;
		int min, max;   /* arguments after the command */
	} cmds[] = {
		{ "queues", 0, 0 }, { "nodes", 0, 0 }, { "enable", 1, 1 }, { "disable", 1, 2 },
		{ "start", 1, 1 }, { "stop", 1, 2 }, { "drain", 1, 2 }, { "resume", 1, 1 },
		{ "reload", 0, 0 },
	};
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL, *cmd;
	struct client *cl = NULL;
	struct error err;
	json_t *reply, *req;
	int c, nargs, status;
	size_t k;

	if (version_requested(argc, argv))
		return version_print("qmgr");
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:f:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': conf = optarg; break;
		case 'H':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_fail(2, "option -%c needs an argument (see qmgr --help)", optopt);
		default:
			return cmd_fail(2, "unknown option %s (see qmgr --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cmd_fail(2, "which command? (see qmgr --help)");
	cmd = argv[optind];
	nargs = argc - optind - 1;
	for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++)
		if (strcmp(cmd, cmds[k].cmd) == 0)
			break;
	if (k == sizeof(cmds) / sizeof(cmds[0]))
		return cmd_fail(2, "unknown command '%s' (see qmgr --help)", cmd);
	if (nargs < cmds[k].min || nargs > cmds[k].max)
		return cmd_fail(2, "%s takes %s (see qmgr --help)", cmd,
			    cmds[k].max == 0 ? "no arguments" : cmds[k].max == 1 ? "one name" : "a name and a reason");
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (strcmp(cmd, "queues") == 0 || strcmp(cmd, "nodes") == 0) {
		status = list(cl, cmd);
		client_close(cl);
		return status;
	}
	req = json_pack("{s:s, s:s}", "op", "admin", "action", cmd);
	if (nargs >= 1)
		json_object_set_new(req, "target", json_string(argv[optind + 1]));
	if (nargs == 2)
		json_object_set_new(req, "reason", json_string(argv[optind + 2]));
	status = 0;
	if (client_call(cl, req, &reply, &err) < 0)
		status = cmd_fail(1, "%s", err.text);
	else
		json_decref(reply);
	client_close(cl);
	return status;
}
