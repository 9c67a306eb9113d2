/* SPDX-License-Identifier: MIT */
/* Where jobs go: a node's room for a queue's jobs, one-node placement,
 * chunks across nodes placed whole or not at all, the submit check that a
 * request could ever fit, and the EASY reservation of a blocked wide job. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "placement.h"
#include "pool-internal.h"
#include "qos-pool.h"
#include "sort.h"

/* What chunks_assign gives one node: MPI slots, memory, the first chunk
 * (in request order) it got, for the entry's place in the job. */
struct share {
	unsigned mpiprocs;
	unsigned ompthreads;
	uint64_t mem;
	unsigned first;
};

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

/* Whether j may use n by its node list, exclusions and constraint
 * (alt: the matching OR's alternative; -1 any). */
/* Whether n has j's counted resources (docs/RESOURCES.md, "Counted
 * node resources"): in all (now false), or free of what the jobs on it
 * hold (now true). Chunks asking for them are each on a node of their
 * own (place=scatter, set at submit), so an entry holds one chunk's. */
static bool node_res_fits(const struct node *n, const struct job *j, bool now)
{
	for (unsigned i = 0; i < j->n_nres; i++) {
		uint64_t total = noderes_value(n->res, n->n_res, j->nres[i].name), used = 0;

		if (total < j->nres[i].value)
			return false;
		for (const struct alloc_entry *e = now ? n->jobs : NULL; e; e = e->nnext)
			if (!e->cpus_back && e->job)
				used += noderes_value(e->job->nres, e->job->n_nres, j->nres[i].name);
		if (used > total - j->nres[i].value)
			return false;
	}
	return true;
}

json_t *pool_node_res_json(const struct node *n, char *gres, size_t len)
{
	json_t *a = json_array();
	size_t at = 0;

	if (len)
		gres[0] = '\0';
	for (unsigned i = 0; a && i < n->n_res; i++) {
		uint64_t used = 0;
		char v[32];
		int w;

		for (const struct alloc_entry *e = n->jobs; e; e = e->nnext)
			if (!e->cpus_back && e->job)
				used += noderes_value(e->job->nres, e->job->n_nres, n->res[i].name);
		json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:b}", "name", n->res[i].name, "total",
						   (json_int_t)n->res[i].value, "used", (json_int_t)used, "bytes",
						   n->res[i].bytes));
		if (n->res[i].bytes)
			size_format(n->res[i].value, v, sizeof(v));
		else
			snprintf(v, sizeof(v), "%llu", (unsigned long long)n->res[i].value);
		w = snprintf(gres + at, len - at, "%s%s:%s", at ? "," : "", n->res[i].name, v);
		if (w > 0 && (size_t)w < len - at)
			at += (size_t)w;
	}
	return a;
}

static bool node_sel_ok(const struct node *n, const struct job *j, int alt)
{
	return (!j->sel || nodesel_node_ok(j->sel, n->name, n->features, alt)) &&
	       (!j->n_nres || node_res_fits(n, j, false));
}

/* Whether j may hold nd from start to end by the reservations
 * (pool-resv.c): the one question placement asks of them. */
static bool place_resv_ok(const struct pool *p, const struct job *j, const struct node *nd, int64_t start, int64_t end)
{
	return (!p->n_resv && !j->resv) || pool_resv_allows(p, j, nd->name, start, end);
}

/* The same from now (a pass's place_job): a job of no reservation
 * by the node's first reservation start, at no cost per reservation. */
static bool place_resv_now_ok(const struct pool *p, const struct job *j, const struct node *nd, int64_t now,
			      int64_t end)
{
	if (!p->n_resv && !j->resv)
		return true;
	return j->resv ? pool_resv_allows(p, j, nd->name, now, end) : end <= nd->resv_from;
}

/* j's end if it starts at t: never without a walltime. */
static int64_t job_end_at(const struct job *j, int64_t t)
{
	return j->walltime ? t + (int64_t)j->walltime : INT64_MAX;
}

/* Every node j's list names has a share of take[] (one-node jobs: their
 * list names one node, which the filter alone holds them to). */
static bool required_all_taken(const struct pool *p, const struct job *j, const unsigned *take)
{
	const char *const *names;
	size_t n = nodesel_required(j->sel, &names);

	for (size_t k = 0; k < n; k++) {
		size_t i;

		for (i = 0; i < p->n_nodes; i++)
			if (take[i] && !strcmp(p->nv[i]->name, names[k]))
				break;
		if (i == p->n_nodes)
			return false;
	}
	return true;
}

uint64_t place_node_gpus(const struct node *n)
{
	return n->n_gpus >= 64 ? UINT64_MAX : (UINT64_C(1) << n->n_gpus) - 1;
}

static unsigned gpus_count(uint64_t m)
{
	return (unsigned)__builtin_popcountll(m);
}

/* The GPUs of n that j may have: all, or those of its model
 * (docs/GPUS.md). */
static uint64_t job_node_gpus(const struct node *n, const struct job *j)
{
	uint64_t m = 0;

	if (!j->gpu_model || !j->ngpus)
		return place_node_gpus(n);
	for (unsigned g = 0; n->gpus && g < n->n_gpus && g < 64; g++)
		if (strcmp(n->gpus[g].model, j->gpu_model) == 0)
			m |= UINT64_C(1) << g;
	return m;
}

/* How many GPUs n has for j: free ones, or all when all (free false). */
static unsigned node_gpu_room(const struct node *n, const struct job *j, bool all)
{
	return gpus_count((all ? UINT64_MAX : n->gpus_free) & job_node_gpus(n, j));
}

/* The lowest ngpus GPUs of set (which has at least as many). */
static uint64_t gpus_lowest(uint64_t set, unsigned ngpus)
{
	uint64_t got = 0;

	for (unsigned k = 0; k < ngpus; k++) {
		uint64_t low = set & -set;

		got |= low;
		set &= ~low;
	}
	return got;
}

/* The CPUs close to the GPUs of set (node_gpu.cpus), within avail;
 * *ret_known false when none of them has a known locality. */
static void gpus_near(const struct node *n, uint64_t set, const struct cpumask *avail, struct cpumask *ret,
		      bool *ret_known)
{
	memset(ret, 0, sizeof(*ret));
	*ret_known = false;
	for (unsigned g = 0; g < n->n_gpus && g < 64; g++) {
		if (!(set & (UINT64_C(1) << g)) || !cpumask_count(&n->gpus[g].cpus))
			continue;
		*ret_known = true;
		for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
			ret->bits[i] |= n->gpus[g].cpus.bits[i] & avail->bits[i];
	}
}

/* Chooses ngpus of n's free GPUs among gmask (the job's model's, or all)
 * for a share of ncpus CPUs out of avail (docs/GPUS.md): GPUs of one NUMA node whose close CPUs are free enough
 * first, then the lowest free ones with theirs; *avail narrowed to those
 * close CPUs when there are enough. Otherwise the lowest free GPUs and
 * avail as it is, unless the queue requires locality and the GPUs have a
 * known one (then false: the job waits). */
