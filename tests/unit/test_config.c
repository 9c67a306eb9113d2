/* SPDX-License-Identifier: MIT */
/* qpool.conf: defaults, comments, file:line errors, the shipped example,
 * and that qpool.conf(5) documents every key of the table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "unit.h"

/* Loads text from a temp file; returns the load's result, err set. */
static int load_text(const char *text, struct config **ret, struct error *err, char **ret_dir)
{
	char *dir = unit_tmpdir();
	char path[4200];
	int r;

	unit_write_file(dir, "q.conf", text);
	snprintf(path, sizeof(path), "%s/q.conf", dir);
	r = config_load(path, ret, err);
	*ret_dir = dir;
	return r;
}

static void test_defaults_and_comments(void)
{
	struct config *c = NULL;
	struct error err;
	char *dir;
	const struct queue_conf *q;

	CU_ASSERT_EQUAL_FATAL(load_text("# comment\n[server]\nstate_dir = /s # inline\nsocket = /s/sock ; also\n"
					"[queue empty]\n[queue b]\ndefault = yes\nmem_max = 8G\nwalltime_max = 1:00:00:00\n",
					&c, &err, &dir), 0);
	CU_ASSERT_STRING_EQUAL(c->state_dir, "/s");
	CU_ASSERT_STRING_EQUAL(c->socket, "/s/sock");
	CU_ASSERT_EQUAL(c->heartbeat_interval, 5);
	CU_ASSERT_EQUAL(c->lease_time, 3);
	CU_ASSERT_EQUAL(c->lease_renew, 1);
	CU_ASSERT_STRING_EQUAL(c->advertise, "");
	CU_ASSERT_STRING_EQUAL(c->server_id, "");
	CU_ASSERT_STRING_EQUAL(c->cgroup_root, "/sys/fs/cgroup");
	CU_ASSERT_STRING_EQUAL(c->cgroup_parent, "qpool");
	CU_ASSERT_EQUAL(c->node_pids_max, 0);
	CU_ASSERT_EQUAL(c->mem_reserve, 512ULL << 20);
	CU_ASSERT_EQUAL(c->memcg_reclaim_threshold, 4096);
	CU_ASSERT_STRING_EQUAL(c->gpus, "auto");
	/* An empty section is a queue with every default. */
	q = config_queue(c, "empty");
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_EQUAL(q->ncpus_default, 1);
	CU_ASSERT_EQUAL(q->walltime_default, 3600);
	CU_ASSERT(q->enabled && q->started && !q->is_default);
	CU_ASSERT_PTR_EQUAL(config_default_queue(c), config_queue(c, "b"));
	CU_ASSERT_EQUAL(config_queue(c, "b")->mem_max, 8ULL << 30);
	CU_ASSERT_EQUAL(config_queue(c, "b")->walltime_max, 86400);
	config_destroy(c);
	unit_tmpdir_remove(dir);
}

