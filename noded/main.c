/* SPDX-License-Identifier: MIT */
/* qnoded: the node agent. Options, start-up in order, the event loop, teardown. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "exe.h"
#include "hook.h"
#include "log.h"
#include "log-journal.h"
#include "nodesel.h"
#include "noded.h"
#include "transport.h"
#include "version.h"

#ifdef __SANITIZE_ADDRESS__
/* A sanitized build: what libpciaccess keeps after hwloc's PCI discovery
 * (topo_io_load) is not ours to report. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpciaccess.so\n";
}
#endif

static const char *arg_config;
static const char *arg_name;
static char arg_hostname[NODED_NAME_MAX];   /* --name's default */
static const char *arg_cpus;
static int arg_verbose;
static long arg_simulate;
static const char *arg_sim_topology = "pack:2 numa:4 core:16 pu:2";
static bool arg_cgroup_holder;
static char arg_sim_features[1024];   /* --sim-features, canonical */
static const char *arg_sim_gpus;       /* --sim-gpus, checked by sim_gpus_make */

#define SIM_MAX 100000

static void usage(FILE *f)
{
	fprintf(f, "usage: qnoded [-f FILE] [--name NAME] [--cpus LIST] [-v]\n"
		   "       qnoded [-f FILE] --simulate N [--sim-topology TEXT] [--name PREFIX] [-v]\n"
		   "       qnoded --cgroup-holder\n"
		   "  -f, --config FILE  config file (default: $QPOOL_CONF, else %s)\n"
		   "  -n, --name NAME    node name, unique in the pool (default: the host name)\n"
		   "  -c, --cpus LIST    use only these CPUs, e.g. 0-3,8 (default: all allowed)\n"
		   "  -s, --simulate N   present N simulated nodes PREFIX-0..N-1 (default prefix sim)\n"
		   "                     whose jobs only wait their walltime (or QPOOL_SIM_RUNTIME\n"
		   "                     seconds from their environment): no cgroups, no gded\n"
		   "  -t, --sim-topology TEXT  their hwloc synthetic topology\n"
		   "                     (default \"pack:2 numa:4 core:16 pu:2\")\n"
		   "  -F, --sim-features LIST  their features, comma-separated (default:\n"
		   "                     [node] features)\n"
		   "  -G, --sim-gpus SPEC  their GPUs: N, or MODEL:N[,MODEL:N...] (e.g. a100:4)\n"
		   "  --cgroup-holder    hold the cgroup v2 group systemd delegated for the node's\n"
		   "                     job groups, and do nothing else (qpool-cgroup.service)\n"
		   "  -v, --verbose      debug logging\n"
		   "  -h, --help         this text\n", CONFIG_DEFAULT_PATH);
}

/* 0 to run, 1 for a usage error, -1 after --help. */
static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, 'n' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "simulate", required_argument, NULL, 's' },
		{ "sim-topology", required_argument, NULL, 't' },
		{ "sim-features", required_argument, NULL, 'F' },
		{ "sim-gpus", required_argument, NULL, 'G' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "cgroup-holder", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "f:n:c:s:t:F:G:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': arg_config = optarg; break;
		case 'n': arg_name = optarg; break;
		case 'c': arg_cpus = optarg; break;
		case 's':
			errno = 0;
			arg_simulate = strtol(optarg, &end, 10);
			if (errno || *end || arg_simulate < 1 || arg_simulate > SIM_MAX) {
				fprintf(stderr, "qnoded: --simulate %s: a number of nodes, 1-%d\n", optarg, SIM_MAX);
				return 1;
			}
			break;
		case 't': arg_sim_topology = optarg; break;
		case 'F': {
			struct error why;

			if (nodesel_features_canon(optarg, arg_sim_features, sizeof(arg_sim_features), &why) < 0) {
				fprintf(stderr, "qnoded: --sim-features %s: %s\n", optarg, why.text);
				return 1;
			}
			break;
		}
		case 'G': {
			struct node_gpu *g;
			struct error why;
			unsigned n;

			if (sim_gpus_make(optarg, &g, &n, &why) < 0) {
				fprintf(stderr, "qnoded: %s\n", why.text);
				return 1;
			}
			free(g);
			arg_sim_gpus = optarg;
			break;
		}
		case 'v': arg_verbose++; break;
		case 'h': usage(stdout); return -1;
		case 'H': arg_cgroup_holder = true; break;
		default: usage(stderr); return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "qnoded: unexpected argument '%s'\n", argv[optind]);
		return 1;
	}
	if (arg_cgroup_holder) {
		if (arg_config || arg_name || arg_cpus || arg_simulate) {
			fprintf(stderr, "qnoded: --cgroup-holder takes no other option but -v\n");
			return 1;
		}
		return 0;
	}
	if (arg_simulate && !arg_name)
		arg_name = "sim";
	if (arg_simulate && arg_cpus) {
		fprintf(stderr, "qnoded: --cpus does not go with --simulate\n");
		return 1;
	}
	if (!arg_name) {
		/* The host's name, as the pool's other hosts resolve it. */
		if (gethostname(arg_hostname, sizeof(arg_hostname)) < 0 || !arg_hostname[0]) {
			fprintf(stderr, "qnoded: no --name and no host name: %m\n");
			return 1;
		}
		arg_hostname[strcspn(arg_hostname, ".")] = '\0';
		arg_name = arg_hostname;
	}
	if (!noded_name_valid(arg_name)) {
		fprintf(stderr, "qnoded: --name %s: use 1-%d of A-Z a-z 0-9 . _ -, not starting with . or -\n",
			arg_name, NODED_NAME_MAX - 1);
		return 1;
	}
	return 0;
}

