#!/bin/bash
#MYQ -N prefixed
#MYQ -l ncpus=1
echo "directives under a custom prefix"
env | grep -E "^(PBS_|NCPUS=|OMP_NUM_THREADS=|TMPDIR=|ENVIRONMENT=)" | sort > "$PBS_O_WORKDIR/env.$PBS_JOBNAME"
