/* SPDX-License-Identifier: MIT */
/* Helpers shared by the fuzz harnesses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void fuzz_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "%s:%d: oracle failed: %s\n", file, line, what);
	abort();
}
