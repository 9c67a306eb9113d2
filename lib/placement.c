/* SPDX-License-Identifier: MIT */
/* CPU placement on an hwloc topology: best fit within the smallest object that holds the job. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

/* The bitmaps one choice needs, allocated together. */
struct placement_sets {
	hwloc_bitmap_t usable;   /* PUs a job may ever get: allowed, in the topology, < CPUMASK_MAX */
	hwloc_bitmap_t avail;    /* usable and free now */
	hwloc_bitmap_t units;    /* one bit per free unit: a free PU (smt) or the
	                          * first PU of a wholly free core (no smt) */
	hwloc_bitmap_t tmp;
	hwloc_bitmap_t cpus;
	hwloc_bitmap_t claim;
};

static void placement_sets_free(struct placement_sets *s)
{
	hwloc_bitmap_free(s->usable);
	hwloc_bitmap_free(s->avail);
	hwloc_bitmap_free(s->units);
	hwloc_bitmap_free(s->tmp);
	hwloc_bitmap_free(s->cpus);
	hwloc_bitmap_free(s->claim);
}

static int placement_sets_alloc(struct placement_sets *s)
{
	s->usable = hwloc_bitmap_alloc();
	s->avail = hwloc_bitmap_alloc();
	s->units = hwloc_bitmap_alloc();
	s->tmp = hwloc_bitmap_alloc();
	s->cpus = hwloc_bitmap_alloc();
	s->claim = hwloc_bitmap_alloc();
	if (!s->usable || !s->avail || !s->units || !s->tmp || !s->cpus || !s->claim)
		return -ENOMEM;
	return 0;
}

/* struct cpumask words are 64 bits; hwloc's are unsigned long. */
static void bitmap_from_cpumask(hwloc_bitmap_t b, const struct cpumask *m)
{
	hwloc_bitmap_zero(b);
	for (unsigned w = 0; w < CPUMASK_MAX / 64; w++) {
		if (!m->bits[w])
			continue;
		if (sizeof(unsigned long) >= 8) {
			hwloc_bitmap_set_ith_ulong(b, w, (unsigned long)m->bits[w]);
		} else {
			hwloc_bitmap_set_ith_ulong(b, 2 * w, (unsigned long)(m->bits[w] & 0xffffffffu));
			hwloc_bitmap_set_ith_ulong(b, 2 * w + 1, (unsigned long)(m->bits[w] >> 32));
		}
	}
}

static void cpumask_from_bitmap(struct cpumask *m, hwloc_const_bitmap_t b)
{
	int c;

	memset(m, 0, sizeof(*m));
	hwloc_bitmap_foreach_begin(c, b) {
		if (c >= CPUMASK_MAX)
			break;
		cpumask_set(m, (unsigned)c);
	} hwloc_bitmap_foreach_end();
}

/* The depth of the objects a job takes one by one: cores, or PUs on
 * topologies that show no cores (some virtual machines). */
static int placement_core_depth(hwloc_topology_t topo)
{
	int d = hwloc_get_type_depth(topo, HWLOC_OBJ_CORE);

	return d >= 0 ? d : hwloc_get_type_depth(topo, HWLOC_OBJ_PU);
}

/* Fills units (see struct placement_sets) and returns how many units the
 * topology could give at most: usable PUs (smt) or cores with a usable PU. */
static unsigned placement_units_fill(hwloc_topology_t topo, int core_depth, bool smt,
				     struct placement_sets *s)
{
	unsigned ncores = 0;
	int n;

	if (smt) {
		hwloc_bitmap_copy(s->units, s->avail);
		return (unsigned)hwloc_bitmap_weight(s->usable);
	}
	hwloc_bitmap_zero(s->units);
	n = hwloc_get_nbobjs_by_depth(topo, core_depth);
	for (int i = 0; i < n; i++) {
		hwloc_obj_t core = hwloc_get_obj_by_depth(topo, core_depth, (unsigned)i);

		hwloc_bitmap_and(s->tmp, core->cpuset, s->usable);
		if (hwloc_bitmap_iszero(s->tmp))
			continue;
		ncores++;
		/* A core is free only when no PU of it is taken: a job
		 * without smt never shares a core with another job. */
		if (hwloc_bitmap_isincluded(s->tmp, s->avail))
			hwloc_bitmap_set(s->units, (unsigned)hwloc_bitmap_first(s->tmp));
	}
	return ncores;
}

