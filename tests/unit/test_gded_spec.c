/* SPDX-License-Identifier: MIT */
/* gded's launch spec, environment and result file, from JSON tables. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jobenv.h"

#include "gded-internal.h"
#include "tmpdir.h"
#include "unit.h"

static const char *const good_spec =
	"{\"jobid\": 12, \"name\": \"sim\", \"queue\": \"multi8\", \"user\": \"ann\","
	" \"uid\": 1001, \"gid\": 100, \"workdir\": \"/home/ann/run\","
	" \"stdout\": \"/home/ann/run/sim.o12\", \"stderr\": \"/home/ann/run/sim.e12\","
	" \"join\": false, \"env\": {\"FOO\": \"bar\", \"USER\": \"mallory\"},"
	" \"ncpus\": 8, \"mem\": 1073741824, \"walltime\": 3600, \"kill_grace\": 5,"
	" \"cpus\": \"0-7\", \"mems\": \"0\", \"reserve\": \"realtime\","
	" \"rt_policy\": \"fifo\", \"rt_priority\": 10,"
	" \"home\": \"/home/ann\", \"shell\": \"/bin/bash\", \"node\": \"n1\","
	" \"script\": \"/var/lib/qpool/nodes/n1/jobs/12.sh\","
	" \"nodefile\": \"/var/lib/qpool/nodes/n1/jobs/12.nodes\","
	" \"result\": \"/var/lib/qpool/nodes/n1/jobs/12.result\","
	" \"cgroup\": {\"mode\": \"v1\", \"root\": \"/sys/fs/cgroup\", \"parent\": \"qpool/n1\","
	" \"reclaim_threshold\": 0},"
	" \"times\": {\"submit\": 1, \"dispatch\": 2, \"launch\": 3}, \"unknown\": [1]}";

static int parse_text(const char *text, struct gded_job *job, struct error *err)
{
	json_t *o = json_loads(text, 0, NULL);
	int r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	r = gded_spec_parse(o, job, err);
	json_decref(o);
	return r;
}

/* good_spec with member key replaced by value (raw JSON), or removed. */
static int parse_changed(const char *key, const char *value, struct gded_job *job,
			 struct error *err)
{
	json_t *o = json_loads(good_spec, 0, NULL), *v = NULL;
	int r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	if (value) {
		v = json_loads(value, JSON_DECODE_ANY, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(v);
		json_object_set_new(o, key, v);
	} else {
		json_object_del(o, key);
	}
	r = gded_spec_parse(o, job, err);
	json_decref(o);
	return r;
}

static void test_spec_good(void)
{
	struct gded_job job;
	struct error err = { { 0 } };

	CU_ASSERT_EQUAL_FATAL(parse_text(good_spec, &job, &err), 0);
	CU_ASSERT_EQUAL(job.jobid, 12);
	CU_ASSERT_STRING_EQUAL(job.user, "ann");
	CU_ASSERT_EQUAL(job.uid, 1001);
	CU_ASSERT_EQUAL(job.gid, 100);
	CU_ASSERT_EQUAL(job.ncpus, 8);
	CU_ASSERT_EQUAL(job.mem, 1073741824);
	CU_ASSERT_EQUAL(job.walltime, 3600);
	CU_ASSERT_EQUAL(job.kill_grace, 5);
	CU_ASSERT_EQUAL(job.pids_max, GDED_PIDS_MAX_DEFAULT);
	CU_ASSERT_EQUAL(job.umask, 022);   /* absent: a spec from before umask */
	CU_ASSERT_STRING_EQUAL(job.cpus, "0-7");
	CU_ASSERT_STRING_EQUAL(job.shell, "/bin/bash");
	CU_ASSERT_EQUAL(job.cg_mode, CGROUP_MODE_V1);
	CU_ASSERT_STRING_EQUAL(job.cg_parent, "qpool/n1");
	CU_ASSERT_EQUAL(job.cg_reclaim_threshold, 0);
	CU_ASSERT_STRING_EQUAL(job.stderr_path, "/home/ann/run/sim.e12");
	CU_ASSERT_FALSE(job.join);
	CU_ASSERT_PTR_NOT_NULL_FATAL(job.env);
	CU_ASSERT_STRING_EQUAL(job.env[0], "FOO=bar");
	CU_ASSERT_STRING_EQUAL(job.env[1], "USER=mallory");
	CU_ASSERT_PTR_NULL(job.env[2]);
	/* no groups: the child asks initgroups */
	CU_ASSERT_PTR_NULL(job.groups);
	gded_job_clear(&job);
	CU_ASSERT_PTR_NULL(job.env);

	/* groups from qnoded, in order; [] is no supplementary group at all */
	CU_ASSERT_EQUAL_FATAL(parse_changed("groups", "[100, 27, 1001]", &job, &err), 0);
	CU_ASSERT_EQUAL_FATAL(job.ngroups, 3);
	CU_ASSERT_EQUAL(job.groups[0], 100);
	CU_ASSERT_EQUAL(job.groups[2], 1001);
	gded_job_clear(&job);
	CU_ASSERT_PTR_NULL(job.groups);
	CU_ASSERT_EQUAL_FATAL(parse_changed("groups", "[]", &job, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(job.groups);
	CU_ASSERT_EQUAL(job.ngroups, 0);
	gded_job_clear(&job);
	CU_ASSERT_EQUAL_FATAL(parse_changed("umask", "63", &job, &err), 0);
	CU_ASSERT_EQUAL(job.umask, 077);
	gded_job_clear(&job);
}

static void test_spec_bad(void)
{
	static const struct {
		const char *key;
		const char *value;   /* NULL: member removed */
		const char *text;    /* expected in err.text */
	} cases[] = {
		{ "jobid", NULL, "missing \"jobid\"" },
		{ "jobid", "\"12\"", "\"jobid\" is not a non-negative integer" },
		{ "jobid", "0", "\"jobid\" must be positive" },
		{ "uid", "-1", "\"uid\" is not a non-negative integer" },
		{ "uid", "1.5", "\"uid\" is not" },
		{ "user", NULL, "missing \"user\"" },
		{ "user", "42", "\"user\" is not a string" },
		{ "workdir", "\"relative/dir\"", "absolute" },
		{ "stdout", "null", "missing \"stdout\"" },
		{ "stderr", NULL, "missing \"stderr\"" },
		{ "join", "\"yes\"", "\"join\" is not a boolean" },
		{ "env", "[\"A=b\"]", "\"env\" is not an object" },
		{ "env", "{\"A\": 1}", "env \"A\" is not a string" },
		{ "env", "{\"A=B\": \"c\"}", "not valid" },
		{ "mem", "\"8G\"", "\"mem\" is not" },
		{ "cpus", "[0, 1]", "\"cpus\" is not a string" },
		{ "cgroup", NULL, "missing \"cgroup\"" },
		{ "cgroup", "\"v1\"", "\"cgroup\" is not an object" },
		{ "cgroup", "{\"mode\": \"v3\"}", "not none, v1 or v2" },
		{ "cgroup", "{\"mode\": \"v2\", \"root\": \"/sys/fs/cgroup\"}", "missing \"parent\"" },
		{ "cgroup", "{\"mode\": \"v2\", \"root\": \"/x\", \"parent\": \"../..\"}", "not valid" },
		{ "cgroup", "{\"mode\": \"v1\", \"root\": \"/x\", \"parent\": \"q/n\", \"reclaim_threshold\": -1}",
		  "\"reclaim_threshold\" is not a non-negative integer" },
		{ "cgroup", "{\"mode\": \"v1\", \"root\": \"/x\", \"parent\": \"q/n\", \"reclaim_threshold\": 4294967296}",
		  "reclaim_threshold 4294967296 is too large" },
		{ "result", NULL, "missing \"result\"" },
		{ "groups", "\"100\"", "\"groups\" is not an array" },
		{ "groups", "[100, -1]", "groups[1] is not a group id" },
		{ "groups", "[4294967295]", "groups[0] is not a group id" },
		{ "umask", "512", "is not a file mode mask" },
		{ "umask", "\"077\"", "\"umask\" is not a non-negative integer" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gded_job job;
		struct error err = { { 0 } };
		int r = parse_changed(cases[i].key, cases[i].value, &job, &err);

		CU_ASSERT_EQUAL(r, -EINVAL);
		if (!strstr(err.text, cases[i].text)) {
			fprintf(stderr, "case %zu: \"%s\" lacks \"%s\"\n", i, err.text,
				cases[i].text);
			CU_FAIL("error text");
		}
		CU_ASSERT_PTR_NULL(job.env);
		CU_ASSERT_PTR_NULL(job.groups);
		CU_ASSERT_PTR_NULL(job.owner);
	}
}

static void test_spec_variants(void)
{
	struct gded_job job;
	struct error err = { { 0 } };

	/* join: no stderr needed; mode none: no root or parent needed. */
	CU_ASSERT_EQUAL(parse_changed("stderr", NULL, &job, &err), -EINVAL);
	{
		json_t *o = json_loads(good_spec, 0, NULL);

		json_object_set_new(o, "join", json_true());
		json_object_del(o, "stderr");
		json_object_set_new(o, "cgroup", json_pack("{s:s}", "mode", "none"));
		json_object_set_new(o, "pids_max", json_integer(0));
		CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), 0);
		CU_ASSERT(job.join);
		CU_ASSERT_EQUAL(job.cg_mode, CGROUP_MODE_NONE);
		CU_ASSERT_EQUAL(job.pids_max, 0);
		json_decref(o);
		/* The job keeps the spec alive on its own. */
		CU_ASSERT_STRING_EQUAL(job.workdir, "/home/ann/run");
		gded_job_clear(&job);
	}
	/* A spec from before reclaim_threshold: the default. */
	{
		json_t *o = json_loads(good_spec, 0, NULL);

		json_object_del(json_object_get(o, "cgroup"), "reclaim_threshold");
		CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), 0);
		CU_ASSERT_EQUAL(job.cg_reclaim_threshold, CGROUP_RECLAIM_THRESHOLD_DEFAULT);
		json_decref(o);
		gded_job_clear(&job);
	}
	CU_ASSERT_EQUAL(parse_text("[1, 2]", &job, &err), -EINVAL);
	CU_ASSERT_EQUAL(parse_text("{}", &job, &err), -EINVAL);
}

