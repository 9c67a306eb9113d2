#!/bin/bash --login
#PBS -N extras
#PBS -q batch@ourserver
#PBS -l nodes=1:ppn=1,mem=8g,walltime=24:0:0
#PBS -l filesystems=home:scratch
#PBS -W umask=0027
#PBS -W x=PARTITION:alpha
#PBS -m ae
#PBS -M nobody@example.org
umask > umask.txt
echo "site extras"
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
