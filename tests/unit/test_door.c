/* SPDX-License-Identifier: MIT */
/* qpoold's door: its table is sorted, so every op is found. */
#include "server-internal.h"
#include "unit.h"

static void test_door_sorted(void)
{
	CU_ASSERT(door_table_sorted());
}

static const struct unit_test door_tests[] = {
	{ "the op table is sorted (bsearch finds every op)", test_door_sorted },
	{ NULL, NULL },
};

UNIT_SUITE(door, door_tests);
