/* SPDX-License-Identifier: MIT */
/* sinfo: qpool's queues and nodes as Slurm's partitions and nodes (the queues and nodes ops). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "client.h"
#include "cmd.h"
#include "gpu.h"
#include "hostlist.h"
#include "slurmfmt.h"
#include "slurmjobs.h"
#include "slurmsel.h"
#include "slurmresv.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"Usage: sinfo [-h] [-N] [-p PARTITIONS] [-n NODES] [-t STATES] [-o FORMAT] [--json]\n"
	"Shows qpool's queues (Slurm's partitions, every one over all nodes) and nodes.\n"
	"  -N, --Node              one line per node and partition\n"
	"  -p, --partition=PARTS   only these partitions\n"
	"  -n, --nodes=NODES       only these nodes\n"
	"  -t, --states=STATES     only nodes in these states (idle mix alloc down drain drng)\n"
	"  -h, --noheader          no header line\n"
	"  -T, --reservation       the reservations (those the user may use)\n"
	"  -R, --list-reasons      drained nodes with why, who (admin, health, hook) and when\n"
	"  -o, --format=FORMAT     columns as %[.][width]letter (%P %R %a %l %D %t %T %N %c %C %G %p %m %e %f %E %u %H)\n"
	"      --json              Slurm's JSON document\n"
	"      --conf FILE         configuration file\n"
	"      --help, --usage     show this help\n";

#define DEFAULT_FORMAT "%9P %.5a %.10l %.6D %.6t %N"
#define NODE_FORMAT "%#N %.6D %#P %6t"
#define REASON_FORMAT "%20E %9u %19H %N"

static const char *arg_fields;
static const char *arg_conf, *arg_format, *arg_partitions, *arg_nodes, *arg_states;
static bool arg_noheader, arg_node_lines, arg_json, arg_reasons, arg_resv;

/* A node's state as sinfo's short and long names. */
static void node_state(const json_t *node, const char **ret_short, const char **ret_long)
{
	const char *state = wire_str(node, "state") ? wire_str(node, "state") : "down";
	size_t jobs = json_array_size(json_object_get(node, "jobs"));
	long long free_cpus = wire_int(node, "free", 0), ncpus = wire_int(node, "ncpus", 0);

	if (strcmp(state, "drained") == 0) {
		*ret_short = jobs ? "drng" : "drain";
		*ret_long = jobs ? "draining" : "drained";
	} else if (strcmp(state, "up") != 0) {
		*ret_short = "down*";
		*ret_long = "down*";
	} else if (jobs == 0 || free_cpus == ncpus) {
		*ret_short = *ret_long = "idle";
	} else if (free_cpus == 0) {
		*ret_short = "alloc";
		*ret_long = "allocated";
	} else {
		*ret_short = "mix";
		*ret_long = "mixed";
	}
}

/* Partition availability: enabled and started "up"; not accepting
 * "drain" (running jobs go on); not starting "down"; neither "inact". */
static const char *avail(const json_t *q)
{
	bool enabled = wire_bool(q, "enabled", 1), started = wire_bool(q, "started", 1);

	return enabled && started ? "up" : enabled ? "down" : started ? "drain" : "inact";
}

/* One output row: a partition and a group of nodes in one state. */
struct row {
	const json_t *queue;
	const char *state_short, *state_long;
	const char *names[1024];
	size_t n;
	long long cpus, cpus_alloc, cpus_down, cpus_per_node;
	long long mem_min, mem_max;     /* MiB per node */
	long long free_min, free_max;   /* MiB not held by jobs, per node; -1: none said */
	long long gpus_per_node;        /* the most any of its nodes has */
	long long gpus_used, mem_alloc;   /* mem_alloc: MiB, the row's nodes summed */
	long long nodes_alloc, nodes_idle, nodes_other;
	const char *reason;
	const char *drained_by;         /* admin, health, hook (NULL: none said) */
	long long drained_at;           /* wall seconds; 0: unknown */
	const char *features;           /* its nodes' (one row per set with %f) */
	char gres[256];                 /* its GPUs by model, Slurm's words (one row per set with %G) */
	const json_t *gpus;             /* the node's whose GPUs gres says */
	const char *res;                /* its nodes' counted resources (one row per set with %G) */
};