static bool gpus_choose(const struct node *n, const struct queue_conf *q, uint64_t gmask, unsigned ncpus,
			unsigned ngpus, struct cpumask *avail, uint64_t *ret)
{
	uint64_t free = n->gpus_free & gmask, tried = 0, pick;
	struct cpumask near;
	bool known;

	if (gpus_count(free) < ngpus)
		return false;
	for (unsigned g = 0; g < n->n_gpus && g < 64; g++) {
		uint64_t group = 0;

		if (!(free & (UINT64_C(1) << g)) || (tried & (UINT64_C(1) << g)) || n->gpus[g].numa < 0)
			continue;
		for (unsigned h = g; h < n->n_gpus && h < 64; h++)
			if ((free & (UINT64_C(1) << h)) && n->gpus[h].numa == n->gpus[g].numa)
				group |= UINT64_C(1) << h;
		tried |= group;
		if (gpus_count(group) < ngpus)
			continue;
		pick = gpus_lowest(group, ngpus);
		gpus_near(n, pick, avail, &near, &known);
		if (known && cpumask_count(&near) >= ncpus) {
			*avail = near;
			*ret = pick;
			return true;
		}
	}
	pick = gpus_lowest(free, ngpus);
	gpus_near(n, pick, avail, &near, &known);
	if (known && cpumask_count(&near) >= ncpus)
		*avail = near;
	else if (known && q->gpu_locality == QUEUE_GPU_REQUIRE)
		return false;
	*ret = pick;
	return true;
}

/* Places ncpus and ngpus of a job (mem bytes there) on n into e: the
 * GPUs first (their locality narrows the CPUs), then placement over the
 * node's topology (CPUs near mem free first, on nodes of several NUMA
 * nodes), or first fit (lowest free CPUs) for a node that sent none.
 * Fills e's cpus, claim, mems and gpus. */
