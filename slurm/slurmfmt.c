/* SPDX-License-Identifier: MIT */
/* Slurm's views of qpool's jobs (slurm/slurmfmt.h): one mapping of states,
 * reasons, times, ids and sizes for squeue, sacct and scontrol; the
 * fields built on them are slurmfmt-fields.c's and slurmfmt-extra.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "hostlist.h"
#include "parse.h"
#include "slurmfmt.h"
#include "timeutil.h"
#include "wire.h"

#define NONE (-1LL)

static const char *str_or(const json_t *o, const char *key, const char *def)
{
	const char *s = wire_str(o, key);

	return s ? s : def;
}

static bool is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

/* qpool's state words and Slurm's names, one table both ways. */
static const struct {
	const char *qpool;
	const char *slurm;
	const char *code;
} states[] = {
	{ "queued", "PENDING", "PD" },
	{ "held", "PENDING", "PD" },
	{ "running", "RUNNING", "R" },
	{ "exiting", "COMPLETING", "CG" },
	{ "completed", "COMPLETED", "CD" },
	{ "failed", "FAILED", "F" },
	{ "cancelled", "CANCELLED", "CA" },
	{ "timeout", "TIMEOUT", "TO" },
	{ "oom", "OUT_OF_MEMORY", "OOM" },
	{ NULL, "NODE_FAIL", "NF" },
	{ "running", "SUSPENDED", "S" },   /* "suspended": true (slurmfmt_state) */
	/* Slurm's other states, accepted by -t so a tool's filter is no
	 * error: no qpool job is ever in them. */
	{ NULL, "PREEMPTED", "PR" },
	{ NULL, "BOOT_FAIL", "BF" },
	{ NULL, "DEADLINE", "DL" },
	{ NULL, "REQUEUED", "RQ" },
	{ NULL, "RESIZING", "RS" },
	{ NULL, "REVOKED", "RV" },
	{ NULL, "SIGNALING", "SI" },
	{ NULL, "SPECIAL_EXIT", "SE" },
	{ NULL, "STAGE_OUT", "SO" },
	{ NULL, "STOPPED", "ST" },
	{ NULL, "CONFIGURING", "CF" },
};

const char *slurmfmt_state(const json_t *job)
{
	const char *state = str_or(job, "state", "");
	const char *reason = str_or(job, "reason", "");

	if (is(state, "running") && json_is_true(json_object_get(job, "suspended")))
		return "SUSPENDED";
	if (is(state, "failed") && strstr(reason, "out of memory"))
		return "OUT_OF_MEMORY";
	if (is(state, "failed") && (strstr(reason, "node lost") || strstr(reason, "node went away")))
		return "NODE_FAIL";
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (is(states[i].qpool, state))
			return states[i].slurm;
	return "PENDING";
}

const char *slurmfmt_state_code(const char *state)
{
	for (size_t i = 0; state && i < sizeof(states) / sizeof(states[0]); i++)
		if (strcmp(states[i].slurm, state) == 0)
			return states[i].code;
	return NULL;
}

const char *slurmfmt_state_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strcasecmp(states[i].slurm, s) == 0 || strcasecmp(states[i].code, s) == 0)
			return states[i].slurm;
	return NULL;
}

void slurmfmt_acct_state(const json_t *job, char *buf, size_t len)
{
	const char *state = slurmfmt_state(job), *reason = str_or(job, "reason", "");
	const char *by = strstr(reason, "cancelled by "), *force = strstr(reason, "deleted with -W force by ");
	char who[64];

	/* qdel -W force: a cancel by that user as well. */
	if (by)
		by += strlen("cancelled by ");
	else if (force)
		by = force + strlen("deleted with -W force by ");
	/* A step (the batch script) was cancelled by its job's end, not by
	 * anyone: Slurm's batch row says CANCELLED. */
	if (!is(state, "CANCELLED") || !by || wire_str(job, "step")) {
		snprintf(buf, len, "%s", state);
		return;
	}
	snprintf(who, sizeof(who), "%s", by);
	who[strcspn(who, " ")] = '\0';
	if (strcmp(who, "root") == 0)
		snprintf(buf, len, "CANCELLED by 0");
	else if (is(wire_str(job, "owner"), who) && json_is_integer(json_object_get(job, "uid")))
		snprintf(buf, len, "CANCELLED by %lld", wire_int(job, "uid", 0));
	else
		snprintf(buf, len, "CANCELLED by %s", who);
}

