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

#include "client.h"
#include "cmd.h"
#include "exe.h"
#include "jobid.h"
#include "netns.h"
#include "timeutil.h"
#include "transport.h"
#include "version.h"
#include "watch.h"
#include "wire.h"

#define MAX_NODES 256
/* After the first server fails, how long the others have to end on their
 * own (at most the fence timeout) before qexec ends them, unless node 0's
 * ends first. */
#define QEXEC_END_GRACE_MS 5000

static const char usage_text[] =
	"usage: qexec [-n N] [--ppn M] [--mpi=all|pmi|none] [-l|--label] [--stdin] [--timeout SEC]\n"
	"             [--hosts NAME:SLOTS[,...]]\n"
	"             [--topology=node|discover] [-N NAME] [-q QUEUE] [-l RESOURCE=VALUE[,...]]...\n"
	"             [--] COMMAND [ARG...]\n"
	"Inside a job: runs N ranks of COMMAND (default: one per MPI slot of $PBS_NODEFILE) on the\n"
	"job's nodes, slot order, with PMI-1/2 and PMIx served by one qpool-pmi per node;\n"
	"--stdin: rank 0 reads qexec's input (the others, and all without it, /dev/null).\n"
	"Outside a job: submits a job for N ranks, waits for it, runs them in it and relays\n"
	"their output. Exits with the first failing rank's status.\n";

#define MAX_RES 32
/* How long qexec outside a job keeps asking a qpoold it cannot reach. */
#define AWAY_MAX_SEC 120

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

/* --hosts NAME:SLOTS,...: the nodes and their slots, in place of the
 * job's node file (srun places a step on one node of the job so). */
static int read_hosts(const char *list, struct node *nodes, int *ret_n)
{
	int n = 0;

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ","), name = strcspn(p, ":");
		char *end;
		long slots;

		if (name >= len || name == 0 || name >= sizeof(nodes[0].name) || n == MAX_NODES)
			return -EINVAL;
		slots = strtol(p + name + 1, &end, 10);
		if (end != p + len || slots < 1 || slots > 65536)
			return -EINVAL;
		memcpy(nodes[n].name, p, name);
		nodes[n].name[name] = '\0';
		nodes[n++].slots = (int)slots;
		p += len + (p[len] == ',');
	}
	*ret_n = n;
	return n ? 0 : -EINVAL;
}

/* A node's IPv4 address as the pool's hosts name it: numeric, or from
 * /etc/hosts (lib/transport: qexec is static, without NSS; the pool's
 * hosts agree on names through that file, as for qpoold's address). */
static int node_addr(const char *name, struct in_addr *ret)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct error err;
	char text[300];

	snprintf(text, sizeof(text), "%s:1", name);
	if (transport_addr_resolve(text, &ss, &len, &err) < 0 || ss.ss_family != AF_INET)
		return -ENOENT;
	*ret = ((struct sockaddr_in *)&ss)->sin_addr;
	return 0;
}

static int loopback(struct in_addr a)
{
	return (ntohl(a.s_addr) >> 24) == 127;
}

/* The socket node 0's server meets the other nodes' servers on, any port,
 * bound where they reach it and nowhere else, the first of these this
 * host can bind: here, the address node 0's link to qpoold leaves from
 * (QPOOL_NODE_ADDR, which qpoold hands out; NULL when qexec does not run
 * on node 0 or the launch had none); node 0's address as /etc/hosts
 * names it; loopback, when every node's name is a loopback address (all
 * on this host). *addr is then "ADDR:PORT", numeric, so that the others
 * connect to exactly that. When none is known or bindable here (node 0's
 * name not in /etc/hosts, or only this host maps it to loopback, as
 * Debian's 127.0.1.1 line does), every address of this node, and *addr
 * names here, else node 0: the servers' secret, the first frame each
 * connection must show, still keeps strangers out (docs/PMI.md); and
 * *ret_any is 1, so that a sister in this network namespace (a pool
 * whose nodes are all on this host, under names no file resolves) is
 * told to reach it on loopback instead. */
