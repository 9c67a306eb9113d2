/* SPDX-License-Identifier: MIT */
/* qmgr: the admin's command: list queues and nodes, enable/disable and
 * start/stop queues, drain/resume/delete nodes, reload qpool.conf; and PBS's
 * qmgr -c "set queue X enabled = False" forms for what qpool's queues have. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "cmd.h"
#include "jobid.h"
#include "jobfmt.h"
#include "pbsfmt.h"
#include "pbsqmgr.h"
#include "wire.h"
#include "version.h"

static const char usage_text[] =
	"usage: qmgr [-f FILE] COMMAND [ARGS]\n"
	"       qmgr [-f FILE] -c \"DIRECTIVE[; DIRECTIVE...]\"\n"
	"Changes apply at once and survive a qpoold restart (root only, except listings).\n"
	"  queues                   the queues, their state and limits\n"
	"  nodes                    the nodes and their state\n"
	"  enable QUEUE             accept submissions\n"
	"  disable QUEUE [REASON]   refuse submissions; qsub shows REASON\n"
	"  start QUEUE              dispatch its jobs\n"
	"  stop QUEUE [REASON]      dispatch nothing more (running jobs go on)\n"
	"  drain NODE [REASON]      running jobs finish, nothing new starts there\n"
	"  resume NODE              take new jobs again\n"
	"  delete NODE              forget a node for good (down, no job on it)\n"
	"  reload                   re-read qpool.conf (an invalid file is refused)\n"
	"  -c DIRECTIVES            PBS forms: list|print server|queue|node|hook [NAME],\n"
	"                           set queue Q enabled|started = True|False,\n"
	"                           set node N state = offline|free, set node N comment = TEXT,\n"
	"                           delete node N,\n"
	"                           create|delete|list account [NAME], set account NAME\n"
	"                           shares|description|parent|add_user|remove_user|default_user = V\n"
	"  -f FILE                  configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n";

static int list(struct client *cl, const char *what)
{
	json_t *reply;
	struct error err;
	int r;

	if (client_call_pages(cl, json_pack("{s:s}", "op", what), what, &reply, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (strcmp(what, "queues") == 0) {
		size_t i;
		json_t *q;

		r = jobfmt_queues_table(stdout, json_object_get(reply, "queues"));
		json_array_foreach(json_object_get(reply, "queues"), i, q)
			if (wire_str(q, "reason") && *wire_str(q, "reason"))
				printf("queue %s: %s\n", wire_str(q, "name"), wire_str(q, "reason"));
	} else {
		size_t i;
		json_t *n;

		r = jobfmt_nodes_table(stdout, json_object_get(reply, "nodes"));
		json_array_foreach(json_object_get(reply, "nodes"), i, n)
			if (wire_str(n, "reason"))
				printf("node %s drained: %s\n", wire_str(n, "name"), wire_str(n, "reason"));
	}
	json_decref(reply);
	return r < 0 ? cmd_fail(1, "out of memory") : 0;
}

/* A named object's trailing "@server" is this server. */
static void name_strip_server(char *name)
{
	char *at = strchr(name, '@');

	if (at)
		*at = '\0';
}

