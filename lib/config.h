/* SPDX-License-Identifier: MIT */
/* qpool.conf: one INI file, every key declared once in a table with its default. */
#ifndef QPOOL_CONFIG_H
#define QPOOL_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

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
	uint64_t mem_max;            /* bytes; 0: no limit */
	uint64_t walltime_default;   /* seconds */
	uint64_t walltime_max;       /* seconds; 0: no limit */
	enum queue_reserve reserve;
	enum queue_rt_policy rt_policy;
	uint64_t rt_priority;
	bool smt;
	uint64_t max_running;        /* 0: no limit */
	uint64_t max_running_per_user;
	bool strict;
	bool rerunnable;
	char reason[128];            /* why disabled or stopped (qmgr), or "" */
};

#define CONFIG_NAME_MAX 64   /* [server] name, with its NUL */

struct config {
	char path[PATH_MAX];
	/* [server] */
	char state_dir[PATH_MAX];    /* SQLite store, spool, node job dirs */
	char socket[PATH_MAX];       /* Unix socket of qpoold */
	uint64_t heartbeat_interval; /* seconds between node heartbeats */
	uint64_t node_timeout;       /* seconds without heartbeat: node down */
	uint64_t kill_grace;         /* seconds between SIGTERM and SIGKILL */
	char server_name[CONFIG_NAME_MAX]; /* in printed job ids; "" = short host name */
	char sendmail[PATH_MAX];     /* MTA for qsub -m; "" = mail off */
	/* [node] */
	char cgroup_root[PATH_MAX];  /* where the cgroup hierarchies are mounted */
	char gded[PATH_MAX];         /* wrapper binary; "" = next to qnoded */
	char tmpdir[PATH_MAX];       /* base of each job's TMPDIR */
	struct queue_conf *queues;
	size_t n_queues;
};

/* The config file to read: arg (from -f) if set, else $QPOOL_CONF, else
 * CONFIG_DEFAULT_PATH. */
const char *config_path(const char *arg);

/* Reads and validates path. On error returns -errno and err->text is
 * "path:line: message" (or "path: message"); nothing is allocated. */
int config_load(const char *path, struct config **ret, struct error *err);

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
