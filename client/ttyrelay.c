/* SPDX-License-Identifier: MIT */
/* ttyrelay: the user's terminal, raw, to and from an interactive job's socket. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ttyrelay.h"

int ttyrelay_connect(const char *path, int timeout_ms, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timespec pause = { .tv_nsec = 50 * 1000000L };
	int fd, r = 0;

	if (strlen(path) >= sizeof(sa.sun_path))
		return error_set(err, -ENAMETOOLONG, "%s: path too long for a socket", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	for (int waited = 0; waited <= timeout_ms; waited += 50) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return error_set(err, -errno, "socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		r = -errno;
		close(fd);
		if (r != -ENOENT && r != -ECONNREFUSED)
			break;
		nanosleep(&pause, NULL);
	}
	return error_set(err, r, "cannot reach the job's terminal at %s: %s", path, strerror(-r));
}

/* Writes all of buf; 0 or -errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int ttyrelay_run(int fd, struct error *err)
{
	struct termios saved, raw;
	bool tty = tcgetattr(STDIN_FILENO, &saved) == 0, in_open = true;
	char buf[4096];
	int r = 0;

	if (tty) {
		raw = saved;
		cfmakeraw(&raw);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = in_open ? STDIN_FILENO : -1, .events = POLLIN },
		};
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = error_set(err, -errno, "poll: %s", strerror(errno));
			break;
		}
		if (p[0].revents) {
			n = read(fd, buf, sizeof(buf));
			if (n <= 0)
				break;   /* the job's terminal is gone */
			r = write_all(STDOUT_FILENO, buf, (size_t)n);
			if (r < 0) {
				r = error_set(err, r, "cannot write the job's output: %s", strerror(-r));
				break;
			}
		}
		if (in_open && p[1].revents) {
			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n <= 0) {
				in_open = false;
				shutdown(fd, SHUT_WR);
				continue;
			}
			if (write_all(fd, buf, (size_t)n) < 0)
				break;
		}
	}
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return r;
}
