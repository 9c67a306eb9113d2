/* SPDX-License-Identifier: MIT */
/* CUnit runner: runs every registered suite, or those named on the command line. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

#define MAX_SUITES 64

static struct {
	const char *name;
	const struct unit_test *tests;
} suites[MAX_SUITES];
static size_t n_suites;

void unit_suite_add(const char *name, const struct unit_test *tests)
{
	if (n_suites == MAX_SUITES) {
		fprintf(stderr, "unit: too many suites\n");
		abort();
	}
	suites[n_suites].name = name;
	suites[n_suites].tests = tests;
	n_suites++;
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

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	for (size_t i = 0; i < n_suites; i++) {
		CU_pSuite s;

		if (!wanted(argc, argv, suites[i].name))
			continue;
		s = CU_add_suite(suites[i].name, NULL, NULL);
		for (const struct unit_test *t = suites[i].tests; t->name; t++)
			CU_add_test(s, t->name, t->fn);
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	run = CU_get_number_of_tests_run();
	failed = CU_get_number_of_tests_failed();
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
