/* SPDX-License-Identifier: MIT */
/* gded, the per-job wrapper: what to run (from a launch spec), run it fenced, report. */
#ifndef QPOOL_GDED_H
#define QPOOL_GDED_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "error.h"
#include "parse.h"

#define GDED_PIDS_MAX_DEFAULT 4096
#define GDED_KILL_GRACE_DEFAULT 10
#define GDED_UMASK_DEFAULT 022
#define GDED_PATH_DEFAULT "/usr/local/bin:/usr/bin:/bin"
/* qsig's path (docs/PROTOCOL.md, job.signal): gded forwards SIGRTMIN + N
 * to the job's process group as signal N, for N in 1..30; its own SIGTERM
 * keeps meaning "cancel". */
#define GDED_SIGFWD_MIN (SIGRTMIN + 1)
#define GDED_SIGFWD_MAX (SIGRTMIN + 30)

/* The queue's reserve (docs/PROTOCOL.md job.launch). gded applies the
 * cpus it is given in every case (qpoold decides who gets which);
 * realtime adds SCHED_FIFO/RR at rt_priority. */
enum gded_reserve {
	GDED_RESERVE_NONE,        /* the null wrapper: accounting group, cpus given */
	GDED_RESERVE_EXCLUSIVE,
	GDED_RESERVE_REALTIME,
};

/* One node of a job's allocation (docs/PARALLEL.md), job order. */
struct gded_alloc {
	const char *node;         /* its name, as in PBS_NODEFILE */
	uint64_t ncpus;
	uint64_t mpiprocs;        /* MPI slots: its lines in PBS_NODEFILE */
	uint64_t ompthreads;      /* 0: ncpus / mpiprocs */
	uint64_t mem;             /* bytes; 0: none */
	const char *addr;         /* IPv4 address qpoold sees its link at (QPOOL_NODE_ADDR), or NULL */
	uint64_t gpus;            /* its GPUs' node indices, bit i: index i (PBS_GPUFILE) */
};

/* One GPU of the job's own on this node (docs/GPUS.md, spec `gpus`). */
struct gded_gpu {
	unsigned index;           /* the node's index, < GDED_GPUS_MAX */
	const char *file;         /* its device file, for the record */
	struct cgroup_dev dev;
};
#define GDED_GPUS_MAX CGROUP_DEVS_MAX   /* a node's GPUs (NODE_GPUS_MAX) */

/* Bounds on an allocation gded accepts: entries, and PBS_NODEFILE lines. */
#define GDED_ALLOC_MAX 65536
#define GDED_SLOTS_MAX (1u << 20)

/* One job, filled from a launch spec (gded_spec_parse) or from by-hand
 * options (gded_byhand_run). Strings point into `owner` (or argv) and live
 * as long as it does; env and groups are owned. */