static bool node_place(const struct node *n, const struct queue_conf *q, const struct job *j, unsigned ncpus,
		       unsigned ngpus, uint64_t mem, struct alloc_entry *e)
{
	uint64_t numa_free[PLACE_NUMA_MAX];
	struct cpumask avail;
	struct placement pl;

	node_avail(n, q->reserve, &avail);
	if (cpumask_count(&avail) < ncpus)
		return false;
	e->gpus = 0;
	if (ngpus && !gpus_choose(n, q, job_node_gpus(n, j), ncpus, ngpus, &avail, &e->gpus))
		return false;
	if (n->topo) {
		/* One NUMA node (the count is one hwloc lookup): nothing to prefer. */
		if (mem && placement_numa_count(n->topo) > 1 && place_numa_free(n, numa_free, PLACE_NUMA_MAX) > 0) {
			if (placement_choose_mem(n->topo, &avail, ncpus, q->smt, numa_free, mem, &pl, NULL) < 0)
				return false;
		} else if (placement_choose(n->topo, &avail, ncpus, q->smt, &pl, NULL) < 0) {
			return false;
		}
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

/* Whether n has each of ch's own features (select=...:bigmem=true on one
 * kind of chunk of several). */
static bool chunk_node_ok(const struct node *n, const struct job_chunk *ch)
{
	if (!ch->features[0])
		return true;
	if (!n->features)
		return false;
	for (const char *f = ch->features; *f; ) {
		size_t len = strcspn(f, ",");

		if (!nodesel_features_has(n->features, f, len))
			return false;
		f += len + (f[len] == ',');
	}
	return true;
}

/* The nodes of a placement by counts: nv[0..n) with room[i] CPUs and
 * groom[i] GPUs each (ok[i] false: not to use). Assigns j's chunks by its
 * place rule and sets take[i] and gtake[i] (CPUs and GPUs j would take on
 * nv[i]); true when every chunk has a node. One-node jobs are one chunk
 * of ncpus and ngpus, packed. */
static bool chunks_assign(const struct job *j, struct node *const *nv, const unsigned *room,
			  const unsigned *groom, const uint64_t *mroom,
			  uint64_t *mtake, const bool *ok, size_t n, unsigned *take, unsigned *gtake, struct share *sh)
{
	unsigned total = 0, gtotal = 0;
	uint64_t mtotal = 0;

	memset(take, 0, n * sizeof(*take));
	memset(gtake, 0, n * sizeof(*gtake));
	if (mroom)
		memset(mtake, 0, n * sizeof(*mtake));
	if (sh)
		memset(sh, 0, n * sizeof(*sh));
	if (!j->n_chunks || j->place == JOB_PLACE_PACK) {
		total = j->n_chunks ? 0 : j->ncpus;
		gtotal = j->n_chunks ? 0 : j->ngpus;
		mtotal = j->n_chunks ? 0 : j->mem;
		for (unsigned c = 0; c < j->n_chunks; c++) {
			total += j->chunks[c].count * j->chunks[c].ncpus;
			gtotal += j->chunks[c].count * j->chunks[c].ngpus;
			mtotal += (uint64_t)j->chunks[c].count * j->chunks[c].mem;
		}
		for (size_t i = 0; i < n; i++) {
			bool feats = true;

			for (unsigned c = 0; c < j->n_chunks && feats; c++)
				feats = chunk_node_ok(nv[i], &j->chunks[c]);
			if (feats && ok[i] && room[i] >= total && groom[i] >= gtotal && (!mroom || mroom[i] >= mtotal)) {
				take[i] = total;
				gtake[i] = gtotal;
				for (unsigned c = 0; sh && c < j->n_chunks; c++) {
					sh[i].mpiprocs += j->chunks[c].count * j->chunks[c].mpiprocs;
					sh[i].mem += j->chunks[c].count * j->chunks[c].mem;
					if (!sh[i].ompthreads)
						sh[i].ompthreads = j->chunks[c].ompthreads;
				}
				return true;
			}
		}
		return false;
	}
	/* Widest chunks first (GPUs, then CPUs): first fit then leaves no
	 * wide chunk without a node that narrow ones took. */
	unsigned order[JOB_CHUNKS_MAX] = { 0 };

	for (unsigned c = 0; c < j->n_chunks; c++) {
		unsigned k = c;

		while (k > 0 && (j->chunks[order[k - 1]].ngpus < j->chunks[c].ngpus ||
				 (j->chunks[order[k - 1]].ngpus == j->chunks[c].ngpus &&
				  j->chunks[order[k - 1]].ncpus < j->chunks[c].ncpus))) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = c;
	}
	for (unsigned oc = 0; oc < j->n_chunks; oc++) {
		const struct job_chunk *ch = &j->chunks[order[oc]];
		size_t from = 0;

		for (uint32_t k = 0; k < ch->count; k++) {
			size_t i;

			/* Rooms only shrink: nodes before the last one that took a
			 * chunk of this kind cannot take the next, so a request of
			 * many chunks costs its chunks plus the nodes, not both
			 * multiplied. */
			for (i = from; i < n; i++) {
				if (!ok[i] || !chunk_node_ok(nv[i], ch) || room[i] - take[i] < ch->ncpus ||
				    room[i] < take[i] ||
				    groom[i] < gtake[i] + ch->ngpus || (mroom && mroom[i] - mtake[i] < ch->mem))
					continue;
				if (j->place == JOB_PLACE_SCATTER && take[i])
					continue;
				break;
			}
			if (i == n)
				return false;
			from = i;
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
			gtake[i] += ch->ngpus;
			if (mroom)
				mtake[i] += ch->mem;
		}
	}
	return true;
}

/* The nodes, as an array in registration order (p->nv, p->n_nodes). */
int place_nodes_vector(struct pool *p)
{
	size_t n = 0;

	for (struct node *nd = p->nodes; nd; nd = nd->next)
		n++;
	if (n > p->cap_nv) {
		struct node **v = realloc(p->nv, n * sizeof(*v));
		unsigned *room = realloc(p->room, n * sizeof(*room)), *groom;
		uint64_t *mroom, *mtake;
		bool *ok;

		if (v)
			p->nv = v;
		if (room)
			p->room = room;
		groom = realloc(p->groom, n * sizeof(*groom));
		if (groom)
			p->groom = groom;
		ok = realloc(p->ok, n * sizeof(*ok));
		if (ok)
			p->ok = ok;
		mroom = realloc(p->mroom, n * sizeof(*mroom));
		if (mroom)
			p->mroom = mroom;
		mtake = realloc(p->mtake, n * sizeof(*mtake));
		if (mtake)
			p->mtake = mtake;
		if (!v || !room || !groom || !ok || !mroom || !mtake)
			return -ENOMEM;
		p->cap_nv = n;
	}
	n = 0;
	for (struct node *nd = p->nodes; nd; nd = nd->next) {
		nd->no_cpus = nd->no_gpus = 0;
		p->nv[n++] = nd;
	}
	p->n_nodes = n;
	return 0;
}

/* Whether j fits the nodes by their CPUs and GPUs alone, all free: every
 * known node, or only the connected ones (up_only). *ret_max: the most
 * CPUs one of them has; *ret_count: how many have CPUs. */
static bool request_fits(struct pool *p, const struct job *j, bool up_only, unsigned *ret_max, size_t *ret_count)
{
	unsigned *take, max = 0;
	size_t count = 0;
	bool fits;

	for (size_t i = 0; i < p->n_nodes; i++) {
		p->room[i] = cpumask_count(&p->nv[i]->cpus);
		p->groom[i] = node_gpu_room(p->nv[i], j, true);
		p->ok[i] = p->room[i] > 0 && (!up_only || p->nv[i]->link) && node_sel_ok(p->nv[i], j, -1);
		count += p->ok[i];
		if (p->ok[i] && p->room[i] > max)
			max = p->room[i];
	}
	*ret_max = max;
	*ret_count = count;
	take = calloc(p->n_nodes * 2 + 1, sizeof(*take));
	if (!take)
		return true;
	fits = chunks_assign(j, p->nv, p->room, p->groom, NULL, NULL, p->ok, p->n_nodes, take, take + p->n_nodes, NULL);
	/* A matching OR: some one alternative must hold it. */
	if (fits && j->n_chunks && nodesel_alternatives(j->sel)) {
		fits = false;
		for (unsigned a = 0; a < nodesel_alternatives(j->sel) && !fits; a++) {
			for (size_t i = 0; i < p->n_nodes; i++)
				p->ok[i] = p->room[i] > 0 && (!up_only || p->nv[i]->link) &&
					   node_sel_ok(p->nv[i], j, (int)a);
			fits = chunks_assign(j, p->nv, p->room, p->groom, NULL, NULL, p->ok, p->n_nodes, take,
					     take + p->n_nodes, NULL);
		}
	}
	free(take);
	return fits;
}

/* Why j's GPUs do not fit the known nodes, into buf: 0 when they are not
 * the reason (no chunk asks for more GPUs than some node has). */
static int request_gpus_why(const struct pool *p, const struct job *j, char *buf, size_t len)
{
	unsigned gmax = 0, want = job_widest_gpus(j);

	if (!want)
		return 0;
	for (const struct node *n = p->nodes; n; n = n->next)
		if (node_gpu_room(n, j, true) > gmax)
			gmax = node_gpu_room(n, j, true);
	if (gmax == 0 && j->gpu_model) {
		snprintf(buf, len, "gpu_model=%s: no node of this pool has GPUs of that model", j->gpu_model);
		return -ENOSPC;
	}
	if (gmax == 0) {
		snprintf(buf, len, "ngpus=%u: no node of this pool has GPUs", j->ngpus);
		return -ENOSPC;
	}
	if (want <= gmax)
		return 0;
	if (j->gpu_model)
		snprintf(buf, len, "ngpus=%u gpu_model=%s: more GPUs of that model than any node has (the largest "
			 "has %u)", want, j->gpu_model, gmax);
	else if (!j->n_chunks)
		snprintf(buf, len, "ngpus=%u: more GPUs than any node has (the largest has %u)", want, gmax);
	else if (j->place == JOB_PLACE_PACK)
		snprintf(buf, len, "place=pack: %u GPUs on one node, more than any node has (the largest has %u)",
			 want, gmax);
	else
		snprintf(buf, len, "a chunk of ngpus=%u asks for more GPUs than any node has (the largest has %u)",
			 want, gmax);
	return -ENOSPC;
}

/* Why j's memory does not fit the known nodes, into buf: 0 when it is
 * not the reason, or when some node with CPUs did not say its memory. */
static int request_mem_why(const struct pool *p, const struct job *j, char *buf, size_t len)
{
	uint64_t want = job_widest_mem(j), max = 0;
	char a[32], b[32];

	if (!want)
		return 0;
	for (const struct node *n = p->nodes; n; n = n->next) {
		if (!cpumask_count(&n->cpus))
			continue;
		if (!pool_node_mem(n))
			return 0;
		if (pool_node_mem(n) > max)
			max = pool_node_mem(n);
	}
	if (!max || want <= max)
		return 0;
	size_format(want, a, sizeof(a));
	size_format(max & ~((1ULL << 20) - 1), b, sizeof(b));   /* in whole MiB */
	snprintf(buf, len, "%smem=%s: more memory than any node offers its jobs (the largest offers %s)",
		 j->n_chunks && j->place != JOB_PLACE_PACK ? "a chunk of " :
		 j->n_chunks ? "place=pack: " : "", a, b);
	return -ENOSPC;
}

int pool_request_check(const struct pool *cp, const struct job *j, char *buf, size_t len)
{
	struct pool *p = (struct pool *)cp;
	unsigned widest = 0, max = 0, chunks = 0;
	size_t n_nodes = 0;

	if (!p->nodes || place_nodes_vector(p) < 0)
		return 0;
	/* Nodes known by a job or a qmgr setting only (their CPUs unknown)
	 * count for nothing: with no other, the job waits for nodes. CPUs
	 * and GPUs that fit leave memory to say. */
	if (request_fits(p, j, false, &max, &n_nodes) || max == 0)
		return request_mem_why(p, j, buf, len);
	if (request_gpus_why(p, j, buf, len) < 0)
		return -ENOSPC;
	/* A chunk's own features no node has (the front ends match "no
	 * node of this pool has those features"). */
	for (unsigned c = 0; c < j->n_chunks; c++) {
		size_t i;

		for (i = 0; i < p->n_nodes; i++)
			if (cpumask_count(&p->nv[i]->cpus) && node_sel_ok(p->nv[i], j, -1) &&
			    chunk_node_ok(p->nv[i], &j->chunks[c]))
				break;
		if (i == p->n_nodes) {
			snprintf(buf, len, "chunk %u: %s: no node of this pool has those features%s", c + 1,
				 j->chunks[c].features, j->sel ? " (among the nodes allowed)" : "");
			return -ENOSPC;
		}
	}
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
	else if (nodesel_alternatives(j->sel))
		snprintf(buf, len, "a matching OR [...]: no one of its alternatives has nodes enough for the "
			 "job's %u chunks, even when all are free", chunks);
	else if (j->place == JOB_PLACE_SCATTER && chunks > n_nodes)
		snprintf(buf, len, "place=scatter: %u chunks need %u nodes, the pool has %zu", chunks, chunks,
			 n_nodes);
	else if (j->ngpus)
		snprintf(buf, len, "%u CPUs and %u GPUs in %u chunks do not fit the pool's %zu nodes even when "
			 "all are free", j->ncpus, j->ngpus, chunks, n_nodes);
	else
		snprintf(buf, len, "%u CPUs in %u chunks do not fit the pool's %zu nodes even when all are free",
			 j->ncpus, chunks, n_nodes);
	return -ENOSPC;
}

int pool_request_wait_reason(const struct pool *cp, const struct job *j, char *buf, size_t len)
{
	struct pool *p = (struct pool *)cp;
	unsigned max, need = job_widest_cpus(j), named = 0;
	size_t at, count;

	/* The common case at no cost: a connected node holds a one-node job. */
	for (struct node *n = p->nodes; n && !j->n_chunks; n = n->next)
		if (n->link && cpumask_count(&n->cpus) >= j->ncpus && node_gpu_room(n, j, true) >= j->ngpus &&
		    node_sel_ok(n, j, -1))
			return 0;
	if (!p->nodes || place_nodes_vector(p) < 0 || request_fits(p, j, true, &max, &count) ||
	    !request_fits(p, j, false, &max, &count))
		return 0;
	at = (size_t)snprintf(buf, len, "waits for node(s) down:");
	for (size_t i = 0; i < p->n_nodes && at < len; i++) {
		const struct node *n = p->nv[i];

		if (n->link || p->room[i] < need || !node_sel_ok(n, j, -1))
			continue;
		if (named++ == 4) {
			(void)snprintf(buf + at, len - at, ", ...");
			break;
		}
		at += (size_t)snprintf(buf + at, len - at, "%s %s", named > 1 ? "," : "", n->name);
	}
	return 1;
}

int pool_request_sel_wait(const struct pool *p, const struct job *j, char *buf, size_t len)
{
	const char *const *names;
	size_t n_req = j ? nodesel_required(j->sel, &names) : 0, at;
	unsigned allowed = 0, usable = 0, roomy = 0, named = 0, need;

	if (!j || !j->sel)
		return 0;
	need = job_widest_cpus(j);
	for (const struct node *n = p->nodes; n; n = n->next) {
		if (!cpumask_count(&n->cpus) || !node_sel_ok(n, j, -1))
			continue;
		allowed++;
		if (!pool_node_usable(n))
			continue;
		usable++;
		roomy += cpumask_count(&n->free) >= need;
	}
	if (!allowed)
		return 0;
	/* Down: every node it may use, or one its list names (it needs all). */
	for (size_t k = 0; k < n_req && usable; k++) {
		const struct node *n = pool_node_find(p, names[k]);

		if (n && !pool_node_usable(n))
			usable = 0;
	}
	if (!usable) {
		at = (size_t)snprintf(buf, len, "waits for node(s) down or drained:");
		for (const struct node *n = p->nodes; n && at < len; n = n->next) {
			if (!cpumask_count(&n->cpus) || !node_sel_ok(n, j, -1) || pool_node_usable(n))
				continue;
			if (named++ == 4) {
				(void)snprintf(buf + at, len - at, ", ...");
				break;
			}
			at += (size_t)snprintf(buf + at, len - at, "%s %s", named > 1 ? "," : "", n->name);
		}
		return 1;
	}
	if (roomy)
		return 0;
	snprintf(buf, len, "waiting for free CPUs on the %u node(s) it may use", usable);
	return 1;
}

int pool_request_mem_wait(const struct pool *p, const struct job *j, char *buf, size_t len)
{
	uint64_t need = j ? job_widest_mem(j) : 0;
	unsigned named = 0;
	size_t at;

	if (!need)
		return 0;
	for (const struct node *n = p->nodes; n; n = n->next)
		if (pool_node_usable(n) && cpumask_count(&n->cpus) && pool_node_mem_free(n) >= need)
			return 0;
	at = (size_t)snprintf(buf, len, "waits for memory: %llu MiB on a node;",
			      (unsigned long long)((need + (1 << 20) - 1) >> 20));
	for (const struct node *n = p->nodes; n && at < len; n = n->next) {
		if (!pool_node_usable(n) || pool_node_mem(n) < need)
			continue;
		if (named++ == 4) {
			(void)snprintf(buf + at, len - at, ", ...");
			break;
		}
		at += (size_t)snprintf(buf + at, len - at, "%s %s has %llu MiB free of %llu", named > 1 ? "," : "",
				       n->name, (unsigned long long)(pool_node_mem_free(n) >> 20),
				       (unsigned long long)(pool_node_mem(n) >> 20));
	}
	return named > 0;
}

/* The reservation of a blocked wide job j (EASY): from now, its running
 * entries end one by one (at dispatch + walltime; none without one); the
 * first end at which j fits by counts is its start, and the nodes it
 * would take there get resv_t. No reservation when it never fits. */
struct resv_ev {
	int64_t t;               /* wall s the entry's job ends by its walltime */
	size_t node;             /* index in p->nv */
	unsigned cpus;
	unsigned gpus;
	uint64_t mem;
};

static int resv_ev_cmp(const void *a, const void *b)
{
	const struct resv_ev *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* Whether j fits by counts once the first k ends of evs are in: room is
 * base plus those, into p->room. */
static bool fits_after(struct pool *p, const struct job *j, const unsigned *base, const uint64_t *mbase,
		       const struct resv_ev *evs, size_t k, unsigned *take)
{
	memcpy(p->room, base, p->n_nodes * sizeof(*base));
	memcpy(p->groom, base + p->n_nodes, p->n_nodes * sizeof(*base));
	memcpy(p->mroom, mbase, p->n_nodes * sizeof(*mbase));
	for (size_t e = 0; e < k; e++) {
		p->room[evs[e].node] += evs[e].cpus;
		p->groom[evs[e].node] += evs[e].gpus;
		if (p->mroom[evs[e].node] != UINT64_MAX)
			p->mroom[evs[e].node] += evs[e].mem;
	}
	return chunks_assign(j, p->nv, p->room, p->groom, p->mroom, p->mtake, p->ok, p->n_nodes, take, take + p->n_nodes,
			     NULL);
}

/* The reservation of a blocked one-node job: each node on its own, the
 * first end of its running entries after which the job fits there by
 * counts; the node where that comes first gets resv_t. Its entries are
 * visited once and sorted per node: a pool of 10,000 nodes and 500,000
 * running jobs costs that, not a sort of them all and a bisection over
 * every node (bench/pass-gpu). */
static bool reserve_one_node(struct pool *p, const struct queue_conf *q, const struct job *j, int64_t now)
{
	struct resv_ev *evs = NULL;
	size_t cap = 0, best = SIZE_MAX;
	int64_t best_t = INT64_MAX;

	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *nd = p->nv[i];
		unsigned room = 0, groom;
		uint64_t mroom;
		size_t n_ev = 0;

		if (!node_open(nd, q, j, &room) && !(pool_node_usable(nd) &&
						    !(q->reserve == QUEUE_RESERVE_REALTIME && !nd->rt)))
			continue;
		if (cpumask_count(&nd->cpus) < j->ncpus || node_gpu_room(nd, j, true) < j->ngpus ||
		    (pool_node_mem(nd) && pool_node_mem(nd) < j->mem) || !node_sel_ok(nd, j, -1))
			continue;
		groom = node_gpu_room(nd, j, false);
		mroom = pool_node_mem_free(nd);
		for (struct alloc_entry *e = nd->jobs; e; e = e->nnext) {
			const struct job *o = e->job;

			if (e->cpus_back || !o->walltime || o->t_dispatch <= 0)
				continue;
			if (n_ev == cap) {
				struct resv_ev *ne = realloc(evs, (cap = cap ? cap * 2 : 64) * sizeof(*ne));

				if (!ne) {
					free(evs);
					return false;
				}
				evs = ne;
			}
			evs[n_ev++] = (struct resv_ev){ o->t_dispatch / 1000000000 + (int64_t)o->walltime, i,
							cpumask_count(&e->claim), gpus_count(e->gpus & job_node_gpus(nd, j)),
							e->mem };
		}
		if (n_ev == 0)
			continue;
		qp_sort(evs, n_ev, sizeof(*evs), resv_ev_cmp);
		for (size_t e = 0; e < n_ev && evs[e].t < best_t; e++) {
			room += evs[e].cpus;
			groom += evs[e].gpus;
			if (mroom != UINT64_MAX)
				mroom += evs[e].mem;
			if (room >= j->ncpus && groom >= j->ngpus && mroom >= j->mem && (e + 1 == n_ev || evs[e + 1].t != evs[e].t) &&
			    place_resv_ok(p, j, nd, evs[e].t > now ? evs[e].t : now, job_end_at(j, evs[e].t > now ? evs[e].t : now))) {
				best_t = evs[e].t;
				best = i;
				break;
			}
		}
	}
	free(evs);
	if (best == SIZE_MAX)
		return false;
	best_t = best_t > now ? best_t : now;
	if (!p->nv[best]->resv_t || p->nv[best]->resv_t > best_t)
		p->nv[best]->resv_t = best_t;
	return true;
}

/* The reservation of a one-node job from its start estimate: the node
 * its exec_vnode names, from its estimated start (now when past). */
static bool reserve_from_estimate(struct pool *p, const struct job *j, int64_t now)
{
	const char *v = j->est_vnode;
	char name[256];
	struct node *nd;
	size_t len;
	int64_t t;

	if (!j->est_start || !v || *v != '(')
		return false;
	len = strcspn(v + 1, ":)");
	if (len == 0 || len >= sizeof(name))
		return false;
	memcpy(name, v + 1, len);
	name[len] = '\0';
	nd = pool_node_find(p, name);
	if (!nd || !pool_node_usable(nd))
		return false;
	t = j->est_start > now ? j->est_start : now;
	if (!nd->resv_t || nd->resv_t > t)
		nd->resv_t = t;
	return true;
}

bool place_reserve(struct pool *p, const struct queue_conf *q, const struct job *j, int64_t now)
{
	struct resv_ev *evs = NULL;
	size_t n_ev = 0, cap = 0, lo, hi;
	unsigned *take = calloc(p->n_nodes * 2 + 1, sizeof(*take));
	unsigned *base = calloc(p->n_nodes * 2 + 1, sizeof(*base));   /* CPUs, then GPUs */
	uint64_t *mbase = calloc(p->n_nodes + 1, sizeof(*mbase));
	bool made = false;
	int64_t t;

	if (!j->n_chunks) {
		free(take);
		free(base);
		free(mbase);
		/* Its start estimate is that reservation, made by the replay
		 * beside the pass (estimate.c): taken as it is, the pass costs
		 * a look-up, not a walk of every running entry (a 1-CPU job's
		 * walk cost the full pool's pass 100 ms at 10,000 nodes:
		 * bench/pass-estimate). Without one, a job of several GPUs
		 * walks the entries as before; a CPU job gets none. */
		if (reserve_from_estimate(p, j, now))
			return true;
		return j->ngpus > 1 && reserve_one_node(p, q, j, now);
	}
	if (!take || !base || !mbase)
		goto done;
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *nd = p->nv[i];

		p->ok[i] = (node_open(nd, q, j, &base[i]) || (pool_node_usable(nd) &&
			   !(q->reserve == QUEUE_RESERVE_REALTIME && !nd->rt))) && node_sel_ok(nd, j, -1);
		base[p->n_nodes + i] = node_gpu_room(nd, j, false);
		mbase[i] = pool_node_mem_free(nd);
		for (struct alloc_entry *e = nd->jobs; e; e = e->nnext) {
			const struct job *o = e->job;

			if (e->cpus_back || !o->walltime || o->t_dispatch <= 0)
				continue;
			if (n_ev == cap) {
				struct resv_ev *ne = realloc(evs, (cap = cap ? cap * 2 : 64) * sizeof(*ne));

				if (!ne)
					goto done;
				evs = ne;
			}
			evs[n_ev++] = (struct resv_ev){ o->t_dispatch / 1000000000 + (int64_t)o->walltime, i,
							cpumask_count(&e->claim), gpus_count(e->gpus & job_node_gpus(nd, j)),
							e->mem };
		}
	}
	if (n_ev == 0)
		goto done;
	qp_sort(evs, n_ev, sizeof(*evs), resv_ev_cmp);
	/* Room only grows as jobs end: the first prefix of ends after which
	 * j fits is found by bisection, not by trying every end. */
	if (!fits_after(p, j, base, mbase, evs, n_ev, take))
		goto done;
	lo = 1;
	hi = n_ev;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fits_after(p, j, base, mbase, evs, mid, take))
			hi = mid;
		else
			lo = mid + 1;
	}
	/* Ends at the same second come together. */
	while (lo < n_ev && evs[lo].t == evs[lo - 1].t)
		lo++;
	(void)fits_after(p, j, base, mbase, evs, lo, take);
	t = evs[lo - 1].t > now ? evs[lo - 1].t : now;
	/* Not into a reservation (pool-resv.c): no start planned there. */
	for (size_t i = 0; i < p->n_nodes; i++)
		if (take[i] && !place_resv_ok(p, j, p->nv[i], t, job_end_at(j, t)))
			goto done;
	for (size_t i = 0; i < p->n_nodes; i++)
		if (take[i] && (!p->nv[i]->resv_t || p->nv[i]->resv_t > t))
			p->nv[i]->resv_t = t;
	made = true;
