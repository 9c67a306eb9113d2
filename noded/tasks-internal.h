/* SPDX-License-Identifier: MIT */
/* What noded/tasks.c (agents, link frames), noded/taskdoor.c (the task
 * socket's door), noded/taskctl.c (the jobs' gded control sockets) and,
 * below them all, noded/taskrelay.c (tasks and agents) share. */
#ifndef QPOOL_NODED_TASKS_INTERNAL_H
#define QPOOL_NODED_TASKS_INTERNAL_H

#include <sys/un.h>

#include "noded.h"
#include "wire.h"

#define TASK_ID_MAX 96
/* What waits unread for one peer before it is dropped: a task's output
 * is relayed as it comes, and an agent that stops reading is not allowed
 * to grow qnoded without bound. */
#define OUT_MAX (64u << 20)
/* Task output is windowed end to end (task.outack, the mirror of
 * task.inack): a task's gded sends at most OUT_WINDOW of its output
 * (base64 bytes) not yet acknowledged, then stops reading its pipes, and
 * the task blocks. What qnoded relayed to an agent is acknowledged once
 * that agent's buffer is below OUT_ACK_BELOW and all agents' together
 * below OUT_TOTAL_MAX; a task run here for another node's agent, once
 * the link to qpoold holds less than LINK_OUT_HIGH. So an agent that does
 * not read holds up its own task, and qnoded at most a few hundred KiB
 * for it. */
#define OUT_WINDOW (256u << 10)
#define OUT_ACK_BELOW (256u << 10)
#define OUT_TOTAL_MAX (64u << 20)
#define LINK_OUT_HIGH (4u << 20)
/* An agent's input is read only while what waits for its task's next
 * hop (the job's control socket, or the link to qpoold) is below this:
 * stdin piped into qpool-rsh cannot fill qnoded's memory. An agent that
 * sends past its window (taskclient.h) is ended with its task. */
#define IN_PAUSE (1u << 20)
#define IN_RECHECK_US 5000
/* Connections on the task socket, all users together: at most this, and
 * at most a quarter of RLIMIT_NOFILE (two descriptors each, a socket and
 * a pidfd; the other half is the jobs' and the link's). One uid holds at
 * most a quarter of them (pbsdsh holds one per slot of its job); root
 * has AGENTS_ROOT_RESERVE the others cannot take. */
#define AGENTS_MAX 4096
#define AGENTS_UID_SHARE 4
#define AGENTS_ROOT_RESERVE 16
/* Input buffers one uid's agents may hold (a message of up to 1 MiB may
 * arrive on each): past it, an agent whose buffer is above
 * AGENT_INPUT_SMALL is refused. A well-behaved agent's never is: it sends
 * task.start and task.in frames of ~64 KiB. qpoold's rule (conns.c). */
#define AGENTS_UID_INPUT (16u << 20)
#define AGENT_INPUT_SMALL (256u << 10)
/* An agent sends task.start as it connects: one that has not within this
 * is closed, as is one that does not take its last frame within it. */
#define AGENT_DEADLINE_US (10 * 1000000ULL)
/* accept failed for want of descriptors or memory: the socket is not
 * watched for this long (a readable listener would wake the loop at once). */
#define ACCEPT_PAUSE_US 100000
/* peers_log_flush's tick: the "not logged" counts come at most this late
 * after their minute. */
#define LOG_FLUSH_US (5 * 1000000ULL)
/* A task.start for a job whose gded does not listen yet (a sister's
 * wrapper still starting when the primary's mpirun calls: qpoold launches
 * the sisters a breath before the primary's script runs, and a loaded
 * node lags) is tried again this often, for at most START_WAIT_US, and
 * only while the job runs here: a job that ends ends its wait. */
