/* SPDX-License-Identifier: MIT */
/* qpool-pmi's PMIx side: libpmix's server for this node's ranks. libpmix
 * calls the host from its own progress thread; every call is handed to
 * the main loop (the host's call) and answered from there. It calls the
 * loop (server.c) only through the host table the loop gives it. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>

#include "gate.h"
#include "pmid.h"

struct pmid_pmix {
	struct pmid *d;
	const struct pmid_pmix_host *host;   /* the loop, called through this only */
	const struct pmid_args *a;
	char nspace[PMIX_MAX_NSLEN + 1];
	int inited;
	hwloc_topology_t topo;     /* the node's, discovered once for libpmix and the ranks */
	char topo_env[4200];       /* OMPI_MCA_hwloc_base_topo_file=..., or "" */
	volatile int port;         /* libpmix's loopback TCP port, from the ranks' URI; 0 before */
};

/* The one server of this process: libpmix's callbacks carry no host
 * pointer but cbdata, and its module is process-wide. */
static struct pmid_pmix *the;

/* Hands fn(arg) to the loop's thread (the host's call); arg is the loop's
 * from then on. 0 or -errno. */
static int loop_call(pmid_call_f *fn, void *arg)
{
	return the->host->call(the->d, fn, arg);
}

/* Waits for one of libpmix's op callbacks. */
struct sync {
	pthread_mutex_t m;
	pthread_cond_t c;
	int done;
	pmix_status_t st;
};

static void sync_cb(pmix_status_t st, void *arg)
{
	struct sync *s = arg;

	pthread_mutex_lock(&s->m);
	s->st = st;
	s->done = 1;
	pthread_cond_signal(&s->c);
	pthread_mutex_unlock(&s->m);
}

static pmix_status_t sync_wait(struct sync *s, pmix_status_t rc)
{
	if (rc == PMIX_OPERATION_SUCCEEDED)
		return PMIX_SUCCESS;
	if (rc != PMIX_SUCCESS)
		return rc;
	pthread_mutex_lock(&s->m);
	while (!s->done)
		pthread_cond_wait(&s->c, &s->m);
	pthread_mutex_unlock(&s->m);
	return s->st;
}

#define SYNC_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 }

/* --- fence ---------------------------------------------------------- */

struct fence_ctx {
	char *data;
	size_t len;
	pmix_modex_cbfunc_t cbfunc;
	void *cbdata;
};

static void release_buf(void *arg)
{
	free(arg);
}

static void fence_done(struct pmid *d, void *arg, const char *blob, size_t len)
{
	struct fence_ctx *f = arg;

	if (!blob) {
		f->cbfunc(PMIX_ERROR, NULL, 0, f->cbdata, NULL, NULL);
	} else {
		char *copy = malloc(len ? len : 1);

		if (!copy) {
			f->cbfunc(PMIX_ERR_NOMEM, NULL, 0, f->cbdata, NULL, NULL);
		} else {
			memcpy(copy, blob, len);
			f->cbfunc(PMIX_SUCCESS, copy, len, f->cbdata, release_buf, copy);
		}
	}
	free(f->data);
	free(f);
}

static void fence_main(struct pmid *d, void *arg)
{
	struct fence_ctx *f = arg;

	if (the->host->fence_blob(d, f->data ? f->data : "", f->len, fence_done, f) < 0)
		fence_done(d, f, NULL, 0);
}

/* Every fence of the job's ranks is job-wide here (MPI_Init's and
 * MPI_Finalize's): the servers exchange what their ranks contributed. A
 * fence with no data is the same exchange with empty blobs; libpmix
 * passes collect-data or not in info, and either way the non-blocking
 * call returns at once. */
static pmix_status_t s_fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
				size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
				void *cbdata)
{
	struct fence_ctx *f = calloc(1, sizeof(*f));

	if (!f)
		return PMIX_ERR_NOMEM;
	if (ndata) {
		f->data = malloc(ndata);
		if (!f->data) {
			free(f);
			return PMIX_ERR_NOMEM;
		}
		memcpy(f->data, data, ndata);
	}
	f->len = ndata;
	f->cbfunc = cbfunc;
	f->cbdata = cbdata;
	if (loop_call(fence_main, f) < 0) {
		free(f->data);
		free(f);
		return PMIX_ERROR;
	}
	return PMIX_SUCCESS;
}

