/* SPDX-License-Identifier: MIT */
/* sshare: each user's share and decayed use as fair share counts them
 * (docs/FAIRSHARE.md), in Slurm's columns: RawShares (the user's share of
 * the pool in millionths), NormShares (that share, a fraction), RawUsage
 * (CPU-seconds, decayed), EffectvUsage (its fraction of all use) and
 * FairShare (2^-(EffectvUsage/NormShares), Slurm's classic factor: 1
 * unused, 0.5 used as much as its share, toward 0 above). */
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
	"Usage: sshare [-a] [-l] [-n] [-p|-P] [-u USER[,USER...]] [-A ACCOUNT[,ACCOUNT...]]\n"
	"Each user's share and decayed use, as fair share orders queues of order = fairshare.\n"
	"  -a, --all          every user (the default: only you, root: every user)\n"
	"  -u, --users=LIST   these users\n"
	"  -A, --accounts=LIST  users whose default account is one of these\n"
	"  -l, --long         also the half-life's decayed use and the running weight\n"
	"  -n, --noheader     no header line\n"
	"  -p, --parsable     fields ended by '|'\n"
	"  -P, --parsable2    fields separated by '|'\n"
	"      --help, --usage  show this help\n";

static bool arg_parsable, arg_parsable2;

static void row(const char *const *v, int n, const int *width)
{
	for (int i = 0; i < n; i++) {
		if (i && arg_parsable2)
			fputc('|', stdout);
		else if (i && !arg_parsable)
			fputc(' ', stdout);
		if (arg_parsable || arg_parsable2)
			fputs(v[i], stdout);
		else
			printf(i < 2 ? "%-*s" : "%*s", width[i], v[i]);
		if (arg_parsable)
			fputc('|', stdout);
	}
	fputc('\n', stdout);
}

int main(int argc, char **argv)
{
	enum { OPT_HELP = 256 };
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "users", required_argument, NULL, 'u' },
		{ "accounts", required_argument, NULL, 'A' },
		{ "long", no_argument, NULL, 'l' },
		{ "noheader", no_argument, NULL, 'n' },
		{ "parsable", no_argument, NULL, 'p' },
		{ "parsable2", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "usage", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const head[] = { "Account", "User", "RawShares", "NormShares", "RawUsage",
					    "EffectvUsage", "FairShare", "RunWeight" };
	static const int width[] = { 20, 10, 10, 11, 11, 13, 10, 10 };
	const char *users = NULL, *accounts = NULL;
	bool only_me;
	bool all = false, noheader = false, lng = false;
	struct client *cl;
	struct error err;
	json_t *reply = NULL, *u;
	size_t i;
	int c, ncol;

	if (version_requested(argc, argv))
		return version_print("sshare");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":au:A:lnpP", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': all = true; break;
		case 'u': users = optarg; break;
		case 'A': accounts = optarg; break;
		case 'l': lng = true; break;
		case 'n': noheader = true; break;
		case 'p': arg_parsable = true; break;
		case 'P': arg_parsable2 = true; break;
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
	if (client_call(cl, json_pack("{s:s}", "op", "usage"), &reply, &err) < 0) {
		client_close(cl);
		return cmd_fail(1, "error: %s", err.text);
	}
	client_close(cl);
	/* Slurm's sshare shows a user its own line unless -a (root: all). */
	only_me = !all && !users && getuid() != 0;
	ncol = lng ? 8 : 7;
	if (!noheader)
		row(head, ncol, width);
	json_array_foreach(json_object_get(reply, "users"), i, u) {
		const char *name = wire_str(u, "user"), *acct = wire_str(u, "account");
		double usage = json_real_value(json_object_get(u, "usage"));
		double share = json_real_value(json_object_get(u, "share"));
		char raw[24], norm[24], use[24], effv[24], fs[24], run[24];
		const char *v[8] = { acct ? acct : "", name ? name : "?", raw, norm, use, effv, fs, run };

		if ((only_me && wire_int(u, "uid", -1) != (long long)getuid()) || !slurmsel_list_wants(users, name) ||
		    !slurmsel_list_wants(accounts, acct))
			continue;
		snprintf(raw, sizeof(raw), "%.0f", share * 1e6);
		snprintf(norm, sizeof(norm), "%.6f", share);
		snprintf(use, sizeof(use), "%.0f", usage);
		snprintf(effv, sizeof(effv), "%.6f", json_real_value(json_object_get(u, "effective")));
		snprintf(fs, sizeof(fs), "%.6f", json_real_value(json_object_get(u, "factor")));
		snprintf(run, sizeof(run), "%.0f", json_real_value(json_object_get(u, "running")));
		row(v, ncol, width);
	}
	json_decref(reply);
	return fflush(stdout) == 0 ? 0 : cmd_fail(1, "cannot write");
}
