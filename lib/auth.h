/* SPDX-License-Identifier: MIT */
/* MUNGE credentials: the one adapter between libmunge and the tree, and
 * the TCP handshake that proves both ends (docs/PROTOCOL.md, "The auth frame"). */
#ifndef QPOOL_AUTH_H
#define QPOOL_AUTH_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* A nonce as the wire carries it: 16 random bytes in lower-case hex. */
#define AUTH_NONCE_HEX 32
/* The first word of every credential payload qpool makes and accepts: a
 * credential of another service sharing the MUNGE key (Slurm's) has none. */
#define AUTH_TAG "qpool-auth-2"
/* The server's end of a TCP connection as numbers, "ADDR:PORT" or
 * "[ADDR6]:PORT", with room to spare. */
#define AUTH_ENDPOINT_MAX 64

/* What binds one connection's two credentials to it: the two nonces, the
 * server's (its hello) and the client's (inside the client's credential,
 * which only root can decode), and the server's end of the TCP connection
 * as each side sees it (the client: the address it reached, getpeername;
 * the server: the address it was reached at, getsockname). A relay that
 * holds one server's address and passes bytes to another cannot make the
 * two ends see one endpoint (docs/SECURITY.md, "The server pair"). */
struct auth_nonces {
	char server[AUTH_NONCE_HEX + 1];
	char client[AUTH_NONCE_HEX + 1];
	char endpoint[AUTH_ENDPOINT_MAX];
};

/* The server's end of the TCP connection fd, as numbers: with local, the
 * address fd is bound to (qpoold's accepted socket); without, the address
 * it is connected to (a client's). An IPv4-mapped IPv6 address is written
 * as IPv4 and an IPv6 scope is dropped, so both ends write one string.
 * 0, or a negative errno with err (-ENOTCONN, -EAFNOSUPPORT: not TCP). */
int auth_endpoint(int fd, bool local, char ret[AUTH_ENDPOINT_MAX], struct error *err);

/* Asks the munged at munge_socket ("" or NULL: munge's default) for a
 * credential of the calling process's uid and gid carrying payload (NULL:
 * none), decodable only by decoder_uid ((uid_t)-1: by anyone). Returns 0
 * and *ret_cred (free() it), or a negative errno with err saying why, e.g.
 * "munged at /run/munge/munge.socket.2: Failed to access ...". */
int auth_cred_make(const char *munge_socket, const char *payload, uid_t decoder_uid, char **ret_cred,
		   struct error *err);

/* Decodes cred with the munged at munge_socket. Returns 0, the uid and gid
 * it carries and its payload as a string (*ret_payload, free() it; "" when
 * none; ret_payload may be NULL); or -EACCES for a credential that is bad
 * (malformed, made with another key, expired, replayed, from the future,
 * restricted to another decoder), -EHOSTUNREACH when munged cannot be
 * asked, with err naming munge's reason ("Replayed credential"). */
int auth_cred_check(const char *munge_socket, const char *cred, uid_t *ret_uid, gid_t *ret_gid,
		    char **ret_payload, struct error *err);

/* Whether a munged answers at munge_socket: 0, or -EHOSTUNREACH with err. */
int auth_probe(const char *munge_socket, struct error *err);

/* Fills buf with a fresh nonce from getrandom(2). 0 or a negative errno. */
int auth_nonce(char buf[AUTH_NONCE_HEX + 1]);

/* Server, at accept: its first frame {"op":"hello","id":0,"nonce":N}. */
json_t *auth_hello(const char *server_nonce);

/* Client, on the server's first frame on the TCP connection fd: checks it
 * is a hello, keeps its nonce and the endpoint fd reached in n, draws the
 * client's nonce, and gives the auth frame {"op":"auth","id":0,"cred":C}
 * in *ret: C carries the payload "qpool-auth-2 client SERVER-NONCE
 * CLIENT-NONCE ENDPOINT" and only uid 0 (qpoold) can decode it, so it is
 * worth nothing on any other connection, at any other server, or to any
 * other service. 0; -EPROTO with err when the frame is no hello;
 * auth_endpoint's errors; auth_cred_make's when munged cannot make a
 * credential. */
int auth_frame(const char *munge_socket, int fd, const json_t *hello, struct auth_nonces *n, json_t **ret,
	       struct error *err);

/* Server: checks a peer's first frame on the TCP connection fd against the
 * server nonce in n and the endpoint fd was reached at, or advertise
 * ("HOST:PORT", resolved as transport_addr_resolve does; NULL or "":
 * none), the address a forwarder of the site's own (a NAT, a port
 * forward) reaches this server at. 0 with the uid and gid of its
 * credential, the client's nonce and the endpoint it named in n; -EACCES
 * with err's reason when the frame is not an auth frame or its credential
 * is refused (munged's reason, or not made for qpool, or made for another
 * connection, or for a connection to another address: a relay's);
 * -EHOSTUNREACH when munged cannot be asked. */
int auth_accept(const char *munge_socket, int fd, const char *advertise, const json_t *msg, struct auth_nonces *n,
		uid_t *ret_uid, gid_t *ret_gid, struct error *err);

/* Server: its answer to an accepted auth frame, {"id":0,"ok":true,
 * "cred":S}: S is the server's credential (uid 0) with the payload
 * "qpool-auth-2 server CLIENT-NONCE SERVER-NONCE ENDPOINT", decodable only
 * by peer_uid. NULL with err when munged cannot make it. */
json_t *auth_proof(const char *munge_socket, const struct auth_nonces *n, uid_t peer_uid,
		   struct error *err);

/* Client: checks the server's answer to its auth frame. 0 when it is an
 * ok whose credential decodes here to uid 0 with the payload auth_proof
 * gives for n (the endpoint the client reached among it). A refusal (ok
 * false) is -EACCES with the server's own reason (-EADDRNOTAVAIL when it
 * refused a relayed credential: the peer we reached is a relay, another
 * server of the list may do better); anything else -EPERM with err saying why the peer is not
 * qpoold ("its credential is uid 1001, not root"); -EHOSTUNREACH when
 * munged cannot be asked. */
int auth_proof_check(const char *munge_socket, const json_t *reply, const struct auth_nonces *n,
		     struct error *err);

#endif
