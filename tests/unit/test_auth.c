/* SPDX-License-Identifier: MIT */
/* lib/auth: the handshake's checks that need no munged (nonces, frames). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "unit.h"

static void test_nonce(void)
{
	char a[AUTH_NONCE_HEX + 1], b[AUTH_NONCE_HEX + 1];

	CU_ASSERT_EQUAL_FATAL(auth_nonce(a), 0);
	CU_ASSERT_EQUAL_FATAL(auth_nonce(b), 0);
	CU_ASSERT_EQUAL(strlen(a), AUTH_NONCE_HEX);
	CU_ASSERT_EQUAL(strspn(a, "0123456789abcdef"), AUTH_NONCE_HEX);
	/* Fresh each time (two equal draws of 128 bits: never). */
	CU_ASSERT_NOT_EQUAL(strcmp(a, b), 0);
}

static void test_frame_needs_hello(void)
{
	/* A peer that does not speak first with a well-formed hello gets no
	 * credential: the check comes before munged is asked (none runs here). */
	const char *bad[] = {
		"{\"id\": 0, \"ok\": true}",
		"{\"op\": \"auth\", \"id\": 0, \"cred\": \"MUNGE:x:\"}",
		"{\"op\": \"hello\", \"id\": 0}",
		"{\"op\": \"hello\", \"id\": 0, \"nonce\": \"0123\"}",
		"{\"op\": \"hello\", \"id\": 0, \"nonce\": \"0123456789ABCDEF0123456789abcdef\"}",
		"{\"op\": \"hello\", \"id\": 0, \"nonce\": \"0123456789abcdef0123456789abcdef0\"}",
		"{\"op\": \"hello\", \"id\": 0, \"nonce\": 12}",
	};
	struct auth_nonces n;
	struct error err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *hello = json_loads(bad[i], 0, NULL), *frame = NULL;

		CU_ASSERT_PTR_NOT_NULL_FATAL(hello);
		CU_ASSERT_EQUAL(auth_frame("/nonexistent/munge.sock", -1, hello, &n, &frame, &err), -EPROTO);
		CU_ASSERT_PTR_NULL(frame);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "hello"));
		json_decref(hello);
	}
}

/* A TCP connection over loopback: a listener on an ephemeral port, a
 * client connected to it, the server's accepted end. 0 or -1. */
static int tcp_pair(int *ret_client, int *ret_server)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c = -1, s = -1;

	if (l < 0 || bind(l, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&sin, &len) < 0)
		goto fail;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		goto fail;
	s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0)
		goto fail;
	close(l);
	*ret_client = c;
	*ret_server = s;
	return 0;
fail:
	if (l >= 0)
		close(l);
	if (c >= 0)
		close(c);
	return -1;
}

static void test_endpoint(void)
{
	char a[AUTH_ENDPOINT_MAX], b[AUTH_ENDPOINT_MAX], other[AUTH_ENDPOINT_MAX];
	int c, s, c2, s2, fds[2];
	struct error err;

	CU_ASSERT_EQUAL_FATAL(tcp_pair(&c, &s), 0);
	CU_ASSERT_EQUAL_FATAL(tcp_pair(&c2, &s2), 0);
	/* Both ends of one connection name the server's end alike. */
	CU_ASSERT_EQUAL(auth_endpoint(c, false, a, &err), 0);
	CU_ASSERT_EQUAL(auth_endpoint(s, true, b, &err), 0);
	CU_ASSERT_STRING_EQUAL(a, b);
	CU_ASSERT_EQUAL(strncmp(a, "127.0.0.1:", 10), 0);
	/* The server's end of another connection (a relay's onward one) is
	 * another endpoint: the credential of the first is refused there. */
	CU_ASSERT_EQUAL(auth_endpoint(s2, true, other, &err), 0);
	CU_ASSERT_STRING_NOT_EQUAL(a, other);
	/* The client's own end is not the server's. */
	CU_ASSERT_EQUAL(auth_endpoint(c, true, other, &err), 0);
	CU_ASSERT_STRING_NOT_EQUAL(a, other);
	/* Not TCP, not connected: an error, never an empty endpoint. */
	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
	CU_ASSERT_EQUAL(auth_endpoint(fds[0], false, other, &err), -EAFNOSUPPORT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "not TCP"));
	CU_ASSERT_TRUE(auth_endpoint(-1, false, other, &err) < 0);
	close(fds[0]);
	close(fds[1]);
	close(c);
	close(s);
	close(c2);
	close(s2);
}

static void test_hello_round_trip(void)
{
	char nonce[AUTH_NONCE_HEX + 1];
	json_t *hello, *frame = NULL;
	struct auth_nonces n;
	struct error err;
	int r, c, s;

	CU_ASSERT_EQUAL_FATAL(tcp_pair(&c, &s), 0);
	CU_ASSERT_EQUAL_FATAL(auth_nonce(nonce), 0);
	hello = auth_hello(nonce);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hello);
	/* A good hello: the nonce and the endpoint reached are kept, then
	 * munged is asked (and is not there): its error, not EPROTO. */
	r = auth_frame("/nonexistent/munge.sock", c, hello, &n, &frame, &err);
	CU_ASSERT_EQUAL(r, -EHOSTUNREACH);
	CU_ASSERT_STRING_EQUAL(n.server, nonce);
	CU_ASSERT_EQUAL(strncmp(n.endpoint, "127.0.0.1:", 10), 0);
	CU_ASSERT_PTR_NULL(frame);
	json_decref(hello);
	close(c);
	close(s);
}

static void test_proof_check(void)
{
	struct auth_nonces n = { "", "", "" };
	struct error err;
	json_t *m;

	/* The server's refusal is its own reason, EACCES. */
	m = json_pack("{s:i, s:b, s:s}", "id", 0, "ok", 0, "error", "qpoold refused the connection: why");
	CU_ASSERT_EQUAL(auth_proof_check(NULL, m, &n, &err), -EACCES);
	CU_ASSERT_STRING_EQUAL(err.text, "qpoold refused the connection: why");
	json_decref(m);
	/* An "ok" without the server's credential, or anything else: not qpoold. */
	m = json_pack("{s:i, s:b}", "id", 0, "ok", 1);
	CU_ASSERT_EQUAL(auth_proof_check(NULL, m, &n, &err), -EPERM);
	json_decref(m);
	m = json_pack("{s:s, s:i}", "op", "job.launch", "id", 0);
	CU_ASSERT_EQUAL(auth_proof_check(NULL, m, &n, &err), -EPERM);
	json_decref(m);
}

static void test_accept_needs_auth(void)
{
	struct auth_nonces n = { "", "", "" };
	struct error err;
	uid_t uid;
	gid_t gid;
	json_t *m = json_pack("{s:s, s:i}", "op", "submit", "id", 1);

	CU_ASSERT_EQUAL(auth_accept(NULL, -1, NULL, m, &n, &uid, &gid, &err), -EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "no credential"));
	json_decref(m);
	m = json_pack("{s:s, s:i}", "op", "auth", "id", 0);
	CU_ASSERT_EQUAL(auth_accept(NULL, -1, NULL, m, &n, &uid, &gid, &err), -EACCES);
	json_decref(m);
}

static const struct unit_test auth_tests[] = {
	{ "nonce", test_nonce },
	{ "frame_needs_hello", test_frame_needs_hello },
	{ "endpoint", test_endpoint },
	{ "hello_round_trip", test_hello_round_trip },
	{ "proof_check", test_proof_check },
	{ "accept_needs_auth", test_accept_needs_auth },
	{ NULL, NULL },
};

UNIT_SUITE(auth, auth_tests);
