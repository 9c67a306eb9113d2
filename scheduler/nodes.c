/* SPDX-License-Identifier: MIT */
/* The node ops: register (with reconciliation), heartbeat, job.done; and
 * what qpoold sends nodes: job.launch, job.signal. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "jobid.h"
#include "log.h"
#include "placement.h"
#include "server-internal.h"
#include "timeutil.h"

#define NODE_NAME_ROOM 96   /* "on node NAME: " before a reason */

static bool json_ids_contain(const json_t *arr, int64_t id)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_integer(v) && json_integer_value(v) == id)
			return true;
	return false;
}

/* Whether results (result objects) hold one for job id. */
static bool json_results_contain(const json_t *results, int64_t id)
{
	size_t i;
	json_t *r;

	json_array_foreach(results, i, r)
		if (wire_int(r, "jobid", 0) == id)
			return true;
	return false;
}

/* Queues a completion for the next group commit. Only the node that runs
 * the job may report it; a report for a finished job is answered at once
 * (the node resends after a reconnect until it hears ok). */
/* Whether a node's report about j, carrying the run token dispatch (0:
 * none, from an older node), is about j's current run: a copy that ran on
 * before a requeue (the node was lost, then returned) reports with the
 * token of its own, earlier dispatch. */
static bool report_current(const struct job *j, int64_t dispatch)
{
	return dispatch <= 0 || j->t_dispatch <= 0 || dispatch == j->t_dispatch;
}

static void done_queue(struct conn *c, long long req_id, int64_t jobid, int64_t dispatch,
		       const json_t *result)
{
	struct server *s = c->server;
	struct job *j = pool_job_find(s->pool, jobid);
	struct pending *p;

	if (!j || !j->node || strcmp(j->node, c->node->name) != 0) {
		if (req_id)
			conn_reply_ok(c, req_id, NULL);
		return;
	}
	if (!report_current(j, dispatch)) {
		log_info("job %lld: node %s reports a stale run (dispatched at %lld, not %lld): ignored",
			 (long long)jobid, c->node->name, (long long)dispatch, (long long)j->t_dispatch);
		if (req_id)
			conn_reply_ok(c, req_id, NULL);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		if (req_id)
			conn_reply_err(c, req_id, ENOMEM, "qpoold is out of memory");
		return;
	}
	p->conn = c;
	p->req_id = req_id;
	p->jobid = jobid;
	p->is_done = true;
	/* A launch that failed for lack of room is no fault of the job: it
	 * goes back to the queue (qnoded says so with "requeue"). */
	p->requeue = j->state == JOB_RUNNING && wire_bool(result, "requeue", 0);
	job_result_from_json(result, &p->result);
	p->result.times[STAMP_DISPATCH] = 0;
	/* A job that could not start, e.g. for a path missing on this host
	 * (the execution host is not the submit host): say where, unless
	 * qnoded's reason does already. */
	if (p->result.reason[0] && strcmp(wire_str(result, "status") ?: "", "failed") == 0 &&
	    !strstr(p->result.reason, c->node->name)) {
		char why[sizeof(p->result.reason) + NODE_NAME_ROOM];

		snprintf(why, sizeof(why), "on node %s: %s", c->node->name, p->result.reason);
		memcpy(p->result.reason, why, sizeof(p->result.reason) - 1);
		p->result.reason[sizeof(p->result.reason) - 1] = '\0';
	}
	server_pending_add(s, p);
}

/* After a registration: jobs the store has on this node but the node does
 * not know never reached it (the node keeps a job's files until its report
 * is acknowledged), so they are requeued; exiting ones are signalled again. */
