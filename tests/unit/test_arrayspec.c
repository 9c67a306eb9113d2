/* SPDX-License-Identifier: MIT */
/* Table tests for job arrays and dependencies in lib/: -J/-t index sets, ID[N] ids, depend lists. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arrayspec.h"
#include "depend.h"
#include "jobid.h"
#include "jobscript.h"
#include "pbsfmt.h"
#include "unit.h"

static void test_arrayspec_parse(void)
{
	static const struct {
		const char *in;
		int opt;
		int r;
		const char *canon;
		int64_t count;
	} cases[] = {
		{ "1-10", 'J', 0, "1-10", 10 },
		{ "0-9:2", 'J', 0, "0-8:2", 5 },
		{ "1-100%5", 'J', 0, "1-100%5", 100 },
		{ "1-7:3%2", 'J', 0, "1-7:3%2", 3 },
		{ "5", 'J', -EINVAL, NULL, 0 },           /* PBS Pro: a range */
		{ "5-5", 'J', -EINVAL, NULL, 0 },
		{ "1,3", 'J', -EINVAL, NULL, 0 },
		{ "1,3,5-7", 't', 0, "1,3,5-7", 5 },
		{ "5", 't', 0, "5", 1 },
		{ "0-4%1", 't', 0, "0-4%1", 5 },
		{ "3,1", 't', -EINVAL, NULL, 0 },         /* must ascend */
		{ "1-5,5", 't', -EINVAL, NULL, 0 },       /* overlap */
		{ "1-0", 't', -EINVAL, NULL, 0 },
		{ "1-10:0", 'J', -EINVAL, NULL, 0 },
		{ "1-10%0", 'J', -EINVAL, NULL, 0 },
		{ "1-10%", 'J', -EINVAL, NULL, 0 },
		{ "1-10x", 'J', -EINVAL, NULL, 0 },
		{ "", 't', -EINVAL, NULL, 0 },
		{ "-3", 't', -EINVAL, NULL, 0 },
		{ "1-1000000000", 'J', -EINVAL, NULL, 0 }, /* index too large */
		{ "0-1000000", 'J', -EINVAL, NULL, 0 },    /* too many subjobs */
		{ "0-999999", 'J', 0, "0-999999", 1000000 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct arrayspec a, b;
		struct error err = { "" };
		char text[ARRAYSPEC_TEXT_MAX];
		int r = arrayspec_parse(cases[i].in, cases[i].opt, cases[i].opt == 't', &a, &err);

		CU_ASSERT_EQUAL(r, cases[i].r);
		if (r < 0) {
			CU_ASSERT(err.text[0] != '\0');
			continue;
		}
		arrayspec_format(&a, text, sizeof(text));
		CU_ASSERT_STRING_EQUAL(text, cases[i].canon);
		CU_ASSERT_EQUAL(a.count, cases[i].count);
		/* The canonical form reads back to the same set. */
		CU_ASSERT_EQUAL(arrayspec_parse(text, 't', true, &b, &err), 0);
		CU_ASSERT_EQUAL(b.count, a.count);
		CU_ASSERT_EQUAL(b.max_running, a.max_running);
	}
}

static void test_arrayspec_positions(void)
{
	struct arrayspec a;
	struct error err;

	CU_ASSERT_EQUAL(arrayspec_parse("1,3,5-9:2,20-22", 't', true, &a, &err), 0);
	CU_ASSERT_EQUAL(a.count, 8);
	static const int64_t idx[] = { 1, 3, 5, 7, 9, 20, 21, 22 };
	for (int64_t pos = 0; pos < 8; pos++) {
		CU_ASSERT_EQUAL(arrayspec_index(&a, pos), idx[pos]);
		CU_ASSERT_EQUAL(arrayspec_pos(&a, idx[pos]), pos);
	}
	CU_ASSERT_EQUAL(arrayspec_index(&a, 8), -1);
	CU_ASSERT_EQUAL(arrayspec_index(&a, -1), -1);
	CU_ASSERT_EQUAL(arrayspec_pos(&a, 2), -1);
	CU_ASSERT_EQUAL(arrayspec_pos(&a, 6), -1);
	CU_ASSERT_EQUAL(arrayspec_pos(&a, 23), -1);
	CU_ASSERT_EQUAL(arrayspec_pos(&a, 0), -1);
}

/* The members of a range, from the parts alone: out-of-set and absurd
 * bounds (negative, 2^62, INT64_MAX) are clamped, never walked. */
