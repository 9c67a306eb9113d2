/* SPDX-License-Identifier: MIT */
/* MUNGE credentials over libmunge: munge_err_t becomes a negative errno here, once. */
#include <arpa/inet.h>
#include <errno.h>
#include <munge.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "auth.h"
#include "transport.h"
#include "wire.h"

static const char *socket_name(const char *munge_socket)
{
	return munge_socket && *munge_socket ? munge_socket : "munge's default socket";
}

static int ctx_open(const char *munge_socket, munge_ctx_t *ret, struct error *err)
{
	munge_ctx_t ctx = munge_ctx_create();

	if (!ctx)
		return error_set(err, -ENOMEM, "out of memory");
	if (munge_socket && *munge_socket &&
	    munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket) != EMUNGE_SUCCESS) {
		munge_ctx_destroy(ctx);
		return error_set(err, -EINVAL, "munge socket %s: not usable", munge_socket);
	}
	*ret = ctx;
	return 0;
}

/* A munged that cannot be asked is ours to report as unreachable; anything
 * it says about the credential itself is a refusal of that credential. */
static int errno_of(munge_err_t e)
{
	switch (e) {
	case EMUNGE_SOCKET:
	case EMUNGE_TIMEOUT:
	case EMUNGE_SNAFU:
		return -EHOSTUNREACH;
	case EMUNGE_NO_MEMORY:
		return -ENOMEM;
	default:
		return -EACCES;
	}
}

int auth_cred_make(const char *munge_socket, const char *payload, uid_t decoder_uid, char **ret_cred,
		   struct error *err)
{
	munge_ctx_t ctx;
	munge_err_t e;
	char *cred = NULL;
	int r;

	r = ctx_open(munge_socket, &ctx, err);
	if (r < 0)
		return r;
	if (decoder_uid != (uid_t)-1 &&
	    munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, decoder_uid) != EMUNGE_SUCCESS) {
		munge_ctx_destroy(ctx);
		return error_set(err, -EINVAL, "munge: cannot restrict a credential to uid %d", (int)decoder_uid);
	}
	e = munge_encode(&cred, ctx, payload, payload ? (int)strlen(payload) : 0);
	if (e != EMUNGE_SUCCESS) {
		r = error_set(err, errno_of(e), "munged at %s: %s", socket_name(munge_socket),
			      munge_strerror(e));
		free(cred);
		munge_ctx_destroy(ctx);
		return r;
	}
	munge_ctx_destroy(ctx);
	*ret_cred = cred;
	return 0;
}

int auth_cred_check(const char *munge_socket, const char *cred, uid_t *ret_uid, gid_t *ret_gid,
		    char **ret_payload, struct error *err)
{
	munge_ctx_t ctx;
	munge_err_t e;
	uid_t uid;
	gid_t gid;
	void *payload = NULL;
	char *text;
	int len = 0;
	int r;

	r = ctx_open(munge_socket, &ctx, err);
	if (r < 0)
		return r;
	e = munge_decode(cred, ctx, &payload, &len, &uid, &gid);
	if (e != EMUNGE_SUCCESS) {
		free(payload);
		/* munge_strerror names the kind ("Expired credential"); the
		 * context's text may add detail, which a log line can carry. */
		if (errno_of(e) == -EHOSTUNREACH)
			r = error_set(err, -EHOSTUNREACH, "cannot check it: munged at %s: %s",
				      socket_name(munge_socket), munge_strerror(e));
		else
			r = error_set(err, errno_of(e), "%s", munge_strerror(e));
		munge_ctx_destroy(ctx);
		return r;
	}
	munge_ctx_destroy(ctx);
	/* The payload is bytes: as a string, it ends at its first NUL. */
	text = malloc((size_t)len + 1);
	if (!text) {
		free(payload);
		return error_set(err, -ENOMEM, "out of memory");
	}
	if (len > 0)
		memcpy(text, payload, (size_t)len);
	text[len] = '\0';
	free(payload);
	if (ret_payload)
		*ret_payload = text;
	else
		free(text);
	*ret_uid = uid;
	*ret_gid = gid;
	return 0;
}

int auth_probe(const char *munge_socket, struct error *err)
{
	char *cred = NULL;
	uid_t uid;
	gid_t gid;
	int r;

	r = auth_cred_make(munge_socket, NULL, (uid_t)-1, &cred, err);
	if (r == 0)
		r = auth_cred_check(munge_socket, cred, &uid, &gid, NULL, err);
	free(cred);
	if (r < 0) {
		char why[sizeof(err->text)];

		snprintf(why, sizeof(why), "%s", err ? err->text : "");
		return error_set(err, -EHOSTUNREACH, "listen needs munged: %s (is munged running?)", why);
	}
	return 0;
}

