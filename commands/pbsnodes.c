/* SPDX-License-Identifier: MIT */
/* pbsnodes: the nodes in PBS's form; mark them offline (drain) or clear that. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "gpu.h"
#include "cmd.h"
#include "jobid.h"
#include "noderes.h"
#include "pbsfmt.h"
#include "timeutil.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"usage: pbsnodes [-a] [-S] [-j] [-F json] [NODE...]\n"
	"       pbsnodes -l [-n] [all] [NODE...]\n"
	"       pbsnodes -o [-C|-N note] NODE...\n"
	"       pbsnodes -r|-c [-N note] NODE...\n"
	"       pbsnodes -N note NODE...\n"
	"Shows the nodes with their PBS attributes, lists the down and offline ones (-l),\n"
	"or (root) marks nodes offline: running jobs finish, no new job starts (-o);\n"
	"-r and -c clear that.\n"
	"  -a, -v        every node (the default), or those named\n"
	"  -S, -j        one summary line a node: state, jobs, free/total mem, ncpus, ngpus\n"
	"  -F json       as PBS's JSON document\n"
	"  -C, -N note   why a node is offline, shown by -l and -a; alone, the note of\n"
	"                an offline node (a node that is not offline keeps none)\n"
	"  -l all        every node with its state and note, not only down and offline ones\n"
	"  -n            with -l: the notes (always shown)\n"
	"      --conf FILE  configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"      --help    show this help\n";

static char server[256];

/* PBS's node state: free, job-busy (every CPU given), offline, down. */
static const char *node_state(const json_t *n)
{
	const char *st = wire_str(n, "state");

	if (!st || strcmp(st, "down") == 0)
		return "down";
	if (strcmp(st, "drained") == 0)
		return "offline";
	return wire_int(n, "free", 0) == 0 && wire_int(n, "ncpus", 0) > 0 ? "job-busy" : "free";
}

/* Each feature NAME as NAME = True, NAME=VALUE as NAME = VALUE, unless
 * avail has that name already (ncpus, mem, host ...). */
static void features_set(json_t *avail, const char *features)
{
	for (const char *p = features; p && *p;) {
		size_t n = strcspn(p, ","), k = strcspn(p, "=");
		char name[64];

		if (k > n)
			k = n;
		snprintf(name, sizeof(name), "%.*s", (int)(k < 63 ? k : 63), p);
		if (!json_object_get(avail, name))
			json_object_set_new(avail, name, k < n ? json_stringn(p + k + 1, n - k - 1) : json_string("True"));
		p += n + (p[n] == ',');
	}
}