struct gded_job {
	json_t *owner;            /* the parsed spec, or NULL */
	uint64_t jobid;
	int64_t launch;           /* times.launch, which run of the job this is:
	                           * echoed in the result (jobfiles.c reads it back) */
	const char *name;         /* PBS_JOBNAME */
	const char *queue;
	const char *node;         /* node name, for the nodefile */
	const char *user;
	uid_t uid;
	gid_t gid;
	gid_t *groups;            /* the job's groups as qnoded resolved them
	                           * (owned); NULL: initgroups(user, gid) */
	size_t ngroups;
	const char *home;
	const char *shell;
	const char *workdir;
	const char *script;       /* path of the script the shell runs */
	const char *stdout_path;
	const char *stderr_path;  /* ignored when join */
	bool join;
	mode_t umask;             /* the submitter's, set before the outputs
	                           * are opened; GDED_UMASK_DEFAULT if absent */
	char **env;               /* "KEY=VALUE" from the spec, NULL-terminated */
	uint64_t ncpus;
	uint64_t mem;             /* bytes; 0: no limit */
	uint64_t walltime;        /* seconds; 0: none */
	uint64_t kill_grace;      /* seconds between SIGTERM and SIGKILL */
	struct end_notice notice; /* Resource_List.signal: sig 0 for none */
	uint64_t pids_max;        /* 0: no limit */
	const char *cpus;         /* kernel list, or NULL */
	const char *mems;         /* kernel list, or NULL */
	const char *nodefile;     /* path to write, or NULL */
	bool nodefile_shared;     /* nodefile is qnoded's shared one (root's,
	                           * 0444, already whole): not written */
	const char *result;       /* result path (written via <result>.tmp) */
	enum gded_reserve reserve;
	int rt_policy;            /* SCHED_FIFO or SCHED_RR, for realtime */
	int rt_priority;          /* 1..99, for realtime */
	char *const *argv;        /* by hand: the command, run as root with
	                           * gded's stdio and environment; NULL: the
	                           * spec's script as the user */
	enum cgroup_mode cg_mode;
	const char *cg_root;
	const char *cg_parent;
	unsigned cg_reclaim_threshold; /* cgroup_job_reclaim_threshold */
	/* PBS: from the launch spec and the attributes qsub recorded. */
	const char *server;       /* in PBS_JOBID (ID.server); NULL: the id */
	const char *tmpdir_base;  /* where TMPDIR is made; NULL: none */
	const char *prolog;       /* the node's hooks (qpool-hooks(5)); NULL: none */
	const char *epilog;
	uint64_t prolog_timeout;  /* seconds; 0: the default */
	uint64_t epilog_timeout;
	const char *pbs_shell;    /* qsub -S (Shell_Path_List), or NULL */
	const char *ompthreads;   /* -l ompthreads (OMP_NUM_THREADS), or NULL */
	const char *group;        /* -W group_list: the group to run with, or NULL */
	const char *sendmail;     /* the MTA for -m, or NULL: no mail */
	const char *mail_points;  /* -m: letters of abe, or NULL */
	const char *mail_users;   /* -M, or NULL: the user */
	bool interactive;         /* qsub -I: a login shell on a pty, no script */
	bool gated;               /* held after the fence until qnoded's go (--notify) */
	bool interactive_command; /* qsub -I -- CMD: the script (it execs CMD) on the pty */
	/* A job across nodes (docs/PARALLEL.md): the whole allocation and
	 * this node's place in it. nalloc 0: a one-node job. */
	struct gded_alloc *alloc; /* owned; names point into owner */
	size_t nalloc;
	uint64_t node_index;      /* 0: the primary, which runs the script */
	const char *ctl;          /* the control socket to serve, or NULL */
	const char *task_socket;  /* qnoded's task socket (QPOOL_TASK_SOCKET), or NULL */
	const char *hwloc_xml;    /* the node's topology as hwloc XML (QPOOL_HWLOC_XML), or NULL */
	uint64_t array_id;        /* a subjob of a job array: the array's id; 0: none */
	uint64_t array_index;     /* ... and its index (PBS_ARRAY_INDEX) */
	/* GPUs (docs/GPUS.md): the job's own on this node, in the spec's
	 * order (CUDA_VISIBLE_DEVICES k is gpus[k]), and every GPU of the
	 * node, which the fence denies but the job's own. Owned. */
	struct gded_gpu *gpus;
	size_t ngpus;
	struct cgroup_dev *gpus_node;
	size_t ngpus_node;
};

/* A sister: a node of a multi-node job other than the first. It fences
 * its share and runs only the tasks that come on its control socket. */
static inline bool gded_job_sister(const struct gded_job *job)
{
	return job->nalloc > 1 && job->node_index > 0;
}

enum gded_status {
	GDED_STATUS_EXITED,
	GDED_STATUS_SIGNALED,
	GDED_STATUS_FAILED,
};

enum gded_stamp {
	GDED_STAMP_WRAP,
	GDED_STAMP_FENCED,
	GDED_STAMP_EXEC,
	GDED_STAMP_EXIT,
	GDED_STAMP_RELEASED,
	GDED_STAMP_N,
};

struct gded_result {
	uint64_t jobid;
	int64_t launch;           /* the spec's times.launch; 0: none */
	enum gded_status status;
	int exit_status;          /* EXITED */
	int exit_signal;          /* SIGNALED */
	bool timeout;
	bool cancelled;
	bool oom;
	bool sister;              /* the result of a sister (docs/PARALLEL.md) */
	bool node_fault;          /* the node, not the job, failed the launch (its
	                           * cpuset read-back, the prolog): "drain" and "requeue" */
	bool prolog_failed;       /* ... the prolog did: qpoold counts it (prolog_failures_max) */
	bool not_started;         /* held, then dropped: "requeue", no mail */
	bool drain;               /* the node failed after the job (the epilog):
	                           * "drain" with drain_reason, the result stands */
	char drain_reason[256];
	char reason[256];         /* "" or one line */
	int exec_errno;           /* execve's errno when the job could not be executed */
	uint64_t cpu_ns;
	uint64_t mem_peak;
	uint64_t suspended_ns;    /* time frozen (suspend), not in its walltime */
	int64_t wall[GDED_STAMP_N];   /* ns since the epoch; 0: not reached */
	int64_t mono[GDED_STAMP_N];   /* CLOCK_MONOTONIC ns */
};

