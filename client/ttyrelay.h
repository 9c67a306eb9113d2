/* SPDX-License-Identifier: MIT */
/* qsub -I's side of an interactive job: the user's terminal to and from a socket. */
#ifndef QPOOL_TTYRELAY_H
#define QPOOL_TTYRELAY_H

#include "error.h"

/* Connects to the Unix socket at path, retrying for up to timeout_ms
 * while it is not there yet (ENOENT, ECONNREFUSED). Returns the fd
 * (O_CLOEXEC) or -errno with err saying what was tried. */
int ttyrelay_connect(const char *path, int timeout_ms, struct error *err);

/* Relays standard input to fd and fd to standard output until fd ends.
 * When standard input is a terminal it is put in raw mode meanwhile (the
 * job's pty does the line editing and echo) and restored however this
 * returns; at the end of a non-terminal input the write side of fd is
 * shut down, which the other end takes as end of input. 0 or -errno. */
int ttyrelay_run(int fd, struct error *err);

#endif
