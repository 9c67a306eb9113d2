/* SPDX-License-Identifier: MIT */
/* The launch spec (docs/PROTOCOL.md "Node-local files") read into a struct gded_job. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "gded.h"
#include "jobattr.h"
#include "jobenv.h"
#include "wire.h"

/* Strict accessors: unlike wire_str/wire_int they tell "absent" (fine
 * for optional members, null counts as absent) from "wrong type" (always
 * an error), so a bad spec names the member at fault. */
static int spec_str(const json_t *o, const char *key, bool required, const char **ret,
		    struct error *err)
{
	json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v)) {
		if (required)
			return error_set(err, -EINVAL, "spec: missing \"%s\"", key);
		return 0;
	}
	if (!json_is_string(v))
		return error_set(err, -EINVAL, "spec: \"%s\" is not a string", key);
	*ret = json_string_value(v);
	return 0;
}

static int spec_u64(const json_t *o, const char *key, bool required, uint64_t *ret,
		    struct error *err)
{
	json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v)) {
		if (required)
			return error_set(err, -EINVAL, "spec: missing \"%s\"", key);
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return error_set(err, -EINVAL, "spec: \"%s\" is not a non-negative integer", key);
	*ret = (uint64_t)json_integer_value(v);
	return 0;
}

static int spec_bool(const json_t *o, const char *key, bool *ret, struct error *err)
{
	json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return error_set(err, -EINVAL, "spec: \"%s\" is not a boolean", key);
	*ret = json_is_true(v);
	return 0;
}

static int spec_env(const json_t *o, struct gded_job *job, struct error *err)
{
	json_t *env = json_object_get(o, "env"), *v;
	const char *key;
	size_t n = 0;

	if (!env || json_is_null(env))
		return 0;
	if (!json_is_object(env))
		return error_set(err, -EINVAL, "spec: \"env\" is not an object");
	/* qpoold refused such a job at submit; a spec written otherwise is
	 * refused here too, before root builds anything from it. */
	if (jobenv_check(env, NULL) == -E2BIG)
		return error_set(err, -E2BIG, "spec: \"env\" is above %d variables or %d KiB",
				 JOBENV_MAX_VARS, JOBENV_MAX_BYTES / 1024);
	job->env = calloc(json_object_size(env) + 1, sizeof(char *));
	if (!job->env)
		return error_set(err, -ENOMEM, "out of memory");
	json_object_foreach(env, key, v) {
		if (!*key || strchr(key, '='))
			return error_set(err, -EINVAL, "spec: env name \"%s\" is not valid", key);
		if (!json_is_string(v))
			return error_set(err, -EINVAL, "spec: env \"%s\" is not a string", key);
		if (asprintf(&job->env[n], "%s=%s", key, json_string_value(v)) < 0) {
			job->env[n] = NULL;
			return error_set(err, -ENOMEM, "out of memory");
		}
		n++;
	}
	return 0;
}

/* groups: qnoded's look-up (docs/PROTOCOL.md), so the child needs no
 * nsswitch; absent, the child asks initgroups as before. */
static int spec_groups(const json_t *o, struct gded_job *job, struct error *err)
{
	json_t *groups = json_object_get(o, "groups"), *v;
	size_t i;

	if (!groups || json_is_null(groups))
		return 0;
	if (!json_is_array(groups))
		return error_set(err, -EINVAL, "spec: \"groups\" is not an array");
	if (json_array_size(groups) > NGROUPS_MAX)
		return error_set(err, -EINVAL, "spec: more than %d groups", NGROUPS_MAX);
	job->groups = calloc(json_array_size(groups) + 1, sizeof(gid_t));
	if (!job->groups)
		return error_set(err, -ENOMEM, "out of memory");
	json_array_foreach(groups, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > UINT32_MAX - 1)
			return error_set(err, -EINVAL, "spec: groups[%zu] is not a group id", i);
		job->groups[i] = (gid_t)json_integer_value(v);
	}
	job->ngroups = json_array_size(groups);
	return 0;
}

