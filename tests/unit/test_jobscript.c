/* SPDX-License-Identifier: MIT */
/* Table tests for lib/jobscript (qsub options and #QP/#PBS directives) and lib/jobid. */
#include <errno.h>
#include <string.h>

#include "jobid.h"
#include "jobscript.h"
#include "unit.h"

static int parse(const char *text, struct jobspec *js, struct error *err)
{
	jobspec_init(js);
	err->text[0] = '\0';
	return jobscript_parse(text, strlen(text), NULL, js, err);
}

static void test_directives(void)
{
	struct jobspec js;
	struct error err;

	CU_ASSERT_EQUAL(parse("#!/bin/bash\n"
			      "#PBS -N myjob\n"
			      "\n"
			      "# a plain comment\n"
			      "#QP -l ncpus=4,mem=8G\n"
			      "#PBS -l walltime=01:30:00 -q short\n"
			      "#PBS -o out.txt -e /abs/err.txt -j oe -r n\n"
			      "#PBS -h -V\n"
			      "echo hello\n"
			      "#PBS -N ignored\n", &js, &err), 0);
	CU_ASSERT_STRING_EQUAL(js.name, "myjob");
	CU_ASSERT_STRING_EQUAL(js.queue, "short");
	CU_ASSERT_EQUAL(js.ncpus, 4);
	CU_ASSERT_EQUAL(js.mem, 8LL << 30);
	CU_ASSERT_EQUAL(js.walltime, 5400);
	CU_ASSERT_STRING_EQUAL(js.stdout_path, "out.txt");
	CU_ASSERT_STRING_EQUAL(js.stderr_path, "/abs/err.txt");
	CU_ASSERT_EQUAL(js.join, 1);
	CU_ASSERT_EQUAL(js.rerunnable, 0);
	CU_ASSERT_EQUAL(js.hold, 1);
	CU_ASSERT_EQUAL(js.export_all, 1);
	jobspec_clear(&js);
}

/* PBS Pro and Torque forms: what is recorded, what is acted on, what warns. */
static void test_directives_pbs(void)
{
	struct jobspec js;
	struct error err;

	CU_ASSERT_EQUAL(parse("#!/bin/bash -l\n"
			      "#PBS -l select=1:ncpus=4:mpiprocs=4:ompthreads=2:mem=2gb\n"
			      "#PBS -l place=scatter:excl -l pmem=400mb\n"
			      "#PBS -A acct1 -P proj1 -m abe -M me@example.org -p -5\n"
			      "#PBS -S /bin/sh -W group_list=grp -W sandbox=PRIVATE\n"
			      "#PBS -a 202611231830.15 -z -k oe -d /tmp -j eo -c n\n", &js, &err), 0);
	CU_ASSERT_EQUAL(js.ncpus, 4);
	CU_ASSERT_EQUAL(js.mem, 2LL << 30);
	CU_ASSERT_EQUAL(js.ompthreads, 2);
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Resource_List.place"), "scatter:excl");
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Resource_List.mpiprocs"), "4");
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Resource_List.pmem"), "400mb");
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Account_Name"), "acct1");
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "project"), "proj1");
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Mail_Points"), "abe");
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Mail_Users"), "me@example.org");
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "sandbox"), "PRIVATE");
	CU_ASSERT_EQUAL(js.priority, -5);
	CU_ASSERT_EQUAL(js.mail, 1);
	CU_ASSERT_STRING_EQUAL(js.shell, "/bin/sh");
	CU_ASSERT_STRING_EQUAL(js.group, "grp");
	CU_ASSERT_STRING_EQUAL(js.start_after, "202611231830.15");
	CU_ASSERT_EQUAL(js.quiet, 1);
	CU_ASSERT_STRING_EQUAL(js.workdir, "/tmp");
	CU_ASSERT_EQUAL(js.join, 2);
	CU_ASSERT_EQUAL(js.n_chunks, 0);      /* one chunk: plain ncpus */
	CU_ASSERT_EQUAL(js.place, JOBSPEC_PLACE_SCATTER);
	CU_ASSERT_EQUAL(js.excl, 1);
	/* sandbox and -c warn; nothing else does. pmem is recorded, and mem
	 * (given) is what the job holds. */
	CU_ASSERT_EQUAL(js.n_warnings, 2);
	CU_ASSERT_EQUAL(js.pmem, 400LL << 20);
	CU_ASSERT_EQUAL(jobspec_mem(&js), 2LL << 30);
	jobspec_clear(&js);
	/* Torque's pmem is per process: ppn of them on the node. */
	CU_ASSERT_EQUAL(parse("#PBS -l nodes=1:ppn=6\n#PBS -l pmem=100mb\n", &js, &err), 0);
	CU_ASSERT_EQUAL(js.mem, -1);
	CU_ASSERT_EQUAL(jobspec_mem(&js), 600LL << 20);
	CU_ASSERT_EQUAL(js.n_warnings, 0);
	jobspec_clear(&js);
	/* Across nodes, per chunk: its processes (mpiprocs, else ncpus). */
	CU_ASSERT_EQUAL(parse("#PBS -l pmem=1gb -l nodes=2:ppn=2+1:ppn=1\n", &js, &err), 0);
	CU_ASSERT_EQUAL_FATAL(js.n_chunks, 2);
	CU_ASSERT_EQUAL(jobspec_chunk_mem(&js, &js.chunks[0]), 2LL << 30);
	CU_ASSERT_EQUAL(jobspec_chunk_mem(&js, &js.chunks[1]), 1LL << 30);
	CU_ASSERT_EQUAL(jobspec_mem(&js), 5LL << 30);
	jobspec_clear(&js);
	CU_ASSERT_EQUAL(parse("#PBS -l select=2:ncpus=4:mpiprocs=1:mem=3gb+1:ncpus=2 -l pmem=1gb\n", &js, &err), 0);
	CU_ASSERT_EQUAL(jobspec_chunk_mem(&js, &js.chunks[0]), 3LL << 30);
	CU_ASSERT_EQUAL(jobspec_chunk_mem(&js, &js.chunks[1]), 2LL << 30);
	jobspec_clear(&js);
	CU_ASSERT_EQUAL(parse("#PBS -l ncpus=2\n", &js, &err), 0);
	CU_ASSERT_EQUAL(jobspec_mem(&js), -1);
	jobspec_clear(&js);
	/* Torque: nodes=1:ppn=N is N CPUs; -C moves the prefix. */
	CU_ASSERT_EQUAL(parse("#PBS -l nodes=1:ppn=6,walltime=10:00\n", &js, &err), 0);
	CU_ASSERT_EQUAL(js.ncpus, 6);
	CU_ASSERT_EQUAL(js.walltime, 600);
	CU_ASSERT_EQUAL(js.n_warnings, 0);
	jobspec_clear(&js);
	jobspec_init(&js);
	CU_ASSERT_EQUAL(jobscript_parse("#X -N a\n#PBS -N b\n", 17, "#X", &js, &err), 0);
	CU_ASSERT_STRING_EQUAL(js.name, "a");
	jobspec_clear(&js);
	jobspec_init(&js);
	CU_ASSERT_EQUAL(jobscript_parse("#PBS -N b\n", 10, "", &js, &err), 0);
	CU_ASSERT_PTR_NULL(js.name);
	jobspec_clear(&js);
}

