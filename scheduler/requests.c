/* SPDX-License-Identifier: MIT */
/* The client ops: submit, stat, delete, hold, release, queues, nodes. */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounts.h"
#include "array.h"
#include "arrayspec.h"
#include "config.h"
#include "cpuacct.h"
#include "conn.h"
#include "depend.h"
#include "deps.h"
#include "estimate.h"
#include "hctx.h"
#include "job-end.h"
#include "jobattr.h"
#include "jobenv.h"
#include "jobstore.h"
#include "log.h"
#include "loop.h"
#include "ops.h"
#include "pool.h"
#include "qos.h"
#include "reslimits.h"
#include "resv.h"
#include "server-lease.h"
#include "space.h"
#include "submit-res.h"
#include "ties.h"
#include "timeutil.h"
#include "users.h"
#include "watch.h"
#include "wire.h"

#define NAME_MAX_LEN 255
/* Script and environment of one job: the wire's cap less room for the
 * job's other members (three 4 KiB paths, a name, times: < 20 KiB). */
#define SUBMIT_PAYLOAD_MAX (WIRE_MAX - 64 * 1024)

static bool path_ok(const char *p)
{
	return p && p[0] == '/' && strlen(p) < 4096;
}

/* The caps on waiting (queued and held) jobs: the pool's and one user's
 * ([server]), the queue's and one user's in it ([queue]). Submissions
 * waiting for this iteration's commit count too, so a burst cannot pass a
 * cap. A job array counts each subjob: n is what this submission adds. */
int queued_limit_check(struct hctx *s, uid_t uid, const char *owner, const struct queue_conf *q,
		       char *errbuf, size_t errlen, uint64_t n, bool queue_only)
{
	const struct config *cf = s->config;
	/* A job moving between queues is in the pool's counts already. */
	uint64_t max_all = queue_only ? 0 : cf->max_queued;
	uint64_t max_user = queue_only ? 0 : cf->max_queued_per_user;
	struct pool_waiting w;
	bool arrays = n > 1;
	char more[64] = "";

	if (n == 0 || (!max_all && !max_user && !q->max_queued && !q->max_queued_per_user))
		return 0;
	pool_waiting_count(s->pool, q->name, uid, &w);
	w.all += n - 1;
	w.queue += n - 1;
	w.user += n - 1;
	w.queue_user += n - 1;
	for (const struct pending *p = s->pending; p && !arrays; p = p->next)
		arrays = p->submit.array_count > 1;
	/* Walk this iteration's submissions only when they could matter:
	 * a pipelined burst holds hundreds. */
	if (!arrays && (!q->max_queued_per_user || w.queue_user + s->n_pending < q->max_queued_per_user) &&
	    (!q->max_queued || w.queue + s->n_pending < q->max_queued) &&
	    (!max_user || w.user + s->n_pending < max_user) &&
	    (!max_all || w.all + s->n_pending < max_all))
		return 0;
	for (const struct pending *p = s->pending; p; p = p->next) {
		uint64_t k = p->submit.array_count > 0 ? (uint64_t)p->submit.array_count : 1;

		if (p->is_done)
			continue;
		w.all += k;
		if (strcmp(p->submit.queue, q->name) == 0)
			w.queue += k;
		if (p->submit.uid == uid) {
			w.user += k;
			if (strcmp(p->submit.queue, q->name) == 0)
				w.queue_user += k;
		}
	}
	/* An array: how many wait now, and the array that would pass. */
	if (n > 1)
		snprintf(more, sizeof(more), "; an array of %llu subjobs would pass it", (unsigned long long)n);
	if (q->max_queued_per_user && w.queue_user >= q->max_queued_per_user)
		return snprintf(errbuf, errlen, "queue %s: %s has %llu jobs waiting, the most one user may "
				"(max_queued_per_user)%s", q->name, owner, (unsigned long long)(w.queue_user - (n - 1)),
				more), -EDQUOT;
	if (q->max_queued && w.queue >= q->max_queued)
		return snprintf(errbuf, errlen, "queue %s holds %llu jobs waiting, the most it may (max_queued)%s",
				q->name, (unsigned long long)(w.queue - (n - 1)), more), -EDQUOT;
	if (max_user && w.user >= max_user)
		return snprintf(errbuf, errlen, "%s has %llu jobs waiting, the most one user may "
				"(max_queued_per_user)%s", owner, (unsigned long long)(w.user - (n - 1)), more), -EDQUOT;
	if (max_all && w.all >= max_all)
		return snprintf(errbuf, errlen, "the pool holds %llu jobs waiting, the most it may (max_queued)%s",
				(unsigned long long)(w.all - (n - 1)), more), -EDQUOT;
	return 0;
}

/* Whether user (primary group gid) is a member of the group called name:
 * qsub -W group_list. Asks NSS, only for jobs that name a group. */
static bool user_in_group(const char *user, gid_t gid, const char *name)
{
	struct group gr, *found = NULL;
	char buf[16384];
	gid_t groups[256];
	int n = 256;

	if (getgrnam_r(name, &gr, buf, sizeof(buf), &found) != 0 || !found)
		return false;
	if (found->gr_gid == gid)
		return true;
	if (getgrouplist(user, gid, groups, &n) < 0)
		n = 256;
	for (int i = 0; i < n; i++)
		if (groups[i] == found->gr_gid)
			return true;
	return false;
}

/* The memory of a job that asks for none (docs/ARCHITECTURE.md, "Memory
 * counted"): with whole (sbatch --mem=0), the largest offer of a known
 * node on each node; else a queue's written mem_default (0: none); else
 * mem_per_cpu_default (the queue's, else the server's) times its CPUs,
 * auto being the smallest offer per CPU of the known nodes (none known:
 * not counted). Chunks without mem get theirs per chunk, written into
 * chunks; the job's total is returned. Capped at the queue's mem_max. */
