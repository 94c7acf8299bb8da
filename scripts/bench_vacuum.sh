#!/usr/bin/env bash
# scripts/bench_vacuum.sh: what a replaced partition costs after the swap, on the cluster
# scripts/with_cluster.sh started (make bench runs it last; run it alone the same way).
#
# A partition of ROWS rows with a primary key is replaced RUNS times by backfill and, as the
# plain-SQL way, by a staging table filled with INSERT and swapped in by DETACH/ATTACH.  After
# each replacement: an index-only scan's heap fetches (0 when the visibility map says every
# page is all-visible), then the first VACUUM's pages scanned (of the total) and the WAL it
# wrote.  Autovacuum is off for the partitions so that the first VACUUM is ours.  Medians.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
ROWS=${BENCH_VACUUM_ROWS:-1000000}

psql -X -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
CREATE EXTENSION IF NOT EXISTS backfill;
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_vac_src, bench_vac_a, bench_vac_b;
CREATE TABLE bench_vac_src AS
SELECT g::bigint AS order_id, date '2026-03-15' AS order_date, (g % 10000) / 100.0 + 1 AS revenue
FROM generate_series(1, $ROWS) g;
CREATE TABLE bench_vac_a (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
CREATE TABLE bench_vac_a_0315 PARTITION OF bench_vac_a FOR VALUES FROM ('2026-03-15') TO ('2026-03-16')
	WITH (autovacuum_enabled = false);
CREATE TABLE bench_vac_b (LIKE bench_vac_a INCLUDING ALL) PARTITION BY RANGE (order_date);
CREATE TABLE bench_vac_b_0315 PARTITION OF bench_vac_b FOR VALUES FROM ('2026-03-15') TO ('2026-03-16')
	WITH (autovacuum_enabled = false);
INSERT INTO bench_vac_a SELECT * FROM bench_vac_src;
INSERT INTO bench_vac_b SELECT * FROM bench_vac_src;
VACUUM ANALYZE bench_vac_src, bench_vac_a, bench_vac_b;
CHECKPOINT;
SQL

ours="SELECT backfill_replace_partition('bench_vac_a_0315', 'SELECT * FROM bench_vac_src WHERE order_date >= \$1 AND order_date < \$2')"
theirs="DO \$\$ BEGIN CREATE TABLE bench_vac_b_new (LIKE bench_vac_b_0315 INCLUDING ALL) WITH (autovacuum_enabled = false);
 INSERT INTO bench_vac_b_new SELECT * FROM bench_vac_src WHERE order_date >= '2026-03-15' AND order_date < '2026-03-16';
 ALTER TABLE bench_vac_b DETACH PARTITION bench_vac_b_0315;
 ALTER TABLE bench_vac_b ATTACH PARTITION bench_vac_b_new FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
 DROP TABLE bench_vac_b_0315; ALTER TABLE bench_vac_b_new RENAME TO bench_vac_b_0315; END \$\$"

# measure SIDE PART STATEMENT: one line "SIDE ms heap_fetches scanned total wal_bytes"
measure() {
	psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL | awk -v side="$1" '
		/^Time:/ && ms == "" { ms = $2 }
		/^fetches / { f = $2 }
		/pages: .* remain, .* scanned/ { for (i = 1; i <= NF; i++) { if ($i == "remain,") total = $(i - 1); if ($i == "scanned") scanned = $(i - 1) } }
		/^wal / { w = $2 }
		END { print side, ms, f, scanned, total, w }'
SET max_parallel_workers_per_gather = 0;
SET jit = off;
\\timing on
$3;
\\timing off
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT 'fetches ' || (public.bench_explain_ios('$2')::jsonb #>> '{0,Plan,Plans,0,Heap Fetches}');
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT pg_catalog.pg_current_wal_insert_lsn() AS lsn \\gset
VACUUM (VERBOSE) $2;
SELECT 'wal ' || pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_insert_lsn(), :'lsn');
SQL
}

# an index-only scan of the whole partition, as EXPLAIN ANALYZE JSON
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE OR REPLACE FUNCTION public.bench_explain_ios(rel text) RETURNS json LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
	EXECUTE format('EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM %s WHERE order_id > 0', rel) INTO j;
	RETURN j;
END $$;
SQL

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq 1 "$RUNS"); do
	measure backfill bench_vac_a_0315 "$ours"
	measure plain bench_vac_b_0315 "$theirs"
done > "$out"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v s="$1" -v c="$2" '$1 == s { print $c }' "$out" | median; }

printf '\nAfter replacing a partition of %d rows (with a primary key): median of %d runs\n\n' "$ROWS" "$RUNS"
printf '| %-52s | %10s | %21s | %19s | %14s |\n' "way" "replace ms" "index-only heap fetches" "first VACUUM scanned" "its WAL bytes"
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' $(seq 54))" "------------" "-------------------------" "---------------------" "----------------"
for side in backfill plain; do
	case $side in
		backfill) title="backfill_replace_partition" ;;
		plain) title="staging + INSERT + DETACH/ATTACH by hand" ;;
	esac
	printf '| %-52s | %10.0f | %23s | %11s of %5s | %14s |\n' "$title" "$(col $side 2)" "$(col $side 3)" \
		"$(col $side 4)" "$(col $side 5)" "$(col $side 6)"
done
echo
echo "goal: no heap fetch and a first VACUUM that skips the pages (the visibility map is set by the fill)."
psql -X -q -c 'DROP TABLE IF EXISTS bench_vac_src, bench_vac_a, bench_vac_b' \
	-c 'DROP FUNCTION IF EXISTS public.bench_explain_ios(text)' >/dev/null
