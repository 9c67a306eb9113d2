/* SPDX-License-Identifier: MIT */
/* qpool-pmi: parses its options and runs one node's PMI server of a job. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmid.h"
#include "version.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: qpool-pmi --node I --peers ADDR:PORT[,ADDR:PORT...] --ranks N[,N...]\n"
		"                 [--names NAME,...] [--timeout SEC] [--kvsname NAME] [--no-pmix]\n"
		"                 [--mpi all|pmi|none] [--label] [--stdin] [--topology node|discover]\n"
		"                 [--pmi-port] [--port-file FILE] [--token-stdin] [--listen-fd FD]\n"
		"                 [--root-netns ID]\n"
		"                 -- CMD [ARG...]\n");
}

/* Splits a comma list into a NULL-terminated array; *ret_n entries. */
static char **split(const char *s, int *ret_n)
{
	char *copy = strdup(s), *save = NULL;
	char **v = NULL;
	int n = 0;

	if (!copy)
		return NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char **nv = realloc(v, sizeof(*v) * (size_t)(n + 2));

		if (!nv || !(t = strdup(t)))
			exit(1);
		v = nv;
		v[n++] = t;
		v[n] = NULL;
	}
	free(copy);
	*ret_n = n;
	return v;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* The servers' secret as one line on stdin (qexec sends it through the
 * task path's stdin: never on a command line). Read byte by byte so that
 * nothing after the line is taken from the ranks' (unused) stdin. */
static int read_token(void)
{
	char tok[256];
	size_t n = 0;

	while (n < sizeof(tok) - 1) {
		ssize_t r = read(0, tok + n, 1);

		if (r <= 0 || tok[n] == '\n')
			break;
		n++;
	}
	tok[n] = '\0';
	if (n == 0)
		return -EINVAL;
	return setenv("QPOOL_PMI_TOKEN", tok, 1) < 0 ? -errno : 0;
}

