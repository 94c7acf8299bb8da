#!/usr/bin/env bash
# scripts/pg_server.sh: a PostgreSQL server other than Debian's 15, built from a pinned source
# archive, for `make test PG=18`; and the pinned archives themselves, for scripts/citus_server.sh.
#
#   pg_server.sh path VERSION [cassert]   print the pg_config of that build (building nothing)
#   pg_server.sh build VERSION [cassert]  build it if missing, with pg_cron and pgTAP; print
#                                  pg_config.  `cassert`: the same server configured with
#                                  --enable-cassert (make test PG=18 CASSERT=1), in a directory
#                                  of its own beside the plain build
#   pg_server.sh addons PG_CONFIG  install pg_cron and pgTAP into that server if missing
#   pg_server.sh name VERSION      print the pinned archive of that major version (postgresql-18.3)
#   pg_server.sh archive NAME      print the path of archive NAME (e.g. citus-13.2.2), checked,
#                                  downloading it first if no folder holds it
#   pg_server.sh sum NAME          print the SHA-256 pinned for archive NAME
#
# Every archive is pinned in scripts/sources.txt with its SHA-256 and its upstream address.
# It is looked for in $BACKFILL_SOURCES when that is set, else in a shared/sources folder
# beside the checkout or beside one of its parents; then in the cache's sources/ folder, where
# a missing archive is downloaded when the network allows.  A file whose checksum is not the
# pinned one is refused.
#
# The build lives in a cache directory outside the repository, named for the version and the
# archive's checksum: it is reused while the pin is the same and rebuilt when it changes.
# Root caches under /var/cache/backfill, other users under ~/.cache/backfill
# ($BACKFILL_CACHE overrides); as root the cache is readable by the postgres OS user, which
# runs the server.  Two builds of the same directory at once wait for each other on that
# directory's lock in the cache directory; builds of different ones do not.
#
# This script is run from make recipes: PostgreSQL's own build makes its generated headers
# (utils/errcodes.h) first only when MAKELEVEL is unset, so the caller's make variables are
# dropped before anything here runs make.
set -euo pipefail
shopt -s inherit_errexit
unset MAKELEVEL MAKEFLAGS MFLAGS
cd "$(dirname "$0")/.."

PINS=$PWD/scripts/sources.txt
if [ "$(id -u)" -eq 0 ]; then
	CACHE=${BACKFILL_CACHE:-/var/cache/backfill}
else
	CACHE=${BACKFILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/backfill}
fi
JOBS=${BACKFILL_JOBS:-2}

die() { echo "pg_server: $*" >&2; exit 1; }

# pin FILE: the SHA-256 and the address pinned for an archive file, or nothing
pin() { awk -v f="$1" '$1 == f { print $2, $3 }' "$PINS"; }

# pinned_sum NAME: the SHA-256 pinned for archive NAME
pinned_sum() {
	local sum url
	read -r sum url <<<"$(pin "$1.tar.gz")" || true
	[ -n "$sum" ] || die "$1.tar.gz is not pinned in scripts/sources.txt"
	echo "$sum"
}

# source_dirs: the folders an archive is looked for in, one a line, first choice first
source_dirs() {
	local d
	if [ -n "${BACKFILL_SOURCES:-}" ]; then
		echo "$BACKFILL_SOURCES"
	else
		d=$(cd .. && pwd)
		while :; do
			[ -d "$d/shared/sources" ] && echo "$d/shared/sources"
			[ "$d" = / ] && break
			d=$(dirname "$d")
		done
	fi
	echo "$CACHE/sources"
}

