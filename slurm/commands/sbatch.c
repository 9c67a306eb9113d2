/* SPDX-License-Identifier: MIT */
/* sbatch: submit a job script with Slurm's options to qpoold and print its id. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "jobenv.h"
#include "jobscript.h"
#include "jobsubmit.h"
#include "parse.h"
#include "slurmopt.h"
#include "version.h"
#include "watch.h"
#include "wire.h"

static const char usage_text[] =
	"Usage: sbatch [OPTIONS...] script | --wrap=command\n"
	"Submits a batch script to qpool (Slurm's options; see sbatch(1)) and prints its id.\n"
	"  -J, --job-name=name        -p, --partition=list       -t, --time=[D-]H:M:S\n"
	"  -N, --nodes=N[-M]          -n, --ntasks=N             --ntasks-per-node=N\n"
	"  -c, --cpus-per-task=N      --mem=SIZE                 --mem-per-cpu=SIZE\n"
	"  -o, --output=pattern       -e, --error=pattern        (%j %A %a %x %u %N %%)\n"
	"  -a, --array=LIST[%MAX]     -d, --dependency=TYPE:ID   -H, --hold\n"
	"  --begin=TIME               -D, --chdir=dir            --export=ALL|NONE|VARS\n"
	"  --mail-type=TYPE           --mail-user=user           --requeue, --no-requeue\n"
	"  --exclusive                -A, --account=name         -W, --wait\n"
	"  --parsable                 --wrap=command             -h, --help\n"
	"#SBATCH lines before the first command take the same options; the command\n"
	"line overrides them. QPOOL_CONF names the configuration file.\n";

/* --export: ALL (the default: this whole environment), NONE, or a list
 * of NAME or NAME=value with ALL or NONE in it or not (a list alone
 * passes only those). SLURM_* of an enclosing job never pass: the new
 * job's own are gded's. */
static int env_build(const struct slurmopt *o, json_t **ret)
{
	const char *spec = o->export ? o->export : "ALL";
	bool all = false;
	json_t *env;
	struct error err;
	char *copy, *save = NULL;
	int prio;

	for (const char *p = spec; *p;) {
		size_t n = strcspn(p, ",");

		all |= n == 3 && !strncmp(p, "ALL", 3);
		p += n + (p[n] == ',');
	}
	env = all ? jobenv_environ() : json_object();
	copy = strdup(spec);
	if (!env || !copy) {
		json_decref(env);
		free(copy);
		return cmd_fail(1, "error: out of memory");
	}
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(w, '=');
		const char *value;

		if (!strcmp(w, "ALL") || !strcmp(w, "NONE"))
			continue;
		if (eq)
			*eq = '\0';
		value = eq ? eq + 1 : getenv(w);
		if (!*w || !value || !utf8_valid(value, strlen(value)))
			continue;
		json_object_set_new(env, w, json_string(value));
	}
	free(copy);
	{
		const char *key;
		void *tmp;
		json_t *v;

		json_object_foreach_safe(env, tmp, key, v)
			if (!strncmp(key, "SLURM_", 6))
				json_object_del(env, key);
	}
	/* Slurm's SLURM_PRIO_PROCESS: the submitter's nice value, which
	 * sbatch(1) lists among a batch job's variables. */
	errno = 0;
	prio = getpriority(PRIO_PROCESS, 0);
	if (prio != -1 || errno == 0) {
		char text[16];

		snprintf(text, sizeof(text), "%d", prio);
		json_object_set_new(env, "SLURM_PRIO_PROCESS", json_string(text));
	}
	if (slurmopt_env(o, env) < 0 || jobenv_check(env, &err) < 0) {
		json_decref(env);
		return cmd_fail(1, "error: %s", err.text);
	}
	*ret = env;
	return 0;
}

/* An output path, relative ones from the job's directory (as Slurm
 * takes them); "" when none. */