#define START_RETRY_US 50000
#define START_WAIT_US (30 * 1000000ULL)

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
	/* task.out data (base64 bytes) passed on and not yet acknowledged
	 * to where it came from (LOCAL, OUT: relayed to the agent; IN: the
	 * origin's task.outack, held while the link is full). */
	size_t out_owed;
	/* LOCAL, IN: the task.start waiting for the job's gded to listen,
	 * until start_until (CLOCK_MONOTONIC us). */
	json_t *start_pending;
	uint64_t start_until;
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
	uint64_t deadline;            /* CLOCK_MONOTONIC us: closed then (0: none) */
	size_t out_counted;           /* its share of tasks.out_total */
	size_t in_counted;            /* in.cap, as counted in its uid's input */
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
	size_t out_total;             /* bytes queued to all agents */
	unsigned agents_max;          /* from RLIMIT_NOFILE, at most AGENTS_MAX */
	struct peers *peers;          /* connections and log lines per uid */
	sd_event_source *deadline;    /* the earliest agent deadline */
	sd_event_source *accept_pause; /* accept failed: watched again then */
	sd_event_source *log_flush;
	sd_event_source *start_retry; /* while starts wait for a gded */
	sd_event_source *recheck;     /* while agents are paused */
	bool stopping;                /* qnoded stops: nothing more is sent */
	/* A frame for t to its gded over its job's control socket:
	 * tctl_task_pass, set by tasks_create, so that taskrelay.c (below
	 * taskctl.c, whose replies it relays) does not name it. */
	void (*pass)(struct tasks *ts, struct ttask *t, const char *op, const json_t *msg);
	sd_event_io_handler_t agent_io; /* the agents' handler, given to taskdoor_open */
};

/* taskrelay.c */
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
/* a is closed once what is queued to it is written, or at its deadline. */
void task_agent_close(struct agent *a);
/* Acknowledges t's output passed on (task.outack) to where it came from,
 * when there is room; else later (an agent's write, or the recheck). */
void ttask_out_ack(struct ttask *t);
/* The one-line refusal to an agent, which is closed once it is written. */
void task_agent_refuse(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void task_agent_free(struct agent *a);
/* a is refused (no task.start yet) or freed (closing) at usec
 * (CLOCK_MONOTONIC); the door's timer is armed for the earliest. */
void task_agent_deadline_set(struct agent *a, uint64_t usec);
/* Writes what is queued to a (its handler saw EPOLLOUT); its task's
 * output acknowledged when there is room. 0 or -errno (a is to be freed). */
int task_agent_flush(struct agent *a);
/* Whether a is not to be read: its task's next hop is full. (One that
 * sends past its window is ended: tasks.c.) */
bool task_agent_full(struct agent *a);
/* Stops reading a while its task's next hop is full; a timer looks again. */
void task_agent_pause(struct agent *a);

/* tasks.c */
/* The agents' sd-event handler (userdata: the agent). */
int task_agent_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* taskdoor.c */
/* Binds <node dir>/task.sock (0666), sizes the caps from RLIMIT_NOFILE
 * and arms the door's timers; each agent accepted is handed to agent_io
 * (userdata: the agent). -errno with err set. */
int taskdoor_open(struct tasks *ts, sd_event_io_handler_t agent_io, struct error *err);
/* Closes and removes the socket, and stops the door's timers. */
void taskdoor_close(struct tasks *ts);

/* taskctl.c */
/* Closes a job's control connection; its tasks here end (task.exit
 * signal 9 with why, unless stopping). */
void tctl_free(struct ctl *c, const char *why);
/* task.start for t (argv, env, cwd, stdin of start) to the job's gded,
 * connecting when there is no connection. When its gded does not listen
 * yet, tried again every START_RETRY_US for START_WAIT_US or until the
 * job ends here (t waits unstarted; a final failure refuses it as below,
 * and frees it). -errno when it cannot at all. */
int tctl_task_start(struct tasks *ts, struct ttask *t, const json_t *start);
/* task.in, task.signal or task.outack (op) for t, members from msg. */
void tctl_task_pass(struct tasks *ts, struct ttask *t, const char *op, const json_t *msg);
/* New references: msg's cwd when absolute, else null; msg's env, else {}. */
json_t *tctl_start_cwd(const json_t *msg);
json_t *tctl_start_env(const json_t *msg);

#endif
