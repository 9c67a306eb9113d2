#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t-events-failover.sh with the pair's store on PostgreSQL.
. "$(dirname "$0")/pg.sh"
qp_pg_bin > /dev/null || { echo "SKIP: PostgreSQL is not installed"; exit 77; }
QP_STORE=postgresql exec "$(dirname "$0")/t-events-failover.sh"
