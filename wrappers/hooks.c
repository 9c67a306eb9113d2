/* SPDX-License-Identifier: MIT */
/* The node's prolog and epilog (qpool-hooks(5)), run by gded on each node
 * of a job: gded is the job's parent from its fence to its end, so the
 * prolog runs between the fence and the job's first instruction and the
 * epilog after its last process, with nothing else of qpool waiting on
 * them (qnoded's loop never blocks on a hook), and their time falls in
 * the job's own startup and teardown stamps. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gded-internal.h"
#include "hook.h"
#include "log.h"

#define HOOK_TIMEOUT_DEFAULT 60   /* seconds, as qpool.conf's default */

/* The document on the hook's standard input. */
static char *hook_input(const struct gded_job *job, const char *event)
{
	json_t *doc = json_pack("{s:i, s:s, s:{s:I, s:s, s:s, s:I, s:I, s:s, s:I, s:I, s:I, s:s?, s:b},"
				" s:{s:s}}",
				"version", HOOK_CONTRACT, "event", event,
				"job", "id", (json_int_t)job->jobid, "name", job->name ? job->name : "",
				"user", job->user, "uid", (json_int_t)job->uid, "gid", (json_int_t)job->gid,
				"queue", job->queue ? job->queue : "", "ncpus", (json_int_t)job->ncpus,
				"mem", (json_int_t)job->mem, "walltime", (json_int_t)job->walltime,
				"cpus", job->cpus, "sister", gded_job_sister(job),
				"node", "name", job->node ? job->node : "");
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;

	json_decref(doc);
	return text;
}

int gded_hook_run(const struct gded_job *job, const char *event, char *why, size_t len)
{
	bool pro = strcmp(event, "prolog") == 0;
	const char *path = pro ? job->prolog : job->epilog;
	uint64_t t = pro ? job->prolog_timeout : job->epilog_timeout;
	char id[32], uid[32], jobid[48], hookname[32], line[256], desc[320];
	char *env[8], *argv[2] = { (char *)path, NULL }, *input;
	struct hook h;
	int r;

	if (!path || !path[0])
		return 0;
	/* What Slurm's and PBS's hooks find in their environment, so a
	 * site's script written for either runs as it is. */
	snprintf(id, sizeof(id), "SLURM_JOB_ID=%" PRIu64, job->jobid);
	snprintf(uid, sizeof(uid), "SLURM_JOB_UID=%u", (unsigned)job->uid);
	snprintf(jobid, sizeof(jobid), "PBS_JOBID=%" PRIu64, job->jobid);
	snprintf(hookname, sizeof(hookname), "QPOOL_HOOK=%s", event);
	env[0] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	env[1] = hookname;
	env[2] = id;
	env[3] = uid;
	env[4] = jobid;
	env[5] = NULL;
	input = hook_input(job, event);
	if (!input) {
		snprintf(why, len, "%s: out of memory", event);
		return -1;
	}
	r = hook_run(&h, path, argv, env, input, strlen(input), 0,
		     (int)((t ? t : HOOK_TIMEOUT_DEFAULT) * 1000));
	free(input);
	/* Its stderr goes to the log with the job's id, a line each. */
	for (char *s = h.errbuf, *nl; r == 0 && *s; s = nl ? nl + 1 : s + strlen(s)) {
		nl = strchr(s, '\n');
		if (nl)
			*nl = '\0';
		if (*s)
			log_info("job %" PRIu64 ": %s: %s", job->jobid, event, s);
		if (!nl)
			break;
	}
	hook_describe(&h, desc, sizeof(desc));
	log_info("job %" PRIu64 ": %s %s: %s in %" PRId64 " ms", job->jobid, event, path, desc,
		 hook_elapsed_ms(&h));
	if (h.outcome == HOOK_OK) {
		hook_release(&h);
		return 0;
	}
	hook_err_line(&h, line, sizeof(line));
	if (h.outcome == HOOK_FAILED && line[0])
		snprintf(why, len, "%s failed on %s: %s", event, job->node ? job->node : "?", line);
	else
		snprintf(why, len, "%s failed on %s: %s", event, job->node ? job->node : "?", desc);
	hook_release(&h);
	return -1;
}
