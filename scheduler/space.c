/* SPDX-License-Identifier: MIT */
/* Room in the state directory: while it is below state_min_free, qsub is
 * refused and nothing is dispatched, so no queued job fails for lack of
 * room; completions wait for their commit; all goes on when space returns. */
#include <errno.h>
#include <stdio.h>
#include <sys/statvfs.h>

#include "log.h"
#include "server-internal.h"

/* Bytes root may still write in state_dir; UINT64_MAX when statvfs fails
 * (then only a failed commit says the disk is full). f_bfree, not
 * f_bavail: the daemons are root, and blocks the file system keeps for
 * root (ext4's 5%) are exactly what keeps them going when jobs fill it. */
static uint64_t state_free(const struct server *s)
{
	struct statvfs st;

	if (statvfs(s->config->state_dir, &st) < 0)
		return UINT64_MAX;
	return (uint64_t)st.f_bfree * st.f_frsize;
}

/* Completions whose commit found no room go back to the pending list. */
static void retry_requeue(struct server *s)
{
	struct pending *p;

	while ((p = s->retry)) {
		s->retry = p->next;
		p->next = NULL;
		*s->pending_tail = p;
		s->pending_tail = &p->next;
		s->n_pending++;
	}
}

void server_space_check(struct server *s)
{
	uint64_t avail = state_free(s);
	bool full = avail < s->config->state_min_free;

	if (full == s->state_full)
		return;
	s->state_full = full;
	if (full) {
		log_warn("state directory %s: %llu KiB free, below state_min_free: "
			 "no submissions or dispatches until there is room", s->config->state_dir,
			 (unsigned long long)avail / 1024);
		return;
	}
	log_info("state directory %s: %llu KiB free again; going on", s->config->state_dir,
		 avail == UINT64_MAX ? 0ULL : (unsigned long long)avail / 1024);
	retry_requeue(s);
	s->sched_dirty = true;
}

bool server_state_full(struct hctx *h)
{
	struct server *s = server_of(h);
	/* Re-checked here too, so the first qsub after space returns goes in. */
	if (s->state_full)
		server_space_check(s);
	return s->state_full;
}

void server_space_exhausted(struct server *s)
{
	if (!s->state_full)
		log_warn("state directory %s is full: no submissions or dispatches until there is room",
			 s->config->state_dir);
	s->state_full = true;
}

int server_space_refuse(struct hctx *h, char *buf, size_t len)
{
	struct server *s = server_of(h);
	uint64_t avail = state_free(s);

	snprintf(buf, len, "qpoold's state directory is full (%llu KiB free, state_min_free %llu KiB): "
		 "no new jobs until there is room; queued jobs wait",
		 avail == UINT64_MAX ? 0ULL : (unsigned long long)avail / 1024,
		 (unsigned long long)s->config->state_min_free / 1024);
	return -ENOSPC;
}
