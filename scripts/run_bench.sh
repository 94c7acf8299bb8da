#!/usr/bin/env bash
# scripts/run_bench.sh: backfill's functions side by side with the plain-SQL way, on the
# cluster scripts/with_cluster.sh started.
#
# Each comparison (bench/cases.txt) runs RUNS times, both sides alternating in one session
# with the same settings (parallel query off on both, unless the case's fifth field sets
# max_parallel_workers_per_gather for both), after a warm-up; the table shows the median
# times and their ratio.  Timings are wall-clock on a shared machine: read the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
CASES=${BENCH_CASES:-bench/cases.txt}	# another file of cases (and BENCH_SETUP its data): only those comparisons

psql -X -q -v ON_ERROR_STOP=1 -f "${BENCH_SETUP:-bench/setup.sql}" >/dev/null

script=$(mktemp)
trap 'rm -f "$script"' EXIT
{
	echo "SET max_parallel_workers_per_gather = 0;"
	echo "SET jit = off;"
	n=0
	while IFS='|' read -r title ours theirs lacks settings; do
		case "$title" in '#'*|'') continue ;; esac
		n=$((n + 1))
		if [ -n "${settings// /}" ]; then echo "SET $settings;"; fi
		# warm-up, untimed
		echo "$ours;" ; echo "$theirs;"
		echo '\timing on'
		for r in $(seq 1 "$RUNS"); do
			echo "\\echo @@ $n ours"; echo "$ours;"
			echo "\\echo @@ $n theirs"; echo "$theirs;"
		done
		echo '\timing off'
		if [ -n "${settings// /}" ]; then echo "RESET ALL; SET max_parallel_workers_per_gather = 0; SET jit = off;"; fi
	done < "$CASES"
} > "$script"

psql -X -q -v ON_ERROR_STOP=1 -f "$script" | awk '
	/^@@ / { c = $2; side = $3; next }
	/^Time: / && c != "" { print c, side, $2; c = "" }
' > "$script.times"

. scripts/bench_lib.sh

printf '\nbackfill vs plain SQL: median of %d runs each, same settings on both sides (parallel query off unless the title says), %s\n\n' "$RUNS" "$(psql -X -At -c 'SHOW server_version')"
printf '| %-58s | %12s | %12s | %7s | %s\n' "comparison" "backfill ms" "plain SQL ms" "ratio" "what the plain SQL lacks"
printf '|%s|%s|%s|%s|%s\n' "$(printf -- '-%.0s' $(seq 60))" "$(printf -- '-%.0s' $(seq 14))" "$(printf -- '-%.0s' $(seq 14))" "$(printf -- '-%.0s' $(seq 9))" "----"
n=0
while IFS='|' read -r title ours theirs lacks _; do
	case "$title" in '#'*|'') continue ;; esac
	n=$((n + 1))
	o=$(awk -v c="$n" '$1 == c && $2 == "ours" { print $3 }' "$script.times" | median)
	t=$(awk -v c="$n" '$1 == c && $2 == "theirs" { print $3 }' "$script.times" | median)
	printf '| %-58s | %12.1f | %12.1f | %6.2fx | %s\n' "$(echo "$title" | sed 's/ *$//')" "$o" "$t" \
		"$(awk -v o="$o" -v t="$t" 'BEGIN { print o / t }')" "$(echo "$lacks" | sed 's/^ *//')"
done < "$CASES"
rm -f "$script.times"
echo
echo "ratio = backfill / plain SQL: below 1 is faster than the plain-SQL way."
if [ -n "${BENCH_ONLY_CASES:-}" ]; then exit 0; fi	# the table of cases alone

# The same comparisons on several table shapes, side by side (bench/shapes.txt).
RUNS=$RUNS scripts/bench_shapes.sh

# The swap itself: the time backfill_replace_partition holds its locks (readers of the parent
# wait at most that long), for partitions of growing size.
SIZES=${BENCH_SWAP_SIZES:-100000 1000000 10000000}
printf '\nbackfill_replace_partition: time under lock (swap_ms) by partition size, median of %d runs\n\n' "$RUNS"
printf '| %12s | %14s | %14s |\n' "rows" "whole call ms" "swap_ms"
printf '|%s|%s|%s|\n' "--------------" "----------------" "----------------"
for n in $SIZES; do
	psql -X -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_swap, bench_swap_src;
