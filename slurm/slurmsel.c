/* SPDX-License-Identifier: MIT */
/* Which jobs a Slurm command means (slurm/slurmsel.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "slurmfmt.h"
#include "slurmsel.h"
#include "wire.h"

bool slurmsel_list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *end = strchrnul(p, ',');

		if ((size_t)(end - p) == n && strncmp(p, name, n) == 0)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

bool slurmsel_list_wants(const char *list, const char *name)
{
	return !list || (name && slurmsel_list_has(list, name));
}

void slurmsel_init(struct slurmsel *sel)
{
	memset(sel, 0, sizeof(*sel));
	sel->uid = -1;
}

static int number(const char *s, const char *end, int64_t *ret)
{
	int64_t v = 0;

	if (s == end || end - s > 18)
		return -EINVAL;
	for (; s < end; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		v = v * 10 + (*s - '0');
	}
	*ret = v;
	return 0;
}

int slurmsel_id_parse(const char *s, struct slurmsel_id *ret)
{
	const char *us = strchr(s, '_'), *end = s + strlen(s);

	ret->index = -1;
	if (number(s, us ? us : end, &ret->id) < 0 || ret->id <= 0)
		return -EINVAL;
	if (us && number(us + 1, end, &ret->index) < 0)
		return -EINVAL;
	return 0;
}

/* A step's name as Slurm's sacct -j takes it: its named steps or a
 * number (srun's steps). */
static bool step_valid(const char *s)
{
	size_t n = strlen(s);

	if (strcmp(s, "batch") == 0 || strcmp(s, "extern") == 0 || strcmp(s, "interactive") == 0)
		return true;
	if (n == 0 || n > 9)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

int slurmsel_ids_add(struct slurmsel *sel, const char *list, struct error *err)
{
	char buf[64], *dot;
	struct slurmsel_id *id;

	for (const char *p = list; *p;) {
		const char *end = strchrnul(p, ',');
		size_t n = (size_t)(end - p);

		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, p, n);
		buf[n] = '\0';
		if (sel->n_ids == SLURMSEL_MAX_IDS)
			return error_set(err, -EINVAL, "at most %d job ids", SLURMSEL_MAX_IDS);
		id = &sel->ids[sel->n_ids];
		dot = sel->steps ? strchr(buf, '.') : NULL;
		if (dot)
			*dot = '\0';
		if (slurmsel_id_parse(buf, id) < 0 || (dot && !step_valid(dot + 1))) {
			if (dot)
				*dot = '.';
			return error_set(err, -EINVAL, "Invalid job id specified: %s", buf);
		}
		id->step[0] = '\0';
		if (dot) {
			size_t sl = strlen(dot + 1);   /* step_valid: at most 11 */

			if (sl >= sizeof(id->step))
				return error_set(err, -EINVAL, "Invalid job id specified: %s", buf);
			memcpy(id->step, dot + 1, sl + 1);
		}
		sel->n_ids++;
		p = *end ? end + 1 : end;
	}
	return 0;
}

int slurmsel_states_set(struct slurmsel *sel, const char *list, struct error *err)
{
	char buf[32];

	sel->n_states = 0;
	for (const char *p = list; *p;) {
		const char *end = strchrnul(p, ','), *state;
		size_t n = (size_t)(end - p);

		snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) ? n : sizeof(buf) - 1), p);
		p = *end ? end + 1 : end;
		if (strcasecmp(buf, "all") == 0) {
			sel->n_states = 0;
			sel->states[sel->n_states++] = "all";
			continue;
		}
		state = slurmfmt_state_parse(buf);
		if (!state)
			return error_set(err, -EINVAL, "Invalid job state specified: %s", buf);
		if (sel->n_states < SLURMSEL_MAX_STATES)
			sel->states[sel->n_states++] = state;
	}
	return 0;
}

bool slurmsel_wants_finished(const struct slurmsel *sel)
{
	for (int i = 0; i < sel->n_states; i++)
		if (strcmp(sel->states[i], "PENDING") != 0 && strcmp(sel->states[i], "RUNNING") != 0 &&
		    strcmp(sel->states[i], "COMPLETING") != 0)
			return true;
	return false;
}

static bool id_match(const struct slurmsel_id *id, const json_t *job)
{
	long long jobid = wire_int(job, "jobid", 0), array_id = wire_int(job, "array_id", 0);

	if (id->index < 0)
		return jobid == id->id || array_id == id->id;
	return array_id == id->id && wire_int(job, "array_index", -1) == id->index;
}

bool slurmsel_step_wanted(const struct slurmsel *sel, const json_t *job, const char *step)
{
	if (sel->n_ids == 0)
		return true;
	for (int i = 0; i < sel->n_ids; i++) {
		const struct slurmsel_id *id = &sel->ids[i];

		if (!id_match(id, job))
			continue;
		if (!id->step[0] || (step && strcmp(id->step, step) == 0))
			return true;
	}
	return false;
}

bool slurmsel_match(const struct slurmsel *sel, const json_t *job)
{
	const char *state = slurmfmt_state(job);
	bool ok = sel->n_ids == 0;

	if (sel->users && !slurmsel_list_has(sel->users, wire_str(job, "owner") ? wire_str(job, "owner") : ""))
		return false;
	if (sel->uid >= 0 && wire_int(job, "uid", -1) != sel->uid)
		return false;
	if (sel->names && !slurmsel_list_has(sel->names, wire_str(job, "name") ? wire_str(job, "name") : ""))
		return false;
	if (sel->partitions &&
	    !slurmsel_list_has(sel->partitions, wire_str(job, "queue") ? wire_str(job, "queue") : ""))
		return false;
	if (sel->n_states && strcmp(sel->states[0], "all") != 0) {
		bool in = false;

		for (int i = 0; i < sel->n_states; i++)
			in |= strcmp(sel->states[i], state) == 0;
		if (!in)
			return false;
	}
	for (int i = 0; i < sel->n_ids && !ok; i++)
		ok = id_match(&sel->ids[i], job);
	return ok;
}
