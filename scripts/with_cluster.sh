#!/usr/bin/env bash
# scripts/with_cluster.sh: build and install backfill, start a throwaway cluster, run a command
# against it, and stop the cluster whatever happens.
#
# The cluster lives in a new temporary directory, listens only on a Unix socket in that
# directory (no TCP) on a port no other server uses, and runs as the `postgres` OS user when
# we are root (PostgreSQL refuses to run as root). Only this cluster is ever stopped, by its own
# data directory. The command sees PGHOST, PGPORT, PGUSER, PGDATABASE and BACKFILL_TMP.
#
# BACKFILL_CITUS=1: a Citus cluster instead, for `make test-citus`: a coordinator (the cluster
# above, listening on 127.0.0.1 too) and two workers, each in its own directory under
# BACKFILL_TMP with its socket in BACKFILL_TMP too, listening on 127.0.0.1 only, all three with
# shared_preload_libraries = 'citus'.  The command also sees BACKFILL_WORKER_PORTS and
# BACKFILL_WORKER_DATA (space-separated, worker 1 first); all three are stopped at the end.
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

# install_locked CMD...: CMD holding /tmp/backfill-install.lock ($INSTALL_LOCK): it writes into
# the server's directories, which every checkout on the machine shares, so one install at a
# time.  make test-citus holds that lock for its whole run and says so (BACKFILL_INSTALL_LOCKED).
install_locked() {
	if [ -n "${BACKFILL_INSTALL_LOCKED:-}" ]; then
		"$@"
	else
		flock "${INSTALL_LOCK:-/tmp/backfill-install.lock}" "$@"
	fi
}

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
	install_locked "${SUDO[@]}" make -s install PG_CONFIG="$PG_CONFIG" >/dev/null
fi
# a server other than Debian's: pg_cron and pgTAP, if it lacks them
SHAREDIR=$("$PG_CONFIG" --sharedir)
if [ ! -f "$SHAREDIR/extension/pg_cron.control" ] || [ ! -f "$SHAREDIR/extension/pgtap.control" ]; then
	install_locked "${SUDO[@]}" scripts/pg_server.sh addons "$PG_CONFIG"
fi

TMP=$(mktemp -d /tmp/backfill.XXXXXX)
chmod 755 "$TMP"
[ "$(id -u)" -eq 0 ] && chown postgres: "$TMP"
DATA="$TMP/data"
CITUS=${BACKFILL_CITUS:-}
WORKERS=()
[ -n "$CITUS" ] && WORKERS=(worker1 worker2)

# A port nobody listens on (nor a port we took already); the socket lives in our own
# directory anyway.
TAKEN=" "
port_free() { ! ss -ltnH "( sport = :$1 )" 2>/dev/null | grep -q . && [[ "$TAKEN" != *" $1 "* ]]; }
free_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		if port_free "$p"; then TAKEN="$TAKEN$p "; echo "$p"; return 0; fi
	done
	echo "with_cluster: no free port found" >&2
	return 1
}

# stop_node DATADIR: that one server, fast, or immediately if it does not go
stop_node() {
	[ -f "$1/postmaster.pid" ] || return 0
	"${RUN_AS[@]}" "$BINDIR/pg_ctl" -D "$1" -m fast -w -t 30 stop >/dev/null 2>&1 ||
		"${RUN_AS[@]}" "$BINDIR/pg_ctl" -D "$1" -m immediate -w stop >/dev/null 2>&1 || true
}

stop_cluster() {
	rc=$?
	stop_node "$DATA"
	for w in "${WORKERS[@]}"; do stop_node "$TMP/$w/data"; done
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

# start_node DATADIR PORT LOG LISTEN PRELOAD: initdb and start one server
start_node() {
	"${RUN_AS[@]}" "$BINDIR/initdb" -D "$1" -U "$DBUSER" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
	cat >>"$1/postgresql.conf" <<CONF
listen_addresses = '$4'
port = $2
unix_socket_directories = '$TMP'
shared_preload_libraries = '$5'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 32
fsync = off
synchronous_commit = off
full_page_writes = off
max_prepared_transactions = 10
log_min_messages = warning
CONF
	# Citus prepares a transaction on every connection a multi-shard write opens (two-phase
	# commit), up to one per shard
	[ -n "$CITUS" ] && printf 'max_prepared_transactions = 200\nmax_connections = 200\n' >>"$1/postgresql.conf"
	"${RUN_AS[@]}" "$BINDIR/pg_ctl" -D "$1" -l "$3" -w -t 60 start >/dev/null
}

PORT=$(free_port)
if [ -z "$CITUS" ]; then
	start_node "$DATA" "$PORT" "$TMP/server.log" '' pg_cron
else
	start_node "$DATA" "$PORT" "$TMP/server.log" 127.0.0.1 citus,pg_cron
	worker_ports=()
	worker_data=()
	for w in "${WORKERS[@]}"; do
		mkdir -p "$TMP/$w"
		[ "$(id -u)" -eq 0 ] && chown postgres: "$TMP/$w"
		p=$(free_port)
		start_node "$TMP/$w/data" "$p" "$TMP/$w/server.log" 127.0.0.1 citus
		worker_ports+=("$p")
		worker_data+=("$TMP/$w/data")
	done
	export BACKFILL_WORKER_PORTS="${worker_ports[*]}" BACKFILL_WORKER_DATA="${worker_data[*]}"
fi

export PGHOST="$TMP" PGPORT="$PORT" PGUSER="$DBUSER" PGDATABASE=postgres BACKFILL_TMP="$TMP"
export BACKFILL_RUN_AS="${RUN_AS[*]}"
"$@"