static void test_errors(void)
{
	static const struct {
		const char *text;
		const char *want;   /* after "path:" */
	} cases[] = {
		{ "[server]\nbogus = 1\n", ":2: bogus: unknown key in [server]" },
		{ "[server]\n\n\nstate_dir = relative\n", ":4: state_dir = relative: not an absolute path" },
		{ "[queue a]\nmem_max = 12Q\n", ":2: mem_max = 12Q: not a size" },
		{ "[queue a]\nwalltime_max = 1:99\n", ":2: walltime_max = 1:99: not a duration" },
		{ "[queue a]\n[queue a]\n", ":2: [queue a]: defined twice" },
		{ "[queue a/b]\n", ":1: queue name 'a/b'" },
		{ "[nodes]\n", ":1: [nodes]: unknown section" },
		{ "x = 1\n", ":1: x: key outside any section" },
		{ "[server]\nsocket = /a\nsocket = /b\n", ":3: socket: set twice" },
		{ "[server]\nserver = h1:1,,h2:2\n", ":2: server: h1:1,,h2:2: an empty entry in the server list" },
		{ "[server]\nserver = h1:1,h2\n", ":2: server: h2: not HOST:PORT" },
		{ "[queue a]\ndefault = yes\n[queue b]\ndefault = yes\n", ":3: [queue b]: default = yes, but queue a" },
		{ "[queue a]\nreserve = sometimes\n", ":2: reserve = sometimes: not none, exclusive or realtime" },
		{ "[queue a]\nreserve = realtime\nrt_priority = 100\n", ":1: [queue a]: rt_priority must be 1-99" },
		{ "[queue a]\nncpus_default = 4\nncpus_max = 2\n", ":1: [queue a]: ncpus_default is above ncpus_max" },
		{ "[server]\nnode_timeout = 2\nheartbeat_interval = 5\n", ": [server] node_timeout must be longer" },
		{ "[server]\nlease_time = 2\nlease_renew = 2\n", ": [server] lease_time must be longer than lease_renew" },
		{ "[server]\nlease_renew = 0\n", ": [server] lease_time must be longer than lease_renew" },
		{ "[server]\nserver_id = a/b\n", ":2: server_id = a/b: letters, digits" },
		{ "[server]\nadvertise = nocolon\n", ":2: advertise = nocolon" },
		{ "not a line\n", ":1: not a section header or key = value" },
		{ "[node]\ncgroup_parent = /abs\n", ":2: cgroup_parent = /abs: a relative path" },
		{ "[node]\ncgroup_parent = a/../b\n", ":2: cgroup_parent = a/../b: a relative path" },
		{ "[node]\ncgroup_parent = a//b\n", ":2: cgroup_parent = a//b: a relative path" },
		{ "[node]\ncgroup_parent = q/.rt\n", ":2: cgroup_parent = q/.rt: a relative path" },
		{ "[node]\ncgroup_parent = a b\n", ":2: cgroup_parent = a b: a relative path" },
		{ "[server]\nstore = mysql\n", ":2: store = mysql: not sqlite or postgresql" },
		{ "[node]\ngpus = nvidia0\n", ":2: gpus = nvidia0: nvidia0 is not an absolute path" },
		{ "[node]\ngpus = /dev/nvidia0 dev/nvidia1\n", ":2: gpus = /dev/nvidia0 dev/nvidia1: dev/nvidia1 is not" },
		{ "[node]\ngpus = \n", ":2: gpus: empty (say none" },
		{ "[node]\ngpus = :\n", ":2: gpus: :: a GPU model cannot be empty" },
		{ "[node]\ngpus = a100:\n", ":2: gpus: a100:: after a100: come absolute paths" },
		{ "[node]\ngpus = a/b:/dev/x\n", ":2: gpus: a/b:/dev/x: GPU model a/b: only letters" },
		{ "[node]\ngpus = a100:/dev/x,\n", ":2: gpus: a100:/dev/x,: after a100: come absolute paths" },
		{ "[server]\nstore = postgresql\n", ": [server] store = postgresql needs store_dsn" },
		{ "[licenses]\nmatlab = 2\nx = abc\n", ":3: x = abc: not a count" },
		{ "[licenses]\nx = -1\n", ":2: x = -1: not a count" },
		{ "[licenses]\nx =\n", ":2: x = : not a count" },
		{ "[licenses]\nmatlab = 2\nmatlab = 3\n", ":3: matlab: set twice" },
		{ "[licenses]\nma/tlab = 2\n", ":2: license name ma/tlab: only letters" },
		{ "[node]\nresources = x:\n", ":2: resources = x:: x:: not a count or a size" },
		{ "[node]\nresources = nvme\n", ":2: resources = nvme: nvme: not NAME:COUNT or NAME:SIZE" },
		{ "[node]\nresources = gpu:2\n", ":2: resources = gpu:2: gpu: GPUs are the node's devices" },
		{ "[node]\nresources = a:1 a:2G\n", ":2: resources = a:1 a:2G: a: given as a count and as a size" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config *c = NULL;
		struct error err = { { 0 } };
		char *dir;
		int r = load_text(cases[i].text, &c, &err, &dir);

		CU_ASSERT(r < 0);
		CU_ASSERT_PTR_NULL(c);
		if (!strstr(err.text, cases[i].want))
			fprintf(stderr, "\n  case %zu: got '%s', want '...%s...'", i, err.text, cases[i].want);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.text, cases[i].want));
		unit_tmpdir_remove(dir);
	}
}

