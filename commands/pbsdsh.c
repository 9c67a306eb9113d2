/* SPDX-License-Identifier: MIT */
/* pbsdsh: run a command on every slot (or node) of the job, as PBS's and Torque's. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "taskclient.h"
#include "version.h"

#define SLOTS_MAX 65536

static const char usage_text[] =
	"usage: pbsdsh [-s] [-u] [-v] [-c COPIES | -n INDEX] COMMAND [ARG...]\n"
	"Runs COMMAND on every slot of the job (each line of $PBS_NODEFILE), at the same time,\n"
	"each inside the job's share of its node, as the job's owner, in the current directory.\n"
	"COMMAND is run directly (no shell), found in the job's PATH on that node.\n"
	"  -n INDEX   only on slot INDEX (0: the first line)\n"
	"  -c COPIES  on the first COPIES slots\n"
	"  -u         once per node, not once per slot\n"
	"  -s         one after the other, not at the same time\n"
	"  -v         say where each task runs and how it ended, on stderr\n"
	"Exits 0 when every task exited 0, else 1 (255 when none could start).\n";

/* Lines of path, one host each, in order. Returns the count or -errno. */
static int nodefile_read(const char *path, char ***ret)
{
	char **hosts = NULL, line[256];
	int n = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && n < SLOTS_MAX) {
		char **more;

		line[strcspn(line, " \t\r\n")] = '\0';
		if (!line[0])
			continue;
		more = realloc(hosts, (size_t)(n + 1) * sizeof(*hosts));
		if (!more || !(more[n] = strdup(line))) {
			hosts = more ? more : hosts;
			break;
		}
		hosts = more;
		n++;
	}
	fclose(f);
	*ret = hosts;
	return n;
}

static long number(const char *s, const char *opt)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || !*s || v < 0 || v >= SLOTS_MAX) {
		fprintf(stderr, "pbsdsh: %s %s: a number 0-%d\n", opt, s, SLOTS_MAX - 1);
		exit(255);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *nodefile = getenv("PBS_NODEFILE"), *sock = getenv(TASKCLIENT_SOCKET_ENV);
	long index = -1, copies = -1;
	bool unique = false, sequential = false, verbose = false;
	struct taskclient *ts = NULL;
	char **hosts = NULL;
	json_t *targv = NULL;
	size_t nt = 0;
	int c, n, status = 0, started = 0;
	sigset_t ss;

	if (version_requested(argc, argv))
		return version_print("pbsdsh");
	/* "+": the command's own options are its own. */
	while ((c = getopt_long(argc, argv, "+n:c:usvo", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': index = number(optarg, "-n"); break;
		case 'c': copies = number(optarg, "-c"); break;
		case 'u': unique = true; break;
		case 's': sequential = true; break;
		case 'v': verbose = true; break;
		case 'o': break;   /* Torque: output to pbsdsh's own, which is what it does */
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 255;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "pbsdsh: no COMMAND\n%s", usage_text);
		return 255;
	}
	if (index >= 0 && copies >= 0) {
		fprintf(stderr, "pbsdsh: -n and -c do not go together\n");
		return 255;
	}
	if (!nodefile || !*nodefile) {
		fprintf(stderr, "pbsdsh: PBS_NODEFILE is not set: run me inside a qpool job\n");
		return 255;
	}
	n = nodefile_read(nodefile, &hosts);
	if (n <= 0) {
		fprintf(stderr, "pbsdsh: %s: %s\n", nodefile, n < 0 ? strerror(-n) : "no nodes in it");
		return 255;
	}
	if (index >= n) {
		fprintf(stderr, "pbsdsh: -n %ld: the job has slots 0-%d\n", index, n - 1);
		status = 255;
		goto done;
	}
	targv = json_array();
	for (int k = optind; targv && k < argc; k++)
		json_array_append_new(targv, json_string(argv[k]));
	ts = calloc((size_t)n, sizeof(*ts));
	if (!targv || !ts) {
		fprintf(stderr, "pbsdsh: out of memory\n");
		status = 255;
		goto done;
	}
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (int k = 0; k < n; k++) {
		struct error err = { "" };
		bool seen = false;

		if ((index >= 0 && k != index) || (copies >= 0 && k >= copies))
			continue;
		for (int p = 0; unique && p < k && !seen; p++)
			seen = strcmp(hosts[p], hosts[k]) == 0;
		if (seen)
			continue;
		if (verbose)
			fprintf(stderr, "pbsdsh: slot %d on %s\n", k, hosts[k]);
		if (taskclient_start(&ts[nt], sock, hosts[k], targv, NULL, NULL, false, &err) < 0) {
			fprintf(stderr, "pbsdsh: %s: %s\n", hosts[k], err.text);
			ts[nt].done = true;
			status = 1;
			nt++;
			continue;
		}
		started++;
		if (sequential)
			(void)taskclient_relay(&ts[nt], 1, -1, "pbsdsh");
		nt++;
	}
	if (!sequential && taskclient_relay(ts, nt, -1, "pbsdsh") < 0) {
		fprintf(stderr, "pbsdsh: cannot wait for the tasks: %m\n");
		status = 255;
	}
	for (size_t k = 0; k < nt; k++) {
		if (verbose && ts[k].fd < 0)
			fprintf(stderr, "pbsdsh: task %zu on %s: exit %d\n", k, ts[k].host, ts[k].status);
		if (ts[k].status != 0 && status == 0)
			status = 1;
		taskclient_close(&ts[k]);
	}
	if (!started)
		status = 255;
done:
	for (int k = 0; k < n; k++)
		free(hosts[k]);
	free(hosts);
	free(ts);
	json_decref(targv);
	return status;
}
