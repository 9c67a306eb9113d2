/* SPDX-License-Identifier: MIT */
/* gded's insides shared between its files: the child side of the fork. */
#ifndef QPOOL_GDED_INTERNAL_H
#define QPOOL_GDED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <limits.h>
#include <poll.h>
#include <sys/resource.h>

#include "gded.h"

/* What the forked child needs; all prepared by the parent so the child
 * allocates nothing. */
/* What gded holds of the job's output while the owner's qsub is slow to
 * read, and of the user's input while the pty is full: past these gded
 * stops reading the other side, so a writer blocks on its own end
 * (the job on its terminal), never gded (docs/ARCHITECTURE.md). */
#define GDED_PTY_OUT_MAX 65536
#define GDED_PTY_IN_MAX 4096

/* The three fds gded_pty_pollfds fills, in this order. */
#define GDED_PTY_NFDS 3

/* qsub -I: the job's pty and the socket its owner's qsub attaches to. */
struct gded_pty {
	int master;                /* O_NONBLOCK */
	int listen;                /* until one qsub connects, then -1 */
	int conn;                  /* that qsub (O_NONBLOCK), or -1 */
	int hold;                  /* the slave, held by gded (O_NOCTTY): until
	                            * the job opens it, the master would read
	                            * EIO, which is taken for the job's end */
	bool conn_eof;             /* its input ended */
	bool eof_pending;          /* ...and the ^D it becomes is not yet written */
	unsigned eof_resent;       /* ^Ds written again since, on the job's output */
	size_t out_len;            /* bytes in out: the job's, for the qsub */
	size_t in_len;             /* bytes in in: the qsub's, for the job */
	char out[GDED_PTY_OUT_MAX];
	char in[GDED_PTY_IN_MAX];
	char slave[64];            /* /dev/pts/N, the user's */
	char path[PATH_MAX];       /* the socket, jobs/<id>.pty */
};

/* A task (docs/PARALLEL.md task.start) as its child needs it. */
struct gded_task_exec {
	char **argv;               /* argv[0] searched in the task's PATH */
	const char *cwd;           /* NULL: HOME */
	int in;                    /* its stdin: a pipe or /dev/null */
	int out;                   /* pipes gded relays */
	int err;
};

/* qsub -I -- CMD: how long CMD waits for its user to reach the terminal
 * before the job fails; qsub polls the job every 100 ms and retries the
 * socket for 30 s, so only a user gone (killed while queued) waits it. */
#define GDED_ATTACH_TIMEOUT_MS 120000

struct gded_child {
	const struct gded_job *job;
	const struct gded_task_exec *task;   /* a task, not the script: NULL */
	const char *pty_slave;     /* qsub -I: the job's terminal, else NULL */
	int attach_fd;             /* qsub -I -- CMD: readable once the user's
	                            * qsub (srun --pty) holds the terminal;
	                            * else -1 */
	struct cgroup_job *cg;     /* NULL in mode none */
	char **envp;
	int report_fd;             /* O_CLOEXEC pipe: a start failure, one line */
	int64_t *exec_stamp;       /* MAP_SHARED page: [0] wall, [1] mono,
	                            * [2] execve's errno when it failed,
	                            * [3] 1 when the script's one command was
	                            * exec'ed without its shell, [4] [5] the
	                            * errno that kept stdout (stderr) out of
	                            * its path: it went to its kept path */
};

/* In the child: joins the cgroup, setsid, drops to the user, opens the
 * output files as the user, chdir, execve(shell, script). Never returns;
 * on a start failure writes the reason to report_fd (and to the job's
 * stderr file when open) and exits 127. */
__attribute__((noreturn)) void gded_child_exec(const struct gded_child *c);

/* In the child: a task of the job, started as the script is (cgroup,
 * RT policy, own session, the owner's ids, umask), with the task's
 * stdio, directory (HOME when it cannot be entered, as rsh does) and
 * environment. Never returns; when it cannot start, writes the reason to
 * the task's stderr and exits 127, as a shell does. */
__attribute__((noreturn)) void gded_task_exec(const struct gded_child *c);

/* The batch script's child without a copy of gded's memory (spawn.c,
 * issue 39): clone(CLONE_VM), raw system calls, only the plain case.
 * gded_spawn_prepare makes all it needs from c (whose exec_stamp page it
 * writes) before the clone; -ENOTSUP when the job is not a batch script
 * of a user whose groups qnoded resolved (a terminal, a task, by hand,
 * -W group_list, another architecture): fork then. gded_spawn_start
 * clones it: its pid, or -1 with errno. When anything does not succeed
 * plainly it exits 127 with exec_stamp[GDED_SPAWN_RETRY] set, and the
 * caller forks gded_child_exec, which does it all again and tells what
 * failed. gded_spawn_free only once the child is gone (exec'ed or
 * reaped). */
