/* SPDX-License-Identifier: MIT */
/* The agents' relay (qpool-rsh, pbsdsh): what it does in the round its task ends. */
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
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

static const struct unit_test taskclient_tests[] = {
	{ "a task's exit with stdin ready in the same round", test_taskclient_exit_with_stdin_ready },
	{ NULL, NULL },
};

UNIT_SUITE(taskclient, taskclient_tests);
