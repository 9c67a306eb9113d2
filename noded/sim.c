/* SPDX-License-Identifier: MIT */
/* Simulated nodes: a synthetic hwloc topology and the result a job that
 * only waited its walltime reports. No cgroups, no gded, no processes. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noded.h"

int sim_topology_describe(const char *synthetic, struct node_topo *ret, struct error *err)
{
	hwloc_topology_t topo = NULL;
	int r;

	if (hwloc_topology_init(&topo) < 0)
		return error_set(err, -ENOMEM, "hwloc: cannot create a topology");
	if (hwloc_topology_set_synthetic(topo, synthetic) < 0) {
		r = error_set(err, -EINVAL, "--sim-topology \"%s\": not an hwloc synthetic description "
			      "(e.g. \"pack:2 numa:4 core:16 pu:2\")", synthetic);
		goto done;
	}
	if (hwloc_topology_load(topo) < 0) {
		r = error_set(err, -EINVAL, "--sim-topology \"%s\": hwloc cannot build it", synthetic);
		goto done;
	}
	r = topo_node_describe(topo, NULL, ret, err);
	if (r == 0 && ret->pus > CPUMASK_MAX)
		r = error_set(err, -ERANGE, "--sim-topology \"%s\": %u PUs, at most %d", synthetic,
			      ret->pus, CPUMASK_MAX);
done:
	hwloc_topology_destroy(topo);
	return r;
}

/* Major number of NVIDIA's character devices (Documentation/admin-guide/devices.txt). */
#define SIM_GPU_MAJOR 195

int sim_gpus_make(const char *spec, struct node_gpu **ret, unsigned *ret_n, struct error *err)
{
	struct node_gpu *gpus;
	unsigned n = 0;
	int r = 0;

	*ret = NULL;
	*ret_n = 0;
	gpus = calloc(NODE_GPUS_MAX, sizeof(*gpus));
	if (!gpus)
		return error_set(err, -ENOMEM, "out of memory");
	for (const char *p = spec; r == 0; ) {
		size_t len = strcspn(p, ","), mlen;
		const char *colon = memchr(p, ':', len);
		char model[GPU_MODEL_MAX] = "", *end;
		struct error why;
		long count;

		mlen = colon ? (size_t)(colon - p) : 0;
		if (colon && gpu_model_canon(p, mlen, model, &why) < 0) {
			r = error_set(err, -EINVAL, "--sim-gpus %s: %s", spec, why.text);
			break;
		}
		errno = 0;
		count = strtol(colon ? colon + 1 : p, &end, 10);
		if (errno || end != p + len || end == (colon ? colon + 1 : p) || count < 1 ||
		    count > NODE_GPUS_MAX - (long)n) {
			r = error_set(err, -EINVAL, "--sim-gpus %s: [MODEL:]COUNT[,...], %d GPUs at most in all",
				      spec, NODE_GPUS_MAX);
			break;
		}
		for (long k = 0; k < count; k++, n++) {
			struct node_gpu *g = &gpus[n];

			g->index = n;
			snprintf(g->file, sizeof(g->file), "/dev/nvidia%u", n);
			g->major = SIM_GPU_MAJOR;
			g->minor = n;
			g->numa = -1;
			memcpy(g->model, model, sizeof(model));
		}
		if (!p[len])
			break;
		p += len + 1;
	}
	if (r < 0) {
		free(gpus);
		return r;
	}
	*ret = gpus;
	*ret_n = n;
	return 0;
}

int sim_node_dress(struct noded *nd, const struct sim_dress *d, struct error *err)
{
	snprintf(nd->features, sizeof(nd->features), "%s", d->features ? d->features : "");
	return d->gpus ? sim_gpus_make(d->gpus, &nd->gpus, &nd->n_gpus, err) : 0;
}

json_t *sim_result(int64_t jobid, int64_t launch, int64_t start_wall, int64_t start_mono,
		   int64_t end_wall, int64_t end_mono, int sig)
{
	json_t *times, *mono;

	/* The job "started" when it was received and "ended" when its timer
	 * fired: connect time is the walltime slept, overheads are zero. */
	times = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "launch", (json_int_t)launch,
			  "wrap", (json_int_t)start_wall, "fenced", (json_int_t)start_wall,
			  "exec", (json_int_t)start_wall, "exit", (json_int_t)end_wall,
			  "released", (json_int_t)end_wall);
	mono = json_pack("{s:I, s:I, s:I, s:I, s:I}", "wrap", (json_int_t)start_mono,
			 "fenced", (json_int_t)start_mono, "exec", (json_int_t)start_mono,
			 "exit", (json_int_t)end_mono, "released", (json_int_t)end_mono);
	if (sig)
		return json_pack("{s:I, s:s, s:n, s:i, s:b, s:b, s:b, s:I, s:I, s:o*, s:o*}",
				 "jobid", (json_int_t)jobid, "status", "signaled", "exit_status",
				 "exit_signal", sig, "timeout", 0, "cancelled", sig == SIGTERM,
				 "oom", 0, "cpu_ns", (json_int_t)0, "mem_peak", (json_int_t)0,
				 "times", times, "mono", mono);
	return json_pack("{s:I, s:s, s:i, s:n, s:b, s:b, s:b, s:I, s:I, s:o*, s:o*}",
			 "jobid", (json_int_t)jobid, "status", "exited", "exit_status", 0,
			 "exit_signal", "timeout", 0, "cancelled", 0, "oom", 0,
			 "cpu_ns", (json_int_t)0, "mem_peak", (json_int_t)0,
			 "times", times, "mono", mono);
}
