/* SPDX-License-Identifier: MIT */
/* Table tests for lib/nodesel: node lists, feature lists, Slurm constraints. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nodesel.h"
#include "unit.h"

static void test_constraint_parse(void)
{
	static const struct {
		const char *in;
		int r;
		const char *in_err;   /* a piece of the message */
	} cases[] = {
		{ "ib", 0, NULL },
		{ "ib&bigmem", 0, NULL },
		{ "ib|bigmem", 0, NULL },
		{ "(ib|opa)&bigmem", 0, NULL },
		{ "[rack1|rack2|rack3]", 0, NULL },
		{ "[rack1&ib|rack2&ib]", 0, NULL },
		{ "model=skylake", 0, NULL },
		{ "a*2", -EINVAL, "node counts" },
		{ "[a*2&b*4]", -EINVAL, "node counts" },
		{ "(a&b)*4", -EINVAL, "node counts" },
		{ "x&[a|b]", -EINVAL, "whole constraint" },
		{ "[a|b]&x", -EINVAL, "whole constraint" },
		{ "[a|b", -EINVAL, "without ']'" },
		{ "(a|b", -EINVAL, "without ')'" },
		{ "a|b)", -EINVAL, "without '('" },
		{ "a&", -EINVAL, "at the end" },
		{ "&a", -EINVAL, "feature expected" },
		{ "a b", -EINVAL, "unexpected" },
		{ "a,b", -EINVAL, "unexpected" },
		{ "", -EINVAL, "empty" },
		{ "-a", -EINVAL, "starts with" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct error err = { "" };
		int r = nodesel_constraint_check(cases[i].in, &err);

		if (r != cases[i].r)
			fprintf(stderr, "constraint '%s': %d (%s)\n", cases[i].in, r, err.text);
		CU_ASSERT_EQUAL(r, cases[i].r);
		if (cases[i].in_err && !strstr(err.text, cases[i].in_err))
			fprintf(stderr, "constraint '%s': '%s'\n", cases[i].in, err.text);
		if (cases[i].in_err)
			CU_ASSERT_PTR_NOT_NULL(strstr(err.text, cases[i].in_err));
	}
}

static void test_constraint_match(void)
{
	static const struct {
		const char *expr, *features;
		int alt;
		bool ok;
	} cases[] = {
		{ "ib", "ib,bigmem", -1, true },
		{ "ib", "bigmem", -1, false },
		{ "ib", "", -1, false },
		{ "ib", "ibx", -1, false },
		{ "ib&bigmem", "bigmem,ib", -1, true },
		{ "ib&bigmem", "ib", -1, false },
		{ "ib|bigmem", "bigmem", -1, true },
		{ "ib|bigmem", "gpu", -1, false },
		{ "ib&bigmem|gpu", "gpu", -1, true },     /* '&' binds tighter */
		{ "ib&(bigmem|gpu)", "gpu", -1, false },
		{ "ib&(bigmem|gpu)", "gpu,ib", -1, true },
		{ "[r1|r2]", "r2", -1, true },
		{ "[r1|r2]", "r2", 0, false },
		{ "[r1|r2]", "r2", 1, true },
		{ "[r1|r2]", "r3", -1, false },
		{ "[r1&ib|r2]", "r1", 0, false },
		{ "[r1&ib|r2]", "ib,r1", 0, true },
		{ "model=skylake", "ib,model=skylake", -1, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nodesel *s = NULL;
		struct error err = { "" };

		CU_ASSERT_EQUAL_FATAL(nodesel_create(NULL, NULL, cases[i].expr, &s, &err), 0);
		if (nodesel_node_ok(s, "n1", cases[i].features, cases[i].alt) != cases[i].ok)
			fprintf(stderr, "'%s' on '%s' alt %d: not %d\n", cases[i].expr, cases[i].features,
				cases[i].alt, cases[i].ok);
		CU_ASSERT_EQUAL(nodesel_node_ok(s, "n1", cases[i].features, cases[i].alt), cases[i].ok);
		nodesel_destroy(s);
	}
}

static void test_nodesel_names(void)
{
	struct nodesel *s = NULL;
	struct error err = { "" };
	const char *const *names;

	CU_ASSERT_EQUAL_FATAL(nodesel_create("n[1-3],n2", "n3", NULL, &s, &err), 0);
	CU_ASSERT_EQUAL(nodesel_required(s, &names), 3);
	CU_ASSERT_STRING_EQUAL(names[0], "n1");
	CU_ASSERT_STRING_EQUAL(names[2], "n3");
	CU_ASSERT_EQUAL(nodesel_excluded(s, &names), 1);
	CU_ASSERT(nodesel_node_ok(s, "n1", "", -1));
	CU_ASSERT(!nodesel_node_ok(s, "n3", "", -1));   /* excluded wins */
	CU_ASSERT(!nodesel_node_ok(s, "n4", "", -1));   /* not on the list */
	nodesel_destroy(s);
	CU_ASSERT_EQUAL_FATAL(nodesel_create(NULL, "n[1-2]", NULL, &s, &err), 0);
	CU_ASSERT(nodesel_node_ok(s, "n3", NULL, -1));
	CU_ASSERT(!nodesel_node_ok(s, "n2", NULL, -1));
	nodesel_destroy(s);
	CU_ASSERT(nodesel_node_ok(NULL, "n2", NULL, -1));
	CU_ASSERT_EQUAL(nodesel_create("n[3-1]", NULL, NULL, &s, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "not a node list"));
	CU_ASSERT_EQUAL(nodesel_create(NULL, NULL, "a*2", &s, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "constraint a*2"));
}

static void test_features_canon(void)
{
	static const struct {
		const char *in;
		int r;
		const char *canon;
	} cases[] = {
		{ "ib,bigmem", 0, "ib,bigmem" },
		{ " ib , bigmem ,ib", 0, "ib,bigmem" },
		{ "", 0, "" },
		{ "model=skylake", 0, "model=skylake" },
		{ "ib,,bigmem", -EINVAL, NULL },
		{ "ib,", -EINVAL, NULL },
		{ "i b", -EINVAL, NULL },
		{ "ib&x", -EINVAL, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct error err = { "" };
		char canon[256];
		int r = nodesel_features_canon(cases[i].in, canon, sizeof(canon), &err);

		CU_ASSERT_EQUAL(r, cases[i].r);
		if (r == 0) {
			CU_ASSERT_STRING_EQUAL(canon, cases[i].canon);
		} else {
			CU_ASSERT(err.text[0] != '\0');
		}
	}
}

static const struct unit_test tests[] = {
	{ "constraint_parse", test_constraint_parse },
	{ "constraint_match", test_constraint_match },
	{ "nodesel_names", test_nodesel_names },
	{ "features_canon", test_features_canon },
	{ NULL, NULL },
};

UNIT_SUITE(nodesel, tests);
