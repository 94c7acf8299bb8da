#!/usr/bin/env bash
# scripts/pg_server.sh: a PostgreSQL server other than Debian's 15, built from the source
# archives in ../shared/sources (or $BACKFILL_SOURCES), for `make test PG=18`.
#
#   pg_server.sh path VERSION      print the pg_config of that build (building nothing)
#   pg_server.sh build VERSION     build it if missing, with pg_cron and pgTAP; print pg_config
#   pg_server.sh addons PG_CONFIG  install pg_cron and pgTAP into that server if missing
#   pg_server.sh archive NAME      print the path of archive NAME (e.g. citus-13.2.2), checked
#
# The build lives in a cache directory outside the repository, named for the version and the
# archive's checksum: it is reused while the archive is the same and rebuilt when it changes.
# Root caches under /var/cache/backfill, other users under ~/.cache/backfill
# ($BACKFILL_CACHE overrides); as root the cache is readable by the postgres OS user, which
# runs the server.  Two builds at once wait for each other on a lock in the cache directory.
set -euo pipefail
cd "$(dirname "$0")/.."

SOURCES=${BACKFILL_SOURCES:-$(cd .. && pwd)/shared/sources}
[ -d "$SOURCES" ] || SOURCES=/work/shared/sources
if [ "$(id -u)" -eq 0 ]; then
	CACHE=${BACKFILL_CACHE:-/var/cache/backfill}
else
	CACHE=${BACKFILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/backfill}
fi
JOBS=${BACKFILL_JOBS:-2}

die() { echo "pg_server: $*" >&2; exit 1; }

# archive NAME-VERSION: the path of its archive, checked against SHA256SUMS
archive() {
	local f="$SOURCES/$1.tar.gz"
	[ -f "$f" ] || die "no source archive $f"
	if [ -f "$SOURCES/SHA256SUMS" ]; then
		(cd "$SOURCES" && grep " $1.tar.gz\$" SHA256SUMS | sha256sum -c --quiet -) >&2 ||
			die "$f does not match $SOURCES/SHA256SUMS"
	fi
	echo "$f"
}

# the newest PostgreSQL source archive of a major version
pg_archive_name() {
	local a
	a=$(cd "$SOURCES" && ls "postgresql-$1".*.tar.gz 2>/dev/null | sort -V | tail -n 1)
	[ -n "$a" ] || die "no PostgreSQL $1 source archive in $SOURCES"
	echo "${a%.tar.gz}"
}

prefix_of() {
	local name sum
	name=$(pg_archive_name "$1")
	sum=$(sha256sum "$SOURCES/$name.tar.gz" | cut -c1-12)
	echo "$CACHE/${name#postgresql-}-$sum"
}

# addons PG_CONFIG: pg_cron (built from its archive) and pgTAP (Debian's SQL files)
addons() {
	local pgc=$1 share work
	share=$("$pgc" --sharedir)/extension
	if [ ! -f "$share/pg_cron.control" ]; then
		work=$(mktemp -d "$CACHE/pg_cron-build.XXXXXX")
		tar -xzf "$(archive pg_cron-1.6.7)" -C "$work"
		make -s -C "$work"/pg_cron-* PG_CONFIG="$pgc" -j"$JOBS" >/dev/null
		make -s -C "$work"/pg_cron-* PG_CONFIG="$pgc" install >/dev/null
		rm -rf "$work"
	fi
	if [ ! -f "$share/pgtap.control" ]; then
		local src
		src=$(dpkg -L postgresql-15-pgtap 2>/dev/null | grep '/pgtap.control$' | head -n 1)
		[ -n "$src" ] || die "pgTAP's SQL files are missing (Debian's postgresql-15-pgtap)"
		cp "$(dirname "$src")"/pgtap* "$share/"
	fi
}

build() {
	local ver=$1 prefix name work start
	prefix=$(prefix_of "$ver")
	name=$(pg_archive_name "$ver")
	mkdir -p "$CACHE"
	chmod 755 "$CACHE"
	exec 9>"$CACHE/.lock"
	flock 9
	if [ ! -f "$prefix/.complete" ]; then
		rm -rf "$prefix"
		start=$(date +%s)
		echo "pg_server: building $name into $prefix (once; a few minutes)" >&2
		work=$(mktemp -d "$CACHE/build.XXXXXX")
		tar -xzf "$(archive "$name")" -C "$work"
		(
			cd "$work/$name"
			./configure --prefix="$prefix" --without-readline --with-icu --with-lz4 \
				--with-libxml --enable-tap-tests >"$work/configure.log" 2>&1 ||
				{ tail -n 30 "$work/configure.log"; exit 1; }
			make -s -j"$JOBS" >"$work/make.log" 2>&1 || { tail -n 30 "$work/make.log"; exit 1; }
			make -s install >>"$work/make.log" 2>&1
			make -s -C src/test/isolation install >>"$work/make.log" 2>&1
			make -s -j"$JOBS" -C contrib >>"$work/make.log" 2>&1
			make -s -C contrib install >>"$work/make.log" 2>&1
		) >&2 || { rm -rf "$work"; die "building $name failed"; }
		rm -rf "$work"
		addons "$prefix/bin/pg_config"
		chmod -R a+rX "$prefix"
		touch "$prefix/.complete"
		echo "pg_server: $name built in $(( $(date +%s) - start )) s" >&2
	fi
	flock -u 9
	echo "$prefix/bin/pg_config"
}

case "${1:-}" in
	path) echo "$(prefix_of "$2")/bin/pg_config" ;;
	build) build "$2" ;;
	addons) mkdir -p "$CACHE"; addons "$2" ;;
	archive) archive "$2" ;;
	*) die "usage: $0 path|build VERSION, $0 addons PG_CONFIG, or $0 archive NAME" ;;
esac
