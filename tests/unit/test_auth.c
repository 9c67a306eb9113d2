/* SPDX-License-Identifier: MIT */
/* lib/auth: the handshake's checks that need no munged (nonces, frames). */
#include <errno.h>
#include <string.h>

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
		CU_ASSERT_EQUAL(auth_frame("/nonexistent/munge.sock", hello, &n, &frame, &err), -EPROTO);
		CU_ASSERT_PTR_NULL(frame);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "hello"));
		json_decref(hello);
	}
}

static void test_hello_round_trip(void)
{
	char nonce[AUTH_NONCE_HEX + 1];
	json_t *hello, *frame = NULL;
	struct auth_nonces n;
	struct error err;
	int r;

	CU_ASSERT_EQUAL_FATAL(auth_nonce(nonce), 0);
	hello = auth_hello(nonce);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hello);
	/* A good hello: the nonce is kept, then munged is asked (and is not
	 * there): its error, not EPROTO. */
	r = auth_frame("/nonexistent/munge.sock", hello, &n, &frame, &err);
	CU_ASSERT_NOT_EQUAL(r, -EPROTO);
	CU_ASSERT_TRUE(r < 0);
	CU_ASSERT_STRING_EQUAL(n.server, nonce);
	CU_ASSERT_PTR_NULL(frame);
	json_decref(hello);
}

static void test_proof_check(void)
{
	struct auth_nonces n = { "", "" };
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
	struct auth_nonces n = { "", "" };
	struct error err;
	uid_t uid;
	gid_t gid;
	json_t *m = json_pack("{s:s, s:i}", "op", "submit", "id", 1);

	CU_ASSERT_EQUAL(auth_accept(NULL, m, &n, &uid, &gid, &err), -EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "no credential"));
	json_decref(m);
	m = json_pack("{s:s, s:i}", "op", "auth", "id", 0);
	CU_ASSERT_EQUAL(auth_accept(NULL, m, &n, &uid, &gid, &err), -EACCES);
	json_decref(m);
}

static const struct unit_test auth_tests[] = {
	{ "nonce", test_nonce },
	{ "frame_needs_hello", test_frame_needs_hello },
	{ "hello_round_trip", test_hello_round_trip },
	{ "proof_check", test_proof_check },
	{ "accept_needs_auth", test_accept_needs_auth },
	{ NULL, NULL },
};

UNIT_SUITE(auth, auth_tests);
