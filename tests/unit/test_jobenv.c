/* SPDX-License-Identifier: MIT */
/* The limits on a job's environment: count and size, at and over the edge. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobenv.h"
#include "unit.h"

/* n variables V<i>=<value of len bytes>. */
static json_t *env_make(size_t n, size_t len)
{
	static char value[JOBENV_MAX_BYTES + 1];
	json_t *env = json_object();
	char name[32];

	memset(value, 'x', len);
	value[len] = '\0';
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "V%zu", i);
		json_object_set_new(env, name, json_string(value));
	}
	return env;
}

static void test_jobenv_limits(void)
{
	struct error err = { { 0 } };
	json_t *env;

	env = json_object();
	CU_ASSERT_EQUAL(jobenv_check(env, &err), 0);
	json_decref(env);

	env = env_make(JOBENV_MAX_VARS, 1);
	CU_ASSERT_EQUAL(jobenv_check(env, &err), 0);
	json_object_set_new(env, "ONE_MORE", json_string("1"));
	CU_ASSERT_EQUAL(jobenv_check(env, &err), -E2BIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "4097 variables; at most 4096"));
	json_decref(env);

	/* One variable of the whole size: "V0=" + value + NUL. */
	env = env_make(1, JOBENV_MAX_BYTES - 4);
	CU_ASSERT_EQUAL(jobenv_check(env, &err), 0);
	json_decref(env);
	env = env_make(1, JOBENV_MAX_BYTES - 3);
	CU_ASSERT_EQUAL(jobenv_check(env, &err), -E2BIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "KiB; at most 256 KiB"));
	json_decref(env);

	env = json_pack("{s:i}", "A", 1);
	CU_ASSERT_EQUAL(jobenv_check(env, &err), -EINVAL);
	json_decref(env);
}

/* This process's environment, but what JSON cannot carry. */
static void test_jobenv_environ(void)
{
	json_t *env;

	setenv("QPOOL_UNIT_ENV", "a=b c", 1);
	setenv("QPOOL_UNIT_BAD", "\xff\xfe", 1);
	env = jobenv_environ();
	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(env, "QPOOL_UNIT_ENV")), "a=b c");
	CU_ASSERT_PTR_NULL(json_object_get(env, "QPOOL_UNIT_BAD"));
	CU_ASSERT_EQUAL(jobenv_check(env, NULL), 0);
	json_decref(env);
	unsetenv("QPOOL_UNIT_ENV");
	unsetenv("QPOOL_UNIT_BAD");
}

static const struct unit_test jobenv_tests[] = {
	{ "count and size limits", test_jobenv_limits },
	{ "this process's environment", test_jobenv_environ },
	{ NULL, NULL },
};

UNIT_SUITE(jobenv, jobenv_tests);
