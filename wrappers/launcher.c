/* SPDX-License-Identifier: MIT */
/* gded --launcher: qnoded's resident launcher, which forks one wrapper per job without an exec. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "gded.h"

/* The process's command line, what /proc/PID/cmdline shows: the bytes
 * of its argv strings, a region of fixed size that qnoded padded (one
 * argument of filler) to hold a wrapper's command line. Setting another
 * region (prctl PR_SET_MM_ARG_START) would need CAP_SYS_RESOURCE, which
 * containers often drop; writing into this one needs nothing. */
static char *cmdline;
static size_t cmdline_len;

/* Writes argv's NUL-separated text over the command line, NULs after it
 * (procscan.c ignores trailing empty arguments). 0 or -ENAMETOOLONG. */
static int cmdline_set(char *const *argv)
{
	size_t len = 0;

	for (size_t i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	if (len > cmdline_len)
		return -ENAMETOOLONG;
	len = 0;
	for (size_t i = 0; argv[i]; i++) {
		size_t l = strlen(argv[i]) + 1;

		memmove(cmdline + len, argv[i], l);
		len += l;
	}
	memset(cmdline + len, 0, cmdline_len - len);
	return 0;
}

/* Receives one request: the spec path (the payload) and the notify
 * socket (one fd). 1 with both, 0 at EOF, -errno; a request without its
 * fd or with a bad path is -EBADMSG (answered, not fatal). */
static int request_recv(int sock, char *path, size_t size, int *ret_fd)
{
	union {
		struct cmsghdr h;
		/* cppcheck-suppress unusedStructMember ; it sizes the union for CMSG_SPACE */
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} ctl;
	struct iovec iov = { .iov_base = path, .iov_len = size - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
			     .msg_controllen = sizeof(ctl) };
	int fd = -1, r = 1;
	ssize_t n;

	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int x;

			memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd < 0)
				fd = x;
			else
				close(x);
		}
	}
	path[n] = '\0';
	if (fd < 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || path[0] != '/' ||
	    strlen(path) != (size_t)n) {
		if (fd >= 0)
			close(fd);
		return -EBADMSG;
	}
	*ret_fd = fd;
	return r;
}

/* The answer: {errno, pid} and, when 0, the wrapper's pidfd. */
static void reply_send(int sock, int32_t e, int32_t pid, int pidfd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	int32_t word[2] = { e, pid };
	struct iovec iov = { .iov_base = word, .iov_len = sizeof(word) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (pidfd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = &ctl;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pidfd, sizeof(int));
	}
	(void)sendmsg(sock, &mh, MSG_NOSIGNAL);
}

/* In the forked wrapper: the state a posix_spawn of `gded --spec PATH
 * --notify 3` gives (fd 3 the notify socket, nothing else open beyond
 * stdio, only SIGTERM blocked, its own session) and that command line,
 * then the job. Never returns. */
static void wrapper_start(const char *self, const char *spec, int notify_fd,
			  int (*job_main)(const char *spec, int notify_fd))
{
	char *argv[] = { (char *)self, (char *)"--spec", (char *)spec, (char *)"--notify",
			 (char *)"3", NULL };
	sigset_t mask;
	int r;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	/* The command line first: from here on a qnoded that restarts
	 * finds this wrapper in /proc as it finds an exec'ed one. */
	if (cmdline_set(argv) < 0)
		_exit(127);
	if (notify_fd != 3) {
		if (dup2(notify_fd, 3) < 0)
			_exit(127);
	} else if (fcntl(3, F_SETFD, 0) < 0) {
		_exit(127);
	}
	/* The node's cgroup parents, held by the launcher, stay. */
	cgroup_parents_closefrom(4);
	setsid();
	/* _exit, not exit: nothing of the job is left to flush (the result
	 * is written and fsynced, the log is unbuffered stderr) and the
	 * launcher's exit handlers and ld.so's destructors are not this
	 * wrapper's to run: ~2% of its CPU for nothing. */
	r = job_main(spec, 3);
	fflush(NULL);
	_exit(r);
}

#define PARENTS_RECHECK_MS 1000

/* The node's cgroup parents, named by qnoded in the environment
 * (CGROUP_HOLD_ENV_*, noded/launch.c), opened once here and inherited by
 * every wrapper (issue 39: six path walks a job). Taken out of environ,
 * so no hook or job inherits them. Without them (an
 * older qnoded, a bench), or when they cannot be opened, each wrapper
 * opens its own as an exec'ed gded does. */
