/* SPDX-License-Identifier: MIT */
/* squeue: qpool's jobs in Slurm's layouts (default, -o, -O, --json). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "slurmfmt.h"
#include "slurmjobs.h"
#include "slurmsel.h"
#include "sort.h"
#include "timeutil.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"Usage: squeue [-h] [-u USERS] [--me] [-j JOBIDS] [-t STATES] [-p PARTITIONS] [-n NAMES]\n"
	"              [-o FORMAT | -O FIELDS | -l] [-r] [--json] [-a] [--noconvert]\n"
	"Shows qpool's jobs as Slurm's squeue: pending and running ones, and those that\n"
	"ended in the last 300 s when named by -j or -t.\n"
	"  -u, --user=USERS        only these users' jobs (comma-separated)\n"
	"      --me                only your own jobs\n"
	"  -j, --jobs=JOBIDS       only these jobs (12, 12_3 for an array task)\n"
	"  -t, --states=STATES     only jobs in these states (PD R CG CD F CA TO OOM ..., or all)\n"
	"  -p, --partition=PARTS   only jobs of these partitions (qpool's queues)\n"
	"  -n, --name=NAMES        only jobs of these names\n"
	"  -h, --noheader          no header line\n"
	"  -o, --format=FORMAT     columns as %[.][width]letter (%i %j %u %t %T %M %l %D %R %P %C ...)\n"
	"  -O, --Format=FIELDS     columns by name: JobID,Name:30,State,...\n"
	"  -l, --long              the long layout\n"
	"  -r, --array             an array's pending tasks one per line, not as 12_[1-3]\n"
	"      --start             pending jobs only, by their expected start (START_TIME,\n"
	"                          SCHEDNODES; N/A: no estimate)\n"
	"      --json              Slurm's JSON document\n"
	"      --conf FILE         configuration file\n"
	"      --help, --usage     show this help\n";

#define DEFAULT_FORMAT "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
#define START_FORMAT "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
#define LONG_FORMAT "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
#define MAX_ITEMS 64

static const char *arg_conf;
static const char *arg_format = DEFAULT_FORMAT;
static const char *arg_fields;
static bool arg_noheader, arg_json, arg_tasks, arg_start, arg_format_set;
static struct slurmsel arg_sel;

/* -O: "Name[:[.][width][suffix]]" items, default width 20, left-justified;
 * a suffix with no width ("JobID:|", Open OnDemand's) ends the value
 * there, unpadded, as Slurm's. */
static int fields_parse(const char *list, struct slurmfmt_item *items, int max, char *suffix, size_t suffix_len)
{
	char *copy = strdup(list), *save = NULL;
	int n = 0;

	if (!copy)
		return cmd_fail(1, "out of memory"), -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		struct slurmfmt_item *it = &items[n];

		if (n == max) {
			free(copy);
			return cmd_fail(1, "error: too many fields in --Format"), -1;
		}
		memset(it, 0, sizeof(*it));
		it->width = 20;
		if (colon) {
			char *p = colon + 1, *end;

			*colon = '\0';
			if (*p == '.') {
				it->right = true;
				p++;
			}
			if (*p >= '0' && *p <= '9') {
				it->width = (int)strtol(p, &end, 10) % 10000;
			} else {
				end = p;
				if (*end)
					it->width = 0;
			}
			snprintf(suffix + (size_t)n * suffix_len, suffix_len, "%s", end);
		}
		it->field = slurmfmt_field_name(tok, SLURMFMT_SQUEUE);
		if (!it->field) {
			cmd_fail(1, "error: Invalid job format specification: %s", tok);
			free(copy);
			return -1;
		}
		n++;
	}
	free(copy);
	return n;
}

static void row_print(const struct slurmfmt_item *items, int n, const char *suffix, size_t suffix_len,
		      const json_t *job, int64_t now)
{
	char value[4096], cell[4096];

	for (int i = 0; i < n; i++) {
		const struct slurmfmt_item *it = &items[i];

		if (!it->field) {
			fputs(it->text, stdout);
			continue;
		}
		if (job)
			slurmfmt_field_value(it->field, SLURMFMT_SQUEUE, job, now, value, sizeof(value));
		else
			snprintf(value, sizeof(value), "%s", slurmfmt_field_header(it->field, SLURMFMT_SQUEUE));
		slurmfmt_cell(cell, sizeof(cell), value, it->width, it->right);
		fputs(cell, stdout);
		if (suffix)
			fputs(suffix + (size_t)i * suffix_len, stdout);
	}
	fputc('\n', stdout);
}

/* The columns, from -o or -O, parsed before qpoold is asked anything. */
static struct slurmfmt_item items[MAX_ITEMS];
static char suffix[MAX_ITEMS][16];
static int n_items;