static void test_arrayspec_span(void)
{
	static const struct {
		int64_t lo, hi, count, first;
	} cases[] = {
		{ 0, 100, 8, 0 }, { 1, 1, 1, 0 }, { 2, 2, 0, -1 }, { 2, 4, 1, 1 },
		{ 4, 8, 2, 2 }, { 6, 6, 0, -1 }, { 6, 21, 4, 3 }, { 10, 19, 0, -1 },
		{ 22, 22, 1, 7 }, { 23, 99999999, 0, -1 }, { 5, 5, 1, 2 }, { 8, 9, 1, 4 },
		{ -5, 3, 2, 0 }, { INT64_MIN, INT64_MAX, 8, 0 }, { 21, INT64_MAX, 2, 6 },
		{ 1LL << 62, 1LL << 62, 0, -1 }, { 3, 1LL << 62, 7, 1 }, { 9, 5, 0, -1 },
		{ INT64_MAX, INT64_MIN, 0, -1 }, { INT64_MIN, -1, 0, -1 },
	};
	struct arrayspec a;
	struct error err;

	CU_ASSERT_EQUAL(arrayspec_parse("1,3,5-9:2,20-22", 't', true, &a, &err), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t first = -1, n = arrayspec_span(&a, cases[i].lo, cases[i].hi, &first);

		if (n != cases[i].count || (n && first != cases[i].first))
			fprintf(stderr, "span %lld-%lld: %lld from %lld\n", (long long)cases[i].lo,
				(long long)cases[i].hi, (long long)n, (long long)first);
		CU_ASSERT_EQUAL(n, cases[i].count);
		if (n)
			CU_ASSERT_EQUAL(first, cases[i].first);
	}
	/* The largest set there is, and the whole index space. */
	CU_ASSERT_EQUAL(arrayspec_parse("0-99999999:100", 't', true, &a, &err), 0);
	int64_t first = -1;
	CU_ASSERT_EQUAL(arrayspec_span(&a, 0, INT64_MAX, &first), 1000000);
	CU_ASSERT_EQUAL(first, 0);
	CU_ASSERT_EQUAL(arrayspec_span(&a, 150, 350, &first), 2);
	CU_ASSERT_EQUAL(first, 2);
}

static void test_jobid_array(void)
{
	static const struct {
		const char *in;
		int r;
		int64_t id, lo, hi;
	} cases[] = {
		{ "12", 0, 12, JOBID_PLAIN, JOBID_PLAIN },
		{ "12.srv@h", 0, 12, JOBID_PLAIN, JOBID_PLAIN },
		{ "12[]", 0, 12, JOBID_ARRAY_ALL, JOBID_ARRAY_ALL },
		{ "12[].srv", 0, 12, JOBID_ARRAY_ALL, JOBID_ARRAY_ALL },
		{ "12[7]", 0, 12, 7, 7 },
		{ "12[7].srv.example.org@h", 0, 12, 7, 7 },
		{ "12[3-9]", 0, 12, 3, 9 },
		{ "12[0]", 0, 12, 0, 0 },
		{ "12[9-3]", -EINVAL, 0, 0, 0 },
		{ "12[x]", -EINVAL, 0, 0, 0 },
		{ "12[7", -EINVAL, 0, 0, 0 },
		{ "12[7]x", -EINVAL, 0, 0, 0 },
		{ "12.srv[7]", -EINVAL, 0, 0, 0 },
		{ "[7]", -EINVAL, 0, 0, 0 },
		{ "0[]", -EINVAL, 0, 0, 0 },
		{ "12[1234567890]", -ERANGE, 0, 0, 0 },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t id = -9, lo = -9, hi = -9;
		int r = jobid_parse_array(cases[i].in, &id, &lo, &hi);

		CU_ASSERT_EQUAL(r, cases[i].r);
		if (r == 0) {
			CU_ASSERT_EQUAL(id, cases[i].id);
			CU_ASSERT_EQUAL(lo, cases[i].lo);
			CU_ASSERT_EQUAL(hi, cases[i].hi);
		}
	}
	/* The plain parser still refuses brackets: commands that take no
	 * array id say so. */
	CU_ASSERT_EQUAL(jobid_parse("12[]", &(int64_t){ 0 }), -EINVAL);
	jobid_format_array(12, 7, "srv", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "12[7].srv");
	jobid_format_array(12, JOBID_ARRAY_ALL, "srv", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "12[].srv");
	jobid_format_array(12, JOBID_PLAIN, NULL, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "12");
}

