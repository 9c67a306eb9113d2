/* SPDX-License-Identifier: MIT */
/* qnoded's GPUs (noded/gpus.c): [node] gpus lists and auto discovery over
 * an hwloc XML topology with GPU OS devices, and mknod'd device files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "noded.h"
#include "unit.h"

/* Two packages, each one NUMA node, one PU and one GPU (nvidia0 on
 * package 0, nvidia1 on package 1), and a renderD128 on package 1. */
static const char xml[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
	"<topology version=\"2.0\">\n"
	" <object type=\"Machine\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" allowed_cpuset=\"0x3\""
	" nodeset=\"0x3\" complete_nodeset=\"0x3\" allowed_nodeset=\"0x3\">\n"
	"  <object type=\"Package\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
	"   <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\""
	" complete_nodeset=\"0x1\" local_memory=\"1073741824\"/>\n"
	"   <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n"
	"   <object type=\"PCIDev\" pci_busid=\"0000:01:00.0\" pci_type=\"0302 [10de:1eb8] [10de:12a2] a1\">\n"
	"    <object type=\"OSDev\" name=\"nvidia0\" subtype=\"CUDA\" osdev_type=\"1\">\n"
	"     <info name=\"GPUModel\" value=\"NVIDIA A100-SXM4-40GB\"/>\n"
	"    </object>\n"
	"   </object>\n"
	"  </object>\n"
	"  <object type=\"Package\" os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x2\" complete_nodeset=\"0x2\">\n"
	"   <object type=\"NUMANode\" os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x2\""
	" complete_nodeset=\"0x2\" local_memory=\"1073741824\"/>\n"
	"   <object type=\"PU\" os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x2\" complete_nodeset=\"0x2\"/>\n"
	"   <object type=\"PCIDev\" name=\"GV100GL [Tesla V100 PCIe 16GB]\" pci_busid=\"0000:81:00.0\""
	" pci_type=\"0302 [10de:1db4] [10de:1214] a1\">\n"
	"    <object type=\"OSDev\" name=\"nvidia1\" subtype=\"CUDA\" osdev_type=\"1\"/>\n"
	"   </object>\n"
	"   <object type=\"PCIDev\" name=\"Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]\" pci_busid=\"0000:82:00.0\""
	" pci_type=\"0300 [1002:73bf] [1002:0e3a] c1\">\n"
	"    <object type=\"OSDev\" name=\"renderD128\" osdev_type=\"1\"/>\n"
	"   </object>\n"
	"  </object>\n"
	" </object>\n"
	"</topology>\n";

static hwloc_topology_t io_topology(void)
{
	hwloc_topology_t t;

	CU_ASSERT_FATAL(hwloc_topology_init(&t) == 0);
	CU_ASSERT_FATAL(hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) == 0);
	CU_ASSERT_FATAL(hwloc_topology_set_xmlbuffer(t, xml, (int)sizeof(xml)) == 0);
	CU_ASSERT_FATAL(hwloc_topology_load(t) == 0);
	return t;
}

/* dir/name as character device major:minor; false when mknod is not
 * allowed here (no CAP_MKNOD). */
static bool chrdev(const char *dir, const char *name, unsigned maj, unsigned min)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return mknod(path, S_IFCHR | 0600, makedev(maj, min)) == 0;
}

