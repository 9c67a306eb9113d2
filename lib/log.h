/* SPDX-License-Identifier: MIT */
/* Daemon logging to stderr. Library code does not log; daemons do, once. */
#ifndef QPOOL_LOG_H
#define QPOOL_LOG_H

enum log_level {
	LOG_LEVEL_ERR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/* Sets the program name printed on each line and the most verbose level shown. */
void log_init(const char *prog, enum log_level max);

/* Where a message goes instead of stderr (NULL: stderr again): msg is the
 * formatted message, without time, program or level. */
typedef void log_sink_f(enum log_level level, const char *prog, const char *msg);
void log_sink_set(log_sink_f *sink);

/* Messages about one job start "job ID", name a node "node NAME" and a
 * user "user NAME": the journal sink turns these into fields. */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)   log_msg(LOG_LEVEL_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
