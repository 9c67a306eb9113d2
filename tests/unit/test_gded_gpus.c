/* SPDX-License-Identifier: MIT */
/* gded's GPUs: the spec's gpus and gpus_node, what the fence denies, the job's GPU variables and PBS_GPUFILE. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gded-internal.h"
#include "unit.h"

/* A one-node job given GPU 1 of a node with three (195:0..2). */
static const char *const gpu_spec =
	"{\"jobid\": 12, \"user\": \"ann\", \"uid\": 1001, \"gid\": 100,"
	" \"workdir\": \"/home/ann\", \"stdout\": \"/home/ann/o\", \"stderr\": \"/home/ann/e\","
	" \"script\": \"/q/n1/jobs/12.sh\", \"nodefile\": \"/q/n1/jobs/12.nodes\","
	" \"result\": \"/q/n1/jobs/12.result\", \"node\": \"n1\","
	" \"env\": {\"CUDA_VISIBLE_DEVICES\": \"0,1,2\", \"SLURM_JOB_GPUS\": \"7\", \"FOO\": \"x\"},"
	" \"cgroup\": {\"mode\": \"none\"},"
	" \"gpus\": [{\"index\": 1, \"file\": \"/dev/nvidia1\", \"major\": 195, \"minor\": 1}],"
	" \"gpus_node\": [{\"major\": 195, \"minor\": 0}, {\"major\": 195, \"minor\": 1},"
	"                {\"major\": 195, \"minor\": 2}]}";

static int parse_with(const char *key, const char *value, struct gded_job *job, struct error *err)
{
	json_t *o = json_loads(gpu_spec, 0, NULL);
	int r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	if (key && value) {
		json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);

		CU_ASSERT_PTR_NOT_NULL_FATAL(v);
		json_object_set_new(o, key, v);
	} else if (key) {
		json_object_del(o, key);
	}
	r = gded_spec_parse(o, job, err);
	json_decref(o);
	return r;
}

static const char *env_get(char **env, const char *name)
{
	size_t n = strlen(name);

	for (char **p = env; p && *p; p++)
		if (strncmp(*p, name, n) == 0 && (*p)[n] == '=')
			return *p + n + 1;
	return NULL;
}

static void test_spec_gpus(void)
{
	struct cgroup_dev deny[GDED_GPUS_MAX];
	struct gded_job job;
	struct error err = { { 0 } };

	CU_ASSERT_EQUAL_FATAL(parse_with(NULL, NULL, &job, &err), 0);
	CU_ASSERT_EQUAL_FATAL(job.ngpus, 1);
	CU_ASSERT_EQUAL(job.gpus[0].index, 1);
	CU_ASSERT_STRING_EQUAL(job.gpus[0].file, "/dev/nvidia1");
	CU_ASSERT_EQUAL(job.gpus[0].dev.major, 195);
	CU_ASSERT_EQUAL(job.gpus[0].dev.minor, 1);
	CU_ASSERT_EQUAL_FATAL(job.ngpus_node, 3);
	/* The fence: the node's other two. */
	CU_ASSERT_EQUAL_FATAL(gded_gpus_denied(&job, deny), 2);
	CU_ASSERT(deny[0].major == 195 && deny[0].minor == 0);
	CU_ASSERT(deny[1].major == 195 && deny[1].minor == 2);
	CU_ASSERT(gded_job_has_gpus(&job));
	gded_job_clear(&job);
	CU_ASSERT_PTR_NULL(job.gpus);
	CU_ASSERT_PTR_NULL(job.gpus_node);

	/* No GPU of its own on a GPU node: every GPU denied. */
	CU_ASSERT_EQUAL_FATAL(parse_with("gpus", "[]", &job, &err), 0);
	CU_ASSERT_EQUAL(job.ngpus, 0);
	CU_ASSERT_EQUAL(gded_gpus_denied(&job, deny), 3);
	CU_ASSERT(!gded_job_has_gpus(&job));
	gded_job_clear(&job);
	/* A node without GPUs: no fence at all. */
	{
		json_t *o = json_loads(gpu_spec, 0, NULL);

		json_object_del(o, "gpus");
		json_object_del(o, "gpus_node");
		CU_ASSERT_EQUAL_FATAL(gded_spec_parse(o, &job, &err), 0);
		CU_ASSERT_EQUAL(gded_gpus_denied(&job, deny), 0);
		CU_ASSERT_EQUAL(job.ngpus + job.ngpus_node, 0);
		gded_job_clear(&job);
		json_decref(o);
	}
	/* All the node's GPUs: nothing to deny. */
	CU_ASSERT_EQUAL_FATAL(parse_with("gpus_node", "[{\"major\": 195, \"minor\": 1}]", &job, &err), 0);
	CU_ASSERT_EQUAL(gded_gpus_denied(&job, deny), 0);
	gded_job_clear(&job);
}