static int columns_prepare(void)
{
	char bad;

	if (arg_fields) {
		n_items = fields_parse(arg_fields, items, MAX_ITEMS, &suffix[0][0], sizeof(suffix[0]));
		return n_items < 0 ? 1 : 0;
	}
	n_items = slurmfmt_format_parse(arg_format, items, MAX_ITEMS, &bad);
	if (n_items < 0 && bad)
		return cmd_fail(1, "error: Invalid job format specification: %c", bad);
	if (n_items < 0)
		return cmd_fail(1, "error: job format too long");
	return 0;
}

static void table_print(const json_t *jobs, int64_t now)
{
	const char *sfx = arg_fields ? &suffix[0][0] : NULL;
	size_t i;
	json_t *job;

	if (!arg_noheader)
		row_print(items, n_items, sfx, sizeof(suffix[0]), NULL, now);
	json_array_foreach(jobs, i, job) {
		row_print(items, n_items, sfx, sizeof(suffix[0]), job, now);
	}
}

static bool pending(const json_t *job)
{
	const char *state = wire_str(job, "state");

	return state && (strcmp(state, "queued") == 0 || strcmp(state, "held") == 0);
}

/* --start: by expected start, the soonest first; those without one
 * (N/A) after, by id. */
static int start_cmp(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	long long sx = wire_int(x, "estimated_start", 0), sy = wire_int(y, "estimated_start", 0);

	if ((sx > 0) != (sy > 0))
		return sx > 0 ? -1 : 1;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return wire_int(x, "jobid", 0) < wire_int(y, "jobid", 0) ? -1 : 1;
}

/* --start: only the pending jobs (all named by -t, when it is given),
 * sorted by start_cmp. NULL: out of memory. */
static json_t *start_select(const json_t *jobs)
{
	size_t n = 0, i;
	const json_t **v = malloc((json_array_size(jobs) + 1) * sizeof(*v));
	json_t *job, *out = json_array();

	if (!v || !out) {
		free(v);
		json_decref(out);
		return NULL;
	}
	json_array_foreach(jobs, i, job) {
		if (arg_sel.n_states || pending(job))
			v[n++] = job;
	}
	qp_sort(v, n, sizeof(*v), start_cmp);
	for (i = 0; i < n; i++)
		json_array_append(out, (json_t *)v[i]);
	free(v);
	return out;
}

/* An array's pending tasks being folded into one row. */
struct fold {
	json_t *row;          /* the first task's copy (the output's reference) */
	char spec[4096];      /* "1-3,5" so far */
	long long run_start, last;
	size_t n;
};

/* Appends sep and v to spec ("-3", ",5"). */
static void spec_add(char *spec, size_t size, char sep, long long v)
{
	size_t len = strlen(spec);

	snprintf(spec + len, size - len, "%c%lld", sep, v);
}

/* Ends the fold: several tasks become "ARRAY_[spec]"; one stays itself. */
static void fold_close(struct fold *f)
{
	if (!f->row)
		return;
	if (f->last != f->run_start)
		spec_add(f->spec, sizeof(f->spec), '-', f->last);
	if (f->n > 1) {
		json_object_set_new(f->row, "jobid", json_integer(wire_int(f->row, "array_id", 0)));
		json_object_set_new(f->row, "array", json_string(f->spec));
		json_object_del(f->row, "array_id");
		json_object_del(f->row, "array_index");
	}
	f->row = NULL;
}

/* Without -r, an array's pending tasks of one state are one row,
 * "12_[1-3,5]", where the first of them stands, as Slurm shows them. jobs
 * is in id order, so each array's tasks come in index order. Returns a
 * new array, NULL when out of memory. */
static json_t *arrays_fold(const json_t *jobs)
{
	json_t *out = json_array(), *job;
	struct fold *folds = NULL, *f;
	size_t i, n_folds = 0;

	if (!out)
		return NULL;
	json_array_foreach(jobs, i, job) {
		long long index = wire_int(job, "array_index", 0);

		if (!pending(job) || !json_is_integer(json_object_get(job, "array_id"))) {
			json_array_append(out, job);
			continue;
		}
		f = NULL;
		for (size_t k = 0; k < n_folds && !f; k++)
			if (wire_int(job, "array_id", 0) == wire_int(folds[k].row, "array_id", 0) &&
			    strcmp(wire_str(job, "state"), wire_str(folds[k].row, "state")) == 0)
				f = &folds[k];
		if (f) {
			if (index != f->last + 1) {
				if (f->last != f->run_start)
					spec_add(f->spec, sizeof(f->spec), '-', f->last);
				spec_add(f->spec, sizeof(f->spec), ',', index);
				f->run_start = index;
			}
			f->last = index;
			f->n++;
			continue;
		}
		f = realloc(folds, (n_folds + 1) * sizeof(*folds));
		if (!f)
			goto oom;
		folds = f;
		f = &folds[n_folds++];
		f->row = json_copy(job);
		if (!f->row || json_array_append_new(out, f->row) < 0)
			goto oom;
		snprintf(f->spec, sizeof(f->spec), "%lld", index);
		f->run_start = f->last = index;
		f->n = 1;
	}
	for (size_t k = 0; k < n_folds; k++)
		fold_close(&folds[k]);
	free(folds);
	return out;
oom:
	free(folds);
	json_decref(out);
	return NULL;
}