static void node_reconcile(struct server *s, struct node *n, const json_t *running, const json_t *results)
{
	struct job *j, *next;

	for (j = pool_node_jobs(n); j; j = next) {
		next = j->nnext;
		if (json_ids_contain(running, j->id)) {
			pool_job_claim(s->pool, j);
			if (j->state == JOB_EXITING)
				node_signal(s, j, SIGTERM);
			continue;
		}
		/* Finished while we were apart: its report follows. */
		if (json_results_contain(results, j->id)) {
			pool_job_claim(s->pool, j);
			continue;
		}
		if (j->state == JOB_EXITING && !j->rerun) {
			struct job_result res = { .state = JOB_CANCELLED, .exit_status = -1 };

			snprintf(res.reason, sizeof(res.reason), "cancelled; node %s never started it", n->name);
			if (jobstore_job_finish(s->store, j->id, &res, time_wall_ns()) == 0)
				server_job_finished(s, j, res.state);
			continue;
		}
		if (jobstore_job_requeue(s->store, j->id, "requeued: its node never received it") == 0) {
			j->rerun = false;
			log_info("job %lld: node %s does not have it; requeued", (long long)j->id, n->name);
			pool_job_release(s->pool, j);
			pool_job_state_set(s->pool, j, JOB_QUEUED);
		}
	}
	/* Jobs the node runs that the store does not have there (requeued or
	 * failed while the node was lost): stale copies. Stop them. */
	{
		size_t i;
		json_t *v;

		json_array_foreach(running, i, v) {
			struct job *rj = json_is_integer(v) ? pool_job_find(s->pool, json_integer_value(v)) : NULL;

			if (!rj || rj->where != n) {
				log_warn("node %s runs job %lld that is not running here; cancelling it", n->name,
					 (long long)json_integer_value(v));
				/* SIGTERM, not SIGKILL: gded must live to kill the whole job
				 * (SIGKILL after kill_grace) and remove its cgroup. */
				conn_send(n->link, json_pack("{s:s, s:i, s:I, s:i}", "op", "job.signal", "id", 0,
							     "jobid", json_integer_value(v), "signal", SIGTERM));
			}
		}
	}
}

static void op_register(struct conn *c, long long req_id, json_t *msg)
{
	struct server *s = c->server;
	const char *name = wire_str(msg, "name");
	const char *cpus = wire_str(msg, "cpus");
	const char *mems = wire_str(msg, "mems");
	const char *cgroup = wire_str(msg, "cgroup");
	const char *rt_reason = wire_str(msg, "rt_reason");
	json_t *running = json_object_get(msg, "running");
	json_t *results = json_object_get(msg, "results");
	json_t *topology = json_object_get(msg, "topology");
	struct cpumask mask;
	const char *hwloc;
	struct error err;
	struct node *n;
	size_t i;
	json_t *r;

	if (!name || !*name || strlen(name) > 63 || strchr(name, '/') || !cpus ||
	    cpumask_parse(cpus, &mask) < 0 || cpumask_count(&mask) == 0) {
		conn_reply_err(c, req_id, EINVAL, "node.register needs a name (1-63 bytes, no '/') and a CPU list");
		return;
	}
	if (c->node) {
		conn_reply_err(c, req_id, EALREADY, "this connection is node %s already", c->node->name);
		return;
	}
	n = pool_node_get(s->pool, name);
	if (!n) {
		conn_reply_err(c, req_id, ENOMEM, "qpoold is out of memory");
		return;
	}
	if (n->link) {
		conn_reply_err(c, req_id, EEXIST, "node %s is already registered", name);
		return;
	}
	hwloc = wire_str(msg, "hwloc");
	if (n->topo) {
		pool_topology_put(s->pool, n->topo);
		n->topo = NULL;
	}
	/* Placement packs jobs by the node's topology; without one (an older or
	 * simulated node) it falls back to first fit. */
	if (hwloc && pool_topology_get(s->pool, hwloc, strlen(hwloc), &n->topo, &err) < 0) {
		log_warn("node %s: unusable topology, first fit instead: %s", name, err.text);
		n->topo = NULL;
	}
	if (n->topo) {
		struct cpumask tcpus;

		placement_topology_cpus(n->topo, &tcpus);
		if (!cpumask_subset(&mask, &tcpus) || !cpumask_subset(&tcpus, &mask)) {
			log_warn("node %s: topology CPUs differ from its CPU list; first fit instead", name);
			pool_topology_put(s->pool, n->topo);
			n->topo = NULL;
		}
	}
	n->cpus = mask;
	n->free = mask;
	n->rt_free = mask;
	snprintf(n->mems, sizeof(n->mems), "%s", mems ? mems : "0");
	snprintf(n->cgroup, sizeof(n->cgroup), "%s", cgroup ? cgroup : "none");
	json_decref(n->topology);
	n->topology = json_is_object(topology) ? json_incref(topology) : NULL;
	n->rt = wire_bool(msg, "rt", 0);
	free(n->rt_reason);
	n->rt_reason = rt_reason ? strdup(rt_reason) : NULL;
	if (n->state == NODE_DOWN)
		n->state = NODE_UP;
	n->link = c;
	n->last_seen = time_mono_ns();
	n->down_since = 0;
	n->lost = false;
	c->node = n;
	if (!json_is_array(running))
		running = NULL;
	if (!json_is_array(results))
		results = NULL;
	node_reconcile(s, n, running, results);
	json_array_foreach(results, i, r)
		if (json_is_object(r))
			done_queue(c, 0, wire_int(r, "jobid", 0), wire_int(r, "dispatch", 0), r);
	log_info("node %s up: cpus %s, cgroup %s%s", name, cpus, n->cgroup, n->rt ? ", realtime" : "");
	conn_reply_ok(c, req_id, NULL);
	s->sched_dirty = true;
}

