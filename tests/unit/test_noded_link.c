/* SPDX-License-Identifier: MIT */
/* qnoded's link to qpoold through its table (noded/nodeops.c): a node on a
 * temporary state directory whose link holds one end of a socketpair
 * (link_create_fd), the test playing qpoold at the other, frames written
 * and read as qpoold does (lib/wire). Each row of the table reached
 * (job.launch and job.signal on a simulated node and on a real one whose
 * job files are written, task.* to a real tasks.c), the registration and
 * the ops held until its answer, a heartbeat, an unknown op answered with
 * an error, names a row must not take, and malformed frames: each one log
 * line, the link still serving (or, for a broken frame, dropped). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "noded.h"
#include "unit.h"
#include "wire.h"

#define NO_SUCH_UID 3999999999LL   /* a uid no host has */

/* The log lines of warn and err level since the last look. */
static unsigned log_lines;
static char log_last[512];

static void log_count(enum log_level level, const char *prog, const char *msg)
{
	if (level > LOG_LEVEL_WARN)
		return;
	log_lines++;
	snprintf(log_last, sizeof(log_last), "%s", msg);
}

struct fx {
	char *dir;
	struct config *config;
	sd_event *e;
	struct noded nd;
	int srv;                  /* qpoold's end */
	struct wirebuf in;
};

/* A node n1 of the pool in a temporary directory, simulated or real (its
 * node and jobs directories made, tasks.c listening), its link on a
 * socketpair; node.register read and, when answer, answered ok. */
static void fx_up(struct fx *f, bool simulated, bool answer);

static json_t *fx_next(struct fx *f, unsigned ms);

static void fx_send(struct fx *f, json_t *msg)
{
	struct wirebuf out = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
	CU_ASSERT_EQUAL_FATAL(wire_queue(&out, msg), 0);
	CU_ASSERT_EQUAL(write(f->srv, out.data, out.len), (ssize_t)out.len);
	wirebuf_free(&out);
	json_decref(msg);
}

/* The loop run for about ms, whatever comes. */
static void fx_run(struct fx *f, unsigned ms)
{
	for (unsigned i = 0; i < ms / 10; i++)
		(void)sd_event_run(f->e, 10000);
}

/* The next frame from the node within ms (the loop run meanwhile); a
 * heartbeat is answered ok and skipped. NULL when none came. */
static json_t *fx_next(struct fx *f, unsigned ms)
{
	struct error err = { "" };
	json_t *msg;

	for (unsigned i = 0; i <= ms / 10; i++) {
		int r = wire_next(&f->in, &msg, &err);

		CU_ASSERT_FATAL(r >= 0);
		if (r == 1 && !strcmp(wire_str(msg, "op") ?: "", "node.heartbeat")) {
			fx_send(f, json_pack("{s:I, s:b}", "id", (json_int_t)wire_int(msg, "id", 0), "ok", 1));
			json_decref(msg);
			continue;
		}
		if (r == 1)
			return msg;
		(void)sd_event_run(f->e, 10000);
		while (wire_read(f->srv, &f->in) > 0)
			;
	}
	return NULL;
}

/* The next frame, which must be op's; NULL (and a failure) otherwise. */
static json_t *fx_expect(struct fx *f, const char *op)
{
	json_t *msg = fx_next(f, 5000);

	CU_ASSERT_PTR_NOT_NULL(msg);
	if (msg && strcmp(wire_str(msg, "op") ?: "(none)", op) != 0) {
		fprintf(stderr, "test_noded_link: expected %s, got %s\n", op, wire_str(msg, "op") ?: "(no op)");
		CU_FAIL("another frame");
		json_decref(msg);
		return NULL;
	}
	return msg;
}

