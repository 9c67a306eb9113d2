/* SPDX-License-Identifier: MIT */
/* qexec: inside a job, starts N ranks on the job's nodes under one
 * qpool-pmi per node (this node's directly, the others' through qpool-rsh). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exe.h"
#include "version.h"

#define MAX_NODES 256

static const char usage_text[] =
	"usage: qexec [-n N] [--timeout SEC] [--] COMMAND [ARG...]\n"
	"Inside a job: runs N ranks of COMMAND (default: one per MPI slot of $PBS_NODEFILE) on the\n"
	"job's nodes, slot order, with PMI-1/2 and PMIx served by one qpool-pmi per node.\n"
	"Exits with the first failing rank's status.\n";

struct node {
	char name[64];
	int slots;
	int ranks;
	pid_t pid;
};

/* Nodes in first-seen order with their slot counts (one line per slot). */
static int read_nodefile(const char *path, struct node *nodes, int *ret_n)
{
	FILE *f = fopen(path, "re");
	char line[300];
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int i;

		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0])
			continue;
		for (i = 0; i < n && strcmp(nodes[i].name, line) != 0; i++)
			;
		if (i == n) {
			if (n == MAX_NODES || strlen(line) >= sizeof(nodes[0].name)) {
				fclose(f);
				return -E2BIG;
			}
			snprintf(nodes[n++].name, sizeof(nodes[0].name), "%s", line);
		}
		nodes[i].slots++;
	}
	fclose(f);
	*ret_n = n;
	return 0;
}

/* A TCP socket listening on every address of this node, any port; *addr
 * "HOST:PORT" with the node's name, which the other nodes resolve (the
 * commands are static: no resolver here). The servers' secret, not the
 * address, keeps strangers out. */
static int bind_root(const char *host, int *ret_fd, char *addr, size_t len)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t slen = sizeof(sin);
	int fd, e;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &slen) < 0) {
		e = -errno;
		if (fd >= 0)
			close(fd);
		return e;
	}
	snprintf(addr, len, "%s:%d", host, ntohs(sin.sin_port));
	*ret_fd = fd;
	return 0;
}

/* appends s to buf, shell-quoted ('…', ' as '\'') */
static int quote(char **buf, size_t *len, const char *s)
{
	size_t need = *len + 4 * strlen(s) + 4;
	char *b = realloc(*buf, need), *p;

	if (!b)
		return -ENOMEM;
	*buf = b;
	p = b + *len;
	if (*len)
		*p++ = ' ';
	*p++ = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *s;
		}
	}
	*p++ = '\'';
	*p = '\0';
	*len = (size_t)(p - b);
	return 0;
}