static int spec_cgroup(const json_t *o, struct gded_job *job, struct error *err)
{
	json_t *cg = json_object_get(o, "cgroup");
	const char *mode = NULL;
	uint64_t threshold = CGROUP_RECLAIM_THRESHOLD_DEFAULT;
	int r;

	if (!cg)
		return error_set(err, -EINVAL, "spec: missing \"cgroup\"");
	if (!json_is_object(cg))
		return error_set(err, -EINVAL, "spec: \"cgroup\" is not an object");
	r = spec_str(cg, "mode", true, &mode, err);
	if (r < 0)
		return r;
	if (cgroup_mode_parse(mode, &job->cg_mode) < 0)
		return error_set(err, -EINVAL, "spec: cgroup mode \"%s\" is not none, v1 or v2",
				 mode);
	if (job->cg_mode == CGROUP_MODE_NONE)
		return 0;
	r = spec_str(cg, "root", true, &job->cg_root, err);
	if (r < 0)
		return r;
	r = spec_str(cg, "parent", true, &job->cg_parent, err);
	if (r < 0)
		return r;
	if (!*job->cg_parent || strstr(job->cg_parent, ".."))
		return error_set(err, -EINVAL, "spec: cgroup parent \"%s\" is not valid",
				 job->cg_parent);
	r = spec_u64(cg, "reclaim_threshold", false, &threshold, err);
	if (r < 0)
		return r;
	if (threshold > UINT_MAX)
		return error_set(err, -EINVAL, "spec: cgroup reclaim_threshold %" PRIu64 " is too large",
				 threshold);
	job->cg_reclaim_threshold = (unsigned)threshold;
	return 0;
}

/* reserve, rt_policy, rt_priority: absent is reserve none. A realtime job
 * with a priority the kernel does not have is refused here, before
 * anything runs. */
static int spec_reserve(const json_t *o, struct gded_job *job, struct error *err)
{
	const char *reserve = NULL, *policy = NULL;
	uint64_t prio = 0;
	int r;

	if ((r = spec_str(o, "reserve", false, &reserve, err)) < 0 ||
	    (r = spec_str(o, "rt_policy", false, &policy, err)) < 0 ||
	    (r = spec_u64(o, "rt_priority", false, &prio, err)) < 0)
		return r;
	if (!reserve || strcmp(reserve, "none") == 0)
		job->reserve = GDED_RESERVE_NONE;
	else if (strcmp(reserve, "exclusive") == 0)
		job->reserve = GDED_RESERVE_EXCLUSIVE;
	else if (strcmp(reserve, "realtime") == 0)
		job->reserve = GDED_RESERVE_REALTIME;
	else
		return error_set(err, -EINVAL, "spec: reserve \"%s\" is not none, exclusive or "
				 "realtime", reserve);
	if (!policy || strcmp(policy, "fifo") == 0)
		job->rt_policy = SCHED_FIFO;
	else if (strcmp(policy, "rr") == 0)
		job->rt_policy = SCHED_RR;
	else
		return error_set(err, -EINVAL, "spec: rt_policy \"%s\" is not fifo or rr", policy);
	if (job->reserve != GDED_RESERVE_REALTIME)
		return 0;
	if (prio < (uint64_t)sched_get_priority_min(job->rt_policy) ||
	    prio > (uint64_t)sched_get_priority_max(job->rt_policy))
		return error_set(err, -EINVAL, "spec: rt_priority %llu is outside %d-%d",
				 (unsigned long long)prio, sched_get_priority_min(job->rt_policy),
				 sched_get_priority_max(job->rt_policy));
	job->rt_priority = (int)prio;
	return 0;
}

/* A device number of the spec: major and minor as the kernel can have
 * them (12 and 20 bits). e.text names the member at fault. */
