/* SPDX-License-Identifier: MIT */
/* Journal or stderr: JOURNAL_STREAM against stderr, and the fields read from a message. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "log-journal.h"
#include "unit.h"

static void test_stream_selection(void)
{
	char *dir = unit_tmpdir();
	char path[4096], env[64], other[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/stream", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(fstat(fd, &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	snprintf(other, sizeof(other), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	CU_ASSERT_TRUE(log_journal_stream_is(env, fd));
	/* Another file (stderr redirected since systemd set the variable). */
	CU_ASSERT_FALSE(log_journal_stream_is(other, fd));
	CU_ASSERT_FALSE(log_journal_stream_is(NULL, fd));
	CU_ASSERT_FALSE(log_journal_stream_is("", fd));
	CU_ASSERT_FALSE(log_journal_stream_is("journal", fd));
	strcat(env, "x");
	CU_ASSERT_FALSE(log_journal_stream_is(env, fd));
	close(fd);
	CU_ASSERT_FALSE(log_journal_stream_is(other, fd));  /* closed */
	unit_tmpdir_remove(dir);

	/* The daemons' set-up follows the variable: unset, stderr stays. */
	unsetenv("JOURNAL_STREAM");
	CU_ASSERT_FALSE(log_journal_setup("n1"));
	CU_ASSERT_EQUAL_FATAL(fstat(STDERR_FILENO, &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	CU_ASSERT_EQUAL(log_journal_setup("n1"), access(LOG_JOURNAL_SOCKET, W_OK) == 0);
	log_sink_set(NULL);
	unsetenv("JOURNAL_STREAM");
}

static void test_fields(void)
{
	static const struct {
		const char *msg;
		long long jobid;
		const char *node, *user;
	} cases[] = {
		{ "job 12: node n3 does not have it; requeued", 12, "n3", "" },
		{ "job 7 cancelled by uid 0", 7, "", "" },
		{ "job 9, node n1.a-b, user alice: done", 9, "n1.a-b", "alice" },
		{ "node n2 lost (unreachable for 30s)", 0, "n2", "" },
		{ "registered with qpoold as node big-7 (3 running)", 0, "big-7", "" },
		{ "jobs 12 still running", 0, "", "" },
		{ "job twelve", 0, "", "" },
		{ "subnode x and superuser y", 0, "", "" },
		{ "queue batch: disabled by user bob", 0, "", "bob" },
		{ "connection of pid 3 uid 5: closing it", 0, "", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct log_journal_fields f;

		log_journal_fields_parse(cases[i].msg, &f);
		if (f.jobid != cases[i].jobid || strcmp(f.node, cases[i].node) || strcmp(f.user, cases[i].user))
			fprintf(stderr, "\n  '%s': job %lld node '%s' user '%s'", cases[i].msg,
				(long long)f.jobid, f.node, f.user);
		CU_ASSERT_EQUAL(f.jobid, cases[i].jobid);
		CU_ASSERT_STRING_EQUAL(f.node, cases[i].node);
		CU_ASSERT_STRING_EQUAL(f.user, cases[i].user);
	}
}

static const struct unit_test log_tests[] = {
	{ "stream_selection", test_stream_selection },
	{ "fields", test_fields },
	{ NULL, NULL },
};

UNIT_SUITE(log, log_tests);
