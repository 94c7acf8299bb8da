#!/usr/bin/env bash
# scripts/check_setup.sh: the set-up scripts say what they do on machines unlike this one.
#
# - scripts/pg_server.sh path N for a major version with no pinned archive exits non-zero
#   and prints no path (a made-up pg_config would send make to a server that is not there);
# - scripts/pg_server.sh path 18 cassert names a build of its own, never the plain 18's, and
#   an unknown variant is refused the same way;
# - scripts/deps.sh takes the server's packages from the major version of $PG_CONFIG (a
#   PostgreSQL 17 installed from Debian 13 gets postgresql-17-*, not Debian 12's 15);
# - scripts/suites.sh counts a TAP file that died as one failure, however many lines of
#   prove's summary report say so.
# Each prints "setup: held: ..." or "setup: FAIL: ..."; the exit status is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
held() { echo "setup: held: $*"; }
fail() { echo "setup: FAIL: $*"; status=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$(scripts/pg_server.sh path 99 2>/dev/null); rc=$?
if [ "$rc" -ne 0 ] && [ -z "$out" ]; then held "pg_server.sh path 99 (not pinned) fails and prints no path"
else fail "pg_server.sh path 99 exited $rc and printed '$out'"; fi

plain=$(BACKFILL_CACHE="$tmp/cache" scripts/pg_server.sh path 18 2>/dev/null)
cassert=$(BACKFILL_CACHE="$tmp/cache" scripts/pg_server.sh path 18 cassert 2>/dev/null)
if [ -n "$plain" ] && [ -n "$cassert" ] && [ "$(dirname "$(dirname "$plain")")" != "$(dirname "$(dirname "$cassert")")" ] &&
	[[ "$cassert" == "$tmp/cache/18."*-cassert-*/bin/pg_config ]]; then
	held "pg_server.sh path 18 cassert names a build directory of its own, beside the plain one"
else fail "pg_server.sh path 18 gives '$plain' and path 18 cassert '$cassert'"; fi
out=$(scripts/pg_server.sh path 18 nocassert 2>/dev/null); rc=$?
if [ "$rc" -ne 0 ] && [ -z "$out" ]; then held "pg_server.sh path 18 with an unknown variant fails and prints no path"
else fail "pg_server.sh path 18 nocassert exited $rc and printed '$out'"; fi

printf '#!/bin/sh\necho "PostgreSQL 17.12 (Debian 17.12-1)"\n' > "$tmp/pg_config"
chmod +x "$tmp/pg_config"
pkgs=$(PG_CONFIG="$tmp/pg_config" scripts/deps.sh --print | tr '\n' ' ')
if [[ " $pkgs " == *" postgresql-server-dev-17 "* && " $pkgs " != *"-15 "* ]]; then
	held "deps.sh for a PostgreSQL 17 pg_config checks postgresql-17's packages, not 15's"
else fail "deps.sh for a PostgreSQL 17 pg_config checks: $pkgs"; fi

cat > "$tmp/prove.out" <<'OUT'
t/001_a.pl .. ok
t/002_b.pl .. Dubious, test returned 255 (wstat 65280, 0xff00)
No subtests run

Test Summary Report
-------------------
t/002_b.pl (Wstat: 65280 (exited 255) Tests: 0 Failed: 0)
  Non-zero exit status: 255
  Parse errors: No plan found in TAP output
Files=2, Tests=4,  1 wallclock secs
Result: FAIL
OUT
counted=$(OUT="$tmp" BACKFILL_TMP="$tmp" bash -c '. scripts/suites.sh; count_tap "$1" t 1; echo "${passed[t]} ${failed[t]}"' bash "$tmp/prove.out")
if [ "$counted" = "4 1" ]; then held "suites.sh counts a TAP file that died as one failure"
else fail "suites.sh counted a TAP file that died as (passed failed) $counted, not 4 1"; fi
exit $status
