/* SPDX-License-Identifier: MIT */
/* qpoold's handlers through its door, as a client meets them: a whole
 * server (server_create) on a temporary SQLite store, each peer a
 * socketpair whose identity the test gives (server_conn_open), frames
 * written and read as every command does (lib/wire). The checks are the
 * door's (who may ask, unknown ops, mistyped members) and the handlers'
 * own (a job submitted, seen, refused to another user, deleted; kept in
 * the store across a new server); a standby of the same store answering
 * with where the active is. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "server-internal.h"
#include "server.h"
#include "unit.h"
#include "wire.h"

#define NOBODY 65534     /* Debian's nobody: a user of every host */
#define DAEMON_UID 1     /* daemon: another user */

struct fixture {
	char dir[64];
	sd_event *e;
	struct server *s;
};

/* A server of the pool in f->dir (its store state/), listening on
 * NAME.sock, into *ret. */
static int fixture_server_as(struct fixture *f, const char *name, struct server **ret)
{
	char path[128], text[512];
	struct config *config = NULL;
	struct error err = { "" };
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s.conf", f->dir, name);
	snprintf(text, sizeof(text),
		 "[server]\nstate_dir = %s/state\nsocket = %s/%s.sock\n\n"
		 "[queue batch]\ndefault = yes\nwalltime_default = 00:10:00\nmem_default = 0\n",
		 f->dir, f->dir, name);
	fp = fopen(path, "w");
	if (!fp)
		return -errno;
	fputs(text, fp);
	fclose(fp);
	if (config_load(path, &config, &err) < 0 || server_create(f->e, config, ret, &err) < 0) {
		fprintf(stderr, "test_handlers: %s\n", err.text);
		return -1;
	}
	return 0;
}

static int fixture_server(struct fixture *f)
{
	return fixture_server_as(f, "qpoold", &f->s);
}

/* Runs the loop until the server holds the lease (bounded: 10 s). */
static bool fixture_active(struct fixture *f)
{
	for (int i = 0; i < 200; i++) {
		if (!server_standby(&f->s->h))
			return true;
		(void)sd_event_run(f->e, 50000);
	}
	return false;
}

static int fixture_up(struct fixture *f)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/qpool-unit.XXXXXX");
	if (!mkdtemp(f->dir) || sd_event_new(&f->e) < 0)
		return -1;
	if (fixture_server(f) < 0 || !fixture_active(f))
		return -1;
	return 0;
}

static void fixture_down(struct fixture *f)
{
	char cmd[128];

	if (f->s)
		server_destroy(f->s);
	f->s = NULL;
	sd_event_unref(f->e);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_handlers: cannot remove %s\n", f->dir);
}

/* A peer of uid on server s: the client's end of a socketpair, -1 on
 * failure. */
static int peer_on(struct server *s, uid_t uid)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	if (server_conn_open(s, sv[0], uid, uid) < 0) {
		close(sv[1]);
		return -1;
	}
	return sv[1];
}

static int peer(struct fixture *f, uid_t uid)
{
	return peer_on(f->s, uid);
}

/* Sends req (stolen) on fd and runs the loop until its reply comes
 * (bounded: 10 s). NULL when none came. */
static json_t *call(struct fixture *f, int fd, json_t *req)
{
	struct error err;
	json_t *reply = NULL;

	if (wire_send(fd, req) < 0) {
		json_decref(req);
		return NULL;
	}
	json_decref(req);
	for (int i = 0; i < 1000; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		(void)sd_event_run(f->e, 10000);
		if (poll(&p, 1, 0) == 1)
			break;
	}
	if (wire_recv(fd, &reply, &err) < 0)
		return NULL;
	return reply;
}

/* The reply's errno (0: ok) and whether its text holds want. */
static int reply_errno(const json_t *r, const char *want)
{
	const char *text = wire_str(r, "error");

	if (!r)
		return -1;
	if (wire_bool(r, "ok", 0))
		return 0;
	if (want && (!text || !strstr(text, want))) {
		fprintf(stderr, "test_handlers: '%s' lacks '%s'\n", text ? text : "", want);
		return -1;
	}
	return (int)wire_int(r, "errno", -1);
}

static long long submit(struct fixture *f, int fd)
{
	json_t *r = call(f, fd,
			 json_pack("{s:s, s:i, s:s, s:s, s:s, s:i, s:i}", "op", "submit", "id", 7, "script",
				   "#!/bin/sh\ntrue\n", "name", "unit", "workdir", "/tmp", "ncpus", 1, "walltime",
				   60));
	long long id = wire_int(r, "jobid", -1);

	if (reply_errno(r, NULL) != 0)
		fprintf(stderr, "test_handlers: submit: %s\n", wire_str(r, "error"));
	CU_ASSERT_EQUAL(wire_int(r, "id", 0), 7);
	json_decref(r);
	return id;
}

/* The door: an unknown op, a node's op from a user or from root on a
 * link that never registered, a member of the wrong type; each one line
 * with its errno, the connection still served. */
