/* SPDX-License-Identifier: MIT */
/* gded's parent side: fence the job, start it, watch signals and walltime, tear down. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gded-internal.h"
#include "tmpdir.h"
#include "log.h"
#include "parse.h"
#include "timeutil.h"
#include "wire.h"

/* How long the kill loop may take before gded gives up on a group that
 * will not empty (a task stuck in D state). */
#define KILL_TIMEOUT_MS 10000
/* rmdir can see EBUSY for a moment after the last task has gone. */
#define REMOVE_TRIES 200
/* qsub -I: how long what the job wrote last may take to reach a reading
 * qsub after the job's exit; a qsub that does not read loses it, so it
 * cannot hold the teardown and the node's CPUs. */
#define PTY_FLUSH_MS 2000
/* How long a freeze may take to settle (tasks leaving system calls). */
#define FREEZE_TIMEOUT_MS 5000
/* The page the child stamps exec into: wall, mono, execve's errno, the
 * direct-exec flag, the errnos that kept stdout and stderr in HOME, and
 * the spawned child's "start me again by fork" (GDED_SPAWN_RETRY). */
#define STAMP_PAGE (sizeof(int64_t) * 7)

enum run_phase {
	PHASE_RUN,     /* the job runs */
	PHASE_GRACE,   /* SIGTERM sent (cancel or walltime), SIGKILL when the timer fires */
	PHASE_KILLED,  /* SIGKILL sent */
};

struct run {
	const struct gded_job *job;
	struct gded_result *res;
	struct cgroup_job *cg;
	pid_t pid;           /* the job, leader of its own process group */
	bool exited;
	bool armed;          /* the walltime (and notice) timers are set */
	int report_fd;       /* the child's start-failure pipe until EOF, then -1 */
	size_t reason_len;   /* bytes of a start failure read into res->reason */
	int sfd;
	int tfd;
	int nfd;             /* the notice before the walltime, or -1 */
	enum run_phase phase;
	struct gded_pty *pty;  /* qsub -I, or NULL */
	int attach_fd;       /* qsub -I -- CMD: written once the user holds the pty, then -1 */
	bool sister;         /* runs no script: only tasks (docs/PARALLEL.md) */
	struct gded_ctl *ctl;  /* the control socket, or NULL */
	bool ctl_deferred;   /* ctl made when qnoded asks (ctl_make), not yet */
	char **envp;         /* the job's environment, for the tasks of a late ctl */
	const int64_t *stamps; /* the child's page (gded_child.exec_stamp) */
	bool forwarded;      /* a qsig signal went to the job's group */
	bool frozen;         /* suspended (docs/PREEMPTION.md): its clocks stopped */
	struct itimerspec left[2];  /* while frozen: what the walltime and notice timers had left */
	int64_t frozen_at;   /* CLOCK_MONOTONIC ns of the freeze */
};

/* A sister holds its fence until it is ended (SIGTERM, walltime): then
 * its loop ends once nothing of it runs. */
static void sister_check_done(struct run *run)
{
	if (run->sister && (run->phase == PHASE_KILLED ||
			    (run->phase != PHASE_RUN && gded_ctl_live(run->ctl) == 0)))
		run->exited = true;
}

/* The socket to tell qnoded the job's processes are gone (--notify), or -1.
 * qnoded's words on it: `g` (a held launch's go), `c` (make the control
 * socket, docs/PARALLEL.md); gded's: `l` (it listens), `e` (it could not
 * make it), `x` (the job's processes are gone, the last). */
static int notify_fd = -1;
/* qnoded asked for the control socket (`c`), or is gone (its EOF), so
 * that its successor finds the socket at its path. */
static bool ctl_asked;

void gded_notify_set(int fd)
{
	notify_fd = fd;
}

/* One byte, never blocking and never SIGPIPE (qnoded may have restarted):
 * the CPUs are free for the next job while the groups are still removed
 * and the result written. A lost byte only delays that to the result. */
