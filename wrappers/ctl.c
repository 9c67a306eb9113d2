/* SPDX-License-Identifier: MIT */
/* gded's control socket (docs/PARALLEL.md): tasks started in the job's fence for qnoded, their output relayed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base64.h"
#include "gded-internal.h"
#include "inwin.h"
#include "jobenv.h"
#include "log.h"
#include "timeutil.h"
#include "wire.h"

/* Bytes read from a task's stdout or stderr per frame: 64 KiB is ~87 KiB
 * of base64, well under the frame cap. */
#define OUT_CHUNK 65536
/* While this much is queued for qnoded, task output is not read: the
 * tasks block on their pipes instead of gded's memory growing. */
#define OUT_HIGH (4u << 20)
/* A task's stdin is granted to its sender (task.inack) as the task
 * takes it, within the job's pool (inwin.h): the connection is always
 * read, task.signal never waits behind unread stdin, and what waits here
 * is bounded for the job. Only a sender that ignored its window (or one
 * that predates the grants: it took 1 MiB for granted) sends more than
 * it was granted; past this for one task, it is dropped. */
#define IN_MAX (8u << 20)
/* A task.start's out_window (bytes of task.out data not yet acknowledged
 * by task.outack, past which the task's pipes are not read) is taken
 * within these bounds; without one, output is not windowed. */
#define OUT_WINDOW_MIN (64u << 10)
#define OUT_WINDOW_MAX (16u << 20)
#define TASK_ID_MAX 128
#define ARGV_MAX 4096
/* How long the last task.exit frames may take to leave at teardown. */
#define FINISH_MS 1000

enum pfd_kind { PFD_LISTEN, PFD_CONN, PFD_IN, PFD_OUT, PFD_ERR };

struct task {
	char id[TASK_ID_MAX + 1];
	pid_t pid;
	bool reaped;
	int status;          /* waitpid's, once reaped */
	int in;              /* our end of its stdin, or -1 */
	int out, err;        /* our ends of its stdout/stderr, -1 after EOF */
	char *inbuf;         /* input not yet written to it */
	size_t inlen, inoff;
	bool in_eof;         /* task.in with empty data: close once written */
	struct inwin win;    /* its sender's window (inwin.h) */
	size_t in_held;      /* task.in data (base64 bytes) in inbuf */
	size_t out_window;   /* task.start's out_window; 0: none */
	size_t out_unacked;  /* task.out data (base64 bytes) not acknowledged */
	bool exit_queued;    /* task.exit is in the output buffer */
};

