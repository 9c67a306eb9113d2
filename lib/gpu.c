/* SPDX-License-Identifier: MIT */
/* A node's GPUs on the wire: node.register's gpus array and the launch spec's (docs/GPUS.md). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* Highest NUMA node number taken (the kernel's CONFIG_NODES_SHIFT is at
 * most 10). */
#define GPU_NUMA_MAX 1023

int gpu_model_canon(const char *s, size_t len, char *buf, struct error *err)
{
	if (len == 0)
		return error_set(err, -EINVAL, "a GPU model cannot be empty");
	if (len >= GPU_MODEL_MAX)
		return error_set(err, -EINVAL, "GPU model %.*s...: longer than %d characters", 16, s,
				 GPU_MODEL_MAX - 1);
	if (!isalnum((unsigned char)s[0]))
		return error_set(err, -EINVAL, "GPU model %.*s: must start with a letter or digit", (int)len, s);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!isalnum(c) && c != '_' && c != '-' && c != '.')
			return error_set(err, -EINVAL, "GPU model %.*s: only letters, digits, '_', '-' and '.'",
					 (int)len, s);
		buf[i] = (char)tolower(c);
	}
	buf[len] = '\0';
	return 0;
}

/* Whether word[0..len) holds a letter and a digit (has_alpha, has_digit). */
static void word_kind(const char *w, size_t len, bool *has_alpha, bool *has_digit)
{
	*has_alpha = *has_digit = false;
	for (size_t i = 0; i < len; i++) {
		*has_alpha |= isalpha((unsigned char)w[i]) != 0;
		*has_digit |= isdigit((unsigned char)w[i]) != 0;
	}
}

static bool model_from_words(const char *s, size_t n, char *buf)
{
	static const char seps[] = " \t-_/,()";
	const char *prev = NULL;
	size_t prev_len = 0;

	for (size_t i = 0; i < n; ) {
		size_t len = 0;
		bool a, d;

		while (i < n && strchr(seps, s[i]))
			i++;
		while (i + len < n && !strchr(seps, s[i + len]))
			len++;
		if (len == 0)
			break;
		word_kind(s + i, len, &a, &d);
		if (a && d && len < GPU_MODEL_MAX)
			return gpu_model_canon(s + i, len, buf, NULL) == 0;
		if (d && prev && prev_len + len < GPU_MODEL_MAX) {
			char joined[GPU_MODEL_MAX * 2];

			memcpy(joined, prev, prev_len);
			memcpy(joined + prev_len, s + i, len);
			return gpu_model_canon(joined, prev_len + len, buf, NULL) == 0;
		}
		prev = s + i;
		prev_len = len;
		i += len;
	}
	return false;
}

bool gpu_model_from_name(const char *name, char *buf)
{
	const char *lb = name ? strchr(name, '[') : NULL;
	const char *rb = lb ? strchr(lb, ']') : NULL;

	buf[0] = '\0';
	if (!name)
		return false;
	if (lb && rb && model_from_words(lb + 1, (size_t)(rb - lb - 1), buf))
		return true;
	if (model_from_words(name, strlen(name), buf))
		return true;
	buf[0] = '\0';
	return false;
}

/* The model of entry e of a node list's gpus ("" none). */
static const char *entry_model(const json_t *e)
{
	const char *m = json_string_value(json_object_get(e, "model"));

	return m ? m : "";
}

void gpu_gres_format(const json_t *gpus, bool used, char *buf, size_t len)
{
	size_t at = 0, i, k;
	const json_t *e, *f;

	buf[0] = '\0';
	json_array_foreach(gpus, i, e) {
		unsigned count = 0;
		bool seen = false;

		for (k = 0; k < i && !seen; k++)
			seen = !strcmp(entry_model(json_array_get(gpus, k)), entry_model(e));
		if (seen)
			continue;
		json_array_foreach(gpus, k, f)
			if (k >= i && !strcmp(entry_model(f), entry_model(e)) && (!used || json_object_get(f, "job")))
				count++;
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, "%sgpu:%s%s%u", at ? "," : "", entry_model(e),
					       *entry_model(e) ? ":" : "", count);
	}
}

void gpu_models_format(const json_t *gpus, char *buf, size_t len)
{
	size_t at = 0, i, k;
	const json_t *e;

	buf[0] = '\0';
	json_array_foreach(gpus, i, e) {
		bool seen = !*entry_model(e);

		for (k = 0; k < i && !seen; k++)
			seen = !strcmp(entry_model(json_array_get(gpus, k)), entry_model(e));
		if (!seen && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "," : "", entry_model(e));
	}
}

json_t *gpu_entry_json(const struct node_gpu *g)
{
	char cpus[4096];

	cpumask_format(&g->cpus, cpus, sizeof(cpus));
	return json_pack("{s:I, s:s, s:I, s:I, s:s, s:i, s:s}", "index", (json_int_t)g->index, "file", g->file,
			 "major", (json_int_t)g->major, "minor", (json_int_t)g->minor, "cpus", cpus,
			 "numa", g->numa, "model", g->model);
}

