/* SPDX-License-Identifier: MIT */
/* Job store rows to job objects and struct job, through the row
 * accessors of jobstore-internal.h: read once for both drivers. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobstore-internal.h"

static void json_set_text(json_t *o, const char *key, const struct jobstore_row *r, int col)
{
	const char *s = row_text(r, col);

	json_object_set_new(o, key, s ? json_string(s) : json_null());
}

static void json_set_int(json_t *o, const char *key, const struct jobstore_row *r, int col)
{
	if (row_null(r, col))
		json_object_set_new(o, key, json_null());
	else
		json_object_set_new(o, key, json_integer(row_i64(r, col)));
}

/* PBS's exec_host ("n1/0*2+n2/0*2") and exec_vnode ("(n1:ncpus=2)+...")
 * of a job object that has a node: from its alloc, else its node. */
void jobstore_json_exec_host_set(json_t *o)
{
	const json_t *alloc = json_object_get(o, "alloc");
	const char *node = json_string_value(json_object_get(o, "node"));
	char *host = NULL, *vnode = NULL;
	size_t hl = 0, vl = 0, i, n = json_array_size(alloc);
	FILE *h, *v;

	if (!node)
		return;
	h = open_memstream(&host, &hl);
	v = open_memstream(&vnode, &vl);
	if (!h || !v) {
		if (h)
			fclose(h);
		if (v)
			fclose(v);
		free(host);
		free(vnode);
		return;
	}
	for (i = 0; i < (n ? n : 1); i++) {
		const json_t *e = n ? json_array_get(alloc, i) : o;
		const char *name = n ? json_string_value(json_object_get(e, "node")) : node;
		long long ncpus = json_integer_value(json_object_get(e, "ncpus"));
		long long mem = json_integer_value(json_object_get(e, "mem"));

		fprintf(h, "%s%s/0*%lld", i ? "+" : "", name ? name : "?", ncpus);
		fprintf(v, "%s(%s:ncpus=%lld", i ? "+" : "", name ? name : "?", ncpus);
		if (mem > 0)
			fprintf(v, ":mem=%lldkb", (mem + 1023) / 1024);
		fputc(')', v);
	}
	fclose(h);
	fclose(v);
	json_object_set_new(o, "exec_host", json_string(host));
	json_object_set_new(o, "exec_vnode", json_string(vnode));
	free(host);
	free(vnode);
}

/* p with its placeholders filled in: "^array_index^" in a subjob's -o
 * and -e, as PBS Pro does, and sbatch's %-patterns as it sends them:
 * "^job_id^" (the job's or subjob's own id), "^array_id^" (its array's,
 * or its own) and "^node^" (its first node, once it has one). A
 * placeholder without its value yet stays as it is. */
static json_t *placeholders_expand(const struct jobstore_row *r, const char *p)
{
	bool sub = !row_null(r, COL_ARRAY_ID);
	char index[24], id[24], array[24];
	const struct {
		const char *pat, *value;
	} subs[] = {
		{ "^array_index^", sub ? index : NULL },
		{ "^job_id^", row_null(r, COL_ARRAY_SPEC) ? id : NULL },
		{ "^array_id^", sub ? array : id },
		{ "^node^", row_null(r, COL_NODE) ? NULL : row_text(r, COL_NODE) },
	};
	char buf[8192];
	size_t at = 0;

	snprintf(index, sizeof(index), "%" PRId64, row_i64(r, COL_ARRAY_INDEX));
	snprintf(id, sizeof(id), "%" PRId64, row_i64(r, COL_ID));
	snprintf(array, sizeof(array), "%" PRId64, row_i64(r, COL_ARRAY_ID));
	while (*p && at + 1 < sizeof(buf)) {
		size_t i = 0, n;

		if (*p == '^')
			for (; i < sizeof(subs) / sizeof(subs[0]); i++)
				if (subs[i].value && !strncmp(p, subs[i].pat, strlen(subs[i].pat)))
					break;
		if (*p != '^' || i == sizeof(subs) / sizeof(subs[0])) {
			buf[at++] = *p++;
			continue;
		}
		n = strlen(subs[i].value);
		if (at + n >= sizeof(buf))
			break;
		memcpy(buf + at, subs[i].value, n);
		at += n;
		p += strlen(subs[i].pat);
	}
	buf[at] = '\0';
	return json_string(buf);
}