static void test_spec_gpus_bad(void)
{
	static const struct {
		const char *key;
		const char *value;
		const char *text;
	} cases[] = {
		{ "gpus", "{\"index\": 0}", "spec: \"gpus\" is not an array" },
		{ "gpus", "[7]", "spec: gpus[0] is not an object" },
		{ "gpus", "[{\"file\": \"/dev/nvidia1\", \"major\": 195, \"minor\": 1}]",
		  "spec: gpus[0]: missing \"index\"" },
		{ "gpus", "[{\"index\": 64, \"file\": \"/dev/nvidia1\", \"major\": 195, \"minor\": 1}]",
		  "spec: gpus[0]: \"index\" 64 is not below 64" },
		{ "gpus", "[{\"index\": -1, \"file\": \"/dev/nvidia1\", \"major\": 195, \"minor\": 1}]",
		  "spec: gpus[0]: \"index\" is not a non-negative integer" },
		{ "gpus", "[{\"index\": 1, \"major\": 195, \"minor\": 1}]", "spec: gpus[0]: missing \"file\"" },
		{ "gpus", "[{\"index\": 1, \"file\": \"/dev/nvidia1\", \"major\": 4096, \"minor\": 1}]",
		  "spec: gpus[0]: device 4096:1 is out of range" },
		{ "gpus", "[{\"index\": 1, \"file\": \"/dev/nvidia1\", \"major\": 195, \"minor\": 1048576}]",
		  "spec: gpus[0]: device 195:1048576 is out of range" },
		{ "gpus", "[{\"index\": 1, \"file\": \"/dev/nvidia1\", \"major\": \"195\", \"minor\": 1}]",
		  "spec: gpus[0]: \"major\" is not a non-negative integer" },
		{ "gpus", "[{\"index\": 3, \"file\": \"/dev/nvidia3\", \"major\": 195, \"minor\": 3}]",
		  "spec: gpus[0]: device 195:3 is not in \"gpus_node\"" },
		{ "gpus", "[{\"index\": 1, \"file\": \"/dev/nvidia1\", \"major\": 195, \"minor\": 1},"
			  " {\"index\": 1, \"file\": \"/dev/nvidia1\", \"major\": 195, \"minor\": 1}]",
		  "spec: gpus[1]: index 1 twice" },
		{ "gpus_node", "\"195:0\"", "spec: \"gpus_node\" is not an array" },
		{ "gpus_node", "[[195, 0]]", "spec: gpus_node[0] is not an object" },
		{ "gpus_node", "[{\"major\": 195, \"minor\": 1}, {\"major\": 195}]",
		  "spec: gpus_node[1]: missing \"minor\"" },
		{ "gpus_node", "[{\"major\": 195, \"minor\": 1}, {\"major\": 99999, \"minor\": 0}]",
		  "spec: gpus_node[1]: device 99999:0 is out of range" },
		{ "gpus_node", NULL, "spec: gpus[0]: device 195:1 is not in \"gpus_node\"" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 1, \"gpus\": 1}]",
		  "spec: alloc[0]: \"gpus\" is not an array" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 1, \"gpus\": [64]}]",
		  "spec: alloc[0]: gpus[0] is not a GPU index below 64" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 1, \"gpus\": [0, \"1\"]}]",
		  "spec: alloc[0]: gpus[1] is not a GPU index below 64" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 1, \"gpus\": [2, 2]}]",
		  "spec: alloc[0]: gpus[1]: index 2 twice" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gded_job job;
		struct error err = { { 0 } };
		int r;

		if (cases[i].value) {
			r = parse_with(cases[i].key, cases[i].value, &job, &err);
		} else {
			json_t *o = json_loads(gpu_spec, 0, NULL);

			json_object_del(o, cases[i].key);
			r = gded_spec_parse(o, &job, &err);
			json_decref(o);
		}
		CU_ASSERT_EQUAL(r, -EINVAL);
		if (!strstr(err.text, cases[i].text)) {
			fprintf(stderr, "gpus case %zu: \"%s\" lacks \"%s\"\n", i, err.text,
				cases[i].text);
			CU_FAIL("error text");
		}
		CU_ASSERT_PTR_NULL(job.gpus);
		CU_ASSERT_PTR_NULL(job.gpus_node);
		CU_ASSERT_PTR_NULL(job.owner);
	}
	/* More than 64 entries. */
	{
		json_t *o = json_loads(gpu_spec, 0, NULL), *many = json_array();
		struct gded_job job;
		struct error err = { { 0 } };

		for (int i = 0; i < 65; i++)
			json_array_append_new(many, json_pack("{s:i, s:i}", "major", 195, "minor", i));
		json_object_set_new(o, "gpus_node", many);
		CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "spec: \"gpus_node\" has more than 64 entries"));
		json_decref(o);
	}
}