/* sinfo -O's names: each a -o letter, or a code of its own (a digit,
 * which no -o format can name: it would be read as a width). */
static const struct { const char *name; char letter; } o_names[] = {
	{ "Available", 'a' }, { "Cluster", 'V' }, { "Comment", '1' }, { "Cores", 'Y' },
	{ "CPUs", 'c' }, { "CPUsLoad", 'O' }, { "CPUsState", 'C' }, { "DefaultTime", 'L' },
	{ "Disk", 'd' }, { "Extra", '2' }, { "Features", 'f' }, { "FeaturesAct", 'b' },
	{ "FreeMem", 'e' }, { "Gres", 'G' }, { "GresUsed", '3' }, { "Groups", 'g' },
	{ "MaxCPUsPerNode", 'B' }, { "Memory", 'm' }, { "NodeAddr", 'o' }, { "NodeAI", 'A' },
	{ "NodeAIOT", 'F' }, { "NodeHost", 'n' }, { "NodeList", 'N' }, { "Nodes", 'D' },
	{ "OverSubscribe", 'h' }, { "Partition", 'P' }, { "PartitionName", 'R' }, { "Port", '4' },
	{ "PreemptMode", 'M' }, { "PriorityJobFactor", 'I' }, { "PriorityTier", 'p' },
	{ "Reason", 'E' }, { "Root", 'r' }, { "Size", 's' }, { "SocketCoreThread", 'z' },
	{ "Sockets", 'X' }, { "StateCompact", 't' }, { "StateLong", 'T' }, { "StateComplete", '5' },
	{ "Threads", 'Z' }, { "Time", 'l' }, { "TimeStamp", 'H' }, { "User", 'u' },
	{ "UserLong", 'U' }, { "Version", 'v' }, { "Weight", 'w' }, { "AllocMem", '6' },
	{ "Reservation", 'i' }, { "AllocNodes", 'S' },
};

/* Letters whose value is the same for every node, whatever it is. */
static const struct { char letter; const char *value, *header; } constants[] = {
	{ 'b', "(null)", "ACTIVE_FEATURES" }, { 'B', "UNLIMITED", "MAX_CPUS_PER_NODE" },
	{ 'd', "0", "TMP_DISK" }, { 'g', "all", "GROUPS" },
	{ 'h', "NO", "OVERSUBSCRIBE" }, { 'i', "", "RESERVATION" },
	{ 'I', "1", "PRIO_JOB_FACTOR" }, { 'M', "OFF", "PREEMPT_MODE" }, { 'O', "N/A", "CPU_LOAD" },
	{ 'r', "no", "ROOT" }, { 's', "1-infinite", "JOB_SIZE" }, { 'S', "all", "ALLOCNODES" },
	{ 'U', "Unknown", "USER" }, { 'v', "N/A", "VERSION" },
	{ 'V', "N/A", "CLUSTER" }, { 'w', "1", "WEIGHT" }, { 'X', "N/A", "SOCKETS" },
	{ 'Y', "N/A", "CORES" }, { 'Z', "N/A", "THREADS" }, { 'z', "N/A", "S:C:T" },
	{ '1', "(null)", "COMMENT" }, { '2', "", "EXTRA" }, { '4', "0", "PORT" },
};

