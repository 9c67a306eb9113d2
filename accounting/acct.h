/* SPDX-License-Identifier: MIT */
/* Accounting reports over job records: derived figures, summaries, overhead, utilization, SVG. */
#ifndef QPOOL_ACCT_H
#define QPOOL_ACCT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parse.h"

/* The stamps of docs/PROTOCOL.md, in the order they are taken. */
enum acct_stamp {
	ACCT_SUBMIT,
	ACCT_DISPATCH,
	ACCT_LAUNCH,
	ACCT_WRAP,
	ACCT_FENCED,
	ACCT_EXEC,
	ACCT_EXIT,
	ACCT_RELEASED,
	ACCT_DONE,
	ACCT_STAMP_MAX,
};

/* "submit" ... "done", or NULL out of range. */
const char *acct_stamp_name(enum acct_stamp s);

#define ACCT_NAME_MAX 64

/* One job record as the acct op returns it. A stamp of 0 is absent; ints
 * of -1 are absent (null on the wire). */
struct acct_job {
	int64_t jobid;
	char name[ACCT_NAME_MAX];
	char owner[ACCT_NAME_MAX];
	char queue[ACCT_NAME_MAX];
	char state[16];
	char node[ACCT_NAME_MAX];    /* "" when never dispatched */
	char cpus[256];              /* kernel list of the CPUs it held, "" when none */
	char account[ACCT_NAME_MAX]; /* qsub -A (attrs.Account_Name), "" when none */
	char project[ACCT_NAME_MAX]; /* qsub -P (attrs.project), "" when none */
	int64_t ncpus;
	int64_t ngpus;               /* GPUs in all; 0: none */
	int64_t mem;                 /* requested bytes, 0: no limit */
	int64_t mem_peak;            /* -1: unknown */
	const char *licenses;        /* attrs Resource_List.licenses ("matlab:2,comsol:1"),
	                              * held by the record's JSON; NULL: none */
	int64_t cpu_ns;              /* -1: unknown */
	int64_t exit_status;         /* -1: none */
	int64_t exit_signal;         /* -1: none */
	bool oom;
	bool realtime;               /* its queue has reserve = realtime */
	int64_t est_first;           /* start estimates (docs/ESTIMATES.md), wall s: the first */
	int64_t est_start;           /* and the one current when it started; 0: none */
	int64_t t[ACCT_STAMP_MAX];   /* wall ns since the epoch */
	int64_t mono[ACCT_STAMP_MAX];/* gded's CLOCK_MONOTONIC ns, wrap..released only */
};

/* Fills *ret from one job object of the acct (or stat) reply. Missing
 * members leave defaults; a non-object or a missing jobid is -EINVAL. */
int acct_job_from_json(const json_t *o, struct acct_job *ret);

/* True while the job may still hold CPUs (running or exiting). */
bool acct_job_active(const struct acct_job *j);

/* Per-job figures, ns; -1 when a stamp they need is missing or they would
 * be negative on the wall clock (a stepped clock).
 *   wait      = dispatch - submit                         (qpoold's clock)
 *   startup   = exec - dispatch                           (wall: two hosts' clocks)
 *   connect   = exit - exec       (gded's monotonic stamps when both present, else wall)
 *   teardown  = released - exit   (monotonic when both present, else wall)
 *   elapsed   = startup + connect + teardown: the job's hold on its CPUs
 *               from dispatch to release, each part on its best clock
 *   overhead  = elapsed - connect = startup + teardown
 *   report    = done - released: gded's result reaching qpoold's store
 *   cpu_delivered = cpu_ns / (connect * ncpus), or < 0 when unknown. */
struct acct_derived {
	int64_t wait;
	int64_t startup;
	int64_t connect;
	int64_t teardown;
	int64_t elapsed;
	int64_t overhead;
	int64_t report;
	double cpu_delivered;
};

void acct_job_derive(const struct acct_job *j, struct acct_derived *ret);

/* The derived figures as a JSON object (seconds as reals, null when
 * unknown; cpu_delivered as a fraction). NULL when out of memory. */
