/* SPDX-License-Identifier: MIT */
/* The field table shared by slurm/slurmfmt-fields.c (the fields qpool had
 * first) and slurm/slurmfmt-extra.c (the rest of what Slurm documents). */
#ifndef QPOOL_SLURMFMT_INTERNAL_H
#define QPOOL_SLURMFMT_INTERNAL_H

#include "slurmfmt.h"

enum field_id {
	F_JOBID, F_JOBID_RAW, F_ARRAY_JOB, F_ARRAY_TASK, F_NAME, F_USER, F_UID, F_STATE_CODE,
	F_STATE, F_TIME, F_ELAPSED_RAW, F_LIMIT, F_NODES, F_NODELIST, F_REASON, F_NODELIST_REASON,
	F_PARTITION, F_CPUS, F_SUBMIT, F_START, F_END, F_ACCOUNT, F_EXITCODE, F_MAXRSS,
	F_TOTALCPU, F_CPUTIME, F_WORKDIR, F_QOS, F_REQMEM, F_PRIORITY, F_STDOUT, F_STDERR, F_TIME_LEFT,
	F_NTASKS, F_AVERSS, F_AVECPU,
	/* slurm/slurmfmt-extra.c's */
	F_CONST, F_BATCHHOST, F_MINCPUS, F_GROUP, F_GID, F_DEPENDENCY, F_TRES_ALLOC, F_TRES_REQ,
	F_TRES_PER_NODE, F_NUMTASKS, F_RESTARTS, F_REQUEUE, F_PENDING_TIME, F_ELIGIBLE, F_OVERSUBSCRIBE,
	F_COMMAND, F_CLUSTER, F_SUBMIT_LINE, F_GPUS, F_PRIORITY_FLOAT, F_SCHEDNODES, F_RESERVATION,
};

struct slurmfmt_field {
	enum field_id id;
	char letter;              /* squeue -o; 0: none */
	const char *squeue_name;  /* squeue -O; NULL: none */
	const char *squeue_header;
	const char *sacct_name;   /* sacct --format; NULL: none */
	int sacct_width;
	bool left;
	const char *text;         /* F_CONST: the value Slurm prints when it has none */
	const char *sacct_text;   /* ... in sacct (NULL: "") */
};

/* slurm/slurmfmt-extra.c: the lookups of the documented fields beyond
 * slurmfmt-fields.c's table, and their values. */
const struct slurmfmt_field *slurmfmt_extra_letter(char c);
const struct slurmfmt_field *slurmfmt_extra_name(const char *name, enum slurmfmt_view view);
void slurmfmt_extra_value(const struct slurmfmt_field *f, enum slurmfmt_view view, const json_t *job,
			  int64_t now_ns, char *buf, size_t len);

#endif
