#!/bin/sh
#PBS -N mailer
#PBS -m abe
#PBS -M someone@example.org
#PBS -l walltime=300
#PBS -k oe
#PBS -e errors.txt
#PBS -o output.txt
echo "posix shell job"
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
