/* SPDX-License-Identifier: MIT */
/* Starting a job's gded wrapper: through the resident launcher (gded --launcher,
 * which forks it), or a posix_spawn of gded; a pidfd to watch it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "exe.h"
#include "log.h"
#include "noded.h"
#include "timeutil.h"

/* gded is root until it drops to the user: it gets a fixed environment,
 * never qnoded's (whatever the admin's shell had, LD_PRELOAD included).
 * The job's own environment travels in its spec, and gded's children
 * (the job, its tasks, hooks, mail) each get theirs, never this one.
 * LD_BIND_NOW: gded is linked -z now, but libc's own calls through its
 * PLT (malloc, calloc, ...) are bound lazily, and a wrapper forked from
 * the resident launcher bound again each one the launcher had not called
 * yet, a symbol lookup and the pages it reads, for every job (issue 39:
 * ~3 a job, gded's CPU x0.97-0.99). Bound once in the launcher, they
 * are inherited. */
static char *const gded_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "LD_BIND_NOW=1",
				  NULL };

int launch_gded_path(const char *conf, char *buf, size_t len)
{
	if (conf && *conf)
		return (size_t)snprintf(buf, len, "%s", conf) >= len ? -ENAMETOOLONG : 0;
	return exe_sibling("gded", buf, len);
}

/* Moves pid into the group whose cgroup.procs is procs (NULL: stays in
 * qnoded's). Under systemd that is a group of qpool-cgroup.service's
 * delegated tree, so the wrappers are not processes of qnoded.service,
 * which systemd would call left over at each restart of qnoded. */
static int wrappers_group_join(const char *procs, pid_t pid)
{
	char word[32];
	int fd, n, r = 0;

	if (!procs)
		return 0;
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(word, sizeof(word), "%d\n", (int)pid);
	if (write(fd, word, (size_t)n) != n)
		r = -errno;
	close(fd);
	return r;
}

/* posix_spawn of gded with argv, root's fixed environment, fd 3 the
 * socket fd3 (closed here in any case), and nofile (when not 0) as its
 * soft RLIMIT_NOFILE; then moved into the wrappers' group procs (NULL:
 * none). 0 and the pid, or -errno. */
static int gded_spawn(const char *gded, char *const argv[], char *const envp[], int fd3,
		      rlim_t nofile, const char *procs, pid_t *ret_pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t mask, deflt;
	struct rlimit own, child;
	bool lowered = false;
	pid_t pid;
	int r;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	/* qnoded blocks the signals sd-event handles; the wrapper must start
	 * with default dispositions (and only SIGTERM blocked), in its own session
	 * so a ^C or SIGHUP aimed at qnoded's terminal never reaches a job. */
	/* SIGTERM (qdel) blocked from the start: gded blocks it first thing
	 * for its signalfd, but one sent before that (a qdel right after
	 * dispatch) would kill it with no result; blocked across the exec it
	 * waits for the signalfd instead. gded's child unblocks all. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigfillset(&deflt);
	sigdelset(&deflt, SIGKILL);
	sigdelset(&deflt, SIGSTOP);
	posix_spawnattr_setsigmask(&attr, &mask);
	posix_spawnattr_setsigdefault(&attr, &deflt);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				 POSIX_SPAWN_SETSID);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	/* gded's end becomes its fd 3 (dup2 clears close-on-exec). */
	posix_spawn_file_actions_adddup2(&fa, fd3, 3);
	/* Nothing else of qnoded's: an fd it inherited without close-on-exec
	 * (the admin's shell, an init script) must not reach a root wrapper,
	 * nor through it the job. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 4);

	/* glibc's posix_spawn is clone(CLONE_VM|CLONE_VFORK): its cost does
	 * not grow with qnoded's memory, unlike fork (9.8 ms at 256 MiB). */
	/* posix_spawn sets no limits: qnoded's own soft limit is lowered
	 * around it (one thread; open descriptors above it stay valid). */
	if (nofile && getrlimit(RLIMIT_NOFILE, &own) == 0 && own.rlim_cur > nofile) {
		child = own;
		child.rlim_cur = nofile;
		lowered = setrlimit(RLIMIT_NOFILE, &child) == 0;
	}
	r = posix_spawn(&pid, gded, &fa, &attr, argv, envp);
	if (lowered)
		(void)setrlimit(RLIMIT_NOFILE, &own);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(fd3);
	if (r != 0)
		return -r;
	/* Right after the exec: gded's first fork (the job's child) joins
	 * the job's group itself, so nothing of it stays behind. A failure
	 * leaves the wrapper where it is, in qnoded's group, as before. */
	r = wrappers_group_join(procs, pid);
	if (r < 0)
		log_warn("cannot move gded (pid %d) to %s: %s; it stays in qnoded's group", (int)pid,
			 procs, strerror(-r));
	*ret_pid = pid;
	return 0;
}

