/* SPDX-License-Identifier: MIT */
/* The pool in memory: unfinished jobs (by id, in submit order), nodes with
 * their free CPUs and topologies, the IQS rotation of every queue, and the
 * scheduling pass that matches them. */
#ifndef QPOOL_POOL_H
#define QPOOL_POOL_H

#include <hwloc.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "error.h"
#include "gpu.h"
#include "histogram.h"
#include "job.h"
#include "noderes.h"
#include "parse.h"

enum node_state {
	NODE_UP,
	NODE_DOWN,      /* not connected, or silent past node_timeout */
	NODE_DRAINED,   /* connected; running jobs finish, nothing new starts */
};

const char *node_state_name(enum node_state s);

/* Who drained a node: an admin (qmgr, pbsnodes, scontrol), its health
 * check, or a hook (a prolog or epilog, a cpuset the kernel refused). A
 * health check resumes only a node it drained itself. */
enum node_drain_by {
	DRAIN_NONE,
	DRAIN_ADMIN,
	DRAIN_HEALTH,
	DRAIN_HOOK,
};

const char *node_drain_by_name(enum node_drain_by by);

struct node {
	char *name;
	enum node_state state;
	bool drain;              /* drained, kept across disconnects */
	uint8_t drain_by;        /* enum node_drain_by, when drained */
	char *drain_reason;
	int64_t drain_time;      /* wall ns it was drained (0: before qpoold's start) */
	struct cpumask cpus;     /* the node's CPUs */
	struct cpumask free;     /* not allocated to a normal or exclusive job */
	struct cpumask rt_free;  /* not allocated to a realtime or exclusive job */
	char mems[64];
	json_t *topology;
	hwloc_topology_t topo;   /* for placement, shared (pool_topology_get); NULL: first fit */
	char cgroup[8];
	/* GPUs (docs/GPUS.md): index i is gpus[i]; bit i of gpus_free set
	 * while no running job holds it. */
	struct node_gpu *gpus;
	unsigned n_gpus;
	uint64_t gpus_free;
	/* Memory (docs/ARCHITECTURE.md, "Memory counted"): what the running
	 * entries here hold (their mem), never above the offer but when a
	 * restart finds it so. */
	uint64_t mem_used;
	/* Features (lib/nodesel.h), canonical comma list; NULL: none. Sent
	 * at registration, kept in the store inside the topology text. */
	char *features;
	/* Counted resources (lib/noderes.h, [node] resources): sent at
	 * registration, kept in the store inside the topology text. What
	 * jobs hold is the sum of their entries' (scheduler/place.c). */
	struct noderes *res;
	unsigned n_res;
	bool rt;
	bool gate;               /* its qnoded holds a launch until job.go (node.register) */
	char *rt_reason;
	void *link;              /* the server's connection, NULL when down */
	char addr[16];           /* IPv4 its link leaves from, as it says at register; "" */
	int64_t last_seen;       /* monotonic ns of the last message */
	int64_t down_since;      /* monotonic ns it became unreachable; 0: reachable */
	bool lost;               /* unreachable past node_timeout: its jobs were handled */
	bool back;               /* registered since qpoold started (else known from the store) */
	bool down_told;          /* a "down" event was stored: its return is an "up" one */
	char *stored;            /* what the store holds of it (nodes-known.c), NULL: nothing */
	bool noted;              /* registered since the last nodes_known_flush */
	bool up_told_now;        /* that registration told "up" (its return) */
	int64_t t_register;      /* wall ns of its row's registration; 0: none stored */
	char address[64];        /* where that registration came from */
	struct alloc_entry *jobs;    /* the allocation entries of jobs on this node */
	unsigned n_excl;         /* entries of place=excl jobs in jobs */
	int64_t resv_t;          /* this pass: wall s a wide job's reservation starts here; 0: none */
	int64_t resv_from;       /* this pass: the first start of a reservation here not yet ended (pool-resv.c) */
	unsigned no_cpus, no_gpus;   /* this pass: placement refused a job of as many (0: none) */
	struct node *next;
};

