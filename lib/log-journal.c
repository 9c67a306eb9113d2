/* SPDX-License-Identifier: MIT */
/* The journal sink of lib/log: sd_journal_sendv with fields a person filters on. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "log.h"
#include "log-journal.h"

static char journal_node[64];

bool log_journal_stream_is(const char *journal_stream, int fd)
{
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	/* systemd.exec(5): JOURNAL_STREAM is "device:inode" of the stream it
	 * connected stdout/stderr to, both decimal. A process whose stderr
	 * was redirected since inherits the variable but not the stream. */
	if (!journal_stream || sscanf(journal_stream, "%llu:%llu%n", &dev, &ino, &end) != 2 ||
	    journal_stream[end] != '\0')
		return false;
	if (fstat(fd, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* The word after the first "KEY " in msg that starts a word, into buf. */
static void word_after(const char *msg, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key), n = 0;
	const char *p;

	buf[0] = '\0';
	for (p = strstr(msg, key); p; p = strstr(p + 1, key)) {
		if (p != msg && !isspace((unsigned char)p[-1]) && p[-1] != '(')
			continue;
		p += klen;
		while (p[n] && !isspace((unsigned char)p[n]) && !strchr(":;,)", p[n]) && n + 1 < len)
			n++;
		memcpy(buf, p, n);
		buf[n] = '\0';
		return;
	}
}

void log_journal_fields_parse(const char *msg, struct log_journal_fields *ret)
{
	char *end;

	*ret = (struct log_journal_fields){ 0 };
	if (strncmp(msg, "job ", 4) == 0 && isdigit((unsigned char)msg[4])) {
		long long id = strtoll(msg + 4, &end, 10);

		if (*end == '\0' || *end == ':' || *end == ' ' || *end == ',')
			ret->jobid = id;
	}
	word_after(msg, "node ", ret->node, sizeof(ret->node));
	word_after(msg, "user ", ret->user, sizeof(ret->user));
}

static void journal_sink(enum log_level level, const char *prog, const char *msg)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	struct log_journal_fields f;
	char b_msg[1100], b_prio[16], b_id[96], b_job[40], b_node[80], b_user[80];
	struct iovec iov[6];
	int n = 0;

	log_journal_fields_parse(msg, &f);
	if (!f.node[0])
		snprintf(f.node, sizeof(f.node), "%s", journal_node);
#define ADD(buf, ...) do { \
		int len_ = snprintf(buf, sizeof(buf), __VA_ARGS__); \
		iov[n].iov_base = buf; \
		iov[n++].iov_len = (size_t)len_ < sizeof(buf) ? (size_t)len_ : sizeof(buf) - 1; \
	} while (0)
	ADD(b_msg, "MESSAGE=%s", msg);
	ADD(b_prio, "PRIORITY=%d", prio[level]);
	ADD(b_id, "SYSLOG_IDENTIFIER=%s", prog);
	if (f.jobid)
		ADD(b_job, "QPOOL_JOB_ID=%" PRId64, f.jobid);
	if (f.node[0])
		ADD(b_node, "QPOOL_NODE=%s", f.node);
	if (f.user[0])
		ADD(b_user, "QPOOL_USER=%s", f.user);
#undef ADD
	/* The journal gone (journald restarting): the line still goes out. */
	if (sd_journal_sendv(iov, n) < 0) {
		char line[1200];
		int len = snprintf(line, sizeof(line), "%s: %s\n", prog, msg);

		(void)!write(STDERR_FILENO, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
	}
}

bool log_journal_setup(const char *node)
{
	/* sd_journal_sendv returns 0 and drops the message when journald's
	 * socket is absent (systemd 252): then stderr it is. */
	if (!log_journal_stream_is(getenv("JOURNAL_STREAM"), STDERR_FILENO) ||
	    access(LOG_JOURNAL_SOCKET, W_OK) < 0)
		return false;
	snprintf(journal_node, sizeof(journal_node), "%s", node ? node : "");
	log_sink_set(journal_sink);
	return true;
}