static void parents_hold(void)
{
	const char *mode = getenv(CGROUP_HOLD_ENV_MODE), *root = getenv(CGROUP_HOLD_ENV_ROOT);
	const char *parent = getenv(CGROUP_HOLD_ENV_PARENT);
	struct error err = { { 0 } };
	enum cgroup_mode m;

	if (mode && root && parent && cgroup_mode_parse(mode, &m) == 0 &&
	    cgroup_parents_hold(root, m, parent, &err) < 0)
		fprintf(stderr, "gded --launcher: %s; each wrapper opens its own\n", err.text);
	unsetenv(CGROUP_HOLD_ENV_MODE);
	unsetenv(CGROUP_HOLD_ENV_ROOT);
	unsetenv(CGROUP_HOLD_ENV_PARENT);
}

int gded_launcher_run(int argc, char **argv, int sock, int (*job_main)(const char *spec, int notify_fd))
{
	static char self[4096];
	char spec[4096];
	sigset_t chld;
	int sfd, r;

	/* Children are reaped here (their CPU time lands in this process's
	 * cutime); SIGCHLD through a signalfd. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		fprintf(stderr, "gded --launcher: signalfd: %m\n");
		return 1;
	}
	/* argv: gded --launcher FILLER, one contiguous region. */
	if (argc != 3 || strlen(argv[0]) >= sizeof(self)) {
		fprintf(stderr, "gded --launcher: needs its filler argument\n");
		return 1;
	}
	snprintf(self, sizeof(self), "%s", argv[0]);
	cmdline = argv[0];
	cmdline_len = (size_t)(argv[2] + strlen(argv[2]) + 1 - argv[0]);
	{
		char *own[] = { self, (char *)"--launcher", NULL };

		r = cmdline_set(own);
	}
	if (r < 0)
		return 1;
	if (fcntl(sock, F_SETFD, FD_CLOEXEC) < 0)
		return 1;
	/* What every wrapper would do first, done once here and inherited
	 * through the fork (issue 39): jansson's hash seed (else an open and
	 * read of /dev/urandom per job; the spec is qnoded's, root's own),
	 * malloc's set-up (its tunables, the tcache key's getrandom, the
	 * heap's first brk; through a volatile, since gcc drops a plain
	 * free(malloc(1)) as dead code), the MPI agent's path (its probe
	 * reads /proc/self/exe). Symbols are bound here too: gded's by its
	 * -z now, libc's own by the LD_BIND_NOW qnoded starts us with. */
	json_object_seed(0);
	{
		/* cppcheck-suppress unusedAllocatedMemory ; allocated only to be freed */
		void *volatile first = malloc(1);

		free(first);
	}
	gded_mpienv_prepare();
	gded_spawn_init();
	parents_hold();
	reply_send(sock, 0, (int32_t)getpid(), -1);

	for (;;) {
		struct pollfd pfd[2] = { { .fd = sock, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		int notify_fd = -1, pidfd;
		pid_t pid;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
		}
		if (!pfd[0].revents)
			continue;
		r = request_recv(sock, spec, sizeof(spec), &notify_fd);
		if (r == 0)
			return 0;   /* qnoded went: the wrappers live on without us */
		if (r == -EINTR || r == -EAGAIN)
			continue;
		if (r == -EBADMSG) {
			reply_send(sock, EBADMSG, 0, -1);
			continue;
		}
		if (r < 0)
			return 1;
		/* Room for its command line: else qnoded execs this one. */
		if (strlen(self) + strlen(spec) + sizeof("--spec --notify 3") + 2 > cmdline_len) {
			close(notify_fd);
			reply_send(sock, ENAMETOOLONG, 0, -1);
			continue;
		}
		/* A held parent removed and made again (a qnoded that stopped
		 * cleanly and started): held anew, looked at once a second. A
		 * wrapper that meets a gone one in between opens its own. */
		cgroup_parents_recheck(PARENTS_RECHECK_MS);
		pid = fork();
		if (pid == 0)
			wrapper_start(self, spec, notify_fd, job_main);
		r = pid < 0 ? errno : 0;
		close(notify_fd);
		if (r) {
			reply_send(sock, r, 0, -1);
			continue;
		}
		/* Not reaped before this (only the loop above reaps), so the
		 * pid cannot have been reused. */
		pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (pidfd < 0) {
			r = errno;
			kill(pid, SIGKILL);
			reply_send(sock, r, 0, -1);
			continue;
		}
		reply_send(sock, 0, (int32_t)pid, pidfd);
		close(pidfd);
	}
}