static json_t *node_attrs(const json_t *n)
{
	const json_t *topo = json_object_get(n, "topology"), *jobs = json_object_get(n, "jobs");
	long long ncpus = wire_int(n, "ncpus", 0), mem = wire_int(topo, "mem", 0);
	long long ngpus = wire_int(n, "ngpus", 0);
	json_t *a = json_object(), *avail = json_object(), *assigned = json_object();
	char buf[4096];
	size_t len = 0, i;
	json_t *id;

	if (!a || !avail || !assigned) {
		json_decref(a);
		json_decref(avail);
		json_decref(assigned);
		return NULL;
	}
	json_object_set_new(a, "Mom", json_string(wire_str(n, "name") ? wire_str(n, "name") : "?"));
	json_object_set_new(a, "ntype", json_string("PBS"));
	json_object_set_new(a, "state", json_string(node_state(n)));
	json_object_set_new(a, "pcpus", json_integer(ncpus));
	buf[0] = '\0';
	json_array_foreach(jobs, i, id)
		if (json_is_integer(id) && len + 300 < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%lld.%s/0", len ? ", " : "",
						(long long)json_integer_value(id), server);
	if (len)
		json_object_set_new(a, "jobs", json_string(buf));
	json_object_set_new(avail, "ncpus", json_integer(ncpus));
	if (mem > 0) {
		snprintf(buf, sizeof(buf), "%lldkb", mem / 1024);
		json_object_set_new(avail, "mem", json_string(buf));
	}
	json_object_set_new(avail, "host", json_string(wire_str(n, "name") ? wire_str(n, "name") : "?"));
	json_object_set_new(avail, "vnode", json_string(wire_str(n, "name") ? wire_str(n, "name") : "?"));
	/* As PBS Pro: ngpus only on nodes that have GPUs. */
	if (ngpus > 0)
		json_object_set_new(avail, "ngpus", json_integer(ngpus));
	/* The GPUs' models, as a site's string resource gpu_model would say
	 * them (docs/GPUS.md): "a100", or "a100,v100" on a node of both. */
	gpu_models_format(json_object_get(n, "gpus"), buf, sizeof(buf));
	if (buf[0])
		json_object_set_new(avail, "gpu_model", json_string(buf));
	/* Features (docs/RESOURCES.md): PBS Pro's boolean resources
	 * (bigmem = True) and string ones (model = skylake), Torque's
	 * properties list. */
	features_set(avail, wire_str(n, "features"));
	if (wire_str(n, "features") && *wire_str(n, "features"))
		json_object_set_new(a, "properties", json_string(wire_str(n, "features")));
	/* Counted resources (docs/RESOURCES.md): a count, or a size as PBS writes one. */
	json_array_foreach(json_object_get(n, "resources"), i, id) {
		struct noderes r = { .value = (uint64_t)wire_int(id, "total", 0), .bytes = wire_bool(id, "bytes", 0) };
		const char *rn = wire_str(id, "name");

		if (!rn || json_object_get(avail, rn))
			continue;
		noderes_item_format(&r, buf, sizeof(buf));
		json_object_set_new(avail, rn, r.bytes ? json_string(buf) : json_integer((json_int_t)r.value));
		r.value = (uint64_t)wire_int(id, "used", 0);
		noderes_item_format(&r, buf, sizeof(buf));
		json_object_set_new(assigned, rn, r.bytes ? json_string(buf) : json_integer((json_int_t)r.value));
	}
	json_object_set_new(a, "resources_available", avail);
	json_object_set_new(assigned, "ncpus", json_integer(ncpus - wire_int(n, "free", 0)));
	if (ngpus > 0)
		json_object_set_new(assigned, "ngpus", json_integer(ngpus - wire_int(n, "gpus_free", 0)));
	/* As PBS: the memory its jobs hold, counted like CPUs. */
	snprintf(buf, sizeof(buf), "%lldkb", wire_int(n, "mem_assigned", 0) / 1024);
	json_object_set_new(assigned, "mem", json_string(buf));
	json_object_set_new(a, "resources_assigned", assigned);
	if (wire_str(n, "reason"))
		json_object_set_new(a, "comment", json_string(wire_str(n, "reason")));
	/* Who took it offline: admin, health (its check), hook. */
	if (wire_str(n, "drained_by"))
		json_object_set_new(a, "qpool_offline_by", json_string(wire_str(n, "drained_by")));
	json_object_set_new(a, "resv_enable", json_string("True"));
	json_object_set_new(a, "sharing", json_string("default_shared"));
	/* qpool's own. */
	json_object_set_new(a, "qpool_cpus", json_string(wire_str(n, "cpus") ? wire_str(n, "cpus") : ""));
	json_object_set_new(a, "qpool_cgroup", json_string(wire_str(n, "cgroup") ? wire_str(n, "cgroup") : ""));
	json_object_set_new(a, "qpool_rt", json_string(wire_bool(n, "rt", 0) ? "True" : "False"));
	return a;
}

/* -S -j: PBS Pro's summary of a node's jobs and free/total resources
 * ("ncpus f/t" = "2/4"), which Open OnDemand reads for its cluster view. */
static json_t *node_summary(const json_t *n)
{
	const json_t *topo = json_object_get(n, "topology"), *jobs = json_object_get(n, "jobs");
	long long ncpus = wire_int(n, "ncpus", 0), ngpus = wire_int(n, "ngpus", 0);
	long long mem = wire_int(topo, "mem", 0) / 1024, used = wire_int(n, "mem_assigned", 0) / 1024;
	json_t *s = json_object(), *list = json_array(), *id;
	char buf[128];
	size_t i;

	if (!s || !list) {
		json_decref(s);
		json_decref(list);
		return NULL;
	}
	json_object_set_new(s, "State", json_string(node_state(n)));
	json_object_set_new(s, "state", json_string(node_state(n)));
	json_object_set_new(s, "njobs", json_integer((json_int_t)json_array_size(jobs)));
	json_object_set_new(s, "run", json_integer((json_int_t)json_array_size(jobs)));
	json_object_set_new(s, "susp", json_integer(0));
	snprintf(buf, sizeof(buf), "%lldkb/%lldkb", mem > used ? mem - used : 0, mem);
	json_object_set_new(s, "mem f/t", json_string(buf));
	snprintf(buf, sizeof(buf), "%lld/%lld", wire_int(n, "free", 0), ncpus);
	json_object_set_new(s, "ncpus f/t", json_string(buf));
	json_object_set_new(s, "nmics f/t", json_string("0/0"));
	snprintf(buf, sizeof(buf), "%lld/%lld", ngpus > 0 ? wire_int(n, "gpus_free", 0) : 0, ngpus);
	json_object_set_new(s, "ngpus f/t", json_string(buf));
	json_array_foreach(jobs, i, id)
		if (json_is_integer(id)) {
			char full[300];

			snprintf(full, sizeof(full), "%lld.%s", (long long)json_integer_value(id), server);
			json_array_append_new(list, json_string(full));
		}
	json_object_set_new(s, "jobs", list);
	return s;
}

