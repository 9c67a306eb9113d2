/* SPDX-License-Identifier: MIT */
/* PBS Pro's qstat layouts (-f, -F json, default, -a, -Qf, -B) from qpool's JSON objects. */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobattr.h"
#include "jobfmt.h"
#include "jobid.h"
#include "parse.h"
#include "pbsfmt.h"
#include "timeutil.h"
#include "wire.h"

#define NONE LLONG_MIN   /* wire_int default: member null or absent */

static const char *const stamp_names[] = {
	"submit", "dispatch", "launch", "wrap", "fenced", "exec", "exit", "released", "done",
};

char pbsfmt_state_letter(const char *state)
{
	static const struct {
		const char *word;
		char letter;
	} map[] = {
		{ "queued", 'Q' }, { "held", 'H' }, { "running", 'R' }, { "exiting", 'E' },
		{ "waiting", 'W' }, { "completed", 'F' }, { "failed", 'F' }, { "cancelled", 'F' },
		{ "timeout", 'F' }, { "oom", 'F' },
	};

	for (size_t i = 0; state && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(state, map[i].word) == 0)
			return map[i].letter;
	return '?';
}

static const char *str_or(const json_t *o, const char *key, const char *def)
{
	const char *s = wire_str(o, key);

	return s ? s : def;
}

char pbsfmt_job_state(const json_t *job, int64_t now_ns)
{
	const char *at = wire_str(json_object_get(job, "attrs"), "Execution_Time");
	char letter = pbsfmt_state_letter(wire_str(job, "state"));

	/* An array one of whose subjobs has started: PBS Pro's B(egun). */
	if (json_object_get(job, "array") && (letter == 'R' || letter == 'E'))
		return 'B';
	/* Suspended (qsig -s suspend, preemption): PBS's S. */
	if (letter == 'R' && json_is_true(json_object_get(job, "suspended")))
		return 'S';
	if (letter == 'Q' && at && strtoll(at, NULL, 10) > now_ns / NSEC_PER_SEC)
		return 'W';
	return letter;
}

int pbsfmt_job_id(const json_t *job, const char *server, char *buf, size_t len)
{
	long long id = wire_int(job, "jobid", 0);

	if (json_object_get(job, "array_id"))
		return jobid_format_array(wire_int(job, "array_id", 0), wire_int(job, "array_index", 0), server,
					  buf, len);
	if (json_object_get(job, "array"))
		return jobid_format_array(id, JOBID_ARRAY_ALL, server, buf, len);
	return jobid_format(id, server, buf, len);
}

/* ctime(3) layout without its newline: "Sun Nov 22 11:09:09 2026". */
static void ctime_format(int64_t ns, char *buf, size_t len)
{
	time_t sec = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;

	if (!localtime_r(&sec, &tm) || strftime(buf, len, "%a %b %e %H:%M:%S %Y", &tm) == 0)
		snprintf(buf, len, "%lld", (long long)(ns / NSEC_PER_SEC));
}

static void hms(long long seconds, char *buf, size_t len)
{
	duration_format(seconds < 0 ? 0 : (uint64_t)seconds, buf, len);
}

static void set_str(json_t *o, const char *key, const char *v)
{
	if (v)
		json_object_set_new(o, key, json_string(v));
}

static void set_time(json_t *o, const char *key, long long ns)
{
	char buf[64];

	if (ns == NONE || ns <= 0)
		return;
	ctime_format(ns, buf, sizeof(buf));
	json_object_set_new(o, key, json_string(buf));
}

static void set_kb(json_t *o, const char *key, long long bytes)
{
	char buf[32];

	if (bytes == NONE || bytes < 0)
		return;
	snprintf(buf, sizeof(buf), "%lldkb", (bytes + 1023) / 1024);
	json_object_set_new(o, key, json_string(buf));
}

static void set_hms(json_t *o, const char *key, long long seconds)
{
	char buf[32];

	if (seconds == NONE || seconds < 0)
		return;
	hms(seconds, buf, sizeof(buf));
	json_object_set_new(o, key, json_string(buf));
}

/* The last stamp taken: the job's last change, PBS's mtime. */
static long long last_stamp(const json_t *times)
{
	long long last = NONE;

	for (size_t i = 0; i < sizeof(stamp_names) / sizeof(stamp_names[0]); i++) {
		long long v = wire_int(times, stamp_names[i], NONE);

		if (v != NONE && v > last)
			last = v;
	}
	return last;
}