static void notify_exited(void)
{
	if (notify_fd < 0)
		return;
	(void)send(notify_fd, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(notify_fd);
	notify_fd = -1;
}

static void stamp(struct gded_result *res, enum gded_stamp s)
{
	res->wall[s] = time_wall_ns();
	res->mono[s] = time_mono_ns();
}

static void fail(struct gded_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct gded_result *res, const char *fmt, ...)
{
	va_list ap;

	res->status = GDED_STATUS_FAILED;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

/* How long a held launch waits for its go: the server's commit takes
 * milliseconds; one that takes longer than this, or a go that is lost,
 * ends the job unstarted and back in the queue, as a drop does. */
#define GATE_WAIT_MS (120 * 1000)

/* A launch held (the spec's "gated"): waits for qnoded's go, one byte on
 * the notify socket, before anything of the job runs (its prolog, mail,
 * TMPDIR, the child). Its EOF (a drop, qnoded's link to qpoold or qnoded
 * itself gone) or no go in GATE_WAIT_MS: the job ends unstarted, and
 * qpoold puts it back in the queue. Signals wait in the signalfd: a qdel
 * meanwhile is handled once the job runs, as one right after its start. */
static int gate_wait(struct gded_result *res)
{
	struct pollfd pfd = { .fd = notify_fd, .events = POLLIN };
	int64_t deadline = time_mono_ns() + (int64_t)GATE_WAIT_MS * 1000000;
	const char *why = "no notify socket to release it";
	char byte;

	/* The go read first: it is often there before the fence is done. */
	while (notify_fd >= 0) {
		ssize_t n = recv(notify_fd, &byte, 1, MSG_DONTWAIT);
		int64_t left;

		if (n == 1 && byte == 'g')
			return 0;
		if (n == 1 && byte == 'c') {
			ctl_asked = true;
			continue;
		}
		if (n >= 0 || (errno != EAGAIN && errno != EINTR)) {
			why = "its dispatch was not recorded, or qnoded's link to qpoold was lost";
			break;
		}
		left = (deadline - time_mono_ns()) / 1000000;
		if (left <= 0 || (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)) {
			why = left <= 0 ? "no release from qnoded in time" : "poll on the notify socket failed";
			break;
		}
	}
	res->not_started = true;
	fail(res, "not started: %s", why);
	return -ECANCELED;
}

int gded_nodefile_text(const struct gded_job *job, char **ret, size_t *ret_len,
		       struct error *err)
{
	struct gded_alloc one = { .node = job->node, .mpiprocs = job->ncpus };
	const struct gded_alloc *a = job->nalloc ? job->alloc : &one;
	size_t n = job->nalloc ? job->nalloc : 1, len = 0, off = 0;
	char *text;

	if (!job->nalloc && job->ncpus > 65536)
		return error_set(err, -EINVAL, "ncpus %" PRIu64 " is too large", job->ncpus);
	/* Bounded by the spec: GDED_SLOTS_MAX lines of at most 256 bytes. */
	for (size_t i = 0; i < n; i++)
		len += (strlen(a[i].node) + 1) * a[i].mpiprocs;
	text = malloc(len + 1);
	if (!text)
		return error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		size_t nlen = strlen(a[i].node);

		for (uint64_t k = 0; k < a[i].mpiprocs; k++) {
			memcpy(text + off, a[i].node, nlen);
			text[off + nlen] = '\n';
			off += nlen + 1;
		}
	}
	*ret = text;
	*ret_len = len;
	return 0;
}

/* Writes a file of the job's (PBS_NODEFILE, PBS_GPUFILE) at path: the
 * user's, with the user's umask like the output files. */
static int job_file_write(const struct gded_job *job, const char *path, const char *text,
			  size_t len, struct error *err)
{
	size_t off = 0;
	int fd, r = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return error_set(err, -errno, "cannot write %s: %m", path);
	if (fchown(fd, job->uid, job->gid) < 0 || fchmod(fd, 0644 & ~job->umask) < 0) {
		r = error_set(err, -errno, "cannot give %s to uid %u: %m", path, (unsigned)job->uid);
		goto done;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0) {
			r = error_set(err, -errno, "cannot write %s: %m", path);
			goto done;
		}
		off += (size_t)n;
	}
done:
	close(fd);
	return r;
}

static int nodefile_write(const struct gded_job *job, struct error *err)
{
	size_t len = 0;
	char *text = NULL;
	int r;

	r = gded_nodefile_text(job, &text, &len, err);
	if (r < 0)
		return r;
	r = job_file_write(job, job->nodefile, text, len, err);
	free(text);
	return r;
}

/* PBS_GPUFILE, when the job has a GPU anywhere. */
static int gpufile_write(const struct gded_job *job, struct error *err)
{
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	int r;

	r = gded_gpufile_path(job, path, sizeof(path));
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return error_set(err, r, "the GPU file's path: %s", strerror(-r));
	if (gded_gpufile_text(job, &text, &len) < 0)
		return error_set(err, -ENOMEM, "out of memory");
	r = job_file_write(job, path, text, len, err);
	free(text);
	return r;
}

/* Removes what nodefile_write and gpufile_write made: the job's own
 * files, gone with it, so that qnoded tries no unlink of them after a
 * result (noded/jobfiles.c jobfile_remove). */
static void job_files_unlink(const struct gded_job *job)
{
	char path[PATH_MAX];

	if (job->nodefile && !job->nodefile_shared)
		(void)unlink(job->nodefile);
	if (gded_gpufile_path(job, path, sizeof(path)) == 0)
		(void)unlink(path);
}

static int timer_arm(struct run *run, uint64_t seconds)
{
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)seconds } };

	if (seconds == 0)
		its.it_value.tv_nsec = 1;   /* 0 would disarm it */
	if (run->tfd < 0) {
		run->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (run->tfd < 0)
			return -errno;
	}
	return timerfd_settime(run->tfd, 0, &its, NULL) < 0 ? -errno : 0;
}

/* Without a cgroup: gded is the child subreaper, so every orphan of the
 * job ends up as its child; kill those until none is left. */
static void descendants_kill(void)
{
	char path[64], buf[4096];
	int64_t deadline = time_mono_ns() + KILL_TIMEOUT_MS * NSEC_PER_MSEC;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	while (time_mono_ns() < deadline) {
		int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
		ssize_t n;

		if (fd < 0)
			return;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return;
		buf[n] = '\0';
		for (char *p = buf, *end; *p; p = end) {
			long pid = strtol(p, &end, 10);

			if (end == p)
				break;
			if (pid > 0) {
				kill((pid_t)pid, SIGKILL);
				found++;
			}
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!found)
			return;
		usleep(1000);
	}
}