static long long begin_time(const json_t *job)
{
	const char *s = wire_str(json_object_get(job, "attrs"), "Execution_Time");

	return s ? atoll(s) : 0;
}

const char *slurmfmt_reason(const json_t *job, int64_t now_ns)
{
	const char *state = str_or(job, "state", ""), *reason = str_or(job, "reason", "");

	if (!is(state, "queued") && !is(state, "held")) {
		/* Slurm's reasons of an ended job (its FAIL_* reasons): PSI/J
		 * asserts a FAILED job's reason is one it knows. */
		const char *slurm = slurmfmt_state(job);

		if (is(slurm, "FAILED"))
			return "NonZeroExitCode";
		if (is(slurm, "TIMEOUT"))
			return "TimeLimit";
		if (is(slurm, "OUT_OF_MEMORY"))
			return "OutOfMemory";
		if (is(slurm, "NODE_FAIL"))
			return "NodeDown";
		return "None";
	}
	if (strstr(reason, "can never be met"))
		return "DependencyNeverSatisfied";
	if (strstr(reason, "waiting on dependencies"))
		return "Dependency";
	/* Held after prolog_failures_max node prolog failures: Slurm's
	 * reason for a job whose launch failed and was held. */
	if (is(state, "held") && strstr(reason, "node prolog failed"))
		return "launch failed requeued held";
	if (is(state, "held"))
		return "JobHeldUser";
	if (begin_time(job) * NSEC_PER_SEC > now_ns)
		return "BeginTime";
	if (strstr(reason, "queue stopped"))
		return "PartitionInactive";
	/* Limits in resources (docs/LIMITS.md): qpoold names Slurm's word. */
	{
		static const char *const limits[] = { "AssocGrpCpuLimit", "AssocGrpGRESMinutes", "AssocGrpGRES",
						      "AssocGrpJobsLimit", "AssocGrpCPUMinutesLimit",
						      "QOSMaxCpuPerUserLimit", "QOSMaxGRESPerUser", "QOSMaxJobsPerUserLimit",
						      "QOSGrpCpuLimit", "QOSGrpGRES" };

		for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
			if (strstr(reason, limits[i]))
				return limits[i];
	}
	if (strstr(reason, "waiting for licenses"))
		return "Licenses";
	if (strstr(reason, "node(s) down") || !strncmp(reason, "ReqNodeNotAvail:", 16) ||
	    strstr(reason, "; ReqNodeNotAvail:"))
		return "ReqNodeNotAvail";
	/* A reservation's (docs/RESERVATIONS.md): qpoold names the word. */
	if (!strncmp(reason, "Reservation:", 12) || strstr(reason, "; Reservation:"))
		return "Reservation";
	if (strstr(reason, "free CPU") || strstr(reason, "waiting for"))
		return "Resources";
	return "Priority";
}

void slurmfmt_duration(char *buf, size_t len, int64_t secs)
{
	long long d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;

	if (secs < 0)
		snprintf(buf, len, "INVALID");
	else if (d)
		snprintf(buf, len, "%lld-%02lld:%02lld:%02lld", d, h, m, s);
	else if (h)
		snprintf(buf, len, "%lld:%02lld:%02lld", h, m, s);
	else
		snprintf(buf, len, "%lld:%02lld", m, s);
}

void slurmfmt_elapsed(char *buf, size_t len, int64_t secs)
{
	long long d, h, m, s;

	if (secs < 0)
		secs = 0;
	d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
	if (d)
		snprintf(buf, len, "%lld-%02lld:%02lld:%02lld", d, h, m, s);
	else
		snprintf(buf, len, "%02lld:%02lld:%02lld", h, m, s);
}