# matches FILE SUM: whether FILE's SHA-256 is SUM
matches() { [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

# download FILE SUM URL: fetch a pinned archive into the cache's sources/ folder
download() {
	local f=$1 sum=$2 url=$3 dir="$CACHE/sources" tmp got=0
	mkdir -p "$dir"
	chmod 755 "$CACHE" "$dir"
	tmp=$(mktemp "$dir/.$f.XXXXXX")
	echo "pg_server: $f is in no source folder: downloading $url" >&2
	if command -v curl >/dev/null 2>&1; then
		curl -fsSL --connect-timeout 20 --retry 2 -o "$tmp" "$url" 2>/dev/null && got=1
	elif command -v wget >/dev/null 2>&1; then
		wget -q --timeout=20 -O "$tmp" "$url" && got=1
	fi
	if [ "$got" -eq 0 ]; then
		rm -f "$tmp"
		die "$f is missing and could not be downloaded from $url (no network, or neither curl nor wget). Put that file (SHA-256 $sum) into $(source_dirs | head -n 1)/, or set BACKFILL_SOURCES to a folder that holds it"
	fi
	matches "$tmp" "$sum" || { rm -f "$tmp"; die "$url does not match the SHA-256 pinned in scripts/sources.txt ($sum)"; }
	chmod 644 "$tmp"
	mv "$tmp" "$dir/$f"
	echo "$dir/$f"
}

# archive NAME-VERSION: the path of its archive, checked against its pinned SHA-256
archive() {
	local f="$1.tar.gz" sum url d
	read -r sum url <<<"$(pin "$f")" || true
	[ -n "$sum" ] || die "$f is not pinned in scripts/sources.txt"
	while IFS= read -r d; do
		[ -f "$d/$f" ] || continue
		matches "$d/$f" "$sum" || die "$d/$f does not match the SHA-256 pinned in scripts/sources.txt ($sum)"
		echo "$d/$f"
		return 0
	done < <(source_dirs)
	download "$f" "$sum" "$url"
}

# pg_archive_name MAJOR: the PostgreSQL archive pinned for a major version, without .tar.gz
pg_archive_name() {
	local a
	a=$(awk -v p="postgresql-$1." 'index($1, p) == 1 { sub(/\.tar\.gz$/, "", $1); print $1 }' "$PINS" |
		sort -V | tail -n 1)
	[ -n "$a" ] || die "no PostgreSQL $1 source archive is pinned in scripts/sources.txt (pinned: $(awk '$1 ~ /^postgresql-/ { sub(/^postgresql-/, "", $1); sub(/\.tar\.gz$/, "", $1); print $1 }' "$PINS" | paste -sd' '))"
	echo "$a"
}

# variant WORD: the build variant a command names: nothing (plain) or cassert
variant() {
	case "${1:-}" in
		'') ;;
		cassert) echo cassert ;;
		*) die "unknown build variant '$1' (known: cassert)" ;;
	esac
}

# prefix_of MAJOR [VARIANT]: where that server is built, named for its version, its variant
# (18.3-cassert-...) and its pinned checksum, so that no two variants share a directory
prefix_of() {
	local name sum var
	name=$(pg_archive_name "$1")
	sum=$(pinned_sum "$name")
	var=$(variant "${2:-}")
	echo "$CACHE/${name#postgresql-}${var:+-$var}-${sum:0:12}"
}

# addons PG_CONFIG: pg_cron (built from its archive) and pgTAP (Debian's SQL files)
addons() {
	local pgc=$1 share work src
	share=$("$pgc" --sharedir)/extension
	if [ ! -f "$share/pg_cron.control" ]; then
		src=$(archive pg_cron-1.6.7)
		work=$(mktemp -d "$CACHE/pg_cron-build.XXXXXX")
		tar -xzf "$src" -C "$work"
		make -s -C "$work"/pg_cron-* PG_CONFIG="$pgc" -j"$JOBS" >/dev/null
		make -s -C "$work"/pg_cron-* PG_CONFIG="$pgc" install >/dev/null
		rm -rf "$work"
	fi
	if [ ! -f "$share/pgtap.control" ]; then
		src=$(dpkg -L postgresql-15-pgtap 2>/dev/null | grep '/pgtap.control$' | head -n 1)
		[ -n "$src" ] || die "pgTAP's SQL files are missing (Debian's postgresql-15-pgtap)"
		cp "$(dirname "$src")"/pgtap* "$share/"
	fi
}

build() {
	local ver=$1 var prefix name work start src
	local -a extra=()
	var=$(variant "${2:-}")
	prefix=$(prefix_of "$ver" "$var")
	name=$(pg_archive_name "$ver")
	# assertions on: PostgreSQL's own Assert()s and ours (USE_ASSERT_CHECKING), and the
	# extra checks that come with them (memory context checking, CLOBBER_FREED_MEMORY)
	[ "$var" = cassert ] && extra=(--enable-cassert)
	mkdir -p "$CACHE"
	chmod 755 "$CACHE"
	# one lock a build directory: a build of one variant does not hold up the use of another
	exec 9>"$CACHE/.${prefix##*/}.lock"
	flock 9
	if [ ! -f "$prefix/.complete" ]; then
		rm -rf "$prefix"
		start=$(date +%s)
		echo "pg_server: building $name${var:+ ($var)} into $prefix (once; a few minutes)" >&2
		src=$(archive "$name")
		work=$(mktemp -d "$CACHE/build.XXXXXX")
		tar -xzf "$src" -C "$work"
		(
			cd "$work/$name"
			./configure --prefix="$prefix" --without-readline --with-icu --with-lz4 \
				--with-libxml --enable-tap-tests "${extra[@]}" >"$work/configure.log" 2>&1 ||
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
		echo "pg_server: $name${var:+ ($var)} built in $(( $(date +%s) - start )) s" >&2
	fi
	flock -u 9
	echo "$prefix/bin/pg_config"
}

case "${1:-}" in
	path) p=$(prefix_of "$2" "${3:-}"); echo "$p/bin/pg_config" ;;
	build) build "$2" "${3:-}" ;;
	addons) mkdir -p "$CACHE"; addons "$2" ;;
	name) pg_archive_name "$2" ;;
	archive) archive "$2" ;;
	sum) pinned_sum "$2" ;;
	*) die "usage: $0 path|build VERSION [cassert], $0 name VERSION, $0 addons PG_CONFIG, or $0 archive|sum NAME" ;;
esac