static int bind_root(const struct node *nodes, int n, const char *here, int *ret_fd, char *addr, size_t len,
		     int *ret_any)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t slen = sizeof(sin);
	struct in_addr cand[2], b;
	int fd, e, ncand = 0, pinned = 0, all_loopback = 1;

	if (here && inet_pton(AF_INET, here, &cand[ncand]) == 1)
		ncand++;
	if (node_addr(nodes[0].name, &cand[ncand]) == 0) {
		for (int i = 1; loopback(cand[ncand]) && all_loopback && i < n; i++)
			all_loopback = node_addr(nodes[i].name, &b) == 0 && loopback(b);
		ncand += all_loopback;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A bind that fails leaves the socket unbound: the next is tried
	 * (an address not this host's after all). */
	for (int i = 0; i < ncand && !pinned; i++) {
		sin.sin_addr = cand[i];
		pinned = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
	}
	if (!pinned)
		sin.sin_addr.s_addr = htonl(INADDR_ANY);
	if ((!pinned && bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &slen) < 0) {
		e = -errno;
		close(fd);
		return e;
	}
	if (pinned)
		snprintf(addr, len, "%s:%d", inet_ntoa(sin.sin_addr), ntohs(sin.sin_port));
	else
		snprintf(addr, len, "%s:%d", here ? here : nodes[0].name, ntohs(sin.sin_port));
	*ret_fd = fd;
	*ret_any = !pinned;
	return 0;
}

/* The command a node runs: qpool-pmi with this job's layout. */
static char **pmi_argv(const char *pmi, int node, const char *peers, const char *ranks,
		       const char *names, const char *kvs, const char *timeout, const char *listen_fd,
		       int token_stdin, const char *root_netns, const char *mpi, int label, int with_stdin,
		       int discover, char **cmd)
{
	static char num[16];
	size_t n = 0, ncmd = 0;
	char **v;

	while (cmd[ncmd])
		ncmd++;
	v = calloc(ncmd + 28, sizeof(*v));
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
	if (root_netns) {
		v[n++] = "--root-netns";
		v[n++] = (char *)root_netns;
	}
	v[n++] = "--mpi";
	v[n++] = (char *)mpi;
	if (label)
		v[n++] = "--label";
	if (with_stdin)
		v[n++] = "--stdin";
	if (discover)
		v[n++] = "--topology=discover";
	v[n++] = "--";
	for (size_t i = 0; i < ncmd; i++)
		v[n++] = cmd[i];
	return v;
}

/* --- outside a job: submit one for the ranks, relay, exit with it ----- */

/* Runs argv with stdin from `in` (text, may be NULL), stdout and stderr
 * captured; returns its exit status (or -1). */
static int run_capture(char **argv, const char *in, char *out, size_t olen, char *err, size_t elen)
{
	int pi[2], po[2], pe[2], st;
	size_t no = 0, ne = 0;
	pid_t pid;

	if (pipe2(pi, O_CLOEXEC) < 0 || pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		sigset_t none;

		dup2(pi[0], 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv(argv[0], argv);
		fprintf(stderr, "%s: %m\n", argv[0]);
		_exit(127);
	}
	close(pi[0]);
	close(po[1]);
	close(pe[1]);
	if (in && write(pi[1], in, strlen(in)) < 0) {
		/* the child says what went wrong */
	}
	close(pi[1]);
	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd p[2] = { { .fd = po[0], .events = POLLIN }, { .fd = pe[0], .events = POLLIN } };
		char buf[4096];

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		for (int k = 0; k < 2; k++) {
			ssize_t n;

			if (!p[k].revents)
				continue;
			n = read(p[k].fd, buf, sizeof(buf));
			if (n <= 0) {
				close(p[k].fd);
				k ? (pe[0] = -1) : (po[0] = -1);
				open_fds--;
				continue;
			}
			char *dst = k ? err : out;
			size_t *used = k ? &ne : &no, cap = k ? elen : olen;

			if (*used + (size_t)n >= cap)
				n = (ssize_t)(cap - 1 - *used);
			memcpy(dst + *used, buf, (size_t)n);
			*used += (size_t)n;
		}
		if (po[0] < 0 && pe[0] < 0)
			break;
	}
	out[no] = err[ne] = '\0';
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Relays what was appended to path since *off to fd. */
static void relay_file(const char *path, int *fd, off_t *off, int to)
{
	char buf[65536];
	ssize_t n;

	if (*fd < 0) {
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*fd < 0)
			return;
	}
	while ((n = pread(*fd, buf, sizeof(buf), *off)) > 0) {
		const char *p = buf;

		*off += n;
		while (n > 0) {
			ssize_t w = write(to, p, (size_t)n);

			if (w <= 0)
				break;
			p += w;
			n -= w;
		}
	}
}

/* The wait outside a job, on the event stream (docs/EVENTS.md): the
 * job's end is told, not asked for; every RELAY_MS the job's output is
 * relayed and a signal cancels the job (a second one stops the wait). */
#define RELAY_MS 100
struct outwait {
	int64_t jobid;
	const char *id;            /* as qsub printed it */
	const char *qdel, *outp, *errp;
	const sigset_t *ss;
	int ofd, efd;
	off_t ooff, eoff;
	int cancelled, second;
	bool ended, tie_warned;
	char state[32], reason[512];
	int exit_status;
};

/* Ties the job to cl's connection (docs/PMI.md): when this process dies,
 * even by SIGKILL, qpoold cancels the job. Each new connection again. */
static int outwait_tie(struct client *cl, void *ud)
{
	struct outwait *w = ud;
	struct error err;
	json_t *reply = NULL;

	if (client_call(cl, json_pack("{s:s, s:I}", "op", "tie", "jobid", (json_int_t)w->jobid), &reply, &err) < 0 &&
	    !w->tie_warned) {
		w->tie_warned = true;
		fprintf(stderr, "qexec: warning: the job will not end with qexec: %s\n", err.text);
	}
	json_decref(reply);
	return 0;
}

static int outwait_tick(void *ud)
{
	struct outwait *w = ud;
	struct timespec ts = { 0, 0 };
	siginfo_t si;

	if (sigtimedwait(w->ss, &si, &ts) > 0) {
		char *dargv[] = { (char *)w->qdel, (char *)w->id, NULL }, dout[256], derr[1024];

		if (w->cancelled) {
			w->second = si.si_signo;   /* a second one: no more waiting */
			return 1;
		}
		w->cancelled = si.si_signo;
		run_capture(dargv, NULL, dout, sizeof(dout), derr, sizeof(derr));
		fprintf(stderr, "qexec: job %s cancelled\n", w->id);
	}
	relay_file(w->outp, &w->ofd, &w->ooff, 1);
	relay_file(w->errp, &w->efd, &w->eoff, 2);
	return 0;
}

static void outwait_lost(const struct error *err, void *ud)
{
	struct outwait *w = ud;

	/* qpoold away (a restart, a link down): the job runs on meanwhile,
	 * so the wait goes on for a while, as srun's does. */
	fprintf(stderr, "qexec: job %s: %s; trying again for %d s\n", w->id, err->text, AWAY_MAX_SEC);
}

static int outwait_end(struct outwait *w, const json_t *ev)
{
	const char *st = wire_str(ev, "state");

	if (!watch_state_ended(st))
		return 0;
	w->ended = true;
	snprintf(w->state, sizeof(w->state), "%s", st);
	snprintf(w->reason, sizeof(w->reason), "%s", wire_str(ev, "reason") ? wire_str(ev, "reason") : "");
	w->exit_status = (int)wire_int(ev, "exit_status", -1);
	return 1;
}

static int outwait_start(const json_t *reply, bool resumed, void *ud)
{
	struct outwait *w = ud;
	json_t *cur = json_object_get(reply, "current"), *o;
	size_t i;

	json_array_foreach(cur, i, o)
		if (wire_int(o, "jobid", 0) == w->jobid && outwait_end(w, o))
			return 1;
	if (!resumed && !json_array_size(cur)) {
		/* gone already (purged): as the stat's "gone" was */
		w->ended = true;
		snprintf(w->state, sizeof(w->state), "gone");
		w->exit_status = -1;
		return 1;
	}
	return outwait_tick(ud);
}

static int outwait_event(const json_t *ev, void *ud)
{
	return outwait_end(ud, ev);
}

/* 0: the job ended (w filled) or a second signal came (w->second); -1:
 * qpoold could not be reached, or not again within AWAY_MAX_SEC. */
static int outwait_run(struct outwait *w)
{
	struct watch_opts o = { .since = -1, .jobs = &w->jobid, .n_jobs = 1, .resume_sec = AWAY_MAX_SEC,
				.tick_ms = RELAY_MS, .tick = outwait_tick, .lost = outwait_lost,
				.connected = outwait_tie };
	struct client *cl = NULL;
	struct error err;
	int r;

	if (client_open(NULL, &cl, &err) < 0) {
		fprintf(stderr, "qexec: job %s: %s\n", w->id, err.text);
		return -1;
	}
	outwait_tie(cl, w);
	r = watch_run(cl, &o, outwait_start, outwait_event, w, &err);
	client_close(cl);
	if (r < 0) {
		fprintf(stderr, "qexec: job %s: %s; giving up\n", w->id, err.text);
		return -1;
	}
	return 0;
}

static int outside(char **inner, long want, long ppn, const char *name, const char *queue, char **res,
		   int nres, const sigset_t *ss)
{
	char self[PATH_MAX], qsub[PATH_MAX], qdel[PATH_MAX], cwd[PATH_MAX], dir[PATH_MAX + 32];
	char outp[PATH_MAX + 64], errp[PATH_MAX + 64], sel[128], out[512], err[4096];
	char *script = NULL, *qargv[2 * MAX_RES + 16];
	size_t slen = 0;
	int n = 0, rc, status = 1, ofd = -1, efd = -1;
	int64_t jobid;

	if (exe_sibling("qexec", self, sizeof(self)) < 0 || exe_sibling("qsub", qsub, sizeof(qsub)) < 0 ||
	    exe_sibling("qdel", qdel, sizeof(qdel)) < 0) {
		fprintf(stderr, "qexec: cannot find qsub and qdel beside qexec\n");
		return 1;
	}
	/* the job's output files, where the job's owner (this user) and this
	 * process both reach them: the working directory, as qsub's own */
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "qexec: cannot tell the working directory: %m\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/.qexec.XXXXXX", cwd);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "qexec: cannot make a directory for the job's output in %s: %m\n", cwd);
		return 1;
	}
	snprintf(outp, sizeof(outp), "%s/out", dir);
	snprintf(errp, sizeof(errp), "%s/err", dir);
	/* The job's script runs qexec inside the job with the same request. */
	if (cmd_quote(&script, &slen, self) < 0)
		goto nomem;
	for (size_t i = 0; inner[i]; i++)
		if (cmd_quote(&script, &slen, inner[i]) < 0)
			goto nomem;
	{
		const char *head = "#!/bin/sh\n# qexec's job: the ranks, run by qexec inside it\n"
				   "cd \"$PBS_O_WORKDIR\" || exit 1\nexec ";
		char *full = malloc(strlen(head) + slen + 2);

		if (!full)
			goto nomem;
		sprintf(full, "%s%s\n", head, script);
		free(script);
		script = full;
	}
	/* N ranks: with --ppn M, ceil(N/M) nodes of M (place=scatter: one chunk
	 * a node); else N one-CPU slots wherever the scheduler finds them. */
	if (ppn)
		snprintf(sel, sizeof(sel), "select=%ld:ncpus=%ld:mpiprocs=%ld,place=scatter", (want + ppn - 1) / ppn,
			 ppn, ppn);
	else
		snprintf(sel, sizeof(sel), "select=%ld:ncpus=1:mpiprocs=1", want);
	qargv[n++] = qsub;
	qargv[n++] = "-N";
	qargv[n++] = (char *)name;
	qargv[n++] = "-V";
	qargv[n++] = "-o";
	qargv[n++] = outp;
	qargv[n++] = "-e";
	qargv[n++] = errp;
	qargv[n++] = "-l";
	qargv[n++] = sel;
	if (queue) {
		qargv[n++] = "-q";
		qargv[n++] = (char *)queue;
	}
	for (int i = 0; i < nres; i++) {
		qargv[n++] = "-l";
		qargv[n++] = res[i];
	}
	qargv[n++] = "-";
	qargv[n] = NULL;
	rc = run_capture(qargv, script, out, sizeof(out), err, sizeof(err));
	free(script);
	script = NULL;
	if (rc != 0 || jobid_parse(strtok(out, "\n") ? out : "", &jobid) < 0) {
		/* the server's reason, in one line */
		char *line = strtok(err, "\n");

		if (line && strncmp(line, "qsub: ", 6) == 0)
			line += 6;
		/* run as srun or salloc (their argv[0]): Slurm's words */
		if (strcmp(program_invocation_short_name, "qexec") != 0)
			fprintf(stderr, "%s: error: Unable to allocate resources: %s\n", program_invocation_short_name,
				line && strstr(line, "unknown queue") ? "Invalid partition name specified" :
				line ? line : "qsub said nothing");
		else
			fprintf(stderr, "qexec: cannot submit: %s\n", line ? line : "qsub said nothing");
		rmdir(dir);
		return rc ? rc : 1;
	}
	/* Relay the job's output as it grows, until it is over: the end
	 * comes on the event stream, the connection ties the job. */
	{
		struct outwait w = { .jobid = jobid, .id = out, .qdel = qdel, .outp = outp, .errp = errp, .ss = ss,
				     .ofd = -1, .efd = -1, .exit_status = -1 };

		if (outwait_run(&w) == 0) {
			relay_file(outp, &w.ofd, &w.ooff, 1);
			relay_file(errp, &w.efd, &w.eoff, 2);
			if (w.second)
				status = 128 + w.second;
			else if (w.cancelled)
				status = 128 + w.cancelled;
			else if (w.exit_status >= 0 && !strcmp(w.state, "completed"))
				status = w.exit_status;
			else {
				fprintf(stderr, "qexec: job %s %s%s%s\n", out, w.state, w.reason[0] ? ": " : "",
					w.reason);
				status = w.exit_status > 0 ? w.exit_status : !strcmp(w.state, "timeout") ? 124 : 1;
			}
		}
		ofd = w.ofd;
		efd = w.efd;
	}
	if (ofd >= 0)
		close(ofd);
	if (efd >= 0)
		close(efd);
	unlink(outp);
	unlink(errp);
	rmdir(dir);
	return status;
