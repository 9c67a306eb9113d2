/* SPDX-License-Identifier: MIT */
/* sacctmgr: the read-only part of Slurm's that portals ask (Open OnDemand's
 * "show users withassoc format=account,qos where user=U"), answered with
 * what qpool truthfully has: no accounts database, so no associations;
 * one QOS, "normal", as squeue and sacct print. Changes are refused. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "version.h"

static const char usage_text[] =
	"Usage: sacctmgr [-n] [-p|-P] show|list ENTITY [withassoc] [format=F,...] [where] [KEY=VALUE...]\n"
	"Answers Slurm's accounting questions from what qpool has: no accounts, so users\n"
	"and associations list no rows; qos lists \"normal\"; clusters lists the pool.\n"
	"  -n, --noheader     no header line\n"
	"  -p, --parsable     fields ended by '|'\n"
	"  -P, --parsable2    fields separated by '|'\n"
	"      --help, --usage  show this help\n";

static bool arg_noheader, arg_parsable, arg_parsable2;

/* Whether word names entity (Slurm takes any case and the plural). */
static bool entity_is(const char *word, const char *entity)
{
	size_t n = strlen(entity);

	return strncasecmp(word, entity, n) == 0 && (!word[n] || strcasecmp(word + n, "s") == 0);
}

/* Prints the header and the rows of one entity: every column blank but
 * Name (qos, cluster) where the entity has a row. */
static void table_put(const char *format, const char *name_value)
{
	char fields[1024];
	int rows = name_value ? 2 : 1;

	snprintf(fields, sizeof(fields), "%s", format);
	for (int r = arg_noheader ? 1 : 0; r < rows; r++) {
		char *save = NULL, *copy = strdup(fields);
		bool first = true;

		if (!copy)
			return;
		for (char *f = strtok_r(copy, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
			const char *v = r == 0 ? f : strcasecmp(f, "name") == 0 || strcasecmp(f, "cluster") == 0 ? name_value : "";

			if (!first && arg_parsable2)
				fputc('|', stdout);
			else if (!first && !arg_parsable)
				fputc(' ', stdout);
			printf(arg_parsable || arg_parsable2 ? "%s" : "%-10s", v);
			if (arg_parsable)
				fputc('|', stdout);
			first = false;
		}
		fputc('\n', stdout);
		free(copy);
	}
}

int main(int argc, char **argv)
{
	enum { OPT_HELP = 256 };
	static const struct option longopts[] = {
		{ "noheader", no_argument, NULL, 'n' },
		{ "parsable", no_argument, NULL, 'p' },
		{ "parsable2", no_argument, NULL, 'P' },
		{ "immediate", no_argument, NULL, 'i' },
		{ "quiet", no_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "usage", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = NULL, *cmd, *entity;
	int c;

	if (version_requested(argc, argv))
		return version_print("sacctmgr");
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:npPiQ", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': arg_noheader = true; break;
		case 'p': arg_parsable = true; break;
		case 'P': arg_parsable2 = true; break;
		case 'i': case 'Q': break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:   /* '?' or ':' */
			return cmd_getopt_fail(c, argv);
		}
	}
	if (optind + 2 > argc)
		return cmd_fail(1, "error: too few arguments: sacctmgr show ENTITY ...");
	cmd = argv[optind++];
	entity = argv[optind++];
	if (strcasecmp(cmd, "show") != 0 && strcasecmp(cmd, "list") != 0)
		return cmd_fail(1, "error: %s: qpool keeps no accounts database; only show and list are answered", cmd);
	for (int i = optind; i < argc; i++) {
		if (strncasecmp(argv[i], "format=", 7) == 0)
			format = argv[i] + 7;
		else if (strcasecmp(argv[i], "withassoc") != 0 && strcasecmp(argv[i], "where") != 0 &&
			 !strchr(argv[i], '='))
			return cmd_fail(1, "error: Unknown condition: %s", argv[i]);
	}
	if (entity_is(entity, "user") || entity_is(entity, "association") || entity_is(entity, "assoc") ||
	    entity_is(entity, "account")) {
		table_put(format ? format : entity_is(entity, "user") ? "User,Def Acct,Admin" : "Cluster,Account,User,QOS",
			  NULL);
	} else if (entity_is(entity, "qos")) {
		table_put(format ? format : "Name,Priority,Description", "normal");
	} else if (entity_is(entity, "cluster")) {
		table_put(format ? format : "Cluster,ControlHost,RPC", "qpool");
	} else {
		return cmd_fail(1, "error: Unknown entity: %s", entity);
	}
	return fflush(stdout) == 0 ? 0 : cmd_fail(1, "cannot write");
}
