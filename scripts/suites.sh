# scripts/suites.sh: counting and summing up test suites, sourced by scripts/run_tests.sh and
# scripts/run_citus_tests.sh.  Needs OUT (where each suite's output is kept) and
# BACKFILL_TMP (the server log is BACKFILL_TMP/server.log).
suites=()
declare -A passed failed

# record SUITE PASSED FAILED [EXIT-STATUS]: a suite whose command failed counts one failure
# at least, even when no test of it could run.
record() {
	local bad=$3
	[ "${4:-0}" -ne 0 ] && [ "$bad" -eq 0 ] && bad=1
	suites+=("$1"); passed[$1]=$2; failed[$1]=$bad
}

# run_check NAME SCRIPT: a checking script, as the suite NAME (its "NAME: held: " line passes,
# each other "NAME: " line is a problem), then its --self-test, as NAME-self-test (each planted
# fault "refused" passes, each "NOT refused" fails; the tree itself "passes" or "FAILS").
run_check() {
	local name=$1 script=$2 rc
	"$script" 2>&1 | tee "$OUT/$name"
	rc=${PIPESTATUS[0]}
	record "$name" "$(grep -c "^$name: held: " "$OUT/$name")" \
		"$(grep -Ev "^$name: (held|FAIL): " "$OUT/$name" | grep -c "^$name: ")" "$rc"
	"$script" --self-test 2>&1 | tee "$OUT/$name-self-test"
	rc=${PIPESTATUS[0]}
	record "$name-self-test" "$(grep -Ec '^self-test: .*(: refused \(|: passes$)' "$OUT/$name-self-test")" \
		"$(grep -Ec '^self-test: .*(NOT refused|: FAILS)' "$OUT/$name-self-test")" "$rc"
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
# subtests; a test file that died counts as one failure more, once however many lines of the
# summary report say so (its exit status, a bad plan, no subtests), and not at all when its
# failed subtests are counted already.
count_tap() {
	local log=$1 suite=$2 rc=$3 total bad died
	total=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' "$log" | tail -n 1)
	bad=$(sed -n 's/.*Failed \([0-9]*\)\/[0-9]* subtests.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
	died=$(awk '/^Test Summary Report/ { on = 1; next }
		on && /^[^ \t]/ { if (f != "" && dead && !failed) n++; f = $1; dead = 0; failed = 0;
			if ($0 ~ /Failed: [1-9]/) failed = 1 }
		on && /Non-zero (exit|wait) status|Parse errors|Bad plan|No subtests run/ { dead = 1 }
		on && /^Files=/ { on = 0 }
		END { if (f != "" && dead && !failed) n++; print n + 0 }' "$log")
	record "$suite" "$(( ${total:-0} - bad ))" "$(( bad + died ))" "$rc"
}

# run_tap DIR: the Perl TAP tests DIR/*.pl as the suite "tap".  The tests start their own
# clusters: as root they run as postgres, from a copy of DIR (as t/) in a directory that user
# can write.  Needs PG_CONFIG, PGXS_DIR and BACKFILL_RUN_AS.
run_tap() {
	local tapdir="$BACKFILL_TMP/tap" f log
	mkdir -p "$tapdir"
	rm -rf "$tapdir/t"
	cp -r "$1" "$tapdir/t"
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
}

# summarize NAME: each failing suite's output, the server's log if any failed, one line per
# suite and the closing "NAME: N passed, N failed" line; returns non-zero if any failed.
summarize() {
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
	echo "== summary ($1) =="
	for s in "${suites[@]}"; do
		printf '%-18s %d passed, %d failed\n' "$s:" "${passed[$s]}" "${failed[$s]}"
	done
	echo "$1: $total_ok passed, $total_bad failed"
	[ "$total_bad" -eq 0 ]
}
