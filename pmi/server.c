/* SPDX-License-Identifier: MIT */
/* qpool-pmi's loop: its node's ranks, their PMI connections, the link to
 * the job's other per-node servers (node 0 is the root of the fences). */
#include <arpa/inet.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gate.h"
#include "netns.h"
#include "pmid.h"
#include "pmiwire.h"
#include "wire.h"

#define MAX_LOCAL 1024
#define MAX_CALLS 64
/* How long an accepted connection may take to send its first message (a
 * sister's hello follows its connect at once; MPICH's initack too). */
#define FIRST_MESSAGE_MS 10000
/* Connections taken from a listening socket per turn of the loop: a flood
 * is drained from the backlog (where it would hold back the ranks' and
 * sisters' connects), and at half a gate, an accepted connection is read
 * at least once before a newer one can push it out. */
#define ACCEPT_BATCH (GATE_MAX / 2)
/* A hello is a node number and a 32-digit token: a frame larger than
 * this from a stranger is not one. */
#define HELLO_MAX 4096

struct rank {
	int rank;
	pid_t pid;
	int fd;          /* PMI connection, -1 when none (yet) */
	int exited;
	int status;      /* wait status */
	int pmix_up;     /* connected to the PMIx server */
	int out[2];      /* --label: read ends of its stdout and stderr, -1 when closed */
	struct linebuf { char *buf; size_t len; } line[2];
};

struct peer {
	int fd;
	int node;        /* -1 until its hello */
	int done;        /* said its ranks are all gone */
	int told;        /* was sent the job's failure */
	struct wirebuf in, out;
};

struct fence_waiter {
	pmid_fence_done_f *done;
	void *arg;
};

struct dmodex_req {
	int id;
	pmid_fence_done_f *done;
	void *arg;
	struct dmodex_req *next;
};

