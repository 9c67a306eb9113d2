/* SPDX-License-Identifier: MIT */
/* pbs_rstat: the reservations the user may use (docs/RESERVATIONS.md),
 * in PBS's short (-S, the default) or full (-f) layout. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "cmd.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"usage: pbs_rstat [-S | -f | -F | -B] [-f FILE] [RESV_ID...]\n"
	"Shows reservations: -S a line each (default), -f (-F) every attribute, -B the ids.\n"
	"  --conf FILE   configuration file\n";

static bool wanted(const json_t *r, int n, char **ids)
{
	char q[32];

	if (n == 0)
		return true;
	for (int i = 0; i < n; i++) {
		size_t k = strcspn(ids[i], ".");

		snprintf(q, sizeof(q), "%s", wire_str(r, "queue") ? wire_str(r, "queue") : "");
		if ((strlen(q) == k && !strncmp(q, ids[i], k)) || !strcmp(ids[i], wire_str(r, "name")))
			return true;
	}
	return false;
}

/* long: "Sun Nov 29 05:00:00 2026" (-f), else "Sun 05:00" (-S). */
static void when(long long t, bool full, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	localtime_r(&tt, &tm);
	if (full)
		strftime(buf, len, "%a %b %e %H:%M:%S %Y", &tm);
	else
		strftime(buf, len, "%a %H:%M", &tm);
}

int main(int argc, char **argv)
{
	enum { OPT_CONF = 256, OPT_HELP };
	static const struct option longopts[] = {
		{ "conf", required_argument, NULL, OPT_CONF },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL, *server;
	char mode = 'S';
	json_t *reply = NULL, *r;
	struct client *cl;
	struct error err;
	size_t i, shown = 0;
	int c;

	if (version_requested(argc, argv))
		return version_print("pbs_rstat");
	while ((c = getopt_long(argc, argv, "SfFB", longopts, NULL)) != -1) {
		switch (c) {
		case 'S': case 'B': mode = (char)c; break;
		case 'f': case 'F': mode = 'f'; break;
		case OPT_CONF: conf = optarg; break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (client_call(cl, json_pack("{s:s}", "op", "resv"), &reply, &err) < 0) {
		client_close(cl);
		return cmd_fail(1, "%s", err.text);
	}
	client_close(cl);
	server = wire_str(reply, "server") ? wire_str(reply, "server") : "server";
	json_array_foreach(json_object_get(reply, "reservations"), i, r) {
		long long start = wire_int(r, "start", 0), end = wire_int(r, "end", 0);
		const char *q = wire_str(r, "queue") ? wire_str(r, "queue") : "";
		bool active = !strcmp(wire_str(r, "state") ? wire_str(r, "state") : "", "ACTIVE");
		char s[64], e[64];

		if (!wanted(r, argc - optind, argv + optind))
			continue;
		if (mode == 'S' && shown == 0) {
			printf("Resv ID         Queue         User     State             Start / Duration / End\n");
			printf("-------------------------------------------------------------------------------\n");
		}
		shown++;
		if (mode == 'B') {
			printf("Resv ID: %s.%s\n", q, server);
		} else if (mode == 'S') {
			char id[64];

			snprintf(id, sizeof(id), "%s.%s", q, server);
			when(start, false, s, sizeof(s));
			when(end, false, e, sizeof(e));
			printf("%-15.15s %-13.13s %-8.8s %-2s %21s / %lld / %s\n", id, q, "root", active ? "RN" : "CO", s,
			       end - start, e);
		} else {
			when(start, true, s, sizeof(s));
			when(end, true, e, sizeof(e));
			printf("Resv ID: %s.%s\n", q, server);
			printf("Reserve_Name = %s\n", wire_str(r, "name"));
			printf("Reserve_Owner = root@%s\n", server);
			printf("reserve_state = %s\n", active ? "RESV_RUNNING" : "RESV_CONFIRMED");
			printf("reserve_start = %s\n", s);
			printf("reserve_end = %s\n", e);
			printf("reserve_duration = %lld\n", end - start);
			printf("queue = %s\n", q);
			printf("Resource_List.nodect = %lld\n", wire_int(r, "node_cnt", 0));
			printf("resv_nodes = %s\n", wire_str(r, "nodes"));
			if (wire_str(r, "users"))
				printf("Authorized_Users = %s\n", wire_str(r, "users"));
			if (wire_str(r, "groups"))
				printf("Authorized_Groups = %s\n", wire_str(r, "groups"));
			if (wire_str(r, "accounts"))
				printf("Authorized_Accounts = %s\n", wire_str(r, "accounts"));
			if (wire_str(r, "flags") && *wire_str(r, "flags"))
				printf("qpool_flags = %s\n", wire_str(r, "flags"));
			if (strstr(wire_str(r, "flags") ? wire_str(r, "flags") : "", "DAILY") ||
			    strstr(wire_str(r, "flags") ? wire_str(r, "flags") : "", "WEEKLY")) {
				long long count = wire_int(r, "count", -1);

				printf("reserve_rrule = FREQ=%s", strstr(wire_str(r, "flags"), "DAILY") ? "DAILY" : "WEEKLY");
				if (count > 0)
					printf(";COUNT=%lld", count);
				printf("\nreserve_count = %lld\n", count);
			}
			printf("\n");
		}
	}
	json_decref(reply);
	if (argc > optind && !shown)
		return cmd_fail(1, "Unknown Reservation Id %s", argv[optind]);
	return fflush(stdout) != 0 ? cmd_fail(1, "cannot write: %s", strerror(errno)) : 0;
}
