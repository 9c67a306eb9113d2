/* SPDX-License-Identifier: MIT */
/* The scheduler's in-memory view of an unfinished job: what placement needs. */
#ifndef QPOOL_SCHED_JOB_H
#define QPOOL_SCHED_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
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
struct job_array;

struct job {
	int64_t id;
	char queue[QUEUE_NAME_MAX];
	uid_t uid;
	enum job_state state;
	uint32_t ncpus;
	uint64_t mem;
	uint64_t walltime;
	char *node;              /* while running/exiting */
	struct cpumask cpus;     /* CPUs allocated on node: its cpuset */
	struct cpumask claim;    /* what it took from the node (cpus + SMT siblings) */
	enum queue_reserve reserve;  /* how it holds them, from its queue at dispatch */
	char mems[64];           /* NUMA nodes of cpus (kernel list) */
	int64_t t_submit;
	int64_t t_dispatch;      /* while running/exiting: when this run was dispatched,
	                          * the run's token in job.launch and in the node's
	                          * reports (a stale copy's report carries an older one) */
	bool rerunnable;         /* requeue, not fail, when its node is lost */
	int priority;            /* qsub -p: order among its owner's waiting jobs */
	int64_t start_after;     /* qsub -a: wall seconds; 0: none */
	bool cpus_back;          /* its processes are gone: CPUs handed back before its result */
	bool rerun;              /* qrerun: requeue, not finish, when its result comes */
	/* Job arrays (scheduler/array.c, pool.c). An array is one job whose
	 * waiting subjobs are an index set; a subjob becomes a job of its own
	 * when it is dispatched or acted on alone. */
	char *array_spec;        /* an array: its canonical index set (-J/-t) */
	struct job_array *array; /* an array: its waiting subjobs and counts */
	int64_t array_id;        /* a subjob: its array's id; 0: not a subjob */
	int64_t array_index;     /* a subjob: its index; -1: not a subjob */
	struct job *parent;      /* a subjob: its array, while both are pooled */
	bool fresh;              /* a subjob the pass made: its row is not written yet */
	/* Dependencies (scheduler/depend.c). */
	char *depend;            /* -W depend, canonical; NULL: none */
	char *reason;            /* as loaded from the store (why it is held) */
	bool dep_wait;           /* held until its dependencies are met */
	struct job *dnext;       /* the server's jobs waiting on dependencies */
	struct job *dprev;
	struct job *next;        /* scheduler's list, submit order */
	struct job *prev;
	struct pool_user *user;  /* the pool's index of its (queue, user) */
	struct job *wnext;       /* while queued: that user's waiting jobs, by id */
	struct job *wprev;
	struct node *where;      /* the pool's node named node, while it has one */
	struct job *nnext;       /* that node's jobs */
	struct job *nprev;
};

void job_free(struct job *j);

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
