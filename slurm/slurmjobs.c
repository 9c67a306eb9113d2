/* SPDX-License-Identifier: MIT */
/* The jobs a Slurm command asks qpoold for, and Slurm's JSON of them (slurm/slurmjobs.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "slurmfmt.h"
#include "slurmjobs.h"
#include "timeutil.h"
#include "version.h"
#include "wire.h"

/* The Slurm release whose --json layout these documents follow. */
#define SLURM_VERSION_MAJOR 24
#define SLURM_VERSION_MINOR 5

static bool finished(const json_t *job)
{
	const char *state = wire_str(job, "state");

	return state && strcmp(state, "queued") != 0 && strcmp(state, "held") != 0 &&
	       strcmp(state, "running") != 0 && strcmp(state, "exiting") != 0;
}

/* One stat call (jobid 0: all) appended to all. */
static int stat_append(struct client *cl, const struct slurmsel *sel, bool with_finished,
		       const struct slurmsel_id *id, json_t *all, struct error *err)
{
	json_t *req, *reply = NULL;
	int r;

	req = json_pack("{s:s, s:b, s:b, s:b}", "op", "stat", "finished", with_finished, "full", false,
			"subjobs", true);
	if (!req)
		return error_set(err, -ENOMEM, "out of memory");
	if (id) {
		json_object_set_new(req, "jobid", json_integer(id->id));
		if (id->index >= 0)
			json_object_set_new(req, "array_index", json_integer(id->index));
	}
	if (sel->users && !strchr(sel->users, ','))
		json_object_set_new(req, "user", json_string(sel->users));
	r = client_call_pages(cl, req, "jobs", &reply, err);
	/* A job named that qpoold does not know is none of sel's. */
	if (r == -ENOENT && id)
		return 0;
	if (r < 0)
		return r;
	if (!json_is_array(json_object_get(reply, "jobs"))) {
		json_decref(reply);
		return error_set(err, -EPROTO, "qpoold's reply has no jobs list");
	}
	json_array_extend(all, json_object_get(reply, "jobs"));
	json_decref(reply);
	return 0;
}

static int by_id(const void *a, const void *b)
{
	long long x = wire_int(*(json_t *const *)a, "jobid", 0), y = wire_int(*(json_t *const *)b, "jobid", 0);

	return x < y ? -1 : x > y;
}

