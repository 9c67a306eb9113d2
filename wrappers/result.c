/* SPDX-License-Identifier: MIT */
/* The result file (docs/PROTOCOL.md): JSON, written to <path>.tmp and renamed; qnoded syncs it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gded.h"

static const char *const stamp_names[GDED_STAMP_N] = {
	"wrap", "fenced", "exec", "exit", "released",
};

static const char *status_name(enum gded_status s)
{
	switch (s) {
	case GDED_STATUS_EXITED:
		return "exited";
	case GDED_STATUS_SIGNALED:
		return "signaled";
	case GDED_STATUS_FAILED:
		break;
	}
	return "failed";
}

/* A stamp not reached (e.g. exec of a job that failed to start) is left
 * out, as PROTOCOL.md allows. */
static json_t *stamps_json(const int64_t *v)
{
	json_t *o = json_object();

	for (int i = 0; o && i < GDED_STAMP_N; i++)
		if (v[i] > 0)
			json_object_set_new(o, stamp_names[i], json_integer(v[i]));
	return o;
}

json_t *gded_result_json(const struct gded_result *res)
{
	json_t *o;

	o = json_pack("{s:I, s:s, s:o, s:o, s:b, s:b, s:b, s:o, s:I, s:I, s:o, s:o}",
			 "jobid", (json_int_t)res->jobid,
			 "status", status_name(res->status),
			 "exit_status", res->status == GDED_STATUS_EXITED ?
				 json_integer(res->exit_status) : json_null(),
			 "exit_signal", res->status == GDED_STATUS_SIGNALED ?
				 json_integer(res->exit_signal) : json_null(),
			 "timeout", res->timeout,
			 "cancelled", res->cancelled,
			 "oom", res->oom,
			 "reason", res->reason[0] ? json_string(res->reason) : json_null(),
			 "cpu_ns", (json_int_t)res->cpu_ns,
			 "mem_peak", (json_int_t)res->mem_peak,
			 "times", stamps_json(res->wall),
			 "mono", stamps_json(res->mono));
	/* Which run this is: qnoded takes no other run's text for it (the
	 * file is not synced here, see gded_result_write). */
	if (o && res->launch > 0 &&
	    json_object_set_new(json_object_get(o, "times"), "launch", json_integer(res->launch)) < 0) {
		json_decref(o);
		o = NULL;
	}
	/* Only a job that was suspended says how long (docs/PREEMPTION.md). */
	if (o && res->suspended_ns &&
	    json_object_set_new(o, "suspended_ns", json_integer((json_int_t)res->suspended_ns)) < 0) {
		json_decref(o);
		o = NULL;
	}
	/* Only a sister's says so: a one-node job's result is as before. */
	if (o && res->sister && json_object_set_new(o, "sister", json_true()) < 0) {
		json_decref(o);
		o = NULL;
	}
	/* The node failed after the job: qpoold drains it, with why. */
	if (o && res->drain &&
	    (json_object_set_new(o, "drain", json_true()) < 0 ||
	     json_object_set_new(o, "drain_reason", json_string(res->drain_reason)) < 0)) {
		json_decref(o);
		o = NULL;
	}
	/* The node's fault: qpoold drains it and puts the job back. */
	if (o && res->node_fault &&
	    (json_object_set_new(o, "drain", json_true()) < 0 ||
	     json_object_set_new(o, "requeue", json_true()) < 0)) {
		json_decref(o);
		o = NULL;
	}
	/* Held and dropped before anything of it ran: back to the queue. */
	if (o && res->not_started && json_object_set_new(o, "requeue", json_true()) < 0) {
		json_decref(o);
		o = NULL;
	}
	/* Its prolog, counted by qpoold against [node] prolog_failures_max. */
	if (o && res->prolog_failed && json_object_set_new(o, "prolog_failed", json_true()) < 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

int gded_result_write(const char *path, const struct gded_result *res, struct error *err)
{
	char tmp[PATH_MAX], *text = NULL;
	json_t *o = NULL;
	size_t len, off = 0;
	int fd = -1, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return error_set(err, -ENAMETOOLONG, "%s: path too long", path);
	o = gded_result_json(res);
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (!text) {
		r = error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	len = strlen(text);
	/* qnoded may have readied tmp from a kept inode (noded/jobfiles.c):
	 * written over, then cut to length, its block kept. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = error_set(err, -errno, "%s: %m", tmp);
		goto done;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0) {
			r = error_set(err, -errno, "%s: %m", tmp);
			goto done;
		}
		off += (size_t)n;
	}
	if (ftruncate(fd, (off_t)len) < 0) {
		r = error_set(err, -errno, "%s: %m", tmp);
		goto done;
	}
	/* Not synced (issue 39: 7% of gded's CPU). The file only carries
	 * the result until qpoold has it in its store, milliseconds; qnoded
	 * syncs the results it holds longer than that (noded/jobs.c
	 * jobs_results_sync), and reads as none a file a crash left torn
	 * or holding a kept inode's older text (jobfile_result_read). */
	if (rename(tmp, path) < 0) {
		r = error_set(err, -errno, "rename %s: %m", tmp);
		goto done;
	}
done:
	if (fd >= 0)
		close(fd);
	if (r < 0)
		unlink(tmp);
	free(text);
	json_decref(o);
	return r;
}