/* Free units inside obj. */
static unsigned placement_obj_free(hwloc_obj_t obj, struct placement_sets *s)
{
	if (!obj->cpuset)
		return 0;
	hwloc_bitmap_and(s->tmp, obj->cpuset, s->units);
	return (unsigned)hwloc_bitmap_weight(s->tmp);
}

/* Best fit so far: the object with the fewest free units that still holds
 * ncpus; ties go to the object whose first CPU has the lowest OS index
 * (caches have no OS index of their own). */
struct placement_best {
	hwloc_obj_t obj;
	unsigned free;
	int first;
};

static void placement_best_consider(struct placement_best *b, hwloc_obj_t obj, unsigned ncpus,
				    struct placement_sets *s)
{
	unsigned f = placement_obj_free(obj, s);
	int first;

	if (f < ncpus)
		return;
	first = hwloc_bitmap_first(obj->cpuset);
	if (!b->obj || f < b->free || (f == b->free && first < b->first)) {
		b->obj = obj;
		b->free = f;
		b->first = first;
	}
}

/* The smallest object holding ncpus free units: levels are tried from the
 * cores up to the machine, and within the first level where something
 * fits, the best fit. NUMA nodes need no level of their own: in hwloc 2 a
 * NUMA node hangs beside the tree from a normal object and has exactly
 * its CPUs (hwloc inserts a Group when no object matches), so that
 * object stands for it. */
static hwloc_obj_t placement_obj_find(hwloc_topology_t topo, int core_depth, unsigned ncpus,
				      struct placement_sets *s)
{
	for (int d = core_depth; d >= 0; d--) {
		struct placement_best best = { NULL, 0, 0 };
		int n = hwloc_get_nbobjs_by_depth(topo, d);

		for (int i = 0; i < n; i++)
			placement_best_consider(&best, hwloc_get_obj_by_depth(topo, d, (unsigned)i),
						ncpus, s);
		if (best.obj)
			return best.obj;
	}
	return NULL;
}

/* Takes up to *need PUs of core's free PUs into s->cpus, lowest first. */
static void placement_core_take(hwloc_obj_t core, unsigned *need, struct placement_sets *s)
{
	int pu;

	hwloc_bitmap_and(s->tmp, core->cpuset, s->avail);
	hwloc_bitmap_andnot(s->tmp, s->tmp, s->cpus);
	hwloc_bitmap_foreach_begin(pu, s->tmp) {
		if (*need == 0)
			break;
		hwloc_bitmap_set(s->cpus, (unsigned)pu);
		(*need)--;
	} hwloc_bitmap_foreach_end();
}

/* Chooses the PUs inside obj, which holds enough free units. */
static void placement_pus_take(hwloc_topology_t topo, int core_depth, hwloc_obj_t obj,
			       unsigned ncpus, bool smt, struct placement_sets *s)
{
	unsigned need = ncpus;
	hwloc_obj_t core;

	hwloc_bitmap_zero(s->cpus);
	hwloc_bitmap_zero(s->claim);
	if (!smt) {
		/* The first PU of each free core, cores in order; the claim
		 * is the whole core, so no job lands on its siblings. */
		for (core = NULL; need &&
		     (core = hwloc_get_next_obj_inside_cpuset_by_depth(topo, obj->cpuset, core_depth, core));) {
			hwloc_bitmap_and(s->tmp, core->cpuset, s->units);
			if (hwloc_bitmap_iszero(s->tmp))
				continue;
			hwloc_bitmap_set(s->cpus, (unsigned)hwloc_bitmap_first(s->tmp));
			hwloc_bitmap_and(s->tmp, core->cpuset, s->usable);
			hwloc_bitmap_or(s->claim, s->claim, s->tmp);
			need--;
		}
		return;
	}
	/* smt: whole free cores while the job needs at least a core's worth,
	 * so its threads share cores with each other only; then the holes
	 * other jobs left in partly taken cores; only then part of a fresh
	 * core, which leaves a hole for the next small job to fill. */
	for (int pass = 0; pass < 3 && need; pass++) {
		for (core = NULL; need &&
		     (core = hwloc_get_next_obj_inside_cpuset_by_depth(topo, obj->cpuset, core_depth, core));) {
			unsigned have, size;

			hwloc_bitmap_and(s->tmp, core->cpuset, s->usable);
			size = (unsigned)hwloc_bitmap_weight(s->tmp);
			hwloc_bitmap_and(s->tmp, s->tmp, s->avail);
			hwloc_bitmap_andnot(s->tmp, s->tmp, s->cpus);
			have = (unsigned)hwloc_bitmap_weight(s->tmp);
			if (have == 0)
				continue;
			if (pass == 0 && (have < size || need < size))
				continue;
			if (pass == 1 && have == size)
				continue;
			placement_core_take(core, &need, s);
		}
	}
	hwloc_bitmap_copy(s->claim, s->cpus);
}

