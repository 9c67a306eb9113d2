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

int gded_pty_open(const struct gded_job *job, struct gded_pty *pty, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char tmp[sizeof(sa.sun_path)];
	size_t n = strlen(job->script);
	int r;

	*pty = (struct gded_pty){ .master = -1, .listen = -1, .conn = -1, .hold = -1 };
	/* Beside the job's files: jobs/<id>.sh -> jobs/<id>.pty. The jobs
	 * directory lets a user reach a name, not list; the socket is the
	 * owner's, mode 0600, so only they (and root) can connect. */
	if (n < 3 || strcmp(job->script + n - 3, ".sh") != 0 || n + 6 >= sizeof(sa.sun_path))
		return error_set(err, -EINVAL, "no place for the job's terminal socket beside %s",
				 job->script);
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
	/* Made under another name and renamed once it is the owner's and
	 * listens: qsub -I / srun --pty, waiting for the name, must never
	 * meet it still root's (EACCES; seen on a loaded host between the
	 * bind and the chown). */
	/* Fits: path is n + 1 long, n + 6 < sizeof(sun_path) checked above. */
	memcpy(tmp, pty->path, n + 1);
	memcpy(tmp + n + 1, ".new", 5);
	pty->listen = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	memcpy(sa.sun_path, tmp, strlen(tmp) + 1);
	unlink(tmp);
	unlink(pty->path);
	if (pty->listen < 0 || bind(pty->listen, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chown(tmp, job->uid, job->gid) < 0 || chmod(tmp, 0600) < 0 ||
	    listen(pty->listen, 1) < 0 || rename(tmp, pty->path) < 0) {
		r = error_set(err, -errno, "%s: %m", tmp);
		unlink(tmp);
		goto fail;
	}
	pty_size_set(job, pty->master);
	fcntl(pty->master, F_SETFL, O_NONBLOCK);
	return 0;
fail:
	gded_pty_close(pty);
	return r;
}

void gded_pty_close(struct gded_pty *pty)
{
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
	*pty = (struct gded_pty){ .master = -1, .listen = -1, .conn = -1, .hold = -1 };
}

void gded_pty_accept(struct gded_pty *pty)
{
	int fd = accept4(pty->listen, NULL, NULL, SOCK_CLOEXEC);

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

/* Copies what fd has to out (send without SIGPIPE when out is the socket).
 * Returns bytes copied, 0 at the end, or -errno. */
static ssize_t pump(int in, int out, bool to_socket)
{
	char buf[4096];
	ssize_t n = read(in, buf, sizeof(buf)), off = 0;

	if (n <= 0)
		return n < 0 && errno == EAGAIN ? -EAGAIN : n < 0 ? -errno : 0;
	while (off < n) {
		ssize_t w = to_socket ? send(out, buf + off, (size_t)(n - off), MSG_NOSIGNAL) :
					write(out, buf + off, (size_t)(n - off));

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		off += w;
	}
	return n;
}

void gded_pty_from_user(struct gded_pty *pty)
{
	ssize_t n = pump(pty->conn, pty->master, false);

	if (n == 0 && !pty->conn_eof) {
		/* qsub's input ended: the terminal's end of file. */
		(void)!write(pty->master, "\004", 1);
		pty->conn_eof = true;
	}
}

void gded_pty_hangup(struct gded_pty *pty)
{
	if (pty->master >= 0)
		close(pty->master);
	pty->master = -1;
	if (pty->conn >= 0)
		close(pty->conn);
	pty->conn = -1;
}

int gded_pty_to_user(struct gded_pty *pty)
{
	ssize_t n;

	if (pty->conn < 0) {
		char sink[4096];

		/* Nobody attached yet (or any more): keep the pty drained. */
		n = read(pty->master, sink, sizeof(sink));
		return n < 0 && errno == EAGAIN ? 0 : n <= 0 ? -EIO : 0;
	}
	n = pump(pty->master, pty->conn, true);
	return n == -EAGAIN ? 0 : n <= 0 ? -EIO : 0;
}
