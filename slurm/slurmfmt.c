/* SPDX-License-Identifier: MIT */
/* Slurm's views of qpool's jobs (slurm/slurmfmt.h): one mapping of states,
 * reasons, times and fields for squeue, sacct and scontrol. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "hostlist.h"
#include "parse.h"
#include "slurmfmt.h"
#include "slurmfmt-internal.h"
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

static const struct slurmfmt_field fields[] = {
	{ F_JOBID, 'i', "JobID", "JOBID", "JobID", 12, true, NULL, NULL },
	{ F_JOBID, 0, "JobArrayID", "JOBID", NULL, 0, false, NULL, NULL },  /* Slurm's -O name of %i */
	{ F_JOBID_RAW, 'A', "JobIDRaw", "JOBID", "JobIDRaw", 12, true, NULL, NULL },
	{ F_ARRAY_JOB, 'F', "ArrayJobID", "ARRAY_JOB_ID", NULL, 0, false, NULL, NULL },
	{ F_ARRAY_TASK, 'K', "ArrayTaskID", "ARRAY_TASK_ID", NULL, 0, false, NULL, NULL },
	{ F_NAME, 'j', "Name", "NAME", "JobName", 10, false, NULL, NULL },
	{ F_USER, 'u', "UserName", "USER", "User", 9, false, NULL, NULL },
	{ F_UID, 'U', "UserID", "UID", "UID", 6, false, NULL, NULL },
	{ F_STATE_CODE, 't', "StateCompact", "ST", NULL, 0, false, NULL, NULL },
	{ F_STATE, 'T', "State", "STATE", "State", 10, false, NULL, NULL },
	{ F_TIME, 'M', "TimeUsed", "TIME", "Elapsed", 10, false, NULL, NULL },
	{ F_ELAPSED_RAW, 0, NULL, NULL, "ElapsedRaw", 10, false, NULL, NULL },
	{ F_LIMIT, 'l', "TimeLimit", "TIME_LIMIT", "Timelimit", 10, false, NULL, NULL },
	{ F_NODES, 'D', "NumNodes", "NODES", "NNodes", 8, false, NULL, NULL },
	{ F_NODES, 0, NULL, NULL, "AllocNodes", 10, false, NULL, NULL },
	{ F_NODELIST, 'N', "NodeList", "NODELIST", "NodeList", 15, true, NULL, NULL },
	{ F_REASON, 'r', "Reason", "REASON", "Reason", 20, true, NULL, NULL },
	{ F_NODELIST_REASON, 'R', "ReasonList", "NODELIST(REASON)", NULL, 0, false, NULL, NULL },
	{ F_PARTITION, 'P', "Partition", "PARTITION", "Partition", 10, false, NULL, NULL },
	{ F_CPUS, 'C', "NumCPUs", "CPUS", "AllocCPUS", 10, false, NULL, NULL },
	{ F_CPUS, 0, NULL, NULL, "NCPUS", 10, false, NULL, NULL },
	{ F_CPUS, 0, NULL, NULL, "ReqCPUS", 8, false, NULL, NULL },
	{ F_SUBMIT, 'V', "SubmitTime", "SUBMIT_TIME", "Submit", 19, false, NULL, NULL },
	{ F_START, 'S', "StartTime", "START_TIME", "Start", 19, false, NULL, NULL },
	{ F_END, 'e', "EndTime", "END_TIME", "End", 19, false, NULL, NULL },
	{ F_ACCOUNT, 'a', "Account", "ACCOUNT", "Account", 10, false, NULL, NULL },
	{ F_EXITCODE, 0, "exit_code", "EXIT_CODE", "ExitCode", 8, false, NULL, NULL },
	{ F_EXITCODE, 0, NULL, NULL, "DerivedExitCode", 10, false, NULL, NULL },
	{ F_MAXRSS, 0, NULL, NULL, "MaxRSS", 10, false, NULL, NULL },
	{ F_TOTALCPU, 0, NULL, NULL, "TotalCPU", 10, false, NULL, NULL },
	{ F_CPUTIME, 0, NULL, NULL, "CPUTime", 10, false, NULL, NULL },
	{ F_NTASKS, 0, NULL, NULL, "NTasks", 8, false, NULL, NULL },
	{ F_AVERSS, 0, NULL, NULL, "AveRSS", 10, false, NULL, NULL },
	{ F_AVECPU, 0, NULL, NULL, "AveCPU", 10, false, NULL, NULL },
	{ F_AVECPU, 0, NULL, NULL, "MinCPU", 10, false, NULL, NULL },
	{ F_WORKDIR, 'Z', "WorkDir", "WORK_DIR", "WorkDir", 30, true, NULL, NULL },
	{ F_QOS, 'q', "QOS", "QOS", "QOS", 10, false, NULL, NULL },
	{ F_REQMEM, 'm', "MinMemory", "MIN_MEMORY", "ReqMem", 10, false, NULL, NULL },
	{ F_PRIORITY, 'Q', "Priority", "PRIORITY", "Priority", 10, false, NULL, NULL },
	{ F_PRIORITY, 0, "PriorityLong", "PRIORITY", NULL, 0, false, NULL, NULL },
	{ F_STDOUT, 0, "STDOUT", "STDOUT", NULL, 0, false, NULL, NULL },
	{ F_STDERR, 0, "STDERR", "STDERR", NULL, 0, false, NULL, NULL },
	{ F_TIME_LEFT, 'L', "TimeLeft", "TIME_LEFT", NULL, 0, false, NULL, NULL },
};

