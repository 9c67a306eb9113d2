/* SPDX-License-Identifier: MIT */
/* qdel/qhold/qrls/qrerun: send delete/hold/release/rerun for each job id. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "jobid.h"
#include "jobop.h"
#include "version.h"

static void usage_print(const struct jobop_cmd *cmd)
{
	printf("usage: %s [-f FILE]%s%s%s JOBID...\n"
	       "%s\n"
	       "A job id is a number, e.g. 12, or PBS style 12.server or 12.server@host;\n"
	       "an array is 12[] (all its subjobs), 12[7] (one) or 12[3-9] (a range).\n"
	       "  -f FILE   configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	       "%s%s%s"
	       "  --help    show this help\n",
	       cmd->prog, cmd->flags & JOBOP_FORCE ? " [-W force]" : "",
	       cmd->flags & JOBOP_HISTORY ? " [-x]" : "",
	       cmd->flags & JOBOP_HOLD_TYPES ? " [-h u|o|s]" : "", cmd->summary,
	       cmd->flags & JOBOP_FORCE ? "  -W force  even when the job's node does not answer (or is not rerunnable)\n" : "",
	       cmd->flags & JOBOP_HISTORY ? "  -x        a job that has finished already is no error\n" : "",
	       cmd->flags & JOBOP_HOLD_TYPES ? "  -h TYPES  u (user), o (operator), s (system): one kind of hold in qpool; o, s need root\n" : "");
}

/* Checks -h's hold types: letters of "uos" ("n" for none with qrls). */
static int hold_types_check(const struct jobop_cmd *cmd, const char *types)
{
	if (!*types || strspn(types, "uosn") != strlen(types))
		return cmd_fail(2, "-h %s: hold types are u, o and s (see %s --help)", types, cmd->prog);
	return 0;
}

/* Leaves "12" of "12.server@host" for jobid_parse. */
static void jobid_strip_server(char *s)
{
	char *at = strchr(s, '@');

	if (at)
		*at = '\0';
}

int jobop_main(const struct jobop_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL;
	struct client *cl = NULL;
	struct error err;
	bool force = false, history = false;
	int c, status = 0;

	if (version_requested(argc, argv))
		return version_print(cmd->prog);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:W:xh:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf = optarg;
			break;
		case 'W':
			if (!(cmd->flags & JOBOP_FORCE))
				goto unknown;
			if (strcmp(optarg, "force") != 0)
				return cmd_fail(2, "-W %s: only -W force is known (see %s --help)", optarg,
						cmd->prog);
			force = true;
			break;
		case 'x':
			if (!(cmd->flags & JOBOP_HISTORY))
				goto unknown;
			history = true;
			break;
		case 'h':
			if (!(cmd->flags & JOBOP_HOLD_TYPES))
				goto unknown;
			if (hold_types_check(cmd, optarg))
				return 2;
			if (strpbrk(optarg, "os") && geteuid() != 0)
				return cmd_fail(1, "-h %s: operator and system holds are root's", optarg);
			break;
		case 'H':
			usage_print(cmd);
			return 0;
		case ':':
			return cmd_fail(2, "option -%c needs an argument (see %s --help)", optopt,
				    cmd->prog);
		default:
		unknown:
			if (optopt)
				return cmd_fail(2, "unknown option -%c (see %s --help)", optopt,
					    cmd->prog);
			return cmd_fail(2, "unknown option %s (see %s --help)", argv[optind - 1],
				    cmd->prog);
		}
	}
	if (optind == argc)
		return cmd_fail(2, "no job id given (see %s --help)", cmd->prog);
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	for (int i = optind; i < argc; i++) {
		json_t *reply = NULL, *req;
		int64_t id, lo, hi;
		int r;

		jobid_strip_server(argv[i]);
		if (jobid_parse_array(argv[i], &id, &lo, &hi) < 0) {
			status = cmd_fail(1, "%s: not a job id", argv[i]);
			continue;
		}
		req = json_pack("{s:s, s:I}", "op", cmd->op, "jobid", (json_int_t)id);
		/* Arrays: 12[] all of it, 12[7] one subjob, 12[3-9] a range. */
		if (req && lo == JOBID_ARRAY_ALL)
			json_object_set_new(req, "array", json_true());
		else if (req && lo >= 0) {
			json_object_set_new(req, "array_index", json_integer(lo));
			json_object_set_new(req, "array_last", json_integer(hi));
		}
		if (req && force)
			json_object_set_new(req, "force", json_true());
		r = client_call(cl, req, &reply, &err);
		/* -x: a job that has finished already is no error. */
		if (r < 0 && !(r == -EALREADY && history))
			status = cmd_fail(1, "%s", err.text);
		json_decref(reply);
	}
	client_close(cl);
	return status;
}
