/* SPDX-License-Identifier: MIT */
/* A site's hook run out of process: see hook.h for the contract. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hook.h"
#include "timeutil.h"

static char *const default_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int check_one(const char *p, bool dir, char *why, size_t whylen)
{
	struct stat st;

	if (stat(p, &st) < 0) {
		snprintf(why, whylen, "%s: %s", p, strerror(errno));
		return -errno;
	}
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s: not a %s", p, dir ? "directory" : "regular file");
		return -EINVAL;
	}
	if (st.st_uid != 0) {
		snprintf(why, whylen, "%s: owned by uid %u, not root", p, (unsigned)st.st_uid);
		return -EPERM;
	}
	/* A sticky directory writable by all (/tmp) still lets nobody but root
	 * replace root's file in it. */
	if ((st.st_mode & 0022) && !(dir && (st.st_mode & S_ISVTX))) {
		snprintf(why, whylen, "%s: writable by %s", p,
			 (st.st_mode & 0002) ? "others" : "its group");
		return -EPERM;
	}
	if (!dir && !(st.st_mode & 0111)) {
		snprintf(why, whylen, "%s: not executable", p);
		return -EACCES;
	}
	return 0;
}

int hook_path_check(const char *path, char *why, size_t whylen)
{
	char real[PATH_MAX];
	int r;

	if (!path || path[0] != '/') {
		snprintf(why, whylen, "%s: a hook is named by its absolute path", path ? path : "(none)");
		return -EINVAL;
	}
	if (!realpath(path, real)) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	r = check_one(real, false, why, whylen);
	/* Every directory above it, up to /. */
	for (char *slash = strrchr(real, '/'); r == 0 && slash; slash = strrchr(real, '/')) {
		if (slash == real) {
			r = check_one("/", true, why, whylen);
			break;
		}
		*slash = '\0';
		r = check_one(real, true, why, whylen);
	}
	return r;
}

int hook_start(struct hook *h, const char *path, char *const argv[], char *const env[],
	       const char *input, size_t input_len, size_t out_max)
{
	int sin[2] = { -1, -1 }, sout[2] = { -1, -1 }, serr[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, deflt;
	mode_t mask;
	int r = 0;

	memset(h, 0, sizeof(*h));
	h->pid = -1;
	h->pidfd = h->in = h->out = h->err = -1;
	h->input = input;
	h->input_len = input ? input_len : 0;
	h->out_max = out_max ? out_max : HOOK_OUT_MAX;
	h->started_ns = time_mono_ns();
	/* stdin is a socket so that writing to a hook that exited raises no
	 * SIGPIPE in the caller (send's MSG_NOSIGNAL). */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sin) < 0 ||
	    pipe2(sout, O_CLOEXEC) < 0 || pipe2(serr, O_CLOEXEC) < 0) {
		r = -errno;
		goto out;
	}
	shutdown(sin[1], SHUT_RD);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	sigfillset(&deflt);
	sigdelset(&deflt, SIGKILL);
	sigdelset(&deflt, SIGSTOP);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &deflt);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				 POSIX_SPAWN_SETSID);
	posix_spawn_file_actions_adddup2(&fa, sin[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, sout[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, serr[1], STDERR_FILENO);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawn_file_actions_addchdir_np(&fa, "/");
	/* glibc's posix_spawn is clone(CLONE_VM|CLONE_VFORK): its cost does
	 * not grow with the caller's memory as fork's does (qpoold holding a
	 * million jobs; docs/DESIGN-FACTS.md). It sets no umask: the caller's
	 * is set around it (every caller is one thread). An exec that fails
	 * is its return value. */
	mask = umask(022);
	r = -posix_spawn(&h->pid, path, &fa, &attr, argv, env ? env : default_env);
	umask(mask);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (r < 0) {
		h->pid = -1;
		goto out;
	}
	h->pidfd = (int)syscall(SYS_pidfd_open, h->pid, 0);
	if (h->pidfd < 0) {
		r = -errno;
		kill(-h->pid, SIGKILL);
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
		h->pid = -1;
		goto out;
	}
	h->in = sin[1];
	h->out = sout[0];
	h->err = serr[0];
	sin[1] = sout[0] = serr[0] = -1;
	fcntl(h->in, F_SETFL, O_NONBLOCK);
	fcntl(h->out, F_SETFL, O_NONBLOCK);
	fcntl(h->err, F_SETFL, O_NONBLOCK);
	if (!h->input_len)
		close_fd(&h->in);
out:
	close_fd(&sin[0]);
	close_fd(&sin[1]);
	close_fd(&sout[0]);
	close_fd(&sout[1]);
	close_fd(&serr[0]);
	close_fd(&serr[1]);
	if (r < 0) {
		h->outcome = HOOK_NOSTART;
		h->start_errno = -r;
		h->ended_ns = time_mono_ns();
	}
	return r;
}

int hook_fds(const struct hook *h, int fds[4], short events[4])
{
	int n = 0;

	if (h->in >= 0) {
		fds[n] = h->in;
		events[n++] = POLLOUT;
	}
	if (h->out >= 0) {
		fds[n] = h->out;
		events[n++] = POLLIN;
	}
	if (h->err >= 0) {
		fds[n] = h->err;
		events[n++] = POLLIN;
	}
	if (h->pidfd >= 0) {
		fds[n] = h->pidfd;
		events[n++] = POLLIN;
	}
	return n;
}

/* Kill the hook's process group (what it left behind goes with it), then
 * reap the hook. It is reaped only here, after the kill: until then its
 * pid, a zombie at most, cannot name another process group. */
static void kill_and_reap(struct hook *h)
{
	bool was_exited = h->exited;
	int status;

	if (h->pid <= 0)
		return;
	kill(-h->pid, SIGKILL);
	while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!was_exited)
		h->status = status;
	h->exited = true;
	h->pid = -1;
}

