/* SPDX-License-Identifier: MIT */
/* The scheduler's job: state and placement words, its allocation (and
 * the CPUs it holds), the most it needs on one node, chunks, GPU lists
 * and a node's result report. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <stdio.h>

#include "gpu.h"
#include "job.h"
#include "wire.h"

static const char *const state_names[JOB_STATE_MAX] = {
	[JOB_QUEUED] = "queued",
	[JOB_HELD] = "held",
	[JOB_RUNNING] = "running",
	[JOB_EXITING] = "exiting",
	[JOB_COMPLETED] = "completed",
	[JOB_FAILED] = "failed",
	[JOB_CANCELLED] = "cancelled",
	[JOB_TIMEOUT] = "timeout",
	[JOB_OOM] = "oom",
};

const char *job_state_name(enum job_state s)
{
	return (unsigned)s < JOB_STATE_MAX ? state_names[s] : "unknown";
}

int job_state_parse(const char *s, enum job_state *ret)
{
	for (int i = 0; i < JOB_STATE_MAX; i++)
		if (strcmp(s, state_names[i]) == 0) {
			*ret = (enum job_state)i;
			return 0;
		}
	return -EINVAL;
}

void job_free(struct job *j)
{
	if (!j)
		return;
	job_alloc_free(j);
	free(j->chunks);
	free(j->result);
	free(j->end_reason);
	free(j->lost);
	free(j->array_spec);
	free(j->array);
	free(j->depend);
	free(j->reason);
	free(j->dep_edges);
	nodesel_destroy(j->sel);
	free(j->gpu_model);
	free(j->lic);
	free(j->nres);
	free(j->account);
	free(j->qos);
	free(j->est_vnode);
	free(j->resv);
	free(j);
}

int job_noderes_set(struct job *j, const char *text)
{
	struct noderes r[NODERES_MAX];
	struct error err;
	size_t n = 0;

	free(j->nres);
	j->nres = NULL;
	j->n_nres = 0;
	if (!text || !*text)
		return 0;
	if (noderes_parse(text, r, NODERES_MAX, &n, &err) < 0)
		return -EINVAL;
	if (!n)
		return 0;
	j->nres = malloc(n * sizeof(*j->nres));
	if (!j->nres)
		return -ENOMEM;
	memcpy(j->nres, r, n * sizeof(*r));
	j->n_nres = (unsigned)n;
	return 0;
}

int job_licenses_set(struct job *j, const char *text)
{
	struct license l[LICENSES_MAX];
	struct error err;
	size_t n = 0;

	free(j->lic);
	j->lic = NULL;
	j->n_lic = 0;
	if (!text || !*text)
		return 0;
	if (license_request_parse(text, l, LICENSES_MAX, &n, &err) < 0)
		return -EINVAL;
	j->lic = malloc(n * sizeof(*j->lic));
	if (!j->lic)
		return -ENOMEM;
	memcpy(j->lic, l, n * sizeof(*l));
	j->n_lic = (unsigned)n;
	return 0;
}

const char *job_place_name(enum job_place p)
{
	return p == JOB_PLACE_SCATTER ? "scatter" : p == JOB_PLACE_PACK ? "pack" : "free";
}

int job_place_parse(const char *s, struct job *j)
{
	enum job_place place = JOB_PLACE_FREE;
	bool excl = false, whole = false;
	char buf[32], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (!strcmp(tok, "free"))
			place = JOB_PLACE_FREE;
		else if (!strcmp(tok, "scatter"))
			place = JOB_PLACE_SCATTER;
		else if (!strcmp(tok, "pack"))
			place = JOB_PLACE_PACK;
		else if (!strcmp(tok, "excl"))
			excl = true;
		else if (!strcmp(tok, "shared"))
			excl = whole = false;
		else if (!strcmp(tok, "whole"))
			whole = true;
		else
			return -EINVAL;
	}
	/* whole alone means nothing: a node is the job's whole only when
	 * no other job shares it. */
	if (whole && !excl)
		return -EINVAL;
	j->place = place;
	j->excl = excl;
	j->whole = whole;
	return 0;
}

struct alloc_entry *job_entry(const struct job *j, const char *name)
{
	for (unsigned i = 0; i < j->n_alloc; i++)
		if (j->alloc[i].node && strcmp(j->alloc[i].node, name) == 0)
			return &j->alloc[i];
	return NULL;
}

uint64_t job_cpus_held(const struct job *j)
{
	uint64_t cpus = 0;

	for (unsigned i = 0; i < j->n_alloc; i++)
		cpus += j->alloc[i].ncpus;
	return cpus > j->ncpus ? cpus : j->ncpus;
}

