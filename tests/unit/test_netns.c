/* SPDX-License-Identifier: MIT */
/* netns_id: the same text for this process and a child in its namespace,
 * another for a child in a new one, -ENOSPC for a short buffer. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns.h"
#include "unit.h"

static void test_netns_same(void)
{
	char a[80], b[80];
	const char *colon;

	CU_ASSERT_EQUAL_FATAL(netns_id(a, sizeof(a)), 0);
	CU_ASSERT_EQUAL(netns_id(b, sizeof(b)), 0);
	CU_ASSERT_STRING_EQUAL(a, b);
	colon = strrchr(a, ':');
	CU_ASSERT_PTR_NOT_NULL_FATAL(colon);
	CU_ASSERT(colon > a && colon[1] >= '1' && colon[1] <= '9');
	CU_ASSERT_EQUAL(strspn(colon + 1, "0123456789"), strlen(colon + 1));
}

static void test_netns_short(void)
{
	char a[80];

	CU_ASSERT_EQUAL(netns_id(a, 20), -ENOSPC);
}

/* A child that unshares its network namespace (root only) sees another
 * id: the one a sister there would compare with node 0's. */
static void test_netns_other(void)
{
	char a[80], b[80] = "";
	int p[2], st;
	pid_t pid;

	if (geteuid() != 0 || pipe(p) < 0)
		return;
	CU_ASSERT_EQUAL_FATAL(netns_id(a, sizeof(a)), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (unshare(CLONE_NEWNET) < 0)
			_exit(77);
		if (netns_id(b, sizeof(b)) < 0 || write(p[1], b, strlen(b) + 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], b, sizeof(b) - 1) < 0)
		b[0] = '\0';
	close(p[0]);
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return;   /* no namespaces here */
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CU_ASSERT(b[0] != '\0' && strcmp(a, b) != 0);
}

static const struct unit_test netns_tests[] = {
	{ "this process's id, twice the same", test_netns_same },
	{ "a short buffer", test_netns_short },
	{ "a new network namespace has another id", test_netns_other },
	{ NULL, NULL },
};

UNIT_SUITE(netns, netns_tests);
