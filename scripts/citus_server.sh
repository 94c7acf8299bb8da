#!/usr/bin/env bash
# scripts/citus_server.sh: Citus built from its pinned source archive (scripts/sources.txt,
# found or downloaded by scripts/pg_server.sh) for `make test-citus`, and installed into a
# PostgreSQL server.
#
#   citus_server.sh build PG_CONFIG    build Citus for that server if no build is cached, and
#                                      install it into the server if it is not there yet
#
# The build tree lives in a cache directory outside the repository, named for the Citus
# version, the archive's checksum and the server's version: it is reused while all three are
# the same.  Root caches under /var/cache/backfill, other users under ~/.cache/backfill
# ($BACKFILL_CACHE overrides).  Two builds at once wait for each other on the cache's lock.
#
# Citus 13.2.2 declares a static have_createdb_privilege() for servers before 16; Debian's
# 15.20 exports that function from commands/dbcommands.h, and the two declarations clash.
# When the server's header declares it, the static fallback is dropped and the header included.
#
# Run from make recipes: the caller's make variables are dropped, as in scripts/pg_server.sh.
set -euo pipefail
shopt -s inherit_errexit
unset MAKELEVEL MAKEFLAGS MFLAGS
cd "$(dirname "$0")/.."

CITUS=citus-13.2.2
if [ "$(id -u)" -eq 0 ]; then
	CACHE=${BACKFILL_CACHE:-/var/cache/backfill}
	SUDO=()
else
	CACHE=${BACKFILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/backfill}
	SUDO=(sudo)
fi
JOBS=${BACKFILL_JOBS:-2}

die() { echo "citus_server: $*" >&2; exit 1; }

# the archive, checked against SHA256SUMS
archive() { scripts/pg_server.sh archive "$CITUS"; }

# patch_compat SRC PG_CONFIG: the have_createdb_privilege clash described above
patch_compat() {
	local src=$1 pgc=$2 h
	h="$src/src/include/pg_version_compat.h"
	grep -q 'have_createdb_privilege' "$("$pgc" --includedir-server)/commands/dbcommands.h" || return 0
	perl -0pi -e 's/static inline bool\nhave_createdb_privilege\(void\)\n\{.*?\n\}\n//s;
		s/(#include "catalog\/pg_proc_d.h"\n)/$1#include "commands\/dbcommands.h"\n/' "$h"
	! grep -q '^have_createdb_privilege(void)' "$h" || die "could not patch $h"
}

build() {
	local pgc=$1 sum ver dir start src
	sum=$(scripts/pg_server.sh sum "$CITUS" | cut -c1-12)
	ver=$("$pgc" --version | awk '{print $2}')
	case "${ver%%.*}" in
		15 | 16 | 17) ;;
		*) die "$CITUS supports PostgreSQL 15 to 17, not $ver" ;;
	esac
	dir="$CACHE/$CITUS-$sum-pg$ver"
	mkdir -p "$CACHE"
	chmod 755 "$CACHE"
	exec 9>"$CACHE/.lock"
	flock 9
	if [ ! -f "$dir/.complete" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		start=$(date +%s)
		echo "citus_server: building $CITUS for PostgreSQL $ver into $dir (once; about 5 minutes)" >&2
		src=$(archive) || { rm -rf "$dir"; exit 1; }
		tar -xzf "$src" -C "$dir"
		patch_compat "$dir/$CITUS" "$pgc"
		(
			cd "$dir/$CITUS"
			./configure PG_CONFIG="$pgc" >"$dir/configure.log" 2>&1 ||
				{ tail -n 30 "$dir/configure.log"; exit 1; }
			make -s -j"$JOBS" >"$dir/make.log" 2>&1 || { tail -n 30 "$dir/make.log"; exit 1; }
		) >&2 || { rm -rf "$dir"; die "building $CITUS failed"; }
		touch "$dir/.complete"
		echo "citus_server: $CITUS built in $(( $(date +%s) - start )) s" >&2
	fi
	if [ ! -f "$("$pgc" --pkglibdir)/citus.so" ] ||
		[ ! -f "$("$pgc" --sharedir)/extension/citus.control" ]; then
		"${SUDO[@]}" make -s -C "$dir/$CITUS" install >"$dir/install.log" 2>&1 ||
			{ tail -n 30 "$dir/install.log" >&2; die "installing $CITUS failed"; }
	fi
	flock -u 9
	echo "$dir"
}

case "${1:-}" in
	build) build "${2:-pg_config}" ;;
	*) die "usage: $0 build PG_CONFIG" ;;
esac
