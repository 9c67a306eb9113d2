/* SPDX-License-Identifier: MIT */
/* The node's share of the machine from an hwloc topology: CPUs, cores, NUMA nodes, memory. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "noded.h"
#include "nodesel.h"

int topo_machine_load(hwloc_topology_t *ret)
{
	hwloc_topology_t topo;
	int r;

	if (hwloc_topology_init(&topo) < 0)
		return errno ? -errno : -ENOMEM;
	/* Keep CPUs outside our cpuset, so "--cpus 7" on a machine that has a
	 * CPU 7 we may not use gets the right complaint. */
	if (hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) < 0 ||
	    hwloc_topology_load(topo) < 0) {
		r = errno ? -errno : -EIO;
		hwloc_topology_destroy(topo);
		return r;
	}
	*ret = topo;
	return 0;
}

static void bitmap_from_cpumask(hwloc_bitmap_t b, const struct cpumask *m)
{
	hwloc_bitmap_zero(b);
	for (int c = cpumask_next(m, 0); c >= 0; c = cpumask_next(m, c + 1))
		hwloc_bitmap_set(b, (unsigned)c);
}

static void cpumask_from_bitmap(struct cpumask *m, hwloc_const_bitmap_t b)
{
	int c;

	memset(m, 0, sizeof(*m));
	hwloc_bitmap_foreach_begin(c, b) {
		if (c < CPUMASK_MAX)
			cpumask_set(m, (unsigned)c);
	} hwloc_bitmap_foreach_end();
}

/* Objects of type whose CPUs meet set. */
static unsigned count_intersecting(hwloc_topology_t topo, hwloc_obj_type_t type,
				   hwloc_const_bitmap_t set)
{
	int n = hwloc_get_nbobjs_by_type(topo, type);
	unsigned count = 0;

	for (int i = 0; i < n; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)i);

		if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, set))
			count++;
	}
	return count;
}

/* Fails with the CPUs of want that are outside have, listed: "--cpus 0-5:
 * no CPU 2-5 on this machine (it has 0-1)". */
static int check_subset(hwloc_const_bitmap_t want, hwloc_const_bitmap_t have,
			const char *where, const char *have_what, struct error *err)
{
	hwloc_bitmap_t extra;
	char *list = NULL, *have_list = NULL, *want_list = NULL;
	int r;

	if (hwloc_bitmap_isincluded(want, have))
		return 0;
	extra = hwloc_bitmap_alloc();
	if (!extra)
		return -ENOMEM;
	hwloc_bitmap_andnot(extra, want, have);
	hwloc_bitmap_list_asprintf(&list, extra);
	hwloc_bitmap_list_asprintf(&have_list, have);
	hwloc_bitmap_list_asprintf(&want_list, want);
	r = error_set(err, -EINVAL, "--cpus %s: no CPU %s %s (%s %s)", want_list ? want_list : "?",
		      list ? list : "?", where, have_what, have_list ? have_list : "?");
	free(want_list);
	free(list);
	free(have_list);
	hwloc_bitmap_free(extra);
	return r;
}

