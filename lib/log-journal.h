/* SPDX-License-Identifier: MIT */
/* Logging to the systemd journal with fields, when stderr is the journal. */
#ifndef QPOOL_LOG_JOURNAL_H
#define QPOOL_LOG_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>

/* Where journald takes native messages. */
#define LOG_JOURNAL_SOCKET "/run/systemd/journal/socket"

/* What a message is about, read from its text (log.h's conventions). */
struct log_journal_fields {
	int64_t jobid;        /* "job ID" at the start; 0: none */
	char node[64];        /* "node NAME" anywhere; "": none */
	char user[64];        /* "user NAME" anywhere; "": none */
};

/* True when journal_stream (the value of $JOURNAL_STREAM, "DEV:INODE", or
 * NULL) names the file open at fd: systemd connected it to the journal. */
bool log_journal_stream_is(const char *journal_stream, int fd);

/* Fills ret from msg. */
void log_journal_fields_parse(const char *msg, struct log_journal_fields *ret);

/* When stderr is the journal, sends every message there with PRIORITY=,
 * SYSLOG_IDENTIFIER= and the QPOOL_JOB_ID=, QPOOL_NODE=, QPOOL_USER= a
 * person filters on (node, when the message names none: the given one,
 * NULL for none). Returns true when it did so; stderr stays otherwise
 * (also when LOG_JOURNAL_SOCKET is not there). */
bool log_journal_setup(const char *node);

#endif
