#!/usr/bin/env bash
# scripts/bench_scale.sh: how a repair's cost grows with the table around the window.
#
# One daily-partitioned table grows from 4 to 16, 64 and 256 partitions of PART_ROWS rows
# each (BENCH_SCALE_PARTS, BENCH_SCALE_ROWS); at each size one partition (the same day) is
# repaired four ways, each RUNS times, alternating, in one session with the server's settings
# (parallel query and JIT as the server has them, as a user's session would): a bare
# backfill_replace_partition, a run over that partition (backfill_plan with its default
# options + CALL backfill_run), a probe of that replacement scoped to the day, and a merge
# scoped to the day on the key.  The table shows the median times and each as a ratio
# to the bare replacement at the same size, and how the last run checked the partitions
# outside its range (backfill_progress.untouched_checks).  Then, on tables of 100 and 3,650
# partitions of 10 rows, backfill_plan's time with its default options, a run's time per
# task (30 tasks, check_untouched off), the time of a bare backfill_replace_partition of each of the
# same 30 partitions, and the difference: what the run adds per task; and backfill_progress
# beside a run planned over every partition (3,650 tasks), against counting the state
# table's tasks by status in plain SQL.  Timings are wall-clock on a shared machine: read the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
PARTS_LIST=${BENCH_SCALE_PARTS:-4 16 64 256}
PART_ROWS=${BENCH_SCALE_ROWS:-50000}
SMALL_LIST=${BENCH_SCALE_SMALL:-100 3650}

. scripts/bench_lib.sh
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
times=$(mktemp)
trap 'rm -f "$times"' EXIT

# make_days TABLE FIRST LAST ROWS: partitions FIRST..LAST (day numbers from 2020-01-01) of ROWS rows
make_days() {
	psql -X -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
-- committed as a production server commits (the bench cluster commits asynchronously): a
-- VACUUM marks a page all-visible only once the commits of its rows are flushed
SET synchronous_commit = on;
SELECT format('CREATE TABLE %I PARTITION OF $1 FOR VALUES FROM (%L) TO (%L)', '$1_' || to_char(d, 'YYYYMMDD'), d, d + 1)
FROM (SELECT date '2020-01-01' + g AS d FROM generate_series($2, $3) g) x \\gexec
INSERT INTO $1 SELECT (g / ($3 - $2 + 1))::bigint, date '2020-01-01' + $2 + g % ($3 - $2 + 1), (g % 10000) / 100.0
FROM generate_series(0, ($3 - $2 + 1) * $4 - 1) g;
VACUUM ANALYZE $1;
SQL
}

