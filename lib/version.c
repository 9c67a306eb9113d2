/* SPDX-License-Identifier: MIT */
/* --version for every qpool program. */
#include <stdio.h>
#include <string.h>

#include "version.h"

bool version_requested(int argc, char **argv)
{
	return argc == 2 && strcmp(argv[1], "--version") == 0;
}

int version_print(const char *prog)
{
	printf("%s (qpool) %s\n", prog, QPOOL_VERSION);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