static void test_spec_load(void)
{
	struct gded_job job;
	struct error err = { { 0 } };
	char *d = unit_tmpdir(), path[4096];

	unit_write_file(d, "good.json", good_spec);
	unit_write_file(d, "torn.json", "{\"jobid\": 12, \"user\":");
	snprintf(path, sizeof(path), "%s/good.json", d);
	CU_ASSERT_EQUAL(gded_spec_load(path, &job, &err), 0);
	CU_ASSERT_EQUAL(job.jobid, 12);
	gded_job_clear(&job);
	snprintf(path, sizeof(path), "%s/torn.json", d);
	CU_ASSERT_EQUAL(gded_spec_load(path, &job, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "torn.json:"));
	snprintf(path, sizeof(path), "%s/absent.json", d);
	CU_ASSERT_EQUAL(gded_spec_load(path, &job, &err), -ENOENT);
	unit_tmpdir_remove(d);
}

static const char *env_get(char **env, const char *name)
{
	size_t len = strlen(name);

	for (char **p = env; *p; p++)
		if (strncmp(*p, name, len) == 0 && (*p)[len] == '=')
			return *p + len + 1;
	return NULL;
}

static void test_env(void)
{
	struct gded_job job;
	struct error err = { { 0 } };
	char **env;

	CU_ASSERT_EQUAL_FATAL(parse_text(good_spec, &job, &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_STRING_EQUAL(env_get(env, "FOO"), "bar");
	CU_ASSERT_STRING_EQUAL(env_get(env, "USER"), "ann");   /* ours wins */
	CU_ASSERT_STRING_EQUAL(env_get(env, "LOGNAME"), "ann");
	CU_ASSERT_STRING_EQUAL(env_get(env, "HOME"), "/home/ann");
	CU_ASSERT_STRING_EQUAL(env_get(env, "SHELL"), "/bin/bash");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PATH"), GDED_PATH_DEFAULT);
	CU_ASSERT_STRING_EQUAL(env_get(env, "QPOOL_JOBID"), "12");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_JOBID"), "12");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_JOBNAME"), "sim");
	CU_ASSERT_STRING_EQUAL(env_get(env, "QPOOL_QUEUE"), "multi8");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_QUEUE"), "multi8");
	CU_ASSERT_STRING_EQUAL(env_get(env, "NCPUS"), "8");
	CU_ASSERT_STRING_EQUAL(env_get(env, "OMP_NUM_THREADS"), "8");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_O_WORKDIR"), "/home/ann/run");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NODEFILE"),
			       "/var/lib/qpool/nodes/n1/jobs/12.nodes");
	CU_ASSERT_STRING_EQUAL(env_get(env, "QPOOL_NODEFILE"),
			       "/var/lib/qpool/nodes/n1/jobs/12.nodes");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_ENVIRONMENT"), "PBS_BATCH");
	gded_env_free(env);
	gded_job_clear(&job);

	/* A PATH from the submitter (qsub -V) is kept. */
	CU_ASSERT_EQUAL_FATAL(parse_changed("env", "{\"PATH\": \"/opt/x/bin:/usr/bin\"}", &job,
					    &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_STRING_EQUAL(env_get(env, "PATH"), "/opt/x/bin:/usr/bin");
	gded_env_free(env);
	gded_job_clear(&job);
}

/* A one-chunk select's own MPI slots (Resource_List.mpiprocs, as qsub
 * records select=1:ncpus=8:mpiprocs=2): one alloc entry for this node, so
 * the node file has a line a slot and PBS_NP, PBS_NUM_PPN and
 * OMP_NUM_THREADS (ncpus / slots, else ompthreads) follow; a value that
 * is not a count in 1..2^20 is no slots of its own. */
static void test_env_mpiprocs(void)
{
	static const struct {
		const char *attrs;
		size_t nalloc;
		const char *lines, *np, *omp;
	} t[] = {
		{ "{\"Resource_List.mpiprocs\": \"2\"}", 1, "n1\nn1\n", "2", "4" },
		{ "{\"Resource_List.mpiprocs\": \"2\", \"Resource_List.ompthreads\": \"3\"}", 1,
		  "n1\nn1\n", "2", "3" },
		{ "{\"Resource_List.mpiprocs\": \"1048576\"}", 1, NULL, "1048576", "1" },
		{ "{}", 0, "n1\nn1\nn1\nn1\nn1\nn1\nn1\nn1\n", "8", "8" },
		{ "{\"Resource_List.mpiprocs\": \"0\"}", 0, NULL, "8", "8" },
		{ "{\"Resource_List.mpiprocs\": \"2x\"}", 0, NULL, "8", "8" },
		{ "{\"Resource_List.mpiprocs\": \"1048577\"}", 0, NULL, "8", "8" },
		{ "{\"Resource_List.mpiprocs\": 2}", 0, NULL, "8", "8" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct gded_job job;
		struct error err = { { 0 } };
		char **env, *text = NULL;
		size_t len = 0;

		CU_ASSERT_EQUAL_FATAL(parse_changed("attrs", t[i].attrs, &job, &err), 0);
		CU_ASSERT_EQUAL(job.nalloc, t[i].nalloc);
		if (t[i].lines) {
			CU_ASSERT_EQUAL_FATAL(gded_nodefile_text(&job, &text, &len, &err), 0);
			CU_ASSERT(len == strlen(t[i].lines) && memcmp(text, t[i].lines, len) == 0);
			free(text);
		}
		env = gded_env_build(&job, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(env);
		CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NP"), t[i].np);
		CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NUM_PPN"), t[i].np);
		CU_ASSERT_STRING_EQUAL(env_get(env, "OMP_NUM_THREADS"), t[i].omp);
		CU_ASSERT_STRING_EQUAL(env_get(env, "NCPUS"), "8");
		CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NUM_NODES"), "1");
		gded_env_free(env);
		gded_job_clear(&job);
	}
}

/* The builder keeps the first place of a name and the last value given
 * for it, as the scan it replaced did. */
static void test_env_dedupe(void)
{
	char *vars[] = { "A=1", "B=2", "A=3", "PATH=/mine", "USER=mallory", "B=4", NULL };
	struct gded_job job = {
		.jobid = 7, .name = "n", .queue = "q", .user = "ann", .home = "/h",
		.shell = "/bin/sh", .workdir = "/w", .ncpus = 1, .env = vars,
	};
	char **env = gded_env_build(&job, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_STRING_EQUAL(env[0], "A=3");
	CU_ASSERT_STRING_EQUAL(env[1], "B=4");
	CU_ASSERT_STRING_EQUAL(env[2], "PATH=/mine");
	CU_ASSERT_STRING_EQUAL(env[3], "USER=ann");
	CU_ASSERT_STRING_EQUAL(env_get(env, "HOME"), "/h");
	for (size_t i = 0; env[i]; i++)
		for (size_t j = i + 1; env[j]; j++) {
			size_t len = strcspn(env[i], "=");

			CU_ASSERT_FALSE(strncmp(env[i], env[j], len) == 0 && env[j][len] == '=');
		}
	gded_env_free(env);
}

/* Linear: 200,000 variables (far past the cap, which gded checks before
 * building) build in well under a second; the scan per variable it
 * replaced took 14 s for 75,000. */
static void test_env_linear(void)
{
	enum { N = 200000 };
	struct gded_job job = {
		.jobid = 7, .name = "n", .queue = "q", .user = "ann", .home = "/h",
		.shell = "/bin/sh", .workdir = "/w", .ncpus = 1,
	};
	struct timespec t0, t1;
	char **vars = calloc(N + 1, sizeof(char *)), **env;
	double secs;

	CU_ASSERT_PTR_NOT_NULL_FATAL(vars);
	for (size_t i = 0; i < N; i++)
		if (asprintf(&vars[i], "VAR_%zu=%zu", i % (N / 2), i) < 0)
			CU_FAIL_FATAL("out of memory");
	job.env = vars;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	env = gded_env_build(&job, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	/* N / 2 names, each given twice: the second value wins. */
	CU_ASSERT_STRING_EQUAL(env[0], "VAR_0=100000");
	CU_ASSERT_STRING_EQUAL(env_get(env, "VAR_99999"), "199999");
	CU_ASSERT_PTR_NOT_NULL(env[N / 2]);
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_ENVIRONMENT"), "PBS_BATCH");
	if (secs > 3.0) {
		fprintf(stderr, "env build of %d variables took %.2f s\n", N, secs);
		CU_FAIL("environment build is not linear");
	}
	gded_env_free(env);
	for (size_t i = 0; i < N; i++)
		free(vars[i]);
	free(vars);
}

/* gded refuses a spec whose environment passes the cap. */
static void test_env_cap(void)
{
	struct gded_job job;
	struct error err = { { 0 } };
	json_t *o = json_loads(good_spec, 0, NULL), *env = json_object();
	char name[32];

	for (int i = 0; i < JOBENV_MAX_VARS + 1; i++) {
		snprintf(name, sizeof(name), "V%d", i);
		json_object_set_new(env, name, json_string("1"));
	}
	json_object_set_new(o, "env", env);
	CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), -E2BIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "\"env\" is above"));
	CU_ASSERT_PTR_NULL(job.env);
	json_decref(o);
}

static void test_result(void)
{
	struct gded_result res = {
		.jobid = 12, .status = GDED_STATUS_SIGNALED, .exit_signal = 9,
		.timeout = true, .cpu_ns = 5000, .mem_peak = 4096,
		.wall = { 10, 20, 30, 40, 50 }, .mono = { 1, 2, 3, 4, 5 },
	};
	struct error err = { { 0 } };
	char *d = unit_tmpdir(), path[4096], tmp[4100];
	json_t *o, *t;

	snprintf(path, sizeof(path), "%s/12.result", d);
	CU_ASSERT_EQUAL_FATAL(gded_result_write(path, &res, &err), 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	CU_ASSERT(access(tmp, F_OK) != 0);                     /* renamed away */
	o = json_load_file(path, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "jobid")), 12);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "status")), "signaled");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "exit_signal")), 9);
	CU_ASSERT(json_is_null(json_object_get(o, "exit_status")));
	CU_ASSERT(json_is_true(json_object_get(o, "timeout")));
	CU_ASSERT(json_is_false(json_object_get(o, "cancelled")));
	CU_ASSERT(json_is_null(json_object_get(o, "reason")));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "cpu_ns")), 5000);
	t = json_object_get(o, "times");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(t, "exec")), 30);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(o, "mono"),
							    "released")), 5);
	json_decref(o);

	/* A job that never started: no exec stamp, a reason. */
	res = (struct gded_result){ .jobid = 13, .status = GDED_STATUS_FAILED,
				    .wall = { 10, 20, 0, 40, 50 } };
	snprintf(res.reason, sizeof(res.reason), "cannot open /etc/x.out: Permission denied");
	CU_ASSERT_EQUAL(gded_result_write(path, &res, &err), 0);
	o = json_load_file(path, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "status")), "failed");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "reason")),
			       "cannot open /etc/x.out: Permission denied");
	CU_ASSERT_PTR_NULL(json_object_get(json_object_get(o, "times"), "exec"));
	CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(o, "times"), "exit"));
	json_decref(o);

	snprintf(path, sizeof(path), "%s/no/such/dir/1.result", d);
	CU_ASSERT_EQUAL(gded_result_write(path, &res, &err), -ENOENT);
	unit_tmpdir_remove(d);
}


