/* SPDX-License-Identifier: MIT */
/* The server's prolog and epilog ([server] server_prolog, server_epilog):
 * run by the active qpoold on its loop (srvhook.c) around a job, the
 * prolog between a job's placement (committed) and its launch, the epilog
 * once its end is committed (qpool-hooks(5), docs/HOOKS.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "server-internal.h"
#include "srvhook.h"
#include "timeutil.h"

struct srvjob_run {
	struct server *server;
	int64_t id;
	unsigned seq;
};

/* The contract's document: version, event, and the job with its nodes. */
static json_t *job_input(struct server *s, const struct job *j, const char *event, const char *state)
{
	const char *user = server_user_name(&s->h, j->uid);
	json_t *nodes = json_array(), *job;

	for (unsigned i = 0; nodes && i < j->n_alloc; i++)
		json_array_append_new(nodes, json_string(j->alloc[i].node ? j->alloc[i].node : "?"));
	job = json_pack("{s:I, s:s?, s:i, s:s, s:i, s:i, s:I, s:I, s:o}", "id", (json_int_t)j->id, "user", user,
			"uid", (int)j->uid, "queue", j->queue, "ncpus", (int)j->ncpus, "ngpus", (int)j->ngpus,
			"mem", (json_int_t)j->mem, "walltime", (json_int_t)j->walltime, "nodes",
			nodes ? nodes : json_array());
	if (job && state)
		json_object_set_new(job, "state", json_string(state));
	if (job && j->array_id) {
		json_object_set_new(job, "array_id", json_integer(j->array_id));
		json_object_set_new(job, "array_index", json_integer(j->array_index));
	}
	if (!job)
		return NULL;
	return json_pack("{s:i, s:s, s:o}", "version", HOOK_CONTRACT, "event", event, "job", job);
}

/* What Slurm's PrologSlurmctld and PBS's hooks find in their environment,
 * so a site's script written for either runs as it is. */
struct job_env {
	char path[40], hook[40], id[40], uid[40], user[300], pbs[40], nodes[1024];
	char *v[8];
};

static char *const *job_env(struct server *s, const struct job *j, const char *event, struct job_env *e)
{
	const char *user = server_user_name(&s->h, j->uid);
	size_t off;
	int n = 0;

	snprintf(e->path, sizeof(e->path), "PATH=/usr/sbin:/usr/bin:/sbin:/bin");
	snprintf(e->hook, sizeof(e->hook), "QPOOL_HOOK=%s", event);
	snprintf(e->id, sizeof(e->id), "SLURM_JOB_ID=%lld", (long long)j->id);
	snprintf(e->uid, sizeof(e->uid), "SLURM_JOB_UID=%u", (unsigned)j->uid);
	snprintf(e->user, sizeof(e->user), "SLURM_JOB_USER=%s", user ? user : "");
	snprintf(e->pbs, sizeof(e->pbs), "PBS_JOBID=%lld", (long long)j->id);
	off = (size_t)snprintf(e->nodes, sizeof(e->nodes), "SLURM_JOB_NODELIST=");
	for (unsigned i = 0; i < j->n_alloc && off < sizeof(e->nodes); i++)
		off += (size_t)snprintf(e->nodes + off, sizeof(e->nodes) - off, "%s%s", i ? "," : "",
					j->alloc[i].node ? j->alloc[i].node : "?");
	e->v[n++] = e->path;
	e->v[n++] = e->hook;
	e->v[n++] = e->id;
	e->v[n++] = e->uid;
	e->v[n++] = e->user;
	e->v[n++] = e->pbs;
	e->v[n++] = e->nodes;
	e->v[n] = NULL;
	return e->v;
}

static void log_stderr(const struct hook *h, const char *what, int64_t id)
{
	for (const char *e = h->errbuf; *e;) {
		size_t k = strcspn(e, "\n");

		if (k)
			log_info("%s (job %lld): %.*s", what, (long long)id, (int)k, e);
		e += k + (e[k] == '\n');
	}
}

/* The prolog failed (or could not start): back to the queue, its nodes
 * left as they are (the fault is the server's hook, not theirs), held
 * with the reason once it failed server_prolog_retries times. */