static void test_find(void)
{
	hwloc_topology_t t = io_topology();
	char *dir = unit_tmpdir(), conf[8500];
	struct node_gpu *g = NULL;
	struct cpumask all, cpu1;
	struct error err = { "" };
	unsigned n = 9;
	char cpus[64];

	cpumask_parse("0-1", &all);
	cpumask_parse("1", &cpu1);
	if (!chrdev(dir, "nvidia0", 240, 0)) {
		fprintf(stderr, "\n  (no mknod here: GPU discovery not tested) ");
		goto done;
	}
	CU_ASSERT_FATAL(chrdev(dir, "nvidia1", 240, 1));
	CU_ASSERT_FATAL(mkdir(strcat(strcpy(conf, dir), "/dri"), 0755) == 0);
	CU_ASSERT_FATAL(chrdev(dir, "dri/renderD128", 241, 128));
	unit_write_file(dir, "regular", "");

	/* none: nothing, even with devices about. */
	CU_ASSERT_EQUAL(gpus_find("none", dir, t, &all, &g, &n, &err), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_PTR_NULL(g);

	/* auto: hwloc's nvidiaN and renderDN, in its order, with locality. */
	CU_ASSERT_EQUAL_FATAL(gpus_find("auto", dir, t, &all, &g, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(g[0].file, "/nvidia0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g[1].file, "/nvidia1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(g[2].file, "/dri/renderD128"));
	CU_ASSERT(g[1].major == 240 && g[1].minor == 1 && g[2].major == 241 && g[2].minor == 128);
	for (unsigned i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(g[i].index, i);
	CU_ASSERT_EQUAL(g[0].numa, 0);
	CU_ASSERT_EQUAL(g[1].numa, 1);
	cpumask_format(&g[0].cpus, cpus, sizeof(cpus));
	CU_ASSERT_STRING_EQUAL(cpus, "0");
	cpumask_format(&g[2].cpus, cpus, sizeof(cpus));
	CU_ASSERT_STRING_EQUAL(cpus, "1");
	/* Models: hwloc's GPUModel info, else the PCI device's name, short. */
	CU_ASSERT_STRING_EQUAL(g[0].model, "a100");
	CU_ASSERT_STRING_EQUAL(g[1].model, "v100");
	CU_ASSERT_STRING_EQUAL(g[2].model, "rx6800");
	free(g);
	/* auto without an I/O topology: none found. */
	CU_ASSERT_EQUAL(gpus_find("auto", dir, NULL, &all, &g, &n, &err), 0);
	CU_ASSERT_EQUAL(n, 0);

	/* A glob, for a node of CPU 1 only: GPU 0's CPUs are not the node's
	 * (unknown), its NUMA node still is known. */
	snprintf(conf, sizeof(conf), "%s/nvidia*", dir);
	CU_ASSERT_EQUAL_FATAL(gpus_find(conf, "/nonexistent", t, &cpu1, &g, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(cpumask_count(&g[0].cpus), 0);
	CU_ASSERT_EQUAL(g[0].numa, 0);
	CU_ASSERT_EQUAL(cpumask_count(&g[1].cpus), 1);
	free(g);

	/* Listed in another order: indices follow the list; a file with no
	 * OS device of its name has unknown locality. */
	snprintf(conf, sizeof(conf), "%s/dri/renderD128 %s/nvidia0", dir, dir);
	CU_ASSERT_EQUAL_FATAL(gpus_find(conf, "/dev", NULL, &all, &g, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(g[0].minor, 128);
	CU_ASSERT_EQUAL(g[1].minor, 0);
	CU_ASSERT_EQUAL(g[1].numa, -1);
	CU_ASSERT_STRING_EQUAL(g[1].model, "");
	free(g);

	/* Models: MODEL:FILE[,FILE...] words, in list order, lower-cased. */
	snprintf(conf, sizeof(conf), "A100:%s/nvidia1,%s/nvidia0 v100:%s/dri/renderD*", dir, dir, dir);
	CU_ASSERT_EQUAL_FATAL(gpus_find(conf, "/dev", NULL, &all, &g, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT(g[0].minor == 1 && g[1].minor == 0 && g[2].minor == 128);
	CU_ASSERT_STRING_EQUAL(g[0].model, "a100");
	CU_ASSERT_STRING_EQUAL(g[1].model, "a100");
	CU_ASSERT_STRING_EQUAL(g[2].model, "v100");
	free(g);

	/* Bad lists: one line naming the file; nothing returned. */
	{
		static const struct {
			const char *a, *b;   /* under dir; b may be NULL */
			const char *want;
		} bad[] = {
			{ "regular", NULL, "/regular is not a character device" },
			{ "nothing*", NULL, "/nothing* matches no file" },
			{ "missing", NULL, "/missing: No such file or directory" },
			{ "nvidia0", "nvidia[0-1]", "/nvidia0 is the same device as " },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (bad[i].b)
				snprintf(conf, sizeof(conf), "%s/%s %s/%s", dir, bad[i].a, dir, bad[i].b);
			else
				snprintf(conf, sizeof(conf), "%s/%s", dir, bad[i].a);
			g = (struct node_gpu *)&n;
			CU_ASSERT(gpus_find(conf, "/dev", t, &all, &g, &n, &err) < 0);
			CU_ASSERT_PTR_NULL(g);
			CU_ASSERT_EQUAL(n, 0);
			CU_ASSERT(strncmp(err.text, "gpus: ", 6) == 0);
			if (!strstr(err.text, bad[i].want))
				fprintf(stderr, "\n  case %zu: got '%s', want '%s'", i, err.text, bad[i].want);
			CU_ASSERT_PTR_NOT_NULL(strstr(err.text, bad[i].want));
		}
	}

	/* 64 GPUs are fine, 65 are one too many. */
	CU_ASSERT_FATAL(mkdir(strcat(strcpy(conf, dir), "/many"), 0755) == 0);
	for (unsigned i = 0; i < NODE_GPUS_MAX + 1; i++) {
		char name[32];

		snprintf(name, sizeof(name), "many/g%02u", i);
		CU_ASSERT_FATAL(chrdev(dir, name, 242, i));
	}
	snprintf(conf, sizeof(conf), "%s/many/g[0-5]? %s/many/g6[0-3]", dir, dir);
	CU_ASSERT_EQUAL(gpus_find(conf, "/dev", NULL, &all, &g, &n, &err), 0);
	CU_ASSERT_EQUAL(n, 64);
	free(g);
	snprintf(conf, sizeof(conf), "%s/many/g*", dir);
	CU_ASSERT(gpus_find(conf, "/dev", NULL, &all, &g, &n, &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "gpus: more than 64 GPUs"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "/many/g64 is one too many"));
	CU_ASSERT_PTR_NULL(g);
done:
	hwloc_topology_destroy(t);
	unit_tmpdir_remove(dir);
}

/* --sim-gpus: N, or MODEL:N[,...], at most 64; one line for the rest. */
static void test_sim_gpus(void)
{
	static const char *const bad[] = { "0", "a100:0", ":1", "a100:", "a100:4,", "a100:40,v100:25", "x/y:1",
					   "4x", "" };
	struct node_gpu *g = NULL;
	struct error err = { "" };
	unsigned n = 0;

	CU_ASSERT_EQUAL_FATAL(sim_gpus_make("A100:2,v100:1", &g, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_STRING_EQUAL(g[0].model, "a100");
	CU_ASSERT_STRING_EQUAL(g[1].model, "a100");
	CU_ASSERT_STRING_EQUAL(g[2].model, "v100");
	CU_ASSERT_STRING_EQUAL(g[2].file, "/dev/nvidia2");
	CU_ASSERT(g[2].index == 2 && g[2].minor == 2 && g[2].numa == -1);
	free(g);
	CU_ASSERT_EQUAL_FATAL(sim_gpus_make("64", &g, &n, &err), 0);
	CU_ASSERT_EQUAL(n, 64);
	CU_ASSERT_STRING_EQUAL(g[63].model, "");
	free(g);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		g = (struct node_gpu *)&n;
		err.text[0] = '\0';
		CU_ASSERT_EQUAL(sim_gpus_make(bad[i], &g, &n, &err), -EINVAL);
		CU_ASSERT_PTR_NULL(g);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "--sim-gpus"));
		CU_ASSERT_PTR_NULL(strchr(err.text, '\n'));
	}
}

static const struct unit_test noded_gpus_tests[] = {
	{ "find", test_find },
	{ "sim_gpus", test_sim_gpus },
	{ NULL, NULL },
};

UNIT_SUITE(noded_gpus, noded_gpus_tests);
