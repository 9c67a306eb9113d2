/* SPDX-License-Identifier: MIT */
/* Per-uid connection counts and log rate limits, in one open-addressing table. */
#include <errno.h>
#include <stdlib.h>

#include "peers.h"

/* One slot per uid ever seen; uids are few (the host's users), so slots
 * are never freed. */
struct peer {
	bool used;
	uid_t uid;
	pid_t pid;                /* last pid a log line was about */
	unsigned conns;
	uint64_t input;           /* bytes of its connections' input buffers */
	unsigned logged;          /* lines in this interval */
	unsigned suppressed;      /* lines refused in this interval */
	int64_t log_start;        /* monotonic ns the interval began */
};

struct peers {
	struct peer *slot;
	size_t cap, used;         /* cap: a power of two */
};

int peers_create(struct peers **ret)
{
	struct peers *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->cap = 64;
	p->slot = calloc(p->cap, sizeof(*p->slot));
	if (!p->slot) {
		free(p);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

void peers_destroy(struct peers *p)
{
	if (!p)
		return;
	free(p->slot);
	free(p);
}

static size_t uid_hash(uid_t uid, size_t cap)
{
	return ((uint32_t)uid * 2654435761u) & (cap - 1);
}

static struct peer *peer_find(const struct peers *p, uid_t uid)
{
	for (size_t s = uid_hash(uid, p->cap);; s = (s + 1) & (p->cap - 1)) {
		if (!p->slot[s].used)
			return NULL;
		if (p->slot[s].uid == uid)
			return &p->slot[s];
	}
}

static int peers_grow(struct peers *p)
{
	size_t cap = p->cap * 2;
	struct peer *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++) {
		size_t s;

		if (!p->slot[i].used)
			continue;
		for (s = uid_hash(p->slot[i].uid, cap); slot[s].used; s = (s + 1) & (cap - 1))
			;
		slot[s] = p->slot[i];
	}
	free(p->slot);
	p->slot = slot;
	p->cap = cap;
	return 0;
}

static struct peer *peer_get(struct peers *p, uid_t uid)
{
	struct peer *e = peer_find(p, uid);
	size_t s;

	if (e)
		return e;
	if ((p->used + 1) * 2 > p->cap && peers_grow(p) < 0)
		return NULL;
	for (s = uid_hash(uid, p->cap); p->slot[s].used; s = (s + 1) & (p->cap - 1))
		;
	e = &p->slot[s];
	e->used = true;
	e->uid = uid;
	p->used++;
	return e;
}

int peers_conn_add(struct peers *p, uid_t uid, unsigned max)
{
	struct peer *e = peer_get(p, uid);

	if (!e)
		return -ENOMEM;
	if (uid != 0 && max && e->conns >= max)
		return -EUSERS;
	e->conns++;
	return 0;
}

void peers_conn_del(struct peers *p, uid_t uid)
{
	struct peer *e = peer_find(p, uid);

	if (e && e->conns)
		e->conns--;
}

unsigned peers_conns(const struct peers *p, uid_t uid)
{
	const struct peer *e = peer_find(p, uid);

	return e ? e->conns : 0;
}

uint64_t peers_input_add(struct peers *p, uid_t uid, int64_t delta)
{
	struct peer *e = peer_get(p, uid);

	if (!e)
		return UINT64_MAX;
	if (delta < 0 && (uint64_t)-delta > e->input)
		e->input = 0;
	else
		e->input += (uint64_t)delta;
	return e->input;
}

bool peers_log_pass(struct peers *p, uid_t uid, pid_t pid, int64_t now)
{
	struct peer *e = peer_get(p, uid);

	if (!e)
		return false;
	e->pid = pid;
	if (e->logged == 0 && e->suppressed == 0)
		e->log_start = now;
	if (e->logged < PEERS_LOG_BURST) {
		e->logged++;
		return true;
	}
	e->suppressed++;
	return false;
}

void peers_log_flush(struct peers *p, int64_t now, peers_suppressed_f f, void *userdata)
{
	for (size_t i = 0; i < p->cap; i++) {
		struct peer *e = &p->slot[i];

		if (!e->used || (!e->logged && !e->suppressed) || now - e->log_start < PEERS_LOG_INTERVAL_NS)
			continue;
		if (e->suppressed)
			f(e->uid, e->pid, e->suppressed, userdata);
		e->logged = 0;
		e->suppressed = 0;
	}
}
