/* SPDX-License-Identifier: MIT */
/* qpool.conf parsing over inih, with a line-counting reader for file:line errors. */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gpu.h"
#include "noderes.h"
#include "nodesel.h"
#include "parse.h"
#include "transport.h"

enum key_type {
	KEY_PATH,
	KEY_UINT,
	KEY_INT,
	KEY_SIZE,
	KEY_DURATION,
	KEY_BOOL,
	KEY_RESERVE,
	KEY_RT_POLICY,
	KEY_GPU_LOCALITY,
	KEY_ORDER,
	KEY_PREEMPT_MODE,
	KEY_QUEUE_LIST,
	KEY_MEM_PER_CPU,
	KEY_CGROUP_PATH,
	KEY_NAME,
	KEY_ADDR,
	KEY_STORE,
	KEY_TEXT,
	KEY_ADDRS,
	KEY_GPUS,
	KEY_FEATURES,
	KEY_RESOURCES,
	KEY_HOOK_FAILURE,
};

enum key_section {
	SEC_SERVER,
	SEC_NODE,
	SEC_QUEUE,
};

struct key {
	enum key_section section;
	const char *name;
	enum key_type type;
	size_t offset;          /* in struct config or struct queue_conf */
	const char *def;        /* default, parsed like a value from the file */
	const char *doc;
};

#define S(field) offsetof(struct config, field)
#define Q(field) offsetof(struct queue_conf, field)