done:
	free(evs);
	free(take);
	free(base);
	free(mbase);
	return made;
}

bool place_node_eligible(const struct node *n, const struct queue_conf *q, const struct job *j)
{
	return pool_node_usable(n) && !(q->reserve == QUEUE_RESERVE_REALTIME && !n->rt) &&
	       cpumask_count(&n->cpus) >= job_widest_cpus(j) && node_gpu_room(n, j, true) >= job_widest_gpus(j) &&
	       (!pool_node_mem(n) || pool_node_mem(n) >= job_widest_mem(j)) && node_sel_ok(n, j, -1);
}

unsigned place_node_gpus_for(const struct node *n, const struct job *j)
{
	return node_gpu_room(n, j, true);
}

bool place_chunks_fit(struct pool *p, const struct job *j, unsigned *take)
{
	for (size_t i = 0; i < p->n_nodes; i++)
		p->ok[i] = p->ok[i] && node_sel_ok(p->nv[i], j, -1);
	return chunks_assign(j, p->nv, p->room, p->groom, p->mroom, p->mtake, p->ok, p->n_nodes, take,
			     take + p->n_nodes, NULL);
}

/* The most CPUs j needs on one node. */
/* Whether queue name is in q's preempts list. */
static bool preempts(const struct queue_conf *q, const char *name)
{
	size_t n = strlen(name);

	for (const char *at = q->preempts; (at = strstr(at, name)); at += n)
		if ((at == q->preempts || at[-1] == ',' || at[-1] == ' ') && (!at[n] || at[n] == ',' || at[n] == ' '))
			return true;
	return false;
}