/* PBS's Exit_status, in the codes tools decode (PSI/J, Parsl): a deleted
 * job 265 (256 + SIGKILL, what PBS records), one killed at its walltime
 * -29 and at its memory limit -27 (PBS's JOB_EXEC_KILL_WALLTIME and
 * _KILL_MEM), 256 + N for one killed by signal N, else its exit code; -1
 * (JOB_EXEC_FAIL1) for a finished job that never ran; absent while
 * unknown. */
static long long exit_code(const json_t *job)
{
	long long st = wire_int(job, "exit_status", NONE), sig = wire_int(job, "exit_signal", NONE);
	const char *state = str_or(job, "state", "");

	/* An array's own: 0, 1 (a subjob failed), 2 (some were deleted). */
	if (json_object_get(job, "array") && st != NONE)
		return st;
	if (strcmp(state, "cancelled") == 0)
		return 265;
	if (strcmp(state, "timeout") == 0)
		return -29;
	if (strcmp(state, "oom") == 0)
		return -27;
	if (sig != NONE && sig > 0)
		return 256 + sig;
	if (st == NONE && pbsfmt_state_letter(state) == 'F')
		return -1;
	return st;
}

static json_t *resource_list(const json_t *job)
{
	json_t *rl = json_object();
	long long ncpus = wire_int(job, "ncpus", NONE), mem = wire_int(job, "mem", NONE);
	char buf[64];

	if (!rl)
		return NULL;
	if (mem != NONE && mem > 0)
		set_kb(rl, "mem", mem);
	if (ncpus != NONE && json_array_size(json_object_get(job, "chunks"))) {
		/* Across nodes: the chunks as PBS writes them. */
		const json_t *chunks = json_object_get(job, "chunks"), *c;
		long long nodect = 0;
		size_t i, len = 0;
		char sel[512] = "";

		json_array_foreach(chunks, i, c) {
			long long cm = wire_int(c, "mem", 0);
			int w;

			nodect += wire_int(c, "count", 1);
			w = snprintf(sel + len, sizeof(sel) - len, "%s%lld:ncpus=%lld:mpiprocs=%lld", i ? "+" : "",
				     wire_int(c, "count", 1), wire_int(c, "ncpus", 1), wire_int(c, "mpiprocs", 1));
			if (w > 0 && (size_t)w < sizeof(sel) - len)
				len += (size_t)w;
			if (cm > 0) {
				w = snprintf(sel + len, sizeof(sel) - len, ":mem=%lldkb", (cm + 1023) / 1024);
				if (w > 0 && (size_t)w < sizeof(sel) - len)
					len += (size_t)w;
			}
			if (wire_int(c, "ngpus", 0) > 0) {
				w = snprintf(sel + len, sizeof(sel) - len, ":ngpus=%lld", wire_int(c, "ngpus", 0));
				if (w > 0 && (size_t)w < sizeof(sel) - len)
					len += (size_t)w;
			}
			/* The chunk's own features, as PBS writes them:
			 * bigmem=True, model=skylake. */
			for (const char *f = wire_str(c, "features") ? wire_str(c, "features") : ""; *f; ) {
				size_t flen = strcspn(f, ",");

				w = snprintf(sel + len, sizeof(sel) - len, ":%.*s%s", (int)flen, f,
					     memchr(f, '=', flen) ? "" : "=True");
				if (w > 0 && (size_t)w < sizeof(sel) - len)
					len += (size_t)w;
				f += flen + (f[flen] == ',');
			}
		}
		json_object_set_new(rl, "ncpus", json_integer(ncpus));
		json_object_set_new(rl, "nodect", json_integer(nodect));
		json_object_set_new(rl, "place", json_string(str_or(job, "place", "free")));
		json_object_set_new(rl, "select", json_string(sel));
	} else if (ncpus != NONE) {
		json_object_set_new(rl, "ncpus", json_integer(ncpus));
		json_object_set_new(rl, "nodect", json_integer(1));
		json_object_set_new(rl, "place", json_string(str_or(job, "place", "pack")));
		if (wire_int(job, "ngpus", 0) > 0)
			snprintf(buf, sizeof(buf), "1:ncpus=%lld:ngpus=%lld", ncpus, wire_int(job, "ngpus", 0));
		else
			snprintf(buf, sizeof(buf), "1:ncpus=%lld", ncpus);
		json_object_set_new(rl, "select", json_string(buf));
	}
	if (wire_int(job, "ngpus", 0) > 0)
		json_object_set_new(rl, "ngpus", json_integer(wire_int(job, "ngpus", 0)));
	set_hms(rl, "walltime", wire_int(job, "walltime", NONE));
	return rl;
}

