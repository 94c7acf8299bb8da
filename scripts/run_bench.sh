#!/usr/bin/env bash
# scripts/run_bench.sh: backfill's functions side by side with the plain-SQL way, on the
# cluster scripts/with_cluster.sh started.
#
# Each comparison (bench/cases.txt) runs RUNS times, both sides alternating in one session
# with the same settings (parallel query off on both), after a warm-up; the table shows the
# median times and their ratio.  Timings are wall-clock on a shared machine: read the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-7}

psql -X -q -v ON_ERROR_STOP=1 -f bench/setup.sql >/dev/null

script=$(mktemp)
trap 'rm -f "$script"' EXIT
{
	echo "SET max_parallel_workers_per_gather = 0;"
	echo "SET jit = off;"
	n=0
	while IFS='|' read -r title ours theirs lacks; do
		case "$title" in '#'*|'') continue ;; esac
		n=$((n + 1))
		# warm-up, untimed
		echo "$ours;" ; echo "$theirs;"
		echo '\timing on'
		for r in $(seq 1 "$RUNS"); do
			echo "\\echo @@ $n ours"; echo "$ours;"
			echo "\\echo @@ $n theirs"; echo "$theirs;"
		done
		echo '\timing off'
	done < bench/cases.txt
} > "$script"

psql -X -q -v ON_ERROR_STOP=1 -f "$script" | awk '
	/^@@ / { c = $2; side = $3; next }
	/^Time: / && c != "" { print c, side, $2; c = "" }
' > "$script.times"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '\nbackfill vs plain SQL: median of %d runs each, parallel query off on both sides, %s\n\n' "$RUNS" "$(psql -X -At -c 'SHOW server_version')"
printf '| %-58s | %12s | %12s | %7s | %s\n' "comparison" "backfill ms" "plain SQL ms" "ratio" "what the plain SQL lacks"
printf '|%s|%s|%s|%s|%s\n' "$(printf -- '-%.0s' $(seq 60))" "$(printf -- '-%.0s' $(seq 14))" "$(printf -- '-%.0s' $(seq 14))" "$(printf -- '-%.0s' $(seq 9))" "----"
n=0
while IFS='|' read -r title ours theirs lacks; do
	case "$title" in '#'*|'') continue ;; esac
	n=$((n + 1))
	o=$(awk -v c="$n" '$1 == c && $2 == "ours" { print $3 }' "$script.times" | median)
	t=$(awk -v c="$n" '$1 == c && $2 == "theirs" { print $3 }' "$script.times" | median)
	printf '| %-58s | %12.1f | %12.1f | %6.2fx | %s\n' "$(echo "$title" | sed 's/ *$//')" "$o" "$t" \
		"$(awk -v o="$o" -v t="$t" 'BEGIN { print o / t }')" "$(echo "$lacks" | sed 's/^ *//')"
done < bench/cases.txt
rm -f "$script.times"
echo
echo "ratio = backfill / plain SQL: below 1 is faster than the plain-SQL way."
