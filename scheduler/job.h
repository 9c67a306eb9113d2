/* SPDX-License-Identifier: MIT */
/* The scheduler's in-memory view of an unfinished job: what placement needs. */
#ifndef QPOOL_SCHED_JOB_H
#define QPOOL_SCHED_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "license.h"
#include "noderes.h"
#include "nodesel.h"
#include "parse.h"

enum job_state {
	JOB_QUEUED,
	JOB_HELD,
	JOB_RUNNING,
	JOB_EXITING,     /* asked to stop (qdel); waiting for its node's report */
	JOB_COMPLETED,   /* exit status 0 */
	JOB_FAILED,      /* non-zero exit, killed by a signal, or could not start */
	JOB_CANCELLED,   /* qdel */
	JOB_TIMEOUT,     /* killed at its walltime */
	JOB_OOM,         /* killed by the kernel at its memory limit */
	JOB_STATE_MAX,
};

const char *job_state_name(enum job_state s);
/* -EINVAL for an unknown word. */
int job_state_parse(const char *s, enum job_state *ret);

static inline bool job_state_finished(enum job_state s)
{
	return s >= JOB_COMPLETED;
}

struct node;
struct pool_user;
struct job;

/* One kind of chunk of a request across nodes (docs/PARALLEL.md). */
struct job_chunk {
	uint32_t count;
	uint32_t ncpus;
	uint32_t ngpus;          /* GPUs per chunk, 0: none */
	uint32_t mpiprocs;
	uint32_t ompthreads;     /* 0: unset */
	uint64_t mem;            /* bytes per chunk, 0: none */
	char features[128];      /* its own features, canonical comma list (all its
	                          * nodes have each); "" none (docs/RESOURCES.md) */
};

enum job_place {
	JOB_PLACE_FREE,          /* chunks anywhere, several on one node */
	JOB_PLACE_SCATTER,       /* each chunk on a node of its own */
	JOB_PLACE_PACK,          /* every chunk on one node */
};

#define JOB_CHUNKS_MAX 64
#define JOB_NODES_MAX 1024   /* entries of one allocation */
#define JOB_CHUNKS_UNITS_MAX 65536   /* chunks of a request, counts summed */
#define JOB_CPUS_MAX 1000000         /* CPUs of a request (qsub's bound too) */

const char *job_place_name(enum job_place p);
/* "scatter", "pack:excl", "free:excl:whole" ... into j->place, j->excl
 * and j->whole; -EINVAL otherwise. */
int job_place_parse(const char *s, struct job *j);

/* One node's share of a running job: entry 0 is the primary (runs the
 * script), the others sisters. Chunks on one node are one entry. */
struct alloc_entry {
	struct job *job;
	char *node;              /* its name */
	struct node *where;      /* the pool's node, while linked */
	struct cpumask cpus;     /* its cpuset there */
	struct cpumask claim;    /* what it took from the node (cpus + SMT siblings) */
	char mems[64];           /* NUMA nodes of cpus (kernel list) */
	uint32_t ncpus;
	uint32_t mpiprocs;
	uint32_t ompthreads;
	uint64_t mem;
	uint64_t gpus;           /* the node's GPUs it holds (bit i: index i) */
	bool cpus_back;          /* this node's processes are gone: CPUs back early */
	bool lent;               /* ...or frozen (suspend): CPUs and GPUs lent, memory kept */
	bool done;               /* this node's job.done is in (or the node was lost) */
	struct alloc_entry *nnext;   /* that node's entries */
	struct alloc_entry *nprev;
};
struct job_array;