static void test_directives_stop(void)
{
	struct jobspec js;
	struct error err;

	/* Nothing set: the defaults stay "unset". */
	CU_ASSERT_EQUAL(parse("echo hi\n#PBS -N late\n", &js, &err), 0);
	CU_ASSERT_PTR_NULL(js.name);
	CU_ASSERT_EQUAL(js.ncpus, -1);
	CU_ASSERT_EQUAL(js.join, -1);
	CU_ASSERT_EQUAL(js.hold, -1);
	jobspec_clear(&js);
	/* "#!" only counts on line 1; a later "#!" line is a comment. */
	CU_ASSERT_EQUAL(parse("#!/bin/sh\n#!x\n#QP -N a\n  x=1\n#QP -N b\n", &js, &err), 0);
	CU_ASSERT_STRING_EQUAL(js.name, "a");
	jobspec_clear(&js);
	/* Not directives: another prefix, an indented one. */
	CU_ASSERT_EQUAL(parse("#PBSX -N a\n#QPX -N b\n  #PBS -N c\n#pbs -N d\n", &js, &err), 0);
	CU_ASSERT_PTR_NULL(js.name);
	jobspec_clear(&js);
	/* Later directives override earlier ones; CRLF line ends are fine. */
	CU_ASSERT_EQUAL(parse("#PBS -N a\r\n#PBS -N b\r\n#PBS -j oe\r\n#PBS -j n\r\n", &js, &err), 0);
	CU_ASSERT_STRING_EQUAL(js.name, "b");
	CU_ASSERT_EQUAL(js.join, 0);
	jobspec_clear(&js);
	/* No newline at the end; empty text. */
	CU_ASSERT_EQUAL(parse("#QP -l ncpus=3", &js, &err), 0);
	CU_ASSERT_EQUAL(js.ncpus, 3);
	jobspec_clear(&js);
	CU_ASSERT_EQUAL(parse("", &js, &err), 0);
	jobspec_clear(&js);
}