/* Every key, once. qpool.conf(5) documents the same table. */
static const struct key keys[] = {
	{ SEC_SERVER, "state_dir", KEY_PATH, S(state_dir), "/var/lib/qpool", "job store, spool and node job directories" },
	{ SEC_SERVER, "store", KEY_STORE, S(store), "sqlite", "where the job store lives: sqlite (state_dir/qpool.db) | postgresql (store_dsn)" },
	{ SEC_SERVER, "store_dsn", KEY_TEXT, S(store_dsn), "", "libpq connection string of the store (store = postgresql), e.g. host=db1,db2 dbname=qpool target_session_attrs=read-write" },
	{ SEC_SERVER, "socket", KEY_PATH, S(socket), "/run/qpool/qpoold.sock", "Unix socket of qpoold" },
	{ SEC_SERVER, "listen", KEY_ADDR, S(listen), "", "ADDR:PORT qpoold also listens on, TCP with MUNGE ([ADDR]:PORT for IPv6; empty: the socket only)" },
	{ SEC_SERVER, "metrics_listen", KEY_ADDR, S(metrics_listen), "", "ADDR:PORT qpoold serves Prometheus metrics at, plain HTTP GET /metrics ([ADDR]:PORT for IPv6; empty: off)" },
	{ SEC_SERVER, "server", KEY_ADDRS, S(server), "", "HOST:PORT[,HOST:PORT...] nodes and commands reach qpoold at, tried in turn, TCP with MUNGE (a path: a Unix socket; empty: the socket); QPOOL_SERVER wins" },
	{ SEC_SERVER, "advertise", KEY_ADDR, S(advertise), "", "HOST:PORT this qpoold names itself by in the lease when active (empty: host name and listen's port, or the socket)" },
	{ SEC_SERVER, "server_id", KEY_NAME, S(server_id), "", "this qpoold's id in the lease; a restart with the same id takes its own lease back at once (empty: host name and socket)" },
	{ SEC_SERVER, "lease_time", KEY_DURATION, S(lease_time), "3", "seconds an active server's lease runs unrenewed before a standby takes over" },
	{ SEC_SERVER, "lease_renew", KEY_DURATION, S(lease_renew), "1", "seconds between an active server's lease renewals (less than lease_time)" },
	{ SEC_SERVER, "munge_socket", KEY_PATH, S(munge_socket), "", "socket of munged (empty: munge's default)" },
	{ SEC_SERVER, "heartbeat_interval", KEY_DURATION, S(heartbeat_interval), "5", "seconds between node heartbeats" },
	{ SEC_SERVER, "node_timeout", KEY_DURATION, S(node_timeout), "30", "seconds of silence before a node is down" },
	{ SEC_SERVER, "kill_grace", KEY_DURATION, S(kill_grace), "10", "seconds from SIGTERM to SIGKILL on qdel and walltime" },
	{ SEC_SERVER, "max_conns_per_user", KEY_UINT, S(max_conns_per_user), "256", "open connections one user may hold (root: no cap; 0: no cap)" },
	{ SEC_SERVER, "max_unauth_conns", KEY_UINT, S(max_unauth_conns), "256", "TCP connections awaiting their credential, in all (their own budget, never users' slots)" },
	{ SEC_SERVER, "max_unauth_conns_per_addr", KEY_UINT, S(max_unauth_conns_per_addr), "32", "TCP connections awaiting their credential from one address" },
	{ SEC_SERVER, "event_retention", KEY_DURATION, S(event_retention), "168:00:00", "how long job and node events are kept for watchers (qstat --follow, qwait); 0: the last one only" },
	{ SEC_SERVER, "fairshare_halflife", KEY_DURATION, S(fairshare_halflife), "168:00:00", "time in which a job's use counts for half in fair share (queues with order = fairshare); more than 0" },
	{ SEC_SERVER, "fairshare_gpu_weight", KEY_UINT, S(fairshare_gpu_weight), "0", "CPUs a GPU counts for in a job's use (0: GPUs count nothing)" },
	{ SEC_SERVER, "estimate_interval", KEY_DURATION, S(estimate_interval), "10", "least seconds between two replays that give waiting jobs their estimated start (docs/ESTIMATES.md; 0: after every pass)" },
	{ SEC_SERVER, "estimate_depth", KEY_UINT, S(estimate_depth), "2000", "waiting jobs one replay estimates, in the order the pass takes them (those beyond show N/A; 0: none)" },
	{ SEC_SERVER, "watch_buffer", KEY_SIZE, S(watch_buffer), "4M", "events a watcher may leave unread before it is dropped (it resumes from its cursor)" },
	{ SEC_SERVER, "idle_timeout", KEY_DURATION, S(idle_timeout), "60", "seconds a client connection may stay idle (0: no limit; nodes: exempt)" },
	{ SEC_SERVER, "max_queued", KEY_UINT, S(max_queued), "200000", "queued and held jobs in the pool (0: no limit)" },
	{ SEC_SERVER, "mem_per_cpu_default", KEY_MEM_PER_CPU, S(mem_per_cpu_default), "auto", "auto | SIZE | none: memory per CPU of a job that asks for none, counted on its node and its limit (auto: the smallest node offer per CPU; none: neither)" },
	{ SEC_SERVER, "max_queued_per_user", KEY_UINT, S(max_queued_per_user), "20000", "queued and held jobs of one user, all queues (0: no limit)" },
	{ SEC_SERVER, "state_min_free", KEY_SIZE, S(state_min_free), "16M", "free space in state_dir below which qsub is refused and dispatch waits" },
	{ SEC_SERVER, "name", KEY_NAME, S(server_name), "", "server name in job ids (12.NAME) as PBS prints them (empty: the short host name)" },
	{ SEC_SERVER, "sendmail", KEY_PATH, S(sendmail), "", "mail transfer agent for qsub -m (e.g. /usr/sbin/sendmail; empty: mail is off)" },
	{ SEC_SERVER, "submit_filter", KEY_PATH, S(submit_filter), "", "hook qpoold runs on each submit, alter and move before it is committed: accepts, rejects or changes the request (qpool-hooks(5); empty: none)" },
	{ SEC_SERVER, "submit_filter_timeout", KEY_DURATION, S(submit_filter_timeout), "5", "seconds the submit filter may run before it is killed and submit_filter_failure applies" },
	{ SEC_SERVER, "submit_filter_failure", KEY_HOOK_FAILURE, S(submit_filter_failure), "reject", "reject | accept: what a submit filter that times out, dies or prints nonsense does to the request (one that exits non-zero always rejects)" },
	{ SEC_SERVER, "server_prolog", KEY_PATH, S(server_prolog), "", "hook the active qpoold runs once a job is placed, before it is sent to its nodes; failure requeues the job, no node is drained (qpool-hooks(5); empty: none)" },
	{ SEC_SERVER, "server_prolog_timeout", KEY_DURATION, S(server_prolog_timeout), "30", "seconds the server prolog may run before it is killed and the job requeued" },
	{ SEC_SERVER, "server_prolog_retries", KEY_UINT, S(server_prolog_retries), "3", "server prolog failures of one job (since qpoold started) after which it is held with the reason instead of requeued (0 counts as 1)" },
	{ SEC_SERVER, "server_epilog", KEY_PATH, S(server_epilog), "", "hook the active qpoold runs after a job's end is committed; a failure is logged with the job id (qpool-hooks(5); empty: none)" },
	{ SEC_SERVER, "server_epilog_timeout", KEY_DURATION, S(server_epilog_timeout), "30", "seconds the server epilog may run before it is killed" },
	{ SEC_NODE, "cgroup_root", KEY_PATH, S(cgroup_root), "/sys/fs/cgroup", "where the cgroup hierarchies are mounted" },
	{ SEC_NODE, "gded", KEY_PATH, S(gded), "", "path of the gded wrapper (empty: next to qnoded)" },
	{ SEC_NODE, "cgroup_parent", KEY_CGROUP_PATH, S(cgroup_parent), "qpool", "the pool's cgroup below each hierarchy's root; unique per pool on a host" },
	{ SEC_NODE, "node_pids_max", KEY_UINT, S(node_pids_max), "0", "most tasks in a node's cgroup, all jobs together (0: 3/4 of kernel.pid_max)" },
	{ SEC_NODE, "mem_reserve", KEY_SIZE, S(mem_reserve), "512M", "memory of a node kept from its jobs, for the system (node group limit = memory - reserve)" },
	{ SEC_NODE, "tmpdir", KEY_PATH, S(tmpdir), "/var/tmp", "where each job's private TMPDIR is made (pbs.ID.SERVER, removed at the end)" },
	{ SEC_NODE, "memcg_reclaim_threshold", KEY_UINT, S(memcg_reclaim_threshold), "4096", "cgroup v1: memory cgroups on the host, dying ones included, from which a job's page cache is reclaimed before its group is removed (0: always)" },
	{ SEC_NODE, "gpus", KEY_GPUS, S(gpus), "auto", "the node's GPUs: device files (globs allowed) separated by blanks, MODEL:FILE[,FILE...] to name their model, none, or auto (hwloc's)" },
	{ SEC_NODE, "resources", KEY_RESOURCES, S(resources), "", "the node's counted resources, NAME:COUNT or NAME:SIZE (e.g. scratch:800G nvme:2), asked for per node with --gres=nvme:1, --tmp, select=...:nvme=1" },
	{ SEC_NODE, "features", KEY_FEATURES, S(features), "", "the node's features, comma-separated (e.g. ib,bigmem,model=skylake), matched by -C, select=...:bigmem=true, nodes=1:ppn=2:ib" },
	{ SEC_NODE, "jobs_tmpfs", KEY_BOOL, S(jobs_tmpfs), "yes", "mount a tmpfs on the node's jobs directory (its job files in memory; results not yet reported after a second copied to disk)" },
	{ SEC_NODE, "prolog", KEY_PATH, S(prolog), "", "a site's hook run as root on each node of a job before its first instruction (qpool-hooks(5)); failing: the job goes back to the queue and the node is drained" },
	{ SEC_NODE, "epilog", KEY_PATH, S(epilog), "", "a site's hook run as root on each node of a job after its last process (qpool-hooks(5)); failing: the node is drained" },
	{ SEC_NODE, "prolog_timeout", KEY_DURATION, S(prolog_timeout), "60", "seconds the prolog may take before it is killed (and has failed)" },
	{ SEC_NODE, "prolog_failures_max", KEY_UINT, S(prolog_failures_max), "3", "node prolog failures of one job after which qpoold holds it rather than requeue it again (0: requeued for ever)" },
	{ SEC_NODE, "epilog_timeout", KEY_DURATION, S(epilog_timeout), "60", "seconds the epilog may take before it is killed (and has failed)" },
	{ SEC_NODE, "health_check", KEY_PATH, S(health_check), "", "a site's node health check (LBNL NHC, qpool-hooks(5)) qnoded runs at start and every health_check_interval; failing: the node is drained, passing again: resumed" },
	{ SEC_NODE, "health_check_interval", KEY_DURATION, S(health_check_interval), "60", "seconds between two runs of the health check" },
	{ SEC_NODE, "health_check_timeout", KEY_DURATION, S(health_check_timeout), "60", "seconds the health check may take before it is killed (and has failed)" },
	{ SEC_QUEUE, "default", KEY_BOOL, Q(is_default), "no", "takes jobs submitted without -q" },
	{ SEC_QUEUE, "enabled", KEY_BOOL, Q(enabled), "yes", "accepts submissions" },
	{ SEC_QUEUE, "started", KEY_BOOL, Q(started), "yes", "dispatches jobs" },
	{ SEC_QUEUE, "priority", KEY_INT, Q(priority), "0", "queues with higher priority are served first" },
	{ SEC_QUEUE, "ncpus", KEY_UINT, Q(ncpus), "0", "multiN queue: every job gets exactly this many CPUs (0: not multiN)" },
	{ SEC_QUEUE, "ncpus_default", KEY_UINT, Q(ncpus_default), "1", "CPUs of a job that asks for none" },
	{ SEC_QUEUE, "ncpus_max", KEY_UINT, Q(ncpus_max), "0", "most CPUs a job may ask for (0: a node's CPUs)" },
	{ SEC_QUEUE, "mem_default", KEY_SIZE, Q(mem_default), "0", "memory of a job that asks for none, counted and its limit (unset: mem_per_cpu_default; 0 written: none, neither counted nor limited)" },
	{ SEC_QUEUE, "mem_per_cpu_default", KEY_MEM_PER_CPU, Q(mem_per_cpu_default), "", "auto | SIZE | none: memory per CPU of a job that asks for none, counted and its limit (unset: the server's)" },
	{ SEC_QUEUE, "mem_max", KEY_SIZE, Q(mem_max), "0", "most memory a job may ask for (0: no limit)" },
	{ SEC_QUEUE, "walltime_default", KEY_DURATION, Q(walltime_default), "01:00:00", "walltime of a job that asks for none" },
	{ SEC_QUEUE, "walltime_max", KEY_DURATION, Q(walltime_max), "0", "longest walltime a job may ask for (0: no limit)" },
	{ SEC_QUEUE, "reserve", KEY_RESERVE, Q(reserve), "none", "none | exclusive | realtime" },
	{ SEC_QUEUE, "rt_policy", KEY_RT_POLICY, Q(rt_policy), "fifo", "fifo | rr (reserve = realtime)" },
	{ SEC_QUEUE, "rt_priority", KEY_UINT, Q(rt_priority), "10", "1-99 (reserve = realtime)" },
	{ SEC_QUEUE, "smt", KEY_BOOL, Q(smt), "no", "allow several hardware threads of one core" },
	{ SEC_QUEUE, "max_running", KEY_UINT, Q(max_running), "0", "most running jobs in the queue (0: no limit)" },
	{ SEC_QUEUE, "max_running_per_user", KEY_UINT, Q(max_running_per_user), "0", "most running jobs of one user (0: no limit)" },
	{ SEC_QUEUE, "max_cpus_per_user", KEY_UINT, Q(max_cpus_per_user), "0", "most CPUs one user's running jobs hold in the queue (0: no limit)" },
	{ SEC_QUEUE, "max_gpus_per_user", KEY_UINT, Q(max_gpus_per_user), "0", "most GPUs one user's running jobs hold in the queue (0: no limit)" },
	{ SEC_QUEUE, "strict", KEY_BOOL, Q(strict), "no", "a job that cannot fit blocks the jobs behind it" },
	{ SEC_QUEUE, "rerunnable", KEY_BOOL, Q(rerunnable), "yes", "default of qsub -r: requeue when a node is lost" },
	{ SEC_QUEUE, "max_queued", KEY_UINT, Q(max_queued), "0", "queued and held jobs in the queue (0: no limit)" },
	{ SEC_QUEUE, "max_queued_per_user", KEY_UINT, Q(max_queued_per_user), "0", "queued and held jobs of one user in the queue (0: no limit)" },
	{ SEC_QUEUE, "max_ngpus", KEY_UINT, Q(max_ngpus), "0", "most GPUs a job may ask for, all its nodes together (0: no limit)" },
	{ SEC_QUEUE, "gpu_locality", KEY_GPU_LOCALITY, Q(gpu_locality), "prefer", "prefer | require: a GPU job's CPUs close to its GPUs (require: it waits for them)" },
	{ SEC_QUEUE, "preempts", KEY_QUEUE_LIST, Q(preempts), "", "queues whose running jobs this queue's waiting jobs may preempt, comma-separated (each of lower priority)" },
	{ SEC_QUEUE, "preempt_mode", KEY_PREEMPT_MODE, Q(preempt_mode), "requeue", "requeue | cancel | suspend: what a job of this queue preempted becomes" },
	{ SEC_QUEUE, "preempt_min_runtime", KEY_DURATION, Q(preempt_min_runtime), "0", "how long a job of this queue runs before it may be preempted" },
	{ SEC_QUEUE, "preempt_grace", KEY_DURATION, Q(preempt_grace), "0", "time from a preempted job's notice signal (-l signal=, --signal) to its SIGTERM (0: SIGTERM at once)" },
	{ SEC_QUEUE, "order", KEY_ORDER, Q(order), "round_robin", "round_robin | fairshare: whose job goes next (fairshare: the user with the least decayed use for its share, all its jobs first; round_robin's turns break ties)" },
	{ SEC_QUEUE, "backfill_depth", KEY_UINT, Q(backfill_depth), "1", "waiting jobs of the queue that get a reservation in each pass (EASY: 1, the first that cannot start; 0 counts as 1)" },
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

static const char *reserve_names[] = { "none", "exclusive", "realtime" };
static const char *rt_policy_names[] = { "fifo", "rr" };
static const char *gpu_locality_names[] = { "prefer", "require" };
static const char *order_names[] = { "round_robin", "fairshare" };
static const char *preempt_mode_names[] = { "requeue", "cancel", "suspend" };
static const char *hook_failure_names[] = { "reject", "accept" };
static const char *store_names[] = { "sqlite", "postgresql" };

struct parse_state {
	struct config *c;
	FILE *file;
	int line;
	int err_line;
	struct error *err;
	int r;
	unsigned char seen[N_KEYS];  /* for [server]/[node]: set once */
	struct queue_conf *queue;    /* current [queue NAME] section */
	char section[128];
};

/* A cgroup path below a hierarchy's root: "qpool", "qpool-test/t1". Each
 * component 1-63 of [A-Za-z0-9._-], not starting with '.' (the realtime
 * group ".rt" and "." / "..") or '-'. */
static int cgroup_path_check(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= 256 || s[0] == '/' || s[n - 1] == '/')
		return -EINVAL;
	for (const char *p = s; *p; ) {
		size_t len = strcspn(p, "/");

		if (len == 0 || len > 63 || p[0] == '.' || p[0] == '-')
			return -EINVAL;
		for (size_t i = 0; i < len; i++)
			if (!isalnum((unsigned char)p[i]) && !strchr("._-", p[i]))
				return -EINVAL;
		p += len;
		if (*p == '/')
			p++;
	}
	return 0;
}

