/* SPDX-License-Identifier: MIT */
/* qnoded's view of a node on synthetic hwloc topologies, whole and cut down with --cpus. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "noded.h"
#include "unit.h"

/* 2 packages x 4 NUMA x 2 L3 x 8 cores x 2 PUs: 256 PUs, 32 per NUMA node
 * (os index 0-31 in node 0, ...), 1 GiB per NUMA node (hwloc's synthetic
 * default). */
#define BIG "pack:2 numa:4 l3:2 core:8 pu:2"
#define GiB (1ULL << 30)

static hwloc_topology_t synthetic(const char *desc)
{
	hwloc_topology_t t;

	CU_ASSERT_FATAL(hwloc_topology_init(&t) == 0);
	CU_ASSERT_FATAL(hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) == 0);
	CU_ASSERT_FATAL(hwloc_topology_set_synthetic(t, desc) == 0);
	CU_ASSERT_FATAL(hwloc_topology_load(t) == 0);
	return t;
}

static void test_subsets(void)
{
	static const struct {
		const char *cpus;   /* NULL: the whole machine */
		unsigned packages, numa, cores, pus;
		const char *mems;
		uint64_t mem;
		const char *list;
	} cases[] = {
		{ NULL, 2, 8, 128, 256, "0-7", 8 * GiB, "0-255" },
		{ "0-31", 1, 1, 16, 32, "0", GiB, "0-31" },
		{ "0-1", 1, 1, 1, 2, "0", GiB / 16, "0-1" },
		/* one PU of three different cores */
		{ "0,2,4", 1, 1, 3, 3, "0", GiB * 3 / 32, "0,2,4" },
		/* across a NUMA boundary inside a package */
		{ "30-33", 1, 2, 2, 4, "0-1", GiB / 16 * 2, "30-33" },
		/* across the package boundary */
		{ "127-128", 2, 2, 2, 2, "3-4", GiB / 32 * 2, "127-128" },
		/* one whole package */
		{ "128-255", 1, 4, 64, 128, "4-7", 4 * GiB, "128-255" },
		{ "5", 1, 1, 1, 1, "0", GiB / 32, "5" },
	};
	hwloc_topology_t t = synthetic(BIG);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct node_topo nt;
		struct cpumask want;
		struct error err = { "" };
		char buf[256];

		if (cases[i].cpus)
			CU_ASSERT_FATAL(cpumask_parse(cases[i].cpus, &want) == 0);
		CU_ASSERT_EQUAL_FATAL(topo_node_describe(t, cases[i].cpus ? &want : NULL, &nt, &err), 0);
		CU_ASSERT_EQUAL(nt.packages, cases[i].packages);
		CU_ASSERT_EQUAL(nt.numa, cases[i].numa);
		CU_ASSERT_EQUAL(nt.cores, cases[i].cores);
		CU_ASSERT_EQUAL(nt.pus, cases[i].pus);
		CU_ASSERT_STRING_EQUAL(nt.mems, cases[i].mems);
		CU_ASSERT_EQUAL(nt.mem, cases[i].mem);
		cpumask_format(&nt.cpus, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, cases[i].list);
	}
	hwloc_topology_destroy(t);
}

/* Two nodes carved out of one host share its memory, never double it. */
static void test_memory_adds_up(void)
{
	hwloc_topology_t t = synthetic(BIG);
	struct node_topo a, b;
	struct cpumask ma, mb;

	CU_ASSERT_FATAL(cpumask_parse("0-99", &ma) == 0);
	CU_ASSERT_FATAL(cpumask_parse("100-255", &mb) == 0);
	CU_ASSERT_EQUAL(topo_node_describe(t, &ma, &a, NULL), 0);
	CU_ASSERT_EQUAL(topo_node_describe(t, &mb, &b, NULL), 0);
	CU_ASSERT_STRING_EQUAL(a.mems, "0-3");
	CU_ASSERT_STRING_EQUAL(b.mems, "3-7");
	CU_ASSERT_EQUAL(a.mem + b.mem, 8 * GiB);
	hwloc_topology_destroy(t);
}

