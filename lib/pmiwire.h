/* SPDX-License-Identifier: MIT */
/* PMI-1 and PMI-2 wire protocols (MPICH's simple PMI) as a pure engine:
 * bytes in from a client, calls to an ops table out. No sockets, no
 * processes: the server owns those. */
#ifndef QPOOL_PMIWIRE_H
#define QPOOL_PMIWIRE_H

#include <stddef.h>

#include "error.h"

/* Limits announced to PMI-1 clients (cmd=maxes). MPICH 4.0 refuses a
 * vallen_max of 256 or less; hydra announces the same three. */
#define PMIWIRE_KVSNAME_MAX 256
#define PMIWIRE_KEY_MAX     64
#define PMIWIRE_VAL_MAX     1024
/* The longest message taken from a client: a PMI-2 length field has six
 * digits, a PMI-1 line is at most 1024 bytes in MPICH (PMIU_MAXLINE); a
 * spawn request is several lines. */
#define PMIWIRE_MSG_MAX     65536

struct pmiwire;

/* What the job looks like to each of its ranks; copied at create. */
struct pmiwire_job {
	const char *kvsname;         /* also the PMI-2 jobid */
	int size;                    /* ranks in the job */
	int universe;                /* universe size; <= 0: size */
	int appnum;
	const char *process_mapping; /* PMI_process_mapping; NULL: none */
};

/* The server's side. client is the number given to pmiwire_client_add.
 * Every callback may be NULL except send. */
struct pmiwire_ops {
	/* Bytes for the client, in order. Returns 0 or -errno (the engine
	 * passes it back from pmiwire_feed). */
	int (*send)(void *arg, int client, const char *data, size_t len);
	/* The client says it is rank (PMI-1 initack's pmiid, PMI-2
	 * fullinit's pmirank). 0 accepts; -errno refuses (error reply). */
	int (*claim)(void *arg, int client, int rank);
	/* The client entered the job-wide fence (barrier_in, kvs-fence); it
	 * is answered at pmiwire_fence_done. */
	void (*fence)(void *arg, int client);
	/* Job-wide KVS: 0 or -errno. get returns NULL when the key is not
	 * there (yet). */
	int (*put)(void *arg, int client, const char *key, const char *value);
	const char *(*get)(void *arg, int client, const char *key);
	/* Node-local attributes (PMI-2 info-putnodeattr / getnodeattr; a
	 * getnodeattr with wait=TRUE is answered at the key's put). */
	int (*nodeattr_put)(void *arg, int client, const char *key, const char *value);
	const char *(*nodeattr_get)(void *arg, int client, const char *key);
	/* The client asked the job to abort (no reply is owed to it). */
	void (*abort)(void *arg, int client, int code, const char *msg);
	/* The client finalized (after its reply was sent). */
	void (*finalize)(void *arg, int client);
};

enum pmiwire_state {
	PMIWIRE_NEW = 0,     /* nothing yet */
	PMIWIRE_INIT,        /* init done */
	PMIWIRE_FENCE,       /* waiting in a fence */
	PMIWIRE_FINALIZED,
	PMIWIRE_ABORTED,
};

/* Returns NULL on ENOMEM or a bad job (size < 1, kvsname too long). Up to
 * max_clients clients, numbered 0..max_clients-1. */
struct pmiwire *pmiwire_create(const struct pmiwire_ops *ops, void *arg,
			       const struct pmiwire_job *job, int max_clients);
void pmiwire_destroy(struct pmiwire *w);

/* A new connection for client (0..max_clients-1). rank is the rank it was
 * started as (PMI_FD), or -1 when it will say (PMI_PORT's initack).
 * Returns 0, -EINVAL, -EBUSY (number in use, or rank already taken). */
int pmiwire_client_add(struct pmiwire *w, int client, int rank);
/* Forgets the client (its connection closed). Its rank stays taken. */
void pmiwire_client_remove(struct pmiwire *w, int client);
/* 1 when a connection ever had rank: given at pmiwire_client_add or
 * claimed (initack, fullinit). A rank is claimed once for the life of the
 * job: a connection that says it is a rank whose own connection ended is
 * refused (it would speak, put and abort as that rank). */
int pmiwire_rank_claimed(const struct pmiwire *w, int rank);

/* The longest first line a PMI_PORT client sends: "cmd=initack pmiid=N". */
#define PMIWIRE_INITACK_MAX 128
/* Reads a PMI_PORT connection's first line from buf (what arrived so
 * far): 1 and *ret_rank when it is a whole "cmd=initack pmiid=N" line
 * (N >= 0), 0 when no newline came yet and len < PMIWIRE_INITACK_MAX,
 * -EPROTO for anything else. */
int pmiwire_initack_parse(const char *buf, size_t len, int *ret_rank);

/* The job's servers' shared secret: 1 when got equals want (compared in
 * time independent of where they differ), or when want is NULL or empty
 * (a server started by hand without one: tests only); else 0. */
int pmiwire_token_ok(const char *want, const char *got);

/* Takes bytes the client sent (any split). Returns 0, a send's -errno, or
 * -EPROTO with err saying why (the client spoke something that is not PMI;
 * close it). Errors of a well-formed request are replies, not returns. */
int pmiwire_feed(struct pmiwire *w, int client, const char *data, size_t len,
		 struct error *err);

/* Ends the current fence: answers every client waiting in it. Returns 0 or
 * the first send's -errno. */
int pmiwire_fence_done(struct pmiwire *w);

enum pmiwire_state pmiwire_client_state(const struct pmiwire *w, int client);
/* The client's rank, or -1 before it is known. */
int pmiwire_client_rank(const struct pmiwire *w, int client);
/* 1 or 2 once the client said init, else 0. */
int pmiwire_client_version(const struct pmiwire *w, int client);

/* PMI_process_mapping for ranks placed in blocks, node after node:
 * per_node[i] ranks on node i. Writes "(vector,(0,N,M))" (N nodes with M
 * ranks each) or one (start,count,ranks) triple per run of equal nodes.
 * Returns the length, -EINVAL (no node, a count < 1), -ENOSPC. */
int pmiwire_process_mapping(const int *per_node, int nnodes, char *buf, size_t len);

#endif
