/* SPDX-License-Identifier: MIT */
/* What hwloc shows a rank: the PUs of the topology it loads (disallowed
 * ones dropped, as every hwloc user gets by default), the CPUs the kernel
 * lets it use, whether the topology is this machine (binding works), and
 * which process made it (hwloc's ProcessName: the rank itself when it
 * discovered the topology, the exporter when it read an XML file). One
 * line; exit 1 when hwloc cannot load. */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	hwloc_topology_t t;
	char *pus = NULL, host[64] = "", allowed[256] = "-", line[512];
	const char *from, *xml = getenv("HWLOC_XMLFILE"), *rank = getenv("QPOOL_RANK");
	FILE *f;

	if (hwloc_topology_init(&t) < 0 || hwloc_topology_load(t) < 0) {
		perror("hwloc");
		return 1;
	}
	hwloc_bitmap_list_asprintf(&pus, hwloc_topology_get_topology_cpuset(t));
	from = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t), "ProcessName");
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Cpus_allowed_list: %255s", allowed) == 1)
			break;
	if (f)
		fclose(f);
	gethostname(host, sizeof(host));
	printf("rank=%s host=%s xml=%s from=%s thissystem=%d pus=%s allowed=%s\n", rank ? rank : "-",
	       host, xml ? xml : "-", from ? from : "-", hwloc_topology_is_thissystem(t), pus ? pus : "?",
	       allowed);
	free(pus);
	hwloc_topology_destroy(t);
	return 0;
}