static void value(const struct row *r, char letter, char *buf, size_t len)
{
	const json_t *q = r->queue;
	long long wt = wire_int(q, "walltime_max", 0);

	buf[0] = '\0';
	switch (letter) {
	case 'P':
		snprintf(buf, len, "%s%s", wire_str(q, "name"), wire_bool(q, "default", 0) ? "*" : "");
		break;
	case 'R':
		snprintf(buf, len, "%s", wire_str(q, "name"));
		break;
	case 'a':
		snprintf(buf, len, "%s", avail(q));
		break;
	case 'l':
		if (wt > 0)
			slurmfmt_duration(buf, len, wt);
		else
			snprintf(buf, len, "infinite");
		break;
	case 'D':
		snprintf(buf, len, "%zu", r->n);
		break;
	case 't':
		snprintf(buf, len, "%s", r->n ? r->state_short : "n/a");
		break;
	case 'T':
		snprintf(buf, len, "%s", r->n ? r->state_long : "n/a");
		break;
	case 'N':
		if (r->n == 0 || hostlist_compress(r->names, r->n, buf, len) < 0)
			buf[0] = '\0';
		break;
	case 'c':
		snprintf(buf, len, "%lld", r->cpus_per_node);
		break;
	case 'C':
		snprintf(buf, len, "%lld/%lld/%lld/%lld", r->cpus_alloc, r->cpus - r->cpus_alloc - r->cpus_down,
			 r->cpus_down, r->cpus);
		break;
	case 'G':
		/* Toil takes a partition whose GRES is not "(null)" for GPUs;
		 * then the nodes' counted resources (docs/RESOURCES.md). */
		if (r->gpus_per_node > 0)
			snprintf(buf, len, "%s%s%s", r->gres, r->res && *r->res ? "," : "", r->res ? r->res : "");
		else
			snprintf(buf, len, "%s", r->res && *r->res ? r->res : "(null)");
		break;
	case 'p':
		snprintf(buf, len, "%lld", wire_int(q, "priority", 0));
		break;
	case 'f':
		snprintf(buf, len, "%s", r->features && *r->features ? r->features : "(null)");
		break;
	case 'm':
		/* Slurm's "smallest+" when the nodes differ. */
		snprintf(buf, len, "%lld%s", r->mem_min, r->mem_max > r->mem_min ? "+" : "");
		break;
	case 'e':
		/* Slurm's "min-max" when the nodes differ; N/A when none says. */
		if (r->free_min < 0)
			snprintf(buf, len, "N/A");
		else if (r->free_max > r->free_min)
			snprintf(buf, len, "%lld-%lld", r->free_min, r->free_max);
		else
			snprintf(buf, len, "%lld", r->free_min);
		break;
	case '6':
		/* Slurm's AllocMem: what jobs hold, summed over the row's nodes. */
		snprintf(buf, len, "%lld", r->mem_alloc);
		break;
	case 'A':
		snprintf(buf, len, "%lld/%lld", r->nodes_alloc, r->nodes_idle);
		break;
	case 'F':
		snprintf(buf, len, "%lld/%lld/%lld/%zu", r->nodes_alloc, r->nodes_idle, r->nodes_other, r->n);
		break;
	case 'n':
	case 'o':
		/* Host names: listed, as Slurm's (its %N compresses). */
		for (size_t i = 0, k = 0; i < r->n && k < len; i++)
			k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "," : "", r->names[i]);
		break;
	case '3':
		if (r->gpus_per_node > 0 && r->n == 1)
			gpu_gres_format(r->gpus, true, buf, len);
		else if (r->gpus_per_node > 0)
			snprintf(buf, len, "gpu:%lld", r->gpus_used);
		else
			snprintf(buf, len, "(null)");
		break;
	case 'E':
		snprintf(buf, len, "%s", r->reason ? r->reason : "none");
		break;
	case 'u':
		/* Slurm: the user who set the reason; qpool: who, admin, health
		 * (the health check) or hook (a node prolog or epilog). */
		snprintf(buf, len, "%s", r->reason ? (r->drained_by ? r->drained_by : "admin") : "Unknown");
		break;
	case 'H':
		snprintf(buf, len, "Unknown");
		if (r->reason && r->drained_at > 0) {
			time_t t = (time_t)r->drained_at;
			struct tm tm;

			if (localtime_r(&t, &tm))
				strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
		}
		break;
	case '5':
		snprintf(buf, len, "%s", r->n ? r->state_long : "n/a");
		break;
	case 'L':
		if (wire_int(q, "walltime_default", 0) > 0)
			slurmfmt_duration(buf, len, wire_int(q, "walltime_default", 0));
		else
			snprintf(buf, len, "n/a");
		break;
	default:
		for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
			if (constants[i].letter == letter)
				snprintf(buf, len, "%s", constants[i].value);
		break;
	}
}

