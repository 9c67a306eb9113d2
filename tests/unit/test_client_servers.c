/* SPDX-License-Identifier: MIT */
/* lib/client's server list: the list's form, trying each server in turn,
 * and following a standby's reply, against small wire servers on real
 * Unix sockets (a protocol fixture: the standby qpoold is scheduler/'s). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "transport.h"
#include "unit.h"
#include "wire.h"

static void test_servers_parse(void)
{
	static const struct {
		const char *in;
		int r;
		size_t n;
		const char *last;
	} cases[] = {
		{ "h1:7001", 0, 1, "h1:7001" },
		{ "h1:7001,h2:7001,h3:7002", 0, 3, "h3:7002" },
		{ " h1:1 ,\th2:2 ", 0, 2, "h2:2" },
		{ "/run/qpool/a.sock,[::1]:9", 0, 2, "[::1]:9" },
		{ "", -EINVAL, 0, NULL },
		{ "h1:1,", -EINVAL, 0, NULL },
		{ ",h1:1", -EINVAL, 0, NULL },
		{ "h1:1,,h2:2", -EINVAL, 0, NULL },
		{ "h1:1,h2", -EINVAL, 0, NULL },
		{ "h1:1,h2:0", -EINVAL, 0, NULL },
		{ "a:1,a:2,a:3,a:4,a:5,a:6,a:7,a:8,a:9,a:10,a:11,a:12,a:13,a:14,a:15,a:16,a:17", -E2BIG, 0, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct transport_servers list;
		struct error err = { "" };
		int r = transport_servers_parse(cases[i].in, &list, &err);

		if (r != cases[i].r)
			fprintf(stderr, "\n  '%s': %d (%s)", cases[i].in, r, err.text);
		CU_ASSERT_EQUAL(r, cases[i].r);
		if (r == 0) {
			CU_ASSERT_EQUAL(list.n, cases[i].n);
			CU_ASSERT_STRING_EQUAL(list.addr[list.n - 1], cases[i].last);
		} else {
			CU_ASSERT(err.text[0] != '\0' && !strchr(err.text, '\n'));
		}
	}
}

/* A wire server on a Unix socket, in a child: every request is answered
 * as a standby naming `active` (NULL: none) or, with active_ok, as the
 * active would ("ok": true). Each request's op goes down a pipe, one line
 * "standby OP" / "active OP", so the test counts what each server got. */
struct fixture {
	pid_t pid;
	int report;     /* read end */
};

static void fixture_serve(int lfd, int report, bool active_ok, const char *active)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		json_t *req;
		struct error err;

		if (fd < 0)
			_exit(1);
		while (wire_recv(fd, &req, &err) == 0) {
			json_int_t id = json_integer_value(json_object_get(req, "id"));
			char line[128];
			json_t *reply;
			int n;

			n = snprintf(line, sizeof(line), "%s %s\n", active_ok ? "active" : "standby",
				     wire_str(req, "op") ?: "?");
			if (write(report, line, (size_t)n) != n)
				_exit(1);
			if (active_ok)
				reply = json_pack("{s:I, s:b, s:s}", "id", id, "ok", 1, "by", "active");
			else
				reply = json_pack("{s:I, s:b, s:i, s:s, s:b, s:s*}", "id", id, "ok", 0, "errno", EAGAIN,
						  "error", "qpoold on fx is a standby; the active is elsewhere (epoch 2)",
						  "standby", 1, "active", active);
			(void)wire_send(fd, reply);
			json_decref(reply);
			json_decref(req);
		}
		close(fd);
	}
}

static void fixture_start(struct fixture *fx, const char *path, bool active_ok, const char *active)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd, p[2];

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(lfd >= 0);
	CU_ASSERT_FATAL(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 8) == 0);
	CU_ASSERT_FATAL(pipe2(p, O_CLOEXEC) == 0);
	fx->pid = fork();
	CU_ASSERT_FATAL(fx->pid >= 0);
	if (fx->pid == 0) {
		close(p[0]);
		fixture_serve(lfd, p[1], active_ok, active);
	}
	close(lfd);
	close(p[1]);
	fx->report = p[0];
}

/* Stops the fixture and returns what it reported. */
static char *fixture_stop(struct fixture *fx)
{
	static char buf[4][512];
	static unsigned k;
	char *out = buf[k++ % 4];
	ssize_t n, used = 0;

	kill(fx->pid, SIGKILL);
	waitpid(fx->pid, NULL, 0);
	while ((n = read(fx->report, out + used, sizeof(buf[0]) - 1 - (size_t)used)) > 0)
		used += n;
	out[used] = '\0';
	close(fx->report);
	return out;
}