static json_t *resources_used(const json_t *job, int64_t now_ns)
{
	json_t *ru = json_object();
	long long cpu = wire_int(job, "cpu_ns", NONE), el = jobfmt_elapsed(job, now_ns);
	const char *node = wire_str(job, "node");

	if (!ru)
		return NULL;
	if (cpu != NONE && cpu >= 0)
		set_hms(ru, "cput", cpu / NSEC_PER_SEC);
	set_kb(ru, "mem", wire_int(job, "mem_peak", NONE));
	if (node)
		json_object_set_new(ru, "ncpus", json_integer(wire_int(job, "ncpus", 0)));
	if (el >= 0)
		set_hms(ru, "walltime", el);
	return ru;
}

/* Variable_List: what PBS puts there about the submission, then the
 * job's own environment (present only for its owner and root). */
static json_t *variable_list(const json_t *job)
{
	const json_t *env = json_object_get(job, "env");
	json_t *vl = json_object();
	const char *key;
	json_t *v;

	if (!vl)
		return NULL;
	set_str(vl, "PBS_O_WORKDIR", wire_str(job, "workdir"));
	set_str(vl, "PBS_O_QUEUE", wire_str(job, "queue"));
	json_object_foreach((json_t *)env, key, v)
		if (json_is_string(v))
			json_object_set(vl, key, v);
	return vl;
}

static void set_path(json_t *o, const char *key, const char *server, const char *path)
{
	char *s;

	if (!path)
		return;
	if (asprintf(&s, "%s:%s", server, path) < 0)
		return;
	json_object_set_new(o, key, json_string(s));
	free(s);
}

/* What qsub recorded under PBS names (Account_Name, Mail_Points,
 * Resource_List.select as written, ...) over what is derived here:
 * "A.b" goes into object A, the rest at the top. */
static void recorded_merge(json_t *a, const json_t *recorded)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)recorded, key, v) {
		const char *dot = strchr(key, '.');

		/* A row of an older qpool may hold any name: one of qpool's
		 * own would print over it, one with a newline forge lines. */
		if (!json_is_string(v) || !jobattr_name_ok(key))
			continue;
		if (dot && dot != key && dot[1]) {
			char parent[64];
			json_t *obj;

			snprintf(parent, sizeof(parent), "%.*s", (int)(dot - key), key);
			obj = json_object_get(a, parent);
			if (!obj) {
				obj = json_object();
				json_object_set_new(a, parent, obj);
			}
			/* What qpool enforces (qalter may have changed it) wins
			 * over the text qsub recorded. */
			if (json_is_object(obj) && !(strcmp(parent, "Resource_List") == 0 &&
						     json_object_get(obj, dot + 1) &&
						     strcmp(dot + 1, "select") != 0 && strcmp(dot + 1, "place") != 0))
				json_object_set(obj, dot + 1, v);
		} else if (!json_is_object(json_object_get(a, key))) {
			json_object_set(a, key, v);
		}
	}
}

/* "afterok:12:13[]" as PBS shows it: "afterok:12.server:13[].server". */
static json_t *depend_servers(const char *d, const char *server)
{
	char buf[4096];
	size_t at = 0;

	for (const char *p = d; *p && at + strlen(server) + 2 < sizeof(buf); p++) {
		buf[at++] = *p;
		if ((*p >= '0' && *p <= '9') || *p == ']') {
			char n = p[1];

			if (!(n >= '0' && n <= '9') && n != '[' && n != ']')
				at += (size_t)snprintf(buf + at, sizeof(buf) - at, ".%s", server);
		}
	}
	buf[at < sizeof(buf) ? at : sizeof(buf) - 1] = '\0';
	return json_string(buf);
}

