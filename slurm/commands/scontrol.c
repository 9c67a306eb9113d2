/* SPDX-License-Identifier: MIT */
/* scontrol: Slurm's show job|node|partition, hold, release, requeue and update JobId= over qpool's ops. */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "client.h"
#include "gpu.h"
#include "cmd.h"
#include "hostlist.h"
#include "jobattr.h"
#include "slurmfmt.h"
#include "slurmjobs.h"
#include "slurmresv.h"
#include "slurmsel.h"
#include "slurmtext.h"
#include "timeutil.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"Usage: scontrol [-o] [--json] show job [JOBID] | show node [NAME] | show partition [NAME]\n"
	"       scontrol show hostnames|hostlist|hostlistsorted [HOSTLIST] | show config | show licenses [NAME]\n"
	"       scontrol hold|release|requeue JOBID[,JOBID...]...\n"
	"       scontrol suspend|resume JOBID[,JOBID...]...  (root)\n"
	"       scontrol update JobId=JOBID [TimeLimit=TIME] [JobName=NAME] [NumCPUs=N] [StartTime=TIME]\n"
	"       scontrol update NodeName=NODES State=DRAIN|DOWN|RESUME|UNDRAIN [Reason=TEXT]  (root)\n"
	"       scontrol create|update reservation ReservationName=NAME StartTime=TIME Duration=TIME|EndTime=TIME\n"
	"                Nodes=LIST|ALL|NodeCnt=N Users=|Groups=|Accounts=LIST Flags=MAINT,IGNORE_JOBS,DAILY,WEEKLY  (root)\n"
	"       scontrol delete ReservationName=NAME  (root);  scontrol show reservation [NAME]\n"
	"Shows and controls qpool's jobs, nodes and queues as Slurm's scontrol.\n"
	"  -o, --oneliner    each record on one line\n"
	"      --json        show job as Slurm's JSON document\n"
	"      --conf FILE   configuration file\n"
	"      --help        show this help\n";

/* Slurm's wait before a requeued job may start again, seconds. */
#define SCONTROL_REQUEUE_DELAY 121

static const char *arg_conf;
static bool arg_oneline, arg_json;

/* Slurm's record layout: "Key=Value" words, a new indented line where
 * the record breaks (one line with -o). */
