/* SPDX-License-Identifier: MIT */
/* Slurm's option forms (slurm/slurmopt.c), from tables: times, sizes,
 * options with abbreviations, #SBATCH lines, %-patterns, host lists,
 * tasks per node, and the jobspec qsub would send. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "slurmopt.h"
#include "unit.h"

static void test_time_forms(void)
{
	static const struct {
		const char *s;
		int r;
		int64_t secs;
	} t[] = {
		{ "30", 0, 1800 },              /* M */
		{ "30:15", 0, 1860 },           /* M:S, up to whole minutes */
		{ "0:20", 0, 60 },              /* M:S: 20 s is a minute */
		{ "30:00", 0, 1800 },
		{ "2:30:15", 0, 9060 },         /* H:M:S */
		{ "1-2", 0, 93600 },            /* D-H */
		{ "1-2:30", 0, 95400 },         /* D-H:M */
		{ "1-2:30:15", 0, 95460 },      /* D-H:M:S */
		{ "0-0:0:45", 0, 60 },
		{ "2:30:00", 0, 9000 },
		{ "UNLIMITED", 0, 0 },
		{ "infinite", 0, 0 },
		{ "abc", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
		{ "1:2:3:4", -EINVAL, 0 },
		{ "1-", -EINVAL, 0 },
		{ "-5", -EINVAL, 0 },
		{ "1-2-3", -EINVAL, 0 },
		{ "10m", -EINVAL, 0 },
		{ "1:", -EINVAL, 0 },
		{ "2-0", 0, 172800 },
		{ "0", 0, 0 },
		{ "-1", 0, 0 },                 /* Slurm's INFINITE too */
		{ "1-a", -EINVAL, 0 },
		{ ":5", -EINVAL, 0 },
		{ "1--2", -EINVAL, 0 },
		{ "99999999999", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int64_t secs = -7;
		int r = slurm_time_parse(t[i].s, &secs);

		CU_ASSERT_EQUAL(r, t[i].r);
		if (r != t[i].r)
			fprintf(stderr, "time %s: %d\n", t[i].s, r);
		if (r == 0)
			CU_ASSERT_EQUAL(secs, t[i].secs);
	}
}

