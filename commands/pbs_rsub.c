/* SPDX-License-Identifier: MIT */
/* pbs_rsub: make an advance, standing or maintenance reservation
 * (docs/RESERVATIONS.md) over qpoold's resv op. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "client.h"
#include "cmd.h"
#include "parse.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"usage: pbs_rsub -R START (-E END | -D DURATION) -l select=N[:ncpus=C] -U USERS [-G GROUPS] [-N NAME]\n"
	"                [-r RRULE] [-f FILE]\n"
	"       pbs_rsub --hosts HOST[,HOST...] -R START (-E END | -D DURATION) [--running ignore|requeue]\n"
	"Makes a reservation of N nodes, or a maintenance reservation of the hosts named (root only).\n"
	"  -R START      [[[[CC]YY]MM]DD]hhmm[.SS], local time\n"
	"  -E END        the same form; or -D DURATION: seconds or [[HH:]MM:]SS\n"
	"  -l select=N   N nodes the server picks, free of running jobs and reservations then\n"
	"  -U USERS      the users who may run jobs in it (user[@host],...)\n"
	"  -G GROUPS     the groups whose users may\n"
	"  -N NAME       its name (default: its id, R<n>)\n"
	"  -r RRULE      standing: FREQ=DAILY;COUNT=N or FREQ=WEEKLY;COUNT=N[;BYDAY=<the start's day>]\n"
	"  --hosts LIST  a maintenance reservation of these hosts (a host list, or ALL)\n"
	"  --running     what becomes of running jobs that would cross it: refused by default,\n"
	"                ignore (they run on), requeue (at its start)\n"
	"  -f FILE       configuration file\n"
	"  --help        show this help\n";

/* The RRULE subset (docs/RESERVATIONS.md): FREQ DAILY or WEEKLY, COUNT,
 * INTERVAL=1, and a weekly BYDAY naming the start's own day. Fills flags
 * and *ret_count; 0 or -EINVAL. */
static int rrule_parse(const char *rule, time_t start, char *flags, size_t len, long long *ret_count)
{
	static const char *const days[] = { "SU", "MO", "TU", "WE", "TH", "FR", "SA" };
	char *copy = strdup(rule), *save = NULL;
	const char *freq = NULL, *byday = NULL;
	long long count = -1;
	int r = 0;
	struct tm tm;
	time_t t = start;

	if (!copy)
		return -ENOMEM;
	for (char *p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
		char *end;

		if (!strncasecmp(p, "RRULE:", 6))
			p += 6;
		if (!strncasecmp(p, "FREQ=", 5))
			freq = p + 5;
		else if (!strncasecmp(p, "COUNT=", 6)) {
			count = strtoll(p + 6, &end, 10);
			if (!p[6] || *end || count < 1 || count > 100000)
				r = -EINVAL;
		} else if (!strcasecmp(p, "INTERVAL=1"))
			;
		else if (!strncasecmp(p, "BYDAY=", 6))
			byday = p + 6;
		else
			r = -EINVAL;
	}
	if (!freq || (strcasecmp(freq, "DAILY") && strcasecmp(freq, "WEEKLY")))
		r = -EINVAL;
	localtime_r(&t, &tm);
	if (byday && (!freq || strcasecmp(freq, "WEEKLY") || strcasecmp(byday, days[tm.tm_wday])))
		r = -EINVAL;
	if (r == 0) {
		snprintf(flags, len, "%s", !strcasecmp(freq, "DAILY") ? "DAILY" : "WEEKLY");
		*ret_count = count;
	}
	free(copy);
	return r;
}

/* -U's "user@host,user2": the names. */
static void users_strip(char *s)
{
	char *out = s;

	for (char *in = s; *in;) {
		size_t n = strcspn(in, ",@");

		memmove(out, in, n);
		out += n;
		in += n;
		if (*in == '@')
			in += strcspn(in, ",");
		if (*in == ',') {
			*out++ = ',';
			in++;
		}
	}
	*out = '\0';
}

