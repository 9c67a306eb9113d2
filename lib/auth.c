/* SPDX-License-Identifier: MIT */
/* MUNGE credentials over libmunge: munge_err_t becomes a negative errno here, once. */
#include <errno.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
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

int auth_cred_make(const char *munge_socket, char **ret_cred, struct error *err)
{
	munge_ctx_t ctx;
	munge_err_t e;
	char *cred = NULL;
	int r;

	r = ctx_open(munge_socket, &ctx, err);
	if (r < 0)
		return r;
	e = munge_encode(&cred, ctx, NULL, 0);
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
		    struct error *err)
{
	munge_ctx_t ctx;
	munge_err_t e;
	uid_t uid;
	gid_t gid;
	void *payload = NULL;
	int len = 0;
	int r;

	r = ctx_open(munge_socket, &ctx, err);
	if (r < 0)
		return r;
	e = munge_decode(cred, ctx, &payload, &len, &uid, &gid);
	free(payload);
	if (e != EMUNGE_SUCCESS) {
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

	r = auth_cred_make(munge_socket, &cred, err);
	if (r == 0)
		r = auth_cred_check(munge_socket, cred, &uid, &gid, err);
	free(cred);
	if (r < 0) {
		char why[sizeof(err->text)];

		snprintf(why, sizeof(why), "%s", err ? err->text : "");
		return error_set(err, -EHOSTUNREACH, "listen needs munged: %s (is munged running?)", why);
	}
	return 0;
}

json_t *auth_frame(const char *munge_socket, struct error *err)
{
	char *cred = NULL;
	json_t *msg;

	if (auth_cred_make(munge_socket, &cred, err) < 0)
		return NULL;
	msg = json_pack("{s:s, s:i, s:s}", "op", "auth", "id", 0, "cred", cred);
	free(cred);
	if (!msg)
		error_set(err, -ENOMEM, "out of memory");
	return msg;
}

int auth_accept(const char *munge_socket, const json_t *msg, uid_t *ret_uid,
			  gid_t *ret_gid, struct error *err)
{
	const char *op = wire_str(msg, "op"), *cred = wire_str(msg, "cred");

	if (!op || strcmp(op, "auth") != 0)
		return error_set(err, -EACCES, "no credential (first message is not \"auth\")");
	if (!cred)
		return error_set(err, -EACCES, "no credential (auth without a \"cred\" string)");
	return auth_cred_check(munge_socket, cred, ret_uid, ret_gid, err);
}