uint64_t job_widest_mem(const struct job *j)
{
	uint64_t w = 0, total = 0;

	if (!j->n_chunks)
		return j->mem;
	for (unsigned c = 0; c < j->n_chunks; c++) {
		total += (uint64_t)j->chunks[c].count * j->chunks[c].mem;
		if (j->chunks[c].mem > w)
			w = j->chunks[c].mem;
	}
	return j->place == JOB_PLACE_PACK ? total : w;
}

unsigned job_widest_cpus(const struct job *j)
{
	unsigned w = 0, total = 0;

	if (!j->n_chunks)
		return j->ncpus;
	for (unsigned c = 0; c < j->n_chunks; c++) {
		total += j->chunks[c].count * j->chunks[c].ncpus;
		if (j->chunks[c].ncpus > w)
			w = j->chunks[c].ncpus;
	}
	return j->place == JOB_PLACE_PACK ? total : w;
}

unsigned job_widest_gpus(const struct job *j)
{
	unsigned w = 0, total = 0;

	if (!j->n_chunks)
		return j->ngpus;
	for (unsigned c = 0; c < j->n_chunks; c++) {
		total += j->chunks[c].count * j->chunks[c].ngpus;
		if (j->chunks[c].ngpus > w)
			w = j->chunks[c].ngpus;
	}
	return j->place == JOB_PLACE_PACK ? total : w;
}

int job_alloc_init(struct job *j, unsigned n)
{
	job_alloc_free(j);
	j->alloc = calloc(n ? n : 1, sizeof(*j->alloc));
	if (!j->alloc)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		j->alloc[i].job = j;
	j->n_alloc = n;
	return 0;
}

void job_alloc_free(struct job *j)
{
	for (unsigned i = 0; i < j->n_alloc; i++)
		free(j->alloc[i].node);
	free(j->alloc);
	j->alloc = NULL;
	j->n_alloc = 0;
}

int job_chunks_from_json(struct job *j, const void *json_chunks, char *err, size_t errlen)
{
	const json_t *arr = json_chunks;
	struct job_chunk *c;
	size_t i, n;
	uint64_t units = 0, cpus = 0;
	json_t *v;

	free(j->chunks);
	j->chunks = NULL;
	j->n_chunks = 0;
	if (!arr || json_is_null(arr))
		return 0;
	n = json_is_array(arr) ? json_array_size(arr) : 0;
	if (!json_is_array(arr) || n > JOB_CHUNKS_MAX) {
		snprintf(err, errlen, "chunks must be an array of at most %d objects", JOB_CHUNKS_MAX);
		return -EINVAL;
	}
	if (n == 0)
		return 0;
	c = calloc(n, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_array_foreach(arr, i, v) {
		static const char *const keys[] = { "count", "ncpus", "mpiprocs", "ompthreads", "mem", "ngpus" };
		long long count = wire_int(v, "count", 1), ncpus = wire_int(v, "ncpus", 1);
		long long mpiprocs = wire_int(v, "mpiprocs", ncpus), omp = wire_int(v, "ompthreads", 0);
		long long mem = wire_int(v, "mem", 0), ngpus = wire_int(v, "ngpus", 0);

		bool typed = json_is_object(v);

		for (size_t k = 0; typed && k < sizeof(keys) / sizeof(keys[0]); k++)
			typed = !json_object_get(v, keys[k]) || json_is_integer(json_object_get(v, keys[k]));
		if (!typed || count < 1 || count > JOB_NODES_MAX * 64 || ncpus < 1 ||
		    ncpus > 1000000 || mpiprocs < 0 || mpiprocs > 1000000 || omp < 0 || omp > 1000000 ||
		    mem < 0 || ngpus < 0 || ngpus > NODE_GPUS_MAX) {
			free(c);
			snprintf(err, errlen, "chunk %zu: count, ncpus (at least 1), mpiprocs, ompthreads, "
				 "mem and ngpus (at most %d) must be counts", i + 1, NODE_GPUS_MAX);
			return -EINVAL;
		}
		units += (uint64_t)count;
		cpus += (uint64_t)count * (uint64_t)ncpus;
		if (units > JOB_CHUNKS_UNITS_MAX || cpus > JOB_CPUS_MAX) {
			free(c);
			snprintf(err, errlen, "chunks: at most %d chunks and %d CPUs in all", JOB_CHUNKS_UNITS_MAX,
				 JOB_CPUS_MAX);
			return -EINVAL;
		}
		c[i] = (struct job_chunk){ .count = (uint32_t)count, .ncpus = (uint32_t)ncpus,
					   .mpiprocs = (uint32_t)mpiprocs, .ompthreads = (uint32_t)omp,
					   .mem = (uint64_t)mem, .ngpus = (uint32_t)ngpus };
		if (json_object_get(v, "features")) {
			const char *f = json_string_value(json_object_get(v, "features"));
			struct error ferr;

			if (!f || nodesel_features_canon(f, c[i].features, sizeof(c[i].features), &ferr) < 0) {
				free(c);
				snprintf(err, errlen, "chunk %zu: features: %s", i + 1,
					 f ? ferr.text : "not a string");
				return -EINVAL;
			}
		}
	}
	j->chunks = c;
	j->n_chunks = (unsigned)n;
	return 0;
}

void job_gpus_format(uint64_t gpus, char *buf, size_t len)
{
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < 64 && gpus; i++) {
		char one[8];
		size_t n;

		if (!(gpus & (UINT64_C(1) << i)))
			continue;
		gpus &= ~(UINT64_C(1) << i);
		n = (size_t)snprintf(one, sizeof(one), "%s%u", at ? "," : "", i);
		if (at + n + 1 > len)
			return;
		memcpy(buf + at, one, n + 1);
		at += n;
	}
}