struct gded_ctl {
	const struct gded_job *job;
	struct cgroup_job *cg;
	char **envp;             /* the job's environment; NULL: not started */
	int listen;
	int conn;
	struct wirebuf in, out;
	bool ending;
	size_t max_tasks;
	uint64_t started;        /* tasks started, for PBS_TASKNUM */
	struct inwin_job inwin;  /* the tasks' stdin windows, summed */
	struct task **tasks;
	size_t ntasks;
	/* What each pollfd handed out stands for. */
	struct { enum pfd_kind kind; struct task *t; } *map;
	size_t nmap;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

size_t gded_ctl_pollmax(void)
{
	return 2 + 3 * GDED_TASKS_MAX;
}

int gded_ctl_create(const struct gded_job *job, struct gded_ctl **ret, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct gded_ctl *ctl;
	rlim_t nofile;
	mode_t old;
	int r;

	*ret = NULL;
	if (strlen(job->ctl) >= sizeof(sa.sun_path))
		return error_set(err, -ENAMETOOLONG, "%s: path too long for a socket", job->ctl);
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return error_set(err, -ENOMEM, "out of memory");
	ctl->job = job;
	ctl->conn = -1;
	ctl->tasks = calloc(GDED_TASKS_MAX, sizeof(*ctl->tasks));
	ctl->map = calloc(gded_ctl_pollmax(), sizeof(*ctl->map));
	snprintf(ctl->path, sizeof(ctl->path), "%s", job->ctl);
	memcpy(sa.sun_path, job->ctl, strlen(job->ctl));
	ctl->listen = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (!ctl->tasks || !ctl->map || ctl->listen < 0) {
		r = error_set(err, ctl->listen < 0 ? -errno : -ENOMEM, "control socket: %m");
		goto fail;
	}
	/* Root's and 0600 from the start (umask around bind): only qnoded
	 * may start tasks in the job. A socket left by a gded of an earlier
	 * run of this id is unlinked when met. */
	old = umask(0177);
	r = bind(ctl->listen, (struct sockaddr *)&sa, sizeof(sa));
	if (r < 0 && errno == EADDRINUSE && unlink(job->ctl) == 0)
		r = bind(ctl->listen, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || listen(ctl->listen, 8) < 0) {
		r = error_set(err, -errno, "cannot make the control socket %s: %m", job->ctl);
		goto fail;
	}
	/* Three fds a task: raise the soft limit (the job gets its own back
	 * in every child); fewer tasks where the hard limit is low. */
	nofile = gded_nofile_raise(64 + 3 * GDED_TASKS_MAX);
	ctl->max_tasks = GDED_TASKS_MAX;
	if (nofile && nofile < 64 + 3 * GDED_TASKS_MAX)
		ctl->max_tasks = nofile > 64 + 3 ? (nofile - 64) / 3 : 1;
	*ret = ctl;
	return 0;
fail:
	if (ctl->listen >= 0) {
		close(ctl->listen);
		(void)unlink(job->ctl);
	}
	free(ctl->tasks);
	free(ctl->map);
	free(ctl);
	return r;
}

void gded_ctl_start(struct gded_ctl *ctl, struct cgroup_job *cg, char **envp)
{
	if (!ctl)
		return;
	ctl->cg = cg;
	ctl->envp = envp;
}

void gded_ctl_ending(struct gded_ctl *ctl)
{
	if (ctl)
		ctl->ending = true;
}

static void conn_drop(struct gded_ctl *ctl)
{
	if (ctl->conn < 0)
		return;
	close(ctl->conn);
	ctl->conn = -1;
	wirebuf_free(&ctl->in);
	wirebuf_free(&ctl->out);
	/* A task.exit that may not have left is sent again to the next
	 * connection: the exit status is never lost to a reconnect. Output
	 * windows open again: what was unacknowledged went with it. */
	for (size_t i = 0; i < ctl->ntasks; i++) {
		ctl->tasks[i]->exit_queued = false;
		ctl->tasks[i]->out_unacked = 0;
	}
}

static void send_msg(struct gded_ctl *ctl, json_t *msg)
{
	if (!msg)
		return;
	if (ctl->conn >= 0 && wire_queue(&ctl->out, msg) == 0 && wire_flush(ctl->conn, &ctl->out) < 0)
		conn_drop(ctl);
	json_decref(msg);
}

static void reply_error(struct gded_ctl *ctl, json_int_t id, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void reply_error(struct gded_ctl *ctl, json_int_t id, int errnum, const char *fmt, ...)
{
	char line[256];
	json_t *msg;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	msg = json_pack("{s:I, s:b, s:s, s:i}", "id", id, "ok", 0, "error", line, "errno", errnum);
	/* A line cut inside a UTF-8 character is no JSON string: the
	 * request still gets its answer. */
	if (!msg)
		msg = json_pack("{s:I, s:b, s:s, s:i}", "id", id, "ok", 0, "error",
				"malformed request", "errno", errnum);
	send_msg(ctl, msg);
}

static struct task *task_find(struct gded_ctl *ctl, const char *id)
{
	for (size_t i = 0; i < ctl->ntasks; i++)
		if (strcmp(ctl->tasks[i]->id, id) == 0)
			return ctl->tasks[i];
	return NULL;
}

static void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void task_free(struct gded_ctl *ctl, struct task *t)
{
	inwin_release(&ctl->inwin, &t->win);
	fd_close(&t->in);
	fd_close(&t->out);
	fd_close(&t->err);
	free(t->inbuf);
	free(t);
}

/* Its process is reaped and its output all relayed: task.exit, once per
 * connection until it has left. */
static void task_exit_maybe(struct gded_ctl *ctl, struct task *t)
{
	json_t *msg;

	if (!t->reaped || t->out >= 0 || t->err >= 0 || t->exit_queued || ctl->conn < 0)
		return;
	if (WIFSIGNALED(t->status))
		msg = json_pack("{s:s, s:s, s:i}", "op", "task.exit", "task", t->id, "signal",
				WTERMSIG(t->status));
	else
		msg = json_pack("{s:s, s:s, s:i}", "op", "task.exit", "task", t->id, "status",
				WEXITSTATUS(t->status));
	t->exit_queued = true;
	send_msg(ctl, msg);
}

/* Tasks whose task.exit has left the buffer are forgotten. */
static void tasks_prune(struct gded_ctl *ctl)
{
	if (ctl->conn < 0 || ctl->out.len != ctl->out.off)
		return;
	for (size_t i = 0; i < ctl->ntasks;) {
		struct task *t = ctl->tasks[i];

		if (t->exit_queued) {
			task_free(ctl, t);
			ctl->tasks[i] = ctl->tasks[--ctl->ntasks];
			continue;
		}
		i++;
	}
}

/* Checks a task.start's members into what the child needs. 0, or an
 * error reply was sent. */
static int start_check(struct gded_ctl *ctl, json_int_t id, const json_t *msg,
		       const char **ret_task, const json_t **ret_argv, const json_t **ret_env,
		       const char **ret_cwd, bool *ret_stdin)
{
	const json_t *task = json_object_get(msg, "task"), *argv = json_object_get(msg, "argv");
	const json_t *env = json_object_get(msg, "env"), *cwd = json_object_get(msg, "cwd");
	const json_t *in = json_object_get(msg, "stdin"), *v;
	struct error e = { { 0 } };
	const char *key;
	size_t i;

	if (!json_is_string(task) || json_string_length(task) == 0 ||
	    json_string_length(task) > TASK_ID_MAX ||
	    strlen(json_string_value(task)) != json_string_length(task)) {
		reply_error(ctl, id, EINVAL, "task.start: \"task\" is not a name of 1-%d characters",
			    TASK_ID_MAX);
		return -1;
	}
	if (!json_is_array(argv) || json_array_size(argv) == 0 ||
	    json_array_size(argv) > ARGV_MAX) {
		reply_error(ctl, id, EINVAL, "task.start: \"argv\" is not an array of 1-%d strings",
			    ARGV_MAX);
		return -1;
	}
	json_array_foreach(argv, i, v) {
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
		    (i == 0 && json_string_length(v) == 0)) {
			reply_error(ctl, id, EINVAL, "task.start: argv[%zu] is not a string%s", i,
				    i == 0 ? " naming a command" : " without NUL");
			return -1;
		}
	}
	if (env && !json_is_null(env)) {
		if (!json_is_object(env)) {
			reply_error(ctl, id, EINVAL, "task.start: \"env\" is not an object");
			return -1;
		}
		if (jobenv_check(env, &e) < 0) {
			reply_error(ctl, id, EINVAL, "task.start: %s", e.text);
			return -1;
		}
		json_object_foreach((json_t *)env, key, v) {
			if (!*key || strchr(key, '=') ||
			    strlen(json_string_value(v)) != json_string_length(v)) {
				reply_error(ctl, id, EINVAL, "task.start: env \"%.64s\" is not valid", key);
				return -1;
			}
		}
	}
	if (cwd && !json_is_null(cwd) && (!json_is_string(cwd) || json_string_value(cwd)[0] != '/' ||
					  strlen(json_string_value(cwd)) != json_string_length(cwd))) {
		reply_error(ctl, id, EINVAL, "task.start: \"cwd\" is not an absolute path");
		return -1;
	}
	if (in && !json_is_null(in) && !json_is_boolean(in)) {
		reply_error(ctl, id, EINVAL, "task.start: \"stdin\" is not a boolean");
		return -1;
	}
	*ret_task = json_string_value(task);
	*ret_argv = argv;
	*ret_env = env && json_is_object(env) ? env : NULL;
	*ret_cwd = json_is_string(cwd) ? json_string_value(cwd) : NULL;
	*ret_stdin = json_is_true(in);
	return 0;
}

static void on_start(struct gded_ctl *ctl, json_int_t id, const json_t *msg)
{
	const struct gded_job *job = ctl->job;
	const json_t *argv_j, *env;
	const char *name, *cwd;
	char **argv = NULL, **envp = NULL, tasknum[24];
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 }, e;
	struct task *t = NULL;
	bool want_in;
	pid_t pid;
	size_t i;