static int on_stop_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	log_info("%s: stopping (running jobs keep running)", strsignal((int)si->ssi_signo));
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* The node's topology, and *io (NULL when it cannot be loaded): the
 * machine's with its I/O devices, for the GPUs and the ranks' XML. */
static int topology_setup(struct noded *nd, hwloc_topology_t *io, struct error *err)
{
	hwloc_topology_t topo = NULL;
	struct cpumask want, *wantp = NULL;
	uint64_t numa_mem = 0, total = 0;
	int r;

	if (arg_cpus) {
		r = cpumask_parse(arg_cpus, &want);
		if (r < 0)
			return error_set(err, r, "--cpus %s: not a CPU list (e.g. 0-3,8)", arg_cpus);
		wantp = &want;
	}
	/* hwloc takes 1-2.5 ms to load: once, here. */
	r = topo_machine_load(&topo);
	if (r < 0)
		return error_set(err, r, "cannot load the hardware topology: %s", strerror(-r));
	r = topo_node_describe(topo, wantp, &nd->topo, err);
	if (r < 0)
		goto done;
	topo_features(topo, nd->config->features, nd->features, sizeof(nd->features));
	numa_mem = nd->topo.mem;
	total = topo_node_mem_reconcile(topo, nd->proc_root, &nd->topo);
	/* GPUs and their locality from the I/O topology, which the node's
	 * own (sent at registration, shared by alike nodes) leaves out. */
	r = topo_io_load(io);
	if (r < 0) {
		log_warn("cannot load the I/O topology (%s): GPU locality unknown", strerror(-r));
		*io = NULL;
	}
	r = gpus_find(nd->config->gpus, "/dev", *io, &nd->topo.cpus, &nd->gpus, &nd->n_gpus, err);
	if (r < 0)
		goto done;
	/* Last: it cuts the topology down to the node. */
	r = topo_node_xml(topo, &nd->topo.cpus, &nd->topo_xml);
	if (r < 0)
		error_set(err, r, "cannot export the node's topology as XML: %s", strerror(-r));
	/* Said once the node is set up: a bad config stays one line. */
	else if (total)
		log_info("memory: the NUMA nodes hold %llu MiB of MemTotal's %llu MiB: "
			 "this node has %llu MiB (its share of MemTotal)",
			 (unsigned long long)(numa_mem >> 20), (unsigned long long)(total >> 20),
			 (unsigned long long)(nd->topo.mem >> 20));
done:
	hwloc_topology_destroy(topo);
	return r;
}