static void job_kill_all(struct run *run)
{
	if (run->cg) {
		cgroup_job_kill(run->cg, KILL_TIMEOUT_MS);
	} else {
		if (!run->exited && run->pid > 0 && kill(-run->pid, SIGKILL) < 0)
			kill(run->pid, SIGKILL);   /* before its setsid, no group yet */
		gded_ctl_signal_all(run->ctl, SIGKILL);
	}
	run->phase = PHASE_KILLED;
	sister_check_done(run);
}

/* The job's walltime and notice timers stop while it is frozen, and go
 * on from where they were when it is thawed: a suspended job is not
 * killed for the time it could not run. */
static void clocks_pause(struct run *run, bool pause)
{
	int *fds[2] = { &run->tfd, &run->nfd };
	struct itimerspec zero = { { 0, 0 }, { 0, 0 } };

	for (int i = 0; i < 2; i++) {
		int fd = *fds[i];

		if (fd < 0)
			continue;
		if (pause) {
			if (timerfd_gettime(fd, &run->left[i]) < 0)
				run->left[i] = zero;
			(void)timerfd_settime(fd, 0, &zero, NULL);
		} else if (run->left[i].it_value.tv_sec || run->left[i].it_value.tv_nsec) {
			(void)timerfd_settime(fd, 0, &run->left[i], NULL);
		}
	}
}

/* Suspend (freeze true) or resume the job: its cgroup's freezer (v1
 * freezer.state, v2 cgroup.freeze), waited for, bounded; without a
 * cgroup or a freezer, SIGSTOP/SIGCONT to its process group and tasks. */
static void job_freeze(struct run *run, bool freeze)
{
	int r = -ENOTSUP;

	if (freeze == run->frozen || run->exited || (freeze && run->phase != PHASE_RUN))
		return;
	if (run->cg)
		r = cgroup_job_freeze(run->cg, freeze, FREEZE_TIMEOUT_MS);
	if (r == -ENOTSUP) {
		int sig = freeze ? SIGSTOP : SIGCONT;

		gded_ctl_signal_all(run->ctl, sig);
		if (run->pid > 0 && (run->job->argv || kill(-run->pid, sig) < 0))
			kill(run->pid, sig);
	} else if (r < 0) {
		log_warn("job %" PRIu64 ": cannot %s its cgroup: %s", run->job->jobid,
			 freeze ? "freeze" : "thaw", strerror(-r));
		if (freeze) {
			(void)cgroup_job_freeze(run->cg, false, FREEZE_TIMEOUT_MS);
			return;
		}
	}
	run->frozen = freeze;
	clocks_pause(run, freeze);
	if (freeze) {
		run->frozen_at = time_mono_ns();
	} else {
		run->res->suspended_ns += (uint64_t)(time_mono_ns() - run->frozen_at);
	}
	log_info("job %" PRIu64 ": %s", run->job->jobid, freeze ? "suspended (frozen)" : "resumed");
}

/* SIGTERM to the job's process group, SIGKILL to everything after
 * kill_grace. reason_flag is res->cancelled or res->timeout. */
static int job_terminate(struct run *run, bool *reason_flag)
{
	if (run->phase != PHASE_RUN)
		return 0;
	/* A suspended job is thawed to receive its SIGTERM (scancel of a
	 * suspended job in Slurm does the same). */
	job_freeze(run, false);
	/* No task starts from now on; those running get the same SIGTERM
	 * and grace as the script. */
	gded_ctl_ending(run->ctl);
	gded_ctl_signal_all(run->ctl, SIGTERM);
	if (run->sister) {
		/* Being ended is a sister's normal end, not the job's
		 * cancel: its result stays exited 0. */
		run->phase = PHASE_GRACE;
		sister_check_done(run);
		return run->exited ? 0 : timer_arm(run, run->job->kill_grace);
	}
	*reason_flag = true;
	/* By hand the command shares gded's process group (the terminal's).
	 * A job child that has not reached its setsid has no group of its
	 * own yet (ESRCH): the pid itself is signalled then, once, so a
	 * job's TERM trap never runs twice. */
	if (run->job->argv || kill(-run->pid, SIGTERM) < 0)
		kill(run->pid, SIGTERM);
	run->phase = PHASE_GRACE;
	return timer_arm(run, run->job->kill_grace);
}

static void reap(struct run *run)
{
	pid_t w;
	int st;

	/* Orphans of the job come to us too (subreaper): reap them all. */
	while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
		if (w != run->pid) {
			gded_ctl_reaped(run->ctl, w, st);
			continue;
		}
		stamp(run->res, GDED_STAMP_EXIT);
		run->exited = true;
		if (WIFSIGNALED(st) && run->stamps[3] && run->phase == PHASE_RUN &&
		    !run->forwarded) {
			/* The script's one command, run without its shell,
			 * died of a signal qpool did not send (a crash, the
			 * OOM killer): the shell would have lived and exited
			 * 128 + the signal, and so does the job's record. */
			run->res->status = GDED_STATUS_EXITED;
			run->res->exit_status = 128 + WTERMSIG(st);
		} else if (WIFSIGNALED(st)) {
			run->res->status = GDED_STATUS_SIGNALED;
			run->res->exit_signal = WTERMSIG(st);
		} else {
			run->res->status = GDED_STATUS_EXITED;
			run->res->exit_status = WEXITSTATUS(st);
		}
	}
	sister_check_done(run);
}

/* qsig: signal sig to the job's process group (to its pid while it has
 * none yet), while the job runs. */
