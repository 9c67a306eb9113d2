/* SPDX-License-Identifier: MIT */
/* What every command shares: its one-line error. */
#ifndef QPOOL_CMD_H
#define QPOOL_CMD_H

/* Prints "<program>: <message>" and a newline on stderr, the program being
 * the command's own name (qsub, qdel, ...). Returns status, so a command
 * can write `return cmd_fail(1, "...")`. */
int cmd_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