static uint64_t mem_default_resolve(struct hctx *s, const struct queue_conf *q, uint64_t ncpus, json_t *chunks,
				    bool whole)
{
	uint64_t per = q->mem_per_cpu_default, total = 0, node = 0;
	size_t i;
	json_t *ch;

	if (whole) {
		/* Per node, whatever its CPUs: a per-CPU rate of node / ncpus
		 * would be the same per node only for one-node jobs. */
		node = pool_mem_node_max(s->pool);
		if (q->mem_max && node > q->mem_max)
			node = q->mem_max;
		if (!json_array_size(chunks))
			return node;
	} else if (q->mem_default_set) {
		return q->mem_default;
	}
	if (per == MEM_PER_CPU_INHERIT)
		per = s->config->mem_per_cpu_default;
	if (per == MEM_PER_CPU_AUTO)
		per = pool_mem_per_cpu_auto(s->pool);
	if (!per && !node)
		return 0;
	if (!json_array_size(chunks)) {
		total = per * ncpus;
		return q->mem_max && total > q->mem_max ? q->mem_max : total;
	}
	json_array_foreach(chunks, i, ch) {
		json_int_t cm = json_integer_value(json_object_get(ch, "mem"));
		json_int_t count = json_integer_value(json_object_get(ch, "count"));

		if (!json_is_object(ch))
			return 0;   /* job_chunks_from_json refuses it */
		if (cm <= 0 && node) {
			cm = (json_int_t)node;
			json_object_set_new(ch, "mem", json_integer(cm));
		} else if (cm <= 0) {
			cm = (json_int_t)(per * (uint64_t)json_integer_value(json_object_get(ch, "ncpus")));
			if (q->mem_max && (uint64_t)cm > q->mem_max)
				cm = (json_int_t)q->mem_max;
			json_object_set_new(ch, "mem", json_integer(cm));
		}
		total += (uint64_t)cm * (uint64_t)(count > 0 ? count : 1);
	}
	return total;
}

/* Checks a submit request against the queue and the pool; fills p->submit
 * with strings that live as long as p->strings. */
/* A submit's nodelist, exclude and constraint (docs/RESOURCES.md) into
 * *ret (NULL: none asked): every name must be a node the pool knows, the
 * list no longer than the job has nodes, and some known node must have
 * the features. -EINVAL with why in buf (the front ends match "unknown
 * node" and "no node of this pool has" to put it in their words). */
static int nodesel_submit_check(struct hctx *s, json_t *msg, const struct job *probe, struct nodesel **ret,
				char *buf, size_t len)
{
	const char *nl = wire_str(msg, "nodelist"), *ex = wire_str(msg, "exclude");
	const char *cons = wire_str(msg, "constraint");
	const char *const *names;
	unsigned chunks = 0;
	struct error err;
	size_t n;
	int r;

	*ret = NULL;
	if ((json_object_get(msg, "nodelist") && !nl) || (json_object_get(msg, "exclude") && !ex) ||
	    (json_object_get(msg, "constraint") && !cons)) {
		snprintf(buf, len, "nodelist, exclude and constraint must be strings");
		return -EINVAL;
	}
	if (!nl && !ex && !cons)
		return 0;
	r = nodesel_create(nl, ex, cons, ret, &err);
	if (r < 0) {
		snprintf(buf, len, "%s", r == -ENOMEM ? "qpoold is out of memory" : err.text);
		return -EINVAL;
	}
	for (int k = 0; k < 2; k++) {
		n = k == 0 ? nodesel_required(*ret, &names) : nodesel_excluded(*ret, &names);
		for (size_t i = 0; i < n; i++) {
			const struct node *nd = pool_node_find(s->pool, names[i]);

			if (!nd || !cpumask_count(&nd->cpus)) {
				snprintf(buf, len, "unknown node %s: no node of this pool has that name (%s)",
					 names[i], k == 0 ? "node list" : "excluded");
				return -EINVAL;
			}
		}
	}
	for (unsigned i = 0; i < probe->n_chunks; i++)
		chunks += probe->chunks[i].count;
	n = nodesel_required(*ret, &names);
	if (n > (probe->n_chunks ? chunks : 1)) {
		snprintf(buf, len, "the node list names %zu nodes, more than the job's %u %s", n,
			 probe->n_chunks ? chunks : 1, probe->n_chunks ? "chunks" : "node");
		return -EINVAL;
	}
	/* Some known node must be left to it. */
	for (const struct node *nd = pool_nodes(s->pool); nd; nd = nd->next)
		if (cpumask_count(&nd->cpus) && nodesel_node_ok(*ret, nd->name, nd->features, -1))
			return 0;
	if (cons)
		snprintf(buf, len, "constraint %s: no node of this pool has those features%s", cons,
			 nl || ex ? " (among the nodes allowed)" : "");
	else
		snprintf(buf, len, "the node list and exclusions leave no node of this pool to the job");
	return -EINVAL;
}

