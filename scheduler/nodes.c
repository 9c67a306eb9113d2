/* SPDX-License-Identifier: MIT */
/* The node ops: register (with reconciliation), heartbeat, job.done
 * (what qpoold sends nodes is node-send.c's). */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "config.h"
#include "conn.h"
#include "hctx.h"
#include "job-end.h"
#include "jobid.h"
#include "jobstore.h"
#include "lease.h"
#include "log.h"
#include "loop.h"
#include "node-send.h"
#include "nodes-known.h"
#include "nodes.h"
#include "ops.h"
#include "placement.h"
#include "pool.h"
#include "server-lease.h"
#include "suspend.h"
#include "tasks.h"
#include "timeutil.h"
#include "watch.h"
#include "wire.h"

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

/* A wrapper that found the node giving less than was allocated ("drain"
 * in its result, docs/PROTOCOL.md): the node is drained as an admin would
 * (kept in the store, qmgr or pbsnodes -c clears it), with the wrapper's
 * reason, so no other job is placed there to fail alike. */
int node_drain_set(struct hctx *s, struct node *n, enum node_drain_by by, const char *reason)
{
	return node_drain_set_by(s, n, by, reason, -1);
}

int node_drain_set_by(struct hctx *s, struct node *n, enum node_drain_by by, const char *reason, int64_t uid)
{
	int64_t t_drain = 0;
	int r = jobstore_node_admin_set_by(s->store, n->name, by, by ? reason : NULL, uid, &t_drain);

	if (r < 0)
		return r;
	n->drain = by != DRAIN_NONE;
	n->drain_by = by;
	free(n->drain_reason);
	n->drain_reason = by && reason ? strdup(reason) : NULL;
	/* The store's second, as a restart reads it back (settings.c); 0
	 * when resumed. */
	n->drain_time = t_drain * 1000000000LL;
	hctx_resched(s);
	return 0;
}

static void node_fault_drain(struct hctx *s, struct node *n, const json_t *result)
{
	const char *reason = wire_str(result, "drain_reason") ?: wire_str(result, "reason");

	if (!wire_bool(result, "drain", 0) || n->drain)
		return;
	if (!reason || !*reason)
		reason = "its wrapper failed a launch";
	if (node_drain_set(s, n, DRAIN_HOOK, reason) < 0)
		log_warn("node %s: cannot store its drain", n->name);
	log_warn("node %s drained: %s", n->name, reason);
}

/* node.health: what the node's health check found ([node] health_check).
 * A failure drains a node that is not drained; a success resumes a node
 * its health check drained, never one an admin or a hook drained. */
void op_health(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	struct node *n = c->node;
	const char *reason = wire_str(msg, "reason");
	bool ok = wire_bool(msg, "ok", 1);
	int r = 0;

	if (!ok && !n->drain) {
		r = node_drain_set(s, n, DRAIN_HEALTH, reason && *reason ? reason : "its health check failed");
		if (r == 0)
			log_warn("node %s drained by its health check: %s", n->name, n->drain_reason);
	} else if (ok && n->drain && n->drain_by == DRAIN_HEALTH) {
		r = node_drain_set(s, n, DRAIN_NONE, NULL);
		if (r == 0)
			log_info("node %s resumed: its health check passes again", n->name);
	}
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	conn_reply_ok(c, req_id, NULL);
}

/* A job whose node prolog failed (docs/HOOKS.md): requeued, and after
 * [node] prolog_failures_max failures held with why (server_prolog_hold). */
