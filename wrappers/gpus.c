/* SPDX-License-Identifier: MIT */
/* The job's GPUs (docs/GPUS.md): what its fence denies, its variables, PBS_GPUFILE. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gded-internal.h"

size_t gded_gpus_denied(const struct gded_job *job, struct cgroup_dev *deny)
{
	size_t n = 0;

	for (size_t i = 0; i < job->ngpus_node && n < GDED_GPUS_MAX; i++) {
		const struct cgroup_dev *d = &job->gpus_node[i];
		bool own = false;

		for (size_t k = 0; k < job->ngpus && !own; k++)
			own = job->gpus[k].dev.major == d->major && job->gpus[k].dev.minor == d->minor;
		if (!own)
			deny[n++] = *d;
	}
	return n;
}

bool gded_job_has_gpus(const struct gded_job *job)
{
	if (job->nalloc <= 1)
		return job->ngpus > 0;
	for (size_t i = 0; i < job->nalloc; i++)
		if (job->alloc[i].gpus)
			return true;
	return false;
}

int gded_gpufile_path(const struct gded_job *job, char *buf, size_t len)
{
	const char *slash;
	int n;

	if (!job->nodefile || !gded_job_has_gpus(job))
		return -ENOENT;
	/* Beside the result, in the jobs directory: a single-node job's
	 * nodefile is the node's shared one, elsewhere. */
	slash = strrchr(job->result, '/');
	n = snprintf(buf, len, "%.*s/%" PRIu64 ".gpus", (int)(slash - job->result),
		     job->result, job->jobid);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Appends "NODE-gpuN\n" for each bit of mask, lowest first. */
static size_t gpufile_lines(char *text, const char *node, uint64_t mask)
{
	size_t off = 0, nlen = strlen(node);

	for (unsigned i = 0; i < GDED_GPUS_MAX; i++) {
		if (!(mask & (UINT64_C(1) << i)))
			continue;
		if (text) {
			memcpy(text + off, node, nlen);
			off += nlen + (size_t)sprintf(text + off + nlen, "-gpu%u\n", i);
		} else {
			off += nlen + strlen("-gpu\n") + (i < 10 ? 1 : 2);
		}
	}
	return off;
}

int gded_gpufile_text(const struct gded_job *job, char **ret, size_t *ret_len)
{
	struct gded_alloc one = { .node = job->node };
	const struct gded_alloc *a = job->nalloc > 1 ? job->alloc : &one;
	size_t n = job->nalloc > 1 ? job->nalloc : 1, len = 0, off = 0;
	char *text;

	for (size_t i = 0; i < job->ngpus && job->nalloc <= 1; i++)
		one.gpus |= UINT64_C(1) << job->gpus[i].index;
	for (size_t i = 0; i < n; i++)
		len += gpufile_lines(NULL, a[i].node, a[i].gpus);
	/* sprintf's NUL after the last line. */
	text = malloc(len + 1);
	if (!text)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		off += gpufile_lines(text + off, a[i].node, a[i].gpus);
	text[off] = '\0';
	*ret = text;
	*ret_len = off;
	return 0;
}

int gded_gpuenv_add(const struct gded_job *job, const char *gpufile, gded_env_set_f set, void *e)
{
	/* "0,1,...,63" and "63,62,..." at most. */
	char ordinals[GDED_GPUS_MAX * 3 + 1] = "", indices[GDED_GPUS_MAX * 3 + 1] = "";
	size_t o = 0, x = 0;
	int r = 0;

	if (gpufile)
		r |= set(e, "PBS_GPUFILE", gpufile);
	if (job->ngpus == 0)
		return r < 0 ? -1 : 0;
	for (size_t i = 0; i < job->ngpus; i++) {
		o += (size_t)snprintf(ordinals + o, sizeof(ordinals) - o, "%s%zu", i ? "," : "", i);
		x += (size_t)snprintf(indices + x, sizeof(indices) - x, "%s%u", i ? "," : "",
				      job->gpus[i].index);
	}
	/* The fence leaves the job only its own devices, and CUDA and ROCm
	 * number what they can open from 0: the ordinals, as Slurm gives
	 * them with ConstrainDevices. The node's own numbers for the rest. */
	r |= set(e, "CUDA_VISIBLE_DEVICES", ordinals);
	r |= set(e, "ROCR_VISIBLE_DEVICES", ordinals);
	r |= set(e, "GPU_DEVICE_ORDINAL", ordinals);
	r |= set(e, "QPOOL_GPUS", indices);
	r |= set(e, "SLURM_JOB_GPUS", indices);
	return r < 0 ? -1 : 0;
}
