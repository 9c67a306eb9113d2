/* SPDX-License-Identifier: MIT */
/* sacct: qpool's accounting (the acct op) in Slurm's fields, states and layouts. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "slurmfmt.h"
#include "slurmjobs.h"
#include "slurmsel.h"
#include "slurmtext.h"
#include "timeutil.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"Usage: sacct [-X] [-j JOBIDS] [-u USERS|-a] [-s STATES] [-S TIME] [-E TIME] [--name NAMES]\n"
	"             [-r PARTITIONS] [-o FIELDS] [-b|-l] [-n] [-p|-P] [--delimiter=C] [--json]\n"
	"Shows qpool's accounting of jobs as Slurm's sacct: by default your jobs since midnight.\n"
	"  -j, --jobs=JOBIDS       these jobs (12, 12_3), whenever they ran\n"
	"  -X, --allocations       the jobs only, not their batch steps\n"
	"      --units=[KMGTP]     memory sizes (ReqMem, MaxRSS, AveRSS) in that unit\n"
	"  -u, --user=USERS        these users' jobs; -a, --allusers: everyone's\n"
	"  -s, --state=STATES      jobs in these states (CD F CA TO OOM PD R ...)\n"
	"  -S, --starttime=TIME    jobs not ended before TIME (now, now-1hours, YYYY-MM-DD[THH:MM[:SS]], ...)\n"
	"  -E, --endtime=TIME      jobs submitted by TIME\n"
	"      --name=NAMES        jobs of these names\n"
	"  -r, --partition=PARTS   jobs of these partitions\n"
	"  -o, --format=FIELDS     JobID,JobName%%30,State,... (see sacct(1) for the fields)\n"
	"  -b, --brief             JobID, State, ExitCode\n"
	"  -l, --long              the long list of fields, those qpool measures\n"
	"  -n, --noheader          no header lines\n"
	"  -p, --parsable          fields end with '|'; -P, --parsable2: '|' between fields\n"
	"      --delimiter=C       the separator of -p and -P\n"
	"      --json              Slurm's JSON document\n"
	"      --conf FILE         configuration file\n"
	"      --help, --usage     show this help\n";

#define DEFAULT_FIELDS "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"
/* Slurm's --long, of the fields qpool has (no VM size, pages, disk,
 * CPU frequency, energy or TRES usage: qpool does not measure them). */
#define LONG_FIELDS "JobID,JobIDRaw,JobName,Partition,MaxRSS,AveRSS,MinCPU,AveCPU,NTasks,AllocCPUS,Elapsed," \
	"State,ExitCode,ReqMem"
#define MAX_FIELDS 64

static const char *arg_conf, *arg_fields = DEFAULT_FIELDS, *arg_start, *arg_end, *arg_delim = "|";
static bool arg_alloc, arg_all_users, arg_noheader, arg_parsable, arg_parsable2, arg_json;
static struct slurmsel arg_sel;

struct column {
	const struct slurmfmt_field *field;
	int width;
	bool left;
};

static int columns_parse(const char *list, struct column *cols, int max)
{
	char *copy = strdup(list), *save = NULL;
	int n = 0;

	if (!copy)
		return cmd_fail(1, "out of memory"), -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *pct = strchr(tok, '%');
		int width = 0;

		if (pct) {
			char *end;

			*pct = '\0';
			width = (int)strtol(pct + 1, &end, 10);
			if (*end || width <= 0 || width > 1000) {
				cmd_fail(1, "error: Invalid field width: %s", pct + 1);
				free(copy);
				return -1;
			}
		}
		if (n == max || !(cols[n].field = slurmfmt_field_name(tok, SLURMFMT_SACCT))) {
			cmd_fail(1, "error: Invalid field requested: \"%s\"", tok);
			free(copy);
			return -1;
		}
		cols[n].width = slurmfmt_field_width(cols[n].field, &cols[n].left);
		if (width)
			cols[n].width = width;
		n++;
	}
	free(copy);
	return n;
}

/* A cell of the text layout: cut values end with '+', as sacct's. */
static void cell_put(const struct column *c, const char *v)
{
	int n = (int)strlen(v);

	if (n > c->width)
		printf("%.*s+ ", c->width - 1, v);
	else
		printf(c->left ? "%-*s " : "%*s ", c->width, v);
}

/* --units=[KMGTP]: a size ("2G", "10240K", "0") in that unit, as Slurm's
 * ("1.50G"; whole ones with no decimals). Other values are left alone. */
