/* SPDX-License-Identifier: MIT */
/* qnoded, the node agent: topology, job files, wrapper launch, qpoold link. */
#ifndef QPOOL_NODED_H
#define QPOOL_NODED_H

#include <hwloc.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "cgroup.h"
#include "config.h"
#include "error.h"
#include "gpu.h"
#include "parse.h"

#define NODED_NAME_MAX 64
/* Where qnoded locks its cgroup parent (noded_cgroup_lock). */
#define NODED_LOCK_DIR "/run/qpool"

/* ---- topology (topo.c) ---- */

struct node_topo {
	struct cpumask cpus;   /* the node's CPUs */
	char mems[256];        /* NUMA nodes of those CPUs, kernel list syntax */
	unsigned packages;     /* packages holding at least one of the CPUs */
	unsigned numa;         /* NUMA nodes holding at least one of the CPUs */
	unsigned cores;        /* cores holding at least one of the CPUs */
	unsigned pus;          /* hardware threads: the CPUs themselves */
	uint64_t mem;          /* bytes: each NUMA node's memory, shared in
	                        * proportion to the node's PUs in it */
};

/* Loads the machine's topology, disallowed CPUs included so a --cpus list
 * can be judged against what the machine has. -errno (hwloc's errno). */
int topo_machine_load(hwloc_topology_t *ret);

/* Describes the node made of want's CPUs (NULL: every CPU the process may
 * use) in topo. -EINVAL with err set when want is empty, names a CPU the
 * topology does not have, or one the process may not use. */
int topo_node_describe(hwloc_topology_t topo, const struct cpumask *want,
		       struct node_topo *ret, struct error *err);

/* The node's memory on the live host (docs/ARCHITECTURE.md, "Memory
 * counted"): the kernel's MemTotal, from proc_root/meminfo, wins when the
 * NUMA nodes hwloc found hold less (memory hot-plugged into a VM is not in
 * any NUMA node's count); t->mem, t's share of the NUMA nodes, becomes
 * the same share of MemTotal. Nothing changes for a topology not of this
 * system (synthetic, XML: a simulated node) or a meminfo that cannot be
 * read. Returns the MemTotal used (bytes), 0 when none was. */
uint64_t topo_node_mem_reconcile(hwloc_topology_t topo, const char *proc_root, struct node_topo *t);

/* The node's features into buf (len bytes): conf's (canonical, from
 * [node] features), then what hwloc tells of the machine for free:
 * arch=NAME (its Architecture, e.g. x86_64) and cpu_vendor=NAME (the
 * first package's CPUVendor, e.g. GenuineIntel), each when hwloc has it
 * and conf does not name that key already. */
void topo_features(hwloc_topology_t topo, const char *conf, char *buf, size_t len);

/* The node made of cpus (a subset of topo's allowed CPUs, as
 * topo_node_describe checked) as hwloc XML for node.register: topo is
 * restricted to cpus, dropping the NUMA nodes that hold none of them, so
 * it is modified. Returns 0 and a string to free(), or -errno. */
int topo_node_xml(hwloc_topology_t topo, const struct cpumask *cpus, char **ret);

/* Loads the whole machine with its important I/O devices (GPUs, NICs)
 * and disallowed CPUs kept (each reader restricts to its own cpuset):
 * what the ranks' XML holds and gpus_find looks in. Once per start
 * (~20-100 ms here with PCI discovery, measured with lstopo). -errno. */
int topo_io_load(hwloc_topology_t *ret);

/* io (topo_io_load's) as hwloc XML at path (0644, written to a temporary
 * name and renamed), for the job's own hwloc users to load instead of
 * discovering (qexec's ranks, docs/PMI.md), in hwloc's v1 format, which
 * hwloc 1.x and 2.x both read. -errno. */
int topo_ranks_xml_export(hwloc_topology_t io, const char *path);

/* topo_io_load, then topo_ranks_xml_export. -errno. */
int topo_ranks_xml_write(const char *path);

/* ---- GPUs (gpus.c) ---- */