int topo_node_describe(hwloc_topology_t topo, const struct cpumask *want,
		       struct node_topo *ret, struct error *err)
{
	hwloc_const_bitmap_t complete = hwloc_topology_get_complete_cpuset(topo);
	hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo);
	hwloc_bitmap_t set, mems, part;
	struct node_topo t = { 0 };
	int n, r;

	set = hwloc_bitmap_alloc();
	mems = hwloc_bitmap_alloc();
	part = hwloc_bitmap_alloc();
	if (!set || !mems || !part) {
		r = -ENOMEM;
		goto done;
	}
	if (want) {
		bitmap_from_cpumask(set, want);
		if (hwloc_bitmap_iszero(set)) {
			r = error_set(err, -EINVAL, "--cpus: the list is empty");
			goto done;
		}
		r = check_subset(set, complete, "on this machine", "it has", err);
		if (r < 0)
			goto done;
		r = check_subset(set, allowed, "in the cpuset qnoded runs in", "it may use", err);
		if (r < 0)
			goto done;
	} else {
		hwloc_bitmap_copy(set, allowed);
		if (hwloc_bitmap_iszero(set)) {
			r = error_set(err, -EINVAL, "no CPU is allowed to this process");
			goto done;
		}
	}

	cpumask_from_bitmap(&t.cpus, set);
	t.pus = (unsigned)hwloc_bitmap_weight(set);
	t.cores = count_intersecting(topo, HWLOC_OBJ_CORE, set);
	if (t.cores == 0)   /* some virtual machines show no cores */
		t.cores = t.pus;
	t.packages = count_intersecting(topo, HWLOC_OBJ_PACKAGE, set);
	if (t.packages == 0)
		t.packages = 1;

	/* A NUMA node's memory is shared by the qnoded instances that hold
	 * its CPUs in proportion to their PUs, so nodes carved out of one
	 * host with --cpus add up to the host, not to a multiple of it. */
	n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	for (int i = 0; i < n; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
		int total, mine;

		if (!o->cpuset || !hwloc_bitmap_intersects(o->cpuset, set))
			continue;
		hwloc_bitmap_and(part, o->cpuset, set);
		total = hwloc_bitmap_weight(o->cpuset);
		mine = hwloc_bitmap_weight(part);
		t.numa++;
		hwloc_bitmap_set(mems, o->os_index);
		if (total > 0)
			t.mem += (uint64_t)((unsigned __int128)o->attr->numanode.local_memory *
					     (unsigned)mine / (unsigned)total);
	}
	if (t.numa == 0) {
		/* No NUMA object (hwloc always makes one, but be safe): node 0. */
		t.numa = 1;
		hwloc_bitmap_set(mems, 0);
	}
	if (hwloc_bitmap_list_snprintf(t.mems, sizeof(t.mems), mems) >= (int)sizeof(t.mems)) {
		r = error_set(err, -ERANGE, "NUMA node list too long");
		goto done;
	}
	*ret = t;
	r = 0;
done:
	hwloc_bitmap_free(part);
	hwloc_bitmap_free(mems);
	hwloc_bitmap_free(set);
	return r;
}

int topo_node_xml(hwloc_topology_t topo, const struct cpumask *cpus, char **ret)
{
	hwloc_bitmap_t set;
	char *buf = NULL;
	int len = 0, r;

	set = hwloc_bitmap_alloc();
	if (!set)
		return -ENOMEM;
	bitmap_from_cpumask(set, cpus);
	/* Only the node's PUs, and only the NUMA nodes that hold some of
	 * them: another qnoded on this host owns the rest, and qpoold places
	 * jobs on what the XML shows. */
	if (hwloc_topology_restrict(topo, set, HWLOC_RESTRICT_FLAG_REMOVE_CPULESS) < 0) {
		r = errno ? -errno : -EINVAL;
		goto done;
	}
	if (hwloc_topology_export_xmlbuffer(topo, &buf, &len, 0) < 0) {
		r = errno ? -errno : -EIO;
		goto done;
	}
	/* A copy the caller frees with free(): hwloc's buffer must go back
	 * through hwloc_free_xmlbuffer with a live topology. */
	*ret = strdup(buf);
	r = *ret ? 0 : -ENOMEM;
	hwloc_free_xmlbuffer(topo, buf);
done:
	hwloc_bitmap_free(set);
	return r;
}