static void summary_print(const char *name, const json_t *s)
{
	const json_t *jobs = json_object_get(s, "jobs");
	char list[1024] = "";
	size_t len = 0, i;
	json_t *j;

	json_array_foreach(jobs, i, j)
		if (len + 300 < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", len ? "," : "",
						json_string_value(j));
	printf("%-15s %-15s %6lld %5lld %6lld %12s %7s %7s %7s %s\n", name, wire_str(s, "state"),
	       wire_int(s, "njobs", 0), wire_int(s, "run", 0), wire_int(s, "susp", 0), wire_str(s, "mem f/t"),
	       wire_str(s, "ncpus f/t"), wire_str(s, "nmics f/t"), wire_str(s, "ngpus f/t"), len ? list : "--");
}

static void attrs_print(const char *name, const json_t *a)
{
	const char *key, *sub;
	json_t *v, *w;

	printf("%s\n", name);
	json_object_foreach((json_t *)a, key, v) {
		if (json_is_object(v)) {
			json_object_foreach(v, sub, w) {
				if (json_is_integer(w))
					printf("     %s.%s = %lld\n", key, sub, (long long)json_integer_value(w));
				else
					printf("     %s.%s = %s\n", key, sub, json_string_value(w));
			}
		} else if (json_is_integer(v)) {
			printf("     %s = %lld\n", key, (long long)json_integer_value(v));
		} else {
			printf("     %s = %s\n", key, json_string_value(v));
		}
	}
	putchar('\n');
}

static bool named(const json_t *n, char **names, int n_names)
{
	const char *name = wire_str(n, "name");

	if (n_names == 0)
		return true;
	for (int k = 0; k < n_names; k++)
		if (name && strcmp(name, names[k]) == 0)
			return true;
	return false;
}