struct pool;

int pool_create(struct pool **ret);
void pool_destroy(struct pool *p);

/* Jobs: the pool owns them. Added in submit order (ids ascending), in the
 * state they have then; their queue and uid do not change afterwards. */
int pool_job_add(struct pool *p, struct job *j);
struct job *pool_job_find(const struct pool *p, int64_t id);
/* A pooled job's state changes only here: the pool indexes its queued
 * jobs and running counts by (queue, user) for the scheduling pass. */
void pool_job_state_set(struct pool *p, struct job *j, enum job_state state);
/* qmove: j (queued or held) now belongs to queue; its place among that
 * user's waiting jobs there follows its id. 0 or -ENOMEM. */
int pool_job_move(struct pool *p, struct job *j, const char *queue);
/* qorder: two queued jobs of one user in one queue trade places in that
 * user's waiting order (kept in memory: a restart, or holding or
 * requeueing either, puts them back in id order). -EINVAL otherwise. */
int pool_job_swap(struct pool *p, struct job *a, struct job *b);
/* Unlinks and frees; releases its CPUs on its node. */
void pool_job_remove(struct pool *p, struct job *j);
/* First job in submit order (then j->next), for listings. */
struct job *pool_jobs(const struct pool *p);
/* The pooled arrays in id order, for pages that start at an id: the
 * position of the first array whose subjob ids can lie above after (an
 * array's subjob ids follow its own: the last array at or below after),
 * and the array at a position, NULL past the last. Cost: log(arrays). */
size_t pool_arrays_seek(const struct pool *p, int64_t after);
struct job *pool_arrays_at(const struct pool *p, size_t i);

/* Queued and held jobs: in the pool, in queue, of uid in all queues and
 * of uid in queue. Costs the number of (queue, user) pairs, not of jobs. */
struct pool_waiting {
	uint64_t all, queue, user, queue_user;
};
void pool_waiting_count(const struct pool *p, const char *queue, uid_t uid, struct pool_waiting *ret);
/* What waiting job j counts for there: 1, or an array's waiting subjobs. */
uint64_t pool_job_weight(const struct job *j);

/* Job arrays: an array is one pooled job (j->array) that waits for as
 * many subjobs as it has positions without a row; the pass makes a
 * subjob (id = array's + 1 + position) when it places one, marks it
 * fresh and pools it running. */
struct pool_array_counts {
	int64_t ok, failed, cancelled;    /* subjobs ended so */
};
struct pool_array_info {
	const struct arrayspec *spec;
	int64_t untaken;         /* waiting without a row */
	unsigned running;        /* running or exiting */
	int64_t live;            /* subjobs pooled, any state */
	bool deleting;
	struct pool_array_counts ended;
};
/* Makes j, before pool_job_add, an array of the canonical spec. */
int pool_array_set(struct job *j, const char *spec, struct error *err);
/* Position pos has (or had) a row: no longer waiting in the array. */
void pool_array_take(struct pool *p, struct job *j, int64_t pos);
/* Gives pos back to the array (a fresh subjob's dispatch was undone). */
void pool_array_untake(struct pool *p, struct job *j, int64_t pos);
/* qdel of the array: its waiting subjobs are cancelled, none starts. */
void pool_array_stop(struct pool *p, struct job *j);
/* The first waiting position at or after pos, or -1. Cost: the taken
 * positions from pos on. */
int64_t pool_array_next_waiting(const struct job *j, int64_t pos);
/* Whether position pos still waits in the array. Cost: O(1). */
bool pool_array_waiting(const struct job *j, int64_t pos);
/* Counts a subjob's end in its array (state final). */
void pool_array_ended(struct job *j, enum job_state state);
void pool_array_info(const struct job *j, struct pool_array_info *ret);
/* A new subjob of array a at pos (not pooled; state queued). */
struct job *pool_subjob_make(const struct job *a, int64_t pos);

