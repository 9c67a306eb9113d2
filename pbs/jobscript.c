/* SPDX-License-Identifier: MIT */
/* Job options and script directives: a pure parser, text in, struct jobspec out. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "arrayspec.h"
#include "depend.h"
#include "gpu.h"
#include "jobattr.h"
#include "jobscript.h"
#include "license.h"
#include "nodesel.h"
#include "parse.h"
#include "wire.h"

#define DIRECTIVE_WORDS_MAX 64

void jobspec_init(struct jobspec *js)
{
	*js = (struct jobspec){
		.ncpus = -1, .ngpus = -1, .mem = -1, .walltime = -1,
		.join = -1, .hold = -1, .rerunnable = -1, .export_all = -1,
		.ompthreads = -1, .priority = JOBSPEC_PRIORITY_UNSET, .quiet = -1,
		.interactive = -1, .mail = -1, .place = JOBSPEC_PLACE_UNSET, .excl = -1, .block = -1, .mem_node = -1, .pmem = -1, .depend_lift = -1,
		.workdir_submit = -1,
	};
}

const char *jobspec_place_name(int place)
{
	switch (place) {
	case JOBSPEC_PLACE_SCATTER:
		return "scatter";
	case JOBSPEC_PLACE_PACK:
		return "pack";
	default:
		return "free";
	}
}

static void vars_free(struct jobspec_var *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

void jobspec_clear(struct jobspec *js)
{
	free(js->name);
	free(js->queue);
	free(js->stdout_path);
	free(js->stderr_path);
	vars_free(js->vars, js->n_vars);
	vars_free(js->attrs, js->n_attrs);
	for (size_t i = 0; i < js->n_warnings; i++)
		free(js->warnings[i]);
	free(js->warnings);
	free(js->shell);
	free(js->prefix);
	free(js->workdir);
	free(js->group);
	free(js->start_after);
	free(js->chunks);
	free(js->array);
	free(js->depend);
	free(js->nodelist);
	free(js->exclude);
	free(js->constraint);
	free(js->gpu_model);
	free(js->licenses);
	free(js->node_res);
	jobspec_init(js);
}

bool jobspec_option_has_arg(int opt)
{
	const char *p = opt > ' ' && opt < 0x7f && opt != ':' ? strchr(JOBSPEC_OPTSTRING, opt) : NULL;

	return p && p[1] == ':';
}

static int string_set(char **dst, const char *src)
{
	char *s = strdup(src);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int text_arg_check(const char *opt, const char *what, const char *arg, struct error *err)
{
	if (!*arg)
		return error_set(err, -EINVAL, "%s: empty %s", opt, what);
	if (!utf8_valid(arg, strlen(arg)))
		return error_set(err, -EINVAL, "%s: %s is not valid UTF-8", opt, what);
	return 0;
}

static int name_set(struct jobspec *js, const char *arg, struct error *err)
{
	int r = text_arg_check("-N", "job name", arg, err);

	if (r < 0)
		return r;
	if (strchr(arg, '/'))
		return error_set(err, -EINVAL, "-N %s: a job name cannot contain '/'", arg);
	if (strlen(arg) > JOBSPEC_NAME_MAX)
		return error_set(err, -EINVAL, "-N: job name longer than %d bytes", JOBSPEC_NAME_MAX);
	return string_set(&js->name, arg);
}

/* Records PBS attribute name = value (replacing an earlier value). */
static int attr_set(struct jobspec *js, const char *name, const char *value)
{
	struct jobspec_var *v;
	char *copy = strdup(value);

	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < js->n_attrs; i++)
		if (strcmp(js->attrs[i].name, name) == 0) {
			free(js->attrs[i].value);
			js->attrs[i].value = copy;
			return 0;
		}
	v = realloc(js->attrs, (js->n_attrs + 1) * sizeof(*v));
	if (!v) {
		free(copy);
		return -ENOMEM;
	}
	js->attrs = v;
	v[js->n_attrs].name = strdup(name);
	v[js->n_attrs].value = copy;
	if (!v[js->n_attrs].name) {
		free(copy);
		return -ENOMEM;
	}
	js->n_attrs++;
	return 0;
}

/* Forgets PBS attribute name, when recorded. */
static void attr_del(struct jobspec *js, const char *name)
{
	for (size_t i = 0; i < js->n_attrs; i++)
		if (strcmp(js->attrs[i].name, name) == 0) {
			free(js->attrs[i].name);
			free(js->attrs[i].value);
			js->attrs[i] = js->attrs[--js->n_attrs];
			return;
		}
}

/* A new resource request (select=, nodes=, plain ncpus=) replaces an
 * earlier one-chunk select's MPI slots: qexec's own select=1:...:
 * mpiprocs=1 before srun's -l words must not leave one slot to a job of
 * two CPUs or two chunks. */
static void select_slots_drop(struct jobspec *js)
{
	if (js->mpiprocs_of_select)
		attr_del(js, "Resource_List.mpiprocs");
	js->mpiprocs_of_select = false;
}

int jobspec_reservation_set(struct jobspec *js, const char *name)
{
	return attr_set(js, "reservation", name);
}

const char *jobspec_attr(const struct jobspec *js, const char *name)
{
	for (size_t i = 0; i < js->n_attrs; i++)
		if (strcmp(js->attrs[i].name, name) == 0)
			return js->attrs[i].value;
	return NULL;
}

