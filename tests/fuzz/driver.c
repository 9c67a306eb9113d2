/* SPDX-License-Identifier: MIT */
/* A plain main() for the fuzz harnesses, so make check needs no clang:
 * replays every file of the seed corpus, then feeds mutations of those seeds
 * (and pure noise) from a fixed random seed until a count or a time budget
 * is reached. libFuzzer (make fuzz) links the same harness without this. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"

#define INPUT_MAX 65536

struct seed {
	uint8_t *data;
	size_t len;
};

static struct seed *seeds;
static size_t n_seeds;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: reproducible across libcs, unlike rand(). */
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static void seed_add(const char *path)
{
	FILE *f = fopen(path, "rbe");
	struct seed s = { 0 };
	size_t n;

	if (!f)
		return;
	s.data = malloc(INPUT_MAX);
	if (!s.data) {
		fclose(f);
		return;
	}
	n = fread(s.data, 1, INPUT_MAX, f);
	fclose(f);
	s.len = n;
	seeds = realloc(seeds, (n_seeds + 1) * sizeof(*seeds));
	if (!seeds)
		abort();
	seeds[n_seeds++] = s;
}

static void corpus_load(const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	char path[4096];

	if (n < 0) {
		seed_add(dir);  /* a single file */
		return;
	}
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			seed_add(path);
		}
		free(ents[i]);
	}
	free(ents);
}

/* One mutation of a random seed: the same handful of moves libFuzzer starts
 * with (flip, replace, insert, erase, duplicate a block, splice two seeds,
 * insert an "interesting" value), applied 1-8 times. */
static size_t mutate(uint8_t *buf)
{
	static const char *tokens[] = { "\"", "\\", "{", "}", "[", "]", ":", ",", "null", "true",
					"-1", "0", "18446744073709551616", "\n", "'", "#PBS ", "#QP ",
					"=", "[queue ", "\xff", "\xc0\x80", "\xed\xa0\x80", "9999999999999",
					"\\u0000", "-", ":", "G", "k", "\0\0\0\0", "\x00\x10\x00\x01" };
	size_t len = 0, moves;

	if (n_seeds && rnd() % 16) {
		const struct seed *s = &seeds[rnd() % n_seeds];

		memcpy(buf, s->data, s->len);
		len = s->len;
	} else {
		len = rnd() % 256;
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd();
	}
	moves = 1 + rnd() % 8;
	while (moves--) {
		size_t pos = len ? rnd() % len : 0, n;

		switch (rnd() % 8) {
		case 0:
			if (len)
				buf[pos] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 1:
			if (len)
				buf[pos] = (uint8_t)rnd();
			break;
		case 2:
			if (len < INPUT_MAX) {
				memmove(buf + pos + 1, buf + pos, len - pos);
				buf[pos] = (uint8_t)rnd();
				len++;
			}
			break;
		case 3:
			n = len - pos ? 1 + rnd() % (len - pos) : 0;
			memmove(buf + pos, buf + pos + n, len - pos - n);
			len -= n;
			break;
		case 4:
			n = len - pos ? 1 + rnd() % (len - pos) : 0;
			if (len + n <= INPUT_MAX) {
				memmove(buf + pos + n, buf + pos, len - pos);
				len += n;
			}
			break;
		case 5:
			if (n_seeds) {
				const struct seed *s = &seeds[rnd() % n_seeds];
				size_t from = s->len ? rnd() % s->len : 0;

				n = s->len - from;
				if (pos + n > INPUT_MAX)
					n = INPUT_MAX - pos;
				memcpy(buf + pos, s->data + from, n);
				len = pos + n;
			}
			break;
		case 6: {
			const char *t = tokens[rnd() % (sizeof(tokens) / sizeof(tokens[0]))];
			size_t tl = strlen(t) ? strlen(t) : 4;

			if (len + tl <= INPUT_MAX) {
				memmove(buf + pos + tl, buf + pos, len - pos);
				memcpy(buf + pos, t, tl);
				len += tl;
			}
			break;
		}
		default:
			len = pos;
			break;
		}
	}
	return len;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long runs = 100000, done = 0;
	double seconds = 5, start;
	uint8_t *buf, *copy;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-runs") == 0 && i + 1 < argc)
			runs = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-seconds") == 0 && i + 1 < argc)
			seconds = strtod(argv[++i], NULL);
		else if (strcmp(argv[i], "-seed") == 0 && i + 1 < argc)
			rng = strtoull(argv[++i], NULL, 0) | 1;
		else
			corpus_load(argv[i]);
	}
	buf = malloc(INPUT_MAX);
	if (!buf)
		return 1;
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	/* Seeds first, each exactly as stored, in a buffer of exactly its size
	 * so ASan sees reads past the end. */
	for (size_t s = 0; s < n_seeds; s++) {
		copy = malloc(seeds[s].len ? seeds[s].len : 1);
		memcpy(copy, seeds[s].data, seeds[s].len);
		LLVMFuzzerTestOneInput(copy, seeds[s].len);
		free(copy);
		done++;
	}
	start = now_s();
	while (done < runs && now_s() - start < seconds) {
		size_t len = mutate(buf);

		copy = malloc(len ? len : 1);
		memcpy(copy, buf, len);
		LLVMFuzzerTestOneInput(copy, len);
		free(copy);
		done++;
	}
	printf("%s: %llu inputs (%zu seeds) in %.1fs, no crash\n", argv[0], done, n_seeds, now_s() - start);
	for (size_t s = 0; s < n_seeds; s++)
		free(seeds[s].data);
	free(seeds);
	free(buf);
	return 0;
}