struct pmid {
	const struct pmid_args *a;
	int first;                 /* this node's first rank */
	int nlocal;
	int size;
	struct rank *ranks;
	struct pmiwire *wire;
	json_t *kvs;               /* the job's KVS, as of the last fence */
	json_t *pending;           /* this node's puts since the last fence */
	json_t *nodeattr;
	int in_fence;              /* local ranks waiting in the PMI fence */
	/* fences: the PMI one and PMIx's, each one at a time */
	int pmi_seq;
	struct fence_waiter pmix_fence;
	int pmix_seq;
	long long fence_deadline;  /* monotonic ms; 0: no fence pending */
	/* root: contributions of the current fence per kind */
	json_t *contrib[2];        /* arrays indexed by node */
	int ncontrib[2];
	struct peer *peers;        /* root: one per other node; else [0] = root */
	int npeers;
	int listen_fd;             /* TCP, root: other servers; all: dmodex */
	struct gate *hellos;       /* root: sisters accepted, not yet introduced */
	int nintroduced;           /* root: sisters that said a good hello */
	int port_fd;               /* PMI_PORT listener */
	struct gate *port_gate;    /* PMI_PORT: accepted, no initack yet */
	int nrefused;              /* connections refused (the first is reported) */
	char port_addr[64];
	int sig_fd;
	int signalled;           /* a signal ended it (the launcher's doing) */
	int call_rd, call_wr;      /* pmid_call's pipe */
	struct pmid_pmix *pmix;
	struct dmodex_req *dreqs;
	int next_dreq;
	int failed;
	int status;                /* exit status so far */
	int nexited;
	int root_gone;
	long long wait_deadline;   /* root: sisters must connect, or hear of a failure, by then */
	int fail_timeout;          /* the failure was a fence timeout */
	int welcomed;              /* sister: the root accepted this server */
	const char *hwloc_xml;     /* the ranks' HWLOC_XMLFILE, or NULL (hwloc_xml_pick) */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int is_root(const struct pmid *d)
{
	return d->a->node == 0;
}

static int pmid_node_of(const struct pmid *d, int rank)
{
	int base = 0;

	for (int i = 0; i < d->a->nnodes; i++) {
		if (rank < base + d->a->ranks[i])
			return i;
		base += d->a->ranks[i];
	}
	return -1;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "qpool-pmi: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static struct rank *rank_local(struct pmid *d, int rank)
{
	if (rank < d->first || rank >= d->first + d->nlocal)
		return NULL;
	return &d->ranks[rank - d->first];
}

/* --- peers ---------------------------------------------------------- */

static void peer_send(struct peer *p, json_t *msg)
{
	if (p->fd >= 0 && wire_queue(&p->out, msg) == 0)
		wire_flush(p->fd, &p->out);
	json_decref(msg);
}

static struct peer *peer_of_node(struct pmid *d, int node)
{
	for (int i = 0; i < d->npeers; i++)
		if (d->peers[i].node == node && d->peers[i].fd >= 0)
			return &d->peers[i];
	return NULL;
}

/* To the root (from a sister) or to every sister (from the root). */
static void to_root(struct pmid *d, json_t *msg);
static void broadcast(struct pmid *d, json_t *msg)
{
	const char *op = wire_str(msg, "op");
	int fail = op && strcmp(op, "fail") == 0;

	for (int i = 0; i < d->npeers; i++) {
		if (d->peers[i].fd < 0 || d->peers[i].node < 0)
			continue;   /* one not yet introduced hears of a failure at its hello */
		peer_send(&d->peers[i], json_incref(msg));
		if (fail)
			d->peers[i].told = 1;
	}
	json_decref(msg);
}

static void kill_ranks(struct pmid *d)
{
	for (int i = 0; i < d->nlocal; i++)
		if (d->ranks[i].pid > 0 && !d->ranks[i].exited)
			kill(-d->ranks[i].pid, SIGKILL);
}

static void fail_local(struct pmid *d, int status)
{
	if (d->failed)
		return;
	d->failed = 1;
	d->status = status;
	d->wait_deadline = now_ms() + d->a->timeout * 1000LL;
	kill_ranks(d);
}

static __attribute__((format(printf, 3, 4))) void pmid_fail(struct pmid *d, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (d->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say("%s", msg);
	fail_local(d, status);
	if (is_root(d))
		broadcast(d, json_pack("{s:s, s:i}", "op", "fail", "status", status));
	else
		to_root(d, json_pack("{s:s, s:i}", "op", "fail", "status", status));
}

static void to_root(struct pmid *d, json_t *msg)
{
	if (d->npeers > 0 && d->peers[0].fd >= 0)
		peer_send(&d->peers[0], msg);
	else
		json_decref(msg);
}

/* --- fences ---------------------------------------------------------- */

enum { KIND_PMI = 0, KIND_PMIX = 1 };

static char *hex_encode(const char *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char *s = malloc(len * 2 + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		s[2 * i] = digits[(unsigned char)data[i] >> 4];
		s[2 * i + 1] = digits[(unsigned char)data[i] & 15];
	}
	s[len * 2] = '\0';
	return s;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Appends the decoded hex to *buf; -EINVAL on bad hex. */
static int hex_append(const char *s, char **buf, size_t *len)
{
	size_t n = strlen(s);
	char *b;

	if (n % 2)
		return -EINVAL;
	b = realloc(*buf, *len + n / 2 + 1);
	if (!b)
		return -ENOMEM;
	*buf = b;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hexval(s[i]), lo = hexval(s[i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		b[(*len)++] = (char)(hi << 4 | lo);
	}
	return 0;
}

/* The fence is complete everywhere: kvs merged (PMI) or blobs joined. */
static void fence_complete(struct pmid *d, int kind, json_t *kvs, json_t *blobs)
{
	d->fence_deadline = 0;
	if (kind == KIND_PMI) {
		json_object_update(d->kvs, kvs);
		json_object_clear(d->pending);
		d->in_fence = 0;
		d->pmi_seq++;
		pmiwire_fence_done(d->wire);
		return;
	}
	{
		struct fence_waiter w = d->pmix_fence;
		char *buf = NULL;
		size_t len = 0, i;
		json_t *v;
		int bad = 0;

		d->pmix_fence.done = NULL;
		d->pmix_seq++;
		json_array_foreach(blobs, i, v)
			if (!json_is_string(v) || hex_append(json_string_value(v), &buf, &len) < 0)
				bad = 1;
		if (w.done)
			w.done(d, w.arg, bad ? NULL : (buf ? buf : ""), bad ? 0 : len);
		free(buf);
	}
}

/* Root: one node's contribution in. */
static void root_contrib(struct pmid *d, int kind, int node, json_t *kvs, const char *blob)
{
	json_t *arr = d->contrib[kind];

	if (!arr)
		arr = d->contrib[kind] = json_array();
	while ((int)json_array_size(arr) < d->a->nnodes)
		json_array_append_new(arr, json_null());
	if (!json_is_null(json_array_get(arr, (size_t)node))) {
		pmid_fail(d, 1, "node %d contributed twice to one fence", node);
		return;
	}
	if (kind == KIND_PMI && kvs)
		json_array_set(arr, (size_t)node, kvs);
	else if (kind == KIND_PMI)
		json_array_set_new(arr, (size_t)node, json_object());
	else
		json_array_set_new(arr, (size_t)node, json_string(blob ? blob : ""));
	if (++d->ncontrib[kind] < d->a->nnodes)
		return;
	{
		json_t *merged = json_object(), *done, *v;
		size_t i;

		if (kind == KIND_PMI) {
			json_array_foreach(arr, i, v) {
				json_object_update(merged, v);
			}
		}
		done = json_pack("{s:s, s:i, s:O, s:o}", "op", "fence.done", "kind", kind,
				 "kvs", merged, "blobs", kind == KIND_PMIX ? json_incref(arr) : json_array());
		broadcast(d, json_incref(done));
		d->contrib[kind] = NULL;
		d->ncontrib[kind] = 0;
		fence_complete(d, kind, merged, kind == KIND_PMIX ? arr : NULL);
		json_decref(done);
		json_decref(merged);
		json_decref(arr);
	}
}

static void contribute(struct pmid *d, int kind, json_t *kvs, const char *blob)
{
	if (!d->fence_deadline)
		d->fence_deadline = now_ms() + d->a->timeout * 1000LL;
	if (is_root(d)) {
		root_contrib(d, kind, 0, kvs, blob);
		return;
	}
	if (d->root_gone) {
		pmid_fail(d, 1, "node %d: lost the root server before a fence", d->a->node);
		return;
	}
	to_root(d, json_pack("{s:s, s:i, s:i, s:o, s:s}", "op", "fence", "kind", kind,
			     "node", d->a->node, "kvs", kvs ? json_incref(kvs) : json_object(),
			     "blob", blob ? blob : ""));
}

static int pmid_fence_blob(struct pmid *d, const char *blob, size_t len, pmid_fence_done_f *done, void *arg)
{
	char *hex;

	if (d->pmix_fence.done)
		return -EBUSY;
	hex = hex_encode(blob, len);
	if (!hex)
		return -ENOMEM;
	d->pmix_fence.done = done;
	d->pmix_fence.arg = arg;
	contribute(d, KIND_PMIX, NULL, hex);
	free(hex);
	return 0;
}

/* --- direct modex ---------------------------------------------------- */

struct dmodex_reply_ctx {
	int from_node;
	int id;
};

static void dmodex_answer(struct pmid *d, void *arg, const char *blob, size_t len)
{
	struct dmodex_reply_ctx *c = arg;
	struct peer *p = peer_of_node(d, c->from_node);
	char *hex = blob ? hex_encode(blob, len) : NULL;
	json_t *msg = json_pack("{s:s, s:i, s:i, s:s?}", "op", "dmodex.reply", "id", c->id,
				"to", c->from_node, "data", hex);

	if (p)
		peer_send(p, msg);
	else
		to_root(d, msg);   /* a sister's reply to a sister goes through the root */
	free(hex);
	free(c);
}

static int pmid_dmodex(struct pmid *d, int rank, pmid_fence_done_f *done, void *arg)
{
	struct dmodex_req *r;
	int node = pmid_node_of(d, rank);
	json_t *msg;

	if (node < 0 || node == d->a->node)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->id = ++d->next_dreq;
	r->done = done;
	r->arg = arg;
	r->next = d->dreqs;
	d->dreqs = r;
	msg = json_pack("{s:s, s:i, s:i, s:i}", "op", "dmodex", "id", r->id, "rank", rank,
			"from", d->a->node);
	if (is_root(d)) {
		struct peer *p = peer_of_node(d, node);

		if (p)
			peer_send(p, msg);
		else
			json_decref(msg);
	} else {
		json_object_set_new(msg, "to", json_integer(node));
		to_root(d, msg);
	}
	return 0;
}

static void dmodex_in(struct pmid *d, json_t *msg)
{
	int rank = (int)wire_int(msg, "rank", -1);
	struct dmodex_reply_ctx *c;

	if (!d->pmix || !rank_local(d, rank))
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->from_node = (int)wire_int(msg, "from", -1);
	c->id = (int)wire_int(msg, "id", -1);
	if (pmid_pmix_dmodex_local(d->pmix, rank, dmodex_answer, c) < 0)
		dmodex_answer(d, c, NULL, 0);
}

static void dmodex_reply_in(struct pmid *d, json_t *msg)
{
	int id = (int)wire_int(msg, "id", -1);
	const char *hex = wire_str(msg, "data");

	for (struct dmodex_req **pp = &d->dreqs; *pp; pp = &(*pp)->next) {
		struct dmodex_req *r = *pp;
		char *buf = NULL;
		size_t len = 0;

		if (r->id != id)
			continue;
		*pp = r->next;
		if (hex && hex_append(hex, &buf, &len) == 0)
			r->done(d, r->arg, buf ? buf : "", len);
		else
			r->done(d, r->arg, NULL, 0);
		free(buf);
		free(r);
		return;
	}
}

/* Names this node's ranks that are not in the current fence. */
static int missing_ranks(struct pmid *d, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < d->nlocal && off < len - 16; i++) {
		enum pmiwire_state st = pmiwire_client_state(d->wire, i);

		if (d->ranks[i].exited || st == PMIWIRE_FENCE || st == PMIWIRE_FINALIZED)
			continue;
		/* a PMIx rank: libpmix enters the fence for all of this node's
		 * ranks at once; a rank that never connected is the one missing */
		if (pmiwire_client_version(d->wire, i) == 0 && d->pmix &&
		    (d->pmix_fence.done || d->ranks[i].pmix_up))
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? "," : "", d->ranks[i].rank);
	}
	return off > 0;
}

static void say_missing(struct pmid *d)
{
	char missing[256];

	if (missing_ranks(d, missing, sizeof(missing)))
		say("fence timed out after %d s: rank(s) %s never reached it", d->a->timeout, missing);
}

/* A connection turned away. Reported once: each line would land in the
 * job's output, and a stranger can open connections without end. */
static __attribute__((format(printf, 2, 3))) void pmid_refused(struct pmid *d, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (d->nrefused++ > 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say("%s (further refusals are not reported)", msg);
}

/* --- messages between servers ----------------------------------------- */

static void peer_message(struct pmid *d, struct peer *p, json_t *msg)
{
	const char *op = wire_str(msg, "op");
	int to;

	/* the root's peers are introduced (hello_readable): a sister's
	 * messages come from the root only */
	if (!op || p->node < 0)
		return;
	if (strcmp(op, "welcome") == 0 && !is_root(d)) {
		d->welcomed = 1;
	} else if (strcmp(op, "fence") == 0 && is_root(d) && p->node > 0) {
		int kind = (int)wire_int(msg, "kind", 0) ? KIND_PMIX : KIND_PMI;
		json_t *kvs = json_object_get(msg, "kvs");

		if (!json_is_object(kvs))
			kvs = NULL;
		if (!d->fence_deadline)
			d->fence_deadline = now_ms() + d->a->timeout * 1000LL;
		root_contrib(d, kind, p->node, kvs, wire_str(msg, "blob"));
	} else if (strcmp(op, "fence.done") == 0 && !is_root(d)) {
		int kind = (int)wire_int(msg, "kind", 0) ? KIND_PMIX : KIND_PMI;
		json_t *kvs = json_object_get(msg, "kvs"), *blobs = json_object_get(msg, "blobs");

		if (!json_is_object(kvs) || !json_is_array(blobs))
			return;
		fence_complete(d, kind, kvs, blobs);
	} else if (strcmp(op, "fail") == 0) {
		int status = (int)wire_int(msg, "status", 1);

		if (is_root(d))
			broadcast(d, json_incref(msg));
		/* the root timed out waiting for this node: say which ranks */
		if (wire_bool(msg, "timeout", 0) && !d->failed)
			say_missing(d);
		fail_local(d, status);
	} else if (strcmp(op, "done") == 0 && is_root(d)) {
		p->done = 1;
	} else if (strcmp(op, "dmodex") == 0 || strcmp(op, "dmodex.reply") == 0) {
		/* The root passes on what is for another node. */
		to = (int)wire_int(msg, "to", d->a->node);
		if (is_root(d) && to != 0) {
			struct peer *t = peer_of_node(d, to);

			if (t)
				peer_send(t, json_incref(msg));
		} else if (strcmp(op, "dmodex") == 0) {
			dmodex_in(d, msg);
		} else {
			dmodex_reply_in(d, msg);
		}
	}
}

static void peer_frames(struct pmid *d, struct peer *p, ssize_t n)
{
	struct error err;
	json_t *msg;
	int rc = 0;

	while (n > 0 && (rc = wire_next(&p->in, &msg, &err)) > 0) {
		peer_message(d, p, msg);
		json_decref(msg);
		if (p->fd < 0)
			return;
	}
	if (n > 0 && rc == 0)
		return;
	close(p->fd);
	p->fd = -1;
	if (is_root(d)) {
		if (!p->done && p->node > 0 && !d->failed)
			pmid_fail(d, 1, "lost the server of node %d", p->node);
	} else {
		d->root_gone = 1;
		if (!d->welcomed && !d->failed)
			pmid_fail(d, 1, "node %d: the root server refused this one (a wrong token?)", d->a->node);
		else if (d->fence_deadline && !d->failed)
			pmid_fail(d, 1, "node %d: lost the root server during a fence", d->a->node);
	}
}

static void peer_readable(struct pmid *d, struct peer *p)
{
	ssize_t n = wire_read(p->fd, &p->in);

	if (n != -EAGAIN)
		peer_frames(d, p, n);
}

/* Root: a connection's first frame must be a hello with the job's secret
 * and a node not yet introduced; only then is it that node's peer and is
 * anything it says obeyed. Anything else, or nothing within
 * FIRST_MESSAGE_MS, and it is closed. */
static void hello_readable(struct pmid *d, int i)
{
	struct gate_conn *c = gate_at(d->hellos, i);
	struct error err;
	json_t *msg = NULL;
	ssize_t n = wire_read(c->fd, &c->in);
	int node = -1, one = 1, rc;
	struct peer *p;

	if (n == -EAGAIN)
		return;
	if (n <= 0) {
		gate_remove(d->hellos, i, 0, NULL);
		return;
	}
	if (wire_announced(&c->in) > HELLO_MAX) {
		pmid_refused(d, "refused a connection to the root server: its first frame is not a hello");
		gate_remove(d->hellos, i, 0, NULL);
		return;
	}
	rc = wire_next(&c->in, &msg, &err);
	if (rc == 0)
		return;   /* more to come, before the deadline */
	if (rc > 0 && wire_str(msg, "op") && strcmp(wire_str(msg, "op"), "hello") == 0)
		node = (int)wire_int(msg, "node", -1);
	if (rc < 0 || node < 1 || node >= d->a->nnodes || d->peers[node - 1].node >= 0 ||
	    !pmiwire_token_ok(getenv("QPOOL_PMI_TOKEN"), wire_str(msg, "token"))) {
		pmid_refused(d, "refused a server that says it is node %d (not a hello, unknown, twice, or a wrong token)",
			node);
		json_decref(msg);
		gate_remove(d->hellos, i, 0, NULL);
		return;
	}
	json_decref(msg);
	p = &d->peers[node - 1];
	p->fd = c->fd;
	p->node = node;
	gate_remove(d->hellos, i, 1, &p->in);   /* what followed the hello stays p's */
	setsockopt(p->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (++d->nintroduced == d->a->nnodes - 1) {
		/* every node is here and none may come twice: the door
		 * would only be open to others */
		close(d->listen_fd);
		d->listen_fd = -1;
		gate_destroy(d->hellos);
		d->hellos = NULL;
	}
	peer_send(p, json_pack("{s:s}", "op", "welcome"));
	if (d->failed) {
		peer_send(p, json_pack("{s:s, s:i, s:b}", "op", "fail", "status", d->status,
				       "timeout", d->fail_timeout));
		p->told = 1;
	}
	peer_frames(d, p, 1);
}

/* --- PMI ops ---------------------------------------------------------- */

static int op_send(void *arg, int client, const char *data, size_t len)
{
	struct pmid *d = arg;
	int fd = d->ranks[client].fd;

	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int op_claim(void *arg, int client, int rank)
{
	struct pmid *d = arg;

	/* a PMI_PORT connection says which rank it is: one of ours, and the
	 * one whose slot it took (the slot is the rank's, see port_accept) */
	return d->ranks[client].rank == rank ? 0 : -EPERM;
}

static void op_fence(void *arg, int client)
{
	struct pmid *d = arg;

	if (!d->fence_deadline)
		d->fence_deadline = now_ms() + d->a->timeout * 1000LL;
	if (++d->in_fence == d->nlocal)
		contribute(d, KIND_PMI, d->pending, NULL);
}

static int op_put(void *arg, int client, const char *key, const char *value)
{
	struct pmid *d = arg;

	return json_object_set_new(d->pending, key, json_string(value)) ? -ENOMEM : 0;
}

static const char *op_get(void *arg, int client, const char *key)
{
	struct pmid *d = arg;
	const char *v = json_string_value(json_object_get(d->kvs, key));

	return v ? v : json_string_value(json_object_get(d->pending, key));
}

static int op_nput(void *arg, int client, const char *key, const char *value)
{
	struct pmid *d = arg;

	return json_object_set_new(d->nodeattr, key, json_string(value)) ? -ENOMEM : 0;
}

static const char *op_nget(void *arg, int client, const char *key)
{
	return json_string_value(json_object_get(((struct pmid *)arg)->nodeattr, key));
}

static void op_abort(void *arg, int client, int code, const char *msg)
{
	struct pmid *d = arg;

	/* an exit status is a byte: MPICH's error codes are not */
	pmid_fail(d, code > 0 && code < 256 ? code : 1, "rank %d aborted the job (code %d)%s%s",
		  d->ranks[client].rank,
		  code, msg ? ": " : "", msg ? msg : "");
}

static const struct pmiwire_ops pmi_ops = {
	.send = op_send, .claim = op_claim, .fence = op_fence, .put = op_put, .get = op_get,
	.nodeattr_put = op_nput, .nodeattr_get = op_nget, .abort = op_abort,
};

static void client_readable(struct pmid *d, int i)
{
	struct rank *r = &d->ranks[i];
	char buf[4096];
	struct error err = { "" };
	ssize_t n = recv(r->fd, buf, sizeof(buf), 0);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0 && pmiwire_feed(d->wire, i, buf, (size_t)n, &err) == 0)
		return;
	if (n > 0)
		say("rank %d: %s", r->rank, err.text[0] ? err.text : "cannot answer");
	pmiwire_client_remove(d->wire, i);
	close(r->fd);
	r->fd = -1;
}

/* PMI_PORT (loopback TCP): a connection must come from the job's owner
 * (the kernel says who owns its other end) and say first, within
 * FIRST_MESSAGE_MS, "cmd=initack pmiid=R" for one of this node's ranks
 * that never had a connection (pmiwire takes a rank's id once). Until
 * then it waits in port_gate and the loop goes on. */
static void port_accept(struct pmid *d)
{
	for (int k = 0; k < ACCEPT_BATCH; k++) {
		int fd = accept4(d->port_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), rc;
		uid_t uid = (uid_t)-1;

		if (fd < 0)
			return;
		rc = gate_peer_uid(fd, &uid);
		if (rc < 0 || uid != geteuid()) {
			if (rc < 0)
				pmid_refused(d, "PMI_PORT: refused a connection whose owner is unknown: %s",
					strerror(-rc));
			else
				pmid_refused(d, "PMI_PORT: refused a connection of uid %u, not the job's owner",
					(unsigned)uid);
			close(fd);
			continue;
		}
		gate_add(d->port_gate, fd, now_ms());
	}
}

static void port_readable(struct pmid *d, int i)
{
	struct gate_conn *c = gate_at(d->port_gate, i);
	struct error err = { "" };
	struct wirebuf in;
	struct rank *r;
	ssize_t n = wire_read(c->fd, &c->in);
	int id = -1, rc, fd = c->fd;

	if (n == -EAGAIN)
		return;
	rc = n > 0 ? pmiwire_initack_parse(c->in.data, c->in.len, &id) : -EPROTO;
	if (rc == 0)
		return;   /* the rest of the line, before the deadline */
	r = rc > 0 ? rank_local(d, id) : NULL;
	if (!r || r->fd >= 0 || pmiwire_rank_claimed(d->wire, id)) {
		if (rc > 0) {
			char no[64];
			int l = snprintf(no, sizeof(no), "cmd=initack rc=-1 msg=pmiid_%d_refused\n", id);

			(void)!send(fd, no, (size_t)l, MSG_NOSIGNAL | MSG_DONTWAIT);
			pmid_refused(d, "PMI_PORT: refused a connection that says it is rank %d (not this node's, "
				"or its id was taken)", id);
		} else if (n > 0) {
			pmid_refused(d, "PMI_PORT: refused a connection whose first line is not an initack");
		}
		gate_remove(d->port_gate, i, 0, NULL);
		return;
	}
	gate_remove(d->port_gate, i, 1, &in);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);   /* as PMI_FD's: op_send writes whole */
	r->fd = fd;
	pmiwire_client_add(d->wire, id - d->first, -1);
	if (pmiwire_feed(d->wire, id - d->first, in.data, in.len, &err) < 0) {
		say("rank %d: %s", id, err.text[0] ? err.text : "cannot answer");
		pmiwire_client_remove(d->wire, id - d->first);
		close(r->fd);
		r->fd = -1;
	}
	wirebuf_free(&in);
}

/* --- ranks ------------------------------------------------------------ */

/* --label: each whole line a rank prints goes out as "RANK: line", on the
 * stream it was printed on; a line longer than LABEL_LINE_MAX goes out in
 * pieces, each labelled; a last line without its newline gets one. */
#define LABEL_LINE_MAX 65536

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;   /* the reader is gone: the lines are dropped */
		p += w;
		n -= (size_t)w;
	}
}

static void label_emit(int fd, int rank, const char *p, size_t n)
{
	char pre[24];
	int l = snprintf(pre, sizeof(pre), "%d: ", rank);
	char *b = malloc((size_t)l + n + 1);

	if (!b)
		return;
	memcpy(b, pre, (size_t)l);
	memcpy(b + l, p, n);
	b[(size_t)l + n] = '\n';
	write_all(fd, b, (size_t)l + n + 1);   /* one write: lines of ranks do not mix */
	free(b);
}

/* Reads what there is on rank i's stream s; at EOF flushes and closes. */
static void label_read(struct pmid *d, int i, int s)
{
	struct rank *r = &d->ranks[i];
	struct linebuf *lb = &r->line[s];
	char buf[8192];
	ssize_t n = read(r->out[s], buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0) {
		char *nb = realloc(lb->buf, lb->len + (size_t)n);
		size_t start = 0;

		if (!nb)
			return;
		lb->buf = nb;
		memcpy(lb->buf + lb->len, buf, (size_t)n);
		lb->len += (size_t)n;
		for (size_t k = 0; k < lb->len; k++)
			if (lb->buf[k] == '\n' || k - start + 1 >= LABEL_LINE_MAX) {
				label_emit(s + 1, r->rank, lb->buf + start, k - start + (lb->buf[k] != '\n'));
				start = k + 1;
			}
		memmove(lb->buf, lb->buf + start, lb->len - start);
		lb->len -= start;
		return;
	}
	if (lb->len)
		label_emit(s + 1, r->rank, lb->buf, lb->len);
	free(lb->buf);
	lb->buf = NULL;
	lb->len = 0;
	close(r->out[s]);
	r->out[s] = -1;
}

/* After the ranks: what they left in their pipes, at most a second. */
static void label_drain(struct pmid *d)
{
	long long until = now_ms() + 1000;

	for (int i = 0; i < d->nlocal; i++)
		for (int s = 0; s < 2; s++)
			while (d->ranks[i].out[s] >= 0) {
				struct pollfd p = { .fd = d->ranks[i].out[s], .events = POLLIN };
				long long left = until - now_ms();

				if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
					struct linebuf *lb = &d->ranks[i].line[s];

					/* a writer outlived the rank: what is there goes out */
					if (lb->len)
						label_emit(s + 1, d->ranks[i].rank, lb->buf, lb->len);
					free(lb->buf);
					lb->buf = NULL;
					lb->len = 0;
					close(d->ranks[i].out[s]);
					d->ranks[i].out[s] = -1;
					break;
				}
				label_read(d, i, s);
			}
}

static int spawn_rank(struct pmid *d, int i, char *const *extra_env, size_t nextra)
{
	struct rank *r = &d->ranks[i];
	int sv[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	pid_t pid;

	if (d->a->label && (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)) {
		int e = errno;

		if (po[0] >= 0)
			close(po[0]), close(po[1]);
		return -e;
	}
	if (d->a->pmi && !d->a->pmi_port_only && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		if (po[0] >= 0)
			close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return -e;
	}
	if (pid == 0) {
		char num[32];
		int null = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		/* --stdin: rank 0 reads what the server reads (srun's input,
		 * as Slurm's task 0 does); the others, nothing */
		if (null >= 0 && !(d->a->stdin_rank0 && r->rank == 0))
			dup2(null, 0);
		if (null >= 0)
			close(null);
		if (po[1] >= 0) {
			dup2(po[1], 1);
			dup2(pe[1], 2);
		}
		if (sv[1] >= 0) {
			int fd = dup(sv[1]);   /* a copy without close-on-exec */

			snprintf(num, sizeof(num), "%d", fd);
			setenv("PMI_FD", num, 1);
		}
		/* every rank knows its place, PMI or not */
		snprintf(num, sizeof(num), "%d", r->rank);
		setenv("QPOOL_RANK", num, 1);
		if (d->a->pmi) {
			setenv("PMI_RANK", num, 1);
			setenv("PMI_ID", num, 1);
		}
		snprintf(num, sizeof(num), "%d", i);
		setenv("QPOOL_LOCAL_RANK", num, 1);
		snprintf(num, sizeof(num), "%d", d->size);
		setenv("QPOOL_SIZE", num, 1);
		if (d->a->pmi) {
			setenv("PMI_SIZE", num, 1);
			if (d->port_fd >= 0)
				setenv("PMI_PORT", d->port_addr, 1);
			/* MPICH reads its node-local layout from these when
			 * they are there (hydra sets them) */
			snprintf(num, sizeof(num), "%d", d->nlocal);
			setenv("MPI_LOCALNRANKS", num, 1);
			snprintf(num, sizeof(num), "%d", i);
			setenv("MPI_LOCALRANKID", num, 1);
		}
		if (d->hwloc_xml) {
			/* hwloc in the rank (MPICH's, Open MPI's, any other)
			 * reads the node's topology instead of probing /sys
			 * and PCI; it is the machine itself (binding works)
			 * and the CPUs and memory the rank may use are found
			 * out as discovery would (docs/PMI.md) */
			setenv("HWLOC_XMLFILE", d->hwloc_xml, 1);
			setenv("HWLOC_THISSYSTEM", "1", 1);
			setenv("HWLOC_THISSYSTEM_ALLOWED_RESOURCES", "1", 1);
		}
		unsetenv("QPOOL_PMI_TOKEN");   /* the servers' secret, not the ranks' */
		for (size_t k = 0; k < nextra; k++)
			putenv(extra_env[k]);
		if (d->pmix) {
			/* Open MPI 4.1 takes its PMIx path only when one of its
			 * schizo components claims the launch; Flux's is the one
			 * whose claim means exactly "direct-launched by a PMIx
			 * server that binds for us" (docs/PMI.md). Its PMI-1
			 * component, which would look for Flux's libpmi, is left
			 * out. */
			setenv("FLUX_JOB_ID", d->a->kvsname, 0);
			setenv("OMPI_MCA_pmix", "^flux", 0);
		}
		signal(SIGPIPE, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(d->a->argv[0], d->a->argv);
		fprintf(stderr, "qpool-pmi: rank %d: %s: %s\n", r->rank, d->a->argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	r->pid = pid;
	if (po[0] >= 0) {
		close(po[1]);
		close(pe[1]);
		r->out[0] = po[0];
		r->out[1] = pe[0];
		fcntl(po[0], F_SETFL, O_NONBLOCK);
		fcntl(pe[0], F_SETFL, O_NONBLOCK);
	}
	if (sv[0] >= 0) {
		close(sv[1]);
		r->fd = sv[0];
		pmiwire_client_add(d->wire, i, r->rank);
	}
	return 0;
}

/* A rank that never spoke PMI nor connected to PMIx (under --mpi=none
 * there is no MPI_Init to speak of). */
static int before_init(struct pmid *d, int i)
{
	return (d->a->pmi || d->a->pmix) && pmiwire_client_version(d->wire, i) == 0 &&
	       pmiwire_client_state(d->wire, i) == PMIWIRE_NEW && !d->ranks[i].pmix_up;
}

static void reap(struct pmid *d)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (int i = 0; i < d->nlocal; i++) {
			struct rank *r = &d->ranks[i];

			if (r->pid != pid)
				continue;
			r->exited = 1;
			r->status = st;
			d->nexited++;
			kill(-pid, SIGKILL);   /* what the rank left in its group */
			if (d->failed)
				break;
			if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
				pmid_fail(d, WEXITSTATUS(st), "node %d: rank %d exited with status %d%s", d->a->node,
					  r->rank, WEXITSTATUS(st), before_init(d, i) ? " before MPI_Init" : "");
			else if (WIFSIGNALED(st))
				pmid_fail(d, 128 + WTERMSIG(st), "node %d: rank %d killed by signal %d%s", d->a->node,
					  r->rank, WTERMSIG(st), before_init(d, i) ? " before MPI_Init" : "");
			else if (pmiwire_client_state(d->wire, i) == PMIWIRE_FENCE ||
				 (pmiwire_client_version(d->wire, i) && d->in_fence > 0 &&
				  pmiwire_client_state(d->wire, i) != PMIWIRE_FINALIZED))
				pmid_fail(d, 1, "node %d: rank %d exited during a fence", d->a->node, r->rank);
			break;
		}
	}
}

/* --- setup ------------------------------------------------------------ */

static int split_addr(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon = strrchr(s, ':');

	if (!colon || colon == s || (size_t)(colon - s) >= hlen || strlen(colon + 1) >= plen)
		return -EINVAL;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	strcpy(port, colon + 1);
	return 0;
}

static int tcp_listen(const char *addr, int *ret)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *ai;
	char host[256], port[16];
	int fd, one = 1;

	if (split_addr(addr, host, sizeof(host), port, sizeof(port)) < 0)
		return -EINVAL;
	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -EADDRNOTAVAIL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		freeaddrinfo(ai);
		return -errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
		int e = errno;

		freeaddrinfo(ai);
		close(fd);
		return -e;
	}
	freeaddrinfo(ai);
	*ret = fd;
	return 0;
}

/* Connects to the root, retrying while it is not listening yet, until
 * the deadline. */
static int tcp_connect(const char *addr, time_t deadline, int *ret)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	char host[256], port[16];
	int fd, one = 1, e;

