/* SPDX-License-Identifier: MIT */
/* Start estimates for waiting jobs: the backfill's replay carried on past
 * the first blocked job. Running jobs end at dispatch + walltime; waiting
 * jobs, in the order the pass takes them, each take the first time their
 * counts fit and hold them until their own estimated end
 * (docs/ESTIMATES.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "estimate.h"
#include "pool-internal.h"
#include "sort.h"

/* A job without a walltime holds what it takes for ever. */
#define EST_FOREVER (INT64_MAX / 4)
/* The distinct times a job across nodes is tried at, at most: past them
 * it shows no estimate (a bound on the work of one job). */
#define EST_CHUNK_TRIES 256

/* From t on (until the next step), a node has this free. */
struct est_step {
	int64_t t;
	int64_t cpus, gpus, mem;     /* mem: INT64_MAX when not counted */
};

struct est_node {
	struct est_step *s;
	size_t n, cap;
	bool open;                   /* usable now */
	bool built;                  /* its profile is made (node_ready) */
	unsigned pus_per_core;       /* what a CPU of a queue without smt takes */
};

/* Jobs of one shape (counts, walltime, earliest start; no node list,
 * model, counted resource or excl) fit no earlier than the last of them
 * did: a replay only takes room away. So the next starts its search at
 * that time, from that node, and stops at the first node that fits then
 * (bench/pass-estimate: 2,000 jobs over 10,000 full nodes). */
struct est_shape {
	const struct queue_conf *q;  /* its smt and reserve kind count too */
	uint32_t ncpus, ngpus;
	uint64_t mem;
	int64_t t0, w;
	int64_t last_t;
	size_t last_node;
	bool used;
};
#define EST_SHAPES 64

struct estimate {
	struct pool *p;
	struct est_node *nv;
	size_t n_nodes;
	int64_t now;
	uint64_t replay;             /* this replay's number (job est_seen) */
	size_t estimated, none;
	struct job **fresh;
	size_t n_fresh, cap_fresh;
	unsigned *take;              /* CPUs then GPUs per node (chunk jobs) */
	int64_t *times;              /* candidate times (chunk jobs), EST_CHUNK_TRIES */
	struct est_shape shapes[EST_SHAPES];
	const struct queue_conf *strict_q;   /* a strict queue's jobs start in order: */
	int64_t strict_t;            /* none before the last one's start */
	struct est_ev *evs;          /* node_profile's scratch */
	size_t cap_evs;
	int err;                     /* a profile could not be made: -ENOMEM */
};

struct est_ev {
	int64_t t;
	int64_t cpus, gpus, mem;
};

