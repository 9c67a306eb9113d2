/* SPDX-License-Identifier: MIT */
/* lib/pmiwire: PMI-1 and PMI-2 conversations as MPICH 4.0's simple client
 * has them, fed byte by byte and whole, against a recording fake server. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmiwire.h"
#include "unit.h"

#define NCLIENTS 4

struct fake {
	char out[NCLIENTS][8192];
	size_t outlen[NCLIENTS];
	int fenced[NCLIENTS];
	int finalized[NCLIENTS];
	int aborted, abort_code;
	char abort_msg[64];
	int claimed[NCLIENTS];
	int refuse_rank;
	char keys[32][64], vals[32][1024];
	int nkv;
	char nkey[64], nval[64];
};

static int f_send(void *arg, int client, const char *data, size_t len)
{
	struct fake *f = arg;

	if (f->outlen[client] + len >= sizeof(f->out[client]))
		return -ENOSPC;
	memcpy(f->out[client] + f->outlen[client], data, len);
	f->outlen[client] += len;
	f->out[client][f->outlen[client]] = '\0';
	return 0;
}

static int f_claim(void *arg, int client, int rank)
{
	struct fake *f = arg;

	if (rank == f->refuse_rank)
		return -EPERM;
	f->claimed[client] = rank;
	return 0;
}

static void f_fence(void *arg, int client)
{
	((struct fake *)arg)->fenced[client]++;
}

static int f_put(void *arg, int client, const char *key, const char *value)
{
	struct fake *f = arg;

	if (f->nkv == 32)
		return -ENOSPC;
	snprintf(f->keys[f->nkv], 64, "%s", key);
	snprintf(f->vals[f->nkv], 1024, "%s", value);
	f->nkv++;
	return 0;
}

static const char *f_get(void *arg, int client, const char *key)
{
	struct fake *f = arg;

	for (int i = 0; i < f->nkv; i++)
		if (strcmp(f->keys[i], key) == 0)
			return f->vals[i];
	return NULL;
}

static int f_nput(void *arg, int client, const char *key, const char *value)
{
	struct fake *f = arg;

	snprintf(f->nkey, sizeof(f->nkey), "%s", key);
	snprintf(f->nval, sizeof(f->nval), "%s", value);
	return 0;
}

static const char *f_nget(void *arg, int client, const char *key)
{
	struct fake *f = arg;

	return strcmp(key, f->nkey) == 0 ? f->nval : NULL;
}

static void f_abort(void *arg, int client, int code, const char *msg)
{
	struct fake *f = arg;

	f->aborted++;
	f->abort_code = code;
	snprintf(f->abort_msg, sizeof(f->abort_msg), "%s", msg ? msg : "");
}

static void f_finalize(void *arg, int client)
{
	((struct fake *)arg)->finalized[client]++;
}

static const struct pmiwire_ops fake_ops = {
	.send = f_send, .claim = f_claim, .fence = f_fence, .put = f_put, .get = f_get,
	.nodeattr_put = f_nput, .nodeattr_get = f_nget, .abort = f_abort, .finalize = f_finalize,
};

static struct pmiwire *make(struct fake *f, int size)
{
	struct pmiwire_job job = {
		.kvsname = "kvs_42", .size = size, .appnum = 0,
		.process_mapping = "(vector,(0,2,2))",
	};

	memset(f, 0, sizeof(*f));
	f->refuse_rank = -2;
	return pmiwire_create(&fake_ops, f, &job, NCLIENTS);
}

/* Feeds a request and returns what the engine answered since the last call. */
static const char *ask(struct pmiwire *w, struct fake *f, int client, const char *req)
{
	static char last[8192];
	struct error err = { "" };
	int rc;

	f->outlen[client] = 0;
	f->out[client][0] = '\0';
	rc = pmiwire_feed(w, client, req, strlen(req), &err);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc)
		fprintf(stderr, "feed '%s': %d %s\n", req, rc, err.text);
	snprintf(last, sizeof(last), "%s", f->out[client]);
	return last;
}

