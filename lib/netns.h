/* SPDX-License-Identifier: MIT */
/* netns: which network namespace of which running kernel this process is in. */
#ifndef QPOOL_NETNS_H
#define QPOOL_NETNS_H

#include <stddef.h>

/* Writes "BOOT_ID:INODE" into buf: the kernel's boot id and the inode of
 * this process's network namespace. Two processes with the same text
 * reach each other on loopback; the boot id keeps two hosts (whose
 * namespace inodes may collide) apart. Returns 0, -ENOENT (no /proc, no
 * boot id) or -ENOSPC (len too small). */
int netns_id(char *buf, size_t len);

#endif
