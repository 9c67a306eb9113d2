/* SPDX-License-Identifier: MIT */
/* What noded/tasks.c (the task socket, agents, link frames) and
 * noded/taskctl.c (the jobs' gded control sockets) share. */
#ifndef QPOOL_NODED_TASKS_INTERNAL_H
#define QPOOL_NODED_TASKS_INTERNAL_H

#include <sys/un.h>

#include "noded.h"
#include "wire.h"

#define TASK_ID_MAX 96
#define SPEC_MAX (8u << 20)
/* What waits unread for one peer before it is dropped: a task's output
 * is relayed as it comes, and an agent that stops reading is not allowed
 * to grow qnoded without bound. */
#define OUT_MAX (64u << 20)
/* An agent's input is read only while what waits for its task's next
 * hop (the job's control socket, or the link to qpoold) is below this:
 * stdin piped into qpool-rsh cannot fill qnoded's memory. An agent that
 * sends past its window (taskclient.h) is ended with its task. */
#define IN_PAUSE (1u << 20)
#define IN_RECHECK_US 5000
/* Connections on the task socket, all users together. */
#define AGENTS_MAX 4096

enum ttask_kind {
	TASK_LOCAL,    /* agent here, task on this node's gded */
	TASK_OUT,      /* agent here, task on another node (through qpoold) */
	TASK_IN,       /* origin on another node, task on this node's gded */
};

struct agent;

struct ttask {
	struct tasks *ts;
	enum ttask_kind kind;
	int64_t jobid;
	int64_t dispatch;
	char id[TASK_ID_MAX];
	char peer[NODED_NAME_MAX];   /* OUT: the target node; IN: the origin node */
	struct agent *agent;          /* LOCAL, OUT */
	uint64_t serial;              /* OUT: the link call's argument */
	bool started;                 /* the start was answered ok */
	/* LOCAL, OUT: task.in data (base64 bytes) from the agent less
	 * what the task's gded granted back (taskclient_window_ack). */
	long long in_flight;
	/* LOCAL, IN: its task.start while the job's gded has not made its
	 * control socket yet (taskctl.c), and until when it waits. */
	json_t *start;
	int64_t start_until;
	struct ttask *next;
};

struct agent {
	struct tasks *ts;
	int fd;
	int pidfd;
	pid_t pid;
	uid_t uid;
	sd_event_source *io;
	struct wirebuf in, out;
	long long start_id;           /* its task.start's id; 0 before it */
	struct ttask *task;
	bool closing;                 /* close once out is written */
	bool dead;                    /* a write failed: freed by its handler */
	bool paused;                  /* not read: its task's next hop is full */
	struct agent *next;
};

struct ctl_req {
	uint64_t id;
	char task[TASK_ID_MAX];
	struct ctl_req *next;
};

/* One connection per job to its gded's jobs/<id>.ctl. */
struct ctl {
	struct tasks *ts;
	int64_t jobid;
	int fd;
	sd_event_source *io;
	struct wirebuf in, out;
	uint64_t next_id;
	struct ctl_req *reqs;
	bool dead;                    /* a write failed: freed by its handler */
	struct ctl *next;
};

struct tasks {
	struct noded *nd;
	int listen_fd;
	sd_event_source *listen_src;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct agent *agents;
	struct ctl *ctls;
	struct ttask *tasks;
	uint64_t next_task;
	uint64_t next_serial;
	unsigned n_agents;
	sd_event_source *recheck;     /* while agents are paused */
	sd_event_source *start_retry; /* while starts wait for a job's gded */
	bool stopping;                /* qnoded stops: nothing more is sent */
};

/* tasks.c */
struct ttask *ttask_find(struct tasks *ts, int64_t jobid, const char *id);
void ttask_free(struct ttask *t);
/* A frame for t from where it runs (gded here, or the target through
 * qpoold), msg's members copied: to its agent here, or to its origin. */
void ttask_relay_back(struct ttask *t, const char *op, json_t *msg);
/* task.exit (status, or sig > 0; why: a line, may be NULL) to t's agent
 * or origin, once; t is freed. */
void ttask_end(struct ttask *t, int status, int sig, const char *why);
int tasks_io_events(struct wirebuf *out);
/* Queues msg (stolen) to an agent; a failed write marks it dead. */
void task_agent_send(struct agent *a, json_t *msg);
/* task.inack {bytes} from t's gded (here, or through qpoold): on to its
 * origin, or to its agent, whose window it opens. */
void ttask_inack(struct ttask *t, const json_t *msg);
/* The one-line refusal to an agent, which is closed once it is written. */
void task_agent_refuse(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* t (LOCAL or IN) could not start: why, one line, to its agent or its
 * origin (task.started ok false); t is freed. */
void ttask_start_failed(struct ttask *t, const char *why);

/* taskctl.c */
/* Closes a job's control connection; its tasks here end (task.exit
 * signal 9 with why, unless stopping). */
void tctl_free(struct ctl *c, const char *why);
/* task.start for t (argv, env, cwd, stdin of start) to the job's gded,
 * connecting when there is no connection. A gded that has not made its
 * socket yet is waited for: the start is sent once it has, or t fails
 * (ttask_start_failed) after TCTL_WRAPPER_WAIT_SEC or when the job ends
 * here. -errno when it cannot be sent nor wait. */
#define TCTL_WRAPPER_WAIT_SEC 30
int tctl_task_start(struct tasks *ts, struct ttask *t, const json_t *start);
/* task.in or task.signal (op) for t, members from msg. */
void tctl_task_pass(struct tasks *ts, struct ttask *t, const char *op, const json_t *msg);
/* New references: msg's cwd when absolute, else null; msg's env, else {}. */
json_t *tctl_start_cwd(const json_t *msg);
json_t *tctl_start_env(const json_t *msg);

#endif