psql -X -q -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS backfill;
DROP TABLE IF EXISTS bench_scale, bench_scale_src;
CREATE TABLE bench_scale (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
CREATE TABLE bench_scale_src (order_id bigint, order_date date, revenue numeric(12,2));
SQL

src="SELECT * FROM bench_scale_src WHERE order_date >= \$1 AND order_date < \$2"
day=bench_scale_20200101
printf '\nA repair of one partition of %s rows as the table grows around it, median of %d runs (the server settings, parallel query and JIT as they are), %s\n\n' \
	"$PART_ROWS" "$RUNS" "$(psql -X -At -c 'SHOW server_version')"
printf '| %10s | %12s | %11s | %22s | %24s | %22s | %s |\n' "partitions" "rows" "replace ms" "run over it (ms, ratio)" "probe scoped (ms, ratio)" "merge scoped (ms, ratio)" "the run's check of the other partitions"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "------------" "--------------" "-------------" "------------------------" "--------------------------" "------------------------" "---"
have=0
for parts in $PARTS_LIST; do
	make_days bench_scale "$have" "$((parts - 1))" "$PART_ROWS"
	# the source: the day repaired, one row in ten corrected
	[ "$have" -gt 0 ] || psql -X -q -c "INSERT INTO bench_scale_src SELECT order_id, order_date,
		revenue + CASE WHEN order_id % 10 = 0 THEN 1 ELSE 0 END FROM bench_scale WHERE order_date = '2020-01-01'"
	have=$parts
	psql -X -q -c 'VACUUM ANALYZE bench_scale_src' -c CHECKPOINT
	psql -X -q -v ON_ERROR_STOP=1 <<SQL | awk '/^@@/ { side = $2; next } /^Time:/ && side != "" { print side, $2; side = "" }' > "$times"
SET client_min_messages = warning;
SELECT backfill_replace_partition('$day', '$src');
\\timing on
$(for r in $(seq 1 "$RUNS"); do cat <<STEP
\\echo @@ replace
SELECT rows_after FROM backfill_replace_partition('$day', '$src');
\\echo @@ runplan
SELECT backfill_plan('bench_scale', '2020-01-01', '2020-01-02', '$src') AS run \\gset
\\echo @@ runcall
CALL backfill_run(:run);
\\echo @@ probe
SELECT idempotent FROM backfill_probe_idempotency(\$p\$SELECT backfill_replace_partition('$day', '$src')\$p\$,
	'bench_scale', \$s\$order_date = '2020-01-01'\$s\$);
\\echo @@ merge
SELECT updated FROM backfill_merge('bench_scale', 'SELECT * FROM bench_scale_src', '{order_id,order_date}', \$s\$order_date = '2020-01-01'\$s\$);
STEP
done)
\\timing off
SQL
	# the run's time is its plan and its CALL together
	rep=$(awk '$1 == "replace" { print $2 }' "$times" | median)
	run=$(paste <(awk '$1 == "runplan" { print $2 }' "$times") <(awk '$1 == "runcall" { print $2 }' "$times") | awk '{ print $1 + $2 }' | median)
	probe=$(awk '$1 == "probe" { print $2 }' "$times" | median)
	merge=$(awk '$1 == "merge" { print $2 }' "$times" | median)
	checks=$(psql -X -At -c "SELECT untouched_checks FROM backfill_progress WHERE target = 'public.bench_scale' ORDER BY run_id DESC LIMIT 1")
	printf '| %10d | %12d | %11.0f | %11.0f, %8s | %13.0f, %8s | %11.0f, %8s | %s |\n' "$parts" "$((parts * PART_ROWS))" "$rep" \
		"$run" "$(ratio "$run" "$rep")" "$probe" "$(ratio "$probe" "$rep")" "$merge" "$(ratio "$merge" "$rep")" "$checks"
done
psql -X -q -c 'DROP TABLE IF EXISTS bench_scale, bench_scale_src' >/dev/null

# Small partitions: planning (default options) and a run's time per task.
printf '\nPlanning and per-task time against the number of partitions (10 rows each), median of %d runs\n\n' "$RUNS"
printf '| %10s | %16s | %26s | %29s | %23s |\n' "partitions" "backfill_plan ms, default options" "run of 30 tasks (check_untouched off), ms a task" "30 bare replacements, ms each" "run's own ms a task"
printf '|%s|%s|%s|%s|%s|\n' "------------" "------------------" "----------------------------" "-------------------------------" "-------------------------"
first_task=""
progress_rows=()
for parts in $SMALL_LIST; do
	psql -X -q -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_small, bench_small_src;
CREATE TABLE bench_small (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2)) PARTITION BY RANGE (order_date);
CREATE TABLE bench_small_src (order_id bigint, order_date date, revenue numeric(12,2));
CREATE OR REPLACE PROCEDURE bench_small_loop() LANGUAGE plpgsql AS $$
BEGIN
	FOR d IN 0..29 LOOP
		PERFORM backfill_replace_partition(format('bench_small_%s', to_char(date '2020-01-01' + d, 'YYYYMMDD')),
			'SELECT * FROM bench_small_src WHERE order_date >= $1 AND order_date < $2');
		COMMIT;
	END LOOP;
END $$;
SQL
	make_days bench_small 0 "$((parts - 1))" 10
	psql -X -q -c 'INSERT INTO bench_small_src SELECT * FROM bench_small WHERE order_date < date '"'"'2020-01-31'"'"'' -c 'VACUUM ANALYZE bench_small_src'
	psql -X -q -v ON_ERROR_STOP=1 <<SQL | awk '/^@@/ { side = $2; next } /^Time:/ && side != "" { print side, $2; side = "" }' > "$times"
