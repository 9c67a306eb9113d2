/* SPDX-License-Identifier: MIT */
/* The server's hooks on an event loop (scheduler/srvhook.c), no qpoold:
 * a run ends through the loop, a run killed by srvhooks_kill ends killed
 * at once, qmgr's list holds the last outcome, and a run still going when
 * the hooks are destroyed is dropped, not done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srvhook.h"
#include "unit.h"

struct seen {
	bool done, dropped;
	enum hook_outcome outcome;
	char err[HOOK_ERR_KEEP + 1];
};

static void on_done(struct hook *h, void *arg)
{
	struct seen *s = arg;

	s->done = true;
	s->outcome = h->outcome;
	snprintf(s->err, sizeof(s->err), "%s", h->errbuf);
}

static void on_drop(void *arg)
{
	((struct seen *)arg)->dropped = true;
}

static void loop_until(sd_event *e, const struct seen *s, int ms)
{
	for (int i = 0; i < ms / 10 && !s->done; i++)
		sd_event_run(e, 10000);
}

static void test_srvhook_loop(void)
{
	char dir[] = "/tmp/qpool-srvhook.XXXXXX", path[64];
	char *env_ok[] = { "PATH=/usr/bin:/bin", "QPOOL_HOOK=server_prolog", "MODE=ok", NULL };
	char *env_sleep[] = { "PATH=/usr/bin:/bin", "QPOOL_HOOK=server_prolog", "MODE=sleep", NULL };
	struct config *c = calloc(1, sizeof(*c));
	struct seen a = { 0 }, b = { 0 }, d = { 0 };
	struct srvhooks *hs = NULL;
	json_t *in = json_pack("{s:i, s:s}", "version", 1, "event", "server_prolog"), *list, *o;
	sd_event *e = NULL;
	size_t i;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/hook", dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("#!/bin/sh\ncat > /dev/null\necho \"$1 $QPOOL_HOOK\" >&2\n"
	      "[ \"$MODE\" = sleep ] && exec sleep 30\nexit 0\n", f);
	fclose(f);
	chmod(path, 0755);
	CU_ASSERT_EQUAL_FATAL(sd_event_new(&e), 0);
	CU_ASSERT_EQUAL_FATAL(srvhooks_create(e, &hs), 0);

	/* Through the loop to its end, with its argument and environment. */
	CU_ASSERT_EQUAL(srvhooks_run(hs, SRVHOOK_SERVER_PROLOG, path, 5, in, env_ok, on_done, on_drop, &a), 0);
	loop_until(e, &a, 5000);
	CU_ASSERT(a.done);
	CU_ASSERT_EQUAL(a.outcome, HOOK_OK);
	CU_ASSERT_STRING_EQUAL(a.err, "server_prolog server_prolog\n");

	/* Killed at once, not at its 30 s bound. */
	CU_ASSERT_EQUAL(srvhooks_run(hs, SRVHOOK_SERVER_PROLOG, path, 30, in, env_sleep, on_done, on_drop, &b), 0);
	for (i = 0; i < 20; i++)
		sd_event_run(e, 10000);
	CU_ASSERT(!b.done);
	srvhooks_kill(hs, &b);
	loop_until(e, &b, 3000);
	CU_ASSERT(b.done);
	CU_ASSERT_EQUAL(b.outcome, HOOK_SIGNALED);

	/* qmgr's list: the last outcome, runs and failures. */
	snprintf(c->server_prolog, sizeof(c->server_prolog), "%s", path);
	c->server_prolog_timeout = 30;
	list = srvhooks_json(hs, c);
	o = NULL;
	json_array_foreach(list, i, o)
		if (!strcmp(json_string_value(json_object_get(o, "name")), "server_prolog"))
			break;
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "runs")), 2);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "failures")), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "path")), path);
	json_decref(list);

	/* Still running at the end: dropped, never done. */
	CU_ASSERT_EQUAL(srvhooks_run(hs, SRVHOOK_SERVER_EPILOG, path, 30, in, env_sleep, on_done, on_drop, &d), 0);
	srvhooks_destroy(hs);
	CU_ASSERT(d.dropped);
	CU_ASSERT(!d.done);

	sd_event_unref(e);
	json_decref(in);
	free(c);
	unlink(path);
	rmdir(dir);
}

static const struct unit_test srvhook_tests[] = {
	{ "runs on the loop, killed at once, listed, dropped at the end", test_srvhook_loop },
	{ NULL, NULL },
};

UNIT_SUITE(srvhook, srvhook_tests);
