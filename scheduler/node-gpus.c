/* SPDX-License-Identifier: MIT */
/* A node's GPUs in the pool: set from a registration or the store, shown with their holders. */
#include <stdlib.h>

#include "pool.h"

void pool_node_gpus_set(struct node *n, struct node_gpu *gpus, unsigned n_gpus)
{
	uint64_t all = n_gpus >= 64 ? UINT64_MAX : (1ULL << n_gpus) - 1, held = 0;

	free(n->gpus);
	n->gpus = gpus;
	n->n_gpus = n_gpus;
	/* What the node's running jobs hold stays theirs: a registration
	 * (after a qnoded or qpoold restart) frees nothing. */
	for (struct alloc_entry *e = pool_node_jobs(n); e; e = e->nnext)
		if (!e->done && !e->cpus_back)
			held |= e->gpus;
	n->gpus_free = all & ~held;
}

json_t *pool_node_gpus_json(const struct node *n)
{
	json_t *arr = json_array();

	for (unsigned i = 0; arr && i < n->n_gpus; i++) {
		json_t *g = gpu_entry_json(&n->gpus[i]);

		/* A held GPU names the job whose entry here has it. */
		if (g && !(n->gpus_free & (1ULL << i)))
			for (struct alloc_entry *e = pool_node_jobs(n); e; e = e->nnext)
				if (e->gpus & (1ULL << i)) {
					json_object_set_new(g, "job", json_integer(e->job->id));
					break;
				}
		if (!g || json_array_append_new(arr, g) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

unsigned pool_node_gpus_free(const struct node *n)
{
	return (unsigned)__builtin_popcountll(n->gpus_free);
}
