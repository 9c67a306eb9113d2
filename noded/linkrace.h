/* SPDX-License-Identifier: MIT */
/* A race of TCP connects to qpoold: every server of a list dialled at once, the first to speak wins. */
#ifndef QPOOL_LINKRACE_H
#define QPOOL_LINKRACE_H

#include <jansson.h>
#include <stddef.h>
#include <systemd/sd-event.h>

#include "transport.h"
#include "wire.h"

/* After the first server spoke, how long one the race prefers (the active
 * a standby named) is still awaited; the hello of a qpoold that is up
 * follows its accept in well under a millisecond on an idle link. */
#define LINK_RACE_GRACE_MS 500

struct link_race;

/* The race's end, called once: the winner's fd (the caller's now,
 * non-blocking, close-on-exec), its entry of the list, its first frame
 * (the hello, or a busy server's refusal: the callee's reference) and the
 * bytes read after it (moved to the callee); or fd -1 when every entry
 * failed, tried naming each and why. The race may be destroyed from it. */
typedef void (*link_race_done_f)(void *userdata, int fd, size_t idx, json_t *first, struct wirebuf *in,
				 const char *tried);

/* Dials every entry of list (each "HOST:PORT") at once, each with a
 * deadline of timeout_ms. The first to send a whole frame wins, except
 * that an entry prefer (SIZE_MAX: none) wins over the others if it speaks
 * within LINK_RACE_GRACE_MS of the first, and an entry avoid (SIZE_MAX:
 * none) or a refusal wins only when nothing else answers within that
 * grace. The losers are closed. 0, or -ENOMEM, -EINVAL (an entry is not
 * TCP, or the list is empty). */
int link_race_start(sd_event *ev, const struct transport_servers *list, size_t prefer, size_t avoid,
		    unsigned timeout_ms, link_race_done_f done, void *userdata, struct link_race **ret);

/* Entry idx of the race's list (valid until the race is destroyed). */
const char *link_race_addr(const struct link_race *r, size_t idx);

/* Closes every connection still in the race; NULL is accepted. */
void link_race_destroy(struct link_race *r);

#endif