int auth_nonce(char buf[AUTH_NONCE_HEX + 1])
{
	unsigned char raw[AUTH_NONCE_HEX / 2];
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(buf + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

static bool nonce_valid(const char *s)
{
	if (!s || strlen(s) != AUTH_NONCE_HEX)
		return false;
	for (const char *p = s; *p; p++)
		if (!strchr("0123456789abcdef", *p))
			return false;
	return true;
}

/* ss as an endpoint: "ADDR:PORT", "[ADDR6]:PORT". 0 or -EAFNOSUPPORT. */
static int endpoint_format(const struct sockaddr_storage *ss, char ret[AUTH_ENDPOINT_MAX], struct error *err)
{
	char host[INET6_ADDRSTRLEN];
	unsigned port;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		port = ntohs(sin->sin_port);
		snprintf(ret, AUTH_ENDPOINT_MAX, "%s:%u", host, port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		port = ntohs(sin6->sin6_port);
		/* A dual-stack listener sees an IPv4 client's server end as
		 * ::ffff:a.b.c.d; the client dialled a.b.c.d. The scope of a
		 * link-local address names an interface, which differs from
		 * one end to the other. */
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			inet_ntop(AF_INET, &sin6->sin6_addr.s6_addr[12], host, sizeof(host));
			snprintf(ret, AUTH_ENDPOINT_MAX, "%s:%u", host, port);
		} else {
			inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
			snprintf(ret, AUTH_ENDPOINT_MAX, "[%s]:%u", host, port);
		}
		return 0;
	}
	return error_set(err, -EAFNOSUPPORT, "the connection is not TCP (address family %d)", (int)ss->ss_family);
}

int auth_endpoint(int fd, bool local, char ret[AUTH_ENDPOINT_MAX], struct error *err)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if ((local ? getsockname(fd, (struct sockaddr *)&ss, &len) : getpeername(fd, (struct sockaddr *)&ss, &len)) < 0)
		return error_set(err, -errno, "the connection's %s address: %s", local ? "own" : "peer's",
				 strerror(errno));
	return endpoint_format(&ss, ret, err);
}

/* Whether s is an endpoint as auth_endpoint writes it: no blank, and short. */
static bool endpoint_valid(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < AUTH_ENDPOINT_MAX && strspn(s, "0123456789abcdef.:[]") == n;
}

json_t *auth_hello(const char *server_nonce)
{
	return json_pack("{s:s, s:i, s:s}", "op", "hello", "id", 0, "nonce", server_nonce);
}

int auth_frame(const char *munge_socket, int fd, const json_t *hello, struct auth_nonces *n, json_t **ret,
	       struct error *err)
{
	const char *op = wire_str(hello, "op"), *nonce = wire_str(hello, "nonce");
	char payload[sizeof(AUTH_TAG) + 2 * AUTH_NONCE_HEX + AUTH_ENDPOINT_MAX + 16];
	char *cred = NULL;
	json_t *msg;
	int r;

	if (!op || strcmp(op, "hello") != 0 || !nonce_valid(nonce))
		return error_set(err, -EPROTO, "it did not speak first with a qpoold hello");
	snprintf(n->server, sizeof(n->server), "%s", nonce);
	r = auth_endpoint(fd, false, n->endpoint, err);
	if (r < 0)
		return r;
	r = auth_nonce(n->client);
	if (r < 0)
		return error_set(err, r, "getrandom: %s", strerror(-r));
	snprintf(payload, sizeof(payload), AUTH_TAG " client %s %s %s", n->server, n->client, n->endpoint);
	/* Only qpoold (root) may decode it: whoever else got it, a server
	 * impersonated or a relay, cannot even read it. */
	r = auth_cred_make(munge_socket, payload, 0, &cred, err);
	if (r < 0)
		return r;
	msg = json_pack("{s:s, s:i, s:s}", "op", "auth", "id", 0, "cred", cred);
	free(cred);
	if (!msg)
		return error_set(err, -ENOMEM, "out of memory");
	*ret = msg;
	return 0;
}

/* Checks the payload "qpool-auth-2 SIDE A B ENDPOINT": A must be want_a;
 * B must be want_b, or with want_b NULL any nonce, copied to ret_b; and
 * ENDPOINT must be endpoint, the server's end of this connection, or also
 * (NULL: none), which is then copied to endpoint. */
static int payload_check(const char *payload, const char *side, const char *want_a, const char *want_b,
			 char *endpoint, const char *also, char *ret_b, struct error *err)
{
	char tag[32], who[8], a[AUTH_NONCE_HEX + 2], b[AUTH_NONCE_HEX + 2], at[AUTH_ENDPOINT_MAX + 1];
	int used = 0;

	if (sscanf(payload, "%31s %7s %33s %33s %64s%n", tag, who, a, b, at, &used) != 5 ||
	    strcmp(tag, AUTH_TAG) != 0 || payload[used] != '\0')
		return error_set(err, -EACCES, "credential not made for qpool %s (another service's, or an older qpool's?)",
				 AUTH_TAG + strlen("qpool-"));
	if (strcmp(who, side) != 0 || !nonce_valid(a) || !nonce_valid(b) || !endpoint_valid(at))
		return error_set(err, -EACCES, "credential not made for this end of a qpool connection");
	if (strcmp(a, want_a) != 0 || (want_b && strcmp(b, want_b) != 0))
		return error_set(err, -EACCES, "credential made for another connection");
	/* The nonces match, the address does not: the credential crossed
	 * from a connection to one address onto a connection to another, as
	 * a relay passes it. */
	if (also && strcmp(at, also) == 0)
		memcpy(endpoint, also, strlen(also) + 1);
	else if (strcmp(at, endpoint) != 0)
		return error_set(err, -EADDRNOTAVAIL, "credential made for a connection to %s, not %s (relayed?)",
				 at, endpoint);
	if (ret_b)
		memcpy(ret_b, b, AUTH_NONCE_HEX + 1);
	return 0;
}

