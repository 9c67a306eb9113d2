/* SPDX-License-Identifier: MIT */
/* qnoded --cgroup-holder: holds the delegated cgroup v2 group the node's groups go under. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "cgroup.h"
#include "log.h"
#include "noded.h"

/* qpool-cgroup.service's one process (cgroup.h, CGROUP_HOLDER_LEAF): set
 * up once, then only waits, so that the unit is never restarted and its
 * group never needs a new process, which systemd before 254 would put in
 * the group itself, where v2 refuses it once controllers are enabled. */
int noded_cgroup_holder_run(void)
{
	struct cgroup_host host = { .root = "/sys/fs/cgroup", .proc_cgroup = "/proc/self/cgroup",
				    .holder_file = CGROUP_HOLDER_BASE_FILE,
				    .systemd = getenv("INVOCATION_ID") != NULL,
				    .delegated = cgroup_delegated_xattr };
	char root[PATH_MAX], group[PATH_MAX] = "", status[PATH_MAX + 64];
	enum cgroup_mode mode = CGROUP_MODE_NONE;
	struct error err = { "" };
	sigset_t ss;
	int r, sig = 0;

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);

	if (cgroup_discover(root, sizeof(root), &err) == 0)
		host.root = root;
	r = cgroup_detect(host.root, &mode);
	if (r < 0 || mode != CGROUP_MODE_V2) {
		snprintf(status, sizeof(status), "cgroup %s at %s: nothing to hold",
			 r < 0 ? "unreadable" : cgroup_mode_name(mode), host.root);
		log_info("%s", status);
	} else {
		r = cgroup_holder_setup(&host, group, sizeof(group), &err);
		if (r == -EPERM) {
			/* Not fatal: qnoded then keeps its groups under the
			 * root, as it did before there was a holder. */
			log_warn("%s", err.text);
			snprintf(status, sizeof(status), "not delegated: holding nothing");
		} else if (r < 0) {
			log_err("cgroup holder: %s", err.text);
			(void)sd_notifyf(0, "STATUS=failed: %s", err.text);
			return 1;
		} else if (r == 0) {
			snprintf(status, sizeof(status), "not started by systemd, or at the root: nothing to hold");
			log_info("%s", status);
		} else {
			snprintf(status, sizeof(status), "holding /%.*s for qnoded's node groups",
				 PATH_MAX, group);
			log_info("cgroup v2: %s (controllers enabled; this process in /%s/%s; base in %s)",
				 status, group, CGROUP_HOLDER_LEAF, host.holder_file);
		}
	}
	(void)sd_notifyf(0, "READY=1\nSTATUS=%s", status);
	while (sigwait(&ss, &sig) != 0 || (sig != SIGTERM && sig != SIGINT))
		;
	(void)sd_notify(0, "STOPPING=1");
	log_info("%s: stopping", strsignal(sig));
	if (group[0])
		(void)unlink(host.holder_file);
	return 0;
}