struct job {
	int64_t id;
	char queue[QUEUE_NAME_MAX];
	uid_t uid;
	enum job_state state;
	uint32_t ncpus;
	uint32_t ngpus;          /* GPUs in all (a one-node job's, or its chunks' sum) */
	uint64_t mem;
	uint64_t walltime;
	/* While running/exiting: the allocation, primary first (n_alloc 0
	 * otherwise). A one-node job has one entry. */
	struct alloc_entry *alloc;
	unsigned n_alloc;
	/* A request across nodes (n_chunks 0: ncpus on one node). */
	struct job_chunk *chunks;
	unsigned n_chunks;
	enum job_place place;
	bool excl;               /* place=...:excl: its nodes hold no other job */
	bool whole;              /* ...:excl:whole (sbatch --exclusive): and it gets all their free CPUs */
	struct nodesel *sel;     /* -w, -x, -C, host=, features (lib/nodesel.h); NULL: any node */
	char *gpu_model;         /* its GPUs' model, canonical (lib/gpu.h); NULL: any */
	struct license *lic;     /* pool-wide licenses it needs (-L, PBS -l NAME=N); NULL: none */
	unsigned n_lic;
	bool lic_held;           /* holds them now (counted in the pool's licenses) */
	struct noderes *nres;    /* counted resources it needs on each node (each chunk's); NULL: none */
	unsigned n_nres;
	size_t lic_slot;         /* while held: its place among the pool's holders */
	char *account;           /* Account_Name as submitted or defaulted (docs/ACCOUNTS.md); NULL: none */
	char *qos;               /* Resource_List.qos as submitted or defaulted (docs/QOS.md); NULL: none */
	/* While running: when its walltime ends (seconds), as its budgets and
	 * fair share's committed use count it; 0: no walltime. Set by
	 * pool.c's holds_change as it starts holding, from t_dispatch or, with
	 * none, from "now"; reslimits.c (pool_acct_job) and fairshare.c
	 * (pool_usage_job) add it at the start and subtract it at the end.
	 * Kept, not recomputed, because a start that fell back to "now" must
	 * be subtracted at the end exactly as it was added, or the sums drift. */
	double budget_end;
	char *resv;              /* the reservation it runs in (docs/RESERVATIONS.md); NULL: none */
	enum queue_reserve reserve;  /* how it holds them, from its queue at dispatch */
	int64_t t_submit;
	int64_t t_dispatch;      /* while running/exiting: when this run was dispatched,
	                          * the run's token in job.launch and in the node's
	                          * reports (a stale copy's report carries an older one) */
	bool rerunnable;         /* requeue, not fail, when its node is lost */
	int priority;            /* qsub -p: order among its owner's waiting jobs */
	int64_t start_after;     /* qsub -a: wall seconds; 0: none */
	bool rerun;              /* qrerun: requeue, not finish, when its result comes */
	bool preempted;          /* chosen to give way (preempt.c): not chosen again this run */
	bool suspended;          /* frozen on its node (suspend.c) */
	int64_t t_suspend;       /* while suspended: since when (wall ns) */
	int64_t suspended_ns;    /* this run's time suspended before, in all */
	int64_t suspended_by;    /* the preempting job it waits for; 0: an admin's suspend */
	int64_t preempt_until;   /* ns: a job that preempted waits for its victims till then */
	unsigned prolog_failures; /* node prologs that failed it, since qpoold started */
	bool prolog_hold;        /* held, not queued, once back from this run */
	/* Across nodes: the primary's result, kept until every node's is in;
	 * end_reason, when set, makes the job fail with it (a sister could
	 * not start). */
	struct job_result *result;
	char *end_reason;
	char *lost;              /* "lost node NAME": a node gone before the primary's result */
	/* Job arrays (scheduler/array.c, pool.c). An array is one job whose
	 * waiting subjobs are an index set; a subjob becomes a job of its own
	 * when it is dispatched or acted on alone. */
	char *array_spec;        /* an array: its canonical index set (-J/-t) */
	struct job_array *array; /* an array: its waiting subjobs and counts */
	int64_t array_id;        /* a subjob: its array's id; 0: not a subjob */
	int64_t array_index;     /* a subjob: its index; -1: not a subjob */
	struct job *parent;      /* a subjob: its array, while both are pooled */
	bool fresh;              /* a subjob the pass made: its row is not written yet */
	/* [server] server_prolog (scheduler/srvjob.c): whether this run's
	 * prolog is in flight, which run it is, and the failures so far. */
	bool srv_prolog;
	void *srv_prolog_run;    /* its run's handle (srvhooks_kill) while in flight */
	unsigned srv_prolog_seq;
	unsigned srv_prolog_fails;
	/* Dependencies (scheduler/depend.c). */
	char *depend;            /* -W depend, canonical; NULL: none */
	char *reason;            /* as loaded from the store (why it is held) */
	bool dep_wait;           /* held until its dependencies are met */
	bool dep_tracked;        /* in the server's index (not once never to be met) */
	bool dep_due;            /* to be decided at the next recheck ... */
	struct job *dnext;       /* ... in the server's list of those */
	struct job *dprev;
	struct dep_edge *dep_edges;  /* its after* items, indexed by the jobs they name */
	unsigned n_dep_edges;
	/* Start estimates (scheduler/estimate.c, docs/ESTIMATES.md), wall
	 * seconds, 0: none. est_start and est_vnode are the last replay's
	 * (PBS exec_vnode form, "(n1:ncpus=2)+(n2:ncpus=2)"; NULL: none);
	 * est_first is the first the job got (kept in the store), est_seen
	 * the replay that last estimated it. */
	int64_t est_start;
	char *est_vnode;
	int64_t est_first;
	uint64_t est_seen;
	struct job *next;        /* scheduler's list, submit order */
	struct job *prev;
	struct pool_user *user;  /* the pool's index of its (queue, user) */
	struct job *wnext;       /* while queued: that user's waiting jobs, by id */
	struct job *wprev;
};