static void test_directives_words(void)
{
	static const struct {
		const char *text;
		const char *name;
	} cases[] = {
		{ "#PBS -N \"my job\"\n", "my job" },
		{ "#PBS -N 'it''s'\n", "its" },
		{ "#PBS -N 'say \"hi\"'\n", "say \"hi\"" },
		{ "#PBS -N \"a\\\"b\\\\c\"\n", "a\"b\\c" },
		{ "#PBS -N a\\ b\n", "a b" },
		{ "#PBS -Nattached\n", "attached" },
		{ "#PBS\t-N\ttabs\t\n", "tabs" },
		{ "#PBS -N x # a comment -N y\n", "x" },
		{ "#PBS -N x#y\n", "x#y" },
		{ "#PBS -N '#x'\n", "#x" },
		{ "#QP -hN grouped\n", "grouped" },
		{ "#PBS -N ünïcødé\n", "ünïcødé" },
		/* an option right after the prefix: PBS Pro's pbs_ispbsdir
		 * takes the rest of the line as its options */
		{ "#PBS-N nob\n", "nob" },
		{ "#QP-N nob\n", "nob" },
		{ "#PBSX -N x\n#PBS -N after\n", "after" },   /* not a directive: a comment */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jobspec js;
		struct error err;

		CU_ASSERT_EQUAL(parse(cases[i].text, &js, &err), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(js.name);
		CU_ASSERT_STRING_EQUAL(js.name, cases[i].name);
		jobspec_clear(&js);
	}
}

static void test_directives_errors(void)
{
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
		{ "#!/bin/sh\n#PBS -N a\n#PBS -l mem=12Q\n",
		  "line 3: mem=12Q: not a size (e.g. 512M, 8G)" },
		{ "#PBS -l nodes=0:ppn=4\n", "line 1: -l nodes=0:ppn=4: not a number of nodes" },
		{ "#PBS -l select=2:ncpus=0\n", "line 1: -l select=2:ncpus=0: ncpus=0: not a count" },
		{ "#PBS -l select=2:ncpus=4:ngpus=-1\n", "line 1: -l select=2:ncpus=4:ngpus=-1: ngpus=-1: not a number "
		  "of GPUs (0 to 64 on a node)" },
		{ "#PBS -l nodes=2:ppn=1:gpus=x\n", "line 1: -l nodes=2:ppn=1:gpus=x: gpus=x: not a number of GPUs "
		  "(0 to 64 on a node)" },
		{ "#PBS -l select=2:ncpus=4:mem=lots\n", "line 1: -l select=2:ncpus=4:mem=lots: mem=lots: not a size "
		  "(e.g. 512M, 8G)" },
		{ "#PBS -l select=2:ncpus=4+x\n", "line 1: -l select=2:ncpus=4+x: 'x' is not a number of chunks" },
		{ "#PBS -l select=1000:ncpus=1000000\n", "line 1: -l select=1000:ncpus=1000000: more than 1000000 "
		  "CPUs in all" },
		{ "#PBS -l ngpus=-1\n", "line 1: -l ngpus=-1: not a number of GPUs (0 to 64 on a node)" },
		{ "#PBS -l ngpus=two\n", "line 1: -l ngpus=two: not a number of GPUs (0 to 64 on a node)" },
		{ "#PBS -l naccelerators=65\n", "line 1: -l naccelerators=65: not a number of GPUs (0 to 64 on a node)" },
		{ "#PBS -l walltime=0\n", "line 1: walltime=0: a job needs a time limit above 0 (leave walltime out for the queue's default)" },
		{ "#PBS -W depend=afterok:x\n", "line 1: -W depend=afterok:x: not a job id (N, N.server or N[])" },
		{ "#PBS -l place=round\n", "line 1: -l place=round: 'round' is not scatter, pack, free, excl, shared or exclhost" },
		{ "#PBS -l ncpus=two\n", "line 1: ncpus=two: not a number of CPUs (1 to 1000000)" },
		{ "#PBS -l ncpus=-1\n", "line 1: ncpus=-1: not a number of CPUs (1 to 1000000)" },
		{ "#PBS -l walltime=1:99\n", "line 1: walltime=1:99: not a time (e.g. 01:30:00)" },
		{ "#PBS -l mem=99999999999999999999\n", "line 1: mem=99999999999999999999: size too large" },
		{ "#PBS -l ncpus\n", "line 1: -l ncpus: expected name=value" },
		{ "#PBS -l ncpus=1,\n", "line 1: -l: empty resource (expected ncpus=N,mem=SIZE,walltime=TIME)" },
		{ "\n\n#PBS -x\n", "line 3: unknown option -x" },
		{ "#PBS -J 10-1\n", "line 1: -J 10-1: START must be below END" },
		{ "#PBS -m x\n", "line 1: -m x: expected n, or letters of abe (abort, begin, end)" },
		{ "#PBS -f conf\n", "line 1: unknown option -f" },
		{ "#PBS -N\n", "line 1: option -N needs an argument" },
		{ "#PBS -N \"open\n", "line 1: unterminated \" quote" },
		{ "#PBS name\n", "line 1: unexpected 'name' (a directive holds qsub options)" },
		{ "#PBS --help\n", "line 1: unexpected '--help' (a directive holds qsub options)" },
		{ "#PBS -N a/b\n", "line 1: -N a/b: a job name cannot contain '/'" },
		{ "#PBS -N ''\n", "line 1: -N: empty job name" },
		{ "#PBS -j xy\n", "line 1: -j xy: expected oe (both into the output file), eo (both into the error file) or n" },
		{ "#PBS -r maybe\n", "line 1: -r maybe: expected y or n" },
		{ "#PBS -v 9X\n", "line 1: -v 9X: not a variable name" },
		{ "#PBS -v A,,B\n", "line 1: -v : not a variable name" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jobspec js;
		struct error err;

		CU_ASSERT_EQUAL(parse(cases[i].text, &js, &err), -EINVAL);
		CU_ASSERT_STRING_EQUAL(err.text, cases[i].msg);
		jobspec_clear(&js);
	}
}

static void test_option_name(void)
{
	char name[JOBSPEC_NAME_MAX + 2];
	struct jobspec js;
	struct error err;

	jobspec_init(&js);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	CU_ASSERT_EQUAL(jobspec_option(&js, 'N', name, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "-N: job name longer than 255 bytes");
	name[JOBSPEC_NAME_MAX] = '\0';
	CU_ASSERT_EQUAL(jobspec_option(&js, 'N', name, &err), 0);
	CU_ASSERT_EQUAL(strlen(js.name), JOBSPEC_NAME_MAX);
	/* Spaces, quotes and newlines are taken literally. */
	CU_ASSERT_EQUAL(jobspec_option(&js, 'N', "a 'b'\n\"c\"", &err), 0);
	CU_ASSERT_STRING_EQUAL(js.name, "a 'b'\n\"c\"");
	CU_ASSERT_EQUAL(jobspec_option(&js, 'N', "bad\xff", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "-N: job name is not valid UTF-8");
	CU_ASSERT_EQUAL(jobspec_option(&js, 'Z', NULL, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "unknown option -Z");
	jobspec_clear(&js);
}

static void test_option_resources(void)
{
	static const struct {
		const char *arg;
		int r;
		int64_t ncpus, mem, walltime;
	} cases[] = {
		{ "ncpus=2", 0, 2, -1, -1 },
		{ "mem=512M", 0, -1, 512LL << 20, -1 },
		{ "mem=1gb", 0, -1, 1LL << 30, -1 },
		{ "mem=100", 0, -1, 100, -1 },
		{ "walltime=90", 0, -1, -1, 90 },
		{ "walltime=1:00:00:00", 0, -1, -1, 86400 },
		{ "ncpus=8,mem=8G,walltime=00:10:00", 0, 8, 8LL << 30, 600 },
		{ "ncpus=1,ncpus=3", 0, 3, -1, -1 },
		{ "ncpus=1000001", -EINVAL, -1, -1, -1 },
		{ "ncpus=", -EINVAL, -1, -1, -1 },
		{ "ncpus=2 ", -EINVAL, -1, -1, -1 },
		{ "mem=", -EINVAL, -1, -1, -1 },
		{ "mem=1.5G", -EINVAL, -1, -1, -1 },
		{ "walltime=", -EINVAL, -1, -1, -1 },
		{ "NCPUS=2", 0, -1, -1, -1 },
		{ "nodes=1:ppn=2", 0, 2, -1, -1 },
		{ "nodes=1", 0, 1, -1, -1 },
		{ "select=1:ncpus=4:mem=2gb", 0, 4, 2LL << 30, -1 },
		{ "select=1:mpiprocs=2", 0, 1, -1, -1 },
		{ "select=ncpus=3", 0, 3, -1, -1 },
		{ "procs=6", 0, 6, -1, -1 },
		{ "mem=2000mb", 0, -1, 2000LL << 20, -1 },
		{ "mem=12GB", 0, -1, 12LL << 30, -1 },
		{ "mem=512kb", 0, -1, 512LL << 10, -1 },
		{ "mem=1tb", 0, -1, 1LL << 40, -1 },
		{ "mem=100b", 0, -1, 100, -1 },
		{ "mem=10w", 0, -1, 80, -1 },
		{ "pmem=400mb", 0, -1, -1, -1 },
		{ "vmem=4gb,pvmem=1gb,cput=10:00:00", 0, -1, -1, -1 },
		{ "pmem=4Q", -EINVAL, -1, -1, -1 },
		{ "ngpus=0", 0, -1, -1, -1 },
		{ "place=scatter:excl", 0, -1, -1, -1 },
		{ "host=n1,arch=x86_64", 0, -1, -1, -1 },
		{ "walltime=0", -EINVAL, -1, -1, -1 },
		{ "nodes=2", 0, 2, -1, -1 },
		{ "nodes=1:ppn=2+1:ppn=2", 0, 4, -1, -1 },
		{ "select=1:ncpus=2+1:ncpus=4", 0, 6, -1, -1 },
		{ "select=3:ncpus=2:mem=1gb", 0, 6, 3LL << 30, -1 },
		{ "select=2:ncpus=2:mem=1gb+1:ncpus=1", 0, 5, 2LL << 30, -1 },
		{ "select=2:ncpus=1:walltime=10", -EINVAL, -1, -1, -1 },
		{ "nodes=2:ppn=0", -EINVAL, -1, -1, -1 },
		{ "", -EINVAL, -1, -1, -1 },
		{ ",", -EINVAL, -1, -1, -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jobspec js;
		struct error err;

		jobspec_init(&js);
		CU_ASSERT_EQUAL(jobspec_option(&js, 'l', cases[i].arg, &err), cases[i].r);
		if (cases[i].r == 0) {
			CU_ASSERT_EQUAL(js.ncpus, cases[i].ncpus);
			CU_ASSERT_EQUAL(js.mem, cases[i].mem);
			CU_ASSERT_EQUAL(js.walltime, cases[i].walltime);
		}
		jobspec_clear(&js);
	}
}

/* GPUs: plain (one node), per chunk of select= and of Torque's nodes=,
 * and PBS's aliases; the chunks' total in ngpus. */
static void test_option_gpus(void)
{
	static const struct {
		const char *arg;
		int64_t ngpus;
		size_t n_chunks;
		int64_t chunk0;
	} t[] = {
		{ "ngpus=2", 2, 0, 0 },
		{ "gpus=1", 1, 0, 0 },
		{ "naccelerators=3", 3, 0, 0 },
		{ "ngpus=0", 0, 0, 0 },
		{ "select=1:ncpus=4:ngpus=2", 2, 0, 0 },
		{ "select=2:ncpus=1:ngpus=1", 2, 1, 1 },
		{ "select=2:ncpus=2:ngpus=2+1:ncpus=1", 4, 2, 2 },
		{ "nodes=1:ppn=2:gpus=1", 1, 0, 0 },
		{ "nodes=2:ppn=2:gpus=2", 4, 1, 2 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct jobspec js;
		struct error err;

		jobspec_init(&js);
		CU_ASSERT_EQUAL(jobspec_option(&js, 'l', t[i].arg, &err), 0);
		CU_ASSERT_EQUAL(js.ngpus, t[i].ngpus);
		CU_ASSERT_EQUAL(js.n_chunks, t[i].n_chunks);
		if (js.n_chunks)
			CU_ASSERT_EQUAL(js.chunks[0].ngpus, t[i].chunk0);
		jobspec_clear(&js);
	}
}

/* The GPUs' model: -l gpu_model= or a chunk's, canonical, one per job. */
static void test_option_gpu_model(void)
{
	static const struct {
		const char *arg, *model, *error;
	} t[] = {
		{ "ngpus=2,gpu_model=A100", "a100", NULL },
		{ "select=1:ncpus=2:ngpus=1:gpu_model=v100", "v100", NULL },
		{ "select=2:ncpus=1:ngpus=1:gpu_model=v100+1:ncpus=1:ngpus=1:gpu_model=v100", "v100", NULL },
		{ "select=1:ngpus=1:gpu_model=a100+1:ngpus=1:gpu_model=v100", NULL,
		  "-l select=1:ngpus=1:gpu_model=a100+1:ngpus=1:gpu_model=v100: gpu_model=v100: a job's GPUs are "
		  "of one model (a100 given already)" },
		{ "gpu_model=a/b", NULL, "-l gpu_model=a/b: GPU model a/b: only letters, digits, '_', '-' and '.'" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct jobspec js;
		struct error err = { "" };
		int r;

		jobspec_init(&js);
		r = jobspec_option(&js, 'l', t[i].arg, &err);
		if (t[i].error) {
			CU_ASSERT_EQUAL(r, -EINVAL);
			if (strcmp(err.text, t[i].error))
				fprintf(stderr, "\n  %s: got '%s'", t[i].arg, err.text);
			CU_ASSERT_STRING_EQUAL(err.text, t[i].error);
		} else {
			CU_ASSERT_EQUAL(r, 0);
			CU_ASSERT_STRING_EQUAL(js.gpu_model ? js.gpu_model : "(null)", t[i].model);
		}
		jobspec_clear(&js);
	}
}

/* Requests across nodes: chunks, their totals, place, and the last -l wins. */
static void test_option_chunks(void)
{
	struct jobspec js, cli;
	struct error err;

	jobspec_init(&js);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'l', "select=2:ncpus=4:mem=2gb:mpiprocs=2:ompthreads=2+1:ncpus=3",
				       &err), 0);
	CU_ASSERT_EQUAL_FATAL(js.n_chunks, 2);
	CU_ASSERT_EQUAL(js.chunks[0].count, 2);
	CU_ASSERT_EQUAL(js.chunks[0].ncpus, 4);
	CU_ASSERT_EQUAL(js.chunks[0].mem, 2LL << 30);
	CU_ASSERT_EQUAL(js.chunks[0].mpiprocs, 2);
	CU_ASSERT_EQUAL(js.chunks[0].ompthreads, 2);
	CU_ASSERT_EQUAL(js.chunks[1].count, 1);
	CU_ASSERT_EQUAL(js.chunks[1].ncpus, 3);
	CU_ASSERT_EQUAL(js.chunks[1].mpiprocs, 3);   /* default: its ncpus */
	CU_ASSERT_EQUAL(js.chunks[1].mem, 0);
	CU_ASSERT_EQUAL(js.ncpus, 11);
	CU_ASSERT_EQUAL(js.mem, 4LL << 30);
	CU_ASSERT_EQUAL(js.place, JOBSPEC_PLACE_UNSET);  /* the server's default: free */
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Resource_List.nodect"), "3");
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Resource_List.select"),
			       "2:ncpus=4:mem=2gb:mpiprocs=2:ompthreads=2+1:ncpus=3");
	CU_ASSERT_EQUAL(jobspec_option(&js, 'l', "place=pack:excl", &err), 0);
	CU_ASSERT_EQUAL(js.place, JOBSPEC_PLACE_PACK);
	CU_ASSERT_EQUAL(js.excl, 1);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'l', "place=shared", &err), 0);
	CU_ASSERT_EQUAL(js.place, JOBSPEC_PLACE_PACK);
	CU_ASSERT_EQUAL(js.excl, 0);
	/* A plain ncpus= after it asks for one node again. */
	CU_ASSERT_EQUAL(jobspec_option(&js, 'l', "ncpus=2", &err), 0);
	CU_ASSERT_EQUAL(js.n_chunks, 0);
	CU_ASSERT_EQUAL(js.ncpus, 2);
	jobspec_clear(&js);

	/* Torque: N nodes of ppn CPUs, each its own node; nodes=N alone is N CPUs. */
	jobspec_init(&js);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'l', "nodes=3:ppn=2", &err), 0);
	CU_ASSERT_EQUAL_FATAL(js.n_chunks, 1);
	CU_ASSERT_EQUAL(js.chunks[0].count, 3);
	CU_ASSERT_EQUAL(js.chunks[0].ncpus, 2);
	CU_ASSERT_EQUAL(js.chunks[0].mpiprocs, 2);
	CU_ASSERT_EQUAL(js.ncpus, 6);
	CU_ASSERT_EQUAL(js.mem, -1);
	CU_ASSERT_EQUAL(js.place, JOBSPEC_PLACE_SCATTER);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'l', "nodes=4", &err), 0);
	CU_ASSERT_EQUAL_FATAL(js.n_chunks, 1);
	CU_ASSERT_EQUAL(js.chunks[0].count, 4);
	CU_ASSERT_EQUAL(js.chunks[0].ncpus, 1);
	CU_ASSERT_EQUAL(js.ncpus, 4);
	/* One node's worth is plain ncpus, no chunks. */
	CU_ASSERT_EQUAL(jobspec_option(&js, 'l', "nodes=1:ppn=5", &err), 0);
	CU_ASSERT_EQUAL(js.n_chunks, 0);
	CU_ASSERT_EQUAL(js.ncpus, 5);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'l', "select=1:ncpus=3", &err), 0);
	CU_ASSERT_EQUAL(js.n_chunks, 0);
	CU_ASSERT_EQUAL(js.ncpus, 3);
	/* place= given before nodes= is kept. */
	jobspec_clear(&js);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'l', "place=free,nodes=2:ppn=2", &err), 0);
	CU_ASSERT_EQUAL(js.place, JOBSPEC_PLACE_FREE);
	CU_ASSERT_EQUAL(js.n_chunks, 1);

	/* The command line's request replaces the directives'. */
	jobspec_init(&cli);
	CU_ASSERT_EQUAL(jobspec_option(&cli, 'l', "select=2:ncpus=1", &err), 0);
	CU_ASSERT_EQUAL(jobspec_merge(&js, &cli), 0);
	CU_ASSERT_EQUAL_FATAL(js.n_chunks, 1);
	CU_ASSERT_EQUAL(js.chunks[0].count, 2);
	CU_ASSERT_EQUAL(js.ncpus, 2);
	jobspec_clear(&cli);
	CU_ASSERT_EQUAL(jobspec_option(&cli, 'l', "ncpus=4", &err), 0);
	CU_ASSERT_EQUAL(jobspec_merge(&js, &cli), 0);
	CU_ASSERT_EQUAL(js.n_chunks, 0);
	CU_ASSERT_EQUAL(js.ncpus, 4);
	jobspec_clear(&cli);
	jobspec_clear(&js);
}

