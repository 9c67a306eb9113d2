/* SPDX-License-Identifier: MIT */
/* Placement on synthetic hwloc topologies of large nodes: packing, smt claims, churn, XML. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "noded.h"
#include "placement.h"
#include "unit.h"

/* 2 x 4 NUMA x 2 L3 x 8 cores x 2 PUs: 256 PUs; an L3 is 8 cores (16
 * PUs), a NUMA node 16 cores (32 PUs), a package 64 cores (128 PUs). */
#define BIG "pack:2 numa:4 l3:2 core:8 pu:2"
/* 4 x 8 NUMA x 16 cores x 2 PUs, no L3: 1024 PUs, all of CPUMASK_MAX; a
 * NUMA node is 16 cores (32 PUs), a package 128 cores (256 PUs). */
#define WIDE "pack:4 numa:8 core:16 pu:2"
#define SMALL "pack:1 core:2 pu:1"

static hwloc_topology_t load(const char *desc)
{
	hwloc_topology_t t = NULL;
	struct error err = { "" };

	CU_ASSERT_EQUAL_FATAL(placement_topology_load(desc, strlen(desc), &t, &err), 0);
	return t;
}

/* A CPU list as the kernel writes it, plus "a-b:s" for every s-th CPU
 * of a-b (the tables below are easier to read with it). */
static struct cpumask mask(const char *list)
{
	struct cpumask m = { { 0 } };
	char *copy = strdup(list), *save = NULL;

	CU_ASSERT_FATAL(copy != NULL);
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned a, b, step = 1;
		int n = sscanf(tok, "%u-%u:%u", &a, &b, &step);

		CU_ASSERT_FATAL(n >= 1);
		if (n == 1)
			b = a;
		for (unsigned c = a; c <= b; c += step)
			cpumask_set(&m, c);
	}
	free(copy);
	return m;
}

static const char *fmt(const struct cpumask *m, char *buf, size_t len)
{
	cpumask_format(m, buf, len);
	return buf;
}

static bool disjoint(const struct cpumask *a, const struct cpumask *b)
{
	for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
		if (a->bits[i] & b->bits[i])
			return false;
	return true;
}

static void mask_andnot(struct cpumask *a, const struct cpumask *b)
{
	for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
		a->bits[i] &= ~b->bits[i];
}

static void mask_or(struct cpumask *a, const struct cpumask *b)
{
	for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
		a->bits[i] |= b->bits[i];
}