/* PBS's run_count: the job's starts, those before its requeues
 * (attrs.run_count, which the store counts) and the one now. */
static long long run_count(const json_t *job, const char *state)
{
	const json_t *times = json_object_get(job, "times");
	const char *rq = wire_str(json_object_get(job, "attrs"), "run_count");
	long long runs = rq ? strtoll(rq, NULL, 10) : 0;

	if (strcmp(state, "queued") != 0 && strcmp(state, "held") != 0 &&
	    (wire_int(times, "exec", 0) || wire_int(times, "launch", 0) || wire_int(times, "dispatch", 0)))
		runs++;
	return runs;
}

json_t *pbsfmt_job_attrs(const json_t *job, const char *server, int64_t now_ns)
{
	const json_t *times = json_object_get(job, "times");
	const char *state = str_or(job, "state", "");
	const char *node = wire_str(job, "node");
	long long ncpus = wire_int(job, "ncpus", 0), code = exit_code(job);
	long long cpu = wire_int(job, "cpu_ns", NONE);
	json_t *a = json_object();
	char buf[512], letter[2] = { pbsfmt_job_state(job, now_ns), 0 };

	if (!a)
		return NULL;
	set_str(a, "Job_Name", wire_str(job, "name"));
	snprintf(buf, sizeof(buf), "%s@%s", str_or(job, "owner", "?"), server);
	json_object_set_new(a, "Job_Owner", json_string(buf));
	json_object_set_new(a, "resources_used", resources_used(job, now_ns));
	json_object_set_new(a, "job_state", json_string(letter));
	set_str(a, "queue", wire_str(job, "queue"));
	json_object_set_new(a, "server", json_string(server));
	set_time(a, "ctime", wire_int(times, "submit", NONE));
	set_path(a, "Error_Path", server, wire_str(job, "stderr"));
	if (wire_str(job, "exec_host")) {
		set_str(a, "exec_host", wire_str(job, "exec_host"));
		set_str(a, "exec_vnode", wire_str(job, "exec_vnode"));
	} else if (node) {
		snprintf(buf, sizeof(buf), "%s/0*%lld", node, ncpus);
		json_object_set_new(a, "exec_host", json_string(buf));
		snprintf(buf, sizeof(buf), "(%s:ncpus=%lld)", node, ncpus);
		json_object_set_new(a, "exec_vnode", json_string(buf));
	}
	/* A hold for dependencies is PBS's system hold. */
	json_object_set_new(a, "Hold_Types", json_string(strcmp(state, "held") != 0 ? "n" :
		wire_str(job, "depend") && wire_str(job, "reason") &&
		(!strncmp(wire_str(job, "reason"), "waiting on dependencies", 23) ||
		 !strncmp(wire_str(job, "reason"), "dependency ", 11)) ? "s" : "u"));
	if (wire_str(job, "array")) {
		json_object_set_new(a, "array", json_string("True"));
		set_str(a, "array_indices_submitted", wire_str(job, "array"));
	}
	if (json_object_get(job, "array_id")) {
		jobid_format_array(wire_int(job, "array_id", 0), JOBID_ARRAY_ALL, server, buf, sizeof(buf));
		json_object_set_new(a, "array_id", json_string(buf));
		json_object_set_new(a, "array_index", json_integer(wire_int(job, "array_index", 0)));
	}
	if (wire_str(job, "depend"))
		json_object_set_new(a, "depend", depend_servers(wire_str(job, "depend"), server));
	json_object_set_new(a, "Join_Path", json_string(wire_bool(job, "join", 0) ? "oe" : "n"));
	set_time(a, "mtime", last_stamp(times));
	set_path(a, "Output_Path", server, wire_str(job, "stdout"));
	set_time(a, "qtime", wire_int(times, "submit", NONE));
	json_object_set_new(a, "Resource_List", resource_list(job));
	set_time(a, "stime", wire_int(times, "exec", NONE) != NONE ? wire_int(times, "exec", NONE)
								     : wire_int(times, "dispatch", NONE));
	set_time(a, "obittime", wire_int(times, "done", NONE));
	set_str(a, "jobdir", wire_str(job, "workdir"));
	set_time(a, "etime", wire_int(times, "submit", NONE));
	if (code != NONE)
		json_object_set_new(a, "Exit_status", json_integer(code));
	set_str(a, "comment", wire_str(job, "reason"));
	/* A waiting job's start estimate (docs/ESTIMATES.md), as PBS's
	 * scheduler sets it. */
	if (wire_int(job, "estimated_start", 0) > 0) {
		json_t *est = json_object();

		set_time(est, "start_time", wire_int(job, "estimated_start", 0) * NSEC_PER_SEC);
		set_str(est, "exec_vnode", wire_str(job, "estimated_exec_vnode"));
		json_object_set_new(a, "estimated", est);
	}
	json_object_set_new(a, "Variable_List", variable_list(job));
	recorded_merge(a, json_object_get(job, "attrs"));
	if (run_count(job, state) > 0)
		json_object_set_new(a, "run_count", json_integer(run_count(job, state)));
	/* qpool's own, beside PBS's. */
	set_str(a, "qpool_state", state);
	set_str(a, "exec_cpus", wire_str(job, "cpus"));
	if (wire_int(job, "exit_signal", NONE) != NONE)
		json_object_set_new(a, "exit_signal", json_integer(wire_int(job, "exit_signal", 0)));
	set_str(a, "reason", wire_str(job, "reason"));
	set_str(a, "workdir", wire_str(job, "workdir"));
	if (cpu != NONE && cpu >= 0) {
		hms(cpu / NSEC_PER_SEC, buf, sizeof(buf));
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%02lld",
			 cpu % NSEC_PER_SEC / (NSEC_PER_SEC / 100));
		json_object_set_new(a, "cpu_time", json_string(buf));
	}
	if (wire_int(job, "mem_peak", NONE) != NONE && wire_int(job, "mem_peak", 0) >= 0) {
		size_format((uint64_t)wire_int(job, "mem_peak", 0), buf, sizeof(buf));
		json_object_set_new(a, "mem_peak", json_string(buf));
	}
	for (size_t i = 0; i < sizeof(stamp_names) / sizeof(stamp_names[0]); i++) {
		long long v = wire_int(times, stamp_names[i], NONE);
		char key[32];

		if (v == NONE)
			continue;
		jobfmt_time(buf, sizeof(buf), v);
		snprintf(key, sizeof(key), "%s_time", stamp_names[i]);
		json_object_set_new(a, key, json_string(buf));
	}
	return a;
}

