/* SPDX-License-Identifier: MIT */
/* qpoold's event-driven core: the loop (its sources and the post handler
 * that runs the group commit, commit.c, and the pass, pass.c) and the
 * set-up that gives the layers below their callbacks. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "auth.h"
#include "commit.h"
#include "pass.h"
#include "estimate.h"
#include "jobid.h"
#include "accounts.h"
#include "qos.h"
#include "resv.h"
#include "log.h"
#include "nodes-known.h"
#include "peers.h"
#include "preempt.h"
#include "server-internal.h"
#include "suspend.h"
#include "srvhook.h"
#include "timeutil.h"
#include "usage.h"
#include "transport.h"

#define TIMER_USEC 1000000      /* node timeout and stalled-client check */

/* The connection layer's callbacks (conn.c). */
static void conn_message(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	door_request(c, op, req_id, msg);
}

static void conn_closed(struct conn *c)
{
	struct server *s = c->server;

	if (c->node)
		node_link_lost(&s->h, c);
	ties_conn_closed(&s->h, c);
	watch_conn_closed(&s->h, c);
}

static int listen_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct server *s = userdata;
	bool tcp = fd == s->tcp_fd;

	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_warn("accept: %m");
			return 0;
		}
		conn_accept(s, cfd, tcp);
	}
}

/* What the parts do at a job's end (job-end.c's server_job_finished,
 * after its dependencies, before its removal from the pool). */
static void job_ended(struct server *s, struct job *j, enum job_state state)
{
	srvjob_ended(s, j, state);
	server_metrics_ended(s, j->queue, state);
	server_job_suspend_end(&s->h, j);
	usage_job_finished(&s->h, j);
}

/* What a signal to a job sets off before it goes to the nodes (node-send.c). */
static void job_signal(struct server *s, struct job *j, int sig)
{
	/* SIGTERM thaws a suspended job (gded): its suspension ends. */
	if (sig == SIGTERM && j->suspended)
		server_job_suspend_end(&s->h, j);
	/* No node has it yet: its server prolog is what runs. */
	if (j->srv_prolog && j->state == JOB_EXITING)
		srvjob_stop(s, j);
}

/* Arrays whose subjobs ended: end those with nothing left. */
static void arrays_due_check(struct server *s)
{
	for (size_t i = 0; i < s->n_array_due; i++) {
		struct job *a = pool_job_find(s->pool, s->array_due[i]);

		if (a && a->array)
			array_check_done(&s->h, a);
	}
	s->n_array_due = 0;
}

static int post_handler(sd_event_source *src, void *userdata)
{
	struct server *s = userdata;
	int r;

	if (server_standby(&s->h))
		return 0;
	if (!pending_linger(s)) {
		s->linger_since = 0;
		pending_flush(s, s->sched_dirty);
	}
	if (s->nodes_noted) {
		s->nodes_noted = false;
		r = nodes_known_flush(s->store, s->pool, time_wall_ns());
		if (r < 0)
			log_warn("job store: cannot record registered nodes (%s); a restart before their "
				 "next registration does not know them", strerror(-r));
	}
	arrays_due_check(s);
	depend_recheck(&s->h);
	if (s->sched_dirty) {
		s->sched_dirty = false;
		pass_schedule(s);
	}
	/* The fence refused a write: another server is active. */
	if (jobstore_lease_lost(s->store)) {
		server_step_down(s, "the job store refused a write (lease taken, -ESTALE)");
		return 0;
	}
	/* What this iteration committed, to the watchers. */
	watch_flush(&s->h);
	/* After the replies and launches: a checkpoint (two fsyncs, ~1 ms)
	 * delays no answer that is already out. */
	r = jobstore_checkpoint(s->store);
	if (r < 0)
		log_warn("job store: checkpoint: %s", strerror(-r));
	return 0;
}

/* The last pass was full: run another. Post sources run only after some
 * other source was dispatched, so this one marks the pass due and the post
 * handler, which runs right after it, does it with the group commit. */
static int more_handler(sd_event_source *src, void *userdata)
{
	struct server *s = userdata;

	s->sched_dirty = true;
	return 0;
}

