/* SPDX-License-Identifier: MIT */
/* Remote starts: what the jobs' agents say on the task socket (who may
 * connect is noded/taskdoor.c's), and the routing of task.* between
 * them, the jobs' gded control sockets and qpoold (the tasks and agents
 * themselves, and relaying back to them: noded/taskrelay.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "peers.h"
#include "taskclient.h"
#include "tasks-internal.h"
#include "timeutil.h"

/* ---- the caller's job ---- */

/* Whether pid is listed in the cgroup.procs of dir. */
static bool procs_contain(const char *dir, pid_t pid)
{
	char path[PATH_MAX], line[32];
	bool found = false;
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = atol(line) == (long)pid;
	fclose(f);
	return found;
}

/* Never from the environment, which the caller writes (noded.h). */
int tasks_job_of_pid(const struct noded *nd, pid_t pid, int64_t *ret)
{
	char path[PATH_MAX], needle[PATH_MAX], line[PATH_MAX + 64];
	int r = -ESRCH;
	FILE *f;

	if (nd->cgroup_mode == CGROUP_MODE_NONE)
		return -EOPNOTSUPP;
	snprintf(path, sizeof(path), "%s/%d/cgroup", nd->proc_root, (int)pid);
	if ((size_t)snprintf(needle, sizeof(needle), "/%s/job.", nd->cgroup_parent) >= sizeof(needle))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (r == -ESRCH && fgets(line, sizeof(line), f)) {
		char *ctrl, *cgpath, *hit, *end, dir[PATH_MAX];
		int n;
		long long id;

		line[strcspn(line, "\n")] = '\0';
		ctrl = strchr(line, ':');
		cgpath = ctrl ? strchr(ctrl + 1, ':') : NULL;
		if (!cgpath)
			continue;
		*cgpath++ = '\0';
		ctrl++;
		if (nd->cgroup_mode == CGROUP_MODE_V2 ? *ctrl != '\0' : strcmp(ctrl, "memory") != 0)
			continue;
		hit = strstr(cgpath, needle);
		if (!hit)
			continue;
		errno = 0;
		id = strtoll(hit + strlen(needle), &end, 10);
		if (errno || id <= 0 || end == hit + strlen(needle) || (*end && *end != '/'))
			continue;
		n = snprintf(dir, sizeof(dir), "%s%s/%s/job.%lld%s", nd->config->cgroup_root,
			     nd->cgroup_mode == CGROUP_MODE_V2 ? "" : "/memory", nd->cgroup_parent, id, end);
		if (n > 0 && (size_t)n < sizeof(dir) && procs_contain(dir, pid)) {
			*ret = id;
			r = 0;
		}
	}
	fclose(f);
	return r;
}

/* The job's spec (jobs/<id>.json, root's): its owner and nodes. */
static int spec_read(struct tasks *ts, int64_t jobid, json_t **ret)
{
	return jobfile_spec_read(ts->nd->jobs_dirfd, jobid, ret);
}

/* Whether host names a node of the job: this node, or an entry of its
 * allocation (`alloc`, docs/PARALLEL.md). */
static bool spec_has_node(const json_t *spec, const char *host)
{
	json_t *alloc = json_object_get(spec, "alloc"), *e;
	size_t i;

	if (strcmp(wire_str(spec, "node") ?: "", host) == 0)
		return true;
	json_array_foreach(alloc, i, e)
		if (strcmp(wire_str(e, "node") ?: "", host) == 0)
			return true;
	return false;
}

/* argv: a non-empty array of strings; env: an object of strings; cwd: a
 * string. NULL when well-formed, else what is wrong. */
static const char *start_malformed(const json_t *msg)
{
	json_t *argv = json_object_get(msg, "argv"), *env = json_object_get(msg, "env"), *v;
	const char *k;
	size_t i;

	if (!json_is_array(argv) || json_array_size(argv) == 0)
		return "task.start needs argv, a non-empty array of strings";
	json_array_foreach(argv, i, v)
		if (!json_is_string(v))
			return "task.start needs argv, a non-empty array of strings";
	if (env && !json_is_object(env))
		return "task.start: env must be an object of strings";
	json_object_foreach(env, k, v)
		if (!json_is_string(v))
			return "task.start: env must be an object of strings";
	if (json_object_get(msg, "cwd") && !json_is_string(json_object_get(msg, "cwd")))
		return "task.start: cwd must be a string";
	return NULL;
}

