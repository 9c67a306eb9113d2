/* SPDX-License-Identifier: MIT */
/* User names by uid (users.c). */
#ifndef QPOOL_USERS_H
#define QPOOL_USERS_H

#include <sys/types.h>

struct hctx;

/* users.c: uid's user name (cached), or NULL when it has none. */
const char *server_user_name(struct hctx *h, uid_t uid);

#endif