static int path_set(const char *dir, const char *path, json_t *req, const char *key)
{
	char abs[PATH_MAX];
	int r;

	if (!path)
		return 0;
	r = path[0] == '/' ? snprintf(abs, sizeof(abs), "%s", path) :
		snprintf(abs, sizeof(abs), "%s/%s", strcmp(dir, "/") ? dir : "", path);
	if (r < 0 || (size_t)r >= sizeof(abs))
		return cmd_fail(1, "error: %s: path too long", path);
	json_object_set_new(req, key, json_string(abs));
	return 0;
}

/* The submit request; status 0 or the exit status after a message. */
static int request_build(const struct slurmopt *o, const struct jobspec *js, const char *script,
			 size_t len, const char *default_name, json_t **ret)
{
	char cwd[PATH_MAX], workdir[PATH_MAX], begin[32];
	json_t *req, *env = NULL, *attrs;
	const char *out = js->stdout_path, *err = js->stderr_path;
	int r;

	if (!getcwd(cwd, sizeof(cwd)) || !utf8_valid(cwd, strlen(cwd)))
		return cmd_fail(1, "error: cannot determine the working directory");
	if (jobspec_workdir(js, cwd, workdir, sizeof(workdir)) < 0)
		return cmd_fail(1, "error: --chdir=%s: path too long", js->workdir);
	r = env_build(o, &env);
	if (r)
		return r;
	jobenv_origin(env, cwd, js->queue);
	attrs = jobsubmit_attrs(js);
	/* What Slurm's views show of the request and qpool's chunks do not
	 * keep (one node's ncpus=8 may be 4 tasks of 2, 8 of 1, 1 of 8):
	 * scontrol's NumTasks, CPUs/Task and Dependency (slurm/slurmfmt.h). */
	if (attrs && o->ntasks > 0) {
		snprintf(begin, sizeof(begin), "%lld", (long long)o->ntasks);
		json_object_set_new(attrs, "Slurm_ntasks", json_string(begin));
	}
	if (attrs && o->cpus_per_task > 0) {
		snprintf(begin, sizeof(begin), "%lld", (long long)o->cpus_per_task);
		json_object_set_new(attrs, "Slurm_cpus_per_task", json_string(begin));
	}
	if (attrs && o->dependency && strstr(o->dependency, "singleton"))
		json_object_set_new(attrs, "Slurm_dependency", json_string(o->dependency));
	if (attrs && o->begin) {
		time_t when;

		if (slurm_when_parse(o->begin, time(NULL), true, &when) < 0) {
			json_decref(attrs);
			json_decref(env);
			return cmd_fail(1, "error: Invalid time specification %s", o->begin);
		}
		snprintf(begin, sizeof(begin), "%lld", (long long)when);
		json_object_set_new(attrs, "Execution_Time", json_string(begin));
	}
	req = json_pack("{s:s, s:s%, s:s, s:s, s:b, s:b, s:o, s:o*}", "op", "submit", "script", script,
			len, "name", js->name ? js->name : default_name, "workdir", workdir, "join",
			js->join > 0, "hold", js->hold > 0, "env", env, "attrs", attrs);
	if (!req)
		return cmd_fail(1, "error: out of memory");
	jobsubmit_request(js, req);
	json_object_set_new(req, "dialect", json_string("slurm"));
	/* Slurm's default: slurm-%j.out (slurm-%A_%a.out for an array) in
	 * the job's directory, standard error joined into it. */
	if (!out)
		out = js->array ? "slurm-^array_id^_^array_index^.out" : "slurm-^job_id^.out";
	r = path_set(workdir, out, req, "stdout");
	if (!r)
		r = path_set(workdir, err, req, "stderr");
	if (r) {
		json_decref(req);
		return r;
	}
	*ret = req;
	return 0;
}

/* --dependency=singleton: after every job of ours with this name that
 * has not ended. Appends to js->depend. */
