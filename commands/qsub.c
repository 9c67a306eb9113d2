/* SPDX-License-Identifier: MIT */
/* qsub: submit a job script to qpoold and print its id. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "jobenv.h"
#include "jobid.h"
#include "jobscript.h"
#include "jobsubmit.h"
#include "parse.h"
#include "ttyrelay.h"
#include "watch.h"
#include "wire.h"
#include "version.h"

static const char usage_text[] =
	"usage: qsub [options] [script]\n"
	"       qsub -I [options] -- command [args...]\n"
	"Submits script (standard input when none is given or it is -) and prints the job id.\n"
	"With -I -- command, the job runs command on its terminal, not a shell (exits with its status).\n"
	"  -N name            job name (default: the script's file name, or STDIN)\n"
	"  -q queue           queue (default: the server's default queue)\n"
	"  -l res=val,...     ncpus=N, mem=SIZE (512M, 8gb), walltime=HH:MM:SS,\n"
	"                     nodes=N[:ppn=C], select=N:ncpus=C[:mem=SIZE][:mpiprocs=P],\n"
	"                     place=scatter|pack|free[:excl]; may repeat\n"
	"  -o path, -e path   standard output / error file (relative to this directory)\n"
	"  -j oe | -j n       join standard error into standard output, or not\n"
	"  -v VAR[=val],...   pass variables (VAR alone: its value here, empty if unset)\n"
	"  -V                 pass this whole environment\n"
	"  -h                 submit the job held (qrls releases it)\n"
	"  -r y|n             whether the job may be re-run\n"
	"  -J START-END[:STEP][%MAX]  a job array (PBS Pro); subjobs ID[N], at most MAX at once\n"
	"  -t LIST[%MAX]      a job array (Torque): 1-10, 1,3,5-7, 0-8:2\n"
	"  -W depend=TYPE:ID[:ID...][,...]  after, afterok, afternotok, afterany, before*;\n"
	"                     an array as ID[]\n"
	"  -W block=true      wait for the job to end; exit with its exit status\n"
	"  -A account, -P project, -m abe|n, -M users, -p priority, -S shell,\n"
	"  -W group_list=g, -a [[[[CC]YY]MM]DD]hhmm[.SS], -d dir, -z, -C prefix, -k, -u user\n"
	"                     as PBS; see qsub(1)\n"
	"  -f FILE            configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"      --help         show this help\n"
	"Script lines starting with #QP or #PBS before the first command take the same\n"
	"options; options given here override them.\n";

static const char *arg_conf;
/* -I -- command: the job's script execs command on the job's terminal */
static bool arg_command;

/* The job's environment: all of ours with -V (skipping entries JSON cannot
 * carry), then each -v, later ones winning; a -v name not set here is
 * passed empty. */
static int env_build(const struct jobspec *js, json_t **ret)
{
	json_t *env = js->export_all > 0 ? jobenv_environ() : json_object();
	struct error err;

	if (!env)
		return cmd_fail(1, "out of memory");
	for (size_t i = 0; i < js->n_vars; i++) {
		const struct jobspec_var *v = &js->vars[i];
		const char *value = v->value ? v->value : getenv(v->name);

		/* As PBS: a name not set here is passed, empty (scripts name
		 * what they may set later, e.g. -v month,year). */
		if (!value)
			value = "";
		if (!utf8_valid(value, strlen(value))) {
			json_decref(env);
			return cmd_fail(1, "-v %s: the value is not valid UTF-8", v->name);
		}
		json_object_set_new(env, v->name, json_string(value));
	}
	if (jobenv_check(env, &err) < 0) {
		json_decref(env);
		return cmd_fail(1, "%s", err.text);
	}
	*ret = env;
	return 0;
}

/* An output path as PBS takes it: [host:]path, relative to qsub's
 * directory; a directory (written DIR/, or one that exists) gets the
 * default file name in it, which qpoold adds (it knows the id). */
