/* SPDX-License-Identifier: MIT */
/* Starting a job's gded wrapper: posix_spawn (never fork) and a pidfd to watch it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exe.h"
#include "noded.h"

/* gded is root until it drops to the user: it gets a fixed environment,
 * never qnoded's (whatever the admin's shell had, LD_PRELOAD included).
 * The job's own environment travels in its spec. */
static char *const gded_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };

int launch_gded_path(const char *conf, char *buf, size_t len)
{
	if (conf && *conf)
		return (size_t)snprintf(buf, len, "%s", conf) >= len ? -ENAMETOOLONG : 0;
	return exe_sibling("gded", buf, len);
}

int launch_gded(void *data, const char *spec_path, pid_t *ret_pid, int *ret_pidfd, int *ret_notify,
		struct error *err)
{
	const char *gded = data;
	char *argv[] = { (char *)gded, (char *)"--spec", (char *)spec_path, (char *)"--notify", (char *)"3",
			 NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t mask, deflt;
	int pidfd, r, sv[2];
	pid_t pid;

	/* gded's end becomes its fd 3 (dup2 clears close-on-exec); ours
	 * stays close-on-exec, so no other wrapper inherits it. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
		return error_set(err, -errno, "socketpair: %m");
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
	posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
	/* Nothing else of qnoded's: an fd it inherited without close-on-exec
	 * (the admin's shell, an init script) must not reach a root wrapper,
	 * nor through it the job. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 4);

	/* glibc's posix_spawn is clone(CLONE_VM|CLONE_VFORK): its cost does
	 * not grow with qnoded's memory, unlike fork (9.8 ms at 256 MiB). */
	r = posix_spawn(&pid, gded, &fa, &attr, argv, gded_env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(sv[1]);
	if (r != 0) {
		close(sv[0]);
		errno = r;
		return error_set(err, -r, "cannot run %s: %m", gded);
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
	return 0;
}
