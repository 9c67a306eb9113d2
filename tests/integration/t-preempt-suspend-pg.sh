#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-preempt-suspend.sh with the pool's store on PostgreSQL: a suspension
# and its attrs.suspended_by written in one transaction there too.
. "$(dirname "$0")/pg.sh"
qp_pg_bin > /dev/null || { echo "SKIP: PostgreSQL is not installed"; exit 77; }
QP_STORE=postgresql exec "$(dirname "$0")/t-preempt-suspend.sh"