	if (start_check(ctl, id, msg, &name, &argv_j, &env, &cwd, &want_in) < 0)
		return;
	if (ctl->ending || !ctl->envp) {
		reply_error(ctl, id, ESRCH, "job %" PRIu64 " is ending on %s", job->jobid,
			    job->node);
		return;
	}
	if (task_find(ctl, name)) {
		reply_error(ctl, id, EEXIST, "task %s is already in job %" PRIu64 " on %s", name,
			    job->jobid, job->node);
		return;
	}
	if (ctl->ntasks >= ctl->max_tasks) {
		reply_error(ctl, id, EAGAIN, "job %" PRIu64 " has %zu tasks on %s; at most %zu",
			    job->jobid, ctl->ntasks, job->node, ctl->max_tasks);
		return;
	}
	snprintf(tasknum, sizeof(tasknum), "%" PRIu64, ctl->started + 2);   /* 1: the script */
	argv = calloc(json_array_size(argv_j) + 1, sizeof(char *));
	envp = gded_env_task(ctl->envp, env, tasknum);
	t = calloc(1, sizeof(*t));
	if (!argv || !envp || !t)
		goto nomem;
	for (i = 0; i < json_array_size(argv_j); i++)
		argv[i] = (char *)json_string_value(json_array_get(argv_j, i));
	if ((want_in ? pipe2(in, O_CLOEXEC) : (in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC))) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		e = errno;
		reply_error(ctl, id, e, "task.start: cannot make the task's pipes on %s: %s",
			    job->node, strerror(e));
		goto done;
	}
	pid = fork();
	if (pid < 0) {
		e = errno;
		reply_error(ctl, id, e, "task.start: cannot fork on %s: %s", job->node, strerror(e));
		goto done;
	}
	if (pid == 0) {
		struct gded_task_exec te = {
			.argv = argv, .cwd = cwd, .in = in[0], .out = out[1], .err = err[1],
		};
		struct gded_child c = {
			.job = job, .task = &te, .cg = ctl->cg, .envp = envp, .report_fd = err[1], .attach_fd = -1,
		};

		gded_task_exec(&c);
	}
	snprintf(t->id, sizeof(t->id), "%s", name);
	t->pid = pid;
	t->in = want_in ? in[1] : -1;
	in[1] = -1;
	t->out = out[0];
	out[0] = -1;
	t->err = err[0];
	err[0] = -1;
	if (t->in >= 0) {
		fcntl(t->in, F_SETFL, O_NONBLOCK);
		inwin_open(&ctl->inwin, &t->win);
	}
	fcntl(t->out, F_SETFL, O_NONBLOCK);
	fcntl(t->err, F_SETFL, O_NONBLOCK);
	if (json_is_integer(json_object_get(msg, "out_window")) && wire_int(msg, "out_window", 0) > 0) {
		long long w = wire_int(msg, "out_window", 0);

		t->out_window = w < OUT_WINDOW_MIN ? OUT_WINDOW_MIN : w > OUT_WINDOW_MAX ? OUT_WINDOW_MAX : (size_t)w;
	}
	ctl->tasks[ctl->ntasks++] = t;
	ctl->started++;
	t = NULL;
	send_msg(ctl, json_pack("{s:I, s:b, s:i}", "id", id, "ok", 1, "pid", (int)pid));
	goto done;