static int est_ev_cmp(const void *a, const void *b)
{
	const struct est_ev *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

static int step_push(struct est_node *en, int64_t t, int64_t cpus, int64_t gpus, int64_t mem)
{
	if (en->n == en->cap) {
		size_t cap = en->cap ? en->cap * 2 : 8;
		struct est_step *s = realloc(en->s, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		en->s = s;
		en->cap = cap;
	}
	en->s[en->n++] = (struct est_step){ t, cpus, gpus, mem };
	return 0;
}

/* A node's profile: what is free now, then what each running entry gives
 * back at its end by walltime (none without one). */
static int node_profile(struct estimate *e, size_t i)
{
	struct est_ev **evs = &e->evs;
	size_t *cap = &e->cap_evs;
	const struct node *nd = e->p->nv[i];
	struct est_node *en = &e->nv[i];
	uint64_t mfree = pool_node_mem_free(nd);
	int64_t cpus = cpumask_count(&nd->free), gpus = __builtin_popcountll(nd->gpus_free);
	int64_t mem = mfree == UINT64_MAX ? INT64_MAX : (int64_t)mfree;
	size_t n = 0;

	en->n = 0;
	en->open = pool_node_usable(nd) && !nd->n_excl;
	/* Profiles count PUs (what the free masks hold); a job of a queue
	 * without smt takes whole cores, its siblings with each CPU. */
	en->pus_per_core = 1;
	if (nd->topo) {
		int cores = hwloc_get_nbobjs_by_type(nd->topo, HWLOC_OBJ_CORE);
		unsigned pus = cpumask_count(&nd->cpus);

		if (cores > 0 && pus >= (unsigned)cores)
			en->pus_per_core = pus / (unsigned)cores;
	}
	if (!pool_node_usable(nd))
		return 0;
	for (const struct alloc_entry *a = nd->jobs; a; a = a->nnext) {
		const struct job *o = a->job;
		int64_t end;

		if (a->cpus_back || !o->walltime || o->t_dispatch <= 0)
			continue;
		/* Rounded up: it ends its walltime after its start, which
		 * is after its dispatch (a start estimate is a bound). */
		end = (o->t_dispatch + 999999999) / 1000000000 + (int64_t)o->walltime;
		if (n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			struct est_ev *ne = realloc(*evs, nc * sizeof(*ne));

			if (!ne)
				return -ENOMEM;
			*evs = ne;
			*cap = nc;
		}
		/* One past its walltime is about to be killed: it ends now. */
		(*evs)[n++] = (struct est_ev){ end > e->now ? end : e->now, cpumask_count(&a->claim),
					       __builtin_popcountll(a->gpus), (int64_t)a->mem };
	}
	qp_sort(*evs, n, sizeof(**evs), est_ev_cmp);
	if (step_push(en, e->now, cpus, gpus, mem) < 0)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		struct est_step *last = &en->s[en->n - 1];

		if ((*evs)[k].t != last->t && step_push(en, (*evs)[k].t, last->cpus, last->gpus, last->mem) < 0)
			return -ENOMEM;
		last = &en->s[en->n - 1];
		last->cpus += (*evs)[k].cpus;
		last->gpus += (*evs)[k].gpus;
		if (last->mem != INT64_MAX)
			last->mem += (*evs)[k].mem;
	}
	return 0;
}

/* Node i with its profile, made at its first use: a replay that finds
 * room on the first nodes it looks at walks no other's entries. False
 * when it cannot be used (not usable now, or out of memory). */
static bool node_ready(struct estimate *e, size_t i)
{
	struct est_node *en = &e->nv[i];

	if (!en->built) {
		en->built = true;
		if (node_profile(e, i) < 0) {
			e->err = -ENOMEM;
			en->open = false;
			en->n = 0;
		}
	}
	return en->open && en->n;
}

/* The earliest time from t at which job j may use node i for w seconds
 * at all, whatever its counts: t when it may, INT64_MAX never. The one
 * door for fixed blocks of time: a reservation or maintenance window
 * over the node answers with its end (or "never" for a job it must not
 * run into), a job of a reservation outside it with its next start. */
static int64_t est_node_next(const struct estimate *e, size_t i, const struct job *j, int64_t t, int64_t w)
{
	const struct pool *p = e->p;
	int64_t end;

	if (!p->n_resv)
		return t;
	/* From edge to edge of the reservations (pool-resv.c answers each
	 * try): at most two a reservation. */
	for (size_t k = 0; k <= 2 * p->n_resv + 1; k++) {
		end = t + w < EST_FOREVER ? t + w : INT64_MAX;
		if (pool_resv_allows(p, j, p->nv[i]->name, t, end))
			return t;
		t = pool_resv_next_edge(p, t);
		if (t <= 0)
			return INT64_MAX;
	}
	return INT64_MAX;
}

/* The least free over [t, t + w) on node i, from step a (the step that
 * holds t); into ret. */
static void node_min(const struct est_node *en, size_t a, int64_t t, int64_t w, struct est_step *ret)
{
	*ret = en->s[a];
	for (size_t k = a + 1; k < en->n && en->s[k].t < t + w; k++) {
		if (en->s[k].cpus < ret->cpus)
			ret->cpus = en->s[k].cpus;
		if (en->s[k].gpus < ret->gpus)
			ret->gpus = en->s[k].gpus;
		if (en->s[k].mem < ret->mem)
			ret->mem = en->s[k].mem;
	}
}

/* The step of en that holds time t. */
static size_t step_at(const struct est_node *en, int64_t t)
{
	size_t lo = 0, hi = en->n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (en->s[mid].t <= t)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The earliest time from t0 and before best at which node i has cpus,
 * gpus and mem free for w seconds; INT64_MAX when none. A step that
 * lacks room rules out every start before it that would cover it, so
 * the scan goes on after it: linear in the node's steps. */
static int64_t node_earliest(const struct estimate *e, size_t i, const struct job *j, int64_t cpus, int64_t gpus,
			     int64_t mem, int64_t t0, int64_t w, int64_t best)
{
	const struct est_node *en = &e->nv[i];

	for (size_t a = step_at(en, t0); a < en->n;) {
		int64_t s = en->s[a].t > t0 ? en->s[a].t : t0, next;
		size_t k;

		if (s >= best)
			break;
		for (k = a; k < en->n && (k == a || en->s[k].t < s + w); k++)
			if (en->s[k].cpus < cpus || en->s[k].gpus < gpus || en->s[k].mem < mem)
				break;
		if (k < en->n && (k == a || en->s[k].t < s + w)) {
			a = k + 1;
			continue;
		}
		/* Counts fit from s: the node's blocks of time may move it on. */
		next = est_node_next(e, i, j, s, w);
		if (next <= s)
			return s;
		if (next == INT64_MAX || next >= best)
			break;
		t0 = next;
		a = step_at(en, next);
	}
	return INT64_MAX;
}

/* Splits node i's profile at t (a step starting at t); its index. */
static int step_split(struct est_node *en, int64_t t, size_t *ret)
{
	size_t a = step_at(en, t);

	if (en->s[a].t == t) {
		*ret = a;
		return 0;
	}
	if (step_push(en, 0, 0, 0, 0) < 0)
		return -ENOMEM;
	memmove(&en->s[a + 2], &en->s[a + 1], (en->n - a - 2) * sizeof(*en->s));
	en->s[a + 1] = en->s[a];
	en->s[a + 1].t = t;
	*ret = a + 1;
	return 0;
}

/* Takes cpus, gpus and mem from node i over [s, s + w). */
static int node_take(struct estimate *e, size_t i, int64_t s, int64_t w, int64_t cpus, int64_t gpus, int64_t mem)
{
	struct est_node *en = &e->nv[i];
	size_t a, b = en->n;
	int r = step_split(en, s, &a);

	if (r == 0 && s + w < EST_FOREVER)
		r = step_split(en, s + w, &b);
	if (r < 0)
		return r;
	if (s + w >= EST_FOREVER)
		b = en->n;
	for (size_t k = a; k < b; k++) {
		en->s[k].cpus -= cpus;
		en->s[k].gpus -= gpus;
		if (en->s[k].mem != INT64_MAX)
			en->s[k].mem -= mem;
	}
	return 0;
}

static void est_set(struct job *j, int64_t t, char *vnode)
{
	free(j->est_vnode);
	j->est_vnode = vnode;
	j->est_start = t;
}

static struct est_shape *shape_find(struct estimate *e, const struct queue_conf *q, const struct job *j, int64_t t0,
				    int64_t w)
{
	uint64_t h = (j->ncpus * 31u + j->ngpus) * 1000003u + j->mem * 7u + (uint64_t)w * 13u + (uint64_t)t0 +
		     (uintptr_t)q / 64;
	struct est_shape *sh = &e->shapes[h % EST_SHAPES];

	if (j->sel || j->gpu_model || j->n_nres || j->excl || j->whole)
		return NULL;
	if (!sh->used || sh->q != q || sh->ncpus != j->ncpus || sh->ngpus != j->ngpus || sh->mem != j->mem ||
	    sh->t0 != t0 || sh->w != w)
		*sh = (struct est_shape){ q, j->ncpus, j->ngpus, j->mem, t0, w, t0, 0, true };
	return sh;
}

/* A one-node job: the node where it fits first (the first such node
 * from the last of its shape's on). */
static void est_one_node(struct estimate *e, const struct queue_conf *q, struct job *j, int64_t t0, int64_t w)
{
	struct est_shape *sh = shape_find(e, q, j, t0, w);
	int64_t best = INT64_MAX, cpus = 0, lb = sh ? sh->last_t : t0;
	size_t at = SIZE_MAX, from = sh ? sh->last_node : 0;
	char *vnode;

	for (size_t k = 0; k < e->n_nodes; k++) {
		size_t i = (from + k) % e->n_nodes;
		const struct node *nd = e->p->nv[i];
		int64_t need, s;

		if (!place_node_eligible(nd, q, j) || !node_ready(e, i))
			continue;
		need = j->excl || j->whole ? cpumask_count(&nd->cpus) :
		       (int64_t)j->ncpus * (q->smt ? 1 : e->nv[i].pus_per_core);
		s = node_earliest(e, i, j, need, j->ngpus, (int64_t)j->mem, lb, w, best == INT64_MAX ? best : best + 1);
		/* The lowest node of the earliest time, as the pass's first fit
		 * takes it (the scan may have wrapped past the end). */
		if (s < best || (s == best && i < at)) {
			best = s;
			at = i;
			cpus = need;
			if (s == lb)
				break;   /* none can be earlier */
		}
	}
	if (at == SIZE_MAX || node_take(e, at, best, w, cpus, j->ngpus, (int64_t)j->mem) < 0 ||
	    asprintf(&vnode, "(%s:ncpus=%lld)", e->p->nv[at]->name,
		     (long long)(j->excl || j->whole || q->smt ? cpus : cpus / e->nv[at].pus_per_core)) < 0) {
		est_set(j, 0, NULL);
		return;
	}
	if (sh) {
		sh->last_t = best;
		sh->last_node = at;
	}
	est_set(j, best, vnode);
}

/* A node's next candidate start in the merge of est_chunks. */
struct est_cand {
	int64_t t;
	size_t node, k;
};

static void cand_down(struct est_cand *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && h[l].t < h[m].t)
			m = l;
		if (l + 1 < n && h[l + 1].t < h[m].t)
			m = l + 1;
		if (m == i)
			return;
		struct est_cand x = h[i];

		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

/* The first EST_CHUNK_TRIES distinct step times from t0 on over every
 * node, in order, into e->times: the nodes' own steps are sorted, so a
 * heap merges them (a sort of every node's steps cost 500,000 of them at
 * 10,000 nodes). The number found, or -ENOMEM. */
static int chunk_times(struct estimate *e, int64_t t0)
{
	struct est_cand *h = malloc((e->n_nodes + 1) * sizeof(*h));
	size_t n = 0, n_t = 0;

	if (!h || (!e->times && !(e->times = malloc(EST_CHUNK_TRIES * sizeof(*e->times))))) {
		free(h);
		return -ENOMEM;
	}
	for (size_t i = 0; i < e->n_nodes; i++) {
		size_t k;

		if (!node_ready(e, i))
			continue;
		k = step_at(&e->nv[i], t0);
		h[n++] = (struct est_cand){ e->nv[i].s[k].t > t0 ? e->nv[i].s[k].t : t0, i, k };
	}
	for (size_t i = n / 2; i-- > 0;)
		cand_down(h, n, i);
	while (n && n_t < EST_CHUNK_TRIES) {
		struct est_cand c = h[0];
		const struct est_node *en = &e->nv[c.node];

		if (!n_t || e->times[n_t - 1] != c.t)
			e->times[n_t++] = c.t;
		if (c.k + 1 < en->n)
			h[0] = (struct est_cand){ en->s[c.k + 1].t, c.node, c.k + 1 };
		else
			h[0] = h[--n];
		cand_down(h, n, 0);
	}
	free(h);
	return (int)n_t;
}

/* A job across nodes: the first step time from t0 on at which its
 * chunks fit the least room each node has over its walltime. */
static void est_chunks(struct estimate *e, const struct queue_conf *q, struct job *j, int64_t t0, int64_t w)
{
	struct pool *p = e->p;
	size_t len = 0;
	char *vnode = NULL;
	int n_t = chunk_times(e, t0);

	if (n_t < 0)
		goto none;
	for (int c = 0; c < n_t; c++) {
		int64_t s = e->times[c];
		bool fit;

		for (size_t i = 0; i < e->n_nodes; i++) {
			struct est_step m;

			p->ok[i] = e->nv[i].open && e->nv[i].n && pool_node_usable(p->nv[i]) &&
				   !(q->reserve == QUEUE_RESERVE_REALTIME && !p->nv[i]->rt) &&
				   est_node_next(e, i, j, s, w) == s;
			if (!p->ok[i])
				continue;
			node_min(&e->nv[i], step_at(&e->nv[i], s), s, w, &m);
			p->room[i] = m.cpus > 0 ? (unsigned)(m.cpus / (q->smt ? 1 : e->nv[i].pus_per_core)) : 0;
			p->groom[i] = m.gpus > 0 ? (unsigned)m.gpus : 0;
			if (p->groom[i] > place_node_gpus_for(p->nv[i], j))
				p->groom[i] = place_node_gpus_for(p->nv[i], j);
			p->mroom[i] = m.mem == INT64_MAX ? UINT64_MAX : m.mem > 0 ? (uint64_t)m.mem : 0;
			if (j->excl && m.cpus < (int64_t)cpumask_count(&p->nv[i]->cpus))
				p->ok[i] = false;
		}
		fit = place_chunks_fit(p, j, e->take);
		if (!fit)
			continue;
		for (size_t i = 0; i < e->n_nodes; i++) {
			unsigned cpus = e->take[i];
			char *nv;

			if (!cpus)
				continue;
			if (j->excl)
				cpus = p->room[i];
			if (node_take(e, i, s, w, (int64_t)cpus * (q->smt ? 1 : e->nv[i].pus_per_core),
				      e->take[e->n_nodes + i], (int64_t)p->mtake[i]) < 0 ||
			    asprintf(&nv, "%s%s(%s:ncpus=%u)", vnode ? vnode : "", len ? "+" : "", p->nv[i]->name,
				     cpus) < 0)
				goto none;
			free(vnode);
			vnode = nv;
			len++;
		}
		est_set(j, s, vnode);
		return;
	}
none:
	free(vnode);
	est_set(j, 0, NULL);
}

static void est_job(struct pool *p, const struct queue_conf *q, struct job *j, void *arg)
{
	struct estimate *e = arg;
	int64_t t0 = j->start_after > e->now ? j->start_after : e->now;
	int64_t w = j->walltime ? (int64_t)j->walltime : EST_FOREVER;

	(void)p;
	if (q->strict && e->strict_q != q) {
		e->strict_q = q;
		e->strict_t = 0;
	}
	if (q->strict && e->strict_t > t0)
		t0 = e->strict_t;
	if (w < 1)
		w = 1;
	if (t0 >= EST_FOREVER)
		est_set(j, 0, NULL);
	else if (j->n_chunks)
		est_chunks(e, q, j, t0, w);
	else
		est_one_node(e, q, j, t0, w);
	j->est_seen = e->replay;
	if (q->strict)
		e->strict_t = j->est_start ? j->est_start : EST_FOREVER;   /* none after one that never starts */
	if (j->est_start) {
		e->estimated++;
		if (!j->est_first) {
			j->est_first = j->est_start;
			if (e->n_fresh == e->cap_fresh) {
				size_t nc = e->cap_fresh ? e->cap_fresh * 2 : 64;
				struct job **nf = realloc(e->fresh, nc * sizeof(*nf));

				if (nf) {
					e->fresh = nf;
					e->cap_fresh = nc;
				}
			}
			if (e->n_fresh < e->cap_fresh)
				e->fresh[e->n_fresh++] = j;
		}
	} else {
		e->none++;
	}
}

int pool_estimate(struct pool *p, const struct config *c, int64_t now, uint64_t replay,
		  struct pool_estimate_stats *ret)
{
	struct estimate e = { .p = p, .now = now, .replay = replay };
	int r;

	memset(ret, 0, sizeof(*ret));
	if (!c->estimate_depth || !p->nodes)
		return 0;
	r = place_nodes_vector(p);
	if (r < 0)
		return r;
	e.n_nodes = p->n_nodes;
	e.nv = calloc(e.n_nodes, sizeof(*e.nv));
	e.take = calloc(e.n_nodes * 2 + 1, sizeof(*e.take));
	if (!e.nv || !e.take) {
		r = -ENOMEM;
		goto done;
	}
	ret->visited = pool_waiting_walk(p, c, (size_t)c->estimate_depth, est_job, &e);
	ret->estimated = e.estimated;
	ret->none = e.none;
	ret->fresh = e.fresh;
	ret->n_fresh = e.n_fresh;
	e.fresh = NULL;
	r = e.err;
done:
	for (size_t i = 0; e.nv && i < e.n_nodes; i++)
		free(e.nv[i].s);
	free(e.nv);
	free(e.take);
	free(e.times);
	free(e.fresh);
	free(e.evs);
	return r;
}

bool pool_job_estimate(const struct job *j, uint64_t replay, int64_t *ret_start, const char **ret_vnode)
{
	/* One the last replay did not reach (beyond its depth) has none. */
	if (j->state != JOB_QUEUED || !j->est_start || j->est_seen != replay)
		return false;
	*ret_start = j->est_start;
	*ret_vnode = j->est_vnode;
	return true;
}
