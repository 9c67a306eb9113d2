/* SPDX-License-Identifier: MIT */
/* qexec's four-host test: each rank prints where it runs, as whom, its
 * CPUs and its cgroup's CPUs, and the sum of rank+1 over every rank
 * (an allreduce). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void line_of(const char *path, const char *key, char *buf, size_t len)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!key[0] || strstr(line, key)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, len, "%s", line);
			break;
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	char host[256], cpus[256], cg[4096], path[4200], cgcpus[256], *v, *c;
	int rank, size, mine, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	mine = rank + 1;
	MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	gethostname(host, sizeof(host));
	line_of("/proc/self/status", "Cpus_allowed_list:", cpus, sizeof(cpus));
	v = strchr(cpus, ':');
	v = v ? v + 1 + strspn(v + 1, " \t") : cpus;
	if (access("/sys/fs/cgroup/memory", F_OK) == 0) {
		/* v1: the memory hierarchy names the group, cpuset's its CPUs */
		char cs[4096];

		line_of("/proc/self/cgroup", ":memory:", cg, sizeof(cg));
		line_of("/proc/self/cgroup", ":cpuset:", cs, sizeof(cs));
		snprintf(path, sizeof(path), "/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus",
			 strrchr(cs, ':') ? strrchr(cs, ':') + 1 : cs);
	} else {
		line_of("/proc/self/cgroup", "0::", cg, sizeof(cg));
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpuset.cpus.effective",
			 strrchr(cg, ':') ? strrchr(cg, ':') + 1 : cg);
	}
	c = strrchr(cg, ':') ? strrchr(cg, ':') + 1 : cg;
	line_of(path, "", cgcpus, sizeof(cgcpus));
	printf("rank=%d size=%d sum=%d host=%s uid=%d cpus=%s cgcpus=%s cg=%s\n", rank, size, sum, host,
	       (int)getuid(), v, cgcpus, c);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