/* A one-chunk select's mpiprocs (Resource_List.mpiprocs, the one-node
 * job's MPI slots) goes with that request: a later select=, nodes= or
 * plain ncpus= drops it, on the command line or merged over the
 * directives (qexec's own select=1:ncpus=1:mpiprocs=1 before srun's
 * words); an -l mpiprocs= of its own stays. */
static void test_option_mpiprocs(void)
{
	static const struct {
		const char *args[3];
		const char *want;   /* Resource_List.mpiprocs, NULL: none */
	} t[] = {
		{ { "select=1:ncpus=4:mpiprocs=2" }, "2" },
		{ { "select=1:ncpus=1:mpiprocs=1", "select=2:ncpus=1:mpiprocs=1" }, NULL },
		{ { "select=1:ncpus=1:mpiprocs=1", "ncpus=2" }, NULL },
		{ { "select=1:ncpus=1:mpiprocs=1", "nodes=1:ppn=2" }, NULL },
		{ { "select=1:ncpus=1:mpiprocs=1", "select=1:ncpus=2" }, NULL },
		{ { "mpiprocs=2", "select=1:ncpus=4" }, "2" },
		{ { "ncpus=4", "mpiprocs=2" }, "2" },
		{ { "select=1:ncpus=4:mpiprocs=2", "mpiprocs=3", "ncpus=8" }, "3" },
	};
	static const struct {
		const char *directives[2], *cli;
		const char *want;   /* Resource_List.mpiprocs after the merge */
	} m[] = {
		{ { "select=1:ncpus=4:mpiprocs=2" }, "ncpus=8", NULL },
		{ { "select=1:ncpus=4:mpiprocs=2" }, "select=1:ncpus=8:mpiprocs=4", "4" },
		{ { "ncpus=4", "mpiprocs=2" }, "walltime=60", "2" },
	};
	struct error err;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct jobspec js;
		const char *got;

		jobspec_init(&js);
		for (size_t k = 0; k < 3 && t[i].args[k]; k++)
			CU_ASSERT_EQUAL(jobspec_option(&js, 'l', t[i].args[k], &err), 0);
		got = jobspec_attr(&js, "Resource_List.mpiprocs");
		if (!t[i].want != !got || (got && strcmp(got, t[i].want)))
			fprintf(stderr, "\n  case %zu: mpiprocs %s, not %s", i, got ?: "none", t[i].want ?: "none");
		CU_ASSERT(t[i].want ? got && strcmp(got, t[i].want) == 0 : !got);
		jobspec_clear(&js);
	}
	/* Merged: the command line's request replaces the directives'
	 * select, its slots with it; its own slots replace theirs. */
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct jobspec js, cli;
		const char *got;

		jobspec_init(&js);
		jobspec_init(&cli);
		for (size_t k = 0; k < 2 && m[i].directives[k]; k++)
			CU_ASSERT_EQUAL(jobspec_option(&js, 'l', m[i].directives[k], &err), 0);
		CU_ASSERT_EQUAL(jobspec_option(&cli, 'l', m[i].cli, &err), 0);
		CU_ASSERT_EQUAL(jobspec_merge(&js, &cli), 0);
		got = jobspec_attr(&js, "Resource_List.mpiprocs");
		CU_ASSERT(m[i].want ? got && strcmp(got, m[i].want) == 0 : !got);
		jobspec_clear(&js);
		jobspec_clear(&cli);
	}
}