/* Nodes: found or created by name; never freed while the pool lives. */
struct node *pool_node_get(struct pool *p, const char *name);
struct node *pool_node_find(const struct pool *p, const char *name);
struct node *pool_nodes(const struct pool *p);
/* A loaded topology for hwloc text (XML or synthetic), shared by every
 * node that sent the same text; give it back with pool_topology_put. */
int pool_topology_get(struct pool *p, const char *text, size_t len, hwloc_topology_t *ret, struct error *err);
void pool_topology_put(struct pool *p, hwloc_topology_t topo);
/* The allocation entries on n (then e->nnext, e->job the job), newest
 * first; an entry leaves the list when its job is released or removed. */
struct alloc_entry *pool_node_jobs(const struct node *n);
/* A node's GPUs (node-gpus.c): takes gpus (malloc'd, n_gpus of them,
 * NULL when none) in place of n's; gpus_free is all of them but those
 * n's running entries hold. */
void pool_node_gpus_set(struct node *n, struct node_gpu *gpus, unsigned n_gpus);
/* The node object's gpus: node.register's entries, each held one with
 * "job", its holder's id. NULL when out of memory. */
json_t *pool_node_gpus_json(const struct node *n);
/* Free GPUs of n. */
unsigned pool_node_gpus_free(const struct node *n);
/* The memory n offers its jobs (node.register's topology "mem": its
 * node group's limit), bytes; 0 when it did not say (not counted there). */
uint64_t pool_node_mem(const struct node *n);
/* What of it no running entry holds; UINT64_MAX when not counted. */
uint64_t pool_node_mem_free(const struct node *n);
/* The node object's mem_free_numa: what is free of each NUMA node's part
 * of the offer (bytes, hwloc's order) as placement counts it; NULL on a
 * node of one NUMA node or that did not say its memory. */
json_t *pool_node_numa_free_json(const struct node *n);
/* mem_per_cpu_default = auto: the smallest offer per CPU of the known
 * nodes that said their memory, bytes; 0 with none. */
uint64_t pool_mem_per_cpu_auto(const struct pool *p);

/* The largest memory a known node offers its jobs (bytes; 0: none says):
 * what a job asking for a whole node's memory (sbatch --mem=0) holds. */
uint64_t pool_mem_node_max(const struct pool *p);
/* Why waiting j does not start now, when memory is the reason: 1 with
 * "waits for memory: NODE has X free of Y, the job needs Z; ..." into
 * buf (up to 4 nodes); else 0. */
int pool_request_mem_wait(const struct pool *p, const struct job *j, char *buf, size_t len);
/* Most CPUs any known node has; 0 with no node. */
unsigned pool_node_max_cpus(const struct pool *p);
/* Forgets n (qmgr delete node): unlinked and freed. -EBUSY while it is
 * connected or has jobs. */
int pool_node_remove(struct pool *p, struct node *n);

/* True (once) when the earliest qsub -a time a pass skipped has come:
 * the caller runs a pass. now in wall seconds. */
bool pool_deferred_due(struct pool *p, int64_t now);

/* Reservations (docs/RESERVATIONS.md), as placement keeps them: the
 * set replaces the last (strings copied); 0 or -ENOMEM. */
struct pool_resv_spec {
	const char *name;
	int64_t start, end;          /* wall s, [start, end) */
	bool maint;
	bool all;                    /* every node */
	const char *const *nodes;
	size_t n_nodes;
};
int pool_resv_set(struct pool *p, const struct pool_resv_spec *v, size_t n);
/* Whether j may hold node from start to end (wall s): a job of a
 * reservation only on its nodes within its times; any other job on no
 * node of a reservation it would overlap. */
