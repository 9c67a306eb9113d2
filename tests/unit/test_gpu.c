/* SPDX-License-Identifier: MIT */
/* A node's GPUs on the wire (lib/gpu.c): node.register's array both ways, its strict checks, the launch spec. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "unit.h"

static void two_gpus(struct node_gpu g[2])
{
	memset(g, 0, 2 * sizeof(*g));
	for (unsigned i = 0; i < 2; i++) {
		g[i].index = i;
		snprintf(g[i].file, sizeof(g[i].file), "/dev/nvidia%u", i);
		g[i].major = 195;
		g[i].minor = i;
		g[i].numa = (int)i;
	}
	cpumask_parse("0-3", &g[0].cpus);
	snprintf(g[0].model, sizeof(g[0].model), "a100");
	/* g[1]: locality and model unknown */
	g[1].numa = -1;
}

static void test_round_trip(void)
{
	struct node_gpu g[2], *back = NULL;
	struct cpumask node;
	struct error err = { "" };
	unsigned n = 99;
	json_t *arr;
	char *text;

	two_gpus(g);
	arr = gpu_list_json(g, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(arr);
	text = json_dumps(arr, JSON_COMPACT | JSON_SORT_KEYS);
	CU_ASSERT_STRING_EQUAL(text, "[{\"cpus\":\"0-3\",\"file\":\"/dev/nvidia0\",\"index\":0,\"major\":195,"
			       "\"minor\":0,\"model\":\"a100\",\"numa\":0},{\"cpus\":\"\",\"file\":\"/dev/nvidia1\","
			       "\"index\":1,\"major\":195,\"minor\":1,\"model\":\"\",\"numa\":-1}]");
	free(text);
	cpumask_parse("0-7", &node);
	CU_ASSERT_EQUAL(gpu_list_parse(arr, &node, &back, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_STRING_EQUAL(back[1].file, "/dev/nvidia1");
	CU_ASSERT_EQUAL(back[1].minor, 1);
	CU_ASSERT_EQUAL(back[0].numa, 0);
	CU_ASSERT_EQUAL(back[1].numa, -1);
	CU_ASSERT_STRING_EQUAL(back[0].model, "a100");
	CU_ASSERT_STRING_EQUAL(back[1].model, "");
	CU_ASSERT_EQUAL(cpumask_count(&back[0].cpus), 4);
	CU_ASSERT_EQUAL(cpumask_count(&back[1].cpus), 0);
	free(back);
	json_decref(arr);

	/* Absent and empty: none. */
	back = (struct node_gpu *)&n;
	CU_ASSERT_EQUAL(gpu_list_parse(NULL, &node, &back, &n, &err), 0);
	CU_ASSERT_PTR_NULL(back);
	CU_ASSERT_EQUAL(n, 0);
	arr = json_array();
	CU_ASSERT_EQUAL(gpu_list_parse(arr, &node, &back, &n, &err), 0);
	CU_ASSERT_PTR_NULL(back);
	json_decref(arr);
}

/* Each bad entry is refused with a line naming it; nothing is returned. */
static void test_parse_refuses(void)
{
	static const struct {
		const char *json;
		const char *want;
	} cases[] = {
		{ "{}", "gpus: not an array" },
		{ "[1]", "gpus[0]: not an object" },
		{ "[{\"index\":1,\"file\":\"/d/a\",\"major\":1,\"minor\":0,\"cpus\":\"\",\"numa\":-1}]",
		  "gpus[0]: index must be 0" },
		{ "[{\"index\":0,\"file\":\"/d/a\",\"major\":1,\"minor\":0,\"cpus\":\"\",\"numa\":-1},"
		  "{\"index\":0,\"file\":\"/d/b\",\"major\":1,\"minor\":1,\"cpus\":\"\",\"numa\":-1}]",
		  "gpus[1]: index must be 1" },
		{ "[{\"index\":0,\"file\":\"d/a\",\"major\":1,\"minor\":0,\"cpus\":\"\",\"numa\":-1}]",
		  "gpus[0]: file must be an absolute path" },
		{ "[{\"index\":0,\"major\":1,\"minor\":0,\"cpus\":\"\",\"numa\":-1}]", "gpus[0]: file" },
		{ "[{\"index\":0,\"file\":\"/d/a\",\"major\":4096,\"minor\":0,\"cpus\":\"\",\"numa\":-1}]",
		  "gpus[0]: major must be 0-4095" },
		{ "[{\"index\":0,\"file\":\"/d/a\",\"major\":-1,\"minor\":0,\"cpus\":\"\",\"numa\":-1}]",
		  "gpus[0]: major" },
		{ "[{\"index\":0,\"file\":\"/d/a\",\"major\":1,\"minor\":1048576,\"cpus\":\"\",\"numa\":-1}]",
		  "gpus[0]: minor must be 0-1048575" },
		{ "[{\"index\":0,\"file\":\"/d/a\",\"major\":1,\"minor\":\"0\",\"cpus\":\"\",\"numa\":-1}]",
		  "gpus[0]: minor" },
		{ "[{\"index\":0,\"file\":\"/d/a\",\"major\":1,\"minor\":0,\"cpus\":\"x\",\"numa\":-1}]",
		  "gpus[0]: cpus must be a CPU list" },
		{ "[{\"index\":0,\"file\":\"/d/a\",\"major\":1,\"minor\":0,\"cpus\":\"6-9\",\"numa\":-1}]",
		  "gpus[0]: cpus 6-9 are not all the node's" },
		{ "[{\"index\":0,\"file\":\"/d/a\",\"major\":1,\"minor\":0,\"cpus\":\"\",\"numa\":-2}]",
		  "gpus[0]: numa must be -1" },
		{ "[{\"index\":0,\"file\":\"/d/a\",\"major\":1,\"minor\":0,\"cpus\":\"\"}]", "gpus[0]: numa" },
	};
	struct cpumask node;

	cpumask_parse("0-7", &node);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *arr = json_loads(cases[i].json, 0, NULL);
		struct node_gpu *g = NULL;
		struct error err = { "" };
		unsigned n = 0;

		CU_ASSERT_PTR_NOT_NULL_FATAL(arr);
		CU_ASSERT(gpu_list_parse(arr, &node, &g, &n, &err) < 0);
		CU_ASSERT_PTR_NULL(g);
		CU_ASSERT_EQUAL(n, 0);
		if (!strstr(err.text, cases[i].want))
			fprintf(stderr, "\n  case %zu: got '%s', want '%s'", i, err.text, cases[i].want);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.text, cases[i].want));
		json_decref(arr);
	}
}