static int submit_check(struct hctx *s, struct conn *c, json_t *msg, struct pending *p,
			char *errbuf, size_t errlen)
{
	const struct queue_conf *q;
	const char *qname = wire_str(msg, "queue");
	const char *name = wire_str(msg, "name");
	const char *script = wire_str(msg, "script");
	const char *workdir = wire_str(msg, "workdir");
	const char *out = wire_str(msg, "stdout");
	const char *errp = wire_str(msg, "stderr");
	const char *owner;
	json_t *env = json_object_get(msg, "env");
	json_t *attrs = json_object_get(msg, "attrs");
	const char *group = wire_str(attrs, "group_list");
	char size[32];
	long long ncpus = wire_int(msg, "ncpus", 0);
	long long ngpus = wire_int(msg, "ngpus", 0);
	long long mem = wire_int(msg, "mem", 0);
	bool mem_asked;
	long long walltime = wire_int(msg, "walltime", 0);
	long long mask = wire_int(msg, "umask", -1);
	long long prio = wire_int(msg, "priority", 0);
	struct error jerr;
	struct arrayspec aspec;
	char canon[ARRAYSPEC_TEXT_MAX], nres[NODERES_TEXT_MAX];
	const char *array, *depend;
	char *envtext;
	size_t envlen;
	const char *key;
	json_t *v;

#define REFUSE(...) do { snprintf(errbuf, errlen, __VA_ARGS__); return -EINVAL; } while (0)
	if (!script || !*script)
		REFUSE("the job script is empty");
	if (!name || !*name || strlen(name) > NAME_MAX_LEN || strchr(name, '/'))
		REFUSE("job name must be 1-%d bytes without '/'", NAME_MAX_LEN);
	if (!path_ok(workdir))
		REFUSE("working directory must be an absolute path");
	if ((out && *out && !path_ok(out)) || (errp && *errp && !path_ok(errp)))
		REFUSE("output paths must be absolute");
	if (env && !json_is_object(env))
		REFUSE("env must be an object of strings");
	json_object_foreach(env, key, v)
		if (!json_is_string(v) || !*key || strchr(key, '='))
			REFUSE("env: '%s' is not NAME=value", key);
	if (env && jobenv_check(env, &jerr) < 0)
		REFUSE("%s", jerr.text);
	if (ncpus < 0 || ngpus < 0 || mem < 0 || walltime < 0)
		REFUSE("resources must not be negative");
	if (json_object_get(msg, "umask") && (mask < 0 || mask > 0777))
		REFUSE("umask must be 0-0777");
	/* The job comes back whole in qstat -f and in its launch message,
	 * with some 60 members more than it was sent with: a submission just
	 * below the wire's cap would make a job no reply can carry. */
	/* The environment's text is made once: its length is checked here
	 * and the text is what the store keeps. */
	envtext = env ? json_dumps(env, JSON_COMPACT) : NULL;
	if (env && !envtext)
		REFUSE("out of memory");
	envlen = envtext ? strlen(envtext) : 2;
	json_object_set_new(msg, "_env", json_stringn_nocheck(envtext ? envtext : "{}", envlen));
	free(envtext);
	if (strlen(script) + envlen > SUBMIT_PAYLOAD_MAX)
		REFUSE("the script and the environment together must be below %u KiB",
		       (unsigned)(SUBMIT_PAYLOAD_MAX / 1024));
	if (prio < -1024 || prio > 1023)
		REFUSE("-p %lld: a priority is -1024 to 1023", prio);
	if (attrs && !json_is_object(attrs))
		REFUSE("attrs must be an object of strings");
	json_object_foreach(attrs, key, v) {
		/* qstat -f prints these beside qpool's own attributes: a name
		 * of qpool's, or one outside PBS's grammar, would forge them. */
		if (jobattr_name_check(key, &jerr) < 0)
			REFUSE("attrs: %s", jerr.text);
		if (!json_is_string(v) || json_string_length(v) > 4096)
			REFUSE("attrs: %s is not a string of at most 4096 bytes", key);
	}

	/* PBS's reservation queue (qsub -q R12): the default queue, in the
	 * reservation (docs/RESERVATIONS.md). */
	if (qname && *qname && !config_queue(s->config, qname) && resvs_by_queue(s->resvs, qname)) {
		if (!attrs) {
			attrs = json_object();
			json_object_set_new(msg, "attrs", attrs);
		}
		json_object_set_new(attrs, "reservation", json_string(resvs_by_queue(s->resvs, qname)));
		qname = NULL;
	}
	if (qname && *qname) {
		q = config_queue(s->config, qname);
		if (!q)
			REFUSE("unknown queue '%s'", qname);
	} else {
		q = config_default_queue(s->config);
		if (!q)
			REFUSE("no queue given and no default queue (use -q)");
	}
	if (!q->enabled)
		REFUSE("queue %s is disabled: %s", q->name, q->reason[0] ? q->reason : "it accepts no new jobs");
	if (ncpus == 0)
		ncpus = q->ncpus ? (long long)q->ncpus : (long long)q->ncpus_default;
	if (q->ncpus && (uint64_t)ncpus != q->ncpus)
		REFUSE("ncpus=%lld: queue %s runs jobs of exactly %llu CPUs", ncpus, q->name,
		       (unsigned long long)q->ncpus);
	if (q->ncpus_max && (uint64_t)ncpus > q->ncpus_max)
		REFUSE("ncpus=%lld: above queue %s's limit of %llu", ncpus, q->name,
		       (unsigned long long)q->ncpus_max);
	if (submit_noderes_check(s->pool, msg, nres, sizeof(nres), errbuf, errlen) < 0)
		return -EINVAL;
	mem_asked = mem > 0;
	if (!mem_asked)
		mem = (long long)mem_default_resolve(s, q, (uint64_t)ncpus, json_object_get(msg, "chunks"),
						     wire_bool(msg, "mem_node", false));
	{
		struct job probe = { .ncpus = (uint32_t)ncpus, .mem = (uint64_t)mem };
		const char *place = wire_str(msg, "place");
		json_t *chunks = json_object_get(msg, "chunks");
		char why[200];
		unsigned long long total = 0, gtotal = 0;
		int r;

		if (json_object_get(msg, "place") && (!place || job_place_parse(place, &probe) < 0))
			REFUSE("place must be scatter, pack or free, with :excl or :shared");
		if (job_chunks_from_json(&probe, chunks, why, sizeof(why)) < 0)
			REFUSE("%s", why);
		if (nodesel_submit_check(s, msg, &probe, &p->sel, why, sizeof(why)) < 0) {
			free(probe.chunks);
			REFUSE("%s", why);
		}
		probe.sel = p->sel;
		for (unsigned i = 0; i < probe.n_chunks; i++) {
			total += (unsigned long long)probe.chunks[i].count * probe.chunks[i].ncpus;
			gtotal += (unsigned long long)probe.chunks[i].count * probe.chunks[i].ngpus;
		}
		if (probe.n_chunks && total != (unsigned long long)ncpus) {
			free(probe.chunks);
			REFUSE("ncpus=%lld is not the chunks' total of %llu", ncpus, total);
		}
		if (probe.n_chunks && json_object_get(msg, "ngpus") && gtotal != (unsigned long long)ngpus) {
			free(probe.chunks);
			REFUSE("ngpus=%lld is not the chunks' total of %llu", ngpus, gtotal);
		}
		if (probe.n_chunks)
			ngpus = (long long)gtotal;
		else if (ngpus > NODE_GPUS_MAX)
			REFUSE("ngpus=%lld: more GPUs than a node can have (%d)", ngpus, NODE_GPUS_MAX);
		probe.ngpus = (uint32_t)ngpus;
		if (json_object_get(msg, "gpu_model")) {
			const char *model = wire_str(msg, "gpu_model");
			char mcanon[GPU_MODEL_MAX];

			if (!model || gpu_model_canon(model, strlen(model), mcanon, &jerr) < 0) {
				free(probe.chunks);
				REFUSE("gpu_model: %s", model ? jerr.text : "not a string");
			}
			if (ngpus == 0) {
				free(probe.chunks);
				REFUSE("gpu_model=%s: the job asks for no GPU (give ngpus)", mcanon);
			}
			p->gpu_model = strdup(mcanon);
			if (!p->gpu_model) {
				free(probe.chunks);
				REFUSE("qpoold is out of memory");
			}
			probe.gpu_model = p->gpu_model;
		}
		if (q->max_ngpus && (uint64_t)ngpus > q->max_ngpus) {
			free(probe.chunks);
			REFUSE("ngpus=%lld: above queue %s's limit of %llu", ngpus, q->name,
			       (unsigned long long)q->max_ngpus);
		}
		/* The queue's ncpus_max is the job's total, as PBS's
		 * resources_max.ncpus (checked above); what no set of the
		 * known nodes can ever hold is refused here. */
		if (job_noderes_set(&probe, nres) < 0) {
			free(probe.chunks);
			REFUSE("qpoold is out of memory");
		}
		r = pool_request_check(s->pool, &probe, why, sizeof(why));
		free(probe.chunks);
		free(probe.nres);
		if (r < 0)
			REFUSE("%s", why);
	}
	if (mem_asked && q->mem_max && (uint64_t)mem > q->mem_max) {
		/* In the user's units, not "8589934592 bytes". */
		size_format(q->mem_max, size, sizeof(size));
		REFUSE("mem=%s: above queue %s's limit of %s",
		       wire_str(attrs, "Resource_List.mem") ? wire_str(attrs, "Resource_List.mem") : "?",
		       q->name, size);
	}
	if (walltime == 0)
		walltime = (long long)q->walltime_default;
	if (q->walltime_max && (uint64_t)walltime > q->walltime_max)
		REFUSE("walltime=%llds: above queue %s's limit of %llus", walltime, q->name,
		       (unsigned long long)q->walltime_max);
	owner = server_user_name(s, c->uid);
	if (!owner)
		REFUSE("uid %d has no user name", (int)c->uid);
	array = wire_str(msg, "array");
	if (json_object_get(msg, "array") && !array)
		REFUSE("array must be a string (the index set)");
	if (array) {
		if (arrayspec_parse(array, 't', true, &aspec, &jerr) < 0)
			REFUSE("%s", jerr.text);
		arrayspec_format(&aspec, canon, sizeof(canon));
		if (strcmp(canon, array) != 0)
			REFUSE("array %.64s: not in canonical form (%.64s)", array, canon);
		if (wire_bool(msg, "interactive", 0))
			REFUSE("an interactive job cannot be an array");
	}
	depend = wire_str(msg, "depend");
	if (depend) {
		char kept[DEPEND_TEXT_MAX];

		if (depend_submit_check(s, c->uid, depend, wire_bool(msg, "depend_lift", false), kept, sizeof(kept),
					errbuf, errlen) < 0)
			return -EINVAL;
		/* What is kept is what is stored: every item but the lifted. */
		if (!kept[0])
			json_object_del(msg, "depend");
		else if (strcmp(kept, depend) != 0)
			json_object_set_new(msg, "depend", json_string(kept));
		depend = wire_str(msg, "depend");
	}
	if (queued_limit_check(s, c->uid, owner, q, errbuf, errlen, array ? (uint64_t)aspec.count : 1, false) < 0)
		return -EDQUOT;
	if (group && !user_in_group(owner, c->gid, group))
		REFUSE("-W group_list=%s: %s is not a member of group %s", group, owner, group);
	/* The account: one the user is a user of, else its default
	 * (docs/ACCOUNTS.md); nothing when the pool defines none. */
	{
		const char *asked = wire_str(attrs, "Account_Name"), *account;

		if (accounts_submit_check(s->accounts, owner, c->uid == 0, asked, &account, errbuf, errlen) < 0)
			return -EPERM;
		if (account && !asked) {
			if (!attrs) {
				attrs = json_object();
				json_object_set_new(msg, "attrs", attrs);
			}
			json_object_set_new(attrs, "Account_Name", json_string(account));
		}
	}
	/* The QOS: one the user may use, else its default (docs/QOS.md);
	 * nothing when the pool defines none and none is asked. */
	{
		const char *asked = wire_str(attrs, "Resource_List.qos"), *qos;

		if (qos_submit_check(s->qos, owner, c->uid == 0, asked, (uint64_t)walltime, &qos, errbuf, errlen) < 0)
			return -EPERM;
		if (qos && !asked) {
			if (!attrs) {
				attrs = json_object();
				json_object_set_new(msg, "attrs", attrs);
			}
			json_object_set_new(attrs, "Resource_List.qos", json_string(qos));
		}
	}
	/* sbatch --reservation, qsub -q R12: one the user may use. */
	if (wire_str(attrs, "reservation") &&
	    resvs_submit_check(s->resvs, wire_str(attrs, "reservation"), owner, c->uid,
			       wire_str(attrs, "Account_Name"), errbuf, errlen) < 0)
		return -EPERM;
#undef REFUSE

	/* The request object owns every string the insert binds. */
	p->strings = json_incref(msg);
	p->submit.env_json = wire_str(msg, "_env");
	json_object_set_new(msg, "_queue", json_string(q->name));
	json_object_set_new(msg, "_owner", json_string(owner));
	p->submit.name = name;
	p->submit.queue = wire_str(msg, "_queue");
	p->submit.owner = wire_str(msg, "_owner");
	p->submit.uid = c->uid;
	p->submit.gid = c->gid;
	p->submit.ncpus = (uint32_t)ncpus;
	p->submit.ngpus = (uint32_t)ngpus;
	p->submit.mem = (uint64_t)mem;
	p->submit.walltime = (uint64_t)walltime;
	p->submit.workdir = workdir;
	p->submit.stdout_path = out ? out : "";
	p->submit.stderr_path = errp ? errp : "";
	p->submit.join = wire_bool(msg, "join", 0);
	p->submit.rerunnable = wire_bool(msg, "rerunnable", q->rerunnable);
	p->submit.hold = wire_bool(msg, "hold", 0);
	p->submit.script = script;
	p->submit.t_submit = time_wall_ns();
	p->submit.umask = (int)mask;
	p->submit.priority = (int)prio;
	if (json_array_size(json_object_get(msg, "chunks"))) {
		char *text = json_dumps(json_object_get(msg, "chunks"), JSON_COMPACT);

		json_object_set_new(msg, "_chunks", json_string(text ? text : "[]"));
		free(text);
		p->submit.chunks_json = wire_str(msg, "_chunks");
	}
	p->submit.place = wire_str(msg, "place");
	p->submit.array_spec = array;
	p->submit.array_count = array ? aspec.count : 0;
	p->submit.depend = depend;
	if (depend && strstr(depend, "after")) {
		/* Held (PBS's system hold) until depend.c releases it; one
		 * submitted with -h stays held by its owner after that. */
		p->submit.reason = p->submit.hold ? DEPEND_WAIT_REASON_USER : depend_wait_reason();
		p->submit.hold = true;
	}
	p->submit.start_after = wire_str(attrs, "Execution_Time") ?
				strtoll(wire_str(attrs, "Execution_Time"), NULL, 10) : 0;
	/* A job's GPUs are kept as its Resource_List.ngpus, qpoold's own
	 * count (the chunks' total) over whatever qsub recorded there
	 * (docs/ARCHITECTURE.md: no column of its own). */
	if (ngpus > 0 || json_object_get(attrs, "Resource_List.ngpus")) {
		char gbuf[24];

		if (!attrs) {
			attrs = json_object();
			json_object_set_new(msg, "attrs", attrs);
		}
		snprintf(gbuf, sizeof(gbuf), "%lld", ngpus);
		if (ngpus > 0)
			json_object_set_new(attrs, "Resource_List.ngpus", json_string(gbuf));
		else
			json_object_del(attrs, "Resource_List.ngpus");
	}
	/* The GPUs' model, canonical, over whatever qsub recorded. */
	if (p->gpu_model || json_object_get(attrs, "Resource_List.gpu_model")) {
		if (!attrs) {
			attrs = json_object();
			json_object_set_new(msg, "attrs", attrs);
		}
		if (p->gpu_model)
			json_object_set_new(attrs, "Resource_List.gpu_model", json_string(p->gpu_model));
		else
			json_object_del(attrs, "Resource_List.gpu_model");
	}
	/* Which nodes: qpoold's canonical texts, over whatever qsub
	 * recorded under these names (loaded back by the store). */
	if (p->sel || (attrs && (json_object_get(attrs, "Resource_List.nodelist") ||
				 json_object_get(attrs, "Resource_List.exclude") ||
				 json_object_get(attrs, "Resource_List.constraint")))) {
		static const char *const keys[] = { "Resource_List.nodelist", "Resource_List.exclude",
						    "Resource_List.constraint" };

		if (!attrs) {
			attrs = json_object();
			json_object_set_new(msg, "attrs", attrs);
		}
		for (int k = 0; k < 3; k++) {
			char text[NODESEL_TEXT_MAX];

			if (nodesel_text(p->sel, k, text, sizeof(text)))
				json_object_set_new(attrs, keys[k], json_string(text));
			else
				json_object_del(attrs, keys[k]);
		}
	}
	{
		/* Licenses: the canonical text is what the store loads back;
		 * Resource_List.NAME is PBS's view of each. */
		char lic[LICENSE_TEXT_MAX], why[200];
		struct license l[LICENSES_MAX];
		size_t n = 0;
		struct error lerr;

		if (submit_licenses_check(s->config, msg, attrs, lic, sizeof(lic), why, sizeof(why)) < 0) {
			snprintf(errbuf, errlen, "%s", why);
			return -EINVAL;
		}
		json_object_del(attrs, "Resource_List.licenses");
		json_object_del(attrs, "Resource_List.node_res");
		if (nres[0]) {
			if (!attrs) {
				attrs = json_object();
				json_object_set_new(msg, "attrs", attrs);
			}
			json_object_set_new(attrs, "Resource_List.node_res", json_string(nres));
		}
		if (lic[0] && license_request_parse(lic, l, LICENSES_MAX, &n, &lerr) == 0) {
			if (!attrs) {
				attrs = json_object();
				json_object_set_new(msg, "attrs", attrs);
			}
			json_object_set_new(attrs, "Resource_List.licenses", json_string(lic));
			for (size_t i = 0; i < n; i++) {
				char lkey[LICENSE_NAME_MAX + 16], lval[24];

				snprintf(lkey, sizeof(lkey), "Resource_List.%.63s", l[i].name);
				snprintf(lval, sizeof(lval), "%llu", (unsigned long long)l[i].count);
				json_object_set_new(attrs, lkey, json_string(lval));
			}
		}
	}
	if (attrs && json_object_size(attrs)) {
		char *text = json_dumps(attrs, JSON_COMPACT | JSON_SORT_KEYS);

		json_object_set_new(msg, "_attrs", json_string(text ? text : "{}"));
		free(text);
		p->submit.attrs_json = wire_str(msg, "_attrs");
	}
	return 0;
}

