/* SPDX-License-Identifier: MIT */
/* pmiwire_feed over arbitrary bytes from two clients, in pieces as a
 * socket gives them: the first byte picks PMI_FD or PMI_PORT clients and
 * the split; every reply must be a whole PMI-1 line or PMI-2 message, and
 * a fence is ended now and then. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pmiwire.h"

struct sink {
	size_t bytes;
	int fenced;
};

static int f_send(void *arg, int client, const char *data, size_t len)
{
	struct sink *s = arg;

	FUZZ_ASSERT(client == 0 || client == 1);
	FUZZ_ASSERT(len > 0);
	/* a PMI-1 reply ends in a newline; a PMI-2 one states its length */
	if (data[len - 1] != '\n') {
		char lenbuf[7];

		FUZZ_ASSERT(len > 6);
		memcpy(lenbuf, data, 6);
		lenbuf[6] = '\0';
		FUZZ_ASSERT((size_t)atoi(lenbuf) == len - 6);
	}
	s->bytes += len;
	return 0;
}

static void f_fence(void *arg, int client)
{
	((struct sink *)arg)->fenced++;
}

static int f_put(void *arg, int client, const char *key, const char *value)
{
	FUZZ_ASSERT(strlen(key) < PMIWIRE_KEY_MAX && strlen(value) < PMIWIRE_VAL_MAX);
	return 0;
}

static const char *f_get(void *arg, int client, const char *key)
{
	return strcmp(key, "k") == 0 ? "v;w" : NULL;
}

static const struct pmiwire_ops ops = { .send = f_send, .fence = f_fence, .put = f_put, .get = f_get };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmiwire_job job = { .kvsname = "kvs", .size = 4, .process_mapping = "(vector,(0,2,2))" };
	struct sink s = { 0 };
	struct pmiwire *w;
	int dead[2] = { 0, 0 };
	size_t step, off = 1;

	if (size < 1)
		return 0;
	w = pmiwire_create(&ops, &s, &job, 2);
	FUZZ_ASSERT(w);
	pmiwire_client_add(w, 0, data[0] & 1 ? -1 : 0);
	pmiwire_client_add(w, 1, data[0] & 2 ? -1 : 3);
	step = 1 + (data[0] >> 2);
	for (int turn = 0; off < size; turn ^= 1) {
		size_t n = size - off < step ? size - off : step;
		struct error err;

		if (!dead[turn] && pmiwire_feed(w, turn, (const char *)data + off, n, &err) < 0) {
			FUZZ_ASSERT(err.text[0]);
			dead[turn] = 1;
			pmiwire_client_remove(w, turn);
		}
		if (s.fenced && (data[off] & 7) == 0) {
			pmiwire_fence_done(w);
			s.fenced = 0;
		}
		off += n;
	}
	pmiwire_destroy(w);
	return 0;
}
