/* SPDX-License-Identifier: MIT */
/* Timestamped log lines on stderr, one write each so lines never interleave;
 * or each message to a sink (the journal, lib/log-journal.c) when one is set. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char *log_prog = "qpool";
static enum log_level log_max = LOG_LEVEL_INFO;
static log_sink_f *log_sink;

void log_init(const char *prog, enum log_level max)
{
	log_prog = prog;
	log_max = max;
}

void log_sink_set(log_sink_f *sink)
{
	log_sink = sink;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *names[] = { "error", "warning", "info", "debug" };
	char line[1024];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n;

	if (level > log_max)
		return;
	if (log_sink) {
		va_start(ap, fmt);
		(void)vsnprintf(line, sizeof(line), fmt, ap);
		va_end(ap);
		log_sink(level, log_prog, line);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "%02d:%02d:%02d.%03ld %s[%d] %s: ",
		     tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
		     log_prog, (int)getpid(), names[level]);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, n);
}