static void test_v1_session(void)
{
	struct fake f;
	struct pmiwire *w = make(&f, 4);

	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_EQUAL(pmiwire_client_add(w, 0, 2), 0);
	CU_ASSERT_EQUAL(pmiwire_client_add(w, 0, 2), -EBUSY);
	CU_ASSERT_EQUAL(pmiwire_client_add(w, 1, 9), -EINVAL);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=init pmi_version=1 pmi_subversion=1\n"),
			       "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
	CU_ASSERT_EQUAL(pmiwire_client_version(w, 0), 1);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=get_maxes\n"),
			       "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=get_appnum\n"), "cmd=appnum appnum=0 rc=0\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=get_universe_size\n"), "cmd=universe_size size=4 rc=0\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=get_my_kvsname\n"), "cmd=my_kvsname kvsname=kvs_42 rc=0\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=get kvsname=kvs_42 key=PMI_process_mapping\n"),
			       "cmd=get_result rc=0 msg=success value=(vector,(0,2,2))\n");
	/* a business card holds '=' and '$' */
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=put kvsname=kvs_42 key=P2-businesscard value=port=41$host=n1$\n"),
			       "cmd=put_result rc=0 msg=success\n");
	CU_ASSERT_STRING_EQUAL(f.vals[0], "port=41$host=n1$");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=barrier_in\n"), "");
	CU_ASSERT_EQUAL(f.fenced[0], 1);
	CU_ASSERT_EQUAL(pmiwire_client_state(w, 0), PMIWIRE_FENCE);
	CU_ASSERT_EQUAL(pmiwire_fence_done(w), 0);
	CU_ASSERT_STRING_EQUAL(f.out[0], "cmd=barrier_out rc=0\n");
	CU_ASSERT_EQUAL(pmiwire_client_state(w, 0), PMIWIRE_INIT);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=get kvsname=kvs_42 key=P2-businesscard\n"),
			       "cmd=get_result rc=0 msg=success value=port=41$host=n1$\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=get kvsname=kvs_42 key=P3-businesscard\n"),
			       "cmd=get_result rc=-1 msg=key_P3-businesscard_not_found\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=finalize\n"), "cmd=finalize_ack rc=0\n");
	CU_ASSERT_EQUAL(f.finalized[0], 1);
	CU_ASSERT_EQUAL(pmiwire_client_state(w, 0), PMIWIRE_FINALIZED);
	pmiwire_destroy(w);
}

static void test_v1_split_and_batched(void)
{
	struct fake f;
	struct pmiwire *w = make(&f, 2);
	const char *s = "cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_appnum\ncmd=get_my_kvsname\n";
	struct error err;

	pmiwire_client_add(w, 1, 1);
	for (size_t i = 0; i < strlen(s); i++)
		CU_ASSERT_EQUAL(pmiwire_feed(w, 1, s + i, 1, &err), 0);
	CU_ASSERT_STRING_EQUAL(f.out[1], "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
			       "cmd=appnum appnum=0 rc=0\ncmd=my_kvsname kvsname=kvs_42 rc=0\n");
	pmiwire_destroy(w);
}

static void test_v1_port_initack(void)
{
	struct fake f;
	struct pmiwire *w = make(&f, 4);

	pmiwire_client_add(w, 0, -1);
	CU_ASSERT_EQUAL(pmiwire_client_rank(w, 0), -1);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=initack pmiid=3\n"),
			       "cmd=initack rc=0\ncmd=set size=4\ncmd=set rank=3\ncmd=set debug=0\n");
	CU_ASSERT_EQUAL(pmiwire_client_rank(w, 0), 3);
	CU_ASSERT_EQUAL(f.claimed[0], 3);
	pmiwire_client_add(w, 1, -1);
	f.refuse_rank = 1;
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 1, "cmd=initack pmiid=1\n"),
			       "cmd=initack rc=-1 msg=pmiid_1_refused\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 1, "cmd=initack pmiid=7\n"),
			       "cmd=initack rc=-1 msg=pmiid_7_refused\n");
	pmiwire_destroy(w);
}

