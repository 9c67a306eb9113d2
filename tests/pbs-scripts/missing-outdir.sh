#!/bin/bash
#PBS -N vcc_run
#PBS -l nodes=1:ppn=1,walltime=00:05:00
#PBS -o /home/vcc/output
#PBS -j oe
cd $PBS_O_WORKDIR
echo "vcc results: written where the user said"
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