	if (split_addr(addr, host, sizeof(host), port, sizeof(port)) < 0)
		return -EINVAL;
	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -EADDRNOTAVAIL;
	for (int tries = 0;; tries++) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = -errno;
			break;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			fcntl(fd, F_SETFL, O_NONBLOCK);
			*ret = fd;
			e = 0;
			break;
		}
		e = -errno;
		close(fd);
		if (time(NULL) >= deadline || (e != -ECONNREFUSED && e != -ETIMEDOUT))
			break;
		/* 1, 2, 4 … 64 ms between tries */
		nanosleep(&(struct timespec){ .tv_nsec = (1L << (tries < 6 ? tries : 6)) * 1000000L }, NULL);
	}
	freeaddrinfo(ai);
	return e;
}

/* Root: a connection waits in hellos until its hello (hello_readable). */
static void root_accept(struct pmid *d)
{
	for (int k = 0; k < ACCEPT_BATCH && d->hellos; k++) {
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		gate_add(d->hellos, fd, now_ms());
	}
}

static void pmid_rank_connected(struct pmid *d, int rank)
{
	struct rank *r = rank_local(d, rank);

	if (r)
		r->pmix_up = 1;
}

/* A call from libpmix's thread to the main loop, written whole to a pipe. */
struct pmid_call_msg {
	pmid_call_f *fn;
	void *arg;
};

