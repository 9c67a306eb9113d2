/* SPDX-License-Identifier: MIT */
/* The node's jobs: launch, watch through pidfds, report results, adopt after a restart. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "noded.h"
#include "timeutil.h"
#include "tmpdir.h"
#include "wire.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

struct job {
	struct jobs *js;
	int64_t jobid;
	int64_t launch;         /* wall ns qnoded received job.launch */
	int64_t dispatch;       /* job.times.dispatch: which run of the job this is
	                         * (a requeued job runs again with a new one); every
	                         * report carries it, so qpoold can tell a stale
	                         * copy's report from the current run's. 0: unknown */
	json_t *next_launch;    /* job.launch of a newer run, started once this
	                         * (stale) one is killed and acknowledged */
	int64_t next_launch_stamp;
	int next_signal;        /* job.signal that came for the new run meanwhile */
	pid_t pid;              /* gded, while it runs */
	int pidfd;
	sd_event_source *src;
	sd_event_source *notify_src; /* gded's word that the job's processes are gone */
	bool gated;             /* launched before its dispatch's commit: gded holds it
	                         * until job.go's byte on the notify socket (or its EOF) */
	bool gone;              /* that word came: no more remote starts */
	bool ctl_asked;         /* `c` sent: gded makes its control socket */
	bool ctl_failed;        /* gded answered `e`: it could not */
	sd_event_source *lost_src;   /* its wrapper died: retrying to empty its groups */
	char *lost_reason;           /* what to report once they are gone */
	bool adopted;           /* not our child: found in /proc after a restart */
	bool child;             /* our child: its status is waitid's (else the
	                         * launcher's or init's, and waitid only fails) */
	bool wrapper_ended;     /* its pidfd said gded ended: no one holds its files
	                         * open, so they may be kept as spares (jobfiles.c) */
	bool spec_written;      /* by this qnoded, renamed into place */
	bool result_read;       /* gded's, read after this qnoded wrote its spec:
	                         * its other files are gone (jobfile_remove) */
	json_t *result;         /* once finished, until qpoold acknowledges */
	bool result_unsynced;   /* its file gded's, maybe in the page cache only */
	bool held;              /* its spec and result copied to node_dir/held */
	bool done_sent;         /* job.done on this connection, reply awaited */
	bool done_refused;      /* qpoold refused it (logged once); sent again each heartbeat */
	bool sim;               /* simulated: src is its walltime timer */
	int64_t sim_wall;       /* simulated: when it started, wall and mono ns */
	int64_t sim_mono;
	struct job *next;
};

struct jobs {
	struct noded *nd;
	struct job *head;
	sd_event_source *sync_src;  /* the next sync of results held */
};

/* How long a result of gded's may stay unsynced (issue 39: gded no
 * longer fdatasyncs each one, 7% of its CPU). Its file carries the
 * result only until qpoold has committed it, which is milliseconds: a
 * crash in them loses what a crash a moment earlier would have, the
 * run's end (the job is then as if it ran when the node failed). One
 * held longer, qpoold away or slow, is synced at the next tick, as
 * many as are held by one fsync of the directory. */
#define RESULT_SYNC_US (1000 * 1000)

static int jobs_results_on_sync(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct jobs *js = userdata;
	struct noded *nd = js->nd;
	/* On a tmpfs a sync keeps nothing: the files go to disk instead. */
	bool copy = nd->jobs_tmpfs && nd->held_dirfd >= 0;
	unsigned n = 0;
	int r;

	js->sync_src = sd_event_source_disable_unref(js->sync_src);
	for (struct job *j = js->head; j; j = j->next) {
		if (!j->result_unsynced)
			continue;
		j->result_unsynced = false;
		n++;
		if (copy) {
			r = jobfile_held_copy(nd->jobs_dirfd, nd->held_dirfd, j->jobid);
			j->held = true;   /* even a part copied goes at the end */
		} else {
			r = jobfile_result_sync(nd->jobs_dirfd, j->jobid);
		}
		if (r < 0 && r != -ENOENT)
			log_warn("job %" PRId64 ": cannot %s its result file: %s", j->jobid,
				 copy ? "copy to disk" : "sync", strerror(-r));
	}
	if (n == 0)
		return 0;
	if (fsync(copy ? nd->held_dirfd : nd->jobs_dirfd) < 0)
		log_warn("%s%s: fsync: %m", copy ? nd->node_dir : nd->jobs_dir, copy ? "/held" : "");
	log_debug("%u result%s not yet acknowledged %s", n, n == 1 ? "" : "s",
		  copy ? "copied to disk" : "synced");
	return 0;
}

/* j's result came from gded's file: synced at the next tick unless
 * qpoold acknowledges it before (then its file is gone). */
static void job_result_unsynced(struct job *j)
{
	struct jobs *js = j->js;

	j->result_unsynced = true;
	if (js->sync_src)
		return;
	if (sd_event_add_time_relative(js->nd->event, &js->sync_src, CLOCK_MONOTONIC,
				       RESULT_SYNC_US, 0, jobs_results_on_sync, js) < 0)
		(void)jobs_results_on_sync(NULL, 0, js);   /* no timer: now */
}