__attribute__((format(printf, 2, 3)))
static int warn(struct jobspec *js, const char *fmt, ...)
{
	char **w = realloc(js->warnings, (js->n_warnings + 1) * sizeof(char *));
	va_list ap;
	int n;

	if (!w)
		return -ENOMEM;
	js->warnings = w;
	va_start(ap, fmt);
	n = vasprintf(&w[js->n_warnings], fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	js->n_warnings++;
	return 0;
}

/* A count: 1 to max decimal digits, nothing else. -1 when not. */
static int64_t count_parse(const char *s, int64_t max)
{
	size_t nd = strspn(s, "0123456789");
	int64_t v;

	if (!nd || nd != strlen(s) || nd > 9)
		return -1;
	v = strtoll(s, NULL, 10);
	return v > max ? -1 : v;
}

/* A chunk's (or a one-node job's) GPUs: 0 to a node's most. */
static int ngpus_parse(const char *what, const char *val, int64_t *ret, struct error *err)
{
	int64_t v = count_parse(val, NODE_GPUS_MAX);

	if (v < 0)
		return error_set(err, -EINVAL, "%s: not a number of GPUs (0 to %d on a node)", what,
				 NODE_GPUS_MAX);
	*ret = v;
	return 0;
}

static int ncpus_set(struct jobspec *js, const char *what, const char *val, struct error *err)
{
	int64_t v = count_parse(val, JOBSPEC_NCPUS_MAX);

	if (v <= 0)
		return error_set(err, -EINVAL, "%s: not a number of CPUs (1 to %d)", what,
				 JOBSPEC_NCPUS_MAX);
	js->ncpus = v;
	return 0;
}

static int size_check(const char *what, const char *val, uint64_t *ret, struct error *err)
{
	int r = size_parse(val, ret);

	if (r == -ERANGE || (r == 0 && *ret > INT64_MAX))
		return error_set(err, -EINVAL, "%s: size too large", what);
	if (r < 0)
		return error_set(err, -EINVAL, "%s: not a size (e.g. 512M, 8G)", what);
	return 0;
}

static int time_check(const char *what, const char *val, uint64_t *ret, struct error *err)
{
	int r = duration_parse(val, ret);

	if (r == -ERANGE || (r == 0 && *ret > INT64_MAX))
		return error_set(err, -EINVAL, "%s: time too large", what);
	if (r < 0)
		return error_set(err, -EINVAL, "%s: not a time (e.g. 01:30:00)", what);
	return 0;
}

/* Resource_List.NAME = value, with the warning that qpool keeps it only. */
static int record_unenforced(struct jobspec *js, const char *name, const char *val, const char *why)
{
	char key[80];

	snprintf(key, sizeof(key), "Resource_List.%s", name);
	return attr_set(js, key, val) ?: warn(js, "-l %s=%s: recorded, %s", name, val, why);
}

static int resource_one(struct jobspec *js, const char *name, const char *val, bool in_chunk,
			struct error *err);

/* Appends piece to the owned string *dst with sep between, once. */
static int list_add(char **dst, char sep, const char *piece)
{
	size_t n = strlen(piece);
	char *grown;

	for (const char *p = *dst; p && *p;) {
		size_t k = strcspn(p, sep == '&' ? "&" : ",");

		if (k == n && !strncmp(p, piece, n))
			return 0;
		p += k + (p[k] != '\0');
	}
	if (!*dst)
		return (*dst = strdup(piece)) ? 0 : -ENOMEM;
	if (asprintf(&grown, "%s%c%s", *dst, sep, piece) < 0)
		return -ENOMEM;
	free(*dst);
	*dst = grown;
	return 0;
}

/* host=NAME, vnode=NAME, nodes=NAME: one node the job must have. */
static int host_add(struct jobspec *js, const char *what, const char *name, struct error *err)
{
	size_t n = strlen(name);

	if (!n || n > 63 || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != n)
		return error_set(err, -EINVAL, "%s: '%s' is not a node name", what, name);
	return list_add(&js->nodelist, ',', name);
}

/* A chunk's feature as PBS writes a node's boolean or string resource
 * (bigmem=true, model=skylake) or Torque a node property (ib): NAME, or
 * NAME=VALUE, that each of the job's nodes must have (docs/RESOURCES.md);
 * into feature (NODESEL_FEATURE_MAX * 2 bytes). */
static int feature_make(const char *what, const char *name, const char *val, char *feature,
			struct error *err)
{
	int r;

	if (val && (!strcasecmp(val, "false") || !strcasecmp(val, "f") || !strcmp(val, "0") ||
		    !strcasecmp(val, "no")))
		return error_set(err, -EINVAL, "%s: qpool matches the features a node has; asking for "
				 "one it lacks is not supported (leave %s out)", what, name);
	if (!val || !strcasecmp(val, "true") || !strcasecmp(val, "t") || !strcmp(val, "1") ||
	    !strcasecmp(val, "yes") || !strcasecmp(val, "y"))
		snprintf(feature, NODESEL_FEATURE_MAX * 2, "%s", name);
	else
		snprintf(feature, NODESEL_FEATURE_MAX * 2, "%s=%s", name, val);
	r = nodesel_feature_check(feature, strlen(feature), err);
	if (r < 0) {
		char why[sizeof(err->text)];

		snprintf(why, sizeof(why), "%s", err->text);
		return error_set(err, -EINVAL, "%s: %s", what, why);
	}
	return 0;
}

/* The same, added to the job's constraint. */
static int feature_add(struct jobspec *js, const char *what, const char *name, const char *val,
		       struct error *err)
{
	char feature[NODESEL_FEATURE_MAX * 2];
	int r = feature_make(what, name, val, feature, err);

	return r < 0 ? r : list_add(&js->constraint, '&', feature);
}

/* The same, added to chunk c's own features. */
static int chunk_feature_add(struct jobspec_chunk *c, const char *what, const char *name, const char *val,
			     struct error *err)
{
	char feature[NODESEL_FEATURE_MAX * 2];
	size_t at = strlen(c->features);
	int r = feature_make(what, name, val, feature, err);

	if (r < 0)
		return r;
	if (at + 1 + strlen(feature) >= sizeof(c->features))
		return error_set(err, -EINVAL, "%s: a chunk's features are at most %zu bytes in all", what,
				 sizeof(c->features) - 1);
	/* (Checked above: it fits, with its comma.) */
	if (at)
		c->features[at++] = ',';
	memcpy(c->features + at, feature, strlen(feature) + 1);
	return 0;
}

int jobspec_gpu_model_set(struct jobspec *js, const char *what, const char *val, struct error *err)
{
	char model[GPU_MODEL_MAX];
	struct error why;

	if (gpu_model_canon(val, strlen(val), model, &why) < 0)
		return error_set(err, -EINVAL, "%s: %s", what, why.text);
	if (js->gpu_model && strcmp(js->gpu_model, model) != 0)
		return error_set(err, -EINVAL, "%s: a job's GPUs are of one model (%s given already)", what,
				 js->gpu_model);
	if (!js->gpu_model && !(js->gpu_model = strdup(model)))
		return error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* Replaces js's chunks with n of them (none: a one-node request). */
static int chunks_set(struct jobspec *js, const struct jobspec_chunk *c, size_t n)
{
	struct jobspec_chunk *copy = NULL;

	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, c, n * sizeof(*copy));
	}
	free(js->chunks);
	js->chunks = copy;
	js->n_chunks = n;
	return 0;
}

/* The totals of chunks c[0..n) into js: ncpus, mem (-1 when no chunk has
 * any) and the attribute nodect (chunks in all). */
static int chunks_total(struct jobspec *js, const char *what, const char *val,
			const struct jobspec_chunk *c, size_t n, struct error *err)
{
	int64_t cpus = 0, mem = 0, count = 0, gpus = 0;
	bool any_mem = false;
	char buf[32];

	for (size_t i = 0; i < n; i++) {
		if (c[i].ncpus > JOBSPEC_NCPUS_MAX / c[i].count ||
		    cpus + c[i].count * c[i].ncpus > JOBSPEC_NCPUS_MAX)
			return error_set(err, -EINVAL, "-l %s=%s: more than %d CPUs in all", what, val,
					 JOBSPEC_NCPUS_MAX);
		cpus += c[i].count * c[i].ncpus;
		gpus += c[i].count * c[i].ngpus;
		count += c[i].count;
		if (c[i].mem > 0) {
			if (c[i].mem > INT64_MAX / c[i].count || mem > INT64_MAX - c[i].mem * c[i].count)
				return error_set(err, -EINVAL, "-l %s=%s: memory too large in all", what, val);
			mem += c[i].mem * c[i].count;
			any_mem = true;
		}
	}
	js->ncpus = cpus;
	js->ngpus = gpus;
	js->mem = any_mem ? mem : -1;
	snprintf(buf, sizeof(buf), "%lld", (long long)count);
	return attr_set(js, "Resource_List.nodect", buf);
}

