/* SPDX-License-Identifier: MIT */
/* The fields of squeue -o/-O and sacct --format (slurm/slurmfmt.h): the
 * first table and its values here, the rest in slurmfmt-extra.c; both over
 * slurmfmt.c's job facts, which use neither. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "slurmfmt.h"
#include "slurmfmt-internal.h"
#include "timeutil.h"
#include "wire.h"

static const char *str_or(const json_t *o, const char *key, const char *def)
{
	const char *s = wire_str(o, key);

	return s ? s : def;
}

static bool is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

static int64_t stamp(const json_t *job, const char *key)
{
	return wire_int(json_object_get(job, "times"), key, 0);
}

static const struct slurmfmt_field fields[] = {
	{ F_JOBID, 'i', "JobID", "JOBID", "JobID", 12, true, NULL, NULL },
	{ F_JOBID, 0, "JobArrayID", "JOBID", NULL, 0, false, NULL, NULL },  /* Slurm's -O name of %i */
	{ F_JOBID_RAW, 'A', "JobIDRaw", "JOBID", "JobIDRaw", 12, true, NULL, NULL },
	{ F_ARRAY_JOB, 'F', "ArrayJobID", "ARRAY_JOB_ID", NULL, 0, false, NULL, NULL },
	{ F_ARRAY_TASK, 'K', "ArrayTaskID", "ARRAY_TASK_ID", NULL, 0, false, NULL, NULL },
	{ F_NAME, 'j', "Name", "NAME", "JobName", 10, false, NULL, NULL },
	{ F_USER, 'u', "UserName", "USER", "User", 9, false, NULL, NULL },
	{ F_UID, 'U', "UserID", "UID", "UID", 6, false, NULL, NULL },
	{ F_STATE_CODE, 't', "StateCompact", "ST", NULL, 0, false, NULL, NULL },
	{ F_STATE, 'T', "State", "STATE", "State", 10, false, NULL, NULL },
	{ F_TIME, 'M', "TimeUsed", "TIME", "Elapsed", 10, false, NULL, NULL },
	{ F_ELAPSED_RAW, 0, NULL, NULL, "ElapsedRaw", 10, false, NULL, NULL },
	{ F_LIMIT, 'l', "TimeLimit", "TIME_LIMIT", "Timelimit", 10, false, NULL, NULL },
	{ F_NODES, 'D', "NumNodes", "NODES", "NNodes", 8, false, NULL, NULL },
	{ F_NODES, 0, NULL, NULL, "AllocNodes", 10, false, NULL, NULL },
	{ F_NODELIST, 'N', "NodeList", "NODELIST", "NodeList", 15, true, NULL, NULL },
	{ F_REASON, 'r', "Reason", "REASON", "Reason", 20, true, NULL, NULL },
	{ F_NODELIST_REASON, 'R', "ReasonList", "NODELIST(REASON)", NULL, 0, false, NULL, NULL },
	{ F_PARTITION, 'P', "Partition", "PARTITION", "Partition", 10, false, NULL, NULL },
	{ F_CPUS, 'C', "NumCPUs", "CPUS", "AllocCPUS", 10, false, NULL, NULL },
	{ F_CPUS, 0, NULL, NULL, "NCPUS", 10, false, NULL, NULL },
	{ F_CPUS, 0, NULL, NULL, "ReqCPUS", 8, false, NULL, NULL },
	{ F_SUBMIT, 'V', "SubmitTime", "SUBMIT_TIME", "Submit", 19, false, NULL, NULL },
	{ F_START, 'S', "StartTime", "START_TIME", "Start", 19, false, NULL, NULL },
	{ F_END, 'e', "EndTime", "END_TIME", "End", 19, false, NULL, NULL },
	{ F_ACCOUNT, 'a', "Account", "ACCOUNT", "Account", 10, false, NULL, NULL },
	{ F_EXITCODE, 0, "exit_code", "EXIT_CODE", "ExitCode", 8, false, NULL, NULL },
	{ F_EXITCODE, 0, NULL, NULL, "DerivedExitCode", 10, false, NULL, NULL },
	{ F_MAXRSS, 0, NULL, NULL, "MaxRSS", 10, false, NULL, NULL },
	{ F_TOTALCPU, 0, NULL, NULL, "TotalCPU", 10, false, NULL, NULL },
	{ F_CPUTIME, 0, NULL, NULL, "CPUTime", 10, false, NULL, NULL },
	{ F_NTASKS, 0, NULL, NULL, "NTasks", 8, false, NULL, NULL },
	{ F_AVERSS, 0, NULL, NULL, "AveRSS", 10, false, NULL, NULL },
	{ F_AVECPU, 0, NULL, NULL, "AveCPU", 10, false, NULL, NULL },
	{ F_AVECPU, 0, NULL, NULL, "MinCPU", 10, false, NULL, NULL },
	{ F_WORKDIR, 'Z', "WorkDir", "WORK_DIR", "WorkDir", 30, true, NULL, NULL },
	{ F_QOS, 'q', "QOS", "QOS", "QOS", 10, false, NULL, NULL },
	{ F_REQMEM, 'm', "MinMemory", "MIN_MEMORY", "ReqMem", 10, false, NULL, NULL },
	{ F_PRIORITY, 'Q', "Priority", "PRIORITY", "Priority", 10, false, NULL, NULL },
	{ F_PRIORITY, 0, "PriorityLong", "PRIORITY", NULL, 0, false, NULL, NULL },
	{ F_STDOUT, 0, "STDOUT", "STDOUT", NULL, 0, false, NULL, NULL },
	{ F_STDERR, 0, "STDERR", "STDERR", NULL, 0, false, NULL, NULL },
	{ F_TIME_LEFT, 'L', "TimeLeft", "TIME_LEFT", NULL, 0, false, NULL, NULL },
};