/* A rank's id is taken once: by its PMI_FD connection, or by the first
 * PMI_PORT connection that names it. A connection that ended does not
 * free it, so no other process can speak as a finished rank. */
static void test_v1_port_rank_once(void)
{
	struct fake f;
	struct pmiwire *w = make(&f, 4);
	struct error err = { "" };
	const char *abort_req = "cmd=abort exitcode=7\n";

	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_EQUAL(pmiwire_rank_claimed(w, 2), 0);
	pmiwire_client_add(w, 0, -1);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=initack pmiid=2\n"),
			       "cmd=initack rc=0\ncmd=set size=4\ncmd=set rank=2\ncmd=set debug=0\n");
	CU_ASSERT_EQUAL(pmiwire_rank_claimed(w, 2), 1);
	pmiwire_client_remove(w, 0);   /* rank 2 finished, its connection closed */
	CU_ASSERT_EQUAL(pmiwire_rank_claimed(w, 2), 1);
	pmiwire_client_add(w, 0, -1);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=initack pmiid=2\n"), "cmd=initack rc=-1 msg=pmiid_2_refused\n");
	CU_ASSERT_EQUAL(pmiwire_client_rank(w, 0), -1);
	/* refused, it cannot speak PMI as anyone: no abort reaches the server */
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=init pmi_version=1 pmi_subversion=1\n"),
			       "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
	CU_ASSERT_EQUAL(pmiwire_feed(w, 0, abort_req, strlen(abort_req), &err), -EPROTO);
	CU_ASSERT_EQUAL(f.aborted, 0);
	/* a rank started with PMI_FD holds its id, even once that closed */
	pmiwire_client_add(w, 1, 1);
	CU_ASSERT_EQUAL(pmiwire_rank_claimed(w, 1), 1);
	pmiwire_client_remove(w, 1);
	pmiwire_client_add(w, 2, -1);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 2, "cmd=initack pmiid=1\n"), "cmd=initack rc=-1 msg=pmiid_1_refused\n");
	CU_ASSERT_EQUAL(pmiwire_client_add(w, 1, 1), -EBUSY);
	/* PMI-2's fullinit claims the same way */
	pmiwire_client_add(w, 3, -1);
	CU_ASSERT_EQUAL(pmiwire_rank_claimed(w, 3), 0);
	pmiwire_destroy(w);
}

/* PMI_PORT's first line, read by the server before it gives the
 * connection a rank's slot. */
static void test_initack_parse(void)
{
	static const struct {
		const char *in;
		int rc, rank;
	} cases[] = {
		{ "cmd=initack pmiid=3\n", 1, 3 },
		{ "cmd=initack pmiid=0\ncmd=init pmi_version=1\n", 1, 0 },
		{ "cmd=initack  pmiid=12\r\n", 1, 12 },
		{ "cmd=initack pmiid=3", 0, -1 },           /* not whole yet */
		{ "", 0, -1 },
		{ "cmd=init pmi_version=1 pmi_subversion=1\n", -EPROTO, -1 },
		{ "cmd=initack\n", -EPROTO, -1 },
		{ "cmd=initack pmiid=x\n", -EPROTO, -1 },
		{ "cmd=initack pmiid=-1\n", -EPROTO, -1 },
		{ "cmd=initack pmiid=99999999999\n", -EPROTO, -1 },
		{ "cmd=initack pmiid=1 pmiid=2\n", -EPROTO, -1 },
		{ "GET / HTTP/1.0\n", -EPROTO, -1 },
	};
	char big[300];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rank = -1, rc = pmiwire_initack_parse(cases[i].in, strlen(cases[i].in), &rank);

		CU_ASSERT_EQUAL(rc, cases[i].rc);
		if (rc != cases[i].rc)
			fprintf(stderr, "initack '%s': %d\n", cases[i].in, rc);
		if (rc == 1)
			CU_ASSERT_EQUAL(rank, cases[i].rank);
	}
	/* no newline within PMIWIRE_INITACK_MAX bytes: never an initack */
	memset(big, 'a', sizeof(big));
	CU_ASSERT_EQUAL(pmiwire_initack_parse(big, sizeof(big), &(int){ 0 }), -EPROTO);
}

