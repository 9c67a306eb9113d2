/* SPDX-License-Identifier: MIT */
/* srun's options (slurm/srunopt.c), from tables: what each sets, Slurm's
 * words for what is refused, --cpu-bind's warning, --export's filter. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "srunopt.h"
#include "unit.h"

/* srunopt_parse of "srun " line into s (initialised); *ret_first set. */
static int parse_line(struct srunopt *s, char *line, int *ret_first, struct error *err)
{
	static char *argv[32];
	char *save = NULL;
	int argc = 0;

	argv[argc++] = "srun";
	for (char *w = strtok_r(line, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return srunopt_parse(s, argc, argv, ret_first, err);
}

static void test_step_options(void)
{
	char line[] = "-n 4 -N2 -c 3 --ntasks-per-node=2 -l --mpi=pmi2 --multi-prog -o out-%t -e err "
		      "--export=NONE,A -D sub -u --exclusive ./conf extra";
	struct srunopt s;
	struct error err;
	int first = 0;

	srunopt_init(&s);
	CU_ASSERT_EQUAL_FATAL(parse_line(&s, line, &first, &err), 0);
	CU_ASSERT_EQUAL(s.job.ntasks, 4);
	CU_ASSERT_EQUAL(s.job.nodes_min, 2);
	CU_ASSERT_EQUAL(s.job.cpus_per_task, 3);
	CU_ASSERT_EQUAL(s.job.ntasks_per_node, 2);
	CU_ASSERT_EQUAL(s.job.exclusive, 1);
	CU_ASSERT_TRUE(s.label);
	CU_ASSERT_TRUE(s.multi_prog);
	CU_ASSERT_STRING_EQUAL(s.mpi, "pmi2");
	CU_ASSERT_STRING_EQUAL(s.output, "out-%t");
	CU_ASSERT_STRING_EQUAL(s.error, "err");
	CU_ASSERT_STRING_EQUAL(s.export, "NONE,A");
	CU_ASSERT_STRING_EQUAL(s.chdir, "sub");
	CU_ASSERT_EQUAL(first, 19);   /* ./conf: the program's words are left alone */
	CU_ASSERT_EQUAL(s.n_warnings, 0);
	srunopt_clear(&s);
}

static void test_refusals(void)
{
	static const struct {
		const char *line, *text;
	} cases[] = {
		{ "--bogus true", "unrecognized option '--bogus'" },
		{ "-Z true", "invalid option -- 'Z'" },
		{ "--ntasks", "option '--ntasks' requires an argument" },
		{ "-n 0 true", "Invalid number of tasks (-n 0)" },
		{ "-N x true", "\"x\" is not a valid node count" },
		{ "--mpi=openmpi true", "MPI: Cannot create context for openmpi" },
		{ "-t abc true", "Invalid time limit specification" },
		{ "--gpus=1 true", "Invalid generic resource (gres) specification: --gpus=1 (srun asks for no "
				   "GPUs on this pool)" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char line[128];
		struct srunopt s;
		struct error err = { "" };
		int first;

		snprintf(line, sizeof(line), "%s", cases[i].line);
		srunopt_init(&s);
		CU_ASSERT_EQUAL(parse_line(&s, line, &first, &err), -EINVAL);
		CU_ASSERT_STRING_EQUAL(err.text, cases[i].text);
		srunopt_clear(&s);
	}
}

static void test_accepted(void)
{
	char line[] = "--cpu-bind=cores --cpu-bind=q,v --het-group=1 --lab --kill-on-bad-exit --overlap --exact true";
	struct srunopt s;
	struct error err;
	int first;

	srunopt_init(&s);
	CU_ASSERT_EQUAL_FATAL(parse_line(&s, line, &first, &err), 0);
	CU_ASSERT_EQUAL_FATAL(s.n_warnings, 1);   /* cores binds; q,v do not */
	CU_ASSERT_PTR_NOT_NULL(strstr(s.warnings[0], "--cpu-bind=cores: not enforced by qpool"));
	CU_ASSERT_TRUE(s.het);
	CU_ASSERT_TRUE(s.label);   /* --lab: a unique prefix */
	CU_ASSERT_EQUAL(s.job.exclusive, 1);   /* --exact: a step's own CPUs, as --exclusive */
	CU_ASSERT_EQUAL(srunopt_mpi_set(&s, "pmix_v4", &err), 0);
	CU_ASSERT_STRING_EQUAL(srunopt_qexec_mpi(s.mpi), "all");
	srunopt_clear(&s);
	CU_ASSERT_STRING_EQUAL(srunopt_qexec_mpi(NULL), "all");
	CU_ASSERT_STRING_EQUAL(srunopt_qexec_mpi("pmi2"), "pmi");
	CU_ASSERT_STRING_EQUAL(srunopt_qexec_mpi("none"), "none");
}

/* What srun accepts and qpool does not do: a warning each, never a
 * silent drop; what it does (-K, --overlap, -u, -m block) says nothing.
 * -w, -x, -C are kept for srun to judge (refused outside a job). */
static void test_not_enforced(void)
{
	static const struct {
		const char *line, *warning;
	} t[] = {
		{ "-K --overlap -u -m block -m block:cyclic --distribution=* true", NULL },
		{ "-m cyclic true", "--distribution=cyclic: not enforced by qpool (tasks are dealt out in blocks, "
		  "node after node)" },
		{ "--kill-on-bad-exit=0 true", "--kill-on-bad-exit=0: not enforced by qpool (a failing task ends the "
		  "step)" },
		{ "-I true", "--immediate: not enforced by qpool (srun waits for the job or its step)" },
		{ "-O true", "--overcommit: not enforced by qpool (a task takes one of the job's slots)" },
		{ "-W 30 true", "--wait=30: not enforced by qpool (a failing task ends the step at once)" },
		{ "--hint=nomultithread true", "--hint=nomultithread: not enforced by qpool (ignored)" },
		{ "--signal=USR1@60 true", "--signal=USR1@60: not enforced by qpool (ignored)" },
		{ "--nice true", "--nice: not enforced by qpool (ignored)" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char line[128];
		struct srunopt s;
		struct error err = { "" };
		int first;

		snprintf(line, sizeof(line), "%s", t[i].line);
		srunopt_init(&s);
		CU_ASSERT_EQUAL_FATAL(parse_line(&s, line, &first, &err), 0);
		CU_ASSERT_EQUAL(s.n_warnings, t[i].warning ? 1 : 0);
		if (t[i].warning && s.n_warnings == 1)
			CU_ASSERT_STRING_EQUAL(s.warnings[0], t[i].warning);
		if (!t[i].warning && s.n_warnings)
			fprintf(stderr, "%s: '%s'\n", t[i].line, s.warnings[0]);
		srunopt_clear(&s);
	}
	{
		char line[] = "-w n[1-2] -x n3 -C ib true";
		struct srunopt s;
		struct error err = { "" };
		int first;

		srunopt_init(&s);
		CU_ASSERT_EQUAL_FATAL(parse_line(&s, line, &first, &err), 0);
		CU_ASSERT_STRING_EQUAL(s.job.nodelist ?: "", "n[1-2]");
		CU_ASSERT_STRING_EQUAL(s.job.exclude ?: "", "n3");
		CU_ASSERT_STRING_EQUAL(s.job.constraint ?: "", "ib");
		srunopt_clear(&s);
	}
}

static void test_export(void)
{
	CU_ASSERT_TRUE(srunopt_export_keeps("ALL", "HOME=/h"));
	CU_ASSERT_TRUE(srunopt_export_keeps("A,ALL", "HOME=/h"));
	CU_ASSERT_FALSE(srunopt_export_keeps("NONE", "HOME=/h"));
	CU_ASSERT_TRUE(srunopt_export_keeps("NONE", "SLURM_JOB_ID=3"));
	CU_ASSERT_TRUE(srunopt_export_keeps("NONE", "PMIX_RANK=0"));
	CU_ASSERT_TRUE(srunopt_export_keeps("NONE", "OMPI_MCA_pmix=^flux"));
	CU_ASSERT_TRUE(srunopt_export_keeps("NONE,HOME", "HOME=/h"));
	CU_ASSERT_TRUE(srunopt_export_keeps("HOME", "HOME=/h"));
	CU_ASSERT_FALSE(srunopt_export_keeps("HOME", "HOMER=x"));
	CU_ASSERT_FALSE(srunopt_export_keeps("HOME=/x", "HOME=/h"));   /* set by the caller */
}

/* --pty: taken, and the program's own options (bash -i, -l) are left to
 * it, as Slurm's srun leaves them. */
static void test_pty(void)
{
	char line[] = "-p short -N1 -n1 -c4 --mem=8G -t 1:00:00 --pty bash -i";
	struct srunopt s;
	struct error err = { "" };
	int first = 0;

	srunopt_init(&s);
	CU_ASSERT_EQUAL_FATAL(parse_line(&s, line, &first, &err), 0);
	CU_ASSERT_TRUE(s.pty);
	CU_ASSERT_EQUAL(s.job.cpus_per_task, 4);
	CU_ASSERT_STRING_EQUAL(s.job.partition, "short");
	CU_ASSERT_EQUAL(first, 10);   /* bash */
	CU_ASSERT_FALSE(s.label);    /* -i and -l after the program are its own */
	CU_ASSERT_PTR_NULL(s.input);
	CU_ASSERT_EQUAL(s.n_warnings, 0);
	srunopt_clear(&s);
	{
		char x11[] = "--x11 --pty bash";

		srunopt_init(&s);
		CU_ASSERT_EQUAL_FATAL(parse_line(&s, x11, &first, &err), 0);
		CU_ASSERT_TRUE(s.pty);
		CU_ASSERT_EQUAL_FATAL(s.n_warnings, 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(s.warnings[0], "--x11: X11 forwarding is not done by qpool"));
		CU_ASSERT_EQUAL(first, 3);
		srunopt_clear(&s);
	}
}

static const struct unit_test srunopt_tests[] = {
	{ "step options", test_step_options },
	{ "refusals in Slurm's words", test_refusals },
	{ "accepted, warned", test_accepted },
	{ "not enforced: warned", test_not_enforced },
	{ "--export", test_export },
	{ "--pty", test_pty },
	{ NULL, NULL },
};

UNIT_SUITE(srunopt, srunopt_tests);
