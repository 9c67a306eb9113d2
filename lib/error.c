/* SPDX-License-Identifier: MIT */
/* error_set: the one place that fills struct error. */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

int error_set(struct error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return code;
}