const struct slurmfmt_field *slurmfmt_field_letter(char c)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].letter == c)
			return &fields[i];
	return slurmfmt_extra_letter(c);
}

const struct slurmfmt_field *slurmfmt_field_name(const char *name, enum slurmfmt_view view)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *n = view == SLURMFMT_SACCT ? fields[i].sacct_name : fields[i].squeue_name;

		if (n && strcasecmp(n, name) == 0)
			return &fields[i];
	}
	return slurmfmt_extra_name(name, view);
}

const char *slurmfmt_field_header(const struct slurmfmt_field *f, enum slurmfmt_view view)
{
	return view == SLURMFMT_SACCT ? f->sacct_name : f->squeue_header;
}

int slurmfmt_field_width(const struct slurmfmt_field *f, bool *ret_left)
{
	if (ret_left)
		*ret_left = f->left;
	return f->sacct_width;
}

/* sacct's step rows ("12.batch"): the job object with "step" set. */
static void step_put(const json_t *job, char *buf, size_t len)
{
	const char *step = wire_str(job, "step");
	size_t n = strlen(buf);

	if (step && n < len)
		snprintf(buf + n, len - n, ".%s", step);
}

void slurmfmt_field_value(const struct slurmfmt_field *f, enum slurmfmt_view view, const json_t *job,
			  int64_t now_ns, char *buf, size_t len)
{
	const char *none = view == SLURMFMT_SACCT ? "Unknown" : "N/A";
	const char *state = str_or(job, "state", "");
	bool pending = is(state, "queued") || is(state, "held");
	long long walltime = wire_int(job, "walltime", 0);
	int count;

	buf[0] = '\0';
	switch (f->id) {
	case F_JOBID:
		slurmfmt_job_id(job, buf, len);
		step_put(job, buf, len);
		break;
	case F_JOBID_RAW:
		snprintf(buf, len, "%lld", wire_int(job, "jobid", 0));
		step_put(job, buf, len);
		break;
	case F_ARRAY_JOB:
		snprintf(buf, len, "%lld", wire_int(job, "array_id", wire_int(job, "jobid", 0)));
		break;
	case F_ARRAY_TASK:
		if (json_is_integer(json_object_get(job, "array_index")))
			snprintf(buf, len, "%lld", wire_int(job, "array_index", 0));
		else if (wire_str(job, "array"))
			snprintf(buf, len, "%s", wire_str(job, "array"));
		else
			snprintf(buf, len, "N/A");
		break;
	case F_NAME:
		snprintf(buf, len, "%s", str_or(job, "name", ""));
		break;
	case F_USER:
		snprintf(buf, len, "%s", str_or(job, "owner", ""));
		break;
	case F_UID:
		snprintf(buf, len, "%lld", wire_int(job, "uid", 0));
		break;
	case F_STATE_CODE:
		snprintf(buf, len, "%s", slurmfmt_state_code(slurmfmt_state(job)));
		break;
	case F_STATE:
		if (view == SLURMFMT_SACCT)
			slurmfmt_acct_state(job, buf, len);
		else
			snprintf(buf, len, "%s", slurmfmt_state(job));
		break;
	case F_TIME:
		if (view == SLURMFMT_SACCT)
			slurmfmt_elapsed(buf, len, slurmfmt_job_ran_secs(job, now_ns));
		else
			slurmfmt_duration(buf, len, slurmfmt_job_ran_secs(job, now_ns));
		break;
	case F_ELAPSED_RAW:
		snprintf(buf, len, "%lld", (long long)slurmfmt_job_ran_secs(job, now_ns));
		break;
	case F_LIMIT:
		if (walltime <= 0)
			snprintf(buf, len, "UNLIMITED");
		else if (view == SLURMFMT_SACCT)
			slurmfmt_elapsed(buf, len, walltime);
		else
			slurmfmt_duration(buf, len, walltime);
		break;
	case F_NODES:
		slurmfmt_job_nodes(job, buf, len, &count);
		snprintf(buf, len, "%d", count ? count : 1);
		break;
	case F_NODELIST:
		slurmfmt_job_nodes(job, buf, len, NULL);
		if (!buf[0])
			snprintf(buf, len, view == SLURMFMT_SACCT ? "None assigned" : "");
		break;
	case F_REASON:
		snprintf(buf, len, "%s", slurmfmt_reason(job, now_ns));
		break;
	case F_NODELIST_REASON:
		if (pending) {
			const char *word = slurmfmt_reason(job, now_ns), *why = str_or(job, "reason", ""), *at;
			char key[32];

			/* Slurm's "(ReqNodeNotAvail, UnavailableNodes:n1)": a
			 * reservation's word with qpoold's text and remedy. */
			snprintf(key, sizeof(key), "%s: ", word);
			at = strstr(why, key);
			if (at && (is(word, "ReqNodeNotAvail") || is(word, "Reservation"))) {
				const char *text = at + strlen(key), *end = text;

				/* Its text ends at the next reason ("; first in
				 * line ..."), not at its own "; with walltime". */
				while (*(end += strcspn(end, ";")) && !strncmp(end, "; with walltime", 15))
					end++;
				snprintf(buf, len, "(%s, %.*s)", word, (int)(end - text), text);
			}
			else
				snprintf(buf, len, "(%s)", word);
		}
		else
			slurmfmt_job_nodes(job, buf, len, NULL);
		break;
	case F_PARTITION:
		snprintf(buf, len, "%s", str_or(job, "queue", ""));
		break;
	case F_CPUS:
		snprintf(buf, len, "%lld", slurmfmt_job_cpus(job));
		break;
	case F_SUBMIT:
		slurmfmt_stamp(buf, len, stamp(job, "submit"), none);
		break;
	case F_START:
		/* sacct reads what happened: a pending job's start is Unknown
		 * there, squeue's %S its estimate. */
		slurmfmt_stamp(buf, len, view == SLURMFMT_SACCT && pending ? 0 : slurmfmt_job_start_ns(job), none);
		break;
	case F_END:
		slurmfmt_stamp(buf, len, slurmfmt_job_end_ns(job), none);
		break;
	case F_ACCOUNT:
		/* squeue's "(null)" for none, as Slurm's; sacct's blank. */
		snprintf(buf, len, "%s", str_or(json_object_get(job, "attrs"), "Account_Name",
						 view == SLURMFMT_SACCT ? "" : "(null)"));
		break;
	case F_EXITCODE:
		/* "status:signal": the exit status of the script, the signal
		 * that ended it (Slurm's ExitCode). */
		if (wire_int(job, "exit_signal", 0) > 0)
			snprintf(buf, len, "0:%lld", wire_int(job, "exit_signal", 0));
		else
			snprintf(buf, len, "%lld:0", wire_int(job, "exit_status", 0));
		break;
	case F_MAXRSS:
		if (json_is_integer(json_object_get(job, "mem_peak")))
			snprintf(buf, len, "%lldK", wire_int(job, "mem_peak", 0) / 1024);
		break;
	case F_TOTALCPU:
		slurmfmt_elapsed(buf, len, wire_int(job, "cpu_ns", 0) / NSEC_PER_SEC);
		break;
	case F_NTASKS:
		/* Slurm counts tasks per step: none on the job's own row; the
		 * batch step is one task (the script). */
		if (wire_str(job, "step"))
			snprintf(buf, len, "1");
		break;
	case F_AVERSS:
		/* Of one task, its average is its peak: qpool measures the
		 * job's cgroup whole, the batch step's one task. Blank until
		 * measured, as Slurm's until the step ends. */
		if (wire_str(job, "step") && json_is_integer(json_object_get(job, "mem_peak")))
			snprintf(buf, len, "%lldK", wire_int(job, "mem_peak", 0) / 1024);
		break;
	case F_AVECPU:
		if (wire_str(job, "step") && json_is_integer(json_object_get(job, "cpu_ns")))
			slurmfmt_elapsed(buf, len, wire_int(job, "cpu_ns", 0) / NSEC_PER_SEC);
		break;
	case F_CPUTIME:
		slurmfmt_elapsed(buf, len, slurmfmt_job_ran_secs(job, now_ns) * wire_int(job, "ncpus", 1));
		break;
	case F_WORKDIR:
		snprintf(buf, len, "%s", str_or(job, "workdir", ""));
		break;
	case F_QOS:
		snprintf(buf, len, "%s", str_or(json_object_get(job, "attrs"), "Resource_List.qos", "normal"));
		break;
	case F_REQMEM:
		if (wire_int(job, "mem", 0) > 0)
			slurmfmt_size(buf, len, wire_int(job, "mem", 0));
		else
			snprintf(buf, len, "0");
		break;
	case F_PRIORITY:
		snprintf(buf, len, "%lld", wire_int(job, "priority", 0));
		break;
	case F_STDOUT:
	case F_STDERR:
		/* Where it went, as scontrol's StdOut and StdErr. */
		slurmfmt_job_output(job, f->id == F_STDERR, buf, len);
		break;
	default:
		slurmfmt_extra_value(f, view, job, now_ns, buf, len);
		break;
	case F_TIME_LEFT:
		/* The limit less the time used; Slurm's words past either end. */
		if (walltime <= 0)
			snprintf(buf, len, "UNLIMITED");
		else if (!pending && !is(state, "running") && !is(state, "exiting"))
			snprintf(buf, len, "0:00");
		else
			slurmfmt_duration(buf, len, walltime > slurmfmt_job_ran_secs(job, now_ns)
							     ? walltime - slurmfmt_job_ran_secs(job, now_ns) : 0);
		break;
	}
}

