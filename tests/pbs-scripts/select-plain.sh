#!/bin/bash
#PBS -l select=1
#PBS -l walltime=00:10:00
#PBS -w /tmp
#PBS -N plainsel
#PBS -o plainsel.out
#PBS -j oe
#PBS -V
echo "one default chunk, $NCPUS cpu"
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
