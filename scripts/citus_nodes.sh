#!/usr/bin/env bash
# scripts/citus_nodes.sh DB: make database DB a Citus cluster on the coordinator and workers
# that `BACKFILL_CITUS=1 scripts/with_cluster.sh` started: DB and citus on every node, the
# workers registered with the coordinator (all on 127.0.0.1), backfill created on the
# coordinator (Citus propagates it to the workers).  Needs PGPORT (the coordinator) and
# BACKFILL_WORKER_PORTS.
set -euo pipefail
DB=$1
for p in "$PGPORT" $BACKFILL_WORKER_PORTS; do
	psql -X -q -v ON_ERROR_STOP=1 -p "$p" -d postgres -c "CREATE DATABASE $DB" >/dev/null
	psql -X -q -v ON_ERROR_STOP=1 -p "$p" -d "$DB" -c 'CREATE EXTENSION citus' >/dev/null
done
{
	echo "SELECT pg_catalog.citus_set_coordinator_host('127.0.0.1', $PGPORT);"
	for p in $BACKFILL_WORKER_PORTS; do echo "SELECT pg_catalog.citus_add_node('127.0.0.1', $p);"; done
	echo 'CREATE EXTENSION backfill;'
} | psql -X -q -v ON_ERROR_STOP=1 -d "$DB" >/dev/null