static void test_rejects(void)
{
	hwloc_topology_t t = synthetic(BIG);
	struct node_topo nt;
	struct cpumask want;
	struct error err = { "" };

	CU_ASSERT_FATAL(cpumask_parse("250-259", &want) == 0);
	CU_ASSERT_EQUAL(topo_node_describe(t, &want, &nt, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "--cpus 250-259: no CPU 256-259 on this machine (it has 0-255)");

	memset(&want, 0, sizeof(want));
	CU_ASSERT_EQUAL(topo_node_describe(t, &want, &nt, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "empty"));
	hwloc_topology_destroy(t);
}

/* A process confined to part of the machine (its cpuset): without --cpus
 * the node is that part; --cpus may not reach outside it. */
static void test_allowed(void)
{
	hwloc_topology_t t = synthetic("pack:2 core:4 pu:2");
	hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
	struct node_topo nt;
	struct cpumask want;
	struct error err = { "" };

	hwloc_bitmap_set_range(allowed, 0, 7);
	CU_ASSERT_FATAL(hwloc_topology_allow(t, allowed, NULL, HWLOC_ALLOW_FLAG_CUSTOM) == 0);
	CU_ASSERT_EQUAL(topo_node_describe(t, NULL, &nt, &err), 0);
	CU_ASSERT_EQUAL(nt.pus, 8);
	CU_ASSERT_EQUAL(nt.cores, 4);
	CU_ASSERT_EQUAL(nt.packages, 1);

	CU_ASSERT_FATAL(cpumask_parse("6-9", &want) == 0);
	CU_ASSERT_EQUAL(topo_node_describe(t, &want, &nt, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text,
			       "--cpus 6-9: no CPU 8-9 in the cpuset qnoded runs in (it may use 0-7)");
	hwloc_bitmap_free(allowed);
	hwloc_topology_destroy(t);
}

/* A topology already restricted (hwloc_topology_restrict) is described as is. */
static void test_restricted(void)
{
	hwloc_topology_t t = synthetic(BIG);
	hwloc_bitmap_t keep = hwloc_bitmap_alloc();
	struct node_topo nt;

	hwloc_bitmap_set_range(keep, 64, 127);
	CU_ASSERT_FATAL(hwloc_topology_restrict(t, keep, 0) == 0);
	CU_ASSERT_EQUAL(topo_node_describe(t, NULL, &nt, NULL), 0);
	CU_ASSERT_EQUAL(nt.pus, 64);
	CU_ASSERT_EQUAL(nt.cores, 32);
	CU_ASSERT_EQUAL(nt.numa, 2);
	CU_ASSERT_STRING_EQUAL(nt.mems, "2-3");
	CU_ASSERT_EQUAL(nt.mem, 2 * GiB);
	hwloc_bitmap_free(keep);
	hwloc_topology_destroy(t);
}

/* A fake /proc with meminfo saying kb kB; its path into dir (a temp dir). */
static void fake_meminfo(char *dir, size_t len, unsigned long long kb)
{
	char path[512];
	FILE *f;

	snprintf(dir, len, "/tmp/qpool-unit-meminfo.XXXXXX");
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fprintf(f, "MemTotal:       %llu kB\nMemFree:        1024 kB\n", kb);
	fclose(f);
}

static void fake_meminfo_remove(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/meminfo", dir);
	unlink(path);
	rmdir(dir);
}

/* This machine's case: one NUMA node that holds 10.8 GB of MemTotal's
 * 24 GB (memory hot-plugged into the VM). MemTotal wins on the live
 * system, shared by the node's PUs as the NUMA memory is; never on a
 * synthetic topology (a simulated node), nor when NUMA holds more. */
static void test_mem_reconcile(void)
{
	hwloc_topology_t t;
	struct node_topo nt;
	struct cpumask half;
	char dir[64];

	fake_meminfo(dir, sizeof(dir), 4ULL << 20);   /* 4 GiB */
	t = synthetic("numa:1(memory=1GB) core:4 pu:1");
	CU_ASSERT_EQUAL(topo_node_describe(t, NULL, &nt, NULL), 0);
	CU_ASSERT_EQUAL(nt.mem, 1000000000ULL);   /* hwloc's GB */
	CU_ASSERT_EQUAL(topo_node_mem_reconcile(t, dir, &nt), 0);   /* not this system */
	CU_ASSERT_EQUAL(nt.mem, 1000000000ULL);   /* hwloc's GB */
	hwloc_topology_destroy(t);

	CU_ASSERT_FATAL(hwloc_topology_init(&t) == 0);
	CU_ASSERT_FATAL(hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
						    HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) == 0);
	CU_ASSERT_FATAL(hwloc_topology_set_synthetic(t, "numa:1(memory=1GB) core:4 pu:1") == 0);
	CU_ASSERT_FATAL(hwloc_topology_load(t) == 0);
	CU_ASSERT_EQUAL(topo_node_describe(t, NULL, &nt, NULL), 0);
	CU_ASSERT_EQUAL(topo_node_mem_reconcile(t, dir, &nt), 4 * GiB);
	CU_ASSERT_EQUAL(nt.mem, 4 * GiB);
	/* --cpus of half the machine: half of MemTotal. */
	CU_ASSERT_EQUAL(cpumask_parse("0-1", &half), 0);
	CU_ASSERT_EQUAL(topo_node_describe(t, &half, &nt, NULL), 0);
	CU_ASSERT_EQUAL(topo_node_mem_reconcile(t, dir, &nt), 4 * GiB);
	CU_ASSERT_EQUAL(nt.mem, 2 * GiB);
	fake_meminfo_remove(dir);
	/* NUMA holds all (MemTotal is below it: the kernel's own share). */
	fake_meminfo(dir, sizeof(dir), 1ULL << 19);
	CU_ASSERT_EQUAL(topo_node_describe(t, NULL, &nt, NULL), 0);
	CU_ASSERT_EQUAL(topo_node_mem_reconcile(t, dir, &nt), 0);
	CU_ASSERT_EQUAL(nt.mem, 1000000000ULL);   /* hwloc's GB */
	fake_meminfo_remove(dir);
	/* No meminfo: as before. */
	CU_ASSERT_EQUAL(topo_node_mem_reconcile(t, "/nonexistent", &nt), 0);
	CU_ASSERT_EQUAL(nt.mem, 1000000000ULL);   /* hwloc's GB */
	hwloc_topology_destroy(t);
}

static const struct unit_test noded_topo_tests[] = {
	{ "mem_reconcile", test_mem_reconcile },
	{ "subsets", test_subsets },
	{ "memory_adds_up", test_memory_adds_up },
	{ "rejects", test_rejects },
	{ "allowed", test_allowed },
	{ "restricted", test_restricted },
	{ NULL, NULL },
};

UNIT_SUITE(noded_topo, noded_topo_tests);
