/* SPDX-License-Identifier: MIT */
/* One error convention: negative errno, plus a human line where one is needed. */
#ifndef QPOOL_ERROR_H
#define QPOOL_ERROR_H

struct error {
	char text[160];
};

/* Formats err->text (err may be NULL) and returns code, which should be a
 * negative errno, so callers can write `return error_set(err, -EINVAL, ...)`. */
int error_set(struct error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