/* More than 64 entries is refused before any is read. */
static void test_parse_too_many(void)
{
	json_t *arr = json_array();
	struct node_gpu *g = NULL;
	struct error err = { "" };
	unsigned n = 0;

	for (int i = 0; i < NODE_GPUS_MAX + 1; i++)
		json_array_append_new(arr, json_pack("{s:i, s:s, s:i, s:i, s:s, s:i}", "index", i, "file", "/d/x",
						     "major", 240, "minor", i, "cpus", "", "numa", -1));
	CU_ASSERT(gpu_list_parse(arr, NULL, &g, &n, &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "gpus: 65 entries, at most 64"));
	json_array_remove(arr, 0);
	/* 64 left, but now entry 0 has index 1. */
	CU_ASSERT(gpu_list_parse(arr, NULL, &g, &n, &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "gpus[0]: index must be 0"));
	json_decref(arr);
}

static void test_spec(void)
{
	struct node_gpu g[2];
	struct error err = { "" };
	json_t *mine, *all, *launch;
	char *text;

	two_gpus(g);
	launch = json_loads("[1]", 0, NULL);
	CU_ASSERT_EQUAL_FATAL(gpu_spec_json(g, 2, launch, &mine, &all, &err), 0);
	text = json_dumps(mine, JSON_COMPACT | JSON_SORT_KEYS);
	CU_ASSERT_STRING_EQUAL(text, "[{\"file\":\"/dev/nvidia1\",\"index\":1,\"major\":195,\"minor\":1}]");
	free(text);
	text = json_dumps(all, JSON_COMPACT | JSON_SORT_KEYS);
	CU_ASSERT_STRING_EQUAL(text, "[{\"major\":195,\"minor\":0},{\"major\":195,\"minor\":1}]");
	free(text);
	json_decref(mine);
	json_decref(all);
	json_decref(launch);

	/* No gpus in job.launch: none of the job's, all of the node's. */
	CU_ASSERT_EQUAL_FATAL(gpu_spec_json(g, 2, NULL, &mine, &all, &err), 0);
	CU_ASSERT_PTR_NULL(mine);
	CU_ASSERT_EQUAL(json_array_size(all), 2);
	json_decref(all);

	static const struct {
		const char *launch;
		unsigned n;
		const char *want;
	} bad[] = {
		{ "[2]", 2, "GPU 2: this node has only 2 GPUs" },
		{ "[0]", 0, "GPU 0: this node has 0 GPUs" },
		{ "[0,0]", 2, "GPU 0: given twice" },
		{ "[-1]", 2, "gpus[0]: not a GPU index" },
		{ "[\"0\"]", 2, "gpus[0]: not a GPU index" },
		{ "{}", 2, "gpus: not an array" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		launch = json_loads(bad[i].launch, JSON_DECODE_ANY, NULL);
		mine = all = (json_t *)1;
		CU_ASSERT(gpu_spec_json(g, bad[i].n, launch, &mine, &all, &err) < 0);
		CU_ASSERT_PTR_NULL(mine);
		CU_ASSERT_PTR_NULL(all);
		if (!strstr(err.text, bad[i].want))
			fprintf(stderr, "\n  case %zu: got '%s', want '%s'", i, err.text, bad[i].want);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.text, bad[i].want));
		json_decref(launch);
	}
}

