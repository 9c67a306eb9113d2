/* SPDX-License-Identifier: MIT */
/* wire_next over arbitrary bytes, delivered in arbitrary pieces as a socket
 * would; each decoded message through the accessors and back through
 * wire_queue, which must give the same message again. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "wire.h"

static void append(struct wirebuf *in, const uint8_t *p, size_t n)
{
	if (in->len + n > in->cap) {
		in->cap = in->len + n;
		in->data = realloc(in->data, in->cap ? in->cap : 1);
		if (!in->data)
			abort();
	}
	memcpy(in->data + in->len, p, n);
	in->len += n;
}

static void accessors(json_t *msg)
{
	const char *key;
	json_t *v;

	(void)wire_str(msg, "op");
	(void)wire_int(msg, "id", -1);
	(void)wire_bool(msg, "ok", -1);
	json_object_foreach(msg, key, v) {
		const char *s = wire_str(msg, key);
		long long i = wire_int(msg, key, 42);
		int b = wire_bool(msg, key, 7);

		FUZZ_ASSERT(!s || json_is_string(v));
		FUZZ_ASSERT(json_is_integer(v) || i == 42);
		FUZZ_ASSERT(json_is_boolean(v) || b == 7);
		if (json_is_object(v))
			accessors(v);
	}
}

static void roundtrip(json_t *msg)
{
	struct wirebuf out = { 0 };
	struct error err;
	json_t *again = NULL;

	/* Whatever came in under WIRE_MAX re-encodes (compact is never longer
	 * than what jansson accepted? not quite: escapes may grow it), so only
	 * a successful queue must decode to an equal message. */
	if (wire_queue(&out, msg) == 0) {
		FUZZ_ASSERT(wire_next(&out, &again, &err) == 1);
		FUZZ_ASSERT(json_equal(msg, again));
		FUZZ_ASSERT(out.off == out.len);
		json_decref(again);
	}
	wirebuf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wirebuf in = { 0 };
	struct error err;
	size_t pos = 1, piece;
	json_t *msg;
	int r = 0;

	if (size == 0)
		return 0;
	/* The first byte picks the piece size: 1 byte at a time up to all at once. */
	piece = data[0] ? data[0] : size;
	while (pos < size && r >= 0) {
		size_t n = size - pos < piece ? size - pos : piece;

		append(&in, data + pos, n);
		pos += n;
		while ((r = wire_next(&in, &msg, &err)) == 1) {
			FUZZ_ASSERT(json_is_object(msg));
			accessors(msg);
			roundtrip(msg);
			json_decref(msg);
		}
		FUZZ_ASSERT(r == 0 || (r < 0 && err.text[0]));
		FUZZ_ASSERT(in.off <= in.len);
	}
	wirebuf_free(&in);
	return 0;
}
