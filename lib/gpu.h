/* SPDX-License-Identifier: MIT */
/* A node's GPUs (docs/GPUS.md): what qnoded finds or is told, what
 * node.register carries, what qpoold places and gded fences. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "parse.h"

#define NODE_GPUS_MAX 64        /* per node: a job's share is a 64-bit mask */
#define GPU_MODEL_MAX 32        /* bytes of a GPU model name, with its NUL */

struct node_gpu {
	unsigned index;          /* the node's own numbering, 0.. in list order */
	char file[256];          /* its device file, e.g. /dev/nvidia0 */
	unsigned major, minor;   /* its character device number */
	struct cpumask cpus;     /* the CPUs closest to it; empty: unknown */
	int numa;                /* its NUMA node; -1: unknown */
	char model[GPU_MODEL_MAX];   /* its model, canonical ("a100"); "": unknown */
};

/* A device number the kernel can hold: major 12 bits, minor 20 (dev_t's
 * MAJOR/MINOR in linux/kdev_t.h). */
#define GPU_MAJOR_MAX 4095u
#define GPU_MINOR_MAX 1048575u

/* Checks a GPU model name s[0..len): 1-31 letters, digits, '_', '-' or
 * '.', starting with a letter or digit; into buf (GPU_MODEL_MAX bytes)
 * lower-cased, the form qpool compares ("A100" and "a100" are one model).
 * 0 or -EINVAL with err. */
int gpu_model_canon(const char *s, size_t len, char *buf, struct error *err);

/* A short model from the name a vendor or hwloc gives a GPU ("NVIDIA
 * A100-SXM4-40GB", "GA100 [A100 SXM4 40GB]", "Tesla V100-SXM2-16GB",
 * "GeForce RTX 3090", "Instinct MI250X"): the first word, inside brackets
 * when there are some, that holds a letter and a digit, lower-cased
 * ("a100", "v100", "mi250x"); a word of digits alone joins the word
 * before it ("rtx3090"). Into buf (GPU_MODEL_MAX bytes); false (buf "")
 * when no word fits. */
bool gpu_model_from_name(const char *name, char *buf);

/* A node's GPUs as the node list shows them (an array of gpu_entry_json
 * objects, a held one with "job"; NULL: none) in Slurm's GRES words:
 * "gpu:a100:2,gpu:v100:1", models in order of first appearance, "gpu:N"
 * for those of no model; used: the held ones only (each model still
 * listed, "gpu:a100:0"). "" for no GPU; cut short at len. */
void gpu_gres_format(const json_t *gpus, bool used, char *buf, size_t len);

/* The distinct models of such an array, comma-separated in order of
 * first appearance ("a100,v100"); "" when none has one. */
void gpu_models_format(const json_t *gpus, char *buf, size_t len);

/* node.register's form of gpus[0..n): an array of { index, file, major,
 * minor, cpus (list, "" unknown), numa (-1 unknown) } (docs/GPUS.md).
 * NULL when out of memory. */
json_t *gpu_list_json(const struct node_gpu *gpus, unsigned n);

/* One entry of that array (for the node object, which adds "job"). */
json_t *gpu_entry_json(const struct node_gpu *g);

/* Reads node.register's gpus (NULL: none) strictly: an array of at most
 * NODE_GPUS_MAX objects, entry i with index i, an absolute file path
 * shorter than node_gpu.file, major and minor in range, a cpus list
 * within node_cpus (when not NULL), numa -1..1023 and model (absent or
 * "": unknown) a model name as gpu_model_canon takes it. Returns 0 with
 * *ret (malloc'd, NULL when none) and *ret_n; -EINVAL with err naming
 * the entry and the field; -ENOMEM. */
int gpu_list_parse(const json_t *arr, const struct cpumask *node_cpus, struct node_gpu **ret,
		   unsigned *ret_n, struct error *err);

/* The launch spec's gpus: { index, file, major, minor } of the GPUs whose
 * indices are in launch (job.launch's gpus array), and gpus_node: { major,
 * minor } of all n. -EINVAL with err naming an index the node does not
 * have (or a duplicate, or not an array of integers); 0 with both arrays
 * (*ret_gpus NULL when launch is NULL: the job has none). */
int gpu_spec_json(const struct node_gpu *gpus, unsigned n, const json_t *launch, json_t **ret_gpus,
		  json_t **ret_node, struct error *err);