static void test_option_vars(void)
{
	struct jobspec js;
	struct error err;

	jobspec_init(&js);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'v', "A,B=x y,C=,_d1=a=b", &err), 0);
	CU_ASSERT_EQUAL_FATAL(js.n_vars, 4);
	CU_ASSERT_STRING_EQUAL(js.vars[0].name, "A");
	CU_ASSERT_PTR_NULL(js.vars[0].value);
	CU_ASSERT_STRING_EQUAL(js.vars[1].name, "B");
	CU_ASSERT_STRING_EQUAL(js.vars[1].value, "x y");
	CU_ASSERT_STRING_EQUAL(js.vars[2].name, "C");
	CU_ASSERT_STRING_EQUAL(js.vars[2].value, "");
	CU_ASSERT_STRING_EQUAL(js.vars[3].name, "_d1");
	CU_ASSERT_STRING_EQUAL(js.vars[3].value, "a=b");
	CU_ASSERT_EQUAL(jobspec_option(&js, 'v', "=x", &err), -EINVAL);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'v', "A-B=1", &err), -EINVAL);
	CU_ASSERT_EQUAL(js.n_vars, 4);
	jobspec_clear(&js);
	CU_ASSERT_EQUAL(js.n_vars, 0);
}

/* NCI Gadi's bare -l wd: start in the submission directory (qpool's
 * default), undoing an earlier -d; the later option wins, on the command
 * line over the script too. storage= is recorded. */
