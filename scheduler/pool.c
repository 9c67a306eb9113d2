/* SPDX-License-Identifier: MIT */
/* Jobs by id (open-addressing hash), the IQS rotation, and the scheduling
 * pass: IQS order, live limits, reserve-aware placement (nodes by name:
 * pool-nodes.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrayspec.h"
#include "fairshare.h"
#include "iqs.h"
#include "qos-pool.h"
#include "reslimits.h"
#include "placement.h"
#include "pool-internal.h"
#include "sort.h"
#include "timeutil.h"

/* An array's waiting subjobs: a bit per position (set: it has a row, or
 * had one: dispatched, or held or deleted alone), so 100,000 waiting
 * subjobs cost 12.5 KB, not 100,000 jobs. */
struct job_array {
	struct arrayspec spec;
	int64_t cursor;          /* no untaken position below it */
	int64_t untaken;         /* positions without a row: waiting */
	unsigned running;        /* subjobs running or exiting */
	int64_t live;            /* subjobs in the pool (any state) */
	struct pool_array_counts ended;
	bool deleting;           /* qdel of the whole array: nothing new starts */
	uint8_t taken[];
};

/* The waiting jobs and running counts of one (queue, user), kept as jobs
 * come, change state and go, so a pass costs what it looks at, not the
 * number of jobs: rebuilding the IQS view from every job was ~17% of
 * qpoold's CPU in a 2,000-job run and a few ms per pass at 100,000. */
struct pool_user {
	struct pool_queue *queue;
	uid_t uid;
	unsigned running;             /* running and exiting */
	uint64_t running_cpus, running_gpus;   /* what they hold (reslimits.h) */
	uint64_t waiting;             /* queued and held (an array: its waiting subjobs) */
	struct job *head, *tail;      /* queued jobs, ascending id */
	struct pool_user *next;
};

struct pool_queue {
	char name[QUEUE_NAME_MAX];
	unsigned running;             /* running and exiting */
	uint64_t waiting;             /* queued and held (an array: its waiting subjobs) */
	struct pool_user *users;
	size_t n_users;
	int64_t blocked;              /* the last pass's first job passed over for room: 0 none */
	struct pool_queue *next;
};

struct rotation {
	char queue[QUEUE_NAME_MAX];
	uid_t uid;
	uint64_t seq;
};

static struct job tomb;
#define TOMB (&tomb)

const char *node_state_name(enum node_state s)
{
	static const char *names[] = { "up", "down", "drained" };

	return (unsigned)s < 3 ? names[s] : "unknown";
}

const char *node_drain_by_name(enum node_drain_by by)
{
	static const char *names[] = { "", "admin", "health", "hook" };

	return (unsigned)by < 4 ? names[by] : "admin";
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
		free(nd->features);
		free(nd->res);
		free(nd->stored);
		free(nd->gpus);
		json_decref(nd->topology);
		free(nd);
	}
	pool_topologies_free(p);
	free(p->nv);
	free(p->room);
	free(p->groom);
	free(p->mroom);
	free(p->mtake);
	free(p->ok);
	free(p->node_table);
	free(p->table);
	free(p->arrays);
	free(p->rot);
	free(p->usage);
	free(p->accts);
	pool_qos_free(p);
	pool_licenses_free(p);
	pool_resv_free(p);
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

/* What a waiting job counts for the max_queued limits: an array, its
 * waiting subjobs (none: it leaves its user's waiting list). */
