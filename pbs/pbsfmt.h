/* SPDX-License-Identifier: MIT */
/* PBS Pro's views of qpool's jobs, queues and server, as tools parse them. */
#ifndef QPOOL_PBSFMT_H
#define QPOOL_PBSFMT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The version reported as pbs_version: the PBS Pro release whose output
 * these layouts follow (tools compare it), not qpool's own. */
#define PBSFMT_PBS_VERSION "19.1.3"

/* PBS's one-letter state of a qpool state word: queued Q, held H,
 * running R, exiting E, waiting W, finished ones (completed failed
 * cancelled timeout oom) F; '?' for anything else. */
char pbsfmt_state_letter(const char *state);

/* A job object's letter: pbsfmt_state_letter of its state, and W for a
 * queued job whose qsub -a time (attrs.Execution_Time, epoch seconds)
 * is after now_ns. */
char pbsfmt_job_state(const json_t *job, int64_t now_ns);

/* The job's PBS attributes as a JSON object in PBS order: Job_Name,
 * Job_Owner, resources_used (object), job_state, queue, server, ctime,
 * Error_Path, exec_host, Join_Path, mtime, Output_Path, qtime,
 * Rerunable, Resource_List (object), stime, obittime, jobdir,
 * Exit_status, comment, Variable_List (object), what qsub recorded under
 * PBS names (the job's "attrs", over the derived ones),
 * then qpool's own: qpool_state, exec_cpus, exit_signal, reason,
 * workdir, cpu_time, mem_peak and <stamp>_time for each stamp present.
 * Times are ctime(3) local time, as PBS prints them; sizes "<n>kb";
 * durations HH:MM:SS; a running job's resources_used.walltime runs to
 * now_ns. NULL when out of memory. */
json_t *pbsfmt_job_attrs(const json_t *job, const char *server, int64_t now_ns);

/* "    key = value" lines of an attribute object: objects flattened to
 * "Resource_List.ncpus" (Variable_List as one "K=V,K=V" line), booleans
 * True/False, control characters escaped. */
void pbsfmt_attrs_put(FILE *f, const json_t *attrs);

/* "Job Id: 12.server" and "    key = value" lines of pbsfmt_job_attrs,
 * objects flattened to "Resource_List.ncpus" (Variable_List as one
 * "K=V,K=V" line), control characters escaped. */
void pbsfmt_job_full(FILE *f, const json_t *job, const char *server, int64_t now_ns);

/* qstat -F json: {"timestamp", "pbs_version", "pbs_server", "Jobs":
 * {"12.server": attrs}}. NULL when out of memory. */
json_t *pbsfmt_jobs_json(const json_t *jobs, const char *server, int64_t now_ns);

/* Layout options of the job tables. */
struct pbsfmt_opts {
	bool wide;        /* -w: nothing cut */
	bool nodes;       /* -n: exec host under (or after, with one_line) each job */
	bool comments;    /* -s: the job's comment (qpool's reason) likewise */
	bool one_line;    /* -1 */
	bool estimates;   /* -T: the alternative table's last column is the
			   * estimated start (PBS's "Est Start"), not the elapsed time */
};

/* PBS's Est Start Time of qstat -T for t (wall s): "14:05" today, "Wed 15"
 * within a week, "Dec" within the year, "2027" after; "--" for none. */
void pbsfmt_est_start(char *buf, size_t len, long long t, int64_t now_ns);

/* PBS's default table: "Job id  Name  User  Time Use S Queue" with its
 * dashes, ids "12.server". Prints nothing for no jobs. */
void pbsfmt_jobs_classic(FILE *f, const json_t *jobs, const char *server,
			 const struct pbsfmt_opts *o);

/* qstat -a: the server line, then Job ID, Username, Queue, Jobname,
 * SessID, NDS, TSK, Req'd Memory, Req'd Time, S, Elap Time (HH:MM).
 * Prints nothing for no jobs. */
void pbsfmt_jobs_alt(FILE *f, const json_t *jobs, const char *server, int64_t now_ns,
		     const struct pbsfmt_opts *o);

/* A queue object's PBS attributes, in order: queue_type, Priority,
 * total_jobs, state_count, resources_max.* and resources_default.*
 * (ncpus, mem, walltime, those set), max_running, enabled, started
 * (booleans), then qpool_reserve and comment (why disabled or stopped).
 * NULL when out of memory. */
json_t *pbsfmt_queue_attrs(const json_t *queue);

/* qstat -Qf: "Queue: NAME" and "    key = value" lines of its attributes. */
void pbsfmt_queue_full(FILE *f, const json_t *queue);

/* qstat -B: one row of the server's job counts from the queue objects;
 * full: "Server: NAME" with server_state, total_jobs, state_count. */
void pbsfmt_server(FILE *f, const json_t *queues, const char *server, bool full);
/* qstat -Bf: the pool's licenses as resources_available.NAME (the total)
 * and resources_assigned.NAME (held by running jobs); nothing without -f. */
void pbsfmt_server_licenses(FILE *f, const json_t *licenses, bool full);
/* qstat -B's leadership lines from the reply's "ha" object (NULL: none):
 * full: "    server_role = ...", active_server, server_epoch,
 * standby_servers; else one "Active: ADDR (epoch N) ..." line. */
void pbsfmt_server_ha(FILE *f, const json_t *ha, bool full);

/* A job's id as PBS prints it: "12.server", an array "12[].server", a
 * subjob "12[7].server". Returns snprintf's count. */
int pbsfmt_job_id(const json_t *job, const char *server, char *buf, size_t len);

#endif
