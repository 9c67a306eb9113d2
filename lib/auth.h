/* SPDX-License-Identifier: MIT */
/* MUNGE credentials: the one adapter between libmunge and the tree. */
#ifndef QPOOL_AUTH_H
#define QPOOL_AUTH_H

#include <jansson.h>
#include <sys/types.h>

#include "error.h"

/* Asks the munged at munge_socket ("" or NULL: munge's default) for a
 * credential of the calling process's uid and gid, no payload. Returns 0
 * and *ret_cred (free() it), or a negative errno with err saying why, e.g.
 * "munged at /run/munge/munge.socket.2: Failed to access ...". */
int auth_cred_make(const char *munge_socket, char **ret_cred, struct error *err);

/* Decodes cred with the munged at munge_socket. Returns 0 and the uid and
 * gid it carries; or -EACCES for a credential that is bad (malformed, made
 * with another key, expired, replayed, from the future), -EHOSTUNREACH when
 * munged cannot be asked, with err naming munge's reason ("Replayed
 * credential"). */
int auth_cred_check(const char *munge_socket, const char *cred, uid_t *ret_uid, gid_t *ret_gid,
		    struct error *err);

/* Whether a munged answers at munge_socket: 0, or -EHOSTUNREACH with err. */
int auth_probe(const char *munge_socket, struct error *err);

/* The first frame on a TCP connection: {"op":"auth","id":0,"cred":C}, C a
 * fresh MUNGE credential of the caller. NULL with err when munged cannot
 * make one. */
json_t *auth_frame(const char *munge_socket, struct error *err);

/* Checks a peer's first frame. 0 and the uid and gid of its credential;
 * -EACCES with err's reason when the frame is not an auth frame or its
 * credential is refused; -EHOSTUNREACH when munged cannot be asked. */
int auth_accept(const char *munge_socket, const json_t *msg, uid_t *ret_uid,
			  gid_t *ret_gid, struct error *err);

#endif