json_t *acct_derived_json(const struct acct_derived *d);

/* Marks the jobs whose queue is realtime, from the `queues` reply's
 * array (members name and reserve). */
void acct_jobs_mark_realtime(struct acct_job *jobs, size_t n, const json_t *queues);

/* A node of the pool: name and the CPUs it has. */
struct acct_node {
	char name[ACCT_NAME_MAX];
	int64_t ncpus;
	int64_t ngpus;               /* its GPUs; 0: none or unknown */
	struct cpumask cpus;         /* may be empty when only ncpus is known */
};

/* One node's GPUs that one job held, from its record's `alloc`. */
struct acct_gpu_hold {
	size_t job;                  /* index of the job in the caller's array */
	char node[ACCT_NAME_MAX];
	uint64_t gpus;               /* bit i: the node's GPU i (a node has at most 64) */
};

/* Appends to *holds (*n entries, malloc'ed, grown here) one entry per
 * node of record o's `alloc` that lists `gpus`, each with job as its
 * index; nothing for a record without GPUs. 0 or -ENOMEM. */
int acct_gpu_holds_add(const json_t *o, size_t job, struct acct_gpu_hold **holds, size_t *n);

/* Nodes from the acct reply's `nodes` (name, ncpus) and, when given, the
 * `nodes` op's array (name, cpus list); a node some job ran on that
 * neither lists is added with the CPUs its jobs used. *ret_nodes is
 * malloc'ed. 0 or -ENOMEM. */
int acct_nodes_build(const json_t *acct_nodes, const json_t *node_list, const struct acct_job *jobs,
		     size_t n_jobs, struct acct_node **ret_nodes, size_t *ret_n);

/* Time arguments: "YYYY-MM-DD", "YYYY-MM-DD HH:MM", "YYYY-MM-DD HH:MM:SS"
 * (local time; also with 'T' between date and time), relative "-90s",
 * "-30m", "-1h", "-2d", "-1w" (before now_ns), "now", or epoch seconds
 * "1700000000" (optionally with a fraction). Returns 0 and wall ns, or
 * -EINVAL. */
int acct_time_parse(const char *s, int64_t now_ns, int64_t *ret_ns);

/* Linear-interpolation quantile (q in [0,1]) of v[0..n-1], which it
 * sorts in place; the median is q = 0.5, p95 is q = 0.95 (the same rule
 * as numpy's default). -1 for n = 0. */
int64_t acct_quantile(int64_t *v, size_t n, double q);

/* ---- reports ----
 * A report is a titled table of typed cells, printed as an aligned text
 * table, CSV (RFC 4180), or JSON ({"report": title, meta..., "rows":
 * [{column: value}]}), so every report has the same three forms. */

enum acct_cell_kind {
	ACCT_CELL_TEXT,
	ACCT_CELL_INT,
	ACCT_CELL_SECONDS,   /* ns value; shown and written as seconds */
	ACCT_CELL_MS,        /* ns value; shown and written as milliseconds */
	ACCT_CELL_REAL,      /* plain number (core-hours, core-seconds) */
	ACCT_CELL_PERCENT,   /* 0..100 */
	ACCT_CELL_BYTES,     /* table shows 1.5G; CSV and JSON bytes */
	ACCT_CELL_TIME,      /* wall ns; table and CSV local time, JSON ns */
};

struct acct_column {
	const char *key;     /* CSV header and JSON member, e.g. "startup_p95_ms" */
	const char *title;   /* text table header, e.g. "Start p95 ms" */
	enum acct_cell_kind kind;
};

struct acct_report;

/* columns must outlive the report. NULL when out of memory. */
struct acct_report *acct_report_create(const char *title, const struct acct_column *columns,
				       size_t ncols);
void acct_report_destroy(struct acct_report *r);

/* Appends one cell to the current row, in column order; a row is
 * complete after ncols cells. _null is an unknown value ("-", empty CSV
 * field, JSON null). 0 or -ENOMEM. */
int acct_report_text(struct acct_report *r, const char *s);
int acct_report_int(struct acct_report *r, int64_t v);
int acct_report_real(struct acct_report *r, double v);
int acct_report_null(struct acct_report *r);

