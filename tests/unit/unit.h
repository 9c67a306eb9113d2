/* SPDX-License-Identifier: MIT */
/* Unit-test registry: each test file registers its suite from a constructor,
 * so adding a file needs no edit anywhere else. */
#ifndef QPOOL_UNIT_H
#define QPOOL_UNIT_H

#include <CUnit/CUnit.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

/* tests ends with { NULL, NULL }. Call from a constructor:
 *   UNIT_SUITE(parse, parse_tests); */
void unit_suite_add(const char *name, const struct unit_test *tests);

#define UNIT_SUITE(name, tests) \
	static void __attribute__((constructor)) unit_register_##name(void) \
	{ unit_suite_add(#name, tests); }

/* A fresh empty directory under $TMPDIR (or /tmp) for the calling test;
 * removed with everything in it by unit_tmpdir_remove. */
char *unit_tmpdir(void);
void unit_tmpdir_remove(char *dir);

/* Writes text to dir/relpath, creating parent directories. */
void unit_write_file(const char *dir, const char *relpath, const char *text);

#endif