/* --- direct modex ------------------------------------------------------ */

struct dmdx_ctx {
	int rank;
	pmix_modex_cbfunc_t cbfunc;
	void *cbdata;
};

static void dmdx_done(struct pmid *d, void *arg, const char *blob, size_t len)
{
	struct dmdx_ctx *c = arg;

	if (!blob) {
		c->cbfunc(PMIX_ERR_NOT_FOUND, NULL, 0, c->cbdata, NULL, NULL);
	} else {
		char *copy = malloc(len ? len : 1);

		if (copy)
			memcpy(copy, blob, len);
		c->cbfunc(copy ? PMIX_SUCCESS : PMIX_ERR_NOMEM, copy, copy ? len : 0, c->cbdata,
			  copy ? release_buf : NULL, copy);
	}
	free(c);
}

static void dmdx_main(struct pmid *d, void *arg)
{
	struct dmdx_ctx *c = arg;

	if (the->host->dmodex(d, c->rank, dmdx_done, c) < 0)
		dmdx_done(d, c, NULL, 0);
}

static pmix_status_t s_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
				    pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
	struct dmdx_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return PMIX_ERR_NOMEM;
	c->rank = (int)proc->rank;
	c->cbfunc = cbfunc;
	c->cbdata = cbdata;
	if (loop_call(dmdx_main, c) < 0) {
		free(c);
		return PMIX_ERROR;
	}
	return PMIX_SUCCESS;
}

/* A request from another node for one of ours: libpmix answers once the
 * rank has committed its data. */
struct local_ctx {
	pmid_fence_done_f *done;
	void *arg;
	char *data;
	size_t len;
	int ok;
};

static void local_main(struct pmid *d, void *arg)
{
	struct local_ctx *l = arg;

	l->done(d, l->arg, l->ok ? (l->data ? l->data : "") : NULL, l->len);
	free(l->data);
	free(l);
}

static void local_cb(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
	struct local_ctx *l = cbdata;

	l->ok = status == PMIX_SUCCESS;
	if (l->ok && sz) {
		l->data = malloc(sz);
		if (l->data) {
			memcpy(l->data, data, sz);
			l->len = sz;
		} else {
			l->ok = 0;
		}
	}
	loop_call(local_main, l);
}

int pmid_pmix_dmodex_local(struct pmid_pmix *p, int rank, pmid_fence_done_f *done, void *arg)
{
	struct local_ctx *l = calloc(1, sizeof(*l));
	pmix_proc_t proc;

	if (!l)
		return -ENOMEM;
	l->done = done;
	l->arg = arg;
	PMIX_LOAD_PROCID(&proc, p->nspace, (pmix_rank_t)rank);
	if (PMIx_server_dmodex_request(&proc, local_cb, l) != PMIX_SUCCESS) {
		free(l);
		return -EIO;
	}
	return 0;
}

/* --- abort ---------------------------------------------------------- */

struct abort_ctx {
	int rank;
	int status;
	char msg[256];
};

static void abort_main(struct pmid *d, void *arg)
{
	struct abort_ctx *c = arg;

	the->host->fail(d, c->status > 0 && c->status < 256 ? c->status : 1,
			"rank %d aborted the job (status %d)%s%s", c->rank, c->status, c->msg[0] ? ": " : "", c->msg);
	free(c);
}

