# scripts/bench_lib.sh: what the bench scripts share; sourced, not run.

# the median of the numbers on stdin, one per line (0 for none)
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# milliseconds since the epoch
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# daily_tables NAME PARTS ROWS [STORAGE]: the SQL that makes NAME, PARTS daily partitions
# (from 2026-01-01) of ROWS rows each with a primary key, their storage parameters STORAGE
# (e.g. "autovacuum_enabled = false"), and NAME_src, the same rows with one in ten corrected
# (revenue + 1).
daily_tables() {
	local t=$1 parts=$2 rows=$3 with=${4:+ WITH ($4)}
	cat <<SQL
CREATE TABLE ${t}_src AS
SELECT g::bigint AS order_id, date '2026-01-01' + (g % $parts)::int AS order_date, (g % 10000) / 100.0 AS revenue
FROM generate_series(1, $parts * $rows) g;
CREATE TABLE $t (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
SELECT format('CREATE TABLE %I PARTITION OF $t FOR VALUES FROM (%L) TO (%L)$with',
			  '${t}_' || to_char(d, 'YYYYMMDD'), d::date, d::date + 1)
FROM generate_series(date '2026-01-01', date '2026-01-01' + $parts - 1, interval '1 day') d \\gexec
INSERT INTO $t SELECT * FROM ${t}_src;
UPDATE ${t}_src SET revenue = revenue + 1 WHERE order_id % 10 = 0;
CREATE INDEX ON ${t}_src (order_date);
VACUUM ANALYZE ${t}_src, $t;
SQL
}

# loop_procedure NAME TABLE PARTS: the SQL of the plain-SQL way, procedure NAME rewriting the
# PARTS days from 2026-01-01 of TABLE from TABLE_src, one DELETE + INSERT + COMMIT a day.
loop_procedure() {
	local name=$1 t=$2 parts=$3
	cat <<SQL
CREATE PROCEDURE $name() LANGUAGE plpgsql AS \$\$
DECLARE d date;
BEGIN
	FOR d IN SELECT g::date FROM generate_series(date '2026-01-01', date '2026-01-01' + $parts - 1, interval '1 day') g LOOP
		DELETE FROM $t WHERE order_date >= d AND order_date < d + 1;
		INSERT INTO $t SELECT * FROM ${t}_src WHERE order_date >= d AND order_date < d + 1;
		COMMIT;
	END LOOP;
END \$\$;
SQL
}

# fixed_rate_load PID PREFIX RATE PGBENCH-ARGS...: pgbench at RATE transactions a second (two
# clients), in 2-second stretches while PID runs (at least one), each stretch's per-transaction
# log under PREFIX.N
fixed_rate_load() {
	local pid=$1 prefix=$2 rate=$3 i=0
	shift 3
	while :; do
		i=$((i + 1))
		pgbench -n -c 2 -j 1 -R "$rate" -T 2 -l --log-prefix="$prefix.$i" "$@" >/dev/null 2>&1
		kill -0 "$pid" 2>/dev/null || break
	done
}

# latency FROM_MS TO_MS PREFIX: "p50 p99 count" (ms) of the first script's transactions in the
# logs under PREFIX done in [FROM, TO], from each one's scheduled start (pgbench -R)
latency() {
	cat "$3".* 2>/dev/null | awk -v f="$1" -v t="$2" '
		$4 == 0 { done = $5 * 1000 + $6 / 1000; if (done >= f && done <= t) print $3 / 1000 }' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR == 0) { print 0, 0, 0; exit }
			p50 = v[int((NR - 1) * 0.50) + 1]; p99 = v[int((NR - 1) * 0.99) + 1]; print p50, p99, NR }'
}

# stop_node DATADIR: stop a server this bench started (fast, else immediate), as RUN_AS
stop_node() {
	[ -f "$1/postmaster.pid" ] || return 0
	"${RUN_AS[@]}" pg_ctl -D "$1" -m fast -w -t 30 stop >/dev/null 2>&1 ||
		"${RUN_AS[@]}" pg_ctl -D "$1" -m immediate -w stop >/dev/null 2>&1 || true
}

# primary_and_standby DIR PORT PRIMARY-CONF STANDBY-CONF [PIN-PRIMARY [PIN-STANDBY]]: a
# primary in DIR/primary on port PORT (socket in DIR, trust, fsync off) with the settings
# PRIMARY-CONF, and a streaming standby of it made by pg_basebackup in DIR/standby on PORT + 1
# with STANDBY-CONF; each started under its PIN command if given (taskset -c N)
primary_and_standby() {
	local dir=$1 port=$2 pconf=$3 sconf=$4
	local -a pinp pins
	read -r -a pinp <<<"${5:-}"
	read -r -a pins <<<"${6:-}"
	"${RUN_AS[@]}" initdb -D "$dir/primary" -U "$PGUSER" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
	cat >>"$dir/primary/postgresql.conf" <<CONF
listen_addresses = ''
port = $port
unix_socket_directories = '$dir'
max_wal_senders = 4
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
$pconf
CONF
	"${RUN_AS[@]}" "${pinp[@]}" pg_ctl -D "$dir/primary" -l "$dir/primary.log" -w -t 60 start >/dev/null
	"${RUN_AS[@]}" pg_basebackup -h "$dir" -p "$port" -U "$PGUSER" -D "$dir/standby" -R -X stream
	cat >>"$dir/standby/postgresql.conf" <<CONF
port = $((port + 1))
hot_standby = on
$sconf
CONF
	"${RUN_AS[@]}" "${pins[@]}" pg_ctl -D "$dir/standby" -l "$dir/standby.log" -w -t 60 start >/dev/null
}