static int spec_dev(const json_t *o, struct cgroup_dev *ret, struct error *e)
{
	uint64_t major = UINT64_MAX, minor = UINT64_MAX;
	int r;

	if ((r = spec_u64(o, "major", true, &major, e)) < 0 ||
	    (r = spec_u64(o, "minor", true, &minor, e)) < 0)
		return r;
	if (major > CGROUP_DEV_MAJOR_MAX || minor > CGROUP_DEV_MINOR_MAX)
		return error_set(e, -EINVAL, "spec: device %" PRIu64 ":%" PRIu64 " is out of range "
				 "(major <= %u, minor <= %u)", major, minor, CGROUP_DEV_MAJOR_MAX,
				 CGROUP_DEV_MINOR_MAX);
	ret->major = (unsigned)major;
	ret->minor = (unsigned)minor;
	return 0;
}

/* An array member of at most GDED_GPUS_MAX entries; absent or null: *ret
 * NULL. */
static int spec_gpu_array(const json_t *o, const char *key, const json_t **ret,
			  struct error *err)
{
	const json_t *v = json_object_get(o, key);

	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return error_set(err, -EINVAL, "spec: \"%s\" is not an array", key);
	if (json_array_size(v) > GDED_GPUS_MAX)
		return error_set(err, -EINVAL, "spec: \"%s\" has more than %d entries", key,
				 GDED_GPUS_MAX);
	*ret = v;
	return 0;
}

/* gpus and gpus_node (docs/GPUS.md): the job's own GPUs and every GPU of
 * the node. All is checked before the fence is built from it: a shape
 * qnoded would not write is refused with its place, and so is an own GPU
 * the node does not list (it would be denied to the job itself). */
static int spec_gpus(const json_t *o, struct gded_job *job, struct error *err)
{
	const json_t *gpus, *node, *v;
	uint64_t seen = 0;
	size_t i;
	int r;

	if ((r = spec_gpu_array(o, "gpus", &gpus, err)) < 0 ||
	    (r = spec_gpu_array(o, "gpus_node", &node, err)) < 0)
		return r;
	if (node && json_array_size(node)) {
		job->gpus_node = calloc(json_array_size(node), sizeof(*job->gpus_node));
		if (!job->gpus_node)
			return error_set(err, -ENOMEM, "out of memory");
	}
	json_array_foreach(node, i, v) {
		struct error e = { { 0 } };

		if (!json_is_object(v))
			return error_set(err, -EINVAL, "spec: gpus_node[%zu] is not an object", i);
		if (spec_dev(v, &job->gpus_node[i], &e) < 0)
			return error_set(err, -EINVAL, "spec: gpus_node[%zu]: %s", i,
					 e.text + strlen("spec: "));
		job->ngpus_node = i + 1;
	}
	if (gpus && json_array_size(gpus)) {
		job->gpus = calloc(json_array_size(gpus), sizeof(*job->gpus));
		if (!job->gpus)
			return error_set(err, -ENOMEM, "out of memory");
	}
	json_array_foreach(gpus, i, v) {
		struct gded_gpu *g = &job->gpus[i];
		struct error e = { { 0 } };
		uint64_t index = UINT64_MAX;
		bool listed = false;

		if (!json_is_object(v))
			return error_set(err, -EINVAL, "spec: gpus[%zu] is not an object", i);
		if (spec_u64(v, "index", true, &index, &e) < 0 ||
		    spec_str(v, "file", true, &g->file, &e) < 0 || spec_dev(v, &g->dev, &e) < 0)
			return error_set(err, -EINVAL, "spec: gpus[%zu]: %s", i,
					 e.text + strlen("spec: "));
		if (index >= GDED_GPUS_MAX)
			return error_set(err, -EINVAL, "spec: gpus[%zu]: \"index\" %" PRIu64
					 " is not below %d", i, index, GDED_GPUS_MAX);
		if (seen & (UINT64_C(1) << index))
			return error_set(err, -EINVAL, "spec: gpus[%zu]: index %" PRIu64 " twice", i,
					 index);
		seen |= UINT64_C(1) << index;
		g->index = (unsigned)index;
		for (size_t k = 0; k < job->ngpus_node && !listed; k++)
			listed = job->gpus_node[k].major == g->dev.major &&
				 job->gpus_node[k].minor == g->dev.minor;
		if (!listed)
			return error_set(err, -EINVAL, "spec: gpus[%zu]: device %u:%u is not in "
					 "\"gpus_node\"", i, g->dev.major, g->dev.minor);
		job->ngpus = i + 1;
	}
	return 0;
}