/* ---- the agents ---- */

/* qpoold's answer to a task.start sent on for an agent here. */
static void out_start_reply(struct noded *nd, const json_t *reply, int64_t serial)
{
	struct tasks *ts = nd->tasks;
	struct ttask *t;

	for (t = ts->tasks; t; t = t->next)
		if (t->kind == TASK_OUT && t->serial == (uint64_t)serial)
			break;
	if (!t || wire_bool(reply, "ok", 0))
		return;   /* routed: task.started follows from the target */
	if (t->agent)
		task_agent_refuse(t->agent, "%s", reply ? wire_str(reply, "error") ?: "qpoold refused the task"
						   : "lost qpoold before it routed the task");
	ttask_free(t);
}

static void agent_start(struct agent *a, json_t *msg)
{
	struct tasks *ts = a->ts;
	struct noded *nd = ts->nd;
	const char *host = wire_str(msg, "host"), *bad;
	json_t *spec = NULL;
	int64_t jobid = 0, dispatch = 0;
	struct ttask *t;
	int r;

	a->start_id = wire_int(msg, "id", 0);
	a->deadline = 0;
	if (!host || !*host || strlen(host) >= NODED_NAME_MAX) {
		task_agent_refuse(a, "task.start needs host, a node name");
		return;
	}
	if ((bad = start_malformed(msg))) {
		task_agent_refuse(a, "%s", bad);
		return;
	}
	r = tasks_job_of_pid(nd, a->pid, &jobid);
	if (r == -EOPNOTSUPP) {
		task_agent_refuse(a, "node %s runs jobs without cgroups: it cannot tell which job a caller is in, so it starts no remote tasks",
			     nd->name);
		return;
	}
	/* The pid was the caller's when it connected: if it is gone, the
	 * cgroup read may be a recycled pid's. */
	if (r == 0 && syscall(SYS_pidfd_send_signal, a->pidfd, 0, NULL, 0) < 0)
		r = -ESRCH;
	if (r < 0) {
		task_agent_refuse(a, "pid %d is not in a job of node %s", (int)a->pid, nd->name);
		return;
	}
	if (!jobs_task_check(nd->jobs, jobid, &dispatch) || spec_read(ts, jobid, &spec) < 0) {
		task_agent_refuse(a, "job %" PRId64 " is ending on %s", jobid, nd->name);
		return;
	}
	if (wire_int(spec, "uid", -1) != (long long)a->uid) {
		task_agent_refuse(a, "uid %d is not the owner of job %" PRId64, (int)a->uid, jobid);
		goto done;
	}
	if (!spec_has_node(spec, host)) {
		task_agent_refuse(a, "%s is not a node of job %" PRId64, host, jobid);
		goto done;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		task_agent_refuse(a, "qnoded is out of memory");
		goto done;
	}
	t->ts = ts;
	t->jobid = jobid;
	t->dispatch = dispatch;
	t->agent = a;
	/* Unique in the job: the node, this qnoded's pid (a restarted one
	 * must not reuse a running task's name), a counter. */
	snprintf(t->id, sizeof(t->id), "%s/%d.%" PRIu64, nd->name, (int)getpid(), ++ts->next_task);
	t->next = ts->tasks;
	ts->tasks = t;
	a->task = t;
	if (strcmp(host, nd->name) == 0) {
		t->kind = TASK_LOCAL;
		r = tctl_task_start(ts, t, msg);
		if (r < 0) {
			ttask_free(t);
			task_agent_refuse(a, "job %" PRId64 " is ending on %s (its wrapper does not answer: %s)", jobid,
				     nd->name, strerror(-r));
		}
		goto done;
	}
	t->kind = TASK_OUT;
	snprintf(t->peer, sizeof(t->peer), "%s", host);
	t->serial = ++ts->next_serial;
	r = link_call(nd->link,
		      json_pack("{s:s, s:I, s:I, s:s, s:s, s:O, s:o, s:o, s:b, s:I}", "op", "task.start", "jobid",
				(json_int_t)jobid, "dispatch", (json_int_t)dispatch, "to", host, "task", t->id,
				"argv", json_object_get(msg, "argv"), "env", tctl_start_env(msg), "cwd",
				tctl_start_cwd(msg), "stdin", wire_bool(msg, "stdin", 0), "out_window",
				(json_int_t)OUT_WINDOW),
		      out_start_reply, (int64_t)t->serial);
	if (r < 0) {
		ttask_free(t);
		task_agent_refuse(a, "node %s cannot reach qpoold now, so not %s", nd->name, host);
	}
done:
	json_decref(spec);
}