/* Default output path: <workdir>/<name>.<o|e><id>, as PBS does; a path
 * ending in '/' (qsub -o DIR/) is a directory to put that name in. */
static json_t *output_path(const struct jobstore_row *r, int col, char kind)
{
	const char *p = row_text(r, col);
	const char *dir = row_text(r, COL_WORKDIR);
	char *s;
	json_t *v;

	bool sub = !row_null(r, COL_ARRAY_ID);
	bool array = !row_null(r, COL_ARRAY_SPEC);
	char suffix[32] = "";

	if (p && *p && p[strlen(p) - 1] != '/')
		return placeholders_expand(r, p);
	if (p && *p)
		dir = p;
	/* An array's subjobs: name.oID.INDEX, PBS Pro's names (Torque writes
	 * name.oID-INDEX); the array itself shows PBS Pro's pattern. */
	if (sub)
		snprintf(suffix, sizeof(suffix), ".%" PRId64, row_i64(r, COL_ARRAY_INDEX));
	else if (array)
		snprintf(suffix, sizeof(suffix), ".^array_index^");
	if (asprintf(&s, "%s%s%s.%c%" PRId64 "%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
		     row_text(r, COL_NAME), kind,
		     row_i64(r, sub ? COL_ARRAY_ID : COL_ID), suffix) < 0)
		return json_null();
	v = json_string(s);
	free(s);
	return v ? v : json_null();
}

/* The row's PBS attributes: a JSON object (empty when none). */
static json_t *attrs_get(const struct jobstore_row *r)
{
	const char *text = row_text(r, COL_ATTRS);
	json_t *a = text ? json_loads(text, 0, NULL) : NULL;

	if (!json_is_object(a)) {
		json_decref(a);
		a = json_object();
	}
	return a;
}

/* env (a JSON object in the row) and script, from columns env_col and
 * env_col + 1. */
void jobstore_row_payload_set(json_t *o, const struct jobstore_row *r, int env_col)
{
	json_t *env = json_loads(row_text(r, env_col), 0, NULL);

	json_object_set_new(o, "env", env ? env : json_object());
	json_set_text(o, "script", r, env_col + 1);
}

/* stdout, stderr (the stdout file when joined; both the stderr file
 * with -j eo) and join. */
static void outputs_set(json_t *o, const struct jobstore_row *r, const json_t *attrs)
{
	const char *stdout_path, *jp = json_string_value(json_object_get(attrs, "Join_Path"));
	bool eo = (int)row_i64(r, COL_JOIN) && jp && strcmp(jp, "eo") == 0;

	json_object_set_new(o, "stdout", output_path(r, eo ? COL_STDERR : COL_STDOUT, eo ? 'e' : 'o'));
	stdout_path = json_string_value(json_object_get(o, "stdout"));
	if ((int)row_i64(r, COL_JOIN) && stdout_path)
		json_object_set_new(o, "stderr", json_string(stdout_path));
	else
		json_object_set_new(o, "stderr", output_path(r, COL_STDERR, 'e'));
	json_object_set_new(o, "join", json_boolean((int)row_i64(r, COL_JOIN)));
}

/* The wall stamps first..last that are set, by name. */
static json_t *stamps_json(const struct jobstore_row *r, int first, int last)
{
	json_t *times = json_object();

	for (int i = first; times && i <= last; i++)
		if (!row_null(r, COL_T_FIRST + i))
			json_object_set_new(times, job_stamp_names[i],
					    json_integer(row_i64(r, COL_T_FIRST + i)));
	return times;
}