static bool mask_equal(const struct cpumask *a, const struct cpumask *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static hwloc_bitmap_t bitmap_of(const struct cpumask *m)
{
	hwloc_bitmap_t b = hwloc_bitmap_alloc();

	CU_ASSERT_FATAL(b != NULL);
	for (int c = cpumask_next(m, 0); c >= 0; c = cpumask_next(m, c + 1))
		hwloc_bitmap_set(b, (unsigned)c);
	return b;
}

/* Free units in obj, counted here independently of lib/placement.c: free
 * PUs (smt) or cores all of whose PUs are free. */
static unsigned units_free(hwloc_topology_t t, hwloc_obj_t obj, const struct cpumask *free_cpus,
			   bool smt)
{
	unsigned n = 0;
	int c;

	if (smt) {
		hwloc_bitmap_foreach_begin(c, obj->cpuset) {
			n += cpumask_test(free_cpus, (unsigned)c);
		} hwloc_bitmap_foreach_end();
		return n;
	}
	for (hwloc_obj_t core = NULL;
	     (core = hwloc_get_next_obj_inside_cpuset_by_type(t, obj->cpuset, HWLOC_OBJ_CORE, core));) {
		bool all = true;

		hwloc_bitmap_foreach_begin(c, core->cpuset) {
			all = all && cpumask_test(free_cpus, (unsigned)c);
		} hwloc_bitmap_foreach_end();
		n += all;
	}
	return n;
}

/* The object of type holding all of cpus, or NULL. */
static hwloc_obj_t holder(hwloc_topology_t t, hwloc_obj_type_t type, const struct cpumask *cpus)
{
	hwloc_bitmap_t b = bitmap_of(cpus);
	hwloc_obj_t found = NULL;
	int n = hwloc_get_nbobjs_by_type(t, type);

	for (int i = 0; i < n && !found; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(t, type, (unsigned)i);

		if (hwloc_bitmap_isincluded(b, o->cpuset))
			found = o;
	}
	hwloc_bitmap_free(b);
	return found;
}

/* Chooses on t with free_cpus and checks what holds for every placement:
 * ncpus CPUs, inside the claim, the claim inside free_cpus, one CPU per
 * core without smt and the whole core claimed. Returns placement_choose's
 * result. */
static int choose_checked(hwloc_topology_t t, const struct cpumask *free_cpus, unsigned ncpus,
			  bool smt, struct placement *p)
{
	struct error err = { "" };
	int r = placement_choose(t, free_cpus, ncpus, smt, p, &err);

	if (r < 0) {
		CU_ASSERT(err.text[0] != '\0');
		return r;
	}
	CU_ASSERT_EQUAL(cpumask_count(&p->cpus), ncpus);
	CU_ASSERT(cpumask_subset(&p->cpus, &p->claim));
	CU_ASSERT(cpumask_subset(&p->claim, free_cpus));
	CU_ASSERT(cpumask_count(&p->mems) >= 1);
	if (!smt) {
		hwloc_bitmap_t b = bitmap_of(&p->claim);

		for (hwloc_obj_t core = NULL;
		     (core = hwloc_get_next_obj_inside_cpuset_by_type(t, b, HWLOC_OBJ_CORE, core));)
			CU_ASSERT_EQUAL(hwloc_bitmap_weight(core->cpuset), 0 +
					(int)units_free(t, core, &p->claim, true));
		CU_ASSERT_EQUAL(hwloc_get_nbobjs_inside_cpuset_by_type(t, b, HWLOC_OBJ_CORE), (int)ncpus);
		hwloc_bitmap_free(b);
	} else {
		CU_ASSERT(mask_equal(&p->cpus, &p->claim));
	}
	return r;
}

static void assert_mask(const struct cpumask *got, const char *want)
{
	struct cpumask w = mask(want);
	char a[4096], b[4096];

	fmt(got, a, sizeof(a));
	fmt(&w, b, sizeof(b));
	CU_ASSERT_STRING_EQUAL(a, b);
	if (strcmp(a, b) != 0)   /* CUnit does not show the values */
		fprintf(stderr, "\n  got %s, want %s\n", a, b);
}

static void test_pack(void)
{
	static const struct {
		const char *topo;
		unsigned ncpus;
		bool smt;
		const char *cpus, *claim, *mems;
		hwloc_obj_type_t in;   /* an object of this type holds the job */
	} cases[] = {
		/* two cores of one L3, one PU each; the claim has the siblings */
		{ BIG, 2, false, "0,2", "0-3", "0", HWLOC_OBJ_L3CACHE },
		/* with smt, both PUs of one core */
		{ BIG, 2, true, "0-1", "0-1", "0", HWLOC_OBJ_CORE },
		{ BIG, 1, false, "0", "0-1", "0", HWLOC_OBJ_CORE },
		{ BIG, 3, true, "0-2", "0-2", "0", HWLOC_OBJ_L3CACHE },
		/* 8 cores fill one L3 */
		{ BIG, 8, false, "0-14:2", "0-15", "0", HWLOC_OBJ_L3CACHE },
		{ BIG, 16, true, "0-15", "0-15", "0", HWLOC_OBJ_L3CACHE },
		/* 16 cores: one NUMA node */
		{ BIG, 16, false, "0-30:2", "0-31", "0", HWLOC_OBJ_NUMANODE },
		{ BIG, 32, true, "0-31", "0-31", "0", HWLOC_OBJ_NUMANODE },
		/* 32 cores: one package, two of its NUMA nodes */
		{ BIG, 32, false, "0-62:2", "0-63", "0-1", HWLOC_OBJ_PACKAGE },
		{ BIG, 64, false, "0-126:2", "0-127", "0-3", HWLOC_OBJ_PACKAGE },
		{ BIG, 128, true, "0-127", "0-127", "0-3", HWLOC_OBJ_PACKAGE },
		/* more than a package: the machine */
		{ BIG, 65, false, "0-128:2", "0-129", "0-4", HWLOC_OBJ_MACHINE },
		{ BIG, 128, false, "0-254:2", "0-255", "0-7", HWLOC_OBJ_MACHINE },
		{ BIG, 256, true, "0-255", "0-255", "0-7", HWLOC_OBJ_MACHINE },
		{ WIDE, 2, false, "0,2", "0-3", "0", HWLOC_OBJ_NUMANODE },
		{ WIDE, 16, false, "0-30:2", "0-31", "0", HWLOC_OBJ_NUMANODE },
		{ WIDE, 17, false, "0-32:2", "0-33", "0-1", HWLOC_OBJ_PACKAGE },
		{ WIDE, 32, false, "0-62:2", "0-63", "0-1", HWLOC_OBJ_PACKAGE },
		{ WIDE, 128, false, "0-254:2", "0-255", "0-7", HWLOC_OBJ_PACKAGE },
		{ WIDE, 129, false, "0-256:2", "0-257", "0-8", HWLOC_OBJ_MACHINE },
		{ WIDE, 1024, true, "0-1023", "0-1023", "0-31", HWLOC_OBJ_MACHINE },
		{ SMALL, 1, false, "0", "0", "0", HWLOC_OBJ_CORE },
		{ SMALL, 2, false, "0-1", "0-1", "0", HWLOC_OBJ_PACKAGE },
		{ SMALL, 2, true, "0-1", "0-1", "0", HWLOC_OBJ_PACKAGE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hwloc_topology_t t = load(cases[i].topo);
		struct placement p;
		struct cpumask all;

		placement_topology_cpus(t, &all);
		CU_ASSERT_EQUAL_FATAL(choose_checked(t, &all, cases[i].ncpus, cases[i].smt, &p), 0);
		assert_mask(&p.cpus, cases[i].cpus);
		assert_mask(&p.claim, cases[i].claim);
		assert_mask(&p.mems, cases[i].mems);
		CU_ASSERT(holder(t, cases[i].in, &p.cpus) != NULL);
		hwloc_topology_destroy(t);
	}
}

/* Among the objects of the smallest level that fit, the one with the
 * fewest free units; ties to the lowest CPU. */
static void test_best_fit(void)
{
	static const struct {
		const char *busy;
		unsigned ncpus;
		bool smt;
		const char *cpus, *claim, *mems;
	} cases[] = {
		/* L3 1 has 2 free cores left: a 2-core job fills them ... */
		{ "16-27", 2, false, "28,30", "28-31", "0" },
		/* ... a 3-core job does not fit there and takes L3 0 */
		{ "16-27", 3, false, "0,2,4", "0-5", "0" },
		/* NUMA 1 has 10 free cores over its two L3: the 10-core job
		 * goes there, not into the empty NUMA 0 */
		{ "32-43", 10, false, "44-62:2", "44-63", "1" },
		/* package 0 has 32 cores left, package 1 all 64 */
		{ "0-63", 20, false, "64-102:2", "64-103", "2-3" },
		/* equal L3s: the lowest */
		{ "0-15", 8, false, "16-30:2", "16-31", "0" },
		{ "0-15", 16, true, "16-31", "16-31", "0" },
	};
	hwloc_topology_t t = load(BIG);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cpumask free_cpus, busy = mask(cases[i].busy);
		struct placement p;

		placement_topology_cpus(t, &free_cpus);
		mask_andnot(&free_cpus, &busy);
		CU_ASSERT_EQUAL_FATAL(choose_checked(t, &free_cpus, cases[i].ncpus, cases[i].smt, &p), 0);
		assert_mask(&p.cpus, cases[i].cpus);
		assert_mask(&p.claim, cases[i].claim);
		assert_mask(&p.mems, cases[i].mems);
	}
	hwloc_topology_destroy(t);
}

/* Partly taken cores: unusable without smt, the first holes with it. */
static void test_smt(void)
{
	static const struct {
		const char *busy;
		unsigned ncpus;
		bool smt;
		int r;
		const char *cpus;   /* the claim: cpus with smt, whole cores without */
	} cases[] = {
		{ "1", 1, false, 0, "2" },
		{ "1", 1, true, 0, "0" },          /* the lone PU of core 0 */
		{ "1", 2, true, 0, "2-3" },        /* one whole core */
		{ "1", 3, true, 0, "0,2-3" },      /* a whole core, then the hole */
		{ "1", 4, true, 0, "2-5" },
		{ "1", 5, true, 0, "0,2-5" },
		/* the odd PU goes into a hole, not into a fresh core */
		{ "5", 3, true, 0, "0-1,4" },
		/* every core half taken */
		{ "1-255:2", 1, false, -ENOSPC, NULL },
		{ "1-255:2", 4, true, 0, "0-6:2" },
		{ "1-255:2", 128, true, 0, "0-254:2" },
		{ "1-255:2", 129, true, -ENOSPC, NULL },
	};
	hwloc_topology_t t = load(BIG);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cpumask free_cpus, busy = mask(cases[i].busy);
		struct placement p;
		int r;

		placement_topology_cpus(t, &free_cpus);
		mask_andnot(&free_cpus, &busy);
		r = choose_checked(t, &free_cpus, cases[i].ncpus, cases[i].smt, &p);
		CU_ASSERT_EQUAL(r, cases[i].r);
		if (r != 0 || !cases[i].cpus)
			continue;
		if (cases[i].smt) {
			assert_mask(&p.cpus, cases[i].cpus);
		} else {
			assert_mask(&p.cpus, cases[i].cpus);
			CU_ASSERT_EQUAL(cpumask_count(&p.claim), 2 * cases[i].ncpus);
		}
	}
	hwloc_topology_destroy(t);
}

