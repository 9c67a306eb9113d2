/* SPDX-License-Identifier: MIT */
/* What qpoold sends nodes: job.launch and job.signal. What a signal sets
 * off above (a suspension's end, a server prolog stopped) is the callback
 * server.c gives at set-up (s->job_signal_f). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "jobid.h"
#include "log.h"
#include "server-internal.h"

/* Sets entry e's share in a copy of the launch message. */
/* A share's GPUs as the wire has them: the node's own indices. */
static json_t *gpus_array(uint64_t gpus)
{
	json_t *arr = json_array();

	for (unsigned i = 0; arr && i < 64; i++)
		if (gpus & (UINT64_C(1) << i))
			json_array_append_new(arr, json_integer(i));
	return arr;
}

static int launch_share(json_t *launch, const struct job *j, const struct alloc_entry *e, unsigned idx)
{
	char cpus[4096];

	cpumask_format(&e->cpus, cpus, sizeof(cpus));
	if (json_object_set_new(launch, "cpus", json_string(cpus)) < 0 ||
	    json_object_set_new(launch, "mems", json_string(e->mems[0] ? e->mems : e->where ? e->where->mems : "0")) < 0)
		return -ENOMEM;
	/* docs/GPUS.md: this node's GPUs; absent, none. */
	if (e->gpus && json_object_set_new(launch, "gpus", gpus_array(e->gpus)) < 0)
		return -ENOMEM;
	if (j->n_alloc < 2)
		return 0;   /* its CPUs are its cpus (more than ncpus: sbatch --exclusive) */
	if (json_object_set_new(launch, "ncpus", json_integer(e->ncpus)) < 0 ||
	    json_object_set_new(launch, "mem", json_integer((json_int_t)e->mem)) < 0 ||
	    json_object_set_new(launch, "node_index", json_integer(idx)) < 0)
		return -ENOMEM;
	return 0;
}

/* The IPv4 address n's link leaves from, in buf: what the job's other
 * nodes reach it at with no name service (Slurm's NodeAddr; a node's
 * name need not be a host name). The node's own word at register (a
 * relay or a NAT before qpoold hides it), else the address qpoold sees
 * the link come from. 0, or -ENOENT for none: a link over the Unix
 * socket, over IPv6 (qpool-pmi's root is reached over AF_INET), or from a
 * loopback address (a node on qpoold's host that came to 127.0.0.1 is
 * not there for its sisters). */
static int node_link_addr(const struct node *n, char *buf, size_t len)
{
	const struct conn *c = n ? n->link : NULL;
	struct in_addr a;
	const char *colon;

	if (c && n->addr[0] && strlen(n->addr) < len) {
		memcpy(buf, n->addr, strlen(n->addr) + 1);
		return 0;
	}
	if (!c || !c->tcp || !(colon = strrchr(c->peer, ':')) || (size_t)(colon - c->peer) >= len)
		return -ENOENT;
	memcpy(buf, c->peer, (size_t)(colon - c->peer));
	buf[colon - c->peer] = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1 || (ntohl(a.s_addr) >> 24) == 127)
		return -ENOENT;
	return 0;
}

/* The launch's alloc: each node's name, share and link address (addr,
 * when node_link_addr has one), job order. */
