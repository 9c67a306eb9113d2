/* SPDX-License-Identifier: MIT */
/* CPU placement: a pure function from an hwloc topology and a free set to
 * the CPUs a job gets. Binding them is a separate step (gded, cgroups). */
#ifndef QPOOL_PLACEMENT_H
#define QPOOL_PLACEMENT_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "parse.h"

struct placement {
	struct cpumask cpus;   /* the job's CPUs (OS indexes): its cpuset.cpus */
	struct cpumask claim;  /* what it takes from the free set: cpus, plus the
	                        * other PUs of its cores when smt is off, so no
	                        * other job lands on a hyperthread of its cores */
	struct cpumask mems;   /* NUMA nodes of cpus: its cpuset.mems */
};

/* Chooses ncpus CPUs among free, packed into the smallest topology object
 * that holds them (core, L3, NUMA node, package, machine), one PU per core
 * unless smt. Returns 0 and *ret; -ENOSPC when the job does not fit in
 * free now; -E2BIG when it could never fit on this topology (err says so
 * in one line). Never allocates CPUs outside free. */
int placement_choose(hwloc_topology_t topo, const struct cpumask *free, unsigned ncpus, bool smt,
		     struct placement *ret, struct error *err);

/* Loads a topology from hwloc XML (what a node sends when it registers)
 * or, when text starts with no '<', from a synthetic description such as
 * "pack:2 numa:4 l3:2 core:8 pu:2". 0 and *ret, or -EINVAL with err. */
int placement_topology_load(const char *text, size_t len, hwloc_topology_t *ret, struct error *err);

/* The topology's CPUs (all PUs, OS indexes) as a mask. */
void placement_topology_cpus(hwloc_topology_t topo, struct cpumask *ret);

#endif
