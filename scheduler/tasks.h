/* SPDX-License-Identifier: MIT */
/* Task routes between a job's nodes (tasks.c). */
#ifndef QPOOL_TASKS_H
#define QPOOL_TASKS_H

struct hctx;

/* tasks.c: task.* from a node, routed to another node of the job
 * (docs/PARALLEL.md, "Remote start"); task_routes_node_gone ends the tasks
 * in flight to or from a node whose link went; task_routes_destroy frees. */
void task_routes_node_gone(struct hctx *s, const char *name);
void task_routes_destroy(struct hctx *s);

#endif
