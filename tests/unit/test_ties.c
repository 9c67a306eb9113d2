/* SPDX-License-Identifier: MIT */
/* Jobs tied to a connection (scheduler/ties.c): the caps, and a job tied
 * again after its connection closed. */
#include <errno.h>
#include <string.h>

#include "conn.h"
#include "hctx.h"
#include "ties.h"
#include "unit.h"

static void test_ties_caps(void)
{
	struct hctx s;   /* the handlers' context alone: no server */
	struct conn a, b;

	memset(&s, 0, sizeof(s));
	for (int64_t id = 1; id <= 16; id++)
		CU_ASSERT_EQUAL(ties_add(&s, &a, id), 0);
	/* Again the same job on the same connection: no new tie. */
	CU_ASSERT_EQUAL(ties_add(&s, &a, 3), 0);
	CU_ASSERT_EQUAL(ties_add(&s, &a, 17), -ENOSPC);
	/* Another connection has its own 16. */
	CU_ASSERT_EQUAL(ties_add(&s, &b, 17), 0);
	/* a closes: its 16 wait for the grace; b takes job 1 back (qexec
	 * reconnected), and a's others do not count against b. */
	ties_conn_closed(&s, &a);
	CU_ASSERT_EQUAL(ties_add(&s, &b, 1), 0);
	for (int64_t id = 18; id <= 31; id++)
		CU_ASSERT_EQUAL(ties_add(&s, &b, id), 0);
	CU_ASSERT_EQUAL(ties_add(&s, &b, 32), -ENOSPC);
	ties_destroy(&s);
	CU_ASSERT_PTR_NULL(s.ties);
	ties_destroy(&s);   /* twice: a no-op */
}

static const struct unit_test ties_tests[] = {
	{ "caps and a tie taken back", test_ties_caps },
	{ NULL, NULL },
};

UNIT_SUITE(ties, ties_tests);