static void signal_forward(struct run *run, int sig)
{
	if (run->phase != PHASE_RUN && run->phase != PHASE_GRACE)
		return;
	gded_ctl_signal_all(run->ctl, sig);
	if (run->pid <= 0 || run->exited)
		return;
	run->forwarded = true;
	if (run->job->argv || kill(-run->pid, sig) < 0)
		kill(run->pid, sig);
}

static int on_signal(struct run *run)
{
	struct signalfd_siginfo si;
	int r;

	while (read(run->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		/* By hand, SIGINT and SIGQUIT come from the terminal, which
		 * sends them to the command too: gded only waits. */
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP) {
			r = job_terminate(run, &run->res->cancelled);
			if (r < 0)
				return r;
		} else if (si.ssi_signo == WIRE_SIG_SUSPEND || si.ssi_signo == WIRE_SIG_RESUME) {
			job_freeze(run, si.ssi_signo == WIRE_SIG_SUSPEND);
		} else if ((int)si.ssi_signo >= GDED_SIGFWD_MIN && (int)si.ssi_signo <= GDED_SIGFWD_MAX) {
			signal_forward(run, (int)si.ssi_signo - SIGRTMIN);
		}
	}
	reap(run);   /* SIGCHLD coalesces: always look */
	return 0;
}

/* The job's notice (sbatch --signal, -l signal=) is due: to the batch
 * shell alone (B:), else as qsig sends, to all of the job's processes. */
static void on_notice(struct run *run)
{
	uint64_t ticks;

	if (read(run->nfd, &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return;
	close(run->nfd);
	run->nfd = -1;
	if (run->phase != PHASE_RUN || run->exited)
		return;
	log_info("job %" PRIu64 ": signal %d, %u s before its walltime", run->job->jobid,
		 run->job->notice.sig, run->job->notice.secs);
	if (!run->job->notice.batch) {
		signal_forward(run, run->job->notice.sig);
		return;
	}
	if (run->pid > 0 && !run->sister) {
		run->forwarded = true;
		kill(run->pid, run->job->notice.sig);
	}
}

/* Arms the notice at the walltime less its lead. A lead of the whole
 * walltime or more sends none: a notice at the job's first instruction
 * tells it nothing it did not know, and tools that always ask for one
 * (Toil: --signal=B:USR2@30) would end a 30 s job as it starts. */
static int notice_arm(struct run *run)
{
	uint64_t wall = run->job->walltime, lead = run->job->notice.secs;
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)(wall - lead) } };

	if (lead >= wall)
		return 0;
	run->nfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (run->nfd < 0)
		return -errno;
	return timerfd_settime(run->nfd, 0, &its, NULL) < 0 ? -errno : 0;
}

