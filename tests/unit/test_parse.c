/* SPDX-License-Identifier: MIT */
/* Table tests for lib/parse: sizes, walltimes, booleans, CPU lists. */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "parse.h"
#include "unit.h"

static void test_size(void)
{
	static const struct {
		const char *in;
		int r;
		uint64_t out;
	} cases[] = {
		{ "0", 0, 0 }, { "512", 0, 512 }, { "1k", 0, 1024 }, { "64K", 0, 65536 },
		{ "8M", 0, 8ULL << 20 }, { "8mb", 0, 8ULL << 20 }, { "150G", 0, 150ULL << 30 },
		{ "4GiB", 0, 4ULL << 30 }, { "1t", 0, 1ULL << 40 }, { "10b", 0, 10 },
		{ "", -EINVAL, 0 }, { "G", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "1.5G", -EINVAL, 0 },
		{ "8 G", -EINVAL, 0 }, { "8Q", -EINVAL, 0 }, { " 8", -EINVAL, 0 },
		{ "99999999999999999999", -ERANGE, 0 }, { "17179869184G", -ERANGE, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int r = size_parse(cases[i].in, &v);

		CU_ASSERT_EQUAL(r, cases[i].r);
		if (r == 0)
			CU_ASSERT_EQUAL(v, cases[i].out);
	}
}

static void test_size_format(void)
{
	char buf[32];

	size_format(8ULL << 30, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "8G");
	size_format(1536ULL << 20, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "1536M");
	size_format(1000, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "1000");
	size_format(0, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "0");
}

static void test_duration(void)
{
	static const struct {
		const char *in;
		int r;
		uint64_t out;
	} cases[] = {
		{ "0", 0, 0 }, { "90", 0, 90 }, { "1:30", 0, 90 }, { "01:00:00", 0, 3600 },
		{ "24:00:00", 0, 86400 }, { "100:00:00", 0, 360000 }, { "1:02:03:04", 0, 93784 },
		{ "1:60", -EINVAL, 0 }, { "1:00:60", -EINVAL, 0 }, { "1:24:00:00", -EINVAL, 0 },
		{ "", -EINVAL, 0 }, { ":", -EINVAL, 0 }, { "1:", -EINVAL, 0 }, { "a", -EINVAL, 0 },
		{ "1:2:3:4:5", -EINVAL, 0 }, { "-5", -EINVAL, 0 }, { "99999999999999999999", -ERANGE, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int r = duration_parse(cases[i].in, &v);

		CU_ASSERT_EQUAL(r, cases[i].r);
		if (r == 0)
			CU_ASSERT_EQUAL(v, cases[i].out);
	}
}

static void test_bool(void)
{
	bool b;

	CU_ASSERT(bool_parse("Yes", &b) == 0 && b);
	CU_ASSERT(bool_parse("off", &b) == 0 && !b);
	CU_ASSERT_EQUAL(bool_parse("maybe", &b), -EINVAL);
}

static void test_cpumask(void)
{
	static const struct {
		const char *in;
		int r;
		unsigned count;
		const char *out;
	} cases[] = {
		{ "", 0, 0, "" }, { "0", 0, 1, "0" }, { "0-3", 0, 4, "0-3" },
		{ "0-1,4,6-7\n", 0, 5, "0-1,4,6-7" }, { "3,2,1", 0, 3, "1-3" },
		{ "1023", 0, 1, "1023" }, { "1024", -ERANGE, 0, NULL },
		{ "3-1", -EINVAL, 0, NULL }, { "1,", -EINVAL, 0, NULL }, { "a", -EINVAL, 0, NULL },
		{ "1--2", -EINVAL, 0, NULL }, { "1 2", -EINVAL, 0, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cpumask m;
		char buf[256];
		int r = cpumask_parse(cases[i].in, &m);

		CU_ASSERT_EQUAL(r, cases[i].r);
		if (r != 0)
			continue;
		CU_ASSERT_EQUAL(cpumask_count(&m), cases[i].count);
		cpumask_format(&m, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, cases[i].out);
	}
}

static void test_cpumask_ops(void)
{
	struct cpumask a, b;

	CU_ASSERT_EQUAL(cpumask_parse("0-7", &a), 0);
	CU_ASSERT_EQUAL(cpumask_parse("2,5", &b), 0);
	CU_ASSERT(cpumask_subset(&b, &a));
	CU_ASSERT(!cpumask_subset(&a, &b));
	CU_ASSERT_EQUAL(cpumask_next(&b, 0), 2);
	CU_ASSERT_EQUAL(cpumask_next(&b, 3), 5);
	CU_ASSERT_EQUAL(cpumask_next(&b, 6), -1);
	cpumask_set(&b, 200);
	CU_ASSERT_EQUAL(cpumask_next(&b, 6), 200);
	cpumask_clear(&b, 200);
	CU_ASSERT(!cpumask_test(&b, 200));
}

/* Signals by name or number; a notice's "[B:]SIG[@SECONDS]". */
static void test_end_notice(void)
{
	static const char *const bad[] = {
		"", "@5", "R:USR1@5", "USR1@", "USR1@-1", "USR1@ 5", "USR1@5s", "USR1@65536",
		"B:", "USR1@99999999999999999999", "NOPE@5",
	};
	struct end_notice n;

	CU_ASSERT_EQUAL(signal_parse("USR1"), SIGUSR1);
	CU_ASSERT_EQUAL(signal_parse("sigterm"), SIGTERM);
	CU_ASSERT_EQUAL(signal_parse("10"), 10);
	CU_ASSERT_EQUAL(signal_parse("31"), -1);
	CU_ASSERT_EQUAL(signal_parse("NOPE"), -1);
	CU_ASSERT_EQUAL(signal_parse(""), -1);
	CU_ASSERT_EQUAL(end_notice_parse("USR1@60", &n), 0);
	CU_ASSERT(n.sig == SIGUSR1 && n.secs == 60 && !n.batch);
	CU_ASSERT_EQUAL(end_notice_parse("B:SIGUSR2@5", &n), 0);
	CU_ASSERT(n.sig == SIGUSR2 && n.secs == 5 && n.batch);
	CU_ASSERT_EQUAL(end_notice_parse("b:10", &n), 0);
	CU_ASSERT(n.sig == 10 && n.secs == END_NOTICE_SECS_DEFAULT && n.batch);
	CU_ASSERT_EQUAL(end_notice_parse("TERM@0", &n), 0);
	CU_ASSERT_EQUAL(n.secs, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(end_notice_parse(bad[i], &n), -EINVAL);
}

static const struct unit_test parse_tests[] = {
	{ "size", test_size },
	{ "size_format", test_size_format },
	{ "duration", test_duration },
	{ "bool", test_bool },
	{ "cpumask", test_cpumask },
	{ "cpumask_ops", test_cpumask_ops },
	{ "end_notice", test_end_notice },
	{ NULL, NULL },
};

UNIT_SUITE(parse, parse_tests);
