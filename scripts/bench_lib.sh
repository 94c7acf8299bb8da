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