static int admin_send(struct client *cl, const char *action, const char *target, const char *reason)
{
	json_t *req = json_pack("{s:s, s:s, s:s}", "op", "admin", "action", action, "target", target);
	json_t *reply = NULL;
	struct error err;

	if (req && reason)
		json_object_set_new(req, "reason", json_string(reason));
	if (client_call(cl, req, &reply, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	json_decref(reply);
	return 0;
}

static int bool_value(const char *s)
{
	if (!strcasecmp(s, "true") || !strcasecmp(s, "t") || !strcasecmp(s, "y") || !strcmp(s, "1"))
		return 1;
	if (!strcasecmp(s, "false") || !strcasecmp(s, "f") || !strcasecmp(s, "n") || !strcmp(s, "0"))
		return 0;
	return -1;
}

/* Where a PBS queue attribute lives in qpool.conf, for the refusal. */
static const char *conf_key(const char *attr)
{
	static const char *const map[][2] = {
		{ "resources_max.ncpus", "ncpus_max" }, { "resources_max.mem", "mem_max" },
		{ "resources_max.walltime", "walltime_max" }, { "resources_default.ncpus", "ncpus_default" },
		{ "resources_default.mem", "mem_default" }, { "resources_default.walltime", "walltime_default" },
		{ "Priority", "priority" }, { "priority", "priority" }, { "max_running", "max_running" },
		{ "max_user_run", "max_running_per_user" }, { "resources_max.ngpus", "max_ngpus" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(attr, map[i][0]) == 0)
			return map[i][1];
	return NULL;
}

/* set/unset: what qmgr's admin ops can change; the rest is qpool.conf's. */
static int pbs_set(struct client *cl, const struct pbsqmgr_cmd *d)
{
	int b = bool_value(d->value);

	if (d->object == PBSQMGR_QUEUE && d->name[0] && d->verb == PBSQMGR_SET &&
	    (strcmp(d->attr, "enabled") == 0 || strcmp(d->attr, "started") == 0)) {
		if (b < 0)
			return cmd_fail(2, "set queue %s %s = %s: True or False", d->name, d->attr, d->value);
		return admin_send(cl, d->attr[0] == 'e' ? (b ? "enable" : "disable") : (b ? "start" : "stop"),
				  d->name, NULL);
	}
	if (d->object == PBSQMGR_NODE && d->name[0] && strcmp(d->attr, "state") == 0) {
		if (d->verb == PBSQMGR_UNSET || strcmp(d->value, "free") == 0)
			return admin_send(cl, "resume", d->name, NULL);
		if (strcmp(d->value, "offline") == 0)
			return admin_send(cl, "drain", d->name, NULL);
		return cmd_fail(2, "set node %s state = %s: offline or free", d->name, d->value);
	}
	if (d->object == PBSQMGR_NODE && d->name[0] && d->verb == PBSQMGR_SET && strcmp(d->attr, "comment") == 0)
		return admin_send(cl, "drain", d->name, d->value);
	if (d->object == PBSQMGR_QUEUE && conf_key(d->attr))
		return cmd_fail(1, "%s queue %s %s: queue limits live in qpool.conf ([queue %s] %s); edit it, then qmgr reload",
				d->verb == PBSQMGR_SET ? "set" : "unset", d->name, d->attr, d->name, conf_key(d->attr));
	return cmd_fail(1, "%s %s %s: qpool has no such setting (queues are defined in qpool.conf; see qmgr --help)",
			d->verb == PBSQMGR_SET ? "set" : "unset",
			d->object == PBSQMGR_QUEUE ? "queue" : d->object == PBSQMGR_NODE ? "node" : "server", d->attr);
}

/* print: the directives that would recreate a queue's settings. */
static void queue_print(const json_t *q)
{
	const char *name = wire_str(q, "name") ? wire_str(q, "name") : "?";
	json_t *a = pbsfmt_queue_attrs(q), *v;
	const char *key;

	printf("#\n# Create and define queue %s\n#\ncreate queue %s\n", name, name);
	json_object_foreach(a, key, v) {
		if (!strcmp(key, "total_jobs") || !strcmp(key, "state_count") || !strncmp(key, "qpool_", 6) ||
		    !strcmp(key, "comment"))
			continue;
		printf("set queue %s %s = ", name, key);
		if (json_is_integer(v))
			printf("%lld\n", (long long)json_integer_value(v));
		else if (json_is_boolean(v))
			printf("%s\n", json_is_true(v) ? "True" : "False");
		else
			printf("%s\n", json_string_value(v));
	}
	json_decref(a);
}

/* list hook [NAME]: the server's hooks, with their last outcome. */
static int hooks_show(struct client *cl, const struct pbsqmgr_cmd *d)
{
	json_t *reply = NULL, *e;
	struct error err;
	bool found = false;
	size_t i;

	if (client_call(cl, json_pack("{s:s}", "op", "hooks"), &reply, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	json_array_foreach(json_object_get(reply, "hooks"), i, e) {
		const char *name = wire_str(e, "name") ? wire_str(e, "name") : "?";

		if (d->name[0] && strcmp(d->name, name) != 0)
			continue;
		found = true;
		printf("Hook %s\n    type = site\n    enabled = %s\n    path = %s\n    alarm = %lld\n"
		       "    last_time = %s\n    last_elapsed_ms = %lld\n    last_result = %s\n"
		       "    runs = %lld\n    failures = %lld\n\n", name,
		       strcmp(wire_str(e, "path") ? wire_str(e, "path") : "(none)", "(none)") ? "true" : "false",
		       wire_str(e, "path"), wire_int(e, "timeout", 0),
		       wire_str(e, "last_time") && *wire_str(e, "last_time") ? wire_str(e, "last_time") : "-",
		       wire_int(e, "last_elapsed_ms", 0), wire_str(e, "last_result"), wire_int(e, "runs", 0),
		       wire_int(e, "failures", 0));
	}
	json_decref(reply);
	if (d->name[0] && !found)
		return cmd_fail(1, "unknown hook '%s'", d->name);
	return 0;
}

static int pbs_show(struct client *cl, const struct pbsqmgr_cmd *d)
{
	const char *op = d->object == PBSQMGR_NODE ? "nodes" : "queues";
	json_t *reply = NULL, *objs, *e;
	char server[256];
	bool found = false;
	struct error err;
	size_t i;

	if (client_call_pages(cl, json_pack("{s:s}", "op", op), op, &reply, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	objs = json_object_get(reply, op);
	client_server_name(cl, server, sizeof(server));
	if (d->object == PBSQMGR_SERVER) {
		if (d->verb == PBSQMGR_LIST) {
			long long total = 0;

			json_array_foreach(objs, i, e) {
				total += wire_int(e, "queued", 0) + wire_int(e, "held", 0) + wire_int(e, "running", 0);
			}
			printf("Server %s\n    server_state = Active\n    server_host = %s\n    scheduling = True\n"
			       "    total_jobs = %lld\n", server, server, total);
			json_array_foreach(objs, i, e)
				if (wire_bool(e, "default", 0))
					printf("    default_queue = %s\n", wire_str(e, "name"));
			pbsfmt_server_ha(stdout, json_object_get(reply, "ha"), true);
			printf("    pbs_version = %s\n\n", PBSFMT_PBS_VERSION);
		} else {
			printf("#\n# Create queues and set their attributes.\n");
			json_array_foreach(objs, i, e) {
				queue_print(e);
			}
			printf("#\n# Set server attributes.\n#\nset server scheduling = True\n");
			json_array_foreach(objs, i, e)
				if (wire_bool(e, "default", 0))
					printf("set server default_queue = %s\n", wire_str(e, "name"));
		}
		json_decref(reply);
		return 0;
	}
	json_array_foreach(objs, i, e) {
		const char *name = wire_str(e, "name") ? wire_str(e, "name") : "?";

		if (d->name[0] && strcmp(d->name, name) != 0)
			continue;
		found = true;
		if (d->object == PBSQMGR_QUEUE && d->verb == PBSQMGR_PRINT) {
			queue_print(e);
		} else if (d->object == PBSQMGR_QUEUE) {
			json_t *a = pbsfmt_queue_attrs(e);

			printf("Queue %s\n", name);
			if (a)
				pbsfmt_attrs_put(stdout, a);
			json_decref(a);
			putchar('\n');
		} else {
			const char *st = wire_str(e, "state") ? wire_str(e, "state") : "down";

			printf("Node %s\n    Mom = %s\n    state = %s\n    pcpus = %lld\n"
			       "    resources_available.ncpus = %lld\n", name, name,
			       !strcmp(st, "drained") ? "offline" : !strcmp(st, "up") ? "free" : "down",
			       wire_int(e, "ncpus", 0), wire_int(e, "ncpus", 0));
			if (wire_str(e, "reason"))
				printf("    comment = %s\n", wire_str(e, "reason"));
			putchar('\n');
		}
	}
	json_decref(reply);
	if (d->name[0] && !found)
		return cmd_fail(1, "unknown %s '%s'", d->object == PBSQMGR_QUEUE ? "queue" : "node", d->name);
	return 0;
}

/* The accounts op (docs/ACCOUNTS.md) with req's members; 0 or 1. */
static int accounts_send(struct client *cl, json_t *req, json_t **ret_reply)
{
	json_t *reply = NULL;
	struct error err;

	if (!json_object_get(req, "op"))
		json_object_set_new(req, "op", json_string("accounts"));
	if (client_call(cl, req, &reply, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (ret_reply)
		*ret_reply = reply;
	else
		json_decref(reply);
	return 0;
}

/* list account [NAME]: each account as PBS prints an object. */
static const json_t *budget_find(const json_t *budgets, const char *account)
{
	size_t i;
	json_t *b;

	json_array_foreach(budgets, i, b) {
		if (!strcmp(wire_str(b, "kind"), "account") && !strcmp(wire_str(b, "name"), account))
			return b;
	}
	return NULL;
}

static int accounts_show(struct client *cl, const struct pbsqmgr_cmd *d)
{
	json_t *reply = NULL, *qos = NULL, *budgets, *a, *u;
	bool found = false;
	size_t i, k;

	if (accounts_send(cl, json_pack("{s:s}", "action", "list"), &reply))
		return 1;
	if (accounts_send(cl, json_pack("{s:s, s:s}", "op", "qos", "action", "list"), &qos)) {
		json_decref(reply);
		return 1;
	}
	budgets = json_object_get(qos, "budgets");
	json_array_foreach(json_object_get(reply, "accounts"), i, a) {
		const char *name = wire_str(a, "name"), *sep = "", *dsep = "";

		if (d->name[0] && strcmp(d->name, name) != 0)
			continue;
		found = true;
		printf("Account %s\n    shares = %lld\n    parent = %s\n", name, wire_int(a, "shares", 1),
		       wire_str(a, "parent") ? wire_str(a, "parent") : "root");
		if (wire_str(a, "description"))
			printf("    description = %s\n", wire_str(a, "description"));
		if (json_object_get(a, "grp_cpus"))
			printf("    max_cpus = %lld\n", wire_int(a, "grp_cpus", 0));
		if (json_object_get(a, "grp_gpus"))
			printf("    max_gpus = %lld\n", wire_int(a, "grp_gpus", 0));
		if (json_object_get(a, "grp_jobs"))
			printf("    max_running = %lld\n", wire_int(a, "grp_jobs", 0));
		{
			const json_t *b = budget_find(budgets, name);

			if (b && json_object_get(b, "cpu_mins"))
				printf("    cpu_minutes = %lld\n", wire_int(b, "cpu_mins", 0));
			if (b && json_object_get(b, "gpu_mins"))
				printf("    gpu_minutes = %lld\n", wire_int(b, "gpu_mins", 0));
		}
		printf("    users = ");
		json_array_foreach(json_object_get(a, "users"), k, u) {
			printf("%s%s", sep, wire_str(u, "user"));
			sep = ",";
		}
		printf("\n    default_users = ");
		json_array_foreach(json_object_get(a, "users"), k, u) {
			if (wire_bool(u, "default", 0)) {
				printf("%s%s", dsep, wire_str(u, "user"));
				dsep = ",";
			}
		}
		printf("\n\n");
	}
	json_decref(reply);
	json_decref(qos);
	if (d->name[0] && !found)
		return cmd_fail(1, "unknown account '%s'", d->name);
	return 0;
}

/* create/delete account NAME; set account NAME shares|description|
 * parent|add_user|remove_user|default_user = VALUE. */
static int accounts_change(struct client *cl, const struct pbsqmgr_cmd *d)
{
	char *end;

	if (!d->name[0])
		return cmd_fail(2, "account: which one?");
	if (d->verb == PBSQMGR_CREATE)
		return accounts_send(cl, json_pack("{s:s, s:s}", "action", "add", "name", d->name), NULL);
	if (d->verb == PBSQMGR_DELETE)
		return accounts_send(cl, json_pack("{s:s, s:s}", "action", "delete", "name", d->name), NULL);
	if (d->verb != PBSQMGR_SET)
		return cmd_fail(2, "unset account: set its attribute instead");
	if (!strcmp(d->attr, "shares")) {
		long long v = strtoll(d->value, &end, 10);

		if (!d->value[0] || *end)
			return cmd_fail(2, "set account %s shares = %s: a number", d->name, d->value);
		return accounts_send(cl, json_pack("{s:s, s:s, s:I}", "action", "modify", "name", d->name, "shares",
						   (json_int_t)v), NULL);
	}
	/* Limits (docs/LIMITS.md): -1 clears one. */
	if (!strcmp(d->attr, "max_cpus") || !strcmp(d->attr, "max_gpus") || !strcmp(d->attr, "max_running")) {
		long long v = strtoll(d->value, &end, 10);

		if (!d->value[0] || *end || v < -1)
			return cmd_fail(2, "set account %s %s = %s: a number (-1: none)", d->name, d->attr, d->value);
		return accounts_send(cl, json_pack("{s:s, s:s, s:I}", "action", "modify", "name", d->name,
						   d->attr[4] == 'c' ? "grp_cpus" : d->attr[4] == 'g' ? "grp_gpus" : "grp_jobs",
						   (json_int_t)v), NULL);
	}
	/* Budgets (docs/QOS.md): Slurm's GrpTRESMins, minutes; -1 clears. */
	if (!strcmp(d->attr, "cpu_minutes") || !strcmp(d->attr, "gpu_minutes")) {
		long long v = strtoll(d->value, &end, 10);

		if (!d->value[0] || *end || v < -1)
			return cmd_fail(2, "set account %s %s = %s: a number (-1: none)", d->name, d->attr, d->value);
		return accounts_send(cl, json_pack("{s:s, s:s, s:s, s:I}", "op", "qos", "action", "budget", "account",
						   d->name, d->attr[0] == 'c' ? "cpu_mins" : "gpu_mins", (json_int_t)v),
				     NULL);
	}
	if (!strcmp(d->attr, "description") || !strcmp(d->attr, "parent"))
		return accounts_send(cl, json_pack("{s:s, s:s, s:s}", "action", "modify", "name", d->name, d->attr,
						   d->value), NULL);
	if (!strcmp(d->attr, "add_user") || !strcmp(d->attr, "default_user"))
		return accounts_send(cl, json_pack("{s:s, s:s, s:s, s:b}", "action", "user_add", "account", d->name,
						   "user", d->value, "default", d->attr[0] == 'd'), NULL);
	if (!strcmp(d->attr, "remove_user"))
		return accounts_send(cl, json_pack("{s:s, s:s, s:s}", "action", "user_delete", "account", d->name,
						   "user", d->value), NULL);
	return cmd_fail(2, "set account %s %s: not shares, description, parent, max_cpus, max_gpus, "
			"max_running, cpu_minutes, gpu_minutes, add_user, remove_user or default_user", d->name,
			d->attr);
}

/* qmgr -c: directives separated by ';' or newlines, run in order; the
 * first error stops them (PBS's qmgr -c does the same with -e unset). */
static int directives_run(const char *conf, char *text)
{
	struct client *cl = NULL;
	struct error err;
	char *save = NULL;
	int status = 0;

	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	for (char *line = strtok_r(text, ";\n", &save); line && status == 0;
	     line = strtok_r(NULL, ";\n", &save)) {
		struct pbsqmgr_cmd d;

		if (strspn(line, " \t") == strlen(line))
			continue;
		if (pbsqmgr_parse(line, &d, &err) < 0) {
			status = cmd_fail(2, "%s", err.text);
			break;
		}
		name_strip_server(d.name);
		if ((d.verb == PBSQMGR_LIST || d.verb == PBSQMGR_PRINT) && d.object == PBSQMGR_HOOK)
			status = hooks_show(cl, &d);
		else if ((d.verb == PBSQMGR_LIST || d.verb == PBSQMGR_PRINT) && d.object == PBSQMGR_ACCOUNT)
			status = accounts_show(cl, &d);
		else if (d.object == PBSQMGR_ACCOUNT)
			status = accounts_change(cl, &d);
		else if (d.verb == PBSQMGR_LIST || d.verb == PBSQMGR_PRINT)
			status = pbs_show(cl, &d);
		else if (d.object == PBSQMGR_HOOK)
			status = cmd_fail(1, "hooks are named in qpool.conf ([server] submit_filter); edit it, "
					  "then qmgr reload");
		else if (d.verb == PBSQMGR_SET || d.verb == PBSQMGR_UNSET)
			status = pbs_set(cl, &d);
		else if (d.verb == PBSQMGR_DELETE && d.object == PBSQMGR_NODE && d.name[0])
			status = admin_send(cl, "delete", d.name, NULL);
		else if (d.verb == PBSQMGR_CREATE && d.object == PBSQMGR_NODE)
			status = cmd_fail(1, "create node: a node joins when its qnoded registers");
		else
			status = cmd_fail(1, "%s %s: queues are defined in qpool.conf; edit it, then qmgr reload",
					  d.verb == PBSQMGR_CREATE ? "create" : "delete",
					  d.object == PBSQMGR_QUEUE ? "queue" : d.object == PBSQMGR_NODE ? "node" : "server");
	}
	client_close(cl);
	return status;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *cmd;
		int min, max;   /* arguments after the command */
	} cmds[] = {
		{ "queues", 0, 0 }, { "nodes", 0, 0 }, { "enable", 1, 1 }, { "disable", 1, 2 },
		{ "start", 1, 1 }, { "stop", 1, 2 }, { "drain", 1, 2 }, { "resume", 1, 1 },
		{ "delete", 1, 1 }, { "reload", 0, 0 },
	};
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL, *cmd;
	char *directives = NULL;
	struct client *cl = NULL;
	struct error err;
	json_t *reply, *req;
	int c, nargs, status;
	size_t k;

	if (version_requested(argc, argv))
		return version_print("qmgr");
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:f:c:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': conf = optarg; break;
		case 'c': directives = optarg; break;
		case 'H':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_fail(2, "option -%c needs an argument (see qmgr --help)", optopt);
		default:
			return cmd_fail(2, "unknown option %s (see qmgr --help)", argv[optind - 1]);
		}
	}
	if (directives && optind < argc)
		return cmd_fail(2, "-c takes no command after it (see qmgr --help)");
	if (directives)
		return directives_run(conf, directives);
	if (optind >= argc)
		return cmd_fail(2, "which command? (see qmgr --help)");
	cmd = argv[optind];
	nargs = argc - optind - 1;
	for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++)
		if (strcmp(cmd, cmds[k].cmd) == 0)
			break;
	if (k == sizeof(cmds) / sizeof(cmds[0]))
		return cmd_fail(2, "unknown command '%s' (see qmgr --help)", cmd);
	if (nargs < cmds[k].min || nargs > cmds[k].max)
		return cmd_fail(2, "%s takes %s (see qmgr --help)", cmd,
			    cmds[k].max == 0 ? "no arguments" : cmds[k].max == 1 ? "one name" : "a name and a reason");
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (strcmp(cmd, "queues") == 0 || strcmp(cmd, "nodes") == 0) {
		status = list(cl, cmd);
		client_close(cl);
		return status;
	}
	req = json_pack("{s:s, s:s}", "op", "admin", "action", cmd);
	if (nargs >= 1)
		json_object_set_new(req, "target", json_string(argv[optind + 1]));
	if (nargs == 2)
		json_object_set_new(req, "reason", json_string(argv[optind + 2]));
	status = 0;
	if (client_call(cl, req, &reply, &err) < 0)
		status = cmd_fail(1, "%s", err.text);
	else
		json_decref(reply);
	client_close(cl);
	return status;
}