static void value_put(FILE *f, const json_t *v)
{
	if (json_is_string(v))
		jobfmt_escaped_put(f, json_string_value(v));
	else if (json_is_integer(v))
		fprintf(f, "%lld", (long long)json_integer_value(v));
	else if (json_is_boolean(v))
		fputs(json_is_true(v) ? "True" : "False", f);
}

void pbsfmt_attrs_put(FILE *f, const json_t *attrs)
{
	const char *key, *sub;
	json_t *v, *w;

	json_object_foreach((json_t *)attrs, key, v) {
		if (!json_is_object(v)) {
			fputs("    ", f);
			jobfmt_escaped_put(f, key);
			fputs(" = ", f);
			value_put(f, v);
			fputc('\n', f);
		} else if (strcmp(key, "Variable_List") == 0) {
			bool first = true;

			fprintf(f, "    %s = ", key);
			json_object_foreach(v, sub, w) {
				fprintf(f, "%s", first ? "" : ",");
				jobfmt_escaped_put(f, sub);
				fputc('=', f);
				value_put(f, w);
				first = false;
			}
			fputc('\n', f);
		} else {
			json_object_foreach(v, sub, w) {
				fputs("    ", f);
				jobfmt_escaped_put(f, key);
				fputc('.', f);
				jobfmt_escaped_put(f, sub);
				fputs(" = ", f);
				value_put(f, w);
				fputc('\n', f);
			}
		}
	}
}

void pbsfmt_job_full(FILE *f, const json_t *job, const char *server, int64_t now_ns)
{
	json_t *attrs = pbsfmt_job_attrs(job, server, now_ns);

	char id[128];

	pbsfmt_job_id(job, server, id, sizeof(id));
	fprintf(f, "Job Id: %s\n", id);
	if (attrs)
		pbsfmt_attrs_put(f, attrs);
	json_decref(attrs);
}