static int nodes_show(struct client *cl, char **names, int n_names, bool list, bool json, bool summary)
{
	/* -l all (TORQUE's, LBNL NHC's -n -l all NODE): every node, not only
	 * the down and offline ones; "all" is no node's name then. */
	bool list_all = list && n_names > 0 && strcmp(names[0], "all") == 0;

	if (list_all) {
		names++;
		n_names--;
	}
	json_t *reply = NULL, *nodes, *n, *doc = NULL, *all = NULL;
	struct error err;
	int status = 0;
	size_t i;

	if (client_call_pages(cl, json_pack("{s:s}", "op", "nodes"), "nodes", &reply, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	/* The pool's name, as the reply gave it. */
	client_server_name(cl, server, sizeof(server));
	nodes = json_object_get(reply, "nodes");
	for (int k = 0; k < n_names; k++) {
		bool found = false;

		json_array_foreach(nodes, i, n) {
			found |= strcmp(wire_str(n, "name") ? wire_str(n, "name") : "", names[k]) == 0;
		}
		if (!found)
			status = cmd_fail(1, "unknown node %s", names[k]);
	}
	if (summary && !json && !list) {
		printf("%-15s %-15s %6s %5s %6s %12s %7s %7s %7s %s\n", "", "", "", "", "", "mem", "ncpus", "nmics",
		       "ngpus", "");
		printf("%-15s %-15s %6s %5s %6s %12s %7s %7s %7s %s\n", "vnode", "state", "njobs", "run", "susp",
		       "f/t", "f/t", "f/t", "f/t", "jobs");
		printf("--------------- --------------- ------ ----- ------ ------------ ------- ------- ------- -------\n");
	}
	if (json) {
		all = json_object();
		doc = json_pack("{s:I, s:s, s:s, s:O}", "timestamp", (json_int_t)(time_wall_ns() / NSEC_PER_SEC),
				"pbs_version", PBSFMT_PBS_VERSION, "pbs_server", server, "nodes", all);
	}
	json_array_foreach(nodes, i, n) {
		const char *name = wire_str(n, "name") ? wire_str(n, "name") : "?";
		const char *st = node_state(n);
		json_t *a;

		if (!named(n, names, n_names))
			continue;
		if (list) {
			if (list_all || strcmp(st, "down") == 0 || strcmp(st, "offline") == 0)
				printf("%-20s %-20s %s\n", name, st, wire_str(n, "reason") ? wire_str(n, "reason") : "");
			continue;
		}
		a = summary ? node_summary(n) : node_attrs(n);
		if (!a)
			continue;
		if (json)
			json_object_set(all, name, a);
		else if (summary)
			summary_print(name, a);
		else
			attrs_print(name, a);
		json_decref(a);
	}
	if (doc) {
		json_dumpf(doc, stdout, JSON_INDENT(4) | JSON_PRESERVE_ORDER);
		putchar('\n');
	}
	json_decref(all);
	json_decref(doc);
	json_decref(reply);
	return status;
}

/* -o: drain; -r/-c: resume (qmgr's admin ops, root only), by whoever
 * cmd_drain_by says (LBNL NHC's pbsnodes -o -N / -c -N '': docs/HOOKS.md).
 * note_only (-N alone): the note of nodes that are offline, kept so. */
static int nodes_set(struct client *cl, char **names, int n_names, bool offline, const char *comment, bool note_only)
{
	json_t *nodes = NULL;
	struct error lerr;
	int status = 0;

	if (note_only && client_call_pages(cl, json_pack("{s:s}", "op", "nodes"), "nodes", &nodes, &lerr) < 0)
		return cmd_fail(1, "%s", lerr.text);
	for (int k = 0; k < n_names; k++) {
		json_t *req, *reply = NULL, *n;
		struct error err;
		size_t i;

		if (note_only) {
			const char *st = NULL;

			json_array_foreach(json_object_get(nodes, "nodes"), i, n)
				if (strcmp(wire_str(n, "name") ? wire_str(n, "name") : "", names[k]) == 0)
					st = node_state(n);
			if (!st) {
				status = cmd_fail(1, "unknown node %s", names[k]);
				continue;
			}
			if (strcmp(st, "offline") != 0) {
				status = cmd_fail(1, "%s: not offline: qpool keeps a note only with it (pbsnodes -o -N note %s)",
						  names[k], names[k]);
				continue;
			}
		}
		req = json_pack("{s:s, s:s, s:s, s:s}", "op", "admin", "action", offline ? "drain" : "resume",
				"target", names[k], "by", cmd_drain_by());
		if (req && offline && comment && *comment)
			json_object_set_new(req, "reason", json_string(comment));
		if (client_call(cl, req, &reply, &err) < 0)
			status = cmd_fail(1, "%s: %s", names[k], err.text);
		json_decref(reply);
	}
	json_decref(nodes);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "conf", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = NULL, *comment = NULL;
	bool list = false, json = false, offline = false, clear = false, summary = false, note_only = false;
	struct client *cl = NULL;
	struct error err;
	int c, status;

	if (version_requested(argc, argv))
		return version_print("pbsnodes");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":avlorcnC:N:F:s:Sj", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': case 'v': case 's': break;
		case 'S': case 'j': summary = true; break;
		case 'l': list = true; break;
		case 'o': offline = true; break;
		case 'r': case 'c': clear = true; break;
		case 'C': case 'N': comment = optarg; break;
		case 'n': break;   /* TORQUE: notes with -l, which always shows them */
		case 'F':
			if (strcmp(optarg, "json") != 0)
				return cmd_fail(2, "-F %s: only -F json is supported (see pbsnodes --help)", optarg);
			json = true;
			break;
		case 'K': conf = optarg; break;
		case 'H':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_fail(2, "option -%c needs an argument (see pbsnodes --help)", optopt);
		default:
			if (optopt)
				return cmd_fail(2, "unknown option -%c (see pbsnodes --help)", optopt);
			return cmd_fail(2, "unknown option %s (see pbsnodes --help)", argv[optind - 1]);
		}
	}
	if (offline + clear + list > 1)
		return cmd_fail(2, "-o, -r/-c and -l exclude each other (see pbsnodes --help)");
	if ((offline || clear) && optind == argc)
		return cmd_fail(2, "-%c needs node names (see pbsnodes --help)", offline ? 'o' : 'r');
	/* -N alone: a note, on offline nodes (qpool's note is why it is). */
	if (comment && !offline && !clear && !list) {
		if (optind == argc)
			return cmd_fail(2, "-N needs node names (see pbsnodes --help)");
		if (!*comment)
			return cmd_fail(2, "-N '': a note is cleared with the node (pbsnodes -c NODE)");
		note_only = offline = true;
	}
	if (comment && strlen(comment) >= 128)
		return cmd_fail(2, "-C: at most 127 bytes");
	if (client_open(conf, &cl, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	if (offline || clear)
		status = nodes_set(cl, argv + optind, argc - optind, offline, comment, note_only);
	else
		status = nodes_show(cl, argv + optind, argc - optind, list, json, summary);
	client_close(cl);
	if (fflush(stdout) != 0 && status == 0)
		status = cmd_fail(1, "cannot write");
	return status;
}