#ifdef __SANITIZE_ADDRESS__
/* A sanitized build (make SANITIZE=address): what libpmix itself keeps
 * until exit (PMIx_server_init, value loads) is not ours to report. Built
 * in, since the server runs inside jobs, whose environment carries no
 * LSAN_OPTIONS of the test that started them. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpmix.so\n";
}

/* Nor is the count of what was suppressed: printed at exit onto the
 * task's stderr, it would be output the job never wrote. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}
#endif

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "node", required_argument, NULL, 'i' },
		{ "peers", required_argument, NULL, 'p' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "names", required_argument, NULL, 'N' },
		{ "timeout", required_argument, NULL, 't' },
		{ "kvsname", required_argument, NULL, 'k' },
		{ "no-pmix", no_argument, NULL, 'X' },
		{ "pmi-port", no_argument, NULL, 'P' },
		{ "port-file", required_argument, NULL, 'F' },
		{ "token-stdin", no_argument, NULL, 'T' },
		{ "listen-fd", required_argument, NULL, 'L' },
		{ "root-netns", required_argument, NULL, 'R' },
		{ "mpi", required_argument, NULL, 'M' },
		{ "label", no_argument, NULL, 'l' },
		{ "stdin", no_argument, NULL, 'I' },
		{ "topology", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pmid_args a = { .node = -1, .timeout = 60, .kvsname = "qpool", .pmix = 1, .pmi = 1, .listen_fd = -1,
				.hwloc_xml = 1 };
	char **rank_s = NULL, *end;
	int nranks = 0, nnames = 0, c, status, token_stdin = 0;

	if (version_requested(argc, argv))
		return version_print("qpool-pmi");
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			a.node = (int)strtol(optarg, &end, 10);
			if (*end || a.node < 0) {
				fprintf(stderr, "qpool-pmi: --node %s: not a node index\n", optarg);
				{ status = 2; goto out; }
			}
			break;
		case 'p':
			a.peers = split(optarg, &a.nnodes);
			break;
		case 'r':
			rank_s = split(optarg, &nranks);
			break;
		case 'N':
			a.names = split(optarg, &nnames);
			break;
		case 't':
			a.timeout = (int)strtol(optarg, &end, 10);
			if (*end || a.timeout < 1 || a.timeout > 86400) {
				fprintf(stderr, "qpool-pmi: --timeout %s: not 1 to 86400 seconds\n", optarg);
				{ status = 2; goto out; }
			}
			break;
		case 'k':
			a.kvsname = optarg;
			break;
		case 'X':
			a.pmix = 0;
			break;
		case 'M':
			if (strcmp(optarg, "all") == 0) {
				a.pmi = a.pmix = 1;
			} else if (strcmp(optarg, "pmi") == 0) {
				a.pmi = 1;
				a.pmix = 0;
			} else if (strcmp(optarg, "none") == 0) {
				a.pmi = a.pmix = 0;
			} else {
				fprintf(stderr, "qpool-pmi: --mpi %s: not all, pmi or none\n", optarg);
				status = 2;
				goto out;
			}
			break;
		case 'l':
			a.label = 1;
			break;
		case 'I':
			a.stdin_rank0 = 1;
			break;
		case 'o':
			if (strcmp(optarg, "node") == 0) {
				a.hwloc_xml = 1;
			} else if (strcmp(optarg, "discover") == 0) {
				a.hwloc_xml = 0;
			} else {
				fprintf(stderr, "qpool-pmi: --topology %s: not node or discover\n", optarg);
				status = 2;
				goto out;
			}
			break;
		case 'P':
			a.pmi_port_only = 1;
			break;
		case 'F':
			a.port_file = optarg;
			break;
		case 'T':
			token_stdin = 1;
			break;
		case 'L':
			a.listen_fd = (int)strtol(optarg, &end, 10);
			if (*end || a.listen_fd < 3) {
				fprintf(stderr, "qpool-pmi: --listen-fd %s: not a descriptor above 2\n", optarg);
				{ status = 2; goto out; }
			}
			break;
		case 'R':
			a.root_netns = optarg;
			break;
		case 'h':
			usage(stdout);
			status = 0;
			goto out;
		default:
			usage(stderr);
			{ status = 2; goto out; }
		}
	}
	if (optind >= argc || !a.peers || !rank_s || a.node < 0) {
		fprintf(stderr, "qpool-pmi: --node, --peers, --ranks and a command are needed\n");
		{ status = 2; goto out; }
	}
	if (nranks != a.nnodes || a.node >= a.nnodes || (a.names && nnames != a.nnodes)) {
		fprintf(stderr, "qpool-pmi: --peers, --ranks (and --names) must name the same %d nodes, "
			"--node one of them\n", a.nnodes);
		{ status = 2; goto out; }
	}
	if (strlen(a.kvsname) >= 64 || strpbrk(a.kvsname, " ;=,\n")) {
		fprintf(stderr, "qpool-pmi: --kvsname %s: at most 63 characters, no space ; = ,\n", a.kvsname);
		{ status = 2; goto out; }
	}
	if (!a.names)
		a.names = a.peers;   /* one host per node: its address names it */
	a.ranks = calloc((size_t)nranks, sizeof(int));
	if (!a.ranks)
		{ status = 1; goto out; }
	for (int i = 0; i < nranks; i++) {
		long v = strtol(rank_s[i], &end, 10);

		if (*end || v < 1 || v > 1024) {
			fprintf(stderr, "qpool-pmi: --ranks %s: not 1 to 1024\n", rank_s[i]);
			{ status = 2; goto out; }
		}
		a.ranks[i] = (int)v;
	}
	if (token_stdin && read_token() < 0) {
		fprintf(stderr, "qpool-pmi: --token-stdin: no token line on stdin\n");
		status = 2;
		goto out;
	}
	a.argv = argv + optind;
	status = pmid_run(&a);
out:
	strv_free(rank_s);
	strv_free(a.names == a.peers ? NULL : a.names);
	strv_free(a.peers);
	free(a.ranks);
	return status;
}
