#!/bin/bash
#PBS -N wd
#PBS -d /tmp
#PBS -l procs=1,walltime=00:01:00
#PBS -l mem=12GB
echo "in $(pwd)"
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
