#!/usr/bin/env bash
# scripts/bench_throttle.sh: a run that yields to production, on the cluster
# scripts/with_cluster.sh started (make bench runs it; run it alone the same way).
#
# Two tables.
# 1. What a run leaves a standby and a logical slot behind.  A primary of its own (wal_level
#    logical, in BACKFILL_TMP, on a Unix socket there) with a streaming standby made by
#    pg_basebackup (it replies every second).  A run of LAG_PARTS daily partitions is started;
#    the standby's replay is paused (pg_wal_replay_pause) for HOLD seconds, or a logical slot
#    (pgoutput) is left unread for HOLD seconds and then read up to date every 200 ms.  Each
#    way runs with no option and with max_replica_lag_ms / max_slot_lag_bytes set: the WAL
#    written while the standby or slot was held, the most WAL it was behind (sampled every
#    100 ms), and the run's time.
# 2. What readers see.  On the bench cluster, a fixed-rate pgbench (-R RATE, readers of the
#    three newest days 9 times in 10, writers into the newest day) runs alone and beside
#    each way of rewriting PARTS older days: a run with no throttle, a run with an I/O budget
#    (cost_limit), and the plain DELETE + INSERT + COMMIT loop.  The readers' latency (from
#    their scheduled start, as pgbench -R counts it) is taken over the time each backfill ran,
#    and "alone" over a stretch as long as the plain loop's.
# Medians of RUNS_THROTTLE runs (default 3), the ways alternating in each round.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${BENCH_THROTTLE_RUNS:-3}
LAG_PARTS=${BENCH_LAG_PARTS:-12}
LAG_ROWS=${BENCH_LAG_ROWS:-100000}
HOLD=${BENCH_LAG_HOLD:-2}
MAX_LAG_MS=${BENCH_MAX_REPLICA_LAG_MS:-500}
MAX_SLOT=${BENCH_MAX_SLOT_LAG_BYTES:-8388608}
PARTS=${BENCH_THROTTLE_PARTS:-16}
ROWS=${BENCH_THROTTLE_ROWS:-200000}
RATE=${BENCH_THROTTLE_RATE:-400}
BUDGET=${BENCH_THROTTLE_BUDGET:-'"cost_limit": 10000, "cost_delay_ms": 20'}
read -r -a RUN_AS <<<"${BACKFILL_RUN_AS:-}"

work=$(mktemp -d "$BACKFILL_TMP/throttle.XXXXXX")
chmod 755 "$work"
[ "$(id -u)" -eq 0 ] && chown postgres: "$work"
PRIMARY="$work/primary"
STANDBY="$work/standby"

. scripts/bench_lib.sh

cleanup() {
	rc=$?
	stop_node "$STANDBY"
	stop_node "$PRIMARY"
	rm -rf "$work"
	psql -X -q -c 'DROP TABLE IF EXISTS bench_thr, bench_thr_src' -c 'DROP PROCEDURE IF EXISTS bench_thr_loop' >/dev/null 2>&1 || true
	exit "$rc"
}
trap cleanup EXIT

# --- 1. a standby and a logical slot held back ----------------------------------------------
if [ "${BENCH_THROTTLE_ONLY:-lag}" = lag ] || [ -z "${BENCH_THROTTLE_ONLY:-}" ]; then
primary_and_standby "$work" 5433 "wal_level = logical
max_replication_slots = 4" "wal_receiver_status_interval = 1"
P=(-X -h "$work" -p 5433)
S=(-X -h "$work" -p 5434)

psql "${P[@]}" -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION backfill;
$(daily_tables bench_lag "$LAG_PARTS" "$LAG_ROWS" "autovacuum_enabled = false")
SQL
lag_to=$(psql "${P[@]}" -At -c "SELECT (date '2026-01-01' + $LAG_PARTS)::text")