static int on_timer(struct run *run)
{
	uint64_t ticks;

	if (read(run->tfd, &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return 0;
	if (run->phase == PHASE_RUN)
		return job_terminate(run, &run->res->timeout);
	if (run->phase == PHASE_GRACE)
		job_kill_all(run);
	return 0;
}

/* Reads what the child wrote to the start pipe: a start-failure line,
 * or EOF (the pipe is O_CLOEXEC: execve closed it, or the child died). */
static void on_report(struct run *run)
{
	size_t cap = sizeof(run->res->reason) - 1;
	char sink[64];
	ssize_t n;

	for (;;) {
		if (run->reason_len < cap)
			n = read(run->report_fd, run->res->reason + run->reason_len,
				 cap - run->reason_len);
		else
			n = read(run->report_fd, sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n > 0) {
			if (run->reason_len < cap)
				run->reason_len += (size_t)n;
			continue;
		}
		break;
	}
	run->res->reason[run->reason_len] = '\0';
	close(run->report_fd);
	run->report_fd = -1;
}

/* The control socket, made late: qnoded asked for it, or went away. Its
 * answer tells qnoded to send the task starts that wait for it. */
static void ctl_make(struct run *run)
{
	struct error e = { "" };
	int r = gded_ctl_create(run->job, &run->ctl, &e);

	if (r < 0)
		log_warn("job %" PRIu64 ": %s", run->job->jobid, e.text);
	else
		gded_ctl_start(run->ctl, run->cg, run->envp);
	/* Made while the job ends: it refuses tasks, as one made before. */
	if (r == 0 && run->phase != PHASE_RUN)
		gded_ctl_ending(run->ctl);
	run->ctl_deferred = r < 0 && notify_fd >= 0;
	if (notify_fd >= 0)
		(void)send(notify_fd, r < 0 ? "e" : "l", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* qnoded's words on the notify socket while the job runs. Its EOF is
 * qnoded gone (a restart): the socket is made at once for the next one,
 * which connects by the path, and this one is not read any more. */
static void on_notify_word(struct run *run)
{
	char byte;
	ssize_t n;

	while ((n = recv(notify_fd, &byte, 1, MSG_DONTWAIT)) == 1)
		if (byte == 'c')
			ctl_asked = true;
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close(notify_fd);
		notify_fd = -1;
		ctl_asked = true;
	}
	if (ctl_asked)
		ctl_make(run);
}

/* Until the job's process exits. The start is watched in the same loop
 * as signals and the walltime: a child that blocks before exec (opening
 * its outputs, entering its directory on a hung mount) is still ended by
 * qdel and by its walltime. */
/* run_loop's poll slots: these first, then the terminal's
 * (GDED_PTY_NFDS), then the control socket's. */
enum { SLOT_SIGNAL, SLOT_TIMER, SLOT_REPORT, SLOT_NOTICE, SLOT_NOTIFY, SLOT_FIXED };

static int run_loop(struct run *run, struct error *err)
{
	struct pollfd *pfd;
	int r = 0;

	if (run->job->walltime > 0 && !run->armed) {
		run->armed = true;
		r = timer_arm(run, run->job->walltime);
		if (r == 0 && run->job->notice.sig > 0)
			r = notice_arm(run);
		if (r < 0)
			return error_set(err, r, "timerfd: %s", strerror(-r));
	}
	/* Asked for while the launch was held (gate_wait). */
	if (run->ctl_deferred && ctl_asked)
		ctl_make(run);
	pfd = calloc(SLOT_FIXED + GDED_PTY_NFDS + (run->job->ctl ? gded_ctl_pollmax() : 0), sizeof(*pfd));
	if (!pfd)
		return error_set(err, -ENOMEM, "out of memory");
	reap(run);
	while (!run->exited) {
		struct gded_pty *t = run->pty;
		struct pollfd *tp = pfd + SLOT_FIXED, *cp = pfd + SLOT_FIXED + GDED_PTY_NFDS;
		size_t n;

		pfd[SLOT_SIGNAL] = (struct pollfd){ .fd = run->sfd, .events = POLLIN };
		pfd[SLOT_TIMER] = (struct pollfd){ .fd = run->tfd, .events = POLLIN };
		pfd[SLOT_REPORT] = (struct pollfd){ .fd = run->report_fd, .events = POLLIN };
		pfd[SLOT_NOTICE] = (struct pollfd){ .fd = run->nfd, .events = POLLIN };
		pfd[SLOT_NOTIFY] = (struct pollfd){ .fd = run->ctl_deferred ? notify_fd : -1, .events = POLLIN };
		for (int i = 0; i < GDED_PTY_NFDS; i++)
			tp[i] = (struct pollfd){ .fd = -1 };
		if (t)
			gded_pty_pollfds(t, tp);
		n = gded_ctl_pollfds(run->ctl, cp);
		if (poll(pfd, SLOT_FIXED + GDED_PTY_NFDS + n, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = error_set(err, -errno, "poll: %m");
			break;
		}
		if (pfd[SLOT_SIGNAL].revents) {
			r = on_signal(run);
			if (r < 0) {
				r = error_set(err, r, "signal: %s", strerror(-r));
				break;
			}
		}
		if (run->tfd >= 0 && pfd[SLOT_TIMER].revents) {
			r = on_timer(run);
			if (r < 0) {
				r = error_set(err, r, "timer: %s", strerror(-r));
				break;
			}
		}
		if (run->nfd >= 0 && pfd[SLOT_NOTICE].revents)
			on_notice(run);
		gded_ctl_events(run->ctl, cp, n);
		/* After the control socket's events: cp[] are the old ones. */
		if (pfd[SLOT_NOTIFY].fd >= 0 && pfd[SLOT_NOTIFY].revents && run->ctl_deferred)
			on_notify_word(run);
		if (run->report_fd >= 0 && pfd[SLOT_REPORT].revents)
			on_report(run);
		/* The relay never blocks: a qsub that stops reading holds up
		 * its job's terminal, not this loop. */
		if (t)
			gded_pty_events(t, tp);
		if (t && t->conn >= 0 && run->attach_fd >= 0) {
			/* the command may start: its output has a reader */
			(void)!write(run->attach_fd, "a", 1);
			close(run->attach_fd);
			run->attach_fd = -1;
		}
	}
	free(pfd);
	/* The script is gone: the job is ending, no task starts any more. */
	gded_ctl_ending(run->ctl);
	if (r < 0)
		return r;
	/* What the shell wrote last reaches the user before the socket ends. */
	if (run->pty)
		gded_pty_flush(run->pty, PTY_FLUSH_MS);
	/* The child is gone, so is its end of the pipe: read what is left. */
	if (run->report_fd >= 0) {
		fcntl(run->report_fd, F_SETFL, 0);
		on_report(run);
	}
	return 0;
}

/* Everything that must happen however the run ended: no process of the
 * job and no cgroup of it may outlive gded. */
static int run_teardown(struct run *run, struct error *err)
{
	int r = 0;

	if (run->frozen) {   /* killed while suspended: the kill thaws it */
		run->res->suspended_ns += (uint64_t)(time_mono_ns() - run->frozen_at);
		run->frozen = false;
	}

	if (run->cg) {
		r = cgroup_job_kill(run->cg, KILL_TIMEOUT_MS);
		if (r < 0)
			error_set(err, r, "job.%" PRIu64 ": could not empty the cgroup: %s",
				  run->job->jobid, strerror(-r));
	} else {
		if (run->pid > 0 && !run->exited)
			kill(-run->pid, SIGKILL);
		descendants_kill();
	}
	if (run->pid > 0 && !run->exited) {
		int st;

		if (waitpid(run->pid, &st, 0) == run->pid && !run->res->wall[GDED_STAMP_EXIT])
			stamp(run->res, GDED_STAMP_EXIT);
		run->exited = true;
	}
	{
		pid_t w;
		int st;

		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			gded_ctl_reaped(run->ctl, w, st);
	}
	if (run->cg) {
		struct cgroup_usage u;
		int q;

		if (cgroup_job_usage(run->cg, &u) == 0) {
			run->res->cpu_ns = u.cpu_ns;
			run->res->mem_peak = u.mem_peak;
			run->res->oom = u.oom;
			/* Every process of the job was our descendant (we are
			 * its subreaper) and has been reaped by now, so the
			 * children's rusage is its whole CPU time. */
			if (u.cpu_shared) {
				struct rusage ru;

				if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
					run->res->cpu_ns =
						(uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
						NSEC_PER_SEC +
						(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) *
						1000;
			}
		}
		/* Emptied: nothing of the job runs on its CPUs any more. */
		if (r == 0)
			notify_exited();
		for (int i = 0; i < REMOVE_TRIES; i++) {
			q = cgroup_job_remove(run->cg);
			if (q != -EBUSY)
				break;
			usleep(1000);
		}
		if (q < 0 && r == 0)
			r = error_set(err, q, "job.%" PRIu64 ": could not remove the cgroup: %s",
				      run->job->jobid, strerror(-q));
	}
	return r;
}

/* The memory controller counted an OOM kill: say so in the result and,
 * for a batch job, in its stderr file (kept: where it went instead,
 * gded_output_kept_path), where the user looks first. */
static void oom_report(const struct gded_job *job, bool kept, struct gded_result *res)
{
	char size[32], line[sizeof(res->reason) + 64];

	if (job->mem > 0) {
		size_format(job->mem, size, sizeof(size));
		snprintf(res->reason, sizeof(res->reason),
			 "killed: it exceeded its memory limit of %s", size);
	} else {
		snprintf(res->reason, sizeof(res->reason), "killed: out of memory");
	}
	if (job->argv || gded_job_sister(job))
		return;   /* by hand, or a sister: no output file of its own */
	snprintf(line, sizeof(line), "qpool: job %" PRIu64 " was %s\n", job->jobid, res->reason);
	gded_note_append(job, kept, line);
}

void gded_stdio_ensure(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
			break;
}

/* The child made by a copy of gded: any case spawn.c leaves. */
static pid_t child_fork(const struct gded_child *c)
{
	pid_t pid = fork();

	if (pid == 0)
		gded_child_exec(c);
	return pid;
}

/* The spawned child gave up before its exec (spawn.c: not the plain
 * case after all): the forked child starts the job, or says why it
 * cannot, with a start pipe of its own. Only a batch job without a
 * terminal is spawned, so there is none to hand on. */
static int child_refork(struct run *run, char **envp, int64_t *page, struct error *err)
{
	int report[2];

	if (pipe2(report, O_CLOEXEC | O_NONBLOCK) < 0)
		return error_set(err, -errno, "set-up: %m");
	memset(page, 0, STAMP_PAGE);
	run->exited = false;
	run->pid = child_fork(&(struct gded_child){ .job = run->job, .cg = run->cg, .envp = envp,
						    .report_fd = report[1], .exec_stamp = page,
						    .attach_fd = -1 });
	close(report[1]);
	if (run->pid < 0) {
		close(report[0]);
		return error_set(err, -errno, "fork: %m");
	}
	run->report_fd = report[0];
	return run_loop(run, err);
}

int gded_run(const struct gded_job *job, struct gded_result *res, struct error *err)
{
	struct run run = { .job = job, .res = res, .pid = -1, .sfd = -1, .tfd = -1, .nfd = -1,
			   .report_fd = -1, .attach_fd = -1 };
	struct cgroup_limits lim = {
		.cpus = job->cpus, .mems = job->mems, .mem = job->mem, .pids_max = job->pids_max,
	};
	struct error e = { { 0 } };
	unsigned flags = job->reserve == GDED_RESERVE_REALTIME ? CGROUP_JOB_REALTIME : 0;
	struct cgroup_dev deny[GDED_GPUS_MAX];
	size_t ndeny = gded_gpus_denied(job, deny);
	int64_t *page = MAP_FAILED;
	struct gded_spawn *spawn = NULL;
	pid_t spawned = -1;
	int report[2] = { -1, -1 }, attach[2] = { -1, -1 }, tmpdir_fd = -1, r = 0, q;
	/* Set by their first byte, not zeroed: a zeroed buffer is a stack
	 * page the fork's copy faults in, for every job. */
	char **envp = NULL, tmpdir[PATH_MAX], note[sizeof(res->reason) * 2];
	bool undelivered = false, hooked = false;
	sigset_t mask;

	tmpdir[0] = note[0] = '\0';

	res->jobid = job->jobid;
	res->launch = job->launch;
	res->status = GDED_STATUS_FAILED;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	/* A task that closed its stdin: EPIPE, not gded's death. */
	sigaddset(&mask, SIGPIPE);
	for (int sig = GDED_SIGFWD_MIN; sig <= GDED_SIGFWD_MAX; sig++)
		sigaddset(&mask, sig);
	sigaddset(&mask, WIRE_SIG_SUSPEND);
	sigaddset(&mask, WIRE_SIG_RESUME);
	if (job->argv) {
		sigaddset(&mask, SIGHUP);
		sigaddset(&mask, SIGINT);
		sigaddset(&mask, SIGQUIT);
	}
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (run.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		r = error_set(err, -errno, "signalfd: %m");
		fail(res, "gded: %s", err->text);
		goto done;
	}
	/* Double-forked, setsid'ed stragglers reparent to us, not to init:
	 * we can reap them, and without a cgroup still find and kill them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		r = error_set(err, -errno, "PR_SET_CHILD_SUBREAPER: %m");
		fail(res, "gded: %s", err->text);
		goto done;
	}
	/* The control socket (docs/PARALLEL.md), made when qnoded first
	 * asks for it on the notify socket: few jobs start tasks, and the
	 * socket cost a twentieth of gded's CPU a job. Without a notify
	 * socket to ask on (gded run by hand), before the fence: one may
	 * connect as soon as gded runs; tasks start once the fence is up. */
	if (job->ctl && !job->argv) {
		if (notify_fd >= 0)
			run.ctl_deferred = true;
		else if (gded_ctl_create(job, &run.ctl, &e) < 0) {
			fail(res, "%s", e.text);
			goto done;
		}
	}
	/* The node's GPUs that are not the job's, denied before anything of
	 * the job runs (docs/GPUS.md): a node without GPUs, or a job that
	 * has them all, has no device fence and pays nothing for one. */
	if (ndeny)
		flags |= CGROUP_JOB_DEVICES;
	if (job->mem > 0 && job->mem < CGROUP_MEMORY_KEPT_MIN)
		flags |= CGROUP_JOB_MEMORY_SMALL;
	if (job->cg_mode != CGROUP_MODE_NONE) {
		q = cgroup_job_create(job->cg_root, job->cg_mode, job->cg_parent, job->jobid,
				      flags, &run.cg, &e);
		if (q == 0) {
			cgroup_job_reclaim_threshold(run.cg, job->cg_reclaim_threshold);
			q = cgroup_job_configure(run.cg, &lim, &e);
		}
		/* What the kernel really gives (a delegated v2 tree may grant
		 * less than was written, silently): Flux checks it too. */
		if (q == 0) {
			q = cgroup_job_cpuset_check(run.cg, &lim, &e);
			res->node_fault = q == -EXDEV;
		}
		if (q == 0)
			q = cgroup_job_devices_deny(run.cg, deny, ndeny, &e);
		if (q < 0) {
			fail(res, "cgroup: %s", e.text);
			goto done;
		}
	}
	/* The children join through files opened here, once (issue 39). */
	if (run.cg)
		cgroup_job_attach_prepare(run.cg);
	stamp(res, GDED_STAMP_FENCED);
	if (job->gated && gate_wait(res) < 0)
		goto done;
	/* The site's prolog, inside the job's startup (qpool-hooks(5)):
	 * failing, it is the node's fault, not the job's: qpoold drains the
	 * node and puts the job back in the queue. */
	if (!job->argv && gded_hook_run(job, "prolog", note, sizeof(note)) < 0) {
		res->node_fault = true;
		res->prolog_failed = true;
		fail(res, "%s", note);
		note[0] = '\0';
		goto done;
	}
	hooked = true;
	if ((job->nodefile && !job->nodefile_shared && nodefile_write(job, &e) < 0) ||
	    gpufile_write(job, &e) < 0) {
		fail(res, "%s", e.text);
		goto done;
	}
	/* TMPDIR, inside the job's lifetime: made after the fence, removed
	 * below once run_teardown has seen every process of the job gone. */
	if (!job->argv && gded_tmpdir_path(job, tmpdir, sizeof(tmpdir)) == 0) {
		tmpdir_fd = gded_tmpdir_create(job, tmpdir, sizeof(tmpdir));
		if (tmpdir_fd < 0) {
			fail(res, "cannot make the job's TMPDIR %s: %s", tmpdir, strerror(-tmpdir_fd));
			tmpdir[0] = '\0';
			goto done;
		}
	} else {
		tmpdir[0] = '\0';
	}
	envp = gded_env_build(job, tmpdir[0] ? tmpdir : NULL);
	page = mmap(NULL, STAMP_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	if (!envp || page == MAP_FAILED || pipe2(report, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = error_set(err, -errno, "set-up: %m");
		fail(res, "gded: %s", err->text);
		goto done;
	}
	memset(page, 0, STAMP_PAGE);
	run.stamps = page;
	gded_ctl_start(run.ctl, run.cg, envp);
	run.envp = envp;
	if (gded_job_sister(job)) {
		/* A sister: no script, no output files, no mail (the primary
		 * tells the user); it holds its fence for the job's tasks. */
		run.sister = true;
		res->sister = true;
		r = run_loop(&run, err);
		if (r < 0) {
			fail(res, "gded: %s", err->text);
		} else {
			stamp(res, GDED_STAMP_EXIT);
			res->status = GDED_STATUS_EXITED;
			res->exit_status = 0;
		}
		goto done;
	}
	if (gded_mail_wanted(job, 'b'))
		(void)gded_mail_send(job, "execution begins");
	if (job->interactive && !job->argv) {
		if (gded_pty_open(job, &run.pty, &e) < 0) {
			fail(res, "%s", e.text);
			goto done;
		}
		if (job->interactive_command && pipe2(attach, O_CLOEXEC) < 0) {
			r = error_set(err, -errno, "set-up: %m");
			fail(res, "gded: %s", err->text);
			goto done;
		}
	}
	{
		struct gded_child c = {
			.job = job, .cg = run.cg, .envp = envp, .report_fd = report[1],
			.exec_stamp = page, .pty_slave = run.pty ? run.pty->slave : NULL, .attach_fd = attach[0],
		};

		/* Without a copy of gded's memory where it can (spawn.c),
		 * else forked; forked too when the clone itself is refused
		 * (a container's seccomp filter, say). */
		if (gded_spawn_prepare(&c, &spawn) == 0)
			run.pid = spawned = gded_spawn_start(spawn);
		if (run.pid < 0) {
			gded_spawn_free(spawn);
			spawn = NULL;
			run.pid = child_fork(&c);
		}
	}
	if (run.pid < 0) {
		r = error_set(err, -errno, "fork: %m");
		fail(res, "gded: %s", err->text);
		goto done;
	}
	close(report[1]);
	report[1] = -1;
	if (attach[0] >= 0)
		close(attach[0]);
	attach[0] = -1;
	run.attach_fd = attach[1];
	attach[1] = -1;
	run.report_fd = report[0];
	report[0] = -1;
	r = run_loop(&run, err);
	if (r == 0 && spawn && page[GDED_SPAWN_RETRY] && run.phase == PHASE_RUN)
		r = child_refork(&run, envp, page, err);
	if (r < 0) {
		/* The job's true end is unknown to us: kill it and say why. */
		fail(res, "gded: %s", err->text);
	} else if (res->reason[0]) {
		/* The child wrote why it could not start, then exited 127. */
		res->status = GDED_STATUS_FAILED;
		res->exec_errno = (int)page[2];
	} else if (page[0]) {
		res->wall[GDED_STAMP_EXEC] = page[0];
		res->mono[GDED_STAMP_EXEC] = page[1];
	}
done:
	q = run_teardown(&run, &e);
	if (q < 0 && r == 0) {
		r = q;
		*err = e;
	}
	gded_ctl_destroy(run.ctl);
	gded_pty_close(run.pty);
	/* The epilog, after the job's last process (run_teardown saw them
	 * all gone) and before its TMPDIR goes: failing, the node is
	 * drained; the job's result stands. */
	if (hooked && gded_hook_run(job, "epilog", res->drain_reason, sizeof(res->drain_reason)) < 0)
		res->drain = true;
	/* Made once the prolog passed: after the epilog, which may read
	 * them, and before the result. */
	if (hooked)
		job_files_unlink(job);
	/* Only when the job's processes are gone (the cgroup emptied, or
	 * every descendant killed and reaped): nothing can plant a link
	 * under it meanwhile, and the walk follows none anyway. */
	if (tmpdir[0] && (q = tmpdir_remove(tmpdir)) < 0 && r == 0)
		r = error_set(err, q, "job.%" PRIu64 ": could not remove TMPDIR %s: %s", job->jobid,
			      tmpdir, strerror(-q));
	/* Removed: no other gded may take the name for a stale one before. */
	if (tmpdir_fd >= 0)
		close(tmpdir_fd);
	if (res->status == GDED_STATUS_FAILED && !res->reason[0])
		snprintf(res->reason, sizeof(res->reason), "the job could not be started");
	if (res->oom)
		oom_report(job, page != MAP_FAILED && page[job->join ? 4 : 5] != 0, res);
	/* An output kept in HOME: the result says where (qstat -f's
	 * comment), and so does a mail, as PBS mails undelivered output. */
	if (page != MAP_FAILED && !run.sister) {
		int errs[2] = { (int)page[4], (int)page[5] };

		undelivered = gded_undelivered_note(job, errs, note, sizeof(note));
		if (undelivered)
			snprintf(res->reason + strlen(res->reason), sizeof(res->reason) - strlen(res->reason),
				 "%s%s", res->reason[0] ? "; " : "", note);
	}
	/* Not for a launch dropped before its start: it runs again later. */
	if (!job->argv && !run.sister && !res->not_started &&
	    (res->status == GDED_STATUS_EXITED && !res->timeout && !res->cancelled ?
	     gded_mail_wanted(job, 'e') : gded_mail_wanted(job, 'a'))) {
		char what[sizeof(note) + 320];

		if (res->status == GDED_STATUS_EXITED && !res->timeout && !res->cancelled)
			snprintf(what, sizeof(what), "execution ended, exit status %d%s%s", res->exit_status,
				 undelivered ? "; " : "", undelivered ? note : "");
		else
			snprintf(what, sizeof(what), "aborted: %s", res->reason[0] ? res->reason :
				 res->timeout ? "walltime reached" : res->cancelled ? "deleted" :
				 "killed by a signal");
		(void)gded_mail_send(job, what);
	} else if (undelivered && job->sendmail && job->sendmail[0] == '/' &&
		   !(job->mail_points && strchr(job->mail_points, 'n'))) {
		/* Unasked for, as PBS does: the user must learn where the
		 * output went; -m n alone keeps it quiet. */
		(void)gded_mail_send(job, note);
	}
	stamp(res, GDED_STAMP_RELEASED);
	cgroup_job_free(run.cg);
	/* What the spawned child reads goes once it is gone: run_loop waited
	 * for it, but not when the loop failed, and one that had not joined
	 * its groups yet outlived their kill. */
	if (spawned > 0 && run.pid == spawned && !run.exited) {
		kill(spawned, SIGKILL);
		waitpid(spawned, NULL, 0);
	}
	gded_spawn_free(spawn);
	if (page != MAP_FAILED)
		munmap(page, STAMP_PAGE);
	gded_env_free(envp);
	for (int i = 0; i < 2; i++) {
		if (report[i] >= 0)
			close(report[i]);
		if (attach[i] >= 0)
			close(attach[i]);
	}
	if (run.attach_fd >= 0)
		close(run.attach_fd);
	if (run.report_fd >= 0)
		close(run.report_fd);
	if (run.tfd >= 0)
		close(run.tfd);
	if (run.nfd >= 0)
		close(run.nfd);
	if (run.sfd >= 0)
		close(run.sfd);
	return r;
}
