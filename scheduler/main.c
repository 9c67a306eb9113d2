/* SPDX-License-Identifier: MIT */
/* qpoold: the qpool server. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "exe.h"
#include "log.h"
#include "log-journal.h"
#include "migrate.h"
#include "cpuacct.h"
#include "server.h"
#include "version.h"

static const char *arg_config;
static bool arg_verbose;
static bool arg_migrate;

static void usage(FILE *f)
{
	fprintf(f, "usage: qpoold [-f FILE] [-v]\n"
		   "  -f FILE  config file (default $QPOOL_CONF, else %s)\n"
		   "  -v       log debug messages too\n"
		   "  --dump-config  print a sample config: every key, its default\n"
		   "  --migrate      move state_dir's SQLite store into the store_dsn PostgreSQL, then exit\n"
		   "  --version      print the version\n", CONFIG_DEFAULT_PATH);
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "dump-config", no_argument, NULL, 'D' },
		{ "migrate", no_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "f:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			arg_config = optarg;
			break;
		case 'v':
			arg_verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'M':
			arg_migrate = true;
			break;
		case 'D':
			config_sample_print(stdout);
			exit(fflush(stdout) == 0 ? 0 : 1);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "qpoold: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int on_sighup(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
	struct server *s = userdata;
	struct error err;

	(void)sd_notify(0, "RELOADING=1");
	if (server_reload(s, &err) < 0) {
		log_err("reload refused, old config kept: %s", err.text);
		(void)sd_notifyf(0, "READY=1\nSTATUS=serving; reload refused: %s", err.text);
	} else {
		log_info("config reloaded");
		(void)sd_notify(0, "READY=1\nSTATUS=serving; config reloaded");
	}
	return 0;
}

/* One server from creation to the end of its loop: returns the loop's
 * exit code (SERVER_EXIT_STEPPED_DOWN: it lost the lease and a fresh
 * standby follows), or -errno when it could not start. */
static int serve(struct config *config, bool first, bool quiet)
{
	struct server *server = NULL;
	sd_event *event = NULL;
	struct error err;
	char sock[PATH_MAX];
	int r;

	snprintf(sock, sizeof(sock), "%s", config->socket);
	r = sd_event_new(&event);
	if (r < 0) {
		config_destroy(config);
		log_err("event loop: %s", strerror(-r));
		goto done;
	}
	r = server_create(event, config, &server, &err);
	if (r < 0) {
		if (!quiet)
			log_err("%s", err.text);
		goto done;
	}
	/* A NULL handler makes the loop exit on the signal. */
	r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
	if (r >= 0)
		r = sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
	if (r >= 0)
		r = sd_event_add_signal(event, NULL, SIGHUP, on_sighup, server);
	if (r < 0) {
		log_err("signals: %s", strerror(-r));
		goto done;
	}
	/* Once up, so that a start that fails says one line: its error. */
	if (first) {
		r = exe_oom_score_adj_set(EXE_DAEMON_OOM_SCORE_ADJ);
		if (r < 0)
			log_warn("cannot set oom_score_adj %d: %s", EXE_DAEMON_OOM_SCORE_ADJ, strerror(-r));
		/* A pass and a dispatch run at once beside busy jobs (exe.h). */
		(void)exe_sched_slice_set(EXE_DAEMON_SLICE_NS);
	}
	log_info("serving");
	(void)sd_notifyf(0, "READY=1\nSTATUS=serving on %s", sock);
	r = cpu_event_loop(event);
done:
	server_destroy(server);
	sd_event_unref(event);
	return r;
}

int main(int argc, char **argv)
{
	struct config *config = NULL;
	struct error err;
	sigset_t mask;
	int r;

	if (version_requested(argc, argv))
		return version_print("qpoold");
	r = parse_args(argc, argv);
	if (r < 0)
		return 2;
	log_init("qpoold", arg_verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
	(void)log_journal_setup(NULL);
	umask(022);

	r = config_load(config_path(arg_config), &config, &err);
	if (r < 0) {
		log_err("%s", err.text);
		goto done;
	}
	if (arg_migrate) {
		char text[1024];
		int64_t jobs = 0;

		r = migrate_store(config, &jobs, text, sizeof(text), &err);
		if (r < 0)
			log_err("--migrate: %s", err.text);
		else
			log_info("%s", text);
		goto done;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A server that lost the lease is dropped whole, in-memory state and
	 * connections, and a fresh one starts as a standby. */
	for (bool first = true, retrying = false;; first = false) {
		r = serve(config, first, retrying);
		config = NULL;
		/* A server that stepped down was cut off from the store, often:
		 * the fresh standby may not reach it yet. It tries again each
		 * second (the store's connect_timeout adds to that) until it
		 * does, rather than exit and leave the host without a standby
		 * once the link is back (t-ha-hosts.sh, (c)). */
		if (r < 0 && (retrying || !first)) {
			const struct timespec pause = { .tv_sec = 1 };

			if (!retrying)
				log_warn("cannot start again as a standby; trying each second");
			retrying = true;
			int sig = sigtimedwait(&mask, NULL, &pause);

			if (sig == SIGTERM || sig == SIGINT) {
				r = 0;
				break;
			}
		} else if (r != SERVER_EXIT_STEPPED_DOWN) {
			break;
		} else {
			retrying = false;
		}
		r = config_load(config_path(arg_config), &config, &err);
		if (r < 0) {
			log_err("%s", err.text);
			goto done;
		}
	}
	if (r < 0)
		goto done;
	(void)sd_notify(0, "STOPPING=1");
	log_info("stopping");
done:
	config_destroy(config);
	return r < 0 ? 1 : 0;
}