static int victim_cmp(const void *a, const void *b)
{
	const struct job *x = *(struct job *const *)a, *y = *(struct job *const *)b;

	/* The youngest first: the least work lost. */
	return x->t_dispatch > y->t_dispatch ? -1 : x->t_dispatch < y->t_dispatch;
}

/* Whether v, preempted, is suspended (its queue's preempt_mode or its
 * QOS's PreemptMode): it keeps its memory, lends its CPUs on one node. */
static bool victim_suspends(const struct pool *p, const struct config *c, const struct job *v)
{
	const struct queue_conf *vq = config_queue(c, v->queue);

	return vq && (vq->preempt_mode == QUEUE_PREEMPT_SUSPEND || pool_qos_suspends(p, v->qos));
}

/* Whether running job v may give way to j of queue q now. */
static bool victim_ok(struct pool *p, const struct config *c, const struct queue_conf *q, const struct job *j,
		      const struct job *v, int64_t now)
{
	const struct queue_conf *vq = config_queue(c, v->queue);

	/* A suspended job runs nothing to take (an admin's suspend holds
	 * its CPUs until the admin resumes it). */
	return v->state == JOB_RUNNING && !v->preempted && !v->suspended && vq &&
	       (preempts(q, vq->name) || pool_qos_preempts(p, j->qos, v->qos)) &&
	       !(vq->preempt_min_runtime && now - v->t_dispatch < (int64_t)vq->preempt_min_runtime * 1000000000);
}