json_t *pbsfmt_jobs_json(const json_t *jobs, const char *server, int64_t now_ns)
{
	json_t *all = json_object(), *doc;
	const json_t *job;
	size_t i;

	if (!all)
		return NULL;
	json_array_foreach(jobs, i, job) {
		char id[128];

		pbsfmt_job_id(job, server, id, sizeof(id));
		json_object_set_new(all, id, pbsfmt_job_attrs(job, server, now_ns));
	}
	doc = json_pack("{s:I, s:s, s:s, s:o}", "timestamp", (json_int_t)(now_ns / NSEC_PER_SEC),
			"pbs_version", PBSFMT_PBS_VERSION, "pbs_server", server, "Jobs", all);
	return doc;
}

/* Copies s into buf cut to width characters, the last one '*' when cut
 * (PBS's mark); whole when width is 0. Control characters become '?'. */
static void cut(const char *s, size_t width, char *buf, size_t len)
{
	size_t chars = 0, keep = 0, n = strlen(s);

	for (size_t i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (width && chars == width - 1)
			keep = i;
		chars++;
	}
	if (width && chars > width)
		snprintf(buf, len, "%.*s*", (int)keep, s);
	else
		snprintf(buf, len, "%.*s", (int)n, s);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			*p = '?';
}

/* Prints s left-aligned in width characters (UTF-8 counted), cut unless wide. */
static void col(FILE *f, const char *s, size_t width, bool wide)
{
	char buf[1024];
	size_t chars = 0;

	cut(s, wide ? 0 : width, buf, sizeof(buf));
	for (size_t i = 0; buf[i]; i++)
		chars += ((unsigned char)buf[i] & 0xc0) != 0x80;
	fputs(buf, f);
	for (; chars < width; chars++)
		fputc(' ', f);
}

/* The -n and -s lines of one job, or on the same line with -1. */
static void job_extras(FILE *f, const json_t *job, const struct pbsfmt_opts *o)
{
	const char *node = wire_str(job, "node"), *reason = wire_str(job, "reason");
	char host[256], buf[512];

	if (o->nodes) {
		if (wire_str(job, "exec_host"))
			snprintf(host, sizeof(host), "%s", wire_str(job, "exec_host"));
		else if (node)
			snprintf(host, sizeof(host), "%s/0*%lld", node, wire_int(job, "ncpus", 0));
		else
			snprintf(host, sizeof(host), "--");
		cut(host, 0, buf, sizeof(buf));
		fprintf(f, "%s%s", o->one_line ? " " : "\n   ", buf);
	}
	if (o->comments && reason) {
		cut(reason, 0, buf, sizeof(buf));
		fprintf(f, "%s%s", o->one_line ? " " : "\n   ", buf);
	}
	fputc('\n', f);
}

void pbsfmt_jobs_classic(FILE *f, const json_t *jobs, const char *server,
			 const struct pbsfmt_opts *o)
{
	const json_t *job;
	size_t i;

	if (json_array_size(jobs) == 0)
		return;
	fputs("Job id            Name             User              Time Use S Queue\n"
	      "----------------  ---------------- ----------------  -------- - -----\n", f);
	json_array_foreach(jobs, i, job) {
		long long cpu = wire_int(job, "cpu_ns", NONE);
		char id[128], use[32] = "0";

		pbsfmt_job_id(job, server, id, sizeof(id));
		if (cpu != NONE && cpu >= 0)
			hms(cpu / NSEC_PER_SEC, use, sizeof(use));
		col(f, id, 16, o->wide);
		fputs("  ", f);
		col(f, str_or(job, "name", ""), 16, o->wide);
		fputc(' ', f);
		col(f, str_or(job, "owner", "?"), 16, o->wide);
		fprintf(f, "  %8s %c ", use, pbsfmt_job_state(job, time_wall_ns()));
		cut(str_or(job, "queue", ""), 0, id, sizeof(id));
		fputs(id, f);
		job_extras(f, job, o);
	}
}

/* HH:MM of seconds, "--" when unknown. */
static void hhmm(long long seconds, char *buf, size_t len)
{
	if (seconds == NONE || seconds < 0)
		snprintf(buf, len, "--");
	else
		snprintf(buf, len, "%02lld:%02lld", seconds / 3600, seconds / 60 % 60);
}