static int pmid_call(struct pmid *d, pmid_call_f *fn, void *arg)
{
	struct pmid_call_msg c = { fn, arg };

	return write(d->call_wr, &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : -EIO;
}

static void calls_run(struct pmid *d)
{
	struct pmid_call_msg c;

	while (read(d->call_rd, &c, sizeof(c)) == (ssize_t)sizeof(c))
		c.fn(d, c.arg);
}

static void fence_timeout(struct pmid *d)
{
	char missing[256];
	size_t off = 0;

	if (missing_ranks(d, missing, sizeof(missing))) {
		say("fence timed out after %d s: rank(s) %s never reached it", d->a->timeout, missing);
		fail_local(d, 124);
		if (is_root(d))
			d->fail_timeout = 1, broadcast(d, json_pack("{s:s, s:i, s:b}", "op", "fail", "status", 124,
								  "timeout", 1));
		else
			to_root(d, json_pack("{s:s, s:i}", "op", "fail", "status", 124));
		return;
	}
	if (!is_root(d))
		return;  /* all here are in: the root names the node that is not */
	for (int kind = 0; kind < 2; kind++)
		for (int n = 0; d->contrib[kind] && n < d->a->nnodes && off < sizeof(missing) - 16; n++)
			if (json_is_null(json_array_get(d->contrib[kind], (size_t)n)))
				off += (size_t)snprintf(missing + off, sizeof(missing) - off, "%s%d",
							off ? "," : "", n);
	say("fence timed out after %d s: node(s) %s never reached it", d->a->timeout, off ? missing : "?");
	fail_local(d, 124);
	d->fail_timeout = 1;
	broadcast(d, json_pack("{s:s, s:i, s:b}", "op", "fail", "status", 124, "timeout", 1));
}

static int setup(struct pmid *d, const struct pmid_args *a, struct error *err)
{
	struct pmiwire_job job = { .kvsname = a->kvsname };
	char mapping[1024];
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	sigset_t mask;
	int p[2], rc;

	d->a = a;
	d->listen_fd = d->port_fd = d->sig_fd = d->call_rd = d->call_wr = -1;
	for (int i = 0; i < a->nnodes; i++) {
		if (i < a->node)
			d->first += a->ranks[i];
		d->size += a->ranks[i];
	}
	d->nlocal = a->ranks[a->node];
	if (d->nlocal > MAX_LOCAL)
		return error_set(err, -EINVAL, "more than %d ranks on one node", MAX_LOCAL);
	if (pmiwire_process_mapping(a->ranks, a->nnodes, mapping, sizeof(mapping)) < 0)
		return error_set(err, -EINVAL, "cannot describe the ranks' placement");
	job.size = d->size;
	job.process_mapping = mapping;
	d->wire = pmiwire_create(&pmi_ops, d, &job, d->nlocal);
	d->kvs = json_object();
	d->pending = json_object();
	d->nodeattr = json_object();
	d->ranks = calloc((size_t)d->nlocal, sizeof(*d->ranks));
	if (!d->wire || !d->kvs || !d->pending || !d->nodeattr || !d->ranks)
		return error_set(err, -ENOMEM, "out of memory");
	for (int i = 0; i < d->nlocal; i++) {
		d->ranks[i].rank = d->first + i;
		d->ranks[i].fd = -1;
		d->ranks[i].out[0] = d->ranks[i].out[1] = -1;
	}
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return error_set(err, -errno, "pipe: %s", strerror(errno));
	d->call_rd = p[0];
	d->call_wr = p[1];
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	/* a peer gone is an EPIPE, not the end of the job's server (the
	 * ranks get the default back) */
	signal(SIGPIPE, SIG_IGN);
	if (d->sig_fd < 0)
		return error_set(err, -errno, "signalfd: %s", strerror(errno));
	/* PMI_PORT (--pmi-port): loopback, any port. Not otherwise: a rank
	 * with PMI_FD has its id taken by that connection, so a port would
	 * only be a door for others to knock at. */
	if (a->pmi && a->pmi_port_only) {
		d->port_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (d->port_fd < 0 || bind(d->port_fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
		    listen(d->port_fd, 128) < 0 || getsockname(d->port_fd, (struct sockaddr *)&sin, &slen) < 0)
			return error_set(err, -errno, "PMI_PORT listener: %s", strerror(errno));
		snprintf(d->port_addr, sizeof(d->port_addr), "127.0.0.1:%d", ntohs(sin.sin_port));
		d->port_gate = gate_create(FIRST_MESSAGE_MS);
		if (!d->port_gate)
			return error_set(err, -ENOMEM, "out of memory");
	}
	/* the servers' link */
	if (a->nnodes > 1) {
		d->npeers = is_root(d) ? a->nnodes - 1 : 1;
		d->peers = calloc((size_t)d->npeers, sizeof(*d->peers));
		if (!d->peers)
			return error_set(err, -ENOMEM, "out of memory");
		for (int i = 0; i < d->npeers; i++) {
			d->peers[i].fd = -1;
			d->peers[i].node = -1;
		}
		if (is_root(d)) {
			d->wait_deadline = now_ms() + a->timeout * 1000LL;
			d->hellos = gate_create(FIRST_MESSAGE_MS);
			if (!d->hellos)
				return error_set(err, -ENOMEM, "out of memory");
			if (a->listen_fd >= 0) {
				int on = 0;
				socklen_t olen = sizeof(on);

				/* the launcher bound it, so that it could tell the
				 * other nodes the port before this server started */
				if (getsockopt(a->listen_fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &olen) < 0 || !on)
					return error_set(err, -EINVAL, "--listen-fd %d: not a listening socket",
							 a->listen_fd);
				d->listen_fd = a->listen_fd;
				fcntl(d->listen_fd, F_SETFD, FD_CLOEXEC);
				fcntl(d->listen_fd, F_SETFL, O_NONBLOCK);
				rc = 0;
			} else {
				rc = tcp_listen(a->peers[0], &d->listen_fd);
			}
			if (rc < 0)
				return error_set(err, rc, "listen on %s: %s", a->peers[0], strerror(-rc));
			if (a->port_file) {
				/* what the sisters must be given, port 0 resolved;
				 * written aside and renamed, so that whoever sees the
				 * file sees the port in it */
				char host[256], port[16], tmp[4096];
				FILE *f;
				int e = -EIO;

				slen = sizeof(sin);
				split_addr(a->peers[0], host, sizeof(host), port, sizeof(port));
				if (snprintf(tmp, sizeof(tmp), "%s.tmp", a->port_file) >= (int)sizeof(tmp)) {
					e = -ENAMETOOLONG;
				} else if ((f = fopen(tmp, "we"))) {
					bool ok = getsockname(d->listen_fd, (struct sockaddr *)&sin, &slen) == 0 &&
						  fprintf(f, "%s:%d\n", host, ntohs(sin.sin_port)) > 0;

					if (fclose(f) == 0 && ok && rename(tmp, a->port_file) == 0)
						e = 0;
				}
				if (e < 0) {
					(void)unlink(tmp);
					return error_set(err, e, "--port-file %s: cannot write it", a->port_file);
				}
			}
		} else {
			char here[80], local[300], host[256], port[16];
			const char *root = a->peers[0];

			/* node 0 on every address of this namespace: loopback
			 * reaches it whatever its name resolves to, or not */
			if (a->root_netns && netns_id(here, sizeof(here)) == 0 && strcmp(here, a->root_netns) == 0 &&
			    split_addr(root, host, sizeof(host), port, sizeof(port)) == 0) {
				snprintf(local, sizeof(local), "127.0.0.1:%s", port);
				root = local;
			}
			rc = tcp_connect(root, time(NULL) + a->timeout, &d->peers[0].fd);
			if (rc < 0)
				return error_set(err, rc, "node %d: cannot reach the root server %s: %s", a->node,
						 a->peers[0], strerror(-rc));
			d->peers[0].node = 0;
			peer_send(&d->peers[0], json_pack("{s:s, s:i, s:s}", "op", "hello", "node", a->node,
							  "token", getenv("QPOOL_PMI_TOKEN") ? getenv("QPOOL_PMI_TOKEN") : ""));
		}
	}
	return 0;
}

static void teardown(struct pmid *d)
{
	pmid_pmix_destroy(d->pmix);
	for (int i = 0; d->ranks && i < d->nlocal; i++) {
		if (d->ranks[i].fd >= 0)
			close(d->ranks[i].fd);
		for (int s = 0; s < 2; s++) {
			if (d->ranks[i].out[s] >= 0)
				close(d->ranks[i].out[s]);
			free(d->ranks[i].line[s].buf);
		}
	}
	for (int i = 0; i < d->npeers; i++) {
		if (d->peers[i].fd >= 0)
			close(d->peers[i].fd);
		wirebuf_free(&d->peers[i].in);
		wirebuf_free(&d->peers[i].out);
	}
	while (d->dreqs) {
		struct dmodex_req *r = d->dreqs;

		d->dreqs = r->next;
		free(r);
	}
	free(d->peers);
	free(d->ranks);
	pmiwire_destroy(d->wire);
	json_decref(d->kvs);
	json_decref(d->pending);
	json_decref(d->nodeattr);
	json_decref(d->contrib[0]);
	json_decref(d->contrib[1]);
	if (d->listen_fd >= 0)
		close(d->listen_fd);
	if (d->port_fd >= 0)
		close(d->port_fd);
	gate_destroy(d->hellos);
	gate_destroy(d->port_gate);
	if (d->sig_fd >= 0)
		close(d->sig_fd);
	if (d->call_rd >= 0)
		close(d->call_rd);
	if (d->call_wr >= 0)
		close(d->call_wr);
}

/* The root stays while a sister still has ranks: it routes their fences
 * and direct-modex requests. After a failure it stays until every sister
 * has heard of it (one that connects late is told at its hello) and
 * ended, at most the timeout: the launcher ends what is left once the
 * root is gone, and a sister still reading "fence timed out" has yet to
 * name its ranks that never reached it. Ended by a signal, it waits for
 * none: the launcher sent it to every node. */
static int sisters_running(struct pmid *d)
{
	int settled = 0;

	if (!is_root(d))
		return 0;
	for (int i = 0; i < d->npeers; i++) {
		const struct peer *p = &d->peers[i];

		if (p->node > 0 && (p->done || (p->fd < 0 && (!d->failed || p->told)) ||
				    (d->failed && p->told && d->signalled)))
			settled++;
		/* ended by a signal: the launcher ends every node's server
		 * (qexec: the first to fail, a sister that never reached
		 * here among them), so none is left to wait for */
		else if (p->node < 0 && d->signalled)
			settled++;
	}
	if (settled == d->a->nnodes - 1)
		return 0;
	if (d->wait_deadline && now_ms() >= d->wait_deadline) {
		int known = 0;

		if (d->failed)
			return 0;
		for (int i = 0; i < d->npeers; i++)
			known += d->peers[i].node > 0;
		if (known < d->a->nnodes - 1) {
			pmid_fail(d, 1, "%d node(s) never connected within %d s", d->a->nnodes - 1 - known,
				  d->a->timeout);
			return 1;
		}
		d->wait_deadline = 0;   /* all here: wait for their ranks as long as they run */
	}
	return 1;
}

/* Removes the PMIx directory and what libpmix or the topology left in
 * it (one level of files, a second of libpmix's dstor directories). */
static void tmpdir_remove(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;

	while (dp && (e = readdir(dp))) {
		char path[4400];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			tmpdir_remove(path);
		else
			unlink(path);
	}
	if (dp)
		closedir(dp);
	rmdir(dir);
}

/* The node's topology file for the ranks' hwloc, when qexec asked for it
 * (the default), the ranks speak PMI or PMIx, the job has one
 * (QPOOL_HWLOC_XML, written by qnoded) and the user has not chosen how
 * hwloc finds the topology; NULL: the ranks discover it. */
static const char *hwloc_xml_pick(const struct pmid_args *a)
{
	const char *x = getenv("QPOOL_HWLOC_XML");

	if (!a->hwloc_xml || !(a->pmi || a->pmix) || !x || x[0] != '/' || access(x, R_OK) < 0)
		return NULL;
	if (getenv("HWLOC_XMLFILE") || getenv("HWLOC_COMPONENTS") || getenv("HWLOC_SYNTHETIC") ||
	    getenv("HWLOC_FSROOT") || getenv("HWLOC_CPUID_PATH"))
		return NULL;
	return x;
}

static const struct pmid_pmix_host pmix_host = {
	.call = pmid_call,
	.fence_blob = pmid_fence_blob,
	.dmodex = pmid_dmodex,
	.fail = pmid_fail,
	.refused = pmid_refused,
	.rank_connected = pmid_rank_connected,
};

int pmid_run(const struct pmid_args *a)
{
	struct pmid d = { 0 };
	struct error err = { "" };
	struct pollfd *pfd = NULL;
	char pmix_tmp[4096] = "";
	int rc;

	rc = setup(&d, a, &err);
	if (rc < 0) {
		say("%s", err.text);
		d.status = 1;
		goto done;
	}
	if (a->pmix) {
		/* libpmix's rendezvous and the node's topology: under the job's
		 * own TMPDIR when it has one, removed at the end */
		const char *t = getenv("TMPDIR");

		snprintf(pmix_tmp, sizeof(pmix_tmp), "%s/qpool-pmix.XXXXXX", t && t[0] == '/' ? t : "/tmp");
		if (!mkdtemp(pmix_tmp)) {
			say("PMIx: %s: %s", pmix_tmp, strerror(errno));
			pmix_tmp[0] = '\0';
			d.status = 1;
			goto done;
		}
		if (pmid_pmix_create(&d, &pmix_host, a, pmix_tmp, &d.pmix, &err) < 0) {
			say("PMIx: %s", err.text[0] ? err.text : strerror(errno));
			d.status = 1;
			goto done;
		}
	}
	d.hwloc_xml = hwloc_xml_pick(a);
	for (int i = 0; i < d.nlocal; i++) {
		char **env = NULL;
		size_t nenv = 0;

		if (d.pmix && pmid_pmix_rank_env(d.pmix, d.ranks[i].rank, &env, &nenv) < 0) {
			pmid_fail(&d, 1, "PMIx: cannot set up rank %d", d.ranks[i].rank);
			break;
		}
		rc = spawn_rank(&d, i, env, nenv);
		/* putenv in the child kept the strings; the parent frees its copy */
		for (size_t k = 0; k < nenv; k++)
			free(env[k]);
		free(env);
		if (rc < 0) {
			pmid_fail(&d, 1, "rank %d: cannot start: %s", d.ranks[i].rank, strerror(-rc));
			break;
		}
	}
	pfd = calloc((size_t)(3 * d.nlocal + d.npeers + 4 + 2 * GATE_MAX), sizeof(*pfd));
	if (!pfd) {
		fail_local(&d, 1);
		goto done;
	}
	/* a sister stays until the root has accepted it: its ranks' success
	 * means nothing to a job whose root never heard of this node */
	while (d.nexited < d.nlocal || sisters_running(&d) ||
	       (!is_root(&d) && d.npeers && !d.welcomed && !d.failed && d.peers[0].fd >= 0)) {
		int n = 0, timeout = -1, nhello = gate_count(d.hellos), nport = gate_count(d.port_gate), g;

		pfd[n++] = (struct pollfd){ .fd = d.sig_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = d.call_rd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = d.port_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = d.listen_fd, .events = POLLIN };
		for (int i = 0; i < d.nlocal; i++)
			pfd[n++] = (struct pollfd){ .fd = d.ranks[i].fd, .events = POLLIN };
		for (int i = 0; i < d.npeers; i++)
			pfd[n++] = (struct pollfd){ .fd = d.peers[i].fd,
				.events = POLLIN | (d.peers[i].out.len > d.peers[i].out.off ? POLLOUT : 0) };
		for (int i = 0; i < d.nlocal; i++)
			for (int s = 0; s < 2; s++)
				pfd[n++] = (struct pollfd){ .fd = d.ranks[i].out[s], .events = POLLIN };
		g = n;   /* the doors: each connection's first message, read here */
		for (int i = 0; i < nhello; i++)
			pfd[n++] = (struct pollfd){ .fd = gate_at(d.hellos, i)->fd, .events = POLLIN };
		for (int i = 0; i < nport; i++)
			pfd[n++] = (struct pollfd){ .fd = gate_at(d.port_gate, i)->fd, .events = POLLIN };
		if (d.fence_deadline && !d.failed) {
			long long now = now_ms();

			timeout = d.fence_deadline > now ? (int)(d.fence_deadline - now) : 0;
		}
		if (d.wait_deadline && d.nexited == d.nlocal) {
			long long now = now_ms();
			int w = d.wait_deadline > now ? (int)(d.wait_deadline - now) : 0;

			timeout = timeout < 0 || w < timeout ? w : timeout;
		}
		for (int k = 0; k < 2; k++) {
			int w = gate_timeout(k ? d.port_gate : d.hellos, now_ms());

			if (w >= 0 && (timeout < 0 || w < timeout))
				timeout = w;
		}
		rc = poll(pfd, (nfds_t)n, timeout);
		if (rc < 0 && errno != EINTR)
			break;
		/* the doors first: an entry read or dropped here moves the
		 * ones after it, so walk them from the last */
		for (int i = nport - 1; i >= 0; i--)
			if (pfd[g + nhello + i].revents)
				port_readable(&d, i);
		for (int i = nhello - 1; i >= 0 && d.hellos; i--)   /* gone once all are here */
			if (pfd[g + i].revents)
				hello_readable(&d, i);
		gate_expire(d.hellos, now_ms());
		gate_expire(d.port_gate, now_ms());
		if (rc == 0 && d.fence_deadline && now_ms() >= d.fence_deadline && !d.failed) {
			fence_timeout(&d);
			d.fence_deadline = 0;
			continue;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si;

			while (read(d.sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGCHLD)
					reap(&d);
				else {
					d.signalled = 1;
					pmid_fail(&d, 128 + (int)si.ssi_signo, "node %d: signal %u, ending the job",
						  a->node, si.ssi_signo);
				}
			}
		}
		if (pfd[1].revents)
			calls_run(&d);
		if (pfd[2].revents)
			port_accept(&d);
		if (pfd[3].revents)
			root_accept(&d);
		for (int i = 0; i < d.nlocal; i++)
			if (pfd[4 + i].revents && d.ranks[i].fd >= 0)
				client_readable(&d, i);
		for (int i = 0; i < d.npeers; i++) {
			struct pollfd *q = &pfd[4 + d.nlocal + i];

			if (d.peers[i].fd < 0 || q->fd < 0)
				continue;
			if (q->revents & POLLOUT)
				wire_flush(d.peers[i].fd, &d.peers[i].out);
			if (q->revents & (POLLIN | POLLHUP | POLLERR))
				peer_readable(&d, &d.peers[i]);
		}
		for (int i = 0; i < d.nlocal; i++)
			for (int s = 0; s < 2; s++)
				if (pfd[4 + d.nlocal + d.npeers + 2 * i + s].revents && d.ranks[i].out[s] >= 0)
					label_read(&d, i, s);
	}
	/* a sister tells the root its ranks are all gone, so that closing
	 * the link is not taken for a lost node */
	if (!d.failed && !is_root(&d) && d.npeers && d.peers[0].fd >= 0)
		peer_send(&d.peers[0], json_pack("{s:s, s:i}", "op", "done", "node", a->node));
	/* flush what is queued for the other servers (fail, done) */
	for (int i = 0; i < d.npeers; i++)
		if (d.peers[i].fd >= 0 && d.peers[i].out.len > d.peers[i].out.off) {
			fcntl(d.peers[i].fd, F_SETFL, 0);
			wire_flush(d.peers[i].fd, &d.peers[i].out);
		}
done:
	kill_ranks(&d);
	while (d.nexited < d.nlocal && waitpid(-1, NULL, 0) > 0)
		d.nexited++;
	if (d.ranks)
		label_drain(&d);
	free(pfd);
	teardown(&d);
	if (pmix_tmp[0])
		tmpdir_remove(pmix_tmp);
	return d.status;
}
