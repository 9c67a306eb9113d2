/* SPDX-License-Identifier: MIT */
/* Memory by NUMA node on a node (docs/RESOURCES.md, "Memory by NUMA node"). */
#include <errno.h>
#include <string.h>

#include "parse.h"
#include "pool.h"
#include "placement.h"
#include "pool-internal.h"

int place_numa_free(const struct node *n, uint64_t *ret, unsigned cap)
{
	unsigned k = n->topo ? placement_numa_count(n->topo) : 0;
	uint64_t offer = pool_node_mem(n), sum = 0, used[PLACE_NUMA_MAX] = { 0 };

	if (k < 2 || k > cap || k > PLACE_NUMA_MAX || !offer)
		return -ENOENT;
	for (unsigned i = 0; i < k; i++)
		sum += placement_numa_mem(n->topo, i);
	if (!sum)
		return -ENOENT;
	/* What the running entries hold: each entry's mem spread evenly over
	 * its NUMA nodes (the kernel fills them as the job's threads touch
	 * memory; even is the one guess that needs no reading of the node). */
	for (const struct alloc_entry *e = n->jobs; e; e = e->nnext) {
		struct cpumask mems;

		if ((e->cpus_back && !e->lent) || !e->mem)
			continue;
		if (cpumask_parse(e->mems, &mems) < 0)
			memset(&mems, 0, sizeof(mems));
		placement_numa_hold(n->topo, &mems, e->mem, used);
	}
	/* Each NUMA node's part of the offer is its share of the NUMA
	 * memory: the offer may be MemTotal's, or less a reserve
	 * (docs/ARCHITECTURE.md, "Memory counted"). */
	for (unsigned i = 0; i < k; i++) {
		uint64_t have = (uint64_t)((unsigned __int128)offer * placement_numa_mem(n->topo, i) / sum);

		ret[i] = have > used[i] ? have - used[i] : 0;
	}
	return (int)k;
}

json_t *pool_node_numa_free_json(const struct node *n)
{
	uint64_t free_mem[PLACE_NUMA_MAX];
	int k = place_numa_free(n, free_mem, PLACE_NUMA_MAX);
	json_t *arr;

	if (k < 2 || !(arr = json_array()))
		return NULL;
	for (int i = 0; i < k; i++)
		json_array_append_new(arr, json_integer((json_int_t)free_mem[i]));
	return arr;
}