/* array (the index set), array_id and array_index, depend: when set. */
static void array_members_set(json_t *o, const struct jobstore_row *r)
{
	if (!row_null(r, COL_ARRAY_SPEC))
		json_set_text(o, "array", r, COL_ARRAY_SPEC);
	if (!row_null(r, COL_ARRAY_ID)) {
		json_set_int(o, "array_id", r, COL_ARRAY_ID);
		json_set_int(o, "array_index", r, COL_ARRAY_INDEX);
	}
	if (!row_null(r, COL_DEPEND))
		json_set_text(o, "depend", r, COL_DEPEND);
}

/* The job's GPUs in all: qpoold keeps them as Resource_List.ngpus in its
 * attributes (requests.c); absent: none. */
static uint32_t attrs_ngpus(const char *text)
{
	long long v = text ? strtoll(text, NULL, 10) : 0;

	return v > 0 && v <= 1000000 ? (uint32_t)v : 0;
}

static void gpus_set(json_t *o, const json_t *attrs)
{
	uint32_t n = attrs_ngpus(json_string_value(json_object_get(attrs, "Resource_List.ngpus")));

	if (n)
		json_object_set_new(o, "ngpus", json_integer(n));
}

/* A share's GPUs as the wire has them: the node's indices, and how many. */
static void alloc_gpus_set(json_t *o, const char *text)
{
	uint64_t m = 0;
	json_t *arr = json_array();

	if (text)
		(void)job_gpus_parse(text, &m);
	for (unsigned i = 0; i < 64; i++)
		if (m & (UINT64_C(1) << i))
			json_array_append_new(arr, json_integer(i));
	json_object_set_new(o, "ngpus", json_integer((json_int_t)json_array_size(arr)));
	json_object_set_new(o, "gpus", arr);
}