static void fx_up(struct fx *f, bool simulated, bool answer)
{
	char path[4096], text[8192];
	struct error err = { "" };
	json_t *reg;
	int sv[2];

	memset(f, 0, sizeof(*f));
	f->srv = -1;
	f->dir = unit_tmpdir();
	snprintf(text, sizeof(text),
		 "[server]\nstate_dir = %s/state\nsocket = %s/nobody-listens.sock\n"
		 "heartbeat_interval = 1\nnode_timeout = 30\n"
		 "[node]\njobs_tmpfs = no\n", f->dir, f->dir);   /* no mount from a unit test */
	unit_write_file(f->dir, "qpool.conf", text);
	snprintf(path, sizeof(path), "%s/qpool.conf", f->dir);
	CU_ASSERT_EQUAL_FATAL(config_load(path, &f->config, &err), 0);
	CU_ASSERT_EQUAL_FATAL(sd_event_new(&f->e), 0);
	f->nd = (struct noded){ .config = f->config, .name = "n1", .proc_root = "/proc", .event = f->e,
				.cgroup_mode = CGROUP_MODE_NONE, .jobs_dirfd = -1, .held_dirfd = -1, .simulated = simulated,
				.topo_xml = (char *)"core:2 pu:1", .cgroup_lock_fd = -1 };
	snprintf(f->nd.rt_reason, sizeof(f->nd.rt_reason), "unit test");
	CU_ASSERT_EQUAL_FATAL(sim_topology_describe("core:2 pu:1", &f->nd.topo, &err), 0);
	if (!simulated) {
		CU_ASSERT_EQUAL_FATAL(noded_dirs_open(&f->nd, &err), 0);
		f->nd.users = usercache_create();
		CU_ASSERT_PTR_NOT_NULL_FATAL(f->nd.users);
		if (tasks_create(&f->nd, &f->nd.tasks, &err) < 0)
			fprintf(stderr, "test_noded_link: %s\n", err.text);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f->nd.tasks);
	}
	CU_ASSERT_EQUAL_FATAL(jobs_create(&f->nd, &f->nd.jobs), 0);
	log_sink_set(log_count);
	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	CU_ASSERT_EQUAL_FATAL(link_create_fd(&f->nd, &nodeops_link_handlers, sv[0], &f->nd.link), 0);
	f->srv = sv[1];
	CU_ASSERT_EQUAL_FATAL(fcntl(f->srv, F_SETFL, O_NONBLOCK), 0);
	reg = fx_expect(f, "node.register");
	CU_ASSERT_PTR_NOT_NULL_FATAL(reg);
	CU_ASSERT_STRING_EQUAL(wire_str(reg, "name"), "n1");
	CU_ASSERT_STRING_EQUAL(wire_str(reg, "cpus"), "0-1");
	CU_ASSERT_EQUAL(json_array_size(json_object_get(reg, "running")), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(reg, "results")), 0);
	CU_ASSERT(wire_int(reg, "id", 0) > 0);
	CU_ASSERT_FALSE(link_registered(f->nd.link));
	if (answer) {
		fx_send(f, json_pack("{s:I, s:b, s:i}", "id", (json_int_t)wire_int(reg, "id", 0), "ok", 1, "epoch", 1));
		for (int i = 0; i < 500 && !link_registered(f->nd.link); i++)
			(void)sd_event_run(f->e, 10000);
		CU_ASSERT_TRUE_FATAL(link_registered(f->nd.link));
	}
	json_decref(reg);
	log_lines = 0;
}

static void fx_down(struct fx *f)
{
	log_sink_set(NULL);
	link_destroy(f->nd.link);
	tasks_destroy(f->nd.tasks);
	jobs_destroy(f->nd.jobs);
	usercache_destroy(f->nd.users);
	if (f->nd.jobs_dirfd >= 0)
		close(f->nd.jobs_dirfd);
	if (f->nd.held_dirfd >= 0)
		close(f->nd.held_dirfd);
	if (f->srv >= 0)
		close(f->srv);
	wirebuf_free(&f->in);
	sd_event_unref(f->e);
	config_destroy(f->config);
	unit_tmpdir_remove(f->dir);
}

/* job.launch of a simulated job that runs secs (QPOOL_SIM_RUNTIME), as
 * op (job.launch, or a name that must not reach it). */
static json_t *launch_msg(const char *op, long long jobid, const char *secs)
{
	return json_pack("{s:s, s:i, s:{s:I, s:i, s:i, s:s, s:{s:s}}}", "op", op, "id", 0, "job", "jobid",
			 (json_int_t)jobid, "uid", 0, "walltime", 600, "script", "#!/bin/sh\n", "env",
			 "QPOOL_SIM_RUNTIME", secs);
}