const struct slurmfmt_field *slurmfmt_field_letter(char c)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].letter == c)
			return &fields[i];
	return slurmfmt_extra_letter(c);
}

const struct slurmfmt_field *slurmfmt_field_name(const char *name, enum slurmfmt_view view)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *n = view == SLURMFMT_SACCT ? fields[i].sacct_name : fields[i].squeue_name;

		if (n && strcasecmp(n, name) == 0)
			return &fields[i];
	}
	return slurmfmt_extra_name(name, view);
}

const char *slurmfmt_field_header(const struct slurmfmt_field *f, enum slurmfmt_view view)
{
	return view == SLURMFMT_SACCT ? f->sacct_name : f->squeue_header;
}

int slurmfmt_field_width(const struct slurmfmt_field *f, bool *ret_left)
{
	if (ret_left)
		*ret_left = f->left;
	return f->sacct_width;
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

/* sacct's step rows ("12.batch"): the job object with "step" set. */
static void step_put(const json_t *job, char *buf, size_t len)
{
	const char *step = wire_str(job, "step");
	size_t n = strlen(buf);

	if (step && n < len)
		snprintf(buf + n, len - n, ".%s", step);
}

void slurmfmt_field_value(const struct slurmfmt_field *f, enum slurmfmt_view view, const json_t *job,
			  int64_t now_ns, char *buf, size_t len)
{
	const char *none = view == SLURMFMT_SACCT ? "Unknown" : "N/A";
	const char *state = str_or(job, "state", "");
	bool pending = is(state, "queued") || is(state, "held");
	long long walltime = wire_int(job, "walltime", 0);
	int count;

	buf[0] = '\0';
	switch (f->id) {
	case F_JOBID:
		slurmfmt_job_id(job, buf, len);
		step_put(job, buf, len);
		break;
	case F_JOBID_RAW:
		snprintf(buf, len, "%lld", wire_int(job, "jobid", 0));
		step_put(job, buf, len);
		break;
	case F_ARRAY_JOB:
		snprintf(buf, len, "%lld", wire_int(job, "array_id", wire_int(job, "jobid", 0)));
		break;
	case F_ARRAY_TASK:
		if (json_is_integer(json_object_get(job, "array_index")))
			snprintf(buf, len, "%lld", wire_int(job, "array_index", 0));
		else if (wire_str(job, "array"))
			snprintf(buf, len, "%s", wire_str(job, "array"));
		else
			snprintf(buf, len, "N/A");
		break;
	case F_NAME:
		snprintf(buf, len, "%s", str_or(job, "name", ""));
		break;
	case F_USER:
		snprintf(buf, len, "%s", str_or(job, "owner", ""));
		break;
	case F_UID:
		snprintf(buf, len, "%lld", wire_int(job, "uid", 0));
		break;
	case F_STATE_CODE:
		snprintf(buf, len, "%s", slurmfmt_state_code(slurmfmt_state(job)));
		break;
	case F_STATE:
		if (view == SLURMFMT_SACCT)
			slurmfmt_acct_state(job, buf, len);
		else
			snprintf(buf, len, "%s", slurmfmt_state(job));
		break;
	case F_TIME:
		if (view == SLURMFMT_SACCT)
			slurmfmt_elapsed(buf, len, slurmfmt_job_ran_secs(job, now_ns));
		else
			slurmfmt_duration(buf, len, slurmfmt_job_ran_secs(job, now_ns));
		break;
	case F_ELAPSED_RAW:
		snprintf(buf, len, "%lld", (long long)slurmfmt_job_ran_secs(job, now_ns));
		break;
	case F_LIMIT:
		if (walltime <= 0)
			snprintf(buf, len, "UNLIMITED");
		else if (view == SLURMFMT_SACCT)
			slurmfmt_elapsed(buf, len, walltime);
		else
			slurmfmt_duration(buf, len, walltime);
		break;
	case F_NODES:
		slurmfmt_job_nodes(job, buf, len, &count);
		snprintf(buf, len, "%d", count ? count : 1);
		break;
	case F_NODELIST:
		slurmfmt_job_nodes(job, buf, len, NULL);
		if (!buf[0])
			snprintf(buf, len, view == SLURMFMT_SACCT ? "None assigned" : "");
		break;
	case F_REASON:
		snprintf(buf, len, "%s", slurmfmt_reason(job, now_ns));
		break;
	case F_NODELIST_REASON:
		if (pending) {
			const char *word = slurmfmt_reason(job, now_ns), *why = str_or(job, "reason", ""), *at;
			char key[32];

			/* Slurm's "(ReqNodeNotAvail, UnavailableNodes:n1)": a
			 * reservation's word with qpoold's text and remedy. */
			snprintf(key, sizeof(key), "%s: ", word);
			at = strstr(why, key);
			if (at && (is(word, "ReqNodeNotAvail") || is(word, "Reservation"))) {
				const char *text = at + strlen(key), *end = text;

				/* Its text ends at the next reason ("; first in
				 * line ..."), not at its own "; with walltime". */
				while (*(end += strcspn(end, ";")) && !strncmp(end, "; with walltime", 15))
					end++;
				snprintf(buf, len, "(%s, %.*s)", word, (int)(end - text), text);
			}
			else
				snprintf(buf, len, "(%s)", word);
		}
		else
			slurmfmt_job_nodes(job, buf, len, NULL);
		break;
	case F_PARTITION:
		snprintf(buf, len, "%s", str_or(job, "queue", ""));
		break;
	case F_CPUS:
		snprintf(buf, len, "%lld", slurmfmt_job_cpus(job));
		break;
	case F_SUBMIT:
		slurmfmt_stamp(buf, len, stamp(job, "submit"), none);
		break;
	case F_START:
		/* sacct reads what happened: a pending job's start is Unknown
		 * there, squeue's %S its estimate. */
		slurmfmt_stamp(buf, len, view == SLURMFMT_SACCT && pending ? 0 : slurmfmt_job_start_ns(job), none);
		break;
	case F_END:
		slurmfmt_stamp(buf, len, slurmfmt_job_end_ns(job), none);
		break;
	case F_ACCOUNT:
		/* squeue's "(null)" for none, as Slurm's; sacct's blank. */
		snprintf(buf, len, "%s", str_or(json_object_get(job, "attrs"), "Account_Name",
						 view == SLURMFMT_SACCT ? "" : "(null)"));
		break;
	case F_EXITCODE:
		/* "status:signal": the exit status of the script, the signal
		 * that ended it (Slurm's ExitCode). */
		if (wire_int(job, "exit_signal", 0) > 0)
			snprintf(buf, len, "0:%lld", wire_int(job, "exit_signal", 0));
		else
			snprintf(buf, len, "%lld:0", wire_int(job, "exit_status", 0));
		break;
	case F_MAXRSS:
		if (json_is_integer(json_object_get(job, "mem_peak")))
			snprintf(buf, len, "%lldK", wire_int(job, "mem_peak", 0) / 1024);
		break;
	case F_TOTALCPU:
		slurmfmt_elapsed(buf, len, wire_int(job, "cpu_ns", 0) / NSEC_PER_SEC);
		break;
	case F_NTASKS:
		/* Slurm counts tasks per step: none on the job's own row; the
		 * batch step is one task (the script). */
		if (wire_str(job, "step"))
			snprintf(buf, len, "1");
		break;
	case F_AVERSS:
		/* Of one task, its average is its peak: qpool measures the
		 * job's cgroup whole, the batch step's one task. Blank until
		 * measured, as Slurm's until the step ends. */
		if (wire_str(job, "step") && json_is_integer(json_object_get(job, "mem_peak")))
			snprintf(buf, len, "%lldK", wire_int(job, "mem_peak", 0) / 1024);
		break;
	case F_AVECPU:
		if (wire_str(job, "step") && json_is_integer(json_object_get(job, "cpu_ns")))
			slurmfmt_elapsed(buf, len, wire_int(job, "cpu_ns", 0) / NSEC_PER_SEC);
		break;
	case F_CPUTIME:
		slurmfmt_elapsed(buf, len, slurmfmt_job_ran_secs(job, now_ns) * wire_int(job, "ncpus", 1));
		break;
	case F_WORKDIR:
		snprintf(buf, len, "%s", str_or(job, "workdir", ""));
		break;
	case F_QOS:
		snprintf(buf, len, "%s", str_or(json_object_get(job, "attrs"), "Resource_List.qos", "normal"));
		break;
	case F_REQMEM:
		if (wire_int(job, "mem", 0) > 0)
			slurmfmt_size(buf, len, wire_int(job, "mem", 0));
		else
			snprintf(buf, len, "0");
		break;
	case F_PRIORITY:
		snprintf(buf, len, "%lld", wire_int(job, "priority", 0));
		break;
	case F_STDOUT:
	case F_STDERR:
		/* Where it went, as scontrol's StdOut and StdErr. */
		slurmfmt_job_output(job, f->id == F_STDERR, buf, len);
		break;
	default:
		slurmfmt_extra_value(f, view, job, now_ns, buf, len);
		break;
	case F_TIME_LEFT:
		/* The limit less the time used; Slurm's words past either end. */
		if (walltime <= 0)
			snprintf(buf, len, "UNLIMITED");
		else if (!pending && !is(state, "running") && !is(state, "exiting"))
			snprintf(buf, len, "0:00");
		else
			slurmfmt_duration(buf, len, walltime > slurmfmt_job_ran_secs(job, now_ns)
							     ? walltime - slurmfmt_job_ran_secs(job, now_ns) : 0);
		break;
	}
}

int slurmfmt_format_parse(const char *fmt, struct slurmfmt_item *items, int max, char *ret_bad)
{
	int n = 0;

	*ret_bad = 0;
	while (*fmt) {
		struct slurmfmt_item *it;

		if (n == max)
			return -EINVAL;
		it = &items[n];
		memset(it, 0, sizeof(*it));
		if (*fmt != '%' || fmt[1] == '%') {
			size_t k = 0;

			while (*fmt && k + 1 < sizeof(it->text)) {
				if (*fmt == '%' && fmt[1] == '%')
					fmt++;
				else if (*fmt == '%')
					break;
				it->text[k++] = *fmt++;
			}
			n++;
			continue;
		}
		fmt++;
		if (*fmt == '.') {
			it->right = true;
			fmt++;
		}
		while (isdigit((unsigned char)*fmt))
			it->width = it->width * 10 + (*fmt++ - '0') % 1000;
		if (it->width > 1000)
			it->width = 1000;
		it->field = *fmt ? slurmfmt_field_letter(*fmt) : NULL;
		if (!it->field) {
			*ret_bad = *fmt ? *fmt : '%';
			return -EINVAL;
		}
		fmt++;
		n++;
	}
	return n;
}

void slurmfmt_cell(char *buf, size_t len, const char *value, int width, bool right)
{
	int n = (int)strlen(value);

	if (width <= 0)
		snprintf(buf, len, "%s", value);
	else if (n > width)
		snprintf(buf, len, "%.*s", width, value);
	else
		snprintf(buf, len, right ? "%*s" : "%-*s", width, value);
}
