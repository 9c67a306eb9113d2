/* SPDX-License-Identifier: MIT */
/* qpool's version, in one place: every program's --version, the Makefile and the package. */
#ifndef QPOOL_VERSION_H
#define QPOOL_VERSION_H

#include <stdbool.h>

/* The Makefile reads this line (make VERSION, make deb): keep its form. */
#define QPOOL_VERSION "0.1.0"

/* True when the command line is `PROGRAM --version`: checked before any
 * other option, so it works without a config file or a server. */
bool version_requested(int argc, char **argv);

/* Prints "PROG (qpool) VERSION" on stdout. Returns the exit status: 0, or
 * 1 when stdout cannot be written. */
int version_print(const char *prog);

#endif
