/* SPDX-License-Identifier: MIT */
/* Jobs tied to a connection (scheduler/ties.c): the caps, and a job tied
 * again after its connection closed. */
#include <errno.h>
#include <string.h>

#include "server-internal.h"
#include "unit.h"

static void test_ties_caps(void)
{
	struct server s;
	struct conn a, b;

	memset(&s, 0, sizeof(s));
	for (int64_t id = 1; id <= 16; id++)
		CU_ASSERT_EQUAL(ties_add(&s.h, &a, id), 0);
	/* Again the same job on the same connection: no new tie. */
	CU_ASSERT_EQUAL(ties_add(&s.h, &a, 3), 0);
	CU_ASSERT_EQUAL(ties_add(&s.h, &a, 17), -ENOSPC);
	/* Another connection has its own 16. */
	CU_ASSERT_EQUAL(ties_add(&s.h, &b, 17), 0);
	/* a closes: its 16 wait for the grace; b takes job 1 back (qexec
	 * reconnected), and a's others do not count against b. */
	ties_conn_closed(&s.h, &a);
	CU_ASSERT_EQUAL(ties_add(&s.h, &b, 1), 0);
	for (int64_t id = 18; id <= 31; id++)
		CU_ASSERT_EQUAL(ties_add(&s.h, &b, id), 0);
	CU_ASSERT_EQUAL(ties_add(&s.h, &b, 32), -ENOSPC);
	ties_destroy(&s.h);
	CU_ASSERT_PTR_NULL(s.ties);
	ties_destroy(&s.h);   /* twice: a no-op */
}

static const struct unit_test ties_tests[] = {
	{ "caps and a tie taken back", test_ties_caps },
	{ NULL, NULL },
};

UNIT_SUITE(ties, ties_tests);