/* An alloc entry's gpus: that node's indices, each below GDED_GPUS_MAX,
 * as a mask. */
static int spec_alloc_gpus(const json_t *entry, uint64_t *ret, struct error *e)
{
	const json_t *gpus, *v;
	size_t i;
	int r;

	*ret = 0;
	if ((r = spec_gpu_array(entry, "gpus", &gpus, e)) < 0)
		return r;
	json_array_foreach(gpus, i, v) {
		json_int_t index = json_is_integer(v) ? json_integer_value(v) : -1;

		if (index < 0 || index >= GDED_GPUS_MAX)
			return error_set(e, -EINVAL, "spec: gpus[%zu] is not a GPU index below %d", i,
					 GDED_GPUS_MAX);
		if (*ret & (UINT64_C(1) << index))
			return error_set(e, -EINVAL, "spec: gpus[%zu]: index %d twice", i, (int)index);
		*ret |= UINT64_C(1) << index;
	}
	return 0;
}

/* A node name goes into PBS_NODEFILE, one per line, and to launchers
 * that pass it to a shell-like agent: no blanks, no control characters. */
static bool node_name_ok(const char *name)
{
	if (!*name || strlen(name) > 255)
		return false;
	for (const char *p = name; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '/')
			return false;
	return true;
}

/* alloc and node_index (docs/PARALLEL.md "job.launch, multi-node
 * members"): absent, a one-node job. Every entry is checked before
 * anything is made from it: a bad shape is refused with its place. */
static int spec_alloc(const json_t *o, struct gded_job *job, struct error *err)
{
	json_t *alloc = json_object_get(o, "alloc"), *v;
	uint64_t slots = 0;
	size_t i;
	int r;

	r = spec_u64(o, "node_index", false, &job->node_index, err);
	if (r < 0)
		return r;
	if (!alloc || json_is_null(alloc)) {
		uint64_t slots1;

		if (job->node_index != 0)
			return error_set(err, -EINVAL, "spec: \"node_index\" %llu without \"alloc\"",
					 (unsigned long long)job->node_index);
		/* A one-chunk select with its own MPI slots (select=1:ncpus=4:
		 * mpiprocs=2, recorded as Resource_List.mpiprocs): the one
		 * entry a job across nodes would have here, so its node file,
		 * PBS_NP and OMP_NUM_THREADS come out as on each node of one. */
		if (!jobattr_mpiprocs(json_string_value(json_object_get(json_object_get(o, "attrs"),
									  "Resource_List.mpiprocs")),
				      &slots1))
			return 0;
		job->alloc = calloc(1, sizeof(*job->alloc));
		if (!job->alloc)
			return error_set(err, -ENOMEM, "out of memory");
		job->alloc[0] = (struct gded_alloc){ .node = job->node, .ncpus = job->ncpus ?: 1,
						     .mpiprocs = slots1, .mem = job->mem };
		job->nalloc = 1;
		return 0;
	}
	if (!json_is_array(alloc))
		return error_set(err, -EINVAL, "spec: \"alloc\" is not an array");
	if (json_array_size(alloc) == 0)
		return error_set(err, -EINVAL, "spec: \"alloc\" is empty");
	if (json_array_size(alloc) > GDED_ALLOC_MAX)
		return error_set(err, -EINVAL, "spec: \"alloc\" has more than %d nodes",
				 GDED_ALLOC_MAX);
	if (job->node_index >= json_array_size(alloc))
		return error_set(err, -EINVAL, "spec: \"node_index\" %llu is outside \"alloc\" "
				 "(%zu nodes)", (unsigned long long)job->node_index,
				 json_array_size(alloc));
	job->alloc = calloc(json_array_size(alloc), sizeof(*job->alloc));
	if (!job->alloc)
		return error_set(err, -ENOMEM, "out of memory");
	json_array_foreach(alloc, i, v) {
		struct gded_alloc *a = &job->alloc[i];
		struct error e = { { 0 } };
		struct in_addr in;

		if (!json_is_object(v))
			return error_set(err, -EINVAL, "spec: alloc[%zu] is not an object", i);
		a->mpiprocs = UINT64_MAX;
		if (spec_str(v, "node", true, &a->node, &e) < 0 ||
		    spec_u64(v, "ncpus", true, &a->ncpus, &e) < 0 ||
		    spec_u64(v, "mpiprocs", false, &a->mpiprocs, &e) < 0 ||
		    spec_u64(v, "ompthreads", false, &a->ompthreads, &e) < 0 ||
		    spec_u64(v, "mem", false, &a->mem, &e) < 0 ||
		    spec_str(v, "addr", false, &a->addr, &e) < 0 ||
		    spec_alloc_gpus(v, &a->gpus, &e) < 0)
			return error_set(err, -EINVAL, "spec: alloc[%zu]: %s", i,
					 e.text + strlen("spec: "));
		if (a->addr && inet_pton(AF_INET, a->addr, &in) != 1)
			return error_set(err, -EINVAL, "spec: alloc[%zu]: \"addr\" \"%.64s\" is not an IPv4 address",
					 i, a->addr);
		if (!node_name_ok(a->node))
			return error_set(err, -EINVAL, "spec: alloc[%zu]: node name \"%s\" is not valid",
					 i, a->node);
		if (a->ncpus == 0)
			return error_set(err, -EINVAL, "spec: alloc[%zu]: \"ncpus\" must be positive", i);
		if (a->mpiprocs == UINT64_MAX)
			a->mpiprocs = a->ncpus;
		if (a->mpiprocs > GDED_SLOTS_MAX || a->ompthreads > GDED_SLOTS_MAX)
			return error_set(err, -EINVAL, "spec: alloc[%zu]: \"mpiprocs\" or \"ompthreads\" "
					 "is above %u", i, GDED_SLOTS_MAX);
		slots += a->mpiprocs;
		if (slots > GDED_SLOTS_MAX)
			return error_set(err, -EINVAL, "spec: \"alloc\" has more than %u MPI slots",
					 GDED_SLOTS_MAX);
	}
	job->nalloc = json_array_size(alloc);
	return 0;
}

