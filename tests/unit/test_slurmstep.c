/* SPDX-License-Identifier: MIT */
/* srun's steps (slurm/slurmstep.c) and salloc's and srun's allocation as
 * qsub options (slurmopt_qsub_argv), from tables; Slurm's array variables
 * in any front end's submit request (client/jobsubmit.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobsubmit.h"
#include "slurmopt.h"
#include "slurmstep.h"
#include "unit.h"

static void test_layout(void)
{
	static const struct {
		int slots[4];
		int nnodes;
		int64_t ntasks, ppn;
		int used;
		int ranks[4];
	} cases[] = {
		{ { 2, 2, 2, 2 }, 4, 8, 0, 4, { 2, 2, 2, 2 } },
		{ { 2, 2, 2, 2 }, 4, 3, 0, 2, { 2, 1, 0, 0 } },
		{ { 2, 2, 2, 2 }, 4, 4, 1, 4, { 1, 1, 1, 1 } },
		{ { 2, 2, 2, 2 }, 4, 3, 2, 2, { 2, 1, 0, 0 } },
		{ { 4, 1 }, 2, 5, 0, 2, { 4, 1 } },
		{ { 2, 2 }, 2, 5, 0, -E2BIG, { 0 } },        /* more than the slots */
		{ { 2, 1, 2 }, 3, 4, 2, -E2BIG, { 0 } },     /* node 1 cannot hold 2 */
		{ { 2, 2 }, 2, 0, 0, -EINVAL, { 0 } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ranks[4] = { 0 };
		int r = slurmstep_layout(cases[i].slots, cases[i].nnodes, cases[i].ntasks, cases[i].ppn, ranks);

		CU_ASSERT_EQUAL(r, cases[i].used);
		if (r > 0)
			CU_ASSERT_EQUAL(memcmp(ranks, cases[i].ranks, sizeof(int) * (size_t)cases[i].nnodes), 0);
	}
	{
		int ranks[] = { 2, 1, 3 };

		CU_ASSERT_EQUAL(slurmstep_node_of(ranks, 3, 0), 0);
		CU_ASSERT_EQUAL(slurmstep_node_of(ranks, 3, 1), 0);
		CU_ASSERT_EQUAL(slurmstep_node_of(ranks, 3, 2), 1);
		CU_ASSERT_EQUAL(slurmstep_node_of(ranks, 3, 5), 2);
		CU_ASSERT_EQUAL(slurmstep_node_of(ranks, 3, 6), -1);
		CU_ASSERT_EQUAL(slurmstep_node_of(ranks, 3, -1), -1);
	}
}

/* The words of task t's line, joined with '|'. */
static const char *multiprog_words(const char *text, int64_t t, int *ret)
{
	static char joined[256];
	struct error err;
	char **v = NULL;

	joined[0] = '\0';
	*ret = slurmstep_multiprog_argv(text, t, &v, &err);
	for (size_t i = 0; *ret == 0 && v[i]; i++) {
		strcat(joined, i ? "|" : "");
		strcat(joined, v[i]);
		free(v[i]);
	}
	free(v);
	return joined;
}

