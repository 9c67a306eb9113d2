/* SPDX-License-Identifier: MIT */
/* Tables and PBS-style detail for qstat, from the server's JSON objects. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <time.h>

#include "jobattr.h"
#include "jobfmt.h"
#include "jobid.h"
#include "parse.h"
#include "table.h"
#include "timeutil.h"
#include "wire.h"

#define NONE LLONG_MIN   /* wire_int default: member null or absent */

static const char *const stamp_names[] = {
	"submit", "dispatch", "launch", "wrap", "fenced", "exec", "exit", "released", "done",
};

void jobfmt_time(char *buf, size_t len, int64_t ns)
{
	time_t sec = (time_t)(ns / NSEC_PER_SEC);
	int64_t ms = ns % NSEC_PER_SEC / NSEC_PER_MSEC;
	struct tm tm;
	size_t n;

	if (ns < 0 || !localtime_r(&sec, &tm)) {
		snprintf(buf, len, "%" PRId64, ns);
		return;
	}
	n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03" PRId64, ms);
}

static const char *str_or(const json_t *o, const char *key, const char *def)
{
	const char *s = wire_str(o, key);

	return s ? s : def;
}

int64_t jobfmt_elapsed(const json_t *job, int64_t now_ns)
{
	const json_t *times = json_object_get(job, "times");
	const char *state = str_or(job, "state", "");
	long long start = wire_int(times, "exec", NONE), end;

	if (start == NONE)
		start = wire_int(times, "launch", NONE);
	if (start == NONE)
		start = wire_int(times, "dispatch", NONE);
	if (start == NONE)
		return -1;
	if (strcmp(state, "running") == 0 || strcmp(state, "exiting") == 0) {
		end = now_ns;
	} else {
		end = wire_int(times, "exit", NONE);
		if (end == NONE)
			end = wire_int(times, "released", NONE);
		if (end == NONE)
			end = wire_int(times, "done", NONE);
	}
	if (end == NONE || end < start)
		return -1;
	return (end - start) / NSEC_PER_SEC;
}

/* Cuts s to JOBFMT_NAME_WIDTH UTF-8 characters, the last one '*' when cut. */
static void name_cut(const char *s, char *buf, size_t len)
{
	size_t chars = 0, keep = 0;

	for (size_t i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (chars == JOBFMT_NAME_WIDTH - 1)
			keep = i;
		chars++;
	}
	if (chars > JOBFMT_NAME_WIDTH)
		snprintf(buf, len, "%.*s*", (int)keep, s);
	else
		snprintf(buf, len, "%s", s);
}

int jobfmt_jobs_table(FILE *f, const json_t *jobs, int64_t now_ns)
{
	static const char *const headers[] = {
		"Job id", "Name", "User", "State", "Queue", "NCPUS", "Node", "Elapsed",
	};
	struct table *t;
	size_t i;
	json_t *job;
	int r = 0;

	if (json_array_size(jobs) == 0)
		return 0;
	t = table_create(8, headers, "lllllrlr");
	if (!t)
		return -ENOMEM;
	json_array_foreach(jobs, i, job) {
		char name[4 * JOBFMT_NAME_WIDTH + 2], el[32] = "-", id[48];
		long long ncpus = wire_int(job, "ncpus", NONE);
		int64_t e = jobfmt_elapsed(job, now_ns);

		name_cut(str_or(job, "name", ""), name, sizeof(name));
		if (e >= 0)
			duration_format((uint64_t)e, el, sizeof(el));
		/* Arrays as PBS Pro writes them: ID[], a subjob ID[N]. */
		jobid_format_array(json_object_get(job, "array_id") ? wire_int(job, "array_id", 0) : wire_int(job, "jobid", 0),
				   json_object_get(job, "array_id") ? wire_int(job, "array_index", 0) :
				   json_object_get(job, "array") ? JOBID_ARRAY_ALL : JOBID_PLAIN, NULL, id, sizeof(id));
		r = r ?: table_cell(t, "%s", id);
		r = r ?: table_cell(t, "%s", name);
		r = r ?: table_cell(t, "%s", str_or(job, "owner", "?"));
		r = r ?: table_cell(t, "%s", str_or(job, "state", "?"));
		r = r ?: table_cell(t, "%s", str_or(job, "queue", "-"));
		r = ncpus == NONE ? (r ?: table_cell(t, "-")) : (r ?: table_cell(t, "%lld", ncpus));
		r = r ?: table_cell(t, "%s", str_or(job, "node", "-"));
		r = r ?: table_cell(t, "%s", el);
	}
	if (r == 0)
		table_print(t, f);
	table_destroy(t);
	return r;
}

