/* SPDX-License-Identifier: MIT */
/* qsub's job description: options and #QP/#PBS directives into one struct, purely. */
#ifndef QPOOL_JOBSCRIPT_H
#define QPOOL_JOBSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define JOBSPEC_NAME_MAX 255      /* bytes in a job name */
#define JOBSPEC_NCPUS_MAX 1000000 /* sanity bound; the server checks the queue */

/* A -v entry: value NULL means "take it from qsub's environment". */
struct jobspec_var {
	char *name;
	char *value;
};

/* One kind of chunk of -l select= (PBS Pro) or -l nodes= (Torque): count
 * chunks of ncpus CPUs each, mem bytes each (0: none), mpiprocs MPI slots
 * each (default ncpus), ompthreads (0: unset). */
struct jobspec_chunk {
	int64_t count;
	int64_t ncpus;
	int64_t ngpus;              /* 0: none */
	int64_t mem;
	int64_t mpiprocs;
	int64_t ompthreads;
	/* Its own features when the chunks of a select= differ in them
	 * (select=1:bigmem=true+2:ncpus=1): canonical, comma-separated; ""
	 * none. Features all chunks share are the job's constraint. */
	char features[128];
};

#define JOBSPEC_CHUNKS_MAX 64     /* kinds of chunk in one select (joined by '+') */

/* -l place= arrangement; JOBSPEC_PLACE_UNSET when not given. */
enum jobspec_place {
	JOBSPEC_PLACE_UNSET = -1,
	JOBSPEC_PLACE_FREE,
	JOBSPEC_PLACE_SCATTER,
	JOBSPEC_PLACE_PACK,
};

/* What qsub options and directives say. Tri-state members are -1 when
 * unset; strings are NULL when unset; all strings are owned. */
struct jobspec {
	char *name;                 /* -N */
	char *queue;                /* -q */
	int64_t ncpus;              /* -l ncpus=N, -1 unset */
	int64_t ngpus;              /* -l ngpus=N (with chunks: their total), -1 unset */
	int64_t mem;                /* -l mem=SIZE (bytes), -1 unset */
	int mem_node;               /* sbatch --mem=0: a whole node's memory: 1, -1 unset */
	int64_t pmem;               /* -l pmem=SIZE: per process (Torque), -1 unset */
	int64_t walltime;           /* -l walltime=TIME (seconds), -1 unset */
	char *stdout_path;          /* -o, as given (may be relative) */
	char *stderr_path;          /* -e */
	int join;                   /* -j oe: 1, -j n: 0, -1 unset */
	int hold;                   /* -h: 1, -1 unset */
	int rerunnable;             /* -r y|n: 1|0, -1 unset */
	int export_all;             /* -V: 1, -1 unset */
	struct jobspec_var *vars;   /* -v, in the order given */
	size_t n_vars;
	/* PBS attributes qpool records (qstat -f shows them) under their PBS
	 * names: Account_Name, Project, Mail_Points, Resource_List.place, ...
	 * One entry per name, the last set wins. */
	struct jobspec_var *attrs;
	size_t n_attrs;
	/* One line each, for qsub's standard error: what was accepted but is
	 * not enforced ("-l pmem=2gb: recorded, not enforced"). */
	char **warnings;
	size_t n_warnings;
	char *shell;                /* -S: the interpreter, over the #! line */
	char *prefix;               /* -C: directive prefix; NULL: #PBS and #QP */
	char *workdir;              /* -d / -w: the job's working directory */
	int workdir_submit;         /* -l wd: 1 (the submission directory), -d: 0, -1 unset */
	char *group;                /* -W group_list=: the group to run with */
	char *start_after;          /* -a [[[[CC]YY]MM]DD]hhmm[.SS], as given */
	int64_t ompthreads;         /* -l ompthreads=N, -1 unset */
	/* Resource_List.mpiprocs came from a one-chunk select= (its chunk's
	 * slots): a later select=, nodes= or plain ncpus= replaces that
	 * request, its slots with it. An -l mpiprocs= of its own stays. */
	bool mpiprocs_of_select;
	int priority;               /* -p -1024..1023; JOBSPEC_PRIORITY_UNSET */
	int quiet;                  /* -z: 1, -1 unset */
	int interactive;            /* -I: 1, -1 unset */
	int mail;                   /* -m given and not n: 1; -m n: 0; -1 unset */
	/* A request across nodes: more than one chunk. A one-node request
	 * (select=1:..., nodes=1:ppn=N) is plain ncpus/mem and has none.
	 * With chunks, ncpus is their total and mem their total (or -1). */
	struct jobspec_chunk *chunks;
	size_t n_chunks;
	int place;                  /* enum jobspec_place */
	int excl;                   /* place=...:excl 1, :shared 0, -1 unset; 2: excl and the nodes' every CPU (sbatch --exclusive) */
	char *array;                /* -J / -t: the index set, canonical (arrayspec_format) */
	char *depend;               /* -W depend=: canonical (depend_format) */
	int depend_lift;            /* sbatch: after* on a job the pool never had is lifted: 1, -1 unset */
	int block;                  /* -W block=true: 1, false: 0, -1 unset */
	/* Which nodes (lib/nodesel.h): select=...:host=N, vnode=, nodes=N:ppn=
	 * (Torque), sbatch -w: names, comma-separated; sbatch -x; a Slurm
	 * constraint (sbatch -C; chunk features select=...:bigmem=true and
	 * nodes=1:ppn=2:ib are joined into one with '&'). NULL: unset. */
	char *nodelist;
	char *exclude;
	char *constraint;
	/* The GPUs' model (docs/GPUS.md): -l gpu_model=, select=...:gpu_model=,
	 * sbatch --gres=gpu:TYPE:N, --gpus=TYPE:N; canonical (lower-case);
	 * one per job. NULL: any. */
	char *gpu_model;
	/* Pool-wide licenses, Slurm's text (sbatch -L matlab:2,comsol; qsub
	 * -l licenses=...), checked; NULL: none. PBS's -l matlab=2 goes as
	 * Resource_List.matlab, which qpoold reads against [licenses]. */
	char *licenses;
	/* Counted node resources per node (sbatch --gres=nvme:1, --tmp):
	 * "nvme:1,tmp:10G"; NULL: none. PBS's chunk resources
	 * (select=...:nvme=1) go in the constraint; qpoold tells them. */
	char *node_res;
};

