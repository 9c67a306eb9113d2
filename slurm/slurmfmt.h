/* SPDX-License-Identifier: MIT */
/* Slurm's views of qpool's jobs: state names, reasons, times, job ids and
 * the fields of squeue -o/-O and sacct --format, in one place. */
#ifndef QPOOL_SLURMFMT_H
#define QPOOL_SLURMFMT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Slurm's state name of a job object: queued and held PENDING, running
 * RUNNING, exiting COMPLETING, completed COMPLETED, failed FAILED,
 * cancelled CANCELLED, timeout TIMEOUT, oom (or failed "killed: out of
 * memory") OUT_OF_MEMORY; NODE_FAIL for a job whose node was lost. */
const char *slurmfmt_state(const json_t *job);

/* Slurm's short code of a state name (PD R CG CD F CA TO OOM NF), or
 * NULL for a name that is not one. */
const char *slurmfmt_state_code(const char *state);

/* A state as squeue -t and sacct -s take it: a long name or a short
 * code, any case. Returns the long name, or NULL when s is not one. */
const char *slurmfmt_state_parse(const char *s);

/* sacct's State: the state name, with "CANCELLED by UID" for a job
 * cancelled by a user (scancel, qdel, qdel -W force; the job's uid when
 * its owner did it, 0 for root, else the name qpool recorded); a step
 * row ("step" set) plain CANCELLED, as Slurm's batch step. */
void slurmfmt_acct_state(const json_t *job, char *buf, size_t len);

/* Why a pending job waits, in Slurm's reason words: JobHeldUser,
 * Dependency, DependencyNeverSatisfied, BeginTime (qsub -a / sbatch
 * --begin in the future), PartitionInactive (queue stopped),
 * ReqNodeNotAvail (nodes down), Resources (waits for CPUs), Priority
 * (others first); why an ended job ended as Slurm says it: FAILED
 * NonZeroExitCode, TIMEOUT TimeLimit, OUT_OF_MEMORY OutOfMemory,
 * NODE_FAIL NodeDown; "None" for any other job. */
const char *slurmfmt_reason(const json_t *job, int64_t now_ns);

/* A duration as squeue and sinfo print it: "M:SS", "H:MM:SS",
 * "D-HH:MM:SS"; "INVALID" for a negative one. */
void slurmfmt_duration(char *buf, size_t len, int64_t secs);

/* A duration as sacct prints it: "HH:MM:SS" or "D-HH:MM:SS". */
void slurmfmt_elapsed(char *buf, size_t len, int64_t secs);

/* A size in bytes as Slurm prints memory: "2G", "512M", "10240K". */
void slurmfmt_size(char *buf, size_t len, long long bytes);

/* A wall stamp (ns) as Slurm prints it, local "YYYY-MM-DDTHH:MM:SS";
 * none (0 or less) as none_text ("N/A" in squeue, "Unknown" in sacct). */
void slurmfmt_stamp(char *buf, size_t len, int64_t ns, const char *none_text);

/* The job's id as Slurm prints it: "12", or "ARRAY_INDEX" ("12_3") for
 * a subjob, "12_[1-9]" for an array row. */
void slurmfmt_job_id(const json_t *job, char *buf, size_t len);

/* The job's nodes in Slurm's compressed form ("n[1-3]"), "" when it has
 * none; the count goes to *ret_count when not NULL. */
void slurmfmt_job_nodes(const json_t *job, char *buf, size_t len, int *ret_count);
/* The CPUs a job holds on its nodes when it has them (sbatch --exclusive
 * gets all of each node's), else the CPUs it asked for. */
long long slurmfmt_job_cpus(const json_t *job);

/* Seconds the job ran: from exec (or launch, dispatch) to now_ns while
 * it runs, to its exit once ended; 0 when it never started. */
int64_t slurmfmt_job_ran_secs(const json_t *job, int64_t now_ns);

/* When it started (exec, or launch, or dispatch; a pending job: its
 * start estimate, estimated_start) and ended (exit, or released, or
 * done; 0 while pending or running), wall ns; 0: not yet (no estimate). */
int64_t slurmfmt_job_start_ns(const json_t *job);
int64_t slurmfmt_job_end_ns(const json_t *job);

/* The job's request as Slurm counts it (scontrol's NumNodes, NumTasks,
 * CPUs/Task, MinMemoryNode). Tasks and CPUs per task: what sbatch
 * recorded of --ntasks and --cpus-per-task (attrs Slurm_ntasks,
 * Slurm_cpus_per_task), else the chunks' mpiprocs (qsub -l
 * select=N:ncpus=C:mpiprocs=P: N*P tasks of C/P CPUs), else one task of
 * all the job's CPUs. Nodes: those it runs on, else those it asked for.
 * Memory per node: a chunk's mem, else the job's (0: none asked). */
struct slurmfmt_tasks {
	long long nodes;
	long long tasks;
	long long cpus_per_task;
	long long mem_per_node;
};
void slurmfmt_job_tasks(const json_t *job, struct slurmfmt_tasks *ret);

/* How often the job was requeued (attrs.run_count): scontrol's Restarts. */
long long slurmfmt_job_restarts(const json_t *job);

/* scontrol's Dependency: what the job waits for with Slurm's suffix,
 * "afterok:12(unfulfilled)", "(failed)" once it can never be met;
 * sbatch's own words when it recorded them (--dependency=singleton:
 * "singleton(unfulfilled)"); "(null)" when the job waits for nothing. */
void slurmfmt_dependency(const json_t *job, int64_t now_ns, char *buf, size_t len);

/* Where the job's standard output (err false) or error (err true) went:
 * the path asked for, or, when its node could not write there (a missing
 * directory: qpool keeps it in the owner's HOME, as PBS's undelivered
 * output, and the job's reason says so), the file that holds it. A
 * joined job's errors go to its output. Returns true when the output
 * was kept elsewhere; buf "" when the job has no such path. */
bool slurmfmt_job_output(const json_t *job, bool err, char *buf, size_t len);

/* Which command's conventions a field follows. */
enum slurmfmt_view { SLURMFMT_SQUEUE, SLURMFMT_SACCT };

struct slurmfmt_field;

/* A field by squeue -o letter ('i', 'j', ...): NULL when unknown. */
const struct slurmfmt_field *slurmfmt_field_letter(char c);

/* A field by name as squeue -O or sacct --format name it (any case):
 * NULL when unknown. */
const struct slurmfmt_field *slurmfmt_field_name(const char *name, enum slurmfmt_view view);

/* The column's heading in that view ("JOBID", "JobID"). */
const char *slurmfmt_field_header(const struct slurmfmt_field *f, enum slurmfmt_view view);

/* sacct's default width of the column; right-justified unless left. */
int slurmfmt_field_width(const struct slurmfmt_field *f, bool *ret_left);

/* Writes the field's value for job. A job object with a "step" member
 * ("batch") is that step of the job: JobID "12.batch". */
void slurmfmt_field_value(const struct slurmfmt_field *f, enum slurmfmt_view view, const json_t *job,
			  int64_t now_ns, char *buf, size_t len);

/* Column spec of squeue -o (Slurm's "%.18i %.9P %j"): the items of a
 * format, literal text or a field with its width and justification. */
struct slurmfmt_item {
	const struct slurmfmt_field *field;  /* NULL: literal text */
	char text[64];                       /* the literal */
	int width;                           /* 0: as wide as the value */
	bool right;                          /* "%.N": right-justified */
};

/* Parses an squeue -o format into at most max items. Returns the count,
 * or -EINVAL with *ret_bad the unknown letter (0 when the format is too
 * long). */
int slurmfmt_format_parse(const char *fmt, struct slurmfmt_item *items, int max, char *ret_bad);

/* Writes one cell padded or cut to width, as squeue does. */
void slurmfmt_cell(char *buf, size_t len, const char *value, int width, bool right);

#endif