/* reserve, rt_policy, rt_priority: absent is none; a realtime priority
 * the kernel does not have is refused before anything runs. */
static void test_spec_reserve(void)
{
	struct error err = { { 0 } };
	struct gded_job job;
	json_t *o = json_loads(good_spec, 0, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), 0);
	CU_ASSERT_EQUAL(job.reserve, GDED_RESERVE_REALTIME);
	CU_ASSERT_EQUAL(job.rt_policy, SCHED_FIFO);
	gded_job_clear(&job);
	json_object_del(o, "reserve");
	CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), 0);
	CU_ASSERT_EQUAL(job.reserve, GDED_RESERVE_NONE);
	gded_job_clear(&job);
	json_object_set_new(o, "reserve", json_string("realtime"));
	json_object_set_new(o, "rt_policy", json_string("rr"));
	json_object_set_new(o, "rt_priority", json_integer(10));
	CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), 0);
	CU_ASSERT_EQUAL(job.reserve, GDED_RESERVE_REALTIME);
	CU_ASSERT_EQUAL(job.rt_policy, SCHED_RR);
	CU_ASSERT_EQUAL(job.rt_priority, 10);
	gded_job_clear(&job);
	json_object_set_new(o, "rt_priority", json_integer(0));
	CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "rt_priority 0 is outside 1-99"));
	json_object_set_new(o, "rt_priority", json_integer(10));
	json_object_set_new(o, "rt_policy", json_string("deadline"));
	CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), -EINVAL);
	json_object_set_new(o, "rt_policy", json_string("fifo"));
	json_object_set_new(o, "reserve", json_string("exclusive"));
	json_object_set_new(o, "rt_priority", json_integer(0));
	CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), 0);    /* priority unused */
	CU_ASSERT_EQUAL(job.reserve, GDED_RESERVE_EXCLUSIVE);
	gded_job_clear(&job);
	json_object_set_new(o, "reserve", json_string("shared"));
	CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), -EINVAL);
	json_decref(o);
}