/* [node] gpus: auto, none, or absolute paths, with models (globs are qnoded's). */
static void test_gpus_values(void)
{
	static const char *const good[] = { "auto", "none", "/dev/nvidia0", "/dev/nvidia[0-3]  /dev/dri/renderD*",
					    "a100:/dev/nvidia0,/dev/nvidia1 V100:/dev/nvidia[2-3] /dev/nvidia4" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct config *c = NULL;
		struct error err = { { 0 } };
		char text[256], *dir;

		snprintf(text, sizeof(text), "[node]\ngpus = %s\n", good[i]);
		CU_ASSERT_EQUAL(load_text(text, &c, &err, &dir), 0);
		if (c)
			CU_ASSERT_STRING_EQUAL(c->gpus, good[i]);
		config_destroy(c);
		unit_tmpdir_remove(dir);
	}
}

/* [licenses] NAME = COUNT, in file order. */
static void test_licenses(void)
{
	struct config *c = NULL;
	struct error err = { { 0 } };
	char *dir;

	CU_ASSERT_EQUAL_FATAL(load_text("[licenses]\nmatlab = 10 # site-wide\ncomsol=0\n[server]\n", &c, &err, &dir), 0);
	CU_ASSERT_EQUAL(c->n_licenses, 2);
	CU_ASSERT_STRING_EQUAL(c->licenses[0].name, "matlab");
	CU_ASSERT_EQUAL(c->licenses[0].count, 10);
	CU_ASSERT_STRING_EQUAL(c->licenses[1].name, "comsol");
	CU_ASSERT_EQUAL(c->licenses[1].count, 0);
	config_destroy(c);
	unit_tmpdir_remove(dir);
	/* [node] resources: canonical, sizes in bytes. */
	CU_ASSERT_EQUAL_FATAL(load_text("[node]\nresources = scratch:800G, nvme:2 nvme:1\n", &c, &err, &dir), 0);
	CU_ASSERT_STRING_EQUAL(c->resources, "scratch:858993459200b,nvme:3");
	config_destroy(c);
	unit_tmpdir_remove(dir);
}

static void test_example_and_path(void)
{
	struct config *c = NULL;
	struct error err;

	CU_ASSERT_EQUAL_FATAL(config_load("conf/qpool.conf", &c, &err), 0);
	CU_ASSERT_EQUAL(c->n_queues, 3);
	CU_ASSERT_EQUAL(config_queue(c, "multi8")->reserve, QUEUE_RESERVE_REALTIME);
	CU_ASSERT_EQUAL(config_queue(c, "multi8")->max_running, 2);
	config_destroy(c);
	CU_ASSERT_EQUAL(config_load("/nonexistent/q.conf", &c, &err), -ENOENT);
	CU_ASSERT_STRING_EQUAL(err.text, "/nonexistent/q.conf: No such file or directory");

	setenv("QPOOL_CONF", "/from/env", 1);
	CU_ASSERT_STRING_EQUAL(config_path("/from/arg"), "/from/arg");
	CU_ASSERT_STRING_EQUAL(config_path(NULL), "/from/env");
	unsetenv("QPOOL_CONF");
	CU_ASSERT_STRING_EQUAL(config_path(NULL), CONFIG_DEFAULT_PATH);
}

