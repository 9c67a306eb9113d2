/* SPDX-License-Identifier: MIT */
/* Table tests for lib/transport's addresses, lib/wire's announced length and its file reads. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport.h"
#include "unit.h"
#include "wire.h"

static void test_addr_check(void)
{
	static const struct {
		const char *in;
		int r;
	} cases[] = {
		{ "127.0.0.1:7001", 0 }, { "server:1", 0 }, { "a.b-c_d:65535", 0 }, { "[::1]:7001", 0 },
		{ "[fe80::1%eth0]:7", 0 },
		{ "", -EINVAL }, { "host", -EINVAL }, { ":7001", -EINVAL }, { "host:", -EINVAL },
		{ "host:0", -EINVAL }, { "host:65536", -EINVAL }, { "host:7x", -EINVAL },
		{ "host:-1", -EINVAL }, { "::1:7001", -EINVAL }, { "[::1]7001", -EINVAL },
		{ "[::1:7001", -EINVAL }, { "ho st:1", -EINVAL }, { "h/x:1", -EINVAL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct error err = { "" };
		int r = transport_addr_check(cases[i].in, &err);

		if (r != cases[i].r)
			fprintf(stderr, "\n  %s: %d (%s)", cases[i].in, r, err.text);
		CU_ASSERT_EQUAL(r, cases[i].r);
		if (r < 0)
			CU_ASSERT(strstr(err.text, cases[i].in) != NULL);
	}
}

static void test_addr_resolve(void)
{
	struct sockaddr_storage sa;
	struct error err;
	socklen_t len;

	CU_ASSERT_EQUAL(transport_addr_resolve("10.1.2.3:7001", &sa, &len, &err), 0);
	CU_ASSERT_EQUAL(sa.ss_family, AF_INET);
	CU_ASSERT_EQUAL(len, sizeof(struct sockaddr_in));
	CU_ASSERT_EQUAL(ntohs(((struct sockaddr_in *)&sa)->sin_port), 7001);
	CU_ASSERT_EQUAL(transport_addr_resolve("[2001:db8::5]:80", &sa, &len, &err), 0);
	CU_ASSERT_EQUAL(sa.ss_family, AF_INET6);
	CU_ASSERT_EQUAL(ntohs(((struct sockaddr_in6 *)&sa)->sin6_port), 80);
	/* /etc/hosts always names localhost. */
	CU_ASSERT_EQUAL(transport_addr_resolve("localhost:9", &sa, &len, &err), 0);
	CU_ASSERT_EQUAL(transport_addr_resolve("no-such-host.invalid:9", &sa, &len, &err), -ENOENT);
	CU_ASSERT(strstr(err.text, "no-such-host.invalid") != NULL);
}

static void test_announced(void)
{
	struct wirebuf b = { .data = (char *)"\0\0\x10\x01xyz", .len = 7, .cap = 7, .off = 0 };

	CU_ASSERT_EQUAL(wire_announced(&b), 0x1001);
	b.len = 3;
	CU_ASSERT_EQUAL(wire_announced(&b), 0);
}

/* {"k":"xxx..."}, LEN bytes in all. */
static char *object_text(size_t len)
{
	char *t = malloc(len + 1);

	memcpy(t, "{\"k\":\"", 6);
	memset(t + 6, 'x', len - 8);
	memcpy(t + len - 2, "\"}", 3);
	return t;
}

/* wire_load_fd sizes its buffer from the file (issue 39) and reads on
 * past it: a file of every size around the edges, one that grows after
 * its fstat (a pipe has no size), and one over max. */
static void test_load_fd(void)
{
	static const size_t sizes[] = { 8, 4095, 4096, 4097, 9000, 65536 };
	const size_t max = 65536;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *t = object_text(sizes[i]);
		FILE *f = tmpfile();
		struct error err = { "" };
		json_t *o = NULL;

		fwrite(t, 1, sizes[i], f);
		fflush(f);
		rewind(f);
		CU_ASSERT_EQUAL(wire_load_fd(fileno(f), max, "f", &o, &err), 0);
		CU_ASSERT_EQUAL(o ? strlen(json_string_value(json_object_get(o, "k"))) : 0, sizes[i] - 8);
		json_decref(o);
		fclose(f);
		free(t);
	}
	{
		char *t = object_text(max + 1);
		FILE *f = tmpfile();
		struct error err = { "" };
		json_t *o = NULL;

		fwrite(t, 1, max + 1, f);
		fflush(f);
		rewind(f);
		CU_ASSERT_EQUAL(wire_load_fd(fileno(f), max, "big", &o, &err), -EBADMSG);
		CU_ASSERT(strstr(err.text, "larger than 65536") != NULL);
		fclose(f);
		free(t);
	}
	{
		char *t = object_text(20000);
		int p[2];
		struct error err = { "" };
		json_t *o = NULL;
		pid_t pid;

		CU_ASSERT_EQUAL(pipe(p), 0);
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			for (size_t off = 0; off < 20000; off += 1000)
				if (write(p[1], t + off, 1000) != 1000)
					_exit(1);
			_exit(0);
		}
		close(p[1]);
		CU_ASSERT_EQUAL(wire_load_fd(p[0], max, "pipe", &o, &err), 0);
		CU_ASSERT_EQUAL(o ? strlen(json_string_value(json_object_get(o, "k"))) : 0, 20000 - 8);
		json_decref(o);
		close(p[0]);
		waitpid(pid, NULL, 0);
		free(t);
	}
}

static const struct unit_test transport_tests[] = {
	{ "addr_check", test_addr_check },
	{ "addr_resolve", test_addr_resolve },
	{ "announced", test_announced },
	{ "load_fd", test_load_fd },
	{ NULL, NULL },
};

UNIT_SUITE(transport, transport_tests);
