/* SPDX-License-Identifier: MIT */
/* qsub: submit a job script to qpoold and print its id. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "jobenv.h"
#include "jobid.h"
#include "jobscript.h"
#include "wire.h"
#include "version.h"

static const char usage_text[] =
	"usage: qsub [options] [script]\n"
	"Submits script (standard input when none is given or it is -) and prints the job id.\n"
	"  -N name            job name (default: the script's file name, or STDIN)\n"
	"  -q queue           queue (default: the server's default queue)\n"
	"  -l res=val,...     ncpus=N, mem=SIZE (512M, 8G), walltime=HH:MM:SS; may repeat\n"
	"  -o path, -e path   standard output / error file (relative to this directory)\n"
	"  -j oe | -j n       join standard error into standard output, or not\n"
	"  -v VAR[=val],...   pass variables (VAR alone: its value here)\n"
	"  -V                 pass this whole environment\n"
	"  -h                 submit the job held (qrls releases it)\n"
	"  -r y|n             whether the job may be re-run\n"
	"  -f FILE            configuration file (default: $QPOOL_CONF or /etc/qpool/qpool.conf)\n"
	"      --help         show this help\n"
	"Script lines starting with #QP or #PBS before the first command take the same\n"
	"options; options given here override them.\n";

static const char *arg_conf;

/* Reads all of fd, up to WIRE_MAX + 1 bytes (enough to tell "too large"). */
static int script_read(int fd, char **ret, size_t *ret_len)
{
	size_t len = 0, cap = 64 * 1024;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *b;

			if (cap > WIRE_MAX)
				break;
			cap *= 2;
			b = realloc(buf, cap);
			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;

			free(buf);
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* The job's environment: all of ours with -V (skipping entries JSON cannot
 * carry), then each -v, later ones winning. */
static int env_build(const struct jobspec *js, json_t **ret)
{
	json_t *env = json_object();
	struct error err;

	if (!env)
		return cmd_fail(1, "out of memory");
	for (char **e = environ; js->export_all > 0 && e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[256];

		if (!eq || eq == *e || (size_t)(eq - *e) >= sizeof(name) || !utf8_valid(*e, strlen(*e)))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
		json_object_set_new(env, name, json_string(eq + 1));
	}
	for (size_t i = 0; i < js->n_vars; i++) {
		const struct jobspec_var *v = &js->vars[i];
		const char *value = v->value ? v->value : getenv(v->name);

		if (!value) {
			json_decref(env);
			return cmd_fail(1, "-v %s: %s is not set in qsub's environment", v->name, v->name);
		}
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

/* An absolute path: path itself, or workdir/path. */
static int path_absolute(const char *workdir, const char *path, json_t *req, const char *key)
{
	char *abs;

	if (!path)
		return 0;
	if (path[0] == '/')
		abs = strdup(path);
	else if (asprintf(&abs, "%s/%s", strcmp(workdir, "/") ? workdir : "", path) < 0)
		abs = NULL;
	if (!abs)
		return cmd_fail(1, "out of memory");
	json_object_set_new(req, key, json_string(abs));
	free(abs);
	return 0;
}

/* The submit request for js; status 0 or the exit status after a message. */
static int request_build(const struct jobspec *js, const char *script, size_t len,
			 const char *default_name, json_t **ret)
{
	char workdir[PATH_MAX];
	json_t *req, *env = NULL;
	mode_t mask;
	int r;

	if (!getcwd(workdir, sizeof(workdir)))
		return cmd_fail(1, "cannot determine the working directory: %s", strerror(errno));
	if (!utf8_valid(workdir, strlen(workdir)))
		return cmd_fail(1, "the working directory %s is not valid UTF-8", workdir);
	r = env_build(js, &env);
	if (r)
		return r;
	req = json_pack("{s:s, s:s%, s:s, s:s, s:b, s:b, s:o}", "op", "submit", "script", script, len,
			"name", js->name ? js->name : default_name, "workdir", workdir,
			"join", js->join > 0, "hold", js->hold > 0, "env", env);
	if (!req)
		return cmd_fail(1, "out of memory");
	if (js->queue)
		json_object_set_new(req, "queue", json_string(js->queue));
	if (js->ncpus >= 0)
		json_object_set_new(req, "ncpus", json_integer(js->ncpus));
	if (js->mem >= 0)
		json_object_set_new(req, "mem", json_integer(js->mem));
	if (js->walltime >= 0)
		json_object_set_new(req, "walltime", json_integer(js->walltime));
	if (js->rerunnable >= 0)
		json_object_set_new(req, "rerunnable", json_boolean(js->rerunnable));
	/* The submitter's umask goes with the job (umask(2) can only be read
	 * by setting it): its output files get the modes the user expects. */
	mask = umask(022);
	umask(mask);
	json_object_set_new(req, "umask", json_integer(mask & 0777));
	r = path_absolute(workdir, js->stdout_path, req, "stdout");
	if (!r)
		r = path_absolute(workdir, js->stderr_path, req, "stderr");
	if (r) {
		json_decref(req);
		return r;
	}
	*ret = req;
	return 0;
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
	r = request_build(js, text, len, name, &req);
	if (r)
		return r;
	/* Checked here so the user hears "too large", not a transport error. */
	r = (int)json_dumpb(req, NULL, 0, JSON_COMPACT);
	if (r > (int)WIRE_MAX) {
		json_decref(req);
		return cmd_fail(1, "job too large to send: %d bytes with its environment (limit %u)",
			    r, WIRE_MAX);
	}
	r = client_open(arg_conf, &cl, &err);
	if (r < 0) {
		json_decref(req);
		return cmd_fail(1, "%s", err.text);
	}
	r = client_call(cl, req, &reply, &err);
	/* PBS prints ID.server, and scripts split it on the dot. */
	jobid_server_name(client_config(cl)->server_name, server, sizeof(server));
	client_close(cl);
	if (r < 0)
		return cmd_fail(1, "%s", err.text);
	if (wire_int(reply, "jobid", 0) <= 0) {
		json_decref(reply);
		return cmd_fail(1, "qpoold's reply has no job id");
	}
	jobid_format(wire_int(reply, "jobid", 0), server, id, sizeof(id));
	printf("%s\n", id);
	json_decref(reply);
	return fflush(stdout) == 0 ? 0 : cmd_fail(1, "cannot write the job id: %s", strerror(errno));
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
	int c, fd, r, status;

	if (version_requested(argc, argv))
		return version_print("qsub");
	/* Without a seed jansson opens and reads /dev/urandom for one; its
	 * tables here hold only our own environment and qpoold's reply, so
	 * no one else chooses the keys: the pid does. */
	json_object_seed((size_t)getpid() | 1);
	jobspec_init(&cli);
	jobspec_init(&js);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:N:q:l:o:e:j:v:Vhr:f:", longopts, NULL)) != -1) {
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
	if (argc - optind > 1) {
		status = cmd_fail(2, "one script at most (see qsub --help)");
		goto done;
	}
	if (optind < argc && strcmp(argv[optind], "-") != 0)
		path = argv[optind];
	shown = path ? path : "standard input";
	fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : STDIN_FILENO;
	r = fd < 0 ? -errno : script_read(fd, &text, &len);
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
		r = jobscript_parse(text, len, &js, &err);
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
