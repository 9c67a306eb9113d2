/* SPDX-License-Identifier: MIT */
/* qnoded's realtime verdict from its probe's answer (rtprobe_verdict). */
#include <errno.h>
#include <string.h>

#include "noded.h"
#include "unit.h"

static void test_verdicts(void)
{
	static const struct {
		enum cgroup_mode mode;
		enum rtprobe_step step;
		int r;
		const char *detail;
		bool rt;
		const char *reason;   /* a part of it; NULL: empty */
	} cases[] = {
		/* SCHED_FIFO granted: v2 without RT group scheduling (Debian),
		 * or v1 in the node's realtime group. */
		{ CGROUP_MODE_V2, RTPROBE_SCHED, 0, NULL, true, NULL },
		{ CGROUP_MODE_V1, RTPROBE_SCHED, 0, NULL, true, NULL },
		/* v2 on a kernel with CONFIG_RT_GROUP_SCHED=y: EPERM in a
		 * group with the cpu controller, root or not. */
		{ CGROUP_MODE_V2, RTPROBE_SCHED, -EPERM, "sched_setscheduler(SCHED_FIFO, 1): x", false,
		  "CONFIG_RT_GROUP_SCHED" },
		/* v1: the group has no RT runtime. */
		{ CGROUP_MODE_V1, RTPROBE_SCHED, -EPERM, NULL, false, "cpu.rt_runtime_us" },
		/* Anything else says what failed. */
		{ CGROUP_MODE_V2, RTPROBE_SCHED, -EINVAL, "sched_setscheduler(SCHED_FIFO, 1): Invalid",
		  false, "the realtime probe failed: sched_setscheduler" },
		{ CGROUP_MODE_V2, RTPROBE_GROUP, -EACCES, "mkdir /sys/fs/cgroup/x: Permission denied",
		  false, "the realtime probe failed: mkdir /sys/fs/cgroup/x" },
		{ CGROUP_MODE_V1, RTPROBE_ATTACH, -EPERM, "joining the probe's group: x", false,
		  "joining the probe's group" },
		{ CGROUP_MODE_V2, RTPROBE_SCHED, -EIO, NULL, false, "the realtime probe failed: " },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char reason[160] = "junk";
		bool rt = rtprobe_verdict(cases[i].mode, cases[i].step, cases[i].r, cases[i].detail,
					  reason, sizeof(reason));

		CU_ASSERT_EQUAL(rt, cases[i].rt);
		if (cases[i].reason) {
			CU_ASSERT_PTR_NOT_NULL(strstr(reason, cases[i].reason));
		} else {
			CU_ASSERT_STRING_EQUAL(reason, "");
		}
		/* One line, and whole: it is what qstat shows. */
		CU_ASSERT_PTR_NULL(strchr(reason, '\n'));
		CU_ASSERT(strlen(reason) < sizeof(reason) - 1);
	}
}

static const struct unit_test noded_rtprobe_tests[] = {
	{ "verdicts", test_verdicts },
	{ NULL, NULL },
};

UNIT_SUITE(noded_rtprobe, noded_rtprobe_tests);
