/* SPDX-License-Identifier: MIT */
/* One transport for the pool: a Unix socket (identity from SO_PEERCRED) or
 * TCP (identity from a MUNGE credential in the first frame). */
#ifndef QPOOL_TRANSPORT_H
#define QPOOL_TRANSPORT_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

#define TRANSPORT_ADDR_MAX 300      /* "HOST:PORT" text, with room to spare */
#define TRANSPORT_AUTH_SEC 10       /* a TCP peer must authenticate within this: on
                                     * a lossy link a segment lost after a SYN was
                                     * resent waits 3 s (RFC 6298): hello and
                                     * credential, 6 s (docs/SECURITY.md) */
#define TRANSPORT_AUTH_BYTES 4096   /* most an unauthenticated peer may send */
#define TRANSPORT_SERVERS_MAX 16    /* entries of a server list */
/* The connect timeout of one qpoold alone: a SYN or its answer may be lost
 * four times in a row (resent after 1, 2, 4, 8 and 16 s); a host that is
 * up but has no qpoold refuses at once. */
#define TRANSPORT_CONNECT_ONE_MS 30000
/* Of each server of a list of several, connect and handshake each: the
 * next one answers instead of a lost SYN being waited for (docs/
 * ARCHITECTURE.md, "Following the active"). */
#define TRANSPORT_CONNECT_LIST_MS 5000

/* The qpoold servers in the order they are tried: each entry "HOST:PORT",
 * "[IPV6]:PORT" or a Unix socket path (absolute). */
struct transport_servers {
	size_t n;
	char addr[TRANSPORT_SERVERS_MAX][TRANSPORT_ADDR_MAX];
};

/* Where qpoold is: $QPOOL_SERVER, else [server] server (both a list
 * "H1:PORT,H2:PORT"), else NULL (the Unix socket of [server] socket). */
const char *transport_server(const struct config *c);

/* Splits a server list (entries separated by commas, blanks around them
 * ignored) and checks each entry's form without resolving it. 0, or
 * -EINVAL (-E2BIG: more than TRANSPORT_SERVERS_MAX) with err naming the
 * entry. */
int transport_servers_parse(const char *text, struct transport_servers *ret, struct error *err);

/* The servers c names (transport_server), or its [server] socket alone. */
int transport_servers_of(const struct config *c, struct transport_servers *ret, struct error *err);

/* Connect timeout, in ms, of each server of list (see above). */
unsigned transport_connect_ms(const struct transport_servers *list);

/* Checks the form of "HOST:PORT" or "[IPV6]:PORT" (port 1-65535) without
 * resolving HOST. 0 or -EINVAL with err. */
int transport_addr_check(const char *text, struct error *err);

/* Resolves text: HOST is a numeric IPv4 or IPv6 address, or a name looked
 * up in /etc/hosts (the commands are static binaries without NSS: see
 * docs/ARCHITECTURE.md). 0 and the address, or -EINVAL / -ENOENT (name not
 * found) with err. */
int transport_addr_resolve(const char *text, struct sockaddr_storage *ret, socklen_t *ret_len,
			   struct error *err);

/* TCP_NODELAY (a request is one small frame: Nagle would hold the next
 * back for the last one's ACK) and keepalives, for both ends: a silent
 * peer ends the connection in ~20 s (docs/HA.md). */
void transport_tcp_tune(int fd);

/* A non-blocking, close-on-exec TCP socket listening on text. */
int transport_listen_tcp(const char *text, int *ret_fd, struct error *err);

/* Connects to qpoold at where, an entry of a server list: by TCP to
 * "HOST:PORT", by the Unix socket at a path. With nonblock, a TCP connect
 * may still be in progress on return (writes queue until it completes);
 * without, it waits timeout_ms at most. *ret_tcp says which. On failure
 * err says "cannot reach qpoold at WHERE: why". */
int transport_connect(const char *where, bool nonblock, unsigned timeout_ms, int *ret_fd, bool *ret_tcp,
		      struct error *err);

/* Checks that the peer of fd, a Unix socket connected at path, is root's
 * (SO_PEERCRED: the uid that made the listening socket): qpoold runs as
 * root, and a socket a user bound at path while qpoold was down must get
 * nothing. 0, or -EPERM (-errno when it cannot be asked) with err. */
int transport_unix_server_check(int fd, const char *path, struct error *err);

/* Waits (timeout_ms at most) until a non-blocking TCP connect to where
 * completes, and makes fd blocking. 0, or -errno with err. */
int transport_connect_finish(int fd, const char *where, unsigned timeout_ms, struct error *err);

/* "ADDR:PORT" of fd's peer (IPv6 in brackets), or "local". */
void transport_peer_name(int fd, char *buf, size_t len);

#endif
