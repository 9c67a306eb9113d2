/* SPDX-License-Identifier: MIT */
/* A latency histogram with fixed buckets, written in Prometheus's text format. */
#include "histogram.h"

static const double bounds[HISTOGRAM_BUCKETS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

double histogram_bound(unsigned i)
{
	return i < HISTOGRAM_BUCKETS ? bounds[i] : 0;
}

void histogram_observe(struct histogram *h, uint64_t ns)
{
	double s = (double)ns / 1e9;

	for (unsigned i = 0; i < HISTOGRAM_BUCKETS; i++)
		if (s <= bounds[i]) {
			h->count[i]++;
			break;
		}
	h->total++;
	h->sum_ns += ns;
}

void histogram_write(const struct histogram *h, const char *name, FILE *f)
{
	uint64_t cum = 0;

	for (unsigned i = 0; i < HISTOGRAM_BUCKETS; i++) {
		cum += h->count[i];
		fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[i], (unsigned long long)cum);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->total);
	fprintf(f, "%s_sum %.9f\n", name, (double)h->sum_ns / 1e9);
	fprintf(f, "%s_count %llu\n", name, (unsigned long long)h->total);
}
