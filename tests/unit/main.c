/* SPDX-License-Identifier: MIT */
/* CUnit runner: runs every registered suite, or those named on the command line. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobstore.h"
#include "unit.h"

#ifdef __SANITIZE_ADDRESS__
/* A sanitized build: what libpciaccess keeps after hwloc's PCI discovery
 * (topo_ranks_xml_write) is not ours to report. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpciaccess.so\n";
}
#endif

#define MAX_SUITES 160

static struct {
	char name[64];
	const struct unit_test *tests;
	bool pg;       /* a store suite run on PostgreSQL */
} suites[MAX_SUITES];
static size_t n_suites;

static void suite_add(const char *name, const char *suffix, const struct unit_test *tests, bool pg)
{
	if (n_suites == MAX_SUITES) {
		fprintf(stderr, "unit: too many suites\n");
		abort();
	}
	snprintf(suites[n_suites].name, sizeof(suites[0].name), "%s%s", name, suffix);
	suites[n_suites].tests = tests;
	suites[n_suites].pg = pg;
	n_suites++;
}

void unit_suite_add(const char *name, const struct unit_test *tests)
{
	suite_add(name, "", tests, false);
}

void unit_suite_add_store(const char *name, const struct unit_test *tests, enum unit_store which)
{
	if (which == UNIT_STORE_BOTH)
		suite_add(name, "", tests, false);
	suite_add(name, "_pg", tests, true);
}

/* The backend of the suite running now (its init sets it). */
static enum jobstore_kind store_kind = JOBSTORE_SQLITE;

const char *unit_store_dsn(void)
{
	return store_kind == JOBSTORE_POSTGRESQL ? getenv("QP_TEST_PG_DSN") : NULL;
}

int unit_store_open(struct jobstore **ret, struct error *err)
{
	const char *dsn = unit_store_dsn();
	char cmd[4096];

	if (store_kind == JOBSTORE_SQLITE)
		return jobstore_open(JOBSTORE_SQLITE, ":memory:", ret, err);
	/* Each test starts on an empty database, as on :memory:. */
	snprintf(cmd, sizeof(cmd), "psql -qX -v ON_ERROR_STOP=1 '%s' -c 'DROP SCHEMA public CASCADE;"
		 " CREATE SCHEMA public' >/dev/null 2>&1", dsn ? dsn : "");
	if (!dsn || system(cmd) != 0)
		return error_set(err, -EIO, "cannot empty the test database %s", dsn ? dsn : "(none)");
	return jobstore_open(JOBSTORE_POSTGRESQL, dsn, ret, err);
}

static bool pg_installed(void)
{
	glob_t g;
	bool found = glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) == 0;

	globfree(&g);
	return found;
}

static int suite_init_sqlite(void)
{
	store_kind = JOBSTORE_SQLITE;
	return 0;
}

/* A _pg suite: a DSN that is set must work; one that is not is a failure
 * wherever PostgreSQL is installed (tests/run sets it). */
static int suite_init_pg(void)
{
	const char *dsn = getenv("QP_TEST_PG_DSN");
	struct jobstore *js;
	struct error err;

	store_kind = JOBSTORE_POSTGRESQL;
	if (!dsn || !*dsn) {
		fprintf(stderr, "unit: PostgreSQL is installed but QP_TEST_PG_DSN is not set"
			" (tests/run --unit starts a private server)\n");
		return 1;
	}
	if (unit_store_open(&js, &err) < 0) {
		fprintf(stderr, "unit: QP_TEST_PG_DSN=%s: %s\n", dsn, err.text);
		return 1;
	}
	jobstore_close(js);
	return 0;
}

char *unit_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *dir;

	if (asprintf(&dir, "%s/qpool-unit.XXXXXX", base && *base ? base : "/tmp") < 0)
		abort();
	if (!mkdtemp(dir))
		abort();
	return dir;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

void unit_tmpdir_remove(char *dir)
{
	if (!dir)
		return;
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

void unit_write_file(const char *dir, const char *relpath, const char *text)
{
	char path[4096];
	FILE *f;

	for (const char *p = relpath; (p = strchr(p, '/')); p++) {
		snprintf(path, sizeof(path), "%s/%.*s", dir, (int)(p - relpath), relpath);
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			abort();
	}
	snprintf(path, sizeof(path), "%s/%s", dir, relpath);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static int wanted(int argc, char **argv, const char *name)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned run, failed;
	const char *counts = getenv("UNIT_COUNTS");
	bool pg = pg_installed() || (getenv("QP_TEST_PG_DSN") && *getenv("QP_TEST_PG_DSN"));

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	for (size_t i = 0; i < n_suites; i++) {
		CU_pSuite s;

		if (!wanted(argc, argv, suites[i].name))
			continue;
		if (suites[i].pg && !pg) {
			fprintf(stderr, "unit: %s not run: PostgreSQL is not installed\n", suites[i].name);
			continue;
		}
		s = CU_add_suite(suites[i].name, suites[i].pg ? suite_init_pg : suite_init_sqlite, NULL);
		for (const struct unit_test *t = suites[i].tests; t->name; t++)
			CU_add_test(s, t->name, t->fn);
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	run = CU_get_number_of_tests_run();
	/* A suite whose init failed (a _pg suite without its server) ran
	 * none of its tests: it counts as one failure. */
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
	/* tests/run reads the counts from this file for the closing line. */
	if (counts && *counts) {
		FILE *f = fopen(counts, "w");

		if (f) {
			fprintf(f, "%u %u\n", run - failed, failed);
			fclose(f);
		}
	}
	CU_cleanup_registry();
	return failed || CU_get_error() ? 1 : 0;
}