nomem:
	reply_error(ctl, id, ENOMEM, "task.start: out of memory on %s", job->node);
done:
	for (int k = 0; k < 2; k++) {
		fd_close(&in[k]);
		fd_close(&out[k]);
		fd_close(&err[k]);
	}
	free(t);
	free(argv);
	gded_env_free(envp);
}

/* Tasks whose stdin is still open, among which the pool is shared. */
static size_t tasks_taking_input(const struct gded_ctl *ctl)
{
	size_t n = 0;

	for (size_t i = 0; i < ctl->ntasks; i++)
		n += ctl->tasks[i]->in >= 0 && !ctl->tasks[i]->in_eof;
	return n;
}

/* n bytes of t's stdin (base64, as sent) left gded (taken by the task,
 * or dropped): granted back to its sender, as the job's pool allows. */
static void in_taken(struct gded_ctl *ctl, struct task *t, size_t n)
{
	size_t grant;

	inwin_consume(&ctl->inwin, &t->win, n);
	if (t->reaped || t->in_eof)
		return;   /* its sender sends no more */
	grant = inwin_grant(&ctl->inwin, &t->win, t->in >= 0 && !t->in_eof, tasks_taking_input(ctl));
	if (grant)
		send_msg(ctl, json_pack("{s:s, s:s, s:I}", "op", "task.inack", "task", t->id, "bytes",
					(json_int_t)grant));
}

