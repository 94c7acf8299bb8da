#!/usr/bin/env bash
# scripts/run_demo.sh: the demo, against the cluster scripts/with_cluster.sh started.
set -euo pipefail
cd "$(dirname "$0")/.."
psql -X -q -d postgres -c 'CREATE DATABASE backfill_demo' >/dev/null
psql -X -q -d backfill_demo -f demo/validate.sql