void slurmfmt_stamp(char *buf, size_t len, int64_t ns, const char *none_text)
{
	time_t t = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;

	if (ns <= 0 || !localtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(buf, len, "%s", none_text);
}

void slurmfmt_job_id(const json_t *job, char *buf, size_t len)
{
	const char *array = wire_str(job, "array");

	if (json_is_integer(json_object_get(job, "array_id")))
		snprintf(buf, len, "%lld_%lld", wire_int(job, "array_id", 0), wire_int(job, "array_index", 0));
	else if (array)
		snprintf(buf, len, "%lld_[%s]", wire_int(job, "jobid", 0), array);
	else
		snprintf(buf, len, "%lld", wire_int(job, "jobid", 0));
}

void slurmfmt_job_nodes(const json_t *job, char *buf, size_t len, int *ret_count)
{
	const json_t *alloc = json_object_get(job, "alloc");
	const char *names[256];
	size_t n = 0, i;
	json_t *a;

	json_array_foreach(alloc, i, a) {
		if (wire_str(a, "node") && n < sizeof(names) / sizeof(names[0]))
			names[n++] = wire_str(a, "node");
	}
	if (n == 0 && wire_str(job, "node"))
		names[n++] = wire_str(job, "node");
	if (len)
		buf[0] = '\0';
	if (n && hostlist_compress(names, n, buf, len) < 0 && len)
		buf[0] = '\0';
	if (ret_count)
		*ret_count = (int)n;
}

long long slurmfmt_job_cpus(const json_t *job)
{
	long long sum = 0;
	size_t i;
	json_t *a;

	struct cpumask held;

	json_array_foreach(json_object_get(job, "alloc"), i, a)
		sum += wire_int(a, "ncpus", 0);
	/* One node: its cpus, when more than it asked for. */
	if (!sum && wire_str(job, "cpus") && cpumask_parse(wire_str(job, "cpus"), &held) == 0)
		sum = cpumask_count(&held);
	return sum > wire_int(job, "ncpus", 1) ? sum : wire_int(job, "ncpus", 1);
}

static long long attr_int(const json_t *job, const char *key)
{
	const char *s = wire_str(json_object_get(job, "attrs"), key);
	char *end;
	long long v;

	if (!s)
		return 0;
	v = strtoll(s, &end, 10);
	return *s && !*end && v > 0 ? v : 0;
}

void slurmfmt_job_tasks(const json_t *job, struct slurmfmt_tasks *ret)
{
	const json_t *chunks = json_object_get(job, "chunks");
	long long ncpus = wire_int(job, "ncpus", 1), tasks = 0, cpt = 0, nodes = 0, mem = 0;
	size_t i;
	json_t *c;
	int running;

	json_array_foreach(chunks, i, c) {
		long long count = wire_int(c, "count", 1), procs = wire_int(c, "mpiprocs", 0);

		if (procs <= 0)
			procs = 1;
		tasks += count * procs;
		nodes += count;
		if (i == 0) {
			cpt = wire_int(c, "ncpus", 1) / procs;
			mem = wire_int(c, "mem", 0);
		}
	}
	if (!tasks) {
		tasks = 1;
		cpt = ncpus;
		mem = wire_int(job, "mem", 0);
	}
	if (attr_int(job, "Slurm_ntasks"))
		tasks = attr_int(job, "Slurm_ntasks");
	if (attr_int(job, "Slurm_cpus_per_task"))
		cpt = attr_int(job, "Slurm_cpus_per_task");
	else if (attr_int(job, "Slurm_ntasks"))
		cpt = ncpus / tasks;
	/* place=free spreads one-task chunks: the nodes it asked for are
	 * the ones Resource_List.nodect counted. */
	if (attr_int(job, "Resource_List.nodect"))
		nodes = attr_int(job, "Resource_List.nodect");
	slurmfmt_job_nodes(job, NULL, 0, &running);
	ret->nodes = running ? running : nodes > 0 ? nodes : 1;
	ret->tasks = tasks;
	ret->cpus_per_task = cpt > 0 ? cpt : 1;
	ret->mem_per_node = mem > 0 ? mem : 0;
}

long long slurmfmt_job_restarts(const json_t *job)
{
	return attr_int(job, "run_count");
}

void slurmfmt_dependency(const json_t *job, int64_t now_ns, char *buf, size_t len)
{
	const char *reason = slurmfmt_reason(job, now_ns);
	const char *dep = wire_str(json_object_get(job, "attrs"), "Slurm_dependency");

	if (!dep)
		dep = wire_str(job, "depend");
	if (dep && is(reason, "Dependency"))
		snprintf(buf, len, "%s(unfulfilled)", dep);
	else if (dep && is(reason, "DependencyNeverSatisfied"))
		snprintf(buf, len, "%s(failed)", dep);
	else
		snprintf(buf, len, "(null)");
}

bool slurmfmt_job_output(const json_t *job, bool err, char *buf, size_t len)
{
	bool joined = wire_bool(job, "join", 0);
	const char *path = str_or(job, err && !joined ? "stderr" : "stdout", "");
	const char *reason = str_or(job, "reason", "");
	const char *note = strstr(reason, err && !joined ? "error undelivered (" : "output undelivered (");
	const char *kept = note ? strstr(note, "): kept in ") : NULL;

	/* gded's note (wrappers/undelivered.c): "output undelivered (PATH:
	 * ERROR): kept in KEPT on NODE". */
	if (kept) {
		kept += strlen("): kept in ");
		snprintf(buf, len, "%.*s", (int)strcspn(kept, " ;"), kept);
		return true;
	}
	snprintf(buf, len, "%s", path);
	return false;
}

static int64_t stamp(const json_t *job, const char *key)
{
	return wire_int(json_object_get(job, "times"), key, 0);
}

int64_t slurmfmt_job_ran_secs(const json_t *job, int64_t now_ns)
{
	const char *state = str_or(job, "state", "");
	int64_t start = stamp(job, "exec"), end;

	if (!start)
		start = stamp(job, "launch");
	if (!start)
		start = stamp(job, "dispatch");
	if (!start)
		return 0;
	if (is(state, "running") || is(state, "exiting"))
		end = now_ns;
	else if (!(end = stamp(job, "exit")) && !(end = stamp(job, "released")))
		end = stamp(job, "done");
	return end > start ? (end - start) / NSEC_PER_SEC : 0;
}

int64_t slurmfmt_job_start_ns(const json_t *job)
{
	int64_t t = stamp(job, "exec");

	if (!t)
		t = stamp(job, "launch");
	if (!t)
		t = stamp(job, "dispatch");
	/* A pending job: when it is expected to start (docs/ESTIMATES.md). */
	if (!t && is(str_or(job, "state", ""), "queued"))
		t = wire_int(job, "estimated_start", 0) * NSEC_PER_SEC;
	return t;
}

int64_t slurmfmt_job_end_ns(const json_t *job)
{
	const char *state = str_or(job, "state", "");
	int64_t t;

	if (is(state, "queued") || is(state, "held") || is(state, "running") || is(state, "exiting"))
		return 0;
	if (!(t = stamp(job, "exit")) && !(t = stamp(job, "released")))
		t = stamp(job, "done");
	return t;
}

/* Slurm's size suffixes, K M G T, as sacct's MaxRSS and ReqMem print. */
void slurmfmt_size(char *buf, size_t len, long long bytes)
{
	static const char suffix[] = "KMGT";
	long long v = bytes / 1024;
	int k = 0;

	while (v >= 1024 && v % 1024 == 0 && k < 3) {
		v /= 1024;
		k++;
	}
	snprintf(buf, len, "%lld%c", v, suffix[k]);
}
