/* SPDX-License-Identifier: MIT */
/* The stdin windows of one job's tasks on a node (inwin.h). */
#include "inwin.h"
#include "taskclient.h"

static size_t extra_of(const struct inwin *w)
{
	return w->win > TASKCLIENT_IN_START ? w->win - TASKCLIENT_IN_START : 0;
}

void inwin_open(struct inwin_job *j, struct inwin *w)
{
	inwin_release(j, w);
	w->win = TASKCLIENT_IN_START;
}

void inwin_consume(struct inwin_job *j, struct inwin *w, size_t n)
{
	size_t before = extra_of(w);

	w->win -= n < w->win ? n : w->win;
	j->extra -= before - extra_of(w);
}

size_t inwin_grant(struct inwin_job *j, struct inwin *w, bool open, size_t tasks)
{
	size_t share = TASKCLIENT_IN_WINDOW - TASKCLIENT_IN_START, target = TASKCLIENT_IN_START, free_extra, n;

	/* An equal share of the pool each, at most a whole window: a task
	 * that holds more (it had it before the others came) is granted
	 * nothing more until it is back under its share. */
	if (open) {
		if (tasks > 0 && INWIN_JOB_EXTRA / tasks < share)
			share = INWIN_JOB_EXTRA / tasks;
		free_extra = INWIN_JOB_EXTRA - j->extra + extra_of(w);
		target += share < free_extra ? share : free_extra;
	}
	if (w->win + INWIN_GRANT_MIN > target)
		return 0;
	n = target - w->win;
	j->extra -= extra_of(w);
	w->win = target;
	j->extra += extra_of(w);
	return n;
}

void inwin_release(struct inwin_job *j, struct inwin *w)
{
	j->extra -= extra_of(w);
	w->win = 0;
}
