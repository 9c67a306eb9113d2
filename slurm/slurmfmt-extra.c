/* SPDX-License-Identifier: MIT */
/* The squeue -o/-O and sacct --format fields Slurm documents beyond
 * slurmfmt-fields.c's first table: those qpool knows, computed here; the
 * rest print what Slurm prints when a job has no such thing ("(null)",
 * "N/A", "0", blank in sacct), never an error (docs/PORTALS.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "hostlist.h"
#include "slurmfmt-internal.h"
#include "wire.h"

#define K(name, hdr, text) { F_CONST, 0, name, hdr, NULL, 0, false, text, NULL }
#define L(c, name, hdr, text) { F_CONST, c, name, hdr, NULL, 0, false, text, NULL }
#define A(name, width, text) { F_CONST, 0, NULL, NULL, name, width, false, NULL, text }

static const struct slurmfmt_field extra[] = {
	/* squeue's letters and names with a value qpool knows */
	{ F_TRES_PER_NODE, 'b', "tres-per-node", "TRES_PER_NODE", NULL, 0, false, NULL, NULL },
	{ F_BATCHHOST, 'B', "BatchHost", "EXEC_HOST", NULL, 0, false, NULL, NULL },
	{ F_MINCPUS, 'c', "MinCpus", "MIN_CPUS", NULL, 0, false, NULL, NULL },
	{ F_MINCPUS, 0, "cpus-per-task", "CPUS_PER_TASK", NULL, 0, false, NULL, NULL },
	{ F_DEPENDENCY, 'E', "Dependency", "DEPENDENCY", NULL, 0, false, NULL, NULL },
	{ F_GROUP, 'g', "GroupName", "GROUP", "Group", 9, false, NULL, NULL },
	{ F_GID, 'G', "GroupID", "GROUP", "GID", 6, false, NULL, NULL },
	{ F_OVERSUBSCRIBE, 'h', "OverSubscribe", "OVER_SUBSCRIBE", NULL, 0, false, NULL, NULL },
	{ F_COMMAND, 'o', "Command", "COMMAND", NULL, 0, false, NULL, NULL },
	{ F_NUMTASKS, 0, "NumTasks", "TASKS", NULL, 0, false, NULL, NULL },
	{ F_PRIORITY_FLOAT, 'p', NULL, "PRIORITY", NULL, 0, false, NULL, NULL },
	{ F_RESTARTS, 0, "RestartCnt", "RESTARTCNT", NULL, 0, false, NULL, NULL },
	{ F_REQUEUE, 0, "Requeue", "REQUEUE", NULL, 0, false, NULL, NULL },
	{ F_PENDING_TIME, 0, "PendingTime", "PENDING_TIME", NULL, 0, false, NULL, NULL },
	{ F_ELIGIBLE, 0, "EligibleTime", "ELIGIBLE_TIME", "Eligible", 19, false, NULL, NULL },
	{ F_ELIGIBLE, 0, "AccrueTime", "ACCRUE_TIME", NULL, 0, false, NULL, NULL },
	{ F_TRES_ALLOC, 0, "tres-alloc", "TRES_ALLOC", "AllocTRES", 10, false, NULL, NULL },
	{ F_TRES_REQ, 0, NULL, NULL, "ReqTRES", 10, false, NULL, NULL },
	{ F_CLUSTER, 0, "Cluster", "CLUSTER", "Cluster", 10, false, NULL, NULL },
	{ F_SUBMIT_LINE, 0, NULL, NULL, "SubmitLine", 20, false, NULL, NULL },
	{ F_NODES, 0, NULL, NULL, "ReqNodes", 8, false, NULL, NULL },
	{ F_GPUS, 0, NULL, NULL, "AllocGRES", 12, false, NULL, NULL },
	{ F_GPUS, 0, NULL, NULL, "ReqGRES", 12, false, NULL, NULL },
	{ F_SCHEDNODES, 'Y', "SchedNodes", "SCHEDNODES", NULL, 0, false, NULL, NULL },
	/* squeue's letters Slurm prints a placeholder for here */
	L('d', "MinTmpDisk", "MIN_TMP_DISK", "0"),
	L('f', "Feature", "FEATURES", "(null)"),
	L('H', "Sockets", "S", "*"),
	L('I', "Cores", "C", "*"),
	L('J', "Threads", "T", "*"),
	L('k', "Comment", "COMMENT", "(null)"),
	L('n', "ReqNodes", "REQ_NODES", ""),
	L('O', "Contiguous", "CONTIGUOUS", "0"),
	L('s', "SelectJobInfo", "SELECT", "N/A"),
	{ F_RESERVATION, 'v', "Reservation", "RESERVATION", "Reservation", 11, false, NULL, NULL },
	L('w', "WCKey", "WCKEY", "(null)"),
	L('W', "Licenses", "LICENSES", "(null)"),
	L('x', "ExcNodes", "EXC_NODES", ""),
	L('X', "CoreSpec", "CORE_SPEC", "N/A"),
	L('y', "Nice", "NICE", "0"),
	L('z', "SCT", "S:C:T", "*:*:*"),
	/* squeue -O names */
	K("admin_comment", "ADMIN_COMMENT", "(null)"),
	K("AllocNodes", "ALLOC_NODES", "(null)"),
	K("AllocSID", "ALLOC_SID", "0"),
	K("AssocID", "ASSOC_ID", "0"),
	K("BatchFlag", "BATCHFLAG", "1"),
	K("BoardsPerNode", "BOARDS_PER_NODE", "0"),
	K("BurstBuffer", "BURST_BUFFER", "(null)"),
	K("BurstBufferState", "BURST_BUFFER_STATE", "(null)"),
	K("ClusterFeature", "CLUSTER_FEATURE", "(null)"),
	K("Container", "CONTAINER", "(null)"),
	K("ContainerID", "CONTAINERID", "(null)"),
	K("CPUFreq", "CPU_FREQ", "Unknown"),
	K("cpus-per-tres", "CPUS_PER_TRES", "N/A"),
	K("Deadline", "DEADLINE", "N/A"),
	K("DelayBoot", "DELAY_BOOT", "0:00"),
	K("DerivedEC", "DERIVED_EC", "0:0"),
	K("HetJobID", "HET_JOB_ID", "0"),
	K("HetJobIDSet", "HET_JOB_ID_SET", "(null)"),
	K("HetJobOffset", "HET_JOB_OFFSET", "N/A"),
	K("LastSchedEval", "LAST_SCHED_EVAL", "N/A"),
	K("MaxCPUs", "MAX_CPUS", "0"),
	K("MaxNodes", "MAX_NODES", "0"),
	K("MCSLabel", "MCSLABEL", "N/A"),
	K("mem-per-tres", "MEM_PER_TRES", "N/A"),
	K("MinTime", "MIN_TIME", "0:00"),
	K("Network", "NETWORK", "(null)"),
	K("NTPerBoard", "NTPERB", "0"),
	K("NTPerCore", "NTPERC", "0"),
	K("NTPerNode", "NTPERN", "0"),
	K("NTPerSocket", "NTPERS", "0"),
	K("Origin", "ORIGIN", "N/A"),
	K("OriginRaw", "ORIGIN_RAW", "N/A"),
	K("PreemptTime", "PREEMPT_TIME", "N/A"),
	K("Prefer", "PREFER", "(null)"),
	K("Profile", "PROFILE", "NotSet"),
	K("Reboot", "REBOOT", "0"),
	K("ReqSwitch", "REQ_SWITCH", "0"),
	K("ResizeTime", "RESIZE_TIME", "0"),
	K("ResvPort", "RESV_PORT", "0"),
	K("SiblingsActive", "ACTIVE_SIBLINGS", "(null)"),
	K("SiblingsActiveRaw", "ACTIVE_SIBLINGS_RAW", "(null)"),
	K("SiblingsViable", "VIABLE_SIBLINGS", "(null)"),
	K("SiblingsViableRaw", "VIABLE_SIBLINGS_RAW", "(null)"),
	K("SPerBoard", "SPERBOARD", "0"),
	K("STDIN", "STDIN", "/dev/null"),
	K("StepID", "STEPID", "N/A"),
	K("StepName", "STEPNAME", "N/A"),
	K("StepState", "STEPSTATE", "N/A"),
	K("system_comment", "SYSTEM_COMMENT", "(null)"),
	K("tres-bind", "TRES_BIND", "(null)"),
	K("tres-freq", "TRES_FREQ", "(null)"),
	K("tres-per-job", "TRES_PER_JOB", "N/A"),
	K("tres-per-socket", "TRES_PER_SOCKET", "N/A"),
	K("tres-per-step", "TRES_PER_STEP", "N/A"),
	K("tres-per-task", "TRES_PER_TASK", "N/A"),
	K("Wait4Switch", "WAIT4SWITCH", "0"),
	/* sacct's fields qpool has no value for: blank, as sacct's own */
	A("AdminComment", 15, NULL), A("TimelimitRaw", 12, NULL), A("CPUTimeRAW", 10, NULL),
	A("UserCPU", 10, NULL), A("AllocNodes", 10, NULL), A("AssocID", 10, "0"),
	A("AveCPUFreq", 10, NULL), A("AveDiskRead", 12, NULL), A("AveDiskWrite", 12, NULL),
	A("AvePages", 10, NULL), A("AveVMSize", 10, NULL), A("BlockID", 10, NULL),
	A("Comment", 15, NULL), A("Constraints", 19, NULL), A("Container", 19, NULL),
	A("ConsumedEnergy", 14, "0"), A("ConsumedEnergyRaw", 17, "0"), A("DBIndex", 10, "0"),
	A("Extra", 15, NULL), A("FailedNode", 15, NULL), A("Flags", 10, "SchedMain"),
	A("Layout", 10, NULL), A("Licenses", 10, NULL), A("MaxDiskRead", 12, NULL),
	A("MaxDiskReadNode", 15, NULL), A("MaxDiskReadTask", 15, NULL), A("MaxDiskWrite", 12, NULL),
	A("MaxDiskWriteNode", 16, NULL), A("MaxDiskWriteTask", 16, NULL), A("MaxPages", 8, NULL),
	A("MaxPagesNode", 12, NULL), A("MaxPagesTask", 12, NULL), A("MaxRSSNode", 10, NULL),
	A("MaxRSSTask", 10, NULL), A("MaxVMSize", 10, NULL), A("MaxVMSizeNode", 13, NULL),
	A("MaxVMSizeTask", 13, NULL), A("McsLabel", 20, NULL), A("MinCPUNode", 10, NULL),
	A("MinCPUTask", 10, NULL), A("Planned", 10, "00:00:00"), A("PlannedCPU", 10, "00:00:00"),
	A("PlannedCPURAW", 13, "0"), A("QOSRAW", 10, "1"), A("ReqCPUFreq", 10, "Unknown"),
	A("ReqCPUFreqGov", 13, "Unknown"), A("ReqCPUFreqMax", 13, "Unknown"),
	A("ReqCPUFreqMin", 13, "Unknown"), A("ReservationId", 13, NULL),
	A("Suspended", 10, "00:00:00"), A("SystemComment", 15, NULL), A("SystemCPU", 10, "00:00:00"),
	A("TRESUsageInAve", 14, NULL), A("TRESUsageInMax", 14, NULL), A("TRESUsageInMaxNode", 18, NULL),
	A("TRESUsageInMaxTask", 18, NULL), A("TRESUsageInMin", 14, NULL), A("TRESUsageInMinNode", 18, NULL),
	A("TRESUsageInMinTask", 18, NULL), A("TRESUsageInTot", 14, NULL), A("TRESUsageOutAve", 15, NULL),
	A("TRESUsageOutMax", 15, NULL), A("TRESUsageOutMaxNode", 19, NULL),
	A("TRESUsageOutMaxTask", 19, NULL), A("TRESUsageOutMin", 15, NULL),
	A("TRESUsageOutMinNode", 19, NULL), A("TRESUsageOutMinTask", 19, NULL),
	A("TRESUsageOutTot", 15, NULL), A("WCKey", 10, NULL), A("WCKeyID", 10, "0"),
};