/* A wrapper runs, or a simulated job waits out its walltime. */
static bool job_running(const struct job *j)
{
	return j->pidfd >= 0 || (j->sim && j->src) || j->lost_reason;
}

static struct job *job_find(const struct jobs *js, int64_t jobid)
{
	for (struct job *j = js->head; j; j = j->next)
		if (j->jobid == jobid)
			return j;
	return NULL;
}

static struct job *job_new(struct jobs *js, int64_t jobid, int64_t launch)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->js = js;
	j->jobid = jobid;
	j->launch = launch;
	j->pidfd = -1;
	j->next = js->head;
	js->head = j;
	return j;
}

static void job_unwatch(struct job *j)
{
	j->notify_src = sd_event_source_disable_unref(j->notify_src);
	j->src = sd_event_source_disable_unref(j->src);
	if (j->pidfd >= 0)
		close(j->pidfd);
	j->pidfd = -1;
	j->pid = 0;
}

static void job_free(struct job *j)
{
	struct job **pp;

	if (!j)
		return;
	for (pp = &j->js->head; *pp; pp = &(*pp)->next) {
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	}
	job_unwatch(j);
	j->lost_src = sd_event_source_disable_unref(j->lost_src);
	free(j->lost_reason);
	json_decref(j->result);
	json_decref(j->next_launch);
	free(j);
}

/* Forgets a finished job whose report qpoold has taken; a newer run of
 * it that waited for the stale one to go starts now. */
static void job_retire(struct job *j)
{
	struct jobs *js = j->js;
	json_t *next = j->next_launch, *sig;
	int64_t stamp = j->next_launch_stamp;
	int64_t jobid = j->jobid;
	int signum = j->next_signal;

	j->next_launch = NULL;
	job_free(j);
	if (!next)
		return;
	jobs_launch(js, next, stamp);
	json_decref(next);
	/* gded starts with SIGTERM blocked: a cancel waits for its signalfd. */
	if (signum > 0 && (sig = json_pack("{s:I, s:i}", "jobid", (json_int_t)jobid, "signal", signum))) {
		jobs_signal(js, sig);
		json_decref(sig);
	}
}

/* A job's files, its result taken: the copies on disk first, so that a
 * crash between the two leaves no copy of a result qpoold has. */
static void job_files_remove(struct job *j)
{
	struct noded *nd = j->js->nd;

	if (j->held)
		jobfile_held_remove(nd->held_dirfd, j->jobid);
	jobfile_remove(nd->jobs_dirfd, j->jobid, j->wrapper_ended, j->result_read);
}

static void job_done_reply(struct noded *nd, const json_t *reply, int64_t jobid)
{
	struct job *j = job_find(nd->jobs, jobid);
	int e;

	if (!j)
		return;
	j->done_sent = false;
	if (!reply)
		return;   /* connection lost: sent again after re-registering */
	if (wire_bool(reply, "ok", 0)) {
		log_debug("job %" PRId64 ": done acknowledged", jobid);
		if (!nd->simulated)
			job_files_remove(j);
		job_retire(j);
		return;
	}
	e = (int)wire_int(reply, "errno", 0);
	if (!j->done_refused || e == ENOENT || e == ESRCH)
		log_warn("job %" PRId64 ": qpoold refused job.done: %s%s", jobid,
			 wire_str(reply, "error") ?: "(no reason given)",
			 e == ENOENT || e == ESRCH ? "" : "; sent again at each heartbeat");
	/* Any other refusal (the store's commit failed: its connection
	 * lost while PostgreSQL fails over) keeps the result, and
	 * jobs_results_send sends it again at the next heartbeat: without
	 * that, it waited for the next registration, which may never come,
	 * and the job stayed running (t-ha-pg-promote). */
	j->done_refused = true;
	if (e == ENOENT || e == ESRCH) {
		/* qpoold has no such job: nobody will ever want these files. */
		if (!nd->simulated)
			job_files_remove(j);
		job_retire(j);
	}
}

/* Sends job.done when registered and not already waiting for its reply. */
static void job_done_send(struct job *j)
{
	struct noded *nd = j->js->nd;
	json_t *req;

	if (!j->result || j->done_sent || !nd->link || !link_registered(nd->link))
		return;
	req = json_pack("{s:s, s:I, s:O}", "op", "job.done", "jobid", (json_int_t)j->jobid,
			"result", j->result);
	if (!req)
		return;
	if (j->dispatch > 0 && json_object_set_new(req, "dispatch", json_integer(j->dispatch)) < 0) {
		json_decref(req);
		return;
	}
	/* Set first: a send that finds the connection dead answers NULL at once. */
	j->done_sent = true;
	if (link_call(nd->link, req, job_done_reply, j->jobid) < 0)
		j->done_sent = false;
}

/* The run's token in its result too: node.register lists results. */
static void job_result_tag(struct job *j)
{
	if (j->result && j->dispatch > 0)
		(void)json_object_set_new(j->result, "dispatch", json_integer(j->dispatch));
}

