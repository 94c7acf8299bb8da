#!/usr/bin/env bash
# scripts/run_citus_tests.sh: the Citus suites, against the coordinator and two workers that
# `BACKFILL_CITUS=1 scripts/with_cluster.sh` started.
#
# Prepares the database backfill_citus on all three nodes (citus in each, the workers
# registered with the coordinator, backfill created on the coordinator, which propagates it,
# then citus/setup.sql),
# then runs pg_regress (citus/sql -> citus/expected), the isolation specs (citus/specs) and the
# Perl TAP tests (citus/t, their own clusters).  Closes like scripts/run_tests.sh, with
# "Citus V on PostgreSQL V: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

PG_CONFIG=${PG_CONFIG:-pg_config}
PGXS_DIR=$(dirname "$("$PG_CONFIG" --pgxs)")/..
OUT="$BACKFILL_TMP/suites"
DB=backfill_citus
mkdir -p "$OUT"
. scripts/suites.sh

echo "== cluster: a coordinator (port $PGPORT) and workers (ports $BACKFILL_WORKER_PORTS) on 127.0.0.1 =="
scripts/citus_nodes.sh "$DB" && psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f citus/setup.sql >/dev/null ||
	{ echo "could not set up the cluster" >&2; exit 1; }
SERVER="Citus $(psql -X -At -d "$DB" -c "SELECT pg_catalog.split_part(pg_catalog.citus_version(), ' ', 2)") on $("$PG_CONFIG" --version | awk '{print $1, $2}')"
psql -X -d "$DB" -c 'SELECT nodename, nodeport, noderole, shouldhaveshards FROM pg_catalog.pg_dist_node ORDER BY nodeport'

# the tests reach the workers through these
export BACKFILL_COORDINATOR_PORT="$PGPORT"
read -r BACKFILL_WORKER1_PORT BACKFILL_WORKER2_PORT <<<"$BACKFILL_WORKER_PORTS"
export BACKFILL_WORKER1_PORT BACKFILL_WORKER2_PORT

tests=()
for f in citus/sql/*.sql; do [ -e "$f" ] && tests+=("$(basename "$f" .sql)"); done
if [ ${#tests[@]} -gt 0 ]; then
	echo "== pg_regress (citus/sql) =="
	rm -rf citus/results citus/regression.diffs citus/regression.out
	"$PGXS_DIR/test/regress/pg_regress" --inputdir=citus --outputdir=citus \
		--bindir="$("$PG_CONFIG" --bindir)" --use-existing --dbname="$DB" "${tests[@]}" 2>&1 |
		tee "$OUT/pg_regress"
	rc=${PIPESTATUS[0]}
	[ -f citus/regression.diffs ] && cp citus/regression.diffs "$OUT/pg_regress.diffs"
	count_regress "$OUT/pg_regress" pg_regress "$rc"
fi

specs=()
for f in citus/specs/*.spec; do [ -e "$f" ] && specs+=("$(basename "$f" .spec)"); done
if [ ${#specs[@]} -gt 0 ]; then
	echo "== isolation (citus/specs) =="
	rm -rf citus/output_iso
	"$PGXS_DIR/test/isolation/pg_isolation_regress" --inputdir=citus --outputdir=citus/output_iso \
		--bindir="$("$PG_CONFIG" --bindir)" --use-existing --dbname="$DB" "${specs[@]}" 2>&1 |
		tee "$OUT/isolation"
	rc=${PIPESTATUS[0]}
	[ -f citus/output_iso/regression.diffs ] && cp citus/output_iso/regression.diffs "$OUT/isolation.diffs"
	count_regress "$OUT/isolation" isolation "$rc"
fi

tap=(citus/t/*.pl)
if [ -e "${tap[0]}" ]; then
	echo "== TAP (citus/t: their own coordinator and workers) =="
	run_tap citus/t
fi

summarize "$SERVER"
