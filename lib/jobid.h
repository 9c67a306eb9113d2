/* SPDX-License-Identifier: MIT */
/* Job ids as users type them and as PBS tools split them: "12", "12.server", "12.server@host". */
#ifndef QPOOL_JOBID_H
#define QPOOL_JOBID_H

#include <stddef.h>
#include <stdint.h>

/* Longest server name kept in a printed id (a host name's limit). */
#define JOBID_SERVER_MAX 64

/* Parses a job id as PBS commands take it: a positive decimal sequence
 * number, optionally followed by ".server" (any text: qpool has one
 * server, so the name is not checked) and/or "@host" (the server to ask;
 * likewise ignored). "12", "12.srv", "12.srv.example.org", "12@srv",
 * "12.srv@srv" all name job 12. Returns 0 and *ret, -EINVAL when s is
 * not a job id (no digits first, or other text after them), -ERANGE when
 * the number does not fit 63 bits. */
int jobid_parse(const char *s, int64_t *ret);

/* Array ids, as PBS Pro writes them: "12[]" (the whole array), "12[7]"
 * (subjob 7) and "12[3-9]" (subjobs 3 to 9 that exist), each optionally
 * with ".server" and/or "@host" as above; a plain "12" too. Sets *ret_id,
 * and *ret_lo, *ret_hi to the index range: JOBID_PLAIN for both with no
 * brackets, JOBID_ARRAY_ALL for "[]", lo == hi for "[7]". Returns 0,
 * -EINVAL or -ERANGE as jobid_parse. */
#define JOBID_PLAIN (-1)
#define JOBID_ARRAY_ALL (-2)
int jobid_parse_array(const char *s, int64_t *ret_id, int64_t *ret_lo, int64_t *ret_hi);

/* The server name in printed ids: configured when it is set and not
 * empty, else this host's name up to its first dot (PBS's default server
 * name is the short host name). Writes at most JOBID_SERVER_MAX bytes
 * with the NUL into buf. No DNS: gethostname(2) only. */
void jobid_server_name(const char *configured, char *buf, size_t len);

/* Writes "ID.SERVER" (or "ID" when server is NULL or empty) into buf.
 * Returns what snprintf returns. */
int jobid_format(int64_t id, const char *server, char *buf, size_t len);

/* Writes "ID[INDEX].SERVER", "ID[].SERVER" (index JOBID_ARRAY_ALL) or
 * as jobid_format (index JOBID_PLAIN). */
int jobid_format_array(int64_t id, int64_t index, const char *server, char *buf, size_t len);

#endif