static void job_finished(struct job *j, json_t *result)
{
	const char *status = wire_str(result, "status");

	job_unwatch(j);
	json_decref(j->result);
	j->result = result;
	job_result_tag(j);
	if (j->sim)
		log_debug("job %" PRId64 ": simulated, %s", j->jobid, status ?: "finished");
	else if (status && strcmp(status, "failed") == 0)
		log_info("job %" PRId64 ": failed: %s", j->jobid,
			 wire_str(result, "reason") ?: "(no reason given)");
	else if (status && strcmp(status, "signaled") == 0)
		log_info("job %" PRId64 ": killed by signal %lld%s%s", j->jobid,
			 wire_int(result, "exit_signal", 0),
			 wire_bool(result, "timeout", 0) ? " (walltime)" : "",
			 wire_bool(result, "cancelled", 0) ? " (cancelled)" : "");
	else
		log_msg(wire_int(result, "exit_status", -1) == 0 ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO,
			"job %" PRId64 ": %s with status %lld", j->jobid, status ?: "finished",
			wire_int(result, "exit_status", -1));
	job_done_send(j);
}

/* A failure qnoded reports itself; kept in <id>.result so a restart
 * before qpoold's acknowledgement still reports it. no_room: its files
 * found no room, which is the node's trouble: "requeue", and "no_room"
 * (qpoold waits for room before its next pass). */
static void job_fail_result(struct job *j, const char *reason, bool no_room)
{
	struct noded *nd = j->js->nd;
	json_t *result = jobfile_result_failed(j->jobid, j->launch, reason);
	int r;

	if (result && no_room && (json_object_set_new(result, "requeue", json_true()) < 0 ||
				  json_object_set_new(result, "no_room", json_true()) < 0)) {
		json_decref(result);
		result = NULL;
	}
	if (!result) {
		log_err("job %" PRId64 ": out of memory reporting: %s", j->jobid, reason);
		job_unwatch(j);
		return;
	}
	r = j->sim ? 0 : jobfile_result_write(nd->jobs_dirfd, j->jobid, result);
	if (r < 0)
		log_warn("job %" PRId64 ": cannot write its result file: %s", j->jobid, strerror(-r));
	job_finished(j, result);
}

static void job_fail(struct job *j, const char *reason)
{
	job_fail_result(j, reason, false);
}

/* How long one attempt to empty a lost wrapper's groups may block the
 * loop, and how long to wait before the next (a task in D state). */
#define LOST_KILL_MS 2000
#define LOST_RETRY_US (1000 * 1000)
#define LOST_REMOVE_TRIES 200

/* [node] memcg_reclaim_threshold, at most what a group can hold. */
static unsigned reclaim_threshold(const struct noded *nd)
{
	uint64_t t = nd->config->memcg_reclaim_threshold;

	return t > UINT_MAX ? UINT_MAX : (unsigned)t;
}

/* Kills everything in the groups of a job whose wrapper died and removes
 * them. 0 when none is left, -errno (-ETIME: still populated). */
static int job_groups_clean(struct job *j)
{
	struct noded *nd = j->js->nd;
	struct cgroup_job *cg = NULL;
	struct error err = { "" };
	int r;

	if (nd->cgroup_mode == CGROUP_MODE_NONE)
		return 0;
	r = cgroup_job_find(nd->config->cgroup_root, nd->cgroup_mode, nd->cgroup_parent,
			    (uint64_t)j->jobid, &cg, &err);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		log_warn("job %" PRId64 ": %s", j->jobid, err.text);
		return r;
	}
	cgroup_job_reclaim_threshold(cg, reclaim_threshold(nd));
	r = cgroup_job_kill(cg, LOST_KILL_MS);
	if (r >= 0) {
		/* rmdir can see EBUSY for a moment after the last task went. */
		for (int i = 0; i < LOST_REMOVE_TRIES; i++) {
			r = cgroup_job_remove(cg);
			if (r != -EBUSY)
				break;
			usleep(1000);
		}
	}
	cgroup_job_free(cg);
	if (r == 0)
		log_info("job %" PRId64 ": emptied and removed the groups its lost wrapper left", j->jobid);
	return r < 0 ? r : 0;
}

/* The TMPDIR the lost wrapper would have removed at its teardown, its
 * PBS name or the name of its own it got when that was held (one a
 * running gded holds is another job's, and stays): once the job's
 * processes are gone, as gded removes it. In a process of its own, as
 * gded's was: a TMPDIR may hold millions of files, and this loop must
 * not stop answering for them. It is orphaned at once (reaped by init),
 * holding none of qnoded's files, its lock on the node's group included. */