static void test_multiprog(void)
{
	const char *conf = "# Slurm's example\n"
			   "4-6       hostname\n"
			   "1,7       echo  task:%t\n"
			   "0,2-3     echo  offset:%o 'a b' \"c'd\"\n"
			   "\n";
	struct error err;
	int r;

	CU_ASSERT_EQUAL(slurmstep_multiprog_check(conf, 8, &err), 0);
	CU_ASSERT_STRING_EQUAL(multiprog_words(conf, 5, &r), "hostname");
	CU_ASSERT_STRING_EQUAL(multiprog_words(conf, 7, &r), "echo|task:7");
	CU_ASSERT_STRING_EQUAL(multiprog_words(conf, 3, &r), "echo|offset:2|a b|c'd");
	CU_ASSERT_STRING_EQUAL(multiprog_words(conf, 0, &r), "echo|offset:0|a b|c'd");
	multiprog_words(conf, 8, &r);
	CU_ASSERT_EQUAL(r, -ENOENT);
	CU_ASSERT_STRING_EQUAL(multiprog_words("* ./a.out %t\n", 12, &r), "./a.out|12");
	/* every task once, none past the last */
	CU_ASSERT_EQUAL(slurmstep_multiprog_check(conf, 9, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "Missing executable entry for task 8");
	CU_ASSERT_EQUAL(slurmstep_multiprog_check(conf, 7, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "past the last task 6"));
	CU_ASSERT_EQUAL(slurmstep_multiprog_check("0-1 a\n1 b\n", 2, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "Duplicate executable entry for task 1");
	CU_ASSERT_EQUAL(slurmstep_multiprog_check("0-1:a\n", 2, &err), -EINVAL);
	CU_ASSERT_EQUAL(slurmstep_multiprog_check("3-1 a\n", 4, &err), -EINVAL);
	CU_ASSERT_EQUAL(slurmstep_multiprog_check("0-1\n", 2, &err), -EINVAL);
	CU_ASSERT_EQUAL(slurmstep_multiprog_check("", 1, &err), -EINVAL);
}

static void test_patterns(void)
{
	struct slurmstep_ids ids = {
		.jobid = "12", .step = 3, .task = 5, .node = 1, .nodename = "n7", .user = "ann", .name = "job",
	};
	char buf[128];
	struct error err;

	CU_ASSERT_EQUAL(slurmstep_path_expand("o-%j-%s-%t-%n-%N-%u-%x-%%.txt", &ids, buf, sizeof(buf), &err), 0);
	CU_ASSERT_STRING_EQUAL(buf, "o-12-3-5-1-n7-ann-job-%.txt");
	CU_ASSERT_EQUAL(slurmstep_path_expand("%J_%3t_%A_%a", &ids, buf, sizeof(buf), &err), 0);
	CU_ASSERT_STRING_EQUAL(buf, "12.3_005_12_4294967294");
	ids.array_job = "10";
	ids.array_task = "2";
	CU_ASSERT_EQUAL(slurmstep_path_expand("%A_%a", &ids, buf, sizeof(buf), &err), 0);
	CU_ASSERT_STRING_EQUAL(buf, "10_2");
	CU_ASSERT_EQUAL(slurmstep_path_expand("%q", &ids, buf, sizeof(buf), &err), -EINVAL);
	CU_ASSERT_EQUAL(slurmstep_path_expand("x%", &ids, buf, sizeof(buf), &err), -EINVAL);
	CU_ASSERT_EQUAL(slurmstep_path_expand("%j%j%j%j", &ids, buf, 6, &err), -ENAMETOOLONG);
	ids.task = -1;
	CU_ASSERT_EQUAL(slurmstep_path_expand("%t", &ids, buf, sizeof(buf), &err), -EINVAL);
	CU_ASSERT_TRUE(slurmstep_path_per_task("log-%4t"));
	CU_ASSERT_FALSE(slurmstep_path_per_task("log-%j"));
	CU_ASSERT_TRUE(slurmstep_path_per_node("log-%N"));
	CU_ASSERT_FALSE(slurmstep_path_per_node("log-%N-%t"));
	CU_ASSERT_FALSE(slurmstep_path_per_node("log-%%N"));
}

/* slurmopt_qsub_argv of an option line, joined with ' '. */
static const char *qsub_words(const char *line, int *ret)
{
	static char joined[512];
	char *copy = strdup(line), *argv[32] = { "srun" }, *save = NULL, **v = NULL;
	struct slurmopt o;
	struct jobspec js;
	struct error err;
	int argc = 1, first;

	slurmopt_init(&o);
	jobspec_init(&js);
	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	joined[0] = '\0';
	*ret = slurmopt_parse(&o, argc, argv, &first, &err);
	if (*ret == 0)
		*ret = slurmopt_qsub_argv(&o, "ann", &js, &v, &err);
	for (size_t i = 0; *ret == 0 && v[i]; i++) {
		strcat(joined, i ? " " : "");
		strcat(joined, v[i]);
		free(v[i]);
	}
	free(v);
	free(copy);
	slurmopt_clear(&o);
	jobspec_clear(&js);
	return joined;
}

static void test_qsub_argv(void)
{
	int r;

	CU_ASSERT_STRING_EQUAL(qsub_words("-J x -p debug -t 10 -n 4", &r),
			       "-N x -q debug -l walltime=600 -l select=4:ncpus=1:mpiprocs=1 -l place=free");
	CU_ASSERT_STRING_EQUAL(qsub_words("-N 2 -n 4 -c 2 --mem=1G -A acct", &r),
			       "-l select=2:ncpus=4:mpiprocs=2:mem=1073741824 -l place=scatter -A acct");
	/* One task of 3 CPUs: one MPI slot (a node file line), as mpiprocs. */
	CU_ASSERT_STRING_EQUAL(qsub_words("-c 3 --mem=2M", &r), "-l ncpus=3 -l mpiprocs=1 -l mem=2097152");
	CU_ASSERT_STRING_EQUAL(qsub_words("-N2 -n4 --exclusive", &r),
			       "-l select=2:ncpus=2:mpiprocs=2 -l place=scatter:excl");
	qsub_words("--time=abc", &r);
	CU_ASSERT_EQUAL(r, -EINVAL);
	/* A reservation is qsub's queue (docs/RESERVATIONS.md). */
	CU_ASSERT_STRING_EQUAL(qsub_words("-c 1 --reservation=R5", &r), "-l ncpus=1 -q R5");
	qsub_words("-p debug --reservation=R5", &r);
	CU_ASSERT_EQUAL(r, -EINVAL);
	qsub_words("--reservation=a,b", &r);
	CU_ASSERT_EQUAL(r, -EINVAL);
}

/* A variable of env, or "(unset)". */
static const char *env_get(json_t *env, const char *name)
{
	const char *v = json_string_value(json_object_get(env, name));

	return v ? v : "(unset)";
}

/* qsub -J 2-8:3 (any front end's array): Slurm's array variables. */
static void test_array_env(void)
{
	static const struct {
		int opt;
		const char *set, *min, *max, *count, *step;
	} cases[] = {
		{ 'J', "2-8:3", "2", "8", "3", "3" },
		{ 't', "1-3,7", "1", "7", "4", "1" },
		{ 't', "5", "5", "5", "1", "1" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jobspec js;
		struct error err;
		json_t *req = json_pack("{s:{s:s}}", "env", "SLURM_ARRAY_TASK_MIN", "stale"), *env;

		jobspec_init(&js);
		CU_ASSERT_EQUAL_FATAL(jobspec_option(&js, cases[i].opt, cases[i].set, &err), 0);
		jobsubmit_request(&js, req);
		env = json_object_get(req, "env");
		CU_ASSERT_STRING_EQUAL(env_get(env, "SLURM_ARRAY_TASK_MIN"), cases[i].min);
		CU_ASSERT_STRING_EQUAL(env_get(env, "SLURM_ARRAY_TASK_MAX"), cases[i].max);
		CU_ASSERT_STRING_EQUAL(env_get(env, "SLURM_ARRAY_TASK_COUNT"),
				       cases[i].count);
		CU_ASSERT_STRING_EQUAL(env_get(env, "SLURM_ARRAY_TASK_STEP"),
				       cases[i].step);
		json_decref(req);
		jobspec_clear(&js);
	}
}

static const struct unit_test slurmstep_tests[] = {
	{ "layout", test_layout },
	{ "multi-prog", test_multiprog },
	{ "step patterns", test_patterns },
	{ "allocation as qsub options", test_qsub_argv },
	{ "array variables of any front end", test_array_env },
	{ NULL, NULL },
};

UNIT_SUITE(slurmstep, slurmstep_tests);