int slurmfmt_format_parse(const char *fmt, struct slurmfmt_item *items, int max, char *ret_bad)
{
	int n = 0;

	*ret_bad = 0;
	while (*fmt) {
		struct slurmfmt_item *it;

		if (n == max)
			return -EINVAL;
		it = &items[n];
		memset(it, 0, sizeof(*it));
		if (*fmt != '%' || fmt[1] == '%') {
			size_t k = 0;

			while (*fmt && k + 1 < sizeof(it->text)) {
				if (*fmt == '%' && fmt[1] == '%')
					fmt++;
				else if (*fmt == '%')
					break;
				it->text[k++] = *fmt++;
			}
			n++;
			continue;
		}
		fmt++;
		if (*fmt == '.') {
			it->right = true;
			fmt++;
		}
		while (isdigit((unsigned char)*fmt))
			it->width = it->width * 10 + (*fmt++ - '0') % 1000;
		if (it->width > 1000)
			it->width = 1000;
		it->field = *fmt ? slurmfmt_field_letter(*fmt) : NULL;
		if (!it->field) {
			*ret_bad = *fmt ? *fmt : '%';
			return -EINVAL;
		}
		fmt++;
		n++;
	}
	return n;
}

void slurmfmt_cell(char *buf, size_t len, const char *value, int width, bool right)
{
	int n = (int)strlen(value);

	if (width <= 0)
		snprintf(buf, len, "%s", value);
	else if (n > width)
		snprintf(buf, len, "%.*s", width, value);
	else
		snprintf(buf, len, right ? "%*s" : "%-*s", width, value);
}