static int gded_launch(const char *gded, rlim_t nofile, const char *procs, const char *spec_path,
		       pid_t *ret_pid, int *ret_pidfd, int *ret_notify, bool *ret_child, struct error *err)
{
	char *argv[] = { (char *)gded, (char *)"--spec", (char *)spec_path, (char *)"--notify", (char *)"3",
			 NULL };
	int pidfd, r, sv[2];
	pid_t pid;

	/* Ours stays close-on-exec, so no other wrapper inherits it. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
		return error_set(err, -errno, "socketpair: %m");
	r = gded_spawn(gded, argv, gded_env, sv[1], nofile, procs, &pid);
	if (r < 0) {
		close(sv[0]);
		errno = -r;
		return error_set(err, r, "cannot run %s: %m", gded);
	}
	/* The child stays a zombie until waited for, so this cannot miss it. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		r = -errno;
		/* Unwatchable (EMFILE): stop it while it is still starting. */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(sv[0]);
		return error_set(err, r, "pidfd_open(%d): %s", (int)pid, strerror(-r));
	}
	*ret_pid = pid;
	*ret_pidfd = pidfd;
	*ret_notify = sv[0];
	*ret_child = true;
	return 0;
}

int launch_gded(void *data, const char *spec_path, pid_t *ret_pid, int *ret_pidfd, int *ret_notify,
		bool *ret_child, struct error *err)
{
	return gded_launch(data, 0, NULL, spec_path, ret_pid, ret_pidfd, ret_notify, ret_child, err);
}

/* ---- the resident launcher ---- */

#define LAUNCHER_READY_MS 5000     /* its exec and set-up */
#define LAUNCHER_REPLY_MS 10000    /* one fork */
#define LAUNCHER_RETRY_NS (60 * 1000000000LL)   /* after a failure */

/* Waits up to ms for one message on sock: {errno, pid} and at most one
 * fd. 0, -ETIMEDOUT, -EPIPE (EOF) or -errno. */
static int launcher_recv(int sock, int ms, int32_t word[2], int *ret_fd)
{
	union {
		struct cmsghdr h;
		/* cppcheck-suppress unusedStructMember ; it sizes the union for CMSG_SPACE */
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} ctl;
	struct iovec iov = { .iov_base = word, .iov_len = 2 * sizeof(int32_t) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
			     .msg_controllen = sizeof(ctl) };
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	int64_t deadline = time_mono_ns() + (int64_t)ms * 1000000;
	ssize_t n;

	*ret_fd = -1;
	for (;;) {
		int64_t left = (deadline - time_mono_ns()) / 1000000;
		int r = poll(&pfd, 1, left > 0 ? (int)left : 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		break;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int x;

			memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*ret_fd < 0)
				*ret_fd = x;
			else
				close(x);
		}
	}
	if (n == 0)
		return -EPIPE;
	if (n != 2 * sizeof(int32_t)) {
		if (*ret_fd >= 0)
			close(*ret_fd);
		*ret_fd = -1;
		return -EBADMSG;
	}
	return 0;
}

/* Lets the launcher go: its socket closed, it exits (its wrappers live
 * on); reaped, killed if it has not gone within a second. */