void op_submit(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct pending *p = calloc(1, sizeof(*p));
	char text[256];
	int r;

	if (!p) {
		conn_reply_err(c, req_id, ENOMEM, "qpoold is out of memory");
		return;
	}
	r = server_state_full(conn_ctx(c)) ? server_space_refuse(conn_ctx(c), text, sizeof(text))
					 : submit_check(conn_ctx(c), c, msg, p, text, sizeof(text));
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "%s", text);
		json_decref(p->strings);
		nodesel_destroy(p->sel);
		free(p->gpu_model);
		free(p);
		return;
	}
	p->conn = c;
	p->req_id = req_id;
	server_pending_add(conn_ctx(c), p);
}

/* Replies are pages, so none outgrows the 1 MiB message cap: a page holds
 * PAGE_JOBS jobs (PAGE_FULL with scripts), "more" says another follows,
 * and the client asks again with "after" = the last id it got.
 * lib/client's client_call_pages does that loop. */
#define PAGE_JOBS 1000
#define PAGE_FULL 50

/* Runs f for one page: fills *ret_jobs and *ret_more. */
static int query_page(struct hctx *s, struct jobstore_filter *f, json_t *msg, json_t **ret_jobs,
		      bool *ret_more)
{
	unsigned page = f->payload ? PAGE_FULL : PAGE_JOBS;
	int r;

	f->after = wire_int(msg, "after", 0);
	f->limit = page + 1;
	r = jobstore_query(s->store, f, ret_jobs);
	if (r < 0)
		return r;
	*ret_more = json_array_size(*ret_jobs) > page;
	if (*ret_more)
		json_array_remove(*ret_jobs, page);
	return 0;
}

