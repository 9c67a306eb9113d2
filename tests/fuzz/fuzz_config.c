/* SPDX-License-Identifier: MIT */
/* qpool.conf: config_load over any file content (through a memfd, so no
 * disk is touched). A loaded config must satisfy its own validation. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"

static int fd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *c = NULL;
	struct error err;
	char path[64];
	int r;

	if (fd < 0 && (fd = memfd_create("qpool.conf", MFD_CLOEXEC)) < 0)
		return 0;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = config_load(path, &c, &err);
	if (r < 0) {
		FUZZ_ASSERT(strncmp(err.text, path, strlen(path)) == 0);
		return 0;
	}
	FUZZ_ASSERT(c->state_dir[0] && c->socket[0] && c->node_timeout > c->heartbeat_interval);
	for (size_t i = 0; i < c->n_queues; i++) {
		const struct queue_conf *q = &c->queues[i];

		FUZZ_ASSERT(config_queue(c, q->name) != NULL);
		FUZZ_ASSERT(q->ncpus_default >= 1 && q->walltime_default > 0);
		FUZZ_ASSERT(!q->ncpus_max || q->ncpus_default <= q->ncpus_max);
	}
	(void)config_default_queue(c);
	config_destroy(c);
	return 0;
}