/* What waits in inbuf for t is dropped (the task closed its stdin, or
 * ended). */
static void in_drop_held(struct gded_ctl *ctl, struct task *t)
{
	size_t held = t->in_held;

	free(t->inbuf);
	t->inbuf = NULL;
	t->inoff = t->inlen = t->in_held = 0;
	in_taken(ctl, t, held);
}

static void on_input(struct gded_ctl *ctl, const json_t *msg)
{
	const char *data = wire_str(msg, "data"), *name = wire_str(msg, "task");
	struct task *t = name ? task_find(ctl, name) : NULL;
	size_t len, n;
	char *buf;

	/* No reply: a task that has just ended takes nothing; one started
	 * without stdin, or that closed it, drops it (granted back, so the
	 * agent's window moves on to its EOF). */
	if (!t || !data)
		return;
	len = strlen(data);
	if (t->in < 0 || t->in_eof || t->inlen - t->inoff + len > IN_MAX) {
		if (t->in >= 0 && !t->in_eof)
			log_warn("job %" PRIu64 ": task.in for %s past the window: dropped",
				 ctl->job->jobid, t->id);
		in_taken(ctl, t, len);
		return;
	}
	if (len == 0) {
		t->in_eof = true;
		if (t->inoff == t->inlen) {
			fd_close(&t->in);
			/* Its sender sends no more: its window goes back. */
			inwin_release(&ctl->inwin, &t->win);
		}
		return;
	}
	if (t->inoff) {
		/* What the task took goes, so the buffer holds only what waits. */
		memmove(t->inbuf, t->inbuf + t->inoff, t->inlen - t->inoff);
		t->inlen -= t->inoff;
		t->inoff = 0;
	}
	buf = realloc(t->inbuf, t->inlen + base64_decoded_max(len));
	if (!buf) {
		in_taken(ctl, t, len);
		return;
	}
	t->inbuf = buf;
	if (base64_decode(data, len, t->inbuf + t->inlen, &n) < 0) {
		log_warn("job %" PRIu64 ": task.in for %s: data is not base64: dropped",
			 ctl->job->jobid, t->id);
		in_taken(ctl, t, len);
		return;
	}
	t->inlen += n;
	t->in_held += len;
}

