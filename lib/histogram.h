/* SPDX-License-Identifier: MIT */
/* A latency histogram with fixed buckets, written in Prometheus's text format. */
#ifndef QPOOL_HISTOGRAM_H
#define QPOOL_HISTOGRAM_H

#include <stdint.h>
#include <stdio.h>

/* Upper bounds in seconds: 100 us to 10 s, 1-2.5-5 steps. A scheduling
 * pass of 50,000 jobs takes tens of ms (docs/PERFORMANCE.md) and a
 * group commit with fsync 1-20 ms, so both fall inside. */
#define HISTOGRAM_BUCKETS 16

/* A plain value: zero-initialised is empty. */
struct histogram {
	uint64_t count[HISTOGRAM_BUCKETS];   /* observations <= bound i (not cumulative) */
	uint64_t total;                      /* all observations, +Inf included */
	uint64_t sum_ns;
};

/* Upper bound of bucket i in seconds. */
double histogram_bound(unsigned i);

void histogram_observe(struct histogram *h, uint64_t ns);

/* Writes name_bucket{le=...}, name_sum and name_count lines (cumulative
 * buckets, +Inf last); HELP and TYPE are the caller's. */
void histogram_write(const struct histogram *h, const char *name, FILE *f);

#endif