/* A word of [node] gpus that is not a path: MODEL:FILE[,FILE...]. */
static int gpus_word_check(const char *key, const char *value, const char *p, size_t len, struct error *err)
{
	const char *colon = memchr(p, ':', len);
	char model[GPU_MODEL_MAX];
	struct error why;

	if (!colon)
		return error_set(err, -EINVAL, "%s = %s: %.*s is not an absolute path (or MODEL:PATH, auto, none)",
				 key, value, (int)(len > 64 ? 64 : len), p);
	if (gpu_model_canon(p, (size_t)(colon - p), model, &why) < 0)
		return error_set(err, -EINVAL, "%s: %.*s: %s", key, (int)(len > 64 ? 64 : len), p, why.text);
	for (const char *f = colon + 1; f <= p + len; ) {
		size_t flen = strcspn(f, ", \t");

		if (f + flen > p + len)
			flen = (size_t)(p + len - f);
		if (flen == 0 || *f != '/')
			return error_set(err, -EINVAL, "%s: %.*s: after %s: come absolute paths, comma-separated",
					 key, (int)(len > 64 ? 64 : len), p, model);
		f += flen + 1;
	}
	return 0;
}

static int key_set(void *base, const struct key *k, const char *value, struct error *err)
{
	char *dst = (char *)base + k->offset;
	uint64_t u;
	bool b;
	int r;

	switch (k->type) {
	case KEY_PATH:
		if (strlen(value) >= PATH_MAX)
			return error_set(err, -ENAMETOOLONG, "%s: path too long", k->name);
		if (value[0] && value[0] != '/')
			return error_set(err, -EINVAL, "%s = %s: not an absolute path", k->name, value);
		strcpy(dst, value);
		return 0;
	case KEY_UINT:
	case KEY_INT: {
		const char *s = value;
		bool neg = k->type == KEY_INT && *s == '-';
		char *end;

		if (neg)
			s++;
		if (!isdigit((unsigned char)*s))
			return error_set(err, -EINVAL, "%s = %s: not a number", k->name, value);
		errno = 0;
		u = strtoull(s, &end, 10);
		if (*end || errno || u > INT64_MAX)
			return error_set(err, -EINVAL, "%s = %s: not a number", k->name, value);
		if (k->type == KEY_INT)
			*(int64_t *)dst = neg ? -(int64_t)u : (int64_t)u;
		else
			*(uint64_t *)dst = u;
		return 0;
	}
	case KEY_SIZE:
		r = size_parse(value, &u);
		if (r < 0)
			return error_set(err, r, "%s = %s: not a size (e.g. 512M, 8G)", k->name, value);
		*(uint64_t *)dst = u;
		return 0;
	case KEY_DURATION:
		r = duration_parse(value, &u);
		if (r < 0)
			return error_set(err, r, "%s = %s: not a duration (SS, MM:SS or HH:MM:SS)", k->name, value);
		*(uint64_t *)dst = u;
		return 0;
	case KEY_BOOL:
		r = bool_parse(value, &b);
		if (r < 0)
			return error_set(err, r, "%s = %s: not yes or no", k->name, value);
		*(bool *)dst = b;
		return 0;
	case KEY_RESERVE:
		for (size_t i = 0; i < 3; i++)
			if (strcmp(value, reserve_names[i]) == 0) {
				*(enum queue_reserve *)dst = (enum queue_reserve)i;
				return 0;
			}
		return error_set(err, -EINVAL, "%s = %s: not none, exclusive or realtime", k->name, value);
	case KEY_CGROUP_PATH:
		r = cgroup_path_check(value);
		if (r < 0)
			return error_set(err, r, "%s = %s: a relative path of names of A-Z a-z 0-9 . _ -, "
					 "none starting with . or -", k->name, value);
		strcpy(dst, value);
		return 0;
	case KEY_RT_POLICY:
		for (size_t i = 0; i < 2; i++)
			if (strcmp(value, rt_policy_names[i]) == 0) {
				*(enum queue_rt_policy *)dst = (enum queue_rt_policy)i;
				return 0;
			}
		return error_set(err, -EINVAL, "%s = %s: not fifo or rr", k->name, value);
	case KEY_GPU_LOCALITY:
		for (size_t i = 0; i < 2; i++)
			if (strcmp(value, gpu_locality_names[i]) == 0) {
				*(enum queue_gpu_locality *)dst = (enum queue_gpu_locality)i;
				return 0;
			}
		return error_set(err, -EINVAL, "%s = %s: not prefer or require", k->name, value);
	case KEY_PREEMPT_MODE:
		for (size_t i = 0; i < 3; i++)
			if (strcmp(value, preempt_mode_names[i]) == 0) {
				*(enum queue_preempt_mode *)dst = (enum queue_preempt_mode)i;
				return 0;
			}
		return error_set(err, -EINVAL, "%s = %s: not requeue, cancel or suspend", k->name, value);
	case KEY_QUEUE_LIST:
		if (strlen(value) >= 256)
			return error_set(err, -ENAMETOOLONG, "%s: longer than 255 characters", k->name);
		strcpy(dst, value);
		return 0;
	case KEY_ORDER:
		for (size_t i = 0; i < 2; i++)
			if (strcmp(value, order_names[i]) == 0) {
				*(enum queue_order *)dst = (enum queue_order)i;
				return 0;
			}
		return error_set(err, -EINVAL, "%s = %s: not round_robin or fairshare", k->name, value);
	case KEY_HOOK_FAILURE:
		for (size_t i = 0; i < 2; i++)
			if (strcmp(value, hook_failure_names[i]) == 0) {
				*(enum config_hook_failure *)dst = (enum config_hook_failure)i;
				return 0;
			}
		return error_set(err, -EINVAL, "%s = %s: not reject or accept", k->name, value);
	case KEY_MEM_PER_CPU:
		/* "" is a queue's unset key: the server's applies. */
		if (!*value || strcmp(value, "auto") == 0) {
			*(uint64_t *)dst = *value ? MEM_PER_CPU_AUTO : MEM_PER_CPU_INHERIT;
			return 0;
		}
		if (strcmp(value, "none") == 0) {
			*(uint64_t *)dst = 0;
			return 0;
		}
		r = size_parse(value, &u);
		if (r < 0 || u == 0 || u >= MEM_PER_CPU_INHERIT)
			return error_set(err, r < 0 ? r : -EINVAL, "%s = %s: not auto, none or a size (e.g. 2G)",
					 k->name, value);
		*(uint64_t *)dst = u;
		return 0;
	case KEY_NAME:
		if (strlen(value) >= CONFIG_NAME_MAX)
			return error_set(err, -ENAMETOOLONG, "%s: longer than %d characters", k->name,
					 CONFIG_NAME_MAX - 1);
		for (const char *p = value; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
				return error_set(err, -EINVAL, "%s = %s: letters, digits, '-', '_' and '.' only",
						 k->name, value);
		strcpy(dst, value);
		return 0;
	case KEY_STORE:
		for (size_t i = 0; i < 2; i++)
			if (strcmp(value, store_names[i]) == 0) {
				*(enum config_store *)dst = (enum config_store)i;
				return 0;
			}
		return error_set(err, -EINVAL, "%s = %s: not sqlite or postgresql", k->name, value);
	case KEY_TEXT:
		if (strlen(value) >= PATH_MAX)
			return error_set(err, -ENAMETOOLONG, "%s: longer than %d characters", k->name, PATH_MAX - 1);
		strcpy(dst, value);
		return 0;
	case KEY_ADDR:
		if (strlen(value) >= PATH_MAX)
			return error_set(err, -ENAMETOOLONG, "%s: address too long", k->name);
		if (value[0]) {
			struct error e;

			r = transport_addr_check(value, &e);
			if (r < 0)
				return error_set(err, r, "%s = %s", k->name, e.text);
		}
		strcpy(dst, value);
		return 0;
	case KEY_ADDRS:
		if (strlen(value) >= PATH_MAX)
			return error_set(err, -ENAMETOOLONG, "%s: server list too long", k->name);
		if (value[0]) {
			struct transport_servers list;
			struct error e;

			/* e names the entry, or the list for its shape. */
			r = transport_servers_parse(value, &list, &e);
			if (r < 0)
				return error_set(err, r, "%s: %s", k->name, e.text);
		}
		strcpy(dst, value);
		return 0;
	case KEY_FEATURES: {
		struct error why;

		if (nodesel_features_canon(value, dst, sizeof(((struct config *)0)->features), &why) < 0)
			return error_set(err, -EINVAL, "%s = %s: %s", k->name, value, why.text);
		return 0;
	}
	case KEY_RESOURCES: {
		struct noderes res[NODERES_MAX];
		struct error why;
		size_t n;

		if (noderes_parse(value, res, NODERES_MAX, &n, &why) < 0)
			return error_set(err, -EINVAL, "%s = %s: %s", k->name, value, why.text);
		if (noderes_format(res, n, dst, sizeof(((struct config *)0)->resources)) < 0)
			return error_set(err, -EINVAL, "%s = %s: too long", k->name, value);
		return 0;
	}
	case KEY_GPUS:
		/* Globs are qnoded's to expand (its host's /dev): here only
		 * the shape, so qpoold --check-config catches a typo too. */
		if (strlen(value) >= PATH_MAX)
			return error_set(err, -ENAMETOOLONG, "%s: longer than %d characters", k->name, PATH_MAX - 1);
		if (strcmp(value, "auto") != 0 && strcmp(value, "none") != 0) {
			size_t words = 0;

			for (const char *p = value; *p; ) {
				size_t len;

				p += strspn(p, " \t");
				len = strcspn(p, " \t");
				if (len == 0)
					break;
				if (*p != '/' && gpus_word_check(k->name, value, p, len, err) < 0)
					return -EINVAL;
				words++;
				p += len;
			}
			if (words == 0)
				return error_set(err, -EINVAL, "%s: empty (say none for no GPUs)", k->name);
		}
		strcpy(dst, value);
		return 0;
	}
	return -EINVAL;
}

static void defaults_set(void *base, enum key_section section)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (keys[i].section == section)
			(void)key_set(base, &keys[i], keys[i].def, NULL);
}