static void test_mem_forms(void)
{
	static const struct {
		const char *s;
		int r;
		int64_t bytes;
	} t[] = {
		{ "100", 0, 100LL << 20 },   /* MiB by default, as Slurm */
		{ "4G", 0, 4LL << 30 },
		{ "4gb", 0, 4LL << 30 },
		{ "512K", 0, 512LL << 10 },
		{ "2T", 0, 2LL << 40 },
		{ "0", 0, 0 },
		{ "4Q", -EINVAL, 0 },
		{ "G", -EINVAL, 0 },
		{ "4Gx", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int64_t b = -7;

		CU_ASSERT_EQUAL(slurm_mem_parse(t[i].s, &b), t[i].r);
		if (t[i].r == 0)
			CU_ASSERT_EQUAL(b, t[i].bytes);
	}
}

/* parse "sbatch ARGS..." (split on spaces) into o. */
static int parse_line(struct slurmopt *o, const char *line, struct error *err)
{
	char buf[512], *argv[32], *save = NULL;
	int argc = 0, first;

	snprintf(buf, sizeof(buf), "sbatch %s", line);
	for (char *w = strtok_r(buf, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return slurmopt_parse(o, argc, argv, &first, err);
}

static void test_options(void)
{
	static const struct {
		const char *line, *error;   /* error NULL: accepted */
	} t[] = {
		{ "--job-name=a -t 5 -N 2-4 -n 8 -c 2 --mem=1G", NULL },
		{ "--job-n=a", NULL },                  /* a unique prefix */
		{ "--part=batch", NULL },
		{ "--ntasks-per-n=2", NULL },
		{ "--tasks-per-node=2", NULL },           /* Slurm's alias */
		{ "--n=2", "option '--n' is ambiguous" },
		{ "--bogus", "unrecognized option '--bogus'" },
		{ "-Z", "invalid option -- 'Z'" },
		{ "--time", "option '--time' requires an argument" },
		{ "-t", "option requires an argument -- 't'" },
		{ "--time=abc", "Invalid --time specification" },
		{ "-N 0", "invalid node count `0'" },
		{ "-N 4-2", "invalid node count `4-2'" },
		{ "-n x", "invalid number of tasks (-n x)" },
		{ "--mem=8Q", "invalid memory constraint 8Q" },
		{ "--gres=gpu:2", NULL },
		{ "--gres=gpu:a100:2", NULL },
		{ "--gres=gpu", NULL },
		{ "--gres=gpu:-1", "--gres=gpu:-1: not a number of GPUs" },
		{ "--gres=nvme:1", NULL },
		{ "--gres=nvme:x", "Invalid generic resource (gres) specification: --gres=nvme:x: nvme:x: not a count or a size (e.g. nvme:2, scratch:800G)" },
		{ "--tmp=abc", "Invalid generic resource (gres) specification: --tmp=abc: tmp:abc: not a count or a size (e.g. nvme:2, scratch:800G)" },
		{ "--gres=none", NULL },
		{ "--gpus-per-node=1", NULL },
		{ "--gpus-per-node=x", "--gpus-per-node=x: not a number of GPUs" },
		{ "--gpus=4", NULL },
		{ "--gpus-per-task=1", NULL },
		{ "--gpus-per-socket=1", "--gpus-per-socket=1: not supported by qpool (give --gpus-per-node, --gpus-per-task or --gres=gpu:N)" },
		{ "--gres=gpu:a/b:1", "Invalid generic resource (gres) specification: --gres=gpu:a/b:1 (GPU model a/b: only letters, digits, '_', '-' and '.')" },
		{ "--gres=gpu::1", "Invalid generic resource (gres) specification: --gres=gpu::1" },
		{ "--gpus=a100:-1", "--gpus=a100:-1: not a number of GPUs" },
		{ "--gres=gpu:a100:1 --gpus=v100:1", "Invalid generic resource (gres) specification: --gpus=v100:1 (a job's GPUs are of one type on qpool; a100 given already)" },
		{ "--open-mode=sideways", "Invalid --open-mode argument: sideways. Ignored" },
		{ "--exclusive", NULL },
		{ "--exclusive=user", NULL },
		{ "--qos=high --constraint=ib -H -W --parsable --requeue", NULL },
		/* removed in Slurm 17.11 */
		{ "--workdir=/tmp", "unrecognized option '--workdir=/tmp'" },
		{ "--workdir /tmp", "unrecognized option '--workdir'" },
		{ "--mincpus=4", NULL },
		{ "--mincpus x", "invalid --mincpus argument: x" },
		{ "--mincpus=0", "invalid --mincpus argument: 0" },
		/* a heterogeneous job's components */
		{ "-n 1 : -n 2", "heterogeneous jobs (sbatch ... : ...) are not supported by qpool; "
		  "submit the components as separate jobs" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct slurmopt o;
		struct error err = { "" };
		int r;

		slurmopt_init(&o);
		r = parse_line(&o, t[i].line, &err);
		if (t[i].error) {
			CU_ASSERT_EQUAL(r, -EINVAL);
			CU_ASSERT_STRING_EQUAL(err.text, t[i].error);
		} else {
			CU_ASSERT_EQUAL(r, 0);
		}
		if ((r == 0) != (t[i].error == NULL) || (t[i].error && strcmp(err.text, t[i].error)))
			fprintf(stderr, "%s: %d %s\n", t[i].line, r, err.text);
		slurmopt_clear(&o);
	}
}

static void test_option_values(void)
{
	struct slurmopt o;
	struct error err;

	slurmopt_init(&o);
	CU_ASSERT_EQUAL_FATAL(parse_line(&o, "--job-n=x -t 1-0 -N 2-4 --ntasks-per-node=3 -c 2 "
					 "--mem-per-cpu=500 --qos=high -p a,b", &err), 0);
	CU_ASSERT_STRING_EQUAL(o.job_name, "x");
	CU_ASSERT_EQUAL(o.time, 86400);
	CU_ASSERT_EQUAL(o.nodes_min, 2);
	CU_ASSERT_EQUAL(o.nodes_max, 4);
	CU_ASSERT_EQUAL(o.ntasks_per_node, 3);
	CU_ASSERT_EQUAL(o.cpus_per_task, 2);
	CU_ASSERT_EQUAL(o.mem_per_cpu, 500LL << 20);
	CU_ASSERT_STRING_EQUAL(o.partition, "a,b");
	/* --qos is qpoold's to check (docs/QOS.md): no warning. */
	CU_ASSERT_STRING_EQUAL(o.qos, "high");
	CU_ASSERT_EQUAL(o.n_warnings, 0);
	/* A later option wins. */
	CU_ASSERT_EQUAL(parse_line(&o, "--time=5", &err), 0);
	CU_ASSERT_EQUAL(o.time, 300);
	slurmopt_clear(&o);
	/* The same unenforced option twice (a real script's two "--hint"
	 * lines): one warning; another value, its own. -C is enforced: the
	 * later wins, no warning. */
	CU_ASSERT_EQUAL_FATAL(parse_line(&o, "-C gpu --hint=nomultithread --hint=nomultithread -C cpu --hint=X", &err),
			      0);
	CU_ASSERT_EQUAL(o.n_warnings, 2);
	CU_ASSERT_STRING_EQUAL(o.constraint, "cpu");
	slurmopt_clear(&o);
	/* -L is enforced (qpoold counts [licenses]): kept as given, checked. */
	CU_ASSERT_EQUAL_FATAL(parse_line(&o, "-L SCRATCH -L matlab:2,comsol", &err), 0);
	CU_ASSERT_EQUAL(o.n_warnings, 0);
	CU_ASSERT_STRING_EQUAL(o.licenses, "matlab:2,comsol");
	slurmopt_clear(&o);
	/* A gres other than gpu and --tmp: node resources (MB without a unit). */
	CU_ASSERT_EQUAL_FATAL(parse_line(&o, "--gres=gpu:1,nvme:2 --tmp=100 --gres=scratch", &err), 0);
	CU_ASSERT_STRING_EQUAL(o.node_res, "nvme:2,tmp:100M,scratch:1");
	CU_ASSERT_EQUAL(o.gpus_per_node, 1);
	slurmopt_clear(&o);
	CU_ASSERT_EQUAL_FATAL(parse_line(&o, "-L matlab:2,comsol", &err), 0);
	{
		/* salloc and srun outside a job: one -l per license for qsub,
		 * whose -l splits at commas. */
		struct jobspec js;
		char **argv = NULL, joined[512] = "";

		jobspec_init(&js);
		CU_ASSERT_EQUAL_FATAL(slurmopt_qsub_argv(&o, "u", &js, &argv, &err), 0);
		for (char **a = argv; a && *a; a++)
			snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s ", *a);
		CU_ASSERT_PTR_NOT_NULL(strstr(joined, "-l licenses=matlab:2 -l licenses=comsol "));
		for (char **a = argv; a && *a; a++)
			free(*a);
		free(argv);
		jobspec_clear(&js);
	}
	slurmopt_clear(&o);
	{
		static const char *const bad[] = { "-L matlab:-1", "-L matlab:0", "-L matlab@flex:1", "-L a|b",
						   "-L matlab:", "-L ,", "-L matlab:2x" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			CU_ASSERT_EQUAL(parse_line(&o, bad[i], &err), -EINVAL);
			CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "Invalid license specification"));
			slurmopt_clear(&o);
		}
	}
	/* -w, -x, -C kept as given; malformed ones refused in Slurm's words. */
	CU_ASSERT_EQUAL_FATAL(parse_line(&o, "-w n[1-2] -x n3 -C ib&bigmem", &err), 0);
	CU_ASSERT_EQUAL(o.n_warnings, 0);
	CU_ASSERT_STRING_EQUAL(o.nodelist, "n[1-2]");
	CU_ASSERT_STRING_EQUAL(o.exclude, "n3");
	CU_ASSERT_STRING_EQUAL(o.constraint, "ib&bigmem");
	slurmopt_clear(&o);
	CU_ASSERT_EQUAL(parse_line(&o, "-C ib*2", &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "Invalid feature specification"));
	slurmopt_clear(&o);
	CU_ASSERT_EQUAL(parse_line(&o, "-w n[3-1]", &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "Invalid node name specified"));
	slurmopt_clear(&o);
	slurmopt_init(&o);
	CU_ASSERT_EQUAL(parse_line(&o, "--mem-per-gpu=abc", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "invalid memory constraint abc");
	slurmopt_clear(&o);
}

/* A warning names the option given, in each of its forms, whatever
 * option has the same code. */
static void test_warning_names(void)
{
	static const struct {
		const char *line, *warning;
	} t[] = {
		{ "--comment hello", "--comment=hello: not enforced by qpool (ignored)" },
		{ "--comment=hello", "--comment=hello: not enforced by qpool (ignored)" },
		{ "--comm hello", "--comment=hello: not enforced by qpool (ignored)" },
		{ "--time-min 10", "--time-min=10: not enforced by qpool (ignored)" },
		{ "--wckey=w", "--wckey=w: not enforced by qpool (ignored)" },
		{ "--hint nomultithread", "--hint=nomultithread: not enforced by qpool (ignored)" },
		{ "--contiguous", "--contiguous: not enforced by qpool (ignored)" },
		{ "-M c1", "--clusters=c1: not enforced by qpool (ignored)" },
		{ "-Mc1", "--clusters=c1: not enforced by qpool (ignored)" },
		{ "--clusters c1", "--clusters=c1: not enforced by qpool (ignored)" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct slurmopt o;
		struct error err = { "" };

		slurmopt_init(&o);
		CU_ASSERT_EQUAL(parse_line(&o, t[i].line, &err), 0);
		CU_ASSERT_EQUAL(o.n_warnings, 1);
		if (o.n_warnings == 1) {
			CU_ASSERT_STRING_EQUAL(o.warnings[0], t[i].warning);
			if (strcmp(o.warnings[0], t[i].warning))
				fprintf(stderr, "%s: '%s'\n", t[i].line, o.warnings[0]);
		}
		slurmopt_clear(&o);
	}
}

static void test_script_lines(void)
{
	static const char script[] =
		"#!/bin/bash\n"
		"#SBATCH --job-name=\"my job\" -N 2\n"
		"# a comment\n"
		"\n"
		"#SBATCH --time=10  # minutes\n"
		"#SBATCH--mem=1G\n"               /* no blank after the word, as Slurm reads it */
		"#SBATCH\t-p a\n"
		"# SBATCH --nor-this\n"
		"echo hi\n"
		"#SBATCH --after-the-first-command\n";
	const char *want[] = { "sbatch", "--job-name=my job", "-N", "2", "--time=10", "--mem=1G", "-p", "a" };
	char **argv = NULL;
	int n = slurmopt_script_argv(script, strlen(script), &argv);

	CU_ASSERT_EQUAL_FATAL(n, 8);
	for (int i = 0; i < n; i++) {
		CU_ASSERT_STRING_EQUAL(argv[i], want[i]);
		free(argv[i]);
	}
	CU_ASSERT_PTR_NULL(argv[n]);
	free(argv);
	/* sbatch reads every word after the magic word: "X" is a word,
	 * which sbatch then refuses as an invalid directive. */
	n = slurmopt_script_argv("#!/bin/sh\n#SBATCHX --y\n", 21, &argv);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_STRING_EQUAL(argv[1], "X");
	for (int i = 0; i < n; i++)
		free(argv[i]);
	free(argv);
}

static void test_path_patterns(void)
{
	static const struct {
		const char *pat, *want;
		int r;
		bool warned;
	} t[] = {
		{ "slurm-%j.out", "slurm-^job_id^.out", 0, false },
		{ "job.%J.out", "job.^job_id^.out", 0, false },
		{ "%x-%A_%a.log", "job-^array_id^_^array_index^.log", 0, false },
		{ "/home/%u/%x.%N.%%", "/home/alice/job.^node^.%", 0, false },
		{ "o-%4a", "o-^array_index^", 0, true },
		{ "bad-%q", NULL, -EINVAL, false },
		{ "end%", NULL, -EINVAL, false },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char buf[256];
		bool warned = false;
		struct error err;
		int r = slurm_path_expand(t[i].pat, "job", "alice", true, buf, sizeof(buf), &warned, &err);

		CU_ASSERT_EQUAL(r, t[i].r);
		if (r == 0) {
			CU_ASSERT_STRING_EQUAL(buf, t[i].want);
			CU_ASSERT_EQUAL(warned, t[i].warned);
		}
	}
}

/* %a of a job that is not an array: Slurm's NO_VAL. */
static void test_path_pattern_plain(void)
{
	char buf[64];
	bool warned;
	struct error err;

	CU_ASSERT_EQUAL(slurm_path_expand("o_%A_%a", "j", "u", false, buf, sizeof(buf), &warned, &err), 0);
	CU_ASSERT_STRING_EQUAL(buf, "o_^array_id^_4294967294");
}

static void test_hostlist(void)
{
	static const struct {
		const char *names[8];
		const char *want;
	} t[] = {
		{ { "n1", "n2", "n3", "n5" }, "n[1-3,5]" },
		{ { "n1" }, "n1" },
		{ { "login" }, "login" },
		{ { "n01", "n02", "n03" }, "n[01-03]" },
		{ { "n9", "n10", "n11" }, "n[9-11]" },   /* unpadded: one run, as Slurm */
		{ { "n09", "n10" }, "n09,n10" },        /* padded and not: two */
		{ { "n2", "n1", "n3" }, "n[2,1,3]" },     /* the job's order kept */
		{ { "a1", "a2", "b7", "login", "c3" }, "a[1-2],b7,login,c3" },
		{ { "sn1", "sn2" }, "sn[1-2]" },
		{ { "n1", "n3", "n5" }, "n[1,3,5]" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t n = 0;
		char buf[128];
		int len;

		while (n < 8 && t[i].names[n])
			n++;
		len = hostlist_compress_ordered(t[i].names, n, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, t[i].want);
		CU_ASSERT_EQUAL(len, (int)strlen(t[i].want));
		/* Measuring first, as callers do. */
		CU_ASSERT_EQUAL(hostlist_compress_ordered(t[i].names, n, NULL, 0), len);
	}
	/* Truncated, NUL-terminated, the full length returned. */
	{
		const char *names[] = { "n1", "n2", "n4" };
		char small[4];

		CU_ASSERT_EQUAL(hostlist_compress_ordered(names, 3, small, sizeof(small)), 8);
		CU_ASSERT_STRING_EQUAL(small, "n[1");
	}
}

static void test_tasks_per_node(void)
{
	static const struct {
		uint64_t c[6];
		size_t n;
		const char *want;
	} t[] = {
		{ { 2, 2, 2, 2 }, 4, "2(x4)" },
		{ { 1 }, 1, "1" },
		{ { 3, 3, 2 }, 3, "3(x2),2" },
		{ { 1, 2, 1 }, 3, "1,2,1" },
		{ { 4, 4, 1, 1, 1 }, 5, "4(x2),1(x3)" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char buf[64];

		CU_ASSERT_EQUAL(hostlist_counts_format(t[i].c, t[i].n, buf, sizeof(buf)),
				(int)strlen(t[i].want));
		CU_ASSERT_STRING_EQUAL(buf, t[i].want);
	}
}

/* Slurm's GPU options into GPUs per node (docs/GPUS.md): --gpus=G over
 * N nodes is G/N each. */
static void test_jobspec_gpus(void)
{
	static const struct {
		const char *line;
		int64_t ngpus, chunk0_ngpus;
		size_t n_chunks;
		const char *error, *model;
	} t[] = {
		{ "--gres=gpu:2", 2, 0, 0, NULL, NULL },
		{ "--gres=gpu:v100:1 -c 4", 1, 0, 0, NULL, "v100" },
		{ "--gpus-per-node=2 -N 2", 4, 2, 1, NULL, NULL },
		{ "--gpus=4 -N 2", 4, 2, 1, NULL, NULL },
		{ "-G 1", 1, 0, 0, NULL, NULL },
		{ "--gpus=4 -n 4", 4, 1, 1, NULL, NULL },
		{ "--gpus=3 -N 2", 0, 0, 0, "--gpus=3 over 2 nodes: not the same number on each (give --gpus-per-node)", NULL },
		{ "--gpus-per-node=1 -n 4", 0, 0, 0, "--gpus-per-node with --ntasks and no --nodes: give --nodes "
		  "(qpool places tasks, not nodes)", NULL },
		{ "--gpus-per-node=65", 0, 0, 0, "-l ngpus=65: not a number of GPUs (0 to 64 on a node)", NULL },
		/* Slurm's --gpus-per-node=[type:]N, as a real script writes it */
		{ "--gpus-per-node=p100:4 -N 1", 4, 0, 0, NULL, "p100" },
		{ "--gpus-per-node=a100:1 -N 2", 2, 1, 1, NULL, "a100" },
		/* the type is the GPUs' model (docs/GPUS.md) */
		{ "--gres=gpu:A100:2", 2, 0, 0, NULL, "a100" },
		{ "--gpus=v100:2", 2, 0, 0, NULL, "v100" },
		{ "--gpus-per-task=a100:1 -n 2 -N 1", 2, 0, 0, NULL, "a100" },
		{ "--gpus-per-task=1 -n 3 -N 2", 3, 2, 2, NULL, NULL },
		{ "--gpus-per-task=2 -n 2", 4, 2, 1, NULL, NULL },
		/* two counts: they stand together when they agree, else refused */
		{ "--gpus=4 --gpus-per-node=2 -N 2", 4, 2, 1, NULL, NULL },
		{ "--gpus=4 --gpus-per-node=1 -N 2", 0, 0, 0, "--gpus=4 and --gpus-per-node=1 over 2 nodes disagree "
		  "(give one of them)", NULL },
		{ "--gpus=4 --gpus-per-task=1 -n 4", 4, 1, 1, NULL, NULL },
		{ "--gpus=2 --gpus-per-task=1 -n 4", 0, 0, 0, "--gpus-per-task=1 for 4 tasks and --gpus=2 disagree "
		  "(give one of them)", NULL },
		{ "--gpus-per-node=2 --gpus-per-task=1 -n 4 -N 2", 4, 2, 1, NULL, NULL },
		{ "--gpus-per-node=1 --gpus-per-task=2 -n 2 -N 1", 0, 0, 0, "--gpus-per-task=2 for 2 tasks and "
		  "--gpus-per-node=1 disagree (give one of them)", NULL },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct slurmopt o;
		struct jobspec js;
		struct error err = { "" };
		int r;

		slurmopt_init(&o);
		jobspec_init(&js);
		CU_ASSERT_EQUAL_FATAL(parse_line(&o, t[i].line, &err), 0);
		r = slurmopt_jobspec(&o, "alice", &js, &err);
		if (t[i].error) {
			CU_ASSERT_EQUAL(r, -EINVAL);
			CU_ASSERT_STRING_EQUAL(err.text, t[i].error);
		} else {
			CU_ASSERT_EQUAL(r, 0);
			CU_ASSERT_EQUAL(js.ngpus, t[i].ngpus);
			CU_ASSERT_EQUAL(js.n_chunks, t[i].n_chunks);
			if (js.n_chunks && t[i].n_chunks)
				CU_ASSERT_EQUAL(js.chunks[0].ngpus, t[i].chunk0_ngpus);
			CU_ASSERT_STRING_EQUAL(js.gpu_model ? js.gpu_model : "", t[i].model ? t[i].model : "");
			if (js.ngpus != t[i].ngpus)
				fprintf(stderr, "\n  %s: ngpus %lld", t[i].line, (long long)js.ngpus);
		}
		jobspec_clear(&js);
		slurmopt_clear(&o);
	}
}

/* --mem=0 (and --mem-per-cpu=0): a whole node's memory, which qpoold
 * counts; any other size is plain mem. */
static void test_jobspec_mem_node(void)
{
	static const struct {
		const char *line;
		int mem_node;
		int64_t mem;
	} t[] = {
		{ "--mem=0", 1, -1 },
		{ "--mem-per-cpu=0", 1, -1 },
		{ "-N 2 --mem=0", 1, -1 },
		{ "--mem=2G", -1, 2LL << 30 },
		{ "-c 2", -1, -1 },
		{ "--mem-per-gpu=0 --gpus=1", 1, -1 },
		/* --mem-per-gpu: per GPU the job has on the node */
		{ "--mem-per-gpu=3G --gpus=2", -1, 6LL << 30 },
		{ "--mem-per-gpu=3G --gres=gpu:4", -1, 12LL << 30 },
		{ "--mem-per-gpu=1G --gpus-per-node=1 -N 1", -1, 1LL << 30 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct slurmopt o;
		struct jobspec js;
		struct error err = { "" };

		slurmopt_init(&o);
		jobspec_init(&js);
		CU_ASSERT_EQUAL_FATAL(parse_line(&o, t[i].line, &err), 0);
		CU_ASSERT_EQUAL_FATAL(slurmopt_jobspec(&o, "alice", &js, &err), 0);
		CU_ASSERT_EQUAL(js.mem_node, t[i].mem_node);
		if (!js.n_chunks)
			CU_ASSERT_EQUAL(js.mem, t[i].mem);
		/* Nothing says it is not enforced: it is. */
		for (size_t w = 0; w < js.n_warnings; w++)
			CU_ASSERT_PTR_NULL(strstr(js.warnings[w], "mem=0"));
		jobspec_clear(&js);
		slurmopt_clear(&o);
	}
}

/* What qsub would have sent for a Slurm request. */
static void test_jobspec(void)
{
	static const struct {
		const char *line;
		int64_t ncpus, walltime;
		size_t n_chunks;
		int64_t chunk0_count, chunk0_ncpus, chunk0_mpiprocs;
		const char *array, *depend, *error;
	} t[] = {
		{ "-c 4 -t 10", 4, 600, 0, 0, 0, 0, NULL, NULL, NULL },
		{ "-t 0:20", 1, 60, 0, 0, 0, 0, NULL, NULL, NULL },      /* Slurm's whole minutes */
		/* --mincpus: a node with that many, and the job gets them */
		{ "--mincpus 4", 4, -1, 0, 0, 0, 0, NULL, NULL, NULL },
		{ "--mincpus 2 -c 3", 3, -1, 0, 0, 0, 0, NULL, NULL, NULL },
		{ "-N 2 --mincpus=3", 6, -1, 1, 2, 3, 1, NULL, NULL, NULL },
		{ "-n 2 --mincpus=3", 0, 0, 0, 0, 0, 0, NULL, NULL,
		  "--mincpus with --ntasks and no --nodes: give --nodes (qpool places tasks, not nodes)" },
		{ "-N 1 -n 3", 3, -1, 0, 0, 0, 0, NULL, NULL, NULL },
		{ "-N 2 --ntasks-per-node=2 -c 3", 12, -1, 1, 2, 6, 2, NULL, NULL, NULL },
		{ "-N 2 -n 5", 5, -1, 2, 1, 3, 3, NULL, NULL, NULL },   /* 3 + 2 */
		{ "-n 4", 4, -1, 1, 4, 1, 1, NULL, NULL, NULL },        /* spread as room is found */
		{ "-n 4 --ntasks-per-node=2", 4, -1, 1, 2, 2, 2, NULL, NULL, NULL },
		{ "--array=1-4%2", 1, -1, 0, 0, 0, 0, "1-4%2", NULL, NULL },
		{ "-a 0,6,16-32:4", 1, -1, 0, 0, 0, 0, "0,6,16-32:4", NULL, NULL },
		{ "-d afterok:12:13,afterany:14", 1, -1, 0, 0, 0, 0, NULL, "afterok:12:13,afterany:14", NULL },
		{ "-d 12", 1, -1, 0, 0, 0, 0, NULL, "afterany:12", NULL },
		{ "-d singleton", 1, -1, 0, 0, 0, 0, NULL, NULL, NULL },
		{ "-d aftercorr:12", 0, 0, 0, 0, 0, 0, NULL, NULL,
		  "--dependency=aftercorr:12: aftercorr is not supported by qpool (after, afterok, "
		  "afternotok, afterany, singleton)" },
		{ "-d afterok:x", 0, 0, 0, 0, 0, 0, NULL, NULL, "Invalid dependency specification: afterok:x" },
		{ "--array=4-1", 0, 0, 0, 0, 0, 0, NULL, NULL, "invalid --array specification: 4-1" },
		{ "-N 3 -n 2", 2, -1, 1, 2, 1, 1, NULL, NULL, NULL },   /* nnodes set to 2, as Slurm */
		{ "--input=in.txt", 0, 0, 0, 0, 0, 0, NULL, NULL, "--input=in.txt: qpool batch jobs read /dev/null" },
		/* sbatch's fatal(), whichever comes first or last */
		{ "--mem=1G --mem-per-cpu=1G", 0, 0, 0, 0, 0, 0, NULL, NULL,
		  "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive." },
		{ "--mem-per-cpu=1G -N 1 --mem=0", 0, 0, 0, 0, 0, 0, NULL, NULL,
		  "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive." },
		{ "--mem-per-gpu=1G --mem=2G", 0, 0, 0, 0, 0, 0, NULL, NULL,
		  "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive." },
		{ "--mem-per-gpu=2G -c 2", 0, 0, 0, 0, 0, 0, NULL, NULL,
		  "--mem-per-gpu=2048M without GPUs: give --gpus, --gpus-per-node, --gpus-per-task or --gres=gpu:N" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct slurmopt o;
		struct jobspec js;
		struct error err = { "" };
		int r;

		slurmopt_init(&o);
		jobspec_init(&js);
		CU_ASSERT_EQUAL_FATAL(parse_line(&o, t[i].line, &err), 0);
		r = slurmopt_jobspec(&o, "alice", &js, &err);
		if (t[i].error) {
			CU_ASSERT_EQUAL(r, -EINVAL);
			CU_ASSERT_STRING_EQUAL(err.text, t[i].error);
		} else {
			CU_ASSERT_EQUAL(r, 0);
			if (r)
				fprintf(stderr, "%s: %s\n", t[i].line, err.text);
			CU_ASSERT_EQUAL(js.ncpus, t[i].ncpus);
			CU_ASSERT_EQUAL(js.walltime, t[i].walltime);
			CU_ASSERT_EQUAL(js.n_chunks, t[i].n_chunks);
			if (js.n_chunks && t[i].n_chunks) {
				CU_ASSERT_EQUAL(js.chunks[0].count, t[i].chunk0_count);
				CU_ASSERT_EQUAL(js.chunks[0].ncpus, t[i].chunk0_ncpus);
				CU_ASSERT_EQUAL(js.chunks[0].mpiprocs, t[i].chunk0_mpiprocs);
			}
			if (t[i].array)
				CU_ASSERT_STRING_EQUAL(js.array ? js.array : "", t[i].array);
			if (t[i].depend) {
				CU_ASSERT_STRING_EQUAL(js.depend ? js.depend : "", t[i].depend);
			} else {
				CU_ASSERT_PTR_NULL(js.depend);
			}
			/* Slurm joins standard error into the output without -e. */
			CU_ASSERT_EQUAL(js.join, 1);
		}
		jobspec_clear(&js);
		slurmopt_clear(&o);
	}
}

/* --qos and -q: PBS's -l qos=NAME (docs/QOS.md), which qpoold checks;
 * no warning any more. */
static void test_qos(void)
{
	static const char *const lines[] = { "--qos high", "--qos=high", "-qhigh", "-q high" };

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct slurmopt o;
		struct jobspec js;
		struct error err = { "" };

		slurmopt_init(&o);
		jobspec_init(&js);
		CU_ASSERT_EQUAL_FATAL(parse_line(&o, lines[i], &err), 0);
		CU_ASSERT_EQUAL(o.n_warnings, 0);
		CU_ASSERT_EQUAL(slurmopt_jobspec(&o, "alice", &js, &err), 0);
		CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Resource_List.qos") ?: "", "high");
		jobspec_clear(&js);
		slurmopt_clear(&o);
	}
}

/* --mem-per-gpu with --gpus-per-task: memory for each task's GPUs (it was
 * refused as "without GPUs"). */
static void test_mem_per_gpu_task(void)
{
	struct slurmopt o;
	struct jobspec js;
	struct error err = { "" };
	char one[] = "--gpus-per-task=1 --mem-per-gpu=2G -N 1 -n 2";
	char spread[] = "--gpus-per-task=1 --mem-per-gpu=2G -n 2";

	slurmopt_init(&o);
	jobspec_init(&js);
	CU_ASSERT_EQUAL_FATAL(parse_line(&o, one, &err), 0);
	CU_ASSERT_EQUAL(slurmopt_jobspec(&o, "alice", &js, &err), 0);
	CU_ASSERT_EQUAL(js.ngpus, 2);
	CU_ASSERT_EQUAL(js.mem, 4LL << 30);
	jobspec_clear(&js);
	slurmopt_clear(&o);

	slurmopt_init(&o);
	jobspec_init(&js);
	CU_ASSERT_EQUAL_FATAL(parse_line(&o, spread, &err), 0);
	CU_ASSERT_EQUAL(slurmopt_jobspec(&o, "alice", &js, &err), 0);
	CU_ASSERT_EQUAL_FATAL(js.n_chunks, 1);
	CU_ASSERT_EQUAL(js.chunks[0].count, 2);
	CU_ASSERT_EQUAL(js.chunks[0].mem, 2LL << 30);
	jobspec_clear(&js);
	slurmopt_clear(&o);
}

/* --mail-type: the types qpool mails for become Mail_Points; the others
 * (TIME_LIMIT*, ARRAY_TASKS, STAGE_OUT) a warning each, not a silent drop;
 * so is --time=UNLIMITED. */
static void test_mail_types(void)
{
	static const struct {
		const char *line, *points, *warning;
	} t[] = {
		{ "--mail-type=END,FAIL", "ae", NULL },
		{ "--mail-type=NONE", "n", NULL },
		{ "--mail-type=all", "abe", NULL },
		{ "--mail-type=TIME_LIMIT_90", "n", "--mail-type=TIME_LIMIT_90: not enforced by qpool (mail is sent "
		  "at begin, end and failure only)" },
		{ "--mail-type=END,ARRAY_TASKS", "e", "--mail-type=ARRAY_TASKS: not enforced by qpool (mail is sent "
		  "at begin, end and failure only)" },
		/* not mail, but a limit the job cannot have: said the same way */
		{ "-t UNLIMITED", "", "--time=UNLIMITED: not enforced by qpool (the job gets its queue's default "
		  "walltime; give --time to run longer)" },
		{ "--time=0", "", "--time=UNLIMITED: not enforced by qpool (the job gets its queue's default "
		  "walltime; give --time to run longer)" },
		{ "-t 10", "", NULL },
		/* and tasks that -N's nodes at --ntasks-per-node cannot hold */
		{ "-N 2 -n 8 --ntasks-per-node=2", "", "can't honor --ntasks-per-node set to 2 which doesn't match "
		  "the requested tasks 8 with the number of requested nodes 2. Ignoring --ntasks-per-node." },
		{ "-N 2 -n 3 --ntasks-per-node=2", "", NULL },
		/* --exclusive=user: whole nodes, which is more than it asks */
		{ "--exclusive=user", "", "--exclusive=user: not enforced by qpool as asked (the job gets its nodes "
		  "whole: no other job on them, its user's own neither)" },
		{ "--exclusive", "", NULL },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct slurmopt o;
		struct jobspec js;
		struct error err = { "" };
		char line[128];

		snprintf(line, sizeof(line), "%s", t[i].line);
		slurmopt_init(&o);
		jobspec_init(&js);
		CU_ASSERT_EQUAL_FATAL(parse_line(&o, line, &err), 0);
		CU_ASSERT_EQUAL_FATAL(slurmopt_jobspec(&o, "alice", &js, &err), 0);
		CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Mail_Points") ?: "", t[i].points);
		CU_ASSERT_EQUAL(js.n_warnings, t[i].warning ? 1 : 0);
		if (t[i].warning && js.n_warnings == 1)
			CU_ASSERT_STRING_EQUAL(js.warnings[0], t[i].warning);
		jobspec_clear(&js);
		slurmopt_clear(&o);
	}
}

/* --output and --error naming one file: one stream, as Slurm opens it
 * once; apart, two. */
static void test_same_output(void)
{
	static const struct {
		const char *line;
		int join;
		const char *out, *err;
	} t[] = {
		{ "-o hello-%J.out -e hello-%J.out", 1, "hello-^job_id^.out", NULL },
		{ "--output=/dev/null --error=/dev/null", 1, "/dev/null", NULL },
		{ "-o a.out -e a.err", 0, "a.out", "a.err" },
		{ "-o %x.out -e %x.out -J n", 1, "n.out", NULL },
		{ "-o %x.out -e n.out -J n", 1, "n.out", NULL },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct slurmopt o;
		struct jobspec js;
		struct error err = { "" };

		slurmopt_init(&o);
		jobspec_init(&js);
		CU_ASSERT_EQUAL_FATAL(parse_line(&o, t[i].line, &err), 0);
		CU_ASSERT_EQUAL(slurmopt_jobspec(&o, "alice", &js, &err), 0);
		CU_ASSERT_EQUAL(js.join, t[i].join);
		CU_ASSERT_STRING_EQUAL(js.stdout_path ? js.stdout_path : "-", t[i].out);
		CU_ASSERT_STRING_EQUAL(js.stderr_path ? js.stderr_path : "-", t[i].err ? t[i].err : "-");
		if (js.join != t[i].join)
			fprintf(stderr, "%s: join %d\n", t[i].line, js.join);
		jobspec_clear(&js);
		slurmopt_clear(&o);
	}
}

static void test_env(void)
{
	struct slurmopt o;
	struct error err;
	json_t *env = json_object();

	slurmopt_init(&o);
	CU_ASSERT_EQUAL_FATAL(parse_line(&o, "-n 4 -c 2 --array=3-11:4", &err), 0);
	CU_ASSERT_EQUAL(slurmopt_env(&o, env), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(env, "SLURM_NTASKS")), "4");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(env, "SLURM_CPUS_PER_TASK")), "2");
	/* an array's variables are the submit request's (test_slurmstep) */
	CU_ASSERT_PTR_NULL(json_object_get(env, "SLURM_ARRAY_TASK_MIN"));
	CU_ASSERT_PTR_NULL(json_object_get(env, "SLURM_NTASKS_PER_NODE"));
	json_decref(env);
	slurmopt_clear(&o);
}

static void test_begin(void)
{
	/* 2026-01-10 12:00:00 local time. */
	struct tm tm = { .tm_year = 126, .tm_mon = 0, .tm_mday = 10, .tm_hour = 12, .tm_isdst = -1 };
	time_t now = mktime(&tm), t;

	CU_ASSERT_EQUAL(slurm_when_parse("now+60", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 60);
	CU_ASSERT_EQUAL(slurm_when_parse("now+2hours", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 7200);
	CU_ASSERT_EQUAL(slurm_when_parse("now+1day", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 86400);
	CU_ASSERT_EQUAL(slurm_when_parse("13:30", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 5400);
	/* A time of day already past: tomorrow's. */
	CU_ASSERT_EQUAL(slurm_when_parse("11:00", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 23 * 3600);
	CU_ASSERT_EQUAL(slurm_when_parse("2026-01-11T12:00:00", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 86400);
	CU_ASSERT_EQUAL(slurm_when_parse("2026-01-11", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 12 * 3600);
	CU_ASSERT_EQUAL(slurm_when_parse("tomorrow", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 12 * 3600);
	CU_ASSERT_EQUAL(slurm_when_parse("01/11", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 12 * 3600);
	CU_ASSERT_EQUAL(slurm_when_parse("01/11/26", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 12 * 3600);
	CU_ASSERT_EQUAL(slurm_when_parse("midnight", now, true, &t), 0);
	CU_ASSERT_EQUAL(t, now + 12 * 3600);
	CU_ASSERT_EQUAL(slurm_when_parse("noon", now, true, &t), 0);   /* now: the next one */
	CU_ASSERT_EQUAL(t, now + 24 * 3600);
	CU_ASSERT_EQUAL(slurm_when_parse("now+3parsecs", now, true, &t), -EINVAL);
	CU_ASSERT_EQUAL(slurm_when_parse("25:00", now, true, &t), -EINVAL);
	CU_ASSERT_EQUAL(slurm_when_parse("yesterday", now, true, &t), -EINVAL);
	CU_ASSERT_EQUAL(slurm_when_parse("2026-13-01", now, true, &t), -EINVAL);
}

static const struct unit_test slurmopt_tests[] = {
	{ "time forms", test_time_forms },
	{ "memory forms", test_mem_forms },
	{ "options and abbreviations", test_options },
	{ "warnings name the option given", test_warning_names },
	{ "option values", test_option_values },
	{ "#SBATCH lines", test_script_lines },
	{ "%-patterns", test_path_patterns },
	{ "%a outside an array", test_path_pattern_plain },
	{ "host lists", test_hostlist },
	{ "tasks per node", test_tasks_per_node },
	{ "jobspec", test_jobspec },
	{ "jobspec_mem_node", test_jobspec_mem_node },
	{ "jobspec_gpus", test_jobspec_gpus },
	{ "--output and --error as one file", test_same_output },
	{ "--qos", test_qos },
	{ "--mail-type", test_mail_types },
	{ "--mem-per-gpu with --gpus-per-task", test_mem_per_gpu_task },
	{ "request environment", test_env },
	{ "begin times", test_begin },
	{ NULL, NULL },
};

UNIT_SUITE(slurmopt, slurmopt_tests);
