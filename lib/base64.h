/* SPDX-License-Identifier: MIT */
/* Base64 (RFC 4648, standard alphabet, padded): bytes of task output and input in JSON frames. */
#ifndef QPOOL_BASE64_H
#define QPOOL_BASE64_H

#include <stddef.h>

/* Characters base64_encode writes for n bytes, without the NUL. */
static inline size_t base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

/* Bytes base64_decode may write for len characters (an upper bound). */
static inline size_t base64_decoded_max(size_t len)
{
	return len / 4 * 3 + 3;
}

/* Encodes n bytes of src into dst (base64_encoded_len(n) + 1 bytes),
 * NUL-terminated. */
void base64_encode(const void *src, size_t n, char *dst);

/* Decodes len characters of src into dst (base64_decoded_max(len)
 * bytes). 0 and *ret_len; -EINVAL when src is not padded base64 (a
 * length that is not a multiple of 4, a character outside the alphabet,
 * padding anywhere but at the end, non-zero bits under the padding). */
int base64_decode(const char *src, size_t len, void *dst, size_t *ret_len);

#endif
