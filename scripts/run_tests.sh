#!/usr/bin/env bash
# scripts/run_tests.sh: every test suite, against the cluster scripts/with_cluster.sh started.
#
# The layering of src/ (scripts/check_layers.py), META.json and LICENSE (scripts/check_meta.py),
# the set-up scripts (scripts/check_setup.sh), the README's tour (demo/tour.sql) in the
# empty postgres database, pg_regress (sql/ -> expected/), isolation specs (specs/), Perl TAP
# tests (t/, their own clusters), the demo with its checks and its chart rendered in headless
# Chromium, then pgTAP suites (test/) through pg_prove.  Every suite runs even when an earlier one failed.  At the end: the output of each
# suite that failed, the tail of the server log, then one line per suite and the closing
# "PostgreSQL V: N passed, N failed" line ("PostgreSQL V with assertions: ..." on a server
# built with --enable-cassert).  The exit status is non-zero if any suite failed.
set -uo pipefail
cd "$(dirname "$0")/.."

PG_CONFIG=${PG_CONFIG:-pg_config}
PGXS_DIR=$(dirname "$("$PG_CONFIG" --pgxs)")/..
SERVER=$("$PG_CONFIG" --version | awk '{print $1, $2}')	# "PostgreSQL 15.20"
# a server built with --enable-cassert (make test PG=18 CASSERT=1) says so in the closing line
case "$("$PG_CONFIG" --configure)" in *--enable-cassert*) SERVER="$SERVER with assertions" ;; esac
OUT="$BACKFILL_TMP/suites"
mkdir -p "$OUT"
. scripts/suites.sh

echo "== layers (scripts/check_layers.py: src/ uses no layer above its own, in no cycle) =="
run_check layers scripts/check_layers.py
echo "== meta (scripts/check_meta.py: META.json and LICENSE agree with backfill.control) =="
run_check meta scripts/check_meta.py

echo "== setup (scripts/check_setup.sh: the set-up scripts on machines unlike this one) =="
scripts/check_setup.sh 2>&1 | tee "$OUT/setup"
rc=${PIPESTATUS[0]}
record setup "$(grep -c '^setup: held: ' "$OUT/setup")" "$(grep -c '^setup: FAIL' "$OUT/setup")" "$rc"

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

# The oldest release's source, from its commit (updates/README.md), for the update test
# (t/014_upgrade.pl), which builds it; outside a git checkout the test says it has none.
release=$(grep -m 1 -E '^\| [0-9.]+ \| [0-9a-f]{40} \|$' updates/README.md)
release_version=$(echo "$release" | awk '{ print $2 }')
release_commit=$(echo "$release" | awk '{ print $4 }')
if [ -n "$release_commit" ] && git cat-file -e "$release_commit^{commit}" 2>/dev/null; then
	rm -rf "$BACKFILL_TMP/tap/release"
	mkdir -p "$BACKFILL_TMP/tap/release"
	git archive "$release_commit" | tar -x -C "$BACKFILL_TMP/tap/release"
	export BACKFILL_RELEASE_SRC="$BACKFILL_TMP/tap/release" BACKFILL_RELEASE_VERSION="$release_version"
fi

tap=(t/*.pl)
if [ -e "${tap[0]}" ]; then
	echo "== TAP (PostgreSQL::Test::Cluster) =="
	run_tap t
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

summarize "$SERVER"