int slurmjobs_fetch(struct client *cl, const struct slurmsel *sel, enum slurmjobs_age age, int64_t now_ns,
		    json_t **ret, struct error *err)
{
	bool with_finished = age == SLURMJOBS_ANY ||
			     (age == SLURMJOBS_RECENT && (sel->n_ids > 0 || slurmsel_wants_finished(sel)));
	json_t *all = json_array(), *out = json_array(), *job;
	json_t **rows = NULL;
	size_t i, n = 0;
	int r = 0;

	if (!all || !out) {
		r = error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	for (int k = 0; k < sel->n_ids && r == 0; k++)
		r = stat_append(cl, sel, with_finished, &sel->ids[k], all, err);
	if (sel->n_ids == 0)
		r = stat_append(cl, sel, with_finished, NULL, all, err);
	if (r < 0)
		goto done;
	rows = calloc(json_array_size(all) + 1, sizeof(*rows));
	if (!rows) {
		r = error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	json_array_foreach(all, i, job) {
		int64_t end = slurmfmt_job_end_ns(job);

		/* Arrays are shown by their tasks, as squeue -r does. */
		if (json_object_get(job, "array"))
			continue;
		if (age == SLURMJOBS_ALIVE && finished(job))
			continue;
		if (age == SLURMJOBS_RECENT && finished(job) && end &&
		    end < now_ns - SLURMJOBS_MIN_JOB_AGE * NSEC_PER_SEC)
			continue;
		if (!slurmsel_match(sel, job))
			continue;
		rows[n++] = job;
	}
	qsort(rows, n, sizeof(*rows), by_id);
	for (i = 0; i < n; i++)   /* ids named twice: once */
		if (i == 0 || by_id(&rows[i - 1], &rows[i]) != 0)
			json_array_append(out, rows[i]);
	*ret = out;
	out = NULL;
done:
	free(rows);
	json_decref(all);
	json_decref(out);
	return r;
}

json_t *slurmjobs_json(const json_t *jobs, int64_t now_ns)
{
	return json_pack("{s:{s:{s:s, s:s, s:s, s:s}, s:{s:{s:i, s:i, s:i}, s:s, s:s}}, s:[], s:[]}",
			 "meta", "plugin", "type", "", "name", "", "data_parser", "data_parser/v0.0.41",
			 "accounting_storage", "",
			 "slurm", "version", "major", SLURM_VERSION_MAJOR, "micro", 0, "minor",
			 SLURM_VERSION_MINOR, "release", "24.05.0", "cluster", "qpool",
			 "errors", "warnings");
}

/* Slurm's optional number: {"set": true, "infinite": false, "number": n}. */
static json_t *num(bool set, long long n)
{
	return json_pack("{s:b, s:b, s:I}", "set", set, "infinite", false, "number", (json_int_t)(set ? n : 0));
}

static json_t *limit_minutes(long long walltime)
{
	if (walltime <= 0)
		return json_pack("{s:b, s:b, s:i}", "set", false, "infinite", true, "number", 0);
	return num(true, (walltime + 59) / 60);
}

static json_t *exit_code(const json_t *job)
{
	long long sig = wire_int(job, "exit_signal", 0), st = wire_int(job, "exit_status", 0);
	const char *status = !finished(job) ? "PENDING" : sig > 0 ? "SIGNALED" : st ? "ERROR" : "SUCCESS";

	return json_pack("{s:[s], s:o, s:o}", "status", status, "return_code", num(finished(job), sig > 0 ? 0 : st),
			 "signal", json_pack("{s:o, s:s}", "id", num(sig > 0, sig), "name", ""));
}

static const char *str_or(const json_t *o, const char *key)
{
	const char *s = wire_str(o, key);

	return s ? s : "";
}

json_t *slurmjobs_job_json(const json_t *job, int64_t now_ns)
{
	bool task = json_is_integer(json_object_get(job, "array_id"));
	char nodes[1024], id[64];
	int count;
	json_t *o;

	slurmfmt_job_nodes(job, nodes, sizeof(nodes), &count);
	slurmfmt_job_id(job, id, sizeof(id));
	o = json_pack("{s:s, s:I, s:o, s:o, s:s, s:s, s:I, s:[s], s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o,"
		      " s:o, s:o, s:s, s:s, s:s, s:s, s:o}",
		      "account", str_or(json_object_get(job, "attrs"), "Account_Name"),
		      "job_id", (json_int_t)wire_int(job, "jobid", 0),
		      "array_job_id", num(task, wire_int(job, "array_id", 0)),
		      "array_task_id", num(task, wire_int(job, "array_index", 0)),
		      "name", str_or(job, "name"),
		      "user_name", str_or(job, "owner"),
		      "user_id", (json_int_t)wire_int(job, "uid", 0),
		      "job_state", slurmfmt_state(job),
		      "state_reason", slurmfmt_reason(job, now_ns),
		      "partition", str_or(job, "queue"),
		      "nodes", nodes,
		      "node_count", num(true, count ? count : 1),
		      "cpus", num(true, wire_int(job, "ncpus", 1)),
		      "time_limit", limit_minutes(wire_int(job, "walltime", 0)),
		      "submit_time", num(true, wire_int(json_object_get(job, "times"), "submit", 0) / NSEC_PER_SEC),
		      "start_time", num(true, slurmfmt_job_start_ns(job) / NSEC_PER_SEC),
		      "end_time", num(true, slurmfmt_job_end_ns(job) / NSEC_PER_SEC),
		      "exit_code", exit_code(job),
		      "current_working_directory", str_or(job, "workdir"),
		      "standard_output", str_or(job, "stdout"),
		      "standard_error", str_or(job, "stderr"),
		      "qos", wire_str(json_object_get(job, "attrs"), "Resource_List.qos") ?: "normal",
		      "run_time", num(true, slurmfmt_job_ran_secs(job, now_ns)));
	if (o) {
		const json_t *attrs = json_object_get(job, "attrs");

		json_object_set_new(o, "job_id_string", json_string(id));
		/* What it asked of its nodes (docs/RESOURCES.md), as Slurm
		 * names them; "" when nothing. */
		json_object_set_new(o, "features", json_string(str_or(attrs, "Resource_List.constraint")));
		json_object_set_new(o, "required_nodes", json_string(str_or(attrs, "Resource_List.nodelist")));
		json_object_set_new(o, "excluded_nodes", json_string(str_or(attrs, "Resource_List.exclude")));
		json_object_set_new(o, "licenses", json_string(str_or(attrs, "Resource_List.licenses")));
	}
	return o;
}

json_t *slurmjobs_acct_json(const json_t *job, int64_t now_ns)
{
	bool task = json_is_integer(json_object_get(job, "array_id"));
	long long walltime = wire_int(job, "walltime", 0);
	char nodes[1024], state[64];
	int count;

	slurmfmt_job_nodes(job, nodes, sizeof(nodes), &count);
	slurmfmt_acct_state(job, state, sizeof(state));
	return json_pack("{s:s, s:I, s:{s:I, s:o, s:o}, s:s, s:s, s:{s:s, s:I}, s:s, s:{s:[s], s:s},"
			 " s:o, s:s, s:i, s:{s:I, s:I, s:I, s:I, s:o, s:{s:I}}, s:s, s:[]}",
			 "account", str_or(json_object_get(job, "attrs"), "Account_Name"),
			 "job_id", (json_int_t)wire_int(job, "jobid", 0),
			 "array", "job_id", (json_int_t)(task ? wire_int(job, "array_id", 0) : 0),
			 "task_id", num(task, wire_int(job, "array_index", 0)),
			 "limits", json_pack("{s:o}", "max_running_tasks", num(false, 0)),
			 "name", str_or(job, "name"),
			 "partition", str_or(job, "queue"),
			 "association", "user", str_or(job, "owner"), "id", (json_int_t)0,
			 "user", str_or(job, "owner"),
			 "state", "current", slurmfmt_state(job), "reason", slurmfmt_reason(job, now_ns),
			 "exit_code", exit_code(job),
			 "nodes", count ? nodes : "None assigned",
			 "allocation_nodes", count ? count : 0,
			 "time", "elapsed", (json_int_t)slurmfmt_job_ran_secs(job, now_ns),
			 "submission", (json_int_t)(wire_int(json_object_get(job, "times"), "submit", 0) / NSEC_PER_SEC),
			 "start", (json_int_t)(slurmfmt_job_start_ns(job) / NSEC_PER_SEC),
			 "end", (json_int_t)(slurmfmt_job_end_ns(job) / NSEC_PER_SEC),
			 "limit", limit_minutes(walltime),
			 "total", "seconds", (json_int_t)(wire_int(job, "cpu_ns", 0) / NSEC_PER_SEC),
			 "working_directory", str_or(job, "workdir"),
			 "steps");
}

const char *slurmjobs_error(int r, const struct error *err)
{
	switch (-r) {
	case ENOENT: return "Invalid job id specified";
	case EALREADY: return "Job/step already completing or completed";
	case EPERM: case EACCES: return "Access/permission denied";
	default: return err->text;
	}
}
