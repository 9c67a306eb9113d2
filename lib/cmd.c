/* SPDX-License-Identifier: MIT */
/* cmd_fail: the commands' one-line errors. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "cmd.h"

int cmd_fail(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}
