#!/usr/bin/env bash
# scripts/check_tour.sh: the README's tour runs as written.
#
# Every ```sql block of the README's "A five-minute tour" section (but a dbt model, whose
# Jinja only dbt renders) must appear verbatim in demo/tour.sql or in a file it includes with
# \ir (demo/tour_setup.sql, the tour's tables: the README's first block); the file then runs in the
# empty postgres database of the cluster scripts/with_cluster.sh started, where each of its
# claims prints "tour: held: ..." or stops it with "tour: FAIL: ...".
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
missing=$(python3 - <<'PY'
import os, re
readme = open("README.md").read()
def source(path):
    # the file with each \ir FILE line followed by FILE's text (\ir is relative to the file)
    text = open(path).read()
    for inc in re.findall(r"^\\ir +(\S+) *$", text, re.M):
        text += "\n" + source(os.path.join(os.path.dirname(path), inc))
    return text
tour = source("demo/tour.sql")
section = readme.split("\n## A five-minute tour\n", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"```sql\n(.*?)```", section, re.S)
n = bad = 0
for b in blocks:
    if "{{" in b:
        continue
    n += 1
    if b.strip() not in tour:
        bad += 1
        print("tour: FAIL: this README block is not in demo/tour.sql nor in a file it includes:\n" + b)
if n == 0:
    print("tour: FAIL: no SQL block found in the README's tour")
elif bad == 0:
    print("tour: held: the README's %d SQL blocks of the tour are in demo/tour.sql and the files it includes, verbatim" % n)
PY
)
echo "$missing"
grep -q '^tour: FAIL' <<<"$missing" && status=1

tables=$(psql -X -At -d postgres -c "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace")
if [ "$tables" != 0 ]; then
	echo "tour: FAIL: the postgres database is not empty ($tables relations in public)"
	exit 1
fi
if ! psql -X -v ON_ERROR_STOP=1 -d postgres -f demo/tour.sql > "$BACKFILL_TMP/tour.out" 2>&1; then
	status=1
fi
grep -E '^ *tour: held: ' "$BACKFILL_TMP/tour.out" | sed 's/^ *//'
if [ "$status" -ne 0 ]; then
	sed -n '/ERROR/,$p' "$BACKFILL_TMP/tour.out" | head -n 20 | sed 's/^/tour: FAIL: /'
fi
exit $status
