/* SPDX-License-Identifier: MIT */
/* Jobs by id (open-addressing hash), nodes by name, the IQS rotation, and
 * the scheduling pass: IQS order, live limits, reserve-aware placement. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iqs.h"
#include "placement.h"
#include "pool.h"
#include "timeutil.h"

/* The waiting jobs and running counts of one (queue, user), kept as jobs
 * come, change state and go, so a pass costs what it looks at, not the
 * number of jobs: rebuilding the IQS view from every job was ~17% of
 * qpoold's CPU in a 2,000-job run and a few ms per pass at 100,000. */
struct pool_user {
	struct pool_queue *queue;
	uid_t uid;
	unsigned running;             /* running and exiting */
	unsigned waiting;             /* queued and held */
	struct job *head, *tail;      /* queued jobs, ascending id */
	struct pool_user *next;
};

struct pool_queue {
	char name[QUEUE_NAME_MAX];
	unsigned running;             /* running and exiting */
	unsigned waiting;             /* queued and held */
	struct pool_user *users;
	size_t n_users;
	struct pool_queue *next;
};

struct pool {
	struct job *head, *tail;      /* submit order */
	struct pool_queue *queues;
	struct job **table;           /* hash by id; NULL empty, TOMB deleted */
	size_t cap, used, tombs;
	struct node *nodes, *nodes_tail; /* registration order */
	struct node **node_table;     /* hash by name; NULL empty (nodes are never freed) */
	size_t node_cap, node_used;
	struct shared_topo *topos;    /* distinct node topologies */
	struct rotation *rot;         /* (queue, uid) -> last dispatch seq */
	size_t n_rot, cap_rot;
	uint64_t seq;                 /* the last seq handed out */
	int64_t deferred_next;        /* earliest qsub -a time passed over; 0: none */
	struct pool_stats stats;
	int64_t clock;                /* pool_clock_set; 0: time(NULL) */
	struct node **nv;             /* scratch of a pass: nodes in order, */
	unsigned *room;               /* their room for the job at hand, */
	bool *ok;                     /* whether it may use them */
	size_t n_nodes, cap_nv;
};

/* What chunks_assign gives one node: MPI slots, memory, the first chunk
 * (in request order) it got, for the entry's place in the job. */
struct share {
	unsigned mpiprocs;
	unsigned ompthreads;
	uint64_t mem;
	unsigned first;
};

struct rotation {
	char queue[QUEUE_NAME_MAX];
	uid_t uid;
	uint64_t seq;
};

/* Nodes of one pool are mostly alike: they share one loaded topology per
 * distinct hwloc text (placement only reads it). */
struct shared_topo {
	char *text;
	size_t len;
	hwloc_topology_t topo;
	unsigned refs;
	struct shared_topo *next;
};

static struct job tomb;
#define TOMB (&tomb)

const char *node_state_name(enum node_state s)
{
	static const char *names[] = { "up", "down", "drained" };

	return (unsigned)s < 3 ? names[s] : "unknown";
}

int pool_create(struct pool **ret)
{
	struct pool *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->cap = 1024;
	p->table = calloc(p->cap, sizeof(*p->table));
	if (!p->table) {
		free(p);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

void pool_destroy(struct pool *p)
{
	if (!p)
		return;
	for (struct job *j = p->head, *n; j; j = n) {
		n = j->next;
		job_free(j);
	}
	for (struct pool_queue *q = p->queues, *nq; q; q = nq) {
		nq = q->next;
		for (struct pool_user *u = q->users, *nu; u; u = nu) {
			nu = u->next;
			free(u);
		}
		free(q);
	}
	for (struct node *nd = p->nodes, *n; nd; nd = n) {
		n = nd->next;
		free(nd->name);
		free(nd->rt_reason);
		free(nd->drain_reason);
		json_decref(nd->topology);
		free(nd);
	}
	for (struct shared_topo *t = p->topos, *n; t; t = n) {
		n = t->next;
		hwloc_topology_destroy(t->topo);
		free(t->text);
		free(t);
	}
	free(p->nv);
	free(p->room);
	free(p->ok);
	free(p->node_table);
	free(p->table);
	free(p->rot);
	free(p);
}

static size_t slot_of(int64_t id, size_t cap)
{
	/* Fibonacci hashing spreads consecutive ids. */
	return (size_t)(((uint64_t)id * 11400714819323198485ULL) >> 20) & (cap - 1);
}

static int table_grow(struct pool *p)
{
	size_t cap = p->used * 4 > p->cap ? p->cap * 2 : p->cap;
	struct job **t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++) {
		struct job *j = p->table[i];
		size_t s;

		if (!j || j == TOMB)
			continue;
		for (s = slot_of(j->id, cap); t[s]; s = (s + 1) & (cap - 1))
			;
		t[s] = j;
	}
	free(p->table);
	p->table = t;
	p->cap = cap;
	p->tombs = 0;
	return 0;
}

static struct pool_queue *pool_queue_find(const struct pool *p, const char *name)
{
	for (struct pool_queue *q = p->queues; q; q = q->next)
		if (strcmp(q->name, name) == 0)
			return q;
	return NULL;
}

static struct pool_user *pool_user_get(struct pool *p, const char *queue, uid_t uid)
{
	struct pool_queue *q = pool_queue_find(p, queue);
	struct pool_user *u;

	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q)
			return NULL;
		snprintf(q->name, sizeof(q->name), "%s", queue);
		q->next = p->queues;
		p->queues = q;
	}
	for (u = q->users; u; u = u->next)
		if (u->uid == uid)
			return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->queue = q;
	u->uid = uid;
	u->next = q->users;
	q->users = u;
	q->n_users++;
	return u;
}