static int path_absolute(const char *cwd, const char *opt, const char *path, json_t *req,
			 const char *key)
{
	char abs[PATH_MAX + 1];
	struct stat st;
	size_t n;
	int r;

	if (!path)
		return 0;
	r = cmd_output_path(cwd, opt, path, abs, sizeof(abs) - 1);
	if (r)
		return r;
	n = strlen(abs);
	if (abs[n - 1] != '/' && stat(abs, &st) == 0 && S_ISDIR(st.st_mode))
		strcpy(abs + n, "/");
	json_object_set_new(req, key, json_string(abs));
	return 0;
}

/* The PBS attributes that need qsub's side: -u, -m, -a. -W group_list
 * is qpoold's to check (it knows the user's groups; qsub is static and
 * has no NSS). */
static int attrs_check(const struct jobspec *js, const struct config *conf, json_t *attrs)
{
	const char *users = jobspec_attr(js, "User_List");
	const char *me = getenv("LOGNAME");
	time_t when;

	if (!me)
		me = getenv("USER");
	if (users) {
		/* Jobs run as their submitter (qpoold takes the uid from the
		 * socket): the list may only name them. */
		for (const char *p = users; *p;) {
			size_t n = strcspn(p, ",@");

			if (!me || strlen(me) != n || strncmp(p, me, n) != 0)
				return cmd_fail(1, "-u %s: jobs run as the user who submits them%s%s%s; "
						"another user must submit their own", users,
						me ? " (" : "", me ? me : "", me ? ")" : "");
			p += n + strcspn(p + n, ",");
			p += *p == ',';
		}
	}
	if (js->mail > 0 && !conf->sendmail[0])
		fprintf(stderr, "qsub: warning: -m %s: recorded; mail is off on this pool "
			"([server] sendmail is not set)\n", jobspec_attr(js, "Mail_Points"));
	if (js->start_after) {
		char buf[32];

		if (pbs_datetime_parse(js->start_after, time(NULL), &when) < 0)
			return cmd_fail(1, "-a %s: not a date and time", js->start_after);
		snprintf(buf, sizeof(buf), "%lld", (long long)when);
		json_object_set_new(attrs, "Execution_Time", json_string(buf));
	}
	return 0;
}

/* -I: the terminal's size, for gded to give the job's pty at its start
 * (QPOOL_TTY_SIZE="ROWS COLS"); nothing when standard input is no
 * terminal. Changes of size later are not relayed. */
static void winsize_add(json_t *env)
{
	struct winsize ws;
	char text[32];

	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0 || ws.ws_col == 0)
		return;
	snprintf(text, sizeof(text), "%u %u", ws.ws_row, ws.ws_col);
	json_object_set_new(env, "QPOOL_TTY_SIZE", json_string(text));
}

/* The submit request for js; status 0 or the exit status after a message. */
static int request_build(const struct jobspec *js, const struct config *conf, const char *script,
			 size_t len, const char *default_name, json_t **ret)
{
	char cwd[PATH_MAX], workdir[PATH_MAX];
	json_t *req, *env = NULL, *attrs;
	int r;

	if (!getcwd(cwd, sizeof(cwd)))
		return cmd_fail(1, "cannot determine the working directory: %s", strerror(errno));
	if (!utf8_valid(cwd, strlen(cwd)))
		return cmd_fail(1, "the working directory %s is not valid UTF-8", cwd);
	/* -d/-w: the job's directory; PBS_O_WORKDIR stays where qsub ran. */
	if (jobspec_workdir(js, cwd, workdir, sizeof(workdir)) < 0)
		return cmd_fail(1, "-d %s: path too long", js->workdir);
	r = env_build(js, &env);
	if (r)
		return r;
	jobenv_origin(env, cwd, js->queue);
	if (js->interactive > 0)
		winsize_add(env);
	attrs = jobsubmit_attrs(js);
	if (attrs && js->join == 2)
		json_object_set_new(attrs, "Join_Path", json_string("eo"));
	if (attrs && js->interactive > 0)
		json_object_set_new(attrs, "interactive", json_string("True"));
	/* -I -- command: gded runs the script (which execs it) on the pty */
	if (attrs && js->interactive > 0 && arg_command)
		json_object_set_new(attrs, "interactive_command", json_string("True"));
	r = attrs ? attrs_check(js, conf, attrs) : cmd_fail(1, "out of memory");
	if (r) {
		json_decref(attrs);
		json_decref(env);
		return r;
	}
	req = json_pack("{s:s, s:s%, s:s, s:s, s:b, s:b, s:o, s:o}", "op", "submit", "script", script,
			len, "name", js->name ? js->name : default_name, "workdir", workdir,
			"join", js->join > 0, "hold", js->hold > 0, "env", env, "attrs", attrs);
	if (!req)
		return cmd_fail(1, "out of memory");
	jobsubmit_request(js, req);
	if (js->interactive > 0)
		json_object_set_new(req, "interactive", json_true());
	/* As PBS: without -o/-e the files go where qsub ran, even with -d
	 * (a directory: qpoold names the file in it, knowing the id). */
	r = path_absolute(cwd, "-o", js->stdout_path ? js->stdout_path : js->workdir ? "./" : NULL,
			  req, "stdout");
	if (!r)
		r = path_absolute(cwd, "-e", js->stderr_path ? js->stderr_path :
				  js->workdir ? "./" : NULL, req, "stderr");
	if (r) {
		json_decref(req);
		return r;
	}
	*ret = req;
	return 0;
}

