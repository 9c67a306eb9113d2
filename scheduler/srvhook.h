/* SPDX-License-Identifier: MIT */
/* The server's hooks run on qpoold's loop (srvhook.c) and the submit
 * filter over them (filter.c): see qpool-hooks(5), docs/HOOKS.md. */
#ifndef QPOOL_SRVHOOK_H
#define QPOOL_SRVHOOK_H

#include <jansson.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "error.h"
#include "hook.h"

enum srvhook_kind {
	SRVHOOK_SUBMIT_FILTER,
	SRVHOOK_SERVER_PROLOG,
	SRVHOOK_SERVER_EPILOG,
	SRVHOOK_KIND_MAX,
};

struct srvhooks;

/* Called once the run is over (h->outcome set); h is freed after. */
typedef void (*srvhook_done_f)(struct hook *h, void *arg);
/* Called instead of done when the run is dropped unfinished (the loop
 * ends): frees arg. */
typedef void (*srvhook_drop_f)(void *arg);

const char *srvhook_kind_name(enum srvhook_kind k);
/* Each configured server hook passes hook_path_check: 0, or -EPERM with
 * "PATH: [server] KEY: why" in err. */
int srvhooks_config_check(const struct config *c, struct error *err);
int srvhooks_create(sd_event *e, struct srvhooks **ret);
/* Kills what still runs (drop is called for each); NULL is fine. */
void srvhooks_destroy(struct srvhooks *hs);

/* Starts PATH with INPUT (copied) on the loop, killed after TIMEOUT_S
 * seconds, its environment ENV (NULL-terminated, read at the start only;
 * NULL: PATH alone); DONE is called from the loop when it ended. 0, or
 * -errno when it could not start (nothing is called then). */
int srvhooks_run(struct srvhooks *hs, enum srvhook_kind kind, const char *path, uint64_t timeout_s,
		 json_t *input, char *const env[], srvhook_done_f done, srvhook_drop_f drop, void *arg);

/* Kills the run started with ARG (SIGKILL to its process group), if one
 * runs: it ends as killed on a later loop iteration, DONE called then. */
void srvhooks_kill(struct srvhooks *hs, const void *arg);

/* The configured hooks with their last outcome, for qmgr's list hook. */
json_t *srvhooks_json(const struct srvhooks *hs, const struct config *c);

#endif