static int singleton(struct client *cl, struct jobspec *js, const char *name)
{
	const char *me = getenv("USER") ? getenv("USER") : getenv("LOGNAME");
	json_t *reply = NULL, *job;
	struct error err;
	size_t i;
	char *dep = NULL;
	int r;

	if (!me)
		return cmd_fail(1, "error: --dependency=singleton: USER is not set");
	r = client_call_pages(cl, json_pack("{s:s, s:s}", "op", "stat", "user", me), "jobs", &reply, &err);
	if (r < 0)
		return cmd_fail(1, "error: %s", err.text);
	json_array_foreach(json_object_get(reply, "jobs"), i, job) {
		const char *jn = wire_str(job, "name");
		char *d;

		if (!jn || strcmp(jn, name) || wire_int(job, "array_id", 0) > 0)
			continue;
		if (asprintf(&d, "%s%safterany:%lld%s", dep ? dep : "", dep ? "," : "",
			     (long long)wire_int(job, "jobid", 0), json_object_get(job, "array_spec") ? "[]" : "") < 0)
			break;
		free(dep);
		dep = d;
	}
	json_decref(reply);
	if (dep) {
		char *all = NULL;

		if (js->depend && asprintf(&all, "%s,%s", js->depend, dep) >= 0) {
			free(dep);
			dep = all;
		}
		free(js->depend);
		js->depend = dep;
	}
	return 0;
}

/* sbatch --wait: waits on the event stream (docs/EVENTS.md) for the
 * job's end and returns its exit status as sbatch does (128 + N for
 * signal N, 1 when it never ran). */