/* The node's GPUs from conf ([node] gpus, docs/GPUS.md): "none"; "auto",
 * topo's (topo_io_load's) OS devices nvidiaN and renderDN that are character devices at
 * dev_root/nvidiaN and dev_root/dri/renderDN; or blank-separated words
 * [MODEL:]FILE[,FILE...], each FILE a path or glob(3) pattern of
 * character devices. Each gets its index in that order, its device
 * number, its model (the word's, else hwloc's for its OS device, else
 * unknown), and the locality of topo's OS device of its basename (topo
 * may be NULL: unknown), its CPUs within node_cpus.
 * 0 with *ret (malloc'd, NULL when none) and *ret_n; -errno with err a
 * line naming the file: not a character device, a glob that matches
 * nothing, the same device twice, more than NODE_GPUS_MAX. */
int gpus_find(const char *conf, const char *dev_root, hwloc_topology_t topo, const struct cpumask *node_cpus,
	      struct node_gpu **ret, unsigned *ret_n, struct error *err);

/* ---- node-local job files (jobfiles.c) ---- */

/* The passwd facts a spec needs. */
struct user_info {
	uid_t uid;
	gid_t gid;
	char name[64];
	char home[PATH_MAX];
	char shell[PATH_MAX];
	gid_t *groups;   /* getgrouplist(name, gid): the groups gded gives the job */
	int ngroups;
};

struct usercache;

struct usercache *usercache_create(void);
void usercache_destroy(struct usercache *uc);

/* getpwuid_r and getgrouplist, remembered per uid for a few minutes
 * (~0.12 ms and ~0.5 ms per look-up through nsswitch here, measured), so
 * gded needs neither. -ENOENT when there is no such user. */
int usercache_lookup(struct usercache *uc, uid_t uid, const struct user_info **ret);

/* ---- shared node files (nodefiles.c) ---- */

/* A single-node job's PBS_NODEFILE: <node_dir>/nodefiles/<name>.<ncpus>,
 * root's, 0444, in a directory root's and 0711 (docs/ARCHITECTURE.md "The
 * node file"). */
struct nodefiles;

#define NODEFILES_NCPUS_MAX 65536   /* gded's bound on a one-node file */

/* Makes <node_dir>/nodefiles (0711, ours) and removes from it all but
 * the "<name>.<n>" files, which adopted jobs may read. -errno with err. */
int nodefiles_open(const char *node_dir, const char *name, struct nodefiles **ret,
		   struct error *err);
void nodefiles_close(struct nodefiles *nf);

/* The path (into buf) of the file of ncpus lines "<name>", written the
 * first time this qnoded asks (temporary name and rename), never removed
 * while it runs. -ERANGE for ncpus 0 or above NODEFILES_NCPUS_MAX,
 * -ENAMETOOLONG, or the write's -errno. */
int nodefiles_get(struct nodefiles *nf, uint64_t ncpus, char *buf, size_t size);

/* What a spec says about the node itself. */
struct spec_node {
	const char *name;
	const char *jobs_dir;       /* absolute */
	const char *node_dir;       /* absolute: the node's dir, where task.sock is */
	bool hwloc_xml;             /* node_dir/topology.xml was written (topo_ranks_xml_write) */
	enum cgroup_mode cgroup_mode;
	const char *cgroup_root;
	const char *cgroup_parent;  /* "qpool/<name>" */
	unsigned reclaim_threshold; /* [node] memcg_reclaim_threshold */
	const char *tmpdir;         /* [node] tmpdir: base of each job's TMPDIR */
	const char *prolog, *epilog; /* [node] hooks; "" or NULL: none */
	uint64_t prolog_timeout, epilog_timeout;
	const struct node_gpu *gpus; /* the node's GPUs (gpus_find), n_gpus of them */
	unsigned n_gpus;
	struct nodefiles *nodefiles; /* single-node jobs' shared node files; NULL: one per job */
};

/* "<jobs_dir>/<id>.<ext>" into buf (PATH_MAX). */
void jobfile_path(const char *jobs_dir, int64_t jobid, const char *ext, char *buf);

/* Builds the launch spec (docs/PROTOCOL.md) from a job.launch object: a
 * copy of job plus home, shell, groups, node, script (the .sh path),
 * nodefile (node->nodefiles' shared file for a job on this node only,
 * with nodefile_shared true; else <id>.nodes, gded's to write), result, ctl (gded's control socket), task_socket (when
 * node->node_dir is set), cgroup and times.launch; job's gpus (node
 * indices) become the GPUs' { index, file, major, minor }, and a node
 * with GPUs adds gpus_node (docs/GPUS.md). user is the passwd entry of
 * the job's uid. -EINVAL with err set when job lacks a positive jobid,
 * uid, gid or a script string, when its user is not user->name, or when
 * its gpus name a GPU the node does not have. */
