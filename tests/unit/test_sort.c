/* SPDX-License-Identifier: MIT */
/* qp_sort: sorts as qsort does, and takes an empty array given as NULL. */
#include <stddef.h>

#include "sort.h"
#include "unit.h"

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void test_sort_orders(void)
{
	int v[] = { 5, -1, 3, 3, 0 };
	const int want[] = { -1, 0, 3, 3, 5 };

	qp_sort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), int_cmp);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CU_ASSERT_EQUAL(v[i], want[i]);
}

/* Under make check's UBSan pass a bare qsort(NULL, 0, ...) is reported. */
static void test_sort_empty(void)
{
	int one = 7;

	qp_sort(NULL, 0, sizeof(int), int_cmp);
	qp_sort(&one, 1, sizeof(int), int_cmp);
	CU_ASSERT_EQUAL(one, 7);
}

static const struct unit_test sort_tests[] = {
	{ "sorts as qsort", test_sort_orders },
	{ "an empty NULL array and one element", test_sort_empty },
	{ NULL, NULL },
};

UNIT_SUITE(sort, sort_tests);