/* A line printed above the text table (not in CSV; JSON has meta). */
int acct_report_caption(struct acct_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Adds a member to the JSON form's top level (reference stolen). */
int acct_report_meta(struct acct_report *r, const char *key, json_t *value);

size_t acct_report_rows(const struct acct_report *r);

enum acct_format {
	ACCT_FORMAT_TEXT,
	ACCT_FORMAT_CSV,
	ACCT_FORMAT_JSON,
};

/* Writes the report; 0, -ENOMEM, or -EIO when f reports an error. */
int acct_report_print(const struct acct_report *r, enum acct_format fmt, FILE *f);

/* Appends s to f as one CSV field: quoted ("" doubled) when it holds a
 * comma, quote, CR or LF, or starts or ends with a blank. */
void acct_csv_field(FILE *f, const char *s);

/* One job in full: every stamp (wall and monotonic), every derived
 * figure, usage and outcome, as rows of field, value, unit. */
int acct_report_job(const struct acct_job *j, struct acct_report **ret);
/* Appends, for a job across nodes (record's alloc), each node's startup
 * (dispatch to its fence), teardown (exit to released), CPU time and peak
 * memory, the time to every node fenced and the slowest node. Nothing
 * for a one-node job. */
int acct_report_job_nodes(struct acct_report *r, const json_t *record);
/* A requeued job's earlier attempts (attrs.attempts, docs/PREEMPTION.md):
 * each one's node, stamps and why it ended, as rows "attemptN_..."; and
 * the time suspended (attrs.suspended_ns), in all. Nothing for a job run
 * once and never suspended. 0 or -ENOMEM. */
int acct_report_job_attempts(struct acct_report *r, const json_t *record);
/* Appends, for a job with GPUs (record's ngpus), its count, each node's
 * GPU indices ("n1:0,1 n2:0", from its alloc) and its GPU-hours (ngpus
 * times j's elapsed). Nothing for a job without GPUs. */
int acct_report_job_gpus(struct acct_report *r, const struct acct_job *j, const json_t *record);
/* Appends, for a job that held licenses (record's attrs
 * Resource_List.licenses), their text and each one's license-hours
 * ("matlab:0.5000,comsol:0.2500": count times j's elapsed). Nothing
 * for a job without. */
int acct_report_job_licenses(struct acct_report *r, const struct acct_job *j, const json_t *record);

enum acct_key {
	ACCT_BY_QUEUE,
	ACCT_BY_USER,
	ACCT_BY_NODE,
	ACCT_BY_DAY,         /* local calendar day the job ended (submitted, if not ended) */
	ACCT_BY_ACCOUNT,     /* qsub -A; "-" for jobs without one */
	ACCT_BY_PROJECT,     /* qsub -P; "-" for jobs without one */
};

/* "queue" "user" "node" "day" "account" "project" -> key; -EINVAL for anything else. */
int acct_key_parse(const char *s, enum acct_key *ret);

/* One row per group, sorted by key: jobs, core-hours held (elapsed x
 * ncpus), mean wait, mean/median/p95 startup and teardown overhead, mean
 * connect, CPU delivered (sum cpu / sum connect x ncpus), failures. */
int acct_report_summary(const struct acct_job *jobs, size_t n, enum acct_key key,
			struct acct_report **ret);

/* How good start estimates were (docs/ESTIMATES.md): one row per group
 * of the jobs that started with an estimate: how many, the median and
 * p90 of |start - estimate| in seconds (start: dispatch) for the first
 * estimate each got and for the one current at its start, and the share
 * that started no later than that one. */
int acct_report_estimates(const struct acct_job *jobs, size_t n, enum acct_key key,
			  struct acct_report **ret);
/* What the jobs held over the window [from, to) (wall ns), one row per
 * group and resource, sorted by group: `mem` (the memory each job asked
 * for or was given by default, the amount placement counted), `mem_peak`
 * (the peak it used, held as if all along: an upper bound of use) and
 * `license:NAME` for each license. A job holds from dispatch to release
 * (a running one to now_ns), clipped to the window. Columns: the key,
 * resource, unit (MB = 2^20 bytes, or license), jobs that held it, their
 * hours in the window, the amount times those hours (MB-hours,
 * license-hours) and the largest amount one job held. Jobs with neither
 * memory nor licenses give no row. -EINVAL when from >= to. */
int acct_report_held(const struct acct_job *jobs, size_t n, enum acct_key key, int64_t from,
		     int64_t to, int64_t now_ns, struct acct_report **ret);

/* The J90 paper's table: for each queue (or only queue when not NULL),
 * one row per finished job that ran (job, memory peak, connect, elapsed,
 * overhead, overhead as % of elapsed), then a row "mean" per queue. */
int acct_report_overhead(const struct acct_job *jobs, size_t n, const char *queue,
			 struct acct_report **ret);

/* ---- utilization ---- */

enum acct_use {
	ACCT_USE_EXECUTING,  /* exec -> exit x ncpus (minus reserved idle) */
	ACCT_USE_STARTING,   /* dispatch -> exec x ncpus */
	ACCT_USE_TEARDOWN,   /* exit -> released x ncpus */
	ACCT_USE_RESERVED,   /* realtime jobs: connect x ncpus - cpu time */
	ACCT_USE_IDLE,       /* the rest of the pool's core time */
	ACCT_USE_MAX,
};

const char *acct_use_name(enum acct_use u);

struct acct_util {
	int64_t from, to;            /* the window, wall ns */
	int64_t ncpus;               /* cores of the pool */
	double core_ns[ACCT_USE_MAX];
	double total_ns;             /* ncpus x (to - from), or the busy sum if larger */
	size_t jobs;                 /* jobs that overlap the window */
	int64_t ngpus;               /* GPUs of the pool */
	double gpu_ns;               /* GPU time held by jobs (dispatch to released) */
};

/* Splits the pool's core time over [from, to) by what it did. Every
 * interval is clipped to the window; a job still active counts up to
 * now_ns (from dispatch as executing, the only stamp qpoold has before
 * the end). Reserved idle of a realtime job is scaled by the share of its
 * connect time inside the window. -EINVAL when to <= from. */
int acct_utilization(const struct acct_job *jobs, size_t n_jobs, const struct acct_node *nodes,
		     size_t n_nodes, int64_t from, int64_t to, int64_t now_ns, struct acct_util *ret);

/* Share of the total in percent; the five sum to 100. */
double acct_util_percent(const struct acct_util *u, enum acct_use use);

/* Rows state, core-seconds, core-hours, percent, plus a total row. */
int acct_report_utilization(const struct acct_util *u, struct acct_report **ret);

/* ---- SVG timeline ----
 * One row per core (node:cpu, every CPU of every node, then any CPU a job
 * held that its node no longer lists), each coloured over [from, to) by
 * starting, executing, tearing down, or idle (the background), with job
 * ids on bars wide enough, a legend and a time axis. Each row is a
 * <g class="core" data-core="NODE:CPU">. Below the cores, one lane per
 * GPU of each node with ngpus (<g class="gpu" data-gpu="NODE:gpuI">),
 * where each job of holds (indices into jobs) is drawn the same way for
 * the GPUs it held there; a pool without GPUs gets no GPU lanes. 0,
 * -EINVAL (to <= from), -ENOMEM, -EIO. */
int acct_svg_write(FILE *f, const struct acct_job *jobs, size_t n_jobs, const struct acct_node *nodes,
		   size_t n_nodes, const struct acct_gpu_hold *holds, size_t n_holds, int64_t from, int64_t to,
		   int64_t now_ns);

/* Phase boundaries of a job as utilization and the timeline use them:
 * [start, exec) starting, [exec, exit) executing, [exit, end) tearing
 * down, all within [dispatch, end]. false when the job never held CPUs. */
struct acct_phases {
	int64_t start, exec, exit, end;
};
bool acct_job_phases(const struct acct_job *j, int64_t now_ns, struct acct_phases *ret);

#endif