static char arg_units;

static void units_put(char *v, size_t len)
{
	static const char scale[] = "KMGTP";
	const char *from, *to = strchr(scale, arg_units);
	char *end;
	double x;

	if (!to || !v[0])
		return;
	x = strtod(v, &end);
	if (end == v || (end[0] && end[1]))
		return;
	from = end[0] ? strchr(scale, end[0]) : NULL;
	if (end[0] && !from)
		return;
	/* no suffix: bytes */
	for (int k = from ? (int)(from - scale) + 1 : 0; k < (int)(to - scale) + 1; k++)
		x /= 1024;
	for (int k = (int)(to - scale) + 1; k < (from ? (int)(from - scale) + 1 : 0); k++)
		x *= 1024;
	if (x == (double)(long long)x)
		snprintf(v, len, "%lld%c", (long long)x, arg_units);
	else
		snprintf(v, len, "%.2f%c", x, arg_units);
}

static bool is_size(const struct column *c)
{
	static const char *const sizes[] = { "MaxRSS", "AveRSS", "ReqMem", NULL };
	const char *name = slurmfmt_field_header(c->field, SLURMFMT_SACCT);

	for (int i = 0; sizes[i]; i++)
		if (strcasecmp(sizes[i], name) == 0)
			return true;
	return false;
}

static void line_put(const struct column *cols, int n, const json_t *job, int64_t now)
{
	char v[4096];

	for (int i = 0; i < n; i++) {
		if (job) {
			slurmfmt_field_value(cols[i].field, SLURMFMT_SACCT, job, now, v, sizeof(v));
			if (arg_units && is_size(&cols[i]))
				units_put(v, sizeof(v));
		} else
			snprintf(v, sizeof(v), "%s", slurmfmt_field_header(cols[i].field, SLURMFMT_SACCT));
		if (arg_parsable || arg_parsable2) {
			fputs(v, stdout);
			if (i + 1 < n || arg_parsable)
				fputs(arg_delim, stdout);
		} else {
			cell_put(&cols[i], v);
		}
	}
	fputc('\n', stdout);
}

/* Jobs not finished when ended before -S, and the named ones, are
 * what the acct op returned: here the other filters. */
static struct column cols[MAX_FIELDS];
static int n_cols;

static int report(const json_t *jobs, int64_t now)
{
	json_t *doc = NULL, *list = NULL;
	size_t i;
	json_t *job;
	int n = n_cols;

	if (arg_json) {
		doc = slurmjobs_json(jobs, now);
		list = json_array();
		if (!doc || !list)
			return cmd_fail(1, "out of memory");
	} else {
		if (!arg_noheader) {
			line_put(cols, n, NULL, now);
			if (!arg_parsable && !arg_parsable2) {
				for (int k = 0; k < n; k++)
					printf("%.*s ", cols[k].width,
					       "------------------------------------------------------------"
					       "------------------------------------------------------------");
				fputc('\n', stdout);
			}
		}
	}
	json_array_foreach(jobs, i, job) {
		if (arg_json) {
			json_array_append_new(list, slurmjobs_acct_json(job, now));
			continue;
		}
		/* "-j 12.batch": that step's row only; "-j 12.0": none, qpool
		 * records no srun step (Slurm prints nothing for a step it
		 * does not have). */
		if (slurmsel_step_wanted(&arg_sel, job, NULL))
			line_put(cols, n, job, now);
		/* Without -X, the batch step of a job that started. */
		if (!arg_alloc && slurmfmt_job_start_ns(job) && slurmsel_step_wanted(&arg_sel, job, "batch")) {
			json_t *step = json_deep_copy(job);

			if (!step)
				return cmd_fail(1, "out of memory");
			json_object_set_new(step, "step", json_string("batch"));
			json_object_set_new(step, "name", json_string("batch"));
			json_object_set_new(step, "queue", json_string(""));
			line_put(cols, n, step, now);
			json_decref(step);
		}
	}
	if (arg_json) {
		json_object_set_new(doc, "jobs", list);
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(doc);
	}
	return 0;
}

static int by_id(const void *a, const void *b)
{
	long long x = wire_int(*(json_t *const *)a, "jobid", 0), y = wire_int(*(json_t *const *)b, "jobid", 0);

	return x < y ? -1 : x > y;
}

