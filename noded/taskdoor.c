/* SPDX-License-Identifier: MIT */
/* The task socket's door: who may connect (a share per uid, sized from
 * RLIMIT_NOFILE), for how long without a task.start, and how often a
 * refusal is logged. What the agents then say is noded/tasks.c's. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "peers.h"
#include "tasks-internal.h"
#include "timeutil.h"

/* Agents past their deadline: refused (no task.start came) or freed (a
 * closing one whose peer does not read); then the next deadline. */
static int door_on_deadline(sd_event_source *s, uint64_t now, void *userdata)
{
	struct tasks *ts = userdata;
	uint64_t next = 0;
	struct agent *a, *an;

	for (a = ts->agents; a; a = an) {
		an = a->next;
		if (!a->deadline)
			continue;
		if (a->deadline > now) {
			next = !next || a->deadline < next ? a->deadline : next;
			continue;
		}
		if (a->closing || a->dead) {
			task_agent_free(a);
			continue;
		}
		a->deadline = 0;
		task_agent_refuse(a, "no task.start within %llu s of connecting",
				  (unsigned long long)(AGENT_DEADLINE_US / 1000000));
		if (a->deadline)
			next = !next || a->deadline < next ? a->deadline : next;
	}
	if (next) {
		(void)sd_event_source_set_time(s, next);
		(void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	}
	return 0;
}

static void door_suppressed_log(uid_t uid, pid_t pid, unsigned count, void *userdata)
{
	if (uid == (uid_t)-1)
		log_info("task socket: %u more failed accepts in the last minute not logged", count);
	else
		log_info("task socket: %u more refusals of uid %d (last pid %d) in the last minute not logged",
			 count, (int)uid, (int)pid);
}

static int door_on_log_flush(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct tasks *ts = userdata;

	peers_log_flush(ts->peers, time_mono_ns(), door_suppressed_log, ts);
	(void)sd_event_source_set_time_relative(s, LOG_FLUSH_US);
	(void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

static int door_on_accept_pause(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct tasks *ts = userdata;

	(void)sd_event_source_set_enabled(ts->listen_src, SD_EVENT_ON);
	return 0;
}

/* Refuses a connection before it is an agent: one frame with the line
 * (id 0: its task.start was not read) and the connection is closed. */
static void door_refuse(struct tasks *ts, int fd, const struct ucred *cred, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void door_refuse(struct tasks *ts, int fd, const struct ucred *cred, const char *fmt, ...)
{
	struct wirebuf out = { 0 };
	char text[200], junk[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (peers_log_pass(ts->peers, cred->uid, cred->pid, time_mono_ns()))
		log_warn("task socket: pid %d uid %d refused: %s", (int)cred->pid, (int)cred->uid, text);
	/* A new socket's buffer takes the one frame; what the peer sent is
	 * read first, so the close is an end of file, not a reset. */
	if (wire_queue(&out, json_pack("{s:i, s:b, s:s}", "id", 0, "ok", 0, "error", text)) == 0)
		(void)wire_flush(fd, &out);
	wirebuf_free(&out);
	(void)read(fd, junk, sizeof(junk));
	close(fd);
}

static int door_on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct tasks *ts = userdata;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct agent *a;
	unsigned share = ts->agents_max / AGENTS_UID_SHARE;
	uint64_t now;
	int cfd, r;

	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0) {
		if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM)
			return 0;
		/* The connection waits in the backlog: not watched for a while,
		 * rather than woken at once, again and again. */
		if (peers_log_pass(ts->peers, (uid_t)-1, 0, time_mono_ns()))
			log_warn("task socket: cannot accept: %m; paused for %d ms", ACCEPT_PAUSE_US / 1000);
		(void)sd_event_source_set_enabled(ts->listen_src, SD_EVENT_OFF);
		(void)sd_event_source_set_time_relative(ts->accept_pause, ACCEPT_PAUSE_US);
		(void)sd_event_source_set_enabled(ts->accept_pause, SD_EVENT_ONESHOT);
		return 0;
	}
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 0) {
		close(cfd);
		return 0;
	}
	if (ts->n_agents >= ts->agents_max - (cred.uid == 0 ? 0 : AGENTS_ROOT_RESERVE)) {
		door_refuse(ts, cfd, &cred, "node %s has %u connections to its task socket; at most %u",
				  ts->nd->name, ts->n_agents, ts->agents_max);
		return 0;
	}
	r = peers_conn_add(ts->peers, cred.uid, share ? share : 1);
	if (r < 0) {
		door_refuse(ts, cfd, &cred, "uid %d holds %u connections to node %s's task socket; at most %u",
				  (int)cred.uid, peers_conns(ts->peers, cred.uid), ts->nd->name, share ? share : 1);
		return 0;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		peers_conn_del(ts->peers, cred.uid);
		close(cfd);
		return 0;
	}
	a->ts = ts;
	a->fd = cfd;
	a->pid = cred.pid;
	a->uid = cred.uid;
	/* Held from now: the pid cannot be recycled under the look-up. */
	a->pidfd = (int)syscall(SYS_pidfd_open, cred.pid, 0);
	r = a->pidfd < 0 ? -errno : 0;
	a->next = ts->agents;
	ts->agents = a;
	ts->n_agents++;
	if (sd_event_add_io(ts->nd->event, &a->io, cfd, EPOLLIN, ts->agent_io, a) < 0) {
		task_agent_free(a);
		return 0;
	}
	if (r == -EMFILE || r == -ENFILE) {
		task_agent_refuse(a, "node %s is out of file descriptors; try again later", ts->nd->name);
		return 0;
	}
	if (r < 0) {
		task_agent_refuse(a, "pid %d went away", (int)a->pid);
		return 0;
	}
	if (sd_event_now(ts->nd->event, CLOCK_MONOTONIC, &now) >= 0)
		task_agent_deadline_set(a, now + AGENT_DEADLINE_US);
	return 0;
}

int taskdoor_open(struct tasks *ts, sd_event_io_handler_t agent_io, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct rlimit rl;
	int r;

	/* qnoded raised its soft limit to the hard one at start (main.c): two
	 * descriptors an agent, in a quarter of them. */
	ts->agents_max = AGENTS_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 4 < AGENTS_MAX)
		ts->agents_max = rl.rlim_cur / 4 > 4 * AGENTS_ROOT_RESERVE ? (unsigned)(rl.rlim_cur / 4)
									   : 4 * AGENTS_ROOT_RESERVE;
	ts->agent_io = agent_io;
	r = peers_create(&ts->peers);
	if (r < 0)
		return error_set(err, r, "out of memory");
	r = sd_event_add_time(ts->nd->event, &ts->deadline, CLOCK_MONOTONIC, 0, 100000, door_on_deadline, ts);
	if (r >= 0)
		r = sd_event_source_set_enabled(ts->deadline, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_time_relative(ts->nd->event, &ts->accept_pause, CLOCK_MONOTONIC, ACCEPT_PAUSE_US,
					       10000, door_on_accept_pause, ts);
	if (r >= 0)
		r = sd_event_source_set_enabled(ts->accept_pause, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_time_relative(ts->nd->event, &ts->log_flush, CLOCK_MONOTONIC, LOG_FLUSH_US,
					       1000000, door_on_log_flush, ts);
	if (r < 0)
		return error_set(err, r, "timers: %s", strerror(-r));
	if ((size_t)snprintf(ts->path, sizeof(ts->path), "%s/task.sock", ts->nd->node_dir) >= sizeof(ts->path)) {
		return error_set(err, -ENAMETOOLONG, "%s/task.sock: path too long for a socket", ts->nd->node_dir);
	}
	memcpy(sa.sun_path, ts->path, sizeof(ts->path));
	ts->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ts->listen_fd < 0) {
		return error_set(err, -errno, "socket: %m");
	}
	(void)unlink(ts->path);
	if (bind(ts->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		return error_set(err, -errno, "cannot bind %s: %m", ts->path);
	}
	/* Every job's processes may call; who they are comes from the
	 * kernel (SO_PEERCRED and the caller's cgroup), not from the mode. */
	if (chmod(ts->path, 0666) < 0 || listen(ts->listen_fd, 128) < 0) {
		return error_set(err, -errno, "%s: %m", ts->path);
	}
	r = sd_event_add_io(ts->nd->event, &ts->listen_src, ts->listen_fd, EPOLLIN, door_on_accept, ts);
	if (r < 0)
		return error_set(err, r, "%s: %s", ts->path, strerror(-r));
	return 0;
}

void taskdoor_close(struct tasks *ts)
{
	ts->listen_src = sd_event_source_disable_unref(ts->listen_src);
	ts->deadline = sd_event_source_disable_unref(ts->deadline);
	ts->accept_pause = sd_event_source_disable_unref(ts->accept_pause);
	ts->log_flush = sd_event_source_disable_unref(ts->log_flush);
	peers_destroy(ts->peers);
	ts->peers = NULL;
	if (ts->listen_fd >= 0) {
		close(ts->listen_fd);
		(void)unlink(ts->path);
	}
	ts->listen_fd = -1;
}