/* When chunks c[0..n) have the same features, they go to the job's
 * constraint and the chunks keep none. */
static int chunks_features_common(struct jobspec *js, struct jobspec_chunk *c, size_t n)
{
	char buf[sizeof(c->features)], *save = NULL;
	int r = 0;

	for (size_t i = 1; i < n; i++)
		if (strcmp(c[i].features, c[0].features) != 0)
			return 0;
	snprintf(buf, sizeof(buf), "%s", c[0].features);
	for (char *f = strtok_r(buf, ",", &save); f && r == 0; f = strtok_r(NULL, ",", &save))
		r = list_add(&js->constraint, '&', f);
	for (size_t i = 0; i < n; i++)
		c[i].features[0] = '\0';
	return r;
}

/* One part of nodes= between '+': N[:ppn=M][:gpus=G][:property...]. */
static int nodes_part(struct jobspec *js, const char *val, char *part, struct jobspec_chunk *ret,
		      struct error *err)
{
	char *save = NULL, *tok;
	int r;

	*ret = (struct jobspec_chunk){ .count = 1, .ncpus = 1 };
	tok = strtok_r(part, ":", &save);
	if (!tok)
		return error_set(err, -EINVAL, "-l nodes=%s: expected N[:ppn=M]", val);
	if (tok[0] >= '0' && tok[0] <= '9') {
		ret->count = count_parse(tok, JOBSPEC_NCPUS_MAX);
		if (ret->count <= 0)
			return error_set(err, -EINVAL, "-l nodes=%s: not a number of nodes", val);
	} else {
		char what[300];

		snprintf(what, sizeof(what), "-l nodes=%s", val);
		r = host_add(js, what, tok, err);
		if (r < 0)
			return r;
	}
	while ((tok = strtok_r(NULL, ":", &save))) {
		if (strncmp(tok, "ppn=", 4) == 0) {
			ret->ncpus = count_parse(tok + 4, JOBSPEC_NCPUS_MAX);
			if (ret->ncpus <= 0)
				return error_set(err, -EINVAL, "-l nodes=%s: ppn=%s is not a number of CPUs",
						 val, tok + 4);
		} else if (strncmp(tok, "gpus=", 5) == 0) {
			char what[160];

			snprintf(what, sizeof(what), "-l nodes=%s: gpus=%s", val, tok + 5);
			r = ngpus_parse(what, tok + 5, &ret->ngpus, err);
			if (r < 0)
				return r;
		} else {
			char what[300];

			snprintf(what, sizeof(what), "-l nodes=%s: property %s", val, tok);
			r = chunk_feature_add(ret, what, tok, NULL, err);
			if (r < 0)
				return r;
		}
	}
	ret->mpiprocs = ret->ncpus;
	return 0;
}

/* nodes=N[:ppn=M][:property...][+...] (Torque): one node is plain ncpus;
 * more are N chunks of ppn CPUs (ppn MPI slots each), scattered. */
static int nodes_set(struct jobspec *js, const char *val, struct error *err)
{
	struct jobspec_chunk c[JOBSPEC_CHUNKS_MAX];
	char buf[256], *save = NULL, *part;
	size_t n = 0;
	int r;

	select_slots_drop(js);

	if (strlen(val) >= sizeof(buf))
		return error_set(err, -EINVAL, "-l nodes=%.40s...: too long", val);
	snprintf(buf, sizeof(buf), "%s", val);
	for (part = strtok_r(buf, "+", &save); part; part = strtok_r(NULL, "+", &save)) {
		if (n == JOBSPEC_CHUNKS_MAX)
			return error_set(err, -EINVAL, "-l nodes=%s: more than %d parts", val, JOBSPEC_CHUNKS_MAX);
		r = nodes_part(js, val, part, &c[n++], err);
		if (r < 0)
			return r;
	}
	if (n == 0)
		return error_set(err, -EINVAL, "-l nodes=%s: expected N[:ppn=M]", val);
	/* Properties of every part are the job's; else each part's own. */
	r = chunks_features_common(js, c, n);
	if (r < 0)
		return r;
	if (n == 1 && c[0].count == 1) {
		js->ncpus = c[0].ncpus;
		if (c[0].ngpus)
			js->ngpus = c[0].ngpus;
		r = chunks_set(js, NULL, 0);
		return r ?: attr_set(js, "Resource_List.nodes", val) ?: attr_set(js, "Resource_List.nodect", "1");
	}
	r = chunks_total(js, "nodes", val, c, n, err);
	if (r < 0)
		return r;
	/* Torque gives each of nodes=N a node of its own. */
	if (js->place == JOBSPEC_PLACE_UNSET)
		js->place = JOBSPEC_PLACE_SCATTER;
	return chunks_set(js, c, n) ?: attr_set(js, "Resource_List.nodes", val);
}

/* One chunk of a select with several: [N:]res=val[:res=val...]. */
static int select_part(struct jobspec *js, const char *val, char *part, struct jobspec_chunk *ret,
		       struct error *err)
{
	char *save = NULL, *tok;
	uint64_t v;
	int r;