static void test_depend_parse(void)
{
	static const struct {
		const char *in;
		int r;
		const char *canon;
	} cases[] = {
		{ "afterok:12", 0, "afterok:12" },
		{ "afterok:12.srv:13[].srv@h", 0, "afterok:12:13[]" },
		{ "afterany:1,afternotok:2:3", 0, "afterany:1,afternotok:2:3" },
		{ "after:5,beforeok:6,beforenotok:7,beforeany:8,before:9", 0,
		  "after:5,beforeok:6,beforenotok:7,beforeany:8,before:9" },
		{ "afterok", -EINVAL, NULL },
		{ "afterok:", -EINVAL, NULL },
		{ "afterwards:1", -EINVAL, NULL },
		{ "afterok:x", -EINVAL, NULL },
		{ "afterok:12[3]", -EINVAL, NULL },
		{ "", -EINVAL, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct depend_list d;
		struct error err = { "" };
		char text[DEPEND_TEXT_MAX];
		int r = depend_parse(cases[i].in, &d, &err);

		CU_ASSERT_EQUAL(r, cases[i].r);
		if (r < 0) {
			CU_ASSERT(err.text[0] != '\0');
			continue;
		}
		depend_format(&d, text, sizeof(text));
		CU_ASSERT_STRING_EQUAL(text, cases[i].canon);
	}
	CU_ASSERT_EQUAL(depend_type_after(DEPEND_BEFORENOTOK), DEPEND_AFTERNOTOK);
	CU_ASSERT_EQUAL(depend_type_after(DEPEND_AFTERANY), DEPEND_AFTERANY);
}

static void test_jobspec_array_depend(void)
{
	struct jobspec js;
	struct error err;

	jobspec_init(&js);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'J', "1-10:3%2", &err), 0);
	CU_ASSERT_STRING_EQUAL(js.array, "1-10:3%2");
	CU_ASSERT_EQUAL(jobspec_option(&js, 't', "1,3,5-7", &err), 0);
	CU_ASSERT_STRING_EQUAL(js.array, "1,3,5-7");
	CU_ASSERT_EQUAL(jobspec_option(&js, 'J', "7", &err), -EINVAL);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'W', "depend=afterok:1:2,afterany:3[],umask=022", &err), 0);
	CU_ASSERT_STRING_EQUAL(js.depend, "afterok:1:2,afterany:3[]");
	CU_ASSERT_STRING_EQUAL(jobspec_attr(&js, "umask"), "022");
	CU_ASSERT_EQUAL(jobspec_option(&js, 'W', "block=true", &err), 0);
	CU_ASSERT_EQUAL(js.block, 1);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'W', "block=maybe", &err), -EINVAL);
	CU_ASSERT_EQUAL(jobspec_option(&js, 'W', "depend=sometime:1", &err), -EINVAL);
	jobspec_clear(&js);

	/* As a directive. */
	static const char script[] = "#!/bin/sh\n#PBS -J 0-4%2\n#PBS -W depend=afternotok:9\necho\n";
	jobspec_init(&js);
	CU_ASSERT_EQUAL(jobscript_parse(script, sizeof(script) - 1, NULL, &js, &err), 0);
	CU_ASSERT_STRING_EQUAL(js.array, "0-4%2");
	CU_ASSERT_STRING_EQUAL(js.depend, "afternotok:9");
	jobspec_clear(&js);
}

/* qstat's ids and states of arrays: ID[] in B once begun, ID[N]. */
static void test_pbsfmt_array(void)
{
	json_t *a = json_pack("{s:I, s:s, s:s}", "jobid", (json_int_t)12, "array", "1-3", "state", "running");
	json_t *s = json_pack("{s:I, s:I, s:I, s:s}", "jobid", (json_int_t)14, "array_id", (json_int_t)12,
			      "array_index", (json_int_t)2, "state", "running");
	json_t *d = json_pack("{s:I, s:s, s:s, s:s}", "jobid", (json_int_t)20, "state", "held",
			      "depend", "afterok:12:13[]", "reason", "waiting on dependencies");
	json_t *attrs;
	char buf[64];

	pbsfmt_job_id(a, "srv", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "12[].srv");
	pbsfmt_job_id(s, "srv", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "12[2].srv");
	CU_ASSERT_EQUAL(pbsfmt_job_state(a, 0), 'B');
	CU_ASSERT_EQUAL(pbsfmt_job_state(s, 0), 'R');
	json_object_set_new(a, "state", json_string("queued"));
	CU_ASSERT_EQUAL(pbsfmt_job_state(a, 0), 'Q');
	attrs = pbsfmt_job_attrs(d, "srv", 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(attrs, "Hold_Types")), "s");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(attrs, "depend")), "afterok:12.srv:13[].srv");
	json_decref(attrs);
	attrs = pbsfmt_job_attrs(s, "srv", 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(attrs, "array_id")), "12[].srv");
	json_decref(attrs);
	json_decref(a);
	json_decref(s);
	json_decref(d);
}

static const struct unit_test tests[] = {
	{ "pbsfmt_array", test_pbsfmt_array },
	{ "arrayspec_parse", test_arrayspec_parse },
	{ "arrayspec_positions", test_arrayspec_positions },
	{ "arrayspec_span", test_arrayspec_span },
	{ "jobid_array", test_jobid_array },
	{ "depend_parse", test_depend_parse },
	{ "jobspec_array_depend", test_jobspec_array_depend },
	{ NULL, NULL },
};

UNIT_SUITE(arrayspec, tests);
