/* SPDX-License-Identifier: MIT */
/* The stdin windows of one job's tasks on a node: what gded grants each
 * task's sender (task.inack), bounded for all the tasks together. */
#ifndef QPOOL_INWIN_H
#define QPOOL_INWIN_H

#include <stdbool.h>
#include <stddef.h>

/* Every task may have its first TASKCLIENT_IN_START bytes out (its
 * sender starts with them); a window grows past that, up to
 * TASKCLIENT_IN_WINDOW, only out of this pool, shared by the job's
 * tasks on the node: what gded buffers of their stdin is so at most
 * GDED_TASKS_MAX * TASKCLIENT_IN_START + INWIN_JOB_EXTRA bytes of base64
 * (16 + 8 MiB), whatever the number of tasks. */
#define INWIN_JOB_EXTRA (8u << 20)
/* A grant smaller than this waits for more to come back: one
 * task.inack a few KiB, not one a pipe write. */
#define INWIN_GRANT_MIN 4096u

/* The job's side: the pool in use. */
struct inwin_job {
	size_t extra;   /* the tasks' windows past TASKCLIENT_IN_START, summed */
};

/* A task's side: bytes (of base64, as sent) its sender may send or has
 * sent that gded has not consumed yet (written to the task, or dropped). */
struct inwin {
	size_t win;
};

/* A task that takes stdin: its sender starts with TASKCLIENT_IN_START. */
void inwin_open(struct inwin_job *j, struct inwin *w);
/* n bytes of w's window consumed (more than the window, from a sender
 * past it: the window only empties). */
void inwin_consume(struct inwin_job *j, struct inwin *w, size_t n);
/* The bytes to grant w's sender now (task.inack), already counted in
 * its window; 0: none. open: the task still takes stdin (else it is
 * granted back only up to TASKCLIENT_IN_START, to drop what comes);
 * tasks: the tasks that take stdin, among which the pool is shared. */
size_t inwin_grant(struct inwin_job *j, struct inwin *w, bool open, size_t tasks);
/* w's sender will send no more (its end of input, or the task ended):
 * its window goes back to the pool. */
void inwin_release(struct inwin_job *j, struct inwin *w);

#endif