void job_free(struct job *j);
/* Sets j's licenses from their canonical text ("matlab:2,comsol:1";
 * NULL or "": none). 0, -EINVAL (not such a text) or -ENOMEM. */
int job_licenses_set(struct job *j, const char *text);
/* Sets j's node resources from their canonical text (lib/noderes.h;
 * NULL or "": none). 0, -EINVAL or -ENOMEM. */
int job_noderes_set(struct job *j, const char *text);
/* The primary's entry, or NULL when j holds no allocation. */
static inline struct alloc_entry *job_primary(const struct job *j)
{
	return j->n_alloc ? &j->alloc[0] : NULL;
}
/* The primary's node name, or NULL. */
static inline const char *job_node(const struct job *j)
{
	return j->n_alloc ? j->alloc[0].node : NULL;
}
/* j's entry on the node named name, or NULL. */
struct alloc_entry *job_entry(const struct job *j, const char *name);
/* What j holds (CPUs: all of each node's for sbatch --exclusive). */
uint64_t job_cpus_held(const struct job *j);
/* The most j needs on one node: CPUs, GPUs, memory (bytes; 0: none
 * counted). A pack job needs all its chunks on one. */
unsigned job_widest_cpus(const struct job *j);
unsigned job_widest_gpus(const struct job *j);
uint64_t job_widest_mem(const struct job *j);
/* Sets j's allocation to n empty entries (names NULL); 0 or -ENOMEM.
 * job_alloc_free forgets it (the pool unlinks entries first). */
int job_alloc_init(struct job *j, unsigned n);
void job_alloc_free(struct job *j);
/* A set of a node's GPUs (bit i: index i) as a list, "0,2,5" ("" for
 * none), and back; -EINVAL for text that is not such a list. */
#define JOB_GPUS_TEXT_MAX 200
void job_gpus_format(uint64_t gpus, char *buf, size_t len);
int job_gpus_parse(const char *s, uint64_t *ret);

/* Sets j's chunks from a submit's "chunks" JSON array; -EINVAL with err
 * for a malformed one. NULL or empty: none. */
int job_chunks_from_json(struct job *j, const void *json_chunks, char *err, size_t errlen);
/* Chunks as JSON (the store's text and job objects). */
void *job_chunks_to_json(const struct job *j);

/* The stamps of docs/DESIGN-FACTS.md's accounting table, in the order they happen. */
enum job_stamp {
	STAMP_SUBMIT,
	STAMP_DISPATCH,
	STAMP_LAUNCH,
	STAMP_WRAP,
	STAMP_FENCED,
	STAMP_EXEC,
	STAMP_EXIT,
	STAMP_RELEASED,
	STAMP_DONE,
	STAMP_MAX,
};

extern const char *const job_stamp_names[STAMP_MAX];

/* What a node reports when a job ends (gded's result file, relayed). */
struct job_result {
	enum job_state state;    /* decided from the report */
	int exit_status;         /* -1: none */
	int exit_signal;         /* 0: none */
	char reason[256];
	int64_t cpu_ns;
	int64_t mem_peak;
	bool oom;
	int64_t times[STAMP_MAX];  /* 0: not taken */
	int64_t mono[STAMP_MAX];   /* gded's CLOCK_MONOTONIC stamps, wrap..released */
};

/* Decides the final state and fills ret from a result object of
 * docs/PROTOCOL.md. A malformed report still yields a result (failed, with
 * the reason), never an error, so a job cannot be stuck by a bad report. */
void job_result_from_json(const void *json_result, struct job_result *ret);

#endif