bool pool_resv_allows(const struct pool *p, const struct job *j, const char *node, int64_t start, int64_t end);
/* The next start or end of a reservation after now; 0: none. */
int64_t pool_resv_next_edge(const struct pool *p, int64_t now);
/* Why j waits for a reservation, with the remedy ("runs into maintenance
 * at 08:00 on n1; with walltime <= 2:13:00 it starts now"): 1 and buf
 * set, or 0. */
int pool_request_resv_wait(const struct pool *p, const struct job *j, int64_t now, char *buf, size_t len);
/* A node is usable for new jobs: connected, up, not drained. */
bool pool_node_usable(const struct node *n);

/* Marks entry e's claim used on its node (after a restart or a
 * reconcile). A job added with an allocation (j->alloc with names) is in
 * its nodes' lists already (pool_node_jobs), its claims marked used. */
void pool_entry_claim(struct pool *p, struct alloc_entry *e);
static inline void pool_job_claim(struct pool *p, struct job *j)
{
	for (unsigned i = 0; i < j->n_alloc; i++)
		pool_entry_claim(p, &j->alloc[i]);
}
/* The processes of j on e's node are all gone (its wrapper said so before
 * its result): that node's CPUs go back now; j stays running, and counts
 * so for the limits, until its result. False for a job not running, or
 * whose CPUs there are back already. */
bool pool_entry_cpus_back(struct pool *p, struct alloc_entry *e);
/* A suspended job's share of a node (docs/PREEMPTION.md): its CPUs and
 * GPUs lent to others, its memory still counted (pool_entry_lend); taken
 * back (pool_entry_reclaim) only when pool_entry_lent_free says all of
 * them are free again. */
void pool_entry_lend(struct pool *p, struct alloc_entry *e);
bool pool_entry_lent_free(const struct alloc_entry *e);
void pool_entry_reclaim(struct pool *p, struct alloc_entry *e);
static inline bool pool_job_cpus_back(struct pool *p, struct job *j)
{
	return j->n_alloc && pool_entry_cpus_back(p, &j->alloc[0]);
}
/* Gives j's CPUs back on every node of its allocation and forgets it. */
void pool_job_release(struct pool *p, struct job *j);
/* Links j's allocation (entries with names, as the store loads them)
 * into its nodes' lists, creating the nodes; 0 or -ENOMEM. */
int pool_job_link(struct pool *p, struct job *j);

/* Whether some set of the known nodes (whatever their state: up, or
 * known from the store and not back yet) could ever hold j's request: 0,
 * or -ENOSPC with why (one line) into buf. No node with known CPUs: 0
 * (the job waits for nodes, as a one-node job does). */
int pool_request_check(const struct pool *p, const struct job *j, char *buf, size_t len);
/* Why waiting j cannot start on the connected nodes even when they are
 * free though it fits the known ones: 1 with "waits for down node(s)
 * NAME, ..." (the down nodes wide enough for it) into buf; else 0. */
int pool_request_wait_reason(const struct pool *p, const struct job *j, char *buf, size_t len);

/* Why waiting j, which names nodes or features, does not start now: 1
 * with "waits for node(s) down or drained: NAME, ..." into buf when none
 * of the nodes it may use is usable, or one its list names is not
 * (Slurm's ReqNodeNotAvail); 1 with "waiting for free CPUs on the N
 * node(s) it may use" when they are all too busy now (Resources); else 0
 * (also for a job that names none). */
int pool_request_sel_wait(const struct pool *p, const struct job *j, char *buf, size_t len);

/* Why waiting j does not start now for want of a license: 1 with
 * "waiting for licenses: matlab: 10/10 in use, asks 2" into buf (Slurm's
 * Licenses; the PBS comment); else 0. */
int pool_request_lic_wait(struct pool *p, const struct config *c, const struct job *j, char *buf, size_t len);
/* The pool's licenses for the views: an array of { name, total, used }
 * in the config's order, then any a running job holds that the config
 * no longer has (total 0). NULL: out of memory. */
json_t *pool_licenses_json(struct pool *p, const struct config *c);

