#!/bin/bash -l
#PBS -N pro_select
#PBS -l select=1:ncpus=2:mpiprocs=2:ompthreads=1:mem=200mb
#PBS -l place=pack:excl
#PBS -l walltime=0:05:00
#PBS -A myaccount
#PBS -P myproject
#PBS -q batch
#PBS -r n
cd $PBS_O_WORKDIR
echo "threads $OMP_NUM_THREADS"
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
