/* SPDX-License-Identifier: MIT */
/* Table tests for lib/transport's addresses and lib/wire's announced length. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

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

static const struct unit_test transport_tests[] = {
	{ "addr_check", test_addr_check },
	{ "addr_resolve", test_addr_resolve },
	{ "announced", test_announced },
	{ NULL, NULL },
};

UNIT_SUITE(transport, transport_tests);
