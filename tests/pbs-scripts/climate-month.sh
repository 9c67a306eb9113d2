#!/bin/bash
#PBS -N climate
#PBS -l select=1:ncpus=1:mem=100mb
#PBS -l walltime=00:05:00
#PBS -v month,year,DATASET=era5
#PBS -j oe
cd "$PBS_O_WORKDIR"
# Submitted as "qsub -v month=01,year=1999 climate-month.sh" in production;
# run by hand without them, the script takes its defaults.
echo "month=${month-unset} year=${year-unset} dataset=${DATASET-unset}" > climate.txt
month=${month:-12}
year=${year:-2000}
echo "processing $DATASET for $year-$month" >> climate.txt
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "env.$PBS_JOBNAME"