static const char *header(char letter)
{
	switch (letter) {
	case 'P': case 'R': return "PARTITION";
	case 'a': return "AVAIL";
	case 'l': return "TIMELIMIT";
	case 'D': return "NODES";
	case 't': case 'T': return "STATE";
	case 'N': return "NODELIST";
	case 'c': return "CPUS";
	case 'C': return "CPUS(A/I/O/T)";
	case 'G': return "GRES";
	case 'p': return "PRIO_TIER";
	case 'm': return "MEMORY";
	case 'e': return "FREE_MEM";
	case '6': return "ALLOCMEM";
	case 'A': return "NODES(A/I)";
	case 'F': return "NODES(A/I/O/T)";
	case 'n': return "HOSTNAMES";
	case 'o': return "NODE_ADDR";
	case '3': return "GRES_USED";
	case 'E': return "REASON";
	case 'u': return "USER";
	case 'H': return "TIMESTAMP";
	case '5': return "STATECOMPLETE";
	case 'L': return "DEFAULTTIME";
	case 'f': return "AVAIL_FEATURES";
	default:
		for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
			if (constants[i].letter == letter)
				return constants[i].header;
		return NULL;
	}
}

struct item {
	char letter;     /* 0: literal */
	char text[64];
	int width;       /* -1: '#', the widest value */
	bool right;
	char suffix[16]; /* -O's text after the width */
};