/* A victim's share on node i, added to (sign 1) or taken from (-1) the
 * room of a placement by counts. */
struct victim_share {
	struct job *v;
	size_t node;
	unsigned cpus, gpus;
	uint64_t mem;
};

static int victim_share_cmp(const void *a, const void *b)
{
	const struct victim_share *x = a, *y = b;
	int r = victim_cmp(&x->v, &y->v);

	return r ? r : x->v->id < y->v->id ? -1 : x->v->id > y->v->id;
}

static void victim_shares_add(struct pool *p, const struct victim_share *vs, size_t n, int sign)
{
	for (size_t k = 0; k < n; k++) {
		p->room[vs[k].node] += (unsigned)sign * vs[k].cpus;
		p->groom[vs[k].node] += (unsigned)sign * vs[k].gpus;
		if (p->mroom[vs[k].node] != UINT64_MAX)   /* memory not counted there */
			p->mroom[vs[k].node] += (uint64_t)(int64_t)sign * vs[k].mem;
	}
}

/* A job across nodes (chunks): the victims, youngest first, whose
 * shares added to the free room of every node let its chunks be
 * assigned by counts; then each victim not needed for that is left
 * out again. Victims held in a suspend (preempt_mode = suspend, or a
 * QOS's PreemptMode=suspend) are not
 * taken for it: their lending is for one node (docs/PREEMPTION.md). */
static size_t preempt_pick_chunks(struct pool *p, const struct config *c, const struct queue_conf *q,
				  const struct job *j, int64_t now, struct job **ret, size_t max)
{
	struct victim_share *vs = NULL;
	size_t n = 0, cap = 0, n_v = 0, *first = NULL;
	unsigned *take = calloc(p->n_nodes * 2 + 1, sizeof(*take));
	bool fits = false;

	if (!take)
		return 0;
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *nd = p->nv[i];

		/* (No look at resv_t: the nodes reserved in this pass are
		 * the ones this blocked job reserved for itself.) */
		p->ok[i] = node_open(nd, q, j, &p->room[i]);
		p->groom[i] = node_gpu_room(nd, j, false);
		p->mroom[i] = pool_node_mem_free(nd);
		for (const struct alloc_entry *e = p->ok[i] ? nd->jobs : NULL; e; e = e->nnext) {
			if (e->cpus_back || !e->job || !victim_ok(p, c, q, j, e->job, now) ||
			    victim_suspends(p, c, e->job))
				continue;
			if (n == cap) {
				struct victim_share *t = realloc(vs, (cap = cap ? 2 * cap : 16) * sizeof(*t));

				if (!t)
					goto done;
				vs = t;
			}
			vs[n++] = (struct victim_share){ e->job, i, e->ncpus,
							 (unsigned)__builtin_popcountll(e->gpus), e->mem };
		}
	}
	/* It fits by counts now: its wait is another's. */
	if (chunks_assign(j, p->nv, p->room, p->groom, p->mroom, p->mtake, p->ok, p->n_nodes, take,
			  take + p->n_nodes, NULL) || !n)
		goto done;
	qp_sort(vs, n, sizeof(*vs), victim_share_cmp);
	/* first[k]: where victim k's shares begin in vs; first[n_v] = n. */
	first = calloc(n + 1, sizeof(*first));
	if (!first)
		goto done;
	for (size_t k = 0; k < n && !fits; n_v++) {
		size_t e = k;

		while (e < n && vs[e].v == vs[k].v)
			e++;
		if (n_v == max)
			break;
		first[n_v] = k;
		victim_shares_add(p, vs + k, e - k, 1);
		fits = chunks_assign(j, p->nv, p->room, p->groom, p->mroom, p->mtake, p->ok, p->n_nodes, take,
				     take + p->n_nodes, NULL);
		k = e;
		first[n_v + 1] = e;
	}
	if (!fits) {
		n_v = 0;
		goto done;
	}
	/* The last one made it fit; any before it that it does not need
	 * stays running. */
	for (size_t k = n_v - 1; k-- > 0;) {
		victim_shares_add(p, vs + first[k], first[k + 1] - first[k], -1);
		if (chunks_assign(j, p->nv, p->room, p->groom, p->mroom, p->mtake, p->ok, p->n_nodes, take,
				  take + p->n_nodes, NULL))
			vs[first[k]].v = NULL;   /* not needed */
		else
			victim_shares_add(p, vs + first[k], first[k + 1] - first[k], 1);
	}
	{
		size_t m = 0;

		for (size_t k = 0; k < n_v; k++)
			if (vs[first[k]].v)
				ret[m++] = vs[first[k]].v;
		n_v = m;
	}