/* The command a node runs: qpool-pmi with this job's layout. */
static char **pmi_argv(const char *pmi, int node, const char *peers, const char *ranks,
		       const char *names, const char *kvs, const char *timeout, const char *listen_fd,
		       int token_stdin, char **cmd)
{
	static char num[16];
	size_t n = 0, ncmd = 0;
	char **v;

	while (cmd[ncmd])
		ncmd++;
	v = calloc(ncmd + 20, sizeof(*v));
	if (!v)
		return NULL;
	snprintf(num, sizeof(num), "%d", node);
	v[n++] = (char *)pmi;
	v[n++] = "--node";
	v[n++] = num;
	v[n++] = "--peers";
	v[n++] = (char *)peers;
	v[n++] = "--ranks";
	v[n++] = (char *)ranks;
	v[n++] = "--names";
	v[n++] = (char *)names;
	v[n++] = "--kvsname";
	v[n++] = (char *)kvs;
	v[n++] = "--timeout";
	v[n++] = (char *)timeout;
	if (listen_fd) {
		v[n++] = "--listen-fd";
		v[n++] = (char *)listen_fd;
	}
	if (token_stdin)
		v[n++] = "--token-stdin";
	v[n++] = "--";
	for (size_t i = 0; i < ncmd; i++)
		v[n++] = cmd[i];
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct node nodes[MAX_NODES];
	char pmi[PATH_MAX], rsh[PATH_MAX], kvs[64], token[33], peers[20000], ranks[4096], names[20000];
	char addr[300] = "", *end, *timeout = "60";
	const char *nodefile = getenv("PBS_NODEFILE"), *jobid = getenv("PBS_JOBID");
	long want = 0;
	int nnodes = 0, slots = 0, used = 0, c, status = 0, rc, lfd = -1;
	unsigned char rnd[16];
	sigset_t ss;

	if (version_requested(argc, argv))
		return version_print("qexec");
	while ((c = getopt_long(argc, argv, "+n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			want = strtol(optarg, &end, 10);
			if (*end || want < 1 || want > 1048576) {
				fprintf(stderr, "qexec: -n %s: not a number of ranks\n", optarg);
				return 2;
			}
			break;
		case 't':
			strtol(optarg, &end, 10);
			if (*end || !*optarg) {
				fprintf(stderr, "qexec: --timeout %s: not seconds\n", optarg);
				return 2;
			}
			timeout = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (!nodefile || !jobid) {
		fprintf(stderr, "qexec: not inside a job (no PBS_NODEFILE); qexec outside a job is not there yet\n");
		return 2;
	}
	rc = read_nodefile(nodefile, nodes, &nnodes);
	if (rc < 0 || nnodes == 0) {
		fprintf(stderr, "qexec: %s: %s\n", nodefile, rc < 0 ? strerror(-rc) : "no node");
		return 1;
	}
	for (int i = 0; i < nnodes; i++)
		slots += nodes[i].slots;
	if (!want)
		want = slots;
	if (want > slots) {
		fprintf(stderr, "qexec: -n %ld: the job has %d MPI slot%s\n", want, slots, slots == 1 ? "" : "s");
		return 1;
	}
	/* slot order: fill node after node; nodes left without a rank drop out */
	for (int i = 0; i < nnodes; i++) {
		nodes[i].ranks = want - used < nodes[i].slots ? (int)(want - used) : nodes[i].slots;
		used += nodes[i].ranks;
	}
	while (nnodes > 0 && nodes[nnodes - 1].ranks == 0)
		nnodes--;
	if (exe_sibling("qpool-pmi", pmi, sizeof(pmi)) < 0 || exe_sibling("qpool-rsh", rsh, sizeof(rsh)) < 0) {
		fprintf(stderr, "qexec: cannot find qpool-pmi and qpool-rsh beside qexec\n");
		return 1;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		fprintf(stderr, "qexec: no random token: %m\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(token + 2 * i, 3, "%02x", rnd[i]);
	snprintf(kvs, sizeof(kvs), "qexec.%.30s.%d", jobid, (int)getpid());
	for (char *p = kvs; *p; p++)
		if (strchr(" ;=,", *p))
			*p = '_';
	ranks[0] = names[0] = '\0';
	for (int i = 0; i < nnodes; i++) {
		size_t r = strlen(ranks), m = strlen(names);

		snprintf(ranks + r, sizeof(ranks) - r, "%s%d", i ? "," : "", nodes[i].ranks);
		snprintf(names + m, sizeof(names) - m, "%s%s", i ? "," : "", nodes[i].name);
	}
	/* Signals go to the servers (qpool-rsh forwards them as task.signal). */
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* Node 0 is this node (the job's primary runs the script, and qexec):
	 * its server is qexec's child, and says the port it listens at. */
	snprintf(peers, sizeof(peers), "%s:0", nodes[0].name);
	for (int i = 1; i < nnodes; i++) {
		size_t l = strlen(peers);

		snprintf(peers + l, sizeof(peers) - l, ",%s:0", nodes[i].name);
	}
	/* qexec binds node 0's socket itself, on its own node's address, and
	 * hands it to node 0's server: the other nodes are told the port at
	 * once, without waiting for that server (and libpmix) to start. */
	if (nnodes > 1) {
		rc = bind_root(nodes[0].name, &lfd, addr, sizeof(addr));
		if (rc < 0) {
			fprintf(stderr, "qexec: cannot listen on %s: %s\n", nodes[0].name, strerror(-rc));
			return 1;
		}
	}
	nodes[0].pid = fork();
	if (nodes[0].pid == 0) {
		char **v;

		if (lfd == 3)
			fcntl(3, F_SETFD, 0);   /* kept across exec */
		else if (lfd >= 0)
			dup2(lfd, 3);           /* a copy without close-on-exec */
		v = pmi_argv(pmi, 0, peers, ranks, names, kvs, timeout, lfd >= 0 ? "3" : NULL, 0,
			     argv + optind);
		setenv("QPOOL_PMI_TOKEN", token, 1);
		sigprocmask(SIG_UNBLOCK, &ss, NULL);
		if (v)
			execv(pmi, v);
		fprintf(stderr, "qexec: %s: %m\n", pmi);
		_exit(127);
	}
	if (lfd >= 0)
		close(lfd);
	for (int i = 1; i < nnodes && !status; i++) {
		char rpeers[20400], *cmdline = NULL, **v;
		size_t len = 0;
		int tp[2];

		snprintf(rpeers, sizeof(rpeers), "%s%s", addr, strchr(peers, ','));
		v = pmi_argv(pmi, i, rpeers, ranks, names, kvs, timeout, NULL, 1, argv + optind);
		for (size_t k = 0; v && v[k]; k++)
			if (quote(&cmdline, &len, v[k]) < 0)
				break;
		free(v);
		if (!cmdline || pipe2(tp, O_CLOEXEC) < 0) {
			fprintf(stderr, "qexec: out of memory\n");
			status = 1;
			break;
		}
		nodes[i].pid = fork();
		if (nodes[i].pid == 0) {
			dup2(tp[0], 0);
			sigprocmask(SIG_UNBLOCK, &ss, NULL);
			/* qpool-rsh joins its arguments for the job's shell: one, quoted */
			execl(rsh, "qpool-rsh", nodes[i].name, "exec", cmdline, (char *)NULL);
			fprintf(stderr, "qexec: %s: %m\n", rsh);
			_exit(127);
		}
		close(tp[0]);
		/* the secret travels on the task's stdin, then EOF */
		if (dprintf(tp[1], "%s\n", token) < 0)
			status = 1;
		close(tp[1]);
		free(cmdline);
	}
	/* The servers end the job on every node at the first failure; qexec
	 * forwards signals and takes the first non-zero status. */
	for (int left = nnodes; left > 0;) {
		siginfo_t si;
		struct timespec ts = { 0, 100000000 };
		int st;
		pid_t pid;

		if (sigtimedwait(&ss, &si, &ts) > 0) {
			for (int i = 0; i < nnodes; i++)
				if (nodes[i].pid > 0)
					kill(nodes[i].pid, si.si_signo);
		}
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

			for (int i = 0; i < nnodes; i++) {
				if (nodes[i].pid != pid)
					continue;
				nodes[i].pid = 0;
				left--;
				if (code && !status)
					status = code;
			}
		}
		if (pid < 0 && errno == ECHILD)
			break;
	}
	return status;
}