/* Every key of the table appears in qpool.conf(5) as "\fBkey\fP =". */
static void test_man_page_documents_every_key(void)
{
	char *keys = NULL, *man = NULL;
	size_t klen = 0, mlen;
	FILE *f = open_memstream(&keys, &klen);
	FILE *m = fopen("man/man5/qpool.conf.5", "r");
	char line[512];

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	fseek(m, 0, SEEK_END);
	mlen = (size_t)ftell(m);
	rewind(m);
	man = calloc(1, mlen + 1);
	CU_ASSERT_EQUAL_FATAL(fread(man, 1, mlen, m), mlen);
	fclose(m);
	config_keys_print(f);
	fclose(f);
	f = fmemopen(keys, klen, "r");
	while (fgets(line, sizeof(line), f)) {
		char want[160];
		char *key = strchr(line, '\t') + 1;

		*strchr(key, '\t') = '\0';
		snprintf(want, sizeof(want), "\\fB%s\\fP =", key);
		if (!strstr(man, want))
			fprintf(stderr, "\n  qpool.conf(5) does not document %s", key);
		CU_ASSERT_PTR_NOT_NULL(strstr(man, want));
	}
	fclose(f);
	free(keys);
	free(man);
}

/* qpoold --dump-config: the sample lists every key of the table with its
 * default, loads as it is, and loads with every key uncommented too. */
static void test_sample_lists_every_key(void)
{
	char *dir = unit_tmpdir();
	char *sample = NULL, *keys = NULL, *open_all, line[512], path[4096];
	size_t slen = 0, klen = 0, j = 0;
	FILE *f = open_memstream(&sample, &slen);
	struct config *c = NULL;
	struct error err;

	config_sample_print(f);
	fclose(f);
	f = open_memstream(&keys, &klen);
	config_keys_print(f);
	fclose(f);
	f = fmemopen(keys, klen, "r");
	while (fgets(line, sizeof(line), f)) {
		char want[160];
		char *key = strchr(line, '\t') + 1;

		*strchr(key, '\t') = '\0';
		snprintf(want, sizeof(want), "\n#%s =", key);
		if (!strstr(sample, want) && !(snprintf(want, sizeof(want), "\n%s =", key), strstr(sample, want)))
			fprintf(stderr, "\n  the sample does not list %s", key);
		CU_ASSERT_PTR_NOT_NULL(strstr(sample, want));
	}
	fclose(f);
	unit_write_file(dir, "sample.conf", sample);
	snprintf(path, sizeof(path), "%s/sample.conf", dir);
	CU_ASSERT_EQUAL(config_load(path, &c, &err), 0);
	if (c) {
		CU_ASSERT_PTR_NOT_NULL(config_default_queue(c));
		CU_ASSERT_STRING_EQUAL(c->state_dir, "/var/lib/qpool");
		config_destroy(c);
		c = NULL;
	}
	/* Every "#key = default" line uncommented: the defaults parse. */
	open_all = calloc(1, slen + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(open_all);
	for (size_t i = 0; i < slen; i++) {
		if (sample[i] == '#' && (i == 0 || sample[i - 1] == '\n') &&
		    strcspn(sample + i, " \n") < strcspn(sample + i, "\n") &&
		    strncmp(sample + i + strcspn(sample + i, " "), " =", 2) == 0)
			continue;
		open_all[j++] = sample[i];
	}
	unit_write_file(dir, "open.conf", open_all);
	snprintf(path, sizeof(path), "%s/open.conf", dir);
	CU_ASSERT_EQUAL(config_load(path, &c, &err), 0);
	if (!c)
		fprintf(stderr, "\n  %s", err.text);
	config_destroy(c);
	free(open_all);
	free(sample);
	free(keys);
	unit_tmpdir_remove(dir);
}

static const struct unit_test config_tests[] = {
	{ "defaults_and_comments", test_defaults_and_comments },
	{ "errors", test_errors },
	{ "gpus_values", test_gpus_values },
	{ "licenses", test_licenses },
	{ "example_and_path", test_example_and_path },
	{ "man_page_documents_every_key", test_man_page_documents_every_key },
	{ "sample_lists_every_key", test_sample_lists_every_key },
	{ NULL, NULL },
};

UNIT_SUITE(config, config_tests);