void pbsfmt_est_start(char *buf, size_t len, long long t, int64_t now_ns)
{
	static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t when = (time_t)t, now = (time_t)(now_ns / NSEC_PER_SEC);
	struct tm tw, tn;

	if (t <= 0 || !localtime_r(&when, &tw) || !localtime_r(&now, &tn)) {
		snprintf(buf, len, "--");
		return;
	}
	if (tw.tm_year == tn.tm_year && tw.tm_yday == tn.tm_yday)
		snprintf(buf, len, "%02d:%02d", tw.tm_hour, tw.tm_min);
	else if (when > now && when - now < 7 * 86400)
		snprintf(buf, len, "%s %02d", days[tw.tm_wday], tw.tm_hour);
	else if (tw.tm_year == tn.tm_year)
		snprintf(buf, len, "%s", months[tw.tm_mon]);
	else
		snprintf(buf, len, "%d", tw.tm_year + 1900);
}

void pbsfmt_jobs_alt(FILE *f, const json_t *jobs, const char *server, int64_t now_ns,
		     const struct pbsfmt_opts *o)
{
	const json_t *job;
	size_t i;

	if (json_array_size(jobs) == 0)
		return;
	if (o->estimates)
		fprintf(f, "\n%s: \n"
			"                                                            Req'd  Req'd   Est\n"
			"Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Start\n"
			"--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----\n",
			server);
	else
		fprintf(f, "\n%s: \n"
			"                                                            Req'd  Req'd   Elap\n"
			"Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time\n"
			"--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----\n",
			server);
	json_array_foreach(jobs, i, job) {
		long long mem = wire_int(job, "mem", NONE);
		const char *node = wire_str(job, "node");
		char id[128], memb[32] = "--", req[48], el[48], nds[24] = "--";

		pbsfmt_job_id(job, server, id, sizeof(id));
		if (node)
			snprintf(nds, sizeof(nds), "%zu", json_array_size(json_object_get(job, "alloc")) ?: 1);
		if (mem != NONE && mem > 0) {
			size_format((uint64_t)mem, memb, sizeof(memb));
			for (char *p = memb; *p; p++)
				*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
			if (memb[strlen(memb) - 1] != 'b')
				strcat(memb, "b");
		}
		hhmm(wire_int(job, "walltime", NONE), req, sizeof(req));
		hhmm(jobfmt_elapsed(job, now_ns), el, sizeof(el));
		if (o->estimates) {
			pbsfmt_est_start(el, sizeof(el), wire_int(job, "estimated_start", 0), now_ns);
			node = NULL;   /* the column is the estimate's, "--" for a started job */
			if (wire_int(job, "estimated_start", 0) > 0)
				node = "";
		}
		col(f, id, 15, o->wide);
		fputc(' ', f);
		col(f, str_or(job, "owner", "?"), 8, o->wide);
		fputc(' ', f);
		col(f, str_or(job, "queue", ""), 8, o->wide);
		fputc(' ', f);
		col(f, str_or(job, "name", ""), 10, o->wide);
		fprintf(f, " %6s %3s %3lld %6s %5s %c %5s", "--", nds,
			wire_int(job, "ncpus", 0), memb, req, pbsfmt_job_state(job, now_ns),
			node ? el : "--");
		job_extras(f, job, o);
	}
}