int topo_io_load(hwloc_topology_t *ret)
{
	hwloc_topology_t topo;
	int r;

#ifdef __SANITIZE_ADDRESS__
	/* hwloc's PCI plugin leaves libpciaccess's allocations behind and is
	 * unloaded with the topology; kept loaded, LeakSanitizer can name
	 * them, and the sanitized qnoded and unit runner leave them out
	 * (their __lsan_default_suppressions) */
	dlopen("libpciaccess.so.0", RTLD_LAZY | RTLD_NODELETE);
#endif
	if (hwloc_topology_init(&topo) < 0)
		return errno ? -errno : -ENOMEM;
	/* What a rank's own discovery would find, as MPI libraries ask for it
	 * (Open MPI and MPICH keep the important I/O devices, for the NIC
	 * nearest a rank; GPUs among them, for gpus_find); its allowed CPUs
	 * are the reader's to find out (HWLOC_THISSYSTEM_ALLOWED_RESOURCES),
	 * so none is dropped here. */
	if (hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) < 0 ||
	    hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) < 0 ||
	    hwloc_topology_load(topo) < 0) {
		r = errno ? -errno : -EIO;
		hwloc_topology_destroy(topo);
		return r;
	}
	*ret = topo;
	return 0;
}

int topo_ranks_xml_export(hwloc_topology_t io, const char *path)
{
	char tmp[4200];
	int r = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (hwloc_topology_export_xml(io, tmp, HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1) < 0)
		r = errno ? -errno : -EIO;
	if (r == 0 && (chmod(tmp, 0644) < 0 || rename(tmp, path) < 0))
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

int topo_ranks_xml_write(const char *path)
{
	hwloc_topology_t io;
	int r;

	r = topo_io_load(&io);
	if (r < 0)
		return r;
	r = topo_ranks_xml_export(io, path);
	hwloc_topology_destroy(io);
	return r;
}

/* MemTotal in bytes from a meminfo file; 0 when unreadable. */
static uint64_t meminfo_total(const char *proc_root)
{
	char path[PATH_MAX], line[256];
	unsigned long long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/meminfo", proc_root);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

uint64_t topo_node_mem_reconcile(hwloc_topology_t topo, const char *proc_root, struct node_topo *t)
{
	uint64_t total = meminfo_total(proc_root), numa = 0;
	int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);

	if (!total || !hwloc_topology_is_thissystem(topo))
		return 0;
	for (int i = 0; i < n; i++)
		numa += hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i)->attr->numanode.local_memory;
	if (numa >= total)
		return 0;
	/* The node's share of the NUMA nodes (its PUs in them) is its
	 * share of the machine's memory. */
	t->mem = numa ? (uint64_t)((unsigned __int128)t->mem * total / numa) : total;
	return total;
}

/* One hwloc info value as a feature KEY=VALUE: blanks and what a feature
 * may not hold become '_'; nothing when conf names KEY already. */
static void feature_append(const char *key, const char *value, const char *conf, char *buf, size_t len)
{
	char f[NODESEL_FEATURE_MAX];
	size_t at = strlen(buf), n, klen = strlen(key);
	struct error err;

	if (!value || !*value)
		return;
	for (const char *p = conf; p && *p;) {
		size_t k = strcspn(p, ",");

		if (k > klen && !strncmp(p, key, klen) && p[klen] == '=')
			return;
		p += k + (p[k] == ',');
	}
	n = (size_t)snprintf(f, sizeof(f), "%s=%s", key, value);
	if (n >= sizeof(f))
		return;
	for (size_t i = klen + 1; i < n; i++)
		if (!((f[i] >= 'a' && f[i] <= 'z') || (f[i] >= 'A' && f[i] <= 'Z') || (f[i] >= '0' && f[i] <= '9') ||
		      f[i] == '-' || f[i] == '.' || f[i] == '_'))
			f[i] = '_';
	if (nodesel_feature_check(f, n, &err) < 0 || nodesel_features_has(buf, f, n) || at + n + 2 > len)
		return;
	snprintf(buf + at, len - at, "%s%s", at ? "," : "", f);
}

void topo_features(hwloc_topology_t topo, const char *conf, char *buf, size_t len)
{
	hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);

	snprintf(buf, len, "%s", conf ? conf : "");
	feature_append("arch", hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "Architecture"), conf, buf, len);
	if (pkg)
		feature_append("cpu_vendor", hwloc_obj_get_info_by_name(pkg, "CPUVendor"), conf, buf, len);
}