/* Writes s with control characters and backslashes as C escapes. */
void jobfmt_escaped_put(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\\')
			fputs("\\\\", f);
		else if (c < ' ' || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static void key_str(FILE *f, const char *key, const json_t *o, const char *member)
{
	const char *s = wire_str(o, member);

	if (!s)
		return;
	fprintf(f, "    %s = ", key);
	jobfmt_escaped_put(f, s);
	fputc('\n', f);
}

static void key_int(FILE *f, const char *key, const json_t *o, const char *member)
{
	long long v = wire_int(o, member, NONE);

	if (v != NONE)
		fprintf(f, "    %s = %lld\n", key, v);
}

static void key_size(FILE *f, const char *key, const json_t *o, const char *member)
{
	long long v = wire_int(o, member, NONE);
	char buf[32];

	if (v == NONE || v < 0)
		return;
	size_format((uint64_t)v, buf, sizeof(buf));
	fprintf(f, "    %s = %s\n", key, buf);
}

void jobfmt_job_full(FILE *f, const json_t *job)
{
	const json_t *times = json_object_get(job, "times");
	const char *key;
	json_t *a;
	long long v;
	char buf[64];

	fprintf(f, "Job Id: %lld\n", wire_int(job, "jobid", 0));
	key_str(f, "Job_Name", job, "name");
	key_str(f, "Job_Owner", job, "owner");
	key_str(f, "job_state", job, "state");
	key_str(f, "queue", job, "queue");
	key_int(f, "ncpus", job, "ncpus");
	key_size(f, "mem", job, "mem");
	v = wire_int(job, "walltime", NONE);
	if (v != NONE && v >= 0) {
		duration_format((uint64_t)v, buf, sizeof(buf));
		fprintf(f, "    walltime = %s\n", buf);
	}
	key_str(f, "exec_host", job, wire_str(job, "exec_host") ? "exec_host" : "node");
	key_str(f, "exec_cpus", job, "cpus");
	key_int(f, "exit_status", job, "exit_status");
	key_int(f, "exit_signal", job, "exit_signal");
	key_str(f, "reason", job, "reason");
	key_str(f, "Output_Path", job, "stdout");
	key_str(f, "Error_Path", job, "stderr");
	if (wire_bool(job, "join", 0)) {
		fputs("    Join_Path = ", f);
		jobfmt_escaped_put(f, wire_str(json_object_get(job, "attrs"), "Join_Path") ?
				   wire_str(json_object_get(job, "attrs"), "Join_Path") : "oe");
		fputc('\n', f);
	}
	key_str(f, "workdir", job, "workdir");
	v = wire_int(job, "cpu_ns", NONE);
	if (v != NONE && v >= 0) {
		duration_format((uint64_t)(v / NSEC_PER_SEC), buf, sizeof(buf));
		fprintf(f, "    cpu_time = %s.%02lld\n", buf, v % NSEC_PER_SEC / (NSEC_PER_SEC / 100));
	}
	key_size(f, "mem_peak", job, "mem_peak");
	for (size_t i = 0; i < sizeof(stamp_names) / sizeof(stamp_names[0]); i++) {
		v = wire_int(times, stamp_names[i], NONE);
		if (v == NONE)
			continue;
		jobfmt_time(buf, sizeof(buf), v);
		fprintf(f, "    %s_time = %s\n", stamp_names[i], buf);
	}
	/* What qsub recorded under PBS names (Account_Name, Resource_List.place, ...). */
	json_object_foreach((json_t *)json_object_get(job, "attrs"), key, a) {
		/* Not over qpool's own lines (a row of an older qpool may
		 * hold any name). */
		if (!json_is_string(a) || strcmp(key, "Join_Path") == 0 || !jobattr_name_ok(key))
			continue;
		fputs("    ", f);
		jobfmt_escaped_put(f, key);
		fputs(" = ", f);
		jobfmt_escaped_put(f, json_string_value(a));
		fputc('\n', f);
	}
}

static const char *yes_no(const json_t *o, const char *key)
{
	int b = wire_bool(o, key, -1);

	return b < 0 ? "-" : b ? "yes" : "no";
}

/* "ncpus=8 mem<=150G walltime<=24:00:00 reserve=realtime", or "-". */
static void queue_limits(const json_t *q, char *buf, size_t len)
{
	long long ncpus = wire_int(q, "ncpus", 0), ncpus_max = wire_int(q, "ncpus_max", 0);
	long long mem_max = wire_int(q, "mem_max", 0), wt_max = wire_int(q, "walltime_max", 0);
	const char *reserve = wire_str(q, "reserve");
	char tmp[32];
	size_t n = 0;

	buf[0] = '\0';
	if (ncpus > 0)
		n += (size_t)snprintf(buf + n, len - n, " ncpus=%lld", ncpus);
	else if (ncpus_max > 0)
		n += (size_t)snprintf(buf + n, len - n, " ncpus<=%lld", ncpus_max);
	if (mem_max > 0 && n < len) {
		size_format((uint64_t)mem_max, tmp, sizeof(tmp));
		n += (size_t)snprintf(buf + n, len - n, " mem<=%s", tmp);
	}
	if (wt_max > 0 && n < len) {
		duration_format((uint64_t)wt_max, tmp, sizeof(tmp));
		n += (size_t)snprintf(buf + n, len - n, " walltime<=%s", tmp);
	}
	if (wire_int(q, "max_ngpus", 0) > 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " ngpus<=%lld", wire_int(q, "max_ngpus", 0));
	if (reserve && strcmp(reserve, "none") != 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " reserve=%s", reserve);
	if (wire_int(q, "max_running", 0) > 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " running<=%lld", wire_int(q, "max_running", 0));
	if (wire_int(q, "max_running_per_user", 0) > 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " per_user<=%lld", wire_int(q, "max_running_per_user", 0));
	if (n == 0)
		snprintf(buf, len, " -");
	memmove(buf, buf + 1, strlen(buf));
}

int jobfmt_queues_table(FILE *f, const json_t *queues)
{
	static const char *const headers[] = {
		"Queue", "Enabled", "Started", "Default", "Priority", "Queued", "Held", "Running",
		"Limits",
	};
	struct table *t = table_create(9, headers, "llllrrrrl");
	size_t i;
	json_t *q;
	int r = 0;

	if (!t)
		return -ENOMEM;
	json_array_foreach(queues, i, q) {
		char limits[160];

		queue_limits(q, limits, sizeof(limits));
		r = r ?: table_cell(t, "%s", str_or(q, "name", "?"));
		r = r ?: table_cell(t, "%s", yes_no(q, "enabled"));
		r = r ?: table_cell(t, "%s", yes_no(q, "started"));
		r = r ?: table_cell(t, "%s", yes_no(q, "default"));
		r = r ?: table_cell(t, "%lld", wire_int(q, "priority", 0));
		r = r ?: table_cell(t, "%lld", wire_int(q, "queued", 0));
		r = r ?: table_cell(t, "%lld", wire_int(q, "held", 0));
		r = r ?: table_cell(t, "%lld", wire_int(q, "running", 0));
		r = r ?: table_cell(t, "%s", limits);
	}
	if (r == 0)
		table_print(t, f);
	table_destroy(t);
	return r;
}

/* "12,13" from the node's jobs array, "-" when empty (cut when huge). */
static void node_jobs(const json_t *node, char *buf, size_t len)
{
	const json_t *jobs = json_object_get(node, "jobs");
	size_t i, n = 0;
	json_t *id;

	buf[0] = '\0';
	json_array_foreach(jobs, i, id) {
		if (!json_is_integer(id) || n + 24 >= len)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", n ? "," : "",
				      (long long)json_integer_value(id));
	}
	if (n == 0)
		snprintf(buf, len, "-");
}

/* A size for a narrow column: "512M", "3.7G", "64G", "1.5T". */
static void mem_short(char *buf, size_t len, long long bytes)
{
	double g = (double)bytes / (1 << 30);

	if (bytes < 1LL << 30)
		snprintf(buf, len, "%lldM", bytes >> 20);
	else if (g < 10)
		snprintf(buf, len, "%.1fG", g);
	else if (g < 1024)
		snprintf(buf, len, "%.0fG", g);
	else
		snprintf(buf, len, "%.1fT", g / 1024);
}

int jobfmt_nodes_table(FILE *f, const json_t *nodes)
{
	static const char *const all[] = {
		"Node", "State", "NCPUS", "Free", "Mem", "GPUs", "CPUs", "Cgroup", "RT", "Jobs",
	};
	static const char all_align[] = "llrrrrllll";
	const char *headers[10];
	char align[11];
	bool gpus = false, mem = false;
	size_t i, n = 0;
	struct table *t;
	json_t *node;
	int r = 0;

	/* A column only when some node has it: a pool without GPUs, or whose
	 * nodes do not say their memory, keeps its table as it was. */
	json_array_foreach(nodes, i, node) {
		gpus |= wire_int(node, "ngpus", 0) > 0;
		mem |= json_object_get(node, "mem_free") != NULL;
	}
	for (size_t c = 0; c < sizeof(all) / sizeof(all[0]); c++) {
		if ((c == 4 && !mem) || (c == 5 && !gpus))
			continue;
		headers[n] = all[c];
		align[n++] = all_align[c];
	}
	align[n] = '\0';
	t = table_create(n, headers, align);
	if (!t)
		return -ENOMEM;
	json_array_foreach(nodes, i, node) {
		char jobs[256], fr[16], tot[16];

		node_jobs(node, jobs, sizeof(jobs));
		r = r ?: table_cell(t, "%s", str_or(node, "name", "?"));
		r = r ?: table_cell(t, "%s", str_or(node, "state", "?"));
		r = r ?: table_cell(t, "%lld", wire_int(node, "ncpus", 0));
		r = r ?: table_cell(t, "%lld", wire_int(node, "free", 0));
		/* Memory free of what the node offers its jobs. */
		if (mem && json_object_get(node, "mem_free")) {
			long long free_b = wire_int(node, "mem_free", 0);

			mem_short(fr, sizeof(fr), free_b);
			mem_short(tot, sizeof(tot), free_b + wire_int(node, "mem_assigned", 0));
			r = r ?: table_cell(t, "%s/%s", fr, tot);
		} else if (mem) {
			r = r ?: table_cell(t, "-");
		}
		if (gpus && wire_int(node, "ngpus", 0) > 0)
			r = r ?: table_cell(t, "%lld/%lld", wire_int(node, "gpus_free", 0), wire_int(node, "ngpus", 0));
		else if (gpus)
			r = r ?: table_cell(t, "-");
		r = r ?: table_cell(t, "%s", str_or(node, "cpus", "-"));
		r = r ?: table_cell(t, "%s", str_or(node, "cgroup", "-"));
		r = r ?: table_cell(t, "%s", yes_no(node, "rt"));
		r = r ?: table_cell(t, "%s", jobs);
	}
	if (r == 0)
		table_print(t, f);
	table_destroy(t);
	return r;
}

int jobfmt_order_table(FILE *f, const json_t *reply)
{
	static const char *const headers[] = {
		"Place", "Job id", "User", "Round", "User last served", "Reason",
	};
	static const char *const fs_headers[] = {
		"Place", "Job id", "User", "Use (CPU s)", "Share", "Use/share", "Reason",
	};
	const json_t *order = json_object_get(reply, "order");
	bool fs = !strcmp(str_or(reply, "kind", ""), "fairshare");
	struct table *t = fs ? table_create(7, fs_headers, "rrlrrrl") : table_create(6, headers, "rrlrll");
	size_t i;
	json_t *e;
	int r = 0;

	if (!t)
		return -ENOMEM;
	fprintf(f, "Dispatch order of queue %s (%s, %s", str_or(reply, "queue", "?"),
		wire_bool(reply, "enabled", 0) ? "enabled" : "disabled",
		wire_bool(reply, "started", 0) ? "started" : "stopped");
	if (wire_int(reply, "max_running", 0) > 0)
		fprintf(f, ", max_running=%lld", wire_int(reply, "max_running", 0));
	if (wire_int(reply, "max_running_per_user", 0) > 0)
		fprintf(f, ", max_running_per_user=%lld", wire_int(reply, "max_running_per_user", 0));
	fprintf(f, "): %s\n", fs ? "fair share, least use over share first; a user's jobs all, then the next "
		"user's; round robin breaks ties" : "round robin over users, least recently served first");
	json_array_foreach(order, i, e) {
		long long round = wire_int(e, "round", 0), served = wire_int(e, "last_served", 0);

		if (fs) {
			r = r ?: table_cell(t, "%lld", wire_int(e, "place", 0));
			r = r ?: table_cell(t, "%lld", wire_int(e, "jobid", 0));
			r = r ?: table_cell(t, "%s", str_or(e, "owner", "?"));
			r = r ?: table_cell(t, "%.0f", json_number_value(json_object_get(e, "usage")));
			r = r ?: table_cell(t, "%.4f", json_number_value(json_object_get(e, "share")));
			r = r ?: table_cell(t, "%.1f", json_number_value(json_object_get(e, "key")));
			r = r ?: table_cell(t, "%s", str_or(e, "reason", ""));
			continue;
		}
		r = r ?: table_cell(t, "%lld", wire_int(e, "place", 0));
		r = r ?: table_cell(t, "%lld", wire_int(e, "jobid", 0));
		r = r ?: table_cell(t, "%s", str_or(e, "owner", "?"));
		r = r ?: round ? table_cell(t, "%lld", round) : table_cell(t, "-");
		r = r ?: served ? table_cell(t, "#%lld", served) : table_cell(t, "never");
		r = r ?: table_cell(t, "%s", str_or(e, "reason", ""));
	}
	if (r == 0)
		table_print(t, f);
	table_destroy(t);
	return r;
}