# lag_way WHAT OPTION: one run with the standby (WHAT = standby) or a slot (WHAT = slot) held
# for HOLD seconds from the run's start; prints "held_bytes most_behind_bytes run_ms"
lag_way() {
	local what=$1 option=$2 run pid start lsn0 held samples
	run=$(psql "${P[@]}" -At -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
		-c "SELECT backfill_plan('bench_lag', '2026-01-01', '$lag_to', 'SELECT * FROM bench_lag_src WHERE order_date >= \$1 AND order_date < \$2', options => '{\"refresh_dependents\": false, \"check_untouched\": false${option:+, $option}}')" | tail -n 1)
	psql "${P[@]}" -q -c CHECKPOINT
	if [ "$what" = slot ]; then
		psql "${P[@]}" -q -At -c "SELECT pg_create_logical_replication_slot('bench_cdc', 'pgoutput')" >/dev/null
	else
		# the standby has caught up, then its replay stops
		for _ in $(seq 1 100); do
			[ "$(psql "${S[@]}" -At -c "SELECT pg_last_wal_replay_lsn() >= '$(psql "${P[@]}" -At -c 'SELECT pg_current_wal_lsn()')'")" = t ] && break
			sleep 0.1
		done
		psql "${S[@]}" -q -c "SELECT pg_wal_replay_pause()" >/dev/null
	fi
	lsn0=$(psql "${P[@]}" -At -c 'SELECT pg_current_wal_lsn()')
	samples="$work/samples"
	: >"$samples"
	start=$(now_ms)
	psql "${P[@]}" -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "SET max_parallel_workers_per_gather = 0" \
		-c "CALL backfill_run($run)" &
	pid=$!
	held=
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$what" = slot ]; then
			psql "${P[@]}" -At -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn) FROM pg_replication_slots WHERE slot_name = 'bench_cdc'" >>"$samples"
		else
			local cur rep
			cur=$(psql "${P[@]}" -At -c 'SELECT pg_current_wal_lsn()')
			rep=$(psql "${S[@]}" -At -c 'SELECT pg_last_wal_replay_lsn()')
			psql "${P[@]}" -At -c "SELECT pg_wal_lsn_diff('$cur', '$rep')" >>"$samples"
		fi
		if [ -z "$held" ] && [ $(( $(now_ms) - start )) -ge $(( HOLD * 1000 )) ]; then
			held=$(psql "${P[@]}" -At -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn0')")
			[ "$what" = standby ] && psql "${S[@]}" -q -c "SELECT pg_wal_replay_resume()" >/dev/null
		fi
		if [ -n "$held" ] && [ "$what" = slot ]; then
			psql "${P[@]}" -q -c "SELECT pg_replication_slot_advance('bench_cdc', pg_current_wal_lsn())" >/dev/null
		fi
		sleep 0.1
	done
	wait "$pid"
	local ms=$(( $(now_ms) - start ))
	if [ -z "$held" ]; then	# the run ended before the hold did
		held=$(psql "${P[@]}" -At -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn0')")
		[ "$what" = standby ] && psql "${S[@]}" -q -c "SELECT pg_wal_replay_resume()" >/dev/null
	fi
	local total
	total=$(psql "${P[@]}" -At -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn0')")
	if [ "$what" = slot ]; then psql "${P[@]}" -q -c "SELECT pg_drop_replication_slot('bench_cdc')" >/dev/null; fi
	[ "$(psql "${P[@]}" -At -c "SELECT count(*) FROM backfill_tasks WHERE run_id = $run AND status <> 'done'")" = 0 ] ||
		{ echo "bench_throttle: run $run has tasks not done" >&2; exit 1; }
	echo "$held $(sort -n "$samples" | tail -n 1) $ms $total"
}

lag_out="$work/lag"
for _ in $(seq 1 "$RUNS"); do
	r=$(lag_way standby ''); echo "standby_none $r"
	r=$(lag_way standby "\"max_replica_lag_ms\": $MAX_LAG_MS, \"throttle_interval_ms\": 100"); echo "standby_cap $r"
	r=$(lag_way slot ''); echo "slot_none $r"
	r=$(lag_way slot "\"max_slot_lag_bytes\": $MAX_SLOT, \"throttle_interval_ms\": 100"); echo "slot_cap $r"
done >"$lag_out"
stop_node "$STANDBY"
stop_node "$PRIMARY"

lcol() { awk -v w="$1" -v c="$2" '$1 == w { print $c }' "$lag_out" | median; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1048576 }'; }
printf '\nA run of %d partitions x %d rows (strategy replace) while a standby or a logical slot is held back for %d s from its start, median of %d runs\n\n' \
	"$LAG_PARTS" "$LAG_ROWS" "$HOLD" "$RUNS"
printf '| %-44s | %-32s | %18s | %18s | %9s |\n' "held back" "option" "WAL written meanwhile" "most WAL behind" "run ms"
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' $(seq 46))" "$(printf -- '-%.0s' $(seq 34))" "--------------------" "--------------------" "-----------"
for w in standby_none standby_cap slot_none slot_cap; do
	case $w in
		standby_none) held="standby, replay paused (pg_wal_replay_pause)"; opt="none" ;;
		standby_cap) held="standby, replay paused (pg_wal_replay_pause)"; opt="max_replica_lag_ms $MAX_LAG_MS" ;;
		slot_none) held="logical slot (pgoutput) nobody reads"; opt="none" ;;
		slot_cap) held="logical slot (pgoutput) nobody reads"; opt="max_slot_lag_bytes $MAX_SLOT ($(mb "$MAX_SLOT"))" ;;
	esac
	printf '| %-44s | %-32s | %18s | %18s | %9.0f |\n' "$held" "$opt" "$(mb "$(lcol $w 2)")" "$(mb "$(lcol $w 3)")" "$(lcol $w 4)"