/* ctl and task_socket: paths of Unix sockets, so absolute and short
 * enough for sun_path. */
static int spec_socket(const json_t *o, const char *key, const char **ret, struct error *err)
{
	int r = spec_str(o, key, false, ret, err);

	if (r < 0 || !*ret)
		return r;
	if ((*ret)[0] != '/')
		return error_set(err, -EINVAL, "spec: \"%s\" must be an absolute path", key);
	if (strlen(*ret) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return error_set(err, -EINVAL, "spec: \"%s\" is longer than a socket path may be "
				 "(%zu bytes)", key, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	return 0;
}

/* What gded acts on of the PBS attributes qsub recorded. */
static int spec_attrs(const json_t *spec, struct gded_job *job, struct error *err)
{
	const json_t *a = json_object_get(spec, "attrs");
	const char *shell, *notice;

	if (!a)
		return 0;
	if (!json_is_object(a))
		return error_set(err, -EINVAL, "spec: \"attrs\" must be an object");
	shell = json_string_value(json_object_get(a, "Shell_Path_List"));
	if (shell) {
		/* path[@host][,...]: the first path (qsub checked it). */
		static char first[PATH_MAX];   /* gded runs one job */
		size_t n = strcspn(shell, "@,");

		if (shell[0] != '/' || n >= sizeof(first))
			return error_set(err, -EINVAL, "spec: Shell_Path_List %s is not an absolute path",
					 shell);
		memcpy(first, shell, n);
		first[n] = '\0';
		job->pbs_shell = first;
	}
	job->ompthreads = json_string_value(json_object_get(a, "Resource_List.ompthreads"));
	/* Notice before the walltime (sbatch --signal, -l signal=): the
	 * commands checked it; one that does not parse asks for none. */
	notice = json_string_value(json_object_get(a, "Resource_List.signal"));
	if (notice && end_notice_parse(notice, &job->notice) < 0)
		job->notice.sig = 0;
	job->group = json_string_value(json_object_get(a, "group_list"));
	job->mail_points = json_string_value(json_object_get(a, "Mail_Points"));
	job->mail_users = json_string_value(json_object_get(a, "Mail_Users"));
	job->interactive = json_is_string(json_object_get(a, "interactive"));
	/* qsub -I -- CMD (srun --pty CMD): the job's script runs on the pty
	 * instead of the login shell; it is the user's, as a batch one is */
	job->interactive_command = job->interactive &&
				   json_is_string(json_object_get(a, "interactive_command"));
	return 0;
}

int gded_spec_parse(json_t *spec, struct gded_job *job, struct error *err)
{
	uint64_t uid = 0, gid = 0, mask = GDED_UMASK_DEFAULT;
	int r;

	*job = (struct gded_job){
		.name = "job",
		.queue = "",
		.node = "localhost",
		.home = "/",
		.shell = "/bin/sh",
		.ncpus = 1,
		.kill_grace = GDED_KILL_GRACE_DEFAULT,
		.pids_max = GDED_PIDS_MAX_DEFAULT,
		.umask = GDED_UMASK_DEFAULT,
	};
	if (!json_is_object(spec))
		return error_set(err, -EINVAL, "spec: not a JSON object");
	if ((r = spec_u64(spec, "jobid", true, &job->jobid, err)) < 0 ||
	    (r = spec_str(spec, "name", false, &job->name, err)) < 0 ||
	    (r = spec_str(spec, "queue", false, &job->queue, err)) < 0 ||
	    (r = spec_str(spec, "node", false, &job->node, err)) < 0 ||
	    (r = spec_str(spec, "user", true, &job->user, err)) < 0 ||
	    (r = spec_u64(spec, "uid", true, &uid, err)) < 0 ||
	    (r = spec_u64(spec, "gid", true, &gid, err)) < 0 ||
	    (r = spec_str(spec, "home", false, &job->home, err)) < 0 ||
	    (r = spec_str(spec, "shell", false, &job->shell, err)) < 0 ||
	    (r = spec_str(spec, "workdir", true, &job->workdir, err)) < 0 ||
	    (r = spec_str(spec, "script", true, &job->script, err)) < 0 ||
	    (r = spec_str(spec, "stdout", true, &job->stdout_path, err)) < 0 ||
	    (r = spec_bool(spec, "join", &job->join, err)) < 0 ||
	    (r = spec_str(spec, "stderr", !job->join, &job->stderr_path, err)) < 0 ||
	    (r = spec_u64(spec, "ncpus", false, &job->ncpus, err)) < 0 ||
	    (r = spec_u64(spec, "mem", false, &job->mem, err)) < 0 ||
	    (r = spec_u64(spec, "walltime", false, &job->walltime, err)) < 0 ||
	    (r = spec_u64(spec, "kill_grace", false, &job->kill_grace, err)) < 0 ||
	    (r = spec_u64(spec, "pids_max", false, &job->pids_max, err)) < 0 ||
	    (r = spec_str(spec, "cpus", false, &job->cpus, err)) < 0 ||
	    (r = spec_str(spec, "mems", false, &job->mems, err)) < 0 ||
	    (r = spec_str(spec, "nodefile", false, &job->nodefile, err)) < 0 ||
	    (r = spec_bool(spec, "nodefile_shared", &job->nodefile_shared, err)) < 0 ||
	    (r = spec_bool(spec, "gated", &job->gated, err)) < 0 ||
	    (r = spec_str(spec, "result", true, &job->result, err)) < 0 ||
	    (r = spec_u64(spec, "umask", false, &mask, err)) < 0 ||
	    (r = spec_str(spec, "server", false, &job->server, err)) < 0 ||
	    (r = spec_str(spec, "tmpdir_base", false, &job->tmpdir_base, err)) < 0 ||
	    (r = spec_str(spec, "prolog", false, &job->prolog, err)) < 0 ||
	    (r = spec_str(spec, "epilog", false, &job->epilog, err)) < 0 ||
	    (r = spec_u64(spec, "prolog_timeout", false, &job->prolog_timeout, err)) < 0 ||
	    (r = spec_u64(spec, "epilog_timeout", false, &job->epilog_timeout, err)) < 0 ||
	    (r = spec_str(spec, "sendmail", false, &job->sendmail, err)) < 0 ||
	    (r = spec_u64(spec, "array_id", false, &job->array_id, err)) < 0 ||
	    (r = spec_u64(spec, "array_index", job->array_id != 0, &job->array_index, err)) < 0 ||
	    (r = spec_attrs(spec, job, err)) < 0 ||
	    (r = spec_env(spec, job, err)) < 0 ||
	    (r = spec_groups(spec, job, err)) < 0 ||
	    (r = spec_reserve(spec, job, err)) < 0 ||
	    (r = spec_cgroup(spec, job, err)) < 0 ||
	    (r = spec_alloc(spec, job, err)) < 0 ||
	    (r = spec_gpus(spec, job, err)) < 0 ||
	    (r = spec_socket(spec, "ctl", &job->ctl, err)) < 0 ||
	    (r = spec_socket(spec, "task_socket", &job->task_socket, err)) < 0 ||
	    (r = spec_str(spec, "hwloc_xml", false, &job->hwloc_xml, err)) < 0)
		goto fail;
	job->launch = wire_int(json_object_get(spec, "times"), "launch", 0);
	if (job->hwloc_xml && job->hwloc_xml[0] != '/') {
		r = error_set(err, -EINVAL, "spec: \"hwloc_xml\" must be an absolute path");
		goto fail;
	}
	if (job->jobid == 0) {
		r = error_set(err, -EINVAL, "spec: \"jobid\" must be positive");
		goto fail;
	}
	if (uid > UINT32_MAX - 1 || gid > UINT32_MAX - 1) {
		r = error_set(err, -EINVAL, "spec: uid or gid out of range");
		goto fail;
	}
	if (mask > 0777) {
		r = error_set(err, -EINVAL, "spec: \"umask\" %llo is not a file mode mask",
			      (unsigned long long)mask);
		goto fail;
	}
	job->umask = (mode_t)mask;
	job->uid = (uid_t)uid;
	job->gid = (gid_t)gid;
	if (job->workdir[0] != '/' || job->script[0] != '/' || job->result[0] != '/' ||
	    job->shell[0] != '/' || job->stdout_path[0] != '/' ||
	    (!job->join && job->stderr_path[0] != '/') || (job->nodefile && job->nodefile[0] != '/')) {
		r = error_set(err, -EINVAL, "spec: workdir, script, shell, stdout, stderr, "
				"nodefile and result must be absolute paths");
		goto fail;
	}
	if (job->ncpus == 0)
		job->ncpus = 1;
	job->owner = json_incref(spec);
	return 0;
fail:
	gded_job_clear(job);
	return r;
}

int gded_spec_load(const char *path, struct gded_job *job, struct error *err)
{
	json_t *spec;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, -errno, "%s: %m", path);
	r = wire_load_fd(fd, WIRE_MAX, path, &spec, err);
	close(fd);
	if (r < 0)
		return r == -EBADMSG ? -EINVAL : r;
	r = gded_spec_parse(spec, job, err);
	json_decref(spec);
	return r;
}

void gded_job_clear(struct gded_job *job)
{
	free(job->groups);
	job->groups = NULL;
	free(job->alloc);
	job->alloc = NULL;
	free(job->gpus);
	job->gpus = NULL;
	job->ngpus = 0;
	free(job->gpus_node);
	job->gpus_node = NULL;
	job->ngpus_node = 0;
	job->nalloc = 0;
	job->ngroups = 0;
	if (job->env) {
		for (char **e = job->env; *e; e++)
			free(*e);
		free(job->env);
		job->env = NULL;
	}
	json_decref(job->owner);
	job->owner = NULL;
}
