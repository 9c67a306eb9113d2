/* SPDX-License-Identifier: MIT */
/* qpool.conf: one INI file, every key declared once in a table with its default. */
#ifndef QPOOL_CONFIG_H
#define QPOOL_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "license.h"

#define CONFIG_DEFAULT_PATH "/etc/qpool/qpool.conf"
#define QUEUE_NAME_MAX 32

enum queue_reserve {
	QUEUE_RESERVE_NONE,
	QUEUE_RESERVE_EXCLUSIVE,
	QUEUE_RESERVE_REALTIME,
};

enum queue_rt_policy {
	QUEUE_RT_FIFO,
	QUEUE_RT_RR,
};

/* gpu_locality (docs/GPUS.md): whether a GPU job's CPUs must be the
 * ones close to its GPUs (require: it waits) or only preferably. */
enum queue_gpu_locality {
	QUEUE_GPU_PREFER,
	QUEUE_GPU_REQUIRE,
};

/* [queue] preempt_mode: what becomes of a job preempted (docs/PREEMPTION.md). */
enum queue_preempt_mode {
	QUEUE_PREEMPT_REQUEUE,     /* back to wait, the same id, a new attempt */
	QUEUE_PREEMPT_CANCEL,      /* ended, cancelled */
	QUEUE_PREEMPT_SUSPEND,     /* frozen on its node until its preemptor ends */
};

/* [queue] order: whose turn it is (docs/FAIRSHARE.md). */
enum queue_order {
	QUEUE_ORDER_ROUND_ROBIN,   /* IQS: each user a job in turn */
	QUEUE_ORDER_FAIRSHARE,     /* least decayed use for its share first; IQS breaks ties */
};

/* mem_per_cpu_default (docs/ARCHITECTURE.md, "Memory counted"): auto is
 * the node's offer over its CPUs; a queue's unset one is the server's. */
#define MEM_PER_CPU_AUTO UINT64_MAX
#define MEM_PER_CPU_INHERIT (UINT64_MAX - 1)

struct queue_conf {
	char name[QUEUE_NAME_MAX];
	int line;                    /* line of its [queue NAME] header */
	bool is_default;             /* default: takes jobs submitted without -q */
	bool enabled;                /* enabled: accepts submissions */
	bool started;                /* started: dispatches jobs */
	int64_t priority;            /* priority: higher is served first */
	uint64_t ncpus;              /* ncpus: multiN queue when > 0 */
	uint64_t ncpus_default;
	uint64_t ncpus_max;          /* 0: as many as a node has */
	uint64_t mem_default;        /* bytes; 0: no limit */
	bool mem_default_set;        /* mem_default written in the file (0 then: none) */
	uint64_t mem_per_cpu_default;/* MEM_PER_CPU_*, or bytes per CPU; 0: none */
	uint64_t mem_max;            /* bytes; 0: no limit */
	uint64_t walltime_default;   /* seconds */
	uint64_t walltime_max;       /* seconds; 0: no limit */
	enum queue_reserve reserve;
	enum queue_rt_policy rt_policy;
	uint64_t rt_priority;
	bool smt;
	uint64_t max_running;        /* 0: no limit */
	uint64_t max_running_per_user;
	uint64_t max_cpus_per_user;  /* CPUs one user's running jobs hold in the queue; 0: no limit */
	uint64_t max_gpus_per_user;  /* the same for GPUs */
	bool strict;
	bool rerunnable;
	uint64_t max_queued;         /* queued and held jobs in the queue; 0: no limit */
	uint64_t max_queued_per_user;/* of one user in the queue; 0: the server's only */
	uint64_t max_ngpus;          /* most GPUs a job may ask for, in all; 0: no limit */
	enum queue_gpu_locality gpu_locality;
	enum queue_order order;
	char preempts[256];          /* queues whose running jobs this queue's may take from ("a,b"; "" none) */
	enum queue_preempt_mode preempt_mode;
	uint64_t preempt_min_runtime;/* seconds a job runs before it may be preempted */
	uint64_t preempt_grace;      /* seconds from its notice signal to SIGTERM */
	uint64_t backfill_depth;     /* waiting jobs given a reservation per pass (0 counts as 1) */
	char reason[128];            /* why disabled or stopped (qmgr), or "" */
};

/* [server] store: where the job store lives. */
enum config_store {
	CONFIG_STORE_SQLITE,       /* state_dir/qpool.db */
	CONFIG_STORE_POSTGRESQL,   /* store_dsn */
};

/* A server hook's failure policy (qpool-hooks(5)). */
enum config_hook_failure {
	CONFIG_HOOK_REJECT,        /* the request is refused */
	CONFIG_HOOK_ACCEPT,        /* the request goes on as it came */
};

#define CONFIG_NAME_MAX 64   /* [server] name, with its NUL */

