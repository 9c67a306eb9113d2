/* SPDX-License-Identifier: MIT */
/* How qpool's programs find each other: beside their own executable. */
#ifndef QPOOL_EXE_H
#define QPOOL_EXE_H

#include <stddef.h>

/* The path of the program name in the directory of /proc/self/exe (an
 * install or a build tree alike). Returns 0, -ENAMETOOLONG or -errno. */
int exe_sibling(const char *name, char *buf, size_t len);

#endif