/* qsub -I after the submit: waits for the job to start, then relays the
 * terminal to the shell gded runs on the job's pty, through the socket
 * gded made beside the job's files (reachable by the job's owner only).
 * Returns the exit status after a message, or 0; with command (-I --),
 * the job's exit status once it has ended. */
static int block(int64_t jobid, const char *id);

/* qsub -I's wait for its job's start, on the event stream. */
struct istart {
	int64_t jobid;
	const sigset_t *stop;
	char *node;
	size_t node_len;
	char ended[32], reason[256];
	int sig;
};

/* 1: started (node set) or ended (ended set); 0: not yet. */
static int istart_look(struct istart *is, const json_t *ev)
{
	const char *st = wire_str(ev, "state");

	if (wire_int(ev, "jobid", 0) != is->jobid)
		return 0;
	if (st && !strcmp(st, "running") && wire_str(ev, "node")) {
		snprintf(is->node, is->node_len, "%s", wire_str(ev, "node"));
		return 1;
	}
	if (!st || (strcmp(st, "queued") && strcmp(st, "held") && strcmp(st, "running"))) {
		snprintf(is->ended, sizeof(is->ended), "%s", st ? st : "gone");
		snprintf(is->reason, sizeof(is->reason), "%s", wire_str(ev, "reason") ? wire_str(ev, "reason") : "");
		return 1;
	}
	return 0;
}

static int istart_tick(void *ud)
{
	struct istart *is = ud;
	struct timespec zero = { 0, 0 };
	int sig = sigtimedwait(is->stop, NULL, &zero);

	if (sig > 0) {
		is->sig = sig;
		return 1;
	}
	return 0;
}

static int istart_start(const json_t *reply, bool resumed, void *ud)
{
	struct istart *is = ud;
	json_t *cur = json_object_get(reply, "current"), *o;
	size_t i;

	if (!resumed && !json_array_size(cur)) {
		snprintf(is->ended, sizeof(is->ended), "gone");
		return 1;
	}
	json_array_foreach(cur, i, o)
		if (istart_look(is, o))
			return 1;
	return istart_tick(ud);
}

static int istart_event(const json_t *ev, void *ud)
{
	return istart_look(ud, ev);
}

