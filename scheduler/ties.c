/* SPDX-License-Identifier: MIT */
/* Jobs tied to a client's connection (qexec outside a job): cancelled once
 * no connection has held them for TIE_GRACE_SEC. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "hctx.h"
#include "job-end.h"
#include "log.h"
#include "pool.h"
#include "ties.h"
#include "timeutil.h"

/* Long enough for a client to reconnect over a lossy link (a TCP connect
 * waits up to 30 s, lib/transport.c, but the first retry comes at 1 s),
 * short enough that a job whose qexec was killed does not hold its CPUs
 * long. */
#define TIE_GRACE_SEC 15
/* Bounds: a client ties its own jobs, one or a few; each entry is 24
 * bytes. */
#define TIES_PER_CONN 16
#define TIES_MAX 65536

struct tie {
	int64_t jobid;
	struct conn *conn;   /* NULL once it closed */
	int64_t lost;        /* monotonic ns it closed */
};

struct ties {
	struct tie *v;
	size_t n, cap;
};

static struct ties *ties_get(struct hctx *s)
{
	if (!s->ties)
		s->ties = calloc(1, sizeof(*s->ties));
	return s->ties;
}

void ties_destroy(struct hctx *s)
{
	if (s->ties) {
		free(s->ties->v);
		free(s->ties);
		s->ties = NULL;
	}
}

static void tie_remove(struct ties *t, size_t i)
{
	t->v[i] = t->v[--t->n];
}

int ties_add(struct hctx *s, struct conn *c, int64_t jobid)
{
	struct ties *t = ties_get(s);
	size_t mine = 0;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].jobid == jobid && (t->v[i].conn == c || !t->v[i].conn)) {
			/* Again on the same connection, or back after a lost one. */
			t->v[i].conn = c;
			t->v[i].lost = 0;
			return 0;
		}
		if (t->v[i].conn == c)
			mine++;
	}
	if (mine >= TIES_PER_CONN || t->n >= TIES_MAX)
		return -ENOSPC;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct tie *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct tie){ .jobid = jobid, .conn = c };
	return 0;
}

void ties_conn_closed(struct hctx *s, const struct conn *c)
{
	struct ties *t = s->ties;
	int64_t now = time_mono_ns();

	for (size_t i = 0; t && i < t->n; i++)
		if (t->v[i].conn == c) {
			t->v[i].conn = NULL;
			t->v[i].lost = now;
		}
}

/* Whether another connection still holds jobid. */
static bool tie_held(const struct ties *t, int64_t jobid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].jobid == jobid && t->v[i].conn)
			return true;
	return false;
}

void ties_check(struct hctx *s)
{
	struct ties *t = s->ties;
	int64_t now = time_mono_ns();

	for (size_t i = 0; t && i < t->n;) {
		struct tie *e = &t->v[i];
		struct job *j = pool_job_find(s->pool, e->jobid);
		int64_t id = e->jobid;
		int r;

		if (!j || j->state == JOB_EXITING) {   /* over, or ending anyway */
			tie_remove(t, i);
			continue;
		}
		if (e->conn || now - e->lost < (int64_t)TIE_GRACE_SEC * 1000000000) {
			i++;
			continue;
		}
		tie_remove(t, i);
		if (tie_held(t, id))
			continue;
		r = server_job_cancel(s, j, "(its qexec went away)");
		if (r < 0)
			log_warn("job %lld: its qexec went away, and it could not be cancelled: %s",
				    (long long)id, strerror(-r));
		else
			log_info("job %lld cancelled: the connection that tied it closed %d s ago",
				 (long long)id, TIE_GRACE_SEC);
	}
}