/* The job.done of jobid, answered ok; its result's status. */
static void expect_done(struct fx *f, long long jobid, const char *status, char *ret_reason, size_t len)
{
	json_t *done = fx_expect(f, "job.done");
	const json_t *result = json_object_get(done, "result");

	CU_ASSERT_EQUAL(wire_int(done, "jobid", 0), jobid);
	CU_ASSERT_STRING_EQUAL(wire_str(result, "status") ?: "", status);
	if (ret_reason)
		snprintf(ret_reason, len, "%s", wire_str(result, "reason") ?: "");
	if (done)
		fx_send(f, json_pack("{s:I, s:b}", "id", (json_int_t)wire_int(done, "id", 0), "ok", 1));
	json_decref(done);
	for (int i = 0; i < 100 && jobs_running_count(f->nd.jobs); i++)
		(void)sd_event_run(f->e, 10000);
}

/* An unknown op's answer: the op's id, not ok, EOPNOTSUPP, its name. */
static void expect_unknown(struct fx *f, const char *op)
{
	json_t *m = fx_next(f, 2000);
	char want[128];

	snprintf(want, sizeof(want), "unknown op %s", op);
	CU_ASSERT_PTR_NOT_NULL(m);
	CU_ASSERT_PTR_NULL(json_object_get(m, "op"));
	CU_ASSERT_EQUAL(wire_int(m, "id", -1), 0);
	CU_ASSERT_FALSE(wire_bool(m, "ok", 1));
	CU_ASSERT_EQUAL(wire_int(m, "errno", 0), EOPNOTSUPP);
	CU_ASSERT_STRING_EQUAL(wire_str(m, "error") ?: "", want);
	json_decref(m);
}

/* job.launch reaches jobs.c: a simulated job ends at once and its
 * job.done comes; once answered ok the node holds nothing. */
static void test_job_launch(void)
{
	struct fx f;

	fx_up(&f, true, true);
	fx_send(&f, launch_msg("job.launch", 5, "0"));
	expect_done(&f, 5, "exited", NULL, 0);
	CU_ASSERT_EQUAL(jobs_running_count(f.nd.jobs), 0);
	CU_ASSERT_EQUAL(log_lines, 0);
	fx_down(&f);
}

/* job.signal reaches jobs.c: a simulated job of ten minutes ends by the
 * signal sent, at once. */
static void test_job_signal(void)
{
	struct fx f;
	json_t *done, *m;

	fx_up(&f, true, true);
	fx_send(&f, launch_msg("job.launch", 6, "600"));
	fx_run(&f, 50);
	CU_ASSERT_EQUAL(jobs_running_count(f.nd.jobs), 1);
	CU_ASSERT_PTR_NULL(m = fx_next(&f, 50));
	json_decref(m);
	fx_send(&f, json_pack("{s:s, s:i, s:i, s:i}", "op", "job.signal", "id", 0, "jobid", 6, "signal", 15));
	done = fx_expect(&f, "job.done");
	CU_ASSERT_EQUAL(wire_int(json_object_get(done, "result"), "exit_signal", 0), 15);
	CU_ASSERT_TRUE(wire_bool(json_object_get(done, "result"), "cancelled", 0));
	json_decref(done);
	fx_down(&f);
}

/* A real node: job.launch for a uid no host has writes its failure to
 * jobs/<id>.result before job.done goes; qpoold's ok removes the file. */
static void test_job_launch_files(void)
{
	char reason[256];
	struct fx f;
	json_t *m;

	fx_up(&f, false, true);
	m = launch_msg("job.launch", 7, "0");
	json_object_set_new(json_object_get(m, "job"), "uid", json_integer(NO_SUCH_UID));
	fx_send(&f, m);
	m = fx_next(&f, 5000);
	CU_ASSERT_STRING_EQUAL(wire_str(m, "op") ?: "", "job.done");
	CU_ASSERT_EQUAL(faccessat(f.nd.jobs_dirfd, "7.result", F_OK, 0), 0);
	CU_ASSERT_STRING_EQUAL(wire_str(json_object_get(m, "result"), "status") ?: "", "failed");
	snprintf(reason, sizeof(reason), "%s", wire_str(json_object_get(m, "result"), "reason") ?: "");
	CU_ASSERT(strstr(reason, "no user with uid 3999999999 on node n1") != NULL);
	fx_send(&f, json_pack("{s:I, s:b}", "id", (json_int_t)wire_int(m, "id", 0), "ok", 1));
	json_decref(m);
	for (int i = 0; i < 100 && faccessat(f.nd.jobs_dirfd, "7.result", F_OK, 0) == 0; i++)
		(void)sd_event_run(f.e, 10000);
	CU_ASSERT_NOT_EQUAL(faccessat(f.nd.jobs_dirfd, "7.result", F_OK, 0), 0);
	fx_down(&f);
}