static uint64_t job_weight(const struct job *j)
{
	return j->array ? (uint64_t)j->array->untaken : 1;
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

/* Enters j, in its current state, into its (queue, user) index. */
static void index_add(struct job *j)
{
	struct pool_user *u = j->user;
	struct job *after;

	if (j->state == JOB_QUEUED || j->state == JOB_HELD) {
		u->waiting += job_weight(j);
		u->queue->waiting += job_weight(j);
	}
	if (state_active(j->state) && j->parent && j->parent->array)
		j->parent->array->running++;
	if (state_active(j->state)) {
		u->running++;
		u->queue->running++;
	} else if (j->state == JOB_QUEUED && job_weight(j) > 0) {
		/* New jobs have the highest id; a requeued one walks back, and
		 * so does one of higher qsub -p than its owner's others: a
		 * user's waiting jobs go by priority, then oldest first. */
		for (after = u->tail; after && (after->priority < j->priority ||
						(after->priority == j->priority && after->id > j->id));
		     after = after->wprev)
			;
		wait_link_after(j, after);
	}
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

static void index_del(struct job *j)
{
	struct pool_user *u = j->user;

	if (j->state == JOB_QUEUED || j->state == JOB_HELD) {
		u->waiting -= job_weight(j);
		u->queue->waiting -= job_weight(j);
	}
	if (state_active(j->state) && j->parent && j->parent->array)
		j->parent->array->running--;
	if (state_active(j->state)) {
		u->running--;
		u->queue->running--;
	} else if (j->state == JOB_QUEUED && job_weight(j) > 0) {
		wait_unlink(j);
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

uint64_t pool_job_weight(const struct job *j)
{
	return job_weight(j);
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

/* j starts (+1) or stops (-1) holding its CPUs and GPUs: fair share's
 * use, its user's in the queue and its account's (reslimits.h). */
static void holds_change(struct pool *p, struct job *j, int sign)
{
	struct pool_user *u = j->user;
	uint64_t cpus = job_cpus_held(j);
	double now = pool_fairshare_now(p);

	/* What it commits of budgets, to its walltime's end (none without a
	 * walltime): its account's and its user's (docs/QOS.md). */
	if (sign > 0) {
		double start = j->t_dispatch ? (double)j->t_dispatch / 1e9 : now;

		j->budget_end = j->walltime ? start + (double)j->walltime : 0;
	}
	pool_usage_job(p, j, sign, now);
	pool_acct_job(p, j, sign);
	pool_qos_job(p, j, sign);
	if (!u)
		return;
	if (sign > 0) {
		u->running_cpus += cpus;
		u->running_gpus += j->ngpus;
	} else {
		u->running_cpus -= cpus <= u->running_cpus ? cpus : u->running_cpus;
		u->running_gpus -= j->ngpus <= u->running_gpus ? j->ngpus : u->running_gpus;
	}
}

void pool_job_state_set(struct pool *p, struct job *j, enum job_state state)
{
	index_del(j);
	if (j->state != state)
		p->stats.state_changes++;
	/* Fair share: use runs while the job holds its CPUs. */
	if (state_active(j->state) != state_active(state))
		holds_change(p, j, state_active(state) ? 1 : -1);
	j->state = state;
	/* Back to wait: its next run may be chosen to give way again
	 * (preempt_min_runtime still guards each run). */
	if (state == JOB_QUEUED)
		j->preempted = false;
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

/* The first position in p->arrays whose array's id is above id. */
static size_t arrays_above(const struct pool *p, int64_t id)
{
	size_t lo = 0, hi = p->n_arrays;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->arrays[mid]->id <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Room for one more array; nothing changes on -ENOMEM. */
static int arrays_reserve(struct pool *p)
{
	size_t cap = p->cap_arrays ? 2 * p->cap_arrays : 64;
	struct job **v;

	if (p->n_arrays < p->cap_arrays)
		return 0;
	v = realloc(p->arrays, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->arrays = v;
	p->cap_arrays = cap;
	return 0;
}

/* Arrays come in id order (submit, load): the insert is an append. */
static void arrays_insert(struct pool *p, struct job *j)
{
	size_t i = arrays_above(p, j->id);

	memmove(&p->arrays[i + 1], &p->arrays[i], (p->n_arrays - i) * sizeof(*p->arrays));
	p->arrays[i] = j;
	p->n_arrays++;
}

static void arrays_delete(struct pool *p, const struct job *j)
{
	size_t i = arrays_above(p, j->id);

	if (i == 0 || p->arrays[i - 1] != j)
		return;
	memmove(&p->arrays[i - 1], &p->arrays[i], (p->n_arrays - i) * sizeof(*p->arrays));
	p->n_arrays--;
}

size_t pool_arrays_seek(const struct pool *p, int64_t after)
{
	size_t i = arrays_above(p, after);

	return i ? i - 1 : 0;
}

struct job *pool_arrays_at(const struct pool *p, size_t i)
{
	return i < p->n_arrays ? p->arrays[i] : NULL;
}

int pool_job_add(struct pool *p, struct job *j)
{
	size_t s;

	if ((p->used + p->tombs + 1) * 2 > p->cap) {
		int r = table_grow(p);

		if (r < 0)
			return r;
	}
	if (j->array && arrays_reserve(p) < 0)
		return -ENOMEM;
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
	if (j->array_id && !j->parent) {
		struct job *a = pool_job_find(p, j->array_id);

		j->parent = a && a->array ? a : NULL;
	}
	if (j->parent)
		j->parent->array->live++;
	if (j->array)
		arrays_insert(p, j);
	index_add(j);
	if (state_active(j->state))
		holds_change(p, j, 1);
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
	if (j->array)
		arrays_delete(p, j);
	if (state_active(j->state))
		holds_change(p, j, -1);
	index_del(j);
	if (j->parent)
		j->parent->array->live--;
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

int pool_array_set(struct job *j, const char *spec, struct error *err)
{
	struct arrayspec a;
	struct job_array *arr;
	int r = arrayspec_parse(spec, 't', true, &a, err);

	if (r < 0)
		return r;
	arr = calloc(1, sizeof(*arr) + (size_t)(a.count + 7) / 8);
	if (!arr)
		return error_set(err, -ENOMEM, "out of memory");
	arr->spec = a;
	arr->untaken = a.count;
	free(j->array);
	j->array = arr;
	return 0;
}

static bool bit_taken(const struct job_array *a, int64_t pos)
{
	return a->taken[pos / 8] & (1u << (pos % 8));
}

/* Runs the statements between taking j out of its user's index and
 * putting it back, so what it counts for follows the change. */
#define REINDEX(j, ...) do { if ((j)->user) index_del(j); __VA_ARGS__; if ((j)->user) index_add(j); } while (0)

void pool_array_take(struct pool *p, struct job *j, int64_t pos)
{
	struct job_array *a = j->array;

	if (pos < 0 || pos >= a->spec.count || bit_taken(a, pos))
		return;
	REINDEX(j, {
		a->taken[pos / 8] |= (uint8_t)(1u << (pos % 8));
		if (!a->deleting)
			a->untaken--;
		while (a->cursor < a->spec.count && bit_taken(a, a->cursor))
			a->cursor++;
	});
}

void pool_array_untake(struct pool *p, struct job *j, int64_t pos)
{
	struct job_array *a = j->array;

	if (pos < 0 || pos >= a->spec.count || !bit_taken(a, pos))
		return;
	REINDEX(j, {
		a->taken[pos / 8] &= (uint8_t)~(1u << (pos % 8));
		if (!a->deleting)
			a->untaken++;
		if (pos < a->cursor)
			a->cursor = pos;
	});
}

void pool_array_stop(struct pool *p, struct job *j)
{
	struct job_array *a = j->array;

	REINDEX(j, {
		a->ended.cancelled += a->untaken;
		a->untaken = 0;
		a->deleting = true;
	});
}

int64_t pool_array_next_waiting(const struct job *j, int64_t pos)
{
	const struct job_array *a = j->array;

	if (a->deleting)
		return -1;
	for (pos = pos < a->cursor ? a->cursor : pos; pos < a->spec.count; pos++)
		if (!bit_taken(a, pos))
			return pos;
	return -1;
}

bool pool_array_waiting(const struct job *j, int64_t pos)
{
	const struct job_array *a = j->array;

	return !a->deleting && pos >= 0 && pos < a->spec.count && !bit_taken(a, pos);
}

void pool_array_ended(struct job *j, enum job_state state)
{
	struct pool_array_counts *e = &j->array->ended;

	if (state == JOB_COMPLETED)
		e->ok++;
	else if (state == JOB_CANCELLED)
		e->cancelled++;
	else
		e->failed++;
}

void pool_array_info(const struct job *j, struct pool_array_info *ret)
{
	const struct job_array *a = j->array;

	ret->spec = &a->spec;
	ret->untaken = a->untaken;
	ret->running = a->running;
	ret->live = a->live;
	ret->deleting = a->deleting;
	ret->ended = a->ended;
}

struct job *pool_subjob_make(const struct job *a, int64_t pos)
{
	struct job *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = a->id + 1 + pos;
	memcpy(s->queue, a->queue, sizeof(s->queue));
	s->uid = a->uid;
	s->state = JOB_QUEUED;
	s->ncpus = a->ncpus;
	s->ngpus = a->ngpus;
	s->mem = a->mem;
	s->walltime = a->walltime;
	s->t_submit = a->t_submit;
	s->rerunnable = a->rerunnable;
	s->priority = a->priority;
	s->start_after = a->start_after;
	if (a->n_chunks) {
		s->chunks = malloc(a->n_chunks * sizeof(*s->chunks));
		if (!s->chunks) {
			free(s);
			return NULL;
		}
		memcpy(s->chunks, a->chunks, a->n_chunks * sizeof(*s->chunks));
		s->n_chunks = a->n_chunks;
	}
	s->place = a->place;
	s->excl = a->excl;
	s->whole = a->whole;
	s->sel = nodesel_ref(a->sel);
	if ((a->gpu_model && !(s->gpu_model = strdup(a->gpu_model))) ||
	    (a->account && !(s->account = strdup(a->account))) || (a->qos && !(s->qos = strdup(a->qos))) ||
	    (a->resv && !(s->resv = strdup(a->resv)))) {
		job_free(s);
		return NULL;
	}
	if (a->n_nres) {
		s->nres = malloc(a->n_nres * sizeof(*s->nres));
		if (!s->nres) {
			job_free(s);
			return NULL;
		}
		memcpy(s->nres, a->nres, a->n_nres * sizeof(*s->nres));
		s->n_nres = a->n_nres;
	}
	if (a->n_lic) {
		s->lic = malloc(a->n_lic * sizeof(*s->lic));
		if (!s->lic) {
			job_free(s);
			return NULL;
		}
		memcpy(s->lic, a->lic, a->n_lic * sizeof(*s->lic));
		s->n_lic = a->n_lic;
	}
	s->array_id = a->id;
	s->array_index = arrayspec_index(&a->array->spec, pos);
	s->parent = (struct job *)a;
	return s;
}

struct job *pool_jobs(const struct pool *p)
{
	return p->head;
}

bool pool_deferred_due(struct pool *p, int64_t now)
{
	if (!p->deferred_next || now < p->deferred_next)
		return false;
	p->deferred_next = 0;
	return true;
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
	/* GPUs go with the CPUs, whatever the queue: back only those the
	 * node has and no other of its jobs holds. */
	if (give) {
		uint64_t held = 0;

		for (const struct alloc_entry *o = n->jobs; o; o = o->nnext)
			if (o != e && !o->cpus_back)
				held |= o->gpus;
		n->gpus_free |= e->gpus & place_node_gpus(n) & ~held;
	} else {
		n->gpus_free &= ~e->gpus;
	}
	/* Memory is a sum, not a set: made again from the entries, so a
	 * claim made twice (a restart, then a reconcile) counts once. */
	n->mem_used = give && !e->lent ? 0 : e->mem;
	for (const struct alloc_entry *o = n->jobs; o; o = o->nnext)
		if (o != e && (!o->cpus_back || o->lent))
			n->mem_used += o->mem;
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
	/* A running job loaded from the store holds its licenses again. */
	return j->n_alloc ? pool_license_take(p, j) : 0;
}

void pool_entry_claim(struct pool *p, struct alloc_entry *e)
{
	/* A frozen victim's room stays lent to its preemptor when its node
	 * registers again (a qnoded or qpoold restart): claimed, both would
	 * hold the CPUs and the victim could never be resumed. */
	if (e->lent)
		return;
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

void pool_entry_lend(struct pool *p, struct alloc_entry *e)
{
	if (!e->where || e->cpus_back || !state_active(e->job->state))
		return;
	e->lent = true;
	node_account(e->where, e, true);
	e->cpus_back = true;
}

bool pool_entry_lent_free(const struct alloc_entry *e)
{
	const struct node *n = e->where;
	const struct cpumask *m;

	if (!n || !e->lent)
		return true;
	m = e->job->reserve == QUEUE_RESERVE_REALTIME ? &n->rt_free : &n->free;
	for (size_t i = 0; i < CPUMASK_MAX / 64; i++)
		if ((e->claim.bits[i] & n->cpus.bits[i]) & ~m->bits[i])
			return false;
	return (e->gpus & place_node_gpus(n) & ~n->gpus_free) == 0;
}

void pool_entry_reclaim(struct pool *p, struct alloc_entry *e)
{
	if (!e->lent)
		return;
	e->lent = false;
	if (e->where)
		node_account(e->where, e, false);
	e->cpus_back = false;
}

void pool_job_release(struct pool *p, struct job *j)
{
	pool_license_give(p, j);
	for (unsigned i = 0; i < j->n_alloc; i++) {
		struct alloc_entry *e = &j->alloc[i];

		/* A lent entry's CPUs are given again (those another job
		 * holds are kept) and its memory with them. */
		bool give = !e->cpus_back || e->lent;

		e->lent = false;
		if (e->where && give)
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
	free(j->lost);
	j->lost = NULL;
}

void pool_clock_set(struct pool *p, int64_t now)
{
	p->clock = now;
}

static int64_t pool_now(const struct pool *p)
{
	return p->clock ? p->clock : (int64_t)time(NULL);
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

/* An entry of the order with its user's fair-share key. */
struct fs_entry {
	double key;
	size_t place;
	struct iqs_entry e;
};

static int fs_entry_cmp(const void *a, const void *b)
{
	const struct fs_entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->place < y->place ? -1 : x->place > y->place;
}

/* order = fairshare, as the pass takes them: a user's jobs (in IQS's
 * order) all before the next user's, users by use over share; held jobs
 * stay last. The limits' marks are IQS's. */
static void view_fairshare_sort(struct pool *p, struct queue_view *v)
{
	struct fs_entry *fs = malloc((v->n ? v->n : 1) * sizeof(*fs));
	double now = pool_fairshare_now(p);
	size_t n = 0;

	if (!fs)
		return;
	while (n < v->n && v->order[n].hold != IQS_HELD) {
		fs[n] = (struct fs_entry){ pool_fairshare_key(p, v->order[n].job->uid, now), n, v->order[n] };
		n++;
	}
	qp_sort(fs, n, sizeof(*fs), fs_entry_cmp);
	for (size_t i = 0; i < n; i++)
		v->order[i] = fs[i].e;
	free(fs);
}

/* QOS priority first, as the pass takes them (docs/QOS.md): the order so
 * far kept within each priority; held jobs stay last. */
static void view_qos_sort(struct pool *p, struct queue_view *v)
{
	struct fs_entry *fs = malloc((v->n ? v->n : 1) * sizeof(*fs));
	size_t n = 0;

	if (!fs)
		return;
	while (n < v->n && v->order[n].hold != IQS_HELD) {
		fs[n] = (struct fs_entry){ -(double)pool_qos_priority(p, v->owners[v->order[n].job - v->jobs]), n,
					   v->order[n] };
		n++;
	}
	qp_sort(fs, n, sizeof(*fs), fs_entry_cmp);
	for (size_t i = 0; i < n; i++)
		v->order[i] = fs[i].e;
	free(fs);
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
	if (q->order == QUEUE_ORDER_FAIRSHARE)
		view_fairshare_sort(p, v);
	if (pool_qos_ordered(p))
		view_qos_sort(p, v);
	return 0;
}

/* A turn with its fair-share key: use over share, then IQS's place. */
struct fs_turn {
	double key;
	size_t place;
	struct iqs_turn turn;
};

static int fs_turn_cmp(const void *a, const void *b)
{
	const struct fs_turn *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->place < y->place ? -1 : x->place > y->place;
}

/* order = fairshare: the turns (in IQS order) by use over share, least
 * first; IQS's order breaks ties (docs/FAIRSHARE.md). */
static void fairshare_sort(struct pool *p, struct iqs_turn *turns, size_t n)
{
	struct fs_turn *fs = malloc((n ? n : 1) * sizeof(*fs));
	double now = pool_fairshare_now(p);

	if (!fs)
		return;   /* IQS's order, then */
	for (size_t i = 0; i < n; i++)
		fs[i] = (struct fs_turn){ pool_fairshare_key(p, turns[i].uid, now), i, turns[i] };
	qp_sort(fs, n, sizeof(*fs), fs_turn_cmp);
	for (size_t i = 0; i < n; i++)
		turns[i] = fs[i].turn;
	free(fs);
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
#define QOS_TIERS_MAX 16

/* j or the first job after it in its user's order of QOS tier `tier`
 * (every job when there is one tier). */
static struct job *tier_job(const struct pool *p, struct job *j, size_t n_tiers, const int64_t *tiers, size_t tier)
{
	if (n_tiers < 2)
		return j;
	for (; j; j = j->wnext) {
		int64_t v = pool_qos_priority(p, j);
		size_t k = 0;

		while (k + 1 < n_tiers && tiers[k] != v)
			k++;
		if (k == tier)
			return j;
	}
	return NULL;
}

static size_t queue_schedule(struct pool *p, const struct queue_conf *q, struct dispatch *ret, size_t max)
{
	/* The most CPUs any node has for this queue's jobs, an upper bound:
	 * placements only lower it, and a scan of every node that placed
	 * nothing makes it exact. A job wider than it is passed over without
	 * a scan, so a full pool with 100,000 waiting costs one look per job,
	 * not one look per job and node. */
	unsigned room = UINT_MAX, groom = UINT_MAX;   /* the same bound for GPUs */
	uint64_t mroom = UINT64_MAX;                  /* and for memory */
	struct pool_queue *pq = pool_queue_find(p, q->name);
	struct iqs_turn *turns;
	struct job **heads = NULL;   /* each turn's first job, with QOS tiers */
	int64_t tiers[QOS_TIERS_MAX];
	size_t n_turns = 0, n = 0, n_tiers, tier = 0;
	int64_t now = pool_now(p);
	bool more = true, stop = false;
	/* EASY for every job, one-node ones too: the first resv_depth jobs
	 * the pass cannot start hold their nodes against later jobs that
	 * would not end before them (docs/ESTIMATES.md, "No starvation"). */
	unsigned n_resv = 0, resv_depth = q->backfill_depth ? (unsigned)q->backfill_depth : 1;
	char lwhy[160];
	unsigned seen, gseen;
	uint64_t mseen;

	if (pq)
		pq->blocked = 0;
	if (!pq || !pq->n_users || place_nodes_vector(p) < 0)
		return 0;
	p->scan_from = p->nodes;
	p->n_sel_miss = 0;
	p->resv_miss.set = false;
	p->scan_far = p->nodes;
	turns = malloc(pq->n_users * sizeof(*turns));
	if (!turns)
		return 0;
	for (struct pool_user *u = pq->users; u; u = u->next)
		if (u->head)
			turns[n_turns++] = (struct iqs_turn){ .uid = u->uid, .oldest = u->head->id, .data = u->head,
							      .last_served = pool_rotation_get(p, q->name, u->uid) };
	iqs_turns_sort(turns, n_turns);
	if (q->order == QUEUE_ORDER_FAIRSHARE)
		fairshare_sort(p, turns, n_turns);
	n_tiers = pool_qos_tiers(p, tiers, QOS_TIERS_MAX);
	if (n_tiers > 1 && !(heads = malloc(n_turns * sizeof(*heads)))) {
		free(turns);
		return 0;
	}
	for (size_t t = 0; heads && t < n_turns; t++)
		heads[t] = turns[t].data;
	/* QOS priority first: the tiers one after the other, each in the
	 * queue's order (docs/QOS.md). Each turn's data is its user's next
	 * job; it moves on before the job can leave the waiting list.
	 * round_robin: a job of each user per round; fairshare: a user's
	 * jobs all, in its order, before the next user's (the step stays on
	 * a turn while it has a job). */
	for (size_t t = 0; heads && t < n_turns; t++)
		turns[t].data = tier_job(p, heads[t], n_tiers, tiers, tier);
	while (more && !stop) {
		more = false;
		for (size_t t = 0; t < n_turns && !stop;
		     t += q->order == QUEUE_ORDER_FAIRSHARE && turns[t].data ? 0 : 1) {
			struct job *j = turns[t].data, *arr = NULL;
			struct pool_user *u;
			bool placed = false;
			int64_t pos = -1;

			if (!j)
				continue;
			turns[t].data = tier_job(p, j->wnext, n_tiers, tiers, tier);
			more = true;
			if (n >= max || room == 0) {
				if (room == 0 && !pq->blocked)
					pq->blocked = j->id;
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
			/* Limits in resources (reslimits.h), live too. */
			if ((q->max_cpus_per_user && u->running_cpus + j->ncpus > q->max_cpus_per_user) ||
			    (q->max_gpus_per_user && j->ngpus && u->running_gpus + j->ngpus > q->max_gpus_per_user))
				continue;
			if (j->account && p->n_accts && pool_acct_blocks(p, j, lwhy, sizeof(lwhy)))
				continue;
			if (j->qos && p->n_qos && pool_qos_blocks(p, j, lwhy, sizeof(lwhy)))
				continue;
			if (p->user_budgets && pool_user_budget_blocks(p, j, lwhy, sizeof(lwhy)))
				continue;
			/* qsub -a: not before its time; the timer looks again. */
			if (j->start_after > now) {
				if (!p->deferred_next || j->start_after < p->deferred_next)
					p->deferred_next = j->start_after;
				continue;
			}
			if (job_widest_cpus(j) > room || job_widest_gpus(j) > groom || job_widest_mem(j) > mroom) {
				if (!pq->blocked)
					pq->blocked = j->id;
				if (q->strict)
					stop = true;
				else if (n_resv < resv_depth)
					n_resv += place_reserve(p, q, j, now);
				continue;
			}
			/* Licenses are the pool's: counted before any node. */
			if (j->n_lic && !pool_licenses_fit(p, j, now))
				continue;
			/* An array: its next waiting subjob, made a job of its
			 * own only once it is placed; %MAX counted live too. */
			if (j->array) {
				if (j->array->spec.max_running && j->array->running >= j->array->spec.max_running)
					continue;
				pos = pool_array_next_waiting(j, 0);
				arr = j;
				j = pos < 0 ? NULL : pool_subjob_make(arr, pos);
				if (!j)
					continue;
				j->user = u;
			}
			j->reserve = q->reserve;
			if (place_job(p, q, j, now, &seen, &gseen, &mseen)) {
				/* This run's, before it counts as running: its
				 * budget's commitment runs from it (reslimits.c). */
				j->t_dispatch = now * 1000000000;
				if (arr) {
					/* Taken first: the array leaves the waiting
					 * list with its last subjob. pool_job_add
					 * links its entries to their nodes. */
					pool_array_take(p, arr, pos);
					j->user = NULL;
					j->state = JOB_RUNNING;
					j->fresh = true;
					if (pool_job_add(p, j) < 0) {
						pool_array_untake(p, arr, pos);
						for (unsigned k = 0; k < j->n_alloc; k++)
							if (j->alloc[k].where)
								node_unlink_entry(&j->alloc[k]);
						job_free(j);
						continue;
					}
					/* A preemption for it served: its next
					 * subjob may ask for its own (preempt.c). */
					arr->preempt_until = 0;
					/* Its user's next turn is the array again,
					 * while it has subjobs waiting. */
					if (arr->array->untaken > 0 && arr->state == JOB_QUEUED)
						turns[t].data = arr;
				} else {
					for (unsigned k = 0; k < j->n_alloc; k++)
						node_link_entry(pool_node_find(p, j->alloc[k].node), &j->alloc[k]);
					pool_job_state_set(p, j, JOB_RUNNING);
				}
				for (unsigned k = 0; k < j->n_alloc; k++)
					node_account(j->alloc[k].where, &j->alloc[k], false);
				j->t_dispatch = now * 1000000000;
				if (j->n_lic) {
					/* pool_licenses_fit kept a holder's slot: no failure. */
					(void)pool_license_take(p, j);
					pool_licenses_pass_took(p, j, now);
				}
				ret[n] = (struct dispatch){ .job = j, .node = j->alloc[0].where, .seq = ++p->seq };
				(void)pool_rotation_set(p, q->name, j->uid, ret[n].seq);
				n++;
				placed = true;
			}
			if (!placed) {
				if (!pq->blocked)
					pq->blocked = arr ? arr->id : j->id;
				/* Room was counted on every node; topology may still
				 * refuse a job that fits the count, so seen stays. */
				/* (A selection's miss remembered: UINT_MAX, no news.) */
				if ((!j->n_chunks || j->place == JOB_PLACE_PACK) && !j->excl) {
					room = seen < room ? seen : room;
					groom = gseen < groom ? gseen : groom;
					mroom = mseen < mroom ? mseen : mroom;
				}
				if (q->strict)
					stop = true;
				else if (n_resv < resv_depth)
					n_resv += place_reserve(p, q, arr ? arr : j, now);   /* the array has the estimate */
				if (arr)
					job_free(j);   /* the subjob made for this try */
			}
		}
		/* This QOS tier taken: the next one's jobs (docs/QOS.md). */
		if (!more && !stop && tier + 1 < n_tiers) {
			tier++;
			for (size_t t = 0; t < n_turns; t++)
				turns[t].data = tier_job(p, heads[t], n_tiers, tiers, tier);
			more = true;
		}
	}
	free(turns);
	free(heads);
	return n;
}

size_t pool_waiting_walk(struct pool *p, const struct config *c, size_t max, pool_walk_f f, void *arg)
{
	const struct queue_conf **order;
	size_t seen = 0;

	if (!c->n_queues || !max)
		return 0;
	order = malloc(c->n_queues * sizeof(*order));
	if (!order)
		return 0;
	for (size_t i = 0; i < c->n_queues; i++)
		order[i] = &c->queues[i];
	qp_sort(order, c->n_queues, sizeof(*order), queue_order_cmp);
	for (size_t qi = 0; qi < c->n_queues && seen < max; qi++) {
		const struct queue_conf *q = order[qi];
		struct pool_queue *pq = pool_queue_find(p, q->name);
		struct iqs_turn *turns;
		size_t n_turns = 0;
		bool more = true;

		if (!q->started || !pq || !pq->n_users)
			continue;
		turns = malloc(pq->n_users * sizeof(*turns));
		if (!turns)
			break;
		for (struct pool_user *u = pq->users; u; u = u->next)
			if (u->head)
				turns[n_turns++] = (struct iqs_turn){ .uid = u->uid, .oldest = u->head->id, .data = u->head,
								      .last_served = pool_rotation_get(p, q->name, u->uid) };
		iqs_turns_sort(turns, n_turns);
		if (q->order == QUEUE_ORDER_FAIRSHARE)
			fairshare_sort(p, turns, n_turns);
		/* The turns as queue_schedule takes them. */
		while (more && seen < max) {
			more = false;
			for (size_t t = 0; t < n_turns && seen < max;
			     t += q->order == QUEUE_ORDER_FAIRSHARE && turns[t].data ? 0 : 1) {
				struct job *j = turns[t].data;

				if (!j)
					continue;
				turns[t].data = j->wnext;
				more = true;
				seen++;
				f(p, q, j, arg);
			}
		}
		free(turns);
	}
	free(order);
	return seen;
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
	histogram_observe(&p->stats.pass_hist, ns);
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

	pool_licenses_pass_begin(p, c);
	for (struct node *nd = p->nodes; nd && !any_free; nd = nd->next)
		if (pool_node_usable(nd) && (cpumask_count(&nd->free) || cpumask_count(&nd->rt_free)))
			any_free = true;
	if (!any_free || c->n_queues == 0)
		return 0;
	/* Reservations are made afresh by every pass. */
	for (struct node *nd = p->nodes; nd; nd = nd->next)
		nd->resv_t = 0;
	if (p->n_resv)
		pool_resv_pass_begin(p, pool_now(p));
	order = malloc(c->n_queues * sizeof(*order));
	if (!order)
		return 0;
	for (size_t i = 0; i < c->n_queues; i++)
		order[i] = &c->queues[i];
	qp_sort(order, c->n_queues, sizeof(*order), queue_order_cmp);
	for (size_t qi = 0; qi < c->n_queues && n < max; qi++)
		if (order[qi]->started)
			n += queue_schedule(p, order[qi], ret + n, max - n);
	free(order);
	return n;
}

int pool_request_limit_wait(const struct pool *p, const struct queue_conf *q, const struct job *j, char *why,
			    size_t len)
{
	const struct pool_user *u = j->user;

	if (q && u && q->max_cpus_per_user && u->running_cpus + j->ncpus > q->max_cpus_per_user) {
		snprintf(why, len, "QOSMaxCpuPerUserLimit: max_cpus_per_user=%llu of queue %s: the user's jobs hold "
			 "%llu CPUs, the job asks %u", (unsigned long long)q->max_cpus_per_user, q->name,
			 (unsigned long long)u->running_cpus, j->ncpus);
		return 1;
	}
	if (q && u && q->max_gpus_per_user && j->ngpus && u->running_gpus + j->ngpus > q->max_gpus_per_user) {
		snprintf(why, len, "QOSMaxGRESPerUser: max_gpus_per_user=%llu of queue %s: the user's jobs hold "
			 "%llu GPUs, the job asks %u", (unsigned long long)q->max_gpus_per_user, q->name,
			 (unsigned long long)u->running_gpus, j->ngpus);
		return 1;
	}
	if (j->qos && p->n_qos && pool_qos_blocks(p, j, why, len))
		return 1;
	if (p->user_budgets && pool_user_budget_blocks(p, j, why, len))
		return 1;
	return j->account && p->n_accts ? pool_acct_blocks(p, j, why, len) : 0;
}

int64_t pool_queue_blocked(const struct pool *p, const char *queue)
{
	const struct pool_queue *pq = pool_queue_find(p, queue);

	return pq ? pq->blocked : 0;
}

bool pool_job_blocked_first(const struct pool *p, const struct job *j)
{
	const struct pool_queue *pq = j->queue[0] ? pool_queue_find(p, j->queue) : NULL;
	int64_t id = j->array_id > 0 ? j->array_id : j->id;

	return pq && pq->blocked && pq->blocked == id;
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
		char reason[240];

		switch (e->hold) {
		case IQS_GO:
			if (!q->started ||
			    pool_request_mem_wait(p, pool_job_find(p, e->job->id), reason, sizeof(reason)) <= 0)
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
		json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:s, s:s}",
			"jobid", (json_int_t)e->job->id, "uid", (json_int_t)e->job->uid,
			"place", (json_int_t)(i + 1), "round", (json_int_t)e->round,
			"last_served", (json_int_t)pool_rotation_get(p, q->name, e->job->uid),
			"hold", iqs_hold_name(e->hold), "reason", reason);

		/* Its QOS and the QOS's priority (sprio's QOS column). */
		{
			const struct job *pj = o ? pool_job_find(p, e->job->id) : NULL;

			if (pj && pj->qos) {
				json_object_set_new(o, "qos", json_string(pj->qos));
				json_object_set_new(o, "qos_priority", json_integer(pool_qos_priority(p, pj)));
			}
		}
		/* order = fairshare: the numbers that put it there. */
		if (o && q->order == QUEUE_ORDER_FAIRSHARE) {
			double now = pool_fairshare_now(p);

			json_object_set_new(o, "usage", json_real(pool_usage_get(p, e->job->uid, now)));
			json_object_set_new(o, "share", json_real(pool_share_get(p, e->job->uid)));
			json_object_set_new(o, "key", json_real(pool_fairshare_key(p, e->job->uid, now)));
		}
		json_array_append_new(arr, o);
	}
	queue_view_free(&v);
	return arr;
}
