/* SPDX-License-Identifier: MIT */
/* Base64: RFC 4648's vectors, round trips of every length, and what is refused. */
#include <errno.h>
#include <string.h>

#include "base64.h"
#include "unit.h"

static void test_base64_vectors(void)
{
	static const struct {
		const char *plain;
		const char *coded;
	} v[] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	char enc[64], dec[64];
	size_t len;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		base64_encode(v[i].plain, strlen(v[i].plain), enc);
		CU_ASSERT_STRING_EQUAL(enc, v[i].coded);
		CU_ASSERT_EQUAL(strlen(enc), base64_encoded_len(strlen(v[i].plain)));
		CU_ASSERT_EQUAL_FATAL(base64_decode(v[i].coded, strlen(v[i].coded), dec, &len), 0);
		CU_ASSERT_EQUAL(len, strlen(v[i].plain));
		CU_ASSERT(memcmp(dec, v[i].plain, len) == 0);
	}
}

static void test_base64_roundtrip(void)
{
	unsigned char plain[300], dec[300 + 3];
	char enc[401];
	size_t len;

	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (unsigned char)(i * 7 + 3);
	for (size_t n = 0; n <= sizeof(plain); n++) {
		base64_encode(plain, n, enc);
		CU_ASSERT_TRUE_FATAL(base64_decoded_max(strlen(enc)) <= sizeof(dec));
		CU_ASSERT_EQUAL_FATAL(base64_decode(enc, strlen(enc), dec, &len), 0);
		CU_ASSERT_EQUAL_FATAL(len, n);
		CU_ASSERT(memcmp(dec, plain, n) == 0);
	}
}

static void test_base64_bad(void)
{
	static const char *const bad[] = {
		"Zg=", "Zg", "Z===", "Zm9v!A==", "Zg==Zg==", "=Zg=", "Zh==", "Zm9=", "Zm 9v",
		"Zm9v\n", "Zm=v",
	};
	char dec[32];
	size_t len;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(base64_decode(bad[i], strlen(bad[i]), dec, &len), -EINVAL);
}

static const struct unit_test base64_tests[] = {
	{ "RFC 4648 vectors", test_base64_vectors },
	{ "round trips of 0..300 bytes", test_base64_roundtrip },
	{ "bad input is refused", test_base64_bad },
	{ NULL, NULL },
};

UNIT_SUITE(base64, base64_tests);
