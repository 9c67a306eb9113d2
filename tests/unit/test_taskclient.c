/* SPDX-License-Identifier: MIT */
/* The agents' relay (qpool-rsh, pbsdsh): what it does in the round its task ends. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "taskclient.h"
#include "unit.h"

/* The task's exit and the agent's stdin are ready in one poll: the relay
 * ends with the task's status, sends nothing more to its ended
 * connection, and keeps nothing it read (under the sanitizers a kept
 * task.in message fails the run as a leak). */
static void test_taskclient_exit_with_stdin_ready(void)
{
	struct wirebuf out = { 0 };
	struct taskclient t;
	int sv[2], in[2];
	json_t *exit_msg;
	char buf[64];

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	CU_ASSERT_EQUAL_FATAL(pipe2(in, O_CLOEXEC), 0);
	memset(&t, 0, sizeof(t));
	t.fd = sv[0];
	t.started = true;
	snprintf(t.host, sizeof(t.host), "n1");
	CU_ASSERT_EQUAL_FATAL(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);

	exit_msg = json_pack("{s:s, s:i}", "op", "task.exit", "status", 7);
	CU_ASSERT_EQUAL_FATAL(wire_queue(&out, exit_msg), 0);
	CU_ASSERT_EQUAL_FATAL(wire_flush(sv[1], &out), 0);
	CU_ASSERT_EQUAL_FATAL(write(in[1], "late stdin\n", 11), 11);

	CU_ASSERT_EQUAL(taskclient_relay(&t, 1, in[0], "unit"), 0);
	CU_ASSERT_TRUE(t.done);
	CU_ASSERT_EQUAL(t.status, 7);
	CU_ASSERT_EQUAL(t.fd, -1);
	/* Its end closed with nothing written after the exit. */
	CU_ASSERT_EQUAL(read(sv[1], buf, sizeof(buf)), 0);

	json_decref(exit_msg);
	wirebuf_free(&out);
	close(sv[1]);
	close(in[0]);
	close(in[1]);
}

/* qnoded shut its reading side (it sent the task's exit and closes)
 * while the agent still had stdin to pass: the failed send is not the
 * end. The task.exit that comes after is read, and its status is the
 * agent's, not 255 (t-rsh saw 255 once, under the sanitizers). */
static void test_taskclient_exit_after_failed_send(void)
{
	struct taskclient t;
	int sv[2], in[2], wst;
	pid_t pid;

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	CU_ASSERT_EQUAL_FATAL(pipe2(in, O_CLOEXEC), 0);
	memset(&t, 0, sizeof(t));
	t.fd = sv[0];
	t.started = true;
	t.status = 255;
	snprintf(t.host, sizeof(t.host), "n1");
	CU_ASSERT_EQUAL_FATAL(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	CU_ASSERT_EQUAL_FATAL(shutdown(sv[1], SHUT_RD), 0);
	CU_ASSERT_EQUAL_FATAL(write(in[1], "stdin\n", 6), 6);
	close(in[1]);

	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		struct wirebuf out = { 0 };
		int left = 1;

		/* Once the agent has taken its stdin, its send has failed:
		 * then the exit. Bounded: 10 s. */
		for (int i = 0; i < 10000 && left > 0; i++) {
			if (ioctl(in[0], FIONREAD, &left) < 0)
				_exit(2);
			if (left > 0)
				usleep(1000);
		}
		if (wire_queue(&out, json_pack("{s:s, s:i}", "op", "task.exit", "status", 7)) < 0 ||
		    wire_flush(sv[1], &out) != 0)
			_exit(3);
		_exit(left > 0 ? 4 : 0);
	}
	close(sv[1]);
	CU_ASSERT_EQUAL(taskclient_relay(&t, 1, in[0], "unit"), 0);
	CU_ASSERT_TRUE(t.done);
	CU_ASSERT_EQUAL(t.status, 7);
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &wst, 0), pid);
	CU_ASSERT_TRUE(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
	close(in[0]);
}

/* qnoded refused the connection before reading its task.start (a uid
 * past its share): the one frame has id 0, and the agent ends with 255
 * and that line. An "ok" with id 0 starts nothing. */
static void test_taskclient_refused_connection(void)
{
	struct wirebuf out = { 0 };
	struct taskclient t;
	int sv[2], err[2], saved;
	json_t *ok, *refusal;
	char line[256] = "";
	ssize_t n;

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	memset(&t, 0, sizeof(t));
	t.fd = sv[0];
	t.status = 255;
	snprintf(t.host, sizeof(t.host), "n1");
	CU_ASSERT_EQUAL_FATAL(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);

	ok = json_pack("{s:i, s:b}", "id", 0, "ok", 1);
	refusal = json_pack("{s:i, s:b, s:s}", "id", 0, "ok", 0, "error",
			    "uid 1002 holds 64 connections to node n1's task socket; at most 64");
	CU_ASSERT_EQUAL_FATAL(wire_queue(&out, ok), 0);
	CU_ASSERT_EQUAL_FATAL(wire_queue(&out, refusal), 0);
	CU_ASSERT_EQUAL_FATAL(wire_flush(sv[1], &out), 0);
	close(sv[1]);

	/* Its line goes to stderr: caught in a pipe. */
	CU_ASSERT_EQUAL_FATAL(pipe2(err, O_CLOEXEC), 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CU_ASSERT_FATAL(saved >= 0);
	dup2(err[1], STDERR_FILENO);
	CU_ASSERT_EQUAL(taskclient_relay(&t, 1, -1, "unit"), 0);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(err[1]);
	n = read(err[0], line, sizeof(line) - 1);
	close(err[0]);
	line[n > 0 ? n : 0] = '\0';
	CU_ASSERT_TRUE(t.done);
	CU_ASSERT_FALSE(t.started);
	CU_ASSERT_EQUAL(t.status, 255);
	CU_ASSERT_STRING_EQUAL(line, "unit: uid 1002 holds 64 connections to node n1's task socket; at most 64\n");

	json_decref(ok);
	json_decref(refusal);
	wirebuf_free(&out);
}

static const struct unit_test taskclient_tests[] = {
	{ "a task's exit with stdin ready in the same round", test_taskclient_exit_with_stdin_ready },
	{ "a connection refused before its task.start", test_taskclient_refused_connection },
	{ "a task's exit read after a send that failed", test_taskclient_exit_after_failed_send },
	{ NULL, NULL },
};

UNIT_SUITE(taskclient, taskclient_tests);