static void test_handlers_door(void)
{
	struct fixture f = { 0 };
	int user, root;
	json_t *r;

	CU_ASSERT_FATAL(fixture_up(&f) == 0);
	user = peer(&f, NOBODY);
	root = peer(&f, 0);
	CU_ASSERT_FATAL(user >= 0 && root >= 0);

	r = call(&f, user, json_pack("{s:s, s:i}", "op", "frobnicate", "id", 1));
	CU_ASSERT_EQUAL(reply_errno(r, "unknown request 'frobnicate'"), EOPNOTSUPP);
	json_decref(r);
	r = call(&f, user, json_pack("{s:s, s:i, s:I}", "op", "job.done", "id", 2, "jobid", (json_int_t)1));
	CU_ASSERT_EQUAL(reply_errno(r, "only root may speak for a node"), EPERM);
	json_decref(r);
	r = call(&f, root, json_pack("{s:s, s:i}", "op", "node.heartbeat", "id", 3));
	CU_ASSERT_EQUAL(reply_errno(r, "register first"), ENOTCONN);
	json_decref(r);
	r = call(&f, user, json_pack("{s:s, s:i, s:s}", "op", "submit", "id", 4, "ncpus", "two"));
	CU_ASSERT_EQUAL(reply_errno(r, "member \"ncpus\" has the wrong type"), EINVAL);
	json_decref(r);
	/* Still served after four refusals. */
	r = call(&f, user, json_pack("{s:s, s:i}", "op", "queues", "id", 5));
	CU_ASSERT_EQUAL(reply_errno(r, NULL), 0);
	json_decref(r);
	close(user);
	close(root);
	fixture_down(&f);
}

/* A job's way through the handlers: submitted by one user, seen by it,
 * refused to another (delete, suspend), deleted by its owner; in the
 * store, so a new server on the same state reads it back. */
static void test_handlers_job(void)
{
	struct fixture f = { 0 };
	int owner, other;
	long long id;
	json_t *r;

	CU_ASSERT_FATAL(fixture_up(&f) == 0);
	owner = peer(&f, NOBODY);
	other = peer(&f, DAEMON_UID);
	CU_ASSERT_FATAL(owner >= 0 && other >= 0);

	id = submit(&f, owner);
	CU_ASSERT_FATAL(id > 0);
	r = call(&f, owner, json_pack("{s:s, s:i, s:I}", "op", "stat", "id", 1, "jobid", (json_int_t)id));
	CU_ASSERT_EQUAL(reply_errno(r, NULL), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(r, "jobs")), 1);
	CU_ASSERT_STRING_EQUAL(wire_str(json_array_get(json_object_get(r, "jobs"), 0), "state"), "queued");
	json_decref(r);

	r = call(&f, other, json_pack("{s:s, s:i, s:I}", "op", "delete", "id", 2, "jobid", (json_int_t)id));
	CU_ASSERT_EQUAL(reply_errno(r, "permission denied (owned by nobody)"), EPERM);
	json_decref(r);
	r = call(&f, other, json_pack("{s:s, s:i, s:I}", "op", "suspend", "id", 3, "jobid", (json_int_t)id));
	CU_ASSERT_EQUAL(reply_errno(r, "only root may suspend jobs"), EPERM);
	json_decref(r);

	/* A new server on the same store: the job is still there, queued. */
	close(owner);
	close(other);
	server_destroy(f.s);
	f.s = NULL;
	CU_ASSERT_FATAL(fixture_server(&f) == 0 && fixture_active(&f));
	owner = peer(&f, NOBODY);
	CU_ASSERT_FATAL(owner >= 0);
	r = call(&f, owner, json_pack("{s:s, s:i, s:I}", "op", "stat", "id", 4, "jobid", (json_int_t)id));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(r, "jobs")), 1);
	json_decref(r);
	r = call(&f, owner, json_pack("{s:s, s:i, s:I}", "op", "delete", "id", 5, "jobid", (json_int_t)id));
	CU_ASSERT_EQUAL(reply_errno(r, NULL), 0);
	json_decref(r);
	close(owner);
	fixture_down(&f);
}

/* A second server of the same store is a standby while the first holds
 * the lease: it answers every op with where the active is (the client
 * goes on there) and writes nothing. */
static void test_handlers_standby(void)
{
	struct fixture f = { 0 };
	struct server *b = NULL;
	int fd, user;
	json_t *r;

	CU_ASSERT_FATAL(fixture_up(&f) == 0);
	CU_ASSERT_FATAL(fixture_server_as(&f, "standby", &b) == 0);
	for (int i = 0; i < 20; i++)
		(void)sd_event_run(f.e, 10000);
	CU_ASSERT_TRUE(server_standby(&b->h));
	fd = peer_on(b, NOBODY);
	CU_ASSERT_FATAL(fd >= 0);
	r = call(&f, fd,
		 json_pack("{s:s, s:i, s:s, s:s, s:s, s:i, s:i}", "op", "submit", "id", 1, "script",
			   "#!/bin/sh\ntrue\n", "name", "unit", "workdir", "/tmp", "ncpus", 1, "walltime", 60));
	CU_ASSERT_EQUAL(reply_errno(r, "is a standby"), EAGAIN);
	CU_ASSERT_TRUE(wire_bool(r, "standby", 0));
	json_decref(r);
	/* Nothing was written: the active has no job. */
	user = peer(&f, NOBODY);
	CU_ASSERT_FATAL(user >= 0);
	r = call(&f, user, json_pack("{s:s, s:i}", "op", "stat", "id", 2));
	CU_ASSERT_EQUAL(reply_errno(r, NULL), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(r, "jobs")), 0);
	json_decref(r);
	close(fd);
	close(user);
	server_destroy(b);
	fixture_down(&f);
}

static const struct unit_test handlers_tests[] = {
	{ "a standby answers every op with where the active is, writes nothing", test_handlers_standby },
	{ "the door: unknown ops, node ops, mistyped members", test_handlers_door },
	{ "a job submitted, seen, refused to another, kept across a new server", test_handlers_job },
	{ NULL, NULL },
};

UNIT_SUITE(handlers, handlers_tests);