struct config {
	char path[PATH_MAX];
	/* [server] */
	char state_dir[PATH_MAX];    /* SQLite store, spool, node job dirs */
	enum config_store store;     /* the job store's backend */
	char store_dsn[PATH_MAX];    /* libpq connection string (store = postgresql) */
	char socket[PATH_MAX];       /* Unix socket of qpoold */
	char listen[PATH_MAX];       /* TCP "ADDR:PORT" qpoold listens on too; "": none */
	char metrics_listen[PATH_MAX];   /* TCP "ADDR:PORT" of GET /metrics (docs/METRICS.md); "": off */
	char server[PATH_MAX];       /* "HOST:PORT" of qpoold for nodes and commands; "": the socket */
	char munge_socket[PATH_MAX]; /* munged's socket; "": munge's default */
	char advertise[PATH_MAX];    /* "HOST:PORT" in the lease when active; "": derived */
	char server_id[64];          /* holder id in the lease; "": host name and socket */
	uint64_t lease_time;         /* seconds a lease runs unrenewed */
	uint64_t lease_renew;        /* seconds between renewals */
	uint64_t heartbeat_interval; /* seconds between node heartbeats */
	uint64_t node_timeout;       /* seconds without heartbeat: node down */
	uint64_t kill_grace;         /* seconds between SIGTERM and SIGKILL */
	uint64_t max_conns_per_user; /* open connections of one uid (not root); 0: no cap */
	uint64_t max_unauth_conns;   /* TCP peers awaiting their credential, in all */
	uint64_t max_unauth_conns_per_addr; /* of them from one address */
	uint64_t idle_timeout;       /* seconds a client may hold a connection idle; 0: forever */
	uint64_t event_retention;    /* seconds events are kept (docs/EVENTS.md) */
	uint64_t fairshare_halflife; /* seconds in which use counts half (docs/FAIRSHARE.md) */
	uint64_t fairshare_gpu_weight;   /* CPUs a GPU counts for in use */
	uint64_t estimate_interval;  /* least seconds between start-estimate replays; 0: every pass */
	uint64_t estimate_depth;     /* waiting jobs one replay estimates */
	uint64_t watch_buffer;       /* bytes of events a watcher may leave unread */
	uint64_t max_queued;         /* queued and held jobs in the pool; 0: no limit */
	uint64_t mem_per_cpu_default;/* MEM_PER_CPU_AUTO, or bytes per CPU; 0: none */
	uint64_t max_queued_per_user;/* of one user over every queue; 0: no limit */
	uint64_t state_min_free;     /* bytes free in state_dir below which submissions wait */
	char server_name[CONFIG_NAME_MAX]; /* in printed job ids; "" = short host name */
	char sendmail[PATH_MAX];     /* MTA for qsub -m; "" = mail off */
	char submit_filter[PATH_MAX];/* hook on submit, alter, move; "" = none */
	uint64_t submit_filter_timeout; /* seconds */
	enum config_hook_failure submit_filter_failure; /* timeout, signal, nonsense */
	char server_prolog[PATH_MAX];/* hook once a job is placed, before launch; "" = none */
	uint64_t server_prolog_timeout; /* seconds */
	uint64_t server_prolog_retries; /* failures of one job before it is held */
	char server_epilog[PATH_MAX];/* hook after a job's end is committed; "" = none */
	uint64_t server_epilog_timeout; /* seconds */
	/* [node] */
	char cgroup_root[PATH_MAX];  /* where the cgroup hierarchies are mounted */
	char gded[PATH_MAX];         /* wrapper binary; "" = next to qnoded */
	char cgroup_parent[PATH_MAX]; /* the pool's group below each hierarchy's root,
	                               * relative ("qpool"); nodes are <parent>/<name> */
	uint64_t node_pids_max;      /* pids.max of a node's group; 0: 3/4 of kernel.pid_max */
	uint64_t mem_reserve;        /* bytes of a node's memory kept from its jobs */
	char tmpdir[PATH_MAX];       /* base of each job's TMPDIR */
	char gpus[PATH_MAX];         /* "auto", "none", or device files and globs, blank-separated */
	char features[1024];         /* the node's features, canonical (lib/nodesel.h): "ib,bigmem" */
	char resources[1024];        /* its counted resources, canonical (lib/noderes.h) */
	bool jobs_tmpfs;             /* a tmpfs on state_dir/nodes/<name>/jobs */
	char prolog[PATH_MAX];       /* a hook before each job on the node; "": none */
	char epilog[PATH_MAX];       /* a hook after each job on the node; "": none */
	uint64_t prolog_timeout;     /* seconds */
	uint64_t prolog_failures_max; /* of one job, then it is held; 0: never */
	uint64_t epilog_timeout;     /* seconds */
	char health_check[PATH_MAX]; /* the node's health check; "": none */
	uint64_t health_check_interval; /* seconds */
	uint64_t health_check_timeout;  /* seconds */
	uint64_t memcg_reclaim_threshold; /* v1: memory cgroups on the host from which a job's
	                              * page cache is reclaimed before rmdir; 0: always */
	struct queue_conf *queues;
	size_t n_queues;
	/* [licenses]: NAME = COUNT, pool-wide counted resources, in file order */
	struct license licenses[LICENSES_MAX];
	size_t n_licenses;
};

/* The config file to read: arg (from -f) if set, else $QPOOL_CONF, else
 * CONFIG_DEFAULT_PATH. */
const char *config_path(const char *arg);

/* Reads and validates path. On error returns -errno and err->text is
 * "path:line: message" (or "path: message"); nothing is allocated. */
int config_load(const char *path, struct config **ret, struct error *err);

/* A config of defaults only, for a command on a login host that has no
 * config file but $QPOOL_SERVER. */
int config_default(struct config **ret);

void config_destroy(struct config *c);

/* The queue called name, or NULL. */
const struct queue_conf *config_queue(const struct config *c, const char *name);

/* The queue with default = yes, or NULL when none is. */
const struct queue_conf *config_default_queue(const struct config *c);

const char *queue_reserve_name(enum queue_reserve r);

/* Writes the documented key table (section, key, default, meaning) to f,
 * one per line: for man-page checks and `qmgr keys`. */
void config_keys_print(void *file);

/* Writes a commented sample config to f: each section with every key at
 * its default, commented out, and one default queue. For `qpoold
 * --dump-config`, which make install writes to the sample
 * /etc/qpool/qpool.conf; config_load accepts it as it is. */
void config_sample_print(void *file);

#endif