static const char *const alloc3 =
	"[{\"node\": \"n1\", \"ncpus\": 4, \"mpiprocs\": 2, \"mem\": 1024},"
	" {\"node\": \"n2\", \"ncpus\": 4, \"mpiprocs\": 2, \"ompthreads\": 3, \"addr\": \"192.0.2.7\"},"
	" {\"node\": \"n3\", \"ncpus\": 2}]";

/* good_spec as node node_index of alloc3, with its share of 4 CPUs. */
static int parse_multi(uint64_t node_index, struct gded_job *job, struct error *err)
{
	json_t *o = json_loads(good_spec, 0, NULL);
	int r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	json_object_set_new(o, "alloc", json_loads(alloc3, 0, NULL));
	json_object_set_new(o, "node_index", json_integer((json_int_t)node_index));
	json_object_set_new(o, "ncpus", json_integer(node_index == 2 ? 2 : 4));
	json_object_set_new(o, "ctl", json_string("/var/lib/qpool/nodes/n1/jobs/12.ctl"));
	json_object_set_new(o, "task_socket", json_string("/var/lib/qpool/nodes/n1/task.sock"));
	json_object_set_new(o, "hwloc_xml", json_string("/var/lib/qpool/nodes/n1/topology.xml"));
	r = gded_spec_parse(o, job, err);
	json_decref(o);
	return r;
}