static void test_option_wd(void)
{
	struct jobspec js, cli;
	struct error err;

	CU_ASSERT_EQUAL(parse("#!/bin/bash\n"
			      "#PBS -P ab12\n"
			      "#PBS -l ncpus=2,mem=4GB,jobfs=10GB,walltime=00:30:00\n"
			      "#PBS -l storage=scratch/ab12+gdata/ab12\n"
			      "#PBS -d /tmp\n"
			      "#PBS -l wd\n", &js, &err), 0);
	CU_ASSERT_PTR_NULL(js.workdir);
	CU_ASSERT_EQUAL(js.workdir_submit, 1);
	CU_ASSERT_EQUAL(js.ncpus, 2);
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Resource_List.wd"), "1");
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "Resource_List.storage"), "scratch/ab12+gdata/ab12");
	jobspec_init(&cli);
	CU_ASSERT_EQUAL(jobspec_option(&cli, 'd', "/var/tmp", &err), 0);
	CU_ASSERT_EQUAL(jobspec_merge(&js, &cli), 0);
	CU_ASSERT_STRING_EQUAL(js.workdir, "/var/tmp");
	jobspec_clear(&js);
	jobspec_clear(&cli);
	CU_ASSERT_EQUAL(parse("#PBS -l wd,walltime=1:00:00\n#PBS -w /tmp\n", &js, &err), 0);
	CU_ASSERT_STRING_EQUAL(js.workdir, "/tmp");
	CU_ASSERT_EQUAL(js.walltime, 3600);
	jobspec_init(&cli);
	CU_ASSERT_EQUAL(jobspec_option(&cli, 'l', "wd", &err), 0);
	CU_ASSERT_EQUAL(jobspec_merge(&js, &cli), 0);
	CU_ASSERT_PTR_NULL(js.workdir);
	jobspec_clear(&js);
	jobspec_clear(&cli);
	/* Other bare words are still no resource. */
	jobspec_init(&js);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'l', "wdx", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.text, "-l wdx: expected name=value");
	jobspec_clear(&js);
}