	*ret = (struct jobspec_chunk){ .count = 1, .ncpus = 1 };
	for (tok = strtok_r(part, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		char *eq = strchr(tok, '='), what[160];
		int64_t n;

		if (tok == part && !eq) {
			ret->count = count_parse(tok, JOBSPEC_NCPUS_MAX);
			if (ret->count <= 0)
				return error_set(err, -EINVAL, "-l select=%s: '%s' is not a number of chunks",
						 val, tok);
			continue;
		}
		if (!eq)
			return error_set(err, -EINVAL, "-l select=%s: '%s': expected name=value", val, tok);
		*eq = '\0';
		snprintf(what, sizeof(what), "-l select=%s: %s=%s", val, tok, eq + 1);
		if (!strcmp(tok, "ncpus") || !strcmp(tok, "mpiprocs") || !strcmp(tok, "ompthreads")) {
			n = count_parse(eq + 1, JOBSPEC_NCPUS_MAX);
			if (n <= 0 && !(n == 0 && strcmp(tok, "ncpus") != 0))
				return error_set(err, -EINVAL, "%s: not a count", what);
			if (!strcmp(tok, "ncpus"))
				ret->ncpus = n;
			else if (!strcmp(tok, "mpiprocs"))
				ret->mpiprocs = n ? n : -1;
			else
				ret->ompthreads = n;
		} else if (!strcmp(tok, "mem")) {
			r = size_check(what, eq + 1, &v, err);
			if (r < 0)
				return r;
			ret->mem = (int64_t)v;
		} else if (!strcmp(tok, "ngpus") || !strcmp(tok, "gpus") || !strcmp(tok, "naccelerators")) {
			r = ngpus_parse(what, eq + 1, &ret->ngpus, err);
			if (r < 0)
				return r;
		} else if (!strcmp(tok, "gpu_model")) {
			r = jobspec_gpu_model_set(js, what, eq + 1, err);
			if (r < 0)
				return r;
		} else if (!strcmp(tok, "walltime") || !strcmp(tok, "select") || !strcmp(tok, "place") ||
			   !strcmp(tok, "nodes")) {
			return error_set(err, -EINVAL, "%s: not a resource of a chunk", what);
		} else if (!strcmp(tok, "host") || !strcmp(tok, "vnode")) {
			r = host_add(js, what, eq + 1, err);
			if (r < 0)
				return r;
		} else {
			r = chunk_feature_add(ret, what, tok, eq + 1, err);
			if (r < 0)
				return r;
		}
	}
	/* PARALLEL.md: a chunk's MPI slots default to its CPUs. */
	if (ret->mpiprocs == 0)
		ret->mpiprocs = ret->ncpus;
	if (ret->mpiprocs < 0)
		ret->mpiprocs = 0;
	return 0;
}

/* select=[N:]res=val[:res=val...][+...] (PBS Pro): one chunk is plain
 * ncpus; more are chunks, placed free unless -l place= says otherwise. */
static int select_set(struct jobspec *js, const char *val, struct error *err)
{
	struct jobspec_chunk c[JOBSPEC_CHUNKS_MAX];
	char buf[256], *save = NULL, *tok, *part;
	bool ncpus = false;
	size_t n = 0;
	int r;

	select_slots_drop(js);
	if (strlen(val) >= sizeof(buf))
		return error_set(err, -EINVAL, "-l select=%.40s...: too long", val);
	snprintf(buf, sizeof(buf), "%s", val);
	if (!strchr(val, '+') && (strspn(val, "0123456789") == 0 ||
				  (count_parse(strtok_r(buf, ":", &save), JOBSPEC_NCPUS_MAX) == 1))) {
		/* One chunk: plain ncpus/mem/ompthreads, as before. */
		snprintf(buf, sizeof(buf), "%s", val);
		save = NULL;
		for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
			char *eq = strchr(tok, '=');

			if (tok == buf && !eq)
				continue;   /* the count 1 */
			if (!eq)
				return error_set(err, -EINVAL, "-l select=%s: '%s': expected name=value", val, tok);
			*eq = '\0';
			ncpus |= strcmp(tok, "ncpus") == 0;
			r = resource_one(js, tok, eq + 1, true, err);
			if (r < 0)
				return r;
		}
		if (!ncpus)
			js->ncpus = 1;   /* PBS's default chunk has one CPU */
		return chunks_set(js, NULL, 0) ?: attr_set(js, "Resource_List.select", val) ?:
			attr_set(js, "Resource_List.nodect", "1");
	}
	snprintf(buf, sizeof(buf), "%s", val);
	save = NULL;
	for (part = strtok_r(buf, "+", &save); part; part = strtok_r(NULL, "+", &save)) {
		if (n == JOBSPEC_CHUNKS_MAX)
			return error_set(err, -EINVAL, "-l select=%s: more than %d kinds of chunk", val,
					 JOBSPEC_CHUNKS_MAX);
		r = select_part(js, val, part, &c[n++], err);
		if (r < 0)
			return r;
	}
	if (n == 0)
		return error_set(err, -EINVAL, "-l select=%s: expected N:ncpus=C[:mem=SIZE]", val);
	/* Features every chunk asks for are the job's (any node it uses has
	 * them); else each chunk keeps its own (docs/RESOURCES.md). */
	r = chunks_features_common(js, c, n);
	if (r < 0)
		return r;
	r = chunks_total(js, "select", val, c, n, err);
	return r ?: chunks_set(js, c, n) ?: attr_set(js, "Resource_List.select", val);
}

/* place=[arrangement][:sharing][:group=res] (PBS Pro): scatter gives each
 * chunk a node of its own, pack puts them all on one, free anywhere; excl
 * keeps other jobs off the job's nodes (see docs/ARCHITECTURE.md). */
static int place_set(struct jobspec *js, const char *val, struct error *err)
{
	char buf[128], *save = NULL, *tok;
	int r;

	if (strlen(val) >= sizeof(buf))
		return error_set(err, -EINVAL, "-l place=%.40s...: too long", val);
	snprintf(buf, sizeof(buf), "%s", val);
	for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (!strcmp(tok, "scatter") || !strcmp(tok, "vscatter")) {
			js->place = JOBSPEC_PLACE_SCATTER;
		} else if (!strcmp(tok, "pack")) {
			js->place = JOBSPEC_PLACE_PACK;
		} else if (!strcmp(tok, "free")) {
			js->place = JOBSPEC_PLACE_FREE;
		} else if (!strcmp(tok, "excl") || !strcmp(tok, "exclhost")) {
			js->excl = 1;
		} else if (!strcmp(tok, "shared")) {
			js->excl = 0;
		} else if (!strncmp(tok, "group=", 6)) {
			r = warn(js, "-l place=%s: '%s' recorded, not used (qpool's nodes have no "
				 "properties to group by)", val, tok);
			if (r < 0)
				return r;
		} else {
			return error_set(err, -EINVAL, "-l place=%s: '%s' is not scatter, pack, free, excl, "
					 "shared or exclhost", val, tok);
		}
	}
	return attr_set(js, "Resource_List.place", val);
}

static int resource_one(struct jobspec *js, const char *name, const char *val, bool in_chunk,
			struct error *err)
{
	char what[160], key[80];
	uint64_t v;
	int64_t n;
	int r;