/* NUMA nodes (OS indexes) whose CPUs meet cpus; node 0 when the topology
 * shows none. */
static void placement_mems_fill(hwloc_topology_t topo, hwloc_const_bitmap_t cpus,
				struct cpumask *ret)
{
	int n = hwloc_get_nbobjs_by_depth(topo, HWLOC_TYPE_DEPTH_NUMANODE);

	memset(ret, 0, sizeof(*ret));
	for (int i = 0; i < n; i++) {
		hwloc_obj_t numa = hwloc_get_obj_by_depth(topo, HWLOC_TYPE_DEPTH_NUMANODE, (unsigned)i);

		if (numa->cpuset && numa->os_index < CPUMASK_MAX &&
		    hwloc_bitmap_intersects(numa->cpuset, cpus))
			cpumask_set(ret, numa->os_index);
	}
	if (cpumask_count(ret) == 0)
		cpumask_set(ret, 0);
}

int placement_choose(hwloc_topology_t topo, const struct cpumask *free_cpus, unsigned ncpus, bool smt,
		     struct placement *ret, struct error *err)
{
	struct placement_sets s = { 0 };
	const char *unit = smt ? "CPUs" : "cores";
	int core_depth = placement_core_depth(topo);
	unsigned total, nfree;
	hwloc_obj_t obj;
	int r;

	if (ncpus == 0)
		return error_set(err, -EINVAL, "a job needs at least one CPU");
	r = placement_sets_alloc(&s);
	if (r < 0) {
		error_set(err, r, "out of memory");
		goto done;
	}
	hwloc_bitmap_and(s.usable, hwloc_topology_get_topology_cpuset(topo),
			 hwloc_topology_get_allowed_cpuset(topo));
	hwloc_bitmap_clr_range(s.usable, CPUMASK_MAX, -1);
	bitmap_from_cpumask(s.avail, free_cpus);
	hwloc_bitmap_and(s.avail, s.avail, s.usable);

	total = placement_units_fill(topo, core_depth, smt, &s);
	if (ncpus > total) {
		r = error_set(err, -E2BIG, "%u CPU%s requested, but this node has only %u %s%s", ncpus,
			      ncpus == 1 ? "" : "s", total, unit,
			      smt ? "" : " (one CPU per core without smt)");
		goto done;
	}
	obj = placement_obj_find(topo, core_depth, ncpus, &s);
	if (!obj) {
		nfree = (unsigned)hwloc_bitmap_weight(s.units);
		r = error_set(err, -ENOSPC, "%u CPU%s requested, %u %s free now", ncpus,
			      ncpus == 1 ? "" : "s", nfree,
			      smt ? (nfree == 1 ? "CPU" : "CPUs") : (nfree == 1 ? "whole core" : "whole cores"));
		goto done;
	}
	placement_pus_take(topo, core_depth, obj, ncpus, smt, &s);
	cpumask_from_bitmap(&ret->cpus, s.cpus);
	cpumask_from_bitmap(&ret->claim, s.claim);
	placement_mems_fill(topo, s.cpus, &ret->mems);
	ret->mem_near = true;
	r = 0;
done:
	placement_sets_free(&s);
	return r;
}

