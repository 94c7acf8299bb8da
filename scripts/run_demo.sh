#!/usr/bin/env bash
# scripts/run_demo.sh: the backfill lab (demo/lab.sql), against the cluster
# scripts/with_cluster.sh started, then its chart, demo/revenue.html.
set -euo pipefail
cd "$(dirname "$0")/.."
PGOPTIONS='-c client_min_messages=warning' psql -X -q -d postgres -c 'DROP DATABASE IF EXISTS backfill_demo' -c 'CREATE DATABASE backfill_demo' >/dev/null
# from stdin, so that NOTICE lines carry no file name and line number
psql -X -q -v ON_ERROR_STOP=1 -d backfill_demo < demo/lab.sql
psql -X -q -At -v ON_ERROR_STOP=1 -d backfill_demo -f demo/chart.sql > demo/revenue.html
echo
echo "chart: $(pwd)/demo/revenue.html"