static int queue_name_check(const char *name, struct error *err)
{
	size_t n = strlen(name);

	if (n == 0 || n >= QUEUE_NAME_MAX)
		return error_set(err, -EINVAL, "queue name must be 1-%d characters", QUEUE_NAME_MAX - 1);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_-.", name[i]))
			return error_set(err, -EINVAL, "queue name '%s': only letters, digits, '_', '-' and '.'", name);
	return 0;
}

static int section_begin(struct parse_state *ps, const char *section)
{
	struct config *c = ps->c;
	struct queue_conf *q;
	const char *name;
	int r;

	snprintf(ps->section, sizeof(ps->section), "%s", section);
	ps->queue = NULL;
	if (strcmp(section, "server") == 0 || strcmp(section, "node") == 0 || strcmp(section, "licenses") == 0)
		return 0;
	if (strncmp(section, "queue", 5) != 0 || !isspace((unsigned char)section[5]))
		return error_set(ps->err, -EINVAL, "[%s]: unknown section (server, node, licenses or queue NAME)",
				 section);
	name = section + 5;
	while (isspace((unsigned char)*name))
		name++;
	r = queue_name_check(name, ps->err);
	if (r < 0)
		return r;
	if (config_queue(c, name))
		return error_set(ps->err, -EEXIST, "[queue %s]: defined twice", name);
	q = realloc(c->queues, (c->n_queues + 1) * sizeof(*q));
	if (!q)
		return -ENOMEM;
	c->queues = q;
	q = &c->queues[c->n_queues++];
	memset(q, 0, sizeof(*q));
	defaults_set(q, SEC_QUEUE);
	snprintf(q->name, sizeof(q->name), "%s", name);
	q->line = ps->line;
	ps->queue = q;
	return 0;
}