unsigned placement_numa_count(hwloc_topology_t topo)
{
	int n = hwloc_get_nbobjs_by_depth(topo, HWLOC_TYPE_DEPTH_NUMANODE);

	return n > 0 ? (unsigned)n : 0;
}

static hwloc_obj_t placement_numa(hwloc_topology_t topo, unsigned i)
{
	return hwloc_get_obj_by_depth(topo, HWLOC_TYPE_DEPTH_NUMANODE, i);
}

uint64_t placement_numa_mem(hwloc_topology_t topo, unsigned i)
{
	hwloc_obj_t numa = placement_numa(topo, i);

	return numa && numa->attr ? numa->attr->numanode.local_memory : 0;
}

/* Whether NUMA node i's OS index is in mems. */
static bool placement_numa_in(hwloc_topology_t topo, unsigned i, const struct cpumask *mems)
{
	hwloc_obj_t numa = placement_numa(topo, i);

	return numa && numa->os_index < CPUMASK_MAX && cpumask_test(mems, numa->os_index);
}

void placement_numa_hold(hwloc_topology_t topo, const struct cpumask *mems, uint64_t mem, uint64_t *used)
{
	unsigned n = placement_numa_count(topo), k = 0;

	for (unsigned i = 0; i < n; i++)
		k += placement_numa_in(topo, i, mems);
	for (unsigned i = 0; i < n; i++)
		if (!k || placement_numa_in(topo, i, mems))
			used[i] += mem / (k ? k : n);
}

/* Memory free on the NUMA nodes in mems. */
static uint64_t placement_numa_free(hwloc_topology_t topo, const struct cpumask *mems, const uint64_t *numa_free)
{
	unsigned n = placement_numa_count(topo);
	uint64_t sum = 0;

	for (unsigned i = 0; i < n; i++)
		if (placement_numa_in(topo, i, mems))
			sum += numa_free[i];
	return sum;
}

/* Tries the job inside the CPUs of the NUMA nodes in set (bit i: NUMA
 * node i); true with *ret when they have mem free and placement fits. */
static bool placement_try_numas(hwloc_topology_t topo, const struct cpumask *free_cpus, unsigned ncpus, bool smt,
				const uint64_t *numa_free, uint64_t mem, uint64_t set, struct placement *ret)
{
	unsigned n = placement_numa_count(topo);
	struct cpumask near = { { 0 } };
	struct placement pl;
	uint64_t sum = 0;

	for (unsigned i = 0; i < n && i < 64; i++) {
		hwloc_obj_t numa = placement_numa(topo, i);
		struct cpumask c;

		if (!(set & (UINT64_C(1) << i)) || !numa->cpuset)
			continue;
		sum += numa_free[i];
		cpumask_from_bitmap(&c, numa->cpuset);
		for (unsigned w = 0; w < CPUMASK_MAX / 64; w++)
			near.bits[w] |= c.bits[w] & free_cpus->bits[w];
	}
	if (sum < mem || placement_choose(topo, &near, ncpus, smt, &pl, NULL) < 0 ||
	    placement_numa_free(topo, &pl.mems, numa_free) < mem)
		return false;
	*ret = pl;
	return true;
}