static void job_tmpdir_reap(struct job *j)
{
	struct noded *nd = j->js->nd;
	char path[PATH_MAX];
	json_t *spec = NULL;
	long long uid;
	pid_t pid;
	int r;

	if (nd->cgroup_mode == CGROUP_MODE_NONE)
		return;   /* nothing killed its processes: they may still use it */
	r = jobfile_spec_read(nd->jobs_dirfd, j->jobid, &spec);
	if (r < 0) {
		log_warn("job %" PRId64 ": no spec to find the TMPDIR of its lost wrapper: %s", j->jobid,
			 strerror(-r));
		return;
	}
	uid = wire_int(spec, "uid", -1);
	r = tmpdir_name(path, sizeof(path), wire_str(spec, "tmpdir_base"), (uint64_t)j->jobid,
			wire_str(spec, "server"), wire_int(spec, "node_index", 0) > 0 ? wire_str(spec, "node") : NULL);
	json_decref(spec);
	if (r < 0 || uid < 0)
		return;   /* no TMPDIR was made */
	pid = fork();
	if (pid < 0) {
		log_warn("job %" PRId64 ": cannot fork to remove the TMPDIR its lost wrapper left (%s): %m",
			 j->jobid, path);
		return;
	}
	if (pid == 0) {
		sigset_t none;
		pid_t walker = fork();

		if (walker < 0)
			log_warn("job %" PRId64 ": cannot fork to remove the TMPDIR its lost wrapper left (%s): %m",
				 j->jobid, path);
		if (walker != 0)
			_exit(0);
		close_range(3, ~0U, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		r = tmpdir_reap(path, (uid_t)uid);
		if (r > 0)
			log_info("job %" PRId64 ": removed the TMPDIR its lost wrapper left (%s)", j->jobid, path);
		else if (r < 0)
			log_warn("job %" PRId64 ": cannot remove the TMPDIR its lost wrapper left (%s): %s",
				 j->jobid, path, strerror(-r));
		_exit(0);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static void job_lost_try(struct job *j);

static int job_lost_on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	job_lost_try(userdata);
	return 0;
}

/* Reports the lost wrapper's job failed only once its groups are empty
 * and gone: until then it counts as running here, so qpoold keeps its
 * CPUs, and no process of it outlives the report. */
static void job_lost_try(struct job *j)
{
	char *reason;
	int r = job_groups_clean(j);

	j->lost_src = sd_event_source_disable_unref(j->lost_src);
	if (r < 0) {
		log_warn("job %" PRId64 ": cannot empty the groups of its lost wrapper (%s); trying again",
			 j->jobid, strerror(-r));
		if (sd_event_add_time_relative(j->js->nd->event, &j->lost_src, CLOCK_MONOTONIC,
					       LOST_RETRY_US, 0, job_lost_on_timer, j) >= 0)
			return;
		/* No timer: report it rather than hold it forever. */
	}
	if (r == 0)
		job_tmpdir_reap(j);
	reason = j->lost_reason;
	j->lost_reason = NULL;
	job_fail(j, reason);
	free(reason);
}

/* The wrapper died without a result: its job's processes may run on in
 * its groups, which nobody else will empty. */
static void job_lost(struct job *j, const char *why)
{
	char reason[400];

	job_unwatch(j);
	snprintf(reason, sizeof(reason), "wrapper lost: %s; its processes were killed and its cgroups removed",
		 why);
	free(j->lost_reason);
	j->lost_reason = strdup(reason);
	if (!j->lost_reason) {
		job_fail(j, "wrapper lost (out of memory)");
		return;
	}
	job_lost_try(j);
}

/* The wrapper ended: its result file is the truth; without one, say why. */
static void job_collect(struct job *j, const char *why_no_result)
{
	struct noded *nd = j->js->nd;
	struct error err = { "" };
	json_t *result;
	char reason[300];
	int r;

	r = jobfile_result_read(nd->jobs_dirfd, j->jobid, j->launch, &result, &err);
	if (r == 0) {
		/* Not one whose spec a qnoded before this one wrote: its
		 * crash may have left the spec's .tmp. */
		j->result_read = j->spec_written;
		job_result_unsynced(j);
		job_finished(j, result);
		return;
	}
	if (r == -ENOENT) {
		job_lost(j, why_no_result);
		return;
	}
	snprintf(reason, sizeof(reason), "unreadable result: %s", err.text);
	job_fail(j, reason);
}

static int job_on_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct job *j = userdata;
	siginfo_t info = { 0 };
	char why[160];

	/* A readable pidfd means the process ended. Ours is reaped here; one
	 * the resident launcher forked is its child, and an adopted one
	 * init's (ECHILD): their status is unknowable here. */
	if (j->child && waitid((idtype_t)P_PIDFD, (id_t)fd, &info, WEXITED | WNOHANG) == 0 && info.si_pid) {
		if (info.si_code == CLD_EXITED)
			snprintf(why, sizeof(why), "gded exited with status %d without writing a result",
				 info.si_status);
		else
			snprintf(why, sizeof(why), "gded was killed by signal %d (%s) before writing a result",
				 info.si_status, strsignal(info.si_status));
	} else if (j->adopted) {
		snprintf(why, sizeof(why), "gded (pid %d, adopted after a qnoded restart) exited without writing a result",
			 (int)j->pid);
	} else {
		snprintf(why, sizeof(why), "gded (pid %d) ended without writing a result", (int)j->pid);
	}
	log_debug("job %" PRId64 ": gded pid %d ended", j->jobid, (int)j->pid);
	j->wrapper_ended = true;
	job_collect(j, why);
	return 0;
}

static void job_exited_reply(struct noded *nd, const json_t *reply, int64_t jobid)
{
	if (reply && !wire_bool(reply, "ok", 0))
		log_warn("job %" PRId64 ": qpoold refused job.exited: %s", jobid,
			 wire_str(reply, "error") ?: "(no reason given)");
}

static void noded_ctl_ready(struct noded *nd)
{
	if (nd->ctl_ready)
		nd->ctl_ready(nd);
}

/* gded's words. `l` or `e`: its control socket listens, or could not be
 * made (jobs_ctl_ask); the task starts that wait for it go, or fail. `x`:
 * the job's processes are gone, its CPUs free. qpoold may give them to
 * the next job while gded removes the groups and writes the result.
 * Without a link the result alone will free them. */
static int job_on_notify(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct job *j = userdata;
	struct noded *nd = j->js->nd;
	char byte;
	ssize_t n;
	json_t *req;

	while ((n = recv(fd, &byte, 1, MSG_DONTWAIT)) == 1 && byte != 'x') {
		if (byte == 'e')
			j->ctl_failed = true;
		if (byte == 'l' || byte == 'e')
			noded_ctl_ready(nd);
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	/* link_call drops it when the link is not registered. */
	if (n == 1 && nd->link &&
	    (req = json_pack("{s:s, s:I, s:I}", "op", "job.exited", "jobid", (json_int_t)j->jobid,
			     "dispatch", (json_int_t)j->dispatch)))
		(void)link_call(nd->link, req, job_exited_reply, j->jobid);
	j->gone = true;
	/* Its last word (or an EOF): stop listening; a task start that
	 * waited for the control socket hears the job is ending. */
	j->notify_src = sd_event_source_disable_unref(j->notify_src);
	noded_ctl_ready(nd);
	return 0;
}

static void job_notify_watch(struct job *j, int fd)
{
	if (fd < 0)
		return;
	if (sd_event_add_io(j->js->nd->event, &j->notify_src, fd, EPOLLIN, job_on_notify, j) < 0) {
		close(fd);
		return;
	}
	sd_event_source_set_io_fd_own(j->notify_src, true);
}

static int job_watch(struct job *j, pid_t pid, int pidfd)
{
	int r;

	j->pid = pid;
	j->pidfd = pidfd;
	r = sd_event_add_io(j->js->nd->event, &j->src, pidfd, EPOLLIN, job_on_exit, j);
	if (r < 0) {
		close(pidfd);
		j->pidfd = -1;
		j->pid = 0;
	}
	return r;
}

static void job_sim_end(struct job *j, int sig)
{
	json_t *result = sim_result(j->jobid, j->launch, j->sim_wall, j->sim_mono, time_wall_ns(),
				    time_mono_ns(), sig);

	if (!result) {
		job_fail(j, "out of memory building a simulated result");
		return;
	}
	job_finished(j, result);
}

static int job_sim_on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	job_sim_end(userdata, 0);
	return 0;
}

/* How long a simulated job runs, in us: QPOOL_SIM_RUNTIME from its
 * environment (seconds, decimals allowed, 0: finish at once) when it is
 * there, since a queue gives every job without -l walltime a default;
 * else its walltime. */
static uint64_t job_sim_runtime_us(const json_t *job)
{
	const char *rt = wire_str(json_object_get(job, "env"), "QPOOL_SIM_RUNTIME");
	long long walltime = wire_int(job, "walltime", 0);
	char *end;
	double sec;

	if (rt) {
		errno = 0;
		sec = strtod(rt, &end);
		if (!errno && end != rt && !*end && sec >= 0 && sec < 1e9)
			return (uint64_t)(sec * 1e6);
		log_warn("QPOOL_SIM_RUNTIME=%s: not a number of seconds; using the walltime", rt);
	}
	return walltime > 0 ? (uint64_t)walltime * 1000000ULL : 0;
}

/* A simulated job: a timer of its run time (0: the next loop iteration). */
static void job_sim_start(struct job *j, const json_t *job)
{
	int r;

	j->sim = true;
	j->sim_wall = time_wall_ns();
	j->sim_mono = time_mono_ns();
	/* Accuracy 1 ms: sd-event's default of 250 ms would blur short jobs. */
	r = sd_event_add_time_relative(j->js->nd->event, &j->src, CLOCK_MONOTONIC,
				       job_sim_runtime_us(job), 1000, job_sim_on_timer, j);
	if (r < 0) {
		j->src = NULL;
		job_fail(j, "cannot arm a simulated job's timer");
	}
}

void jobs_launch(struct jobs *js, const json_t *msg, int64_t launch)
{
	struct noded *nd = js->nd;
	const json_t *job = json_object_get(msg, "job");
	const struct user_info *user;
	struct spec_node node = {
		.name = nd->name,
		.jobs_dir = nd->jobs_dir,
		.node_dir = nd->node_dir,
		.hwloc_xml = nd->hwloc_xml,
		.cgroup_mode = nd->cgroup_mode,
		.cgroup_root = nd->config->cgroup_root,
		.tmpdir = nd->config->tmpdir,
		.prolog = nd->config->prolog,
		.epilog = nd->config->epilog,
		.prolog_timeout = nd->config->prolog_timeout,
		.epilog_timeout = nd->config->epilog_timeout,
		.cgroup_parent = nd->cgroup_parent,
		.reclaim_threshold = reclaim_threshold(nd),
		.gpus = nd->gpus,
		.n_gpus = nd->n_gpus,
		.nodefiles = nd->nodefiles,
	};
	struct error err = { "" };
	char path[PATH_MAX], reason[300];
	json_t *spec = NULL;
	long long jobid, uid, dispatch;
	struct job *j;
	pid_t pid;
	int pidfd, notify = -1, r;

	jobid = wire_int(job, "jobid", -1);
	if (jobid <= 0) {
		log_warn("job.launch without a positive job.jobid: ignored");
		return;
	}
	dispatch = wire_int(json_object_get(job, "times"), "dispatch", 0);
	j = job_find(js, jobid);
	if (j && (dispatch == 0 || dispatch == j->dispatch || j->next_launch)) {
		log_warn("job %lld: launched again while still known here: ignored", jobid);
		return;
	}
	if (j) {
		/* A new run of a job whose stale copy (from before a requeue)
		 * is still being killed here: its files and groups have the
		 * same names, so it starts once the copy is gone and reported. */
		log_info("job %lld: new run waits until the stale copy here is gone", jobid);
		j->next_launch = json_incref((json_t *)msg);
		j->next_launch_stamp = launch;
		return;
	}
	j = job_new(js, jobid, launch);
	if (!j) {
		log_err("job %lld: out of memory", jobid);
		return;
	}
	j->dispatch = dispatch;
	j->gated = wire_bool(job, "gated", 0);
	if (nd->simulated) {
		job_sim_start(j, job);
		return;
	}
	uid = wire_int(job, "uid", -1);
	r = uid < 0 ? -EINVAL : usercache_lookup(nd->users, (uid_t)uid, &user);
	if (r < 0) {
		snprintf(reason, sizeof(reason), "no user with uid %lld on node %s%s%s", uid, nd->name,
			 r == -ENOENT ? "" : ": ", r == -ENOENT ? "" : strerror(-r));
		job_fail(j, reason);
		return;
	}
	r = jobfile_spec_build(job, user, &node, launch, &spec, &err);
	if (r == 0)
		r = jobfile_write(nd->jobs_dirfd, jobid, wire_str(job, "script"), (uid_t)uid,
				  (gid_t)wire_int(job, "gid", -1), spec, &err);
	j->spec_written = r == 0;
	json_decref(spec);
	if (r < 0) {
		/* No room for its files is the node's trouble, not the job's:
		 * qpoold requeues it ("requeue") instead of failing it. */
		snprintf(reason, sizeof(reason), "node %s: %s", nd->name, err.text);
		job_fail_result(j, reason, r == -ENOSPC || r == -EDQUOT);
		return;
	}
	jobfile_result_tmp_ready(nd->jobs_dirfd, jobid);
	jobfile_path(nd->jobs_dir, jobid, "json", path);
	r = nd->launch(nd->launch_data, path, &pid, &pidfd, &notify, &j->child, &err);
	if (r == 0)
		r = job_watch(j, pid, pidfd);
	if (r == 0)
		job_notify_watch(j, notify);
	else if (notify >= 0)
		close(notify);
	if (r < 0) {
		snprintf(reason, sizeof(reason), "node %s: %s", nd->name,
			 err.text[0] ? err.text : strerror(-r));
		job_fail(j, reason);
		return;
	}
	/* Debug: an info line per job was a write per job on the launch path. */
	log_debug("job %lld: gded pid %d started for uid %lld", jobid, (int)pid, uid);
}

void jobs_signal(struct jobs *js, const json_t *msg)
{
	long long jobid = wire_int(msg, "jobid", -1);
	long long sig = wire_int(msg, "signal", -1);
	struct job *j;

	if (jobid <= 0 || sig <= 0 || sig >= NSIG) {
		log_warn("job.signal needs a positive jobid and a signal number: ignored");
		return;
	}
	j = job_find(js, jobid);
	if (j && j->next_launch) {
		/* qpoold told the stale copy to stop before it sent the new
		 * run's launch; what comes after is for the new run. */
		log_info("job %lld: signal %lld kept for its new run", jobid, sig);
		j->next_signal = (int)sig;
		return;
	}
	if (j && j->sim && j->src && (sig == WIRE_SIG_SUSPEND || sig == WIRE_SIG_RESUME)) {
		/* A simulated job has no processes to freeze: it sleeps on. */
		log_info("job %lld: simulated: %s ignored", jobid, sig == WIRE_SIG_SUSPEND ? "suspend" : "resume");
		return;
	}
	if (j && j->sim && j->src) {
		/* Any signal ends a simulated job, as it would a sleep. */
		job_sim_end(j, (int)sig);
		return;
	}
	if (!j || j->pidfd < 0) {
		log_info("job %lld: signal %lld: no running wrapper here", jobid, sig);
		return;
	}
	/* Through the pidfd: a recycled pid can never be hit. gded forwards. */
	if (syscall(SYS_pidfd_send_signal, j->pidfd, (int)sig, NULL, 0) < 0 && errno != ESRCH)
		log_warn("job %lld: cannot signal gded pid %d: %m", jobid, (int)j->pid);
	else
		log_info("job %lld: signal %lld sent to gded pid %d", jobid, sig, (int)j->pid);
}

/* The job.launch of a new run waiting behind its stale copy, when it is
 * a held one (json_t *: its "job" object), else NULL. */
static json_t *job_next_gated(const struct job *j)
{
	json_t *next = j->next_launch ? json_object_get(j->next_launch, "job") : NULL;

	return next && wire_bool(next, "gated", 0) ? next : NULL;
}

static void job_next_drop(struct job *j, const char *why)
{
	log_info("job %" PRId64 ": its new run is dropped before its start: %s", j->jobid, why);
	json_decref(j->next_launch);
	j->next_launch = NULL;
}

/* Ends a held launch: go, one byte on gded's notify socket, which it reads
 * before anything of the job runs; else a shutdown, whose EOF makes it
 * end the job unstarted, with a result that puts it back in the queue. */
static void job_gate_open(struct job *j, bool go, const char *why)
{
	int fd = j->notify_src ? sd_event_source_get_io_fd(j->notify_src) : -1;

	j->gated = false;
	if (fd < 0)
		return;
	if (go ? send(fd, "g", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1 : shutdown(fd, SHUT_WR) < 0)
		log_warn("job %" PRId64 ": cannot %s its wrapper: %m", j->jobid, go ? "release" : "stop");
	else if (!go)
		log_info("job %" PRId64 ": dropped before its start: %s", j->jobid, why);
}

void jobs_release(struct jobs *js, const json_t *msg, bool go)
{
	long long jobid = wire_int(msg, "jobid", -1);
	int64_t dispatch = wire_int(msg, "dispatch", 0);
	struct job *j = jobid > 0 ? job_find(js, jobid) : NULL;
	json_t *next = j ? job_next_gated(j) : NULL;

	if (next && wire_int(json_object_get(next, "times"), "dispatch", 0) == dispatch) {
		if (go)
			json_object_del(next, "gated");
		else
			job_next_drop(j, "its dispatch was not recorded");
	} else if (j && j->gated && j->dispatch == dispatch) {
		job_gate_open(j, go, "its dispatch was not recorded");
	}
}

void jobs_link_lost(struct jobs *js)
{
	for (struct job *j = js->head; j; j = j->next) {
		if (j->gated)
			job_gate_open(j, false, "the link to qpoold was lost first");
		if (job_next_gated(j))
			job_next_drop(j, "the link to qpoold was lost first");
	}
}

/* After a restart, a job with a spec but no wrapper and no result: did
 * its launch stop before the wrapper made the job's groups (qnoded killed
 * between writing the spec and the launcher's fork; a request still
 * unread in the launcher's socket then is not started: t-launch-stop)?
 * Until 2026-11 such a job failed "wrapper lost". gded makes them
 * before anything of the job runs (its prolog, mail, TMPDIR, the child,
 * which joins them before its exec), and removes them only at teardown,
 * after the job's last process. No group of it in any hierarchy: it
 * never started, or its wrapper died in the moment between the removal
 * and the result (two faults; it then runs again). Without cgroups
 * nothing tells: lost, as before. */
static bool job_never_fenced(const struct job *j)
{
	struct noded *nd = j->js->nd;
	struct cgroup_job *cg = NULL;
	struct error err = { "" };
	int r;

	if (nd->cgroup_mode == CGROUP_MODE_NONE)
		return false;
	r = cgroup_job_find(nd->config->cgroup_root, nd->cgroup_mode, nd->cgroup_parent,
			    (uint64_t)j->jobid, &cg, &err);
	if (r == 0)
		cgroup_job_free(cg);
	return r == -ENOENT;
}

/* After a restart: one job left in the jobs directory. */
static void jobs_take_over(struct jobs *js, int64_t jobid, const struct proc_gded *gdeds,
			   int n_gded)
{
	struct noded *nd = js->nd;
	struct error err = { "" };
	struct job *j;
	json_t *result;
	pid_t pid = 0;
	int pidfd, r;

	j = job_new(js, jobid, jobfile_spec_launch(nd->jobs_dirfd, jobid));
	if (!j) {
		log_err("job %" PRId64 ": out of memory", jobid);
		return;
	}
	j->dispatch = jobfile_spec_time(nd->jobs_dirfd, jobid, "dispatch");
	j->held = jobfile_held_has(nd->held_dirfd, jobid);
	r = jobfile_result_read(nd->jobs_dirfd, jobid, j->launch, &result, &err);
	if (r == 0) {
		log_info("job %" PRId64 ": finished while qnoded was down", jobid);
		j->result = result;
		job_result_tag(j);
		job_result_unsynced(j);
		return;
	}
	for (int i = 0; i < n_gded; i++)
		if (gdeds[i].jobid == jobid)
			pid = gdeds[i].pid;
	if (r == -ENOENT && pid > 0) {
		pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (pidfd >= 0 && procscan_gded_check(nd->proc_root, nd->jobs_dir, pid, jobid)) {
			if (job_watch(j, pid, pidfd) == 0) {
				j->adopted = true;
				log_info("job %" PRId64 ": adopted running gded pid %d", jobid, (int)pid);
				return;
			}
		} else if (pidfd >= 0) {
			close(pidfd);
		}
	}
	/* It may have finished between the first look and the scan. Its
	 * groups go before its result comes: they are looked at first. */
	if (r == -ENOENT && job_never_fenced(j)) {
		r = jobfile_result_read(nd->jobs_dirfd, jobid, j->launch, &result, &err);
		if (r == 0)
			json_decref(result);
		if (r == -ENOENT) {
			char reason[300];

			/* Nothing of it ran: back to the queue, not failed. */
			snprintf(reason, sizeof(reason),
				 "node %s: its launch was cut by qnoded's stop before its wrapper made its groups",
				 nd->name);
			job_fail_result(j, reason, true);
			return;
		}
	}
	job_collect(j, r == -ENOENT ? "wrapper vanished while qnoded was down" : err.text);
}

/* After a restart: job groups in the node's group that no job here
 * accounts for (no spec, no result, no wrapper) were left by a wrapper
 * that died before this fix or while its files went: the node group is
 * this qnoded's alone (noded_cgroup_lock), so they are emptied and
 * removed, never left running unaccounted. */
static void jobs_orphans_clean(struct jobs *js)
{
	struct noded *nd = js->nd;
	uint64_t *ids = NULL;
	int n;

	n = cgroup_node_job_ids(nd->config->cgroup_root, nd->cgroup_mode, nd->cgroup_parent, &ids);
	if (n < 0) {
		log_warn("cannot list the job groups in %s: %s", nd->cgroup_parent, strerror(-n));
		return;
	}
	for (int i = 0; i < n; i++) {
		struct job tmp = { .js = js, .jobid = (int64_t)ids[i], .pidfd = -1 };
		int r;

		if (ids[i] > INT64_MAX || job_find(js, (int64_t)ids[i]))
			continue;
		r = job_groups_clean(&tmp);
		if (r < 0)
			log_warn("job %" PRIu64 ": cannot remove the groups no wrapper holds: %s", ids[i],
				 strerror(-r));
		else
			log_info("job %" PRIu64 ": removed its groups, which no wrapper or job file here accounted for",
				 ids[i]);
	}
	free(ids);
}

int jobs_create(struct noded *nd, struct jobs **ret)
{
	struct proc_gded *gdeds = NULL;
	int64_t *ids = NULL;
	struct jobs *js;
	int n_ids, n_gded, r;

	js = calloc(1, sizeof(*js));
	if (!js)
		return -ENOMEM;
	js->nd = nd;
	nd->jobs = js;
	if (nd->simulated) {
		/* Nothing survives a simulated node: no files, no wrappers. */
		*ret = js;
		return 0;
	}
	/* Results held on disk whose tmpfs went with the host: back first. */
	if (nd->held_dirfd >= 0 && (r = jobfile_held_restore(nd->held_dirfd, nd->jobs_dirfd)) > 0)
		log_info("%d result%s held on disk put back in %s", r, r == 1 ? "" : "s", nd->jobs_dir);
	n_ids = jobfile_ids(nd->jobs_dirfd, &ids);
	if (n_ids < 0) {
		r = n_ids;
		goto done;
	}
	n_gded = n_ids ? procscan_gded_find(nd->proc_root, nd->jobs_dir, &gdeds) : 0;
	if (n_gded < 0) {
		r = n_gded;
		goto done;
	}
	for (int i = 0; i < n_ids; i++)
		jobs_take_over(js, ids[i], gdeds, n_gded);
	jobs_orphans_clean(js);
	*ret = js;
	js = NULL;
	r = 0;
done:
	if (js) {
		nd->jobs = NULL;
		jobs_destroy(js);
	}
	free(gdeds);
	free(ids);
	return r;
}

void jobs_destroy(struct jobs *js)
{
	if (!js)
		return;
	if (js->sync_src)
		(void)jobs_results_on_sync(NULL, 0, js);
	while (js->head)
		job_free(js->head);
	free(js);
}

size_t jobs_running_count(const struct jobs *js)
{
	size_t n = 0;

	for (const struct job *j = js->head; j; j = j->next)
		n += job_running(j);
	return n;
}

int jobs_ctl_ask(struct jobs *js, int64_t jobid)
{
	struct job *j = job_find(js, jobid);
	int fd = j && j->notify_src ? sd_event_source_get_io_fd(j->notify_src) : -1;

	if (fd < 0)
		return -ENOENT;
	if (j->ctl_failed)
		return -EIO;
	if (!j->ctl_asked && send(fd, "c", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
		return -errno;
	j->ctl_asked = true;
	return 0;
}

bool jobs_task_check(const struct jobs *js, int64_t jobid, int64_t *ret_dispatch)
{
	const struct job *j = job_find(js, jobid);

	if (!j || j->pidfd < 0 || j->result || j->next_launch || j->gone)
		return false;
	*ret_dispatch = j->dispatch;
	return true;
}

json_t *jobs_running_json(const struct jobs *js)
{
	json_t *a = json_array();

	for (const struct job *j = js->head; a && j; j = j->next)
		if (job_running(j))
			json_array_append_new(a, json_integer(j->jobid));
	return a;
}

json_t *jobs_results_json(const struct jobs *js)
{
	json_t *a = json_array();

	for (const struct job *j = js->head; a && j; j = j->next)
		if (j->result)
			json_array_append(a, j->result);
	return a;
}

void jobs_results_send(struct jobs *js)
{
	/* job_done_send never frees a job, so the walk is safe. */
	for (struct job *j = js->head; j; j = j->next)
		job_done_send(j);
}
