#!/usr/bin/env bash
# scripts/bench_shapes.sh: the four comparisons of issue 17 side by side on several table shapes
# (bench/shapes.txt), on the cluster scripts/with_cluster.sh started (make bench runs it; run it
# alone the same way).
#
# For each shape, ROWS rows (BENCH_SHAPE_ROWS) in one partition, and per comparison both sides
# alternating RUNS times in one session after an untimed warm-up, parallel query off on both:
#   fingerprint vs count(*);  diff (20 differences) vs EXCEPT ALL both ways;
#   replace vs DELETE + INSERT in one transaction, vs staging + DETACH/ATTACH by hand, and vs
#   CREATE TABLE AS of the same query plus the same index builds (the physical limit of a fill
#   into a new table: time and WAL);  merge (1% changed) vs MERGE by hand.
# The tables show medians; ratio = backfill / plain SQL.  BENCH_SHAPE_CASES="2 6" runs only
# those comparisons (numbers as in the tables), BENCH_SHAPES="1 3" only those shapes.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
ROWS=${BENCH_SHAPE_ROWS:-300000}
CASES=${BENCH_SHAPE_CASES:-1 2 3 4 5 6}
WANT=${BENCH_SHAPES:-}

q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
. scripts/bench_lib.sh
trim() { sed 's/^ *//; s/ *$//' <<<"$1"; }

q -c 'CREATE EXTENSION IF NOT EXISTS backfill' >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# setup K COLS GEN PCOL LO HI PK KEY CHANGE: the tables of shape K, prefix shpK_
setup() {
	local t=shp$1 cols=$2 gen=$3 pcol=$4 lo=$5 hi=$6 pk=$7 key=$8 change=$9
	local pkc=${pk:+, PRIMARY KEY ($pk)}
	q <<SQL >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS ${t}_src, ${t}_new, ${t}_a, ${t}_b, ${t}_c, ${t}_ma, ${t}_mb, ${t}_ctas, ${t}_b_new;
CREATE TABLE ${t}_src ($cols);
INSERT INTO ${t}_src SELECT $gen FROM generate_series(1, $ROWS) g;
-- its recomputed version: 10 rows changed, 5 removed, 5 added
CREATE TABLE ${t}_new AS SELECT * FROM ${t}_src;
UPDATE ${t}_new SET $change WHERE $key % $((ROWS / 10)) = 0;
DELETE FROM ${t}_new WHERE $key IN (11, 22, 33, 44, 55);
INSERT INTO ${t}_new SELECT $gen FROM generate_series($ROWS + 1, $ROWS + 5) g;
-- one partitioned table for each way of replacing the partition
SELECT format('CREATE TABLE %I ($cols$pkc) PARTITION BY RANGE ($pcol)', p),
	   format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)', p || '_p', p, \$\$$lo\$\$, \$\$$hi\$\$),
	   format('INSERT INTO %I SELECT * FROM ${t}_src', p)
FROM unnest(ARRAY['${t}_a', '${t}_b', '${t}_c']) p \gexec
-- two merge targets with the key as primary key
CREATE TABLE ${t}_ma ($cols, PRIMARY KEY ($key));
INSERT INTO ${t}_ma SELECT * FROM ${t}_src;
CREATE TABLE ${t}_mb (LIKE ${t}_ma INCLUDING ALL);
INSERT INTO ${t}_mb SELECT * FROM ${t}_src;
VACUUM ANALYZE ${t}_src, ${t}_new, ${t}_a, ${t}_b, ${t}_c, ${t}_ma, ${t}_mb;
CHECKPOINT;
SQL
}