done
rate=$(awk '$1 == "standby_none" { print $5 / $4 }' "$lag_out" | median)
printf '\nthe run writes %s of WAL a second unthrottled; a standby replies every second, so the run sees a paused standby up to a second late.\n' "$(mb "$(awk -v r="$rate" 'BEGIN { print r * 1000 }')")"

fi

# --- 2. readers' latency beside each way -----------------------------------------------------
[ "${BENCH_THROTTLE_ONLY:-}" = lag ] && exit 0
newest=$(psql -X -At -c "SELECT (date '2026-01-01' + $PARTS + 2)::text")
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_thr, bench_thr_src;
DROP PROCEDURE IF EXISTS bench_thr_loop;
CREATE EXTENSION IF NOT EXISTS backfill;
$(daily_tables bench_thr $((PARTS + 3)) "$ROWS" "autovacuum_enabled = false")
DELETE FROM bench_thr_src WHERE order_date >= '$newest'::date - 2;
CREATE SEQUENCE IF NOT EXISTS bench_thr_seq START 100000000;
$(loop_procedure bench_thr_loop bench_thr "$PARTS")
SQL
thr_to=$(psql -X -At -c "SELECT (date '2026-01-01' + $PARTS)::text")
cat >"$work/reader.sql" <<SQL
\\set lo random(1, $(( (PARTS + 3) * ROWS - 500 )))
SELECT count(*), sum(revenue) FROM bench_thr WHERE order_date >= date '$newest' - 2 AND order_id BETWEEN :lo AND :lo + 500;
SQL
cat >"$work/writer.sql" <<SQL
INSERT INTO bench_thr VALUES (nextval('bench_thr_seq'), date '$newest', random() * 100);
SQL
chmod 644 "$work"/*.sql

# load_until PID PREFIX: the readers and writers at RATE while PID runs
load_until() { fixed_rate_load "$1" "$2" "$RATE" -f "$work/reader.sql@9" -f "$work/writer.sql@1"; }

# thr_way WAY: one backfill of the PARTS older days beside the load; prints "p50 p99 n ms"
thr_way() {
	local way=$1 run='' pid start end prefix="$work/log.$1.$RANDOM"
	case $way in
		run|budget)
			local opt='"refresh_dependents": false, "unwatched": "newer"'
			[ "$way" = budget ] && opt="$opt, $BUDGET"
			run=$(psql -X -At -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
				-c "SELECT backfill_plan('bench_thr', '2026-01-01', '$thr_to', 'SELECT * FROM bench_thr_src WHERE order_date >= \$1 AND order_date < \$2', options => '{$opt}')" | tail -n 1) ;;
	esac
	psql -X -q -c "VACUUM bench_thr" -c CHECKPOINT
	start=$(now_ms)
	case $way in
		alone) sleep "$ALONE_S" & ;;
		run|budget) psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "SET max_parallel_workers_per_gather = 0" \
			-c "CALL backfill_run($run)" & ;;
		loop) psql -X -q -v ON_ERROR_STOP=1 -c "SET max_parallel_workers_per_gather = 0" -c "CALL bench_thr_loop()" & ;;
	esac
	pid=$!
	load_until "$pid" "$prefix" &
	local load=$!
	wait "$pid"
	end=$(now_ms)
	wait "$load"
	if [ -n "$run" ]; then
		[ "$(psql -X -At -c "SELECT count(*) FROM backfill_tasks WHERE run_id = $run AND status <> 'done'")" = 0 ] ||
			{ echo "bench_throttle: run $run has tasks not done" >&2; exit 1; }
	fi
	echo "$(latency "$start" "$end" "$prefix") $((end - start))"
	rm -f "$prefix".*
}

ALONE_S=5
thr_out="$work/thr"
for _ in $(seq 1 "$RUNS"); do
	r=$(thr_way loop); echo "loop $r"
	ALONE_S=$(awk '$1 == "loop" { print $5 / 1000 }' "$thr_out" | median)
	r=$(thr_way alone); echo "alone $r"
	r=$(thr_way run); echo "run $r"
	r=$(thr_way budget); echo "budget $r"
done >"$thr_out"

tcol() { awk -v w="$1" -v c="$2" '$1 == w { print $c }' "$thr_out" | median; }
a99=$(tcol alone 3)
printf '\nReaders (%d a second, 9 in 10 read the 3 newest days, 1 in 10 write the newest) beside a rewrite of %d days x %d rows, median of %d runs\n\n' \
	"$RATE" "$PARTS" "$ROWS" "$RUNS"
printf '| %-56s | %8s | %8s | %12s | %10s |\n' "beside" "p50 ms" "p99 ms" "p99 vs alone" "backfill ms"
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' $(seq 58))" "----------" "----------" "--------------" "------------"
for w in alone run budget loop; do
	case $w in
		alone) title="nothing (alone)" ;;
		run) title="CALL backfill_run, no throttle" ;;
		budget) title="CALL backfill_run, $(echo "$BUDGET" | tr -d '"')" ;;
		loop) title="DELETE + INSERT + COMMIT per day (plain SQL)" ;;
	esac
	ms=$(tcol $w 5)
	[ "$w" = alone ] && ms=''
	printf '| %-56s | %8.2f | %8.2f | %11.2fx | %10s |\n' "$title" "$(tcol $w 2)" "$(tcol $w 3)" \
		"$(awk -v p="$(tcol $w 3)" -v a="$a99" 'BEGIN { print (a > 0 ? p / a : 0) }')" "${ms:+$(printf '%.0f' "$ms")}"
done
echo
for w in alone run budget loop; do
	printf 'p99 of every run, %s: %s ms\n' "$w" "$(awk -v w="$w" '$1 == w { printf "%s%s", sep, $3; sep = ", " }' "$thr_out")"
done
echo
echo "latency from each reader's scheduled start (pgbench -R), over the time the backfill ran; \"alone\" over as long as the plain loop took."
echo "goal: with a budget, p99 at most 2x alone, and the run still faster than the plain loop."
