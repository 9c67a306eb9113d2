/* SPDX-License-Identifier: MIT */
/* The MPI test's and bench's hello world: each rank prints where it runs, as whom, on
 * which CPUs and in which cgroup, and when it was past
 * MPI_Init; with a directory argument it also leaves
 * its pid there and waits (for qdel). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void line_of(const char *path, const char *key, char *buf, size_t len)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, key)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, len, "%s", line);
			break;
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	char host[256], cpus[256], cg[4096], *v;
	struct timespec ts;
	int rank, size;

	MPI_Init(&argc, &argv);
	/* Past MPI_Init: the start-up benchmark's end point. */
	clock_gettime(CLOCK_REALTIME, &ts);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	gethostname(host, sizeof(host));
	line_of("/proc/self/status", "Cpus_allowed_list:", cpus, sizeof(cpus));
	v = strchr(cpus, ':');
	v = v ? v + 1 + strspn(v + 1, " \t") : cpus;
	/* v1: the memory hierarchy's line; v2: the only one, 0::PATH. */
	line_of("/proc/self/cgroup", access("/sys/fs/cgroup/memory", F_OK) == 0 ? ":memory:" : "0::", cg,
		sizeof(cg));
	printf("rank=%d size=%d host=%s uid=%d cpus=%s cg=%s t_init=%lld.%06ld\n", rank, size, host,
	       (int)getuid(), v, strrchr(cg, ':') ? strrchr(cg, ':') + 1 : cg, (long long)ts.tv_sec,
	       ts.tv_nsec / 1000);
	fflush(stdout);
	if (argc > 1) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/rank.%d", argv[1], rank);
		f = fopen(path, "w");
		if (f) {
			fprintf(f, "%d %s\n", (int)getpid(), host);
			fclose(f);
		}
		sleep(600);
	}
	MPI_Finalize();
	return 0;
}
