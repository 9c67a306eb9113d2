/* SPDX-License-Identifier: MIT */
/* What handlers may ask of qpoold's loop (loop.h): read from the server's
 * fields, which handlers do not see. Calls nothing, so no part that uses
 * it is used back. */
#include "loop.h"
#include "server-internal.h"

bool server_leaving(struct hctx *h)
{
	struct server *s = server_of(h);

	return s->stopping || s->stepping_down;
}

void server_est_stats(struct hctx *h, struct server_est_stats *ret)
{
	struct server *s = server_of(h);

	ret->replay = s->est_replay;
	ret->ns_last = s->est_ns_last;
	ret->ns_max = s->est_ns_max;
}
