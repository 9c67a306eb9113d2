/* SPDX-License-Identifier: MIT */
/* qsub -I on the node: a pty for the job's shell and a socket its owner's qsub relays the terminal through. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "gded-internal.h"
#include "timeutil.h"

/* ^Ds written again after the user's input ended, on the job's output. */
#define PTY_EOF_RESENDS 8

/* The size of the user's terminal, as qsub -I found it at submit
 * (QPOOL_TTY_SIZE="ROWS COLS" in the job's environment), on the pty:
 * the job's programs (an editor, a pager) lay out for it. A value
 * that is not two sizes leaves the pty's 0 0. */
static void pty_size_set(const struct gded_job *job, int master)
{
	static const char key[] = "QPOOL_TTY_SIZE=";

	for (char **e = job->env; e && *e; e++) {
		unsigned rows, cols;
		char end;

		if (strncmp(*e, key, sizeof(key) - 1) != 0)
			continue;
		if (sscanf(*e + sizeof(key) - 1, "%u %u%c", &rows, &cols, &end) == 2 && rows > 0 && rows <= 65535 &&
		    cols > 0 && cols <= 65535)
			(void)ioctl(master, TIOCSWINSZ, &(struct winsize){ .ws_row = (unsigned short)rows,
									   .ws_col = (unsigned short)cols });
		return;
	}
}