static void test_refusals(void)
{
	static const struct {
		const char *topo;
		const char *free_cpus;   /* NULL: all */
		unsigned ncpus;
		bool smt;
		int r;
		const char *text;
	} cases[] = {
		{ BIG, NULL, 129, false, -E2BIG,
		  "129 CPUs requested, but this node has only 128 cores (one CPU per core without smt)" },
		{ BIG, NULL, 257, true, -E2BIG, "257 CPUs requested, but this node has only 256 CPUs" },
		/* never fits even when nothing is free: E2BIG, not ENOSPC */
		{ BIG, "", 129, false, -E2BIG,
		  "129 CPUs requested, but this node has only 128 cores (one CPU per core without smt)" },
		{ SMALL, NULL, 3, false, -E2BIG,
		  "3 CPUs requested, but this node has only 2 cores (one CPU per core without smt)" },
		{ SMALL, NULL, 3, true, -E2BIG, "3 CPUs requested, but this node has only 2 CPUs" },
		/* CPUs the topology does not have are not capacity */
		{ SMALL, "0-100", 3, true, -E2BIG, "3 CPUs requested, but this node has only 2 CPUs" },
		{ BIG, "", 1, false, -ENOSPC, "1 CPU requested, 0 whole cores free now" },
		{ BIG, "0-9", 6, false, -ENOSPC, "6 CPUs requested, 5 whole cores free now" },
		{ BIG, "1-2", 2, false, -ENOSPC, "2 CPUs requested, 0 whole cores free now" },
		{ BIG, "1-3", 2, false, -ENOSPC, "2 CPUs requested, 1 whole core free now" },
		{ SMALL, "1-100", 2, true, -ENOSPC, "2 CPUs requested, 1 CPU free now" },
		/* a cpumask holds CPUs 0-1023: the rest is no capacity */
		{ "pack:2 core:512 pu:2", NULL, 1025, true, -E2BIG,
		  "1025 CPUs requested, but this node has only 1024 CPUs" },
		{ BIG, "0-9", 0, false, -EINVAL, "a job needs at least one CPU" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hwloc_topology_t t = load(cases[i].topo);
		struct cpumask free_cpus;
		struct placement p;
		struct error err = { "" };

		if (cases[i].free_cpus)
			free_cpus = mask(cases[i].free_cpus);
		else
			placement_topology_cpus(t, &free_cpus);
		CU_ASSERT_EQUAL(placement_choose(t, &free_cpus, cases[i].ncpus, cases[i].smt, &p, &err),
				cases[i].r);
		CU_ASSERT_STRING_EQUAL(err.text, cases[i].text);
		CU_ASSERT(strchr(err.text, '\n') == NULL);
		hwloc_topology_destroy(t);
	}
}

/* Allocates until nothing fits: claims disjoint, inside free, and in the
 * end covering the whole node (nothing lost, nothing given twice). */
static void test_exhaust(void)
{
	static const char *const topos[] = { BIG, WIDE, SMALL };
	static const unsigned sizes[] = { 3, 1, 8, 5, 16, 2, 7 };

	for (size_t ti = 0; ti < sizeof(topos) / sizeof(topos[0]); ti++) {
		for (int mode = 0; mode < 3; mode++) {   /* no smt, smt, alternating */
			hwloc_topology_t t = load(topos[ti]);
			struct cpumask all, free_cpus, taken = { { 0 } };
			unsigned k = 0, jobs = 0;

			placement_topology_cpus(t, &all);
			free_cpus = all;
			for (;;) {
				unsigned ncpus = sizes[k % (sizeof(sizes) / sizeof(sizes[0]))];
				bool smt = mode == 1 || (mode == 2 && jobs % 2);
				struct placement p;
				int r;

				r = choose_checked(t, &free_cpus, ncpus, smt, &p);
				if (r == -ENOSPC || r == -E2BIG) {
					hwloc_obj_t root = hwloc_get_root_obj(t);

					CU_ASSERT(units_free(t, root, &free_cpus, smt) < ncpus);
					if (ncpus == 1)
						break;
					k++;
					continue;
				}
				CU_ASSERT_EQUAL_FATAL(r, 0);
				CU_ASSERT(disjoint(&p.claim, &taken));
				mask_or(&taken, &p.claim);
				mask_andnot(&free_cpus, &p.claim);
				jobs++;
				if (r == 0 && jobs % 3 == 0)
					k++;
			}
			/* smt jobs leave no PU; the others leave no whole core,
			 * and with alternation a half core may stay. */
			if (mode != 2)
				CU_ASSERT(mask_equal(&taken, &all));
			CU_ASSERT(cpumask_count(&free_cpus) + cpumask_count(&taken) == cpumask_count(&all));
			hwloc_topology_destroy(t);
		}
	}
}

/* xorshift64*: the same sequence on every run and machine. */
static uint64_t prng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

struct churn {
	struct placement live[512];
	size_t n_live;
	struct cpumask free_cpus;
	uint64_t seed;
};

/* One step of random churn: frees a running job or places a new one.
 * Returns placement_choose's result (1 for a free) and the request. */
static int churn_step(hwloc_topology_t t, struct churn *c, unsigned *ret_ncpus, bool *ret_smt,
		      struct placement *ret)
{
	static const unsigned sizes[] = { 1, 2, 2, 3, 4, 4, 6, 8, 8, 12, 16, 16, 24, 32 };
	uint64_t x = prng_next(&c->seed);
	struct error err = { "" };
	int r;

	if (x % 5 < 2 && c->n_live > 0) {
		size_t i = (size_t)(prng_next(&c->seed) % c->n_live);

		mask_or(&c->free_cpus, &c->live[i].claim);
		c->live[i] = c->live[--c->n_live];
		return 1;
	}
	*ret_ncpus = sizes[(x >> 8) % (sizeof(sizes) / sizeof(sizes[0]))];
	*ret_smt = (x >> 20) % 4 == 0;
	r = placement_choose(t, &c->free_cpus, *ret_ncpus, *ret_smt, ret, &err);
	if (r == 0 && c->n_live < sizeof(c->live) / sizeof(c->live[0])) {
		CU_ASSERT(cpumask_subset(&ret->claim, &c->free_cpus));
		mask_andnot(&c->free_cpus, &ret->claim);
		c->live[c->n_live++] = *ret;
	}
	return r;
}

/* After many random allocations and releases the job still lands in the
 * smallest kind of object that has room for it (core, L3, NUMA node,
 * package), in the one of those with the least room. */
static void test_churn(void)
{
	static const hwloc_obj_type_t levels[] = {
		HWLOC_OBJ_CORE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_NUMANODE, HWLOC_OBJ_PACKAGE, HWLOC_OBJ_MACHINE,
	};
	hwloc_topology_t t = load(BIG);
	struct churn *c = calloc(1, sizeof(*c));
	unsigned placed_in[5] = { 0 }, full = 0;

	CU_ASSERT_FATAL(c != NULL);
	placement_topology_cpus(t, &c->free_cpus);
	c->seed = 0x9e3779b97f4a7c15ULL;
	for (int step = 0; step < 6000; step++) {
		struct cpumask before = c->free_cpus;
		struct placement p;
		unsigned ncpus = 0;
		bool smt = false;
		int r = churn_step(t, c, &ncpus, &smt, &p);

		if (r == 1)
			continue;
		if (r == -ENOSPC) {
			CU_ASSERT(units_free(t, hwloc_get_root_obj(t), &before, smt) < ncpus);
			full++;
			continue;
		}
		CU_ASSERT_EQUAL_FATAL(r, 0);
		CU_ASSERT(cpumask_subset(&p.claim, &before));
		for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
			int n = hwloc_get_nbobjs_by_type(t, levels[l]);
			unsigned best = UINT32_MAX;
			hwloc_obj_t in;

			for (int i = 0; i < n; i++) {
				unsigned f = units_free(t, hwloc_get_obj_by_type(t, levels[l], (unsigned)i),
							&before, smt);

				if (f >= ncpus && f < best)
					best = f;
			}
			if (best == UINT32_MAX)
				continue;
			in = holder(t, levels[l], &p.cpus);
			CU_ASSERT_FATAL(in != NULL);
			CU_ASSERT_EQUAL(units_free(t, in, &before, smt), best);
			placed_in[l]++;
			break;
		}
	}
	/* The churn really went through every level and hit a full node. */
	for (size_t l = 0; l < 4; l++)
		CU_ASSERT(placed_in[l] > 10);
	CU_ASSERT(full > 10);
	/* Releasing everything gives the whole node back. */
	while (c->n_live > 0)
		mask_or(&c->free_cpus, &c->live[--c->n_live].claim);
	{
		struct cpumask all;

		placement_topology_cpus(t, &all);
		CU_ASSERT(mask_equal(&c->free_cpus, &all));
	}
	free(c);
	hwloc_topology_destroy(t);
}

