/* SPDX-License-Identifier: MIT */
/* A uid's user name, cached: the connection layer's and every handler's. */
#include <pwd.h>
#include <stdio.h>

#include "server-internal.h"

const char *server_user_name(struct server *s, uid_t uid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	unsigned i;

	/* getpwuid goes through nsswitch (~0.12 ms): cache per uid. */
	for (i = 0; i < sizeof(s->users) / sizeof(s->users[0]); i++)
		if (s->users[i].name[0] && s->users[i].uid == uid)
			return s->users[i].name;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
		return NULL;
	i = s->users_next++ % (sizeof(s->users) / sizeof(s->users[0]));
	s->users[i].uid = uid;
	snprintf(s->users[i].name, sizeof(s->users[i].name), "%s", pw.pw_name);
	return s->users[i].name;
}