json_t *jobstore_row_job_json(const struct jobstore_row *r)
{
	json_t *o = json_object();
	json_t *times, *attrs;

	json_object_set_new(o, "jobid", json_integer(row_i64(r, COL_ID)));
	json_set_text(o, "name", r, COL_NAME);
	json_set_text(o, "queue", r, COL_QUEUE);
	json_set_text(o, "owner", r, COL_OWNER);
	json_set_int(o, "uid", r, COL_UID);
	json_set_int(o, "gid", r, COL_GID);
	json_set_text(o, "state", r, COL_STATE);
	json_set_int(o, "ncpus", r, COL_NCPUS);
	json_set_int(o, "mem", r, COL_MEM);
	json_set_int(o, "walltime", r, COL_WALLTIME);
	json_set_text(o, "workdir", r, COL_WORKDIR);
	attrs = attrs_get(r);
	outputs_set(o, r, attrs);
	gpus_set(o, attrs);
	json_object_set_new(o, "attrs", attrs);
	json_object_set_new(o, "rerunnable", json_boolean((int)row_i64(r, COL_RERUN)));
	json_set_text(o, "node", r, COL_NODE);
	json_set_text(o, "cpus", r, COL_CPUS);
	json_set_int(o, "exit_status", r, COL_EXIT_STATUS);
	json_set_int(o, "exit_signal", r, COL_EXIT_SIGNAL);
	json_set_text(o, "reason", r, COL_REASON);
	json_set_int(o, "cpu_ns", r, COL_CPU_NS);
	json_set_int(o, "mem_peak", r, COL_MEM_PEAK);
	json_object_set_new(o, "oom", json_boolean((int)row_i64(r, COL_OOM)));
	json_object_set_new(o, "times", stamps_json(r, 0, STAMP_MAX - 1));
	times = json_object();
	for (int i = STAMP_WRAP; i <= STAMP_RELEASED; i++)
		if (!row_null(r, COL_M_FIRST + i - STAMP_WRAP))
			json_object_set_new(times, job_stamp_names[i],
					    json_integer(row_i64(r, COL_M_FIRST + i - STAMP_WRAP)));
	json_object_set_new(o, "mono", times);
	if (!row_null(r, COL_CHUNKS)) {
		json_t *chunks = json_loads(row_text(r, COL_CHUNKS), 0, NULL);

		json_object_set_new(o, "chunks", chunks ? chunks : json_array());
	}
	json_set_text(o, "place", r, COL_PLACE);
	array_members_set(o, r);
	return o;
}
json_t *jobstore_row_launch_json(const struct jobstore_row *r)
{
	json_t *o = json_object(), *attrs;

	if (!o)
		return NULL;
	json_object_set_new(o, "jobid", json_integer(row_i64(r, COL_ID)));
	json_set_text(o, "name", r, COL_NAME);
	json_set_text(o, "queue", r, COL_QUEUE);
	json_set_text(o, "user", r, COL_OWNER);
	json_set_int(o, "uid", r, COL_UID);
	json_set_int(o, "gid", r, COL_GID);
	json_set_text(o, "workdir", r, COL_WORKDIR);
	attrs = attrs_get(r);
	outputs_set(o, r, attrs);
	json_object_set_new(o, "attrs", attrs);
	jobstore_row_payload_set(o, r, COL_ENV);
	json_set_int(o, "ncpus", r, COL_NCPUS);
	json_set_int(o, "mem", r, COL_MEM);
	json_set_int(o, "walltime", r, COL_WALLTIME);
	json_object_set_new(o, "umask", json_integer(
		row_null(r, COL_LAUNCH_UMASK) ? UMASK_DEFAULT :
		(int)row_i64(r, COL_LAUNCH_UMASK) & 0777));
	json_object_set_new(o, "times", stamps_json(r, STAMP_SUBMIT, STAMP_DISPATCH));
	array_members_set(o, r);
	return o;
}

json_t *jobstore_row_alloc_json(const struct jobstore_row *r)
{
	json_t *o = json_object(), *times = json_object();

	json_set_text(o, "node", r, 1);
	json_set_int(o, "ncpus", r, 2);
	json_set_text(o, "cpus", r, 3);
	json_set_text(o, "mems", r, 4);
	json_set_int(o, "mem", r, 5);
	json_set_int(o, "mpiprocs", r, 6);
	json_set_int(o, "ompthreads", r, 7);
	for (int i = STAMP_LAUNCH; i <= STAMP_DONE; i++)
		if (!row_null(r, 8 + i - STAMP_LAUNCH))
			json_object_set_new(times, job_stamp_names[i],
					    json_integer(row_i64(r, 8 + i - STAMP_LAUNCH)));
	json_object_set_new(o, "times", times);
	json_set_int(o, "cpu_ns", r, 15);
	json_set_int(o, "mem_peak", r, 16);
	alloc_gpus_set(o, row_text(r, 18));
	return o;
}

int jobstore_row_alloc_entry(const struct jobstore_row *r, struct job *j, unsigned idx)
{
	struct alloc_entry *e = &j->alloc[idx];
	const char *s;

	if (!(e->node = strdup(row_text(r, 1))))
		return -ENOMEM;
	e->ncpus = (uint32_t)row_i64(r, 2);
	s = row_text(r, 3);
	if (s)
		(void)cpumask_parse(s, &e->cpus);
	e->claim = e->cpus;
	s = row_text(r, 4);
	snprintf(e->mems, sizeof(e->mems), "%s", s ? s : "");
	e->mem = (uint64_t)row_i64(r, 5);
	e->mpiprocs = (uint32_t)row_i64(r, 6);
	e->ompthreads = (uint32_t)row_i64(r, 7);
	s = row_text(r, 18);
	if (s)
		(void)job_gpus_parse(s, &e->gpus);
	e->done = !row_null(r, 14);
	/* A node's report that came before a restart: the primary's is
	 * the job's result; a sister that could not start fails it. */
	s = row_text(r, 17);
	if (s) {
		json_t *o = json_loads(s, 0, NULL);
		const char *status = json_string_value(json_object_get(o, "status"));
		const char *why = json_string_value(json_object_get(o, "reason"));

		if (idx == 0 && o && (j->result = malloc(sizeof(*j->result))))
			job_result_from_json(o, j->result);
		else if (idx > 0 && status && strcmp(status, "failed") == 0 && !j->end_reason &&
			 asprintf(&j->end_reason, "node %s could not start: %s", e->node,
				  why ? why : "no reason given") < 0)
			j->end_reason = NULL;
		json_decref(o);
	}
	return 0;
}

