#!/usr/bin/env bash
# scripts/bench_standby.sh: a run whose source is computed on the primary, or on a standby
# (options.source_server), beside readers on the primary (make bench runs it, after
# scripts/with_cluster.sh; run it alone the same way).
#
# A primary of its own (in BACKFILL_TMP, on a Unix socket there) and a streaming standby made
# by pg_basebackup, each pinned to a core of its own when the machine has two (taskset), as two
# servers would be.  The source is deliberately heavy: each day's orders joined to every refund
# and aggregated per shop (DAYS days x ORDERS orders, REFUNDS refunds; a few hundred rows a
# day come out).  Readers of the newest day run on the primary at a fixed rate (RATE a second,
# pgbench -R, its client on either core) alone and beside each run.  For each way: the readers'
# p50 and p99 over the time the run ran, the CPU time the run's backend spent on the primary
# (utime + stime from /proc, read by the backend itself before and after its CALL; parallel
# query off), and the run's time.  Both runs must write the same rows (EXCEPT ALL both ways).
# Medians of RUNS_STANDBY runs (default 3), the ways alternating in each round.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${BENCH_STANDBY_RUNS:-3}
DAYS=${BENCH_STANDBY_DAYS:-12}
ORDERS=${BENCH_STANDBY_ORDERS:-150000}
REFUNDS=${BENCH_STANDBY_REFUNDS:-300000}
RATE=${BENCH_STANDBY_RATE:-200}
read -r -a RUN_AS <<<"${BACKFILL_RUN_AS:-}"

work=$(mktemp -d "$BACKFILL_TMP/standby.XXXXXX")
chmod 755 "$work"
[ "$(id -u)" -eq 0 ] && chown postgres: "$work"
PRIMARY="$work/primary"
STANDBY="$work/standby"
PIN_P=() PIN_S=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	PIN_P=(taskset -c 0) PIN_S=(taskset -c 1)
fi

. scripts/bench_lib.sh