int jobfile_spec_build(const json_t *job, const struct user_info *user,
		       const struct spec_node *node, int64_t launch,
		       json_t **ret, struct error *err);

/* Writes <id>.sh (the script, owned by uid:gid, 0500) and <id>.json (the
 * spec, root 0600, written to a temporary name and renamed so it is whole
 * or absent; not fsynced: after a power loss it has no use) in the jobs
 * directory dirfd. -errno with err set. */
int jobfile_write(int dirfd, int64_t jobid, const char *script, uid_t uid, gid_t gid,
		  const json_t *spec, struct error *err);

/* A spec's size bound: the job's environment and allocation in it. */
#define SPEC_MAX (8u << 20)

/* The job's spec (jobs/<id>.json, root's) into *ret. 0 or -errno. */
int jobfile_spec_read(int dirfd, int64_t jobid, json_t **ret);

/* Reads <id>.result. Returns 0 and the object, or -ENOENT when there is
 * none of this run: no file, one that is not a whole JSON object, or one
 * of another job or of another launch than launch (when both are > 0);
 * the last two are logged (what a crash can leave of a result that was
 * not synced). times.launch is set to launch when launch > 0 and the
 * file has none. */
int jobfile_result_read(int dirfd, int64_t jobid, int64_t launch, json_t **ret,
			struct error *err);

/* fdatasyncs <id>.result: 0 or -errno (-ENOENT: none). */
int jobfile_result_sync(int dirfd, int64_t jobid);

/* Writes result as <id>.result (tmp, fsync, rename): for failures qnoded
 * itself reports, so they survive a restart. */
int jobfile_result_write(int dirfd, int64_t jobid, const json_t *result);

/* A "failed" result with reason and times.launch (when > 0). */
json_t *jobfile_result_failed(int64_t jobid, int64_t launch, const char *reason);

/* times.launch of <id>.json, or 0 when it cannot be read. */
int64_t jobfile_spec_launch(int dirfd, int64_t jobid);

/* times.<stamp> of <id>.json ("dispatch": the run's token, see jobs.c),
 * or 0 when it cannot be read. */
int64_t jobfile_spec_time(int dirfd, int64_t jobid, const char *stamp);

/* Removes <id>.sh .json .result .nodes .gpus .ctl and the .tmp files;
 * missing ones are fine. keep_inodes: the job's gded is known to have
 * ended, so its spec and result may be kept as spares. result_read: its
 * gded's result was read, so only the spec, script and result are left
 * (the .tmp files were renamed into place, and gded removed the others
 * it made before it wrote the result; issue 39: five failing unlinks a
 * job fewer). */
void jobfile_remove(int dirfd, int64_t jobid, bool keep_inodes, bool result_read);
/* Kept inodes (jobfiles.c): unlinks the spares a previous qnoded left;
 * readies <id>.result.tmp from a spare for gded (1) or leaves it to gded's
 * create (0). */
void jobfile_spares_clear(int dirfd);
void jobfile_spares_keep(bool keep);   /* false on a jobs tmpfs: nothing to save */
int jobfile_result_tmp_ready(int dirfd, int64_t jobid);

/* The job ids that have a <id>.json or <id>.result in dirfd, each once,
 * ascending, in *ret_ids (malloc'd). Returns their number or -errno. */
int jobfile_ids(int dirfd, int64_t **ret_ids);

/* A jobs tmpfs is lost with its host; a result on it that qpoold has not
 * taken within a second (jobs.c's sync tick) is copied with its spec to
 * <node_dir>/held on disk, synced, and put back at the next start
 * (docs/ARCHITECTURE.md, "The jobs directory on a tmpfs").
 * jobfile_held_copy: dirfd's ID.json and ID.result into helddirfd, each
 * written to a temporary name, synced and renamed (the caller syncs the
 * directory). 0 or -errno. */
int jobfile_held_copy(int dirfd, int helddirfd, int64_t jobid);
/* Whether helddirfd holds ID.result. */
bool jobfile_held_has(int helddirfd, int64_t jobid);
/* The copies of one job, once qpoold has its result. */
void jobfile_held_remove(int helddirfd, int64_t jobid);
/* At start: each job held whose result dirfd lacks (the tmpfs went with
 * the host) gets its spec and result back there. The copies stay until
 * qpoold has the result. The number put back, or -errno. */