/* [licenses] NAME = COUNT (docs/RESOURCES.md, "Licenses"). */
static int license_key_set(struct config *c, const char *name, const char *value, struct error *err)
{
	struct license *l;
	int r;

	r = license_name_check(name, strlen(name), err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->n_licenses; i++)
		if (strcmp(c->licenses[i].name, name) == 0)
			return error_set(err, -EEXIST, "%s: set twice", name);
	if (c->n_licenses == LICENSES_MAX)
		return error_set(err, -EINVAL, "%s: more than %d licenses", name, LICENSES_MAX);
	l = &c->licenses[c->n_licenses];
	if (license_count_parse(value, &l->count) < 0)
		return error_set(err, -EINVAL, "%s = %s: not a count (0 to %llu)", name, value,
				 (unsigned long long)LICENSE_COUNT_MAX);
	snprintf(l->name, sizeof(l->name), "%s", name);
	c->n_licenses++;
	return 0;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *ps = user;
	enum key_section sec;
	void *base;
	int r;

	if (ps->r < 0)
		return 0;
	if (ps->section[0] == '\0') {
		r = error_set(ps->err, -EINVAL, "%s: key outside any section", name);
		goto done;
	}
	if (strcmp(ps->section, "licenses") == 0) {
		r = license_key_set(ps->c, name, value, ps->err);
		goto done;
	}
	if (strcmp(ps->section, "server") == 0) {
		sec = SEC_SERVER;
		base = ps->c;
	} else if (strcmp(ps->section, "node") == 0) {
		sec = SEC_NODE;
		base = ps->c;
	} else {
		sec = SEC_QUEUE;
		base = ps->queue;
	}
	for (size_t i = 0; i < N_KEYS; i++) {
		if (keys[i].section != sec || strcmp(keys[i].name, name) != 0)
			continue;
		if (sec != SEC_QUEUE) {
			if (ps->seen[i]) {
				r = error_set(ps->err, -EEXIST, "%s: set twice", name);
				goto done;
			}
			ps->seen[i] = 1;
		}
		r = key_set(base, &keys[i], value, ps->err);
		/* A written mem_default = 0 is "none" (what it meant before
		 * memory was counted); unset, mem_per_cpu_default decides. */
		if (sec == SEC_QUEUE && keys[i].offset == Q(mem_default))
			ps->queue->mem_default_set = true;
		goto done;
	}
	r = error_set(ps->err, -EINVAL, "%s: unknown key in [%s]", name, ps->section);
done:
	if (r < 0) {
		ps->r = r;
		ps->err_line = ps->line;
		return 0;
	}
	return 1;
}

