/* SPDX-License-Identifier: MIT */
/* What pool.c and place.c share: the pool's state and the placement
 * steps of a scheduling pass. */
#ifndef QPOOL_POOL_INTERNAL_H
#define QPOOL_POOL_INTERNAL_H

#include "pool.h"

struct pool_queue;
struct shared_topo;
struct rotation;

struct pool {
	struct job *head, *tail;      /* submit order */
	struct pool_queue *queues;
	struct job **table;           /* hash by id; NULL empty, TOMB deleted */
	size_t cap, used, tombs;
	struct job **arrays;          /* the pooled arrays, ascending id (listings' pages) */
	size_t n_arrays, cap_arrays;
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
	unsigned *groom;              /* their free GPUs for it, */
	uint64_t *mroom;              /* their free memory (UINT64_MAX: not counted), */
	uint64_t *mtake;              /* what chunks_assign gives each of it, */
	bool *ok;                     /* whether it may use them */
	struct node *scan_from;       /* a queue's pass: the first node with room */
	/* A queue's pass: one-node jobs naming nodes or features that found
	 * no node (by nodesel_key, at least these counts and walltime, 0 as
	 * the longest: reservations): a job of the same selection as wide and
	 * as long or more skips its scan, as room only shrinks in a pass. A
	 * ring; emptied at each queue's pass. */
	struct { uint64_t key; unsigned ncpus, ngpus; uint64_t mem, walltime; } sel_miss[16];
	unsigned n_sel_miss;
	size_t n_nodes, cap_nv;
	/* Pool-wide licenses (pool-license.c): totals from the config,
	 * what running jobs hold, and the jobs that hold them. */
	struct pool_license *lic;
	size_t n_lic, cap_lic;
	struct job **lic_holders;
	size_t n_lic_holders, cap_lic_holders;
	/* Limits (limits.c): what each account's running jobs hold, and
	 * its limits (from the store's accounts). */
	struct pool_acct *accts;
	size_t n_accts, cap_accts;
	/* QOS (qos-pool.c): each QOS's limits and what its jobs hold. */
	struct pool_qos *qos;
	size_t n_qos, cap_qos;
	bool qos_ordered;             /* some QOS has a priority: the pass orders by it */
	/* Fair share (fairshare.c): use and share per uid, hashed. */
	struct usage_rec *usage;
	size_t usage_cap, usage_used;
	double halflife, gpu_weight, share_default;
	size_t user_budgets;          /* users with a budget (fairshare.c) */
	/* Reservations (pool-resv.c), and a queue pass's one-node job that
	 * found no node with them (no selection, none of its own): a job at
	 * least as wide and long finds none either (room only shrinks in a
	 * pass; reservations stay). */
	struct pool_resv *resv;
	size_t n_resv;
	struct { bool set; unsigned ncpus, ngpus; uint64_t mem; int64_t end; } resv_miss;
	/* A pass: the latest first start of a reservation on any node (0:
	 * none); one-node jobs ending after it pass every reserved node, and
	 * start their walk at scan_far: the first node not reserved and with
	 * room (scan_from's rule, reserved nodes counted as full). */
	int64_t far_t;
	struct node *scan_far;
};

struct pool_acct {
	char name[64];
	uint64_t cpus, gpus, jobs;             /* held by its running jobs */
	int64_t lim_cpus, lim_gpus, lim_jobs;  /* -1: none */
	/* Budgets (GrpTRESMins, reslimits.c): CPU- and GPU-seconds used,
	 * decayed to t as fair share's use; the CPUs and GPUs running, and
	 * the sums of each running job's CPUs and GPUs times its walltime's
	 * end (what running jobs commit: sum - run * now). */
	int64_t lim_cpu_mins, lim_gpu_mins;    /* -1: none */
	double cpu_use, gpu_use, t;
	double cpu_run, gpu_run, cpu_end, gpu_end;
};

struct usage_rec {
	uid_t uid;
	bool used;           /* the slot holds a user */
	double usage;        /* CPU-seconds, decayed to t */
	double t;            /* seconds */
	double running;      /* the weight of its running jobs */
	double share;        /* 0: the default */
	/* A budget on the user (GrpTRESMins, docs/QOS.md): its running jobs'
	 * weight times their walltime's end, summed; the limit in CPU-minutes
	 * (-1 or 0 with no name: none) and the user's name for the reason. */
	double end_w;
	int64_t lim_cpu_mins;
	char budget_name[32];
};