/* -o/-e: relative paths from qsub's directory, with a host: or without. */
static void test_output_path(void)
{
	static const struct {
		const char *cwd, *arg;
		int r;
		const char *path;
		size_t host_len;
	} cases[] = {
		{ "/home/u/run", "out.txt", 0, "/home/u/run/out.txt", 0 },
		{ "/home/u/run", "localhost:logs/out.txt", 0, "/home/u/run/logs/out.txt", 9 },
		{ "/home/u/run", "gadi-login-01:/scratch/ab12/out", 0, "/scratch/ab12/out", 13 },
		{ "/home/u/run", "n1.example.org:res/", 0, "/home/u/run/res/", 14 },
		{ "/", "localhost:out", 0, "/out", 9 },
		{ "/home/u", "./a:b", 0, "/home/u/./a:b", 0 },          /* a '/' before ':': no host */
		{ "/home/u", ":out", 0, "/home/u/:out", 0 },            /* no host before ':' */
		{ "/home/u", "localhost:", -EINVAL, NULL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[64];
		size_t host_len = 99;
		struct error err = { "" };

		CU_ASSERT_EQUAL(jobspec_output_path(cases[i].cwd, "-o", cases[i].arg, buf, sizeof(buf),
						    &host_len, &err), cases[i].r);
		if (cases[i].r == 0) {
			CU_ASSERT_STRING_EQUAL(buf, cases[i].path);
			CU_ASSERT_EQUAL(host_len, cases[i].host_len);
		}
	}
	{
		char buf[16];
		size_t host_len;
		struct error err;

		CU_ASSERT_EQUAL(jobspec_output_path("/a/long/directory", "-e", "file", buf, sizeof(buf),
						    &host_len, &err), -ENAMETOOLONG);
		CU_ASSERT_STRING_EQUAL(err.text, "-e file: path too long");
	}
}

static void test_merge(void)
{
	struct jobspec dir, cli;
	struct error err;

	CU_ASSERT_EQUAL(parse("#PBS -N fromscript -l ncpus=2,mem=1G -j oe -v A=1 -q batch\n",
			      &dir, &err), 0);
	jobspec_init(&cli);
	CU_ASSERT_EQUAL(jobspec_option(&cli, 'N', "fromcli", &err), 0);
	CU_ASSERT_EQUAL(jobspec_option(&cli, 'l', "ncpus=4", &err), 0);
	CU_ASSERT_EQUAL(jobspec_option(&cli, 'j', "n", &err), 0);
	CU_ASSERT_EQUAL(jobspec_option(&cli, 'v', "A=2", &err), 0);
	CU_ASSERT_EQUAL(jobspec_option(&cli, 'h', NULL, &err), 0);
	CU_ASSERT_EQUAL(jobspec_merge(&dir, &cli), 0);
	CU_ASSERT_STRING_EQUAL(dir.name, "fromcli");
	CU_ASSERT_STRING_EQUAL(dir.queue, "batch");    /* not overridden */
	CU_ASSERT_EQUAL(dir.ncpus, 4);
	CU_ASSERT_EQUAL(dir.mem, 1LL << 30);           /* -l merges per resource */
	CU_ASSERT_EQUAL(dir.join, 0);
	CU_ASSERT_EQUAL(dir.hold, 1);
	CU_ASSERT_EQUAL(dir.rerunnable, -1);
	CU_ASSERT_EQUAL_FATAL(dir.n_vars, 2);          /* the later A wins in qsub */
	CU_ASSERT_STRING_EQUAL(dir.vars[1].value, "2");
	jobspec_clear(&dir);
	jobspec_clear(&cli);
}

static void test_check(void)
{
	static const struct {
		const char *text;
		size_t len;
		const char *msg;   /* NULL: valid */
	} cases[] = {
		{ "echo hi\n", 8, NULL },
		{ "echo h\xc3\xa9\n", 9, NULL },
		{ "echo \xf0\x9f\x98\x80\n", 10, NULL },
		{ "", 0, "script is empty" },
		{ "a\nb\0c\n", 6, "line 2: NUL byte: a script must be text" },
		{ "ok\nok\n\xff\n", 8, "line 3: not valid UTF-8: a script must be text" },
		{ "\xc0\x80", 2, "line 1: not valid UTF-8: a script must be text" },        /* overlong */
		{ "\xed\xa0\x80", 3, "line 1: not valid UTF-8: a script must be text" },    /* surrogate */
		{ "\xf4\x90\x80\x80", 4, "line 1: not valid UTF-8: a script must be text" }, /* > U+10FFFF */
		{ "x\xc3", 2, "line 1: not valid UTF-8: a script must be text" },           /* cut short */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct error err = { "" };
		int r = jobscript_check(cases[i].text, cases[i].len, &err);

		if (!cases[i].msg) {
			CU_ASSERT_EQUAL(r, 0);
			continue;
		}
		CU_ASSERT_EQUAL(r, -EINVAL);
		CU_ASSERT_STRING_EQUAL(err.text, cases[i].msg);
	}
}

static void test_jobid(void)
{
	static const struct {
		const char *in;
		int r;
		int64_t id;
	} cases[] = {
		{ "12", 0, 12 }, { "12.host", 0, 12 }, { "7.n1.example.org", 0, 7 }, { "12.", 0, 12 },
		{ "12.srv@srv", 0, 12 }, { "12@srv", 0, 12 }, { "12.srv@srv.example.org", 0, 12 },
		{ "9223372036854775807", 0, INT64_MAX },
		{ "9223372036854775808", -ERANGE, 0 },
		{ "0", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "+1", -EINVAL, 0 },
		{ "12x", -EINVAL, 0 }, { ".12", -EINVAL, 0 }, { "12 ", -EINVAL, 0 }, { "@12", -EINVAL, 0 }, { " 12", -EINVAL, 0 }, { "abc", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t id = -5;

		CU_ASSERT_EQUAL(jobid_parse(cases[i].in, &id), cases[i].r);
		if (cases[i].r == 0)
			CU_ASSERT_EQUAL(id, cases[i].id);
	}
}

static void test_jobid_format(void)
{
	char buf[JOBID_SERVER_MAX + 32], name[JOBID_SERVER_MAX];
	int64_t id = 0;

	jobid_format(12, "srv", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "12.srv");
	CU_ASSERT_EQUAL(jobid_parse(buf, &id), 0);
	CU_ASSERT_EQUAL(id, 12);
	jobid_format(12, "", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "12");
	jobid_server_name("pool1", name, sizeof(name));
	CU_ASSERT_STRING_EQUAL(name, "pool1");
	jobid_server_name(NULL, name, sizeof(name));
	CU_ASSERT(name[0] != '\0' && !strchr(name, '.'));
}

/* Node names and features in PBS's and Torque's forms (docs/RESOURCES.md). */
static void test_node_selection(void)
{
	static const struct {
		const char *arg;
		int r;
		const char *nodelist, *constraint;
		int64_t ncpus;
	} t[] = {
		{ "select=1:ncpus=4:bigmem=true", 0, NULL, "bigmem", 4 },
		{ "select=1:ncpus=4:model=skylake:bigmem=True", 0, NULL, "model=skylake&bigmem", 4 },
		{ "select=1:host=n3", 0, "n3", NULL, 1 },
		{ "select=1:vnode=n3:ncpus=2", 0, "n3", NULL, 2 },
		{ "select=1:host=n1+1:host=n2", 0, "n1,n2", NULL, 2 },
		{ "select=2:ncpus=1:ib=true", 0, NULL, "ib", 2 },
		/* features all chunks share are the job's; differing ones each chunk's */
		{ "select=1:ncpus=1:ib=true+2:ncpus=1:ib=t", 0, NULL, "ib", 3 },
		{ "select=1:ncpus=2:bigmem=true+2:ncpus=1", 0, NULL, NULL, 4 },
		{ "nodes=1:ppn=2:bigmem+2:ppn=1", 0, NULL, NULL, 4 },
		{ "nodes=1:ppn=1:ib+1:ppn=1:ib", 0, NULL, "ib", 2 },
		{ "nodes=n3:ppn=2", 0, "n3", NULL, 2 },
		{ "nodes=1:ppn=2:ib", 0, NULL, "ib", 2 },
		{ "nodes=1:ppn=2:ib:bigmem:ib", 0, NULL, "ib&bigmem", 2 },
		{ "host=n4", 0, "n4", NULL, -1 },
		{ "select=1:bigmem=false", -EINVAL, NULL, NULL, 0 },
		{ "select=1:host=n/3", -EINVAL, NULL, NULL, 0 },
		{ "select=1:model=sky&lake", -EINVAL, NULL, NULL, 0 },
		{ "nodes=n-3!:ppn=1", -EINVAL, NULL, NULL, 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct jobspec js;
		struct error err = { "" };
		int r;

		jobspec_init(&js);
		r = jobspec_option(&js, 'l', t[i].arg, &err);
		if (r != t[i].r)
			fprintf(stderr, "-l %s: %d %s\n", t[i].arg, r, err.text);
		CU_ASSERT_EQUAL(r, t[i].r);
		if (r == 0) {
			CU_ASSERT_EQUAL(js.ncpus, t[i].ncpus);
			if (t[i].nodelist) {
				CU_ASSERT_STRING_EQUAL(js.nodelist ? js.nodelist : "(null)", t[i].nodelist);
			} else {
				CU_ASSERT_PTR_NULL(js.nodelist);
			}
			if (t[i].constraint) {
				CU_ASSERT_STRING_EQUAL(js.constraint ? js.constraint : "(null)", t[i].constraint);
			} else {
				CU_ASSERT_PTR_NULL(js.constraint);
			}
			CU_ASSERT_EQUAL(js.n_warnings, 0);
			for (size_t c = 0; c < js.n_chunks; c++)
				CU_ASSERT_STRING_EQUAL(js.chunks[c].features,
						       (strstr(t[i].arg, "bigmem=true+") || strstr(t[i].arg, ":bigmem+")) &&
						       c == 0 ? "bigmem" : "");
		} else {
			CU_ASSERT(err.text[0] != '\0');
		}
		jobspec_clear(&js);
	}
}

static const struct unit_test jobscript_tests[] = {
	{ "node_selection", test_node_selection },
	{ "directives", test_directives },
	{ "directives_stop", test_directives_stop },
	{ "directives_pbs", test_directives_pbs },
	{ "directives_words", test_directives_words },
	{ "directives_errors", test_directives_errors },
	{ "option_name", test_option_name },
	{ "option_resources", test_option_resources },
	{ "option_gpus", test_option_gpus },
	{ "option_gpu_model", test_option_gpu_model },
	{ "option_chunks", test_option_chunks },
	{ "option_mpiprocs", test_option_mpiprocs },
	{ "option_vars", test_option_vars },
	{ "option_wd", test_option_wd },
	{ "output_path", test_output_path },
	{ "merge", test_merge },
	{ "check", test_check },
	{ "jobid", test_jobid },
	{ "jobid_format", test_jobid_format },
	{ NULL, NULL },
};

UNIT_SUITE(jobscript, jobscript_tests);