/* A queued job that fits only nodes that are down (not back since a
 * restart, or gone) says so in its reason (qstat -f's comment), as PBS's
 * scheduler comments a job it cannot run; it waits for them. So does one
 * whose memory no usable node has free now. The first job of its queue
 * the last pass could not start for want of free CPUs, memory or GPUs
 * says that too: the others wait behind it (Slurm's Resources and
 * Priority). */
static void stat_wait_reasons(struct hctx *s, json_t *jobs)
{
	char why[200], both[400];
	size_t i;
	json_t *o;

	json_array_foreach(jobs, i, o) {
		const char *stored = wire_str(o, "reason");
		struct job *j;

		/* Suspended (suspend.c): still running for the pool. */
		if (strcmp(wire_str(o, "state") ?: "", "running") == 0 &&
		    (j = pool_job_find(s->pool, wire_int(o, "jobid", 0))) && j->suspended) {
			json_object_set_new(o, "suspended", json_true());
			json_object_set_new(o, "suspended_since", json_integer(j->t_suspend));
		}
		if (strcmp(wire_str(o, "state") ?: "", "queued") != 0)
			continue;
		j = pool_job_find(s->pool, wire_int(o, "jobid", 0));
		/* A waiting subjob without a row of its own (array.c): one
		 * waiting for a license says so, as its array would. */
		if (!j && wire_int(o, "array_id", 0) > 0) {
			j = pool_job_find(s->pool, wire_int(o, "array_id", 0));
			if (j && j->n_lic && pool_request_lic_wait(s->pool, s->config, j, why, sizeof(why)) > 0)
				json_object_set_new(o, "reason", json_string(why));
			continue;
		}
		if (!j || j->state != JOB_QUEUED)
			continue;
		if (pool_request_limit_wait(s->pool, config_queue(s->config, j->queue), j, why, sizeof(why)) <= 0 &&
		    pool_request_lic_wait(s->pool, s->config, j, why, sizeof(why)) <= 0 &&
		    pool_request_sel_wait(s->pool, j, why, sizeof(why)) <= 0 &&
		    pool_request_resv_wait(s->pool, j, time(NULL), why, sizeof(why)) <= 0 &&
		    pool_request_wait_reason(s->pool, j, why, sizeof(why)) <= 0 &&
		    pool_request_mem_wait(s->pool, j, why, sizeof(why)) <= 0)
			why[0] = '\0';
		if (pool_job_blocked_first(s->pool, j)) {
			size_t n = strlen(why);

			snprintf(why + n, sizeof(why) - n, "%sfirst in line, waiting for resources to free", n ? "; " : "");
		}
		if (!why[0])
			continue;
		/* After the stored reason ("requeued: node n5 was lost"), not
		 * instead of it. */
		if (stored && *stored)
			snprintf(both, sizeof(both), "%s; %s", stored, why);
		else
			snprintf(both, sizeof(both), "%s", why);
		json_object_set_new(o, "reason", json_string(both));
	}
}

