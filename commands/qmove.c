/* SPDX-License-Identifier: MIT */
/* qmove: move queued or held jobs to another queue. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "jobid.h"
#include "version.h"

static const char usage_text[] =
	"usage: qmove [-f FILE] QUEUE[@server] JOBID...\n"
	"Moves queued or held jobs to QUEUE, checked as qsub checks a new job there.\n"
	"A job id is 12, 12.server or 12.server@host.\n"
	"  -f FILE   configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"  --help    show this help\n";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL;
	struct client *cl = NULL;
	struct error err;
	char *queue, *at;
	int c, status = 0;

	if (version_requested(argc, argv))
		return version_print("qmove");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf = optarg;
			break;
		case 'H':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_fail(2, "option -%c needs an argument (see qmove --help)", optopt);
		default:
			if (optopt)
				return cmd_fail(2, "unknown option -%c (see qmove --help)", optopt);
			return cmd_fail(2, "unknown option %s (see qmove --help)", argv[optind - 1]);
		}
	}
	if (argc - optind < 2)
		return cmd_fail(2, "a queue and at least one job id are needed (see qmove --help)");
	queue = argv[optind++];
	at = strchr(queue, '@');
	if (at)
		*at = '\0';
	if (!*queue)
		return cmd_fail(2, "no queue given (see qmove --help)");
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	for (int i = optind; i < argc; i++) {
		json_t *reply = NULL;
		int64_t id;

		at = strchr(argv[i], '@');
		if (at)
			*at = '\0';
		if (jobid_parse(argv[i], &id) < 0) {
			status = cmd_fail(1, "%s: not a job id", argv[i]);
			continue;
		}
		if (client_call(cl, json_pack("{s:s, s:I, s:s}", "op", "move", "jobid", (json_int_t)id,
					      "queue", queue), &reply, &err) < 0)
			status = cmd_fail(1, "%s", err.text);
		json_decref(reply);
	}
	client_close(cl);
	return status;
}