static void op_done(struct conn *c, long long req_id, json_t *msg)
{
	json_t *result = json_object_get(msg, "result");
	long long jobid = wire_int(msg, "jobid", 0);

	if (jobid <= 0 || !json_is_object(result)) {
		conn_reply_err(c, req_id, EINVAL, "job.done needs jobid and result");
		return;
	}
	done_queue(c, req_id, jobid, wire_int(msg, "dispatch", 0), result);
}

/* The job's processes are gone; its wrapper is still removing its groups
 * and writing its result. The CPUs can take the next job now: the result
 * (job.done) follows and is what is recorded. Nothing here is stored, so
 * a restart before job.done only keeps the CPUs claimed a little longer. */
static void op_exited(struct conn *c, long long req_id, json_t *msg)
{
	struct server *s = c->server;
	long long jobid = wire_int(msg, "jobid", 0);
	struct job *j;

	if (jobid <= 0) {
		conn_reply_err(c, req_id, EINVAL, "job.exited needs a positive jobid");
		return;
	}
	/* Only for a job this node runs: another node cannot free its CPUs. */
	j = pool_job_find(s->pool, jobid);
	if (j && j->where == c->node && report_current(j, wire_int(msg, "dispatch", 0)) &&
	    pool_job_cpus_back(s->pool, j))
		s->sched_dirty = true;
	conn_reply_ok(c, req_id, NULL);
}

void node_request_handle(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	if (c->uid != 0) {
		if (c->tcp)
			log_warn("connection from %s refused: %s by uid %d, not root", c->peer, op, (int)c->uid);
		conn_reply_err(c, req_id, EPERM, "%s: only root may speak for a node", op);
		return;
	}
	if (strcmp(op, "node.register") == 0) {
		op_register(c, req_id, msg);
		return;
	}
	if (!c->node) {
		conn_reply_err(c, req_id, ENOTCONN, "%s: register first", op);
		return;
	}
	c->node->last_seen = time_mono_ns();
	if (strcmp(op, "node.heartbeat") == 0)
		conn_reply_ok(c, req_id, NULL);
	else if (strcmp(op, "job.done") == 0)
		op_done(c, req_id, msg);
	else if (strcmp(op, "job.exited") == 0)
		op_exited(c, req_id, msg);
	else
		conn_reply_err(c, req_id, EOPNOTSUPP, "unknown request '%.40s'", op);
}

void node_link_lost(struct server *s, struct conn *c)
{
	struct node *n = c->node;

	log_warn("node %s disconnected; its jobs keep running and report if it returns within %llus",
		 n->name, (unsigned long long)s->config->node_timeout);
	n->link = NULL;
	n->down_since = time_mono_ns();
	if (n->state == NODE_UP)
		n->state = NODE_DOWN;
	c->node = NULL;
}

