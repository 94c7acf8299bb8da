#!/usr/bin/env bash
# scripts/run_citus_bench.sh: the Citus part of `make bench`, on the coordinator and two
# workers that `BACKFILL_CITUS=1 scripts/with_cluster.sh` started.
#
# The fingerprint of a distributed table (per shard) against count(*) on it, against the
# fingerprint of the same rows in a local table, and against pulling its rows to the
# coordinator (bench/citus_cases.txt, through scripts/run_bench.sh); then the time
# backfill_replace_partition holds its locks on a distributed partitioned table, by partition
# size, against a swap by hand with a staging table filled on the coordinator (which Citus
# distributes, and copies into the shards, at ATTACH).  Medians of RUNS (5) runs.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
export PGDATABASE=backfill_bench
scripts/citus_nodes.sh "$PGDATABASE"

RUNS=$RUNS BENCH_SETUP=bench/citus_setup.sql BENCH_CASES=bench/citus_cases.txt BENCH_ONLY_CASES=1 \
	scripts/run_bench.sh | sed 's/^backfill vs plain SQL:/backfill on Citus (a coordinator and two workers, 32 shards):/'

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
SIZES=${BENCH_CITUS_SWAP_SIZES:-10000 300000 1000000}
times=$(mktemp)
trap 'rm -f "$times"' EXIT
printf '\nbackfill_replace_partition on a distributed partitioned table (32 shards): time under lock by partition size, median of %d runs\n\n' "$RUNS"
printf '| %10s | %14s | %10s | %10s | %12s | %26s | %10s | %12s | %26s |\n' "rows" "whole call ms" "swap_ms" "COMMIT ms" "under lock" \
	"by hand, local staging: ms" "COMMIT ms" "under lock" "by hand: bytes left local"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' "------------" "----------------" "------------" "------------" "--------------" \
	"----------------------------" "------------" "--------------" "----------------------------"
for n in $SIZES; do
	psql -X -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_swap, bench_swap_src;
CREATE TABLE bench_swap_src (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2));
SELECT create_distributed_table('bench_swap_src', 'order_id', shard_count => 32);
INSERT INTO bench_swap_src SELECT g, date '2026-03-15', (g % 10000) / 100.0 + 1 FROM generate_series(1, $n) g;
CREATE TABLE bench_swap (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
CREATE TABLE bench_swap_0314 PARTITION OF bench_swap FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE bench_swap_0315 PARTITION OF bench_swap FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
SELECT create_distributed_table('bench_swap', 'order_id', colocate_with => 'bench_swap_src');
INSERT INTO bench_swap SELECT * FROM bench_swap_src;
SQL
	for r in $(seq 1 "$RUNS"); do
		# the locks are let go at the end of the two-phase COMMIT: timed apart
		psql -X -At -v ON_ERROR_STOP=1 -c '\timing on' -c 'BEGIN' \
			-c "SELECT swap_ms FROM backfill_replace_partition('bench_swap_0315', 'SELECT * FROM bench_swap_src WHERE order_date >= \$1 AND order_date < \$2')" \
			-c 'COMMIT' |
			awk '/^Time:/ { t++; if (t == 2) print "call", $2; if (t == 3) print "commit", $2; next } /^[0-9.]+$/ { print "swap", $1 }'
		# by hand: the staging table filled on the coordinator, then the swap under lock
		psql -X -At -v ON_ERROR_STOP=1 <<'SQL' 2>/dev/null | awk '/^hand / { print } /^Time:/ { print "handcommit", $2 }'
BEGIN;
CREATE TABLE bench_swap_new (LIKE bench_swap_0315 INCLUDING ALL,
	CHECK (order_date IS NOT NULL AND order_date >= '2026-03-15' AND order_date < '2026-03-16'));
INSERT INTO bench_swap_new SELECT * FROM bench_swap_src;
SELECT clock_timestamp() AS t0 \gset
LOCK TABLE bench_swap, bench_swap_0315 IN ACCESS EXCLUSIVE MODE;
ALTER TABLE bench_swap DETACH PARTITION bench_swap_0315;
DROP TABLE bench_swap_0315;
ALTER TABLE bench_swap_new RENAME TO bench_swap_0315;
ALTER TABLE bench_swap ATTACH PARTITION bench_swap_0315 FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
SELECT 'hand ' || extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000 || ' ' || pg_relation_size('bench_swap_0315');
\timing on
COMMIT;
SQL
	done > "$times"
	call=$(awk '$1 == "call" { print $2 }' "$times" | median)
	swap=$(awk '$1 == "swap" { print $2 }' "$times" | median)
	hand=$(awk '$1 == "hand" { print $2 }' "$times" | median)
	left=$(awk '$1 == "hand" { print $3 }' "$times" | median)
	commit=$(awk '$1 == "commit" { print $2 }' "$times" | median)
	handcommit=$(awk '$1 == "handcommit" { print $2 }' "$times" | median)
	locked=$(awk '$1 == "swap" { s[++n] = $2 } $1 == "commit" { c[++m] = $2 } END { for (i = 1; i <= n; i++) print s[i] + c[i] }' "$times" | median)
	handlocked=$(awk '$1 == "hand" { s[++n] = $2 } $1 == "handcommit" { c[++m] = $2 } END { for (i = 1; i <= n; i++) print s[i] + c[i] }' "$times" | median)
	printf '| %10s | %14.1f | %10.2f | %10.2f | %12.2f | %26.1f | %10.2f | %12.2f | %26s |\n' "$n" "$call" "$swap" "$commit" "$locked" \
		"$hand" "$handcommit" "$handlocked" "$left"
done
psql -X -q -c 'DROP TABLE IF EXISTS bench_swap, bench_swap_src' >/dev/null
echo
echo "swap_ms: the time backfill holds ACCESS EXCLUSIVE up to its return (its staging table was distributed while"
echo "empty and filled shard to shard); by hand, ATTACH distributes the local staging table and copies its rows under"
echo "the lock.  The locks are let go at the end of the two-phase COMMIT, timed apart; under lock is the sum, run by run."