static void prolog_failed(struct server *s, struct job *j, const char *what)
{
	char reason[160];
	bool hold;
	int r;

	/* 0 counts as 1: a job requeued for ever behind a hook that fails at
	 * once would be placed and refused in a loop. */
	j->srv_prolog_fails++;
	hold = j->srv_prolog_fails >= (s->config->server_prolog_retries ? s->config->server_prolog_retries : 1);
	snprintf(reason, sizeof(reason), "server prolog failed: %.120s", what);
	r = jobstore_begin(s->store);
	if (r == 0)
		r = jobstore_job_requeue(s->store, j->id, reason);
	if (r == 0 && hold) {
		snprintf(reason, sizeof(reason), "held: the server prolog failed %u times, last: %.100s",
			 j->srv_prolog_fails, what);
		r = jobstore_job_set_state(s->store, j->id, JOB_HELD, reason);
	}
	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0) {
		jobstore_rollback(s->store);
		/* Still placed in the store: the node's next registration
		 * requeues it (it never received it). */
		log_err("job %lld: server prolog failed (%s) and the requeue was not recorded: %s",
			(long long)j->id, what, strerror(-r));
		return;
	}
	log_warn("job %lld: server prolog failed: %s; %s (failure %u of %llu)", (long long)j->id, what,
		 hold ? "held" : "requeued", j->srv_prolog_fails,
		 (unsigned long long)s->config->server_prolog_retries);
	pool_job_release(s->pool, j);
	pool_job_state_set(s->pool, j, hold ? JOB_HELD : JOB_QUEUED);
	if (hold) {
		free(j->reason);
		j->reason = strdup(reason);
	}
	s->sched_dirty = true;
}

/* Deleted (or qrerun) while its prolog ran: it never reached a node. */
static void prolog_overtaken(struct server *s, struct job *j)
{
	struct job_result res = { .state = JOB_CANCELLED, .exit_status = -1 };
	int r;

	if (j->rerun) {
		j->rerun = false;
		r = jobstore_job_requeue(s->store, j->id, "requeued by qrerun");
		if (r == 0) {
			pool_job_release(s->pool, j);
			pool_job_state_set(s->pool, j, JOB_QUEUED);
		}
	} else {
		snprintf(res.reason, sizeof(res.reason), "cancelled while the server prolog ran");
		r = jobstore_job_finish(s->store, j->id, &res, time_wall_ns());
		if (r == 0)
			server_job_finished(&s->h, j, JOB_CANCELLED);
	}
	if (r < 0)
		log_err("job %lld: cannot record its end after the server prolog: %s", (long long)j->id, strerror(-r));
	s->sched_dirty = true;
}

/* The prolog passed: the job goes to its nodes, once this server shows it
 * still holds the lease. The prolog may have run for seconds, long enough
 * for a standby to take over and requeue the job; a renewal in a
 * transaction of its own (~0.1 ms, beside the hook's own exec of ~0.7 ms)
 * fences the launch as the dispatch commit was fenced. */
static void prolog_passed(struct server *s, struct job *j)
{
	int r = jobstore_begin(s->store);

	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0)
		jobstore_rollback(s->store);
	if (r == -ESTALE) {
		log_err("job %lld: not launched after its server prolog: another server took the lease",
			(long long)j->id);
		server_lease_refresh(s);
		return;
	}
	/* Any other failure says nothing of the lease: the placement is
	 * committed, the job goes. */
	if (r < 0)
		log_warn("job %lld: lease renewal before its launch: job store: %s", (long long)j->id, strerror(-r));
	node_launch(s, j, j->n_alloc ? j->alloc[0].where : NULL, false);
}