static int timer_handler(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct server *s = userdata;

	conns_check(s);
	if (server_standby(&s->h))
		goto rearm;
	server_space_check(s);
	nodes_check_timeouts(&s->h);
	ties_check(&s->h);
	watch_prune(&s->h);
	watch_flush(&s->h);
	if (pool_deferred_due(s->pool, time(NULL)))
		s->sched_dirty = true;
	/* A preemption's wait is over: its job may take others (preempt.c),
	 * or its suspended victims are thawed, even when nothing else stirs. */
	if (s->preempt_due && time_wall_ns() >= s->preempt_due) {
		s->preempt_due = 0;
		s->sched_dirty = true;
	}
	estimates_replay(s, true);
	resv_tick(&s->h);
rearm:
	sd_event_source_set_time_relative(src, TIMER_USEC);
	sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
	return 0;
}

static int load_job(struct job *j, void *userdata)
{
	struct server *s = userdata;
	const struct queue_conf *q = config_queue(s->config, j->queue);
	int r;

	/* The store keeps a running job's CPUs (claim = cpus: SMT siblings
	 * are not kept); its reserve kind is taken back from its queue. */
	j->reserve = q ? q->reserve : QUEUE_RESERVE_NONE;
	if (j->array_spec && array_load(&s->h, j) < 0) {
		job_free(j);
		return -EINVAL;
	}
	/* Its nodes are down until they register; one that never does within
	 * twice node_timeout is lost and the job requeued or failed. Twice:
	 * after a takeover, a node whose link to the old active was cut
	 * learns it only when its own TCP_USER_TIMEOUT (node_timeout) fires,
	 * counted from the cut, and then walks its server list, each dead
	 * entry costing a connect timeout; this server's clock starts a
	 * lease later. With once, such a node came back seconds too late and
	 * its running jobs were requeued and killed (t-ha-hosts.sh, (c)). */
	/* Suspended when the last server stopped (suspend.c): its gded
	 * keeps it frozen. Its clock apart restarts from now. */
	suspend_load_state(j);
	if (j->suspended)
		j->t_suspend = time_wall_ns();
	r = pool_job_add(s->pool, j);
	/* A preemption's victim (attrs.suspended_by names the preemptor)
	 * lends its CPUs and GPUs to it again and resumes when it ends, as
	 * before. */
	if (r == 0 && j->suspended)
		suspend_loaded(&s->h, j);
	for (unsigned i = 0; r == 0 && i < j->n_alloc; i++)
		if (j->alloc[i].where && !j->alloc[i].where->down_since)
			j->alloc[i].where->down_since = time_mono_ns() +
				(int64_t)s->config->node_timeout * NSEC_PER_SEC;
	if (r == 0)
		depend_loaded(&s->h, j);

	if (r < 0)
		job_free(j);
	return r;
}

static int dir_make(const char *path, mode_t mode, struct error *err)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return error_set(err, -errno, "mkdir %s: %s", path, strerror(errno));
	if (chmod(path, mode) < 0)
		return error_set(err, -errno, "chmod %s: %s", path, strerror(errno));
	return 0;
}

static int store_file_private(const char *db, struct error *err)
{
	static const char *suffix[] = { "", "-wal", "-shm" };
	char path[PATH_MAX + 32];
	int fd;

	fd = open(db, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return error_set(err, -errno, "%s: %s", db, strerror(errno));
	close(fd);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", db, suffix[i]);
		if (chmod(path, 0600) < 0 && errno != ENOENT)
			return error_set(err, -errno, "chmod %s: %s", path, strerror(errno));
	}
	return 0;
}

