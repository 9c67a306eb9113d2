/* SPDX-License-Identifier: MIT */
/* Remote starts' tasks and agents, below the routing (tasks.c), the task
 * socket's door (taskdoor.c) and the jobs' control sockets (taskctl.c):
 * finding and freeing them, sending to an agent and closing it, a task's
 * frames relayed back to its agent or origin, the output and input
 * windows, and the pauses and deadlines of agents. A frame to a task's
 * gded goes through ts->pass (taskctl.c's, set by tasks_create). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "peers.h"
#include "taskclient.h"
#include "tasks-internal.h"
#include "timeutil.h"

static bool agent_resume(struct agent *a);
static void tasks_recheck_arm(struct tasks *ts);

/* a's share of what all agents' buffers hold, brought up to date. */
static void agent_out_count(struct agent *a)
{
	size_t pending = a->out.len - a->out.off;

	a->ts->out_total = a->ts->out_total - a->out_counted + pending;
	a->out_counted = pending;
}

/* ---- small helpers ---- */

struct ttask *ttask_find(struct tasks *ts, int64_t jobid, const char *id)
{
	for (struct ttask *t = ts->tasks; t; t = t->next)
		if (t->jobid == jobid && strcmp(t->id, id) == 0)
			return t;
	return NULL;
}