/* Fills job from a launch spec object (docs/PROTOCOL.md). A missing
 * required member or a member of the wrong type is -EINVAL with err
 * naming it. On success job->owner holds a reference to spec. */
int gded_spec_parse(json_t *spec, struct gded_job *job, struct error *err);

/* Reads and parses the spec file at path. 0, or -errno with err set. */
int gded_spec_load(const char *path, struct gded_job *job, struct error *err);

/* Frees what gded_spec_parse allocated; the struct may be reused. */
void gded_job_clear(struct gded_job *job);

/* The devices the job's fence denies: the node's GPUs that are not the
 * job's, into deny (room for GDED_GPUS_MAX). Their number; 0: no fence. */
size_t gded_gpus_denied(const struct gded_job *job, struct cgroup_dev *deny);

/* Whether the job has a GPU on any node (then PBS_GPUFILE is written). */
bool gded_job_has_gpus(const struct gded_job *job);

/* Builds the job's environment: the spec's env, then HOME USER LOGNAME
 * SHELL, PATH (default unless env has one), QPOOL_* and PBS_* variables,
 * NCPUS, OMP_NUM_THREADS, TMPDIR when tmpdir is not NULL (the directory
 * gded made), and the GPU variables (gded_gpuenv_add; the spec's env
 * never sets those). Returns a NULL-terminated array (free with
 * gded_env_free) or NULL on ENOMEM. */
char **gded_env_build(const struct gded_job *job, const char *tmpdir);
void gded_env_free(char **env);

/* The launcher variables of MPI (wrappers/mpienv.c; docs/ARCHITECTURE.md,
 * "MPI inside a job"): Open MPI's plm_rsh_agent, default hostfile, pml;
 * hydra's launcher, its exec and host file; each set through set(e, ...)
 * unless has(e, name) says the job's environment has it already. Nothing
 * without a node file. 0, or -1 when set failed. */
typedef bool (*gded_env_has_f)(const void *e, const char *name);
typedef int (*gded_env_set_f)(void *e, const char *name, const char *value);
int gded_mpienv_add(const struct gded_job *job, gded_env_has_f has, gded_env_set_f set, void *e);
/* Finds the agent's path once, for every job this process forks. */
void gded_mpienv_prepare(void);
/* Once, before the wrappers fork (the resident launcher): what spawn.c
 * asks of the host (which signals have a handler, for its child to put
 * back; fs.suid_dumpable). Each wrapper asks again otherwise. */
void gded_spawn_init(void);

/* Slurm's job variables (wrappers/slurmenv.c): SLURM_JOB_ID, the node
 * list in Slurm's compressed form, the counts, SLURM_TASKS_PER_NODE in
 * its "2(x3)" form, the array's ids, ...; set over what the job's
 * environment has, but SLURM_NTASKS/NPROCS when sbatch sent them (the
 * request's word). 0, or -1 when out of memory. */
int gded_slurmenv_add(const struct gded_job *job, gded_env_has_f has, gded_env_set_f set, void *e);

/* A task's environment (docs/PARALLEL.md task.start): base (the job's,
 * from gded_env_build), PBS_TASKNUM set to tasknum, then over's members
 * (an object of strings, names already checked; NULL: none) on top, but
 * the batch system's own (PBS_* but PBS_TASKNUM, QPOOL_*, TMPDIR, HOME,
 * USER, LOGNAME, SHELL, HOSTNAME, NCPUS, the MPI launchers' hostfile, the
 * GPU variables), which stay this node's.
 * NULL-terminated, free with gded_env_free; NULL on ENOMEM. */
char **gded_env_task(char *const *base, const json_t *over, const char *tasknum);

/* Runs the job to its end: cgroup, fork, drop to the user, exec, wait,
 * kill stragglers, read usage, remove the cgroup. res is always filled;
 * a job that could not start is status FAILED with res->reason. The
 * caller sets the WRAP stamps and blocks SIGTERM and SIGCHLD first (so a
 * cancel during set-up is seen). Returns 0, or -errno with err set when
 * gded itself hit trouble, e.g. a cgroup it could not remove (res is
 * still the job's true result). */
int gded_run(const struct gded_job *job, struct gded_result *res, struct error *err);