#define GDED_SPAWN_RETRY 6
struct gded_spawn;
int gded_spawn_prepare(const struct gded_child *c, struct gded_spawn **ret);
pid_t gded_spawn_start(struct gded_spawn *p);
void gded_spawn_free(struct gded_spawn *p);

/* RLIMIT_NOFILE: gded raises its own soft limit to hold many tasks'
 * pipes (gded_nofile_raise, once, before any child); every child puts
 * the limit it had back before exec, so the job sees what it would
 * have. */
rlim_t gded_nofile_raise(rlim_t want);   /* the soft limit now; 0 unknown */
void gded_nofile_restore(void);
/* Whether gded raised it; then the limit to put back in *ret. */
bool gded_nofile_saved(struct rlimit *ret);

/* gded's control socket (docs/PARALLEL.md "gded's control socket"):
 * qnoded starts tasks in the job through it. */
#define GDED_TASKS_MAX 1024   /* tasks at once on a node; more are refused */
struct gded_ctl;

/* Makes job->ctl (unlinked first; root, 0600, listening) before the
 * fence. 0, or -errno with err set. */
int gded_ctl_create(const struct gded_job *job, struct gded_ctl **ret, struct error *err);
/* The fence is up: tasks may start, in cg (NULL: none) with envp (the
 * job's environment, kept by the caller until gded_ctl_destroy). */
void gded_ctl_start(struct gded_ctl *ctl, struct cgroup_job *cg, char **envp);
/* The job is ending: task.start is refused from now on. */
void gded_ctl_ending(struct gded_ctl *ctl);
/* The most pollfds gded_ctl_pollfds fills. */
size_t gded_ctl_pollmax(void);
/* Fills pfd with what the control socket and the tasks wait on; the
 * count. gded_ctl_events takes the same array after poll. */
size_t gded_ctl_pollfds(struct gded_ctl *ctl, struct pollfd *pfd);
void gded_ctl_events(struct gded_ctl *ctl, const struct pollfd *pfd, size_t n);
/* A child gded reaped: true when it was a task (its task.exit follows
 * once its output is relayed). */
bool gded_ctl_reaped(struct gded_ctl *ctl, pid_t pid, int status);
/* Tasks whose process has not been reaped yet. */
size_t gded_ctl_live(const struct gded_ctl *ctl);
/* sig to every live task's process group. */
void gded_ctl_signal_all(struct gded_ctl *ctl, int sig);
/* After teardown (every process of the job gone): relays what the
 * tasks' pipes still hold and every task.exit (a task not reaped counts
 * as killed by SIGKILL), for at most a second; closes and removes the
 * socket. NULL-safe. */
void gded_ctl_destroy(struct gded_ctl *ctl);

/* How a job's output is opened (gded_output_open, spawn.c). No O_TRUNC:
 * a file is truncated only once it is known to be a regular file.
 * O_NONBLOCK: opening a FIFO nobody reads would otherwise block before
 * exec (ENXIO instead). O_NOFOLLOW: a symlink planted under the job's
 * output name (ids are predictable) is refused, not followed. */
