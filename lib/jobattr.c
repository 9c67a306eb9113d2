/* SPDX-License-Identifier: MIT */
/* The names a job's recorded PBS attributes may have (qsub -W NAME=VALUE). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "jobattr.h"

/* What qstat -f prints from qpool's own fields (pbsfmt.c, jobfmt.c), and
 * PBS Pro's read-only job attributes (PBS Professional Reference Guide,
 * "Job Attributes": the ones marked read-only, or set by the server). A
 * recorded value under one of these names would print over, or beside,
 * the true one. */
static const char *const reserved[] = {
	/* PBS, derived or read-only */
	"accounting_id", "accrue_type", "alt_id", "argument_list", "array", "array_id",
	"array_index", "array_indices_remaining", "array_indices_submitted", "array_state_count",
	"comment", "ctime", "depend", "egroup", "eligible_time", "Error_Path", "estimated",
	"etime", "euser", "executable", "exec_host", "exec_host2", "exec_vnode", "Exit_status",
	"forward_x11_cookie", "forward_x11_port", "hashname", "history_timestamp", "Hold_Types",
	"Job_Name", "Job_Owner", "job_state", "jobdir", "mtime", "obittime", "Output_Path",
	"pset", "qtime", "queue", "queue_rank", "queue_type", "Rerunable", "Resource_List",
	"resources_released",
	"resources_used", "run_count", "run_version", "schedselect", "sched_hint", "server",
	"session_id", "Stageout_status", "stime", "Submit_arguments", "Submit_Host", "substate",
	"topjob", "Variable_List",
	/* qpool's own lines in qstat -f */
	"cpu_time", "exec_cpus", "exit_signal", "exit_status", "mem", "mem_peak", "ncpus",
	"qpool_state", "reason", "walltime", "workdir", "submit_time", "dispatch_time",
	"launch_time", "wrap_time", "fenced_time", "exec_time", "exit_time", "released_time",
	"done_time",
};

/* The first 40 bytes of name for a one-line message: anything outside
 * printable ASCII as '?'. */
static void printable(const char *name, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < 40 && i + 1 < len && name[i]; i++)
		buf[i] = name[i] >= ' ' && name[i] <= '~' ? name[i] : '?';
	buf[i] = '\0';
}

int jobattr_name_check(const char *name, struct error *err)
{
	size_t len = strlen(name), head = strcspn(name, ".");
	char shown[48];

	printable(name, shown, sizeof(shown));
	if (len == 0 || len > JOBATTR_NAME_MAX)
		return error_set(err, -EINVAL, "attribute name '%s%s': 1-%d bytes", shown, len > 40 ? "..." : "",
				 JOBATTR_NAME_MAX);
	if (!((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z')) ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.") != len ||
	    name[len - 1] == '.' || strstr(name, ".."))
		return error_set(err, -EINVAL, "attribute name '%s': not a name (a letter, then letters, "
				 "digits, '_' and '.')", shown);
	if (head < len && head == strlen("Resource_List") && strncasecmp(name, "Resource_List", head) == 0)
		return 0;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strlen(reserved[i]) == head && strncasecmp(name, reserved[i], head) == 0)
			return error_set(err, -EINVAL, "attribute %s is qpool's own (qpool or a qsub option "
					 "sets it)", name);
	return 0;
}

bool jobattr_mpiprocs(const char *value, uint64_t *ret)
{
	uint64_t n = 0;

	if (!value || !*value || strspn(value, "0123456789") != strlen(value) || strlen(value) > 8)
		return false;
	for (const char *p = value; *p; p++)
		n = n * 10 + (uint64_t)(*p - '0');
	if (n == 0 || n > JOBATTR_SLOTS_MAX)
		return false;
	*ret = n;
	return true;
}

const char *const jobattr_shape[JOBATTR_SHAPE_N] = {
	"Resource_List.select", "Resource_List.nodes", "Resource_List.nodect",
	"Resource_List.mpiprocs", "Resource_List.ompthreads",
};

bool jobattr_is_shape(const char *name)
{
	for (size_t i = 0; i < JOBATTR_SHAPE_N; i++)
		if (!strcmp(name, jobattr_shape[i]))
			return true;
	return false;
}