/* A waiting job's start estimate from the last replay (estimate.c):
 * estimated_start (wall s) and estimated_exec_vnode, PBS's
 * estimated.start_time and estimated.exec_vnode; none: N/A. */
static void stat_estimates(struct hctx *s, json_t *jobs)
{
	struct server_est_stats est;
	size_t i;
	json_t *o;

	server_est_stats(s, &est);

	json_array_foreach(jobs, i, o) {
		const char *vnode;
		int64_t t;
		struct job *j;

		if (strcmp(wire_str(o, "state") ?: "", "queued") != 0)
			continue;
		j = pool_job_find(s->pool, wire_int(o, "jobid", 0));
		if (!j && wire_int(o, "array_id", 0) > 0)
			j = pool_job_find(s->pool, wire_int(o, "array_id", 0));
		if (!j || !pool_job_estimate(j, est.replay, &t, &vnode))
			continue;
		json_object_set_new(o, "estimated_start", json_integer(t));
		if (vnode)
			json_object_set_new(o, "estimated_exec_vnode", json_string(vnode));
	}
}

void op_stat(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	struct jobstore_filter f = {
		.jobid = wire_int(msg, "jobid", 0),
		.owner = wire_str(msg, "user"),
		.finished = wire_bool(msg, "finished", 0),
		.payload = wire_bool(msg, "full", 0),
		.payload_uid = c->uid,
		.subjobs = wire_bool(msg, "subjobs", 0),
	};
	json_t *jobs, *row;
	bool more;
	int r;

	/* ID[N]: its row, or the array's as that subjob while it waits. */
	if (f.jobid && json_is_integer(json_object_get(msg, "array_index"))) {
		r = array_subjob_row(s, f.jobid, wire_int(msg, "array_index", 0), &row);
		if (r < 0) {
			conn_reply_err(c, req_id, -r, "job %lld[%lld]: no such subjob", (long long)f.jobid,
				       wire_int(msg, "array_index", 0));
			return;
		}
		conn_reply_ok(c, req_id, json_pack("{s:[o], s:b}", "jobs", row, "more", 0));
		return;
	}
	r = query_page(s, &f, msg, &jobs, &more);
	if (r == 0 && f.subjobs)
		r = array_stat_subjobs(s, &f, PAGE_JOBS, jobs, &more);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	if (f.jobid && json_array_size(jobs) == 0 && !f.after) {
		json_decref(jobs);
		conn_reply_err(c, req_id, ENOENT, "job %lld: no such job", (long long)f.jobid);
		return;
	}
	stat_wait_reasons(s, jobs);
	stat_estimates(s, jobs);
	conn_reply_page(c, req_id, json_pack("{s:o, s:b}", "jobs", jobs, "more", more), "jobs");
}

static void reply_state(struct conn *c, long long req_id, enum job_state st)
{
	conn_reply_ok(c, req_id, json_pack("{s:s}", "state", job_state_name(st)));
}

void op_delete(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	struct job *j;
	const char *who = server_user_name(s, c->uid);
	char why[96];
	int64_t id;
	int r;

	if (array_request(c, "delete", req_id, msg))
		return;
	j = job_for_change(c, req_id, msg);
	if (!j)
		return;
	if (wire_bool(msg, "force", 0) && (j->state == JOB_RUNNING || j->state == JOB_EXITING)) {
		jobctl_delete_force(c, req_id, j);
		return;
	}
	snprintf(why, sizeof(why), "by %s", who ? who : "?");
	id = j->id;
	r = server_job_cancel(s, j, why);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	if (r == JOB_CANCELLED)
		log_info("job %lld cancelled by uid %d", (long long)id, (int)c->uid);
	reply_state(c, req_id, (enum job_state)r);
}

/* qexec outside a job: the job ends with this connection (after a grace
 * for a reconnect, ties.c), so a qexec killed with SIGKILL leaves nothing
 * running. */
void op_tie(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct job *j = job_for_change(c, req_id, msg);
	int r;

	if (!j)
		return;
	if (j->array_spec) {
		conn_reply_err(c, req_id, EINVAL, "job %lld is an array; only a job can be tied",
			       (long long)j->id);
		return;
	}
	r = ties_add(conn_ctx(c), c, j->id);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, r == -ENOSPC ? "job %lld: too many jobs tied already" :
			       "job %lld: out of memory", (long long)j->id);
		return;
	}
	log_info("job %lld tied to %s", (long long)j->id, c->peer);
	reply_state(c, req_id, j->state);
}

void op_hold_release(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	bool hold = strcmp(op, "hold") == 0;
	struct job *j;
	enum job_state from = hold ? JOB_QUEUED : JOB_HELD;
	enum job_state to = hold ? JOB_HELD : JOB_QUEUED;
	int r;

	if (array_request(c, hold ? "hold" : "release", req_id, msg))
		return;
	j = job_for_change(c, req_id, msg);
	if (!j)
		return;
	/* A system hold for dependencies: root may lift it (qrls -h s). */
	if (!hold && j->dep_wait) {
		if (c->uid != 0) {
			conn_reply_err(c, req_id, EPERM, "job %lld is held for its dependencies (depend=%s)%s%s",
				       (long long)j->id, j->depend ? j->depend : "?", j->reason ? ": " : "",
				       j->reason ? j->reason : "");
			return;
		}
		depend_forget(s, j);
	}
	/* Holding a held job changes nothing and is fine; releasing a job that
	 * is not held is a mistake worth saying, as PBS does. */
	if (hold && j->state == to) {
		reply_state(c, req_id, to);
		return;
	}
	if (j->state != from) {
		conn_reply_err(c, req_id, EBUSY, "job %lld is %s; only %s jobs can be %s", (long long)j->id,
			       job_state_name(j->state), job_state_name(from), hold ? "held" : "released");
		return;
	}
	r = jobstore_job_set_state(s->store, j->id, to, NULL);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	pool_job_state_set(s->pool, j, to);
	if (!hold)
		hctx_resched(s);
	reply_state(c, req_id, to);
}