static void test_spec_alloc(void)
{
	struct gded_job job;
	struct error err = { { 0 } };

	CU_ASSERT_EQUAL_FATAL(parse_multi(1, &job, &err), 0);
	CU_ASSERT_EQUAL(job.nalloc, 3);
	CU_ASSERT_EQUAL(job.node_index, 1);
	CU_ASSERT(gded_job_sister(&job));
	CU_ASSERT_STRING_EQUAL(job.alloc[0].node, "n1");
	CU_ASSERT_EQUAL(job.alloc[0].mpiprocs, 2);
	CU_ASSERT_EQUAL(job.alloc[0].mem, 1024);
	CU_ASSERT_EQUAL(job.alloc[1].ompthreads, 3);
	CU_ASSERT_EQUAL(job.alloc[2].mpiprocs, 2);   /* default: its ncpus */
	CU_ASSERT_STRING_EQUAL(job.alloc[1].addr, "192.0.2.7");
	CU_ASSERT_PTR_NULL(job.alloc[2].addr);
	CU_ASSERT_STRING_EQUAL(job.ctl, "/var/lib/qpool/nodes/n1/jobs/12.ctl");
	CU_ASSERT_STRING_EQUAL(job.task_socket, "/var/lib/qpool/nodes/n1/task.sock");
	CU_ASSERT_STRING_EQUAL(job.hwloc_xml, "/var/lib/qpool/nodes/n1/topology.xml");
	gded_job_clear(&job);
	CU_ASSERT_PTR_NULL(job.alloc);
	CU_ASSERT_EQUAL_FATAL(parse_multi(0, &job, &err), 0);
	CU_ASSERT_FALSE(gded_job_sister(&job));
	gded_job_clear(&job);
	/* Absent, or one entry: a one-node job. */
	CU_ASSERT_EQUAL_FATAL(parse_text(good_spec, &job, &err), 0);
	CU_ASSERT_EQUAL(job.nalloc, 0);
	CU_ASSERT_PTR_NULL(job.ctl);
	gded_job_clear(&job);
	CU_ASSERT_EQUAL_FATAL(parse_changed("alloc", "[{\"node\": \"n1\", \"ncpus\": 8}]", &job,
					    &err), 0);
	CU_ASSERT_EQUAL(job.nalloc, 1);
	CU_ASSERT_FALSE(gded_job_sister(&job));
	gded_job_clear(&job);
}

static void test_spec_alloc_bad(void)
{
	static const struct {
		const char *key;
		const char *value;
		const char *text;
	} cases[] = {
		{ "alloc", "{\"node\": \"n1\"}", "\"alloc\" is not an array" },
		{ "alloc", "[]", "\"alloc\" is empty" },
		{ "alloc", "[\"n1\"]", "alloc[0] is not an object" },
		{ "alloc", "[{\"ncpus\": 2}]", "alloc[0]: missing \"node\"" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 2}, {\"node\": \"n2\"}]",
		  "alloc[1]: missing \"ncpus\"" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 0}]", "alloc[0]: \"ncpus\" must be positive" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": -2}]", "alloc[0]: \"ncpus\" is not" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 2, \"mpiprocs\": \"2\"}]",
		  "alloc[0]: \"mpiprocs\" is not" },
		{ "alloc", "[{\"node\": \"n1 x\", \"ncpus\": 2}]", "node name \"n1 x\" is not valid" },
		{ "alloc", "[{\"node\": \"a\\nb\", \"ncpus\": 2}]", "is not valid" },
		{ "alloc", "[{\"node\": \"\", \"ncpus\": 2}]", "is not valid" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 2, \"mpiprocs\": 2000000}]", "is above" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 2, \"mpiprocs\": 1000000},"
			   " {\"node\": \"n2\", \"ncpus\": 2, \"mpiprocs\": 1000000}]", "MPI slots" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 2, \"addr\": \"n1.example\"}]",
		  "alloc[0]: \"addr\" \"n1.example\" is not an IPv4 address" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 2, \"addr\": \"192.0.2.1\\nPATH=/x\"}]",
		  "is not an IPv4 address" },
		{ "alloc", "[{\"node\": \"n1\", \"ncpus\": 2, \"addr\": 7}]", "alloc[0]: \"addr\" is not a string" },
		{ "node_index", "1", "\"node_index\" 1 without \"alloc\"" },
		{ "node_index", "-1", "\"node_index\" is not" },
		{ "ctl", "\"jobs/12.ctl\"", "\"ctl\" must be an absolute path" },
		{ "ctl", "7", "\"ctl\" is not a string" },
		{ "task_socket", "\"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", "longer than a socket path" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gded_job job;
		struct error err = { { 0 } };
		int r = parse_changed(cases[i].key, cases[i].value, &job, &err);

		CU_ASSERT_EQUAL(r, -EINVAL);
		if (!strstr(err.text, cases[i].text)) {
			fprintf(stderr, "alloc case %zu: \"%s\" lacks \"%s\"\n", i, err.text,
				cases[i].text);
			CU_FAIL("error text");
		}
		CU_ASSERT_PTR_NULL(job.alloc);
		CU_ASSERT_PTR_NULL(job.owner);
	}
	/* node_index past the end. */
	{
		json_t *o = json_loads(good_spec, 0, NULL);
		struct gded_job job;
		struct error err = { { 0 } };

		json_object_set_new(o, "alloc", json_loads(alloc3, 0, NULL));
		json_object_set_new(o, "node_index", json_integer(3));
		CU_ASSERT_EQUAL(gded_spec_parse(o, &job, &err), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "\"node_index\" 3 is outside \"alloc\" (3 nodes)"));
		json_decref(o);
	}
}

static void test_nodefile(void)
{
	struct gded_job job;
	struct error err = { { 0 } };
	char *text;
	size_t len;

	/* Across nodes: each name mpiprocs times, job order, on every node. */
	for (uint64_t idx = 0; idx < 3; idx++) {
		CU_ASSERT_EQUAL_FATAL(parse_multi(idx, &job, &err), 0);
		CU_ASSERT_EQUAL_FATAL(gded_nodefile_text(&job, &text, &len, &err), 0);
		CU_ASSERT_EQUAL(len, strlen("n1\nn1\nn2\nn2\nn3\nn3\n"));
		CU_ASSERT_NSTRING_EQUAL(text, "n1\nn1\nn2\nn2\nn3\nn3\n", len);
		free(text);
		gded_job_clear(&job);
	}
	/* One node: the node name once per CPU, as before. */
	CU_ASSERT_EQUAL_FATAL(parse_changed("ncpus", "3", &job, &err), 0);
	CU_ASSERT_EQUAL_FATAL(gded_nodefile_text(&job, &text, &len, &err), 0);
	CU_ASSERT_EQUAL(len, 9);
	CU_ASSERT_NSTRING_EQUAL(text, "n1\nn1\nn1\n", len);
	free(text);
	gded_job_clear(&job);
	/* mpiprocs 0 on a node: no line for it. */
	CU_ASSERT_EQUAL_FATAL(parse_changed("alloc", "[{\"node\": \"a\", \"ncpus\": 2, \"mpiprocs\": 1},"
					    " {\"node\": \"b\", \"ncpus\": 2, \"mpiprocs\": 0},"
					    " {\"node\": \"c\", \"ncpus\": 1}]", &job, &err), 0);
	CU_ASSERT_EQUAL_FATAL(gded_nodefile_text(&job, &text, &len, &err), 0);
	CU_ASSERT_NSTRING_EQUAL(text, "a\nc\n", len);
	CU_ASSERT_EQUAL(len, 4);
	free(text);
	gded_job_clear(&job);
}