static void end(struct hook *h, enum hook_outcome o)
{
	if (h->outcome != HOOK_RUNNING)
		return;
	kill_and_reap(h);
	close_fd(&h->in);
	close_fd(&h->out);
	close_fd(&h->err);
	close_fd(&h->pidfd);
	if (o == HOOK_RUNNING) {
		if (WIFEXITED(h->status))
			o = WEXITSTATUS(h->status) == 0 ? HOOK_OK : HOOK_FAILED;
		else
			o = HOOK_SIGNALED;
	}
	h->outcome = o;
	h->ended_ns = time_mono_ns();
}

/* Read what is there; false once the hook overflowed its bound. */
static bool read_out(struct hook *h)
{
	while (h->out >= 0) {
		ssize_t n;

		if (h->out_cap - h->out_len < 4096 + 1) {
			size_t cap = h->out_cap ? h->out_cap * 2 : 8192;
			char *p;

			if (cap > h->out_max + 4096 + 1)
				cap = h->out_max + 4096 + 1;
			if (cap <= h->out_cap)
				return false;
			p = realloc(h->outbuf, cap);
			if (!p)
				return false;
			h->outbuf = p;
			h->out_cap = cap;
			h->outbuf[h->out_len] = '\0';
		}
		n = read(h->out, h->outbuf + h->out_len, h->out_cap - h->out_len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			close_fd(&h->out);
			break;
		}
		h->out_len += (size_t)n;
		h->outbuf[h->out_len] = '\0';
		if (h->out_len > h->out_max)
			return false;
	}
	return true;
}

static void read_err(struct hook *h)
{
	char sink[4096];

	while (h->err >= 0) {
		size_t room = HOOK_ERR_KEEP - h->err_len;
		ssize_t n = room ? read(h->err, h->errbuf + h->err_len, room)
				 : read(h->err, sink, sizeof(sink));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			close_fd(&h->err);
			break;
		}
		if (room)
			h->err_len += (size_t)n;
		else
			h->err_cut = true;
		h->errbuf[h->err_len] = '\0';
	}
}