static int json_print(const json_t *jobs, int64_t now)
{
	json_t *doc = slurmjobs_json(jobs, now), *list;
	size_t i;
	json_t *job;

	if (!doc || !(list = json_array()))
		return cmd_fail(1, "out of memory");
	json_array_foreach(jobs, i, job) {
		json_array_append_new(list, slurmjobs_job_json(job, now));
	}
	json_object_set_new(doc, "jobs", list);
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(doc);
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_ME, OPT_CONF, OPT_HELP, OPT_NOCONVERT, OPT_START };
	static const struct option longopts[] = {
		{ "user", required_argument, NULL, 'u' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "job", required_argument, NULL, 'j' },
		{ "states", required_argument, NULL, 't' },
		{ "state", required_argument, NULL, 't' },
		{ "partition", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "noheader", no_argument, NULL, 'h' },
		{ "format", required_argument, NULL, 'o' },
		{ "Format", required_argument, NULL, 'O' },
		{ "long", no_argument, NULL, 'l' },
		{ "all", no_argument, NULL, 'a' },
		{ "noconvert", no_argument, NULL, OPT_NOCONVERT },
		{ "array", no_argument, NULL, 'r' },
		{ "start", no_argument, NULL, OPT_START },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "me", no_argument, NULL, OPT_ME },
		{ "conf", required_argument, NULL, OPT_CONF },
		{ "clusters", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "usage", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct client *cl = NULL;
	json_t *jobs = NULL, *jobs_sorted = NULL;
	struct error err;
	int c, status;

	if (version_requested(argc, argv))
		return version_print("squeue");
	slurmsel_init(&arg_sel);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":u:j:t:p:n:ho:O:larM:", longopts, NULL)) != -1) {
		switch (c) {
		case 'u': arg_sel.users = optarg; break;
		case 'j':
			if (slurmsel_ids_add(&arg_sel, optarg, &err) < 0)
				return cmd_fail(1, "error: %s", err.text);
			break;
		case 't':
			if (slurmsel_states_set(&arg_sel, optarg, &err) < 0)
				return cmd_fail(1, "error: %s", err.text);
			break;
		case 'p': arg_sel.partitions = optarg; break;
		case 'n': arg_sel.names = optarg; break;
		case 'h': arg_noheader = true; break;
		case 'o': arg_format = optarg; arg_fields = NULL; arg_format_set = true; break;
		case 'O': arg_fields = optarg; arg_format_set = true; break;
		case 'l': arg_format = LONG_FORMAT; arg_format_set = true; break;
		case OPT_START: arg_start = true; break;
		case 'a': break;
		case OPT_NOCONVERT: break;   /* sizes are already in M (tres-alloc) */
		case 'r': arg_tasks = true; break;
		case OPT_JSON: arg_json = true; break;
		case OPT_ME: arg_sel.uid = (long long)getuid(); break;
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
	if (arg_start && !arg_format_set)
		arg_format = START_FORMAT;
	if (!arg_json && columns_prepare())
		return 1;
	if (client_open(arg_conf, &cl, &err) < 0)
		return cmd_fail(1, "error: %s", err.text);
	status = slurmjobs_fetch(cl, &arg_sel, SLURMJOBS_RECENT, time_wall_ns(), &jobs, &err);
	if (status < 0) {
		status = cmd_fail(1, "%s", err.text);
	} else if (arg_sel.n_ids && json_array_size(jobs) == 0 && !arg_sel.n_states) {
		/* Slurm answers an id it no longer knows so; tools take it
		 * as "the job has ended". */
		status = cmd_fail(1, "slurm_load_jobs error: Invalid job id specified");
	} else if (arg_start && !(jobs_sorted = start_select(jobs))) {
		status = cmd_fail(1, "out of memory");
	} else if (arg_json) {
		status = json_print(jobs_sorted ? jobs_sorted : jobs, time_wall_ns());
	} else if (arg_start) {
		/* Each pending task its own row: each has its own estimate. */
		table_print(jobs_sorted, time_wall_ns());
		status = 0;
	} else if (arg_tasks) {
		table_print(jobs, time_wall_ns());
		status = 0;
	} else {
		json_t *folded = arrays_fold(jobs);

		status = folded ? 0 : cmd_fail(1, "out of memory");
		if (folded)
			table_print(folded, time_wall_ns());
		json_decref(folded);
	}
	json_decref(jobs);
	json_decref(jobs_sorted);
	client_close(cl);
	if (fflush(stdout) != 0 && status == 0)
		status = cmd_fail(1, "cannot write: %s", strerror(errno));
	return status;
}