static void test_env_multi(void)
{
	struct gded_job job;
	struct error err = { { 0 } };
	char **env;

	CU_ASSERT_EQUAL_FATAL(parse_multi(1, &job, &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NUM_NODES"), "3");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NUM_PPN"), "2");   /* entry 0's mpiprocs */
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NP"), "6");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NODENUM"), "1");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_TASKNUM"), "1");
	CU_ASSERT_STRING_EQUAL(env_get(env, "NCPUS"), "4");
	CU_ASSERT_STRING_EQUAL(env_get(env, "OMP_NUM_THREADS"), "3");   /* its ompthreads */
	CU_ASSERT_STRING_EQUAL(env_get(env, "QPOOL_TASK_SOCKET"), "/var/lib/qpool/nodes/n1/task.sock");
	CU_ASSERT_STRING_EQUAL(env_get(env, "QPOOL_HWLOC_XML"), "/var/lib/qpool/nodes/n1/topology.xml");
	/* Its own link's address, as qpoold saw it (alloc[1].addr). */
	CU_ASSERT_STRING_EQUAL(env_get(env, "QPOOL_NODE_ADDR"), "192.0.2.7");
	gded_env_free(env);
	gded_job_clear(&job);
	/* Node 0: 4 CPUs for 2 ranks, no ompthreads: 2 each; no addr given. */
	CU_ASSERT_EQUAL_FATAL(parse_multi(0, &job, &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_STRING_EQUAL(env_get(env, "OMP_NUM_THREADS"), "2");
	CU_ASSERT_PTR_NULL(env_get(env, "QPOOL_NODE_ADDR"));
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NODENUM"), "0");
	gded_env_free(env);
	gded_job_clear(&job);
	/* Node 2: 2 CPUs, 2 ranks: 1 each. */
	CU_ASSERT_EQUAL_FATAL(parse_multi(2, &job, &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_STRING_EQUAL(env_get(env, "OMP_NUM_THREADS"), "1");
	CU_ASSERT_STRING_EQUAL(env_get(env, "NCPUS"), "2");
	gded_env_free(env);
	gded_job_clear(&job);
	/* One node: the counts as before, no task socket unless given. */
	CU_ASSERT_EQUAL_FATAL(parse_text(good_spec, &job, &err), 0);
	env = gded_env_build(&job, NULL);
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NUM_NODES"), "1");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NP"), "8");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NUM_PPN"), "8");
	CU_ASSERT_PTR_NULL(env_get(env, "QPOOL_TASK_SOCKET"));
	CU_ASSERT_PTR_NULL(env_get(env, "QPOOL_HWLOC_XML"));
	gded_env_free(env);
	gded_job_clear(&job);
}

static void test_env_task(void)
{
	char *base[] = { "A=1", "PATH=/usr/bin", "PBS_TASKNUM=1", "HOME=/h", NULL };
	json_t *over = json_pack("{s:s, s:s}", "A", "2", "NEW", "x");
	char **env = gded_env_task(base, over, "5");

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_STRING_EQUAL(env_get(env, "A"), "2");          /* the task's wins */
	CU_ASSERT_STRING_EQUAL(env_get(env, "NEW"), "x");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PATH"), "/usr/bin");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_TASKNUM"), "5");
	CU_ASSERT_STRING_EQUAL(env[0], "A=2");                   /* in its place */
	gded_env_free(env);
	/* The task's own PBS_TASKNUM wins too; no overrides at all. */
	json_object_set_new(over, "PBS_TASKNUM", json_string("9"));
	env = gded_env_task(base, over, "5");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_TASKNUM"), "9");
	gded_env_free(env);
	/* The batch system's own variables stay this node's (qexec sends
	 * the first node's whole environment) */
	json_object_set_new(over, "TMPDIR", json_string("/tmp/node0"));
	json_object_set_new(over, "PBS_NODEFILE", json_string("/node0/nodes"));
	json_object_set_new(over, "QPOOL_HWLOC_XML", json_string("/node0/topology.xml"));
	json_object_set_new(over, "HOME", json_string("/elsewhere"));
	json_object_set_new(over, "OMP_NUM_THREADS", json_string("4"));
	json_object_set_new(over, "NCPUS", json_string("4"));
	{
		char *nb[] = { "TMPDIR=/tmp/node1", "PBS_NODEFILE=/node1/nodes", "HOME=/h", "NCPUS=2",
			       NULL };

		env = gded_env_task(nb, over, "5");
		CU_ASSERT_STRING_EQUAL(env_get(env, "TMPDIR"), "/tmp/node1");
		CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_NODEFILE"), "/node1/nodes");
		CU_ASSERT_PTR_NULL(env_get(env, "QPOOL_HWLOC_XML"));
		CU_ASSERT_STRING_EQUAL(env_get(env, "HOME"), "/h");
		CU_ASSERT_STRING_EQUAL(env_get(env, "NCPUS"), "2");     /* this node's share */
		CU_ASSERT_STRING_EQUAL(env_get(env, "OMP_NUM_THREADS"), "4");   /* the caller's */
		CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_TASKNUM"), "9");
		CU_ASSERT_STRING_EQUAL(env_get(env, "NEW"), "x");
		gded_env_free(env);
	}
	env = gded_env_task(base, NULL, "3");
	CU_ASSERT_STRING_EQUAL(env_get(env, "A"), "1");
	CU_ASSERT_STRING_EQUAL(env_get(env, "PBS_TASKNUM"), "3");
	CU_ASSERT_PTR_NULL(env_get(env, "NEW"));
	gded_env_free(env);
	json_decref(over);
}