int main(int argc, char **argv)
{
	enum { OPT_HOSTS = 256, OPT_RUNNING, OPT_HELP };
	static const struct option longopts[] = {
		{ "hosts", required_argument, NULL, OPT_HOSTS },
		{ "running", required_argument, NULL, OPT_RUNNING },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL, *start_s = NULL, *end_s = NULL, *dur_s = NULL, *rrule = NULL, *hosts = NULL;
	const char *running = NULL, *name = NULL, *groups = NULL, *select = NULL;
	char users[1024] = "", flags[64] = "";
	json_t *req, *reply = NULL;
	struct client *cl;
	struct error err;
	time_t now = time(NULL), start, end;
	long long count = -1;
	int c, r;

	if (version_requested(argc, argv))
		return version_print("pbs_rsub");
	while ((c = getopt_long(argc, argv, "R:E:D:l:U:G:N:r:f:q:W:", longopts, NULL)) != -1) {
		switch (c) {
		case 'R': start_s = optarg; break;
		case 'E': end_s = optarg; break;
		case 'D': dur_s = optarg; break;
		case 'l':
			if (strncmp(optarg, "select=", 7) != 0)
				return cmd_fail(2, "-l %s: only select=N[:ncpus=C] is supported", optarg);
			select = optarg + 7;
			break;
		case 'U':
			if (strlen(optarg) >= sizeof(users))
				return cmd_fail(2, "-U: at most %zu bytes", sizeof(users) - 1);
			snprintf(users, sizeof(users), "%s", optarg);
			users_strip(users);
			break;
		case 'G': groups = optarg; break;
		case 'N': name = optarg; break;
		case 'r': rrule = optarg; break;
		case 'f': conf = optarg; break;
		case 'q': case 'W': break;   /* a destination, attributes: one server, no more */
		case OPT_HOSTS: hosts = optarg; break;
		case OPT_RUNNING: running = optarg; break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind < argc)
		return cmd_fail(2, "unexpected argument '%s'", argv[optind]);
	if (!start_s)
		return cmd_fail(2, "a start time (-R) is required");
	if (pbs_datetime_parse(start_s, now, &start) < 0)
		return cmd_fail(2, "illegal -R value: %s", start_s);
	if (end_s && dur_s)
		return cmd_fail(2, "-E and -D: give one");
	if (end_s) {
		if (pbs_datetime_parse(end_s, now, &end) < 0)
			return cmd_fail(2, "illegal -E value: %s", end_s);
	} else if (dur_s) {
		uint64_t d;

		if (duration_parse(dur_s, &d) < 0 || d == 0)
			return cmd_fail(2, "illegal -D value: %s", dur_s);
		end = start + (time_t)d;
	} else {
		return cmd_fail(2, "an end (-E) or a duration (-D) is required");
	}
	if (rrule && rrule_parse(rrule, start, flags, sizeof(flags), &count) < 0)
		return cmd_fail(2, "Undefined iCalendar syntax: %s (qpool takes FREQ=DAILY or FREQ=WEEKLY, COUNT=N,"
				" INTERVAL=1, and a weekly BYDAY of the start's own day)", rrule);
	if (hosts) {
		size_t at = strlen(flags);

		snprintf(flags + at, sizeof(flags) - at, "%sMAINT", at ? "," : "");
	} else if (!select) {
		return cmd_fail(2, "-l select=N is required (or --hosts for a maintenance reservation)");
	}
	if (running) {
		size_t at = strlen(flags);

		if (strcmp(running, "ignore") && strcmp(running, "requeue") && strcmp(running, "refuse"))
			return cmd_fail(2, "--running %s: refuse, ignore or requeue", running);
		if (strcmp(running, "refuse"))
			snprintf(flags + at, sizeof(flags) - at, "%s%s", at ? "," : "",
				 !strcmp(running, "ignore") ? "IGNORE_JOBS" : "REQUEUE");
	}
	req = json_pack("{s:s, s:s, s:I, s:I, s:s}", "op", "resv", "action", "create", "start", (json_int_t)start,
			"end", (json_int_t)end, "flags", flags);
	if (!req)
		return cmd_fail(1, "out of memory");
	if (hosts)
		json_object_set_new(req, "nodes", json_string(hosts));
	if (select) {
		char *e;
		long long n = strtoll(select, &e, 10);

		if (n <= 0 || (*e && *e != ':')) {
			json_decref(req);
			return cmd_fail(2, "-l select=%s: N[:ncpus=C] with N a number of nodes", select);
		}
		json_object_set_new(req, "node_cnt", json_integer(n));
	}
	if (users[0])
		json_object_set_new(req, "users", json_string(users));
	if (groups)
		json_object_set_new(req, "groups", json_string(groups));
	if (name)
		json_object_set_new(req, "name", json_string(name));
	if (count > 0)
		json_object_set_new(req, "count", json_integer(count));
	if (client_open(conf, &cl, &err) < 0) {
		json_decref(req);
		return cmd_fail(1, "%s", err.text);
	}
	r = client_call(cl, req, &reply, &err);
	client_close(cl);
	if (r < 0) {
		json_decref(reply);
		return cmd_fail(1, "%s", err.text);
	}
	printf("R%lld.%s CONFIRMED\n", wire_int(json_object_get(reply, "reservation"), "id", 0),
	       wire_str(reply, "server") ? wire_str(reply, "server") : "server");
	json_decref(reply);
	return fflush(stdout) != 0 ? cmd_fail(1, "cannot write: %s", strerror(errno)) : 0;
}