nomem:
	free(script);
	rmdir(dir);
	fprintf(stderr, "qexec: out of memory\n");
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "ppn", required_argument, NULL, 'p' },
		{ "mpi", required_argument, NULL, 'm' },
		{ "label", no_argument, NULL, 'l' },
		{ "stdin", no_argument, NULL, 'i' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "topology", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct node nodes[MAX_NODES];
	char pmi[PATH_MAX], rsh[PATH_MAX], kvs[64], token[33], peers[20000], ranks[4096], names[20000];
	char addr[300] = "", *end, *timeout = "60";
	const char *nodefile = getenv("PBS_NODEFILE"), *jobid = getenv("PBS_JOBID");
	long want = 0, ppn = 0;
	const char *mpi = "all", *queue = NULL, *name = "qexec", *hosts = NULL;
	char *res[MAX_RES];
	int label = 0, nres = 0, discover = 0, with_stdin = 0;
	int nnodes = 0, slots = 0, used = 0, c, status = 0, rc, lfd = -1, any = 0;
	char netns[80] = "";
	unsigned char rnd[16];
	sigset_t ss;

	if (version_requested(argc, argv))
		return version_print("qexec");
	while ((c = getopt_long(argc, argv, "+n:lN:q:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			want = strtol(optarg, &end, 10);
			if (*end || want < 1 || want > 1048576) {
				fprintf(stderr, "qexec: -n %s: not a number of ranks\n", optarg);
				return 2;
			}
			break;
		case 'p':
			ppn = strtol(optarg, &end, 10);
			if (*end || ppn < 1 || ppn > 1024) {
				fprintf(stderr, "qexec: --ppn %s: not 1 to 1024 ranks per node\n", optarg);
				return 2;
			}
			break;
		case 'm':
			if (strcmp(optarg, "all") && strcmp(optarg, "pmi") && strcmp(optarg, "none")) {
				fprintf(stderr, "qexec: --mpi=%s: not all, pmi or none\n", optarg);
				return 2;
			}
			mpi = optarg;
			break;
		case 'l':
			/* "-l NAME=VALUE" is a resource list (qsub's), "-l" alone a label */
			if (strcmp(argv[optind - 1], "-l") == 0 && optind + 1 < argc &&
			    argv[optind][strspn(argv[optind], "abcdefghijklmnopqrstuvwxyz_")] == '=' &&
			    argv[optind][0] != '=') {
				if (nres == MAX_RES) {
					fprintf(stderr, "qexec: more than %d -l resource lists\n", MAX_RES);
					return 2;
				}
				res[nres++] = argv[optind++];
			} else {
				label = 1;
			}
			break;
		case 'q':
			queue = optarg;
			break;
		case 'i':
			with_stdin = 1;
			break;
		case 'H':
			hosts = optarg;
			break;
		case 'N':
			name = optarg;
			break;
		case 'o':
			if (strcmp(optarg, "node") && strcmp(optarg, "discover")) {
				fprintf(stderr, "qexec: --topology=%s: not node or discover\n", optarg);
				return 2;
			}
			discover = strcmp(optarg, "discover") == 0;
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
		/* outside a job: one for the ranks, qexec inside it */
		char *inner[24 + 1];
		char nbuf[24], pbuf[24], mbuf[24];
		int k = 0, ac = argc - optind;
		char **full;

		snprintf(nbuf, sizeof(nbuf), "%ld", want ? want : 1);
		inner[k++] = "-n";
		inner[k++] = nbuf;
		if (ppn) {
			snprintf(pbuf, sizeof(pbuf), "%ld", ppn);
			inner[k++] = "--ppn";
			inner[k++] = pbuf;
		}
		snprintf(mbuf, sizeof(mbuf), "--mpi=%s", mpi);
		inner[k++] = mbuf;
		if (label)
			inner[k++] = "--label";
		if (discover)
			inner[k++] = "--topology=discover";
		inner[k++] = "--timeout";
		inner[k++] = timeout;
		inner[k++] = "--";
		full = calloc((size_t)(k + ac + 1), sizeof(*full));
		if (!full) {
			fprintf(stderr, "qexec: out of memory\n");
			return 1;
		}
		memcpy(full, inner, (size_t)k * sizeof(*full));
		memcpy(full + k, argv + optind, (size_t)ac * sizeof(*full));
		sigemptyset(&ss);
		sigaddset(&ss, SIGINT);
		sigaddset(&ss, SIGTERM);
		sigaddset(&ss, SIGHUP);
		sigprocmask(SIG_BLOCK, &ss, NULL);
		signal(SIGPIPE, SIG_IGN);
		rc = outside(full, want ? want : 1, ppn, name, queue, res, nres, &ss);
		free(full);
		return rc;
	}
	if (queue || nres || strcmp(name, "qexec")) {
		fprintf(stderr, "qexec: -N, -q and -l RESOURCE are for a job qexec submits; this is inside job %s\n",
			jobid);
		return 2;
	}
	/* --hosts: the first is this node (its server is qexec's child) */
	rc = hosts ? read_hosts(hosts, nodes, &nnodes) : read_nodefile(nodefile, nodes, &nnodes);
	if (hosts && rc < 0) {
		fprintf(stderr, "qexec: --hosts %s: not NAME:SLOTS[,NAME:SLOTS...]\n", hosts);
		return 2;
	}
	if (rc < 0 || nnodes == 0) {
		fprintf(stderr, "qexec: %s: %s\n", nodefile, rc < 0 ? strerror(-rc) : "no node");
		return 1;
	}
	for (int i = 0; i < nnodes; i++) {
		/* --ppn M: M ranks on each node used (the last may have fewer);
		 * a node that is needed and has fewer than M slots is refused */
		long need = !ppn ? 0 : !want ? ppn : want - (long)i * ppn < ppn ? want - (long)i * ppn : ppn;

		if (ppn && need > 0 && nodes[i].slots < need) {
			fprintf(stderr, "qexec: --ppn %ld: node %s has %d MPI slot%s\n", ppn, nodes[i].name,
				nodes[i].slots, nodes[i].slots == 1 ? "" : "s");
			return 1;
		}
		if (ppn && nodes[i].slots > ppn)
			nodes[i].slots = (int)ppn;   /* at most M ranks on each */
		slots += nodes[i].slots;
	}
	if (!want)
		want = slots;
	if (want > slots) {
		if (ppn)
			fprintf(stderr, "qexec: -n %ld --ppn %ld: needs %ld nodes, the job has %d\n", want, ppn,
				(want + ppn - 1) / ppn, nnodes);
		else
			fprintf(stderr, "qexec: -n %ld: the job has %d MPI slot%s\n", want, slots,
				slots == 1 ? "" : "s");
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
	/* Signals go to the servers (qpool-rsh forwards them as task.signal);
	 * SIGCHLD wakes the wait for them at once. */
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGHUP);
	sigaddset(&ss, SIGCHLD);
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
		/* QPOOL_NODE_ADDR is this node's (gded sets it from the
		 * launch); it is node 0's where the job's primary runs us. */
		const char *here = getenv("QPOOL_NODE_ADDR"), *num = getenv("PBS_NODENUM");

		if (!here || !*here || (num && strcmp(num, "0") != 0))
			here = NULL;
		rc = bind_root(nodes, nnodes, here, &lfd, addr, sizeof(addr), &any);
		if (rc < 0) {
			fprintf(stderr, "qexec: cannot listen on %s: %s\n", nodes[0].name, strerror(-rc));
			return 1;
		}
		/* bound on every address: a sister in this namespace takes
		 * loopback (no name to resolve, nothing to route) */
		if (any && netns_id(netns, sizeof(netns)) < 0)
			netns[0] = '\0';
	}
	nodes[0].pid = fork();
	if (nodes[0].pid == 0) {
		char **v;

		if (lfd == 3)
			fcntl(3, F_SETFD, 0);   /* kept across exec */
		else if (lfd >= 0)
			dup2(lfd, 3);           /* a copy without close-on-exec */
		v = pmi_argv(pmi, 0, peers, ranks, names, kvs, timeout, lfd >= 0 ? "3" : NULL, 0, NULL,
			     mpi, label, with_stdin, discover, argv + optind);
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
		v = pmi_argv(pmi, i, rpeers, ranks, names, kvs, timeout, NULL, 1, netns[0] ? netns : NULL, mpi,
			     label, 0, discover,
			     argv + optind);
		for (size_t k = 0; v && v[k]; k++)
			if (cmd_quote(&cmdline, &len, v[k]) < 0)
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
			/* the ranks get qexec's environment on every node, as
			 * srun's and hydra's do */
			execl(rsh, "qpool-rsh", "--env", nodes[i].name, "exec", cmdline, (char *)NULL);
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
	 * forwards signals and takes the first non-zero status. A server that
	 * fails before it reached the others (a sister that cannot reach the
	 * root) cannot tell them: qexec ends (SIGTERM) those still running
	 * once node 0's server is gone (it stays until every sister that
	 * joined it has heard of the failure and ended), or after the grace.
	 * Not at the first exit: a sister still reading the root's "fence
	 * timed out" would die before naming its ranks that never reached
	 * the fence (t-qexec-hosts). */
	long long grace_ms = strtol(timeout, NULL, 10) * 1000LL, term_at = 0;

	if (grace_ms > QEXEC_END_GRACE_MS)
		grace_ms = QEXEC_END_GRACE_MS;
	if (status)
		term_at = 1;   /* a node's server not started: the rest end now */
	for (int left = nnodes; left > 0;) {
		siginfo_t si;
		struct timespec ts = { 0, 100000000 };
		int st;
		pid_t pid;

		if (sigtimedwait(&ss, &si, &ts) > 0 && si.si_signo != SIGCHLD) {
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
				if (code && !status) {
					status = code;
					term_at = time_mono_ns() / NSEC_PER_MSEC + grace_ms;
				}
			}
		}
		if (pid < 0 && errno == ECHILD)
			break;
		if (term_at > 0 && (nodes[0].pid == 0 || time_mono_ns() / NSEC_PER_MSEC >= term_at)) {
			for (int k = 0; k < nnodes; k++)
				if (nodes[k].pid > 0)
					kill(nodes[k].pid, SIGTERM);
			term_at = -1;
		}
	}
	return status;
}