int hook_pump(struct hook *h)
{
	if (h->outcome != HOOK_RUNNING)
		return 1;
	while (h->in >= 0 && h->input_off < h->input_len) {
		ssize_t n = send(h->in, h->input + h->input_off, h->input_len - h->input_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {           /* it closed its stdin: its choice */
			close_fd(&h->in);
			break;
		}
		h->input_off += (size_t)n;
	}
	if (h->in >= 0 && h->input_off >= h->input_len)
		close_fd(&h->in);
	if (!read_out(h)) {
		end(h, HOOK_OVERFLOW);
		return 1;
	}
	read_err(h);
	if (!h->exited) {
		siginfo_t si = { 0 };

		/* Seen, not reaped (WNOWAIT): see kill_and_reap. */
		if (waitid(P_PID, (id_t)h->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == h->pid) {
			h->exited = true;
			h->status = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0)
							     : si.si_status;
		}
	}
	if (h->exited) {
		/* What it wrote before it exited is in the pipes: take it. */
		if (!read_out(h)) {
			end(h, HOOK_OVERFLOW);
			return 1;
		}
		read_err(h);
		end(h, HOOK_RUNNING);
		return 1;
	}
	return 0;
}

void hook_expire(struct hook *h)
{
	end(h, HOOK_TIMEOUT);
}

int hook_run(struct hook *h, const char *path, char *const argv[], char *const env[],
	     const char *input, size_t input_len, size_t out_max, int timeout_ms)
{
	int64_t deadline;
	int r;

	r = hook_start(h, path, argv, env, input, input_len, out_max);
	if (r < 0)
		return r;
	deadline = (int64_t)hook_deadline_us(h, (uint64_t)timeout_ms * 1000) * 1000;
	while (!hook_pump(h)) {
		struct pollfd p[4];
		int fds[4], n, wait_ms;
		short ev[4];
		int64_t left = deadline - time_mono_ns();

		if (left <= 0) {
			hook_expire(h);
			break;
		}
		n = hook_fds(h, fds, ev);
		for (int i = 0; i < n; i++)
			p[i] = (struct pollfd){ .fd = fds[i], .events = ev[i] };
		wait_ms = (int)((left + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
		if (poll(p, (nfds_t)n, wait_ms) < 0 && errno != EINTR) {
			hook_expire(h);
			break;
		}
	}
	return 0;
}

const char *hook_err_line(const struct hook *h, char *buf, size_t len)
{
	size_t n = strcspn(h->errbuf, "\n");

	if (!len)
		return buf;
	if (n >= len)
		n = len - 1;
	memcpy(buf, h->errbuf, n);
	buf[n] = '\0';
	return buf;
}

const char *hook_describe(const struct hook *h, char *buf, size_t len)
{
	char line[256];

	hook_err_line(h, line, sizeof(line));
	switch (h->outcome) {
	case HOOK_RUNNING:
		snprintf(buf, len, "running for %lld ms", (long long)hook_elapsed_ms(h));
		break;
	case HOOK_OK:
		snprintf(buf, len, "exit 0");
		break;
	case HOOK_FAILED:
		snprintf(buf, len, "exit %d%s%s", WEXITSTATUS(h->status), line[0] ? ": " : "", line);
		break;
	case HOOK_SIGNALED:
		snprintf(buf, len, "killed by signal %d%s%s", WTERMSIG(h->status),
			 line[0] ? ": " : "", line);
		break;
	case HOOK_TIMEOUT:
		snprintf(buf, len, "killed after %lld ms (its time bound)", (long long)hook_elapsed_ms(h));
		break;
	case HOOK_OVERFLOW:
		snprintf(buf, len, "printed more than %zu bytes: killed", h->out_max);
		break;
	case HOOK_NOSTART:
		snprintf(buf, len, "could not start: %s", strerror(h->start_errno));
		break;
	}
	return buf;
}

int64_t hook_elapsed_ms(const struct hook *h)
{
	int64_t end_ns = h->outcome == HOOK_RUNNING ? time_mono_ns() : h->ended_ns;

	return (end_ns - h->started_ns) / NSEC_PER_MSEC;
}

void hook_release(struct hook *h)
{
	if (h->outcome == HOOK_RUNNING && h->pid > 0)
		hook_expire(h);
	close_fd(&h->in);
	close_fd(&h->out);
	close_fd(&h->err);
	close_fd(&h->pidfd);
	free(h->outbuf);
	h->outbuf = NULL;
	h->out_len = h->out_cap = 0;
}
