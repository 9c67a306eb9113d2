/* SPDX-License-Identifier: MIT */
/* Hooks out of process: input in, output back, the bound kept, floods and
 * hangs killed with what they started, paths a user could swap refused. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "hook.h"
#include "unit.h"

static char *sh_argv(const char *script, char *argv[4])
{
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = (char *)script;
	argv[3] = NULL;
	return argv[0];
}

static void test_hook_echo(void)
{
	static const char in[] = "{\"version\":1,\"job\":{\"id\":7}}";
	char *argv[4], buf[256];
	struct hook h;

	sh_argv("cat; echo done >&2", argv);
	CU_ASSERT_EQUAL_FATAL(hook_run(&h, "/bin/sh", argv, NULL, in, strlen(in), 0, 5000), 0);
	CU_ASSERT_EQUAL(h.outcome, HOOK_OK);
	CU_ASSERT_STRING_EQUAL(h.outbuf, in);
	CU_ASSERT_STRING_EQUAL(hook_err_line(&h, buf, sizeof(buf)), "done");
	hook_release(&h);
}

static void test_hook_env_clean(void)
{
	char *argv[4];
	struct hook h;

	setenv("QP_UNIT_SECRET", "leak", 1);
	sh_argv("env | sort; pwd", argv);
	CU_ASSERT_EQUAL_FATAL(hook_run(&h, "/bin/sh", argv, NULL, NULL, 0, 0, 5000), 0);
	CU_ASSERT_EQUAL(h.outcome, HOOK_OK);
	CU_ASSERT_PTR_NULL(strstr(h.outbuf, "QP_UNIT_SECRET"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h.outbuf, "PATH=/usr/sbin:/usr/bin:/sbin:/bin\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h.outbuf, "\n/\n"));
	hook_release(&h);
	unsetenv("QP_UNIT_SECRET");
}

static void test_hook_fail(void)
{
	char *argv[4], buf[256];
	struct hook h;

	sh_argv("echo 'no --nodelist for students' >&2; echo second >&2; exit 3", argv);
	CU_ASSERT_EQUAL_FATAL(hook_run(&h, "/bin/sh", argv, NULL, NULL, 0, 0, 5000), 0);
	CU_ASSERT_EQUAL(h.outcome, HOOK_FAILED);
	CU_ASSERT_STRING_EQUAL(hook_describe(&h, buf, sizeof(buf)),
			       "exit 3: no --nodelist for students");
	hook_release(&h);
}

/* A hook that hangs, with a child of its own that would hold its pipes:
 * both are gone at the bound, and the run ends near it. */
static void test_hook_timeout(void)
{
	char *argv[4], script[128];
	struct hook h;
	pid_t kid;
	FILE *f;
	char path[] = "/tmp/qp-unit-hook.XXXXXX";
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	snprintf(script, sizeof(script), "sleep 60 & echo $! > %s; sleep 60", path);
	sh_argv(script, argv);
	CU_ASSERT_EQUAL_FATAL(hook_run(&h, "/bin/sh", argv, NULL, NULL, 0, 0, 300), 0);
	CU_ASSERT_EQUAL(h.outcome, HOOK_TIMEOUT);
	CU_ASSERT(hook_elapsed_ms(&h) >= 300);
	f = fopen(path, "r");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_EQUAL(fscanf(f, "%d", &kid), 1);
	fclose(f);
	unlink(path);
	/* Killed with its group; reaped by init, so wait for it to go. */
	for (int i = 0; i < 500 && kill(kid, 0) == 0; i++)
		usleep(10000);
	CU_ASSERT(kill(kid, 0) < 0 && errno == ESRCH);
	hook_release(&h);
}

/* On an event loop (qnoded's health check, qpoold's hooks) the bound
 * counts from the hook's start, not from the loop's cached now: here the
 * loop spends 150 ms before it starts a hook bound to 300 ms, and the
 * hook is still killed after 300 ms or more, not at about 150. */
struct loop_hook {
	struct hook h;
	sd_event_source *deadline;
};

static int loop_hook_expire(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop_hook *l = userdata;

	hook_expire(&l->h);
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int loop_hook_start(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop_hook *l = userdata;
	char *argv[4];

	nanosleep(&(struct timespec){ .tv_nsec = 150 * 1000000L }, NULL);
	sh_argv("sleep 60", argv);
	CU_ASSERT_EQUAL_FATAL(hook_start(&l->h, "/bin/sh", argv, NULL, NULL, 0, 0), 0);
	CU_ASSERT(sd_event_add_time(sd_event_source_get_event(s), &l->deadline, CLOCK_MONOTONIC,
				    hook_deadline_us(&l->h, 300000), 1000, loop_hook_expire, l) >= 0);
	return 0;
}

static void test_hook_loop_bound(void)
{
	struct loop_hook l = { 0 };
	sd_event *e = NULL;

	CU_ASSERT_FATAL(sd_event_new(&e) >= 0);
	CU_ASSERT_FATAL(sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, 0, 1, loop_hook_start, &l) >= 0);
	CU_ASSERT(sd_event_loop(e) >= 0);
	CU_ASSERT_EQUAL(l.h.outcome, HOOK_TIMEOUT);
	CU_ASSERT(hook_elapsed_ms(&l.h) >= 300);
	hook_release(&l.h);
	sd_event_source_unref(l.deadline);
	sd_event_unref(e);
}