static bool state_active(enum job_state s)
{
	return s == JOB_RUNNING || s == JOB_EXITING;
}

/* Enters j, in its current state, into its (queue, user) index. */
static void index_add(struct job *j)
{
	struct pool_user *u = j->user;
	struct job *after;

	if (j->state == JOB_QUEUED || j->state == JOB_HELD) {
		u->waiting++;
		u->queue->waiting++;
	}
	if (state_active(j->state)) {
		u->running++;
		u->queue->running++;
	} else if (j->state == JOB_QUEUED) {
		/* New jobs have the highest id; a requeued one walks back, and
		 * so does one of higher qsub -p than its owner's others: a
		 * user's waiting jobs go by priority, then oldest first. */
		for (after = u->tail; after && (after->priority < j->priority ||
						(after->priority == j->priority && after->id > j->id));
		     after = after->wprev)
			;
		j->wprev = after;
		j->wnext = after ? after->wnext : u->head;
		if (j->wnext)
			j->wnext->wprev = j;
		else
			u->tail = j;
		if (after)
			after->wnext = j;
		else
			u->head = j;
	}
}

static void index_del(struct job *j)
{
	struct pool_user *u = j->user;

	if (j->state == JOB_QUEUED || j->state == JOB_HELD) {
		u->waiting--;
		u->queue->waiting--;
	}
	if (state_active(j->state)) {
		u->running--;
		u->queue->running--;
	} else if (j->state == JOB_QUEUED) {
		if (j->wprev)
			j->wprev->wnext = j->wnext;
		else
			u->head = j->wnext;
		if (j->wnext)
			j->wnext->wprev = j->wprev;
		else
			u->tail = j->wprev;
		j->wnext = j->wprev = NULL;
	}
}

static void node_link_entry(struct node *n, struct alloc_entry *e)
{
	n->n_excl += e->job->excl;
	e->where = n;
	e->nprev = NULL;
	e->nnext = n->jobs;
	if (n->jobs)
		n->jobs->nprev = e;
	n->jobs = e;
}

static void node_unlink_entry(struct alloc_entry *e)
{
	struct node *n = e->where;

	if (!n)
		return;
	n->n_excl -= e->job->excl;
	if (e->nprev)
		e->nprev->nnext = e->nnext;
	else
		n->jobs = e->nnext;
	if (e->nnext)
		e->nnext->nprev = e->nprev;
	e->where = NULL;
	e->nnext = e->nprev = NULL;
}

void pool_waiting_count(const struct pool *p, const char *queue, uid_t uid, struct pool_waiting *ret)
{
	memset(ret, 0, sizeof(*ret));
	/* Queues are few; users per queue are the users with jobs in it. */
	for (const struct pool_queue *q = p->queues; q; q = q->next) {
		bool same = strcmp(q->name, queue) == 0;

		ret->all += q->waiting;
		if (same)
			ret->queue += q->waiting;
		for (const struct pool_user *u = q->users; u; u = u->next)
			if (u->uid == uid) {
				ret->user += u->waiting;
				if (same)
					ret->queue_user += u->waiting;
				break;
			}
	}
}

struct alloc_entry *pool_node_jobs(const struct node *n)
{
	return n->jobs;
}

void pool_job_state_set(struct pool *p, struct job *j, enum job_state state)
{
	index_del(j);
	j->state = state;
	index_add(j);
}

int pool_job_move(struct pool *p, struct job *j, const char *queue)
{
	struct pool_user *u = pool_user_get(p, queue, j->uid);

	if (!u)
		return -ENOMEM;
	index_del(j);
	snprintf(j->queue, sizeof(j->queue), "%s", queue);
	j->user = u;
	index_add(j);
	return 0;
}

/* Unlinks j from its user's waiting list. */
static void wait_unlink(struct job *j)
{
	struct pool_user *u = j->user;

	if (j->wprev)
		j->wprev->wnext = j->wnext;
	else
		u->head = j->wnext;
	if (j->wnext)
		j->wnext->wprev = j->wprev;
	else
		u->tail = j->wprev;
	j->wnext = j->wprev = NULL;
}

/* Links j into its user's waiting list after `after` (NULL: first). */
static void wait_link_after(struct job *j, struct job *after)
{
	struct pool_user *u = j->user;

	j->wprev = after;
	j->wnext = after ? after->wnext : u->head;
	if (j->wnext)
		j->wnext->wprev = j;
	else
		u->tail = j;
	if (after)
		after->wnext = j;
	else
		u->head = j;
}

int pool_job_swap(struct pool *p, struct job *a, struct job *b)
{
	struct job *a_prev, *b_prev;

	if (a == b)
		return 0;
	if (a->user != b->user || a->state != JOB_QUEUED || b->state != JOB_QUEUED)
		return -EINVAL;
	if (a->wnext == b) {
		wait_unlink(b);
		wait_link_after(b, a->wprev);
		return 0;
	}
	if (b->wnext == a) {
		wait_unlink(a);
		wait_link_after(a, b->wprev);
		return 0;
	}
	a_prev = a->wprev;
	b_prev = b->wprev;
	wait_unlink(a);
	wait_unlink(b);
	wait_link_after(a, b_prev);
	wait_link_after(b, a_prev);
	return 0;
}

int pool_job_add(struct pool *p, struct job *j)
{
	size_t s;

	if ((p->used + p->tombs + 1) * 2 > p->cap) {
		int r = table_grow(p);

		if (r < 0)
			return r;
	}
	for (s = slot_of(j->id, p->cap); p->table[s] && p->table[s] != TOMB; s = (s + 1) & (p->cap - 1))
		if (p->table[s]->id == j->id)
			return -EEXIST;
	j->user = pool_user_get(p, j->queue, j->uid);
	if (!j->user || pool_job_link(p, j) < 0)
		return -ENOMEM;
	if (p->table[s] == TOMB)
		p->tombs--;
	p->table[s] = j;
	p->used++;
	j->next = NULL;
	j->prev = p->tail;
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	index_add(j);
	return 0;
}

