#!/usr/bin/env bash
# scripts/run_tests.sh: every test suite, against the cluster scripts/with_cluster.sh started.
#
# pg_regress (sql/ -> expected/), isolation specs (specs/), Perl TAP tests (t/, their own
# clusters), the demo with its checks and its chart rendered in headless Chromium, then pgTAP
# suites (test/) through pg_prove, whose summary closes the output.
# Every suite runs even when an earlier one failed; the exit status is non-zero if any did.
set -uo pipefail
cd "$(dirname "$0")/.."

PG_CONFIG=${PG_CONFIG:-pg_config}
PGXS_DIR=$(dirname "$("$PG_CONFIG" --pgxs)")/..
failed=()

echo "== pg_regress =="
rm -rf results regression.diffs regression.out
if ! make -s installcheck PG_CONFIG="$PG_CONFIG"; then
	[ -f regression.diffs ] && head -n 200 regression.diffs
	failed+=(pg_regress)
fi

specs=(specs/*.spec)
if [ -e "${specs[0]}" ]; then
	echo "== isolation =="
	names=()
	for s in "${specs[@]}"; do names+=("$(basename "$s" .spec)"); done
	rm -rf output_iso
	if ! "$PGXS_DIR/test/isolation/pg_isolation_regress" --inputdir=. --outputdir=output_iso \
		--bindir="$("$PG_CONFIG" --bindir)" --dbname=isolation_regression \
		--load-extension=backfill "${names[@]}"; then
		[ -f output_iso/regression.diffs ] && head -n 200 output_iso/regression.diffs
		failed+=(isolation)
	fi
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
	if ! (cd "$tapdir" && $BACKFILL_RUN_AS env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE \
		PATH="$("$PG_CONFIG" --bindir):$PATH" TESTDIR="$tapdir" \
		PG_REGRESS="$PGXS_DIR/test/regress/pg_regress" \
		prove -I "$PGXS_DIR/test/perl" t/*.pl); then
		failed+=(tap)
	fi
fi

echo "== demo (make demo's lab and its checks, then its chart in headless Chromium) =="
if scripts/run_demo.sh > "$BACKFILL_TMP/demo.log" 2>&1; then
	echo "demo: $(grep -c '^ checked: ' "$BACKFILL_TMP/demo.log") checks held"
	if ! scripts/check_chart.py demo/revenue.html; then
		failed+=(chart)
	fi
	# the check's own honesty: copies of the page with a fault planted must each be refused
	if ! scripts/check_chart.py --self-test demo/revenue.html; then
		failed+=(chart-self-test)
	fi
else
	tail -n 40 "$BACKFILL_TMP/demo.log"
	failed+=(demo)
fi

echo "== pgTAP =="
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c 'DROP DATABASE IF EXISTS backfill_tap' -c 'CREATE DATABASE backfill_tap' >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d backfill_tap -c 'CREATE EXTENSION pgtap' -c 'CREATE EXTENSION backfill' >/dev/null
pg_prove -d backfill_tap test/*.sql
prove_rc=$?

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED suites: ${failed[*]}" >&2
	exit 1
fi
exit $prove_rc