static int wait_job(struct client *cl, long long jobid)
{
	int64_t id = jobid;
	struct error err;
	int code = 1;

	if (watch_jobs_end(cl, &id, 1, NULL, NULL, &code, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	return code;
}

/* qpoold's refusal in Slurm's words where Slurm has them. */
static int refused(int r, const char *text, const char *partition)
{
	/* The site's submit filter said no: its line first, then Slurm's
	 * own, as a job_submit plugin's user message reads. */
	if (r == -ECANCELED) {
		fprintf(stderr, "sbatch: error: %s\n", text);
		return cmd_fail(1, "error: Batch job submission failed: Job rejected by the site's submit filter");
	}
	if (strstr(text, "unknown queue") && partition)
		return cmd_fail(1, "error: invalid partition specified: %s", partition);
	if (strstr(text, "unknown queue"))
		return cmd_fail(1, "error: Batch job submission failed: Invalid partition name specified");
	/* No node has the CPUs a node's share asks for (--mincpus, -c, a
	 * node's tasks): Slurm's ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE. */
	if (strstr(text, "more CPUs than any node has") || strstr(text, "wider than any node"))
		return cmd_fail(1, "error: Batch job submission failed: Requested node configuration is not "
				"available (%s)", text);
	/* A GPU type (model) no node has: Slurm's ESLURM_INVALID_GRES;
	 * more GPUs than a node has: ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE. */
	if (strstr(text, "no node of this pool has GPUs of that model"))
		return cmd_fail(1, "error: Invalid generic resource (gres) specification (%s)", text);
	if (strstr(text, "more GPUs"))
		return cmd_fail(1, "error: Batch job submission failed: Requested node configuration is not "
				"available (%s)", text);
	if (strstr(text, "more memory than any node"))
		return cmd_fail(1, "error: Memory specification can not be satisfied: %s", text);
	/* -w, -x, -C (docs/RESOURCES.md): Slurm's ESLURM_INVALID_NODE_NAME,
	 * ESLURM_INVALID_FEATURE, ESLURM_INVALID_NODE_COUNT. */
	if (strstr(text, "unknown node"))
		return cmd_fail(1, "error: Batch job submission failed: Invalid node name specified (%s)", text);
	if (strstr(text, "no node of this pool has those features"))
		return cmd_fail(1, "error: Batch job submission failed: Invalid feature specification (%s)", text);
	if (strstr(text, "leave no node of this pool"))
		return cmd_fail(1, "error: Batch job submission failed: Requested node configuration is not "
				"available (%s)", text);
	if (strstr(text, "the node list names"))
		return cmd_fail(1, "error: Batch job submission failed: Node count specification invalid (%s)", text);
	/* --gres other than gpu, --tmp: Slurm's ESLURM_INVALID_GRES. */
	if (strstr(text, "node resource"))
		return cmd_fail(1, "error: Batch job submission failed: Invalid generic resource (gres) specification "
				"(%s)", text);
	/* -L: Slurm's ESLURM_INVALID_LICENSES. */
	if (strstr(text, "license"))
		return cmd_fail(1, "error: Batch job submission failed: Invalid license specification (%s)", text);
	if (strstr(text, "depend") || strstr(text, "Unknown Job Id"))
		return cmd_fail(1, "error: Batch job submission failed: Job dependency problem (%s)", text);
	return cmd_fail(1, "error: Batch job submission failed: %s", text);
}

/* Submits to each partition of the list in turn until one accepts. */
static int submit(const struct slurmopt *o, struct jobspec *js, const char *text, size_t len,
		  const char *name)
{
	const char *parts = o->partition ? o->partition : "";
	struct client *cl = NULL;
	json_t *reply = NULL;
	struct error err;
	long long id;
	int r;

	for (size_t i = 0; i < js->n_warnings; i++)
		fprintf(stderr, "sbatch: warning: %s\n", js->warnings[i]);
	r = client_open(NULL, &cl, &err);
	if (r < 0)
		return cmd_fail(1, "error: %s", err.text);
	if (js->mail > 0 && !client_config(cl)->sendmail[0])
		fprintf(stderr, "sbatch: warning: --mail-type=%s: recorded; mail is off on this pool "
			"([server] sendmail is not set)\n", o->mail_type);
	if (o->dependency && strstr(o->dependency, "singleton")) {
		r = singleton(cl, js, name);
		if (r) {
			client_close(cl);
			return r;
		}
	}
	for (;;) {
		size_t n = strcspn(parts, ",");
		json_t *req = NULL;

		if (o->partition) {
			free(js->queue);
			js->queue = strndup(parts, n);
		}
		r = request_build(o, js, text, len, name, &req);
		if (r) {
			client_close(cl);
			return r;
		}
		r = client_call(cl, req, &reply, &err);
		if (r == -EMSGSIZE) {
			client_close(cl);
			return cmd_fail(1, "error: job too large to send with its environment (limit %u bytes)",
					WIRE_MAX);
		}
		if (r < 0 && r != -ECONNRESET && parts[n] == ',' && strstr(err.text, "queue")) {
			parts += n + 1;
			continue;
		}
		break;
	}
	if (r < 0) {
		client_close(cl);
		return refused(r, err.text, o->partition);
	}
	id = wire_int(reply, "jobid", 0);
	json_decref(reply);
	if (id <= 0) {
		client_close(cl);
		return cmd_fail(1, "error: qpoold's reply has no job id");
	}
	if (o->parsable > 0)
		printf("%lld\n", id);
	else
		printf("Submitted batch job %lld\n", id);
	if (fflush(stdout) != 0) {
		client_close(cl);
		return cmd_fail(1, "error: cannot write the job id: %s", strerror(errno));
	}
	r = o->wait > 0 ? wait_job(cl, id) : 0;
	client_close(cl);
	return r;
}

/* The script: --wrap's command under a #!/bin/sh line, or the file (or
 * standard input), which must start with #! as sbatch requires. */
static int script_get(const struct slurmopt *cli, const char *path, char **ret, size_t *ret_len)
{
	struct error err;
	int fd, r;

	if (cli->wrap) {
		if (path)
			return cmd_fail(1, "error: script argument not permitted with --wrap option");
		if (asprintf(ret, "#!/bin/sh\n# made by sbatch --wrap\n%s\n", cli->wrap) < 0)
			return cmd_fail(1, "error: out of memory");
		*ret_len = strlen(*ret);
		return 0;
	}
	fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : STDIN_FILENO;
	r = fd < 0 ? -errno : jobscript_read(fd, ret, ret_len);
	if (path && fd >= 0)
		close(fd);
	if (r < 0)
		return cmd_fail(1, "error: Unable to open file %s", path ? path : "(standard input)");
	if (*ret_len > WIRE_MAX)
		return cmd_fail(1, "error: Batch script is too large (over %u bytes)", WIRE_MAX);
	if (*ret_len == 0)
		return cmd_fail(1, "error: Batch script is empty!");
	if (jobscript_check(*ret, *ret_len, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	if (memmem(*ret, *ret_len, "\r\n", 2))
		return cmd_fail(1, "error: Batch script contains DOS line breaks (\\r\\n) instead of the "
				"UNIX ones (\\n) it needs");
	if (strncmp(*ret, "#!", 2) != 0)
		return cmd_fail(1, "error: This does not look like a batch script: the first line must "
				"start with #! and the path to an interpreter (e.g. #!/bin/sh)");
	return 0;
}

/* The job's name: -J, else the script's file name, else "wrap" or "sbatch"
 * (standard input), as Slurm names them. */
static const char *name_default(const char *path, const struct slurmopt *o)
{
	const char *base;

	if (o->wrap)
		return "wrap";
	if (!path)
		return "sbatch";
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return *base && strlen(base) <= JOBSPEC_NAME_MAX && utf8_valid(base, strlen(base)) ? base : "sbatch";
}

int main(int argc, char **argv)
{
	struct slurmopt cli, o;
	struct jobspec js;
	struct error err;
	const char *path = NULL, *user = getenv("USER") ? getenv("USER") : getenv("LOGNAME");
	char *text = NULL, **words = NULL;
	int nwords = 0, first, status, r;
	size_t len = 0;

	if (version_requested(argc, argv))
		return version_print("sbatch");
	json_object_seed((size_t)getpid() | 1);
	slurmopt_init(&cli);
	slurmopt_init(&o);
	jobspec_init(&js);
	/* Once for the script's name and --wrap, once more over the #SBATCH
	 * lines so the command line wins, as sbatch reads them. */
	r = slurmopt_parse(&cli, argc, argv, &first, &err);
	if (r < 0) {
		status = cmd_fail(1, r == -ENOMEM ? "error: out of memory" :
				  strncmp(err.text, "unrecognized", 12) && strncmp(err.text, "invalid option", 14) &&
				  strncmp(err.text, "option", 6) ? "error: %s" : "%s", err.text);
		goto done;
	}
	if (cli.help > 0) {
		fputs(usage_text, stdout);
		status = 0;
		goto done;
	}
	if (first < argc)
		path = argv[first];
	if (first + 1 < argc) {
		status = cmd_fail(1, "error: arguments after the script (%s) are not passed by qpool; "
				  "use --export or --wrap", argv[first + 1]);
		goto done;
	}
	if (path && !strcmp(path, "-"))
		path = NULL;
	status = script_get(&cli, path, &text, &len);
	if (status)
		goto done;
	nwords = slurmopt_script_argv(text, len, &words);
	if (nwords < 0) {
		status = cmd_fail(1, "error: %s: too many #SBATCH words", path ? path : "script");
		goto done;
	}
	r = slurmopt_parse(&o, nwords, words, &first, &err);
	/* Slurm's separator of a heterogeneous job's components: refused
	 * as what it is, not as a broken script. */
	if (r == 0 && first < nwords && (!strcmp(words[first], "hetjob") || !strcmp(words[first], "packjob")))
		r = error_set(&err, -EINVAL, "heterogeneous jobs (#SBATCH %s) are not supported by qpool; "
			      "submit the components as separate jobs", words[first]);
	else if (r == 0 && first < nwords)
		r = error_set(&err, -EINVAL, "Invalid directive found in batch script: %s", words[first]);
	if (r == 0)
		r = slurmopt_parse(&o, argc, argv, &first, &err);
	if (r == 0 && !o.job_name && !(o.job_name = strdup(name_default(path, &o))))
		r = -ENOMEM;
	if (r == 0)
		r = slurmopt_jobspec(&o, user ? user : "nobody", &js, &err);
	if (r < 0) {
		/* Slurm's fatal() for options that exclude each other, its
		 * error() for the rest; getopt's own words bare. */
		status = cmd_fail(1, "%s%s", strstr(err.text, "mutually exclusive") ? "fatal: " :
				  strncmp(err.text, "unrecognized", 12) ? "error: " : "", err.text);
		goto done;
	}
	status = submit(&o, &js, text, len, o.job_name);
done:
	for (int i = 0; i < nwords; i++)
		free(words[i]);
	free(words);
	free(text);
	slurmopt_clear(&cli);
	slurmopt_clear(&o);
	jobspec_clear(&js);
	return status;
}