#define GDED_OUTPUT_FLAGS (O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* Opens an output file at path for writing, as the calling user, with
 * O_CREAT (mode 0666 less the umask) and extra (0: truncate it; O_APPEND:
 * append): never through a symlink as its last component, never blocking
 * on a FIFO, and only a regular file or /dev/null. Returns the fd
 * (O_CLOEXEC, blocking), or -errno with why set to a short reason ("it is
 * a symbolic link", "it is not a regular file", strerror). */
int gded_output_open(const char *path, int extra, char *why, size_t len);

/* Whether an output that failed to open at path with r (-errno) is
 * undeliverable, to be kept elsewhere: nothing is there and the user
 * cannot create it (-ENOENT, -ENOTDIR, -EACCES, -EROFS). False when
 * something the user may not write sits under the name (a symbolic
 * link, a FIFO, another's file): that stays refused. As the user. */
bool gded_output_undeliverable(const char *path, int r);

/* Where an undeliverable output is kept: <HOME>/<PBS_JOBID>.OU (err:
 * .ER), PBS Pro's names in its undelivered directory. 0, -ENOENT (no
 * absolute HOME), -ENAMETOOLONG. */
int gded_output_kept_path(const struct gded_job *job, bool err, char *buf, size_t len);

/* Appends to text (len bytes, a string) one clause per output kept
 * (errs[0] stdout's errno, errs[1] stderr's; 0: delivered), "output
 * undelivered (PATH: REASON): kept in KEPT on NODE", "; " between. True
 * when any was. */
bool gded_undelivered_note(const struct gded_job *job, const int errs[2], char *text, size_t len);

/* The job's TMPDIR, <tmpdir_base>/pbs.ID.SERVER, into buf. 0, -ENOENT
 * when the spec names no base, -ENAMETOOLONG. */
int gded_tmpdir_path(const struct gded_job *job, char *buf, size_t len);

/* PBS_GPUFILE's path: <id>.gpus beside the result (jobs/<id>.gpus).
 * 0, -ENOENT when the job has no GPU on any node or no nodefile,
 * -ENAMETOOLONG. */
int gded_gpufile_path(const struct gded_job *job, char *buf, size_t len);

/* PBS_GPUFILE's text, in a new buffer (*ret_len bytes, free it), as
 * Torque writes it: one "NODE-gpuN" line per GPU of the job, N its
 * node's index, lowest first, the nodes in job order (a one-node job:
 * its own gpus), the same file on every node. 0 or -ENOMEM. */
int gded_gpufile_text(const struct gded_job *job, char **ret, size_t *ret_len);

/* The GPU variables (docs/GPUS.md "The job's environment"), through
 * set(e, ...): PBS_GPUFILE when gpufile is not NULL; when the job has
 * GPUs on this node, CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and
 * GPU_DEVICE_ORDINAL "0,...,n-1", QPOOL_GPUS and SLURM_JOB_GPUS the
 * node's indices. None of them otherwise. 0, or -1 when set failed. */
int gded_gpuenv_add(const struct gded_job *job, const char *gpufile, gded_env_set_f set, void *e);

/* Makes the directory path (PATH_MAX: len) afresh, mode 0700, owned by
 * the job's user, and returns an fd (O_CLOEXEC) that holds an flock on
 * it: keep it open for the job's lifetime. What a former run of this id
 * left, which nobody holds, is removed first. One a running gded holds
 * (another pool on this host, same server name and id) is left alone:
 * the job gets path.XXXXXX instead, written back into path. As root,
 * before the job. -errno on failure. */
int gded_tmpdir_create(const struct gded_job *job, char *path, size_t len);


/* Runs the node's prolog or epilog ("prolog", "epilog") for job, if it
 * has one: 0 when there is none or it succeeded; -1 when it failed, with
 * one line in why ("prolog failed on n1: <its first stderr line>"). */
int gded_hook_run(const struct gded_job *job, const char *event, char *why, size_t len);

/* Whether qsub -m asked for mail at point ('b', 'e' or 'a') and a
 * sendmail is configured. */
bool gded_mail_wanted(const struct gded_job *job, char point);

/* Mails the job's owner (or -M's users) "what" through job->sendmail -t,
 * run as the user, waiting at most 5 s. 0 or -errno. */
int gded_mail_send(const struct gded_job *job, const char *what);

/* The PBS nodefile's text, in a new buffer (*ret_len bytes, free it): a
 * one-node job's node name once per CPU; a job across nodes, each node's
 * name once per MPI slot, in job order (docs/PARALLEL.md), the same on
 * every node. 0 or -errno with err set. */
int gded_nodefile_text(const struct gded_job *job, char **ret, size_t *ret_len,
		       struct error *err);

/* Makes the pty (slave given to the job's user) and the socket beside the
 * job's script (the user's, 0600, listening), in *ret. 0 or -errno with err
 * (*ret NULL). */
int gded_pty_open(const struct gded_job *job, struct gded_pty **ret, struct error *err);

/* Closes what is open, removes the socket and frees pty; NULL: nothing. */
void gded_pty_close(struct gded_pty *pty);

/* Fills pfd[0..GDED_PTY_NFDS) (the listening socket, the qsub, the
 * pty's master) with what the relay waits for: never a read whose data
 * it has no room for (backpressure), and an fd of -1 for one it waits
 * nothing from. */
void gded_pty_pollfds(const struct gded_pty *pty, struct pollfd *pfd);

/* Acts on what poll said of pfd[0..GDED_PTY_NFDS), without blocking:
 * takes the first qsub, moves what each side has room for, turns the
 * end of the qsub's input into ^D, and when the qsub is gone (its socket
 * closed, not only its input) closes the pty's master, the terminal's
 * hangup, which sends the job's session leader SIGHUP as a closed
 * terminal window does. The job's side of the terminal closed (the
 * shell is leaving) closes the master too. */
void gded_pty_events(struct gded_pty *pty, const struct pollfd *pfd);

/* After the job's exit: what the job wrote last goes to the qsub, for
 * timeout_ms at most (a qsub that does not read does not hold up the
 * teardown). */
void gded_pty_flush(struct gded_pty *pty, int timeout_ms);

/* Appends line to the job's stderr file (stdout when joined) with the
 * user's credentials, from a short-lived child: the OOM note. kept: that
 * file went to its kept path (gded_output_kept_path). 0 or -errno
 * (-ENOENT: no output file, as by hand). */
int gded_note_append(const struct gded_job *job, bool kept, const char *line);

#endif