int jobfile_held_restore(int helddirfd, int dirfd);

/* ---- running wrappers in /proc (procscan.c) ---- */

struct proc_gded {
	pid_t pid;
	int64_t jobid;
};

/* True when argv (n_args strings) is exactly `gded|.../gded --spec
 * <jobs_dir>/<id>.json`, optionally followed by `--notify <fd>`; sets
 * *ret_jobid. */
bool procscan_cmdline_match(char *const *argv, size_t n_args, const char *jobs_dir,
			    int64_t *ret_jobid);

/* The gded wrappers of jobs_dir running now: processes under proc_root
 * ("/proc", or a fake tree in tests) whose every uid is 0 (status Uid:, so
 * a user's setuid-root program given gded's argv is not one) and whose
 * command line matches.
 * Returns the count and *ret (malloc'd) or -errno. */
int procscan_gded_find(const char *proc_root, const char *jobs_dir, struct proc_gded **ret);

/* Whether process pid under proc_root is root-owned and runs gded for
 * jobid of jobs_dir: checked again after a pidfd is open, so a recycled
 * pid is never adopted. */
bool procscan_gded_check(const char *proc_root, const char *jobs_dir, pid_t pid, int64_t jobid);

/* Realtime: *ret_rt false with a reason when proc_root's
 * sys/kernel/sched_rt_runtime_us is -1 or self/status lacks CAP_SYS_NICE
 * in CapEff. */
void procscan_rt_check(const char *proc_root, bool *ret_rt, char *ret_reason, size_t len);

/* ---- the realtime probe (rtprobe.c) ---- */

/* Where rtprobe_run stopped. */
enum rtprobe_step {
	RTPROBE_GROUP,    /* making the probe's group */
	RTPROBE_ATTACH,   /* a child joining it */
	RTPROBE_SCHED,    /* the child's sched_setscheduler(SCHED_FIFO) */
};

/* Once at start, where procscan_rt_check says yes: a child in a group
 * made as a realtime job's (CGROUP_JOB_REALTIME, job.0 under parent,
 * given cpus and mems) asks for SCHED_FIFO. 0 when it got it; else
 * -errno, *ret_step and err. The group is removed in any case. */
int rtprobe_run(const char *root, enum cgroup_mode mode, const char *parent, const char *cpus,
		const char *mems, enum rtprobe_step *ret_step, struct error *err);

/* rtprobe_run's answer r (0 or -errno) at step as the node's rt: true, or
 * false with the one-line reason the node advertises (rt_reason). detail
 * (rtprobe_run's err text, may be NULL) names an unexpected failure. */
bool rtprobe_verdict(enum cgroup_mode mode, enum rtprobe_step step, int r, const char *detail,
		     char *ret_reason, size_t len);

/* ---- launching a wrapper (launch.c) ---- */

/* Starts the wrapper of the spec at spec_path. Returns 0, the pid, a
 * pidfd that becomes readable when it ends, the socket on which it says
 * the job's processes are gone (one byte; -1 when there is none) and
 * whether it is qnoded's own child (its status waitid's; a wrapper the
 * resident launcher forked is the launcher's), or -errno with err set.
 * The one seam between qnoded and processes, so a simulated launcher can
 * take its place. */
typedef int (*launch_f)(void *data, const char *spec_path, pid_t *ret_pid, int *ret_pidfd,
			int *ret_notify, bool *ret_child, struct error *err);

/* The real one: posix_spawn of `gded --spec <path> --notify 3` (data is
 * the gded path), a new session, signals unblocked, stdin from /dev/null,
 * fd 3 one end of a socket pair. */
int launch_gded(void *data, const char *spec_path, pid_t *ret_pid, int *ret_pidfd, int *ret_notify,
		bool *ret_child, struct error *err);

/* The resident launcher (docs/ARCHITECTURE.md): `gded --launcher`, exec'ed
 * once, forks each job's wrapper on request, with the command line and
 * state launch_gded's exec would give it. */