static void agent_dispatch(struct agent *a, json_t *msg)
{
	const char *op = wire_str(msg, "op");
	struct ttask *t = a->task;

	if (!op) {
		task_agent_refuse(a, "a message without op");
		return;
	}
	if (!a->start_id) {
		if (strcmp(op, "task.start") == 0 && wire_int(msg, "id", 0) > 0)
			agent_start(a, msg);
		else
			task_agent_refuse(a, "the first message must be task.start with an id");
		return;
	}
	if (strcmp(op, "task.in") != 0 && strcmp(op, "task.signal") != 0)
		return;   /* nothing else is an agent's to send */
	if (!t || !t->started)
		return;
	if (strcmp(op, "task.signal") == 0) {
		long long sig = wire_int(msg, "signal", 0);

		if (sig <= 0 || sig >= NSIG)
			return;
	}
	/* Until its gded grants it back (task.inack). What gded holds of
	 * the job's stdin is bounded only if every sender keeps to its
	 * window (taskclient.h): this count is the agent's own, grants
	 * seen here first, so one past it broke the protocol. Its task is
	 * killed (agent_free, once the line is out), as when it goes. */
	if (strcmp(op, "task.in") == 0) {
		t->in_flight += (long long)strlen(wire_str(msg, "data") ?: "");
		if (t->in_flight > (long long)TASKCLIENT_IN_START) {
			/* A line per hostile agent: capped per uid as the
			 * socket's refusals are (taskdoor.c). */
			if (peers_log_pass(a->ts->peers, a->uid, a->pid, time_mono_ns()))
				log_warn("job %" PRId64 ": agent pid %d sent %s's stdin past its window: its task is killed",
					 t->jobid, (int)a->pid, t->id);
			task_agent_send(a, json_pack("{s:s, s:i, s:s}", "op", "task.exit", "signal", SIGKILL, "error",
						     "stdin sent past its window: the task is killed"));
			task_agent_close(a);
			return;
		}
	}
	if (t->kind == TASK_LOCAL) {
		tctl_task_pass(a->ts, t, op, msg);
		return;
	}
	(void)link_notify(a->ts->nd->link,
			  strcmp(op, "task.in") == 0
				  ? json_pack("{s:s, s:I, s:I, s:s, s:s, s:s}", "op", op, "jobid", (json_int_t)t->jobid,
					      "dispatch", (json_int_t)t->dispatch, "to", t->peer, "task", t->id,
					      "data", wire_str(msg, "data") ?: "")
				  : json_pack("{s:s, s:I, s:I, s:s, s:s, s:I}", "op", op, "jobid", (json_int_t)t->jobid,
					      "dispatch", (json_int_t)t->dispatch, "to", t->peer, "task", t->id,
					      "signal", (json_int_t)wire_int(msg, "signal", 0)));
}

/* Counts a's input buffer in its uid's; false when that is past
 * AGENTS_UID_INPUT and a holds more than a well-behaved agent would. */
static bool agent_input_ok(struct agent *a)
{
	uint64_t total;

	if (a->in.cap == a->in_counted)
		return true;
	total = peers_input_add(a->ts->peers, a->uid, (int64_t)a->in.cap - (int64_t)a->in_counted);
	a->in_counted = a->in.cap;
	return a->uid == 0 || total <= AGENTS_UID_INPUT || a->in.cap <= AGENT_INPUT_SMALL;
}