int job_gpus_parse(const char *s, uint64_t *ret)
{
	uint64_t m = 0;

	while (s && *s) {
		char *end;
		unsigned long v;

		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = strtoul(s, &end, 10);
		if (v >= 64 || (*end && *end != ','))
			return -EINVAL;
		m |= UINT64_C(1) << v;
		s = *end ? end + 1 : end;
	}
	*ret = m;
	return 0;
}

void *job_chunks_to_json(const struct job *j)
{
	json_t *arr = json_array();

	for (unsigned i = 0; arr && i < j->n_chunks; i++) {
		const struct job_chunk *c = &j->chunks[i];

		json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I}", "count", (json_int_t)c->count,
				      "ncpus", (json_int_t)c->ncpus, "mpiprocs", (json_int_t)c->mpiprocs,
				      "ompthreads", (json_int_t)c->ompthreads, "mem", (json_int_t)c->mem);

		if (o && c->ngpus)
			json_object_set_new(o, "ngpus", json_integer(c->ngpus));
		json_array_append_new(arr, o);
	}
	return arr;
}

const char *const job_stamp_names[STAMP_MAX] = {
	"submit", "dispatch", "launch", "wrap", "fenced", "exec", "exit", "released", "done",
};

void job_result_from_json(const void *json_result, struct job_result *ret)
{
	const json_t *r = json_result;
	const json_t *times = json_object_get(r, "times");
	const char *status = wire_str(r, "status");
	const char *reason = wire_str(r, "reason");

	memset(ret, 0, sizeof(*ret));
	ret->exit_status = (int)wire_int(r, "exit_status", -1);
	ret->exit_signal = (int)wire_int(r, "exit_signal", 0);
	ret->cpu_ns = wire_int(r, "cpu_ns", 0);
	ret->mem_peak = wire_int(r, "mem_peak", 0);
	ret->oom = wire_bool(r, "oom", 0);
	if (reason)
		snprintf(ret->reason, sizeof(ret->reason), "%s", reason);
	for (int i = STAMP_LAUNCH; i <= STAMP_RELEASED; i++)
		ret->times[i] = wire_int(times, job_stamp_names[i], 0);
	for (int i = STAMP_WRAP; i <= STAMP_RELEASED; i++)
		ret->mono[i] = wire_int(json_object_get(r, "mono"), job_stamp_names[i], 0);

	if (!status) {
		ret->state = JOB_FAILED;
		if (!reason)
			snprintf(ret->reason, sizeof(ret->reason), "malformed report from the node");
	} else if (wire_bool(r, "cancelled", 0)) {
		ret->state = JOB_CANCELLED;
	} else if (wire_bool(r, "timeout", 0)) {
		ret->state = JOB_TIMEOUT;
	} else if (ret->oom) {
		/* The memory controller counted an OOM kill in the job's group. */
		ret->state = JOB_OOM;
		if (!reason)
			snprintf(ret->reason, sizeof(ret->reason), "killed: out of memory");
	} else if (strcmp(status, "exited") == 0 && ret->exit_status == 0) {
		ret->state = JOB_COMPLETED;
	} else {
		ret->state = JOB_FAILED;
	}
	if (status && strcmp(status, "signaled") == 0)
		ret->exit_status = -1;
}
