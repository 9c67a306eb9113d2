/* SPDX-License-Identifier: MIT */
/* The group commit (commit.c): the loop iteration's submissions and
 * results in one transaction, with a pass's dispatches when results are
 * among them; and their hold for the next pass's commit. */
#ifndef QPOOL_COMMIT_H
#define QPOOL_COMMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct server;

/* How long results of jobs that ended may wait for the next pass's
 * commit (issue 39): a job's end and another job's dispatch are then one
 * fdatasync, not two. */
#define LINGER_NS (2 * NSEC_PER_MSEC)

/* Commits what is pending (s->pending), then replies and launches; pass:
 * a pass is due, and joins the commit if results are among them. */
void pending_flush(struct server *s, bool pass);
/* Whether the pending results may wait, at most LINGER_NS, for the next pass
 * (arms s->linger_src the first time). */
bool pending_linger(struct server *s);
/* s->linger_src's handler: the hold is over. */
int pending_linger_handler(sd_event_source *src, uint64_t usec, void *userdata);

#endif