struct launcher {
	const char *gded;
	const char *proc_root;
	const char *jobs_dir;
	pid_t pid;              /* 0: not running */
	int pidfd;              /* -1 when not running */
	int sock;               /* requests and answers; -1 when not running */
	int64_t retry_mono;     /* after a failure: exec gded per job until then */
	rlim_t nofile;          /* the wrappers' soft RLIMIT_NOFILE: qnoded's at
	                         * start, before it raised its own; 0: qnoded's */
	const char *wrappers_procs;  /* cgroup.procs of the group each spawned
	                              * gded (the launcher, and so its forks) is
	                              * moved to at once; NULL: qnoded's own */
	const char *cg_mode;    /* the node's cgroups, which the launcher holds
	                         * open for its wrappers (cgroup_parents_hold):
	                         * cgroup_mode_name; NULL: none */
	const char *cg_root;
	const char *cg_parent;
};

/* Starts l's launcher and waits for its ready word. 0, or -errno (logged;
 * jobs then get an exec'ed gded for a while). */
int launcher_start(struct launcher *l);

/* Closes its socket (it exits; its wrappers live on) and reaps it. */
void launcher_stop(struct launcher *l);

/* A launch_f (data: struct launcher): the launcher forks the wrapper; when
 * it is not running (or fails), launch_gded. */
int launch_resident(void *data, const char *spec_path, pid_t *ret_pid, int *ret_pidfd,
		    int *ret_notify, bool *ret_child, struct error *err);

/* gded's path: conf (when not empty), else `gded` next to /proc/self/exe. */
int launch_gded_path(const char *conf, char *buf, size_t len);

/* ---- simulated nodes (sim.c) ---- */

/* Describes the node of an hwloc synthetic topology ("pack:2 numa:4
 * core:16 pu:2"): all its PUs. -EINVAL/-ERANGE with err set. */
int sim_topology_describe(const char *synthetic, struct node_topo *ret, struct error *err);

/* The GPUs of a simulated node from --sim-gpus: "N" (N GPUs of no
 * model) or "MODEL:N[,MODEL:N...]", at most NODE_GPUS_MAX in all, the
 * first NUMA node's... none: each is /dev/nvidiaI, major 195 minor I, of
 * unknown locality (nothing opens them: a simulated job runs nothing).
 * 0 with *ret (malloc'd) and *ret_n; -EINVAL with err; -ENOMEM. */
int sim_gpus_make(const char *spec, struct node_gpu **ret, unsigned *ret_n, struct error *err);

struct noded;

/* What a simulated node carries beside its topology, from the --sim-*
 * options: the one place a new kind (counted resources) is added. */
struct sim_dress {
	const char *features;    /* canonical comma list ("" none) */
	const char *gpus;        /* --sim-gpus (sim_gpus_make); NULL: none */
};

/* Gives nd (simulated) what d says: its features and GPUs. 0, or -errno
 * with err. */
int sim_node_dress(struct noded *nd, const struct sim_dress *d, struct error *err);

/* The result of a simulated job: exited 0 (sig 0) or killed by sig, every
 * stamp from the event loop's clock: wrap, fenced and exec at start,
 * exit and released at end. NULL when out of memory. */
json_t *sim_result(int64_t jobid, int64_t launch, int64_t start_wall, int64_t start_mono,
		   int64_t end_wall, int64_t end_mono, int sig);

/* ---- the daemon ---- */

struct jobs;
struct link;
struct tasks;

/* Everything qnoded is; filled by main.c, one per process. */
struct noded {
	const struct config *config;
	const char *name;
	const char *config_file;        /* the file it read: QPOOL_CONF of its hooks */
	const char *proc_root;          /* "/proc" */
	sd_event *event;
	struct node_topo topo;
	char *topo_xml;                 /* topo_node_xml's, for node.register; a
	                                 * simulated node's synthetic text */
	struct node_gpu *gpus;          /* gpus_find's; NULL: none */
	unsigned n_gpus;
	bool simulated;                 /* jobs only wait their walltime */
	char features[1200];            /* sent at registration: [node] features or
	                                 * --sim-features, then hwloc's (arch=, cpu_vendor=) */
	enum cgroup_mode cgroup_mode;
	char cgroup_parent[PATH_MAX];   /* <config cgroup_parent>/<name> */
	int cgroup_lock_fd;             /* noded_cgroup_lock's */
	char cgroup_lock_path[PATH_MAX];
	bool rt;
	char rt_reason[160];
	char node_dir[PATH_MAX];
	bool hwloc_xml;                 /* node_dir/topology.xml written at start */
	char jobs_dir[PATH_MAX];
	int jobs_dirfd;
	bool jobs_tmpfs;                /* jobs_dir is a tmpfs (config jobs_tmpfs) */
	int held_dirfd;                 /* node_dir/held: results a jobs tmpfs holds, on
	                                 * disk (jobfile_held_copy); -1 on a simulated node */
	char gded[PATH_MAX];
	char wrappers_procs[PATH_MAX];  /* cgroup.procs of the wrappers' group
	                                 * (launcher.wrappers_procs); "" for none */
	launch_f launch;
	void *launch_data;
	struct usercache *users;
	struct nodefiles *nodefiles;    /* NULL on a simulated node */
	struct jobs *jobs;
	struct link *link;
	struct tasks *tasks;            /* NULL on a simulated node */
	/* A job's gded answered about its control socket, or ended (jobs.c
	 * hears it on the notify socket): the task starts that wait for one
	 * are tried again at once. Set by tasks_create; NULL: none. */
	void (*ctl_ready)(struct noded *nd);
	struct health *health;          /* [node] health_check; NULL: none */
};

