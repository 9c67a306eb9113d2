#!/bin/bash
#PBS -N torque_ppn
#PBS -l nodes=1:ppn=2
#PBS -l walltime=00:05:00
#PBS -l pmem=100mb
#PBS -j oe
#PBS -m n
#PBS -V
cd "$PBS_O_WORKDIR"
echo "ran in $(pwd) with $PBS_NP processors"
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