done:
	free(first);
	free(vs);
	free(take);
	return n_v;
}

size_t place_preempt_pick(struct pool *p, const struct config *c, const struct queue_conf *q, const struct job *j,
			  int64_t now, struct job **ret, size_t max)
{
	struct job **cand = NULL, **best = NULL;
	size_t n_best = 0, cap = 0;
	uint64_t best_cpus = UINT64_MAX;

	if ((!q->preempts[0] && !pool_qos_preempts_any(p, j->qos)) || j->excl || j->gpu_model || j->n_nres ||
	    j->n_lic)
		return 0;
	if (j->n_chunks)
		return preempt_pick_chunks(p, c, q, j, now, ret, max);
	for (struct node *nd = p->nodes; nd; nd = nd->next) {
		unsigned room = 0, groom;
		uint64_t mroom, got_cpus = 0, got_gpus = 0, got_mem = 0;
		size_t n = 0, take = 0;

		if (!pool_node_usable(nd) || nd->n_excl || !node_sel_ok(nd, j, -1) ||
		    (q->reserve == QUEUE_RESERVE_REALTIME && !nd->rt))
			continue;
		{
			struct cpumask avail;

			node_avail(nd, q->reserve, &avail);
			room = cpumask_count(&avail);
		}
		groom = node_gpu_room(nd, j, false);
		mroom = pool_node_mem_free(nd);
		if (room >= j->ncpus && groom >= j->ngpus && mroom >= j->mem)
			continue;   /* it fits by counts: its wait is another's */
		for (const struct alloc_entry *e = nd->jobs; e; e = e->nnext) {
			const struct job *v = e->job;

			if (!victim_ok(p, c, q, j, v, now))
				continue;
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 16;
				struct job **t = realloc(cand, nc * sizeof(*t));

				if (!t)
					goto done;
				cand = t;
				cap = nc;
			}
			cand[n++] = (struct job *)v;
		}
		qp_sort(cand, n, sizeof(*cand), victim_cmp);
		for (take = 0; take < n && (room + got_cpus < j->ncpus || groom + got_gpus < j->ngpus ||
					    mroom + got_mem < j->mem); take++) {
			const struct alloc_entry *e = job_entry(cand[take], nd->name);

			got_cpus += e ? e->ncpus : 0;
			got_gpus += e ? (unsigned)__builtin_popcountll(e->gpus) : 0;
			/* A suspended job keeps its memory (docs/PREEMPTION.md). */
			if (!victim_suspends(p, c, cand[take]))
				got_mem += e ? e->mem : 0;
		}
		if (room + got_cpus < j->ncpus || groom + got_gpus < j->ngpus || mroom + got_mem < j->mem ||
		    take > max)
			continue;
		/* The node that costs the fewest jobs, then the fewest CPUs. */
		if (!best || take < n_best || (take == n_best && got_cpus < best_cpus)) {
			struct job **t = realloc(best, (take ? take : 1) * sizeof(*t));

			if (!t)
				goto done;
			best = t;
			memcpy(best, cand, take * sizeof(*best));
			n_best = take;
			best_cpus = got_cpus;
		}
	}
done:
	if (best)
		memcpy(ret, best, n_best * sizeof(*ret));
	else
		n_best = 0;
	free(best);
	free(cand);
	return n_best;
}

/* Places j now, whole or not at all: the nodes by counts (chunks_assign),
 * then each node's share by placement. Nodes reserved before j would end
 * (its walltime from now) are not used. Fills j's allocation. */
