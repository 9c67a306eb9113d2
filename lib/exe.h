/* SPDX-License-Identifier: MIT */
/* How qpool's programs find each other: beside their own executable. */
#ifndef QPOOL_EXE_H
#define QPOOL_EXE_H

#include <stddef.h>

/* The OOM score adjustment of qpool's root daemons (qpoold, qnoded, and
 * gded, which inherits qnoded's): a host-wide OOM kills jobs first. Not
 * -1000, which would exempt a daemon that leaks from the OOM killer
 * altogether and leave the host nothing to kill. */
#define EXE_DAEMON_OOM_SCORE_ADJ (-900)

/* The path of the program name in the directory of /proc/self/exe (an
 * install or a build tree alike). Returns 0, -ENAMETOOLONG or -errno. */
int exe_sibling(const char *name, char *buf, size_t len);

/* Writes adj to /proc/self/oom_score_adj: open, write, close, nothing
 * allocated, so a forked child may call it before exec (the job gets 0
 * back from gded's -900). Lowering needs CAP_SYS_RESOURCE. 0 or -errno. */
int exe_oom_score_adj_set(int adj);

#endif