static void test_gpu_env(void)
{
	struct gded_job job;
	struct error err = { { 0 } };
	char **env;
	char *text;
	size_t len;

	/* One GPU (node index 1): ordinal 0, the node's index, the file
	 * beside the nodefile; the submitter's values do not pass. */
	CU_ASSERT_EQUAL_FATAL(parse_with(NULL, NULL, &job, &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_STRING_EQUAL(env_get(env, "CUDA_VISIBLE_DEVICES"), "0");
	CU_ASSERT_STRING_EQUAL(env_get(env, "ROCR_VISIBLE_DEVICES"), "0");
	CU_ASSERT_STRING_EQUAL(env_get(env, "GPU_DEVICE_ORDINAL"), "0");
	CU_ASSERT_STRING_EQUAL(env_get(env, "QPOOL_GPUS"), "1");
	CU_ASSERT_STRING_EQUAL(env_get(env, "SLURM_JOB_GPUS"), "1");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_GPUFILE"), "/q/n1/jobs/12.gpus");
	CU_ASSERT_STRING_EQUAL(env_get(env, "FOO"), "x");
	gded_env_free(env);
	CU_ASSERT_EQUAL_FATAL(gded_gpufile_text(&job, &text, &len), 0);
	CU_ASSERT_STRING_EQUAL(text, "n1-gpu1\n");
	CU_ASSERT_EQUAL(len, strlen("n1-gpu1\n"));
	free(text);
	gded_job_clear(&job);

	/* Two GPUs: 0,1 and the node's 2,0 in the spec's order. */
	CU_ASSERT_EQUAL_FATAL(parse_with("gpus",
		"[{\"index\": 2, \"file\": \"/dev/nvidia2\", \"major\": 195, \"minor\": 2},"
		" {\"index\": 0, \"file\": \"/dev/nvidia0\", \"major\": 195, \"minor\": 0}]", &job, &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_STRING_EQUAL(env_get(env, "CUDA_VISIBLE_DEVICES"), "0,1");
	CU_ASSERT_STRING_EQUAL(env_get(env, "QPOOL_GPUS"), "2,0");
	gded_env_free(env);
	CU_ASSERT_EQUAL_FATAL(gded_gpufile_text(&job, &text, &len), 0);
	CU_ASSERT_STRING_EQUAL(text, "n1-gpu0\nn1-gpu2\n");
	free(text);
	gded_job_clear(&job);

	/* A single-node job's nodefile is the node's shared one, elsewhere:
	 * PBS_GPUFILE stays in the jobs directory, beside the result. */
	CU_ASSERT_EQUAL_FATAL(parse_with("nodefile", "\"/q/n1/nodefiles/n1.1\"", &job, &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NODEFILE"), "/q/n1/nodefiles/n1.1");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_GPUFILE"), "/q/n1/jobs/12.gpus");
	gded_env_free(env);
	gded_job_clear(&job);
	CU_ASSERT_EQUAL_FATAL(parse_with("nodefile_shared", "true", &job, &err), 0);
	CU_ASSERT_TRUE(job.nodefile_shared);
	gded_job_clear(&job);
	CU_ASSERT_EQUAL(parse_with("nodefile_shared", "1", &job, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "\"nodefile_shared\" is not a boolean"));

	/* No GPU: none of the variables, not even the submitter's. */
	CU_ASSERT_EQUAL_FATAL(parse_with("gpus", "[]", &job, &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_PTR_NULL(env_get(env, "CUDA_VISIBLE_DEVICES"));
	CU_ASSERT_PTR_NULL(env_get(env, "SLURM_JOB_GPUS"));
	CU_ASSERT_PTR_NULL(env_get(env, "QPOOL_GPUS"));
	CU_ASSERT_PTR_NULL(env_get(env, "PBS_GPUFILE"));
	{
		char path[256];

		CU_ASSERT_EQUAL(gded_gpufile_path(&job, path, sizeof(path)), -ENOENT);
	}
	gded_env_free(env);
	gded_job_clear(&job);
}

/* A job across three nodes, this one the second, with GPU 3 of its node;
 * the first has GPUs 0 and 1, the third none. */
static void test_gpu_env_multi(void)
{
	static const char *const alloc =
		"[{\"node\": \"n0\", \"ncpus\": 2, \"gpus\": [1, 0], \"ngpus\": 2},"
		" {\"node\": \"n1\", \"ncpus\": 1, \"gpus\": [3], \"ngpus\": 1},"
		" {\"node\": \"n2\", \"ncpus\": 1}]";
	json_t *o = json_loads(gpu_spec, 0, NULL);
	struct gded_job job;
	struct error err = { { 0 } };
	char **env, **task, *text;
	json_t *over;
	size_t len;

	json_object_set_new(o, "alloc", json_loads(alloc, 0, NULL));
	json_object_set_new(o, "node_index", json_integer(1));
	json_object_set_new(o, "gpus", json_loads("[{\"index\": 3, \"file\": \"/dev/nvidia3\","
						  " \"major\": 195, \"minor\": 3}]", 0, NULL));
	json_object_set_new(o, "gpus_node", json_loads("[{\"major\": 195, \"minor\": 3},"
						       " {\"major\": 195, \"minor\": 4}]", 0, NULL));
	CU_ASSERT_EQUAL_FATAL(gded_spec_parse(o, &job, &err), 0);
	CU_ASSERT_EQUAL(job.alloc[0].gpus, 3);
	CU_ASSERT_EQUAL(job.alloc[1].gpus, 8);
	CU_ASSERT_EQUAL(job.alloc[2].gpus, 0);
	CU_ASSERT_EQUAL_FATAL(gded_gpufile_text(&job, &text, &len), 0);
	CU_ASSERT_STRING_EQUAL(text, "n0-gpu0\nn0-gpu1\nn1-gpu3\n");
	free(text);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_STRING_EQUAL(env_get(env, "CUDA_VISIBLE_DEVICES"), "0");
	CU_ASSERT_STRING_EQUAL(env_get(env, "QPOOL_GPUS"), "3");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_GPUFILE"), "/q/n1/jobs/12.gpus");
	/* A task qexec or pbsdsh starts here from the first node keeps this
	 * node's GPUs, whatever the first node's environment said. */
	over = json_pack("{s:s, s:s, s:s, s:s}", "CUDA_VISIBLE_DEVICES", "0,1", "QPOOL_GPUS", "0,1",
			 "SLURM_JOB_GPUS", "0,1", "GPU_DEVICE_ORDINAL", "0,1");
	task = gded_env_task(env, over, "2");
	CU_ASSERT_STRING_EQUAL(env_get(task, "CUDA_VISIBLE_DEVICES"), "0");
	CU_ASSERT_STRING_EQUAL(env_get(task, "GPU_DEVICE_ORDINAL"), "0");
	CU_ASSERT_STRING_EQUAL(env_get(task, "QPOOL_GPUS"), "3");
	CU_ASSERT_STRING_EQUAL(env_get(task, "SLURM_JOB_GPUS"), "3");
	gded_env_free(task);
	gded_env_free(env);
	gded_job_clear(&job);
	/* The third node, with none of its own: no device variable, from
	 * the first node's either; the job's GPU file all the same. */
	json_object_set_new(o, "node_index", json_integer(2));
	json_object_set_new(o, "gpus", json_array());
	CU_ASSERT_EQUAL_FATAL(gded_spec_parse(o, &job, &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_PTR_NULL(env_get(env, "CUDA_VISIBLE_DEVICES"));
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_GPUFILE"), "/q/n1/jobs/12.gpus");
	task = gded_env_task(env, over, "2");
	CU_ASSERT_PTR_NULL(env_get(task, "CUDA_VISIBLE_DEVICES"));
	CU_ASSERT_PTR_NULL(env_get(task, "QPOOL_GPUS"));
	gded_env_free(task);
	gded_env_free(env);
	gded_job_clear(&job);
	json_decref(over);
	json_decref(o);
}

static const struct unit_test gded_gpus_tests[] = {
	{ "spec: gpus and gpus_node, what the fence denies", test_spec_gpus },
	{ "spec: bad gpus shapes are refused with the place", test_spec_gpus_bad },
	{ "GPU variables and PBS_GPUFILE of a one-node job", test_gpu_env },
	{ "GPU variables across nodes, in tasks, PBS_GPUFILE", test_gpu_env_multi },
	{ NULL, NULL },
};

UNIT_SUITE(gded_gpus, gded_gpus_tests);
