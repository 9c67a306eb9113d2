/* SPDX-License-Identifier: MIT */
/* qpoold's server: socket, connections, requests, group commit, scheduling. */
#ifndef QPOOL_SERVER_H
#define QPOOL_SERVER_H

#include <sys/types.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "error.h"

struct server;

/* Opens the job store under config->state_dir, loads unfinished jobs and
 * listens on config->socket. Takes ownership of config. */
int server_create(sd_event *e, struct config *config, struct server **ret, struct error *err);

void server_destroy(struct server *s);
/* sd_event_loop, with qpoold's CPU charged by part (cpuacct.c). */
int cpu_event_loop(sd_event *e);

/* A connection on fd (a socketpair's end; taken, closed on failure) whose
 * peer is uid and gid, as SO_PEERCRED or a credential would say: what the
 * handlers' unit tests (tests/unit/test_handlers.c) speak through. 0 or
 * -errno (conn_identified's). */
int server_conn_open(struct server *s, int fd, uid_t uid, gid_t gid);

/* The loop's exit code when the server lost the lease (docs/HA.md): the
 * caller destroys it and starts a fresh one, a standby. */
#define SERVER_EXIT_STEPPED_DOWN 75

/* Re-reads the config file; an invalid file is rejected (err says why with
 * file:line) and the old config stays in force. */
int server_reload(struct server *s, struct error *err);

#endif