struct job *pool_job_find(const struct pool *p, int64_t id)
{
	for (size_t s = slot_of(id, p->cap); p->table[s]; s = (s + 1) & (p->cap - 1))
		if (p->table[s] != TOMB && p->table[s]->id == id)
			return p->table[s];
	return NULL;
}

void pool_job_remove(struct pool *p, struct job *j)
{
	index_del(j);
	for (size_t s = slot_of(j->id, p->cap); p->table[s]; s = (s + 1) & (p->cap - 1))
		if (p->table[s] == j) {
			p->table[s] = TOMB;
			p->used--;
			p->tombs++;
			break;
		}
	pool_job_release(p, j);
	if (j->prev)
		j->prev->next = j->next;
	else
		p->head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		p->tail = j->prev;
	job_free(j);
}

struct job *pool_jobs(const struct pool *p)
{
	return p->head;
}

static size_t name_hash(const char *name)
{
	uint64_t h = 14695981039346656037ULL;   /* FNV-1a */

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ULL;
	return (size_t)h;
}

struct node *pool_node_find(const struct pool *p, const char *name)
{
	if (!p->node_cap)
		return NULL;
	for (size_t i = name_hash(name) & (p->node_cap - 1); p->node_table[i];
	     i = (i + 1) & (p->node_cap - 1))
		if (strcmp(p->node_table[i]->name, name) == 0)
			return p->node_table[i];
	return NULL;
}

static void node_table_put(struct node **table, size_t cap, struct node *n)
{
	size_t i = name_hash(n->name) & (cap - 1);

	while (table[i])
		i = (i + 1) & (cap - 1);
	table[i] = n;
}

struct node *pool_node_get(struct pool *p, const char *name)
{
	struct node *n = pool_node_find(p, name);

	if (n)
		return n;
	/* Keep the table at most half full. */
	if (2 * (p->node_used + 1) > p->node_cap) {
		size_t cap = p->node_cap ? 2 * p->node_cap : 64;
		struct node **t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (struct node *o = p->nodes; o; o = o->next)
			node_table_put(t, cap, o);
		free(p->node_table);
		p->node_table = t;
		p->node_cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n || !(n->name = strdup(name))) {
		free(n);
		return NULL;
	}
	n->state = NODE_DOWN;
	node_table_put(p->node_table, p->node_cap, n);
	p->node_used++;
	/* Keep nodes in registration order for listings. */
	if (p->nodes_tail)
		p->nodes_tail->next = n;
	else
		p->nodes = n;
	p->nodes_tail = n;
	return n;
}

int pool_topology_get(struct pool *p, const char *text, size_t len, hwloc_topology_t *ret, struct error *err)
{
	struct shared_topo *t;
	int r;

	for (t = p->topos; t; t = t->next)
		if (t->len == len && memcmp(t->text, text, len) == 0) {
			t->refs++;
			*ret = t->topo;
			return 0;
		}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->text = malloc(len ? len : 1))) {
		free(t);
		return error_set(err, -ENOMEM, "out of memory");
	}
	memcpy(t->text, text, len);
	t->len = len;
	r = placement_topology_load(text, len, &t->topo, err);
	if (r < 0) {
		free(t->text);
		free(t);
		return r;
	}
	t->refs = 1;
	t->next = p->topos;
	p->topos = t;
	*ret = t->topo;
	return 0;
}

void pool_topology_put(struct pool *p, hwloc_topology_t topo)
{
	for (struct shared_topo **tp = &p->topos, *t; (t = *tp); tp = &t->next)
		if (t->topo == topo) {
			if (--t->refs == 0) {
				*tp = t->next;
				hwloc_topology_destroy(t->topo);
				free(t->text);
				free(t);
			}
			return;
		}
}

struct node *pool_nodes(const struct pool *p)
{
	return p->nodes;
}

bool pool_deferred_due(struct pool *p, int64_t now)
{
	if (!p->deferred_next || now < p->deferred_next)
		return false;
	p->deferred_next = 0;
	return true;
}

unsigned pool_node_max_cpus(const struct pool *p)
{
	unsigned max = 0;

	for (struct node *n = p->nodes; n; n = n->next) {
		unsigned c = cpumask_count(&n->cpus);

		if (c > max)
			max = c;
	}
	return max;
}

bool pool_node_usable(const struct node *n)
{
	return n->state == NODE_UP && n->link && !n->drain;
}

/* The masks a job of this reserve kind draws from: realtime shares CPUs
 * with normal jobs (they soak its idle cycles at normal priority); an
 * exclusive job needs CPUs nobody holds in either sense. */
static void node_avail(const struct node *n, enum queue_reserve r, struct cpumask *ret)
{
	for (size_t i = 0; i < CPUMASK_MAX / 64; i++) {
		switch (r) {
		case QUEUE_RESERVE_NONE:
			ret->bits[i] = n->free.bits[i];
			break;
		case QUEUE_RESERVE_REALTIME:
			ret->bits[i] = n->rt_free.bits[i];
			break;
		case QUEUE_RESERVE_EXCLUSIVE:
			ret->bits[i] = n->free.bits[i] & n->rt_free.bits[i];
			break;
		}
	}
}

/* Takes claim out of m, or gives it back less the CPUs in keep. */
static void mask_take(struct cpumask *m, const struct cpumask *claim, const struct cpumask *keep, bool give)
{
	for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
		m->bits[i] = give ? m->bits[i] | (claim->bits[i] & ~keep->bits[i]) : m->bits[i] & ~claim->bits[i];
}