static pmix_status_t s_abort(const pmix_proc_t *proc, void *server_object, int status, const char msg[],
			     pmix_proc_t procs[], size_t nprocs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
	struct abort_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return PMIX_ERR_NOMEM;
	c->rank = (int)proc->rank;
	c->status = status;
	if (msg) {
		snprintf(c->msg, sizeof(c->msg), "%s", msg);
		c->msg[strcspn(c->msg, "\n")] = '\0';
	}
	loop_call(abort_main, c);
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t s_finalized(const pmix_proc_t *proc, void *server_object, pmix_op_cbfunc_t cbfunc,
				 void *cbdata)
{
	return PMIX_OPERATION_SUCCEEDED;
}

static void connected_main(struct pmid *d, void *arg)
{
	the->host->rank_connected(d, (int)(intptr_t)arg);
}

static void severed_main(struct pmid *d, void *arg)
{
	the->host->refused(d, "PMIx: severed %d connection(s) of another user", (int)(intptr_t)arg);
}

/* libpmix 4 serves its clients over loopback TCP only, and there its
 * psec/native takes the uid and gid the client itself sends (openpmix
 * src/mca/psec/native/psec_native.c, validate_cred, PMIX_PROTOCOL_V2):
 * another user who names the job's namespace and a rank, with geteuid
 * made to lie, is taken for that rank and its PMIx_Abort ends the job
 * (tests/integration/t-pmi-gate.sh). libpmix calls this during each
 * client's handshake, before it reads anything more from that client:
 * every socket of this process whose other end belongs to another user
 * is severed there, the connecting one included, with what it queued. */
static pmix_status_t s_connected(const pmix_proc_t *proc, void *server_object, pmix_op_cbfunc_t cbfunc,
				 void *cbdata)
{
	int n = gate_sever_strangers(the->port);

	if (n > 0)
		loop_call(severed_main, (void *)(intptr_t)n);
	loop_call(connected_main, (void *)(intptr_t)proc->rank);
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_server_module_t module = {
	.client_connected = s_connected,
	.client_finalized = s_finalized,
	.abort = s_abort,
	.fence_nb = s_fence_nb,
	.direct_modex = s_direct_modex,
};

/* --- the job -------------------------------------------------------- */

static void info_str(pmix_info_t *i, const char *key, const char *v)
{
	PMIX_INFO_LOAD(i, key, v, PMIX_STRING);
}

static void info_u32(pmix_info_t *i, const char *key, uint32_t v)
{
	PMIX_INFO_LOAD(i, key, &v, PMIX_UINT32);
}

static void info_u16(pmix_info_t *i, const char *key, uint16_t v)
{
	PMIX_INFO_LOAD(i, key, &v, PMIX_UINT16);
}

/* "a,b;c,d": each node's ranks, comma-separated, nodes by ';'. */
static char *ranks_by_node(const struct pmid_args *a, int only)
{
	size_t cap = 64, len = 0;
	char *s = malloc(cap);
	int rank = 0;

	if (!s)
		return NULL;
	s[0] = '\0';
	for (int n = 0; n < a->nnodes; n++) {
		for (int k = 0; k < a->ranks[n]; k++, rank++) {
			char num[24];
			int w;

			if (only >= 0 && n != only)
				continue;
			w = snprintf(num, sizeof(num), "%s%d", len == 0 ? "" : k == 0 ? ";" : ",", rank);
			if (len + (size_t)w + 1 > cap) {
				char *t;

				cap = (cap + (size_t)w) * 2;
				t = realloc(s, cap);
				if (!t) {
					free(s);
					return NULL;
				}
				s = t;
			}
			memcpy(s + len, num, (size_t)w + 1);
			len += (size_t)w;
		}
	}
	return s;
}

static char *node_names(const struct pmid_args *a)
{
	size_t len = 1;
	char *s;

	for (int n = 0; n < a->nnodes; n++)
		len += strlen(a->names[n]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int n = 0; n < a->nnodes; n++) {
		if (n)
			strcat(s, ",");
		strcat(s, a->names[n]);
	}
	return s;
}

static int register_job(struct pmid_pmix *p, struct error *err)
{
	const struct pmid_args *a = p->a;
	int size = 0, first = 0, nlocal = a->ranks[a->node];
	char *names = node_names(a), *regex = NULL, *ppn = NULL;
	char *all = ranks_by_node(a, -1), *local = ranks_by_node(a, a->node);
	pmix_info_t *info = NULL;
	size_t ninfo = 12 + (size_t)0, k = 0;
	struct sync s = SYNC_INIT;
	pmix_status_t rc;
	int ret = 0;

	for (int n = 0; n < a->nnodes; n++)
		size += a->ranks[n];
	for (int n = 0; n < a->node; n++)
		first += a->ranks[n];
	if (!names || !all || !local) {
		ret = error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	if (PMIx_generate_regex(names, &regex) != PMIX_SUCCESS ||
	    PMIx_generate_ppn(all, &ppn) != PMIX_SUCCESS) {
		ret = error_set(err, -EINVAL, "cannot describe the nodes to libpmix");
		goto done;
	}
	ninfo += (size_t)size;
	PMIX_INFO_CREATE(info, ninfo);
	info_u32(&info[k++], PMIX_UNIV_SIZE, (uint32_t)size);
	info_u32(&info[k++], PMIX_JOB_SIZE, (uint32_t)size);
	info_u32(&info[k++], PMIX_MAX_PROCS, (uint32_t)size);
	info_str(&info[k++], PMIX_JOBID, a->kvsname);
	info_u32(&info[k++], PMIX_APPNUM, 0);
	info_u32(&info[k++], PMIX_NUM_NODES, (uint32_t)a->nnodes);
	info_str(&info[k++], PMIX_NODE_MAP, regex);
	info_str(&info[k++], PMIX_PROC_MAP, ppn);
	info_str(&info[k++], PMIX_LOCAL_PEERS, local);
	info_u32(&info[k++], PMIX_LOCAL_SIZE, (uint32_t)nlocal);
	info_u32(&info[k++], PMIX_NODE_SIZE, (uint32_t)nlocal);
	info_u32(&info[k++], PMIX_LOCALLDR, (uint32_t)first);
	/* every rank: where it lives, its local and node rank */
	for (int r = 0, node = 0, base = 0; r < size; r++) {
		pmix_data_array_t *darray;
		pmix_info_t *pi;
		pmix_rank_t rr = (pmix_rank_t)r;

		while (r >= base + a->ranks[node])
			base += a->ranks[node++];
		PMIX_DATA_ARRAY_CREATE(darray, 5, PMIX_INFO);
		pi = darray->array;
		PMIX_INFO_LOAD(&pi[0], PMIX_RANK, &rr, PMIX_PROC_RANK);
		info_u16(&pi[1], PMIX_LOCAL_RANK, (uint16_t)(r - base));
		info_u16(&pi[2], PMIX_NODE_RANK, (uint16_t)(r - base));
		info_u32(&pi[3], PMIX_NODEID, (uint32_t)node);
		info_str(&pi[4], PMIX_HOSTNAME, a->names[node]);
		PMIX_INFO_LOAD(&info[k++], PMIX_PROC_DATA, darray, PMIX_DATA_ARRAY);
		PMIX_DATA_ARRAY_FREE(darray);
	}
	rc = sync_wait(&s, PMIx_server_register_nspace(p->nspace, nlocal, info, k, sync_cb, &s));
	if (rc != PMIX_SUCCESS) {
		ret = error_set(err, -EIO, "register namespace: %s", PMIx_Error_string(rc));
		goto done;
	}
	/* the job's owner: this server runs as the job's owner, in the job */
	for (int i = 0; i < nlocal; i++) {
		struct sync c = SYNC_INIT;
		pmix_proc_t proc;

		PMIX_LOAD_PROCID(&proc, p->nspace, (pmix_rank_t)(first + i));
		rc = sync_wait(&c, PMIx_server_register_client(&proc, getuid(), getgid(), NULL, sync_cb, &c));
		if (rc != PMIX_SUCCESS) {
			ret = error_set(err, -EIO, "register rank %d: %s", first + i, PMIx_Error_string(rc));
			goto done;
		}
	}
done:
	if (info)
		PMIX_INFO_FREE(info, ninfo);
	free(names);
	free(regex);
	free(ppn);
	free(all);
	free(local);
	return ret;
}

int pmid_pmix_create(struct pmid *d, const struct pmid_pmix_host *host, const struct pmid_args *a,
		     const char *tmpdir, struct pmid_pmix **ret, struct error *err)
{
	struct pmid_pmix *p;
	pmix_info_t *info;
	pmix_status_t rc;
	bool no = false;

	if (the)
		return error_set(err, -EBUSY, "one PMIx server per process");
	p = calloc(1, sizeof(*p));
	if (!p)
		return error_set(err, -ENOMEM, "out of memory");
	p->d = d;
	p->host = host;
	p->a = a;
	snprintf(p->nspace, sizeof(p->nspace), "%s", a->kvsname);
	the = p;
	/* The node's topology, discovered once here (as the job sees it: its
	 * cpuset) and handed to libpmix, which would discover it again
	 * otherwise, and to Open MPI's ranks as an XML file, which each would
	 * discover it again otherwise (docs/PMI.md, figures). */
	if (hwloc_topology_init(&p->topo) == 0) {
		hwloc_topology_set_io_types_filter(p->topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
#ifdef __SANITIZE_ADDRESS__
		/* A sanitized build (the ASan pass of make check) leaves out
		 * hwloc's PCI plugin: libpciaccess reads pci.ids growing one
		 * buffer by realloc, which ASan serves with an mmap and a
		 * munmap each time (4,400 of them, 1.5 s and 560 MB of
		 * quarantine a server against 0.05 s without). The code of
		 * ours that the topology passes through is the same. */
		hwloc_topology_set_components(p->topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
#endif
		if (hwloc_topology_load(p->topo) < 0) {
			hwloc_topology_destroy(p->topo);
			p->topo = NULL;
		}
	} else {
		p->topo = NULL;
	}
	if (p->topo && !getenv("OMPI_MCA_hwloc_base_topo_file")) {
		char path[4100];

		snprintf(path, sizeof(path), "%s/topology.xml", tmpdir);
		if (hwloc_topology_export_xml(p->topo, path, 0) == 0)
			snprintf(p->topo_env, sizeof(p->topo_env), "OMPI_MCA_hwloc_base_topo_file=%s", path);
	}
	pmix_topology_t topo = { .source = "hwloc", .topology = p->topo };
	size_t ninfo = p->topo ? 4 : 3;

	PMIX_INFO_CREATE(info, ninfo);
	info_str(&info[0], PMIX_SERVER_TMPDIR, tmpdir);
	info_str(&info[1], PMIX_SYSTEM_TMPDIR, tmpdir);
	/* no system-wide rendezvous file: tools find nothing of this job */
	PMIX_INFO_LOAD(&info[2], PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
	if (p->topo)
		PMIX_INFO_LOAD(&info[3], PMIX_TOPOLOGY2, &topo, PMIX_TOPO);
	rc = PMIx_server_init(&module, info, ninfo);
	PMIX_INFO_FREE(info, ninfo);
	if (rc != PMIX_SUCCESS) {
		the = NULL;
		if (p->topo)
			hwloc_topology_destroy(p->topo);
		free(p);
		return error_set(err, -EIO, "server init: %s", PMIx_Error_string(rc));
	}
	p->inited = 1;
	if (register_job(p, err) < 0) {
		pmid_pmix_destroy(p);
		return -EIO;
	}
	*ret = p;
	return 0;
}

int pmid_pmix_rank_env(struct pmid_pmix *p, int rank, char ***env, size_t *n)
{
	pmix_proc_t proc;
	char **e = NULL;

	PMIX_LOAD_PROCID(&proc, p->nspace, (pmix_rank_t)rank);
	if (PMIx_server_setup_fork(&proc, &e) != PMIX_SUCCESS)
		return -EIO;
	*n = 0;
	while (e && e[*n]) {
		const char *tcp = strstr(e[*n], "tcp4://");

		/* the port libpmix serves its clients on, for s_connected */
		if (!p->port && strncmp(e[*n], "PMIX_SERVER_URI", 15) == 0 && tcp && strrchr(tcp, ':'))
			p->port = atoi(strrchr(tcp, ':') + 1);
		(*n)++;
	}
	if (p->topo_env[0]) {
		char **ne = realloc(e, (*n + 2) * sizeof(*e));

		if (!ne || !(ne[*n] = strdup(p->topo_env))) {
			char **f = ne ? ne : e;

			for (size_t k = 0; k < *n; k++)
				free(f[k]);
			free(f);
			*n = 0;
			return -ENOMEM;
		}
		ne[++*n] = NULL;
		e = ne;
	}
	*env = e;
	return 0;
}

void pmid_pmix_destroy(struct pmid_pmix *p)
{
	if (!p)
		return;
	if (p->inited)
		PMIx_server_finalize();
	if (p->topo)
		hwloc_topology_destroy(p->topo);   /* libpmix's was a loan */
	if (the == p)
		the = NULL;
	free(p);
}