int auth_accept(const char *munge_socket, int fd, const char *advertise, const json_t *msg, struct auth_nonces *n,
		uid_t *ret_uid, gid_t *ret_gid, struct error *err)
{
	const char *op = wire_str(msg, "op"), *cred = wire_str(msg, "cred");
	char *payload = NULL, client[AUTH_NONCE_HEX + 1], also[AUTH_ENDPOINT_MAX] = "";
	int r;

	if (!op || strcmp(op, "auth") != 0)
		return error_set(err, -EACCES, "no credential (first message is not \"auth\")");
	if (!cred)
		return error_set(err, -EACCES, "no credential (auth without a \"cred\" string)");
	r = auth_endpoint(fd, true, n->endpoint, err);
	if (r < 0)
		return r;
	/* The address the site forwards to this server (a NAT, a relay of
	 * its own: advertise), as numbers; one that does not resolve adds
	 * nothing. */
	if (advertise && *advertise) {
		struct sockaddr_storage ss;
		socklen_t len;
		struct error ignored;

		if (transport_addr_resolve(advertise, &ss, &len, &ignored) < 0 ||
		    endpoint_format(&ss, also, &ignored) < 0)
			also[0] = '\0';
	}
	r = auth_cred_check(munge_socket, cred, ret_uid, ret_gid, &payload, err);
	if (r < 0)
		return r;
	/* "client SERVER CLIENT ENDPOINT": made after our hello, on this
	 * connection, to the address it reached us at. */
	r = payload_check(payload, "client", n->server, NULL, n->endpoint, also[0] ? also : NULL, client, err);
	free(payload);
	if (r < 0)
		return r;
	memcpy(n->client, client, sizeof(client));
	return 0;
}

json_t *auth_proof(const char *munge_socket, const struct auth_nonces *n, uid_t peer_uid,
		   struct error *err)
{
	char payload[sizeof(AUTH_TAG) + 2 * AUTH_NONCE_HEX + AUTH_ENDPOINT_MAX + 16];
	char *cred = NULL;
	json_t *msg;

	snprintf(payload, sizeof(payload), AUTH_TAG " server %s %s %s", n->client, n->server, n->endpoint);
	if (auth_cred_make(munge_socket, payload, peer_uid, &cred, err) < 0)
		return NULL;
	msg = json_pack("{s:i, s:b, s:s}", "id", 0, "ok", 1, "cred", cred);
	free(cred);
	if (!msg)
		error_set(err, -ENOMEM, "out of memory");
	return msg;
}

int auth_proof_check(const char *munge_socket, const json_t *reply, const struct auth_nonces *n,
		     struct error *err)
{
	const char *cred = wire_str(reply, "cred");
	char *payload = NULL, endpoint[AUTH_ENDPOINT_MAX];
	uid_t uid;
	gid_t gid;
	int r;

	/* A refusal of a relayed credential (EADDRNOTAVAIL) says the peer we
	 * reached is not the server that refused: another may do better. */
	if (json_integer_value(json_object_get(reply, "id")) == 0 && json_is_false(json_object_get(reply, "ok")))
		return error_set(err, wire_int(reply, "errno", EACCES) == EADDRNOTAVAIL ? -EADDRNOTAVAIL : -EACCES,
				 "%s", wire_str(reply, "error") ?: "refused, no reason given");
	if (!json_is_true(json_object_get(reply, "ok")) || !cred)
		return error_set(err, -EPERM, "it answered the credential without its own");
	r = auth_cred_check(munge_socket, cred, &uid, &gid, &payload, err);
	if (r == -EHOSTUNREACH)
		return r;
	if (r < 0) {
		char why[sizeof(err->text)];

		snprintf(why, sizeof(why), "%s", err->text);
		return error_set(err, -EPERM, "its credential: %s", why);
	}
	if (uid != 0) {
		free(payload);
		return error_set(err, -EPERM, "its credential is uid %d, not root", (int)uid);
	}
	/* "server CLIENT SERVER ENDPOINT": made for this connection's two
	 * nonces, by the server at the address we reached. */
	memcpy(endpoint, n->endpoint, sizeof(endpoint));
	r = payload_check(payload, "server", n->client, n->server, endpoint, NULL, NULL, err);
	free(payload);
	if (r < 0) {
		char why[sizeof(err->text)];

		snprintf(why, sizeof(why), "%s", err->text);
		return error_set(err, -EPERM, "its %s", why);
	}
	return 0;
}