int placement_choose_mem(hwloc_topology_t topo, const struct cpumask *free_cpus, unsigned ncpus, bool smt,
			 const uint64_t *numa_free, uint64_t mem, struct placement *ret, struct error *err)
{
	unsigned n = placement_numa_count(topo), ntried = 0;
	int r = placement_choose(topo, free_cpus, ncpus, smt, ret, err);
	int depth = hwloc_topology_get_depth(topo);
	uint64_t tried[64], all;
	struct placement first;

	if (r < 0 || !mem || n < 2 || placement_numa_free(topo, &ret->mems, numa_free) >= mem)
		return r;
	first = *ret;
	/* Bit i of a set is NUMA node i: beyond 64 NUMA nodes, only the
	 * first 64 are tried one by one. */
	for (unsigned i = 0; i < n && i < 64; i++)
		if (numa_free[i] >= mem &&
		    placement_try_numas(topo, free_cpus, ncpus, smt, numa_free, mem, UINT64_C(1) << i, ret))
			return 0;
	all = n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
	/* Larger sets: the NUMA nodes of each object, bottom-up, each set once. */
	for (int d = depth - 1; n <= 64 && d >= 0; d--) {
		unsigned nobj = (unsigned)hwloc_get_nbobjs_by_depth(topo, d);

		for (unsigned o = 0; o < nobj; o++) {
			hwloc_obj_t obj = hwloc_get_obj_by_depth(topo, d, o);
			uint64_t set = 0;
			unsigned t;

			for (unsigned i = 0; obj->nodeset && i < n; i++)
				if (hwloc_bitmap_isset(obj->nodeset, placement_numa(topo, i)->os_index))
					set |= UINT64_C(1) << i;
			if (__builtin_popcountll(set) < 2 || set == all)
				continue;
			for (t = 0; t < ntried && tried[t] != set; t++)
				;
			if (t < ntried)
				continue;
			if (ntried < 64)
				tried[ntried++] = set;
			if (placement_try_numas(topo, free_cpus, ncpus, smt, numa_free, mem, set, ret))
				return 0;
		}
	}
	/* No CPUs near the memory: placed by the node's count all the same,
	 * on what placement chose, bound to all the node's NUMA nodes (the
	 * kernel allocates near the CPUs first and spills over only when
	 * those are full, where a cpuset.mems of the CPUs' nodes alone would
	 * have the job killed for memory the node counted as its own). */
	*ret = first;
	memset(&ret->mems, 0, sizeof(ret->mems));
	for (unsigned i = 0; i < n; i++)
		if (placement_numa(topo, i)->os_index < CPUMASK_MAX)
			cpumask_set(&ret->mems, placement_numa(topo, i)->os_index);
	ret->mem_near = false;
	return 0;
}

int placement_topology_load(const char *text, size_t len, hwloc_topology_t *ret, struct error *err)
{
	hwloc_topology_t topo = NULL;
	char *buf = NULL;
	size_t skip = 0;
	bool xml;
	int r;

	while (skip < len && isspace((unsigned char)text[skip]))
		skip++;
	if (skip == len)
		return error_set(err, -EINVAL, "empty topology");
	if (len >= INT_MAX)
		return error_set(err, -EINVAL, "topology of %zu bytes is too large", len);
	xml = text[skip] == '<';
	/* hwloc wants a NUL-terminated string; the text may come straight
	 * out of a JSON member or a file without one. */
	buf = malloc(len + 1);
	if (!buf)
		return error_set(err, -ENOMEM, "out of memory");
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (hwloc_topology_init(&topo) < 0) {
		r = error_set(err, -ENOMEM, "hwloc: cannot create a topology");
		goto done;
	}
	/* The one adapter from hwloc's -1/errno: the reason is in what we
	 * were given, so say what it was. */
	if (xml) {
		if (hwloc_topology_set_xmlbuffer(topo, buf, (int)len + 1) < 0) {
			r = error_set(err, -EINVAL, "hwloc XML topology (%zu bytes) cannot be read", len);
			goto done;
		}
	} else if (hwloc_topology_set_synthetic(topo, buf) < 0) {
		r = error_set(err, -EINVAL, "synthetic topology \"%.80s\" is not valid", buf);
		goto done;
	}
	if (hwloc_topology_load(topo) < 0) {
		r = error_set(err, -EINVAL, "%s topology cannot be loaded", xml ? "hwloc XML" : "synthetic");
		goto done;
	}
	if (hwloc_bitmap_iszero(hwloc_topology_get_topology_cpuset(topo))) {
		r = error_set(err, -EINVAL, "topology has no CPU");
		goto done;
	}
	*ret = topo;
	topo = NULL;
	r = 0;
done:
	if (topo)
		hwloc_topology_destroy(topo);
	free(buf);
	return r;
}

void placement_topology_cpus(hwloc_topology_t topo, struct cpumask *ret)
{
	hwloc_bitmap_t b = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(topo));

	memset(ret, 0, sizeof(*ret));
	if (!b)
		return;
	hwloc_bitmap_and(b, b, hwloc_topology_get_allowed_cpuset(topo));
	cpumask_from_bitmap(ret, b);
	hwloc_bitmap_free(b);
}