static void prolog_done(struct hook *h, void *arg)
{
	struct srvjob_run *run = arg;
	struct server *s = run->server;
	struct job *j = pool_job_find(s->pool, run->id);
	char what[200];

	log_stderr(h, "server prolog", run->id);
	/* Stepping down: nothing more is sent or written by this server; the
	 * next active requeues the job when its node registers. */
	if (s->stepping_down || server_standby(&s->h))
		goto done;
	if (!j || !j->srv_prolog || j->srv_prolog_seq != run->seq) {
		log_info("job %lld: server prolog ended (%s) after the job left this run", (long long)run->id,
			 hook_describe(h, what, sizeof(what)));
		goto done;
	}
	j->srv_prolog = false;
	j->srv_prolog_run = NULL;
	if (j->state == JOB_EXITING)
		prolog_overtaken(s, j);
	else if (j->state != JOB_RUNNING)
		;
	else if (h->outcome == HOOK_OK)
		prolog_passed(s, j);
	else
		prolog_failed(s, j, hook_describe(h, what, sizeof(what)));
done:
	free(run);
}

static void run_drop(void *arg)
{
	/* The loop ends (stop, step-down) while it runs: the job stays
	 * placed in the store and no node has it; the next active server
	 * requeues it when its node registers (nodes.c). */
	free(arg);
}

/* Whether a launch goes straight to the node: no server prolog to run
 * first. Either way, none runs for j yet. */
static bool launch_direct(struct server *s, struct job *j)
{
	j->srv_prolog = false;
	j->srv_prolog_run = NULL;
	return !s->hooks || !s->config->server_prolog[0];
}

bool srvjob_launch_gated(struct server *s, struct job *j, struct node *n)
{
	if (j->n_alloc != 1 || !n || !n->gate || !n->link || !launch_direct(s, j))
		return false;
	return node_launch(s, j, n, true) == 0;
}

void srvjob_launch(struct server *s, struct job *j, struct node *n)
{
	struct srvjob_run *run;
	json_t *in;
	int r = -ENOMEM;

	if (launch_direct(s, j)) {
		node_launch(s, j, n, false);
		return;
	}
	run = calloc(1, sizeof(*run));
	in = job_input(s, j, "server_prolog", NULL);
	if (run && in) {
		run->server = s;
		run->id = j->id;
		run->seq = ++j->srv_prolog_seq;
		struct job_env env;

		r = srvhooks_run(s->hooks, SRVHOOK_SERVER_PROLOG, s->config->server_prolog,
				 s->config->server_prolog_timeout, in, job_env(s, j, "server_prolog", &env),
				 prolog_done, run_drop, run);
	}
	json_decref(in);
	if (r == 0) {
		j->srv_prolog = true;
		j->srv_prolog_run = run;
		return;
	}
	free(run);
	{
		char what[120];

		snprintf(what, sizeof(what), "cannot start it: %s", strerror(-r));
		prolog_failed(s, j, what);
	}
}

void srvjob_stop(struct server *s, struct job *j)
{
	if (!j->srv_prolog || !j->srv_prolog_run)
		return;
	log_info("job %lld: %s while its server prolog runs: the prolog is stopped", (long long)j->id,
		 j->rerun ? "rerun" : "deleted");
	srvhooks_kill(s->hooks, j->srv_prolog_run);
}

static void epilog_done(struct hook *h, void *arg)
{
	int64_t *id = arg;
	char what[200];

	log_stderr(h, "server epilog", *id);
	if (h->outcome != HOOK_OK)
		log_warn("job %lld: server epilog failed: %s (the job's end stands)", (long long)*id,
			 hook_describe(h, what, sizeof(what)));
	free(id);
}

void srvjob_ended(struct server *s, struct job *j, enum job_state state)
{
	int64_t *id;
	json_t *in;
	int r = -ENOMEM;

	/* Only a job that was placed: one deleted while queued, or an
	 * array's own row, never had nodes. */
	if (!s->hooks || !s->config->server_epilog[0] || !j->n_alloc || j->array)
		return;
	id = malloc(sizeof(*id));
	in = job_input(s, j, "server_epilog", job_state_name(state));
	if (id && in) {
		*id = j->id;
		struct job_env env;

		r = srvhooks_run(s->hooks, SRVHOOK_SERVER_EPILOG, s->config->server_epilog,
				 s->config->server_epilog_timeout, in, job_env(s, j, "server_epilog", &env),
				 epilog_done, free, id);
	}
	json_decref(in);
	if (r < 0) {
		free(id);
		log_warn("job %lld: server epilog: cannot start it: %s", (long long)j->id, strerror(-r));
	}
}