CREATE TABLE bench_swap_src AS
SELECT g::bigint AS order_id, date '2026-03-15' AS order_date, (g % 10000) / 100.0 + 1 AS revenue
FROM generate_series(1, $n) g;
CREATE TABLE bench_swap (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
CREATE TABLE bench_swap_0314 PARTITION OF bench_swap FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE bench_swap_0315 PARTITION OF bench_swap FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
CREATE TABLE bench_swap_default PARTITION OF bench_swap DEFAULT;
INSERT INTO bench_swap SELECT * FROM bench_swap_src;
VACUUM ANALYZE bench_swap_src, bench_swap;
CHECKPOINT;
SQL
	for r in $(seq 1 "$RUNS"); do
		psql -X -At -v ON_ERROR_STOP=1 -c '\timing on' -c "SELECT swap_ms FROM backfill_replace_partition('bench_swap_0315', 'SELECT * FROM bench_swap_src WHERE order_date >= \$1 AND order_date < \$2')" \
			| awk '/^Time:/ { print "call", $2; next } /^[0-9.]+$/ { print "swap", $1 }'
	done > "$script.swap"
	call=$(awk '$1 == "call" { print $2 }' "$script.swap" | median)
	swap=$(awk '$1 == "swap" { print $2 }' "$script.swap" | median)
	printf '| %12s | %14.1f | %14.2f |\n' "$n" "$call" "$swap"
done
rm -f "$script.swap"
psql -X -q -c 'DROP TABLE IF EXISTS bench_swap, bench_swap_src' >/dev/null

# A run: N daily partitions backfilled by CALL backfill_run (one committed task per partition:
# claim, pinned-code check, write, record, commit), with strategy 'replace' and with 'auto'
# (small partitions written in place; with the key, a merge that writes only what differs),
# against a hand-written loop that commits after each bare backfill_replace_partition, and
# against a loop of DELETE + INSERT per partition.  The source differs from the table in one
# row in ten (a correction), restored before each way so that each does the same repair.
run_case() {
	local PARTS=$1 PART_ROWS=$2 RUN_RUNS=$3
	psql -X -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_run, bench_run_src;
DROP PROCEDURE IF EXISTS bench_run_loop, bench_run_delete_insert;
$(daily_tables bench_run "$PARTS" "$PART_ROWS")
CREATE PROCEDURE bench_run_loop() LANGUAGE plpgsql AS \$\$
DECLARE p regclass;
BEGIN
	FOR p IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'bench_run'::regclass ORDER BY inhrelid::regclass::text LOOP
		PERFORM backfill_replace_partition(p, 'SELECT * FROM bench_run_src WHERE order_date >= \$1 AND order_date < \$2');
		COMMIT;
	END LOOP;
END \$\$;
$(loop_procedure bench_run_delete_insert bench_run "$PARTS")
SQL
	local to
	to=$(psql -X -At -c "SELECT (date '2026-01-01' + $PARTS)::text")
	local undo="UPDATE bench_run SET revenue = revenue - 1 WHERE order_id % 10 = 0; VACUUM bench_run;"
	for r in $(seq 1 "$RUN_RUNS"); do
		psql -X -q -v ON_ERROR_STOP=1 <<SQL | awk '/^@@/ { side = $2; next } /^Time:/ && side != "" { print side, $2; side = "" }'
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
\\timing on
$undo
\\echo @@ plan
SELECT backfill_plan('bench_run', '2026-01-01', '$to', 'SELECT * FROM bench_run_src WHERE order_date >= \$1 AND order_date < \$2',
	options => '{"refresh_dependents": false, "check_untouched": false}') AS run \\gset
\\echo @@ run
CALL backfill_run(:run);
$undo
SELECT backfill_plan('bench_run', '2026-01-01', '$to', 'SELECT * FROM bench_run_src WHERE order_date >= \$1 AND order_date < \$2',
	strategy => 'auto', options => '{"refresh_dependents": false, "check_untouched": false}') AS run_auto \\gset
\\echo @@ auto
CALL backfill_run(:run_auto);
$undo
SELECT backfill_plan('bench_run', '2026-01-01', '$to', 'SELECT * FROM bench_run_src WHERE order_date >= \$1 AND order_date < \$2',
	strategy => 'auto', key => '{order_id,order_date}', options => '{"refresh_dependents": false, "check_untouched": false}') AS run_key \\gset
\\echo @@ auto_key
CALL backfill_run(:run_key);
$undo
\\echo @@ loop
CALL bench_run_loop();
$undo
\\echo @@ delete_insert
CALL bench_run_delete_insert();
\\timing off
SQL
	done > "$script.run"
	local plan run auto autokey loop di
	plan=$(awk '$1 == "plan" { print $2 }' "$script.run" | median)
	run=$(awk '$1 == "run" { print $2 }' "$script.run" | median)
	auto=$(awk '$1 == "auto" { print $2 }' "$script.run" | median)
	autokey=$(awk '$1 == "auto_key" { print $2 }' "$script.run" | median)
	loop=$(awk '$1 == "loop" { print $2 }' "$script.run" | median)
	di=$(awk '$1 == "delete_insert" { print $2 }' "$script.run" | median)
	printf '\nA run of %d partitions x %d rows, one row in ten corrected, median of %d runs (parallel query off)\n\n' "$PARTS" "$PART_ROWS" "$RUN_RUNS"
	printf '| %-66s | %10s | %13s | %10s | %10s |\n' "way" "total ms" "per partition" "vs bare" "vs D+I"
	printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' $(seq 68))" "------------" "---------------" "------------" "------------"
	row() { printf '| %-66s | %10.0f | %10.1f ms | %9.2fx | %9.2fx |\n' "$1" "$2" "$(awk -v t="$2" -v n="$PARTS" 'BEGIN { print t / n }')" "$(awk -v t="$2" -v l="$loop" 'BEGIN { print t / l }')" "$(awk -v t="$2" -v l="$di" 'BEGIN { print t / l }')"; }
	row "backfill_plan (tiles, pins, fingerprints nothing outside)" "$plan"
	row "CALL backfill_run, strategy replace (a swap per partition)" "$run"
	row "CALL backfill_run, strategy auto (small partitions in place)" "$auto"
	row "CALL backfill_run, strategy auto with the key (small ones merged)" "$autokey"
	row "loop: backfill_replace_partition + COMMIT per partition" "$loop"
	row "loop: DELETE + INSERT + COMMIT per partition" "$di"
	printf '\nrun overhead per task over a bare backfill_replace_partition: %.1f ms; throughput %.0f partitions/s, %.0f rows/s\n' \
		"$(awk -v r="$run" -v l="$loop" -v n="$PARTS" 'BEGIN { print (r - l) / n }')" \
		"$(awk -v r="$run" -v n="$PARTS" 'BEGIN { print n / (r / 1000) }')" \
		"$(awk -v r="$run" -v n="$PARTS" -v m="$PART_ROWS" 'BEGIN { print n * m / (r / 1000) }')"
	rm -f "$script.run"
	psql -X -q -c 'DROP TABLE IF EXISTS bench_run, bench_run_src' -c 'DROP PROCEDURE IF EXISTS bench_run_loop, bench_run_delete_insert' >/dev/null
}

run_case "${BENCH_RUN_PARTITIONS:-180}" "${BENCH_RUN_ROWS:-2000}" "${BENCH_RUN_RUNS:-5}"
run_case "${BENCH_RUN_BIG_PARTITIONS:-10}" "${BENCH_RUN_BIG_ROWS:-100000}" "${BENCH_RUN_RUNS:-5}"

# A repair of one partition as the table grows around it: replace, run, probe, merge, and
# planning and per-task time by the number of partitions.
RUNS=$RUNS scripts/bench_scale.sh

# backfill_estimate beside the run it estimated: rows, bytes, WAL, time and time under lock.
RUNS=$RUNS scripts/bench_estimate.sh

# What a run's reconcile costs the readers of the partitions it swaps: its time under lock
# with the reconcile and without.
RUNS=$RUNS scripts/bench_locked.sh

# Parallel replacements: one run of PARTS partitions x PART_ROWS rows, strategy 'replace', done by
# one session (max_workers 1) or by WORKERS sessions calling CALL backfill_run on it at once
# (max_workers WORKERS): the fills run side by side, the swaps take turns on the parent.  Same
# table, source and settings both ways, the two ways alternating; wall-clock time from the first
# CALL to the end of the last, median of RUN_RUNS runs each.
par_case() {
	local PARTS=$1 PART_ROWS=$2 WORKERS=$3 RUN_RUNS=$4
	psql -X -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_par, bench_par_src;
$(daily_tables bench_par "$PARTS" "$PART_ROWS")
SQL
	local to
	to=$(psql -X -At -c "SELECT (date '2026-01-01' + $PARTS)::text")
	# one timed way: plan a run for w workers, then w sessions CALL it at once; prints ms
	par_way() {
		local w=$1 run start end
		run=$(psql -X -At -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
			-c "SELECT backfill_plan('bench_par', '2026-01-01', '$to', 'SELECT * FROM bench_par_src WHERE order_date >= \$1 AND order_date < \$2', options => '{\"refresh_dependents\": false, \"check_untouched\": false, \"max_workers\": $w}')" | tail -n 1)
		psql -X -q -c CHECKPOINT
		start=$(date +%s%N)
		for _ in $(seq 1 "$w"); do
			psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "SET max_parallel_workers_per_gather = 0" \
				-c "SET jit = off" -c "CALL backfill_run($run)" &
		done
		wait
		end=$(date +%s%N)
		[ "$(psql -X -At -c "SELECT count(*) FROM backfill_tasks WHERE run_id = $run AND status <> 'done'")" = 0 ] ||
			{ echo "par_case: run $run has tasks not done" >&2; exit 1; }
		echo $(( (end - start) / 1000000 ))
	}
	for _ in $(seq 1 "$RUN_RUNS"); do
		echo "one $(par_way 1)"
		echo "many $(par_way "$WORKERS")"
	done > "$script.par"
	local one many
	one=$(awk '$1 == "one" { print $2 }' "$script.par" | median)
	many=$(awk '$1 == "many" { print $2 }' "$script.par" | median)
	printf '\nA run of %d partitions x %d rows, strategy replace, by 1 session and by %d sessions at once, median of %d runs (parallel query off; %d cores, shared)\n\n' \
		"$PARTS" "$PART_ROWS" "$WORKERS" "$RUN_RUNS" "$(nproc)"
	printf '| %-52s | %10s | %13s | %16s |\n' "way" "total ms" "per partition" "throughput vs 1"
	printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' $(seq 54))" "------------" "---------------" "------------------"
	printf '| %-52s | %10.0f | %10.1f ms | %15.2fx |\n' "CALL backfill_run, max_workers 1, one session" "$one" \
		"$(awk -v t="$one" -v n="$PARTS" 'BEGIN { print t / n }')" 1
	printf '| %-52s | %10.0f | %10.1f ms | %15.2fx |\n' "CALL backfill_run, max_workers $WORKERS, $WORKERS sessions" "$many" \
		"$(awk -v t="$many" -v n="$PARTS" 'BEGIN { print t / n }')" "$(awk -v o="$one" -v m="$many" 'BEGIN { print o / m }')"
	printf '\nevery run: %s ms with 1 session, %s ms with %d\n' \
		"$(awk '$1 == "one" { printf "%s%s", sep, $2; sep = ", " }' "$script.par")" \
		"$(awk '$1 == "many" { printf "%s%s", sep, $2; sep = ", " }' "$script.par")" "$WORKERS"
	rm -f "$script.par"
	psql -X -q -c 'DROP TABLE IF EXISTS bench_par, bench_par_src' >/dev/null
}

par_case "${BENCH_PAR_PARTITIONS:-10}" "${BENCH_PAR_ROWS:-100000}" "${BENCH_PAR_WORKERS:-2}" "${BENCH_PAR_RUNS:-7}"

# After the swap: the visibility map of the new partition (index-only scans, the first VACUUM).
RUNS=$RUNS scripts/bench_vacuum.sh

# Beside production: what a run leaves a standby and a logical slot behind, with and without
# the options that hold it back, and what fixed-rate readers see beside each way of rewriting.
BENCH_THROTTLE_RUNS=${BENCH_THROTTLE_RUNS:-3} scripts/bench_throttle.sh

# The source computed on a standby (options.source_server) or on the primary, beside readers
# of the primary: their latency, and the CPU the run's backend spends on the primary.
BENCH_STANDBY_RUNS=${BENCH_STANDBY_RUNS:-3} scripts/bench_standby.sh
