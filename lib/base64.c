/* SPDX-License-Identifier: MIT */
/* Base64 encoding and strict decoding, RFC 4648 section 4. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "base64.h"

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(const void *src, size_t n, char *dst)
{
	const unsigned char *s = src;
	size_t i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];

		*dst++ = alphabet[v >> 18];
		*dst++ = alphabet[(v >> 12) & 63];
		*dst++ = alphabet[(v >> 6) & 63];
		*dst++ = alphabet[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)s[i] << 16;

		*dst++ = alphabet[v >> 18];
		*dst++ = alphabet[(v >> 12) & 63];
		*dst++ = '=';
		*dst++ = '=';
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;

		*dst++ = alphabet[v >> 18];
		*dst++ = alphabet[(v >> 12) & 63];
		*dst++ = alphabet[(v >> 6) & 63];
		*dst++ = '=';
	}
	*dst = '\0';
}

static int sextet(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int base64_decode(const char *src, size_t len, void *dst, size_t *ret_len)
{
	unsigned char *d = dst;
	size_t out = 0;

	if (len % 4)
		return -EINVAL;
	for (size_t i = 0; i < len; i += 4) {
		bool last = i + 4 == len;
		int a = sextet(src[i]), b = sextet(src[i + 1]), c, e;
		uint32_t v;

		if (a < 0 || b < 0)
			return -EINVAL;
		if (last && src[i + 2] == '=' && src[i + 3] == '=') {
			if (b & 15)
				return -EINVAL;
			d[out++] = (unsigned char)(a << 2 | b >> 4);
			break;
		}
		c = sextet(src[i + 2]);
		if (c < 0)
			return -EINVAL;
		if (last && src[i + 3] == '=') {
			if (c & 3)
				return -EINVAL;
			v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6;
			d[out++] = (unsigned char)(v >> 16);
			d[out++] = (unsigned char)(v >> 8);
			break;
		}
		e = sextet(src[i + 3]);
		if (e < 0)
			return -EINVAL;
		v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)e;
		d[out++] = (unsigned char)(v >> 16);
		d[out++] = (unsigned char)(v >> 8);
		d[out++] = (unsigned char)v;
	}
	*ret_len = out;
	return 0;
}
