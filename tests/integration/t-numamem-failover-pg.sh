#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-numamem-failover.sh with the pool's store on PostgreSQL.
. "$(dirname "$0")/pg.sh"
qp_pg_bin > /dev/null || { echo "SKIP: PostgreSQL is not installed"; exit 77; }
QP_STORE=postgresql exec "$(dirname "$0")/t-numamem-failover.sh"