/* One license as the pool counts it. A name no longer in the config
 * stays while jobs hold it (total 0, conf false). resv_*: the EASY
 * reservation of a pass for the first job that waits for it. */
struct pool_license {
	char name[LICENSE_NAME_MAX];
	uint64_t total, used;
	bool conf;
	bool resv;
	int64_t resv_t;          /* when the waiting job can have them */
	uint64_t resv_spare;     /* of them at resv_t, beyond what it needs */
};

/* Counts j's licenses as held (once), or gives them back (once). */
int pool_license_take(struct pool *p, struct job *j);
void pool_license_give(struct pool *p, struct job *j);
/* A pass: takes the totals from c and drops the last pass's reservations. */
void pool_licenses_pass_begin(struct pool *p, const struct config *c);
/* Whether j may take its licenses now (counts and the reservations of
 * jobs before it); when not, the first job to wait for a license
 * reserves it from the ends of its holders. */
bool pool_licenses_fit(struct pool *p, const struct job *j, int64_t now);
/* A job placed in this pass took its licenses: what it took of a
 * reservation's spare. */
void pool_licenses_pass_took(struct pool *p, const struct job *j, int64_t now);
void pool_licenses_free(struct pool *p);
void pool_resv_free(struct pool *p);
/* A pass's start: each node's resv_from at now. */
void pool_resv_pass_begin(struct pool *p, int64_t now);

/* p->nv, p->room, p->groom, p->ok sized for the nodes, p->nv filled in
 * registration order; 0 or -ENOMEM. */
int place_nodes_vector(struct pool *p);
/* Places j now (one node: the first where placement finds room; chunks:
 * whole or not at all), keeping off nodes reserved before j would end.
 * Fills j's allocation (not yet linked nor claimed). *ret_room: the most
 * CPUs a usable node has for q's jobs, reservations aside; *ret_groom:
 * the most free GPUs one has; *ret_mroom: the most free memory. */
bool place_job(struct pool *p, const struct queue_conf *q, struct job *j, int64_t now, unsigned *ret_room,
	       unsigned *ret_groom, uint64_t *ret_mroom);
/* EASY: gives the nodes blocked job j would take, at the earliest end of
 * running jobs after which it fits, that time as resv_t. False when it
 * never fits on what runs now (no reservation). */
bool place_reserve(struct pool *p, const struct queue_conf *q, const struct job *j, int64_t now);
/* The memory free on each of n's NUMA nodes (bytes, hwloc's logical
 * order) into ret (cap entries): the node's offer shared by the NUMA
 * nodes' memory, less the running entries' mem spread evenly over their
 * mems. The count, or -ENOENT when n has no topology, one NUMA node,
 * more than cap or PLACE_NUMA_MAX, or says no memory (nothing to prefer). */
#define PLACE_NUMA_MAX 64
int place_numa_free(const struct node *n, uint64_t *ret, unsigned cap);
/* The most CPUs j needs on one node. */
unsigned place_widest(const struct job *j);
/* The most memory j needs on one node (bytes; 0: none counted). */
uint64_t place_widest_mem(const struct job *j);
/* The most GPUs j needs on one node. */
unsigned place_widest_gpus(const struct job *j);
/* All of n's GPUs as a mask (bit i: index i). */
uint64_t place_node_gpus(const struct node *n);
/* Whether j could ever run on n for q by what n is (usable, realtime,
 * its selection, its totals of CPUs, GPUs of its model, memory and
 * counted resources), whatever runs there now. */
bool place_node_eligible(const struct node *n, const struct queue_conf *q, const struct job *j);
/* The GPUs of n that j may have (its model's, or all), free or not. */
unsigned place_node_gpus_for(const struct node *n, const struct job *j);
/* Whether j's chunks fit p->nv[i] with p->room[i] CPUs, p->groom[i]
 * GPUs and p->mroom[i] memory each, where p->ok[i] (by its selection:
 * p->ok is narrowed here); take[2 * n_nodes + 1] gets CPUs then GPUs per
 * node. */
bool place_chunks_fit(struct pool *p, const struct job *j, unsigned *take);

/* Waiting jobs in the order the pass takes them (queues by priority,
 * each queue's IQS turns), f called for each; at most max. Returns how
 * many were visited. */
typedef void (*pool_walk_f)(struct pool *p, const struct queue_conf *q, struct job *j, void *arg);
size_t pool_waiting_walk(struct pool *p, const struct config *c, size_t max, pool_walk_f f, void *arg);

#endif