SET client_min_messages = warning;
\\timing on
$(for r in $(seq 1 "$RUNS"); do cat <<STEP
\\echo @@ plan
SELECT backfill_plan('bench_small', '2020-01-01', '2020-01-31', 'SELECT * FROM bench_small_src WHERE order_date >= \$1 AND order_date < \$2') AS planned \\gset
SELECT backfill_cancel(:planned);
SELECT backfill_plan('bench_small', '2020-01-01', '2020-01-31', 'SELECT * FROM bench_small_src WHERE order_date >= \$1 AND order_date < \$2',
	options => '{"refresh_dependents": false, "check_untouched": false}') AS run \\gset
\\echo @@ run
CALL backfill_run(:run);
\\echo @@ loop
CALL bench_small_loop();
STEP
done)
\\timing off
SQL
	plan=$(awk '$1 == "plan" { print $2 }' "$times" | median)
	task=$(awk '$1 == "run" { print $2 / 30 }' "$times" | median)
	bare=$(awk '$1 == "loop" { print $2 / 30 }' "$times" | median)
	own=$(awk -v t="$task" -v b="$bare" 'BEGIN { print t - b }')
	[ -n "$first_task" ] || { first_task=$task; first_bare=$bare; first_own=$own; }
	printf '| %10d | %16.0f | %14.1f (%s of the first) | %17.1f (%s of the first) | %11.1f (%s of the first) |\n' "$parts" "$plan" \
		"$task" "$(ratio "$task" "$first_task")" "$bare" "$(ratio "$bare" "$first_bare")" "$own" "$(ratio "$own" "$first_own")"
	# backfill_progress beside a run planned over every partition: what a dashboard polls
	psql -X -q -v ON_ERROR_STOP=1 <<SQL | awk '/^@@/ { side = $2; next } /^Time:/ && side != "" { print side, $2; side = "" }' > "$times"
SET client_min_messages = warning;
SELECT backfill_plan('bench_small', '2020-01-01', (date '2020-01-01' + $parts)::text,
	'SELECT * FROM bench_small_src WHERE order_date >= \$1 AND order_date < \$2',
	options => '{"refresh_dependents": false, "check_untouched": false}') AS whole \\gset
\\timing on
$(for r in $(seq 1 "$RUNS"); do printf '\\echo @@ progress\nSELECT count(*) FROM backfill_progress;\n\\echo @@ plain\nSELECT count(*) FROM (SELECT run_id, status, count(*), sum(rows_after) FROM backfill_tasks_data GROUP BY 1, 2) c;\n'; done)
\\timing off
SELECT backfill_cancel(:whole);
SQL
	tasks=$(psql -X -At -c 'SELECT count(*) FROM backfill_tasks_data')
	runs=$(psql -X -At -c 'SELECT count(*) FROM backfill_runs_data')
	prog=$(awk '$1 == "progress" { print $2 }' "$times" | median)
	plain=$(awk '$1 == "plain" { print $2 }' "$times" | median)
	progress_rows+=("$(printf '| %10d | %5d runs, %6d tasks | %20.1f | %30.1f | %6s |' "$parts" "$runs" "$tasks" "$prog" "$plain" "$(ratio "$prog" "$plain")")")
done
printf '\nbackfill_progress beside a run of one task per partition (and the runs above), median of %d calls\n\n' "$RUNS"
printf '| %10s | %24s | %20s | %30s | %6s |\n' "partitions" "in the state tables" "backfill_progress ms" "tasks counted by status, ms" "ratio"
printf '|%s|%s|%s|%s|%s|\n' "------------" "--------------------------" "----------------------" "--------------------------------" "--------"
printf '%s\n' "${progress_rows[@]}"
# one partition a transaction: 3,650 at once need more locks than a default server has
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SELECT format('DROP TABLE %s', inhrelid::regclass) FROM pg_inherits WHERE inhparent = 'bench_small'::regclass \gexec
DROP TABLE IF EXISTS bench_small, bench_small_src;
DROP PROCEDURE IF EXISTS bench_small_loop;
SQL
echo
echo "ratios: each way over the bare replacement of the same partition at the same size; per task: over the first table's."