/* task.* reaches tasks.c: a task.start into a job that does not run here
 * is refused to the node that asked, through qpoold. */
static void test_task_start(void)
{
	struct fx f;
	json_t *m;

	fx_up(&f, false, true);
	fx_send(&f, json_pack("{s:s, s:i, s:i, s:s, s:s, s:[s]}", "op", "task.start", "id", 0, "jobid", 9, "from",
			      "n2", "task", "t1", "argv", "true"));
	m = fx_expect(&f, "task.started");
	CU_ASSERT_STRING_EQUAL(wire_str(m, "to") ?: "", "n2");
	CU_ASSERT_STRING_EQUAL(wire_str(m, "task") ?: "", "t1");
	CU_ASSERT_EQUAL(wire_int(m, "jobid", 0), 9);
	CU_ASSERT_FALSE(wire_bool(m, "ok", 1));
	CU_ASSERT_STRING_EQUAL(wire_str(m, "error") ?: "", "job 9 is ending on n1");
	json_decref(m);
	fx_down(&f);
}

/* Ops that come before the registration's answer wait for it (the
 * server's epoch is not known yet), then run in order. */
static void test_early_ops(void)
{
	struct fx f;
	json_t *m;

	fx_up(&f, true, false);
	fx_send(&f, launch_msg("job.launch", 11, "0"));
	fx_send(&f, json_pack("{s:s, s:i}", "op", "job.early", "id", 0));
	fx_run(&f, 50);
	CU_ASSERT_PTR_NULL(m = fx_next(&f, 50));
	json_decref(m);
	CU_ASSERT_EQUAL(jobs_running_count(f.nd.jobs), 0);
	/* node.register was id 1. */
	fx_send(&f, json_pack("{s:i, s:b, s:i}", "id", 1, "ok", 1, "epoch", 1));
	expect_unknown(&f, "job.early");
	expect_done(&f, 11, "exited", NULL, 0);
	CU_ASSERT_TRUE(link_registered(f.nd.link));
	fx_down(&f);
}

/* The heartbeat goes every heartbeat_interval (1 s here); a refusal is
 * one line and the link stays. */
static void test_heartbeat(void)
{
	struct error err = { "" };
	struct fx f;
	json_t *m = NULL;
	int r = 0;

	fx_up(&f, true, true);
	for (int i = 0; i < 300 && r == 0; i++) {
		(void)sd_event_run(f.e, 10000);
		while (wire_read(f.srv, &f.in) > 0)
			;
		r = wire_next(&f.in, &m, &err);
	}
	CU_ASSERT_EQUAL_FATAL(r, 1);
	CU_ASSERT_STRING_EQUAL(wire_str(m, "op") ?: "", "node.heartbeat");
	fx_send(&f, json_pack("{s:I, s:b, s:s}", "id", (json_int_t)wire_int(m, "id", 0), "ok", 0, "error",
			      "busy"));
	json_decref(m);
	fx_run(&f, 50);
	CU_ASSERT_EQUAL(log_lines, 1);
	CU_ASSERT_STRING_EQUAL(log_last, "qpoold refused a heartbeat: busy");
	CU_ASSERT_TRUE(link_registered(f.nd.link));
	fx_down(&f);
}

/* An op no row names: one line, an error answer, the link unharmed. */
static void test_unknown_op(void)
{
	struct fx f;

	fx_up(&f, true, true);
	fx_send(&f, json_pack("{s:s, s:i}", "op", "node.nosuch", "id", 0));
	expect_unknown(&f, "node.nosuch");
	CU_ASSERT_EQUAL(log_lines, 1);
	CU_ASSERT(strstr(log_last, "unknown op \"node.nosuch\"") != NULL);
	CU_ASSERT_TRUE(link_registered(f.nd.link));
	fx_send(&f, launch_msg("job.launch", 12, "0"));
	expect_done(&f, 12, "exited", NULL, 0);
	fx_down(&f);
}

/* A row takes its own name only, a family row ("task.") names with its
 * prefix only: none of these reaches job.launch (its job would run and
 * report) nor tasks.c. */