/* Moves e's claim out of (or back into) its node's free masks. Never gives
 * back CPUs the node does not have (it re-registered smaller) nor CPUs
 * another of its jobs still holds: after a restart, a job whose CPUs went
 * back early (job.exited) and the job that got them are both claimed
 * until the first one ends. */
static void node_account(struct node *n, const struct alloc_entry *e, bool give)
{
	enum queue_reserve r = e->job->reserve;
	struct cpumask keep, keep_rt;

	for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
		keep.bits[i] = keep_rt.bits[i] = ~n->cpus.bits[i];
	for (const struct alloc_entry *o = give ? n->jobs : NULL; o; o = o->nnext) {
		if (o == e || o->cpus_back)
			continue;
		for (size_t i = 0; i < CPUMASK_MAX / 64; i++) {
			if (o->job->reserve != QUEUE_RESERVE_REALTIME)
				keep.bits[i] |= o->claim.bits[i];
			if (o->job->reserve != QUEUE_RESERVE_NONE)
				keep_rt.bits[i] |= o->claim.bits[i];
		}
	}
	if (r != QUEUE_RESERVE_REALTIME)
		mask_take(&n->free, &e->claim, &keep, give);
	if (r != QUEUE_RESERVE_NONE)
		mask_take(&n->rt_free, &e->claim, &keep_rt, give);
}

int pool_job_link(struct pool *p, struct job *j)
{
	for (unsigned i = 0; i < j->n_alloc; i++) {
		struct alloc_entry *e = &j->alloc[i];
		struct node *n;

		e->job = j;
		if (!e->node || e->where)
			continue;
		n = pool_node_get(p, e->node);
		if (!n)
			return -ENOMEM;
		node_link_entry(n, e);
	}
	return 0;
}

void pool_entry_claim(struct pool *p, struct alloc_entry *e)
{
	if (e->where)
		node_account(e->where, e, false);
	e->cpus_back = false;
}

bool pool_entry_cpus_back(struct pool *p, struct alloc_entry *e)
{
	if (!e->where || e->cpus_back || !state_active(e->job->state))
		return false;
	node_account(e->where, e, true);
	e->cpus_back = true;
	return true;
}

void pool_job_release(struct pool *p, struct job *j)
{
	for (unsigned i = 0; i < j->n_alloc; i++) {
		struct alloc_entry *e = &j->alloc[i];

		if (e->where && !e->cpus_back)
			node_account(e->where, e, true);
		e->cpus_back = false;
		node_unlink_entry(e);
	}
	job_alloc_free(j);
	/* What the nodes of this run said is not the next run's. */
	free(j->result);
	j->result = NULL;
	free(j->end_reason);
	j->end_reason = NULL;
}

void pool_clock_set(struct pool *p, int64_t now)
{
	p->clock = now;
}

static int64_t pool_now(const struct pool *p)
{
	return p->clock ? p->clock : (int64_t)time(NULL);
}


/* Whether n can take a job of q (and j's excl rule) at all, and how many
 * CPUs it has for q's jobs then (*ret_room; 0 when it cannot). */
static bool node_open(const struct node *n, const struct queue_conf *q, const struct job *j, unsigned *ret_room)
{
	struct cpumask avail;

	*ret_room = 0;
	if (!pool_node_usable(n) || (q->reserve == QUEUE_RESERVE_REALTIME && !n->rt))
		return false;
	/* A node holding an excl job takes nothing beside it until it ends. */
	if (n->n_excl)
		return false;
	if (j->excl)
		for (const struct alloc_entry *e = n->jobs; e; e = e->nnext)
			if (!e->cpus_back)
				return false;
	node_avail(n, q->reserve, &avail);
	*ret_room = cpumask_count(&avail);
	return true;
}

/* Places ncpus of a job on n into e: placement over the node's topology,
 * or first fit (lowest free CPUs) for a node that sent none. Fills e's
 * cpus, claim and mems. */
static bool node_place(const struct node *n, const struct queue_conf *q, unsigned ncpus, struct alloc_entry *e)
{
	struct cpumask avail;
	struct placement pl;

	node_avail(n, q->reserve, &avail);
	if (cpumask_count(&avail) < ncpus)
		return false;
	if (n->topo) {
		if (placement_choose(n->topo, &avail, ncpus, q->smt, &pl, NULL) < 0)
			return false;
		e->cpus = pl.cpus;
		e->claim = pl.claim;
		cpumask_format(&pl.mems, e->mems, sizeof(e->mems));
		return true;
	}
	memset(&e->cpus, 0, sizeof(e->cpus));
	for (int c = cpumask_next(&avail, 0), got = 0; c >= 0 && got < (int)ncpus;
	     c = cpumask_next(&avail, c + 1), got++)
		cpumask_set(&e->cpus, (unsigned)c);
	e->claim = e->cpus;
	snprintf(e->mems, sizeof(e->mems), "%s", n->mems);
	return true;
}

/* The nodes of a placement by counts: nv[0..n) with room[i] CPUs each
 * (ok[i] false: not to use). Assigns j's chunks by its place rule and
 * sets take[i] (CPUs j would take on nv[i]); true when every chunk has a
 * node. One-node jobs are one chunk of ncpus, packed. */
static bool chunks_assign(const struct job *j, const unsigned *room, const bool *ok, size_t n, unsigned *take,
			  struct share *sh)
{
	unsigned total = 0;