static char *xml_export(hwloc_topology_t t, size_t *ret_len)
{
	char *buf = NULL, *copy;
	int len = 0;

	CU_ASSERT_FATAL(hwloc_topology_export_xmlbuffer(t, &buf, &len, 0) == 0);
	copy = strdup(buf);
	CU_ASSERT_FATAL(copy != NULL);
	hwloc_free_xmlbuffer(t, buf);
	*ret_len = strlen(copy);
	return copy;
}

/* Bytes that text takes as a JSON string on the wire. */
static size_t json_size(const char *text)
{
	json_t *s = json_string(text);
	char *dump = s ? json_dumps(s, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	size_t n = dump ? strlen(dump) : SIZE_MAX;

	free(dump);
	json_decref(s);
	return n;
}

/* A synthetic topology exported as XML and loaded back places every job
 * of a churn sequence exactly as the original does. */
static void test_xml_roundtrip(void)
{
	static const char *const topos[] = { BIG, WIDE, SMALL };

	for (size_t ti = 0; ti < sizeof(topos) / sizeof(topos[0]); ti++) {
		hwloc_topology_t a = load(topos[ti]), b = NULL;
		struct churn *ca = calloc(1, sizeof(*ca)), *cb = calloc(1, sizeof(*cb));
		struct error err = { "" };
		struct cpumask cpus_a, cpus_b;
		size_t len;
		char *xml = xml_export(a, &len);
		unsigned placed = 0;

		CU_ASSERT_FATAL(ca && cb);
		/* A third of the wire's 1 MiB at most, once escaped into a
		 * JSON string: WIDE has 1024 PUs, as many as a cpumask holds. */
		CU_ASSERT(json_size(xml) < 400 * 1024);
		if (ti != 1)
			CU_ASSERT(json_size(xml) < 100 * 1024);
		CU_ASSERT_EQUAL_FATAL(placement_topology_load(xml, len, &b, &err), 0);
		/* What placement relies on to need no NUMA level: each NUMA
		 * node has exactly the CPUs of the object it hangs from. */
		for (int i = 0; i < hwloc_get_nbobjs_by_type(b, HWLOC_OBJ_NUMANODE); i++) {
			hwloc_obj_t numa = hwloc_get_obj_by_type(b, HWLOC_OBJ_NUMANODE, (unsigned)i);

			CU_ASSERT(hwloc_bitmap_isequal(numa->cpuset, numa->parent->cpuset));
		}
		placement_topology_cpus(a, &cpus_a);
		placement_topology_cpus(b, &cpus_b);
		CU_ASSERT(mask_equal(&cpus_a, &cpus_b));
		ca->free_cpus = cpus_a;
		cb->free_cpus = cpus_b;
		ca->seed = cb->seed = 42 + ti;
		for (int step = 0; step < 1500; step++) {
			struct placement pa, pb;
			unsigned na = 0, nb = 0;
			bool sa = false, sb = false;
			int ra = churn_step(a, ca, &na, &sa, &pa);
			int rb = churn_step(b, cb, &nb, &sb, &pb);

			CU_ASSERT_EQUAL_FATAL(ra, rb);
			if (ra != 0)
				continue;
			placed++;
			CU_ASSERT(mask_equal(&pa.cpus, &pb.cpus));
			CU_ASSERT(mask_equal(&pa.claim, &pb.claim));
			CU_ASSERT(mask_equal(&pa.mems, &pb.mems));
		}
		CU_ASSERT(placed > 100);
		free(xml);
		free(ca);
		free(cb);
		hwloc_topology_destroy(b);
		hwloc_topology_destroy(a);
	}
}

static void test_load_errors(void)
{
	static const char *const bad[] = {
		"", "   \n", "pack:banana", "<topology><object type=\"Nonsense\"",
		"<?xml version=\"1.0\"?><nothing/>",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		hwloc_topology_t t = NULL;
		struct error err = { "" };

		CU_ASSERT_EQUAL(placement_topology_load(bad[i], strlen(bad[i]), &t, &err), -EINVAL);
		CU_ASSERT(err.text[0] != '\0');
		CU_ASSERT(t == NULL);
	}
	/* the length counts, not a NUL: "pack:1 core:2 pu:1" cut to one core */
	{
		hwloc_topology_t t = NULL;
		struct error err = { "" };
		struct cpumask cpus;
		const char *text = "pack:1 core:1 pu:1 and more";

		CU_ASSERT_EQUAL_FATAL(placement_topology_load(text, 18, &t, &err), 0);
		placement_topology_cpus(t, &cpus);
		assert_mask(&cpus, "0");
		hwloc_topology_destroy(t);
	}
}

/* What qnoded sends for a --cpus node: only its PUs and NUMA nodes; a core
 * of which the node has one PU is a whole core to placement. */
static void test_node_xml(void)
{
	static const struct {
		const char *node;
		unsigned numa;
		unsigned ncpus;
		bool smt;
		int r;
		const char *cpus, *claim, *mems;
	} cases[] = {
		{ "0,2,4-5", 1, 2, false, 0, "0,2", "0,2", "0" },
		{ "0,2,4-5", 1, 3, false, 0, "0,2,4", "0,2,4-5", "0" },
		{ "0,2,4-5", 1, 4, false, -E2BIG, NULL, NULL, NULL },
		{ "0,2,4-5", 1, 4, true, 0, "0,2,4-5", "0,2,4-5", "0" },
		{ "30-33", 2, 2, false, 0, "30,32", "30-33", "0-1" },
		{ "30-33", 2, 2, true, 0, "30-31", "30-31", "0" },
		{ "128-255", 4, 16, false, 0, "128-158:2", "128-159", "4" },
		{ "128-255", 4, 33, false, 0, "128-192:2", "128-193", "4-6" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hwloc_topology_t m, t = NULL;
		struct cpumask want = mask(cases[i].node), cpus;
		struct node_topo nt;
		struct error err = { "" };
		struct placement p;
		char *xml = NULL;

		/* as topo_machine_load does, on a synthetic machine */
		CU_ASSERT_FATAL(hwloc_topology_init(&m) == 0);
		CU_ASSERT_FATAL(hwloc_topology_set_flags(m, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) == 0);
		CU_ASSERT_FATAL(hwloc_topology_set_synthetic(m, BIG) == 0);
		CU_ASSERT_FATAL(hwloc_topology_load(m) == 0);
		CU_ASSERT_EQUAL_FATAL(topo_node_describe(m, &want, &nt, &err), 0);
		CU_ASSERT_EQUAL_FATAL(topo_node_xml(m, &nt.cpus, &xml), 0);
		hwloc_topology_destroy(m);

		CU_ASSERT_EQUAL_FATAL(placement_topology_load(xml, strlen(xml), &t, &err), 0);
		placement_topology_cpus(t, &cpus);
		CU_ASSERT(mask_equal(&cpus, &want));
		CU_ASSERT_EQUAL(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE), (int)cases[i].numa);
		CU_ASSERT_EQUAL(choose_checked(t, &cpus, cases[i].ncpus, cases[i].smt, &p), cases[i].r);
		if (cases[i].r == 0) {
			assert_mask(&p.cpus, cases[i].cpus);
			assert_mask(&p.claim, cases[i].claim);
			assert_mask(&p.mems, cases[i].mems);
		}
		hwloc_topology_destroy(t);
		free(xml);
	}
}

/* The file qnoded writes for the ranks' hwloc: whole, world-readable,
 * readable by hwloc as this machine with every PU of the real one. */
static void test_ranks_xml(void)
{
	char dir[] = "/tmp/qpool-unit-xml.XXXXXX", path[64], tmp[80];
	hwloc_topology_t t, m;
	struct stat st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/topology.xml", dir);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	CU_ASSERT_EQUAL_FATAL(topo_ranks_xml_write(path), 0);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0644);
	CU_ASSERT_NOT_EQUAL(access(tmp, F_OK), 0);   /* renamed, not left */
	CU_ASSERT_FATAL(hwloc_topology_init(&t) == 0);
	CU_ASSERT_FATAL(hwloc_topology_set_xml(t, path) == 0);
	CU_ASSERT_FATAL(hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) == 0);
	CU_ASSERT_FATAL(hwloc_topology_load(t) == 0);
	CU_ASSERT_FATAL(topo_machine_load(&m) == 0);
	CU_ASSERT(hwloc_bitmap_isequal(hwloc_topology_get_complete_cpuset(t),
				       hwloc_topology_get_complete_cpuset(m)));
	hwloc_topology_destroy(m);
	hwloc_topology_destroy(t);
	/* A second start replaces it whole; a directory that is not there
	 * is an error, and leaves nothing. */
	CU_ASSERT_EQUAL(topo_ranks_xml_write(path), 0);
	unlink(path);
	rmdir(dir);
	CU_ASSERT(topo_ranks_xml_write(path) < 0);
	CU_ASSERT_NOT_EQUAL(access(dir, F_OK), 0);
}

static const struct unit_test placement_tests[] = {
	{ "pack", test_pack },
	{ "best_fit", test_best_fit },
	{ "smt", test_smt },
	{ "refusals", test_refusals },
	{ "exhaust", test_exhaust },
	{ "churn", test_churn },
	{ "xml_roundtrip", test_xml_roundtrip },
	{ "load_errors", test_load_errors },
	{ "node_xml", test_node_xml },
	{ "ranks_xml", test_ranks_xml },
	{ NULL, NULL },
};

UNIT_SUITE(placement, placement_tests);