static void prolog_failed(struct hctx *s, struct job *j)
{
	uint64_t max = s->config->prolog_failures_max;

	j->prolog_failures++;
	j->prolog_hold = max && j->prolog_failures >= max;
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

/* Whether a job whose node was lost goes back to the queue. */
static bool lost_requeues(const struct job *j)
{
	return (j->state == JOB_RUNNING && j->rerunnable) || j->rerun;
}

/* Queues the job's completion (result: the primary's) for the group commit;
 * requeued: the node's report when it puts the job back in the queue
 * (its "no_room" says whether for lack of room), else NULL. */
static void done_pending(struct conn *c, long long req_id, struct job *j, const struct job_result *res,
			 const json_t *requeued)
{
	struct pending *p = calloc(1, sizeof(*p));

	if (!p) {
		if (req_id)
			conn_reply_err(c, req_id, ENOMEM, "qpoold is out of memory");
		return;
	}
	p->conn = c;
	p->req_id = req_id;
	p->jobid = j->id;
	p->is_done = true;
	p->requeue = requeued != NULL;
	p->no_room = requeued && wire_bool(requeued, "no_room", 0);
	p->result = *res;
	server_pending_add(conn_ctx(c), p);
}

/* Across nodes, the job's end: the primary's processes are gone (or the
 * job must end): every sister not done yet is told to end it. */
static void sisters_end(struct hctx *s, struct job *j)
{
	for (unsigned i = 1; i < j->n_alloc; i++) {
		struct alloc_entry *e = &j->alloc[i];

		if (!e->done && e->where && e->where->link)
			conn_send(e->where->link, json_pack("{s:s, s:i, s:I, s:i}", "op", "job.signal", "id", 0,
							    "jobid", (json_int_t)j->id, "signal", SIGTERM));
	}
}

/* When every node's report of a job across nodes is in (a lost node
 * counts), its completion is queued with the primary's result. */
static void multi_done_check(struct conn *c, long long req_id, struct job *j)
{
	for (unsigned i = 0; i < j->n_alloc; i++)
		if (!j->alloc[i].done) {
			if (req_id)
				conn_reply_ok(c, req_id, NULL);
			return;
		}
	if (j->lost || !j->result) {
		struct job_result res = { .state = j->state == JOB_EXITING ? JOB_CANCELLED : JOB_FAILED,
					  .exit_status = -1 };

		/* A lost node ends the job: back to the queue (as qrerun does,
		 * with its own reason) or failed. */
		bool requeue = j->lost && lost_requeues(j);

		if (requeue)
			j->rerun = true;
		snprintf(res.reason, sizeof(res.reason), "%s%s", requeue ? "requeued: " : "",
			 j->lost ? j->lost : j->end_reason ? j->end_reason : "no result from the primary");
		done_pending(c, req_id, j, &res, NULL);
		return;
	}
	/* A sister that could not start fails the job, unless it was being
	 * deleted anyway (its primary then says cancelled). */
	if (j->end_reason && j->state != JOB_EXITING) {
		j->result->state = JOB_FAILED;
		snprintf(j->result->reason, sizeof(j->result->reason), "%s", j->end_reason);
	}
	done_pending(c, req_id, j, j->result, NULL);
}

/* One node's report about a job across nodes. */
static void multi_done(struct conn *c, long long req_id, struct job *j, struct alloc_entry *e,
		       const json_t *result)
{
	struct hctx *s = conn_ctx(c);
	struct job_result res;
	const char *status = wire_str(result, "status");
	unsigned idx = (unsigned)(e - j->alloc);

	if (e->done) {
		if (req_id)
			conn_reply_ok(c, req_id, NULL);
		return;
	}
	job_result_from_json(result, &res);
	res.times[STAMP_DISPATCH] = 0;
	e->done = true;
	if (pool_entry_cpus_back(s->pool, e))
		hctx_resched(s);
	/* Outside the group commit: a row update per node of a wide job,
	 * durable before the node hears ok and forgets its result. */
	{
		char *text = json_dumps(result, JSON_COMPACT);

		if (jobstore_alloc_result(s->store, j->id, idx, &res, time_wall_ns(), text) < 0)
			log_warn("job %lld: cannot record node %s's report", (long long)j->id, c->node->name);
		free(text);
	}
	if (idx == 0) {
		free(j->result);
		j->result = malloc(sizeof(*j->result));
		if (j->result)
			*j->result = res;
		sisters_end(s, j);
	}
	if (wire_bool(result, "requeue", 0) && j->state == JOB_RUNNING && !j->lost) {
		if (wire_bool(result, "prolog_failed", 0))
			prolog_failed(s, j);
		/* A node without room for the job's files, or whose launch a
		 * qnoded stop cut: no fault of the job, which goes back to the
		 * queue once every node is done (never before: one completion
		 * per job). qnoded's reason names the node. */
		if ((res.reason[0] ? asprintf(&j->lost, "%s", res.reason) :
				     asprintf(&j->lost, "node %s had no room for the job's files",
					      c->node->name)) < 0)
			j->lost = NULL;
		else
			j->rerun = true;
		node_signal(s, j, SIGTERM);
	} else if (status && strcmp(status, "failed") == 0 && !j->end_reason) {
		char why[sizeof(res.reason) + NODE_NAME_ROOM];

		snprintf(why, sizeof(why), "node %s could not start: %s", c->node->name,
			 res.reason[0] ? res.reason : "no reason given");
		j->end_reason = strdup(why);
		log_info("job %lld: %s", (long long)j->id, why);
		node_signal(s, j, SIGTERM);
	}
	multi_done_check(c, req_id, j);
}

/* Queues a completion for the next group commit. Only a node that runs
 * the job may report it; a report for a finished job is answered at once
 * (the node resends after a reconnect until it hears ok). */
static void done_queue(struct conn *c, long long req_id, int64_t jobid, int64_t dispatch,
		       const json_t *result)
{
	struct hctx *s = conn_ctx(c);
	struct job *j = pool_job_find(s->pool, jobid);
	struct alloc_entry *e = j ? job_entry(j, c->node->name) : NULL;
	struct job_result res;
	bool requeue;

	if (!e) {
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
	node_fault_drain(s, c->node, result);
	if (j->n_alloc > 1) {
		multi_done(c, req_id, j, e, result);
		return;
	}
	/* A launch that failed for lack of room, a node fault (its prolog,
	 * its cpuset), or one held that its node dropped before anything of
	 * it ran is no fault of the job: it goes back to the queue (qnoded
	 * or gded says so with "requeue"). */
	requeue = j->state == JOB_RUNNING && wire_bool(result, "requeue", 0);
	if (requeue && wire_bool(result, "prolog_failed", 0))
		prolog_failed(s, j);
	job_result_from_json(result, &res);
	res.times[STAMP_DISPATCH] = 0;
	/* Cancelled (server_job_cancel): the report cannot know by whom. */
	if (j->state == JOB_EXITING && j->end_reason && !res.reason[0])
		snprintf(res.reason, sizeof(res.reason), "%s", j->end_reason);
	/* A job that could not start, e.g. for a path missing on this host
	 * (the execution host is not the submit host): say where, unless
	 * qnoded's reason does already. */
	if (res.reason[0] && strcmp(wire_str(result, "status") ?: "", "failed") == 0 &&
	    !strstr(res.reason, c->node->name)) {
		char why[sizeof(res.reason) + NODE_NAME_ROOM];

		snprintf(why, sizeof(why), "on node %s: %s", c->node->name, res.reason);
		memcpy(res.reason, why, sizeof(res.reason) - 1);
		res.reason[sizeof(res.reason) - 1] = '\0';
	}
	done_pending(c, req_id, j, &res, requeue ? result : NULL);
}

/* Every node of a job across nodes is done and no report is left to
 * answer: the job is recorded (or requeued) now. */
static void multi_finish(struct hctx *s, struct job *j)
{
	struct job_result res = { .exit_status = -1 };
	char reason[sizeof(res.reason)];
	int r;

	if (j->lost && lost_requeues(j)) {
		snprintf(reason, sizeof(reason), "requeued: %s", j->lost);
		r = jobstore_job_requeue(s->store, j->id, reason);
		if (r == 0) {
			log_info("job %lld %s", (long long)j->id, reason);
			j->rerun = false;
			pool_job_release(s->pool, j);
			pool_job_state_set(s->pool, j, JOB_QUEUED);
		}
		return;
	}
	if (j->lost || !j->result) {
		res.state = j->state == JOB_EXITING ? JOB_CANCELLED : JOB_FAILED;
		snprintf(res.reason, sizeof(res.reason), "%s", j->lost ? j->lost : "no result from the primary");
	} else {
		res = *j->result;
		if (j->end_reason && j->state != JOB_EXITING) {
			res.state = JOB_FAILED;
			snprintf(res.reason, sizeof(res.reason), "%s", j->end_reason);
		} else if (j->end_reason && !res.reason[0]) {
			snprintf(res.reason, sizeof(res.reason), "%s", j->end_reason);
		}
	}
	if (j->rerun) {
		r = jobstore_job_requeue(s->store, j->id, "requeued by qrerun");
		if (r == 0) {
			j->rerun = false;
			pool_job_release(s->pool, j);
			pool_job_state_set(s->pool, j, JOB_QUEUED);
		}
		return;
	}
	r = jobstore_job_finish(s->store, j->id, &res, time_wall_ns());
	if (r == 0) {
		log_info("job %lld %s: %s", (long long)j->id, job_state_name(res.state), res.reason);
		server_job_finished(s, j, res.state);
	}
}

/* Node e of a job across nodes is gone (lost past node_timeout, or it
 * re-registered without the job): it counts as done. When the primary's
 * result is not in yet, the whole job ends for it: every other node is
 * told SIGTERM, and once their reports are in (or they are lost too) the
 * job is requeued when rerunnable, else failed with why and the node. */
static void multi_end_lost(struct hctx *s, struct job *j, struct alloc_entry *e, const char *why)
{
	bool all = true;

	/* Its report came already: nothing changes (and a completion may be
	 * queued for the job: never a second). */
	if (e->done)
		return;
	e->done = true;
	if (!j->lost && (e == j->alloc || !j->alloc[0].done) &&
	    asprintf(&j->lost, "%s %s", why, e->node ? e->node : "?") < 0)
		j->lost = NULL;
	if (j->lost)
		log_info("job %lld: %s; ending it on its other nodes", (long long)j->id, j->lost);
	node_signal(s, j, SIGTERM);
	for (unsigned i = 0; i < j->n_alloc; i++)
		all &= j->alloc[i].done;
	if (all)
		multi_finish(s, j);
	hctx_resched(s);
}

/* After a registration: jobs the store has on this node but the node does
 * not know never reached it (the node keeps a job's files until its report
 * is acknowledged), so they are requeued; exiting ones are signalled again.
 * Per allocation entry: a job across nodes whose copy here is unknown ends
 * whole. */
static void node_reconcile(struct hctx *s, struct node *n, const json_t *running, const json_t *results)
{
	struct alloc_entry *e, *next;
	struct job *j;

	for (e = pool_node_jobs(n); e; e = next) {
		next = e->nnext;
		j = e->job;
		if (json_ids_contain(running, j->id)) {
			pool_entry_claim(s->pool, e);
			/* Being deleted, its primary gone, or this node counted
			 * lost while the job ends elsewhere: its copy here ends.
			 * A send that fails closes the link (conn_close ->
			 * node_link_lost sets n->link NULL) and the loop goes on
			 * without it: qpoold crashed there (t-memprot in a
			 * starved vm-check guest, a register after a node loss). */
			if (n->link && (j->state == JOB_EXITING || e->done ||
					(j->n_alloc > 1 && e != j->alloc && j->alloc[0].done)))
				conn_send(n->link, json_pack("{s:s, s:i, s:I, s:i}", "op", "job.signal", "id", 0,
							     "jobid", (json_int_t)j->id, "signal", SIGTERM));
			continue;
		}
		/* Finished while we were apart: its report follows. */
		if (json_results_contain(results, j->id)) {
			pool_entry_claim(s->pool, e);
			continue;
		}
		/* Its server prolog runs: no node has it yet. */
		if (e->done || j->srv_prolog)
			continue;
		if (j->n_alloc > 1) {
			multi_end_lost(s, j, e, "node does not have it:");
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

			/* A failed send closed the link (n->link NULL): the
			 * stale copies are stopped when the node comes back. */
			if (n->link && (!rj || !job_entry(rj, n->name))) {
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

void op_register(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	const char *name = wire_str(msg, "name");
	const char *cpus = wire_str(msg, "cpus");
	const char *mems = wire_str(msg, "mems");
	const char *cgroup = wire_str(msg, "cgroup");
	const char *rt_reason = wire_str(msg, "rt_reason");
	const char *addr = wire_str(msg, "addr");
	json_t *running = json_object_get(msg, "running");
	json_t *results = json_object_get(msg, "results");
	json_t *topology = json_object_get(msg, "topology");
	struct node_gpu *gpus = NULL;
	unsigned n_gpus = 0;
	const char *features, *rtext;
	char fcanon[1200] = "", rcanon[NODERES_TEXT_MAX] = "";
	struct noderes res[NODERES_MAX];
	size_t n_res = 0;
	struct cpumask mask;
	struct in_addr in;
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
	/* Checked before the node is found or made: a bad entry refuses the
	 * whole registration and leaves nothing (docs/GPUS.md). */
	if (gpu_list_parse(json_object_get(msg, "gpus"), &mask, &gpus, &n_gpus, &err) < 0) {
		log_warn("node %s: registration refused: %s", name, err.text);
		conn_reply_err(c, req_id, EINVAL, "node.register: %s", err.text);
		return;
	}
	features = wire_str(msg, "features");
	if (json_object_get(msg, "features") &&
	    (!features || nodesel_features_canon(features, fcanon, sizeof(fcanon), &err) < 0)) {
		if (!features)
			snprintf(err.text, sizeof(err.text), "features must be a string");
		log_warn("node %s: registration refused: %s", name, err.text);
		conn_reply_err(c, req_id, EINVAL, "node.register: features: %s", err.text);
		free(gpus);
		return;
	}
	rtext = wire_str(msg, "resources");
	if (json_object_get(msg, "resources") &&
	    (!rtext || noderes_parse(rtext, res, NODERES_MAX, &n_res, &err) < 0 ||
	     noderes_format(res, n_res, rcanon, sizeof(rcanon)) < 0)) {
		if (!rtext)
			snprintf(err.text, sizeof(err.text), "resources must be a string");
		log_warn("node %s: registration refused: resources: %s", name, err.text);
		conn_reply_err(c, req_id, EINVAL, "node.register: resources: %s", err.text);
		free(gpus);
		return;
	}
	n = pool_node_get(s->pool, name);
	if (!n) {
		free(gpus);
		conn_reply_err(c, req_id, ENOMEM, "qpoold is out of memory");
		return;
	}
	if (n->link) {
		free(gpus);
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
	/* The features ride in the topology text the store keeps
	 * (nodes-known.c), as the GPUs do: no schema change. */
	free(n->features);
	n->features = fcanon[0] ? strdup(fcanon) : NULL;
	if (n->topology && fcanon[0])
		json_object_set_new(n->topology, "features", json_string(fcanon));
	/* So do its counted resources. */
	free(n->res);
	n->res = NULL;
	n->n_res = 0;
	if (n_res && (n->res = malloc(n_res * sizeof(*n->res)))) {
		memcpy(n->res, res, n_res * sizeof(*res));
		n->n_res = (unsigned)n_res;
	}
	if (n->topology && rcanon[0])
		json_object_set_new(n->topology, "resources", json_string(rcanon));
	n->rt = wire_bool(msg, "rt", 0);
	n->gate = wire_bool(msg, "gate", 0);
	pool_node_gpus_set(n, gpus, n_gpus);
	/* Only a dotted IPv4 that is not a loopback one (node_link_addr). */
	n->addr[0] = '\0';
	if (addr && inet_pton(AF_INET, addr, &in) == 1 && (ntohl(in.s_addr) >> 24) != 127)
		snprintf(n->addr, sizeof(n->addr), "%s", addr);
	free(n->rt_reason);
	n->rt_reason = rt_reason ? strdup(rt_reason) : NULL;
	if (n->state == NODE_DOWN)
		n->state = NODE_UP;
	/* Back after a "down" event: an "up" one. A new or changed node's
	 * row write tells "up" itself (nodes-known.c), but not this one's
	 * twice. */
	if (n->down_told) {
		watch_note_node(s, n->name, "up", "its link is back");
		n->down_told = false;
		n->up_told_now = true;
	}
	n->link = c;
	n->last_seen = time_mono_ns();
	n->down_since = 0;
	n->lost = false;
	n->back = true;
	c->node = n;
	/* What a restarted (or new active) qpoold needs to accept the jobs
	 * that fit this node before it is back: written with the group
	 * commit, and only when something changed. */
	nodes_known_note(n, c->tcp ? c->peer : "local");
	s->nodes_noted = true;
	if (!json_is_array(running))
		running = NULL;
	if (!json_is_array(results))
		results = NULL;
	node_reconcile(s, n, running, results);
	json_array_foreach(results, i, r)
		if (json_is_object(r))
			done_queue(c, 0, wire_int(r, "jobid", 0), wire_int(r, "dispatch", 0), r);
	log_info("node %s up: cpus %s, %u GPUs, cgroup %s%s", name, cpus, n->n_gpus, n->cgroup,
		 n->rt ? ", realtime" : "");
	/* The lease's epoch: a node obeys no server at an older one than it
	 * registered with (docs/HA.md, "Nodes follow the newest epoch"). */
	conn_reply_ok(c, req_id, json_pack("{s:I}", "epoch", (json_int_t)lease_epoch(s->lease)));
	hctx_resched(s);
}

void op_done(struct conn *c, const char *op, long long req_id, json_t *msg)
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
void op_exited(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	long long jobid = wire_int(msg, "jobid", 0);
	struct alloc_entry *e;
	struct job *j;

	if (jobid <= 0) {
		conn_reply_err(c, req_id, EINVAL, "job.exited needs a positive jobid");
		return;
	}
	/* Only for a job this node runs: another node cannot free its CPUs. */
	j = pool_job_find(s->pool, jobid);
	e = j ? job_entry(j, c->node->name) : NULL;
	if (e && report_current(j, wire_int(msg, "dispatch", 0)) && pool_entry_cpus_back(s->pool, e)) {
		hctx_resched(s);
		/* The primary's processes are gone: the sisters end theirs. */
		if (e == j->alloc && j->n_alloc > 1)
			sisters_end(s, j);
	}
	conn_reply_ok(c, req_id, NULL);
}

void op_heartbeat(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	conn_reply_ok(c, req_id, NULL);
}

void node_link_lost(struct hctx *s, struct conn *c)
{
	struct node *n = c->node;

	log_warn("node %s disconnected; its jobs keep running and report if it returns within %llus",
		 n->name, (unsigned long long)s->config->node_timeout);
	n->link = NULL;
	task_routes_node_gone(s, n->name);
	n->down_since = time_mono_ns();
	if (n->state == NODE_UP)
		n->state = NODE_DOWN;
	c->node = NULL;
	/* An event (docs/EVENTS.md), in a transaction of its own or the one
	 * open: not when qpoold itself stops or steps down (its links close,
	 * the nodes are not down), nor from a standby. */
	if (!server_leaving(s) && !server_standby(s) && !n->down_told) {
		watch_note_node(s, n->name, "down", "its link closed");
		n->down_told = true;
	}
}

/* The node has been unreachable for node_timeout: its jobs cannot be
 * counted on. Rerunnable ones go back to the queue, the others fail, a
 * cancelled one ends cancelled. If the node comes back, its registration
 * shows these jobs as not its own any more: it is told to kill them, and
 * their reports are acknowledged and dropped, so none is counted twice. */
static void node_lost(struct hctx *s, struct node *n)
{
	int64_t now = time_wall_ns();
	struct alloc_entry *e, *next;
	struct job *j;
	char reason[160];

	log_warn("node %s lost (unreachable for %llus)", n->name, (unsigned long long)s->config->node_timeout);
	n->lost = true;
	for (e = pool_node_jobs(n); e; e = next) {
		struct job_result res = { .exit_status = -1 };
		int r;

		next = e->nnext;
		j = e->job;
		if (j->n_alloc > 1) {
			/* Its report will not come: the whole job ends. */
			multi_end_lost(s, j, e, "lost node");
			continue;
		}
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
	hctx_resched(s);
}

void nodes_check_timeouts(struct hctx *s)
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