cleanup() {
	rc=$?
	stop_node "$STANDBY"
	stop_node "$PRIMARY"
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT

primary_and_standby "$work" 5435 "shared_buffers = 256MB" "hot_standby_feedback = on" "${PIN_P[*]}" "${PIN_S[*]}"
P=(-X -h "$work" -p 5435)

psql "${P[@]}" -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION backfill;
CREATE EXTENSION postgres_fdw;
CREATE SERVER bench_standby FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$work', port '5436', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER bench_standby;
CREATE TABLE orders (order_id bigint PRIMARY KEY, day date NOT NULL, shop_id int NOT NULL, amount numeric(12,2) NOT NULL);
INSERT INTO orders SELECT g, date '2026-01-01' + (g % ($DAYS + 1))::int, (g::bigint * 7919) % 500, (g % 10000) / 100.0
FROM generate_series(1, ($DAYS + 1) * $ORDERS) g;
CREATE INDEX ON orders (day, shop_id);
CREATE TABLE refunds (order_id bigint NOT NULL, amount numeric(12,2) NOT NULL);
INSERT INTO refunds SELECT (g::bigint * 104729) % (($DAYS + 1) * $ORDERS) + 1, (g % 500) / 100.0 FROM generate_series(1, $REFUNDS) g;
$(for way in local standby; do
	echo "CREATE TABLE rev_$way (day date NOT NULL, shop_id int NOT NULL, revenue numeric, orders bigint) PARTITION BY RANGE (day);"
	echo "SELECT format('CREATE TABLE %I PARTITION OF rev_$way FOR VALUES FROM (%L) TO (%L)', 'rev_${way}_' || to_char(d, 'MMDD'), d::date, d::date + 1)"
	echo "FROM generate_series(date '2026-01-01', date '2026-01-01' + $DAYS - 1, interval '1 day') d \\gexec"
done)
VACUUM ANALYZE;
CHECKPOINT;
SQL
to=$(psql "${P[@]}" -At -c "SELECT (date '2026-01-01' + $DAYS)::text")
newest=$to
SOURCE='SELECT o.day, o.shop_id, sum(o.amount) - coalesce(sum(r.amount), 0) AS revenue, count(*) AS orders FROM orders o LEFT JOIN refunds r USING (order_id) WHERE o.day >= $1 AND o.day < $2 GROUP BY 1, 2'

cat >"$work/reader.sql" <<SQL
\\set s random(0, 499)
SELECT count(*), sum(amount) FROM orders WHERE day = date '$newest' AND shop_id = :s;
SQL
chmod 644 "$work/reader.sql"

# the standby has replayed everything the primary wrote
caught_up() {
	local lsn
	lsn=$(psql "${P[@]}" -At -c 'SELECT pg_current_wal_lsn()')
	for _ in $(seq 1 300); do
		[ "$(psql -X -h "$work" -p 5436 -At -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && return 0
		sleep 0.1
	done
	echo "bench_standby: the standby did not catch up" >&2
	exit 1
}

# cpu_ticks STAT-LINE: utime + stime of a /proc/PID/stat line
cpu_ticks() { echo "$1" | sed 's/^.*) //' | awk '{ print $12 + $13 }'; }

# way WAY: one run (WAY = local or standby; alone: readers only, as long as the last run) beside
# the readers; prints "p50 p99 n ms cpu_ms"
TICK_MS=$(( 1000 / $(getconf CLK_TCK) ))
ALONE_MS=3000
way() {
	local w=$1 run='' pid start end prefix="$work/log.$1.$RANDOM" out="$work/out.$RANDOM"
	if [ "$w" = local ] || [ "$w" = standby ]; then
		local opt='"refresh_dependents": false'
		[ "$w" = standby ] && opt="$opt, \"source_server\": \"bench_standby\""
		run=$(psql "${P[@]}" -At -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
			-c "SELECT backfill_plan('rev_$w', '2026-01-01', '$to', \$q\$$SOURCE\$q\$, options => '{$opt}')" | tail -n 1)
	fi
	psql "${P[@]}" -q -c CHECKPOINT
	caught_up
	start=$(now_ms)
	if [ "$w" = alone ]; then
		sleep "$(awk -v m="$ALONE_MS" 'BEGIN { print m / 1000 }')" &
	elif [ "$w" = busy ]; then
		# no run: the same compute on the standby, as a query of its own
		psql -X -q -h "$work" -p 5436 -c "SET max_parallel_workers_per_gather = 0" \
			-c "$(echo "$SOURCE" | sed "s/\\\$1/'2026-01-01'/; s/\\\$2/'$to'/")" >/dev/null &
	else
		psql "${P[@]}" -qAt -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "SET max_parallel_workers_per_gather = 0" \
			-c "SELECT pg_read_file('/proc/' || pg_backend_pid() || '/stat')" -c "CALL backfill_run($run)" \
			-c "SELECT pg_read_file('/proc/' || pg_backend_pid() || '/stat')" >"$out" &
	fi
	pid=$!
	bash -c ". scripts/bench_lib.sh; fixed_rate_load $pid '$prefix' $RATE -h '$work' -p 5435 -f '$work/reader.sql'" &
	local load=$!
	wait "$pid"
	end=$(now_ms)
	wait "$load"
	local cpu=0
	if [ -n "$run" ]; then
		[ "$(psql "${P[@]}" -At -c "SELECT count(*) FROM backfill_tasks WHERE run_id = $run AND status <> 'done'")" = 0 ] ||
			{ echo "bench_standby: run $run has tasks not done" >&2; exit 1; }
		cpu=$(( ($(cpu_ticks "$(grep . "$out" | sed -n 2p)") - $(cpu_ticks "$(grep . "$out" | sed -n 1p)")) * TICK_MS ))
		ALONE_MS=$((end - start))
	fi
	echo "$(latency "$start" "$end" "$prefix") $((end - start)) $cpu"
	rm -f "$prefix".* "$out"
}

res="$work/res"
for _ in $(seq 1 "$RUNS"); do
	r=$(way local); echo "local $r"
	r=$(way alone); echo "alone $r"
	r=$(way standby); echo "standby $r"
	r=$(way busy); echo "busy $r"
done >"$res"
same=$(psql "${P[@]}" -At -c "SELECT (SELECT count(*) FROM (TABLE rev_local EXCEPT ALL TABLE rev_standby) a) + (SELECT count(*) FROM (TABLE rev_standby EXCEPT ALL TABLE rev_local) b)")
rows=$(psql "${P[@]}" -At -c "SELECT count(*) FROM rev_standby")
[ "$same" = 0 ] || { echo "bench_standby: the two runs wrote different rows ($same)" >&2; exit 1; }

col() { awk -v w="$1" -v c="$2" '$1 == w { print $c }' "$res" | median; }
a99=$(col alone 3)
lcpu=$(col local 6)
printf '\nA run of %d days (%d orders a day joined to %d refunds, aggregated per shop: %d rows written) beside readers on the primary (%d a second), median of %d runs%s\n\n' \
	"$DAYS" "$ORDERS" "$REFUNDS" "$rows" "$RATE" "$RUNS" "${PIN_P:+; primary and standby each on a core of its own}"
printf '| %-44s | %8s | %8s | %12s | %8s | %16s | %10s |\n' "source computed" "p50 ms" "p99 ms" "p99 vs alone" "run ms" "primary CPU ms" "CPU vs local"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' $(seq 46))" "----------" "----------" "--------------" "----------" "------------------" "------------"
for w in alone busy local standby; do
	case $w in
		alone) title="(no run: readers alone)" ;;
		busy) title="(no run: the same compute on the standby)" ;;
		local) title="on the primary (no source_server)" ;;
		standby) title="on the standby (source_server)" ;;
	esac
	if [ "$w" = alone ] || [ "$w" = busy ]; then
		printf '| %-44s | %8.2f | %8.2f | %11.2fx | %8s | %16s | %10s |\n' "$title" "$(col $w 2)" "$(col $w 3)" \
			"$(awk -v p="$(col $w 3)" -v a="$a99" 'BEGIN { print (a > 0 ? p / a : 0) }')" "" "" ""
	else
		printf '| %-44s | %8.2f | %8.2f | %11.2fx | %8.0f | %16.0f | %9.2fx |\n' "$title" "$(col $w 2)" "$(col $w 3)" \
			"$(awk -v p="$(col $w 3)" -v a="$a99" 'BEGIN { print (a > 0 ? p / a : 0) }')" "$(col $w 5)" "$(col $w 6)" \
			"$(awk -v c="$(col $w 6)" -v l="$lcpu" 'BEGIN { print (l > 0 ? c / l : 0) }')"
	fi
done
echo
for w in alone busy local standby; do
	printf 'p99 of every run, %s: %s ms\n' "$w" "$(awk -v w="$w" '$1 == w { printf "%s%s", sep, $3; sep = ", " }' "$res")"
done
echo
echo "primary CPU = utime + stime of the run's backend during its CALL (the standby's own work is not counted); both runs wrote the same rows."
echo "goals: with source_server, primary CPU at most 0.20x local; readers' p99 beside it at most 1.3x alone."
