/* SPDX-License-Identifier: MIT */
/* lib/pbsqmgr: PBS qmgr directives, from a table. */
#include <string.h>

#include "pbsqmgr.h"
#include "unit.h"

static void test_parse_ok(void)
{
	static const struct {
		const char *line;
		enum pbsqmgr_verb verb;
		enum pbsqmgr_object object;
		const char *name, *attr, *value;
	} cases[] = {
		{ "set queue batch enabled = False", PBSQMGR_SET, PBSQMGR_QUEUE, "batch", "enabled", "False" },
		{ "s q batch started=true", PBSQMGR_SET, PBSQMGR_QUEUE, "batch", "started", "true" },
		{ "set node n1 comment = \"disk = full\"", PBSQMGR_SET, PBSQMGR_NODE, "n1", "comment", "disk = full" },
		{ "set server scheduling = True", PBSQMGR_SET, PBSQMGR_SERVER, "", "scheduling", "True" },
		{ "list queue", PBSQMGR_LIST, PBSQMGR_QUEUE, "", "", "" },
		{ "l q short", PBSQMGR_LIST, PBSQMGR_QUEUE, "short", "", "" },
		{ "print server", PBSQMGR_PRINT, PBSQMGR_SERVER, "", "", "" },
		{ "p n n3", PBSQMGR_PRINT, PBSQMGR_NODE, "n3", "", "" },
		{ "unset node n3 state", PBSQMGR_UNSET, PBSQMGR_NODE, "n3", "state", "" },
		{ "create queue extra", PBSQMGR_CREATE, PBSQMGR_QUEUE, "extra", "", "" },
		{ "  delete   queue   extra  ", PBSQMGR_DELETE, PBSQMGR_QUEUE, "extra", "", "" },
	};
	struct pbsqmgr_cmd cmd;
	struct error err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = pbsqmgr_parse(cases[i].line, &cmd, &err);

		CU_ASSERT_EQUAL(r, 0);
		if (r) {
			fprintf(stderr, "%s: %s\n", cases[i].line, err.text);
			continue;
		}
		CU_ASSERT_EQUAL(cmd.verb, cases[i].verb);
		CU_ASSERT_EQUAL(cmd.object, cases[i].object);
		CU_ASSERT_STRING_EQUAL(cmd.name, cases[i].name);
		CU_ASSERT_STRING_EQUAL(cmd.attr, cases[i].attr);
		CU_ASSERT_STRING_EQUAL(cmd.value, cases[i].value);
	}
}

static void test_parse_bad(void)
{
	static const char *const bad[] = {
		"", "set", "frobnicate queue x", "set castle x a = b", "set queue batch enabled",
		"list queue a b c", "set queue batch enabled = ", "set queue = x", "set q b e = \"open",
		"list queue a = b", "unset queue",
	};
	struct pbsqmgr_cmd cmd;
	struct error err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = pbsqmgr_parse(bad[i], &cmd, &err);

		CU_ASSERT_EQUAL(r, -EINVAL);
		if (r != -EINVAL)
			fprintf(stderr, "accepted: '%s'\n", bad[i]);
	}
}

static const struct unit_test pbsqmgr_tests[] = {
	{ "parse_ok", test_parse_ok },
	{ "parse_bad", test_parse_bad },
	{ NULL, NULL },
};

UNIT_SUITE(pbsqmgr, pbsqmgr_tests);