/* Model names: canonical form, refusals, and the short model from vendor
 * and pci.ids names. */
static void test_model(void)
{
	static const struct {
		const char *name, *want;
	} names[] = {
		{ "NVIDIA A100-SXM4-40GB", "a100" },
		{ "GA100 [A100 SXM4 40GB]", "a100" },
		{ "Tesla V100-SXM2-16GB", "v100" },
		{ "GH100 [H100 PCIe]", "h100" },
		{ "NVIDIA GeForce RTX 3090", "rtx3090" },
		{ "AMD Instinct MI250X", "mi250x" },
		{ "Virtio GPU", "" },
	};
	char buf[GPU_MODEL_MAX];
	struct error err = { "" };

	CU_ASSERT_EQUAL(gpu_model_canon("A100", 4, buf, &err), 0);
	CU_ASSERT_STRING_EQUAL(buf, "a100");
	CU_ASSERT_EQUAL(gpu_model_canon("", 0, buf, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "empty"));
	CU_ASSERT_EQUAL(gpu_model_canon("a/b", 3, buf, &err), -EINVAL);
	CU_ASSERT_EQUAL(gpu_model_canon("-a", 2, buf, &err), -EINVAL);
	CU_ASSERT_EQUAL(gpu_model_canon("0123456789012345678901234567890123", 34, buf, &err), -EINVAL);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CU_ASSERT_EQUAL(gpu_model_from_name(names[i].name, buf), names[i].want[0] != '\0');
		if (strcmp(buf, names[i].want))
			fprintf(stderr, "\n  %s: got '%s', want '%s'", names[i].name, buf, names[i].want);
		CU_ASSERT_STRING_EQUAL(buf, names[i].want);
	}
}

/* The node list's GPUs in Slurm's GRES words and as a list of models. */
static void test_gres(void)
{
	json_t *g = json_loads("[{\"model\":\"a100\",\"job\":5},{\"model\":\"v100\"},{\"model\":\"a100\"},"
			       "{\"model\":\"\"}]", 0, NULL);
	char buf[128];

	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	gpu_gres_format(g, false, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "gpu:a100:2,gpu:v100:1,gpu:1");
	gpu_gres_format(g, true, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "gpu:a100:1,gpu:v100:0,gpu:0");
	gpu_models_format(g, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "a100,v100");
	gpu_gres_format(NULL, false, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "");
	json_decref(g);
}

static const struct unit_test gpu_tests[] = {
	{ "gres", test_gres },
	{ "model", test_model },
	{ "round_trip", test_round_trip },
	{ "parse_refuses", test_parse_refuses },
	{ "parse_too_many", test_parse_too_many },
	{ "spec", test_spec },
	{ NULL, NULL },
};

UNIT_SUITE(gpu, gpu_tests);