void op_queues(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	json_t *arr = json_array();

	for (size_t i = 0; i < s->config->n_queues; i++) {
		const struct queue_conf *q = &s->config->queues[i];
		unsigned counts[JOB_STATE_MAX] = { 0 };
		json_t *extra;

		for (struct job *j = pool_jobs(s->pool); j; j = j->next)
			if (strcmp(j->queue, q->name) == 0)
				counts[j->state]++;
		json_array_append_new(arr, json_pack(
			"{s:s, s:b, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:I, s:I, s:I}",
			"name", q->name, "default", q->is_default, "enabled", q->enabled,
			"started", q->started, "priority", (json_int_t)q->priority,
			"ncpus", (json_int_t)q->ncpus, "ncpus_default", (json_int_t)q->ncpus_default,
			"ncpus_max", (json_int_t)q->ncpus_max, "mem_default", (json_int_t)q->mem_default,
			"mem_max", (json_int_t)q->mem_max, "walltime_default", (json_int_t)q->walltime_default,
			"walltime_max", (json_int_t)q->walltime_max, "reserve", queue_reserve_name(q->reserve),
			"queued", (json_int_t)counts[JOB_QUEUED], "held", (json_int_t)counts[JOB_HELD],
			"running", (json_int_t)(counts[JOB_RUNNING] + counts[JOB_EXITING])));
		extra = json_pack("{s:s, s:I, s:I, s:b, s:b, s:I, s:s}", "reason", q->reason,
				  "max_running", (json_int_t)q->max_running,
				  "max_running_per_user", (json_int_t)q->max_running_per_user,
				  "strict", q->strict, "smt", q->smt, "max_ngpus", (json_int_t)q->max_ngpus,
				  "gpu_locality", q->gpu_locality == QUEUE_GPU_REQUIRE ? "require" : "prefer");
		json_object_update(json_array_get(arr, json_array_size(arr) - 1), extra);
		json_decref(extra);
	}
	/* The server's side of qstat -B and qmgr's print server: who leads. */
	/* ... and the pool's licenses (qstat -Bf, scontrol show licenses). */
	conn_reply_ok(c, req_id, json_pack("{s:o, s:o*, s:o*}", "queues", arr, "ha", server_ha_json(s), "licenses",
					   pool_licenses_json(s->pool, s->config)));
}

/* Lists by position (nodes, a queue's order) answer in pages too: at most
 * PAGE_ITEMS items from "offset", "more" when others follow; the client
 * asks again with offset + what it got (conn_reply_page may give fewer). */
#define PAGE_ITEMS 1000

void op_nodes(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	json_t *arr = json_array();
	long long offset = wire_int(msg, "offset", 0), i = 0;
	bool more = false;

	for (struct node *n = pool_nodes(s->pool); n; n = n->next, i++) {
		json_t *jobs;
		char cpus[4096];

		if (i < offset)
			continue;
		if (i >= offset + PAGE_ITEMS) {
			more = true;
			break;
		}
		jobs = json_array();
		/* The node's own list, not every job of the pool per node. */
		for (struct alloc_entry *e = pool_node_jobs(n); e; e = e->nnext)
			json_array_append_new(jobs, json_integer(e->job->id));
		cpumask_format(&n->cpus, cpus, sizeof(cpus));
		json_array_append_new(arr, json_pack(
			"{s:s, s:s, s:s, s:I, s:I, s:s, s:O?, s:s, s:b, s:s, s:o}",
			"name", n->name, "state", node_state_name(!n->link ? NODE_DOWN : n->drain ? NODE_DRAINED : n->state), "cpus", cpus,
			"ncpus", (json_int_t)cpumask_count(&n->cpus), "free", (json_int_t)cpumask_count(&n->free),
			"mems", n->mems, "topology", n->topology, "cgroup", n->cgroup, "rt", n->rt,
			"rt_reason", n->rt_reason ? n->rt_reason : "", "jobs", jobs));
		/* Its GPUs (docs/GPUS.md), each held one with its job. */
		json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "ngpus",
				    json_integer((json_int_t)n->n_gpus));
		json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "gpus_free",
				    json_integer((json_int_t)pool_node_gpus_free(n)));
		json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "gpus", pool_node_gpus_json(n));
		json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "features",
				    json_string(n->features ? n->features : ""));
		{
			/* Counted resources (docs/RESOURCES.md), with what its jobs hold. */
			char gres[NODERES_TEXT_MAX];

			json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "resources",
					    pool_node_res_json(n, gres, sizeof(gres)));
			json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "gres", json_string(gres));
		}
		/* Memory counted (docs/ARCHITECTURE.md): what its jobs hold,
		 * and what is free of its offer (absent: it did not say). */
		json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "mem_assigned",
				    json_integer((json_int_t)n->mem_used));
		if (pool_node_mem(n))
			json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "mem_free",
					    json_integer((json_int_t)pool_node_mem_free(n)));
		/* And of each NUMA node's part (docs/RESOURCES.md). */
		{
			json_t *numa = pool_node_numa_free_json(n);

			if (numa)
				json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "mem_free_numa",
						    numa);
		}
		if (n->drain_reason)
			json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "reason",
					    json_string(n->drain_reason));
		/* Who drained it: admin, health (its check), hook. */
		if (n->drain)
			json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "drained_by",
					    json_string(node_drain_by_name(n->drain_by)));
		/* When (wall seconds; absent when drained before qpoold started). */
		if (n->drain && n->drain_time)
			json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "drained_at",
					    json_integer((json_int_t)(n->drain_time / 1000000000LL)));
		/* Known from the store, not registered since qpoold started. */
		if (!n->back)
			json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "back", json_false());
		if (n->t_register)
			json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "registered",
					    json_pack("{s:I, s:s}", "time", (json_int_t)n->t_register,
						      "address", n->address));
	}
	conn_reply_page(c, req_id, json_pack("{s:o, s:b}", "nodes", arr, "more", more), "nodes");
}

/* Raw accounting records for a window: every job not done before `from`
 * and submitted by `to` (0: open), with each known node's CPU count for
 * utilization. Reports are computed by the client (accounting/). No
 * script or environment is included, so any user may read them, as
 * qstat -x shows every user's jobs. */