static void kv(bool *first_on_line, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void kv(bool *first_on_line, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (!*first_on_line)
		fputc(' ', stdout);
	*first_on_line = false;
	printf("%s=", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

static void brk(bool *first_on_line)
{
	fputs(arg_oneline ? " " : "\n   ", stdout);
	*first_on_line = true;
}

static const char *nn(const char *s)
{
	return s && *s ? s : "(null)";
}

/* Slurm's "show hostnames|hostlist|hostlistsorted [LIST]", which needs
 * no server: the list given, else the job's SLURM_JOB_NODELIST (PSI/J's
 * and submitit's job scripts run "scontrol show hostnames" bare). */
enum hosts_show { HOSTS_NAMES, HOSTS_LIST, HOSTS_SORTED };

static int show_hosts(enum hosts_show how, const char *list)
{
	char **names = NULL, *buf = NULL;
	int n, status = 0;

	if (!list)
		list = getenv("SLURM_JOB_NODELIST");
	if (!list)
		list = getenv("SLURM_NODELIST");
	if (!list || !*list)
		return cmd_fail(1, "error: host list is empty");
	/* 65536 names: Slurm's MAX_RANGE, so "n[1-999999999]" is refused. */
	n = hostlist_expand(list, 65536, &names);
	if (n == -E2BIG)
		return cmd_fail(1, "error: Too many ranges, can't process entire list");
	if (n < 0)
		return cmd_fail(1, "error: Invalid hostlist: %s", list);
	if (how == HOSTS_NAMES) {
		for (int i = 0; i < n; i++)
			puts(names[i]);
	} else {
		const char *const *v = (const char *const *)names;
		int len = how == HOSTS_SORTED ? hostlist_compress(v, (size_t)n, NULL, 0)
					      : hostlist_compress_ordered(v, (size_t)n, NULL, 0);

		if (len < 0 || !(buf = malloc((size_t)len + 1))) {
			status = cmd_fail(1, "error: %s", strerror(ENOMEM));
		} else {
			if (how == HOSTS_SORTED)
				hostlist_compress(v, (size_t)n, buf, (size_t)len + 1);
			else
				hostlist_compress_ordered(v, (size_t)n, buf, (size_t)len + 1);
			puts(buf);
		}
	}
	free(buf);
	hostlist_free(names, (size_t)n);
	return status;
}

/* The host-list entity named by what (Slurm's abbreviations: at least
 * "hostn", "hostl", "hostlists"), or -1. */
static int hosts_entity(const char *what)
{
	size_t len = strlen(what);

	if (len >= 5 && strncasecmp(what, "hostnames", len) == 0)
		return HOSTS_NAMES;
	if (len >= 5 && strncasecmp(what, "hostlist", len) == 0)
		return HOSTS_LIST;
	if (len >= 9 && strncasecmp(what, "hostlistsorted", len) == 0)
		return HOSTS_SORTED;
	return -1;
}

/* "show config": the few of Slurm's keys qpool can state truly, in
 * its "%-23s = %s" layout. Snakemake's Slurm plugin reads MinJobAge
 * (how long squeue still shows an ended job) to judge squeue's answers. */
static int show_config(void)
{
	char stamp[32];

	slurmfmt_stamp(stamp, sizeof(stamp), time_wall_ns(), "Unknown");
	printf("Configuration data as of %s\n", stamp);
	printf("%-23s = %s\n", "AccountingStorageType", "accounting_storage/qpool");
	printf("%-23s = %s\n", "ClusterName", "qpool");
	printf("%-23s = %d sec\n", "MinJobAge", SLURMJOBS_MIN_JOB_AGE);
	return 0;
}

static void job_show(const json_t *job, int64_t now)
{
	char buf[4096], id[64], nodes[1024], limit[32], run[32], t[4][32];
	const json_t *times = json_object_get(job, "times");
	bool task = json_is_integer(json_object_get(job, "array_id"));
	struct slurmfmt_tasks req;
	bool first = true, ended = slurmfmt_job_end_ns(job) != 0;
	long long wt = wire_int(job, "walltime", 0), uid = wire_int(job, "uid", 0), begin;
	int count;

	slurmfmt_job_id(job, id, sizeof(id));
	slurmfmt_job_nodes(job, nodes, sizeof(nodes), &count);
	if (wt > 0)
		slurmfmt_elapsed(limit, sizeof(limit), wt);
	else
		snprintf(limit, sizeof(limit), "UNLIMITED");
	slurmfmt_elapsed(run, sizeof(run), slurmfmt_job_ran_secs(job, now));
	slurmfmt_stamp(t[0], sizeof(t[0]), wire_int(times, "submit", 0), "Unknown");
	slurmfmt_stamp(t[1], sizeof(t[1]), slurmfmt_job_start_ns(job), "Unknown");
	slurmfmt_stamp(t[2], sizeof(t[2]), slurmfmt_job_end_ns(job), "Unknown");
	/* Eligible from its submission, or its begin time if later
	 * (sbatch --begin, qsub -a, scontrol update StartTime=). */
	begin = strtoll(nn(wire_str(json_object_get(job, "attrs"), "Execution_Time")), NULL, 10) * NSEC_PER_SEC;
	slurmfmt_stamp(t[3], sizeof(t[3]), begin > wire_int(times, "submit", 0) ? begin : wire_int(times, "submit", 0),
		       "Unknown");
	kv(&first, "JobId", "%lld", wire_int(job, "jobid", 0));
	if (task) {
		kv(&first, "ArrayJobId", "%lld", wire_int(job, "array_id", 0));
		kv(&first, "ArrayTaskId", "%lld", wire_int(job, "array_index", 0));
	}
	kv(&first, "JobName", "%s", nn(wire_str(job, "name")));
	brk(&first);
	kv(&first, "UserId", "%s(%lld)", nn(wire_str(job, "owner")), uid);
	kv(&first, "GroupId", "%lld(%lld)", wire_int(job, "gid", 0), wire_int(job, "gid", 0));
	kv(&first, "MCS_label", "N/A");
	brk(&first);
	kv(&first, "Priority", "%lld", wire_int(job, "priority", 0));
	kv(&first, "Nice", "0");
	kv(&first, "Account", "%s", nn(wire_str(json_object_get(job, "attrs"), "Account_Name")));
	kv(&first, "QOS", "%s", wire_str(json_object_get(job, "attrs"), "Resource_List.qos") ?: "normal");
	brk(&first);
	kv(&first, "JobState", "%s", slurmfmt_state(job));
	kv(&first, "Reason", "%s", slurmfmt_reason(job, now));
	slurmfmt_dependency(job, now, buf, sizeof(buf));
	kv(&first, "Dependency", "%s", buf);
	brk(&first);
	kv(&first, "Requeue", "%d", wire_bool(job, "rerunnable", 1) ? 1 : 0);
	kv(&first, "Restarts", "%lld", slurmfmt_job_restarts(job));
	kv(&first, "BatchFlag", "1");
	kv(&first, "Reboot", "0");
	slurmfmt_field_value(slurmfmt_field_name("ExitCode", SLURMFMT_SACCT), SLURMFMT_SACCT, job, now, buf,
			     sizeof(buf));
	kv(&first, "ExitCode", "%s", buf);
	brk(&first);
	kv(&first, "RunTime", "%s", run);
	kv(&first, "TimeLimit", "%s", limit);
	kv(&first, "TimeMin", "N/A");
	brk(&first);
	kv(&first, "SubmitTime", "%s", t[0]);
	kv(&first, "EligibleTime", "%s", t[3]);
	brk(&first);
	kv(&first, "StartTime", "%s", t[1]);
	kv(&first, "EndTime", "%s", t[2]);
	kv(&first, "Deadline", "N/A");
	brk(&first);
	kv(&first, "Partition", "%s", nn(wire_str(job, "queue")));
	if (wire_str(json_object_get(job, "attrs"), "reservation"))
		kv(&first, "Reservation", "%s", wire_str(json_object_get(job, "attrs"), "reservation"));
	brk(&first);
	/* What the job asked of its nodes (docs/RESOURCES.md). */
	kv(&first, "ReqNodeList", "%s", nn(wire_str(json_object_get(job, "attrs"), "Resource_List.nodelist")));
	kv(&first, "ExcNodeList", "%s", nn(wire_str(json_object_get(job, "attrs"), "Resource_List.exclude")));
	brk(&first);
	kv(&first, "NodeList", "%s", count ? nodes : "(null)");
	/* A pending job's expected nodes, with its start estimate. */
	if (wire_str(job, "estimated_exec_vnode")) {
		slurmfmt_field_value(slurmfmt_field_name("SchedNodes", SLURMFMT_SQUEUE), SLURMFMT_SQUEUE, job, now, buf,
				     sizeof(buf));
		kv(&first, "SchedNodeList", "%s", buf);
	}
	brk(&first);
	slurmfmt_job_tasks(job, &req);
	kv(&first, "NumNodes", "%lld", req.nodes);
	kv(&first, "NumCPUs", "%lld", slurmfmt_job_cpus(job));
	kv(&first, "NumTasks", "%lld", req.tasks);
	kv(&first, "CPUs/Task", "%lld", req.cpus_per_task);
	brk(&first);
	/* TRES counts the job's whole memory; MinMemoryNode is a node's. */
	if (wire_int(job, "mem", 0) > 0) {
		slurmfmt_field_value(slurmfmt_field_name("ReqMem", SLURMFMT_SACCT), SLURMFMT_SACCT, job, now, buf,
				     sizeof(buf));
		kv(&first, "TRES", "cpu=%lld,mem=%s,node=%lld", slurmfmt_job_cpus(job), buf, req.nodes);
		brk(&first);
		slurmfmt_size(buf, sizeof(buf), req.mem_per_node ? req.mem_per_node : wire_int(job, "mem", 0));
		kv(&first, "MinMemoryNode", "%s", buf);
	} else {
		kv(&first, "TRES", "cpu=%lld,node=%lld", slurmfmt_job_cpus(job), req.nodes);
		brk(&first);
		kv(&first, "MinMemoryNode", "0");
	}
	brk(&first);
	kv(&first, "Features", "%s", nn(wire_str(json_object_get(job, "attrs"), "Resource_List.constraint")));
	brk(&first);
	kv(&first, "Licenses", "%s", nn(wire_str(json_object_get(job, "attrs"), "Resource_List.licenses")));
	brk(&first);
	kv(&first, "WorkDir", "%s", nn(wire_str(job, "workdir")));
	brk(&first);
	/* What qpool recorded of how the job went wrong (qstat -f's
	 * comment): an output kept elsewhere, a working directory missing. */
	if (ended && wire_str(job, "reason") && *wire_str(job, "reason")) {
		kv(&first, "Comment", "%s", wire_str(job, "reason"));
		brk(&first);
	}
	/* Where the output went (joined, -j oe or sbatch without --error:
	 * both in the output file; kept in HOME when the node could not
	 * write there). */
	slurmfmt_job_output(job, true, buf, sizeof(buf));
	kv(&first, "StdErr", "%s", nn(buf));
	brk(&first);
	kv(&first, "StdIn", "/dev/null");
	brk(&first);
	slurmfmt_job_output(job, false, buf, sizeof(buf));
	kv(&first, "StdOut", "%s", nn(buf));
	fputs(arg_oneline ? "\n" : "\n\n", stdout);
}

static int show_jobs(struct client *cl, const char *arg)
{
	struct slurmsel sel;
	json_t *jobs = NULL;
	struct error err;
	int64_t now = time_wall_ns();
	size_t i;
	json_t *job;
	int status = 0;

	slurmsel_init(&sel);
	if (arg && slurmsel_ids_add(&sel, arg, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	/* Without an id: the jobs not ended long ago, as slurmctld keeps them. */
	if (slurmjobs_fetch(cl, &sel, arg ? SLURMJOBS_ANY : SLURMJOBS_RECENT, now, &jobs, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	if (arg && json_array_size(jobs) == 0) {
		json_decref(jobs);
		return cmd_fail(1, "slurm_load_jobs error: Invalid job id specified");
	}
	if (arg_json) {
		json_t *doc = slurmjobs_json(jobs, now), *list = json_array();

		json_array_foreach(jobs, i, job) {
			json_array_append_new(list, slurmjobs_job_json(job, now));
		}
		json_object_set_new(doc, "jobs", list);
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(doc);
	} else if (json_array_size(jobs) == 0) {
		puts("No jobs in the system");
	} else {
		json_array_foreach(jobs, i, job) {
			job_show(job, now);
		}
	}
	json_decref(jobs);
	return status;
}

static const char *node_state_upper(const json_t *node)
{
	const char *state = wire_str(node, "state") ? wire_str(node, "state") : "down";
	size_t jobs = json_array_size(json_object_get(node, "jobs"));
	long long free_cpus = wire_int(node, "free", 0), ncpus = wire_int(node, "ncpus", 0);

	if (strcmp(state, "drained") == 0)
		return jobs ? "DRAINING" : "DRAINED";
	if (strcmp(state, "up") != 0)
		return "DOWN*";
	if (jobs == 0 || free_cpus == ncpus)
		return "IDLE";
	return free_cpus == 0 ? "ALLOCATED" : "MIXED";
}

/* "show reservation [NAME]": those the user may use, in Slurm's layout. */
static int show_resv(struct client *cl, const char *name)
{
	json_t *reply = NULL, *o;
	struct error err;
	size_t i, shown = 0;

	if (client_call(cl, json_pack("{s:s}", "op", "resv"), &reply, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	json_array_foreach(json_object_get(reply, "reservations"), i, o) {
		if (name && strcmp(name, nn(wire_str(o, "name"))) != 0)
			continue;
		shown++;
		slurmresv_show(o, arg_oneline);
	}
	json_decref(reply);
	if (name && !shown)
		return cmd_fail(1, "Reservation %s not found", name);
	if (!shown)
		printf("No reservations in the system\n");
	return 0;
}

/* create|update reservation KEY=VALUE..., delete ReservationName=NAME. */
static int resv_change(struct client *cl, const char *action, int n, char **args)
{
	json_t *req, *reply = NULL;
	struct error err;
	char why[200];
	int r;

	if (!strcmp(action, "delete")) {
		const char *name = n != 1 ? NULL : !strncasecmp(args[0], "ReservationName=", 16) ? args[0] + 16 :
				   !strncasecmp(args[0], "Reservation=", 12) ? args[0] + 12 : NULL;

		if (!name)
			return cmd_fail(1, "error: Invalid input: delete ReservationName=NAME");
		req = json_pack("{s:s, s:s, s:s}", "op", "resv", "action", "delete", "name", name);
	} else {
		req = slurmresv_request(action, n, args, time(NULL), why, sizeof(why));
		if (!req)
			return cmd_fail(1, "Error %s the reservation: %s", action[0] == 'c' ? "creating" : "updating",
					errno == ENOMEM ? "out of memory" : why);
		if (!strcmp(action, "update") && !wire_str(req, "name")) {
			json_decref(req);
			return cmd_fail(1, "error: Reservation must be given.  No reservation update.");
		}
	}
	if (!req)
		return cmd_fail(1, "out of memory");
	r = client_call(cl, req, &reply, &err);
	if (r < 0) {
		json_decref(reply);
		return cmd_fail(1, "Error %s the reservation: %s",
				action[0] == 'c' ? "creating" : action[0] == 'u' ? "updating" : "deleting", err.text);
	}
	if (!strcmp(action, "create"))
		printf("Reservation created: %s\n", nn(wire_str(json_object_get(reply, "reservation"), "name")));
	else if (!strcmp(action, "update"))
		printf("Reservation updated.\n");
	json_decref(reply);
	return 0;
}

/* "show licenses [NAME]": the pool's [licenses] in Slurm's layout. Reserved
 * is 0 (qpool has no advance reservations) and Remote no. */
static int show_licenses(struct client *cl, const char *name)
{
	json_t *reply = NULL, *o;
	struct error err;
	size_t i, shown = 0;

	if (client_call(cl, json_pack("{s:s}", "op", "queues"), &reply, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	json_array_foreach(json_object_get(reply, "licenses"), i, o) {
		long long total = wire_int(o, "total", 0), used = wire_int(o, "used", 0);

		if (name && strcmp(name, wire_str(o, "name") ? wire_str(o, "name") : "") != 0)
			continue;
		shown++;
		printf("LicenseName=%s%sTotal=%lld Used=%lld Free=%lld Reserved=0 Remote=no\n", nn(wire_str(o, "name")),
		       arg_oneline ? " " : "\n    ", total, used, total > used ? total - used : 0);
	}
	json_decref(reply);
	if (name && !shown)
		return cmd_fail(1, "error: license %s not found", name);
	if (!shown)
		printf("No licenses configured\n");
	return 0;
}

static int show_list(struct client *cl, const char *what, const char *name)
{
	bool nodes = strcmp(what, "nodes") == 0;
	json_t *reply = NULL, *qreply = NULL, *list, *queues;
	struct error err;
	char partitions[1024] = "";
	size_t i, shown = 0;
	json_t *o;

	if (client_call_pages(cl, json_pack("{s:s}", "op", "queues"), "queues", &qreply, &err) < 0 ||
	    client_call_pages(cl, json_pack("{s:s}", "op", "nodes"), "nodes", &reply, &err) < 0) {
		json_decref(qreply);
		return cmd_fail(1, "error: %s", err.text);
	}
	queues = json_object_get(qreply, "queues");
	list = nodes ? json_object_get(reply, "nodes") : queues;
	json_array_foreach(queues, i, o) {
		size_t n = strlen(partitions);

		snprintf(partitions + n, sizeof(partitions) - n, "%s%s", n ? "," : "", wire_str(o, "name"));
	}
	json_array_foreach(list, i, o) {
		bool first = true;

		if (name && strcmp(name, wire_str(o, "name") ? wire_str(o, "name") : "") != 0)
			continue;
		shown++;
		if (nodes) {
			const json_t *topo = json_object_get(o, "topology");
			long long ncpus = wire_int(o, "ncpus", 0);
			char gres[256];

			kv(&first, "NodeName", "%s", wire_str(o, "name"));
			kv(&first, "CoresPerSocket", "%lld",
			   wire_int(topo, "cores", 1) / (wire_int(topo, "packages", 1) ? wire_int(topo, "packages", 1) : 1));
			brk(&first);
			kv(&first, "CPUAlloc", "%lld", ncpus - wire_int(o, "free", 0));
			kv(&first, "CPUEfctv", "%lld", ncpus);
			kv(&first, "CPUTot", "%lld", ncpus);
			kv(&first, "CPULoad", "N/A");
			brk(&first);
			kv(&first, "AvailableFeatures", "%s", wire_str(o, "features") && *wire_str(o, "features") ?
			   wire_str(o, "features") : "(null)");
			brk(&first);
			kv(&first, "ActiveFeatures", "%s", wire_str(o, "features") && *wire_str(o, "features") ?
			   wire_str(o, "features") : "(null)");
			brk(&first);
			/* Its GPUs by model (docs/GPUS.md), then its counted
			 * resources (docs/RESOURCES.md), as sinfo %G. */
			{
				const char *res = wire_str(o, "gres") ? wire_str(o, "gres") : "";

				gpu_gres_format(json_object_get(o, "gpus"), false, gres, sizeof(gres));
				if (gres[0] || *res)
					kv(&first, "Gres", "%s%s%s", gres, gres[0] && *res ? "," : "", res);
				else
					kv(&first, "Gres", "(null)");
				brk(&first);
			}
			kv(&first, "NodeAddr", "%s", wire_str(o, "name"));
			kv(&first, "NodeHostName", "%s", wire_str(o, "name"));
			brk(&first);
			kv(&first, "RealMemory", "%lld", wire_int(topo, "mem", 0) / (1024 * 1024));
			/* Memory counted: what jobs hold, and what they do not. */
			kv(&first, "AllocMem", "%lld", wire_int(o, "mem_assigned", 0) / (1024 * 1024));
			if (json_object_get(o, "mem_free"))
				kv(&first, "FreeMem", "%lld", wire_int(o, "mem_free", 0) / (1024 * 1024));
			else
				kv(&first, "FreeMem", "N/A");
			kv(&first, "Sockets", "%lld", wire_int(topo, "packages", 1));
			brk(&first);
			kv(&first, "State", "%s", node_state_upper(o));
			brk(&first);
			kv(&first, "Partitions", "%s", partitions);
			if (wire_str(o, "reason")) {
				brk(&first);
				time_t t = (time_t)wire_int(o, "drained_at", 0);
				char when[32] = "Unknown";
				struct tm tm;

				if (t > 0 && localtime_r(&t, &tm))
					strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
				/* Slurm's "Reason=... [user@time]": who is admin, health or hook. */
				kv(&first, "Reason", "%s [%s@%s]", wire_str(o, "reason"),
				   wire_str(o, "drained_by") ? wire_str(o, "drained_by") : "admin", when);
			}
		} else {
			json_t *nl = json_object_get(reply, "nodes"), *nd;
			const char *names[1024];
			char hl[4096] = "", mt[32];
			size_t k, n = 0;
			long long cpus = 0;
			bool enabled = wire_bool(o, "enabled", 1), started = wire_bool(o, "started", 1);

			json_array_foreach(nl, k, nd) {
				if (n < 1024)
					names[n++] = wire_str(nd, "name");
				cpus += wire_int(nd, "ncpus", 0);
			}
			if (n)
				hostlist_compress(names, n, hl, sizeof(hl));
			kv(&first, "PartitionName", "%s", wire_str(o, "name"));
			brk(&first);
			kv(&first, "AllowGroups", "ALL");
			kv(&first, "AllowAccounts", "ALL");
			kv(&first, "AllowQos", "ALL");
			brk(&first);
			kv(&first, "Default", "%s", wire_bool(o, "default", 0) ? "YES" : "NO");
			kv(&first, "QoS", "N/A");
			brk(&first);
			slurmfmt_elapsed(mt, sizeof(mt), wire_int(o, "walltime_default", 0));
			kv(&first, "DefaultTime", "%s", wire_int(o, "walltime_default", 0) > 0 ? mt : "NONE");
			slurmfmt_elapsed(mt, sizeof(mt), wire_int(o, "walltime_max", 0));
			kv(&first, "MaxTime", "%s", wire_int(o, "walltime_max", 0) > 0 ? mt : "UNLIMITED");
			brk(&first);
			kv(&first, "Nodes", "%s", n ? hl : "(null)");
			brk(&first);
			kv(&first, "PriorityTier", "%lld", wire_int(o, "priority", 0));
			brk(&first);
			kv(&first, "State", "%s", enabled && started ? "UP" : enabled ? "DOWN" : started ? "DRAIN" : "INACTIVE");
			kv(&first, "TotalCPUs", "%lld", cpus);
			kv(&first, "TotalNodes", "%zu", n);
			brk(&first);
			/* Slurm's TRES line, which Open OnDemand reads per queue. */
			kv(&first, "TRES", "cpu=%lld,node=%zu,billing=%lld", cpus, n, cpus);
		}
		fputs(arg_oneline ? "\n" : "\n\n", stdout);
	}
	json_decref(reply);
	json_decref(qreply);
	if (name && shown == 0)
		return cmd_fail(1, nodes ? "error: Node %s not found" : "error: Partition %s not found", name);
	return 0;
}

/* hold, release, requeue: each id of each argument. */
static int job_op(struct client *cl, const char *op, int n, char **args)
{
	struct slurmsel sel;
	struct error err;
	int status = 0;

	slurmsel_init(&sel);
	if (n == 0)
		return cmd_fail(1, "error: Invalid job id specified");
	for (int k = 0; k < n; k++)
		if (slurmsel_ids_add(&sel, args[k], &err) < 0)
			return cmd_fail(1, "error: %s", err.text);
	for (int k = 0; k < sel.n_ids; k++) {
		bool susp = strcmp(op, "suspend") == 0 || strcmp(op, "resume") == 0;
		json_t *req = json_pack("{s:s, s:I}", "op", susp ? "suspend" : op, "jobid", (json_int_t)sel.ids[k].id),
		       *reply = NULL;
		int r;

		if (sel.ids[k].index >= 0) {
			json_object_set_new(req, "array_index", json_integer(sel.ids[k].index));
			json_object_set_new(req, "array_last", json_integer(sel.ids[k].index));
		}
		/* Slurm's requeued job waits: its begin time is the requeue's
		 * end plus 121 s (requeue_delay, cred_expire's 120 s, + 1). */
		if (strcmp(op, "rerun") == 0)
			json_object_set_new(req, "begin", json_integer((json_int_t)time(NULL) + SCONTROL_REQUEUE_DELAY));
		if (strcmp(op, "resume") == 0)
			json_object_set_new(req, "resume", json_true());
		r = client_call(cl, req, &reply, &err);
		json_decref(reply);
		if (r < 0 && susp)
			status = cmd_fail(1, "error: Error %s job %lld: %s", strcmp(op, "resume") == 0 ? "resuming" : "suspending",
					  (long long)sel.ids[k].id, err.text);
		else if (r == -EBUSY)
			status = cmd_fail(1, "error: Job is no longer pending execution for job %lld", (long long)sel.ids[k].id);
		else if (r < 0)
			status = cmd_fail(1, "error: %s for job %lld", slurmjobs_error(r, &err), (long long)sel.ids[k].id);
	}
	return status;
}

/* update NodeName=LIST State=DRAIN|DOWN|RESUME|UNDRAIN|IDLE [Reason=TEXT]:
 * the admin op's drain and resume, node by node, by whoever cmd_drain_by
 * says (LBNL NHC's forms: docs/HOOKS.md). DOWN drains too: qpool lets a
 * node's running jobs finish (an admin cancels them with scancel -w). */
static int node_update(struct client *cl, int n, char **args)
{
	const char *names = NULL, *state = NULL, *reason = NULL, *action;
	char **list = NULL;
	int status = 0, count;

	for (int k = 0; k < n; k++) {
		char *eq = strchr(args[k], '=');
		size_t klen = eq ? (size_t)(eq - args[k]) : 0;

		if (eq && klen == 8 && strncasecmp(args[k], "NodeName", 8) == 0)
			names = eq + 1;
		else if (eq && klen == 5 && strncasecmp(args[k], "State", 5) == 0)
			state = eq + 1;
		else if (eq && klen == 6 && strncasecmp(args[k], "Reason", 6) == 0)
			reason = eq + 1;
		else if (!eq)
			return cmd_fail(1, "error: Invalid input: %s\nRequest aborted", args[k]);
		else
			return cmd_fail(1, "error: Update of this parameter is not supported: %s\nRequest aborted",
					args[k]);
	}
	if (!names || !*names)
		return cmd_fail(1, "error: Invalid node name specified\nRequest aborted");
	if (!state)
		return cmd_fail(1, "error: No changes specified\nRequest aborted");
	if (strcasecmp(state, "DRAIN") == 0 || strcasecmp(state, "DOWN") == 0)
		action = "drain";
	else if (strcasecmp(state, "RESUME") == 0 || strcasecmp(state, "UNDRAIN") == 0 ||
		 strcasecmp(state, "IDLE") == 0)
		action = "resume";
	else
		return cmd_fail(1, "error: Invalid node state specified: %s (qpool takes DRAIN, DOWN, RESUME, UNDRAIN)\n"
				"Request aborted", state);
	/* Slurm asks for a reason with a drain or down, and so do we. */
	if (strcmp(action, "drain") == 0 && (!reason || !*reason))
		return cmd_fail(1, "error: You must specify a reason when DOWNING or DRAINING a node. Request denied");
	if (reason && strlen(reason) >= 128)
		return cmd_fail(1, "error: Reason: at most 127 bytes\nRequest aborted");
	count = hostlist_expand(names, 4096, &list);
	if (count <= 0)
		return cmd_fail(1, "error: Invalid node name specified: %s\nRequest aborted", names);
	for (int k = 0; k < count; k++) {
		json_t *req = json_pack("{s:s, s:s, s:s, s:s}", "op", "admin", "action", action, "target", list[k],
					"by", cmd_drain_by()), *reply = NULL;
		struct error err;
		int r;

		if (req && reason && strcmp(action, "drain") == 0)
			json_object_set_new(req, "reason", json_string(reason));
		r = client_call(cl, req, &reply, &err);
		json_decref(reply);
		if (r == -EPERM && strstr(err.text, "only root"))
			status = cmd_fail(1, "slurm_update error: Access/permission denied");
		else if (r == -ENOENT)
			status = cmd_fail(1, "slurm_update error: Invalid node name specified (%s)", list[k]);
		else if (r < 0)
			status = cmd_fail(1, "slurm_update error: %s", err.text);
	}
	hostlist_free(list, (size_t)count);
	return status;
}

/* The job's attribute name as a count (jobattr_mpiprocs' rule), else 0. */
static long long job_attr_count(const json_t *job, const char *name)
{
	uint64_t n;

	return jobattr_mpiprocs(wire_str(json_object_get(job, "attrs"), name), &n) ? (long long)n : 0;
}

/* NumCPUs=ncpus of the one-node job idtext names keeps its tasks, as
 * Slurm's does: sbatch's --ntasks (Slurm_ntasks) or the MPI slots the job
 * asked for (mpiprocs) stay its slots, so that PBS_NODEFILE and
 * SLURM_TASKS_PER_NODE still count them; a job whose slots are its CPUs
 * (qsub -l ncpus=N) follows the new count. The shape qsub wrote beside
 * them (select=, nodes=, ompthreads=) goes, as with qalter -l. Into
 * req's "attrs"; 0, or an exit status after a message. */
static int update_cpus(struct client *cl, const char *idtext, long long ncpus, json_t *req)
{
	struct slurmsel sel;
	json_t *jobs = NULL, *job, *attrs, *expect;
	struct error err;
	long long tasks;

	slurmsel_init(&sel);
	if (slurmsel_ids_add(&sel, idtext, &err) < 0)
		return cmd_fail(1, "error: Invalid job id specified: %s", idtext);
	if (slurmjobs_fetch(cl, &sel, SLURMJOBS_ANY, time_wall_ns(), &jobs, &err) < 0)
		return cmd_fail(1, "slurm_update error: %s", err.text);
	job = json_array_get(jobs, 0);
	/* No such job, or one across nodes: qpoold's refusal says so. */
	if (!job || json_array_size(json_object_get(job, "chunks"))) {
		json_decref(jobs);
		return 0;
	}
	/* the tasks, the first of these that counts; and what they were read
	 * from, which qpoold checks still holds when it alters */
	tasks = 0;
	expect = json_object();
	for (size_t i = 0; expect && i < 2; i++) {
		const char *name = i ? "Resource_List.mpiprocs" : "Slurm_ntasks";
		const char *v = wire_str(json_object_get(job, "attrs"), name);

		if (!tasks)
			tasks = job_attr_count(job, name);
		json_object_set_new(expect, name, v ? json_string(v) : json_null());
	}
	json_decref(jobs);
	if (!expect || json_object_set_new(req, "expect", expect) < 0)
		return cmd_fail(1, "out of memory");
	if (tasks > ncpus)
		return cmd_fail(1, "error: NumCPUs=%lld: fewer CPUs than the job's %lld tasks (qpool cannot change "
				"NumTasks: scancel the job and submit it again)\nRequest aborted", ncpus, tasks);
	attrs = json_object();
	for (size_t i = 0; attrs && i < JOBATTR_SHAPE_N; i++)
		json_object_set_new(attrs, jobattr_shape[i], json_null());
	if (attrs) {
		char text[24];

		snprintf(text, sizeof(text), "%lld", tasks);
		json_object_set_new(attrs, "Resource_List.mpiprocs",
				    tasks && tasks != ncpus ? json_string(text) : json_null());
	}
	if (!attrs || json_object_set_new(req, "attrs", attrs) < 0)
		return cmd_fail(1, "out of memory");
	return 0;
}

/* update JobId=N Key=Value...: the alter op. */
static int update(struct client *cl, int n, char **args)
{
	json_t *req = json_pack("{s:s}", "op", "alter"), *reply = NULL;
	struct slurmsel_id id = { .id = 0, .index = -1 };
	const char *idtext = NULL;
	struct error err;
	int r;

	if (!req)
		return cmd_fail(1, "out of memory");
	for (int k = 0; k < n; k++) {
		char *eq = strchr(args[k], '=');
		const char *v = eq ? eq + 1 : "";
		size_t klen = eq ? (size_t)(eq - args[k]) : strlen(args[k]);
		int64_t secs;
		char *end;
		long long ncpus;
		time_t when;

#define KEY(name) (klen == strlen(name) && strncasecmp(args[k], name, klen) == 0)
		if (!eq) {
			r = cmd_fail(1, "error: Invalid input: %s\nRequest aborted", args[k]);
			goto done;
		}
		if (KEY("JobId")) {
			if (slurmsel_id_parse(v, &id) < 0) {
				r = cmd_fail(1, "error: Invalid job id specified: %s", v);
				goto done;
			}
			idtext = v;
		} else if (KEY("TimeLimit")) {
			if (slurm_time_parse(v, &secs) < 0) {
				r = cmd_fail(1, "error: Invalid TimeLimit value: %s\nRequest aborted", v);
				goto done;
			}
			if (secs == 0) {
				r = cmd_fail(1, "error: TimeLimit=UNLIMITED: qpool's jobs have a time limit (the queue's walltime_max at most)\nRequest aborted");
				goto done;
			}
			json_object_set_new(req, "walltime", json_integer(secs));
		} else if (KEY("StartTime") || KEY("BeginTime")) {
			/* Slurm's forms: now+N[units], HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]],
			 * MM/DD[/YY], midnight, noon, today, tomorrow (slurmtext.h).
			 * A running job keeps it for its start after a requeue. */
			if (slurm_when_parse(v, time(NULL), true, &when) < 0) {
				r = cmd_fail(1, "error: Invalid time specification %s\nRequest aborted", v);
				goto done;
			}
			json_object_set_new(req, "begin", json_integer((json_int_t)when));
		} else if (KEY("JobName") || KEY("Name")) {
			json_object_set_new(req, "name", json_string(v));
		} else if (KEY("NumCPUs") || KEY("MinCPUsNode")) {
			ncpus = strtoll(v, &end, 10);
			if (!*v || *end || ncpus <= 0 || ncpus > 1000000) {
				r = cmd_fail(1, "error: Invalid NumCPUs value: %s\nRequest aborted", v);
				goto done;
			}
			json_object_set_new(req, "ncpus", json_integer(ncpus));
		} else {
			r = cmd_fail(1, "error: Update of this parameter is not supported: %s\nRequest aborted", args[k]);
			goto done;
		}
#undef KEY
	}
	if (id.id == 0) {
		r = cmd_fail(1, "error: No job identification provided\nRequest aborted");
		goto done;
	}
	if (json_object_size(req) == 1) {
		r = cmd_fail(1, "error: No changes specified\nRequest aborted");
		goto done;
	}
	if (json_object_get(req, "ncpus") &&
	    (r = update_cpus(cl, idtext, json_integer_value(json_object_get(req, "ncpus")), req)))
		goto done;
	if (id.index >= 0)
		json_object_set_new(req, "array_index", json_integer(id.index));
	json_object_set_new(req, "jobid", json_integer(id.id));
	r = client_call(cl, req, &reply, &err);
	req = NULL;
	if (r < 0 && strstr(err.text, "walltime="))
		r = cmd_fail(1, "slurm_update error: Requested time limit is invalid (missing or exceeds some limit)"
			     " (%s)", err.text);
	else if (r == -EBUSY)
		r = cmd_fail(1, "slurm_update error: Job is no longer pending execution");
	else if (r < 0)
		r = cmd_fail(1, "slurm_update error: %s", slurmjobs_error(r, &err));
done:
	json_decref(req);
	json_decref(reply);
	return r ? 1 : 0;
}

int main(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_CONF, OPT_HELP };
	static const struct option longopts[] = {
		{ "oneliner", no_argument, NULL, 'o' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "details", no_argument, NULL, 'd' },
		{ "conf", required_argument, NULL, OPT_CONF },
		{ "clusters", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "usage", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct client *cl = NULL;
	struct error err;
	const char *cmd;
	int c, status;

	if (version_requested(argc, argv))
		return version_print("scontrol");
	opterr = 0;
	/* "+": options stop at the command, so "update TimeLimit=-1" is no option. */
	while ((c = getopt_long(argc, argv, "+:odM:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': arg_oneline = true; break;
		case 'd': break;
		case 'M': break;   /* one pool, one "cluster": any name is it */
		case OPT_JSON: arg_json = true; break;
		case OPT_CONF: arg_conf = optarg; break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:   /* '?' or ':' */
			return cmd_getopt_fail(c, argv);
		}
	}
	if (optind >= argc)
		return cmd_fail(1, "error: no command given\nTry \"scontrol --help\" for more information");
	cmd = argv[optind++];
	if (strcasecmp(cmd, "show") != 0 && strcasecmp(cmd, "hold") != 0 && strcasecmp(cmd, "release") != 0 &&
	    strcasecmp(cmd, "requeue") != 0 && strcasecmp(cmd, "update") != 0 && strcasecmp(cmd, "suspend") != 0 &&
	    strcasecmp(cmd, "resume") != 0 && strcasecmp(cmd, "create") != 0 && strcasecmp(cmd, "delete") != 0)
		return cmd_fail(1, "error: Invalid keyword: %s", cmd);
	/* Reservations (docs/RESERVATIONS.md): "create reservation ...",
	 * "update ReservationName=...", "delete ReservationName=...". */
	if (strcasecmp(cmd, "create") == 0 || strcasecmp(cmd, "delete") == 0 ||
	    (strcasecmp(cmd, "update") == 0 && optind < argc &&
	     (strncasecmp(argv[optind], "ReservationName=", 16) == 0 || strncasecmp(argv[optind], "reservation", 11) == 0))) {
		if (optind < argc && strncasecmp(argv[optind], "reservation", 11) == 0 && !strchr(argv[optind], '='))
			optind++;
		else if (strcasecmp(cmd, "create") == 0)
			return cmd_fail(1, "error: Invalid creation entity: %s", optind < argc ? argv[optind] : "");
		if (client_open(arg_conf, &cl, &err) < 0)
			return cmd_fail(1, "error: %s", err.text);
		status = resv_change(cl, strcasecmp(cmd, "create") == 0 ? "create" : strcasecmp(cmd, "delete") == 0 ? "delete" : "update",
				     argc - optind, argv + optind);
		client_close(cl);
		return status;
	}
	if (strcasecmp(cmd, "show") == 0) {
		const char *what = optind < argc ? argv[optind++] : NULL;
		int kept = optind;

		/* Slurm takes its options after "show ENTITY" too (Open
		 * OnDemand's "scontrol show part -o -M CLUSTER"). */
		for (int i = optind; i < argc; i++) {
			if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--oneliner") == 0)
				arg_oneline = true;
			else if (strcmp(argv[i], "-d") == 0 || strcmp(argv[i], "--details") == 0 ||
				 strncmp(argv[i], "--clusters=", 11) == 0 ||
				 (strncmp(argv[i], "-M", 2) == 0 && argv[i][2]))
				;
			else if (strcmp(argv[i], "-M") == 0 || strcmp(argv[i], "--clusters") == 0)
				i++;
			else
				argv[kept++] = argv[i];
		}
		argc = kept;

		if (!what)
			return cmd_fail(1, "error: too few arguments for keyword:show");
		if (strlen(what) >= 3 && strncasecmp(what, "config", strlen(what)) == 0) {
			if (argc - optind > 0)
				return cmd_fail(1, "error: too many arguments for keyword:show");
			status = show_config();
			if (fflush(stdout) != 0 && status == 0)
				status = cmd_fail(1, "cannot write: %s", strerror(errno));
			return status;
		}
		if (hosts_entity(what) >= 0) {
			if (argc - optind > 1)
				return cmd_fail(1, "error: too many arguments for keyword:show");
			status = show_hosts(hosts_entity(what), optind < argc ? argv[optind] : NULL);
			if (fflush(stdout) != 0 && status == 0)
				status = cmd_fail(1, "cannot write: %s", strerror(errno));
			return status;
		}
		if (strncasecmp(what, "jobs", strlen(what)) != 0 && strncasecmp(what, "nodes", strlen(what)) != 0 &&
		    strncasecmp(what, "partitions", strlen(what)) != 0 &&
		    (strlen(what) < 3 || strncasecmp(what, "reservations", strlen(what)) != 0) &&
		    (strlen(what) < 3 || strncasecmp(what, "licenses", strlen(what)) != 0))
			return cmd_fail(1, "error: Invalid entity: %s for keyword:show", what);
		if (argc - optind > 1)
			return cmd_fail(1, "error: too many arguments for keyword:show");
	}
	if (client_open(arg_conf, &cl, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	if (strcasecmp(cmd, "show") == 0) {
		const char *what = argv[optind - 1], *name = optind < argc ? argv[optind] : NULL;

		if (strncasecmp(what, "jobs", strlen(what)) == 0)
			status = show_jobs(cl, name);
		else if (strncasecmp(what, "nodes", strlen(what)) == 0)
			status = show_list(cl, "nodes", name);
		else if (strlen(what) >= 3 && strncasecmp(what, "licenses", strlen(what)) == 0)
			status = show_licenses(cl, name);
		else if (strlen(what) >= 3 && strncasecmp(what, "reservations", strlen(what)) == 0)
			status = show_resv(cl, name);
		else
			status = show_list(cl, "queues", name);
	} else if (strcasecmp(cmd, "update") == 0) {
		bool node = false;

		for (int k = optind; k < argc; k++)
			node |= strncasecmp(argv[k], "NodeName=", 9) == 0;
		status = node ? node_update(cl, argc - optind, argv + optind) : update(cl, argc - optind, argv + optind);
	} else if (strcasecmp(cmd, "suspend") == 0 || strcasecmp(cmd, "resume") == 0) {
		status = job_op(cl, strcasecmp(cmd, "suspend") == 0 ? "suspend" : "resume", argc - optind, argv + optind);
	} else {
		const char *op = strcasecmp(cmd, "hold") == 0 ? "hold" : strcasecmp(cmd, "release") == 0 ? "release" : "rerun";

		status = job_op(cl, op, argc - optind, argv + optind);
	}
	client_close(cl);
	if (fflush(stdout) != 0 && status == 0)
		status = cmd_fail(1, "cannot write: %s", strerror(errno));
	return status;
}
