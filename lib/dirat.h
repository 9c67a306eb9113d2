/* SPDX-License-Identifier: MIT */
#ifndef QPOOL_DIRAT_H
#define QPOOL_DIRAT_H

#include <dirent.h>

/* A directory stream of dirfd itself, on a descriptor of its own (so
 * closedir leaves dirfd open): NULL with errno set when it cannot be
 * had. */
DIR *dir_stream_at(int dirfd);

#endif