	memset(take, 0, n * sizeof(*take));
	if (sh)
		memset(sh, 0, n * sizeof(*sh));
	if (!j->n_chunks || j->place == JOB_PLACE_PACK) {
		total = j->n_chunks ? 0 : j->ncpus;
		for (unsigned c = 0; c < j->n_chunks; c++)
			total += j->chunks[c].count * j->chunks[c].ncpus;
		for (size_t i = 0; i < n; i++)
			if (ok[i] && room[i] >= total) {
				take[i] = total;
				for (unsigned c = 0; sh && c < j->n_chunks; c++) {
					sh[i].mpiprocs += j->chunks[c].count * j->chunks[c].mpiprocs;
					sh[i].mem += j->chunks[c].count * j->chunks[c].mem;
					if (!sh[i].ompthreads)
						sh[i].ompthreads = j->chunks[c].ompthreads;
				}
				return true;
			}
		return false;
	}
	/* Widest chunks first: first fit then leaves no wide chunk without a
	 * node that narrow ones took. */
	unsigned order[JOB_CHUNKS_MAX];

	for (unsigned c = 0; c < j->n_chunks; c++) {
		unsigned k = c;

		while (k > 0 && j->chunks[order[k - 1]].ncpus < j->chunks[c].ncpus) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = c;
	}
	for (unsigned oc = 0; oc < j->n_chunks; oc++) {
		const struct job_chunk *ch = &j->chunks[order[oc]];

		for (uint32_t k = 0; k < ch->count; k++) {
			size_t i;

			for (i = 0; i < n; i++) {
				if (!ok[i] || room[i] - take[i] < ch->ncpus || room[i] < take[i])
					continue;
				if (j->place == JOB_PLACE_SCATTER && take[i])
					continue;
				break;
			}
			if (i == n)
				return false;
			if (sh) {
				unsigned seq = order[oc] * 65536 + k + 1;

				if (!take[i] || seq < sh[i].first)
					sh[i].first = seq;
				sh[i].mpiprocs += ch->mpiprocs;
				sh[i].mem += ch->mem;
				if (!sh[i].ompthreads)
					sh[i].ompthreads = ch->ompthreads;
			}
			take[i] += ch->ncpus;
		}
	}
	return true;
}

/* The nodes, as an array in registration order (p->nv, p->n_nodes). */
static int nodes_vector(struct pool *p)
{
	size_t n = 0;

	for (struct node *nd = p->nodes; nd; nd = nd->next)
		n++;
	if (n > p->cap_nv) {
		struct node **v = realloc(p->nv, n * sizeof(*v));
		unsigned *room = realloc(p->room, n * sizeof(*room));
		bool *ok;

		if (v)
			p->nv = v;
		if (room)
			p->room = room;
		ok = realloc(p->ok, n * sizeof(*ok));
		if (ok)
			p->ok = ok;
		if (!v || !room || !ok)
			return -ENOMEM;
		p->cap_nv = n;
	}
	n = 0;
	for (struct node *nd = p->nodes; nd; nd = nd->next)
		p->nv[n++] = nd;
	p->n_nodes = n;
	return 0;
}

int pool_request_check(const struct pool *cp, const struct job *j, char *buf, size_t len)
{
	struct pool *p = (struct pool *)cp;
	unsigned *take, widest = 0, max = 0, chunks = 0;
	bool fits;

	if (!p->nodes || nodes_vector(p) < 0)
		return 0;
	take = calloc(p->n_nodes, sizeof(*take));
	if (!take)
		return 0;
	for (size_t i = 0; i < p->n_nodes; i++) {
		p->room[i] = cpumask_count(&p->nv[i]->cpus);
		p->ok[i] = p->room[i] > 0;
		if (p->room[i] > max)
			max = p->room[i];
	}
	fits = chunks_assign(j, p->room, p->ok, p->n_nodes, take, NULL);
	free(take);
	if (fits)
		return 0;
	for (unsigned c = 0; c < j->n_chunks; c++) {
		chunks += j->chunks[c].count;
		if (j->chunks[c].ncpus > widest)
			widest = j->chunks[c].ncpus;
	}
	if (!j->n_chunks)
		snprintf(buf, len, "ncpus=%u: more CPUs than any node has (the largest has %u)", j->ncpus, max);
	else if (widest > max)
		snprintf(buf, len, "a chunk of ncpus=%u is wider than any node (the largest has %u CPUs)",
			 widest, max);
	else if (j->place == JOB_PLACE_PACK)
		snprintf(buf, len, "place=pack: %u CPUs on one node, more than any node has (the largest has %u)",
			 j->ncpus, max);
	else if (j->place == JOB_PLACE_SCATTER && chunks > p->n_nodes)
		snprintf(buf, len, "place=scatter: %u chunks need %u nodes, the pool has %zu", chunks, chunks,
			 p->n_nodes);
	else
		snprintf(buf, len, "%u CPUs in %u chunks do not fit the pool's %zu nodes even when all are free",
			 j->ncpus, chunks, p->n_nodes);
	return -ENOSPC;
}

/* The reservation of a blocked wide job j (EASY): from now, its running
 * entries end one by one (at dispatch + walltime; none without one); the
 * first end at which j fits by counts is its start, and the nodes it
 * would take there get resv_t. No reservation when it never fits. */