	snprintf(what, sizeof(what), "%s=%s", name, val);
	if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
	    != strlen(name) || strlen(name) > 40)
		return error_set(err, -EINVAL, "-l %s: not a resource name", what);
	if (!*val)
		return error_set(err, -EINVAL, "-l %s: empty value", what);
	if (!strcmp(name, "ncpus") || !strcmp(name, "procs")) {
		/* A plain ncpus= after a select= or nodes= asks for one node. */
		if (!in_chunk && chunks_set(js, NULL, 0) < 0)
			return -ENOMEM;
		if (!in_chunk)
			select_slots_drop(js);
		return ncpus_set(js, what, val, err);
	}
	if (!strcmp(name, "mem")) {
		r = size_check(what, val, &v, err);
		if (r < 0)
			return r;
		js->mem = (int64_t)v;
		return attr_set(js, "Resource_List.mem", val);
	}
	if (!strcmp(name, "walltime")) {
		r = time_check(what, val, &v, err);
		if (r < 0)
			return r;
		/* PBS has no "unlimited" walltime to ask for: 0 would only mean
		 * "the queue's default", which would replace a limit the
		 * script set. Say so instead. */
		if (v == 0)
			return error_set(err, -EINVAL, "%s: a job needs a time limit above 0 "
					 "(leave walltime out for the queue's default)", what);
		js->walltime = (int64_t)v;
		return 0;
	}
	if (!in_chunk && !strcmp(name, "nodes"))
		return nodes_set(js, val, err);
	if (!in_chunk && !strcmp(name, "select"))
		return select_set(js, val, err);
	if (!in_chunk && !strcmp(name, "place"))
		return place_set(js, val, err);
	if (!strcmp(name, "host") || !strcmp(name, "vnode")) {
		char hwhat[168];

		snprintf(hwhat, sizeof(hwhat), "-l %s", what);
		return host_add(js, hwhat, val, err);
	}
	snprintf(key, sizeof(key), "Resource_List.%s", name);
	if (!strcmp(name, "ompthreads")) {
		n = count_parse(val, JOBSPEC_NCPUS_MAX);
		if (n <= 0)
			return error_set(err, -EINVAL, "-l %s: not a number of threads", what);
		js->ompthreads = n;
		return attr_set(js, key, val);
	}
	if (!strcmp(name, "mpiprocs") || !strcmp(name, "nodect")) {
		n = count_parse(val, JOBSPEC_NCPUS_MAX);
		if (n <= 0)
			return error_set(err, -EINVAL, "-l %s: not a count", what);
		/* A one-node job's MPI slots: its node file's lines
		 * (docs/PARALLEL.md); its own, or its one chunk's. */
		if (!strcmp(name, "mpiprocs"))
			js->mpiprocs_of_select = in_chunk;
		return attr_set(js, key, val);
	}
	if (!strcmp(name, "ngpus") || !strcmp(name, "gpus") || !strcmp(name, "naccelerators")) {
		char lwhat[168];

		/* A plain ngpus= is a one-node job's, as a plain ncpus=. */
		snprintf(lwhat, sizeof(lwhat), "-l %s", what);
		return ngpus_parse(lwhat, val, &js->ngpus, err);
	}
	if (!strcmp(name, "gpu_model")) {
		char mwhat[200];

		snprintf(mwhat, sizeof(mwhat), "-l %s%s", in_chunk ? "select=...:" : "", what);
		return jobspec_gpu_model_set(js, mwhat, val, err);
	}
	/* Torque's pmem is per process: the job holds pmem times its
	 * processes on each node, counted and limited as mem is
	 * (jobspec_mem; docs/ARCHITECTURE.md, "Memory counted"). */
	if (!strcmp(name, "pmem") && !in_chunk) {
		r = size_check(what, val, &v, err);
		if (r < 0)
			return r;
		js->pmem = (int64_t)v;
		return attr_set(js, "Resource_List.pmem", val);
	}
	if (!strcmp(name, "pmem") || !strcmp(name, "pvmem") || !strcmp(name, "vmem") ||
	    !strcmp(name, "file")) {
		r = size_check(what, val, &v, err);
		return r < 0 ? r : record_unenforced(js, name, val,
						      "not enforced (qpool limits a job's mem=)");
	}
	/* Moab's and Torque's notice before the walltime, Slurm's --signal:
	 * "[B:]SIG[@SECONDS]", sent by gded (docs/ARCHITECTURE.md). */
	if (!strcmp(name, "signal") && !in_chunk) {
		struct end_notice notice;

		if (end_notice_parse(val, &notice) < 0)
			return error_set(err, -EINVAL, "%s: not [B:]SIGNAL[@SECONDS] (e.g. USR1@60, "
					 "seconds at most %d)", what, END_NOTICE_SECS_MAX);
		return attr_set(js, "Resource_List.signal", val);
	}
	/* The job's QOS (docs/QOS.md): qpool's PBS form of Slurm's --qos;
	 * qpoold checks the user may use it. */
	if (!strcmp(name, "qos") && !in_chunk) {
		size_t vl = strlen(val);

		if (vl == 0 || vl >= 64 ||
		    strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != vl)
			return error_set(err, -EINVAL, "%s: a QOS name (letters, digits, '_', '-', '.')", what);
		return attr_set(js, "Resource_List.qos", val);
	}
	if (!strcmp(name, "cput") || !strcmp(name, "pcput")) {
		r = time_check(what, val, &v, err);
		return r < 0 ? r : record_unenforced(js, name, val,
						      "not enforced (qpool limits walltime=)");
	}
	/* In a chunk, a name qpool has no meaning for is a node's boolean
	 * or string resource: a feature. Outside one it is the server's. */
	if (in_chunk) {
		char fwhat[200];

		snprintf(fwhat, sizeof(fwhat), "-l select=...:%s", what);
		return feature_add(js, fwhat, name, val, err);
	}
	/* qpool's own form of Slurm's -L (what salloc and srun give qsub). */
	if (!strcmp(name, "licenses")) {
		struct license l[LICENSES_MAX];
		struct error why;
		size_t nl;

		if (license_request_parse(val, l, LICENSES_MAX, &nl, &why) < 0)
			return error_set(err, -EINVAL, "-l %s: %s", what, why.text);
		return list_add(&js->licenses, ',', val);
	}
	/* A count may be one of the pool's licenses: qpoold knows. */
	if (license_count_parse(val, &v) == 0)
		return record_unenforced(js, name, val, "not used by qpool unless its [licenses] counts it");
	return record_unenforced(js, name, val, "not used by qpool");
}

/* One "key=value" of -l; item is not NUL-terminated (len bytes). */
static int resource_set(struct jobspec *js, const char *item, size_t len, struct error *err)
{
	char buf[256], *eq;

	if (len == 0)
		return error_set(err, -EINVAL, "-l: empty resource (expected ncpus=N,mem=SIZE,walltime=TIME)");
	if (len >= sizeof(buf))
		return error_set(err, -EINVAL, "-l %.40s...: resource too long", item);
	memcpy(buf, item, len);
	buf[len] = '\0';
	eq = strchr(buf, '=');
	/* PBS Pro's bare wd (NCI's Gadi: start in the submission directory,
	 * not HOME), which is where qpool starts a job anyway; a -d/-w
	 * given before it is undone, as the later option wins. */
	if (!eq && !strcmp(buf, "wd")) {
		free(js->workdir);
		js->workdir = NULL;
		js->workdir_submit = 1;
		return attr_set(js, "Resource_List.wd", "1");
	}
	if (!eq)
		return error_set(err, -EINVAL, "-l %s: expected name=value", buf);
	*eq = '\0';
	return resource_one(js, buf, eq + 1, false, err);
}

/* -l a=1,b=2: commas split resources, except inside select= and nodes=,
 * whose values hold none (PBS writes select=2:ncpus=4,walltime=1:00:00). */