/* fgets-style reader that counts lines, so errors can name theirs, and that
 * sees section headers itself: inih does not report an empty section. */
static char *reader(char *str, int num, void *stream)
{
	struct parse_state *ps = stream;
	char *s = fgets(str, num, ps->file);
	char name[128];
	char *p, *end;
	int r;

	if (!s)
		return NULL;
	ps->line++;
	if (ps->r < 0)
		return s;
	for (p = s; isspace((unsigned char)*p); p++)
		;
	if (*p != '[')
		return s;
	end = strchr(p, ']');
	if (!end || (size_t)(end - p - 1) >= sizeof(name))
		return s;  /* inih reports the malformed line */
	memcpy(name, p + 1, (size_t)(end - p - 1));
	name[end - p - 1] = '\0';
	r = section_begin(ps, name);
	if (r < 0) {
		ps->r = r;
		ps->err_line = ps->line;
	}
	return s;
}

static int config_validate(struct config *c, struct error *err, int *ret_line)
{
	const struct queue_conf *def = NULL;

	for (size_t i = 0; i < c->n_queues; i++) {
		const struct queue_conf *q = &c->queues[i];

		*ret_line = q->line;
		if (q->is_default) {
			if (def)
				return error_set(err, -EINVAL, "[queue %s]: default = yes, but queue %s is the default already", q->name, def->name);
			def = q;
		}
		if (q->ncpus_default == 0)
			return error_set(err, -EINVAL, "[queue %s]: ncpus_default must be at least 1", q->name);
		if (q->ncpus_max && q->ncpus_default > q->ncpus_max)
			return error_set(err, -EINVAL, "[queue %s]: ncpus_default is above ncpus_max", q->name);
		if (q->mem_max && q->mem_default > q->mem_max)
			return error_set(err, -EINVAL, "[queue %s]: mem_default is above mem_max", q->name);
		if (q->walltime_default == 0)
			return error_set(err, -EINVAL, "[queue %s]: walltime_default must be above 0", q->name);
		if (q->walltime_max && q->walltime_default > q->walltime_max)
			return error_set(err, -EINVAL, "[queue %s]: walltime_default is above walltime_max", q->name);
		if (q->reserve == QUEUE_RESERVE_REALTIME && (q->rt_priority < 1 || q->rt_priority > 99))
			return error_set(err, -EINVAL, "[queue %s]: rt_priority must be 1-99", q->name);
	}
	/* Preemption: each named queue exists, is not the queue itself and
	 * has a lower priority, so no two queues preempt each other, nor
	 * any circle of them (priorities only go down it). */
	for (size_t i = 0; i < c->n_queues; i++) {
		const struct queue_conf *q = &c->queues[i];
		char list[256], *save = NULL;

		*ret_line = q->line;
		snprintf(list, sizeof(list), "%s", q->preempts);
		for (char *n = strtok_r(list, ", ", &save); n; n = strtok_r(NULL, ", ", &save)) {
			const struct queue_conf *v = config_queue(c, n);

			if (!v)
				return error_set(err, -EINVAL, "[queue %s]: preempts = %s: no queue %s", q->name,
						 q->preempts, n);
			if (v == q || v->priority >= q->priority)
				return error_set(err, -EINVAL, "[queue %s]: preempts %s: a preemption loop (queue %s "
						 "must have a lower priority than %s)", q->name, n, n, q->name);
		}
	}
	*ret_line = 0;
	if (c->state_dir[0] == '\0')
		return error_set(err, -EINVAL, "[server] state_dir must be set");
	if (c->store == CONFIG_STORE_POSTGRESQL && c->store_dsn[0] == '\0')
		return error_set(err, -EINVAL, "[server] store = postgresql needs store_dsn");
	if (c->socket[0] == '\0')
		return error_set(err, -EINVAL, "[server] socket must be set");
	if (strlen(c->socket) >= 108)
		return error_set(err, -ENAMETOOLONG, "[server] socket: path longer than a Unix socket allows (107)");
	if (c->heartbeat_interval == 0 || c->node_timeout <= c->heartbeat_interval)
		return error_set(err, -EINVAL, "[server] node_timeout must be longer than heartbeat_interval (> 0)");
	if (c->lease_renew == 0 || c->lease_time <= c->lease_renew)
		return error_set(err, -EINVAL, "[server] lease_time must be longer than lease_renew (> 0)");
	if (c->fairshare_halflife == 0)
		return error_set(err, -EINVAL, "[server] fairshare_halflife must be above 0");
	return 0;
}