static bool reserve_for(struct pool *p, const struct queue_conf *q, const struct job *j, int64_t now)
{
	bool made = false;
	struct ev { int64_t t; size_t node; unsigned cpus; } *evs = NULL;
	size_t n_ev = 0, cap = 0;
	unsigned *take = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*take));

	if (!take)
		return false;
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *nd = p->nv[i];

		p->ok[i] = node_open(nd, q, j, &p->room[i]) || (pool_node_usable(nd) &&
			   !(q->reserve == QUEUE_RESERVE_REALTIME && !nd->rt));
		for (struct alloc_entry *e = nd->jobs; e; e = e->nnext) {
			const struct job *o = e->job;

			if (e->cpus_back || !o->walltime || o->t_dispatch <= 0)
				continue;
			if (n_ev == cap) {
				struct ev *ne = realloc(evs, (cap = cap ? cap * 2 : 64) * sizeof(*ne));

				if (!ne)
					goto done;
				evs = ne;
			}
			evs[n_ev++] = (struct ev){ o->t_dispatch / 1000000000 + (int64_t)o->walltime, i,
						   cpumask_count(&e->claim) };
		}
	}
	/* Few running entries: insertion sort by end. */
	for (size_t a = 1; a < n_ev; a++)
		for (size_t b = a; b > 0 && evs[b - 1].t > evs[b].t; b--) {
			struct ev t = evs[b];

			evs[b] = evs[b - 1];
			evs[b - 1] = t;
		}
	for (size_t e = 0; e < n_ev;) {
		int64_t t = evs[e].t;

		for (; e < n_ev && evs[e].t == t; e++)
			p->room[evs[e].node] += evs[e].cpus;
		if (t < now)
			t = now;
		if (chunks_assign(j, p->room, p->ok, p->n_nodes, take, NULL)) {
			for (size_t i = 0; i < p->n_nodes; i++)
				if (take[i] && (!p->nv[i]->resv_t || p->nv[i]->resv_t > t))
					p->nv[i]->resv_t = t;
			made = true;
			break;
		}
	}
done:
	free(evs);
	free(take);
	return made;
}

/* The most CPUs j needs on one node. */
static unsigned job_widest(const struct job *j)
{
	unsigned w = 0, total = 0;

	if (!j->n_chunks)
		return j->ncpus;
	for (unsigned c = 0; c < j->n_chunks; c++) {
		total += j->chunks[c].count * j->chunks[c].ncpus;
		if (j->chunks[c].ncpus > w)
			w = j->chunks[c].ncpus;
	}
	return j->place == JOB_PLACE_PACK ? total : w;
}

/* Places j now, whole or not at all: the nodes by counts (chunks_assign),
 * then each node's share by placement. Nodes reserved before j would end
 * (its walltime from now) are not used. Fills j's allocation. */
static bool job_place(struct pool *p, const struct queue_conf *q, struct job *j, int64_t now, unsigned *ret_room)
{
	int64_t end = j->walltime ? now + (int64_t)j->walltime : INT64_MAX;
	unsigned *take, n_take = 0, seen = 0;
	struct share *sh = NULL;
	bool ok = false;

	*ret_room = 0;
	if (!j->n_chunks) {
		/* One node: the first where placement finds room, as always;
		 * nodes after it are not looked at (a pass over 10,000 nodes
		 * places 512 jobs). */
		for (struct node *nd = p->nodes; nd; nd = nd->next) {
			struct alloc_entry e = { 0 };
			unsigned room;

			if (!node_open(nd, q, j, &room))
				continue;
			/* The bound the pass keeps ignores reservations: a
			 * later, shorter job may still use a reserved node. */
			if (room > seen)
				seen = room;
			if ((nd->resv_t && end > nd->resv_t) || room < j->ncpus || !node_place(nd, q, j->ncpus, &e))
				continue;
			if (job_alloc_init(j, 1) < 0 || !(e.node = strdup(nd->name))) {
				job_alloc_free(j);
				break;
			}
			e.job = j;
			e.ncpus = j->ncpus;
			e.mpiprocs = j->ncpus;
			e.mem = j->mem;
			j->alloc[0] = e;
			return true;
		}
		*ret_room = seen;
		return false;
	}
	take = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*take));
	if (!take)
		return false;
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *nd = p->nv[i];

		p->ok[i] = node_open(nd, q, j, &p->room[i]);
		if (p->ok[i] && p->room[i] > seen)
			seen = p->room[i];
		p->ok[i] = p->ok[i] && !(nd->resv_t && end > nd->resv_t);
	}
	*ret_room = seen;
	sh = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*sh));
	if (!sh || !chunks_assign(j, p->room, p->ok, p->n_nodes, take, sh))
		goto done;
	for (size_t i = 0; i < p->n_nodes; i++)
		n_take += take[i] > 0;
	if (n_take > JOB_NODES_MAX || job_alloc_init(j, n_take) < 0)
		goto done;
	n_take = 0;
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct alloc_entry *e;
		size_t k;

		if (!take[i])
			continue;
		/* Entries in job order: the node of the first chunk is the primary. */
		for (k = n_take; k > 0 && sh[j->alloc[k - 1].mpiprocs].first > sh[i].first; k--)
			j->alloc[k] = j->alloc[k - 1];
		e = &j->alloc[k];
		memset(e, 0, sizeof(*e));
		e->job = j;
		e->mpiprocs = (uint32_t)i;   /* the node's index until all are in */
		n_take++;
	}
	for (unsigned k = 0; k < n_take; k++) {
		struct alloc_entry *e = &j->alloc[k];
		size_t i = e->mpiprocs;

		if (!node_place(p->nv[i], q, take[i], e) || !(e->node = strdup(p->nv[i]->name)))
			goto done;
		e->ncpus = take[i];
		e->mpiprocs = sh[i].mpiprocs;
		e->ompthreads = sh[i].ompthreads;
		e->mem = sh[i].mem;
	}
	ok = true;
done:
	if (!ok)
		job_alloc_free(j);
	free(sh);
	free(take);
	return ok;
}

static struct rotation *rotation_find(const struct pool *p, const char *queue, uid_t uid)
{
	for (size_t i = 0; i < p->n_rot; i++)
		if (p->rot[i].uid == uid && strcmp(p->rot[i].queue, queue) == 0)
			return &p->rot[i];
	return NULL;
}

