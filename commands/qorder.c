/* SPDX-License-Identifier: MIT */
/* qorder: two queued jobs of one owner in one queue trade places in its dispatch order. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "jobid.h"
#include "version.h"

static const char usage_text[] =
	"usage: qorder [-f FILE] JOBID JOBID\n"
	"Swaps the places of two queued jobs of one owner in one queue.\n"
	"A job id is 12, 12.server or 12.server@host.\n"
	"  -f FILE   configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"  --help    show this help\n";

static int id_arg(char *s, int64_t *ret)
{
	char *at = strchr(s, '@');

	if (at)
		*at = '\0';
	if (jobid_parse(s, ret) < 0)
		return cmd_fail(2, "%s: not a job id", s);
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
	json_t *reply = NULL;
	struct error err;
	int64_t a, b;
	int c, status = 0;

	if (version_requested(argc, argv))
		return version_print("qorder");
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
			return cmd_fail(2, "option -%c needs an argument (see qorder --help)", optopt);
		default:
			if (optopt)
				return cmd_fail(2, "unknown option -%c (see qorder --help)", optopt);
			return cmd_fail(2, "unknown option %s (see qorder --help)", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cmd_fail(2, "two job ids are needed (see qorder --help)");
	if (id_arg(argv[optind], &a) || id_arg(argv[optind + 1], &b))
		return 2;
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (client_call(cl, json_pack("{s:s, s:I, s:I}", "op", "swap", "jobid", (json_int_t)a, "other",
				      (json_int_t)b), &reply, &err) < 0)
		status = cmd_fail(1, "%s", err.text);
	json_decref(reply);
	client_close(cl);
	return status;
}