static void test_result_sister(void)
{
	struct gded_result res = { .jobid = 12, .status = GDED_STATUS_EXITED, .sister = true };
	json_t *o = gded_result_json(&res);

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT(json_is_true(json_object_get(o, "sister")));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "exit_status")), 0);
	json_decref(o);
	res.sister = false;
	o = gded_result_json(&res);
	CU_ASSERT_PTR_NULL(json_object_get(o, "sister"));
	json_decref(o);
}

static void test_tmpdir_path(void)
{
	struct gded_job job = { .jobid = 12, .server = "srv", .node = "n2", .tmpdir_base = "/var/tmp" };
	char buf[64];

	CU_ASSERT_EQUAL(gded_tmpdir_path(&job, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/var/tmp/pbs.12.srv");
	/* A sister's differs from the primary's: both may share a host. */
	job.node_index = 1;
	CU_ASSERT_EQUAL(gded_tmpdir_path(&job, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/var/tmp/pbs.12.srv.n2");
	CU_ASSERT_EQUAL(gded_tmpdir_path(&job, buf, 20), -ENAMETOOLONG);
	job.tmpdir_base = "";
	CU_ASSERT_EQUAL(gded_tmpdir_path(&job, buf, sizeof(buf)), -ENOENT);
}

/* An output the user cannot create where asked is kept in HOME under
 * PBS's undelivered names; what sits under the name is still refused. */
static void test_undelivered(void)
{
	struct gded_job job = { .jobid = 12, .server = "srv", .node = "n2", .home = "/home/vcc",
				.stdout_path = "/gone/out", .stderr_path = "/gone/err" };
	char *d = unit_tmpdir(), path[4096], buf[512] = "", small[16];
	int errs[2] = { ENOENT, 0 };

	CU_ASSERT_EQUAL(gded_output_kept_path(&job, false, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/home/vcc/12.srv.OU");
	CU_ASSERT_EQUAL(gded_output_kept_path(&job, true, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/home/vcc/12.srv.ER");
	job.array_id = 7;
	job.array_index = 3;
	CU_ASSERT_EQUAL(gded_output_kept_path(&job, false, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/home/vcc/7[3].srv.OU");
	CU_ASSERT_EQUAL(gded_output_kept_path(&job, false, small, sizeof(small)), -ENAMETOOLONG);
	job.array_id = 0;
	job.home = "relative";
	CU_ASSERT_EQUAL(gded_output_kept_path(&job, false, buf, sizeof(buf)), -ENOENT);
	job.home = "/home/vcc";

	buf[0] = '\0';
	CU_ASSERT_TRUE(gded_undelivered_note(&job, errs, buf, sizeof(buf)));
	CU_ASSERT_STRING_EQUAL(buf, "output undelivered (/gone/out: No such file or directory): kept in "
			       "/home/vcc/12.srv.OU on n2");
	errs[0] = 0;
	buf[0] = '\0';
	CU_ASSERT_FALSE(gded_undelivered_note(&job, errs, buf, sizeof(buf)));
	CU_ASSERT_STRING_EQUAL(buf, "");
	snprintf(buf, sizeof(buf), "killed");
	errs[1] = EACCES;
	CU_ASSERT_TRUE(gded_undelivered_note(&job, errs, buf, sizeof(buf)));
	CU_ASSERT_STRING_EQUAL(buf, "killed; error undelivered (/gone/err: Permission denied): kept in "
			       "/home/vcc/12.srv.ER on n2");

	/* A missing directory, or a file where a directory should be: kept. */
	snprintf(path, sizeof(path), "%s/missing/out", d);
	CU_ASSERT_TRUE(gded_output_undeliverable(path, -ENOENT));
	snprintf(path, sizeof(path), "%s/file", d);
	CU_ASSERT_EQUAL_FATAL(close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)), 0);
	snprintf(path, sizeof(path), "%s/file/out", d);
	CU_ASSERT_TRUE(gded_output_undeliverable(path, -ENOTDIR));
	/* Something under the name: a link, or a file the user may not
	 * write, stays refused; so do errors of another kind. */
	snprintf(path, sizeof(path), "%s/link", d);
	CU_ASSERT_EQUAL_FATAL(symlink("/etc/passwd", path), 0);
	CU_ASSERT_FALSE(gded_output_undeliverable(path, -ELOOP));
	CU_ASSERT_FALSE(gded_output_undeliverable(path, -EACCES));
	snprintf(path, sizeof(path), "%s/file", d);
	CU_ASSERT_FALSE(gded_output_undeliverable(path, -EACCES));
	snprintf(path, sizeof(path), "%s/missing/out", d);
	CU_ASSERT_FALSE(gded_output_undeliverable(path, -EIO));
	unit_tmpdir_remove(d);
}

static bool mode_owner(const char *path, mode_t mode, uid_t uid)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == mode &&
	       st.st_uid == uid;
}

static void test_tmpdir_create(void)
{
	struct gded_job job = { .jobid = 12, .uid = 65534, .gid = 65534 };
	char *d = unit_tmpdir(), path[4096], want[4096], other[4096];
	int fd, fd2, holder;

	snprintf(want, sizeof(want), "%s/pbs.12.srv", d);
	/* Fresh: made, the user's, 0700, locked while fd is open. */
	snprintf(path, sizeof(path), "%s", want);
	fd = gded_tmpdir_create(&job, path, sizeof(path));
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_STRING_EQUAL(path, want);
	CU_ASSERT(mode_owner(path, 0700, 65534));
	unit_write_file(d, "pbs.12.srv/mine", "kept\n");
	/* Held: a second gded (another pool, the same id) gets a name of
	 * its own and leaves the first one's files alone. */
	fd2 = gded_tmpdir_create(&job, path, sizeof(path));
	CU_ASSERT_FATAL(fd2 >= 0);
	CU_ASSERT_EQUAL(strncmp(path, want, strlen(want)), 0);
	CU_ASSERT_EQUAL(strlen(path), strlen(want) + 7);
	CU_ASSERT(mode_owner(path, 0700, 65534));
	snprintf(other, sizeof(other), "%s/mine", want);
	CU_ASSERT_EQUAL(access(other, F_OK), 0);
	CU_ASSERT_EQUAL(tmpdir_remove(path), 0);
	close(fd2);
	/* Not held any more (its gded died): a former run's, made afresh. */
	close(fd);
	snprintf(path, sizeof(path), "%s", want);
	fd = gded_tmpdir_create(&job, path, sizeof(path));
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_STRING_EQUAL(path, want);
	CU_ASSERT_NOT_EQUAL(access(other, F_OK), 0);
	close(fd);
	/* Held by anybody (a user who made it first): left alone too. */
	holder = open(want, O_RDONLY | O_DIRECTORY);
	CU_ASSERT_FATAL(holder >= 0);
	CU_ASSERT_EQUAL(flock(holder, LOCK_EX | LOCK_NB), 0);
	fd = gded_tmpdir_create(&job, path, sizeof(path));
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_STRING_NOT_EQUAL(path, want);
	CU_ASSERT_EQUAL(tmpdir_remove(path), 0);
	close(fd);
	close(holder);
	CU_ASSERT_EQUAL(tmpdir_remove(want), 0);
	/* A link in its place is removed, its target neither entered nor
	 * given to the user. */
	snprintf(other, sizeof(other), "%s/target", d);
	CU_ASSERT_EQUAL(mkdir(other, 0755), 0);
	CU_ASSERT_EQUAL(symlink(other, want), 0);
	snprintf(path, sizeof(path), "%s", want);
	fd = gded_tmpdir_create(&job, path, sizeof(path));
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_STRING_EQUAL(path, want);
	CU_ASSERT(mode_owner(want, 0700, 65534));
	CU_ASSERT(mode_owner(other, 0755, 0));
	close(fd);
	/* No room for the other name: refused, nothing made. */
	holder = open(want, O_RDONLY | O_DIRECTORY);
	CU_ASSERT_EQUAL(flock(holder, LOCK_EX | LOCK_NB), 0);
	snprintf(path, sizeof(path), "%s", want);
	CU_ASSERT_EQUAL(gded_tmpdir_create(&job, path, strlen(want) + 3), -ENAMETOOLONG);
	close(holder);
	unit_tmpdir_remove(d);
}

/* A lost wrapper's TMPDIR: its PBS name and the names of its own beside
 * it, the job's user's and held by nobody, are removed; one held, one of
 * another user's, and names that only look alike stay. */
static void test_tmpdir_reap(void)
{
	const char *stay[] = { "pbs.7.srv.held00", "pbs.7.srv.other0", "pbs.7.srvx", "pbs.7.srv.abcdefg",
			       "pbs.77.srv", "pbs.7.srv.n2" };
	const char *gone[] = { "pbs.7.srv", "pbs.7.srv.Ab12Cd", "pbs.7.srv.zzzzzz" };
	char *d = unit_tmpdir(), path[4096], one[4096];
	int holder;

	for (size_t i = 0; i < sizeof(stay) / sizeof(stay[0]); i++) {
		snprintf(one, sizeof(one), "%s/%s", d, stay[i]);
		CU_ASSERT_EQUAL_FATAL(mkdir(one, 0700), 0);
		CU_ASSERT_EQUAL(chown(one, strcmp(stay[i], "pbs.7.srv.other0") ? 65534 : 65533, 65534), 0);
	}
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		snprintf(one, sizeof(one), "%s/%s", d, gone[i]);
		CU_ASSERT_EQUAL_FATAL(mkdir(one, 0700), 0);
		CU_ASSERT_EQUAL(chown(one, 65534, 65534), 0);
	}
	unit_write_file(d, "pbs.7.srv/a", "x\n");
	snprintf(one, sizeof(one), "%s/pbs.7.srv/sub", d);
	CU_ASSERT_EQUAL(mkdir(one, 0700), 0);
	snprintf(one, sizeof(one), "%s/pbs.7.srv.held00", d);
	holder = open(one, O_RDONLY | O_DIRECTORY);
	CU_ASSERT_FATAL(holder >= 0);
	CU_ASSERT_EQUAL(flock(holder, LOCK_EX | LOCK_NB), 0);

	CU_ASSERT_EQUAL(tmpdir_name(path, sizeof(path), d, 7, "srv", NULL), 0);
	CU_ASSERT_EQUAL(tmpdir_reap(path, 65534), 3);
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		snprintf(one, sizeof(one), "%s/%s", d, gone[i]);
		CU_ASSERT_NOT_EQUAL(access(one, F_OK), 0);
	}
	for (size_t i = 0; i < sizeof(stay) / sizeof(stay[0]); i++) {
		snprintf(one, sizeof(one), "%s/%s", d, stay[i]);
		CU_ASSERT_EQUAL(access(one, F_OK), 0);
	}
	/* Nothing left of its names: none removed, no error; no base: none. */
	CU_ASSERT_EQUAL(tmpdir_reap(path, 65534), 0);
	snprintf(one, sizeof(one), "%s/none/pbs.7.srv", d);
	CU_ASSERT_EQUAL(tmpdir_reap(one, 65534), 0);
	close(holder);
	unit_tmpdir_remove(d);
}

static const struct unit_test gded_spec_tests[] = {
	{ "reserve and realtime members", test_spec_reserve },
	{ "TMPDIR: made afresh, locked, another name when a running job holds it", test_tmpdir_create },
	{ "TMPDIR: a lost wrapper's reaped by name, owner and lock", test_tmpdir_reap },
	{ "spec: a full spec", test_spec_good },
	{ "spec: missing or wrong-typed members", test_spec_bad },
	{ "spec: join, mode none, not an object", test_spec_variants },
	{ "spec: load from file", test_spec_load },
	{ "environment", test_env },
	{ "environment_mpiprocs", test_env_mpiprocs },
	{ "environment: later values win, first places kept", test_env_dedupe },
	{ "environment: built in linear time", test_env_linear },
	{ "environment: above the cap is refused", test_env_cap },
	{ "result file", test_result },
	{ "spec: alloc, node_index, ctl, task_socket", test_spec_alloc },
	{ "spec: bad alloc shapes are refused with the place", test_spec_alloc_bad },
	{ "nodefile: one node per CPU, across nodes per MPI slot", test_nodefile },
	{ "environment across nodes", test_env_multi },
	{ "result: a sister says so", test_result_sister },
	{ "environment of a task", test_env_task },
	{ "TMPDIR: PBS's name, a sister's with its node", test_tmpdir_path },
	{ "undelivered output: kept in HOME, said where, links still refused", test_undelivered },
	{ NULL, NULL },
};

UNIT_SUITE(gded_spec, gded_spec_tests);