/* n's counted resources for the views: an array of { name, total, used,
 * bytes } (used: what the jobs on it hold), and Slurm's gres text
 * ("nvme:2,scratch:800G"; "" none) into gres. NULL: out of memory. */
json_t *pool_node_res_json(const struct node *n, char *gres, size_t len);

/* Whether j (or its array) is the first job the last pass over its
 * queue passed over for want of free CPUs or GPUs: the one the others
 * wait behind (Slurm's Resources; those behind it are Priority). */
bool pool_job_blocked_first(const struct pool *p, const struct job *j);

/* Wall seconds the pass takes as now (a test's clock); 0: time(NULL). */
void pool_clock_set(struct pool *p, int64_t now);

/* The IQS rotation: the sequence number of the last dispatch of each
 * (queue, user). pool_rotation_set is also how the store's copy is loaded. */
int pool_rotation_set(struct pool *p, const char *queue, uid_t uid, uint64_t seq);
uint64_t pool_rotation_get(const struct pool *p, const char *queue, uid_t uid);

/* One dispatch decision of a pass. */
struct dispatch {
	struct job *job;
	struct node *node;       /* the primary's */
	uint64_t seq;            /* the rotation stamp it gave its user */
	bool gated;              /* launched before its commit: released by job.go */
};

/* One scheduling pass: queues by priority (higher first, then config
 * order); within a started queue, its waiting jobs in IQS order (per-user
 * round robin); max_running and max_running_per_user counted live; each job
 * placed on the first usable node where placement finds room (realtime
 * jobs only on nodes that allow it); a job across nodes placed whole or
 * not at all. A job that does not fit is passed over unless the queue is
 * strict, where it stops the queue; the first job across nodes of a queue
 * that does not fit gets a reservation (EASY backfill, docs/ARCHITECTURE.md):
 * later jobs use its nodes only when their walltime ends before it. Chosen jobs are
 * marked running with their CPUs claimed and their user's rotation stamp
 * advanced; the caller commits, or undoes with pool_job_release and
 * state = queued. Returns the number of decisions written (at most max). */
size_t pool_schedule(struct pool *p, const struct config *c, struct dispatch *ret, size_t max);

/* What the passes cost, for the stats op and make bench. A pass is one
 * pool_schedule call; times are CLOCK_MONOTONIC ns. */
struct pool_stats {
	uint64_t passes;
	uint64_t pass_ns_total;
	uint64_t pass_ns_max;
	uint64_t pass_ns_last;
	uint64_t dispatches;
	uint64_t node_looks;     /* nodes one-node jobs' placement looked at */
	uint64_t place_tries;    /* placements tried on a node whose counts fit */
	uint64_t state_changes;  /* pooled jobs' state changes (pool_job_state_set) */
	struct histogram pass_hist;   /* each pass's time */
};

void pool_stats_get(const struct pool *p, struct pool_stats *ret);

/* The queue's current dispatch order with the reason for each place, as a
 * JSON array of { jobid, uid, place, round, hold, reason }. */
json_t *pool_queue_order(struct pool *p, const struct queue_conf *q);
/* The same for places offset+1 .. offset+limit only; *ret_total (may be
 * NULL) gets the number of places in the whole order. */
json_t *pool_queue_order_page(struct pool *p, const struct queue_conf *q, size_t offset, size_t limit,
			      size_t *ret_total);

/* Preemption (docs/PREEMPTION.md): the running jobs of the queues q
 * preempts whose going would let j (one node, waiting) fit on one node by
 * counts, the youngest first, on the node that costs the fewest; none
 * that ran less than their queue's preempt_min_runtime, none already
 * chosen. Fills ret (room for max); returns how many (0: none will do). */
size_t place_preempt_pick(struct pool *p, const struct config *c, const struct queue_conf *q, const struct job *j,
			  int64_t now, struct job **ret, size_t max);
/* The id of queue's first job the last pass passed over for room (0: none). */
int64_t pool_queue_blocked(const struct pool *p, const char *queue);

#endif
