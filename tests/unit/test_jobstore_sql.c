/* SPDX-License-Identifier: MIT */
/* The SQL written once above the two drivers: the one migration list
 * covers every version of each, fragments are filled in by the driver, and
 * $N parameters bind by their number on both engines. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobstore-internal.h"
#include "unit.h"

/* Every version from a driver's first to this binary's has a text, none
 * before; no text keeps a fragment unfilled. */
static void test_migrations_cover(void)
{
	const struct jobstore_driver *drivers[] = { &jobstore_driver_sqlite, &jobstore_driver_pg };

	CU_ASSERT_EQUAL(jobstore_driver_sqlite.first_version, 1);
	CU_ASSERT_EQUAL(jobstore_driver_pg.first_version, 7);
	for (size_t d = 0; d < sizeof(drivers) / sizeof(drivers[0]); d++) {
		for (int v = 0; v <= JOBSTORE_SCHEMA_VERSION + 1; v++) {
			char *text = NULL;
			int r = jobstore_migration(drivers[d], v, &text);

			if (v < drivers[d]->first_version || v > JOBSTORE_SCHEMA_VERSION) {
				CU_ASSERT_EQUAL(r, -EINVAL);
				continue;
			}
			CU_ASSERT_EQUAL_FATAL(r, 0);
			CU_ASSERT(text && *text);
			CU_ASSERT_PTR_NULL(strstr(text, "{ADD_COLUMN}"));
			free(text);
		}
	}
}

static void test_expand(void)
{
	char *s = jobstore_sql_expand(&jobstore_driver_sqlite,
				      "SELECT {ATTR:Resource_List.qos}, {NOW}; ALTER TABLE t {ADD_COLUMN} c;");

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "json_extract(attrs, '$.\"Resource_List.qos\"')"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, jobstore_driver_sqlite.now_ms));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "ALTER TABLE t ADD COLUMN c;"));
	free(s);
	s = jobstore_sql_expand(&jobstore_driver_pg, "SELECT {ATTR:Priority} FROM jobs; {ADD_COLUMN} '{}'");
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s, "SELECT attrs::json->>'Priority' FROM jobs; ADD COLUMN IF NOT EXISTS '{}'");
	free(s);
}

static int two_row(const struct jobstore_row *r, void *ud)
{
	char **out = ud;

	out[0] = strdup(row_text(r, 0));
	out[1] = strdup(row_text(r, 1));
	out[2] = strdup(row_text(r, 2));
	return 0;
}

/* A text that names $2 before $1, and a '$' inside quotes: each $N is
 * the Nth parameter on either engine (SQLite numbers a $N name by its
 * first appearance: its driver rewrites it to ?N). */
static void test_params_by_number(void)
{
	struct jobstore *js = NULL;
	struct error err;
	struct jobstore_ev_params p = { .n = 2 };
	char *out[3] = { NULL, NULL, NULL };

	CU_ASSERT_EQUAL_FATAL(unit_store_open(&js, &err), 0);
	p.v[0].is_text = p.v[1].is_text = true;
	p.v[0].text = "one";
	p.v[1].text = "two";
	CU_ASSERT_EQUAL(jobstore_sql_rows(js, "SELECT CAST($2 AS TEXT), CAST($1 AS TEXT), '$1'", &p, two_row, out), 0);
	CU_ASSERT_STRING_EQUAL(out[0] ? out[0] : "", "two");
	CU_ASSERT_STRING_EQUAL(out[1] ? out[1] : "", "one");
	CU_ASSERT_STRING_EQUAL(out[2] ? out[2] : "", "$1");
	for (int i = 0; i < 3; i++)
		free(out[i]);
	jobstore_close(js);
}

static const struct unit_test jobstore_sql_tests[] = {
	{ "migrations_cover", test_migrations_cover },
	{ "expand", test_expand },
	{ NULL, NULL },
};

UNIT_SUITE(jobstore_sql, jobstore_sql_tests);

static const struct unit_test jobstore_params_tests[] = {
	{ "params_by_number", test_params_by_number },
	{ NULL, NULL },
};

UNIT_STORE_SUITE(jobstore_params, jobstore_params_tests);