static int listen_open(struct server *s, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = s->config->socket;
	char dir[PATH_MAX];
	char *slash;
	int fd, r;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return error_set(err, -errno, "mkdir %s: %s", dir, strerror(errno));
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, -errno, "socket: %s", strerror(errno));
	/* A socket file nobody answers on is stale; one that answers is another qpoold. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return error_set(err, -EADDRINUSE, "another qpoold is serving %s", path);
	}
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, -errno, "socket: %s", strerror(errno));
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || listen(fd, SOMAXCONN) < 0) {
		r = error_set(err, -errno, "listen on %s: %s", path, strerror(errno));
		close(fd);
		return r;
	}
	s->listen_fd = fd;
	return 0;
}

int server_state_load(struct server *s)
{
	int r;

	/* The known nodes first: a restarted server accepts what fits them
	 * before they register again (they are down until then). */
	r = nodes_known_load(s->store, s->pool);
	if (r == 0)
		r = jobstore_load_active(s->store, load_job, s);
	if (r == 0)
		r = server_admin_load(s, true);
	if (r == 0) {
		accounts_free(s->accounts);
		s->accounts = NULL;
		r = accounts_load(s->store, &s->accounts);
	}
	if (r == 0) {
		qos_free(s->qos);
		s->qos = NULL;
		r = qos_load(s->store, &s->qos);
	}
	if (r == 0) {
		accounts_apply(s->accounts, s->pool);
		qos_apply(s->qos, s->pool);
		r = usage_load(&s->h);
	}
	if (r == 0) {
		resvs_free(s->resvs);
		s->resvs = NULL;
		r = resvs_load(s->store, &s->resvs);
		if (r == 0)
			r = resvs_apply(s->resvs, s->pool);
		if (r == 0)
			resv_tick(&s->h);   /* one that ended while no server ran moves on now */
	}
	if (r == 0)
		array_loaded(&s->h);
	return r;
}

