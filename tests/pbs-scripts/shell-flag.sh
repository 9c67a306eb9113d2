#!/bin/bash
#PBS -S /bin/sh
#PBS -N shellflag
#PBS -l cput=00:10:00,vmem=1gb
#PBS -W umask=022
#PBS -j eo
echo "run by -S"
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
