/* SPDX-License-Identifier: MIT */
/* Job dependencies: parsing and printing PBS's depend attribute. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "depend.h"
#include "jobid.h"

static const char *const names[DEPEND_TYPE_MAX] = {
	[DEPEND_AFTER] = "after", [DEPEND_AFTEROK] = "afterok",
	[DEPEND_AFTERNOTOK] = "afternotok", [DEPEND_AFTERANY] = "afterany",
	[DEPEND_BEFORE] = "before", [DEPEND_BEFOREOK] = "beforeok",
	[DEPEND_BEFORENOTOK] = "beforenotok", [DEPEND_BEFOREANY] = "beforeany",
};

const char *depend_type_name(enum depend_type t)
{
	return t < DEPEND_TYPE_MAX ? names[t] : "?";
}

enum depend_type depend_type_after(enum depend_type t)
{
	return t >= DEPEND_BEFORE ? t - DEPEND_BEFORE : t;
}

int depend_parse(const char *s, struct depend_list *ret, struct error *err)
{
	char buf[DEPEND_TEXT_MAX], *save = NULL, *part;

	memset(ret, 0, sizeof(*ret));
	if (!s || !*s)
		return error_set(err, -EINVAL, "-W depend=: expected TYPE:JOBID[:JOBID...]");
	if (strlen(s) >= sizeof(buf))
		return error_set(err, -EINVAL, "-W depend=%.40s...: too long", s);
	snprintf(buf, sizeof(buf), "%s", s);
	for (part = strtok_r(buf, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(part, ':'), *save2 = NULL, *id;
		int t;

		if (!colon)
			return error_set(err, -EINVAL, "-W depend=%s: expected TYPE:JOBID[:JOBID...]", part);
		*colon = '\0';
		for (t = 0; t < DEPEND_TYPE_MAX && strcmp(part, names[t]) != 0; t++)
			;
		if (t == DEPEND_TYPE_MAX)
			return error_set(err, -EINVAL, "-W depend=%s: unknown type (after, afterok, afternotok, "
					 "afterany, before, beforeok, beforenotok, beforeany)", part);
		if (!colon[1])
			return error_set(err, -EINVAL, "-W depend=%s: no job id", part);
		for (id = strtok_r(colon + 1, ":", &save2); id; id = strtok_r(NULL, ":", &save2)) {
			int64_t n, lo, hi;

			if (jobid_parse_array(id, &n, &lo, &hi) < 0 || (lo != JOBID_PLAIN && lo != JOBID_ARRAY_ALL))
				return error_set(err, -EINVAL, "-W depend=%s:%s: not a job id (N, N.server or N[])",
						 part, id);
			if (ret->n == DEPEND_MAX)
				return error_set(err, -EINVAL, "-W depend=: more than %d job ids", DEPEND_MAX);
			ret->items[ret->n++] = (struct depend_item){ .type = t, .id = n,
								     .array = lo == JOBID_ARRAY_ALL };
		}
	}
	if (ret->n == 0)
		return error_set(err, -EINVAL, "-W depend=%s: expected TYPE:JOBID[:JOBID...]", s);
	return 0;
}

int depend_format(const struct depend_list *d, char *buf, size_t len)
{
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < d->n; i++) {
		const struct depend_item *it = &d->items[i];
		bool same = i > 0 && d->items[i - 1].type == it->type;

		at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s:%lld%s",
				       same ? "" : i ? "," : "", same ? "" : names[it->type],
				       (long long)it->id, it->array ? "[]" : "");
	}
	return (int)at;
}
