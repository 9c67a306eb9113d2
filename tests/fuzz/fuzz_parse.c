/* SPDX-License-Identifier: MIT */
/* Sizes, walltimes, booleans and CPU lists: whatever parses must format and
 * parse back to the same value. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	char buf[8192];
	struct cpumask m, m2;
	uint64_t v, v2;
	bool b;

	if (size_parse(s, &v) == 0) {
		size_format(v, buf, sizeof(buf));
		FUZZ_ASSERT(size_parse(buf, &v2) == 0 && v2 == v);
	}
	if (duration_parse(s, &v) == 0) {
		duration_format(v, buf, sizeof(buf));
		FUZZ_ASSERT(duration_parse(buf, &v2) == 0 && v2 == v);
	}
	(void)bool_parse(s, &b);
	if (cpumask_parse(s, &m) == 0) {
		int n = cpumask_format(&m, buf, sizeof(buf));

		FUZZ_ASSERT(n >= 0 && (size_t)n < sizeof(buf));
		FUZZ_ASSERT(cpumask_parse(buf, &m2) == 0 && memcmp(&m, &m2, sizeof(m)) == 0);
		FUZZ_ASSERT(cpumask_next(&m, 0) == -1 || cpumask_test(&m, (unsigned)cpumask_next(&m, 0)));
		/* A short buffer is truncated, never overrun. */
		(void)cpumask_format(&m, buf, 3);
	}
	free(s);
	return 0;
}