/* The servers' shared secret. */
static void test_token(void)
{
	CU_ASSERT_EQUAL(pmiwire_token_ok("00ff", "00ff"), 1);
	CU_ASSERT_EQUAL(pmiwire_token_ok("00ff", "00fe"), 0);
	CU_ASSERT_EQUAL(pmiwire_token_ok("00ff", "00ff0"), 0);
	CU_ASSERT_EQUAL(pmiwire_token_ok("00ff", ""), 0);
	CU_ASSERT_EQUAL(pmiwire_token_ok("00ff", NULL), 0);
	/* no secret: only a server started by hand, for tests */
	CU_ASSERT_EQUAL(pmiwire_token_ok(NULL, "x"), 1);
	CU_ASSERT_EQUAL(pmiwire_token_ok("", NULL), 1);
}

static void test_v1_refusals(void)
{
	struct fake f;
	struct pmiwire *w = make(&f, 2);
	struct error err = { "" };
	char big[1200];

	pmiwire_client_add(w, 0, 0);
	/* before init: not PMI */
	CU_ASSERT_EQUAL(pmiwire_feed(w, 0, "cmd=get_appnum\n", 15, &err), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "before init"));
	pmiwire_client_remove(w, 0);
	pmiwire_client_add(w, 0, 1);   /* rank 0 stays taken */
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=init pmi_version=3 pmi_subversion=0\n"),
			       "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
	ask(w, &f, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=frobnicate\n"), "cmd=frobnicate_result rc=-1 msg=unknown_command\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=put kvsname=kvs_42 key=k\n"),
			       "cmd=put_result rc=-1 msg=bad_key_or_value\n");
	memset(big, 'k', sizeof(big));
	snprintf(big, sizeof(big), "cmd=put kvsname=kvs_42 key=%0100d value=v\n", 1);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, big), "cmd=put_result rc=-1 msg=bad_key_or_value\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=publish_name service=a port=b\n"),
			       "cmd=publish_result rc=-1 msg=not_supported\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "mcmd=spawn\nnprocs=2\nexecname=/bin/true\nendcmd\n"),
			       "cmd=spawn_result rc=-1 errmsg=spawn_is_not_supported\n");
	CU_ASSERT_EQUAL(pmiwire_feed(w, 0, "garbage\n", 8, &err), -EPROTO);
	CU_ASSERT_EQUAL(pmiwire_feed(w, 0, "cmd=x\0y\n", 8, &err), -EPROTO);
	pmiwire_destroy(w);

	w = make(&f, 2);
	pmiwire_client_add(w, 0, 0);
	{
		char *flood = malloc(PMIWIRE_MSG_MAX + 10);

		memset(flood, 'a', PMIWIRE_MSG_MAX + 10);
		CU_ASSERT_EQUAL(pmiwire_feed(w, 0, flood, PMIWIRE_MSG_MAX + 10, &err), -EPROTO);
		free(flood);
	}
	pmiwire_destroy(w);
}

static void test_v1_abort(void)
{
	struct fake f;
	struct pmiwire *w = make(&f, 2);

	pmiwire_client_add(w, 0, 0);
	ask(w, &f, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=abort exitcode=7\n"), "");
	CU_ASSERT_EQUAL(f.aborted, 1);
	CU_ASSERT_EQUAL(f.abort_code, 7);
	CU_ASSERT_EQUAL(pmiwire_client_state(w, 0), PMIWIRE_ABORTED);
	pmiwire_destroy(w);
}

/* A PMI-2 message as the client frames it. */
static const char *v2(const char *body)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%-6zu%s", strlen(body), body);
	return buf;
}

/* The same, for what the server is expected to answer. */
static const char *v2r(const char *body)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%-6zu%s", strlen(body), body);
	return buf;
}

