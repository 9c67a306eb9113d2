/* SPDX-License-Identifier: MIT */
/* Job array index sets: PBS Pro's -J START-END[:STEP][%MAX] and Torque's -t LIST[%MAX]. */
#ifndef QPOOL_ARRAYSPEC_H
#define QPOOL_ARRAYSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define ARRAYSPEC_RANGES_MAX 64         /* comma-separated parts of a -t list */
#define ARRAYSPEC_INDEX_MAX 100000000   /* largest index (PBS Pro's limit is configurable too) */
#define ARRAYSPEC_COUNT_MAX 1000000     /* most subjobs in one array */
#define ARRAYSPEC_TEXT_MAX 1024         /* longest canonical form, with the NUL */

/* One part: lo, lo + step, ..., hi (hi is a member: parsing makes it so). */
struct arrayspec_range {
	int64_t lo, hi, step;
};

/* The indices of an array, ascending, no index twice; a subjob's
 * position is its rank among them (0 for the first). */
struct arrayspec {
	struct arrayspec_range r[ARRAYSPEC_RANGES_MAX];
	size_t n;
	int64_t count;           /* how many indices */
	int64_t max_running;     /* %MAX: subjobs running at once; 0: no limit */
};

/* Parses -J (list false: exactly START-END[:STEP], START < END, as PBS
 * Pro takes it) or -t / the canonical form (list true: parts N or
 * START-END[:STEP] joined with ',', ascending and disjoint), each with an
 * optional %MAX. Indices are 0..ARRAYSPEC_INDEX_MAX. Returns 0, or -EINVAL
 * with err naming the fault ("-J 5-1: START must be below END"). opt is
 * the option letter for the message. */
int arrayspec_parse(const char *s, int opt, bool list, struct arrayspec *ret, struct error *err);

/* The canonical text ("1-9:2,12%3"), which arrayspec_parse(list true)
 * reads back to the same set. Returns snprintf's count. */
int arrayspec_format(const struct arrayspec *a, char *buf, size_t len);

/* The index at position pos, or -1 when pos is outside 0..count-1. */
int64_t arrayspec_index(const struct arrayspec *a, int64_t pos);

/* The position of index, or -1 when index is not in the set. */
int64_t arrayspec_pos(const struct arrayspec *a, int64_t index);

/* The members in lo..hi, any int64_t values (negative, past
 * ARRAYSPEC_INDEX_MAX, hi below lo): returns how many, 0 or more, and
 * when more than 0 the first one's position in *ret_first (the members
 * of a range have consecutive positions). Costs the set's parts, never
 * the span of lo..hi. */
int64_t arrayspec_span(const struct arrayspec *a, int64_t lo, int64_t hi, int64_t *ret_first);

#endif
