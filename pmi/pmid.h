/* SPDX-License-Identifier: MIT */
/* qpool-pmi: the per-node, per-job PMI server. It starts its node's ranks
 * of one job, serves them PMI-1/PMI-2 (lib/pmiwire) and PMIx (libpmix's
 * server), and meets the job's other per-node servers over TCP for the
 * fences and direct-connect gets. */
#ifndef QPOOL_PMID_H
#define QPOOL_PMID_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

struct pmid;

struct pmid_args {
	int node;              /* this server's index in peers */
	int nnodes;
	char **peers;          /* "ADDR:PORT" of every node's server, node order */
	char **names;          /* node names (PMIx's node map), node order */
	int *ranks;            /* ranks per node, node order */
	int timeout;           /* seconds a fence may wait, and connecting */
	const char *kvsname;   /* PMI-1 kvsname, PMIx namespace */
	int pmix;              /* serve PMIx too */
	int pmi;               /* serve PMI-1/2 (0: plain tasks, no PMI at all) */
	int label;             /* prefix each line the ranks print with "RANK: " */
	int stdin_rank0;       /* rank 0 reads this server's stdin, not /dev/null */
	int hwloc_xml;         /* ranks load the node's topology from qnoded's XML
	                        * (QPOOL_HWLOC_XML) instead of discovering it */
	int pmi_port_only;     /* ranks get PMI_PORT, not PMI_FD (tests) */
	const char *port_file; /* root: writes its ADDR:PORT there once listening */
	int listen_fd;         /* root: a socket already listening (-1: make one) */
	const char *root_netns; /* sister: the root listens on every address of
	                         * this network namespace (netns_id): if this
	                         * server is in it too, it connects on loopback */
	char **argv;           /* the ranks' command */
};

typedef void pmid_call_f(struct pmid *d, void *arg);
typedef void pmid_fence_done_f(struct pmid *d, void *arg, const char *blob, size_t len);

/* What the PMIx side asks of the loop: server.c hands it to
 * pmid_pmix_create and pmix.c calls the loop through it only, so the
 * PMIx engine sits below the loop and never calls it by name. */
struct pmid_pmix_host {
	/* The thread-safe handoff from libpmix's progress thread to the
	 * loop: fn runs on the main thread with arg. Returns 0 or -errno. */
	int (*call)(struct pmid *d, pmid_call_f *fn, void *arg);
	/* Contributes this node's share of a fence; done(d, arg, blob, len)
	 * runs (on the main thread) with every node's blobs concatenated in
	 * node order when all nodes contributed, or with blob NULL when the
	 * fence failed. */
	int (*fence_blob)(struct pmid *d, const char *blob, size_t len, pmid_fence_done_f *done, void *arg);
	/* Asks the server of the node that holds rank for that rank's data
	 * (PMIx direct modex); done runs with the data or blob NULL. */
	int (*dmodex)(struct pmid *d, int rank, pmid_fence_done_f *done, void *arg);
	/* Ends the job: every rank killed, status the servers' exit status,
	 * the message printed once (by the node that saw it). */
	void (*fail)(struct pmid *d, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
	/* A connection turned away (main thread): said once per server, the
	 * later ones counted only. */
	void (*refused)(struct pmid *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	/* A local rank connected to the PMIx server (main thread). */
	void (*rank_connected)(struct pmid *d, int rank);
};

/* Runs the whole server: returns the exit status of the command. */
int pmid_run(const struct pmid_args *args);

/* PMIx side (pmix.c), called by the loop; it calls back through host
 * (kept, not copied) with d. */
struct pmid_pmix;
int pmid_pmix_create(struct pmid *d, const struct pmid_pmix_host *host, const struct pmid_args *a,
		     const char *tmpdir, struct pmid_pmix **ret, struct error *err);
/* The environment for local rank r: "K=V" strings appended to env. */
int pmid_pmix_rank_env(struct pmid_pmix *p, int rank, char ***env, size_t *n);
/* Data for a direct-modex request from another node: done runs with it. */
int pmid_pmix_dmodex_local(struct pmid_pmix *p, int rank, pmid_fence_done_f *done, void *arg);
void pmid_pmix_destroy(struct pmid_pmix *p);

#endif