static void test_v2_session(void)
{
	struct fake f;
	struct pmiwire *w = make(&f, 4);

	pmiwire_client_add(w, 0, -1);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, "cmd=init pmi_version=2 pmi_subversion=0\n"),
			       "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=fullinit;pmirank=1;threaded=FALSE;")),
			       v2r("cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=1;size=4;appnum=0;debugged=FALSE;pmiverbose=FALSE;"));
	CU_ASSERT_EQUAL(pmiwire_client_rank(w, 0), 1);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=job-getid;thrid=0x1;")),
			       v2r("cmd=job-getid-response;thrid=0x1;rc=0;jobid=kvs_42;"));
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=info-getjobattr;key=PMI_process_mapping;")),
			       v2r("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,2,2));"));
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=info-getjobattr;key=nope;")),
			       v2r("cmd=info-getjobattr-response;rc=0;found=FALSE;"));
	/* ';;' is a ';' in a value, both ways */
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=kvs-put;key=bc-1;value=a;;b=c;")),
			       v2r("cmd=kvs-put-response;rc=0;"));
	CU_ASSERT_STRING_EQUAL(f.vals[0], "a;b=c");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=kvs-fence;")), "");
	CU_ASSERT_EQUAL(f.fenced[0], 1);
	pmiwire_fence_done(w);
	CU_ASSERT_STRING_EQUAL(f.out[0], v2r("cmd=kvs-fence-response;rc=0;"));
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=kvs-get;jobid=kvs_42;srcid=-1;key=bc-1;")),
			       v2r("cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b=c;"));
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=info-putnodeattr;key=shm;value=/dev/shm/x;")),
			       v2r("cmd=info-putnodeattr-response;rc=0;"));
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=info-getnodeattr;key=shm;wait=FALSE;")),
			       v2r("cmd=info-getnodeattr-response;rc=0;found=TRUE;value=/dev/shm/x;"));
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=spawn;ncmds=1;")),
			       v2r("cmd=spawn-response;rc=-1;errmsg=spawn is not supported;"));
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=finalize;")), v2r("cmd=finalize-response;rc=0;"));
	CU_ASSERT_EQUAL(f.finalized[0], 1);
	pmiwire_destroy(w);
}

static void test_v2_refusals(void)
{
	struct fake f;
	struct pmiwire *w = make(&f, 4);
	struct error err = { "" };

	pmiwire_client_add(w, 0, -1);
	ask(w, &f, 0, "cmd=init pmi_version=2 pmi_subversion=0\n");
	/* rank unknown before fullinit */
	CU_ASSERT_EQUAL(pmiwire_feed(w, 0, v2("cmd=kvs-fence;"), 21, &err), -EPROTO);
	pmiwire_client_remove(w, 0);
	pmiwire_client_add(w, 0, -1);
	ask(w, &f, 0, "cmd=init pmi_version=2 pmi_subversion=0\n");
	CU_ASSERT_PTR_NOT_NULL(strstr(ask(w, &f, 0, v2("cmd=fullinit;pmirank=5;")), "rc=-1"));
	CU_ASSERT_EQUAL(pmiwire_feed(w, 0, "abcdefcmd=x;", 12, &err), -EPROTO);
	pmiwire_client_remove(w, 0);
	pmiwire_client_add(w, 0, 2);
	ask(w, &f, 0, "cmd=init pmi_version=2 pmi_subversion=0\n");
	CU_ASSERT_EQUAL(pmiwire_feed(w, 0, v2("cmd=x;key=unterminated"), 29, &err), -EPROTO);
	pmiwire_client_remove(w, 0);
	pmiwire_client_add(w, 0, 3);   /* a rank is taken once */
	ask(w, &f, 0, "cmd=init pmi_version=2 pmi_subversion=0\n");
	CU_ASSERT_EQUAL(pmiwire_feed(w, 0, v2("key=v;cmd=x;"), 18, &err), -EPROTO);
	pmiwire_destroy(w);
}

