/* SPDX-License-Identifier: MIT */
/* Listen and connect by address (Unix or TCP), and the MUNGE authenticate step. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>
#include <unistd.h>

#include "transport.h"

/* TCP keepalive on commands' and clients' connections: probes after
 * 10 s of silence, every 3 s, 3 unanswered end it. */
#define KEEPALIVE_IDLE_S 10
#define KEEPALIVE_INTVL_S 3
#define KEEPALIVE_CNT 3

const char *transport_server(const struct config *c)
{
	const char *env = getenv("QPOOL_SERVER");

	if (env && *env)
		return env;
	return c && c->server[0] ? c->server : NULL;
}

int transport_servers_parse(const char *text, struct transport_servers *ret, struct error *err)
{
	const char *p = text;

	ret->n = 0;
	for (;;) {
		size_t n;
		int r;

		p += strspn(p, " \t");
		n = strcspn(p, ",");
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == 0)
			return error_set(err, -EINVAL, "%s: an empty entry in the server list", text);
		if (ret->n == TRANSPORT_SERVERS_MAX)
			return error_set(err, -E2BIG, "%s: more than %d servers", text, TRANSPORT_SERVERS_MAX);
		if (n >= TRANSPORT_ADDR_MAX)
			return error_set(err, -ENAMETOOLONG, "%.40s...: server address too long", p);
		memcpy(ret->addr[ret->n], p, n);
		ret->addr[ret->n][n] = '\0';
		/* A path is a Unix socket, as [server] socket is. */
		if (p[0] != '/') {
			r = transport_addr_check(ret->addr[ret->n], err);
			if (r < 0)
				return r;
		} else if (n >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			return error_set(err, -ENAMETOOLONG, "%s: path too long for a Unix socket",
					 ret->addr[ret->n]);
		}
		ret->n++;
		p += strcspn(p, ",");
		if (!*p)
			return 0;
		p++;
	}
}

int transport_servers_of(const struct config *c, struct transport_servers *ret, struct error *err)
{
	const char *list = transport_server(c);

	if (list)
		return transport_servers_parse(list, ret, err);
	size_t len = strlen(c->socket);

	if (len >= sizeof(ret->addr[0]))
		return error_set(err, -ENAMETOOLONG, "%s: path too long", c->socket);
	memcpy(ret->addr[0], c->socket, len + 1);
	ret->n = 1;
	return 0;
}

unsigned transport_connect_ms(const struct transport_servers *list)
{
	return list->n > 1 ? TRANSPORT_CONNECT_LIST_MS : TRANSPORT_CONNECT_ONE_MS;
}

/* Splits text into host and port. */
static int addr_split(const char *text, char *host, size_t host_len, unsigned *ret_port,
		      struct error *err)
{
	const char *colon, *h = text;
	size_t n;
	char *end;
	unsigned long port;

	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (!close || close[1] != ':')
			return error_set(err, -EINVAL, "%s: not [IPV6]:PORT", text);
		h = text + 1;
		n = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon || colon == text)
			return error_set(err, -EINVAL, "%s: not HOST:PORT", text);
		n = (size_t)(colon - text);
		if (memchr(text, ':', n))
			return error_set(err, -EINVAL, "%s: write an IPv6 address as [ADDR]:PORT", text);
	}
	if (n == 0 || n >= host_len)
		return error_set(err, -EINVAL, "%s: not HOST:PORT", text);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)h[i]) && !strchr(".-_:%", h[i]))
			return error_set(err, -EINVAL, "%s: host has a character a host name cannot", text);
	memcpy(host, h, n);
	host[n] = '\0';
	errno = 0;
	port = isdigit((unsigned char)colon[1]) ? strtoul(colon + 1, &end, 10) : 0;
	if (errno || port == 0 || port > 65535 || *end)
		return error_set(err, -EINVAL, "%s: port must be 1-65535", text);
	*ret_port = (unsigned)port;
	return 0;
}

int transport_addr_check(const char *text, struct error *err)
{
	char host[256];
	unsigned port;

	return addr_split(text, host, sizeof(host), &port, err);
}

static bool numeric(const char *host, unsigned port, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ret;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ret;

	memset(ret, 0, sizeof(*ret));
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*ret_len = sizeof(*a4);
		return true;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*a6);
		return true;
	}
	return false;
}

/* The first address /etc/hosts gives name. A static binary cannot use
 * glibc's getaddrinfo (it loads NSS modules at run time), and the pool's
 * hosts must agree on names anyway: the files every host has. */
static int hosts_lookup(const char *name, unsigned port, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	FILE *f = fopen("/etc/hosts", "re");
	char line[1024];
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (r < 0 && fgets(line, sizeof(line), f)) {
		char *save = NULL, *addr, *tok;

		line[strcspn(line, "#\n")] = '\0';
		addr = strtok_r(line, " \t", &save);
		if (!addr)
			continue;
		while ((tok = strtok_r(NULL, " \t", &save)))
			if (strcasecmp(tok, name) == 0 && numeric(addr, port, ret, ret_len)) {
				r = 0;
				break;
			}
	}
	fclose(f);
	return r;
}

