/* SPDX-License-Identifier: MIT */
/* Job state names. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <stdio.h>

#include "job.h"
#include "wire.h"

static const char *const state_names[JOB_STATE_MAX] = {
	[JOB_QUEUED] = "queued",
	[JOB_HELD] = "held",
	[JOB_RUNNING] = "running",
	[JOB_EXITING] = "exiting",
	[JOB_COMPLETED] = "completed",
	[JOB_FAILED] = "failed",
	[JOB_CANCELLED] = "cancelled",
	[JOB_TIMEOUT] = "timeout",
	[JOB_OOM] = "oom",
};

const char *job_state_name(enum job_state s)
{
	return (unsigned)s < JOB_STATE_MAX ? state_names[s] : "unknown";
}

int job_state_parse(const char *s, enum job_state *ret)
{
	for (int i = 0; i < JOB_STATE_MAX; i++)
		if (strcmp(s, state_names[i]) == 0) {
			*ret = (enum job_state)i;
			return 0;
		}
	return -EINVAL;
}

void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->node);
	free(j->array_spec);
	free(j->array);
	free(j->depend);
	free(j->reason);
	free(j);
}

const char *const job_stamp_names[STAMP_MAX] = {
	"submit", "dispatch", "launch", "wrap", "fenced", "exec", "exit", "released", "done",
};

void job_result_from_json(const void *json_result, struct job_result *ret)
{
	const json_t *r = json_result;
	const json_t *times = json_object_get(r, "times");
	const char *status = wire_str(r, "status");
	const char *reason = wire_str(r, "reason");

	memset(ret, 0, sizeof(*ret));
	ret->exit_status = (int)wire_int(r, "exit_status", -1);
	ret->exit_signal = (int)wire_int(r, "exit_signal", 0);
	ret->cpu_ns = wire_int(r, "cpu_ns", 0);
	ret->mem_peak = wire_int(r, "mem_peak", 0);
	ret->oom = wire_bool(r, "oom", 0);
	if (reason)
		snprintf(ret->reason, sizeof(ret->reason), "%s", reason);
	for (int i = STAMP_LAUNCH; i <= STAMP_RELEASED; i++)
		ret->times[i] = wire_int(times, job_stamp_names[i], 0);
	for (int i = STAMP_WRAP; i <= STAMP_RELEASED; i++)
		ret->mono[i] = wire_int(json_object_get(r, "mono"), job_stamp_names[i], 0);

	if (!status) {
		ret->state = JOB_FAILED;
		if (!reason)
			snprintf(ret->reason, sizeof(ret->reason), "malformed report from the node");
	} else if (wire_bool(r, "cancelled", 0)) {
		ret->state = JOB_CANCELLED;
	} else if (wire_bool(r, "timeout", 0)) {
		ret->state = JOB_TIMEOUT;
	} else if (ret->oom) {
		/* The memory controller counted an OOM kill in the job's group. */
		ret->state = JOB_OOM;
		if (!reason)
			snprintf(ret->reason, sizeof(ret->reason), "killed: out of memory");
	} else if (strcmp(status, "exited") == 0 && ret->exit_status == 0) {
		ret->state = JOB_COMPLETED;
	} else {
		ret->state = JOB_FAILED;
	}
	if (status && strcmp(status, "signaled") == 0)
		ret->exit_status = -1;
}
