/* SPDX-License-Identifier: MIT */
/* Slurm's reservation words and layouts over the resv op (slurmresv.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "slurmfmt.h"
#include "slurmresv.h"
#include "slurmtext.h"
#include "wire.h"

json_t *slurmresv_request(const char *action, int n, char **args, time_t now, char *why, size_t len)
{
	json_t *req = json_pack("{s:s, s:s}", "op", "resv", "action", action);

	errno = ENOMEM;
	if (!req)
		return NULL;
	for (int k = 0; k < n; k++) {
		char *eq = strchr(args[k], '=');
		const char *v = eq ? eq + 1 : "";
		size_t klen = eq ? (size_t)(eq - args[k]) : strlen(args[k]);
		time_t when;
		int64_t secs;
		char *end;
		long long cnt;

#define KEY(name) (klen == strlen(name) && strncasecmp(args[k], name, klen) == 0)
		if (!eq) {
			snprintf(why, len, "Invalid input: %s", args[k]);
			goto bad;
		}
		if (KEY("ReservationName") || KEY("Reservation")) {
			json_object_set_new(req, "name", json_string(v));
		} else if (KEY("StartTime") || KEY("EndTime")) {
			/* now+N is seconds, as Slurm takes it here too. */
			if (slurm_when_parse(v, now, false, &when) < 0) {
				snprintf(why, len, "Invalid time specification: %s=%s", KEY("StartTime") ? "StartTime" : "EndTime", v);
				goto bad;
			}
			json_object_set_new(req, KEY("StartTime") ? "start" : "end", json_integer((json_int_t)when));
		} else if (KEY("Duration")) {
			if (slurm_time_parse(v, &secs) < 0 || secs <= 0) {
				snprintf(why, len, "Invalid time specification: Duration=%s", v);
				goto bad;
			}
			json_object_set_new(req, "duration", json_integer(secs));
		} else if (KEY("Nodes")) {
			json_object_set_new(req, "nodes", json_string(v));
		} else if (KEY("NodeCnt")) {
			cnt = strtoll(v, &end, 10);
			if (!*v || *end || cnt <= 0 || cnt > 100000) {
				snprintf(why, len, "Invalid node count specified: %s", v);
				goto bad;
			}
			json_object_set_new(req, "node_cnt", json_integer(cnt));
		} else if (KEY("Users")) {
			json_object_set_new(req, "users", json_string(v));
		} else if (KEY("Groups")) {
			json_object_set_new(req, "groups", json_string(v));
		} else if (KEY("Accounts")) {
			json_object_set_new(req, "accounts", json_string(v));
		} else if (KEY("Flags")) {
			json_object_set_new(req, "flags", json_string(v));
		} else if (KEY("PartitionName")) {
			/* One pool: any partition's nodes are the pool's. */
		} else {
			snprintf(why, len, "Invalid input: %s", args[k]);
			goto bad;
		}
#undef KEY
	}
	return req;
bad:
	json_decref(req);
	errno = EINVAL;
	return NULL;
}

static void iso(time_t t, char *buf, size_t len)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

static const char *nn(const char *s)
{
	return s && *s ? s : "(null)";
}

void slurmresv_show(const json_t *r, bool oneline)
{
	long long start = wire_int(r, "start", 0), end = wire_int(r, "end", 0), count = wire_int(r, "count", -1);
	char s[32], e[32], d[32];
	const char *brk = oneline ? " " : "\n   ";

	iso((time_t)start, s, sizeof(s));
	iso((time_t)end, e, sizeof(e));
	slurmfmt_duration(d, sizeof(d), end - start);
	printf("ReservationName=%s StartTime=%s EndTime=%s Duration=%s%s", nn(wire_str(r, "name")), s, e, d, brk);
	printf("Nodes=%s NodeCnt=%lld Features=(null) PartitionName=(null) Flags=%s%s", nn(wire_str(r, "nodes")),
	       wire_int(r, "node_cnt", 0), wire_str(r, "flags") && *wire_str(r, "flags") ? wire_str(r, "flags") : "(null)",
	       brk);
	printf("Users=%s Groups=%s Accounts=%s Licenses=(null) State=%s BurstBuffer=(null) Watts=n/a", nn(wire_str(r, "users")),
	       nn(wire_str(r, "groups")), nn(wire_str(r, "accounts")), nn(wire_str(r, "state")));
	if (count > 0)
		printf("%sOccurrences=%lld", brk, count);
	printf("\n\n");
}

void slurmresv_sinfo_head(void)
{
	printf("%-14s %9s %19s %19s %11s  %s\n", "RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST");
}

void slurmresv_sinfo_line(const json_t *r)
{
	long long start = wire_int(r, "start", 0), end = wire_int(r, "end", 0);
	char s[32], e[32], d[32];

	iso((time_t)start, s, sizeof(s));
	iso((time_t)end, e, sizeof(e));
	slurmfmt_duration(d, sizeof(d), end - start);
	printf("%-14s %9s %19s %19s %11s  %s\n", nn(wire_str(r, "name")), nn(wire_str(r, "state")), s, e, d,
	       nn(wire_str(r, "nodes")));
}
