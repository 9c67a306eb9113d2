#!/bin/bash
#PBS -P ab12
#PBS -l ncpus=1
#PBS -l mem=190MB
#PBS -l jobfs=100MB
#PBS -l walltime=00:05:00
#PBS -l storage=scratch/ab12+gdata/ab12
#PBS -l wd
#PBS -N gadi_wd

# Gadi starts a job in $HOME unless -l wd: this script relies on it.
pwd > gadi-wd.txt
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "env.$PBS_JOBNAME"