/* --simulate: n nodes sharing one event loop, each its own link. */
static int sim_run(const struct config *config, sd_event *event, struct error *err)
{
	struct node_topo topo;
	struct noded *nds;
	struct rlimit rl;
	size_t name_len = strlen(arg_name) + 12;
	char *names;
	int r;

	r = sim_topology_describe(arg_sim_topology, &topo, err);
	if (r < 0)
		return r;
	/* One socket per node: raise the soft limit as far as allowed. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)arg_simulate + 32)
		return error_set(err, -EMFILE, "--simulate %ld needs as many descriptors; the limit is %llu",
				 arg_simulate, (unsigned long long)rl.rlim_cur);
	nds = calloc((size_t)arg_simulate, sizeof(*nds));
	names = calloc((size_t)arg_simulate, name_len);
	if (!nds || !names) {
		r = error_set(err, -ENOMEM, "out of memory for %ld simulated nodes", arg_simulate);
		goto done;
	}
	for (long i = 0; i < arg_simulate; i++) {
		struct noded *nd = &nds[i];
		char *name = names + (size_t)i * name_len;

		snprintf(name, name_len, "%s-%ld", arg_name, i);
		if (!noded_name_valid(name)) {
			r = error_set(err, -EINVAL, "--name %s: node name %s is not valid", arg_name, name);
			goto done;
		}
		*nd = (struct noded){ .config = config, .name = name, .proc_root = "/proc",
				      .event = event, .topo = topo, .cgroup_mode = CGROUP_MODE_NONE,
				      .jobs_dirfd = -1, .held_dirfd = -1, .simulated = true,
				      .topo_xml = (char *)arg_sim_topology };
		snprintf(nd->rt_reason, sizeof(nd->rt_reason), "simulated node");
		r = sim_node_dress(nd, &(struct sim_dress){ arg_sim_features[0] ? arg_sim_features
									 : config->features,
							    arg_sim_gpus }, err);
		if (r < 0)
			goto done;
		r = jobs_create(nd, &nd->jobs);
		if (r == 0)
			r = link_create(nd, &nodeops_link_handlers, &nd->link);
		if (r < 0) {
			error_set(err, r, "simulated node %s: %s", name, strerror(-r));
			goto done;
		}
	}
	log_info("simulating %ld nodes %s-0..%ld: topology \"%s\" (%u PUs, %u cores each)", arg_simulate,
		 arg_name, arg_simulate - 1, arg_sim_topology, topo.pus, topo.cores);
	r = sd_event_loop(event);
	if (r < 0)
		error_set(err, r, "event loop: %s", strerror(-r));
done:
	for (long i = 0; nds && i < arg_simulate; i++) {
		link_destroy(nds[i].link);
		jobs_destroy(nds[i].jobs);
		free(nds[i].gpus);
	}
	free(nds);
	free(names);
	return r;
}

/* cgroup v2 under systemd: the node's groups go into a delegated group
 * (cgroup.h, "cgroup v2 under systemd"), never at the root systemd
 * manages: the group qpool-cgroup.service holds, named in
 * CGROUP_HOLDER_BASE_FILE; else qnoded's own, when its unit delegates it
 * (qnoded moves itself into a leaf first); else, as on v1, the root.
 * qnoded enables no controller in its own group when the holder's is
 * used, so systemd can always start a new qnoded there; and the wrappers
 * go into the holder's tree too, in the leaf CGROUP_WRAPPERS_LEAF beside
 * the node groups, so that none is a process of qnoded.service, which
 * systemd would report left over at each restart of qnoded (its
 * KillMode=process leaves them running). ret_procs is that leaf's
 * cgroup.procs, "" when the holder is not used. On success
 * config->cgroup_root is the base's directory. */
static int cgroup_base_setup(struct config *config, char *ret_procs, size_t procs_len,
			     struct error *err)
{
	struct cgroup_host host = { .root = config->cgroup_root, .proc_cgroup = "/proc/self/cgroup",
				    .holder_file = CGROUP_HOLDER_BASE_FILE,
				    .systemd = getenv("INVOCATION_ID") != NULL,
				    .delegated = cgroup_delegated_xattr };
	char base[PATH_MAX], leaf[PATH_MAX], dir[PATH_MAX * 2 + 2];
	enum cgroup_base_from from;
	int r;

	r = cgroup_base_choose(&host, &from, base, sizeof(base), leaf, sizeof(leaf), err);
	if (r < 0 || from == CGROUP_BASE_ROOT)
		return r;
	if (from == CGROUP_BASE_UNDELEGATED) {
		log_info("cgroup %s was not delegated to qnoded (no trusted.delegate): node groups go under %s",
			 base, config->cgroup_root);
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/%s", config->cgroup_root, base);
	if (strlen(dir) >= sizeof(config->cgroup_root))
		return error_set(err, -ENAMETOOLONG, "%s: path too long", dir);
	if (leaf[0]) {
		r = cgroup_self_move(config->cgroup_root, leaf, err);
		if (r < 0)
			return r;
	}
	if (from == CGROUP_BASE_HOLDER) {
		char leaf_dir[PATH_MAX * 2 + 32];

		snprintf(leaf_dir, sizeof(leaf_dir), "%s/%s", dir, CGROUP_WRAPPERS_LEAF);
		if (mkdir(leaf_dir, 0755) < 0 && errno != EEXIST)
			return error_set(err, -errno, "mkdir %s: %m", leaf_dir);
		if ((size_t)snprintf(ret_procs, procs_len, "%s/cgroup.procs", leaf_dir) >= procs_len)
			return error_set(err, -ENAMETOOLONG, "%s: path too long", leaf_dir);
		log_info("cgroup v2: node groups under %s, held by qpool-cgroup.service (%s); "
			 "wrappers in %s", dir, CGROUP_HOLDER_BASE_FILE, leaf_dir);
	} else
		log_info("cgroup v2 delegated by systemd: node groups under %s, qnoded in %s/%s", dir,
			 config->cgroup_root, leaf[0] ? leaf : base);
	snprintf(config->cgroup_root, sizeof(config->cgroup_root), "%s", dir);
	return 0;
}

/* kernel.pid_max, or 0 when unreadable. */
static uint64_t pid_max_read(const char *proc_root)
{
	char path[PATH_MAX];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/kernel/pid_max", proc_root);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* The node's group over all its jobs: memory less mem_reserve for the
 * system, and a pids cap (node_pids_max, by default 3/4 of pid_max) so
 * that jobs, each below its own pids.max, cannot together take the
 * host's last pids. A reserve as large as the node's memory is an error. */
static int node_limits(struct noded *nd, uint64_t *ret_mem, uint64_t *ret_pids, struct error *err)
{
	const struct config *c = nd->config;
	uint64_t pids = c->node_pids_max, mem = 0;

	if (c->mem_reserve > 0 && nd->topo.mem > 0) {
		if (c->mem_reserve >= nd->topo.mem)
			return error_set(err, -EINVAL, "mem_reserve (%llu MiB) leaves nothing of the node's %llu MiB",
					 (unsigned long long)(c->mem_reserve >> 20),
					 (unsigned long long)(nd->topo.mem >> 20));
		mem = nd->topo.mem - c->mem_reserve;
	}
	if (pids == 0)
		pids = pid_max_read(nd->proc_root) / 4 * 3;
	*ret_mem = mem;
	*ret_pids = pids;
	return 0;
}

static int signals_setup(sd_event *event)
{
	sigset_t ss;
	int r;

	/* sd-event takes signals through a signalfd: they must be blocked. */
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((r = sd_event_add_signal(event, NULL, SIGTERM, on_stop_signal, NULL)) < 0 ||
	    (r = sd_event_add_signal(event, NULL, SIGINT, on_stop_signal, NULL)) < 0)
		return r;
	return 0;
}

int main(int argc, char **argv)
{
	struct noded nd = { .proc_root = "/proc", .jobs_dirfd = -1, .held_dirfd = -1, .cgroup_lock_fd = -1 };
	struct launcher launcher = { .pidfd = -1, .sock = -1 };
	struct config *config = NULL;
	struct error err = { "" };
	hwloc_topology_t io_topo = NULL;
	bool cgroup_ready = false, live_root;
	char cpus[4096];
	int r, status = 1;

	if (version_requested(argc, argv))
		return version_print("qnoded");
	r = parse_args(argc, argv);
	if (r != 0)
		return r < 0 ? 0 : 1;
	log_init("qnoded", arg_verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
	/* Every agent on the task socket and every job holds descriptors: the
	 * soft limit a shell gives (1,024) goes up to the hard one, and the
	 * caps are sized from what is left (tasks.c). The wrappers, and so the
	 * jobs, keep the limit qnoded was started with (select(2) users). */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			launcher.nofile = rl.rlim_cur;
			rl.rlim_cur = rl.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
				launcher.nofile = 0;
		}
	}
	if (arg_cgroup_holder) {
		(void)log_journal_setup(NULL);
		return noded_cgroup_holder_run();
	}
	(void)log_journal_setup(arg_simulate ? NULL : arg_name);

	r = config_load(config_path(arg_config), &config, &err);
	if (r < 0) {
		log_err("%s", err.text);
		goto done;
	}
	/* $QPOOL_SERVER, unlike the file, is read only here: a bad list is
	 * one line before anything is made. */
	{
		struct transport_servers list;

		r = transport_servers_of(config, &list, &err);
		if (r < 0) {
			log_err("QPOOL_SERVER: %s", err.text);
			goto done;
		}
	}
	/* The site's hooks run as root: one a user could replace is refused
	 * before anything is made (qpool-hooks(5)). */
	for (int k = 0; k < 3; k++) {
		static const char *const names[] = { "prolog", "epilog", "health_check" };
		const char *path = k == 2 ? config->health_check : k ? config->epilog : config->prolog;
		char why[PATH_MAX + 64];

		if (path[0] && hook_path_check(path, why, sizeof(why)) < 0) {
			log_err("[node] %s = %s: refused: %s", names[k], path, why);
			r = -EPERM;
			goto done;
		}
	}
	nd.config = config;
	/* Absolute: its hooks run from / (QPOOL_CONF of the health check). */
	{
		static char conf_abs[PATH_MAX];

		nd.config_file = realpath(config_path(arg_config), conf_abs) ? conf_abs : config_path(arg_config);
	}
	nd.name = arg_name;

	if (arg_simulate) {
		r = sd_event_new(&nd.event);
		if (r >= 0)
			r = signals_setup(nd.event);
		if (r < 0) {
			log_err("event loop set-up: %s", strerror(-r));
			goto done;
		}
		r = sim_run(config, nd.event, &err);
		if (r < 0) {
			log_err("%s", err.text);
			goto done;
		}
		status = 0;
		goto done;
	}

	r = topology_setup(&nd, &io_topo, &err);
	if (r < 0) {
		log_err("%s", err.text);
		goto done;
	}
	cpumask_format(&nd.topo.cpus, cpus, sizeof(cpus));

	/* On the live host (the default root), libcgroup tells where the
	 * hierarchies really are; a root the config names (a fake tree in
	 * tests) is taken as it is. */
	live_root = strcmp(config->cgroup_root, "/sys/fs/cgroup") == 0;
	if (live_root) {
		char root[PATH_MAX];

		if (cgroup_discover(root, sizeof(root), &err) < 0)
			log_info("%s; using %s", err.text, config->cgroup_root);
		else if (strcmp(root, config->cgroup_root) != 0) {
			log_info("cgroup hierarchies found under %s", root);
			snprintf(config->cgroup_root, sizeof(config->cgroup_root), "%s", root);
		}
	}
	r = cgroup_detect(config->cgroup_root, &nd.cgroup_mode);
	if (r < 0) {
		log_err("cannot inspect cgroups at %s: %s", config->cgroup_root, strerror(-r));
		goto done;
	}
	/* Only on the live host: a root the config names is a fake tree. */
	if (nd.cgroup_mode == CGROUP_MODE_V2 && live_root &&
	    cgroup_base_setup(config, nd.wrappers_procs, sizeof(nd.wrappers_procs), &err) < 0) {
		log_err("cgroup v2 delegation: %s", err.text);
		goto done;
	}
	if ((size_t)snprintf(nd.cgroup_parent, sizeof(nd.cgroup_parent), "%s/%s", config->cgroup_parent,
			     nd.name) >= sizeof(nd.cgroup_parent)) {
		log_err("cgroup_parent %s: too long", config->cgroup_parent);
		goto done;
	}
	if (nd.cgroup_mode == CGROUP_MODE_NONE) {
		log_warn("no usable cgroup hierarchy at %s: jobs run unfenced", config->cgroup_root);
	} else {
		uint64_t mem_max = 0, pids_max = 0;

		/* Checked before anything is made; the lock before touching
		 * the groups: another qnoded may own them. */
		r = node_limits(&nd, &mem_max, &pids_max, &err);
		if (r == 0)
			r = noded_cgroup_lock(&nd, NODED_LOCK_DIR, &err);
		if (r == 0) {
			r = cgroup_node_setup(config->cgroup_root, nd.cgroup_mode, nd.cgroup_parent,
					      &nd.topo.cpus, nd.topo.mems, &err);
			/* Made: removed again at done: if the start fails later. */
			cgroup_ready = r == 0;
		}
		if (r == 0)
			r = cgroup_node_limits(config->cgroup_root, nd.cgroup_mode, nd.cgroup_parent,
					       mem_max, pids_max, &err);
		if (r < 0) {
			log_err("cgroup set-up of %s: %s", nd.cgroup_parent, err.text);
			goto done;
		}
		log_info("node group %s: memory limit %llu MiB (reserve %llu MiB), pids.max %llu",
			 nd.cgroup_parent, (unsigned long long)(mem_max >> 20),
			 (unsigned long long)(config->mem_reserve >> 20), (unsigned long long)pids_max);
		/* What the node's jobs can have between them is what it offers. */
		if (mem_max > 0)
			nd.topo.mem = mem_max;
	}
	procscan_rt_check(nd.proc_root, &nd.rt, nd.rt_reason, sizeof(nd.rt_reason));
	if (nd.rt && nd.cgroup_mode != CGROUP_MODE_NONE &&
	    !cgroup_node_rt_ready(config->cgroup_root, nd.cgroup_mode, nd.cgroup_parent)) {
		nd.rt = false;
		snprintf(nd.rt_reason, sizeof(nd.rt_reason),
			 "other pools on this host hold all its v1 RT runtime (cpu.rt_runtime_us)");
	}
	/* The mode and the capability are not the answer: the kernel's
	 * config is (rtprobe_verdict). One try, as a realtime job would. */
	if (nd.rt && nd.cgroup_mode != CGROUP_MODE_NONE) {
		enum rtprobe_step step;

		r = rtprobe_run(config->cgroup_root, nd.cgroup_mode, nd.cgroup_parent, cpus,
				nd.topo.mems, &step, &err);
		nd.rt = rtprobe_verdict(nd.cgroup_mode, step, r, err.text, nd.rt_reason,
					sizeof(nd.rt_reason));
		if (!nd.rt)
			log_warn("realtime jobs: no: %s", nd.rt_reason);
	}

	r = noded_dirs_open(&nd, &err);
	if (r < 0) {
		log_err("%s", err.text);
		goto done;
	}
	/* Single-node jobs' node files, shared; without them each job has
	 * its own, as multi-node jobs do. */
	if (!nd.simulated && nodefiles_open(nd.node_dir, nd.name, &nd.nodefiles, &err) < 0)
		log_warn("%s: each job gets a node file of its own", err.text);
	/* The node's topology for the jobs' own hwloc users (qexec's ranks):
	 * once per start, as this qnoded's own view is. */
	{
		char xml[PATH_MAX + 16];

		snprintf(xml, sizeof(xml), "%s/topology.xml", nd.node_dir);
		r = io_topo ? topo_ranks_xml_export(io_topo, xml) : -ENODATA;
		if (r < 0)
			log_warn("cannot write %s: %s (ranks discover the topology themselves)", xml,
				 strerror(-r));
		nd.hwloc_xml = r == 0;
		/* Its last use: a PCI-rich host's I/O objects need not stay. */
		if (io_topo)
			hwloc_topology_destroy(io_topo);
		io_topo = NULL;
	}
	r = launch_gded_path(config->gded, nd.gded, sizeof(nd.gded));
	if (r < 0) {
		log_err("cannot locate gded: %s", strerror(-r));
		goto done;
	}
	if (access(nd.gded, X_OK) < 0)
		log_warn("gded at %s is not executable (%m): jobs will fail until it is", nd.gded);
	/* The resident launcher forks each wrapper (no exec per job); it is
	 * started once qnoded is up, below. Without it, launch_gded. */
	launcher.gded = nd.gded;
	launcher.proc_root = nd.proc_root;
	launcher.jobs_dir = nd.jobs_dir;
	launcher.wrappers_procs = nd.wrappers_procs[0] ? nd.wrappers_procs : NULL;
	if (nd.cgroup_mode != CGROUP_MODE_NONE) {
		launcher.cg_mode = cgroup_mode_name(nd.cgroup_mode);
		launcher.cg_root = config->cgroup_root;
		launcher.cg_parent = nd.cgroup_parent;
	}
	nd.launch = launch_resident;
	nd.launch_data = &launcher;

	nd.users = usercache_create();
	if (!nd.users) {
		log_err("out of memory");
		goto done;
	}
	r = sd_event_new(&nd.event);
	if (r < 0) {
		log_err("sd_event_new: %s", strerror(-r));
		goto done;
	}
	if ((r = signals_setup(nd.event)) < 0) {
		log_err("signal set-up: %s", strerror(-r));
		goto done;
	}

	log_info("node %s: cpus %s, mems %s, %u packages, %u NUMA, %u cores, %u PUs, %llu MiB, cgroup %s, rt %s%s%s",
		 nd.name, cpus, nd.topo.mems, nd.topo.packages, nd.topo.numa, nd.topo.cores,
		 nd.topo.pus, (unsigned long long)(nd.topo.mem >> 20),
		 cgroup_mode_name(nd.cgroup_mode), nd.rt ? "yes" : "no",
		 nd.rt ? "" : ": ", nd.rt_reason);
	for (unsigned i = 0; i < nd.n_gpus; i++) {
		char gcpus[4096];

		cpumask_format(&nd.gpus[i].cpus, gcpus, sizeof(gcpus));
		log_info("GPU %u: %s (%u:%u), NUMA node %d, cpus %s", i, nd.gpus[i].file, nd.gpus[i].major,
			 nd.gpus[i].minor, nd.gpus[i].numa, gcpus[0] ? gcpus : "unknown");
	}

	r = jobs_create(&nd, &nd.jobs);
	if (r < 0) {
		log_err("cannot take over %s: %s", nd.jobs_dir, strerror(-r));
		goto done;
	}
	r = tasks_create(&nd, &nd.tasks, &err);
	if (r < 0) {
		log_err("remote starts: %s", err.text);
		goto done;
	}
	r = link_create(&nd, &nodeops_link_handlers, &nd.link);
	if (r < 0) {
		log_err("cannot set up the qpoold link: %s", strerror(-r));
		goto done;
	}
	r = health_create(&nd, &nd.health);
	if (r < 0) {
		log_err("cannot set up the health check: %s", strerror(-r));
		goto done;
	}
	/* Once up (a start that fails says one line, its error), before the
	 * loop spawns any gded, which inherits it (the job sets 0 before exec). */
	r = exe_oom_score_adj_set(EXE_DAEMON_OOM_SCORE_ADJ);
	if (r < 0)
		log_warn("cannot set oom_score_adj %d: %s", EXE_DAEMON_OOM_SCORE_ADJ, strerror(-r));
	/* The launch's hops at once beside busy jobs (exe.h); the launcher
	 * and its wrappers inherit it, the job's child gives it back. */
	(void)exe_sched_slice_set(EXE_DAEMON_SLICE_NS);
	/* After the oom_score_adj and the slice, which it and its wrappers inherit. */
	(void)launcher_start(&launcher);
	/* Set up and its running jobs taken over: a restart is complete. */
	(void)sd_notifyf(0, "READY=1\nSTATUS=node %s: cpus %s, cgroup %s, %zu jobs running", nd.name, cpus,
			 cgroup_mode_name(nd.cgroup_mode), jobs_running_count(nd.jobs));
	r = sd_event_loop(nd.event);
	(void)sd_notify(0, "STOPPING=1");
	if (r < 0) {
		log_err("event loop: %s", strerror(-r));
		goto done;
	}
	status = 0;
done:
	health_destroy(nd.health);
	tasks_destroy(nd.tasks);
	link_destroy(nd.link);
	launcher_stop(&launcher);
	if (cgroup_ready) {
		size_t running = nd.jobs ? jobs_running_count(nd.jobs) : 0;

		/* gded stays the parent of running jobs; their groups live
		 * inside ours, which therefore stays. */
		if (running)
			log_info("%zu jobs still running: cgroup %s left in place", running,
				 nd.cgroup_parent);
		else if ((r = cgroup_node_teardown(config->cgroup_root, nd.cgroup_mode,
						   nd.cgroup_parent)) < 0 && r != -EBUSY)
			log_warn("cgroup teardown of %s: %s", nd.cgroup_parent, strerror(-r));
	}
	jobs_destroy(nd.jobs);
	/* The kept inodes go with this qnoded: the directory is left as the
	 * jobs left it (empty when none runs, so a jobs tmpfs unmounts). */
	if (nd.jobs_dirfd >= 0)
		jobfile_spares_clear(nd.jobs_dirfd);
	noded_jobs_tmpfs_release(&nd);
	sd_event_unref(nd.event);
	usercache_destroy(nd.users);
	nodefiles_close(nd.nodefiles);
	if (nd.jobs_dirfd >= 0)
		close(nd.jobs_dirfd);
	if (nd.held_dirfd >= 0)
		close(nd.held_dirfd);
	noded_cgroup_unlock(&nd);
	if (io_topo)
		hwloc_topology_destroy(io_topo);
	free(nd.topo_xml);
	free(nd.gpus);
	config_destroy(config);
	return status;
}
