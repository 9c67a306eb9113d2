#!/bin/bash
#PBS -l select=1:ncpus=1:ngpus=0
#PBS -l walltime=00:03:00
#PBS -N nogpu
#PBS -o logs/
hostname > /dev/null
echo "gpu-free job"
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