bool place_job(struct pool *p, const struct queue_conf *q, struct job *j, int64_t now, unsigned *ret_room,
	       unsigned *ret_groom, uint64_t *ret_mroom)
{
	int64_t end = j->walltime ? now + (int64_t)j->walltime : INT64_MAX;
	unsigned *take, n_take = 0, seen = 0, gseen = 0;
	uint64_t mseen = 0;
	struct share *sh = NULL;
	bool ok = false, resv_cacheable;

	*ret_room = 0;
	*ret_groom = 0;
	*ret_mroom = 0;
	/* (A job of a GPU model, or one asking for a node's counted
	 * resources, leaves the selection's misses alone: its key says
	 * neither.) */
	if (!j->n_chunks && j->sel && !j->gpu_model && !j->n_nres && !j->resv) {
		uint64_t key = nodesel_key(j->sel);

		/* A selection that found no node this pass, for as much or
		 * less: none now either. The bounds are left as they are. */
		for (unsigned k = 0; k < p->n_sel_miss && k < 16; k++)
			if (p->sel_miss[k].key == key && p->sel_miss[k].ncpus <= j->ncpus &&
			    p->sel_miss[k].ngpus <= j->ngpus && p->sel_miss[k].mem <= j->mem &&
			    p->sel_miss[k].walltime - 1 <= j->walltime - 1) {   /* 0: the longest */
				*ret_room = UINT_MAX;
				*ret_groom = UINT_MAX;
				*ret_mroom = UINT64_MAX;
				return false;
			}
	}
	/* With reservations, a one-node job as wide and as long as one that
	 * found no node this pass finds none either: no scan (a job blocked
	 * by a window would look at every node, every pass). */
	resv_cacheable = p->n_resv && !j->n_chunks && !j->sel && !j->resv && !j->excl && !j->gpu_model && !j->n_nres;
	if (resv_cacheable && p->resv_miss.set && j->ncpus >= p->resv_miss.ncpus && j->ngpus >= p->resv_miss.ngpus &&
	    j->mem >= p->resv_miss.mem && end >= p->resv_miss.end) {
		*ret_room = UINT_MAX;
		*ret_groom = UINT_MAX;
		*ret_mroom = UINT64_MAX;
		return false;
	}
	if (!j->n_chunks) {
		/* One node: the first where placement finds room, as always;
		 * nodes after it are not looked at (a pass over 10,000 nodes
		 * places 512 jobs). */
		bool skipped = false;
		bool far = p->n_resv && !j->resv && !j->excl && p->far_t && end > p->far_t;

		for (struct node *nd = far ? p->scan_far : p->scan_from; nd; nd = nd->next) {
			struct alloc_entry e = { 0 };
			unsigned room, groom, want;
			uint64_t mroom;
			bool open;

			/* A node reserved before j would end, passed at the cost
			 * of one load (a window over 1,000 nodes made every job
			 * look at each: 141 ms a pass, bench/pass-gpu); its room
			 * is not seen, so the bound learns nothing from j. */
			if (p->n_resv && !j->resv && end > nd->resv_from) {
				skipped = true;
				if (far && nd == p->scan_far)
					p->scan_far = nd->next;
				continue;
			}
			open = node_open(nd, q, j, &room);
			p->stats.node_looks++;
			if ((!open || room == 0) && far && nd == p->scan_far)
				p->scan_far = nd->next;
			/* Placement refused as many CPUs here this pass (a
			 * count of free CPUs that are not whole cores): no
			 * more fit now, and the bound counts no more. */
			if (open && nd->no_cpus && !nd->no_gpus && room >= nd->no_cpus)
				room = nd->no_cpus - 1;
			/* Nodes at the front with no room for this queue's
			 * jobs have none for the rest of the pass (room only
			 * shrinks in it): the next job starts after them. An
			 * excl job's refusal says nothing of the next job's. */
			if ((!open || room == 0) && nd == p->scan_from && !j->excl)
				p->scan_from = nd->next;
			if (!open)
				continue;
			groom = node_gpu_room(nd, j, false);
			mroom = pool_node_mem_free(nd);
			/* The bound the pass keeps ignores reservations: a
			 * later, shorter job may still use a reserved node. */
			if (room > seen)
				seen = room;
			if (groom > gseen)
				gseen = groom;
			if (mroom > mseen)
				mseen = mroom;
			if ((nd->resv_t && end > nd->resv_t) || !place_resv_now_ok(p, j, nd, now, end) || room < j->ncpus ||
			    groom < j->ngpus || mroom < j->mem ||
			    (nd->no_cpus && j->ncpus >= nd->no_cpus && j->ngpus >= nd->no_gpus) || !node_sel_ok(nd, j, -1) ||
			    (j->n_nres && !node_res_fits(nd, j, true)))
				continue;
			p->stats.place_tries++;
			/* sbatch --exclusive: the node's free CPUs, all of them
			 * (node_open left only nodes no other job holds). */
			want = j->whole ? room : j->ncpus;
			if (want > j->ncpus && !node_place(nd, q, j, want, j->ngpus, j->mem, &e))
				want = j->ncpus;   /* the queue's smt rule leaves some out */
			if (want == j->ncpus && !node_place(nd, q, j, want, j->ngpus, j->mem, &e)) {
				/* Free CPUs only shrink in a pass: what did not
				 * fit will not, nor anything larger (a GPU
				 * model's refusal says nothing of other GPUs). */
				if (!j->excl && !j->gpu_model && (!nd->no_cpus || (j->ncpus <= nd->no_cpus && j->ngpus <= nd->no_gpus))) {
					nd->no_cpus = j->ncpus;
					nd->no_gpus = j->ngpus;
				}
				continue;
			}
			if (job_alloc_init(j, 1) < 0 || !(e.node = strdup(nd->name))) {
				job_alloc_free(j);
				break;
			}
			e.job = j;
			e.ncpus = want;
			e.mpiprocs = j->ncpus;
			e.mem = j->mem;
			j->alloc[0] = e;
			return true;
		}
		*ret_room = skipped ? UINT_MAX : seen;
		*ret_groom = j->gpu_model || skipped ? UINT_MAX : gseen;
		*ret_mroom = skipped ? UINT64_MAX : mseen;
		if (resv_cacheable)
			p->resv_miss = (typeof(p->resv_miss)){ true, j->ncpus, j->ngpus, j->mem, end };
		if (j->sel && !j->excl && !j->gpu_model && !j->n_nres && !j->resv)
			p->sel_miss[p->n_sel_miss++ % 16] = (typeof(p->sel_miss[0])){ nodesel_key(j->sel), j->ncpus,
										j->ngpus, j->mem, j->walltime };
		return false;
	}
	take = calloc(p->n_nodes * 2 + 1, sizeof(*take));   /* CPUs, then GPUs */
	if (!take)
		return false;
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *nd = p->nv[i];

		p->ok[i] = node_open(nd, q, j, &p->room[i]);
		p->groom[i] = node_gpu_room(nd, j, false);
		p->mroom[i] = pool_node_mem_free(nd);
		if (p->ok[i] && p->room[i] > seen)
			seen = p->room[i];
		if (p->ok[i] && p->groom[i] > gseen)
			gseen = p->groom[i];
		if (p->ok[i] && p->mroom[i] > mseen)
			mseen = p->mroom[i];
		p->ok[i] = p->ok[i] && !(nd->resv_t && end > nd->resv_t) && place_resv_now_ok(p, j, nd, now, end) &&
			   (!j->n_nres || node_res_fits(nd, j, true));
	}
	*ret_room = seen;
	*ret_groom = j->gpu_model ? UINT_MAX : gseen;   /* its model's: no bound for others */
	*ret_mroom = mseen;
	sh = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*sh));
	if (!sh)
		goto done;
	if (!j->sel) {
		if (!chunks_assign(j, p->nv, p->room, p->groom, p->mroom, p->mtake, p->ok, p->n_nodes, take,
				   take + p->n_nodes, sh))
			goto done;
	} else {
		/* A matching OR ([a|b]): one alternative for all the nodes,
		 * tried in order; the open nodes are kept aside meanwhile. */
		unsigned alts = nodesel_alternatives(j->sel);
		bool *open = malloc((p->n_nodes + 1) * sizeof(*open)), fit = false;
		const char *const *names;
		struct job spread = *j;

		if (!open)
			goto done;
		/* Chunks placed free that must cover several named nodes
		 * (select=1:host=a+1:host=b) try one per node first: first
		 * fit would pack them on the first. */
		spread.place = JOB_PLACE_SCATTER;
		memcpy(open, p->ok, p->n_nodes);
		for (unsigned a = 0; a < (alts ? alts : 1) && !fit; a++) {
			for (size_t i = 0; i < p->n_nodes; i++)
				p->ok[i] = open[i] && node_sel_ok(p->nv[i], j, alts ? (int)a : -1);
			if (j->place == JOB_PLACE_FREE && nodesel_required(j->sel, &names) > 1)
				fit = chunks_assign(&spread, p->nv, p->room, p->groom, p->mroom, p->mtake, p->ok, p->n_nodes,
						    take, take + p->n_nodes, sh) && required_all_taken(p, j, take);
			if (!fit)
				fit = chunks_assign(j, p->nv, p->room, p->groom, p->mroom, p->mtake, p->ok, p->n_nodes, take,
						    take + p->n_nodes, sh) && required_all_taken(p, j, take);
		}
		free(open);
		if (!fit)
			goto done;
	}
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
		unsigned want = j->whole ? p->room[i] : take[i];

		if (want > take[i] && !node_place(p->nv[i], q, j, want, take[p->n_nodes + i], sh[i].mem, e))
			want = take[i];
		if ((want == take[i] && !node_place(p->nv[i], q, j, want, take[p->n_nodes + i], sh[i].mem, e)) ||
		    !(e->node = strdup(p->nv[i]->name)))
			goto done;
		e->ncpus = want;
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