/* task.outack: qnoded passed on this much of t's output; its pipes are
 * read again below the window. */
static void on_outack(struct gded_ctl *ctl, const json_t *msg)
{
	const char *name = wire_str(msg, "task");
	long long n = wire_int(msg, "bytes", 0);
	struct task *t = name ? task_find(ctl, name) : NULL;

	if (!t || n <= 0)
		return;
	t->out_unacked = (size_t)n >= t->out_unacked ? 0 : t->out_unacked - (size_t)n;
}

static void on_signal_msg(struct gded_ctl *ctl, const json_t *msg)
{
	const char *name = wire_str(msg, "task");
	long long sig = wire_int(msg, "signal", -1);
	struct task *t = name ? task_find(ctl, name) : NULL;

	if (!t || t->reaped || sig < 1 || sig > 64)
		return;
	/* Its process group (it is a session leader); its pid while it has
	 * not reached setsid yet. */
	if (kill(-t->pid, (int)sig) < 0)
		kill(t->pid, (int)sig);
}

static void on_message(struct gded_ctl *ctl, const json_t *msg)
{
	const char *op = wire_str(msg, "op");
	const json_t *idv = json_object_get(msg, "id");
	json_int_t id = json_is_integer(idv) ? json_integer_value(idv) : 0;

	if (op && strcmp(op, "task.in") == 0)
		on_input(ctl, msg);
	else if (op && strcmp(op, "task.signal") == 0)
		on_signal_msg(ctl, msg);
	else if (op && strcmp(op, "task.outack") == 0)
		on_outack(ctl, msg);
	else if (op && strcmp(op, "task.start") == 0 && !json_is_integer(idv))
		reply_error(ctl, 0, EINVAL, "task.start: \"id\" is not an integer");
	else if (op && strcmp(op, "task.start") == 0)
		on_start(ctl, id, msg);
	else if (json_is_integer(idv))
		reply_error(ctl, id, EINVAL, "unknown op \"%.64s\"", op ? op : "(none)");
}

static void on_accept(struct gded_ctl *ctl)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = accept4(ctl->listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != 0) {
		close(fd);
		return;
	}
	/* The newest wins: a qnoded that restarted connects again while its
	 * old connection may not have been seen to end yet. */
	conn_drop(ctl);
	ctl->conn = fd;
	for (size_t i = 0; i < ctl->ntasks; i++)
		task_exit_maybe(ctl, ctl->tasks[i]);
}

static void on_conn(struct gded_ctl *ctl, short revents)
{
	struct error e = { { 0 } };
	json_t *msg;
	ssize_t n;
	int r;

	if (revents & POLLOUT) {
		if (wire_flush(ctl->conn, &ctl->out) < 0) {
			conn_drop(ctl);
			return;
		}
	}
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	n = wire_read(ctl->conn, &ctl->in);
	if (n == -EAGAIN || n == -EINTR)
		return;
	if (n <= 0) {
		conn_drop(ctl);
		return;
	}
	while (ctl->conn >= 0 && (r = wire_next(&ctl->in, &msg, &e)) != 0) {
		if (r < 0) {
			/* A frame that cannot be read: the stream is lost. */
			log_warn("job %" PRIu64 ": control socket: %s: connection dropped",
				 ctl->job->jobid, e.text);
			conn_drop(ctl);
			return;
		}
		on_message(ctl, msg);
		json_decref(msg);
	}
}

/* Reads one chunk of a task's stdout (fd 1) or stderr (fd 2) into a
 * task.out; dropped while nobody is connected. */
