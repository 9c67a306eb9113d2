/* SPDX-License-Identifier: MIT */
/* Remote starts on this node: one connection per job to its gded's
 * control socket (jobs/<id>.ctl), task.start/in/signal out, the replies
 * and task.out/exit back to the tasks' agents or origins. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "tasks-internal.h"

/* ---- gded's control socket ---- */

void tctl_free(struct ctl *c, const char *why)
{
	struct tasks *ts = c->ts;
	struct ttask *t;

	for (struct ctl **pp = &ts->ctls; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->io = sd_event_source_disable_unref(c->io);
	if (c->fd >= 0)
		close(c->fd);
	wirebuf_free(&c->in);
	wirebuf_free(&c->out);
	while (c->reqs) {
		struct ctl_req *q = c->reqs;

		c->reqs = q->next;
		free(q);
	}
	/* Its tasks on this node can tell no more: they end, killed. Each
	 * ttask_end frees its task: the scan starts again from the head. */
again:
	for (t = ts->tasks; t; t = t->next)
		if (t->jobid == c->jobid && t->kind != TASK_OUT) {
			ttask_end(t, -1, SIGKILL, why);
			goto again;
		}
	free(c);
}

static void ctl_send(struct ctl *c, json_t *msg)
{
	int r;

	if (!msg)
		return;
	if (c->dead || c->ts->stopping) {
		json_decref(msg);
		return;
	}
	r = wire_queue(&c->out, msg);
	json_decref(msg);
	if (r == 0)
		r = wire_flush(c->fd, &c->out);
	if (r < 0) {
		/* Freed by its handler, which the shutdown wakes. */
		log_debug("job %" PRId64 ": control socket: %s", c->jobid, strerror(-r));
		c->dead = true;
		(void)shutdown(c->fd, SHUT_RDWR);
		return;
	}
	(void)sd_event_source_set_io_events(c->io, tasks_io_events(&c->out));
}

/* gded's answer to a task.start: to the agent, or back to the origin. */
static void ctl_start_reply(struct ctl *c, const char *task, json_t *msg)
{
	struct ttask *t = ttask_find(c->ts, c->jobid, task);
	bool ok = wire_bool(msg, "ok", 0);
	const char *err = wire_str(msg, "error");
	json_t *m;

	if (!t) {
		/* Its agent went before it started: nobody will read it. */
		if (ok)
			ctl_send(c, json_pack("{s:s, s:s, s:i}", "op", "task.signal", "task", task, "signal",
					      SIGKILL));
		return;
	}
	if (t->kind == TASK_IN) {
		m = ok ? json_pack("{s:b, s:I}", "ok", 1, "pid", (json_int_t)wire_int(msg, "pid", 0))
		       : json_pack("{s:b, s:s}", "ok", 0, "error", err ? err : "the wrapper refused it");
		if (m) {
			ttask_relay_back(t, "task.started", m);
			json_decref(m);
		}
	} else if (t->agent) {
		struct agent *a = t->agent;

		if (ok)
			task_agent_send(a, json_pack("{s:I, s:b, s:s, s:I}", "id", (json_int_t)a->start_id, "ok", 1,
						"task", t->id, "pid", (json_int_t)wire_int(msg, "pid", 0)));
		else
			task_agent_refuse(a, "%s", err ? err : "the job's wrapper refused the task");
	}
	if (ok)
		t->started = true;
	else
		ttask_free(t);
}

static void ctl_dispatch(struct ctl *c, json_t *msg)
{
	const char *op = wire_str(msg, "op");
	const char *task;
	struct ttask *t;

	if (!op) {
		uint64_t id = (uint64_t)wire_int(msg, "id", 0);

		for (struct ctl_req **pp = &c->reqs; *pp; pp = &(*pp)->next) {
			struct ctl_req *q = *pp;

			if (q->id != id)
				continue;
			*pp = q->next;
			ctl_start_reply(c, q->task, msg);
			free(q);
			return;
		}
		log_debug("job %" PRId64 ": wrapper sent a reply to no request", c->jobid);
		return;
	}
	task = wire_str(msg, "task");
	t = task ? ttask_find(c->ts, c->jobid, task) : NULL;
	if (!t)
		return;   /* a task whose agent has gone */
	if (strcmp(op, "task.out") == 0) {
		ttask_relay_back(t, op, msg);
	} else if (strcmp(op, "task.inack") == 0) {
		ttask_inack(t, msg);
	} else if (strcmp(op, "task.exit") == 0) {
		ttask_relay_back(t, op, msg);
		if (t->agent)
			task_agent_close(t->agent);
		ttask_free(t);
	} else {
		log_debug("job %" PRId64 ": wrapper sent unknown op %.40s", c->jobid, op);
	}
}

static int ctl_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct ctl *c = userdata;
	struct error err = { "" };
	json_t *msg;
	ssize_t n;
	int r;

	if (c->dead) {
		tctl_free(c, "the job's wrapper went away");
		return 0;
	}
	if (revents & EPOLLOUT) {
		r = wire_flush(c->fd, &c->out);
		if (r < 0) {
			tctl_free(c, "the job's wrapper went away");
			return 0;
		}
		(void)sd_event_source_set_io_events(c->io, tasks_io_events(&c->out));
	}
	if (!(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return 0;
	n = wire_read(c->fd, &c->in);
	if (n == -EAGAIN || n == -EINTR)
		return 0;
	if (n <= 0) {
		char why[64];

		snprintf(why, sizeof(why), "job %" PRId64 " ended on %s", c->jobid, c->ts->nd->name);
		tctl_free(c, why);
		return 0;
	}
	while ((r = wire_next(&c->in, &msg, &err)) == 1) {
		ctl_dispatch(c, msg);
		json_decref(msg);
	}
	if (r < 0) {
		log_warn("job %" PRId64 ": wrapper's control socket: %s", c->jobid, err.text);
		tctl_free(c, "the job's wrapper sent garbage");
	}
	return 0;
}

/* Whether a connect error means the job's gded does not listen yet. */
static bool ctl_not_yet(int r)
{
	return r == -ENOENT || r == -ECONNREFUSED || r == -EAGAIN;
}

/* The job's control connection, connecting when there is none (the first
 * task, or after a qnoded restart). -errno when gded does not listen: it
 * makes its socket when asked (jobs_ctl_ask), and one that could not
 * gives -EIO. */
static int ctl_get(struct tasks *ts, int64_t jobid, struct ctl **ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl *c;
	int fd, r;

	for (c = ts->ctls; c; c = c->next)
		if (c->jobid == jobid) {
			*ret = c;
			return 0;
		}
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%" PRId64 ".ctl", ts->nd->jobs_dir, jobid) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	/* Non-blocking from the start: a Unix connect completes at once or
	 * fails (EAGAIN when gded's backlog is full), and never holds the
	 * event loop behind a wrapper that does not accept. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		if (ctl_not_yet(r) && jobs_ctl_ask(ts->nd->jobs, jobid) == -EIO)
			r = -EIO;
		return r;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->ts = ts;
	c->jobid = jobid;
	c->fd = fd;
	r = sd_event_add_io(ts->nd->event, &c->io, fd, EPOLLIN, ctl_on_io, c);
	if (r < 0) {
		close(fd);
		free(c);
		return r;
	}
	c->next = ts->ctls;
	ts->ctls = c;
	*ret = c;
	return 0;
}

/* A new reference to msg's cwd when it is an absolute path, else null
 * (the task starts in the owner's home, as rsh's do). */
json_t *tctl_start_cwd(const json_t *msg)
{
	const char *cwd = wire_str(msg, "cwd");

	return cwd && cwd[0] == '/' ? json_string(cwd) : json_null();
}

/* A new reference to msg's env, or an empty object. */
json_t *tctl_start_env(const json_t *msg)
{
	json_t *env = json_object_get(msg, "env");

	return env ? json_incref(env) : json_object();
}

static int ctl_start_send(struct tasks *ts, struct ttask *t, const json_t *start)
{
	struct ctl_req *q;
	struct ctl *c;
	json_t *m;
	int r;

	r = ctl_get(ts, t->jobid, &c);
	if (r < 0)
		return r;
	q = calloc(1, sizeof(*q));
	m = json_pack("{s:s, s:I, s:I, s:s, s:O, s:o, s:o, s:b}", "op", "task.start", "id",
		      (json_int_t)(c->next_id + 1), "jobid", (json_int_t)t->jobid, "task", t->id,
		      "argv", json_object_get(start, "argv"), "env", tctl_start_env(start),
		      "cwd", tctl_start_cwd(start), "stdin", wire_bool(start, "stdin", 0));
	if (!q || !m) {
		free(q);
		json_decref(m);
		return -ENOMEM;
	}
	/* Windowed when its task.outack will come: always from an agent
	 * here; for another node's, when its qnoded asked for it. */
	if (t->kind == TASK_LOCAL || wire_int(start, "out_window", 0) > 0)
		json_object_set_new(m, "out_window", json_integer(OUT_WINDOW));
	q->id = ++c->next_id;
	snprintf(q->task, sizeof(q->task), "%s", t->id);
	q->next = c->reqs;
	c->reqs = q;
	ctl_send(c, m);
	return 0;
}

/* A start that waited in vain: its agent or origin hears why; t is freed. */
static void ctl_start_failed(struct tasks *ts, struct ttask *t, int r)
{
	char why[200];
	int64_t dispatch;

	if (!jobs_task_check(ts->nd->jobs, t->jobid, &dispatch))
		snprintf(why, sizeof(why), "job %" PRId64 " is ending on %s", t->jobid, ts->nd->name);
	else if (r == -EIO)
		snprintf(why, sizeof(why), "job %" PRId64 " on %s: its wrapper could not make its control socket "
			 "(qnoded's log says why)", t->jobid, ts->nd->name);
	else
		snprintf(why, sizeof(why), "job %" PRId64 " is ending on %s (its wrapper does not answer: %s)",
			 t->jobid, ts->nd->name, strerror(-r));
	if (t->kind == TASK_IN) {
		json_t *m = json_pack("{s:b, s:s}", "ok", 0, "error", why);

		if (m)
			ttask_relay_back(t, "task.started", m);
		json_decref(m);
		ttask_free(t);
		return;
	}
	if (t->agent)
		task_agent_refuse(t->agent, "%s", why);
	ttask_free(t);
}

static int ctl_on_start_retry(sd_event_source *s, uint64_t now, void *userdata)
{
	struct tasks *ts = userdata;
	bool waiting = false;
	struct ttask *t;
	int64_t dispatch;
	json_t *start;
	int r;

	/* A failed start frees its task: the scan starts again from the head. */
again:
	for (t = ts->tasks; t; t = t->next) {
		if (!t->start_pending)
			continue;
		r = jobs_task_check(ts->nd->jobs, t->jobid, &dispatch) ? ctl_start_send(ts, t, t->start_pending)
									 : -ESRCH;
		if (ctl_not_yet(r) && now < t->start_until) {
			waiting = true;
			continue;
		}
		start = t->start_pending;
		t->start_pending = NULL;
		json_decref(start);
		if (r < 0) {
			ctl_start_failed(ts, t, r);
			goto again;
		}
	}
	if (waiting) {
		(void)sd_event_source_set_time_relative(s, START_RETRY_US);
		(void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	}
	return 0;
}

void tasks_ctl_ready(struct noded *nd)
{
	struct tasks *ts = nd->tasks;

	if (!ts || !ts->start_retry)
		return;
	(void)sd_event_source_set_time_relative(ts->start_retry, 0);
	(void)sd_event_source_set_enabled(ts->start_retry, SD_EVENT_ONESHOT);
}

/* Sends task.start for t to its job's gded here, or has it wait for the
 * gded to listen. -errno when it cannot. */
int tctl_task_start(struct tasks *ts, struct ttask *t, const json_t *start)
{
	uint64_t now;
	int r;

	r = ctl_start_send(ts, t, start);
	if (!ctl_not_yet(r) || sd_event_now(ts->nd->event, CLOCK_MONOTONIC, &now) < 0)
		return r;
	t->start_pending = json_deep_copy(start);
	if (!t->start_pending)
		return r;
	t->start_until = now + START_WAIT_US;
	if (!ts->start_retry) {
		if (sd_event_add_time_relative(ts->nd->event, &ts->start_retry, CLOCK_MONOTONIC, START_RETRY_US,
					       10000, ctl_on_start_retry, ts) < 0) {
			ts->start_retry = NULL;
			json_decref(t->start_pending);
			t->start_pending = NULL;
			return r;
		}
		return 0;
	}
	(void)sd_event_source_set_time_relative(ts->start_retry, START_RETRY_US);
	(void)sd_event_source_set_enabled(ts->start_retry, SD_EVENT_ONESHOT);
	return 0;
}

/* task.in / task.signal for a task on this node. */
void tctl_task_pass(struct tasks *ts, struct ttask *t, const char *op, const json_t *msg)
{
	struct ctl *c;
	json_t *m;

	if (ctl_get(ts, t->jobid, &c) < 0)
		return;
	if (strcmp(op, "task.in") == 0)
		m = json_pack("{s:s, s:s, s:s}", "op", op, "task", t->id, "data", wire_str(msg, "data") ?: "");
	else if (strcmp(op, "task.outack") == 0)
		m = json_pack("{s:s, s:s, s:I}", "op", op, "task", t->id, "bytes",
			      (json_int_t)wire_int(msg, "bytes", 0));
	else
		m = json_pack("{s:s, s:s, s:I}", "op", op, "task", t->id, "signal",
			      (json_int_t)wire_int(msg, "signal", SIGTERM));
	ctl_send(c, m);
}

