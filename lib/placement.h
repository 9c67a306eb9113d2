/* SPDX-License-Identifier: MIT */
/* CPU placement: a pure function from an hwloc topology and a free set to
 * the CPUs a job gets. Binding them is a separate step (gded, cgroups). */
#ifndef QPOOL_PLACEMENT_H
#define QPOOL_PLACEMENT_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "parse.h"

struct placement {
	struct cpumask cpus;   /* the job's CPUs (OS indexes): its cpuset.cpus */
	struct cpumask claim;  /* what it takes from the free set: cpus, plus the
	                        * other PUs of its cores when smt is off, so no
	                        * other job lands on a hyperthread of its cores */
	struct cpumask mems;   /* NUMA nodes of cpus: its cpuset.mems; all the
	                        * topology's when placement_choose_mem found
	                        * no CPUs near enough free memory */
	bool mem_near;         /* placement_choose_mem: the NUMA nodes of cpus
	                        * have the job's memory free */
};

/* Chooses ncpus CPUs among free, packed into the smallest topology object
 * that holds them (core, L3, NUMA node, package, machine), one PU per core
 * unless smt. Returns 0 and *ret; -ENOSPC when the job does not fit in
 * free now; -E2BIG when it could never fit on this topology (err says so
 * in one line). Never allocates CPUs outside free. */
int placement_choose(hwloc_topology_t topo, const struct cpumask *free, unsigned ncpus, bool smt,
		     struct placement *ret, struct error *err);

/* NUMA nodes of topo, in hwloc's logical order (index i below): how many
 * there are, and node i's memory (hwloc's local_memory, bytes; 0: not said). */
unsigned placement_numa_count(hwloc_topology_t topo);
uint64_t placement_numa_mem(hwloc_topology_t topo, unsigned i);

/* Adds mem, spread evenly, to used[i] of each NUMA node i whose OS index
 * is in mems (an entry's cpuset.mems); over all of them when mems names
 * none of topo's. used has placement_numa_count(topo) entries. */
void placement_numa_hold(hwloc_topology_t topo, const struct cpumask *mems, uint64_t mem, uint64_t *used);

/* placement_choose for a job of mem bytes, given the memory free on each
 * NUMA node (numa_free, placement_numa_count entries): CPUs whose NUMA
 * nodes together have mem free are preferred. First what placement_choose
 * gives; when its NUMA nodes lack the memory, the same choice inside each
 * NUMA node that has it, then inside each larger object (package,
 * machine) whose NUMA nodes have it, smallest first. When none does, what
 * placement_choose gives, with mem_near false and mems all the
 * topology's NUMA nodes, so the job may use the memory the node counted
 * for it (docs/RESOURCES.md, "Memory by NUMA node"). Returns as
 * placement_choose. */
int placement_choose_mem(hwloc_topology_t topo, const struct cpumask *free, unsigned ncpus, bool smt,
			 const uint64_t *numa_free, uint64_t mem, struct placement *ret, struct error *err);

/* Loads a topology from hwloc XML (what a node sends when it registers)
 * or, when text starts with no '<', from a synthetic description such as
 * "pack:2 numa:4 l3:2 core:8 pu:2". 0 and *ret, or -EINVAL with err. */
int placement_topology_load(const char *text, size_t len, hwloc_topology_t *ret, struct error *err);

/* The topology's CPUs (all PUs, OS indexes) as a mask. */
void placement_topology_cpus(hwloc_topology_t topo, struct cpumask *ret);

#endif