/* One acct request's jobs appended to all. A job named that qpoold does
 * not know (or -u excludes) is no row, as in Slurm's sacct. */
static int acct_append(struct client *cl, json_t *req, json_t *all)
{
	json_t *reply = NULL;
	struct error err;
	bool named;
	int r;

	if (!req)
		return cmd_fail(1, "out of memory");
	named = json_object_get(req, "jobid") != NULL;
	if (arg_sel.users && !strchr(arg_sel.users, ','))
		json_object_set_new(req, "user", json_string(arg_sel.users));
	r = client_call_pages(cl, req, "jobs", &reply, &err);   /* req stolen */
	if (r == -ENOENT && named)
		return 0;
	if (r < 0)
		return cmd_fail(1, "error: %s", err.text);
	json_array_extend(all, json_object_get(reply, "jobs"));
	json_decref(reply);
	return 0;
}

/* -j ID: the job's record; for an array, its tasks' records, asked for
 * from the array's submission on (the acct op gives an array's own
 * record, their sums, by its id). */
static int acct_job(struct client *cl, int64_t id, int64_t from, int64_t to, json_t *all)
{
	json_t *req = json_pack("{s:s, s:I}", "op", "acct", "jobid", (json_int_t)id), *mine = json_array();
	size_t i;
	json_t *job;
	int status;

	if (req && arg_start) {
		json_object_set_new(req, "from", json_integer(from));
		json_object_set_new(req, "to", json_integer(to));
	}
	if (!mine) {
		json_decref(req);
		return cmd_fail(1, "out of memory");
	}
	status = acct_append(cl, req, mine);
	json_array_foreach(mine, i, job) {
		int64_t submit = wire_int(json_object_get(job, "times"), "submit", 0);
		json_t *tasks;

		if (status || !json_object_get(job, "array") || wire_int(job, "jobid", 0) != id)
			continue;
		tasks = json_array();
		req = json_pack("{s:s, s:I, s:I}", "op", "acct", "from", (json_int_t)(arg_start && from > submit ? from : submit),
				"to", (json_int_t)(arg_end ? to : time_wall_ns()));
		status = tasks ? acct_append(cl, req, tasks) : cmd_fail(1, "out of memory");
		for (size_t k = 0; status == 0 && k < json_array_size(tasks); k++)
			if (wire_int(json_array_get(tasks, k), "array_id", 0) == id)
				json_array_append(all, json_array_get(tasks, k));
		json_decref(tasks);
	}
	json_array_extend(all, mine);
	json_decref(mine);
	return status;
}

static int fetch(struct client *cl, int64_t from, int64_t to, json_t **ret)
{
	json_t *all = json_array(), *out = json_array(), **rows = NULL, *job;
	size_t i, n = 0;
	int status = 0;

	if (!all || !out) {
		status = cmd_fail(1, "out of memory");
		goto done;
	}
	/* Named jobs are shown whenever they ran, as Slurm's -j. */
	for (int k = 0; k < arg_sel.n_ids && status == 0; k++)
		status = acct_job(cl, arg_sel.ids[k].id, from, to, all);
	if (arg_sel.n_ids == 0)
		status = acct_append(cl, json_pack("{s:s, s:I, s:I}", "op", "acct", "from", (json_int_t)from,
						   "to", (json_int_t)to), all);
	if (status)
		goto done;
	rows = calloc(json_array_size(all) + 1, sizeof(*rows));
	if (!rows) {
		status = cmd_fail(1, "out of memory");
		goto done;
	}
	json_array_foreach(all, i, job) {
		if (!json_object_get(job, "array") && slurmsel_match(&arg_sel, job))
			rows[n++] = job;
	}
	qsort(rows, n, sizeof(*rows), by_id);
	for (i = 0; i < n; i++)   /* a job named twice: once */
		if (i == 0 || by_id(&rows[i - 1], &rows[i]) != 0)
			json_array_append(out, rows[i]);
	*ret = out;
	out = NULL;
done:
	free(rows);
	json_decref(all);
	json_decref(out);
	return status;
}

