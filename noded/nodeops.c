/* SPDX-License-Identifier: MIT */
/* What qpoold's link hands up, each to the part that handles it: the ops
 * (job.launch, job.signal, job.go and job.drop to jobs.c, task.* to
 * tasks.c) and the link's moments (registering, a heartbeat's ok, the
 * link lost). The link (link.c) is given this table and names none of
 * them. */
#include <string.h>

#include "noded.h"

static void op_job_launch(struct noded *nd, const char *op, const json_t *msg, int64_t stamp)
{
	jobs_launch(nd->jobs, msg, stamp);
}

static void op_job_signal(struct noded *nd, const char *op, const json_t *msg, int64_t stamp)
{
	jobs_signal(nd->jobs, msg);
}

static void op_job_release(struct noded *nd, const char *op, const json_t *msg, int64_t stamp)
{
	jobs_release(nd->jobs, msg, strcmp(op, "job.go") == 0);
}

static void op_task(struct noded *nd, const char *op, const json_t *msg, int64_t stamp)
{
	tasks_link_frame(nd->tasks, op, msg);
}

static const struct link_op ops[] = {
	{ "job.launch", op_job_launch },
	{ "job.signal", op_job_signal },
	{ "job.go", op_job_release },
	{ "job.drop", op_job_release },
	{ "task.", op_task },
	{ NULL, NULL },
};

static json_t *running_json(struct noded *nd)
{
	return jobs_running_json(nd->jobs);
}

static json_t *results_json(struct noded *nd)
{
	return jobs_results_json(nd->jobs);
}

static size_t running_count(struct noded *nd)
{
	return jobs_running_count(nd->jobs);
}

static void results_send(struct noded *nd)
{
	jobs_results_send(nd->jobs);
}

static void lost(struct noded *nd)
{
	jobs_link_lost(nd->jobs);
	tasks_link_lost(nd->tasks);
}

const struct link_handlers nodeops_link_handlers = {
	.ops = ops,
	.running_json = running_json,
	.results_json = results_json,
	.running_count = running_count,
	.results_send = results_send,
	.lost = lost,
};