int jobstore_row_active_job(const struct jobstore_row *r, struct job **ret)
{
	struct job *j = calloc(1, sizeof(*j));
	const char *s;

	if (!j)
		return -ENOMEM;
	j->id = row_i64(r, ACT_ID);
	snprintf(j->queue, sizeof(j->queue), "%s", row_text(r, ACT_QUEUE));
	j->uid = (uid_t)row_i64(r, ACT_UID);
	if (job_state_parse(row_text(r, ACT_STATE), &j->state) < 0)
		j->state = JOB_QUEUED;
	j->ncpus = (uint32_t)row_i64(r, ACT_NCPUS);
	j->ngpus = attrs_ngpus(row_text(r, ACT_NGPUS));
	j->mem = (uint64_t)row_i64(r, ACT_MEM);
	j->walltime = (uint64_t)row_i64(r, ACT_WALLTIME);
	s = row_text(r, ACT_NODE);
	if (s && (job_alloc_init(j, 1) < 0 || !(j->alloc[0].node = strdup(s))))
		goto oom;
	s = row_text(r, ACT_CPUS);
	if (s && j->n_alloc) {
		(void)cpumask_parse(s, &j->alloc[0].cpus);
		j->alloc[0].claim = j->alloc[0].cpus;
		/* sbatch --exclusive holds more CPUs than it asked for. */
		j->alloc[0].ncpus = cpumask_count(&j->alloc[0].cpus) > j->ncpus ? cpumask_count(&j->alloc[0].cpus)
										   : j->ncpus;
		j->alloc[0].mpiprocs = j->ncpus;
		j->alloc[0].mem = j->mem;
		/* The NUMA nodes its memory was counted on (schema 18): the
		 * pool counts it there again as the pass had it. */
		if ((s = row_text(r, ACT_MEMS)))
			snprintf(j->alloc[0].mems, sizeof(j->alloc[0].mems), "%s", s);
	}
	if (!row_null(r, ACT_CHUNKS)) {
		json_t *chunks = json_loads(row_text(r, ACT_CHUNKS), 0, NULL);
		char why[160];

		(void)job_chunks_from_json(j, chunks, why, sizeof(why));
		json_decref(chunks);
	}
	if (!row_null(r, ACT_PLACE))
		(void)job_place_parse(row_text(r, ACT_PLACE), j);
	/* Which nodes: as qpoold checked them at submit; one that no longer
	 * parses (never written so) leaves the job on any node. */
	if (!row_null(r, ACT_NODELIST) || !row_null(r, ACT_EXCLUDE) || !row_null(r, ACT_CONSTRAINT)) {
		struct error err;

		if (nodesel_create(row_text(r, ACT_NODELIST), row_text(r, ACT_EXCLUDE), row_text(r, ACT_CONSTRAINT),
				   &j->sel, &err) == -ENOMEM)
			goto oom;
	}
	/* The GPUs' model as qpoold checked it at submit (canonical). */
	if (!row_null(r, ACT_GPU_MODEL) && !(j->gpu_model = strdup(row_text(r, ACT_GPU_MODEL))))
		goto oom;
	/* Licenses: as qpoold wrote them at submit. */
	if (!row_null(r, ACT_LICENSES) && job_licenses_set(j, row_text(r, ACT_LICENSES)) == -ENOMEM)
		goto oom;
	if (!row_null(r, ACT_NODE_RES) && job_noderes_set(j, row_text(r, ACT_NODE_RES)) == -ENOMEM)
		goto oom;
	if (!row_null(r, ACT_ACCOUNT) && !(j->account = strdup(row_text(r, ACT_ACCOUNT))))
		goto oom;
	if (!row_null(r, ACT_QOS) && !(j->qos = strdup(row_text(r, ACT_QOS))))
		goto oom;
	if (!row_null(r, ACT_RESV) && !(j->resv = strdup(row_text(r, ACT_RESV))))
		goto oom;
	/* Suspended when the last server stopped (suspend.c): by the job
	 * named, 0 an admin. */
	if ((s = row_text(r, ACT_SUSPENDED_BY)) && j->state == JOB_RUNNING) {
		j->suspended = true;
		j->suspended_by = strtoll(s, NULL, 10);
	}
	j->t_submit = row_i64(r, ACT_T_SUBMIT);
	j->rerunnable = (int)row_i64(r, ACT_RERUN);
	j->t_dispatch = row_i64(r, ACT_T_DISPATCH);
	/* The attributes are text as qsub wrote them ("-5", "1700000000"). */
	j->priority = row_null(r, ACT_PRIORITY) ? 0 : atoi(row_text(r, ACT_PRIORITY));
	j->start_after = row_null(r, ACT_START_AFTER) ? 0 : strtoll(row_text(r, ACT_START_AFTER), NULL, 10);
	j->array_id = row_i64(r, ACT_ARRAY_ID);
	j->array_index = row_null(r, ACT_ARRAY_INDEX) ? -1 : row_i64(r, ACT_ARRAY_INDEX);
	if (((s = row_text(r, ACT_ARRAY_SPEC)) && !(j->array_spec = strdup(s))) ||
	    ((s = row_text(r, ACT_DEPEND)) && !(j->depend = strdup(s))) ||
	    ((s = row_text(r, ACT_REASON)) && !(j->reason = strdup(s))))
		goto oom;
	*ret = j;
	return 0;
oom:
	job_free(j);
	return -ENOMEM;
}