/* sacct -S/-E: a moment (slurm/slurmtext.h), its time of day today's. */
static int when_ns(const char *s, int64_t now_ns, int64_t *ret_ns)
{
	time_t t;

	if (slurm_when_parse(s, (time_t)(now_ns / NSEC_PER_SEC), false, &t) < 0)
		return -EINVAL;
	*ret_ns = (int64_t)t * NSEC_PER_SEC;
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_NAME, OPT_DELIM, OPT_CONF, OPT_HELP, OPT_UNITS };
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "allocations", no_argument, NULL, 'X' },
		{ "user", required_argument, NULL, 'u' },
		{ "uid", required_argument, NULL, 'u' },
		{ "allusers", no_argument, NULL, 'a' },
		{ "state", required_argument, NULL, 's' },
		{ "starttime", required_argument, NULL, 'S' },
		{ "endtime", required_argument, NULL, 'E' },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "partition", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'o' },
		{ "brief", no_argument, NULL, 'b' },
		{ "long", no_argument, NULL, 'l' },
		{ "noheader", no_argument, NULL, 'n' },
		{ "parsable", no_argument, NULL, 'p' },
		{ "parsable2", no_argument, NULL, 'P' },
		{ "delimiter", required_argument, NULL, OPT_DELIM },
		{ "units", required_argument, NULL, OPT_UNITS },
		{ "duplicates", no_argument, NULL, 'D' },
		{ "allclusters", no_argument, NULL, 'L' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "conf", required_argument, NULL, OPT_CONF },
		{ "clusters", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "usage", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int64_t now = time_wall_ns(), from, to = now;
	struct client *cl = NULL;
	json_t *jobs = NULL;
	struct error err;
	int c, status;

	if (version_requested(argc, argv))
		return version_print("sacct");
	slurmsel_init(&arg_sel);
	arg_sel.steps = true;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":j:Xu:as:S:E:r:o:blnpPDLM:", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (slurmsel_ids_add(&arg_sel, optarg, &err) < 0)
				return cmd_fail(1, "error: %s", err.text);
			break;
		case 'X': arg_alloc = true; break;
		case 'u': arg_sel.users = optarg; break;
		case 'a': arg_all_users = true; break;
		case 's':
			if (slurmsel_states_set(&arg_sel, optarg, &err) < 0)
				return cmd_fail(1, "error: %s", err.text);
			break;
		case 'S': arg_start = optarg; break;
		case 'E': arg_end = optarg; break;
		case OPT_NAME: arg_sel.names = optarg; break;
		case 'r': arg_sel.partitions = optarg; break;
		case 'o': arg_fields = optarg; break;
		case 'b': arg_fields = "JobID,State,ExitCode"; break;
		case 'l': arg_fields = LONG_FIELDS; break;
		case 'n': arg_noheader = true; break;
		case 'p': arg_parsable = true; break;
		case 'P': arg_parsable2 = true; break;
		case OPT_DELIM: arg_delim = optarg; break;
		case OPT_UNITS:
			if (strlen(optarg) != 1 || !strchr("KMGTPkmgtp", optarg[0]))
				return cmd_fail(1, "error: Invalid --units specification: %s", optarg);
			arg_units = (char)toupper((unsigned char)optarg[0]);
			break;
		case 'D': case 'L': break;
		case OPT_JSON: arg_json = true; break;
		case 'M': break;   /* one pool, one "cluster": any name is it */
		case OPT_CONF: arg_conf = optarg; break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:   /* '?' or ':' */
			return cmd_getopt_fail(c, argv);
		}
	}
	if (optind < argc)
		return cmd_slurm_extra(argv[optind]);
	if (when_ns(arg_start ? arg_start : "midnight", now, &from) < 0)
		return cmd_fail(1, "error: Invalid time specification (pos=0): %s", arg_start);
	if (arg_end && when_ns(arg_end, now, &to) < 0)
		return cmd_fail(1, "error: Invalid time specification (pos=0): %s", arg_end);
	if (to < from)
		return cmd_fail(1, "error: Start time (%s) requested is after end time (%s).", arg_start ? arg_start : "midnight",
				arg_end ? arg_end : "now");
	/* Slurm shows a user their own jobs unless -a or -u; root all. */
	if (!arg_sel.users && !arg_all_users && getuid() != 0)
		arg_sel.uid = (long long)getuid();
	if (!arg_json && (n_cols = columns_parse(arg_fields, cols, MAX_FIELDS)) < 0)
		return 1;
	if (client_open(arg_conf, &cl, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	status = fetch(cl, from, to, &jobs);
	if (status == 0)
		status = report(jobs, now);
	json_decref(jobs);
	client_close(cl);
	if (fflush(stdout) != 0 && status == 0)
		status = cmd_fail(1, "cannot write: %s", strerror(errno));
	return status;
}