const char *config_path(const char *arg)
{
	const char *env;

	if (arg && *arg)
		return arg;
	env = getenv("QPOOL_CONF");
	if (env && *env)
		return env;
	return CONFIG_DEFAULT_PATH;
}

int config_load(const char *path, struct config **ret, struct error *err)
{
	struct parse_state ps = { 0 };
	struct config *c;
	int line = 0;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return error_set(err, -ENOMEM, "%s: out of memory", path);
	snprintf(c->path, sizeof(c->path), "%s", path);
	defaults_set(c, SEC_SERVER);
	defaults_set(c, SEC_NODE);

	ps.file = fopen(path, "re");
	if (!ps.file) {
		r = error_set(err, -errno, "%s: %s", path, strerror(errno));
		goto done;
	}
	/* '#' starts a comment anywhere, as in the design's examples
	 * (docs/DESIGN-FACTS.md); one key per line. */
	ini_inline_comment_prefixes = (char *)";#";
	ini_allow_multiline = false;
	ps.c = c;
	ps.err = err;
	r = ini_parse_stream(reader, &ps, handler, &ps);
	if (ps.r < 0) {
		/* error_set already wrote the message; prefix file:line. */
		char msg[sizeof(err->text)];

		snprintf(msg, sizeof(msg), "%s", err ? err->text : "");
		r = error_set(err, ps.r, "%s:%d: %s", path, ps.err_line, msg);
		goto done;
	}
	if (r != 0) {
		r = error_set(err, -EINVAL, "%s:%d: not a section header or key = value", path, r);
		goto done;
	}
	r = config_validate(c, err, &line);
	if (r < 0) {
		char msg[sizeof(err->text)];

		snprintf(msg, sizeof(msg), "%s", err ? err->text : "");
		if (line)
			error_set(err, r, "%s:%d: %s", path, line, msg);
		else
			error_set(err, r, "%s: %s", path, msg);
	}
done:
	if (ps.file)
		fclose(ps.file);
	if (r < 0) {
		config_destroy(c);
		return r;
	}
	*ret = c;
	return 0;
}

