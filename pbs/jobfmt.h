/* SPDX-License-Identifier: MIT */
/* qstat's views of the server's job, queue and node objects (docs/PROTOCOL.md). */
#ifndef QPOOL_JOBFMT_H
#define QPOOL_JOBFMT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* The job table, one row per job of the array jobs: Job id, Name (cut to
 * JOBFMT_NAME_WIDTH characters, the last one '*' when cut), User, State,
 * Queue, NCPUS, Node, Elapsed (HH:MM:SS from exec, or launch or dispatch,
 * to now_ns for running jobs and to the exit for finished ones; "-" when
 * not started). Prints nothing for an empty array. 0 or -ENOMEM. */
#define JOBFMT_NAME_WIDTH 16
int jobfmt_jobs_table(FILE *f, const json_t *jobs, int64_t now_ns);

/* One job in full, PBS style: "Job Id: 12" then "    key = value" lines
 * (Job_Name, Job_Owner, job_state, queue, ncpus, mem, walltime, exec_host,
 * exec_cpus, exit_status, exit_signal, reason, Output_Path, Error_Path,
 * Join_Path, workdir, cpu_time, mem_peak, then submit_time ... done_time
 * for each stamp present), omitting members that are null or absent.
 * Stamps are local time "YYYY-MM-DD HH:MM:SS.mmm". Control characters in
 * strings are written as C escapes so each key stays on one line. */
void jobfmt_job_full(FILE *f, const json_t *job);

/* The queue table: Queue, Enabled, Started, Default, Priority, Queued,
 * Held, Running, Limits (e.g. "ncpus=8 mem<=150G walltime<=24:00:00
 * reserve=realtime", "-" for none). 0 or -ENOMEM. */
int jobfmt_queues_table(FILE *f, const json_t *queues);

/* The node table: Node (first column, never cut), State, NCPUS, Free,
 * CPUs, Cgroup, RT, Jobs; when some node says its memory, Mem (free/
 * offered, "-" for a node that does not) after Free; when some node has
 * GPUs, GPUs (free/total, "-" for a node without) after that. 0 or
 * -ENOMEM. */
int jobfmt_nodes_table(FILE *f, const json_t *nodes);

/* A queue's IQS dispatch order (the reply of the order op): a heading with
 * the queue's state and limits, then Place, Job id, User, Round (the job's
 * place among its user's waiting jobs, "-" when held), User last served
 * (the rotation stamp, "#N" or "never"), Reason. 0 or -ENOMEM. */
int jobfmt_order_table(FILE *f, const json_t *reply);

/* The job's run time in seconds so far (running) or in total (finished),
 * from exec (or launch, or dispatch); -1 when it never started. */
int64_t jobfmt_elapsed(const json_t *job, int64_t now_ns);

/* Writes ns since the epoch as local "YYYY-MM-DD HH:MM:SS.mmm". */
void jobfmt_time(char *buf, size_t len, int64_t ns);

/* Writes s with control characters and backslashes as C escapes. */
void jobfmt_escaped_put(FILE *f, const char *s);

#endif