int server_create(sd_event *e, struct config *config, struct server **ret, struct error *err)
{
	struct server *s;
	char path[PATH_MAX + 16];
	int r;

	s = calloc(1, sizeof(*s));
	if (!s) {
		config_destroy(config);
		return error_set(err, -ENOMEM, "out of memory");
	}
	s->event = sd_event_ref(e);
	s->conn_message_f = conn_message;
	s->conn_closed_f = conn_closed;
	s->job_ended_f = job_ended;
	s->job_signal_f = job_signal;
	s->state_load_f = server_state_load;
	s->filter_pass_f = request_run;
	s->config = config;
	/* Until the store's is read at the takeover (server-lease.c). */
	jobid_server_name(config->server_name, s->pool_name, sizeof(s->pool_name));
	s->listen_fd = -1;
	s->tcp_fd = -1;
	s->pending_tail = &s->pending;
	/* One fd per client or node: as many as the hard limit allows. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
			(void)getrlimit(RLIMIT_NOFILE, &rl);
			s->max_conns = rl.rlim_cur > 128 ? (unsigned)(rl.rlim_cur - 64) : 64;
		} else {
			s->max_conns = 960;
		}
		s->root_reserve = conns_root_reserve(s->max_conns);
	}
	/* A hook no one may run is refused here, before anything is opened:
	 * one line, and qpoold does not start. */
	r = srvhooks_config_check(config, err);
	if (r < 0)
		goto done;
	r = peers_create(&s->peers);
	if (r == 0)
		r = gate_create(&s->gate);
	if (r == 0)
		r = srvhooks_create(e, &s->hooks);
	if (r < 0) {
		error_set(err, r, "out of memory");
		goto done;
	}

	/* 0711: users reach their own job files by name, list nothing. */
	r = dir_make(config->state_dir, 0711, err);
	if (r < 0)
		goto done;
	if (config->store == CONFIG_STORE_POSTGRESQL) {
		r = jobstore_open(JOBSTORE_POSTGRESQL, config->store_dsn, &s->store, err);
	} else {
		snprintf(path, sizeof(path), "%s/qpool.db", config->state_dir);
		/* The store holds every user's scripts and environments, and a
		 * user who knows its name can open it despite the 0711
		 * directory: 0600. SQLite gives -wal and -shm the mode of the
		 * database file. */
		r = store_file_private(path, err);
		if (r == 0)
			r = jobstore_open(JOBSTORE_SQLITE, path, &s->store, err);
	}
	if (r < 0)
		goto done;
	r = pool_create(&s->pool);
	if (r == 0)
		usage_configure(&s->h);
	if (r < 0) {
		error_set(err, r, "out of memory");
		goto done;
	}
	/* Jobs and settings are loaded when this server takes the lease
	 * (server_state_load); until then it is a standby. */
	server_space_check(s);
	r = listen_open(s, err);
	if (r < 0)
		goto done;
	if (config->listen[0]) {
		/* Every TCP peer authenticates with munged: without one, no
		 * TCP peer could ever be served. */
		r = auth_probe(config->munge_socket, err);
		if (r == 0)
			r = transport_listen_tcp(config->listen, &s->tcp_fd, err);
		if (r < 0)
			goto done;
		r = sd_event_add_io(e, &s->tcp_src, s->tcp_fd, EPOLLIN, listen_io, s);
		if (r < 0) {
			error_set(err, r, "event loop: %s", strerror(-r));
			goto done;
		}
	}
	r = sd_event_add_io(e, &s->listen_src, s->listen_fd, EPOLLIN, listen_io, s);
	if (r >= 0)
		r = sd_event_add_post(e, &s->post_src, post_handler, s);
	if (r >= 0)
		r = sd_event_add_defer(e, &s->more_src, more_handler, s);
	if (r >= 0)
		r = sd_event_source_set_enabled(s->more_src, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_time_relative(e, &s->timer_src, CLOCK_MONOTONIC, TIMER_USEC, 0, timer_handler, s);
	/* 1 us accuracy: sd-event's default (0) would let it slip 250 ms. */
	if (r >= 0)
		r = sd_event_add_time_relative(e, &s->linger_src, CLOCK_MONOTONIC, LINGER_NS / 1000, 1,
					       pending_linger_handler, s);
	if (r >= 0)
		r = sd_event_source_set_enabled(s->linger_src, SD_EVENT_OFF);
	if (r < 0) {
		error_set(err, r, "event loop: %s", strerror(-r));
		goto done;
	}
	/* Before the lease: a server that cannot serve the metrics it was
	 * told to never becomes the active one (docs/METRICS.md). */
	r = server_metrics_start(s, err);
	if (r < 0)
		goto done;
	r = server_lease_start(s, err);
done:
	if (r < 0) {
		server_destroy(s);
		return r;
	}
	*ret = s;
	return 0;
}

void server_destroy(struct server *s)
{
	if (!s)
		return;
	/* Node events noted before the stop are kept (the lease still held). */
	watch_notes_flush(&s->h);
	s->stopping = true;
	/* Hooks in flight are killed, their requests never committed. */
	srvhooks_destroy(s->hooks);
	s->hooks = NULL;
	/* Replies that wait for a commit: commit them now, so nothing acknowledged is lost. */
	pending_flush(s, false);
	/* A clean stop hands the lease on at once. */
	server_lease_stop(s);
	/* Completions still without room: their nodes send them again. */
	for (struct pending *p = s->retry, *next; p; p = next) {
		next = p->next;
		conn_unref(p->conn);
		json_decref(p->strings);
		nodesel_destroy(p->sel);
		free(p->gpu_model);
		free(p);
	}
	s->retry = NULL;
	free(s->array_due);
	while (s->conns)
		conn_close(s->conns);
	server_metrics_stop(s);
	accounts_free(s->accounts);
	qos_free(s->qos);
	resvs_free(s->resvs);
	sd_event_source_disable_unref(s->listen_src);
	sd_event_source_disable_unref(s->tcp_src);
	if (s->tcp_fd >= 0)
		close(s->tcp_fd);
	sd_event_source_disable_unref(s->post_src);
	sd_event_source_disable_unref(s->more_src);
	sd_event_source_disable_unref(s->timer_src);
	sd_event_source_disable_unref(s->linger_src);
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		unlink(s->config->socket);
	}
	task_routes_destroy(&s->h);
	ties_destroy(&s->h);
	watch_destroy(&s->h);
	depend_destroy(&s->h);
	pool_destroy(s->pool);
	peers_destroy(s->peers);
	gate_destroy(s->gate);
	jobstore_close(s->store);
	config_destroy(s->config);
	sd_event_unref(s->event);
	free(s);
}