/* Creates <state_dir>/nodes/<name>/ (0755) and its jobs/ (0711), sets
 * nd->node_dir, jobs_dir and opens jobs_dirfd. -errno with err set. */
int noded_dirs_open(struct noded *nd, struct error *err);

/* jobs_tmpfs: unmounts the jobs directory's tmpfs when it is empty (its
 * fd closed first); left mounted (and reused at the next start) when job
 * files remain. */
void noded_jobs_tmpfs_release(struct noded *nd);

/* Takes an exclusive lock for the node's cgroup parent, a file under
 * lock_dir ("/run/qpool") named after it, so two qnoded (of one pool or
 * two) can never share a node group on this host. -EBUSY with err naming
 * the holder's pid when another holds it; -errno with err otherwise. */
int noded_cgroup_lock(struct noded *nd, const char *lock_dir, struct error *err);

/* Removes the lock file and lets go of it; nothing when not held. */
void noded_cgroup_unlock(struct noded *nd);

/* A node name is a path component and a cgroup name: 1-63 of [A-Za-z0-9._-],
 * not starting with '.' or '-'. */
bool noded_name_valid(const char *name);

/* qnoded --cgroup-holder (noded/holder.c): sets up the cgroup v2 group
 * qnoded's node groups go under (cgroup_holder_setup), notifies systemd,
 * and waits for SIGTERM. The exit status. */
int noded_cgroup_holder_run(void);

/* ---- jobs (jobs.c) ---- */

/* Creates the job table and takes over what a previous qnoded left in the
 * jobs directory: results to report, running wrappers to adopt, and
 * wrappers that vanished (reported failed). */
int jobs_create(struct noded *nd, struct jobs **ret);

/* Stops watching; never signals a wrapper. */
void jobs_destroy(struct jobs *js);

/* Number of wrappers still running. */
size_t jobs_running_count(const struct jobs *js);

/* New arrays for node.register: ids of running jobs, and the results not
 * yet acknowledged. */
json_t *jobs_running_json(const struct jobs *js);
json_t *jobs_results_json(const struct jobs *js);

/* job.launch with its receive stamp; job.signal. Bad input is logged. */
void jobs_launch(struct jobs *js, const json_t *msg, int64_t launch);
void jobs_signal(struct jobs *js, const json_t *msg);
/* job.go (go) or job.drop: a launch held until its dispatch's commit is
 * released, or ended unstarted. The link lost: every held one ends so. */
void jobs_release(struct jobs *js, const json_t *msg, bool go);
void jobs_link_lost(struct jobs *js);

/* The link is registered: send job.done for every finished job. */
void jobs_results_send(struct jobs *js);

/* For a remote start into job jobid: whether its wrapper runs here and
 * has not said the job's processes are gone; *ret_dispatch is its run
 * token (times.dispatch). */
bool jobs_task_check(const struct jobs *js, int64_t jobid, int64_t *ret_dispatch);
/* Asks the job's gded to make its control socket (docs/PARALLEL.md), once:
 * 0, its answer to come on the notify socket (tasks_ctl_ready); -ENOENT
 * when there is none to ask on (an adopted job, whose gded made it when
 * its qnoded went), -EIO when gded answered that it could not. */
int jobs_ctl_ask(struct jobs *js, int64_t jobid);

/* ---- remote starts (tasks.c) ---- */

/* Listens on <node dir>/task.sock (0666) for the agents of the node's
 * jobs (qpool-rsh, pbsdsh): finds each caller's job from its cgroup,
 * refuses with one line what it must (docs/PARALLEL.md, "Remote start"),
 * and routes task.* between the agents, the jobs' gded control sockets
 * (jobs/<id>.ctl) and qpoold. Sets nd->tasks. -errno with err set. */