/* info-getnodeattr wait=TRUE: held until another rank puts the key. */
static void test_v2_nodeattr_wait(void)
{
	struct fake f;
	struct pmiwire *w = make(&f, 2);

	for (int i = 0; i < 2; i++) {
		pmiwire_client_add(w, i, i);
		ask(w, &f, i, "cmd=init pmi_version=2 pmi_subversion=0\n");
		ask(w, &f, i, v2(i ? "cmd=fullinit;pmirank=1;" : "cmd=fullinit;pmirank=0;"));
	}
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 1, v2("cmd=info-getnodeattr;thrid=t7;key=seg;wait=TRUE;")), "");
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=info-putnodeattr;key=other;value=1;")),
			       v2r("cmd=info-putnodeattr-response;rc=0;"));
	CU_ASSERT_EQUAL(f.outlen[1], 0);
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 0, v2("cmd=info-putnodeattr;key=seg;value=/dev/shm/s;")),
			       v2r("cmd=info-putnodeattr-response;rc=0;"));
	CU_ASSERT_STRING_EQUAL(f.out[1],
			       v2r("cmd=info-getnodeattr-response;thrid=t7;rc=0;found=TRUE;value=/dev/shm/s;"));
	/* without wait: found=FALSE at once */
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 1, v2("cmd=info-getnodeattr;key=nope;")),
			       v2r("cmd=info-getnodeattr-response;rc=0;found=FALSE;"));
	/* a waiter that goes away is forgotten */
	CU_ASSERT_STRING_EQUAL(ask(w, &f, 1, v2("cmd=info-getnodeattr;key=late;wait=TRUE;")), "");
	pmiwire_client_remove(w, 1);
	ask(w, &f, 0, v2("cmd=info-putnodeattr;key=late;value=x;"));
	pmiwire_destroy(w);
}

static void test_mapping(void)
{
	char buf[128];
	int even[] = { 2, 2, 2, 2 }, uneven[] = { 3, 3, 1, 2 }, bad[] = { 1, 0 };

	CU_ASSERT_EQUAL(pmiwire_process_mapping(even, 4, buf, sizeof(buf)), 16);
	CU_ASSERT_STRING_EQUAL(buf, "(vector,(0,4,2))");
	CU_ASSERT(pmiwire_process_mapping(uneven, 4, buf, sizeof(buf)) > 0);
	CU_ASSERT_STRING_EQUAL(buf, "(vector,(0,2,3),(2,1,1),(3,1,2))");
	CU_ASSERT_EQUAL(pmiwire_process_mapping(bad, 2, buf, sizeof(buf)), -EINVAL);
	CU_ASSERT_EQUAL(pmiwire_process_mapping(even, 0, buf, sizeof(buf)), -EINVAL);
	CU_ASSERT_EQUAL(pmiwire_process_mapping(even, 4, buf, 10), -ENOSPC);
}

static void test_create_refusals(void)
{
	struct fake f;
	struct pmiwire_job job = { .kvsname = "a b", .size = 2 };

	CU_ASSERT_PTR_NULL(pmiwire_create(&fake_ops, &f, &job, 2));
	job.kvsname = "ok";
	job.size = 0;
	CU_ASSERT_PTR_NULL(pmiwire_create(&fake_ops, &f, &job, 2));
}

static const struct unit_test pmiwire_tests[] = {
	{ "v1_session", test_v1_session },
	{ "v1_split_and_batched", test_v1_split_and_batched },
	{ "v1_port_initack", test_v1_port_initack },
	{ "v1_port_rank_once", test_v1_port_rank_once },
	{ "initack_parse", test_initack_parse },
	{ "token", test_token },
	{ "v1_refusals", test_v1_refusals },
	{ "v1_abort", test_v1_abort },
	{ "v2_session", test_v2_session },
	{ "v2_refusals", test_v2_refusals },
	{ "v2_nodeattr_wait", test_v2_nodeattr_wait },
	{ "mapping", test_mapping },
	{ "create_refusals", test_create_refusals },
	{ NULL, NULL },
};

UNIT_SUITE(pmiwire, pmiwire_tests);