static void test_hook_flood(void)
{
	char *argv[4];
	struct hook h;

	sh_argv("yes 0123456789abcdef", argv);
	CU_ASSERT_EQUAL_FATAL(hook_run(&h, "/bin/sh", argv, NULL, NULL, 0, 1024 * 1024, 10000), 0);
	CU_ASSERT_EQUAL(h.outcome, HOOK_OVERFLOW);
	CU_ASSERT(h.out_len > 1024 * 1024);
	CU_ASSERT(h.out_len <= 1024 * 1024 + 4096);
	hook_release(&h);
}

/* Output written just before exit, larger than a pipe holds, arrives
 * whole; a hook that never reads its input still ends. */
static void test_hook_big_and_deaf(void)
{
	static char in[256 * 1024];
	char *argv[4];
	struct hook h;

	memset(in, 'x', sizeof(in));
	sh_argv("head -c 200000 /dev/zero | tr '\\0' y", argv);
	CU_ASSERT_EQUAL_FATAL(hook_run(&h, "/bin/sh", argv, NULL, in, sizeof(in), 0 + 300000, 5000), 0);
	CU_ASSERT_EQUAL(h.outcome, HOOK_OK);
	CU_ASSERT_EQUAL(h.out_len, 200000);
	hook_release(&h);
}

static void test_hook_nostart(void)
{
	char *argv[] = { "nothing", NULL }, buf[256];
	struct hook h;

	CU_ASSERT_EQUAL(hook_run(&h, "/nonexistent/hook", argv, NULL, NULL, 0, 0, 1000), -ENOENT);
	CU_ASSERT_EQUAL(h.outcome, HOOK_NOSTART);
	CU_ASSERT_STRING_EQUAL(hook_describe(&h, buf, sizeof(buf)),
			       "could not start: No such file or directory");
	hook_release(&h);
}

static void test_hook_path_check(void)
{
	char dir[] = "/tmp/qp-unit-hookdir.XXXXXX", f[64], why[256];
	int fd;

	CU_ASSERT_EQUAL(hook_path_check("/bin/sh", why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(hook_path_check("bin/sh", why, sizeof(why)), -EINVAL);
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(f, sizeof(f), "%s/hook", dir);
	fd = open(f, O_CREAT | O_WRONLY, 0755);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	chmod(dir, 0755);
	chmod(f, 0755);
	CU_ASSERT_EQUAL(hook_path_check(f, why, sizeof(why)), 0);
	chmod(f, 0775);
	CU_ASSERT_EQUAL(hook_path_check(f, why, sizeof(why)), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "writable by its group"));
	chmod(f, 0644);
	CU_ASSERT_EQUAL(hook_path_check(f, why, sizeof(why)), -EACCES);
	chmod(f, 0755);
	chmod(dir, 0777);
	CU_ASSERT_EQUAL(hook_path_check(f, why, sizeof(why)), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "writable by others"));
	chmod(dir, 0755);
	if (geteuid() == 0) {
		CU_ASSERT_EQUAL(chown(f, 65534, 0), 0);
		CU_ASSERT_EQUAL(hook_path_check(f, why, sizeof(why)), -EPERM);
		CU_ASSERT_PTR_NOT_NULL(strstr(why, "not root"));
	}
	unlink(f);
	rmdir(dir);
	CU_ASSERT_EQUAL(hook_path_check(dir, why, sizeof(why)), -ENOENT);
}

static const struct unit_test hook_tests[] = {
	{ "input in, output and stderr back", test_hook_echo },
	{ "a clean environment, cwd /", test_hook_env_clean },
	{ "a failure told with its first stderr line", test_hook_fail },
	{ "a hang killed at its bound with its children", test_hook_timeout },
	{ "on an event loop, the bound counts from the hook's start", test_hook_loop_bound },
	{ "a flood killed past its output bound", test_hook_flood },
	{ "big output whole, unread input harmless", test_hook_big_and_deaf },
	{ "a hook that cannot start", test_hook_nostart },
	{ "paths a user could swap are refused", test_hook_path_check },
	{ NULL, NULL },
};

UNIT_SUITE(hook, hook_tests);