int tasks_create(struct noded *nd, struct tasks **ret, struct error *err);
/* Kills the tasks whose streams it carried (they could not be read
 * again), then closes everything. */
void tasks_destroy(struct tasks *ts);
/* The job whose group under nd's cgroup parent holds pid: from the
 * process's /proc/PID/cgroup line under nd->proc_root (v1: the memory
 * hierarchy, which every job group has; v2: the unified one), confirmed
 * in that group's cgroup.procs under the config's cgroup_root, so a
 * look-alike group elsewhere (a user's delegated v2 subtree named
 * qpool/n1/job.7) proves nothing. 0 and *ret; -ESRCH when pid is in no
 * job of the node, -EOPNOTSUPP in cgroup mode none. */
int tasks_job_of_pid(const struct noded *nd, pid_t pid, int64_t *ret);
/* A task.* frame from qpoold (task.start, task.started, task.out,
 * task.exit, task.in, task.signal). Bad input is dropped. */
void tasks_link_frame(struct tasks *ts, const char *op, const json_t *msg);
/* The link to qpoold dropped: tasks routed through it end (agents here
 * hear task.exit signal 9; tasks here for other nodes are killed). */
void tasks_link_lost(struct tasks *ts);
/* nd->ctl_ready: the task starts that wait for a control socket are
 * tried again at once. */
void tasks_ctl_ready(struct noded *nd);

/* ---- the health check (health.c) ---- */

struct health;

/* Runs [node] health_check at once and every health_check_interval,
 * telling qpoold each verdict (node.health). *ret NULL without one. */
int health_create(struct noded *nd, struct health **ret);
void health_destroy(struct health *h);

/* ---- the qpoold link (link.c) ---- */

/* A reply to a request (NULL when the connection went away first); arg is
 * what link_call was given. */
typedef void (*link_reply_f)(struct noded *nd, const json_t *reply, int64_t arg);

/* What the link hands up (nodeops.c fills it; link_create keeps it, not a
 * copy): the link calls no other part of qnoded by name, so jobs.c and
 * tasks.c, which send through it, sit above it. */
struct link_op {
	const char *name;   /* an op, or a family ending in '.' ("task.") */
	/* stamp: when its bytes arrived (CLOCK_REALTIME ns). */
	void (*handle)(struct noded *nd, const char *op, const json_t *msg, int64_t stamp);
};
struct link_handlers {
	const struct link_op *ops;   /* the ops qpoold may send; a NULL name ends them */
	/* node.register's "running" and "results" (new references), and how
	 * many run (for the log line once registered). */
	json_t *(*running_json)(struct noded *nd);
	json_t *(*results_json)(struct noded *nd);
	size_t (*running_count)(struct noded *nd);
	/* Registered, or a heartbeat answered ok: the results qpoold has not
	 * acknowledged go (again). */
	void (*results_send)(struct noded *nd);
	/* The link, registered, went down. */
	void (*lost)(struct noded *nd);
};
/* The handlers of a real or simulated node (nodeops.c). */
extern const struct link_handlers nodeops_link_handlers;

/* Starts connecting (at once, then every 0.2 s backing off to 1 s). */
int link_create(struct noded *nd, const struct link_handlers *h, struct link **ret);
/* As link_create, on fd, a stream already connected to qpoold that the
 * caller vouches for (no peer check; tests/unit/test_noded_link.c holds
 * the other end of a socketpair): node.register goes at once. fd is the
 * link's, closed on failure too. */
int link_create_fd(struct noded *nd, const struct link_handlers *h, int fd, struct link **ret);
void link_destroy(struct link *l);

/* True once node.register was answered ok on the current connection. */
bool link_registered(const struct link *l);

/* Sends req (reference stolen) with a fresh id; cb (may be NULL) gets the
 * reply. -ENOTCONN when not registered. */
int link_call(struct link *l, json_t *req, link_reply_f cb, int64_t arg);

/* Sends msg (reference stolen) with id 0: a frame that gets no reply
 * (task.* routing). -ENOTCONN when not registered. */
int link_notify(struct link *l, json_t *msg);

/* Bytes queued for qpoold and not yet written (0 without a link). */
size_t link_pending(const struct link *l);

#endif