static json_t *alloc_array(const struct job *j)
{
	json_t *arr = json_array();

	for (unsigned i = 0; arr && i < j->n_alloc; i++) {
		const struct alloc_entry *e = &j->alloc[i];
		char addr[INET_ADDRSTRLEN];
		json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I}", "node", e->node, "ncpus", (json_int_t)e->ncpus,
				      "mpiprocs", (json_int_t)e->mpiprocs, "ompthreads", (json_int_t)e->ompthreads,
				      "mem", (json_int_t)e->mem);

		if (o && node_link_addr(e->where, addr, sizeof(addr)) == 0)
			json_object_set_new(o, "addr", json_string(addr));
		if (o && e->gpus) {
			json_object_set_new(o, "gpus", gpus_array(e->gpus));
			json_object_set_new(o, "ngpus", json_integer(__builtin_popcountll(e->gpus)));
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

/* A job across nodes sends its alloc; so does a one-node job whose
 * chunks name MPI slots other than its CPUs or OpenMP threads
 * (select=1:ncpus=4:mpiprocs=2): its node file has a line a slot and
 * OMP_NUM_THREADS its threads, as on each node of a job across nodes
 * (docs/PARALLEL.md). Any other one-node job has none: a line a CPU. */
static bool alloc_sent(const struct job *j)
{
	return j->n_alloc > 1 ||
	       (j->n_alloc == 1 && (j->alloc[0].mpiprocs != j->alloc[0].ncpus || j->alloc[0].ompthreads));
}

int node_launch(struct server *s, struct job *j, struct node *n, bool gated)
{
	const struct queue_conf *q = config_queue(s->config, j->queue);
	json_t *launch;
	char server[JOBID_SERVER_MAX];
	int r;

	r = jobstore_job_launch(s->store, j->id, &launch);
	if (r < 0) {
		log_err("job %lld: cannot read it back to launch: %s", (long long)j->id, strerror(-r));
		return r;
	}
	/* The name in PBS_JOBID (ID.server), as qsub printed it. */
	snprintf(server, sizeof(server), "%s", s->pool_name);
	json_object_set_new(launch, "server", json_string(server));
	if (s->config->sendmail[0])
		json_object_set_new(launch, "sendmail", json_string(s->config->sendmail));
	if (json_object_set_new(launch, "kill_grace", json_integer((json_int_t)s->config->kill_grace)) < 0 ||
	    json_object_set_new(launch, "reserve", json_string(queue_reserve_name(j->reserve))) < 0 ||
	    json_object_set_new(launch, "rt_policy",
				json_string(q && q->rt_policy == QUEUE_RT_RR ? "rr" : "fifo")) < 0 ||
	    json_object_set_new(launch, "rt_priority", json_integer((json_int_t)(q ? q->rt_priority : 0))) < 0 ||
	    (alloc_sent(j) && json_object_set_new(launch, "alloc", alloc_array(j)) < 0) ||
	    (gated && json_object_set_new(launch, "gated", json_true()) < 0)) {
		json_decref(launch);
		log_err("job %lld: cannot build its launch message", (long long)j->id);
		return -ENOMEM;
	}
	/* A job of chunks has its slots in them (alloc_sent): an attribute
	 * Resource_List.mpiprocs, which gded reads as a one-chunk select's,
	 * is then one that an earlier request of its submit left. */
	if (j->n_chunks)
		json_object_del(json_object_get(launch, "attrs"), "Resource_List.mpiprocs");
	/* The run's token: what the store has as its dispatch stamp. */
	j->t_dispatch = wire_int(json_object_get(launch, "times"), "dispatch", 0);
	/* Sisters first: their fences are ready the sooner when the script
	 * starts its remote tasks. */
	for (unsigned i = j->n_alloc; i-- > 0;) {
		struct alloc_entry *e = &j->alloc[i];
		json_t *m = i ? json_deep_copy(launch) : json_incref(launch);

		if (!m || launch_share(m, j, e, i) < 0) {
			json_decref(m);
			json_decref(launch);
			log_err("job %lld: cannot build its launch message", (long long)j->id);
			return -ENOMEM;
		}
		if (e->where && e->where->link)
			conn_send(e->where->link, json_pack("{s:s, s:i, s:o}", "op", "job.launch", "id", 0, "job", m));
		else
			json_decref(m);
	}
	json_decref(launch);
	log_debug("job %lld dispatched to %s%s", (long long)j->id, n ? n->name : "?", j->n_alloc > 1 ? " and others" : "");
	return 0;
}

void node_release(struct job *j, struct node *n, bool go)
{
	if (n && n->link)
		conn_send(n->link, json_pack("{s:s, s:i, s:I, s:I}", "op", go ? "job.go" : "job.drop", "id", 0,
					     "jobid", (json_int_t)j->id, "dispatch", (json_int_t)j->t_dispatch));
}

/* Sends sig to the job on every node of its allocation that is
 * connected; true when the primary's node got it. */
bool node_signal(struct hctx *h, struct job *j, int sig)
{
	struct server *s = server_of(h);
	bool primary = false;

	if (s->job_signal_f)
		s->job_signal_f(s, j, sig);

	for (unsigned i = 0; i < j->n_alloc; i++) {
		struct node *n = j->alloc[i].where;

		if (!n || !n->link || (i && j->alloc[i].done))
			continue;
		conn_send(n->link, json_pack("{s:s, s:i, s:I, s:i}", "op", "job.signal", "id", 0,
					     "jobid", (json_int_t)j->id, "signal", sig));
		primary |= i == 0;
	}
	return primary;
}