void op_acct(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	struct jobstore_filter f = {
		.jobid = wire_int(msg, "jobid", 0),
		.owner = wire_str(msg, "user"),
		.finished = true,
		.from = wire_int(msg, "from", 0),
		.to = wire_int(msg, "to", 0),
		/* Records are the subjobs that ran; an array's own record
		 * (their sums) only when asked for by its id, so summaries
		 * count nothing twice. */
	};
	json_t *jobs, *nodes = json_array();
	bool more;
	int r;

	/* Records are the subjobs that ran; an array's own record (their
	 * sums) only when asked for by its id, so summaries count nothing
	 * twice. */
	f.subjobs = f.no_arrays = f.jobid == 0;
	r = query_page(s, &f, msg, &jobs, &more);
	if (r < 0) {
		json_decref(nodes);
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	if (f.jobid && json_array_size(jobs) == 0 && !f.after) {
		json_decref(jobs);
		json_decref(nodes);
		conn_reply_err(c, req_id, ENOENT, "job %lld: no such job", (long long)f.jobid);
		return;
	}
	/* The nodes go with the last page only (client_call_pages keeps the
	 * last reply): thousands of them in every page crowded out the jobs. */
	for (struct node *n = more ? NULL : pool_nodes(s->pool); n; n = n->next)
		json_array_append_new(nodes, json_pack("{s:s, s:I, s:s, s:I}", "name", n->name,
						       "ncpus", (json_int_t)cpumask_count(&n->cpus),
						       "state", node_state_name(n->state), "ngpus", (json_int_t)n->n_gpus));
	conn_reply_page(c, req_id, json_pack("{s:o, s:o, s:I, s:b}", "jobs", jobs, "nodes", nodes,
					     "now", (json_int_t)time_wall_ns(), "more", more), "jobs");
}

/* VmRSS of this process in bytes, 0 when /proc cannot tell. */
static uint64_t self_rss(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long long kb = 0;
	char line[256];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* What the scheduler costs: passes, their time, dispatches, job counts by
 * state, nodes up, and this process's RSS (make bench reads it). */
void op_stats(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	json_int_t by_state[JOB_STATE_MAX] = { 0 };
	json_int_t nodes = 0, nodes_up = 0;
	struct depend_stats ds;
	struct server_est_stats est;
	struct pool_stats st;

	pool_stats_get(s->pool, &st);
	depend_stats(s, &ds);
	server_est_stats(s, &est);
	for (struct job *j = pool_jobs(s->pool); j; j = j->next)
		if ((unsigned)j->state < JOB_STATE_MAX)
			by_state[j->state]++;
	for (struct node *n = pool_nodes(s->pool); n; n = n->next) {
		nodes++;
		nodes_up += pool_node_usable(n);
	}
	conn_reply_ok(c, req_id, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
		" s:I, s:I, s:I, s:I, s:I, s:o*}", "estimate_replays", (json_int_t)est.replay,
		"estimate_ns_last", (json_int_t)est.ns_last, "estimate_ns_max", (json_int_t)est.ns_max,
		"watchers", (json_int_t)watch_count(s),
		"events_committed", (json_int_t)jobstore_events_committed(s->store),
		"passes", (json_int_t)st.passes, "pass_ns_total", (json_int_t)st.pass_ns_total,
		"pass_ns_max", (json_int_t)st.pass_ns_max, "pass_ns_last", (json_int_t)st.pass_ns_last,
		"dispatches", (json_int_t)st.dispatches, "queued", by_state[JOB_QUEUED],
		"held", by_state[JOB_HELD], "running", by_state[JOB_RUNNING],
		"exiting", by_state[JOB_EXITING], "nodes", nodes, "nodes_up", nodes_up,
		"rss", (json_int_t)self_rss(), "dep_waiting", (json_int_t)ds.waiting,
		"dep_decided", (json_int_t)ds.decided, "store_rows_read", (json_int_t)jobstore_rows_read(s->store),
		"cpu_ns", cpu_parts_json()));
}

/* The members of the client ops and their JSON types. A member present
 * with another type is refused (docs/PROTOCOL.md), never read as absent:
 * "jobid": "1; DROP" must not mean "every job". */
static const struct {
	const char *name;
	enum { T_INT, T_STR, T_BOOL, T_OBJ, T_ARRAY } type;
} members[] = {
	{ "jobid", T_INT }, { "ncpus", T_INT }, { "ngpus", T_INT }, { "mem", T_INT }, { "walltime", T_INT },
	{ "chunks", T_ARRAY }, { "place", T_STR },
	{ "from", T_INT }, { "to", T_INT }, { "after", T_INT }, { "offset", T_INT },
	{ "script", T_STR }, { "name", T_STR }, { "queue", T_STR }, { "workdir", T_STR },
	{ "stdout", T_STR }, { "stderr", T_STR }, { "user", T_STR }, { "action", T_STR },
	{ "target", T_STR }, { "reason", T_STR },
	{ "join", T_BOOL }, { "hold", T_BOOL }, { "rerunnable", T_BOOL }, { "finished", T_BOOL },
	{ "full", T_BOOL }, { "env", T_OBJ }, { "umask", T_INT }, { "attrs", T_OBJ },
	{ "priority", T_INT }, { "begin", T_INT },
	{ "signal", T_INT }, { "other", T_INT }, { "force", T_BOOL },
	{ "array_index", T_INT }, { "array_last", T_INT }, { "subjobs", T_BOOL }, { "interactive", T_BOOL },
	{ "depend", T_STR }, { "since", T_INT }, { "jobs", T_ARRAY },
	{ "account", T_STR }, { "parent", T_STR }, { "description", T_STR }, { "shares", T_INT },
	{ "default", T_BOOL }, { "grp_cpus", T_INT }, { "grp_gpus", T_INT }, { "grp_jobs", T_INT },
	{ "preempt", T_STR }, { "preempt_mode", T_STR }, { "qos", T_STR }, { "default_qos", T_STR },
	{ "max_cpus_per_user", T_INT }, { "max_gpus_per_user", T_INT }, { "max_jobs_per_user", T_INT },
	{ "max_wall", T_INT }, { "cpu_mins", T_INT }, { "gpu_mins", T_INT },
	/* "array" is the index set (a string) in submit, "all of it" (a
	 * bool) elsewhere: checked where it is read. */
};

const char *request_member_mistyped(const json_t *msg)
{
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		const json_t *v = json_object_get(msg, members[i].name);
		bool ok;

		if (!v)
			continue;
		switch (members[i].type) {
		case T_INT: ok = json_is_integer(v); break;
		case T_STR: ok = json_is_string(v); break;
		case T_BOOL: ok = json_is_boolean(v); break;
		case T_ARRAY: ok = json_is_array(v); break;
		default: ok = json_is_object(v); break;
		}
		if (!ok)
			return members[i].name;
	}
	return NULL;
}
