#!/usr/bin/env bash
# scripts/bench_locked.sh: what a run's reconcile costs the readers of the partitions it swaps,
# on the cluster scripts/with_cluster.sh started (make bench runs it; run it alone the same way).
#
# A run of PARTS daily partitions x ROWS rows (BENCH_LOCKED_PARTS, BENCH_LOCKED_ROWS), strategy
# 'replace', one row in ten corrected, done with the reconcile measures count(*) and
# sum(revenue) and without them, the two alternating, RUNS times each, parallel query off.
# For each: the run's time, and per task the time under the swap's locks to the end of its
# COMMIT (backfill_tasks.locked_ms: what a reader queued behind the swap waits for) and the
# swap's own part of it (swap_ms).  Medians over every task of every run.  The reconcile reads
# the partition's filled copy and the source before the swap asks for its locks, so it adds to
# the run's time and not to locked_ms.  Timings are wall-clock on a shared machine: read the
# ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
PARTS=${BENCH_LOCKED_PARTS:-8}
ROWS=${BENCH_LOCKED_ROWS:-200000}

. scripts/bench_lib.sh
times=$(mktemp)
trap 'rm -f "$times"; psql -X -q -c "DROP TABLE IF EXISTS bench_lk, bench_lk_src" >/dev/null 2>&1 || true' EXIT

psql -X -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS backfill;
DROP TABLE IF EXISTS bench_lk, bench_lk_src;
$(daily_tables bench_lk "$PARTS" "$ROWS")
SQL
to=$(psql -X -At -c "SELECT (date '2026-01-01' + $PARTS)::text")
undo="UPDATE bench_lk SET revenue = revenue - 1 WHERE order_id % 10 = 0; VACUUM bench_lk;"

for r in $(seq 1 "$RUNS"); do
	for way in with without; do
		if [ "$way" = with ]; then measures='"reconcile": ["count(*)", "sum(revenue)"], '; else measures=''; fi
		psql -X -q -v ON_ERROR_STOP=1 <<SQL | awk -v w="$way" '/^Time:/ { print w, "run", $2; next } /^@@/ { print w, $2, $3 }'
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
$undo
SELECT backfill_plan('bench_lk', '2026-01-01', '$to', 'SELECT * FROM bench_lk_src WHERE order_date >= \$1 AND order_date < \$2',
	options => '{${measures}"refresh_dependents": false, "check_untouched": false}') AS run \\gset
\\timing on
CALL backfill_run(:run);
\\timing off
SELECT '@@ locked ' || t.locked_ms || E'\n@@ swap ' || (l.details->>'swap_ms')
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run \\g (format=unaligned tuples_only)
SQL
	done
done > "$times"

med() { awk -v w="$1" -v k="$2" '$1 == w && $2 == k { print $3 }' "$times" | median; }
printf '\nA run of %d partitions x %d rows with a reconcile (count(*), sum(revenue)) and without, median of %d runs (tasks: %d each)\n\n' \
	"$PARTS" "$ROWS" "$RUNS" "$PARTS"
printf '| %-32s | %10s | %22s | %16s |\n' "way" "run ms" "locked_ms per task" "swap_ms per task"
printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' $(seq 34))" "------------" "------------------------" "------------------"
for way in with without; do
	printf '| %-32s | %10.0f | %22.1f | %16.1f |\n' "$way a reconcile" "$(med "$way" run)" "$(med "$way" locked)" "$(med "$way" swap)"
done
printf '\nwith / without: run %.2fx, locked_ms %.2fx\n' \
	"$(awk -v a="$(med with run)" -v b="$(med without run)" 'BEGIN { print a / b }')" \
	"$(awk -v a="$(med with locked)" -v b="$(med without locked)" 'BEGIN { print a / b }')"
