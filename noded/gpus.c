/* SPDX-License-Identifier: MIT */
/* The node's GPUs: [node] gpus (device files, globs, models) or hwloc's GPU OS devices, with their locality and model. */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "noded.h"

/* The OS device named name in topo, or NULL. */
static hwloc_obj_t osdev_by_name(hwloc_topology_t topo, const char *name)
{
	for (hwloc_obj_t o = hwloc_get_next_osdev(topo, NULL); o; o = hwloc_get_next_osdev(topo, o))
		if (o->name && strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/* The model hwloc tells of OS device o: its GPUModel info (NVML, CUDA,
 * RSMI backends), else the name of the PCI device it sits on (pci.ids:
 * "GA100 [A100 SXM4 40GB]"), shortened by gpu_model_from_name. */
static void model_from_hwloc(hwloc_obj_t o, char *buf)
{
	const char *m = hwloc_obj_get_info_by_name(o, "GPUModel");
	hwloc_obj_t pci = o->parent;

	if (m && gpu_model_from_name(m, buf))
		return;
	while (pci && pci->type != HWLOC_OBJ_PCI_DEVICE)
		pci = pci->parent;
	if (pci && pci->name)
		(void)gpu_model_from_name(pci->name, buf);
}

/* g's cpus and numa from the OS device of its file's basename: its
 * closest non-I/O ancestor's CPUs (those of the node) and NUMA node (when
 * it has exactly one). Unknown (empty, -1) without one. Its model too,
 * when the config gave none. */
static void locality_set(struct node_gpu *g, hwloc_topology_t topo, const struct cpumask *node_cpus)
{
	const char *base = strrchr(g->file, '/') ? strrchr(g->file, '/') + 1 : g->file;
	hwloc_obj_t o = topo ? osdev_by_name(topo, base) : NULL;
	hwloc_obj_t a = o ? hwloc_get_non_io_ancestor_obj(topo, o) : NULL;
	int c;

	memset(&g->cpus, 0, sizeof(g->cpus));
	g->numa = -1;
	if (o && !g->model[0])
		model_from_hwloc(o, g->model);
	if (!a)
		return;
	if (a->cpuset)
		hwloc_bitmap_foreach_begin(c, a->cpuset) {
			if (c < CPUMASK_MAX && cpumask_test(node_cpus, (unsigned)c))
				cpumask_set(&g->cpus, (unsigned)c);
		} hwloc_bitmap_foreach_end();
	if (a->nodeset && hwloc_bitmap_weight(a->nodeset) == 1)
		g->numa = hwloc_bitmap_first(a->nodeset);
}

/* Adds path as the next GPU of model (""  unknown): a character device,
 * not one already listed. */
static int gpu_add(struct node_gpu *gpus, unsigned *n, const char *path, const char *model, bool must,
		   struct error *err)
{
	struct node_gpu *g;
	struct stat st;

	if (stat(path, &st) < 0) {
		if (!must)
			return 0;
		return error_set(err, -errno, "gpus: %s: %m", path);
	}
	if (!S_ISCHR(st.st_mode)) {
		if (!must)
			return 0;
		return error_set(err, -EINVAL, "gpus: %s is not a character device", path);
	}
	for (unsigned i = 0; i < *n; i++)
		if (gpus[i].major == major(st.st_rdev) && gpus[i].minor == minor(st.st_rdev))
			return error_set(err, -EINVAL, "gpus: %s is the same device as %s", path, gpus[i].file);
	if (*n == NODE_GPUS_MAX)
		return error_set(err, -E2BIG, "gpus: more than %d GPUs (%s is one too many)", NODE_GPUS_MAX, path);
	if (strlen(path) >= sizeof(gpus->file))
		return error_set(err, -ENAMETOOLONG, "gpus: %s: path too long", path);
	g = &gpus[*n];
	memset(g, 0, sizeof(*g));
	g->index = *n;
	memcpy(g->file, path, strlen(path) + 1);
	g->major = major(st.st_rdev);
	g->minor = minor(st.st_rdev);
	g->numa = -1;
	snprintf(g->model, sizeof(g->model), "%s", model);
	(*n)++;
	return 0;
}

/* One path or glob of the list, of model. */
static int gpus_path(const char *word, const char *model, struct node_gpu *gpus, unsigned *n, struct error *err)
{
	glob_t gl;
	int r;

	if (!strpbrk(word, "*?["))
		return gpu_add(gpus, n, word, model, true, err);
	r = glob(word, GLOB_ERR, NULL, &gl);
	if (r == GLOB_NOMATCH)
		return error_set(err, -ENOENT, "gpus: %s matches no file", word);
	if (r != 0)
		return error_set(err, -EIO, "gpus: %s: cannot expand it", word);
	for (size_t i = 0; i < gl.gl_pathc && r == 0; i++)
		r = gpu_add(gpus, n, gl.gl_pathv[i], model, true, err);
	globfree(&gl);
	return r;
}

/* The words of list (blank-separated), each [MODEL:]PATH[,PATH...],
 * expanded by glob(3), in order (config.c checked their shape). */
static int gpus_listed(const char *list, struct node_gpu *gpus, unsigned *n, struct error *err)
{
	char word[PATH_MAX], model[GPU_MODEL_MAX];
	int r = 0;

	for (const char *p = list; *p && r == 0; ) {
		const char *colon;
		char *path, *save = NULL;
		size_t len;

		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (len == 0)
			break;
		if (len >= sizeof(word))
			return error_set(err, -ENAMETOOLONG, "gpus: a path is too long");
		memcpy(word, p, len);
		word[len] = '\0';
		p += len;
		model[0] = '\0';
		path = word;
		colon = strchr(word, ':');
		if (colon && word[0] != '/') {
			r = gpu_model_canon(word, (size_t)(colon - word), model, err);
			if (r < 0)
				return r;
			path = word + (colon - word) + 1;
		}
		for (char *one = strtok_r(path, ",", &save); one && r == 0; one = strtok_r(NULL, ",", &save))
			r = gpus_path(one, model, gpus, n, err);
	}
	return r;
}

/* hwloc's GPU OS devices that exist as character devices under dev_root. */
static int gpus_auto(hwloc_topology_t topo, const char *dev_root, struct node_gpu *gpus, unsigned *n,
		     struct error *err)
{
	char path[PATH_MAX];
	int r = 0;

	if (!topo)
		return 0;
	for (hwloc_obj_t o = hwloc_get_next_osdev(topo, NULL); o && r == 0; o = hwloc_get_next_osdev(topo, o)) {
		const char *sub;

		if (!o->name)
			continue;
		if (strncmp(o->name, "nvidia", 6) == 0 && o->name[6] &&
		    strspn(o->name + 6, "0123456789") == strlen(o->name + 6))
			sub = "";
		else if (strncmp(o->name, "renderD", 7) == 0 && o->name[7] &&
			 strspn(o->name + 7, "0123456789") == strlen(o->name + 7))
			sub = "dri/";
		else
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s%s", dev_root, sub, o->name) >= sizeof(path))
			continue;
		r = gpu_add(gpus, n, path, "", false, err);
	}
	return r;
}

int gpus_find(const char *conf, const char *dev_root, hwloc_topology_t topo, const struct cpumask *node_cpus,
	      struct node_gpu **ret, unsigned *ret_n, struct error *err)
{
	struct node_gpu *gpus;
	unsigned n = 0;
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (strcmp(conf, "none") == 0)
		return 0;
	gpus = calloc(NODE_GPUS_MAX, sizeof(*gpus));
	if (!gpus)
		return error_set(err, -ENOMEM, "out of memory");
	if (strcmp(conf, "auto") == 0)
		r = gpus_auto(topo, dev_root, gpus, &n, err);
	else
		r = gpus_listed(conf, gpus, &n, err);
	if (r < 0 || n == 0) {
		free(gpus);
		return r < 0 ? r : 0;
	}
	for (unsigned i = 0; i < n; i++)
		locality_set(&gpus[i], topo, node_cpus);
	*ret = gpus;
	*ret_n = n;
	return 0;
}
