/* SPDX-License-Identifier: MIT */
/* cmd_fail: the commands' one-line errors; their output paths. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "jobscript.h"

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

int cmd_slurm_extra(const char *word)
{
	return cmd_fail(1, "error: Unrecognized option: %s\nTry \"%s --help\" for more information", word,
			program_invocation_short_name);
}

int cmd_quote(char **buf, size_t *len, const char *s)
{
	char *b = realloc(*buf, *len + 4 * strlen(s) + 4), *p;

	if (!b)
		return -ENOMEM;
	*buf = b;
	p = b + *len;
	if (*len)
		*p++ = ' ';
	*p++ = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *s;
		}
	}
	*p++ = '\'';
	*p = '\0';
	*len = (size_t)(p - b);
	return 0;
}

int cmd_getopt_fail(int c, char **argv)
{
	const char *word = argv[optind - 1];
	bool is_long = word[0] == '-' && word[1] == '-';

	if (c == ':' && !is_long)
		cmd_fail(1, "option requires an argument -- '%c'", optopt);
	else if (c == ':')
		cmd_fail(1, "option '%.*s' requires an argument", (int)strcspn(word, "="), word);
	else if (optopt)
		cmd_fail(1, "invalid option -- '%c'", optopt);
	else
		cmd_fail(1, "unrecognized option '%s'", word);
	fprintf(stderr, "Try \"%s --help\" for more information\n", program_invocation_short_name);
	return 1;
}

/* Whether host names this host: its full or short name, or localhost. */
static bool host_is_local(const char *host, size_t len)
{
	char me[256];
	size_t short_len;

	if ((len == 9 && strncmp(host, "localhost", 9) == 0))
		return true;
	if (gethostname(me, sizeof(me)) < 0)
		return false;
	me[sizeof(me) - 1] = '\0';
	short_len = strcspn(me, ".");
	return (len == strlen(me) && strncmp(host, me, len) == 0) ||
	       (len == short_len && strncmp(host, me, len) == 0) ||
	       (strcspn(host, ".") == short_len && strncmp(host, me, short_len) == 0 && len > short_len &&
		host[short_len] == '.');
}

int cmd_output_path(const char *cwd, const char *opt, const char *arg, char *buf, size_t len)
{
	struct error err;
	size_t host_len;

	if (jobspec_output_path(cwd, opt, arg, buf, len, &host_len, &err) < 0)
		return cmd_fail(1, "%s", err.text);
	/* PBS's host:path: the output goes to that host. qpool writes it in
	 * place from the node; the host must be this one. */
	if (host_len && !host_is_local(arg, host_len))
		return cmd_fail(1, "%s %s: qpool writes output files in place and cannot send them "
				"to host %.*s; give a path on a file system this host shares with "
				"the nodes (without host:)", opt, arg, (int)host_len, arg);
	return 0;
}

const char *cmd_drain_by(void)
{
	const char *h = getenv("QPOOL_HOOK");

	if (h && strcmp(h, "health") == 0)
		return "health";
	if (h && (strcmp(h, "prolog") == 0 || strcmp(h, "epilog") == 0))
		return "hook";
	return "admin";
}
