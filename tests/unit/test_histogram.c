/* SPDX-License-Identifier: MIT */
/* The latency histogram: bucket edges, +Inf, and the text Prometheus reads. */
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "unit.h"

static void test_histogram_buckets(void)
{
	struct histogram h = { 0 };

	histogram_observe(&h, 100000);          /* 100 us: the first bucket, edge included */
	histogram_observe(&h, 100001);          /* just past it: the second */
	histogram_observe(&h, 3000000);         /* 3 ms: le 0.005 */
	histogram_observe(&h, 11000000000ULL);  /* 11 s: +Inf only */
	CU_ASSERT_EQUAL(h.count[0], 1);
	CU_ASSERT_EQUAL(h.count[1], 1);
	CU_ASSERT_EQUAL(h.count[5], 1);
	CU_ASSERT_EQUAL(h.total, 4);
	CU_ASSERT_EQUAL(h.sum_ns, 100000 + 100001 + 3000000 + 11000000000ULL);
	for (unsigned i = 1; i < HISTOGRAM_BUCKETS; i++)
		CU_ASSERT(histogram_bound(i) > histogram_bound(i - 1));
}

static void test_histogram_text(void)
{
	struct histogram h = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	histogram_observe(&h, 2000000);    /* 2 ms */
	histogram_observe(&h, 20000000);   /* 20 ms */
	histogram_write(&h, "x_seconds", f);
	fclose(f);
	/* Cumulative: 0 below 2 ms, 1 from 0.0025, 2 from 0.025, 2 at +Inf. */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x_seconds_bucket{le=\"0.0001\"} 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x_seconds_bucket{le=\"0.001\"} 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x_seconds_bucket{le=\"0.0025\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x_seconds_bucket{le=\"0.01\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x_seconds_bucket{le=\"0.025\"} 2\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x_seconds_bucket{le=\"10\"} 2\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "x_seconds_bucket{le=\"+Inf\"} 2\nx_seconds_sum 0.022000000\nx_seconds_count 2\n"));
	free(buf);
}

static const struct unit_test histogram_tests[] = {
	{ "observations land in their buckets", test_histogram_buckets },
	{ "cumulative text, +Inf, sum and count", test_histogram_text },
	{ NULL, NULL },
};

UNIT_SUITE(histogram, histogram_tests);
