/* SPDX-License-Identifier: MIT */
/* scheduler/gate: the budget of TCP peers before their credential. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "unit.h"

static struct gate_addr addr4(const char *text)
{
	struct sockaddr_storage sa = { 0 };
	struct sockaddr_in *a = (struct sockaddr_in *)&sa;

	a->sin_family = AF_INET;
	CU_ASSERT_EQUAL(inet_pton(AF_INET, text, &a->sin_addr), 1);
	return gate_addr_of(&sa);
}

static struct gate_addr addr6(const char *text)
{
	struct sockaddr_storage sa = { 0 };
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sa;

	a->sin6_family = AF_INET6;
	CU_ASSERT_EQUAL(inet_pton(AF_INET6, text, &a->sin6_addr), 1);
	return gate_addr_of(&sa);
}

static void test_per_addr_and_total(void)
{
	struct gate_addr a = addr4("10.0.0.1"), b = addr4("10.0.0.2");
	struct gate *g;

	CU_ASSERT_EQUAL_FATAL(gate_create(&g), 0);
	/* One address holds its share and no more... */
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(gate_enter(g, &a, 6, 4), 0);
	CU_ASSERT_EQUAL(gate_enter(g, &a, 6, 4), -EUSERS);
	CU_ASSERT_EQUAL(gate_count_addr(g, &a), 4);
	/* ... another has its own, up to the total. */
	CU_ASSERT_EQUAL(gate_enter(g, &b, 6, 4), 0);
	CU_ASSERT_EQUAL(gate_enter(g, &b, 6, 4), 0);
	CU_ASSERT_EQUAL(gate_enter(g, &b, 6, 4), -EMFILE);
	CU_ASSERT_EQUAL(gate_count(g), 6);
	/* A refused peer was not counted; one that leaves frees its place. */
	gate_leave(g, &a);
	CU_ASSERT_EQUAL(gate_count(g), 5);
	CU_ASSERT_EQUAL(gate_enter(g, &b, 6, 4), 0);
	CU_ASSERT_EQUAL(gate_count_addr(g, &b), 3);
	/* Leaving more than entered changes nothing. */
	for (int i = 0; i < 10; i++)
		gate_leave(g, &b);
	CU_ASSERT_EQUAL(gate_count_addr(g, &b), 0);
	CU_ASSERT_EQUAL(gate_count(g), 3);
	gate_destroy(g);
	gate_destroy(NULL);
}

static void test_many_addrs(void)
{
	struct gate *g;
	char text[32];

	CU_ASSERT_EQUAL_FATAL(gate_create(&g), 0);
	/* 1,000 addresses, two each: the table grows and keeps each count. */
	for (int i = 0; i < 1000; i++) {
		struct gate_addr a;

		snprintf(text, sizeof(text), "10.1.%d.%d", i / 256, i % 256);
		a = addr4(text);
		CU_ASSERT_EQUAL(gate_enter(g, &a, 5000, 2), 0);
		CU_ASSERT_EQUAL(gate_enter(g, &a, 5000, 2), 0);
		CU_ASSERT_EQUAL(gate_enter(g, &a, 5000, 2), -EUSERS);
	}
	CU_ASSERT_EQUAL(gate_count(g), 2000);
	for (int i = 0; i < 1000; i += 2) {
		struct gate_addr a;

		snprintf(text, sizeof(text), "10.1.%d.%d", i / 256, i % 256);
		a = addr4(text);
		gate_leave(g, &a);
		gate_leave(g, &a);
	}
	CU_ASSERT_EQUAL(gate_count(g), 1000);
	for (int i = 0; i < 1000; i++) {
		struct gate_addr a;

		snprintf(text, sizeof(text), "10.1.%d.%d", i / 256, i % 256);
		a = addr4(text);
		CU_ASSERT_EQUAL(gate_count_addr(g, &a), i % 2 ? 2u : 0u);
	}
	gate_destroy(g);
}

static void test_addr_keys(void)
{
	struct gate_addr v4 = addr4("192.0.2.7"), mapped = addr6("::ffff:192.0.2.7"), v6 = addr6("2001:db8::7");
	struct sockaddr_storage unix_sa = { .ss_family = AF_UNIX };
	struct gate_addr none = gate_addr_of(&unix_sa), zero = { { 0 } };

	/* An IPv4 peer and the same one seen on a dual-stack socket are one. */
	CU_ASSERT_EQUAL(memcmp(v4.b, mapped.b, sizeof(v4.b)), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(v4.b, v6.b, sizeof(v4.b)), 0);
	CU_ASSERT_EQUAL(memcmp(none.b, zero.b, sizeof(zero.b)), 0);
}

static const struct unit_test gate_tests[] = {
	{ "per_addr_and_total", test_per_addr_and_total },
	{ "many_addrs", test_many_addrs },
	{ "addr_keys", test_addr_keys },
	{ NULL, NULL },
};

UNIT_SUITE(gate, gate_tests);
