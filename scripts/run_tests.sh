#!/usr/bin/env bash
# scripts/run_tests.sh: every test suite, against the cluster scripts/with_cluster.sh started.
#
# The README's tour (demo/tour.sql) in the empty postgres database, pg_regress (sql/ ->
# expected/), isolation specs (specs/), Perl TAP tests (t/, their own clusters), the demo with
# its checks and its chart rendered in headless Chromium, then pgTAP suites (test/) through
# pg_prove.  Every suite runs even when an earlier one failed.  At the end: the output of each
# suite that failed, the tail of the server log, then one line per suite and the closing
# "PostgreSQL V: N passed, N failed" line.  The exit status is non-zero if any suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."

PG_CONFIG=${PG_CONFIG:-pg_config}
PGXS_DIR=$(dirname "$("$PG_CONFIG" --pgxs)")/..
SERVER=$("$PG_CONFIG" --version | awk '{print $1, $2}')	# "PostgreSQL 15.20"
OUT="$BACKFILL_TMP/suites"
mkdir -p "$OUT"
suites=()
declare -A passed failed

# record SUITE PASSED FAILED [EXIT-STATUS]: a suite whose command failed counts one failure
# at least, even when no test of it could run.
record() {
	local bad=$3
	[ "${4:-0}" -ne 0 ] && [ "$bad" -eq 0 ] && bad=1
	suites+=("$1"); passed[$1]=$2; failed[$1]=$bad
}

# Counts of a pg_regress or isolation run from its "test name ... ok" lines (15) or its
# "ok N - name" lines (16 on).
count_regress() {
	local log=$1 suite=$2 rc=$3 ok bad
	ok=$(grep -Ec '\.\.\. +ok|^ok +[0-9]+ ' "$log")
	bad=$(grep -Ec '\.\.\. +FAILED|^not ok +[0-9]+ ' "$log")
	record "$suite" "$ok" "$bad" "$rc"
}

