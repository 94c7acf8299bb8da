#!/usr/bin/env bash
# scripts/with_cluster.sh: build and install backfill, start a throwaway cluster, run a command
# against it, and stop the cluster whatever happens.
#
# The cluster lives in a new temporary directory, listens only on a Unix socket in that
# directory (no TCP) on a port no other server uses, and runs as the `postgres` OS user when
# we are root (PostgreSQL refuses to run as root). Only this cluster is ever stopped, by its own
# data directory. The command sees PGHOST, PGPORT, PGUSER, PGDATABASE and BACKFILL_TMP.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_CONFIG=${PG_CONFIG:-pg_config}
BINDIR=$("$PG_CONFIG" --bindir)
export PATH="$BINDIR:$PATH"

if [ "$(id -u)" -eq 0 ]; then
	RUN_AS=(runuser -u postgres --)
	SUDO=()
	DBUSER=postgres
else
	RUN_AS=()
	SUDO=(sudo)
	DBUSER=$(id -un)
fi

# Build with warnings as errors, then install into the server's directories
# (BACKFILL_SKIP_BUILD=1: use the extension as installed).
# Objects built for another server are cleaned first: their dependency files list only the
# headers, which do not change when PG_CONFIG does.
if [ -z "${BACKFILL_SKIP_BUILD:-}" ]; then
	built_for="$("$PG_CONFIG" --version) $("$PG_CONFIG" --includedir-server)"
	if [ "$(cat .built-for 2>/dev/null)" != "$built_for" ]; then
		make -s clean PG_CONFIG="$PG_CONFIG" >/dev/null
	fi
	make -s COPT='-Werror' PG_CONFIG="$PG_CONFIG" >/dev/null
	echo "$built_for" > .built-for
	"${SUDO[@]}" make -s install PG_CONFIG="$PG_CONFIG" >/dev/null
fi
# a server other than Debian's: pg_cron and pgTAP, if it lacks them
SHAREDIR=$("$PG_CONFIG" --sharedir)
if [ ! -f "$SHAREDIR/extension/pg_cron.control" ] || [ ! -f "$SHAREDIR/extension/pgtap.control" ]; then
	"${SUDO[@]}" scripts/pg_server.sh addons "$PG_CONFIG"
fi

TMP=$(mktemp -d /tmp/backfill.XXXXXX)
chmod 755 "$TMP"
[ "$(id -u)" -eq 0 ] && chown postgres: "$TMP"
DATA="$TMP/data"

# A port whose socket name is free; the socket lives in our own directory anyway.
port_free() { ! ss -ltnH "( sport = :$1 )" 2>/dev/null | grep -q . ; }
PORT=
for _ in $(seq 1 50); do
	p=$((20000 + RANDOM % 40000))
	if port_free "$p"; then PORT=$p; break; fi
done
[ -n "$PORT" ] || { echo "with_cluster: no free port found" >&2; exit 1; }

stop_cluster() {
	rc=$?
	if [ -f "$DATA/postmaster.pid" ]; then
		"${RUN_AS[@]}" "$BINDIR/pg_ctl" -D "$DATA" -m fast -w -t 30 stop >/dev/null 2>&1 ||
			"${RUN_AS[@]}" "$BINDIR/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	if [ "$rc" -ne 0 ] && [ -f "$TMP/server.log" ] && [ ! -e "$TMP/server_log_shown" ]; then
		echo "--- last lines of the server log ---" >&2
		tail -n 30 "$TMP/server.log" >&2 || true
	fi
	# the last server processes may still be writing as they exit
	for _ in 1 2 3 4 5; do
		rm -rf "$TMP" 2>/dev/null && break
		sleep 1
	done
	exit "$rc"
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

"${RUN_AS[@]}" "$BINDIR/initdb" -D "$DATA" -U "$DBUSER" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
cat >>"$DATA/postgresql.conf" <<CONF
listen_addresses = ''
port = $PORT
unix_socket_directories = '$TMP'
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 32
fsync = off
synchronous_commit = off
full_page_writes = off
max_prepared_transactions = 10
log_min_messages = warning
CONF
"${RUN_AS[@]}" "$BINDIR/pg_ctl" -D "$DATA" -l "$TMP/server.log" -w -t 60 start >/dev/null

export PGHOST="$TMP" PGPORT="$PORT" PGUSER="$DBUSER" PGDATABASE=postgres BACKFILL_TMP="$TMP"
export BACKFILL_RUN_AS="${RUN_AS[*]}"
"$@"