json_t *gpu_list_json(const struct node_gpu *gpus, unsigned n)
{
	json_t *arr = json_array();

	for (unsigned i = 0; arr && i < n; i++) {
		json_t *e = gpu_entry_json(&gpus[i]);

		if (!e || json_array_append_new(arr, e) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* The integer member key of o within 0..max into *ret, or -EINVAL. */
static int member_uint(const json_t *o, const char *key, json_int_t max, unsigned *ret)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
		return -EINVAL;
	*ret = (unsigned)json_integer_value(v);
	return 0;
}

static int entry_parse(const json_t *o, unsigned i, const struct cpumask *node_cpus,
		       struct node_gpu *g, struct error *err)
{
	const char *file = json_string_value(json_object_get(o, "file"));
	const char *cpus = json_string_value(json_object_get(o, "cpus"));
	json_t *numa = json_object_get(o, "numa");
	json_t *model = json_object_get(o, "model");
	unsigned index;

	if (!json_is_object(o))
		return error_set(err, -EINVAL, "gpus[%u]: not an object", i);
	if (member_uint(o, "index", NODE_GPUS_MAX - 1, &index) < 0 || index != i)
		return error_set(err, -EINVAL, "gpus[%u]: index must be %u (entries in index order)", i, i);
	g->index = i;
	if (!file || file[0] != '/' || strlen(file) >= sizeof(g->file))
		return error_set(err, -EINVAL, "gpus[%u]: file must be an absolute path under %zu bytes", i,
				 sizeof(g->file));
	memcpy(g->file, file, strlen(file) + 1);
	if (member_uint(o, "major", GPU_MAJOR_MAX, &g->major) < 0)
		return error_set(err, -EINVAL, "gpus[%u]: major must be 0-%u", i, GPU_MAJOR_MAX);
	if (member_uint(o, "minor", GPU_MINOR_MAX, &g->minor) < 0)
		return error_set(err, -EINVAL, "gpus[%u]: minor must be 0-%u", i, GPU_MINOR_MAX);
	if (!cpus || cpumask_parse(cpus, &g->cpus) < 0)
		return error_set(err, -EINVAL, "gpus[%u]: cpus must be a CPU list (\"\": unknown)", i);
	if (node_cpus && !cpumask_subset(&g->cpus, node_cpus))
		return error_set(err, -EINVAL, "gpus[%u]: cpus %.40s are not all the node's", i, cpus);
	if (!json_is_integer(numa) || json_integer_value(numa) < -1 || json_integer_value(numa) > GPU_NUMA_MAX)
		return error_set(err, -EINVAL, "gpus[%u]: numa must be -1 (unknown) to %d", i, GPU_NUMA_MAX);
	g->numa = (int)json_integer_value(numa);
	g->model[0] = '\0';
	if (model && !json_is_string(model))
		return error_set(err, -EINVAL, "gpus[%u]: model must be a string (\"\": unknown)", i);
	if (model && json_string_length(model) &&
	    gpu_model_canon(json_string_value(model), json_string_length(model), g->model, NULL) < 0)
		return error_set(err, -EINVAL, "gpus[%u]: model is not a GPU model name", i);
	return 0;
}

int gpu_list_parse(const json_t *arr, const struct cpumask *node_cpus, struct node_gpu **ret,
		   unsigned *ret_n, struct error *err)
{
	struct node_gpu *gpus;
	size_t n;
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (!arr)
		return 0;
	if (!json_is_array(arr))
		return error_set(err, -EINVAL, "gpus: not an array");
	n = json_array_size(arr);
	if (n > NODE_GPUS_MAX)
		return error_set(err, -EINVAL, "gpus: %zu entries, at most %d", n, NODE_GPUS_MAX);
	if (n == 0)
		return 0;
	gpus = calloc(n, sizeof(*gpus));
	if (!gpus)
		return error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		r = entry_parse(json_array_get(arr, i), (unsigned)i, node_cpus, &gpus[i], err);
		if (r < 0) {
			free(gpus);
			return r;
		}
	}
	*ret = gpus;
	*ret_n = (unsigned)n;
	return 0;
}

int gpu_spec_json(const struct node_gpu *gpus, unsigned n, const json_t *launch, json_t **ret_gpus,
		  json_t **ret_node, struct error *err)
{
	json_t *mine = NULL, *all = NULL, *v;
	uint64_t seen = 0;
	size_t i;
	int r;

	*ret_gpus = NULL;
	*ret_node = NULL;
	if (launch && !json_is_array(launch))
		return error_set(err, -EINVAL, "gpus: not an array of GPU indices");
	all = json_array();
	mine = launch ? json_array() : NULL;
	if (!all || (launch && !mine)) {
		r = error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	json_array_foreach(launch, i, v) {
		json_int_t x = json_is_integer(v) ? json_integer_value(v) : -1;
		const struct node_gpu *g;

		if (!json_is_integer(v) || x < 0) {
			r = error_set(err, -EINVAL, "gpus[%zu]: not a GPU index", i);
			goto fail;
		}
		if (x >= (json_int_t)n) {
			r = error_set(err, -EINVAL, "GPU %lld: this node has %s%u GPU%s", (long long)x,
				      n ? "only " : "", n, n == 1 ? "" : "s");
			goto fail;
		}
		if (seen & (1ULL << x)) {
			r = error_set(err, -EINVAL, "GPU %lld: given twice", (long long)x);
			goto fail;
		}
		seen |= 1ULL << x;
		g = &gpus[x];
		if (json_array_append_new(mine, json_pack("{s:I, s:s, s:I, s:I}", "index", (json_int_t)g->index,
							  "file", g->file, "major", (json_int_t)g->major,
							  "minor", (json_int_t)g->minor)) < 0) {
			r = error_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	for (unsigned k = 0; k < n; k++)
		if (json_array_append_new(all, json_pack("{s:I, s:I}", "major", (json_int_t)gpus[k].major,
							 "minor", (json_int_t)gpus[k].minor)) < 0) {
			r = error_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
	*ret_gpus = mine;
	*ret_node = all;
	return 0;
fail:
	json_decref(mine);
	json_decref(all);
	return r;
}