# Counts of a TAP::Harness run (prove, pg_prove) from its summary: Tests=N and the failed
# subtests; a test file that died counts as one failure more.
count_tap() {
	local log=$1 suite=$2 rc=$3 total bad died
	total=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' "$log" | tail -n 1)
	bad=$(sed -n 's/.*Failed \([0-9]*\)\/[0-9]* subtests.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
	died=$(grep -Ec 'Non-zero (exit|wait) status|Parse errors|Bad plan|No subtests run' "$log")
	record "$suite" "$(( ${total:-0} - bad ))" "$(( bad + died ))" "$rc"
}

echo "== tour (demo/tour.sql: the README's tour, in the empty postgres database) =="
scripts/check_tour.sh 2>&1 | tee "$OUT/tour"
rc=${PIPESTATUS[0]}
record tour "$(grep -c '^tour: held: ' "$OUT/tour")" "$(grep -c '^tour: FAIL' "$OUT/tour")" "$rc"

echo "== pg_regress =="
rm -rf results regression.diffs regression.out
make -s installcheck PG_CONFIG="$PG_CONFIG" 2>&1 | tee "$OUT/pg_regress"
rc=${PIPESTATUS[0]}
[ -f regression.diffs ] && cp regression.diffs "$OUT/pg_regress.diffs"
count_regress "$OUT/pg_regress" pg_regress "$rc"

specs=(specs/*.spec)
if [ -e "${specs[0]}" ]; then
	echo "== isolation =="
	names=()
	for s in "${specs[@]}"; do names+=("$(basename "$s" .spec)"); done
	rm -rf output_iso
	"$PGXS_DIR/test/isolation/pg_isolation_regress" --inputdir=. --outputdir=output_iso \
		--bindir="$("$PG_CONFIG" --bindir)" --dbname=isolation_regression \
		--load-extension=backfill "${names[@]}" 2>&1 | tee "$OUT/isolation"
	rc=${PIPESTATUS[0]}
	[ -f output_iso/regression.diffs ] && cp output_iso/regression.diffs "$OUT/isolation.diffs"
	count_regress "$OUT/isolation" isolation "$rc"
fi

tap=(t/*.pl)
if [ -e "${tap[0]}" ]; then
	echo "== TAP (PostgreSQL::Test::Cluster) =="
	# The tests start their own clusters: as root they run as postgres, from a copy of t/ in
	# a directory that user can write.
	tapdir="$BACKFILL_TMP/tap"
	mkdir -p "$tapdir"
	cp -r t "$tapdir/"
	[ "$(id -u)" -eq 0 ] && chown -R postgres: "$tapdir"
	(cd "$tapdir" && $BACKFILL_RUN_AS env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE \
		PATH="$("$PG_CONFIG" --bindir):$PATH" TESTDIR="$tapdir" \
		PG_REGRESS="$PGXS_DIR/test/regress/pg_regress" \
		prove -I "$PGXS_DIR/test/perl" t/*.pl) 2>&1 | tee "$OUT/tap"
	count_tap "$OUT/tap" tap "${PIPESTATUS[0]}"
	# The test library sends a test's own errors (a die, a timeout) to its log file, not to
	# prove: keep the end of each failed test's log with the suite's output.
	for f in $(sed -n 's/^\(t\/[^ ]*\.pl\) .*(Wstat: [1-9].*/\1/p; s/^\(t\/[^ ]*\.pl\) .*Failed: [1-9].*/\1/p' "$OUT/tap" | sort -u); do
		log=$(find "$tapdir" -name "regress_log_$(basename "$f" .pl)" 2>/dev/null | head -n 1)
		[ -n "$log" ] && { echo "--- the end of $f's log ---"; tail -n 40 "$log"; } >> "$OUT/tap"
	done
fi

echo "== demo (make demo's lab and its checks, then its chart in headless Chromium) =="
if scripts/run_demo.sh > "$OUT/demo" 2>&1; then
	echo "demo: $(grep -c '^ checked: ' "$OUT/demo") checks held"
	record demo "$(grep -c '^ checked: ' "$OUT/demo")" 0
	scripts/check_chart.py demo/revenue.html 2>&1 | tee "$OUT/chart"
	rc=${PIPESTATUS[0]}
	record chart "$(( rc == 0 ))" "$(grep -c '^FAIL: ' "$OUT/chart")" "$rc"
	# the check's own honesty: copies of the page with a fault planted must each be refused
	scripts/check_chart.py --self-test demo/revenue.html 2>&1 | tee "$OUT/chart-self-test"
	rc=${PIPESTATUS[0]}
	record chart-self-test "$(grep -Ec '^self-test: .*(: refused \(|: passes \()' "$OUT/chart-self-test")" \
		"$(grep -Ec '^self-test: .*(NOT refused|: FAILS \()' "$OUT/chart-self-test")" "$rc"
else
	tail -n 40 "$OUT/demo"
	record demo "$(grep -c '^ checked: ' "$OUT/demo")" 1
fi

echo "== pgTAP =="
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c 'DROP DATABASE IF EXISTS backfill_tap' -c 'CREATE DATABASE backfill_tap' >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d backfill_tap -c 'CREATE EXTENSION pgtap' -c 'CREATE EXTENSION backfill' >/dev/null
pg_prove -d backfill_tap test/*.sql 2>&1 | tee "$OUT/pgtap"
count_tap "$OUT/pgtap" pgtap "${PIPESTATUS[0]}"

# What failed, where it can be read: each failing suite's own output, then the server's log.
total_ok=0
total_bad=0
for s in "${suites[@]}"; do
	total_ok=$(( total_ok + passed[$s] ))
	total_bad=$(( total_bad + failed[$s] ))
done
if [ "$total_bad" -gt 0 ]; then
	for s in "${suites[@]}"; do
		[ "${failed[$s]}" -eq 0 ] && continue
		echo
		echo "--- $s failed: its output ---"
		if [ -f "$OUT/$s.diffs" ]; then head -n 200 "$OUT/$s.diffs"; fi
		grep -Ev '^(ok|test .*\.\.\. +ok|t/[^ ]* \.+ ok)' "$OUT/$s" | tail -n 60
	done
	echo
	echo "--- last lines of the server log ---"
	tail -n 30 "$BACKFILL_TMP/server.log"
	touch "$BACKFILL_TMP/server_log_shown"
fi

echo
echo "== summary ($SERVER) =="
for s in "${suites[@]}"; do
	printf '%-16s %d passed, %d failed\n' "$s:" "${passed[$s]}" "${failed[$s]}"
done
echo "$SERVER: $total_ok passed, $total_bad failed"
[ "$total_bad" -eq 0 ]