/* Sets js's GPU model from val (as what says it): a model name, the same
 * as any already given. 0 or -EINVAL with err. */
int jobspec_gpu_model_set(struct jobspec *js, const char *what, const char *val, struct error *err);

/* "scatter", "pack", "free" (the names of -l place=). */
const char *jobspec_place_name(int place);

#define JOBSPEC_PRIORITY_UNSET (-10000)

/* Sets every member to "unset". */
void jobspec_init(struct jobspec *js);

/* Frees what js owns and re-initialises it. */
void jobspec_clear(struct jobspec *js);

/* The option letters qsub takes, for getopt: with ':' after those that
 * take an argument. */
#define JOBSPEC_OPTSTRING "N:q:l:o:e:j:v:Vhr:m:M:A:P:p:u:S:W:a:zC:d:w:k:Ic:J:t:X"

/* True when opt takes an argument (see JOBSPEC_OPTSTRING); false for the
 * flags (h, V, z, I, X) and for unknown letters. */
bool jobspec_option_has_arg(int opt);

/* Applies one option as qsub and directives spell it: opt is the letter,
 * arg its argument (NULL for -h and -V). Later options override earlier
 * ones; -l and -v accumulate. Returns 0, -EINVAL with err naming the
 * offending text (e.g. "mem=12Q: not a size (e.g. 512M, 8G)"), -ENOMEM. */
int jobspec_option(struct jobspec *js, int opt, const char *arg, struct error *err);

/* Records the reservation js runs in (sbatch --reservation; the
 * attribute "reservation", docs/RESERVATIONS.md). 0 or -ENOMEM. */
int jobspec_reservation_set(struct jobspec *js, const char *name);

/* The recorded PBS attribute name (e.g. "Account_Name"), or NULL. */
const char *jobspec_attr(const struct jobspec *js, const char *name);

/* Overrides dst with every member set in src (command line over
 * directives); src's -v entries are appended after dst's. 0 or -ENOMEM. */
int jobspec_merge(struct jobspec *dst, const struct jobspec *src);

/* The memory a chunk of js asks for, per chunk: its mem, else pmem times
 * its processes (mpiprocs, else ncpus), else 0 (none asked). */
int64_t jobspec_chunk_mem(const struct jobspec *js, const struct jobspec_chunk *c);

/* The memory js asks for in all: -l mem, else what pmem makes of its
 * processes (each chunk's, summed; a one-node job's ncpus), else -1. */
int64_t jobspec_mem(const struct jobspec *js);

/* The job's working directory into buf (len bytes): js->workdir made
 * absolute against cwd (the submitting command's), or cwd when unset.
 * 0 or -ENAMETOOLONG. */
int jobspec_workdir(const struct jobspec *js, const char *cwd, char *buf, size_t len);

/* An output path (-o, -e) as PBS takes it, [host:]path, into buf (len
 * bytes): absolute, a relative path taken from cwd (qsub's directory),
 * with a host: or without. *ret_host_len is the length of the host part
 * at the start of arg (0: none), for the caller to check it names this
 * host. opt ("-o") starts messages. 0, or -EINVAL ("-o host:: no path"),
 * -ENAMETOOLONG, with err set. */
int jobspec_output_path(const char *cwd, const char *opt, const char *arg, char *buf, size_t len,
			size_t *ret_host_len, struct error *err);

/* Checks that text[0..len) is a job script: non-empty, no NUL byte, valid
 * UTF-8. Returns 0 or -EINVAL with err like "line 3: not valid UTF-8". */
int jobscript_check(const char *text, size_t len, struct error *err);

/* Reads all of fd (a script: qsub's, sbatch's) into a malloc'd *ret, up
 * to WIRE_MAX + 1 bytes (enough to tell "too large"). 0, -errno. */
int jobscript_read(int fd, char **ret, size_t *ret_len);


/* Reads the directives at the top of text into js (which the caller has
 * initialised). A directive is a line starting with "#QP" or "#PBS" (or
 * only prefix, when not NULL: qsub -C; "" reads no directive)
 * followed by blanks and options, e.g. `#PBS -l ncpus=4,mem=8G -N "my job"`;
 * words split on blanks, with '...' and "..." quoting and \ escapes, and an
 * unquoted word starting with '#' begins a comment. Reading stops at the
 * first line (after an optional #! line) that is neither blank nor a
 * comment. Returns 0 or -EINVAL with err "line N: ...". */
int jobscript_parse(const char *text, size_t len, const char *prefix, struct jobspec *js,
		    struct error *err);

#endif
