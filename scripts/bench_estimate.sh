#!/usr/bin/env bash
# scripts/bench_estimate.sh: backfill_estimate against what the run then did.
#
# On four tables (16 daily partitions of PART_ROWS rows; 4 partitions of 1M rows; 16 days of
# which one holds ten times the others; 180 days of 10,000 rows), a run is planned, estimated
# with its default options (the estimate's own time, median of RUNS calls each from a new
# session, as a number of the run's mean tasks), then run; the table puts the estimate's total beside the run's (rows, bytes built, WAL, task
# time), with the error, and the worst factor between a task's estimated and actual time under
# lock.  The goals: rows and WAL within 20%, time within 50%, each task's locked time within a
# factor of 3, an estimate cheaper than two tasks when the tasks are alike.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
PART_ROWS=${BENCH_ESTIMATE_ROWS:-100000}
. scripts/bench_lib.sh
psql -X -q -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION IF NOT EXISTS backfill' >/dev/null

# make_table NAME DAYS ROWS BIG: DAYS daily partitions of ROWS rows, the first BIG times as big,
# vacuumed, analyzed and written out (so that the estimate and the run pay for no earlier load)
make_table() {
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS $1;
CREATE TABLE $1 (id bigint NOT NULL, day date NOT NULL, amount numeric(12,2), note text) PARTITION BY RANGE (day);
SELECT format('CREATE TABLE $1_%s PARTITION OF $1 FOR VALUES FROM (%L) TO (%L)', i, date '2026-03-01' + i, date '2026-03-01' + i + 1)
FROM generate_series(0, $2 - 1) i \gexec
CREATE INDEX ON $1 (id);
INSERT INTO $1 SELECT g, date '2026-03-01' + g % $2, g % 1000, md5(g::text) FROM generate_series(1, $2 * $3) g;
INSERT INTO $1 SELECT g, date '2026-03-01', g % 1000, md5(g::text) FROM generate_series($2 * $3 + 1, $2 * $3 + ($4 - 1) * $3) g;
VACUUM ANALYZE $1;
CHECKPOINT;
SQL
}

pct() { awk -v e="$1" -v a="$2" 'BEGIN { if (a == 0) print "n/a"; else printf "%+.0f%%", 100 * (e - a) / a }'; }

printf '\nbackfill_estimate against the run it estimated (default options; estimate time: median of %d calls)\n\n' "$RUNS"
printf '| %-34s | %22s | %24s | %26s | %24s | %22s | %16s |\n' "table" "estimate ms (mean tasks)" "rows est / actual" "WAL MB est / actual" "bytes MB est / actual" "task s est / actual" "locked: within 3x, worst"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "------------------------------------" "------------------------" "--------------------------" "----------------------------" "--------------------------" "------------------------" "------------------"
for c in "bench_est16 16 $PART_ROWS 1" "bench_est1m 4 1000000 1" "bench_estskew 16 $PART_ROWS 10" "bench_est180 180 10000 1"; do
	read -r name days rows big <<<"$c"
	make_table "$name" "$days" "$rows" "$big"
	run=$(psql -X -At -v ON_ERROR_STOP=1 -c "SELECT backfill_plan('$name', '2026-03-01', (date '2026-03-01' + $days)::text, \$q\$SELECT id, day, amount + 1 AS amount, note FROM $name WHERE day >= \$1::date AND day < \$2::date\$q\$)")
	times=()
	for r in $(seq 1 "$RUNS"); do
		t0=$(now_ms)
		psql -X -At -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM backfill_estimate($run)" >/dev/null
		times+=("$(( $(now_ms) - t0 ))")
	done
	est_ms=$(printf '%s\n' "${times[@]}" | median)
	psql -X -q -v ON_ERROR_STOP=1 -c "DROP TABLE IF EXISTS bench_est_out" -c "CREATE TABLE bench_est_out AS SELECT * FROM backfill_estimate($run)" >/dev/null
	est=$(psql -X -At -F ' ' -v ON_ERROR_STOP=1 -c "SELECT rows, wal_bytes, heap_bytes + toast_bytes + index_bytes, seconds FROM bench_est_out WHERE task IS NULL")
	per_task=$(psql -X -At -F ' ' -v ON_ERROR_STOP=1 -c "SELECT string_agg(task || ':' || locked_seconds, ' ') FROM bench_est_out WHERE task IS NOT NULL")
	psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CALL backfill_run($run)" >/dev/null
	act=$(psql -X -At -F ' ' -v ON_ERROR_STOP=1 -c "SELECT sum(rows_after), sum(wal_bytes), sum(bytes_after), sum(seconds), avg(seconds) * 1000 FROM backfill_tasks WHERE run_id = $run")
	read -r erows ewal ebytes esec <<<"$est"
	read -r arows awal abytes asec amean <<<"$act"
	factors=$(for p in $per_task; do
		t=${p%%:*}; e=${p#*:}
		a=$(psql -X -At -c "SELECT locked_ms / 1000.0 FROM backfill_tasks WHERE run_id = $run AND task = $t")
		awk -v e="$e" -v a="$a" 'BEGIN { if (a > 0 && e > 0) { f = e / a; if (f < 1) f = 1 / f; print f } }'
	done)
	worst=$(printf '%s\n' "$factors" | sort -g | tail -n 1)
	within=$(printf '%s\n' "$factors" | awk '$1 <= 3 { n++ } END { printf "%d/%d", n, NR }')
	printf '| %-34s | %10.0f (%5.1f) | %10d / %10d %s | %8.1f / %8.1f %s | %7.1f / %7.1f %s | %6.2f / %6.2f %s | %14s |\n' \
		"$days x $rows rows$([ "$big" -gt 1 ] && echo ", one day ${big}x")" "$est_ms" "$(awk -v a="$est_ms" -v b="$amean" 'BEGIN { print a / b }')" \
		"$erows" "$arows" "$(pct "$erows" "$arows")" \
		"$(awk -v v="$ewal" 'BEGIN { print v / 1048576 }')" "$(awk -v v="$awal" 'BEGIN { print v / 1048576 }')" "$(pct "$ewal" "$awal")" \
		"$(awk -v v="$ebytes" 'BEGIN { print v / 1048576 }')" "$(awk -v v="$abytes" 'BEGIN { print v / 1048576 }')" "$(pct "$ebytes" "$abytes")" \
		"$esec" "$asec" "$(pct "$esec" "$asec")" "$(printf '%s, %.1fx' "$within" "${worst:-1}")"
	psql -X -q >/dev/null <<SQL
SELECT format('DROP TABLE %s', inhrelid::regclass) FROM pg_inherits WHERE inhparent = '$name'::regclass \gexec
DROP TABLE $name, bench_est_out;
SQL
done
echo
echo "task time: the sum of the tasks' own seconds (backfill_tasks.seconds), without the commits and pauses between them."