int pool_rotation_set(struct pool *p, const char *queue, uid_t uid, uint64_t seq)
{
	struct rotation *r = rotation_find(p, queue, uid);

	if (!r) {
		if (p->n_rot == p->cap_rot) {
			size_t cap = p->cap_rot ? p->cap_rot * 2 : 64;
			struct rotation *n = realloc(p->rot, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			p->rot = n;
			p->cap_rot = cap;
		}
		r = &p->rot[p->n_rot++];
		snprintf(r->queue, sizeof(r->queue), "%s", queue);
		r->uid = uid;
	}
	r->seq = seq;
	if (seq > p->seq)
		p->seq = seq;
	return 0;
}

uint64_t pool_rotation_get(const struct pool *p, const char *queue, uid_t uid)
{
	const struct rotation *r = rotation_find(p, queue, uid);

	return r ? r->seq : 0;
}

/* A queue's view for IQS: its waiting jobs (queued and held, submit
 * order), its users with their rotation stamps and running counts. */
struct queue_view {
	struct iqs_job *jobs;
	struct job **owners;     /* jobs[i] belongs to owners[i] */
	size_t n;
	struct iqs_user *users;
	size_t n_users;
	struct iqs_limits lim;
	struct iqs_entry *order;
};

static void queue_view_free(struct queue_view *v)
{
	free(v->jobs);
	free(v->owners);
	free(v->users);
	free(v->order);
}

static struct iqs_user *view_user(struct queue_view *v, const struct pool *p, const char *queue, uid_t uid)
{
	for (size_t i = 0; i < v->n_users; i++)
		if (v->users[i].uid == uid)
			return &v->users[i];
	v->users[v->n_users] = (struct iqs_user){ .uid = uid, .last_served = pool_rotation_get(p, queue, uid) };
	return &v->users[v->n_users++];
}

static int queue_view_build(struct pool *p, const struct queue_conf *q, struct queue_view *v)
{
	size_t cap = 0;

	memset(v, 0, sizeof(*v));
	for (struct job *j = p->head; j; j = j->next)
		if (strcmp(j->queue, q->name) == 0)
			cap++;
	v->jobs = malloc((cap ? cap : 1) * sizeof(*v->jobs));
	v->owners = malloc((cap ? cap : 1) * sizeof(*v->owners));
	v->users = malloc((cap ? cap : 1) * sizeof(*v->users));
	v->order = malloc((cap ? cap : 1) * sizeof(*v->order));
	if (!v->jobs || !v->owners || !v->users || !v->order) {
		queue_view_free(v);
		return -ENOMEM;
	}
	v->lim.max_running = (unsigned)q->max_running;
	v->lim.max_running_per_user = (unsigned)q->max_running_per_user;
	for (struct job *j = p->head; j; j = j->next) {
		if (strcmp(j->queue, q->name) != 0)
			continue;
		if (j->state == JOB_RUNNING || j->state == JOB_EXITING) {
			view_user(v, p, q->name, j->uid)->running++;
			v->lim.running++;
		} else if (j->state == JOB_QUEUED || j->state == JOB_HELD) {
			(void)view_user(v, p, q->name, j->uid);
			v->owners[v->n] = j;
			v->jobs[v->n++] = (struct iqs_job){ .id = j->id, .uid = j->uid,
							    .held = j->state == JOB_HELD,
							    .priority = j->priority };
		}
	}
	iqs_order(v->jobs, v->n, v->users, v->n_users, &v->lim, v->order);
	return 0;
}

static int queue_order_cmp(const void *a, const void *b)
{
	const struct queue_conf *qa = *(const struct queue_conf *const *)a;
	const struct queue_conf *qb = *(const struct queue_conf *const *)b;

	if (qa->priority != qb->priority)
		return qa->priority > qb->priority ? -1 : 1;
	return qa < qb ? -1 : qa > qb;
}

/* Dispatches what it can of one queue into ret; returns how many. The
 * queue's waiting jobs are taken in IQS order (iqs_turns_sort over its
 * users, then round after round each user's next oldest job), straight
 * from the index: the pass looks at as many jobs as it decides on or
 * passes over, however many wait. */
static size_t queue_schedule(struct pool *p, const struct queue_conf *q, struct dispatch *ret, size_t max)
{
	/* The most CPUs any node has for this queue's jobs, an upper bound:
	 * placements only lower it, and a scan of every node that placed
	 * nothing makes it exact. A job wider than it is passed over without
	 * a scan, so a full pool with 100,000 waiting costs one look per job,
	 * not one look per job and node. */
	unsigned room = UINT_MAX;
	struct pool_queue *pq = pool_queue_find(p, q->name);
	struct iqs_turn *turns;
	size_t n_turns = 0, n = 0;
	int64_t now = pool_now(p);
	bool more = true, stop = false, reserved = false;
	unsigned seen;

	if (!pq || !pq->n_users || nodes_vector(p) < 0)
		return 0;
	turns = malloc(pq->n_users * sizeof(*turns));
	if (!turns)
		return 0;
	for (struct pool_user *u = pq->users; u; u = u->next)
		if (u->head)
			turns[n_turns++] = (struct iqs_turn){ .uid = u->uid, .oldest = u->head->id, .data = u->head,
							      .last_served = pool_rotation_get(p, q->name, u->uid) };
	iqs_turns_sort(turns, n_turns);
	/* Each turn's data is its user's next job; it moves on before the job
	 * can leave the waiting list. */
	while (more && !stop) {
		more = false;
		for (size_t t = 0; t < n_turns && !stop; t++) {
			struct job *j = turns[t].data;
			struct pool_user *u;
			bool placed = false;

			if (!j)
				continue;
			turns[t].data = j->wnext;
			more = true;
			if (n >= max || room == 0) {
				stop = true;
				break;
			}
			u = j->user;
			/* Limits are counted live: a job passed over leaves room for the next. */
			if (q->max_running && pq->running >= q->max_running) {
				stop = true;
				break;
			}
			if (q->max_running_per_user && u->running >= q->max_running_per_user)
				continue;
			/* qsub -a: not before its time; the timer looks again. */
			if (j->start_after > now) {
				if (!p->deferred_next || j->start_after < p->deferred_next)
					p->deferred_next = j->start_after;
				continue;
			}
			if (job_widest(j) > room) {
				if (q->strict)
					stop = true;
				else if (j->n_chunks && !reserved)
					reserved = reserve_for(p, q, j, now);
				continue;
			}
			j->reserve = q->reserve;
			if (job_place(p, q, j, now, &seen)) {
				for (unsigned k = 0; k < j->n_alloc; k++)
					node_link_entry(pool_node_find(p, j->alloc[k].node), &j->alloc[k]);
				pool_job_state_set(p, j, JOB_RUNNING);
				for (unsigned k = 0; k < j->n_alloc; k++)
					node_account(j->alloc[k].where, &j->alloc[k], false);
				j->t_dispatch = now * 1000000000;
				ret[n].job = j;
				ret[n].node = j->alloc[0].where;
				ret[n].seq = ++p->seq;
				(void)pool_rotation_set(p, q->name, j->uid, ret[n].seq);
				n++;
				placed = true;
			}
			if (!placed) {
				/* Room was counted on every node; topology may still
				 * refuse a job that fits the count, so seen stays. */
				if ((!j->n_chunks || j->place == JOB_PLACE_PACK) && !j->excl)
					room = seen;
				if (q->strict)
					stop = true;
				else if (j->n_chunks && !reserved)
					reserved = reserve_for(p, q, j, now);
			}
		}
	}
	free(turns);
	return n;
}

static size_t pool_schedule_pass(struct pool *p, const struct config *c, struct dispatch *ret, size_t max);

size_t pool_schedule(struct pool *p, const struct config *c, struct dispatch *ret, size_t max)
{
	int64_t t0 = time_mono_ns();
	size_t n = pool_schedule_pass(p, c, ret, max);
	uint64_t ns = (uint64_t)(time_mono_ns() - t0);

	p->stats.passes++;
	p->stats.pass_ns_total += ns;
	p->stats.pass_ns_last = ns;
	if (ns > p->stats.pass_ns_max)
		p->stats.pass_ns_max = ns;
	p->stats.dispatches += n;
	return n;
}

void pool_stats_get(const struct pool *p, struct pool_stats *ret)
{
	*ret = p->stats;
}

static size_t pool_schedule_pass(struct pool *p, const struct config *c, struct dispatch *ret, size_t max)
{
	const struct queue_conf **order;
	bool any_free = false;
	size_t n = 0;

	for (struct node *nd = p->nodes; nd && !any_free; nd = nd->next)
		if (pool_node_usable(nd) && (cpumask_count(&nd->free) || cpumask_count(&nd->rt_free)))
			any_free = true;
	if (!any_free || c->n_queues == 0)
		return 0;
	/* Reservations are made afresh by every pass. */
	for (struct node *nd = p->nodes; nd; nd = nd->next)
		nd->resv_t = 0;
	order = malloc(c->n_queues * sizeof(*order));
	if (!order)
		return 0;
	for (size_t i = 0; i < c->n_queues; i++)
		order[i] = &c->queues[i];
	qsort(order, c->n_queues, sizeof(*order), queue_order_cmp);
	for (size_t qi = 0; qi < c->n_queues && n < max; qi++)
		if (order[qi]->started)
			n += queue_schedule(p, order[qi], ret + n, max - n);
	free(order);
	return n;
}

json_t *pool_queue_order(struct pool *p, const struct queue_conf *q)
{
	return pool_queue_order_page(p, q, 0, SIZE_MAX, NULL);
}

json_t *pool_queue_order_page(struct pool *p, const struct queue_conf *q, size_t offset, size_t limit,
			      size_t *ret_total)
{
	json_t *arr = json_array();
	struct queue_view v;

	if (ret_total)
		*ret_total = 0;
	if (!arr || queue_view_build(p, q, &v) < 0)
		return arr;
	if (ret_total)
		*ret_total = v.n;
	/* Only the page is turned into JSON: building 200,000 objects for
	 * every page of qstat -Q --order cost more than the order itself. */
	for (size_t i = offset; i < v.n && i - offset < limit; i++) {
		const struct iqs_entry *e = &v.order[i];
		char reason[160];

		switch (e->hold) {
		case IQS_GO:
			snprintf(reason, sizeof(reason), q->started ? "next when it fits" : "queue stopped");
			break;
		case IQS_HELD:
			snprintf(reason, sizeof(reason), "held");
			break;
		case IQS_QUEUE_LIMIT:
			snprintf(reason, sizeof(reason), "max_running=%llu reached",
				 (unsigned long long)q->max_running);
			break;
		case IQS_USER_LIMIT:
			snprintf(reason, sizeof(reason), "max_running_per_user=%llu reached",
				 (unsigned long long)q->max_running_per_user);
			break;
		}
		json_array_append_new(arr, json_pack("{s:I, s:I, s:I, s:I, s:I, s:s, s:s}",
			"jobid", (json_int_t)e->job->id, "uid", (json_int_t)e->job->uid,
			"place", (json_int_t)(i + 1), "round", (json_int_t)e->round,
			"last_served", (json_int_t)pool_rotation_get(p, q->name, e->job->uid),
			"hold", iqs_hold_name(e->hold), "reason", reason));
	}
	queue_view_free(&v);
	return arr;
}
