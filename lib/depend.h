/* SPDX-License-Identifier: MIT */
/* Job dependencies as PBS writes them: -W depend=afterok:12:13[],beforeany:14. */
#ifndef QPOOL_DEPEND_H
#define QPOOL_DEPEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum depend_type {
	DEPEND_AFTER,        /* the other job has started (or ended) */
	DEPEND_AFTEROK,      /* ... ended with exit status 0 */
	DEPEND_AFTERNOTOK,   /* ... ended otherwise */
	DEPEND_AFTERANY,     /* ... ended, any way */
	DEPEND_BEFORE,       /* the before* forms: the named job gets the after* one on this job */
	DEPEND_BEFOREOK,
	DEPEND_BEFORENOTOK,
	DEPEND_BEFOREANY,
	DEPEND_TYPE_MAX,
};

#define DEPEND_MAX 64          /* job ids in one depend list */
#define DEPEND_TEXT_MAX 2048   /* canonical text, with the NUL */

struct depend_item {
	enum depend_type type;
	int64_t id;
	bool array;          /* "ID[]": the whole array */
};

struct depend_list {
	struct depend_item items[DEPEND_MAX];
	size_t n;
};

const char *depend_type_name(enum depend_type t);

/* The after* form a before* one puts on the named job (DEPEND_BEFOREOK ->
 * DEPEND_AFTEROK); after* forms map to themselves. */
enum depend_type depend_type_after(enum depend_type t);

/* Parses "TYPE:ID[:ID...][,TYPE:ID...]"; an ID is "12", "12.server",
 * "12@host", "12[]" or "12[].server" (only whole arrays: PBS takes no
 * single subjob here). 0, or -EINVAL with err naming the part. */
int depend_parse(const char *s, struct depend_list *ret, struct error *err);

/* Canonical text without server names, "afterok:12:13[],afterany:14";
 * depend_parse reads it back. Returns snprintf's count. */
int depend_format(const struct depend_list *d, char *buf, size_t len);

#endif