int node_launch(struct server *s, struct job *j, struct node *n)
{
	const struct queue_conf *q = config_queue(s->config, j->queue);
	json_t *launch;
	char cpus[4096], server[JOBID_SERVER_MAX];
	int r;

	r = jobstore_job_launch(s->store, j->id, &launch);
	if (r < 0) {
		log_err("job %lld: cannot read it back to launch: %s", (long long)j->id, strerror(-r));
		return r;
	}
	cpumask_format(&j->cpus, cpus, sizeof(cpus));
	/* The name in PBS_JOBID (ID.server), as qsub printed it. */
	jobid_server_name(s->config->server_name, server, sizeof(server));
	json_object_set_new(launch, "server", json_string(server));
	if (s->config->sendmail[0])
		json_object_set_new(launch, "sendmail", json_string(s->config->sendmail));
	if (json_object_set_new(launch, "kill_grace", json_integer((json_int_t)s->config->kill_grace)) < 0 ||
	    json_object_set_new(launch, "cpus", json_string(cpus)) < 0 ||
	    json_object_set_new(launch, "mems", json_string(j->mems[0] ? j->mems : n->mems)) < 0 ||
	    json_object_set_new(launch, "reserve", json_string(queue_reserve_name(j->reserve))) < 0 ||
	    json_object_set_new(launch, "rt_policy",
				json_string(q && q->rt_policy == QUEUE_RT_RR ? "rr" : "fifo")) < 0 ||
	    json_object_set_new(launch, "rt_priority", json_integer((json_int_t)(q ? q->rt_priority : 0))) < 0) {
		json_decref(launch);
		log_err("job %lld: cannot build its launch message", (long long)j->id);
		return -ENOMEM;
	}
	/* The run's token: what the store has as its dispatch stamp. */
	j->t_dispatch = wire_int(json_object_get(launch, "times"), "dispatch", 0);
	conn_send(n->link, json_pack("{s:s, s:i, s:o}", "op", "job.launch", "id", 0, "job", launch));
	log_debug("job %lld dispatched to %s", (long long)j->id, n->name);
	return 0;
}

bool node_signal(struct server *s, struct job *j, int sig)
{
	struct node *n = j->where;

	if (!n || !n->link)
		return false;
	conn_send(n->link, json_pack("{s:s, s:i, s:I, s:i}", "op", "job.signal", "id", 0,
				     "jobid", (json_int_t)j->id, "signal", sig));
	return true;
}

/* The node has been unreachable for node_timeout: its jobs cannot be
 * counted on. Rerunnable ones go back to the queue, the others fail, a
 * cancelled one ends cancelled. If the node comes back, its registration
 * shows these jobs as not its own any more: it is told to kill them, and
 * their reports are acknowledged and dropped, so none is counted twice. */
static void node_lost(struct server *s, struct node *n)
{
	int64_t now = time_wall_ns();
	struct job *j, *next;
	char reason[160];

	log_warn("node %s lost (unreachable for %llus)", n->name, (unsigned long long)s->config->node_timeout);
	n->lost = true;
	for (j = pool_node_jobs(n); j; j = next) {
		struct job_result res = { .exit_status = -1 };
		int r;

		next = j->nnext;
		if ((j->state == JOB_RUNNING && j->rerunnable) || j->rerun) {
			j->rerun = false;
			snprintf(reason, sizeof(reason), "requeued: node %s was lost", n->name);
			r = jobstore_job_requeue(s->store, j->id, reason);
			if (r == 0) {
				log_info("job %lld %s", (long long)j->id, reason);
				pool_job_release(s->pool, j);
				pool_job_state_set(s->pool, j, JOB_QUEUED);
			}
			continue;
		}
		res.state = j->state == JOB_EXITING ? JOB_CANCELLED : JOB_FAILED;
		snprintf(res.reason, sizeof(res.reason), "node %s was lost while the job ran%s", n->name,
			 j->rerunnable ? "" : " (not rerunnable)");
		r = jobstore_job_finish(s->store, j->id, &res, now);
		if (r == 0) {
			log_info("job %lld %s: %s", (long long)j->id, job_state_name(res.state), res.reason);
			server_job_finished(s, j, res.state);
		}
	}
	s->sched_dirty = true;
}

void nodes_check_timeouts(struct server *s)
{
	int64_t now = time_mono_ns();
	int64_t limit = (int64_t)s->config->node_timeout * NSEC_PER_SEC;

	for (struct node *n = pool_nodes(s->pool); n; n = n->next) {
		struct conn *c = n->link;

		if (c && now - n->last_seen > limit) {
			log_warn("node %s silent for %llus; marking it down", n->name,
				 (unsigned long long)s->config->node_timeout);
			/* Closing the link marks the node down; it re-registers when it can. */
			shutdown(c->fd, SHUT_RDWR);
			node_link_lost(s, c);
			n->down_since = n->last_seen;
		}
		if (!n->link && !n->lost && n->down_since && now - n->down_since > limit)
			node_lost(s, n);
	}
}