int jobstore_row_admin(const struct jobstore_row *r, int ncols,
		       int (*cb)(const char *key, long long a, long long b, const char *text, void *ud),
		       void *ud)
{
	long long a = row_null(r, 1) ? -1 : row_i64(r, 1);
	long long b = -1;
	const char *text = NULL;

	/* 4: (key, a, b, text); 3: (key, a, b); 2: (key, a, text). */
	if (ncols == 4) {
		b = row_null(r, 2) ? -1 : row_i64(r, 2);
		text = row_text(r, 3);
	} else if (ncols == 2) {
		text = row_text(r, 2);
	} else {
		b = row_i64(r, 2);
	}
	return cb(row_text(r, 0), a, b, text, ud);
}

void jobstore_row_node(const struct jobstore_row *r, struct jobstore_node *ret)
{
	*ret = (struct jobstore_node){
		.name = row_text(r, NODE_NAME),
		.cpus = row_text(r, NODE_CPUS),
		.ncpus = (uint32_t)row_i64(r, NODE_NCPUS),
		.mems = row_text(r, NODE_MEMS),
		.mem = (uint64_t)row_i64(r, NODE_MEM),
		.topology = row_text(r, NODE_TOPOLOGY),
		.rt = row_i64(r, NODE_RT) != 0,
		.cgroup = row_text(r, NODE_CGROUP),
		.address = row_text(r, NODE_ADDRESS),
		.t_register = row_i64(r, NODE_T_REGISTER),
	};
}