void launcher_stop(struct launcher *l)
{
	struct pollfd pfd;

	if (l->sock >= 0)
		close(l->sock);
	l->sock = -1;
	if (l->pidfd >= 0) {
		pfd = (struct pollfd){ .fd = l->pidfd, .events = POLLIN };
		if (poll(&pfd, 1, 1000) <= 0)
			(void)syscall(SYS_pidfd_send_signal, l->pidfd, SIGKILL, NULL, 0);
		close(l->pidfd);
	}
	l->pidfd = -1;
	if (l->pid > 0)
		waitpid(l->pid, NULL, 0);
	l->pid = 0;
}

/* After a failure: exec gded per job for a while, then try again. */
static void launcher_fail(struct launcher *l, const char *what, int r)
{
	log_warn("resident launcher: %s: %s; gded is exec'ed per job for the next %lld s", what,
		 strerror(-r), LAUNCHER_RETRY_NS / 1000000000LL);
	launcher_stop(l);
	l->retry_mono = time_mono_ns() + LAUNCHER_RETRY_NS;
}

int launcher_start(struct launcher *l)
{
	/* The filler: room to write a wrapper's command line over its own,
	 * `<gded> --spec <jobs_dir>/<id>.json --notify 3`. */
	size_t fill = strlen(l->jobs_dir) + 48;
	char *filler = malloc(fill + 1);
	char *argv[] = { (char *)l->gded, (char *)"--launcher", filler, NULL };
	/* gded's fixed environment and the node's cgroups, which the
	 * launcher opens once for all its wrappers (issue 39). */
	char cg[3][PATH_MAX + 32], *envp[sizeof(gded_env) / sizeof(gded_env[0]) + 3];
	size_t ne = 0;
	int32_t word[2];
	int r, fd, sv[2];

	for (size_t i = 0; gded_env[i]; i++)
		envp[ne++] = gded_env[i];
	if (l->cg_mode && l->cg_root && l->cg_parent) {
		snprintf(cg[0], sizeof(cg[0]), CGROUP_HOLD_ENV_MODE "=%s", l->cg_mode);
		snprintf(cg[1], sizeof(cg[1]), CGROUP_HOLD_ENV_ROOT "=%s", l->cg_root);
		snprintf(cg[2], sizeof(cg[2]), CGROUP_HOLD_ENV_PARENT "=%s", l->cg_parent);
		for (int i = 0; i < 3; i++)
			envp[ne++] = cg[i];
	}
	envp[ne] = NULL;
	if (!filler) {
		launcher_fail(l, "filler", -ENOMEM);
		return -ENOMEM;
	}
	memset(filler, 'x', fill);
	filler[fill] = '\0';

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		free(filler);
		launcher_fail(l, "socketpair", r);
		return r;
	}
	r = gded_spawn(l->gded, argv, envp, sv[1], l->nofile, l->wrappers_procs, &l->pid);
	free(filler);
	if (r < 0) {
		close(sv[0]);
		launcher_fail(l, "cannot run gded --launcher", r);
		return r;
	}
	l->sock = sv[0];
	l->pidfd = (int)syscall(SYS_pidfd_open, l->pid, 0);
	if (l->pidfd < 0) {
		r = -errno;
		launcher_fail(l, "pidfd_open", r);
		return r;
	}
	/* Its first word says it is set up (and can name its wrappers). */
	r = launcher_recv(l->sock, LAUNCHER_READY_MS, word, &fd);
	if (fd >= 0)
		close(fd);
	if (r == 0 && (word[0] != 0 || word[1] != l->pid))
		r = -EPROTO;
	if (r < 0) {
		launcher_fail(l, "no ready word from gded --launcher", r);
		return r;
	}
	log_info("resident launcher: pid %d", (int)l->pid);
	return 0;
}

/* Whether the launcher runs (started again when it went and the retry
 * time has come). */
static bool launcher_ready(struct launcher *l)
{
	if (l->sock >= 0) {
		struct pollfd pfd = { .fd = l->pidfd, .events = POLLIN };

		if (poll(&pfd, 1, 0) == 0)
			return true;
		launcher_fail(l, "it exited", -EPIPE);
	}
	if (time_mono_ns() < l->retry_mono)
		return false;
	return launcher_start(l) == 0;
}

