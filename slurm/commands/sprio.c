/* SPDX-License-Identifier: MIT */
/* sprio: the waiting jobs' priority and its factors, as Slurm prints them
 * (docs/FAIRSHARE.md). qpool orders a queue by its order (round robin, or
 * fair share); PRIORITY is that order as a number, higher first (the
 * waiting jobs of a queue counted down from its first), and FAIRSHARE
 * the job's user's fair-share factor, 2^-(EffectvUsage/NormShares)
 * scaled to 0..1000000 as Slurm's factors are, whatever the queue's order;
 * QOS the job's QOS's priority (docs/QOS.md), which orders ahead of both. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "slurmsel.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"Usage: sprio [-h] [-n] [-j JOBID[,JOBID...]] [-u USER[,USER...]] [-p PARTITION[,...]]\n"
	"The waiting jobs' place in their queue's order as a priority (higher first) and\n"
	"their user's fair-share factor.\n"
	"  -h, --noheader     no header line\n"
	"  -j, --jobs=LIST    these jobs\n"
	"  -u, --user=LIST    these users' jobs\n"
	"  -p, --partition=LIST  these queues' jobs\n"
	"  -n, --norm         factors as fractions (0-1)\n"
	"      --help, --usage  show this help\n";

/* uid's fair-share factor (the usage op's; 1: no use counted). */
static double factor(const json_t *users, long long uid)
{
	size_t i;
	json_t *u;

	json_array_foreach(users, i, u) {
		if (wire_int(u, "uid", -1) == uid)
			return json_real_value(json_object_get(u, "factor"));
	}
	return 1;
}

int main(int argc, char **argv)
{
	enum { OPT_HELP = 256 };
	static const struct option longopts[] = {
		{ "noheader", no_argument, NULL, 'h' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "user", required_argument, NULL, 'u' },
		{ "partition", required_argument, NULL, 'p' },
		{ "norm", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "usage", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *jobs = NULL, *users_arg = NULL, *parts = NULL;
	bool noheader = false, norm = false;
	json_t *usage = NULL, *queues = NULL, *q, *users;
	struct client *cl;
	struct error err;
	size_t i;
	int c, status = 0;

	if (version_requested(argc, argv))
		return version_print("sprio");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hj:u:p:n", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': noheader = true; break;
		case 'j': jobs = optarg; break;
		case 'u': users_arg = optarg; break;
		case 'p': parts = optarg; break;
		case 'n': norm = true; break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:
			return cmd_getopt_fail(c, argv);
		}
	}
	if (optind < argc)
		return cmd_fail(1, "error: Unknown argument: %s", argv[optind]);
	if (client_open(NULL, &cl, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	if (client_call(cl, json_pack("{s:s}", "op", "usage"), &usage, &err) < 0 ||
	    client_call_pages(cl, json_pack("{s:s}", "op", "queues"), "queues", &queues, &err) < 0) {
		client_close(cl);
		json_decref(usage);
		return cmd_fail(1, "error: %s", err.text);
	}
	users = json_object_get(usage, "users");
	if (!noheader)
		printf("%10s %-9s %-8s %10s %10s %10s\n", "JOBID", "PARTITION", "USER", "PRIORITY", "FAIRSHARE", "QOS");
	json_array_foreach(json_object_get(queues, "queues"), i, q) {
		const char *qname = wire_str(q, "name");
		json_t *order = NULL, *e;
		size_t k, n;

		if (!qname || !slurmsel_list_wants(parts, qname))
			continue;
		if (client_call_pages(cl, json_pack("{s:s, s:s}", "op", "order", "queue", qname), "order", &order,
				      &err) < 0) {
			status = cmd_fail(1, "error: %s", err.text);
			continue;
		}
		n = json_array_size(json_object_get(order, "order"));
		json_array_foreach(json_object_get(order, "order"), k, e) {
			char id[24], fs[24], prio[24], qos[24];
			double f = factor(users, wire_int(e, "uid", -1));

			snprintf(id, sizeof(id), "%lld", wire_int(e, "jobid", 0));
			if (!slurmsel_list_wants(jobs, id) || !slurmsel_list_wants(users_arg, wire_str(e, "owner")) ||
			    !strcmp(wire_str(e, "hold") ? wire_str(e, "hold") : "", "held"))
				continue;
			if (norm) {
				snprintf(prio, sizeof(prio), "%.7f", (double)(n - k) / (double)n);
				snprintf(fs, sizeof(fs), "%.7f", f);
			} else {
				snprintf(prio, sizeof(prio), "%zu", n - k);
				snprintf(fs, sizeof(fs), "%.0f", f * 1000000);
			}
			snprintf(qos, sizeof(qos), "%lld", wire_int(e, "qos_priority", 0));
			printf("%10s %-9s %-8s %10s %10s %10s\n", id, qname, wire_str(e, "owner") ? wire_str(e, "owner") : "?",
			       prio, fs, qos);
		}
		json_decref(order);
	}
	client_close(cl);
	json_decref(usage);
	json_decref(queues);
	return fflush(stdout) == 0 ? status : cmd_fail(1, "cannot write");
}