json_t *pbsfmt_queue_attrs(const json_t *q)
{
	long long queued = wire_int(q, "queued", 0), held = wire_int(q, "held", 0);
	long long running = wire_int(q, "running", 0);
	static const char *const res[] = { "ncpus", "mem", "walltime" };
	json_t *a = json_object();
	char buf[160];

	if (!a)
		return NULL;
	json_object_set_new(a, "queue_type", json_string("Execution"));
	json_object_set_new(a, "Priority", json_integer(wire_int(q, "priority", 0)));
	json_object_set_new(a, "total_jobs", json_integer(queued + held + running));
	snprintf(buf, sizeof(buf), "Transit:0 Queued:%lld Held:%lld Waiting:0 Running:%lld Exiting:0 Begun:0",
		 queued, held, running);
	json_object_set_new(a, "state_count", json_string(buf));
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < 3; i++) {
			char key[48];
			long long v;

			snprintf(key, sizeof(key), "%s_%s", res[i], pass ? "default" : "max");
			v = wire_int(q, key, 0);
			if (i == 0 && pass == 0 && wire_int(q, "ncpus", 0) > 0)
				v = wire_int(q, "ncpus", 0);
			if (v <= 0)
				continue;
			if (i == 1)
				snprintf(buf, sizeof(buf), "%lldkb", (v + 1023) / 1024);
			else if (i == 2)
				hms(v, buf, sizeof(buf));
			snprintf(key, sizeof(key), "resources_%s.%s", pass ? "default" : "max", res[i]);
			json_object_set_new(a, key, i == 0 ? json_integer(v) : json_string(buf));
		}
	}
	if (wire_int(q, "max_running", 0) > 0)
		json_object_set_new(a, "max_running", json_integer(wire_int(q, "max_running", 0)));
	json_object_set_new(a, "enabled", json_boolean(wire_bool(q, "enabled", 0)));
	json_object_set_new(a, "started", json_boolean(wire_bool(q, "started", 0)));
	if (wire_str(q, "reserve"))
		json_object_set_new(a, "qpool_reserve", json_string(wire_str(q, "reserve")));
	if (wire_str(q, "reason") && *wire_str(q, "reason"))
		json_object_set_new(a, "comment", json_string(wire_str(q, "reason")));
	return a;
}

void pbsfmt_queue_full(FILE *f, const json_t *q)
{
	json_t *a = pbsfmt_queue_attrs(q);

	fprintf(f, "Queue: %s\n", str_or(q, "name", "?"));
	if (a)
		pbsfmt_attrs_put(f, a);
	json_decref(a);
}

void pbsfmt_server(FILE *f, const json_t *queues, const char *server, bool full)
{
	long long queued = 0, held = 0, running = 0;
	const json_t *q;
	size_t i;

	json_array_foreach(queues, i, q) {
		queued += wire_int(q, "queued", 0);
		held += wire_int(q, "held", 0);
		running += wire_int(q, "running", 0);
	}
	if (full) {
		fprintf(f, "Server: %s\n    server_state = Active\n    server_host = %s\n"
			"    total_jobs = %lld\n"
			"    state_count = Transit:0 Queued:%lld Held:%lld Waiting:0 Running:%lld Exiting:0 Begun:0\n"
			"    pbs_version = %s\n",
			server, server, queued + held + running, queued, held, running,
			PBSFMT_PBS_VERSION);
		return;
	}
	fputs("Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status\n"
	      "---------------- ----- ----- ----- ----- ----- ----- ----- ----- -----------\n", f);
	col(f, server, 16, false);
	fprintf(f, " %5d %5lld %5lld %5lld %5lld %5d %5d %5d Active\n", 0, queued + held + running,
		queued, running, held, 0, 0, 0);
}

void pbsfmt_server_licenses(FILE *f, const json_t *licenses, bool full)
{
	const json_t *l;
	size_t i;

	if (!full)
		return;
	json_array_foreach(licenses, i, l) {
		fprintf(f, "    resources_available.%s = %lld\n    resources_assigned.%s = %lld\n",
			wire_str(l, "name") ? wire_str(l, "name") : "?", wire_int(l, "total", 0),
			wire_str(l, "name") ? wire_str(l, "name") : "?", wire_int(l, "used", 0));
	}
}

void pbsfmt_server_ha(FILE *f, const json_t *ha, bool full)
{
	const json_t *sb = json_object_get(ha, "standbys"), *e;
	const char *role = wire_str(ha, "role"), *active = wire_str(ha, "active");
	long long epoch = wire_int(ha, "epoch", 0);
	size_t i;

	if (!json_is_object(ha))
		return;
	if (full)
		fprintf(f, "    server_role = %s\n    active_server = %s\n    server_epoch = %lld\n"
			"    standby_servers = ", role ? role : "", active ? active : "", epoch);
	else
		fprintf(f, "Active: %s (epoch %lld), this server %s; standbys: ", active ? active : "-", epoch,
			role ? role : "-");
	json_array_foreach(sb, i, e) {
		fprintf(f, "%s%s", i ? "," : "", wire_str(e, "address") ? wire_str(e, "address") : "");
	}
	fputs(json_array_size(sb) ? "\n" : (full ? "\n" : "none\n"), f);
}
