#!/bin/sh
#PBS -N logrel
#PBS -l nodes=1:ppn=1
#PBS -l walltime=00:05:00
#PBS -o localhost:logs/out.txt
#PBS -e localhost:logs/err.txt
echo "relative output, host localhost"
echo "relative error, host localhost" >&2
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
