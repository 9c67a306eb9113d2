/* SPDX-License-Identifier: MIT */
/* qdel/qhold/qrls: send delete/hold/release for each job id. */
#include <getopt.h>
#include <stdio.h>

#include "client.h"
#include "cmd.h"
#include "jobid.h"
#include "jobop.h"
#include "version.h"

static void usage_print(const struct jobop_cmd *cmd)
{
	printf("usage: %s [-f FILE] JOBID...\n"
	       "%s\n"
	       "A job id is a number, e.g. 12, or PBS style 12.host.\n"
	       "  -f FILE   configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	       "  --help    show this help\n",
	       cmd->prog, cmd->summary);
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
	int c, status = 0;

	if (version_requested(argc, argv))
		return version_print(cmd->prog);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf = optarg;
			break;
		case 'H':
			usage_print(cmd);
			return 0;
		case ':':
			return cmd_fail(2, "option -%c needs an argument (see %s --help)", optopt,
				    cmd->prog);
		default:
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
		json_t *reply = NULL;
		int64_t id;

		if (jobid_parse(argv[i], &id) < 0) {
			status = cmd_fail(1, "%s: not a job id", argv[i]);
			continue;
		}
		if (client_call(cl, json_pack("{s:s, s:I}", "op", cmd->op, "jobid", (json_int_t)id),
				&reply, &err) < 0) {
			status = cmd_fail(1, "%s", err.text);
			continue;
		}
		json_decref(reply);
	}
	client_close(cl);
	return status;
}
