/* SPDX-License-Identifier: MIT */
/* qselect: the ids of the jobs that meet every criterion, one per line. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "jobid.h"
#include "parse.h"
#include "pbsfmt.h"
#include "timeutil.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"usage: qselect [-f FILE] [-u USER[,USER...]] [-q QUEUE] [-s STATES] [-N NAME]\n"
	"               [-l RES.OP.VALUE[,...]] [-x] [-T | -J]\n"
	"Prints the ids (12.server) of the jobs that meet every criterion, one per line.\n"
	"  -u USERS      owned by one of these users\n"
	"  -q QUEUE      in this queue (QUEUE@server is taken too)\n"
	"  -s STATES     in one of these states: letters of QHRWEF\n"
	"  -N NAME       with this name\n"
	"  -l LIST       resource comparisons: ncpus, mem or walltime, then .eq. .ne.\n"
	"                .lt. .le. .gt. or .ge., then a value: ncpus.gt.2,walltime.le.1:00:00\n"
	"  -x            finished jobs too\n"
	"  -T            jobs and array subjobs (12[3].server), not the arrays themselves\n"
	"  -J            job arrays only (12[].server)\n"
	"  -f FILE       configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"  --help        show this help\n";

#define MAX_CONDS 16

struct cond {
	const char *res;   /* "ncpus", "mem", "walltime": the job object's member */
	char op[3];
	long long value;
};

static struct cond conds[MAX_CONDS];
static size_t n_conds;

/* Parses "ncpus.gt.2,mem.le.4G" into conds. 0 or a usage error printed. */
static int conds_parse(char *list)
{
	static const char *const ops[] = { "eq", "ne", "lt", "le", "gt", "ge" };
	char *save = NULL;

	for (char *c = strtok_r(list, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
		char *dot1 = strchr(c, '.'), *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
		struct cond *k = &conds[n_conds];
		uint64_t v;
		size_t i;

		if (n_conds == MAX_CONDS)
			return cmd_fail(2, "-l: at most %d comparisons", MAX_CONDS);
		if (!dot2 || dot2 - dot1 != 3)
			return cmd_fail(2, "-l %s: not RESOURCE.OP.VALUE (e.g. ncpus.gt.2)", c);
		*dot1 = '\0';
		memcpy(k->op, dot1 + 1, 2);
		k->op[2] = '\0';
		for (i = 0; i < 6 && strcmp(ops[i], k->op) != 0; i++)
			;
		if (i == 6)
			return cmd_fail(2, "-l: %s is not one of eq ne lt le gt ge", k->op);
		if (strcmp(c, "ncpus") == 0) {
			char *end;

			k->res = "ncpus";
			k->value = strtoll(dot2 + 1, &end, 10);
			if (!dot2[1] || *end)
				return cmd_fail(2, "-l ncpus: %s is not a number", dot2 + 1);
		} else if (strcmp(c, "mem") == 0) {
			k->res = "mem";
			if (size_parse(dot2 + 1, &v) < 0)
				return cmd_fail(2, "-l mem: %s is not a size (e.g. 512M, 8G)", dot2 + 1);
			k->value = (long long)v;
		} else if (strcmp(c, "walltime") == 0) {
			k->res = "walltime";
			if (duration_parse(dot2 + 1, &v) < 0)
				return cmd_fail(2, "-l walltime: %s is not a time (e.g. 01:30:00)", dot2 + 1);
			k->value = (long long)v;
		} else {
			return cmd_fail(2, "-l: resource %s is not ncpus, mem or walltime", c);
		}
		n_conds++;
	}
	return 0;
}

static bool cond_holds(const struct cond *k, const json_t *job)
{
	long long v = wire_int(job, k->res, 0);

	switch (k->op[0] == 'e' ? 0 : k->op[0] == 'n' ? 1 : k->op[0] == 'l' ? 2 : 3) {
	case 0: return v == k->value;
	case 1: return v != k->value;
	case 2: return k->op[1] == 't' ? v < k->value : v <= k->value;
	default: return k->op[1] == 't' ? v > k->value : v >= k->value;
	}
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p;) {
		const char *end = strchrnul(p, ',');

		if ((size_t)(end - p) == n && strncmp(p, name, n) == 0)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL, *users = NULL, *states = NULL, *name = NULL;
	char *queue = NULL, server[256];
	struct client *cl = NULL;
	json_t *reply = NULL, *jobs, *job;
	bool finished = false, subjobs = false, arrays = false;
	struct error err;
	size_t i;
	int c;

	if (version_requested(argc, argv))
		return version_print("qselect");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:u:q:s:N:l:xTJ", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': conf = optarg; break;
		case 'u': users = optarg; break;
		case 'q':
			queue = optarg;
			if (strchr(queue, '@'))
				*strchr(queue, '@') = '\0';
			break;
		case 's':
			states = optarg;
			if (!*states || strspn(states, "QHRWEFTSBUX") != strlen(states))
				return cmd_fail(2, "-s %s: states are letters of QHRWEF", states);
			break;
		case 'N': name = optarg; break;
		case 'l':
			if (conds_parse(optarg))
				return 2;
			break;
		case 'x': finished = true; break;
		case 'T': subjobs = true; break;
		case 'J': arrays = true; break;
		case 'H':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_fail(2, "option -%c needs an argument (see qselect --help)", optopt);
		default:
			if (optopt)
				return cmd_fail(2, "unknown option -%c (see qselect --help)", optopt);
			return cmd_fail(2, "unknown option %s (see qselect --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_fail(2, "unexpected argument %s (see qselect --help)", argv[optind]);
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	/* F asked for means finished jobs are wanted. */
	if (states && strchr(states, 'F'))
		finished = true;
	if (client_call_pages(cl, json_pack("{s:s, s:b, s:b, s:b}", "op", "stat", "finished", finished,
					    "full", 0, "subjobs", subjobs), "jobs", &reply, &err) < 0) {
		client_close(cl);
		return cmd_fail(1, "%s", err.text);
	}
	/* The pool's name, as the reply gave it. */
	client_server_name(cl, server, sizeof(server));
	jobs = json_object_get(reply, "jobs");
	json_array_foreach(jobs, i, job) {
		const char *owner = wire_str(job, "owner"), *q = wire_str(job, "queue");
		const char *n = wire_str(job, "name");
		char s = pbsfmt_job_state(job, time_wall_ns());
		bool ok = true;

		if (users && (!owner || !in_list(users, owner)))
			continue;
		if (queue && (!q || strcmp(q, queue) != 0))
			continue;
		if (states && !strchr(states, s))
			continue;
		if (name && (!n || strcmp(n, name) != 0))
			continue;
		for (size_t k = 0; k < n_conds && ok; k++)
			ok = cond_holds(&conds[k], job);
		/* -T: jobs and subjobs, not arrays; -J: arrays only. */
		if (subjobs && json_object_get(job, "array"))
			continue;
		if (arrays && !json_object_get(job, "array"))
			continue;
		if (ok && (subjobs || arrays)) {
			char id[300];

			pbsfmt_job_id(job, server, id, sizeof(id));
			printf("%s\n", id);
		} else if (ok) {
			printf("%lld.%s\n", wire_int(job, "jobid", 0), server);
		}
	}
	json_decref(reply);
	client_close(cl);
	return fflush(stdout) == 0 ? 0 : cmd_fail(1, "cannot write");
}