static char *conf_write(const char *dir, const char *servers)
{
	static char path[4200];
	char text[16384];

	snprintf(text, sizeof(text), "[server]\nstate_dir = %s\nsocket = %s/unused.sock\nserver = %s\n", dir, dir,
		 servers);
	unit_write_file(dir, "q.conf", text);
	snprintf(path, sizeof(path), "%s/q.conf", dir);
	return path;
}

/* The first server is down, the second a standby naming an active that
 * does not answer (a port nobody listens on): the request reaches the
 * third, the active, once; the standby got it once and did nothing. */
static void test_follow_standby(void)
{
	char *dir = unit_tmpdir();
	char sb[4200], act[4200], list[9000], dead[64];
	struct fixture fs, fa;
	struct client *cl = NULL;
	struct error err = { "" };
	json_t *reply = NULL;
	int r, port_fd;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);

	/* A loopback port bound but not listening: connect is refused. */
	port_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(port_fd >= 0 && bind(port_fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	CU_ASSERT_FATAL(getsockname(port_fd, (struct sockaddr *)&sin, &sl) == 0);
	snprintf(dead, sizeof(dead), "127.0.0.1:%u", ntohs(sin.sin_port));
	snprintf(sb, sizeof(sb), "%s/standby.sock", dir);
	snprintf(act, sizeof(act), "%s/active.sock", dir);
	fixture_start(&fs, sb, false, dead);
	fixture_start(&fa, act, true, NULL);
	snprintf(list, sizeof(list), "%s/down.sock, %s, %s", dir, sb, act);
	unsetenv("QPOOL_SERVER");
	r = client_open(conf_write(dir, list), &cl, &err);
	if (r < 0)
		fprintf(stderr, "\n  client_open: %s", err.text);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	r = client_call(cl, json_pack("{s:s}", "op", "submit"), &reply, &err);
	if (r < 0)
		fprintf(stderr, "\n  client_call: %s", err.text);
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_STRING_EQUAL(wire_str(reply, "by") ?: "", "active");
	json_decref(reply);
	/* The next request on the same client goes straight to the active. */
	reply = NULL;
	CU_ASSERT_EQUAL(client_call(cl, json_pack("{s:s}", "op", "stat"), &reply, &err), 0);
	json_decref(reply);
	client_close(cl);
	CU_ASSERT_STRING_EQUAL(fixture_stop(&fs), "standby submit\n");
	CU_ASSERT_STRING_EQUAL(fixture_stop(&fa), "active submit\nactive stat\n");
	close(port_fd);
	unit_tmpdir_remove(dir);
}

/* No server answers: one line naming each server tried and why. */
static void test_none_answers(void)
{
	char *dir = unit_tmpdir();
	char list[9000];
	struct client *cl = NULL;
	struct error err = { "" };
	int r;

	snprintf(list, sizeof(list), "%s/a.sock,%s/b.sock", dir, dir);
	unsetenv("QPOOL_SERVER");
	r = client_open(conf_write(dir, list), &cl, &err);
	CU_ASSERT_EQUAL(r, -ENOENT);
	CU_ASSERT_PTR_NULL(cl);
	CU_ASSERT(strstr(err.text, "no qpoold answered at ") != NULL);
	CU_ASSERT(strstr(err.text, "/a.sock (No such file or directory), ") != NULL);
	CU_ASSERT(strstr(err.text, "/b.sock (No such file or directory)") != NULL);
	CU_ASSERT(!strchr(err.text, '\n'));
	/* QPOOL_SERVER wins, and a bad one is one line naming it. */
	setenv("QPOOL_SERVER", "h1:1,,h2:2", 1);
	r = client_open(conf_write(dir, list), &cl, &err);
	unsetenv("QPOOL_SERVER");
	CU_ASSERT_EQUAL(r, -EINVAL);
	CU_ASSERT(strncmp(err.text, "QPOOL_SERVER: h1:1,,h2:2: ", 26) == 0);
	unit_tmpdir_remove(dir);
}

static const struct unit_test client_servers_tests[] = {
	{ "servers_parse", test_servers_parse },
	{ "follow_standby", test_follow_standby },
	{ "none_answers", test_none_answers },
	{ NULL, NULL },
};

UNIT_SUITE(client_servers, client_servers_tests);