int task_agent_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct agent *a = userdata;
	struct error err = { "" };
	json_t *msg;
	ssize_t n;
	int r;

	if (a->dead) {
		task_agent_free(a);
		return 0;
	}
	if (revents & EPOLLOUT) {
		if (task_agent_flush(a) < 0) {
			task_agent_free(a);
			return 0;
		}
	}
	if (a->closing && a->out.len == a->out.off) {
		task_agent_free(a);
		return 0;
	}
	if (!(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return 0;
	n = wire_read(a->fd, &a->in);
	if (n == -EAGAIN || n == -EINTR)
		return 0;
	if (n <= 0) {
		task_agent_free(a);
		return 0;
	}
	if (!agent_input_ok(a)) {
		task_agent_refuse(a, "uid %d holds more than %u MiB of unfinished messages on node %s's task socket",
				  (int)a->uid, AGENTS_UID_INPUT >> 20, a->ts->nd->name);
		return 0;
	}
	r = 0;
	while (!a->closing && !a->dead && (r = wire_next(&a->in, &msg, &err)) == 1) {
		agent_dispatch(a, msg);
		json_decref(msg);
	}
	if (!a->closing && !a->dead && r < 0)
		task_agent_refuse(a, "%s", err.text);
	else if (!a->closing && !a->dead && task_agent_full(a))
		task_agent_pause(a);
	return 0;
}

/* ---- frames from qpoold ---- */

/* A task.start another node's agent asked for, to run here. */
static void link_task_start(struct tasks *ts, const json_t *msg)
{
	struct noded *nd = ts->nd;
	const char *from = wire_str(msg, "from"), *task = wire_str(msg, "task"), *bad;
	int64_t jobid = wire_int(msg, "jobid", 0), dispatch = 0;
	char why[160] = "";
	struct ttask *t;
	int r;

	if (!from || !task || jobid <= 0 || strlen(from) >= NODED_NAME_MAX || strlen(task) >= TASK_ID_MAX ||
	    ttask_find(ts, jobid, task)) {
		log_warn("qpoold sent a task.start without from, task or jobid, or a task already known: ignored");
		return;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return;
	t->ts = ts;
	t->kind = TASK_IN;
	t->jobid = jobid;
	t->dispatch = wire_int(msg, "dispatch", 0);
	snprintf(t->id, sizeof(t->id), "%s", task);
	snprintf(t->peer, sizeof(t->peer), "%s", from);
	t->next = ts->tasks;
	ts->tasks = t;
	if ((bad = start_malformed(msg)))
		snprintf(why, sizeof(why), "%s", bad);
	else if (!jobs_task_check(nd->jobs, jobid, &dispatch) || (t->dispatch && dispatch && dispatch != t->dispatch))
		snprintf(why, sizeof(why), "job %" PRId64 " is ending on %s", jobid, nd->name);
	else if ((r = tctl_task_start(ts, t, msg)) < 0)
		snprintf(why, sizeof(why), "job %" PRId64 " is ending on %s (its wrapper does not answer: %s)",
			 jobid, nd->name, strerror(-r));
	if (why[0]) {
		json_t *m = json_pack("{s:b, s:s}", "ok", 0, "error", why);

		if (m) {
			ttask_relay_back(t, "task.started", m);
			json_decref(m);
		}
		ttask_free(t);
	}
}

void tasks_link_frame(struct tasks *ts, const char *op, const json_t *msg)
{
	const char *task = wire_str(msg, "task");
	int64_t jobid = wire_int(msg, "jobid", 0);
	struct ttask *t;

	if (!ts)
		return;
	if (strcmp(op, "task.start") == 0) {
		link_task_start(ts, msg);
		return;
	}
	t = task && jobid > 0 ? ttask_find(ts, jobid, task) : NULL;
	if (!t) {
		const char *from = wire_str(msg, "from");

		/* Started for an agent that has gone meanwhile: nobody will
		 * read it, so it is stopped. */
		if (strcmp(op, "task.started") == 0 && wire_bool(msg, "ok", 0) && from)
			(void)link_notify(ts->nd->link,
					  json_pack("{s:s, s:I, s:I, s:s, s:s, s:i}", "op", "task.signal", "jobid",
						    (json_int_t)jobid, "dispatch",
						    (json_int_t)wire_int(msg, "dispatch", 0), "to", from, "task",
						    task, "signal", SIGKILL));
		return;
	}
	if (t->kind == TASK_IN && (strcmp(op, "task.in") == 0 || strcmp(op, "task.signal") == 0)) {
		if (t->started)
			tctl_task_pass(ts, t, op, msg);
		return;
	}
	if (t->kind == TASK_IN && strcmp(op, "task.outack") == 0) {
		long long n = wire_int(msg, "bytes", 0);

		if (n > 0 && t->started) {
			t->out_owed += (size_t)n;
			ttask_out_ack(t);
		}
		return;
	}
	if (t->kind != TASK_OUT || !t->agent)
		return;
	if (strcmp(op, "task.started") == 0) {
		struct agent *a = t->agent;

		if (wire_bool(msg, "ok", 0)) {
			t->started = true;
			task_agent_send(a, json_pack("{s:I, s:b, s:s, s:I}", "id", (json_int_t)a->start_id, "ok", 1,
						"task", t->id, "pid", (json_int_t)wire_int(msg, "pid", 0)));
		} else {
			ttask_free(t);
			task_agent_refuse(a, "%s", wire_str(msg, "error") ?: "refused");
		}
	} else if (strcmp(op, "task.out") == 0) {
		ttask_relay_back(t, op, (json_t *)msg);
	} else if (strcmp(op, "task.inack") == 0) {
		ttask_inack(t, msg);
	} else if (strcmp(op, "task.exit") == 0) {
		ttask_relay_back(t, op, (json_t *)msg);
		task_agent_close(t->agent);
		ttask_free(t);
	}
}

void tasks_link_lost(struct tasks *ts)
{
	struct ttask *t;

	if (!ts)
		return;
	/* Each task found is freed: the scan starts again from the head. */
again:
	for (t = ts->tasks; t; t = t->next) {
		if (t->kind == TASK_OUT) {
			ttask_end(t, -1, SIGKILL, "lost qpoold, the way to the task's node");
			goto again;
		}
		if (t->kind == TASK_IN) {
			json_t *sig = json_pack("{s:i}", "signal", SIGKILL);

			/* Its origin can no longer be told anything. */
			if (t->started && sig)
				tctl_task_pass(ts, t, "task.signal", sig);
			json_decref(sig);
			ttask_free(t);
			goto again;
		}
	}
}

/* ---- set-up ---- */

int tasks_create(struct noded *nd, struct tasks **ret, struct error *err)
{
	struct tasks *ts;
	int r;

	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return error_set(err, -ENOMEM, "out of memory");
	ts->nd = nd;
	ts->listen_fd = -1;
	ts->pass = tctl_task_pass;
	r = taskdoor_open(ts, task_agent_on_io, err);
	if (r < 0)
		goto fail;
	nd->tasks = ts;
	nd->ctl_ready = tasks_ctl_ready;
	*ret = ts;
	return 0;
fail:
	tasks_destroy(ts);
	return r;
}

void tasks_destroy(struct tasks *ts)
{
	if (!ts)
		return;
	/* The tasks whose streams go through this qnoded are killed: their
	 * agents lose them now (here, or told "lost node" by qpoold), and
	 * nobody could read them again after a restart. */
	for (struct ttask *t = ts->tasks; t; t = t->next) {
		json_t *sig = json_pack("{s:i}", "signal", SIGKILL);

		if (t->kind != TASK_OUT && t->started && sig)
			tctl_task_pass(ts, t, "task.signal", sig);
		json_decref(sig);
	}
	ts->stopping = true;
	while (ts->agents)
		task_agent_free(ts->agents);
	while (ts->ctls)
		tctl_free(ts->ctls, NULL);
	while (ts->tasks)
		ttask_free(ts->tasks);
	ts->recheck = sd_event_source_disable_unref(ts->recheck);
	ts->start_retry = sd_event_source_disable_unref(ts->start_retry);
	taskdoor_close(ts);
	if (ts->nd && ts->nd->tasks == ts)
		ts->nd->tasks = NULL;
	free(ts);
}