# cases K ...: the comparisons of shape K, "title|ours|theirs" a line, numbered as in the tables
cases() {
	local t=shp$1 pcol=$4 lo=$5 hi=$6 pk=$7 key=$8 change=$9
	local where="$pcol >= $lo AND $pcol < $hi"
	local replace="SELECT rows_after FROM backfill_replace_partition('${t}_a_p', 'SELECT * FROM ${t}_src WHERE $pcol >= \$1 AND $pcol < \$2')"
	local others all assign distinct
	others=$(psql -X -At -c "SELECT string_agg(quote_ident(attname), ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = '${t}_src'::regclass AND attnum > 0 AND NOT attisdropped AND attname <> '$key'")
	all=$(psql -X -At -c "SELECT string_agg('s.' || quote_ident(attname), ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = '${t}_src'::regclass AND attnum > 0 AND NOT attisdropped")
	assign=$(sed -E 's/([^,]+)/\1 = s.\1/g' <<<"$others")
	distinct="($(sed -E 's/([^,]+)/t.\1/g' <<<"$others")) IS DISTINCT FROM ($(sed -E 's/([^,]+)/s.\1/g' <<<"$others"))"
	echo "fingerprint vs count(*)|SELECT * FROM backfill_fingerprint('${t}_src')|SELECT count(*) FROM ${t}_src"
	echo "diff (20 differences) vs EXCEPT ALL both ways|SELECT count(*) FROM backfill_diff('TABLE ${t}_src', 'TABLE ${t}_new', '{$key}')|SELECT count(*) FROM ((TABLE ${t}_src EXCEPT ALL TABLE ${t}_new) UNION ALL (TABLE ${t}_new EXCEPT ALL TABLE ${t}_src)) d"
	echo "replace vs DELETE + INSERT in one transaction|$replace|DO \$\$ BEGIN DELETE FROM ${t}_c WHERE $where; INSERT INTO ${t}_c SELECT * FROM ${t}_src WHERE $where; END \$\$"
	echo "replace vs staging + DETACH/ATTACH by hand|$replace|DO \$\$ BEGIN CREATE TABLE ${t}_b_new (LIKE ${t}_b_p INCLUDING ALL); INSERT INTO ${t}_b_new SELECT * FROM ${t}_src WHERE $where; ALTER TABLE ${t}_b DETACH PARTITION ${t}_b_p; ALTER TABLE ${t}_b ATTACH PARTITION ${t}_b_new FOR VALUES FROM ($lo) TO ($hi); DROP TABLE ${t}_b_p; ALTER TABLE ${t}_b_new RENAME TO ${t}_b_p; END \$\$"
	echo "replace vs CREATE TABLE AS + the same index builds|$replace|DO \$\$ BEGIN DROP TABLE IF EXISTS ${t}_ctas; CREATE TABLE ${t}_ctas AS SELECT * FROM ${t}_src WHERE $where;${pk:+ CREATE UNIQUE INDEX ON ${t}_ctas ($pk);} END \$\$"
	echo "merge (1% changed) vs MERGE by hand|DO \$\$ BEGIN UPDATE ${t}_ma SET $change WHERE $key % 100 = 0; PERFORM backfill_merge('${t}_ma', 'TABLE ${t}_src', '{$key}'); END \$\$|DO \$\$ BEGIN UPDATE ${t}_mb SET $change WHERE $key % 100 = 0; MERGE INTO ${t}_mb t USING ${t}_src s ON t.$key = s.$key WHEN MATCHED AND $distinct THEN UPDATE SET $assign WHEN NOT MATCHED THEN INSERT VALUES ($all); END \$\$"
}

# time K: run the chosen comparisons of shape K; prints "case side ms wal_bytes" lines
time_shape() {
	local k=$1 n=0
	{
		echo "SET client_min_messages = warning;"
		echo "SET max_parallel_workers_per_gather = 0;"
		echo "SET jit = off;"
		while IFS='|' read -r _ ours theirs; do
			n=$((n + 1))
			case " $CASES " in *" $n "*) ;; *) continue ;; esac
			echo "$ours;"; echo "$theirs;"	# warm-up, untimed
			for _ in $(seq 1 "$RUNS"); do
				for side in ours theirs; do
					if [ $side = ours ]; then stmt=$ours; else stmt=$theirs; fi
					echo "SELECT pg_current_wal_insert_lsn() AS w0 \\gset"
					echo '\timing on'
					echo "\\echo @@ $n $side"
					echo "$stmt;"
					echo '\timing off'
					echo "SELECT 'wal', pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'w0')::bigint;"
					# where the replacement's time went, from its log record
					if [ $n = 5 ] && [ $side = ours ]; then
						echo "SELECT 'phase', details->>'fingerprint_ms', details->>'fill_ms', details->>'index_ms', details->>'analyze_ms' FROM backfill_log WHERE operation = 'replace' ORDER BY id DESC LIMIT 1;"
					fi
				done
			done
		done < "$work/cases$k"
	} > "$work/script$k"
	psql -X -q -At -F ' ' -v ON_ERROR_STOP=1 -f "$work/script$k" | awk '
		/^@@ / { c = $2; side = $3; next }
		/^Time: / && c != "" { ms = $2; next }
		/^wal / && c != "" { print c, side, ms, $2; c = "" }
		/^phase / { print "phase", $2, $3, $4, $5 }'
}