void ttask_free(struct ttask *t)
{
	if (!t)
		return;
	for (struct ttask **pp = &t->ts->tasks; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	if (t->agent && t->agent->task == t)
		t->agent->task = NULL;
	json_decref(t->start_pending);
	free(t);
}

int tasks_io_events(struct wirebuf *out)
{
	return EPOLLIN | (out->len > out->off ? EPOLLOUT : 0);
}

static uint32_t agent_events(const struct agent *a)
{
	return (a->paused ? 0 : EPOLLIN) | (a->out.len > a->out.off ? EPOLLOUT : 0);
}

/* Queues msg (reference stolen) to an agent; drops the agent when it
 * holds too much unread. */
void task_agent_send(struct agent *a, json_t *msg)
{
	int r;

	if (!msg)
		return;
	if (a->dead || a->ts->stopping) {
		json_decref(msg);
		return;
	}
	r = wire_queue(&a->out, msg);
	json_decref(msg);
	if (r == 0 && a->out.len - a->out.off > OUT_MAX)
		r = -ENOBUFS;
	if (r == 0)
		r = wire_flush(a->fd, &a->out);
	agent_out_count(a);
	if (r < 0) {
		/* Freed by its handler (the shutdown wakes it), never under a
		 * caller that may still hold it. */
		log_debug("task agent pid %d: %s: dropped", (int)a->pid, strerror(-r));
		a->dead = true;
		(void)shutdown(a->fd, SHUT_RDWR);
		(void)sd_event_source_set_io_events(a->io, EPOLLIN);
		return;
	}
	(void)sd_event_source_set_io_events(a->io, agent_events(a));
}

/* The one-line refusal, and the agent is closed once it is written. */
void task_agent_refuse(struct agent *a, const char *fmt, ...)
{
	char text[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* Any local user can cause these: ten a minute per uid, then a count. */
	if (peers_log_pass(a->ts->peers, a->uid, a->pid, time_mono_ns()))
		log_info("remote start by pid %d uid %d refused: %s", (int)a->pid, (int)a->uid, text);
	task_agent_send(a, json_pack("{s:I, s:b, s:s}", "id", (json_int_t)a->start_id, "ok", 0, "error", text));
	task_agent_close(a);
}

void task_agent_close(struct agent *a)
{
	uint64_t now;

	if (a->closing)
		return;
	a->closing = true;
	/* All written: the shutdown wakes its handler, which frees it. */
	if (a->out.len == a->out.off) {
		(void)shutdown(a->fd, SHUT_RDWR);
		(void)sd_event_source_set_io_events(a->io, EPOLLIN);
		return;
	}
	/* A peer that does not read its last frame holds a descriptor only
	 * until the deadline. */
	if (sd_event_now(a->ts->nd->event, CLOCK_MONOTONIC, &now) >= 0)
		task_agent_deadline_set(a, now + AGENT_DEADLINE_US);
}

/* A frame for task t that came from where it runs (gded here, or the
 * target through qpoold): to its agent here, or on to its origin. */
void ttask_relay_back(struct ttask *t, const char *op, json_t *msg)
{
	if (t->ts->stopping)
		return;
	if (t->kind == TASK_IN) {
		json_t *fwd = json_deep_copy(msg);

		if (!fwd)
			return;
		json_object_del(fwd, "from");
		json_object_set_new(fwd, "op", json_string(op));
		json_object_set_new(fwd, "jobid", json_integer(t->jobid));
		json_object_set_new(fwd, "dispatch", json_integer(t->dispatch));
		json_object_set_new(fwd, "to", json_string(t->peer));
		json_object_set_new(fwd, "task", json_string(t->id));
		(void)link_notify(t->ts->nd->link, fwd);
		return;
	}
	if (t->agent) {
		json_t *fwd = json_deep_copy(msg);

		if (!fwd)
			return;
		json_object_del(fwd, "from");
		json_object_del(fwd, "to");
		json_object_del(fwd, "dispatch");
		json_object_set_new(fwd, "op", json_string(op));
		task_agent_send(t->agent, fwd);
		if (strcmp(op, "task.out") == 0) {
			t->out_owed += strlen(wire_str(msg, "data") ?: "");
			ttask_out_ack(t);
		}
	}
}

/* Whether t's acknowledgement waits on all of qnoded (the agents' total,
 * or the link): then the recheck timer tries again. */
static bool out_ack_try(struct ttask *t)
{
	struct tasks *ts = t->ts;
	json_t *m;

	if (!t->out_owed || ts->stopping)
		return false;
	if (t->kind == TASK_IN) {
		if (link_pending(ts->nd->link) >= LINK_OUT_HIGH)
			return true;
		m = json_pack("{s:I}", "bytes", (json_int_t)t->out_owed);
		if (m && t->started)
			ts->pass(ts, t, "task.outack", m);
		json_decref(m);
		t->out_owed = 0;
		return false;
	}
	/* Its own agent's buffer: that agent's next write tries again. */
	if (!t->agent || t->agent->dead || t->agent->out.len - t->agent->out.off > OUT_ACK_BELOW)
		return false;
	if (ts->out_total > OUT_TOTAL_MAX)
		return true;
	if (t->kind == TASK_LOCAL) {
		m = json_pack("{s:I}", "bytes", (json_int_t)t->out_owed);
		if (m)
			ts->pass(ts, t, "task.outack", m);
		json_decref(m);
	} else {
		(void)link_notify(ts->nd->link,
				  json_pack("{s:s, s:I, s:I, s:s, s:s, s:I}", "op", "task.outack", "jobid",
					    (json_int_t)t->jobid, "dispatch", (json_int_t)t->dispatch, "to",
					    t->peer, "task", t->id, "bytes", (json_int_t)t->out_owed));
	}
	t->out_owed = 0;
	return false;
}

void ttask_out_ack(struct ttask *t)
{
	if (out_ack_try(t))
		tasks_recheck_arm(t->ts);
}

void ttask_inack(struct ttask *t, const json_t *msg)
{
	long long n = wire_int(msg, "bytes", 0);

	if (n <= 0)
		return;
	if (t->kind == TASK_IN) {
		ttask_relay_back(t, "task.inack", (json_t *)msg);
		return;
	}
	taskclient_window_ack(&t->in_flight, n);
	if (t->agent) {
		task_agent_send(t->agent, json_pack("{s:s, s:I}", "op", "task.inack", "bytes", (json_int_t)n));
		agent_resume(t->agent);
	}
}

/* The task is over (or could not be reached): its agent or origin hears
 * task.exit once, and it is forgotten. */
void ttask_end(struct ttask *t, int status, int sig, const char *why)
{
	json_t *m = json_object();

	if (m) {
		if (sig > 0)
			json_object_set_new(m, "signal", json_integer(sig));
		else
			json_object_set_new(m, "status", json_integer(status));
		if (why)
			json_object_set_new(m, "error", json_string(why));
		ttask_relay_back(t, "task.exit", m);
		json_decref(m);
	}
	if (t->agent)
		task_agent_close(t->agent);
	ttask_free(t);
}

/* Arms the deadline timer for a's deadline at usec, unless it is armed
 * for earlier (deadlines only grow: every one is now + the same delay). */
void task_agent_deadline_set(struct agent *a, uint64_t usec)
{
	struct tasks *ts = a->ts;
	int on = SD_EVENT_OFF;

	a->deadline = usec;
	(void)sd_event_source_get_enabled(ts->deadline, &on);
	if (on != SD_EVENT_OFF)
		return;
	(void)sd_event_source_set_time(ts->deadline, usec);
	(void)sd_event_source_set_enabled(ts->deadline, SD_EVENT_ONESHOT);
}

int task_agent_flush(struct agent *a)
{
	int r = wire_flush(a->fd, &a->out);

	if (r < 0)
		return r;
	agent_out_count(a);
	(void)sd_event_source_set_io_events(a->io, agent_events(a));
	if (a->task)
		ttask_out_ack(a->task);
	return 0;
}

void task_agent_free(struct agent *a)
{
	struct tasks *ts = a->ts;
	struct ttask *t = a->task;

	for (struct agent **pp = &ts->agents; *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			ts->n_agents--;
			ts->out_total -= a->out_counted;
			peers_conn_del(ts->peers, a->uid);
			if (a->in_counted)
				(void)peers_input_add(ts->peers, a->uid, -(int64_t)a->in_counted);
			break;
		}
	/* Its task still runs and nobody can see it: it is killed, as a
	 * remote command is when its rsh goes away. */
	if (t) {
		json_t *sig = json_pack("{s:i}", "signal", SIGKILL);

		if (t->started && sig && !ts->stopping) {
			if (t->kind == TASK_LOCAL)
				ts->pass(ts, t, "task.signal", sig);
			else
				(void)link_notify(ts->nd->link,
						  json_pack("{s:s, s:I, s:I, s:s, s:s, s:i}", "op", "task.signal",
							    "jobid", (json_int_t)t->jobid, "dispatch",
							    (json_int_t)t->dispatch, "to", t->peer, "task", t->id,
							    "signal", SIGKILL));
		}
		json_decref(sig);
		t->agent = NULL;
		ttask_free(t);
	}
	a->io = sd_event_source_disable_unref(a->io);
	if (a->fd >= 0)
		close(a->fd);
	if (a->pidfd >= 0)
		close(a->pidfd);
	wirebuf_free(&a->in);
	wirebuf_free(&a->out);
	free(a);
}

/* Bytes waiting for the next hop of a's task. */
static size_t agent_next_hop_pending(struct agent *a)
{
	struct ttask *t = a->task;

	if (!t || !t->started)
		return 0;
	if (t->kind == TASK_OUT)
		return link_pending(a->ts->nd->link);
	for (struct ctl *c = a->ts->ctls; c; c = c->next)
		if (c->jobid == t->jobid)
			return c->out.len - c->out.off;
	return 0;
}

bool task_agent_full(struct agent *a)
{
	return agent_next_hop_pending(a) >= IN_PAUSE;
}

static int agents_on_recheck(sd_event_source *s, uint64_t usec, void *userdata);

/* The timer that looks again at paused agents and held acknowledgements,
 * armed unless it is already (a later call must not push it back).
 * Whether it is armed. */
static bool tasks_recheck_arm_ok(struct tasks *ts)
{
	int on = SD_EVENT_OFF;

	if (!ts->recheck) {
		if (sd_event_add_time_relative(ts->nd->event, &ts->recheck, CLOCK_MONOTONIC, IN_RECHECK_US, 1000,
					       agents_on_recheck, ts) < 0) {
			ts->recheck = NULL;
			return false;
		}
		return true;
	}
	if (sd_event_source_get_enabled(ts->recheck, &on) >= 0 && on != SD_EVENT_OFF)
		return true;
	(void)sd_event_source_set_time_relative(ts->recheck, IN_RECHECK_US);
	return sd_event_source_set_enabled(ts->recheck, SD_EVENT_ONESHOT) >= 0;
}

static void tasks_recheck_arm(struct tasks *ts)
{
	(void)tasks_recheck_arm_ok(ts);
}

void task_agent_pause(struct agent *a)
{
	a->paused = true;
	(void)sd_event_source_set_io_events(a->io, agent_events(a));
	if (!tasks_recheck_arm_ok(a->ts)) {
		/* No timer: read on, unpaused, rather than stall. */
		a->paused = false;
		(void)sd_event_source_set_io_events(a->io, agent_events(a));
	}
}

/* Reads a again once its task's next hop has room. */
static bool agent_resume(struct agent *a)
{
	if (!a->paused || task_agent_full(a))
		return false;
	a->paused = false;
	(void)sd_event_source_set_io_events(a->io, agent_events(a));
	return true;
}

static int agents_on_recheck(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct tasks *ts = userdata;
	bool any = false;

	for (struct agent *a = ts->agents; a; a = a->next) {
		if (!a->paused)
			continue;
		if (!agent_resume(a))
			any = true;
	}
	for (struct ttask *t = ts->tasks; t; t = t->next)
		if (out_ack_try(t))
			any = true;
	if (any) {
		(void)sd_event_source_set_time_relative(s, IN_RECHECK_US);
		(void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	}
	return 0;
}
