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

/* Job store suites. UNIT_STORE_SUITE registers tests twice: as name, on
 * SQLite's :memory:, and as name_pg, on the PostgreSQL of
 * QP_TEST_PG_DSN (tests/run starts a private one); UNIT_PG_SUITE only
 * the latter. Where PostgreSQL is installed the _pg suites always run:
 * without a usable QP_TEST_PG_DSN they fail, never pass unseen. */
enum unit_store { UNIT_STORE_NONE, UNIT_STORE_BOTH, UNIT_STORE_PG };
void unit_suite_add_store(const char *name, const struct unit_test *tests, enum unit_store which);

#define UNIT_STORE_SUITE(name, tests) \
	static void __attribute__((constructor)) unit_register_##name(void) \
	{ unit_suite_add_store(#name, tests, UNIT_STORE_BOTH); }
#define UNIT_PG_SUITE(name, tests) \
	static void __attribute__((constructor)) unit_register_##name(void) \
	{ unit_suite_add_store(#name, tests, UNIT_STORE_PG); }

struct jobstore;
struct error;
/* Opens an empty store of the running suite's backend (the PostgreSQL
 * database is emptied first); as jobstore_open. */
int unit_store_open(struct jobstore **ret, struct error *err);
/* The running suite's PostgreSQL connection string, or NULL on SQLite. */
const char *unit_store_dsn(void);

/* A fresh empty directory under $TMPDIR (or /tmp) for the calling test;
 * removed with everything in it by unit_tmpdir_remove. */
char *unit_tmpdir(void);
void unit_tmpdir_remove(char *dir);

/* Writes text to dir/relpath, creating parent directories. */
void unit_write_file(const char *dir, const char *relpath, const char *text);

#endif