static void on_output(struct gded_ctl *ctl, struct task *t, int which)
{
	static char buf[OUT_CHUNK], text[OUT_CHUNK / 3 * 4 + 8];
	int *fd = which == 1 ? &t->out : &t->err;
	ssize_t n = read(*fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		fd_close(fd);
		task_exit_maybe(ctl, t);
		return;
	}
	if (ctl->conn < 0)
		return;
	base64_encode(buf, (size_t)n, text);
	if (t->out_window)
		t->out_unacked += strlen(text);
	send_msg(ctl, json_pack("{s:s, s:s, s:i, s:s}", "op", "task.out", "task", t->id, "fd",
				which, "data", text));
}

static void on_stdin(struct gded_ctl *ctl, struct task *t)
{
	ssize_t n = write(t->in, t->inbuf + t->inoff, t->inlen - t->inoff);
	size_t took;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		/* EPIPE (SIGPIPE is blocked): it closed its stdin. */
		fd_close(&t->in);
		in_drop_held(ctl, t);
		return;
	}
	t->inoff += (size_t)n;
	if (t->inoff == t->inlen) {
		/* All of it: the base64 it came as, whole. */
		free(t->inbuf);
		t->inbuf = NULL;
		t->inoff = t->inlen = 0;
		took = t->in_held;
		if (t->in_eof) {
			fd_close(&t->in);
			inwin_release(&ctl->inwin, &t->win);
		}
	} else {
		/* 3 bytes a 4 of base64; the rest when the buffer empties. */
		took = (size_t)n / 3 * 4;
		if (took > t->in_held)
			took = t->in_held;
	}
	t->in_held -= took;
	in_taken(ctl, t, took);
}

size_t gded_ctl_pollfds(struct gded_ctl *ctl, struct pollfd *pfd)
{
	bool out_full;
	size_t n = 0;

	if (!ctl)
		return 0;
	tasks_prune(ctl);
	out_full = ctl->conn >= 0 && ctl->out.len - ctl->out.off > OUT_HIGH;
	pfd[n] = (struct pollfd){ .fd = ctl->listen, .events = POLLIN };
	ctl->map[n++].kind = PFD_LISTEN;
	for (size_t i = 0; i < ctl->ntasks; i++) {
		struct task *t = ctl->tasks[i];
		/* Past its window, a task's output waits in its pipes (it
		 * blocks), not in qnoded: only its own reader holds it up. */
		bool out_held = out_full || (t->out_window && t->out_unacked >= t->out_window);

		if (t->in >= 0 && t->inlen > t->inoff) {
			pfd[n] = (struct pollfd){ .fd = t->in, .events = POLLOUT };
			ctl->map[n].kind = PFD_IN;
			ctl->map[n++].t = t;
		}
		if (t->out >= 0 && !out_held) {
			pfd[n] = (struct pollfd){ .fd = t->out, .events = POLLIN };
			ctl->map[n].kind = PFD_OUT;
			ctl->map[n++].t = t;
		}
		if (t->err >= 0 && !out_held) {
			pfd[n] = (struct pollfd){ .fd = t->err, .events = POLLIN };
			ctl->map[n].kind = PFD_ERR;
			ctl->map[n++].t = t;
		}
	}
	if (ctl->conn >= 0) {
		pfd[n] = (struct pollfd){ .fd = ctl->conn,
			.events = (short)(POLLIN |
					  (ctl->out.len > ctl->out.off ? POLLOUT : 0)) };
		ctl->map[n++].kind = PFD_CONN;
	}
	ctl->nmap = n;
	return n;
}

