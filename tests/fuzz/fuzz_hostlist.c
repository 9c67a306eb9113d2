/* SPDX-License-Identifier: MIT */
/* Slurm host lists (scontrol show hostnames, from a job's environment or
 * a user's word): whatever expands must compress, in order, to a list
 * that expands to the same names. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hostlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size), *buf = NULL;
	char **names = NULL, **again = NULL;
	int n, m = 0, len;

	n = hostlist_expand(s, 4096, &names);
	FUZZ_ASSERT(n >= 0 || n == -EINVAL || n == -E2BIG);
	FUZZ_ASSERT(n > 0 || names == NULL);
	if (n > 0) {
		len = hostlist_compress_ordered((const char *const *)names, (size_t)n, NULL, 0);
		FUZZ_ASSERT(len > 0);
		buf = malloc((size_t)len + 1);
		FUZZ_ASSERT(buf);
		FUZZ_ASSERT(hostlist_compress_ordered((const char *const *)names, (size_t)n, buf, (size_t)len + 1) == len);
		m = hostlist_expand(buf, 4096, &again);
		FUZZ_ASSERT(m == n);
		for (int i = 0; i < n; i++)
			FUZZ_ASSERT(strcmp(names[i], again[i]) == 0);
	}
	hostlist_free(names, n > 0 ? (size_t)n : 0);
	hostlist_free(again, m > 0 ? (size_t)m : 0);
	free(buf);
	free(s);
	return 0;
}