int transport_addr_resolve(const char *text, struct sockaddr_storage *ret, socklen_t *ret_len,
			   struct error *err)
{
	char host[256];
	unsigned port;
	int r;

	r = addr_split(text, host, sizeof(host), &port, err);
	if (r < 0)
		return r;
	if (numeric(host, port, ret, ret_len))
		return 0;
	r = hosts_lookup(host, port, ret, ret_len);
	if (r < 0)
		return error_set(err, r == -ENOENT ? -ENOENT : r, "%s: host %s is not in /etc/hosts%s%s", text,
				 host, r == -ENOENT ? "" : ": ", r == -ENOENT ? "" : strerror(-r));
	return 0;
}

void transport_tcp_tune(int fd)
{
	int one = 1;

	/* A request is one small frame: Nagle would hold the next one back
	 * for the previous one's ACK. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	/* A peer that goes silent (its link cut, its host gone) ends the
	 * connection in ~20 s, not the kernel's two hours: a command waiting
	 * for its reply gets an error rather than hanging on a server that
	 * stepped down behind a cut (t-ha-hosts (c)). A live peer's kernel
	 * answers the probes however long the request takes. */
	{
		int idle = KEEPALIVE_IDLE_S, intvl = KEEPALIVE_INTVL_S, cnt = KEEPALIVE_CNT;

		(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
		(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
		(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	}
}

int transport_listen_tcp(const char *text, int *ret_fd, struct error *err)
{
	struct sockaddr_storage sa;
	socklen_t len;
	int fd, one = 1, r;

	r = transport_addr_resolve(text, &sa, &len, err);
	if (r < 0)
		return r;
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, -errno, "socket: %s", strerror(errno));
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, SOMAXCONN) < 0) {
		r = error_set(err, -errno, "listen on %s: %s", text, strerror(errno));
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static int connect_unix(const char *path, bool nonblock, int *ret_fd, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return error_set(err, -ENAMETOOLONG, "%s: path too long for a Unix socket", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0)
		return error_set(err, -errno, "socket: %s", strerror(errno));
	/* On a Unix socket connect is immediate; EAGAIN is a full backlog. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = error_set(err, -errno, "cannot reach qpoold at %s: %s (is qpoold running?)", path,
			      strerror(errno));
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int transport_unix_server_check(int fd, const char *path, struct error *err)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return error_set(err, -errno, "%s: SO_PEERCRED: %s", path, strerror(errno));
	if (cred.uid != 0)
		return error_set(err, -EPERM, "%s is not qpoold's: uid %d holds it, not root; nothing sent", path,
				 (int)cred.uid);
	return 0;
}

static int connect_tcp(const char *text, bool nonblock, unsigned timeout_ms, int *ret_fd,
		       struct error *err)
{
	struct sockaddr_storage sa;
	socklen_t len;
	int fd, r;

	r = transport_addr_resolve(text, &sa, &len, err);
	if (r < 0)
		return r;
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, -errno, "socket: %s", strerror(errno));
	transport_tcp_tune(fd);
	if (connect(fd, (struct sockaddr *)&sa, len) < 0 && errno != EINPROGRESS) {
		r = -errno;
		goto fail;
	}
	if (!nonblock) {
		r = transport_connect_finish(fd, text, timeout_ms, err);
		if (r < 0) {
			close(fd);
			return r;
		}
	}
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return error_set(err, r, "cannot reach qpoold at %s: %s (is qpoold listening there?)", text,
			 strerror(-r));
}

int transport_connect_finish(int fd, const char *where, unsigned timeout_ms, struct error *err)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int so = 0, r;
	socklen_t sl = sizeof(so);

	r = poll(&p, 1, (int)timeout_ms);
	if (r == 0)
		r = -ETIMEDOUT;
	else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) < 0)
		r = -errno;
	else if (so)
		r = -so;
	/* Blocking from here on, like the Unix socket. */
	else if (fcntl(fd, F_SETFL, 0) < 0)
		r = -errno;
	else
		return 0;
	return error_set(err, r, "cannot reach qpoold at %s: %s (is qpoold listening there?)", where,
			 strerror(-r));
}

int transport_connect(const char *where, bool nonblock, unsigned timeout_ms, int *ret_fd, bool *ret_tcp,
		      struct error *err)
{
	*ret_tcp = where[0] != '/';
	if (*ret_tcp)
		return connect_tcp(where, nonblock, timeout_ms, ret_fd, err);
	return connect_unix(where, nonblock, ret_fd, err);
}

void transport_peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	char host[INET6_ADDRSTRLEN];

	if (getpeername(fd, (struct sockaddr *)&sa, &sl) < 0) {
		snprintf(buf, len, "unknown peer");
		return;
	}
	if (sa.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&sa;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(a->sin_port));
	} else if (sa.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sa;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(a->sin6_port));
	} else {
		snprintf(buf, len, "local");
	}
}