static int resources_set(struct jobspec *js, const char *arg, struct error *err)
{
	const char *p = arg;
	int r;

	for (;;) {
		size_t n = strcspn(p, ",");

		r = resource_set(js, p, n, err);
		if (r < 0)
			return r;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static bool var_name_valid(const char *s, size_t len)
{
	if (len == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

static int var_add(struct jobspec *js, const char *name, size_t name_len, const char *value)
{
	struct jobspec_var *v = realloc(js->vars, (js->n_vars + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	js->vars = v;
	v = &js->vars[js->n_vars];
	v->name = strndup(name, name_len);
	v->value = value ? strdup(value) : NULL;
	if (!v->name || (value && !v->value)) {
		free(v->name);
		free(v->value);
		return -ENOMEM;
	}
	js->n_vars++;
	return 0;
}

/* -v A,B=x,C=: the value runs to the next comma, as in PBS. */
static int vars_set(struct jobspec *js, const char *arg, struct error *err)
{
	const char *p = arg;
	int r;

	if (!utf8_valid(arg, strlen(arg)))
		return error_set(err, -EINVAL, "-v: not valid UTF-8");
	for (;;) {
		size_t n = strcspn(p, ","), name_len = strcspn(p, ",=");
		char *value = NULL;

		if (!var_name_valid(p, name_len))
			return error_set(err, -EINVAL, "-v %.*s: not a variable name", (int)n, p);
		if (name_len < n) {
			value = strndup(p + name_len + 1, n - name_len - 1);
			if (!value)
				return -ENOMEM;
		}
		r = var_add(js, p, name_len, value);
		free(value);
		if (r < 0)
			return r;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* -m: n, or any of a (abort), b (begin), e (end), and PBS Pro's j. */
static int mail_set(struct jobspec *js, const char *arg, struct error *err)
{
	if (strcmp(arg, "n") != 0 && (!*arg || strspn(arg, "abej") != strlen(arg)))
		return error_set(err, -EINVAL, "-m %s: expected n, or letters of abe (abort, begin, end)",
				 arg);
	js->mail = strcmp(arg, "n") != 0;
	return attr_set(js, "Mail_Points", arg);
}

/* -W attr=value[,attr=value...]. */
static int w_set(struct jobspec *js, const char *arg, struct error *err)
{
	char buf[512], *save = NULL, *tok;
	int r;

	if (strlen(arg) >= sizeof(buf))
		return error_set(err, -EINVAL, "-W %.40s...: too long", arg);
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok)
			return error_set(err, -EINVAL, "-W %s: expected attribute=value", tok);
		*eq = '\0';
		if (!strcmp(tok, "depend")) {
			struct depend_list d;
			char text[DEPEND_TEXT_MAX];

			/* PBS joins several kinds with ',' inside the value:
			 * the parts after it belong to it up to one that is
			 * another attribute=value. */
			if (save && *save) {
				char *q;

				save[-1] = ',';
				for (q = save; q && *q; q = strchr(q, ',') ? strchr(q, ',') + 1 : NULL)
					if (strcspn(q, "=,") < strcspn(q, ":,")) {
						q[-1] = '\0';
						break;
					}
				save = q && *q ? q : NULL;
				if (!save)
					save = eq + 1 + strlen(eq + 1);
			}
			if (depend_parse(eq + 1, &d, err) < 0)
				return -EINVAL;
			depend_format(&d, text, sizeof(text));
			r = string_set(&js->depend, text);
			if (r < 0)
				return r;
			continue;
		}
		if (!strcmp(tok, "block")) {
			if (!strcasecmp(eq + 1, "true"))
				js->block = 1;
			else if (!strcasecmp(eq + 1, "false"))
				js->block = 0;
			else
				return error_set(err, -EINVAL, "-W block=%s: expected true or false", eq + 1);
			continue;
		}
		if (!strcmp(tok, "umask")) {
			/* As PBS: the mode mask of the job and its output files. */
			size_t nd = strspn(eq + 1, "01234567");

			if (!nd || nd > 4 || eq[1 + nd] || strtol(eq + 1, NULL, 8) > 0777)
				return error_set(err, -EINVAL, "-W umask=%s: expected an octal mask (e.g. 022)",
						 eq + 1);
			r = attr_set(js, "umask", eq + 1);
		} else if (!strcmp(tok, "group_list")) {
			/* g or g@host: one group; the host part names this pool. */
			eq[1 + strcspn(eq + 1, "@")] = '\0';
			if (!eq[1] || strchr(eq + 1, ','))
				return error_set(err, -EINVAL, "-W group_list=%s: expected a group name",
						 eq + 1);
			r = string_set(&js->group, eq + 1) ?: attr_set(js, "group_list", eq + 1);
		} else {
			struct error why;

			/* A name qpool prints from its own fields would print
			 * over them in qstat -f. */
			if (jobattr_name_check(tok, &why) < 0)
				return error_set(err, -EINVAL, "-W: %s", why.text);
			if (!strcasecmp(tok, "interactive"))
				return error_set(err, -EINVAL, "-W interactive: qsub -I makes a job interactive");
			r = attr_set(js, tok, eq + 1) ?:
			    warn(js, "-W %s=%s: recorded, not used by qpool", tok, eq + 1);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* -a [[[[CC]YY]MM]DD]hhmm[.SS]: checked here, turned into a time by qsub. */
static int start_after_set(struct jobspec *js, const char *arg, struct error *err)
{
	size_t nd = strspn(arg, "0123456789");

	if (!(nd == 4 || nd == 6 || nd == 8 || nd == 10 || nd == 12) ||
	    (arg[nd] && (arg[nd] != '.' || strspn(arg + nd + 1, "0123456789") != 2 || arg[nd + 3])))
		return error_set(err, -EINVAL, "-a %s: expected [[[[CC]YY]MM]DD]hhmm[.SS]", arg);
	return string_set(&js->start_after, arg);
}

int jobspec_option(struct jobspec *js, int opt, const char *arg, struct error *err)
{
	int64_t n;
	int r;

	switch (opt) {
	case 'N':
		return name_set(js, arg, err);
	case 'q': {
		/* PBS's queue@server: qpool has one server, so the part after
		 * '@' is not checked; "@server" alone is the default queue. */
		size_t qlen = strcspn(arg, "@");
		char *q;

		r = text_arg_check("-q", "queue name", arg, err);
		if (r < 0)
			return r;
		if (qlen == 0) {
			free(js->queue);
			js->queue = NULL;
			return 0;
		}
		q = strndup(arg, qlen);
		if (!q)
			return -ENOMEM;
		free(js->queue);
		js->queue = q;
		return 0;
	}
	case 'l':
		return resources_set(js, arg, err);
	case 'o':
		r = text_arg_check("-o", "path", arg, err);
		return r < 0 ? r : string_set(&js->stdout_path, arg);
	case 'e':
		r = text_arg_check("-e", "path", arg, err);
		return r < 0 ? r : string_set(&js->stderr_path, arg);
	case 'j':
		if (strcmp(arg, "oe") == 0)
			js->join = 1;
		else if (strcmp(arg, "eo") == 0)
			js->join = 2;
		else if (strcmp(arg, "n") == 0)
			js->join = 0;
		else
			return error_set(err, -EINVAL, "-j %s: expected oe (both into the output file), "
					 "eo (both into the error file) or n", arg);
		return 0;
	case 'v':
		return vars_set(js, arg, err);
	case 'V':
		js->export_all = 1;
		return 0;
	case 'h':
		js->hold = 1;
		return 0;
	case 'r':
		if (strcmp(arg, "y") == 0)
			js->rerunnable = 1;
		else if (strcmp(arg, "n") == 0)
			js->rerunnable = 0;
		else
			return error_set(err, -EINVAL, "-r %s: expected y or n", arg);
		return 0;
	case 'm':
		return mail_set(js, arg, err);
	case 'M':
		r = text_arg_check("-M", "mail address", arg, err);
		return r < 0 ? r : attr_set(js, "Mail_Users", arg);
	case 'A':
		r = text_arg_check("-A", "account", arg, err);
		return r < 0 ? r : attr_set(js, "Account_Name", arg);
	case 'P':
		r = text_arg_check("-P", "project", arg, err);
		return r < 0 ? r : attr_set(js, "project", arg);
	case 'p': {
		const char *d = arg[0] == '-' || arg[0] == '+' ? arg + 1 : arg;

		n = count_parse(d, 1024);
		if (n < 0 || (arg[0] != '-' && n > 1023))
			return error_set(err, -EINVAL, "-p %s: expected a priority from -1024 to 1023", arg);
		js->priority = arg[0] == '-' ? (int)-n : (int)n;
		return attr_set(js, "Priority", arg);
	}
	case 'u':
		r = text_arg_check("-u", "user list", arg, err);
		return r < 0 ? r : attr_set(js, "User_List", arg);
	case 'S': {
		/* path[@host][,path@host...]: the first path; the host is ours. */
		size_t len = strcspn(arg, "@,");

		if (arg[0] != '/' || len < 2)
			return error_set(err, -EINVAL, "-S %s: expected an absolute path", arg);
		free(js->shell);
		js->shell = strndup(arg, len);
		return js->shell ? attr_set(js, "Shell_Path_List", arg) : -ENOMEM;
	}
	case 'W':
		return w_set(js, arg, err);
	case 'a':
		return start_after_set(js, arg, err);
	case 'z':
		js->quiet = 1;
		return 0;
	case 'C':
		return string_set(&js->prefix, arg);
	case 'd':
	case 'w':
		r = text_arg_check(opt == 'd' ? "-d" : "-w", "directory", arg, err);
		if (r == 0)
			js->workdir_submit = 0;
		return r < 0 ? r : string_set(&js->workdir, arg);
	case 'k':
		/* qpool always writes the output files in place as the job
		 * runs (PBS's -k d); the letters are recorded. */
		if (!*arg || strspn(arg, "eond") != strlen(arg))
			return error_set(err, -EINVAL, "-k %s: expected e, o, eo, oe, d or n", arg);
		return attr_set(js, "Keep_Files", arg);
	case 'c':
		r = text_arg_check("-c", "checkpoint", arg, err);
		return r < 0 ? r : attr_set(js, "Checkpoint", arg) ?:
			warn(js, "-c %s: recorded; qpool does not checkpoint jobs", arg);
	case 'I':
		js->interactive = 1;
		return 0;
	case 'J':
	case 't': {
		struct arrayspec a;
		char text[ARRAYSPEC_TEXT_MAX];

		if (arrayspec_parse(arg, opt, opt == 't', &a, err) < 0)
			return -EINVAL;
		arrayspec_format(&a, text, sizeof(text));
		return string_set(&js->array, text);
	}
	case 'X':
		return error_set(err, -EINVAL, "-X: X11 forwarding is not supported");
	default:
		if (opt > ' ' && opt < 0x7f)
			return error_set(err, -EINVAL, "unknown option -%c", opt);
		return error_set(err, -EINVAL, "unknown option");
	}
}

static int merge_string(char **dst, const char *src)
{
	return src ? string_set(dst, src) : 0;
}

int jobspec_merge(struct jobspec *dst, const struct jobspec *src)
{
	int r = 0;

	r = r ?: merge_string(&dst->name, src->name);
	r = r ?: merge_string(&dst->queue, src->queue);
	r = r ?: merge_string(&dst->stdout_path, src->stdout_path);
	r = r ?: merge_string(&dst->stderr_path, src->stderr_path);
	r = r ?: merge_string(&dst->shell, src->shell);
	r = r ?: merge_string(&dst->prefix, src->prefix);
	if (src->workdir_submit > 0) {
		free(dst->workdir);
		dst->workdir = NULL;
	}
	r = r ?: merge_string(&dst->workdir, src->workdir);
	r = r ?: merge_string(&dst->group, src->group);
	r = r ?: merge_string(&dst->start_after, src->start_after);
	r = r ?: merge_string(&dst->array, src->array);
	r = r ?: merge_string(&dst->depend, src->depend);
	r = r ?: merge_string(&dst->nodelist, src->nodelist);
	r = r ?: merge_string(&dst->exclude, src->exclude);
	r = r ?: merge_string(&dst->constraint, src->constraint);
	r = r ?: merge_string(&dst->gpu_model, src->gpu_model);
	r = r ?: merge_string(&dst->licenses, src->licenses);
	r = r ?: merge_string(&dst->node_res, src->node_res);
	for (size_t i = 0; i < src->n_attrs && r == 0; i++)
		r = attr_set(dst, src->attrs[i].name, src->attrs[i].value);
	for (size_t i = 0; i < src->n_warnings && r == 0; i++)
		r = warn(dst, "%s", src->warnings[i]);
	if (r < 0)
		return r;
	if (src->ompthreads >= 0)
		dst->ompthreads = src->ompthreads;
	if (src->priority != JOBSPEC_PRIORITY_UNSET)
		dst->priority = src->priority;
	if (src->quiet >= 0)
		dst->quiet = src->quiet;
	if (src->interactive >= 0)
		dst->interactive = src->interactive;
	if (src->mail >= 0)
		dst->mail = src->mail;
	if (src->block >= 0)
		dst->block = src->block;
	if (src->workdir_submit >= 0)
		dst->workdir_submit = src->workdir_submit;
	/* src's slots are its own now (merged above), or its request
	 * replaced dst's, with the slots of dst's one-chunk select. */
	if (jobspec_attr(src, "Resource_List.mpiprocs"))
		dst->mpiprocs_of_select = src->mpiprocs_of_select;
	else if (src->ncpus >= 0)
		select_slots_drop(dst);
	if (src->ncpus >= 0) {
		dst->ncpus = src->ncpus;
		r = chunks_set(dst, src->chunks, src->n_chunks);
		if (r < 0)
			return r;
	}
	if (src->ngpus >= 0)
		dst->ngpus = src->ngpus;
	if (src->place != JOBSPEC_PLACE_UNSET)
		dst->place = src->place;
	if (src->excl >= 0)
		dst->excl = src->excl;
	if (src->mem >= 0)
		dst->mem = src->mem;
	if (src->pmem >= 0)
		dst->pmem = src->pmem;
	if (src->walltime >= 0)
		dst->walltime = src->walltime;
	if (src->join >= 0)
		dst->join = src->join;
	if (src->hold >= 0)
		dst->hold = src->hold;
	if (src->rerunnable >= 0)
		dst->rerunnable = src->rerunnable;
	if (src->export_all >= 0)
		dst->export_all = src->export_all;
	for (size_t i = 0; i < src->n_vars; i++) {
		const struct jobspec_var *v = &src->vars[i];

		r = var_add(dst, v->name, strlen(v->name), v->value);
		if (r < 0)
			return r;
	}
	return 0;
}

int jobspec_workdir(const struct jobspec *js, const char *cwd, char *buf, size_t len)
{
	int r;

	if (js->workdir && js->workdir[0] != '/')
		r = snprintf(buf, len, "%s/%s", strcmp(cwd, "/") ? cwd : "", js->workdir);
	else
		r = snprintf(buf, len, "%s", js->workdir ? js->workdir : cwd);
	return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
}

int jobspec_output_path(const char *cwd, const char *opt, const char *arg, char *buf, size_t len,
			size_t *ret_host_len, struct error *err)
{
	const char *colon = strchr(arg, ':'), *path = arg;
	int n;

	*ret_host_len = 0;
	if (colon && colon != arg && !memchr(arg, '/', (size_t)(colon - arg))) {
		*ret_host_len = (size_t)(colon - arg);
		path = colon + 1;
	}
	if (!*path)
		return error_set(err, -EINVAL, "%s %s: no path", opt, arg);
	/* PBS resolves a relative path against qsub's directory, with a
	 * host: or without. */
	if (path[0] == '/')
		n = snprintf(buf, len, "%s", path);
	else
		n = snprintf(buf, len, "%s/%s", strcmp(cwd, "/") ? cwd : "", path);
	if (n < 0 || (size_t)n >= len)
		return error_set(err, -ENAMETOOLONG, "%s %.60s: path too long", opt, arg);
	return 0;
}

int jobscript_check(const char *text, size_t len, struct error *err)
{
	const char *nul;
	size_t line = 1, start = 0;

	if (len == 0)
		return error_set(err, -EINVAL, "script is empty");
	nul = memchr(text, '\0', len);
	if (nul) {
		for (const char *p = text; p < nul; p++)
			line += *p == '\n';
		return error_set(err, -EINVAL, "line %zu: NUL byte: a script must be text", line);
	}
	/* Line by line, so the message can say where. */
	while (start < len) {
		const char *nl = memchr(text + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (!utf8_valid(text + start, end - start))
			return error_set(err, -EINVAL, "line %zu: not valid UTF-8: a script must be text", line);
		start = end + 1;
		line++;
	}
	return 0;
}

/* Splits a directive's rest into words, in place into buf (which holds at
 * least len + 1 bytes). Returns the number of words, or -EINVAL. */
static int words_split(const char *s, size_t len, char *buf, char **words, struct error *err)
{
	const char *end = s + len;
	char *out = buf;
	int n = 0;

	for (;;) {
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		if (s == end || *s == '#')
			return n;
		if (n == DIRECTIVE_WORDS_MAX)
			return error_set(err, -EINVAL, "too many words");
		words[n++] = out;
		while (s < end && *s != ' ' && *s != '\t') {
			char q = *s;

			if (q == '\'' || q == '"') {
				for (s++; s < end && *s != q; s++) {
					if (q == '"' && *s == '\\' && s + 1 < end &&
					    (s[1] == '"' || s[1] == '\\'))
						s++;
					*out++ = *s;
				}
				if (s == end)
					return error_set(err, -EINVAL, "unterminated %c quote", q);
				s++;
			} else if (q == '\\' && s + 1 < end) {
				*out++ = s[1];
				s += 2;
			} else {
				*out++ = *s++;
			}
		}
		*out++ = '\0';
	}
}

/* Applies the options of one directive (the text after #QP / #PBS). */
static int directive_apply(struct jobspec *js, const char *s, size_t len, struct error *err)
{
	char *words[DIRECTIVE_WORDS_MAX];
	char *buf = malloc(len + DIRECTIVE_WORDS_MAX + 1);
	int n, r = 0;

	if (!buf)
		return -ENOMEM;
	n = words_split(s, len, buf, words, err);
	if (n < 0) {
		r = n;
		goto done;
	}
	for (int i = 0; i < n && r == 0; i++) {
		const char *w = words[i];

		if (w[0] != '-' || w[1] == '\0' || w[1] == '-') {
			r = error_set(err, -EINVAL, "unexpected '%.60s' (a directive holds qsub options)", w);
			goto done;
		}
		/* Like getopt: flags may be grouped, an argument may be attached. */
		for (const char *o = w + 1; *o && r == 0; o++) {
			if (!jobspec_option_has_arg(*o)) {
				if (!strchr("hVzIX", *o)) {
					r = error_set(err, -EINVAL, "unknown option -%c", *o);
					goto done;
				}
				r = jobspec_option(js, *o, NULL, err);
				continue;
			}
			if (o[1]) {
				r = jobspec_option(js, *o, o + 1, err);
			} else if (i + 1 < n) {
				r = jobspec_option(js, *o, words[++i], err);
			} else {
				r = error_set(err, -EINVAL, "option -%c needs an argument", *o);
			}
			break;
		}
	}
done:
	free(buf);
	return r;
}

static bool line_is_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static bool line_is_comment(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i < len && s[i] == '#';
}

/* The length of the directive prefix this line starts with, or 0: only
 * prefix when it is set (qsub -C), else #QP or #PBS; followed by a blank,
 * the end, or an option's '-' ("#PBS-l ...": PBS Pro's pbs_ispbsdir takes
 * whatever follows the prefix; a word there, "#PBSX", stays a comment). */
static size_t directive_prefix(const char *s, size_t len, const char *prefix)
{
	const char *prefixes[] = { "#QP", "#PBS" };
	size_t count = 2;

	if (prefix) {
		prefixes[0] = prefix;
		count = *prefix ? 1 : 0;
	}
	for (size_t i = 0; i < count; i++) {
		size_t n = strlen(prefixes[i]);

		if (len >= n && memcmp(s, prefixes[i], n) == 0 &&
		    (len == n || s[n] == ' ' || s[n] == '\t' || s[n] == '\r' || s[n] == '-'))
			return n;
	}
	return 0;
}

int jobscript_parse(const char *text, size_t len, const char *prefix, struct jobspec *js,
		    struct error *err)
{
	size_t start = 0, line = 0;
	struct error e;
	int r;

	while (start < len) {
		const char *s = text + start, *nl = memchr(s, '\n', len - start);
		size_t n = nl ? (size_t)(nl - s) : len - start, p;

		line++;
		start += n + 1;
		if (line == 1 && n >= 2 && s[0] == '#' && s[1] == '!')
			continue;
		if (n > 0 && s[n - 1] == '\r')
			n--;
		if (line_is_blank(s, n))
			continue;
		if (!line_is_comment(s, n))
			break;
		p = directive_prefix(s, n, prefix);
		if (!p)
			continue;
		r = directive_apply(js, s + p, n - p, &e);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return error_set(err, r, "line %zu: %s", line, e.text);
	}
	return 0;
}

int jobscript_read(int fd, char **ret, size_t *ret_len)
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

int64_t jobspec_chunk_mem(const struct jobspec *js, const struct jobspec_chunk *c)
{
	int64_t procs = c->mpiprocs > 0 ? c->mpiprocs : c->ncpus;

	if (c->mem > 0)
		return c->mem;
	if (js->pmem > 0 && procs > 0 && js->pmem <= INT64_MAX / procs)
		return js->pmem * procs;
	return 0;
}

int64_t jobspec_mem(const struct jobspec *js)
{
	int64_t sum = 0;

	if (js->mem >= 0 || js->pmem <= 0)
		return js->mem;
	if (!js->n_chunks)
		return js->pmem <= INT64_MAX / (js->ncpus > 0 ? js->ncpus : 1)
			       ? js->pmem * (js->ncpus > 0 ? js->ncpus : 1) : -1;
	for (size_t i = 0; i < js->n_chunks; i++) {
		int64_t m = jobspec_chunk_mem(js, &js->chunks[i]);

		if (m > INT64_MAX / js->chunks[i].count || sum > INT64_MAX - m * js->chunks[i].count)
			return -1;
		sum += m * js->chunks[i].count;
	}
	return sum;
}