static int interactive(int64_t jobid, const char *id, bool command)
{
	/* run by srun --pty (its argv[0]): Slurm's lines */
	bool srun = !strcmp(program_invocation_short_name, "srun");
	char path[PATH_MAX], node[256] = "";
	struct client *cl = NULL;
	struct error err;
	sigset_t stop, old;
	int fd, r;

	if (srun)
		fprintf(stderr, "srun: job %lld queued and waiting for resources\n", (long long)jobid);
	else
		fprintf(stderr, "qsub: waiting for job %s to start\n", id);
	r = client_open(arg_conf, &cl, &err);
	if (r < 0)
		return cmd_fail(1, "%s", err.text);
	/* Interrupted (^C, the terminal closed, killed) while the job waits:
	 * the job is deleted, nobody would reach its terminal. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, &old);
	/* Its start (running, on a node) comes on the event stream
	 * (docs/EVENTS.md), not from a stat every 100 ms; the signals are
	 * looked for every 100 ms meanwhile. */
	{
		struct istart is = { .jobid = jobid, .stop = &stop, .node = node, .node_len = sizeof(node) };
		struct watch_opts o = { .since = -1, .jobs = &jobid, .n_jobs = 1, .tick_ms = 100,
					.tick = istart_tick };

		r = watch_run(cl, &o, istart_start, istart_event, &is, &err);
		if (r < 0) {
			client_close(cl);
			return cmd_fail(1, "%s", err.text);
		}
		if (is.ended[0]) {
			fprintf(stderr, "%s: job %s ended before it could be reached: %s%s%s\n", srun ? "srun: error" : "qsub",
				id, is.ended, is.reason[0] ? ": " : "", is.reason);
			client_close(cl);
			return 1;
		}
		if (is.sig) {
			json_t *reply = NULL;

			r = client_call(cl, json_pack("{s:s, s:I}", "op", "delete", "jobid", (json_int_t)jobid), &reply,
					&err);
			json_decref(reply);
			client_close(cl);
			if (srun)
				fprintf(stderr, "srun: Job allocation %lld has been revoked%s\n", (long long)jobid,
					r < 0 ? ": could not delete it" : "");
			else
				fprintf(stderr, "qsub: job %s %s\n", id, r < 0 ? "could not be deleted" : "deleted");
			return 128 + is.sig;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	r = snprintf(path, sizeof(path), "%s/nodes/%s/jobs/%lld.pty", client_config(cl)->state_dir, node,
		     (long long)jobid);
	client_close(cl);
	if (r < 0 || (size_t)r >= sizeof(path))
		return cmd_fail(1, "job %s: path of its terminal too long", id);
	fd = ttyrelay_connect(path, 30000, &err);
	if (fd < 0)
		return cmd_fail(1, "job %s: %s", id, err.text);
	if (srun)
		fprintf(stderr, "srun: job %lld has been allocated resources\n", (long long)jobid);
	else
		fprintf(stderr, "qsub: job %s ready\n", id);
	r = ttyrelay_run(fd, &err);
	close(fd);
	if (r < 0)
		return cmd_fail(1, "job %s: %s", id, err.text);
	/* -I -- command: the command's status, once the job has ended */
	if (command)
		return block(jobid, id);
	fprintf(stderr, "qsub: job %s completed\n", id);
	return 0;
}

/* qsub -W block=true: waits for the job (or the array) to end and
 * returns its exit status, as PBS's qsub does: the job's exit code, 128
 * + N for a job killed by signal N, 1 for one deleted or that never ran;
 * for an array, its Exit_status (0 every subjob exited 0, 1 some did
 * not, 2 some were deleted). Told by the event stream (docs/EVENTS.md),
 * not by asking again: it returns as the end is committed. */
static int block(int64_t jobid, const char *id)
{
	struct client *cl = NULL;
	struct error err;
	int r, code = 1;

	r = client_open(arg_conf, &cl, &err);
	if (r == 0)
		r = watch_jobs_end(cl, &jobid, 1, NULL, NULL, &code, &err);
	client_close(cl);
	if (r < 0)
		return cmd_fail(1, "%s", err.text);
	(void)id;
	return code;
}

/* The -N default: the script's file name, or STDIN. */
static int default_name(const char *path, const char **ret)
{
	const char *base;

	if (!path) {
		*ret = "STDIN";
		return 0;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!utf8_valid(base, strlen(base)))
		return cmd_fail(1, "%s: the file name is not valid UTF-8; name the job with -N", path);
	if (!*base || strlen(base) > JOBSPEC_NAME_MAX)
		return cmd_fail(1, "%s: cannot make a job name of it; use -N", path);
	*ret = base;
	return 0;
}

/* Whether w is the "-l NAME=...: recorded" of a server-level resource
 * that the pool's [licenses] counts (qpoold reads it as a license and
 * refuses a value that is not a count). */
static bool warning_is_license(const struct config *c, const char *w)
{
	for (size_t i = 0; c && i < c->n_licenses; i++) {
		size_t n = strlen(c->licenses[i].name);

		if (strncmp(w, "-l ", 3) == 0 && strncmp(w + 3, c->licenses[i].name, n) == 0 && w[3 + n] == '=')
			return true;
	}
	return false;
}

static int submit(const struct jobspec *js, const char *path, const char *text, size_t len)
{
	struct client *cl = NULL;
	json_t *req = NULL, *reply = NULL;
	struct error err;
	const char *name = NULL;
	char server[JOBID_SERVER_MAX], id[JOBID_SERVER_MAX + 24];
	int r;

	r = default_name(path, &name);
	if (r)
		return r;
	r = client_open(arg_conf, &cl, &err);
	if (r < 0)
		return cmd_fail(1, "%s", err.text);
	for (size_t i = 0; i < js->n_warnings; i++)
		if (!warning_is_license(client_config(cl), js->warnings[i]))
			fprintf(stderr, "qsub: warning: %s\n", js->warnings[i]);
	r = request_build(js, client_config(cl), text, len, name, &req);
	if (r) {
		client_close(cl);
		return r;
	}
	r = client_call(cl, req, &reply, &err);
	/* Encoded once, as it is sent: the user hears "too large", not a
	 * transport error. */
	if (r == -EMSGSIZE) {
		client_close(cl);
		return cmd_fail(1, "job too large to send with its environment (limit %u bytes)", WIRE_MAX);
	}
	/* PBS prints ID.server, and scripts split it on the dot. */
	client_server_name(cl, server, sizeof(server));
	client_close(cl);
	if (r < 0 && !strcmp(program_invocation_short_name, "srun"))
		return cmd_fail(1, "error: Unable to allocate resources: %s", strstr(err.text, "unknown queue") ?
				"Invalid partition name specified" : err.text);
	if (r < 0)
		return cmd_fail(1, "%s", err.text);
	if (wire_int(reply, "jobid", 0) <= 0) {
		json_decref(reply);
		return cmd_fail(1, "qpoold's reply has no job id");
	}
	/* qpoold names itself; an older one does not. */
	if (wire_str(reply, "server"))
		snprintf(server, sizeof(server), "%s", wire_str(reply, "server"));
	/* An array prints as ID[].server, as PBS Pro's qsub does. */
	jobid_format_array(wire_int(reply, "jobid", 0), wire_bool(reply, "array", 0) ? JOBID_ARRAY_ALL : JOBID_PLAIN,
			   server, id, sizeof(id));
	if (js->interactive > 0) {
		int64_t n = wire_int(reply, "jobid", 0);

		json_decref(reply);
		return interactive(n, id, arg_command);
	}
	if (js->quiet > 0 && js->block <= 0) {
		json_decref(reply);
		return 0;
	}
	if (js->quiet <= 0)
		printf("%s\n", id);
	if (fflush(stdout) != 0) {
		json_decref(reply);
		return cmd_fail(1, "cannot write the job id: %s", strerror(errno));
	}
	if (js->block > 0) {
		int64_t n = wire_int(reply, "jobid", 0);

		json_decref(reply);
		return block(n, id);
	}
	json_decref(reply);
	return 0;
}

/* -I -- command: the job's script, which execs command with its words
 * quoted; gded runs it on the job's terminal as it runs a batch script.
 * 0 or the exit status after a message. */
static int command_script(char **words, char **ret_text, size_t *ret_len)
{
	static const char head[] = "#!/bin/sh\n# qsub -I -- command: run on the job's terminal\nexec ";
	char *line = NULL, *text;
	size_t len = 0;

	for (size_t i = 0; words[i]; i++)
		if (cmd_quote(&line, &len, words[i]) < 0) {
			free(line);
			return cmd_fail(1, "out of memory");
		}
	text = malloc(sizeof(head) + len + 1);
	if (!text) {
		free(line);
		return cmd_fail(1, "out of memory");
	}
	memcpy(text, head, sizeof(head) - 1);
	memcpy(text + sizeof(head) - 1, line, len);
	memcpy(text + sizeof(head) - 1 + len, "\n", 2);
	free(line);
	*ret_text = text;
	*ret_len = sizeof(head) + len;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct jobspec cli, js;
	const char *path = NULL, *shown;
	char *text = NULL;
	size_t len = 0;
	struct error err;
	int c, fd, r, status, at = optind;

	if (version_requested(argc, argv))
		return version_print("qsub");
	/* Without a seed jansson opens and reads /dev/urandom for one; its
	 * tables here hold only our own environment and qpoold's reply, so
	 * no one else chooses the keys: the pid does. */
	json_object_seed((size_t)getpid() | 1);
	jobspec_init(&cli);
	jobspec_init(&js);
	opterr = 0;
	for (; (c = getopt_long(argc, argv, "+:" JOBSPEC_OPTSTRING "f:", longopts, NULL)) != -1; at = optind) {
		if (c == 'H') {
			fputs(usage_text, stdout);
			status = 0;
			goto done;
		}
		if (c == 'f') {
			arg_conf = optarg;
			continue;
		}
		if (c == '?' || c == ':') {
			if (c == ':')
				status = cmd_fail(2, "option -%c needs an argument (see qsub --help)", optopt);
			else if (optopt)
				status = cmd_fail(2, "unknown option -%c (see qsub --help)", optopt);
			else
				status = cmd_fail(2, "unknown option %s (see qsub --help)", argv[optind - 1]);
			goto done;
		}
		r = jobspec_option(&cli, c, optarg, &err);
		if (r < 0) {
			status = cmd_fail(1, "%s", r == -ENOMEM ? "out of memory" : err.text);
			goto done;
		}
	}
	/* getopt stepped over a "--" of its own (not an option's argument) */
	arg_command = optind == at + 1 && !strcmp(argv[at], "--");
	if (arg_command && cli.interactive <= 0) {
		status = cmd_fail(2, "-- command: only with -I (a batch job's commands go in its script)");
		goto done;
	}
	if (arg_command && optind >= argc) {
		status = cmd_fail(2, "-I --: no command after -- (see qsub --help)");
		goto done;
	}
	if (!arg_command && argc - optind > 1) {
		status = cmd_fail(2, "one script at most (see qsub --help)");
		goto done;
	}
	if (!arg_command && optind < argc && strcmp(argv[optind], "-") != 0)
		path = argv[optind];
	shown = arg_command ? "the command" : path ? path : "standard input";
	fd = -1;
	if (arg_command) {
		status = command_script(argv + optind, &text, &len);
		if (status)
			goto done;
		r = 0;
	} else if (cli.interactive > 0 && !path) {
		/* qsub -I: standard input is the user's terminal, not a
		 * script; the job's "script" only marks what it is. */
		text = strdup("# qsub -I: an interactive shell\n");
		len = text ? strlen(text) : 0;
		r = text ? 0 : -ENOMEM;
	} else {
		fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : STDIN_FILENO;
		r = fd < 0 ? -errno : jobscript_read(fd, &text, &len);
	}
	if (path && fd >= 0)
		close(fd);
	if (r < 0) {
		status = cmd_fail(1, "cannot read %s: %s", shown, strerror(-r));
		goto done;
	}
	if (len > WIRE_MAX) {
		status = cmd_fail(1, "%s: script larger than %u bytes", shown, WIRE_MAX);
		goto done;
	}
	r = jobscript_check(text, len, &err);
	if (r == 0)
		r = jobscript_parse(text, len, cli.prefix ? cli.prefix : getenv("PBS_DPREFIX"), &js, &err);
	if (r == 0)
		r = jobspec_merge(&js, &cli);
	if (r < 0) {
		status = cmd_fail(1, "%s: %s", shown, r == -ENOMEM ? "out of memory" : err.text);
		goto done;
	}
	status = submit(&js, path, text, len);
done:
	free(text);
	jobspec_clear(&cli);
	jobspec_clear(&js);
	return status;
}
