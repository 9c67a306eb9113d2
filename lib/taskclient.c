/* SPDX-License-Identifier: MIT */
/* The agents' side of remote starts: connect, task.start, relay, exit status. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base64.h"
#include "taskclient.h"

#define STATUS_LOST 255   /* as ssh: the task could not run, or was lost */
#define CHUNK 49152       /* stdin read: 64 KiB of base64 */

static int queue(struct taskclient *t, json_t *msg)
{
	int r;

	if (!msg)
		return -ENOMEM;
	r = wire_queue(&t->out, msg);
	json_decref(msg);
	return r;
}

int taskclient_start(struct taskclient *t, const char *sock, const char *host, const json_t *argv,
		     const char *cwd, const json_t *env, bool with_stdin, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	json_t *empty;
	char here[4096];
	int r;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->status = STATUS_LOST;
	snprintf(t->host, sizeof(t->host), "%s", host);
	if (!sock || !*sock)
		return error_set(err, -ENOENT, "%s is not set: run me inside a qpool job", TASKCLIENT_SOCKET_ENV);
	if (strlen(sock) >= sizeof(sa.sun_path))
		return error_set(err, -ENAMETOOLONG, "%s: path too long for a socket", sock);
	strcpy(sa.sun_path, sock);
	if (!cwd)
		cwd = getcwd(here, sizeof(here)) ? here : "";
	t->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t->fd < 0)
		return error_set(err, -errno, "socket: %m");
	if (connect(t->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return error_set(err, -errno, "cannot reach the node's qnoded at %s: %m", sock);
	/* NULL: nothing added, an empty object on the wire. */
	empty = env ? NULL : json_object();
	r = queue(t, json_pack("{s:s, s:i, s:s, s:O, s:O, s:s, s:b}", "op", "task.start", "id", 1,
			       "host", host, "argv", argv, "env", env ? env : empty, "cwd", cwd,
			       "stdin", with_stdin));
	json_decref(empty);
	if (r < 0)
		return error_set(err, r, "task.start: %s", strerror(-r));
	(void)fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

void taskclient_close(struct taskclient *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	wirebuf_free(&t->in);
	wirebuf_free(&t->out);
}

/* Writes all of buf to fd (blocking; EAGAIN waits in poll). */
static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			(void)poll(&pfd, 1, -1);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;   /* a closed stdout: the output has nowhere to go */
		p += n;
		len -= (size_t)n;
	}
}

static void task_finish(struct taskclient *t, int status, const char *prog, const char *why)
{
	if (why)
		fprintf(stderr, "%s: %s\n", prog, why);
	t->status = status;
	t->done = true;
	taskclient_close(t);
}

static void task_frame(struct taskclient *t, json_t *msg, const char *prog)
{
	const char *op = wire_str(msg, "op");

	if (!op) {
		long long id = wire_int(msg, "id", -1);

		/* id 0: qnoded refused the connection before reading task.start. */
		if (id != 1 && (id != 0 || wire_bool(msg, "ok", 0)))
			return;
		if (wire_bool(msg, "ok", 0))
			t->started = true;
		else
			task_finish(t, STATUS_LOST, prog, wire_str(msg, "error") ?: "refused, for no reason given");
		return;
	}
	if (strcmp(op, "task.out") == 0) {
		const char *data = wire_str(msg, "data");
		long long fd = wire_int(msg, "fd", 1);
		size_t len = data ? strlen(data) : 0, n = 0;
		unsigned char *buf;

		if (!data || (fd != 1 && fd != 2))
			return;
		buf = malloc(base64_decoded_max(len));
		if (!buf)
			return;
		if (base64_decode(data, len, buf, &n) == 0 && n > 0)
			write_all((int)fd, buf, n);
		free(buf);
	} else if (strcmp(op, "task.inack") == 0) {
		taskclient_window_ack(&t->in_flight, wire_int(msg, "bytes", 0));
	} else if (strcmp(op, "task.exit") == 0) {
		long long sig = wire_int(msg, "signal", 0);
		long long st = wire_int(msg, "status", STATUS_LOST);

		if (sig > 0 && sig < 128)
			task_finish(t, 128 + (int)sig, prog, wire_str(msg, "error"));
		else
			task_finish(t, st >= 0 && st <= 255 ? (int)st : STATUS_LOST, prog, wire_str(msg, "error"));
	}
}