/* Opens /dev/null on whichever of fds 0-2 is closed: the job's stdio are
 * dup2'ed onto 0-2 in the child, and an output file opened on a closed
 * one would be clobbered. */
void gded_stdio_ensure(void);
/* --notify FD: a socket to which gded writes one byte once the job's
 * processes are all gone (before its groups are removed and its result
 * written), so qnoded can hand its CPUs back early. */
void gded_notify_set(int fd);

/* gded --launcher FILLER (wrappers/launcher.c), qnoded's resident
 * launcher: on the socket sock, one request per job (the spec path, the
 * notify socket as an fd); forks a wrapper that runs job_main(spec, 3)
 * with the command line `argv[0] --spec PATH --notify 3` (written over
 * its own, which FILLER makes long enough), answers {errno, pid} and its
 * pidfd, reaps its children, and returns at EOF. docs/ARCHITECTURE.md. */
int gded_launcher_run(int argc, char **argv, int sock, int (*job_main)(const char *spec, int notify_fd));

/* gded by hand, the main of gded-byhand (which gded execs for that form):
 * parses the options, picks the CPUs, runs the command under the same
 * fence as a job and cleans up.
 * Returns gded's exit status: the command's, 128+signal, or
 * enum gded_byhand_exit. */
int gded_byhand_main(int argc, char **argv);

/* Writes res as JSON to <path>.tmp, fsyncs, renames to path. */
int gded_result_write(const char *path, const struct gded_result *res, struct error *err);

/* The result as a JSON object (new reference), NULL on ENOMEM. */
json_t *gded_result_json(const struct gded_result *res);

/* The script's #! line, as the kernel reads it: the interpreter (an
 * absolute path), and the rest of the line (trimmed) as its one
 * argument; false when the script has none. qsub -S overrides it, and
 * without either the user's login shell runs the script (as PBS does).
 * line is cut in place at the end of its first line. */
bool gded_shebang_parse(char *line, char **ret_interp, char **ret_arg);
/* A job's script that is one plain command runs without its shell
 * (docs/ARCHITECTURE.md, "The job's shell, only when it needs one").
 *
 * gded_script_simple: text holds the script's len bytes and room for one
 * more; it is cut in place. *ret_interp and *ret_arg are always its #!
 * line (gded_shebang_parse; NULL when none). Returns the command's argc
 * (argv filled, NULL-terminated, at most max - 1 words) when a plain
 * shell would do nothing but run that program: an optional #! naming a
 * plain shell alone, comments and blank lines, and one line of words
 * made only of [A-Za-z0-9_./,:+=@%-], the first neither an assignment
 * nor a shell builtin or reserved word (but true and false with no
 * argument, echo with no option). 0 when the script needs its shell. */
int gded_script_simple(char *text, size_t len, char **ret_interp, char **ret_arg, char **argv, int max);
/* Whether path is a shell that runs such a command as execve would: sh,
 * bash or dash, by their usual paths. */
bool gded_shell_is_plain(const char *path);
/* False when envp has a variable that changes how bash runs even a plain
 * command (BASH_ENV, SHELLOPTS, BASHOPTS, EXECIGNORE, an exported
 * function). */
bool gded_direct_env_ok(char *const *envp);
/* The shell that would run the script: qsub -S's (forced), else its #!
 * line's (interp), else the job's (shell). NULL when the script's plain
 * command must still run in it (gded_shell_is_plain, gded_direct_env_ok)
 * or envp has no PATH; else *ret_path is PATH's value and *ret_bash
 * whether it is bash (/bin/sh may be bash elsewhere: it then sets SHLVL
 * and _ too). */
const char *gded_direct_shell(const char *forced, const char *interp, const char *shell,
			      char *const *envp, const char **ret_path, bool *ret_bash);
/* PATH's entries in turn from *pos (PATH's value at first): the next
 * one's directory in *ret_dir, *ret_len bytes of it (an empty entry is
 * "."). False past the last. */
bool gded_path_next(const char **pos, const char **ret_dir, int *ret_len);
/* The environment the shell would give the program: envp with PWD=cwd
 * and, for bash, SHLVL one higher and "_=" last, a slot of path_max more
 * bytes whose start *ret_underscore points to (the caller writes the
 * program's path after "_=", as bash does). One allocation: free() it.
 * NULL on ENOMEM. */
char **gded_direct_env(char *const *envp, const char *cwd, bool bash, size_t path_max,
		       char **ret_underscore);

#endif