const struct slurmfmt_field *slurmfmt_extra_letter(char c)
{
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		if (extra[i].letter == c)
			return &extra[i];
	return NULL;
}

const struct slurmfmt_field *slurmfmt_extra_name(const char *name, enum slurmfmt_view view)
{
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		const char *n = view == SLURMFMT_SACCT ? extra[i].sacct_name : extra[i].squeue_name;

		if (n && strcasecmp(n, name) == 0)
			return &extra[i];
	}
	return NULL;
}

/* The group's name from /etc/group: the commands are static, and glibc's
 * getgrgid needs its shared NSS modules at run time. Returns false when
 * the file does not name gid (an LDAP group: the number is printed). */
static bool group_name(long long gid, char *buf, size_t len)
{
	FILE *f = fopen("/etc/group", "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *name = line, *pw, *id;

		if (!(pw = strchr(name, ':')) || !(id = strchr(pw + 1, ':')))
			continue;
		*pw = '\0';
		if (strtoll(id + 1, NULL, 10) == gid && id[1] != ':') {
			snprintf(buf, len, "%s", name);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static bool pending(const json_t *job)
{
	const char *s = wire_str(job, "state");

	return s && (strcmp(s, "queued") == 0 || strcmp(s, "held") == 0);
}

/* The job's GPU model (Resource_List.gpu_model, docs/GPUS.md), or NULL. */
static const char *gpu_model(const json_t *job)
{
	const char *m = wire_str(json_object_get(job, "attrs"), "Resource_List.gpu_model");

	return m && *m ? m : NULL;
}

/* "billing=4,cpu=4,mem=1024M,node=1[,gres/gpu=1[,gres/gpu:a100=1]]":
 * Slurm's TRES string (--noconvert's megabytes), what the job asked for
 * or holds; a typed GPU counted under its type too, as Slurm does. */
static void tres(const json_t *job, char *buf, size_t len)
{
	struct slurmfmt_tasks t;
	long long cpus = wire_int(job, "ncpus", 1), gpus = wire_int(job, "ngpus", 0);
	size_t n;

	slurmfmt_job_tasks(job, &t);
	n = (size_t)snprintf(buf, len, "billing=%lld,cpu=%lld,mem=%lldM,node=%lld", cpus, cpus,
			     wire_int(job, "mem", 0) / (1024 * 1024), t.nodes);
	if (gpus > 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, ",gres/gpu=%lld", gpus);
	if (gpus > 0 && gpu_model(job) && n < len)
		snprintf(buf + n, len - n, ",gres/gpu:%s=%lld", gpu_model(job), gpus);
}

/* The nodes a pending job is expected to start on (its start estimate's
 * exec_vnode, "(n1:ncpus=2)+(n2:ncpus=2)"), as a host list; "(null)"
 * without one, as Slurm's. */
static void schednodes(const json_t *job, char *buf, size_t len)
{
	const char *v = wire_str(job, "estimated_exec_vnode"), *names[256];
	char copy[4096];
	size_t n = 0;

	snprintf(buf, len, "(null)");
	if (!v || snprintf(copy, sizeof(copy), "%s", v) >= (int)sizeof(copy))
		return;
	for (char *at = copy; at && *at && n < sizeof(names) / sizeof(names[0]);) {
		char *end;

		at += *at == '(';
		end = at + strcspn(at, ":)+");
		names[n++] = at;
		at = strchr(end, '+');
		*end = '\0';
		if (at)
			at++;
	}
	if (n && hostlist_compress(names, n, buf, len) < 0)
		snprintf(buf, len, "(null)");
}

void slurmfmt_extra_value(const struct slurmfmt_field *f, enum slurmfmt_view view, const json_t *job,
			  int64_t now_ns, char *buf, size_t len)
{
	struct slurmfmt_tasks t;
	const json_t *attrs = json_object_get(job, "attrs");
	const char *s;
	long long v;

	buf[0] = '\0';
	switch (f->id) {
	case F_SCHEDNODES:
		schednodes(job, buf, len);
		break;
	case F_CONST:
		snprintf(buf, len, "%s", view == SLURMFMT_SACCT ? (f->sacct_text ? f->sacct_text : "")
							       : (f->text ? f->text : ""));
		break;
	case F_TRES_PER_NODE:
		v = wire_int(job, "ngpus", 0);
		if (v > 0)
			snprintf(buf, len, "gres/gpu:%s%s%lld", gpu_model(job) ? gpu_model(job) : "",
				 gpu_model(job) ? ":" : "", v);
		else
			snprintf(buf, len, "N/A");
		break;
	case F_RESERVATION:
		/* docs/RESERVATIONS.md: squeue's "(null)" for none, sacct's blank. */
		s = wire_str(attrs, "reservation");
		snprintf(buf, len, "%s", s ? s : view == SLURMFMT_SACCT ? "" : "(null)");
		break;
	case F_GPUS:
		v = wire_int(job, "ngpus", 0);
		if (v > 0)
			snprintf(buf, len, "gpu:%s%s%lld", gpu_model(job) ? gpu_model(job) : "",
				 gpu_model(job) ? ":" : "", v);
		break;
	case F_BATCHHOST:
		/* The node the script runs on: the first of the job's. */
		s = wire_str(job, "node");
		if (s)
			snprintf(buf, len, "%.*s", (int)strcspn(s, ",+"), s);
		else
			snprintf(buf, len, "N/A");
		break;
	case F_MINCPUS:
		slurmfmt_job_tasks(job, &t);
		snprintf(buf, len, "%lld", t.cpus_per_task);
		break;
	case F_NUMTASKS:
		slurmfmt_job_tasks(job, &t);
		snprintf(buf, len, "%lld", t.tasks);
		break;
	case F_GROUP:
		if (!group_name(wire_int(job, "gid", 0), buf, len))
			snprintf(buf, len, "%lld", wire_int(job, "gid", 0));
		break;
	case F_PRIORITY_FLOAT:
		/* %p: the priority as a fraction of Slurm's 32-bit range. */
		snprintf(buf, len, "%.8f", (double)wire_int(job, "priority", 0) / 4294967295.0);
		break;
	case F_GID:
		snprintf(buf, len, "%lld", wire_int(job, "gid", 0));
		break;
	case F_DEPENDENCY:
		slurmfmt_dependency(job, now_ns, buf, len);
		break;
	case F_OVERSUBSCRIBE:
		snprintf(buf, len, "OK");
		break;
	case F_COMMAND:
		s = wire_str(attrs, "Slurm_command");
		snprintf(buf, len, "%s", s ? s : "(null)");
		break;
	case F_RESTARTS:
		snprintf(buf, len, "%lld", slurmfmt_job_restarts(job));
		break;
	case F_REQUEUE:
		s = wire_str(attrs, "Rerunable");
		snprintf(buf, len, "%d", !(s && (s[0] == 'n' || s[0] == 'N' || s[0] == 'F' || s[0] == 'f')));
		break;
	case F_PENDING_TIME: {
		json_t *times = json_object_get(job, "times");
		int64_t sub = wire_int(times, "submit", 0), start = slurmfmt_job_start_ns(job);

		if (!sub)
			snprintf(buf, len, "0");
		else
			snprintf(buf, len, "%lld", (long long)(((start ? start : now_ns) - sub) / 1000000000LL));
		break;
	}
	case F_ELIGIBLE:
		slurmfmt_stamp(buf, len, wire_int(json_object_get(job, "times"), "submit", 0),
			       view == SLURMFMT_SACCT ? "Unknown" : "N/A");
		break;
	case F_TRES_ALLOC:
		if (pending(job))
			snprintf(buf, len, view == SLURMFMT_SACCT ? "" : "(null)");
		else
			tres(job, buf, len);
		break;
	case F_TRES_REQ:
		tres(job, buf, len);
		break;
	case F_CLUSTER:
		snprintf(buf, len, "qpool");
		break;
	case F_SUBMIT_LINE:
		s = wire_str(attrs, "Slurm_submit_line");
		snprintf(buf, len, "%s", s ? s : "");
		break;
	default:
		break;
	}
}