static void task_read(struct taskclient *t, const char *prog)
{
	struct error err = { "" };
	json_t *msg;
	ssize_t n;
	int r = 0;

	for (;;) {
		n = wire_read(t->fd, &t->in);
		if (n == -EINTR)
			continue;
		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			char why[160];

			snprintf(why, sizeof(why), "%s: lost the connection to qnoded before the task ended",
				 t->host);
			task_finish(t, STATUS_LOST, prog, why);
			return;
		}
		while (!t->done && (r = wire_next(&t->in, &msg, &err)) == 1) {
			task_frame(t, msg, prog);
			json_decref(msg);
		}
		if (t->done)
			return;
		if (r < 0) {
			task_finish(t, STATUS_LOST, prog, err.text);
			return;
		}
	}
}

/* qnoded closed its side (EPIPE): it has nothing more to hear, but what
 * it sent before, its task.exit above all, is still in our socket.
 * Nothing more is sent; reading goes on to that frame or to EOF. */
static void task_unsendable(struct taskclient *t)
{
	t->unsendable = true;
	t->out.off = t->out.len = 0;
}

/* Takes msg, sent or not: a task that ended in this round of the
 * relay's loop still gets stdin read or a signal forwarded. */
static void task_send(struct taskclient *t, json_t *msg)
{
	if (t->done) {
		json_decref(msg);
		return;
	}
	if (t->unsendable) {
		json_decref(msg);
		return;
	}
	if (queue(t, msg) < 0)
		return;
	if (wire_flush(t->fd, &t->out) < 0)
		task_unsendable(t);
}

int taskclient_relay(struct taskclient *ts, size_t n, int stdin_fd, const char *prog)
{
	struct pollfd *pfd = calloc(n + 2, sizeof(*pfd));
	sigset_t ss;
	int sfd;

	if (!pfd)
		return -ENOMEM;
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGHUP);
	sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	for (;;) {
		size_t left = 0;

		for (size_t i = 0; i < n; i++) {
			struct taskclient *t = &ts[i];

			pfd[i].fd = t->done ? -1 : t->fd;
			pfd[i].events = POLLIN | (t->out.len > t->out.off ? POLLOUT : 0);
			left += !t->done;
		}
		if (!left)
			break;
		pfd[n].fd = stdin_fd >= 0 && ts[0].started && !ts[0].done &&
				    taskclient_window_room(ts[0].in_flight, CHUNK) > 0 ? stdin_fd : -1;
		pfd[n].events = POLLIN;
		pfd[n + 1].fd = sfd;
		pfd[n + 1].events = POLLIN;
		if (poll(pfd, n + 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			free(pfd);
			if (sfd >= 0)
				close(sfd);
			return -errno;
		}
		for (size_t i = 0; i < n; i++) {
			if (ts[i].done || !pfd[i].revents)
				continue;
			if ((pfd[i].revents & POLLOUT) && wire_flush(ts[i].fd, &ts[i].out) < 0)
				task_unsendable(&ts[i]);
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
				task_read(&ts[i], prog);
		}
		if (pfd[n].revents) {
			static char buf[CHUNK];
			ssize_t len = read(stdin_fd, buf, taskclient_window_room(ts[0].in_flight, sizeof(buf)));
			char *data = NULL;

			if (len < 0 && (errno == EINTR || errno == EAGAIN))
				len = -2;
			if (len != -2) {
				/* EOF (or an error): an empty task.in closes the task's stdin. */
				size_t n_in = len > 0 ? (size_t)len : 0;

				data = malloc(base64_encoded_len(n_in) + 1);
				if (data)
					base64_encode(buf, n_in, data);
				if (data) {
					ts[0].in_flight += (long long)strlen(data);
					task_send(&ts[0], json_pack("{s:s, s:s}", "op", "task.in", "data", data));
				}
				free(data);
				if (len <= 0)
					stdin_fd = -1;
			}
		}
		if (sfd >= 0 && (pfd[n + 1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				for (size_t i = 0; i < n; i++) {
					if (ts[i].started)
						task_send(&ts[i], json_pack("{s:s, s:i}", "op", "task.signal", "signal",
									    (int)si.ssi_signo));
					else if (!ts[i].done)
						/* Not running yet: we go, and qnoded stops
						 * it should it start after all. */
						task_finish(&ts[i], 128 + (int)si.ssi_signo, prog, NULL);
				}
		}
	}
	free(pfd);
	if (sfd >= 0)
		close(sfd);
	return 0;
}