void gded_ctl_events(struct gded_ctl *ctl, const struct pollfd *pfd, size_t n)
{
	if (!ctl)
		return;
	/* The connection first: what it brings may name tasks below, which
	 * stay valid (only tasks_prune frees, at the next gded_ctl_pollfds). */
	for (size_t i = 0; i < n && i < ctl->nmap; i++) {
		if (!pfd[i].revents)
			continue;
		if (ctl->map[i].kind == PFD_CONN && ctl->conn == pfd[i].fd)
			on_conn(ctl, pfd[i].revents);
	}
	for (size_t i = 0; i < n && i < ctl->nmap; i++) {
		struct task *t = ctl->map[i].t;

		if (!pfd[i].revents)
			continue;
		switch (ctl->map[i].kind) {
		case PFD_LISTEN:
			on_accept(ctl);
			break;
		case PFD_CONN:
			break;
		case PFD_IN:
			if (t->in == pfd[i].fd)
				on_stdin(ctl, t);
			break;
		case PFD_OUT:
			if (t->out == pfd[i].fd)
				on_output(ctl, t, 1);
			break;
		case PFD_ERR:
			if (t->err == pfd[i].fd)
				on_output(ctl, t, 2);
			break;
		}
	}
}

bool gded_ctl_reaped(struct gded_ctl *ctl, pid_t pid, int status)
{
	for (size_t i = 0; ctl && i < ctl->ntasks; i++) {
		struct task *t = ctl->tasks[i];

		if (t->pid != pid || t->reaped)
			continue;
		t->reaped = true;
		t->status = status;
		fd_close(&t->in);
		in_drop_held(ctl, t);
		inwin_release(&ctl->inwin, &t->win);
		task_exit_maybe(ctl, t);
		return true;
	}
	return false;
}

size_t gded_ctl_live(const struct gded_ctl *ctl)
{
	size_t n = 0;

	for (size_t i = 0; ctl && i < ctl->ntasks; i++)
		n += !ctl->tasks[i]->reaped;
	return n;
}

void gded_ctl_signal_all(struct gded_ctl *ctl, int sig)
{
	for (size_t i = 0; ctl && i < ctl->ntasks; i++) {
		struct task *t = ctl->tasks[i];

		if (t->reaped)
			continue;
		if (kill(-t->pid, sig) < 0)
			kill(t->pid, sig);
	}
}

void gded_ctl_destroy(struct gded_ctl *ctl)
{
	int64_t deadline;

	if (!ctl)
		return;
	/* The job's processes are gone (teardown): what is left in the
	 * pipes is read, every task's end is told, for at most FINISH_MS. */
	deadline = time_mono_ns() + FINISH_MS * NSEC_PER_MSEC;
	for (size_t i = 0; i < ctl->ntasks; i++) {
		struct task *t = ctl->tasks[i];

		for (int which = 1; which <= 2; which++) {
			int *fd = which == 1 ? &t->out : &t->err;

			while (*fd >= 0) {
				int64_t left = (deadline - time_mono_ns()) / NSEC_PER_MSEC;
				struct pollfd p = { .fd = *fd, .events = POLLIN };

				if (left <= 0 || poll(&p, 1, (int)left) <= 0)
					break;
				on_output(ctl, t, which);
			}
		}
		fd_close(&t->out);
		fd_close(&t->err);
		if (!t->reaped) {
			/* Killed with the job, not reaped by us: SIGKILL is
			 * what ended it. */
			t->reaped = true;
			t->status = SIGKILL;
		}
		task_exit_maybe(ctl, t);
	}
	while (ctl->conn >= 0 && ctl->out.len > ctl->out.off) {
		int64_t left = (deadline - time_mono_ns()) / NSEC_PER_MSEC;
		struct pollfd p = { .fd = ctl->conn, .events = POLLOUT };

		if (left <= 0 || poll(&p, 1, (int)left) <= 0 || wire_flush(ctl->conn, &ctl->out) < 0)
			break;
	}
	if (ctl->conn >= 0)
		close(ctl->conn);
	wirebuf_free(&ctl->in);
	wirebuf_free(&ctl->out);
	close(ctl->listen);
	(void)unlink(ctl->path);
	for (size_t i = 0; i < ctl->ntasks; i++)
		task_free(ctl, ctl->tasks[i]);
	free(ctl->tasks);
	free(ctl->map);
	free(ctl);
}