static int format_parse(const char *fmt, struct item *items, int max)
{
	int n = 0;

	while (*fmt && n < max) {
		struct item *it = &items[n++];

		memset(it, 0, sizeof(*it));
		if (*fmt != '%') {
			size_t k = 0;

			while (*fmt && *fmt != '%' && k + 1 < sizeof(it->text))
				it->text[k++] = *fmt++;
			continue;
		}
		fmt++;
		if (*fmt == '.') {
			it->right = true;
			fmt++;
		}
		if (*fmt == '#') {
			it->width = -1;
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			it->width = (it->width * 10 + (*fmt++ - '0')) % 10000;
		if (!*fmt || !header(*fmt))
			return cmd_fail(1, "error: Invalid node format specification: %c", *fmt ? *fmt : '%'), -1;
		it->letter = *fmt++;
	}
	return *fmt ? (cmd_fail(1, "error: node format too long"), -1) : n;
}

/* -O "Name[:[.]width]": Slurm's default width 20. */
static int fields_parse(const char *list, struct item *items, int max)
{
	char name[64];
	int n = 0;

	while (*list) {
		size_t k = strcspn(list, ",");
		const char *colon = memchr(list, ':', k);
		size_t nlen = colon ? (size_t)(colon - list) : k;
		struct item *it;
		size_t i;

		if (k == 0) {
			list++;
			continue;
		}
		if (n == max)
			return cmd_fail(1, "error: too many fields in --Format"), -1;
		it = &items[n++];
		memset(it, 0, sizeof(*it));
		it->width = 20;
		snprintf(name, sizeof(name), "%.*s", (int)(nlen < sizeof(name) ? nlen : sizeof(name) - 1), list);
		for (i = 0; i < sizeof(o_names) / sizeof(o_names[0]); i++)
			if (strcasecmp(o_names[i].name, name) == 0)
				break;
		if (i == sizeof(o_names) / sizeof(o_names[0]))
			return cmd_fail(1, "error: Invalid node format specification: %s", name), -1;
		it->letter = o_names[i].letter;
		if (colon) {
			const char *p = colon + 1;

			if (*p == '.') {
				it->right = true;
				p++;
			}
			it->width = 0;
			while (*p >= '0' && *p <= '9' && p < list + k)
				it->width = (it->width * 10 + (*p++ - '0')) % 10000;
			/* Slurm's suffix after the width, printed after the value */
			snprintf(it->suffix, sizeof(it->suffix), "%.*s", (int)(list + k - p), p);
		}
		list += k;
	}
	return n;
}

static void line_put(const struct item *items, int n, const struct row *r)
{
	char v[8192], cell[8192];

	for (int i = 0; i < n; i++) {
		if (!items[i].letter) {
			fputs(items[i].text, stdout);
			continue;
		}
		if (r)
			value(r, items[i].letter, v, sizeof(v));
		else
			snprintf(v, sizeof(v), "%s", header(items[i].letter));
		slurmfmt_cell(cell, sizeof(cell), v, items[i].width, items[i].right);
		fputs(cell, stdout);
		fputs(items[i].suffix, stdout);
	}
	fputc('\n', stdout);
}

static bool node_wanted(const json_t *node)
{
	const char *s, *l;

	node_state(node, &s, &l);
	if (arg_nodes && !slurmsel_list_has(arg_nodes, wire_str(node, "name")))
		return false;
	return !arg_states || slurmsel_list_has(arg_states, s) || slurmsel_list_has(arg_states, l);
}

static struct item items[32];
static int n_items;

/* Whether the columns name one of these letters. */
static bool shows(const char *letters)
{
	for (int i = 0; i < n_items; i++)
		if (items[i].letter && strchr(letters, items[i].letter))
			return true;
	return false;
}

/* The rows of one partition: nodes grouped by state (or one per node).
 * As Slurm's, only what is printed tells rows apart: without a state
 * column the nodes of all states are one row, and without a node count
 * or list of CPUs per node they are not told apart by it. */
static size_t rows_of(const json_t *queue, const json_t *nodes, struct row *rows, size_t max)
{
	size_t n = 0, i;
	json_t *node;

	json_array_foreach(nodes, i, node) {
		const char *s, *l;
		struct row *r = NULL;
		long long mem, fr;
		json_t *freev;
		char gres[256];

		if (!node_wanted(node))
			continue;
		node_state(node, &s, &l);
		/* -R: only the nodes with a reason. */
		if (arg_reasons && !wire_str(node, "reason"))
			continue;
		gpu_gres_format(json_object_get(node, "gpus"), false, gres, sizeof(gres));
		/* As Slurm: a row per state, per feature set when %f shows
		 * them, and per GPU set (models and counts) when %G does. */
		for (size_t k = 0; !arg_node_lines && k < n && !r; k++)
			if ((arg_json || !shows("tT5E") || strcmp(rows[k].state_short, s) == 0) &&
			    (arg_json || !shows("EuH") ||
			     (!strcmp(rows[k].reason ? rows[k].reason : "", wire_str(node, "reason") ? wire_str(node, "reason") : "") &&
			      !strcmp(rows[k].drained_by ? rows[k].drained_by : "",
				      wire_str(node, "drained_by") ? wire_str(node, "drained_by") : "") &&
			      (!shows("H") || rows[k].drained_at == wire_int(node, "drained_at", 0)))) &&
			    (arg_json || !shows("cBXYZz") || rows[k].cpus_per_node == wire_int(node, "ncpus", 0)) &&
			    (!shows("f") || !strcmp(rows[k].features ? rows[k].features : "",
						    wire_str(node, "features") ? wire_str(node, "features") : "")) &&
			    (!shows("G") || (!strcmp(rows[k].gres, gres) &&
					     !strcmp(rows[k].res ? rows[k].res : "",
						     wire_str(node, "gres") ? wire_str(node, "gres") : ""))))
				r = &rows[k];
		if (!r) {
			if (n == max)
				continue;
			r = &rows[n++];
			memset(r, 0, sizeof(*r));
			r->queue = queue;
			r->state_short = s;
			r->state_long = l;
			r->features = wire_str(node, "features");
			r->reason = wire_str(node, "reason");
			r->drained_by = wire_str(node, "drained_by");
			r->drained_at = wire_int(node, "drained_at", 0);
			r->res = wire_str(node, "gres");
			r->free_min = r->free_max = -1;
		}
		if (r->n < sizeof(r->names) / sizeof(r->names[0]))
			r->names[r->n++] = wire_str(node, "name");
		/* What the node offers its jobs (memory counted), else what
		 * its topology holds; free: what no job holds of the offer. */
		freev = json_object_get(node, "mem_free");
		fr = freev ? wire_int(node, "mem_free", 0) / (1024 * 1024) : -1;
		mem = freev ? (wire_int(node, "mem_free", 0) + wire_int(node, "mem_assigned", 0)) / (1024 * 1024)
			    : wire_int(json_object_get(node, "topology"), "mem", 0) / (1024 * 1024);
		if (fr >= 0 && (r->free_min < 0 || fr < r->free_min))
			r->free_min = fr;
		if (fr > r->free_max)
			r->free_max = fr;
		if (r->n == 1 || mem < r->mem_min)
			r->mem_min = mem;
		if (mem > r->mem_max)
			r->mem_max = mem;
		if (wire_int(node, "ngpus", 0) > r->gpus_per_node) {
			r->gpus_per_node = wire_int(node, "ngpus", 0);
			r->gpus = json_object_get(node, "gpus");
			snprintf(r->gres, sizeof(r->gres), "%s", gres);
		}
		r->cpus += wire_int(node, "ncpus", 0);
		r->cpus_per_node = wire_int(node, "ncpus", 0);
		if (strcmp(s, "down*") == 0)
			r->cpus_down += wire_int(node, "ncpus", 0);
		else
			r->cpus_alloc += wire_int(node, "ncpus", 0) - wire_int(node, "free", 0);
		r->gpus_used += wire_int(node, "ngpus", 0) - wire_int(node, "gpus_free", wire_int(node, "ngpus", 0));
		r->mem_alloc += wire_int(node, "mem_assigned", 0) / (1024 * 1024);
		if (wire_str(node, "reason"))
			r->reason = wire_str(node, "reason");
		if (strcmp(s, "idle") == 0)
			r->nodes_idle++;
		else if (strcmp(s, "alloc") == 0 || strcmp(s, "mix") == 0)
			r->nodes_alloc++;
		else
			r->nodes_other++;
	}
	if (n == 0 && !arg_node_lines && !arg_nodes && !arg_states && !arg_reasons && max) {
		memset(&rows[0], 0, sizeof(rows[0]));
		rows[0].queue = queue;
		rows[0].free_min = rows[0].free_max = -1;
		n = 1;
	}
	return n;
}

static json_t *json_of(const struct row *r)
{
	json_t *names = json_array();
	long long idle = 0, alloc = 0, other = 0;

	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(names, json_string(r->names[i]));
	if (r->n && strcmp(r->state_short, "idle") == 0)
		idle = (long long)r->n;
	else if (r->n && (strcmp(r->state_short, "alloc") == 0 || strcmp(r->state_short, "mix") == 0))
		alloc = (long long)r->n;
	else
		other = (long long)r->n;
	return json_pack("{s:{s:[s]}, s:{s:I, s:I, s:I, s:I, s:o}, s:{s:I, s:I, s:I, s:I},"
			 " s:{s:s, s:{s:[s]}, s:b}}",
			 "node", "state", r->n ? r->state_long : "n/a",
			 "nodes", "allocated", (json_int_t)alloc, "idle", (json_int_t)idle, "other", (json_int_t)other,
			 "total", (json_int_t)r->n, "nodes", names,
			 "cpus", "allocated", (json_int_t)r->cpus_alloc,
			 "idle", (json_int_t)(r->cpus - r->cpus_alloc - r->cpus_down), "other", (json_int_t)r->cpus_down,
			 "total", (json_int_t)r->cpus,
			 "partition", "name", wire_str(r->queue, "name"), "partition", "state", avail(r->queue),
			 "default", wire_bool(r->queue, "default", 0));
}


static int show(const json_t *queues, const json_t *nodes)
{
	static struct row rows[256];
	json_t *doc = NULL, *list = NULL;
	size_t i, nrows = 0;
	json_t *q;
	int n = n_items;

	if (arg_json) {
		doc = slurmjobs_json(NULL, 0);
		list = json_array();
		if (!doc || !list)
			return cmd_fail(1, "out of memory");
	}
	json_array_foreach(queues, i, q) {
		if (!arg_partitions || slurmsel_list_has(arg_partitions, wire_str(q, "name")))
			nrows += rows_of(q, nodes, rows + nrows, sizeof(rows) / sizeof(rows[0]) - nrows);
		/* No partition's column: each node once (every queue holds
		 * every node), as Slurm's sinfo -o %C counts the cluster. */
		if (nrows && !arg_json && !shows("PRalpLhsSgMI"))
			break;
	}
	/* '#': as wide as the widest value and the header. */
	for (int k = 0; k < n; k++) {
		char v[8192];

		if (items[k].width != -1)
			continue;
		items[k].width = (int)strlen(header(items[k].letter));
		for (size_t r = 0; r < nrows; r++) {
			value(&rows[r], items[k].letter, v, sizeof(v));
			if ((int)strlen(v) > items[k].width)
				items[k].width = (int)strlen(v);
		}
	}
	if (arg_json) {
		for (size_t r = 0; r < nrows; r++)
			json_array_append_new(list, json_of(&rows[r]));
		json_object_set_new(doc, "sinfo", list);
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(doc);
		return 0;
	}
	if (!arg_noheader)
		line_put(items, n, NULL);
	for (size_t r = 0; r < nrows; r++)
		line_put(items, n, &rows[r]);
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_CONF, OPT_HELP };
	static const struct option longopts[] = {
		{ "Node", no_argument, NULL, 'N' },
		{ "partition", required_argument, NULL, 'p' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "states", required_argument, NULL, 't' },
		{ "noheader", no_argument, NULL, 'h' },
		{ "list-reasons", no_argument, NULL, 'R' },
		{ "reservation", no_argument, NULL, 'T' },
		{ "format", required_argument, NULL, 'o' },
		{ "Format", required_argument, NULL, 'O' },
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "conf", required_argument, NULL, OPT_CONF },
		{ "clusters", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "usage", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	json_t *qreply = NULL, *nreply = NULL;
	struct client *cl = NULL;
	struct error err;
	int c, status = 0;

	if (version_requested(argc, argv))
		return version_print("sinfo");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":Np:n:t:ho:O:aM:RT", longopts, NULL)) != -1) {
		switch (c) {
		case 'N': arg_node_lines = true; break;
		case 'R': arg_reasons = true; break;
		case 'T': arg_resv = true; break;
		case 'p': arg_partitions = optarg; break;
		case 'n': arg_nodes = optarg; break;
		case 't': arg_states = optarg; break;
		case 'h': arg_noheader = true; break;
		case 'o': arg_format = optarg; arg_fields = NULL; break;
		case 'O': arg_fields = optarg; arg_format = NULL; break;
		case 'a': break;
		case OPT_JSON: arg_json = true; break;
		case 'M': break;   /* one pool, one "cluster": any name is it */
		case OPT_CONF: arg_conf = optarg; break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:   /* '?' or ':' */
			return cmd_getopt_fail(c, argv);
		}
	}
	if (optind < argc)
		return cmd_slurm_extra(argv[optind]);
	if (arg_states) {
		static const char *const known[] = { "idle", "mix", "mixed", "alloc", "allocated", "down", "down*",
						     "drain", "drained", "drng", "draining", NULL };

		for (const char *p = arg_states; *p;) {
			const char *end = strchrnul(p, ',');
			bool ok = false;

			for (int k = 0; known[k]; k++)
				ok |= strlen(known[k]) == (size_t)(end - p) && strncasecmp(known[k], p, (size_t)(end - p)) == 0;
			if (!ok)
				return cmd_fail(1, "error: Invalid node state specified: %.*s", (int)(end - p), p);
			p = *end ? end + 1 : end;
		}
	}
	if (arg_resv) {
		/* sinfo -T: the reservations the user may use (docs/RESERVATIONS.md). */
		json_t *reply = NULL, *o;
		size_t i;

		if (client_open(arg_conf, &cl, &err) < 0)
			return cmd_fail(1, "error: %s", err.text);
		if (client_call(cl, json_pack("{s:s}", "op", "resv"), &reply, &err) < 0) {
			client_close(cl);
			return cmd_fail(1, "error: %s", err.text);
		}
		if (!json_array_size(json_object_get(reply, "reservations")))
			printf("No reservations in the system\n");
		else if (!arg_noheader)
			slurmresv_sinfo_head();
		json_array_foreach(json_object_get(reply, "reservations"), i, o) {
			slurmresv_sinfo_line(o);
		}
		json_decref(reply);
		client_close(cl);
		return fflush(stdout) != 0 ? cmd_fail(1, "cannot write: %s", strerror(errno)) : 0;
	}
	if (!arg_json && arg_fields && (n_items = fields_parse(arg_fields, items, 32)) < 0)
		return 1;
	if (!arg_json && !arg_fields &&
	    (n_items = format_parse(arg_format ? arg_format : arg_reasons ? REASON_FORMAT :
				   arg_node_lines ? NODE_FORMAT : DEFAULT_FORMAT, items, 32)) < 0)
		return 1;
	if (client_open(arg_conf, &cl, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	if (client_call_pages(cl, json_pack("{s:s}", "op", "queues"), "queues", &qreply, &err) < 0 ||
	    client_call_pages(cl, json_pack("{s:s}", "op", "nodes"), "nodes", &nreply, &err) < 0)
		status = cmd_fail(1, "error: %s", err.text);
	else
		status = show(json_object_get(qreply, "queues"), json_object_get(nreply, "nodes"));
	json_decref(qreply);
	json_decref(nreply);
	client_close(cl);
	if (fflush(stdout) != 0 && status == 0)
		status = cmd_fail(1, "cannot write: %s", strerror(errno));
	return status;
}