int config_default(struct config **ret)
{
	struct config *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	snprintf(c->path, sizeof(c->path), "(defaults)");
	defaults_set(c, SEC_SERVER);
	defaults_set(c, SEC_NODE);
	*ret = c;
	return 0;
}

void config_destroy(struct config *c)
{
	if (!c)
		return;
	free(c->queues);
	free(c);
}

const struct queue_conf *config_queue(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->n_queues; i++)
		if (strcmp(c->queues[i].name, name) == 0)
			return &c->queues[i];
	return NULL;
}

const struct queue_conf *config_default_queue(const struct config *c)
{
	for (size_t i = 0; i < c->n_queues; i++)
		if (c->queues[i].is_default)
			return &c->queues[i];
	return NULL;
}

const char *queue_reserve_name(enum queue_reserve r)
{
	return (unsigned)r < 3 ? reserve_names[r] : "?";
}

void config_keys_print(void *file)
{
	static const char *sections[] = { "server", "node", "queue" };

	for (size_t i = 0; i < N_KEYS; i++)
		fprintf(file, "%s\t%s\t%s\t%s\n", sections[keys[i].section], keys[i].name,
			keys[i].def, keys[i].doc);
}

void config_sample_print(void *file)
{
	static const char *const heads[] = {
		"[server]\n",
		"[node]\n",
		"# A queue per [queue NAME] section. Jobs submitted without -q go to the\n"
		"# queue with default = yes; this one is that queue.\n"
		"[queue batch]\n",
	};

	fprintf(file, "# qpool.conf: qpool's one config file (see qpool.conf(5)).\n"
		      "# Every key is listed with its default, commented out: uncomment a line\n"
		      "# to change it. Written by `qpoold --dump-config` from the key table the\n"
		      "# daemons read, so it lists exactly the keys they know.\n");
	for (int sec = SEC_SERVER; sec <= SEC_QUEUE; sec++) {
		fprintf(file, "\n%s", heads[sec]);
		for (size_t i = 0; i < N_KEYS; i++) {
			const struct key *k = &keys[i];

			if (k->section != (enum key_section)sec)
				continue;
			fprintf(file, "# %s\n", k->doc);
			if (sec == SEC_QUEUE && strcmp(k->name, "default") == 0)
				fprintf(file, "%s = yes\n", k->name);
			else
				fprintf(file, "#%s =%s%s\n", k->name, k->def[0] ? " " : "", k->def);
		}
	}
	fprintf(file, "\n# Pool-wide licenses, NAME = COUNT (qpool.conf(5), [licenses]).\n# [licenses]\n# matlab = 10\n");
}
