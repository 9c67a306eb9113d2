/* SPDX-License-Identifier: MIT */
/* pbs_rdel: remove reservations (docs/RESERVATIONS.md); root only. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"usage: pbs_rdel [-f FILE] RESV_ID...\n"
	"Removes reservations: R12, R12.server, or a reservation's name.\n";

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	const char *conf = NULL;
	struct client *cl;
	struct error err;
	int c, status = 0;

	if (version_requested(argc, argv))
		return version_print("pbs_rdel");
	while ((c = getopt_long(argc, argv, "f:", longopts, NULL)) != -1) {
		if (c == 'f') {
			conf = optarg;
		} else if (c == 'h') {
			fputs(usage_text, stdout);
			return 0;
		} else {
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	for (int i = optind; i < argc; i++) {
		char id[80];
		json_t *reply = NULL;

		/* R12.server: the server part is this pool. */
		snprintf(id, sizeof(id), "%.*s", (int)strcspn(argv[i], "."), argv[i]);
		if (client_call(cl, json_pack("{s:s, s:s, s:s}", "op", "resv", "action", "delete", "name", id), &reply,
				&err) < 0)
			status = cmd_fail(1, "%s: %s", argv[i], err.text);
		json_decref(reply);
	}
	client_close(cl);
	return status;
}