/* The jobid of a spec path <jobs_dir>/<id>.json; 0 if it is not one. */
static int64_t spec_jobid(const char *spec_path)
{
	const char *base = strrchr(spec_path, '/');
	char *end;
	long long id;

	base = base ? base + 1 : spec_path;
	errno = 0;
	id = strtoll(base, &end, 10);
	return errno || id <= 0 || strcmp(end, ".json") != 0 ? 0 : id;
}

/* The launcher went while a request was out: it may have forked the
 * wrapper first. A wrapper of this job that /proc shows is taken as the
 * answer (as after a restart); else none runs and 0 is returned. */
static int launcher_orphan_find(struct launcher *l, const char *spec_path, pid_t *ret_pid,
				int *ret_pidfd)
{
	int64_t jobid = spec_jobid(spec_path);
	struct proc_gded *found = NULL;
	int n, pidfd;

	n = jobid > 0 ? procscan_gded_find(l->proc_root, l->jobs_dir, &found) : 0;
	for (int i = 0; i < n; i++) {
		if (found[i].jobid != jobid)
			continue;
		pidfd = (int)syscall(SYS_pidfd_open, found[i].pid, 0);
		if (pidfd >= 0 && procscan_gded_check(l->proc_root, l->jobs_dir, found[i].pid, jobid)) {
			*ret_pid = found[i].pid;
			*ret_pidfd = pidfd;
			free(found);
			return 1;
		}
		if (pidfd >= 0)
			close(pidfd);
	}
	free(found);
	return 0;
}

int launch_resident(void *data, const char *spec_path, pid_t *ret_pid, int *ret_pidfd,
		    int *ret_notify, bool *ret_child, struct error *err)
{
	struct launcher *l = data;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (char *)spec_path, .iov_len = strlen(spec_path) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	int32_t word[2];
	int r, pidfd, sv[2];

	if (!launcher_ready(l))
		return gded_launch(l->gded, l->nofile, l->wrappers_procs, spec_path, ret_pid, ret_pidfd,
				   ret_notify, ret_child, err);
	/* The notify socket: ours close-on-exec and non-blocking as
	 * launch_gded's; the wrapper's end travels to the launcher. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
		return error_set(err, -errno, "socketpair: %m");
	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
	if (sendmsg(l->sock, &mh, MSG_NOSIGNAL) < 0) {
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		/* Nothing was asked: no wrapper can exist. */
		launcher_fail(l, "request", r);
		return gded_launch(l->gded, l->nofile, l->wrappers_procs, spec_path, ret_pid, ret_pidfd,
				   ret_notify, ret_child, err);
	}
	close(sv[1]);
	r = launcher_recv(l->sock, LAUNCHER_REPLY_MS, word, &pidfd);
	if (r == 0 && word[0] == 0 && (word[1] <= 0 || pidfd < 0))
		r = -EBADMSG;
	if (r < 0) {
		if (pidfd >= 0)
			close(pidfd);
		launcher_fail(l, "no answer to a launch", r);
		if (launcher_orphan_find(l, spec_path, ret_pid, ret_pidfd)) {
			*ret_notify = sv[0];
			*ret_child = false;
			return 0;
		}
		close(sv[0]);
		return gded_launch(l->gded, l->nofile, l->wrappers_procs, spec_path, ret_pid, ret_pidfd,
				   ret_notify, ret_child, err);
	}
	if (word[0] != 0) {
		/* No wrapper was made (a spec path too long for its command
		 * line, or no fork): gded is exec'ed for this one. */
		close(sv[0]);
		if (pidfd >= 0)
			close(pidfd);
		log_debug("resident launcher: %s: %s; exec'ing gded", spec_path, strerror(word[0]));
		return gded_launch(l->gded, l->nofile, l->wrappers_procs, spec_path, ret_pid, ret_pidfd,
				   ret_notify, ret_child, err);
	}
	*ret_pid = word[1];
	*ret_pidfd = pidfd;
	*ret_notify = sv[0];
	*ret_child = false;
	return 0;
}
