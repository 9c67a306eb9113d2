/* SPDX-License-Identifier: MIT */
/* A PMI-2 client made with Slurm's libpmi2 (Debian's libpmi2-0-dev), the
 * library MPICH-derived MPIs link for PMI-2: init, the job's id, a put
 * and fence, every rank's value got back, the process mapping, a node
 * attribute, finalize. One line per rank; exit 1 at the first failure. */
#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CHECK(call) do { int rc_ = (call); if (rc_ != PMI2_SUCCESS) { \
	fprintf(stderr, "rank %d: %s: %d\n", rank, #call, rc_); return 1; } } while (0)

int main(void)
{
	int spawned = 0, size = 0, rank = -1, appnum = -1, found = 0, len = 0;
	char jobid[256], key[64], val[256], got[256], map[1024], host[64], attr[256];
	long sum = 0;

	CHECK(PMI2_Init(&spawned, &size, &rank, &appnum));
	CHECK(PMI2_Job_GetId(jobid, sizeof(jobid)));
	gethostname(host, sizeof(host));
	snprintf(key, sizeof(key), "k%d", rank);
	snprintf(val, sizeof(val), "%d@%s", rank * 10, host);
	CHECK(PMI2_KVS_Put(key, val));
	/* every rank of a node puts the same node attribute; any one wins */
	CHECK(PMI2_Info_PutNodeAttr("qpool-t-node", host));
	CHECK(PMI2_KVS_Fence());
	for (int r = 0; r < size; r++) {
		snprintf(key, sizeof(key), "k%d", r);
		CHECK(PMI2_KVS_Get(jobid, PMI2_ID_NULL, key, got, sizeof(got), &len));
		sum += strtol(got, NULL, 10);
	}
	CHECK(PMI2_Info_GetJobAttr("PMI_process_mapping", map, sizeof(map), &found));
	CHECK(PMI2_Info_GetNodeAttr("qpool-t-node", attr, sizeof(attr), &found, 1));
	printf("rank=%d size=%d appnum=%d spawned=%d sum=%ld host=%s nodeattr=%s mapping=%s\n", rank,
	       size, appnum, spawned, sum, host, found ? attr : "-", map);
	fflush(stdout);
	CHECK(PMI2_Finalize());
	return 0;
}