static void test_names(void)
{
	static const char *const names[] = {
		"job.launchx", "job.launch.x", "job.", "job", "jobs.launch", "Job.launch", "task", "tasks.start",
		"taskx.start", "", " job.launch",
	};
	struct fx f;
	json_t *m;

	fx_up(&f, true, true);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fx_send(&f, launch_msg(names[i], 20 + (long long)i, "0"));
		expect_unknown(&f, names[i]);
	}
	CU_ASSERT_EQUAL(log_lines, sizeof(names) / sizeof(names[0]));
	CU_ASSERT_EQUAL(jobs_running_count(f.nd.jobs), 0);
	/* A name of the family is the family's (tasks.c's, none on a
	 * simulated node): no error answer. */
	log_lines = 0;
	fx_send(&f, json_pack("{s:s, s:i, s:i, s:s}", "op", "task.nosuch", "id", 0, "jobid", 9, "task", "t1"));
	fx_run(&f, 50);
	CU_ASSERT_PTR_NULL(m = fx_next(&f, 50));
	json_decref(m);
	CU_ASSERT_EQUAL(log_lines, 0);
	CU_ASSERT_TRUE(link_registered(f.nd.link));
	fx_down(&f);
}

/* Frames that are JSON but wrong: no op, an op not a string, an answer
 * to no request, members of the wrong type. Each one line, no answer,
 * the link still serving. */
static void test_malformed(void)
{
	json_t *bad[] = {
		json_pack("{s:i, s:i}", "id", 0, "x", 1),
		json_pack("{s:i, s:i}", "op", 5, "id", 0),
		json_pack("{s:i, s:b}", "id", 999, "ok", 1),
		json_pack("{s:s, s:i, s:s}", "op", "job.launch", "id", 0, "job", "7"),
		json_pack("{s:s, s:i, s:s, s:i}", "op", "job.signal", "id", 0, "jobid", "7", "signal", 15),
		json_pack("{s:s, s:i, s:i, s:s}", "op", "job.signal", "id", 0, "jobid", 7, "signal", "TERM"),
		json_pack("{s:s, s:s, s:{s:i}}", "op", "job.launch", "id", "x", "job", "jobid", -1),
	};
	struct fx f;
	json_t *m;

	fx_up(&f, true, true);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		log_lines = 0;
		fx_send(&f, bad[i]);
		fx_run(&f, 20);
		CU_ASSERT_PTR_NULL(m = fx_next(&f, 20));
		json_decref(m);
		if (log_lines != 1)
			fprintf(stderr, "test_noded_link: malformed frame %zu: %u lines\n", i, log_lines);
		CU_ASSERT_EQUAL(log_lines, 1);
		CU_ASSERT_TRUE(link_registered(f.nd.link));
	}
	fx_send(&f, launch_msg("job.launch", 13, "0"));
	expect_done(&f, 13, "exited", NULL, 0);
	fx_down(&f);
}

/* A frame whose body is not JSON: the stream cannot be read on, so the
 * link is dropped with one line, and the node lives on (reconnecting). */
static void test_not_json(void)
{
	static const char frame[] = { 0, 0, 0, 8, 'n', 'o', 't', ' ', 'j', 's', 'o', 'n' };
	struct fx f;

	fx_up(&f, true, true);
	CU_ASSERT_EQUAL(write(f.srv, frame, sizeof(frame)), (ssize_t)sizeof(frame));
	for (int i = 0; i < 100 && link_registered(f.nd.link); i++)
		(void)sd_event_run(f.e, 1000);
	CU_ASSERT_FALSE(link_registered(f.nd.link));
	CU_ASSERT_EQUAL(log_lines, 1);
	CU_ASSERT(strstr(log_last, "from qpoold: ") == log_last);
	CU_ASSERT(strstr(log_last, "; reconnecting") != NULL);
	fx_down(&f);
}

static const struct unit_test noded_link_tests[] = {
	{ "job_launch", test_job_launch },
	{ "job_signal", test_job_signal },
	{ "job_launch_files", test_job_launch_files },
	{ "task_start", test_task_start },
	{ "early_ops", test_early_ops },
	{ "heartbeat", test_heartbeat },
	{ "unknown_op", test_unknown_op },
	{ "names", test_names },
	{ "malformed", test_malformed },
	{ "not_json", test_not_json },
	{ NULL, NULL },
};

UNIT_SUITE(noded_link, noded_link_tests);