titles=()
declare -A cell wal fill rest
k=0
while IFS='|' read -r title cols gen pcol lo hi pk key change; do
	case "$title" in '#'*|'') continue ;; esac
	k=$((k + 1))
	if [ -n "$WANT" ]; then case " $WANT " in *" $k "*) ;; *) continue ;; esac; fi
	args=("$k" "$(trim "$cols")" "$(trim "$gen")" "$(trim "$pcol")" "$(trim "$lo")" "$(trim "$hi")" "$(trim "$pk")" "$(trim "$key")" "$(trim "$change")")
	titles+=("$k:$(trim "$title")")
	setup "${args[@]}"
	cases "${args[@]}" > "$work/cases$k"
	time_shape "$k" > "$work/times$k"
	for c in 1 2 3 4 5 6; do
		o=$(awk -v c=$c '$1 == c && $2 == "ours" { print $3 }' "$work/times$k" | median)
		t=$(awk -v c=$c '$1 == c && $2 == "theirs" { print $3 }' "$work/times$k" | median)
		wo=$(awk -v c=$c '$1 == c && $2 == "ours" { print $4 }' "$work/times$k" | median)
		wt=$(awk -v c=$c '$1 == c && $2 == "theirs" { print $4 }' "$work/times$k" | median)
		cell[$k,$c]=$(awk -v o="$o" -v t="$t" 'BEGIN { if (t > 0) printf "%.2fx (%.0f / %.0f ms)", o / t, o, t; else printf "-" }')
		if [ $c = 5 ]; then wal[$k]=$(awk -v o="$wo" -v t="$wt" 'BEGIN { if (t > 0) printf "%.2fx (%.1f / %.1f MB)", o / t, o / 1048576, t / 1048576; else printf "-" }'); fi
	done
	# the fill alone (rows written, then the index builds) against CREATE TABLE AS and its index builds
	fo=$(awk '$1 == "phase" { print $3 + $4 }' "$work/times$k" | median)
	t=$(awk '$1 == 5 && $2 == "theirs" { print $3 }' "$work/times$k" | median)
	fill[$k]=$(awk -v o="$fo" -v t="$t" 'BEGIN { if (t > 0 && o > 0) printf "%.2fx (%.0f / %.0f ms)", o / t, o, t; else printf "-" }')
	rest[$k]=$(awk '$1 == "phase" { print $2 }' "$work/times$k" | median)/$(awk '$1 == "phase" { print $5 }' "$work/times$k" | median)
	rest[$k]=$(awk -v r="${rest[$k]}" 'BEGIN { split(r, v, "/"); if (v[1] == "") printf "-"; else printf "%.0f ms / %.0f ms", v[1], v[2] }')
	q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS shp${k}_src, shp${k}_new, shp${k}_a, shp${k}_b, shp${k}_c, shp${k}_ma, shp${k}_mb, shp${k}_ctas, shp${k}_b_new" >/dev/null
done < bench/shapes.txt

printf '\nTable shapes, %d rows each: backfill vs plain SQL, median of %d runs, parallel query off on both sides, %s\n\n' \
	"$ROWS" "$RUNS" "$(psql -X -At -c 'SHOW server_version')"
printf '| %-52s' "comparison"
for s in "${titles[@]}"; do printf ' | %-30s' "${s#*:}"; done
printf ' |\n|%s' "$(printf -- '-%.0s' $(seq 54))"
for s in "${titles[@]}"; do printf '|%s' "$(printf -- '-%.0s' $(seq 32))"; done
printf '|\n'
n=0
while IFS='|' read -r title _; do
	n=$((n + 1))
	case " $CASES " in *" $n "*) ;; *) continue ;; esac
	printf '| %-52s' "$n. $title"
	for s in "${titles[@]}"; do printf ' | %-30s' "${cell[${s%%:*},$n]}"; done
	printf ' |\n'
	if [ $n = 5 ]; then
		printf '| %-52s' "   its fill (rows written + index builds) vs the same"
		for s in "${titles[@]}"; do printf ' | %-30s' "${fill[${s%%:*}]}"; done
		printf ' |\n| %-52s' "   its fingerprint before / its ANALYZE"
		for s in "${titles[@]}"; do printf ' | %-30s' "${rest[${s%%:*}]}"; done
		printf ' |\n| %-52s' "   WAL of that replace vs that CREATE TABLE AS"
		for s in "${titles[@]}"; do printf ' | %-30s' "${wal[${s%%:*}]}"; done
		printf ' |\n'
	fi
done < "$work/cases${titles[0]%%:*}"
echo
echo "ratio = backfill / plain SQL (backfill ms / plain SQL ms): below 1 is faster than the plain-SQL way."