int gded_pty_open(const struct gded_job *job, struct gded_pty **ret, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(job->script);
	struct gded_pty *pty;
	int r;

	*ret = NULL;
	/* Beside the job's files: jobs/<id>.sh -> jobs/<id>.pty. The jobs
	 * directory lets a user reach a name, not list; the socket is the
	 * owner's, mode 0600, so only they (and root) can connect. */
	if (n < 3 || strcmp(job->script + n - 3, ".sh") != 0 || n + 6 >= sizeof(sa.sun_path))
		return error_set(err, -EINVAL, "no place for the job's terminal socket beside %s",
				 job->script);
	/* On the heap, not the caller's stack: its two relay buffers are
	 * 72 KiB, which a wrapper zeroing them for every job faulted in
	 * page by page (issue 39). */
	if (!(pty = malloc(sizeof(*pty))))
		return error_set(err, -ENOMEM, "out of memory");
	*pty = (struct gded_pty){ .master = -1, .listen = -1, .conn = -1, .hold = -1 };
	snprintf(pty->path, sizeof(pty->path), "%.*s.pty", (int)(n - 3), job->script);
	pty->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (pty->master < 0 || grantpt(pty->master) < 0 || unlockpt(pty->master) < 0 ||
	    ptsname_r(pty->master, pty->slave, sizeof(pty->slave)) != 0) {
		r = error_set(err, -errno, "cannot make a pty: %m");
		goto fail;
	}
	/* grantpt gives the slave to the caller, root: the job's user opens
	 * it after the drop. */
	pty->hold = open(pty->slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (pty->hold < 0 || chown(pty->slave, job->uid, job->gid) < 0 || chmod(pty->slave, 0600) < 0) {
		r = error_set(err, -errno, "%s: %m", pty->slave);
		goto fail;
	}
	/* Made as jobs/<id>.ptx, root's, and renamed once it is the user's
	 * and listening: a qsub that came between bind and chown was
	 * refused (EACCES), where a name not there yet (ENOENT) makes it
	 * try again. */
	pty->listen = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	memcpy(sa.sun_path, pty->path, strlen(pty->path) + 1);
	sa.sun_path[strlen(sa.sun_path) - 1] = 'x';
	unlink(sa.sun_path);
	unlink(pty->path);
	if (pty->listen < 0 || bind(pty->listen, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chown(sa.sun_path, job->uid, job->gid) < 0 || chmod(sa.sun_path, 0600) < 0 ||
	    listen(pty->listen, 1) < 0 || rename(sa.sun_path, pty->path) < 0) {
		r = error_set(err, -errno, "%s: %m", sa.sun_path);
		unlink(sa.sun_path);
		goto fail;
	}
	pty_size_set(job, pty->master);
	fcntl(pty->master, F_SETFL, O_NONBLOCK);
	*ret = pty;
	return 0;
fail:
	gded_pty_close(pty);
	return r;
}

void gded_pty_close(struct gded_pty *pty)
{
	if (!pty)
		return;
	if (pty->conn >= 0)
		close(pty->conn);
	if (pty->listen >= 0)
		close(pty->listen);
	if (pty->master >= 0)
		close(pty->master);
	if (pty->hold >= 0)
		close(pty->hold);
	if (pty->path[0])
		unlink(pty->path);
	free(pty);
}

static void pty_accept(struct gded_pty *pty)
{
	/* Non-blocking: a qsub that stops reading (stopped, its terminal
	 * paused) must leave gded's loop free for SIGTERM, the walltime and
	 * qnoded (the relay then holds GDED_PTY_OUT_MAX at most). */
	int fd = accept4(pty->listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	/* One terminal: the first qsub to come keeps it. */
	if (pty->conn >= 0) {
		close(fd);
		return;
	}
	pty->conn = fd;
	close(pty->listen);
	pty->listen = -1;
}

/* The qsub is gone: the terminal hangs up, what was on its way is
 * dropped. */
static void pty_hangup(struct gded_pty *pty)
{
	if (pty->master >= 0)
		close(pty->master);
	pty->master = -1;
	if (pty->conn >= 0)
		close(pty->conn);
	pty->conn = -1;
	pty->out_len = pty->in_len = 0;
	pty->eof_pending = false;
}

/* Drops the first n bytes of buf (len bytes). */
static void buf_consume(char *buf, size_t *len, size_t n)
{
	memmove(buf, buf + n, *len - n);
	*len -= n;
}

/* The job's output: from the master into out while it has room (with
 * nobody attached, into the void: the pty is kept drained, a buffer's
 * worth per call, so a job that writes without end cannot hold gded's
 * loop here). -EIO once the job's side of the terminal is closed, else 0. */
static int pty_read_job(struct gded_pty *pty)
{
	size_t dropped = 0;

	while (pty->out_len < sizeof(pty->out) && dropped < sizeof(pty->out)) {
		ssize_t n = read(pty->master, pty->out + pty->out_len, sizeof(pty->out) - pty->out_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -EIO;
		if (pty->conn >= 0)
			pty->out_len += (size_t)n;
		else
			dropped += (size_t)n;
		/* The user's input has ended and all of it is written, yet the
		 * job still speaks: its ^D may have been lost (written while
		 * the terminal was canonical, then bash's readline switched
		 * it to raw and read a NUL for it: t-pbs-interactive waited
		 * for ever, ~1 run in 6 on a loaded host). Another, a few
		 * times at most: at the end of input an extra ^D only says
		 * the end again. */
		if (pty->conn_eof && !pty->eof_pending && pty->in_len == 0 && pty->eof_resent < PTY_EOF_RESENDS) {
			pty->eof_pending = true;
			pty->eof_resent++;
		}
	}
	return 0;
}

/* out to the qsub, as much as its socket takes now. -EPIPE (or another
 * -errno) when it is gone, else 0. */
static int pty_send_user(struct gded_pty *pty)
{
	while (pty->out_len > 0) {
		ssize_t n = send(pty->conn, pty->out, pty->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		buf_consume(pty->out, &pty->out_len, (size_t)n);
	}
	return 0;
}

/* The user's input: from the qsub into in while it has room; its end
 * becomes the terminal's end of file, ^D, once in is written. */
static void pty_read_user(struct gded_pty *pty)
{
	while (!pty->conn_eof && pty->in_len < sizeof(pty->in)) {
		ssize_t n = recv(pty->conn, pty->in + pty->in_len, sizeof(pty->in) - pty->in_len, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;   /* EAGAIN; a reset shows as POLLHUP/POLLERR */
		if (n == 0) {
			pty->conn_eof = true;
			pty->eof_pending = true;
			return;
		}
		pty->in_len += (size_t)n;
	}
}

/* in (then the pending ^D) to the job's terminal, as much as it takes. */
static void pty_write_job(struct gded_pty *pty)
{
	while (pty->in_len > 0) {
		ssize_t n = write(pty->master, pty->in, pty->in_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf_consume(pty->in, &pty->in_len, (size_t)n);
	}
	if (pty->eof_pending && write(pty->master, "\004", 1) == 1)
		pty->eof_pending = false;
}

void gded_pty_pollfds(const struct gded_pty *pty, struct pollfd *pfd)
{
	short conn_ev = 0, master_ev = 0;

	pfd[0] = (struct pollfd){ .fd = pty->listen, .events = POLLIN };
	if (pty->conn >= 0) {
		if (!pty->conn_eof && pty->in_len < sizeof(pty->in))
			conn_ev |= POLLIN;
		if (pty->out_len > 0)
			conn_ev |= POLLOUT;
	}
	/* After its end of input the qsub is still watched (events 0):
	 * POLLHUP says it is gone, not only its input. */
	pfd[1] = (struct pollfd){ .fd = pty->conn, .events = conn_ev };
	if (pty->master >= 0) {
		if (pty->out_len < sizeof(pty->out))
			master_ev |= POLLIN;
		if (pty->in_len > 0 || pty->eof_pending)
			master_ev |= POLLOUT;
	}
	/* Nothing wanted of the master (out full): not polled at all, or
	 * its POLLHUP (the job's side closed) would spin the loop. */
	pfd[2] = (struct pollfd){ .fd = master_ev ? pty->master : -1, .events = master_ev };
}

void gded_pty_events(struct gded_pty *pty, const struct pollfd *pfd)
{
	if (pfd[0].fd >= 0 && pfd[0].revents)
		pty_accept(pty);
	if (pfd[1].fd >= 0 && pty->conn >= 0) {
		if (pfd[1].revents & POLLIN)
			pty_read_user(pty);
		if ((pfd[1].revents & POLLOUT) && pty_send_user(pty) < 0)
			pty_hangup(pty);
		else if (pfd[1].revents & (POLLHUP | POLLERR))
			pty_hangup(pty);
	}
	if (pfd[2].fd >= 0 && pty->master >= 0) {
		if ((pfd[2].revents & POLLOUT) || pty->in_len > 0 || pty->eof_pending)
			pty_write_job(pty);
		if ((pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) && pty_read_job(pty) < 0) {
			/* The job's side closed: the shell is leaving. */
			close(pty->master);
			pty->master = -1;
		}
	}
	/* What just came from one side goes on at once when the other has
	 * room: no extra trip through poll. */
	if (pty->master >= 0 && (pty->in_len > 0 || pty->eof_pending))
		pty_write_job(pty);
	if (pty->conn >= 0 && pty->out_len > 0 && pty_send_user(pty) < 0)
		pty_hangup(pty);
}

void gded_pty_flush(struct gded_pty *pty, int timeout_ms)
{
	int64_t end = time_mono_ns() + (int64_t)timeout_ms * 1000000;

	for (;;) {
		int64_t left = end - time_mono_ns();

		if (pty->master >= 0 && pty_read_job(pty) < 0) {
			close(pty->master);
			pty->master = -1;
		}
		if (pty->conn < 0 || pty->out_len == 0 || left <= 0 || pty_send_user(pty) < 0)
			return;
		/* A job's straggler may still write: the deadline ends that too. */
		if (pty->out_len > 0 &&
		    poll(&(struct pollfd){ .fd = pty->conn, .events = POLLOUT }, 1, (int)(left / 1000000) + 1) <= 0)
			return;
	}
}
