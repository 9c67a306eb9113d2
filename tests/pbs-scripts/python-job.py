#!/usr/bin/python3
#PBS -N pyjob
#PBS -l ncpus=1
#PBS -l walltime=00:02:00
import os, sys
print("python", sys.version_info[0], "job", os.environ["PBS_JOBID"])
with open(os.path.join(os.environ["PBS_O_WORKDIR"], "env." + os.environ["PBS_JOBNAME"]), "w") as f:
    for k in sorted(os.environ):
        if k.startswith("PBS_") or k in ("NCPUS", "OMP_NUM_THREADS", "TMPDIR", "ENVIRONMENT"):
            f.write(f"{k}={os.environ[k]}\n")
