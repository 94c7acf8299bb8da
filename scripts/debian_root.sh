#!/usr/bin/env bash
# scripts/debian_root.sh: PostgreSQL 17 from Debian 13 (trixie)'s own packages, in a Debian 13
# root kept in the build cache, for `make test PG=17` (and make demo / make bench PG=17).
#
#   debian_root.sh build         make the root once: debootstrap --variant=minbase, then apt
#                                installs PostgreSQL 17 and what the suites need into it
#   debian_root.sh run CMD...    run CMD as root inside a throwaway overlay of the root, from a
#                                copy of the checkout, with /proc, /sys and /dev mounted
#   debian_root.sh check         exit 0 if the root is cached or Debian's archive is reachable
#
# Debian 13's packages need its own C library, so they cannot run on the host (Debian 12); a
# root made by debootstrap can, with the host's kernel.  Debian 12's debian-archive-keyring
# verifies trixie.  The root lives in the cache, named for the suite and the package list, and
# is never changed once made: each run mounts an overlay over it whose upper layer is removed
# at the end, so what a run installs (the extension) or writes goes with it.  Every mount a run
# makes is undone when CMD ends, whatever it ends with; the host's own servers are not touched
# (the clusters inside are started and stopped by scripts/with_cluster.sh and the TAP tests,
# in the root's own /tmp).  As root only: debootstrap, chroot and mount need it.
#
# Root caches under /var/cache/backfill ($BACKFILL_CACHE overrides); the archive is the one the
# host's apt uses (the URIs of its Debian entry), or $BACKFILL_DEBIAN_MIRROR.
set -euo pipefail
shopt -s inherit_errexit
unset MAKELEVEL MAKEFLAGS MFLAGS
cd "$(dirname "$0")/.."

SUITE=trixie
PACKAGES=(postgresql-17 postgresql-server-dev-17 postgresql-17-pgtap postgresql-17-cron
	postgresql-17-partman libipc-run-perl libtap-parser-sourcehandler-pgtap-perl make gcc
	libc6-dev git python3 chromium fonts-dejavu-core iproute2 ca-certificates)
CACHE=${BACKFILL_CACHE:-/var/cache/backfill}
KEY=$(printf '%s\n' "$SUITE" "${PACKAGES[@]}" | sha256sum | cut -c1-12)
DIR="$CACHE/debian-$SUITE-pg17-$KEY"
ROOT="$DIR/root"

die() { echo "debian_root: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot and mount need it)"

# the Debian archive the host's apt uses
mirror() {
	local m=${BACKFILL_DEBIAN_MIRROR:-}
	if [ -z "$m" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
		m=$(awk '/^URIs:/ { u = $2 } /^Suites:/ && / bookworm( |$)/ && u != "" { print u; exit }' \
			/etc/apt/sources.list.d/debian.sources)
	fi
	if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
		m=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list)
	fi
	echo "${m:-http://deb.debian.org/debian}"
}

# mount_into DIR: /proc, /sys and /dev (with its own mounts) inside DIR
mount_into() {
	mount -t proc proc "$1/proc"
	mount --rbind /sys "$1/sys"
	mount --make-rslave "$1/sys"
	mount --rbind /dev "$1/dev"
	mount --make-rslave "$1/dev"
}

# unmount_from DIR: every mount below DIR, deepest first, then DIR itself if it is one
unmount_from() {
	local m
	for m in $(awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}

build() {
	local mirror work log start
	[ -f "$DIR/.complete" ] && { echo "$ROOT"; return 0; }
	mkdir -p "$CACHE"
	chmod 755 "$CACHE"
	exec 9>"$CACHE/.lock"
	flock 9
	if [ ! -f "$DIR/.complete" ]; then
		start=$(date +%s)
		mirror=$(mirror)
		echo "debian_root: making a Debian $SUITE root with PostgreSQL 17 in $DIR from $mirror (once; a few minutes)" >&2
		unmount_from "$DIR"
		rm -rf "$DIR"
		mkdir -p "$DIR"
		log="$DIR/build.log"
		work="$DIR/root.new"
		trap 'unmount_from "$DIR"' EXIT
		debootstrap --variant=minbase "$SUITE" "$work" "$mirror" >"$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; die "debootstrap of $SUITE from $mirror failed"; }
		# no service starts in the root, and no cluster is made on install
		printf '#!/bin/sh\nexit 101\n' >"$work/usr/sbin/policy-rc.d"
		chmod +x "$work/usr/sbin/policy-rc.d"
		mkdir -p "$work/etc/postgresql-common/createcluster.d"
		echo 'create_main_cluster = false' >"$work/etc/postgresql-common/createcluster.d/backfill-no-main.conf"
		cp /etc/resolv.conf "$work/etc/resolv.conf"
		mount_into "$work"
		chroot "$work" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$log" 2>&1 &&
			chroot "$work" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
				apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >>"$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; die "installing PostgreSQL 17 into the $SUITE root failed"; }
		chroot "$work" apt-get clean
		unmount_from "$work"
		trap - EXIT
		mv "$work" "$ROOT"
		touch "$DIR/.complete"
		echo "debian_root: made in $(( $(date +%s) - start )) s" >&2
	fi
	flock -u 9
	echo "$ROOT"
}

# run CMD...: CMD in a throwaway overlay of the root, from a copy of the checkout
RUN_DIR=
run() {
	local merged rc=0
	[ -f "$DIR/.complete" ] || die "no Debian $SUITE root in $DIR: run '$0 build' first"
	RUN_DIR=$(mktemp -d "$CACHE/run17.XXXXXX")
	merged="$RUN_DIR/merged"
	mkdir -p "$RUN_DIR/upper" "$RUN_DIR/work" "$merged"
	trap 'unmount_from "$RUN_DIR"; rm -rf "$RUN_DIR"' EXIT
	trap 'exit 130' INT TERM
	mount -t overlay overlay -o "lowerdir=$ROOT,upperdir=$RUN_DIR/upper,workdir=$RUN_DIR/work" "$merged"
	mount_into "$merged"
	mkdir -p "$merged/build/backfill"
	# the checkout as it is: tracked files and untracked ones git does not ignore
	if git rev-parse --git-dir >/dev/null 2>&1; then
		git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - 2>/dev/null |
			tar -xf - -C "$merged/build/backfill"
		# and its history: a test builds the oldest release from its commit (updates/README.md)
		cp -a "$(git rev-parse --git-common-dir)" "$merged/build/backfill/.git"
	else
		cp -a . "$merged/build/backfill"
	fi
	chroot "$merged" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb /bin/bash -c 'cd /build/backfill && exec "$@"' bash "$@" || rc=$?
	return "$rc"
}

# check: whether make test PG=17 can run here
check() {
	[ -f "$DIR/.complete" ] && return 0
	command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || die "debootstrap is not installed"
	curl -fsS --connect-timeout 15 -o /dev/null "$(mirror)/dists/$SUITE/Release" 2>/dev/null ||
		die "Debian's $SUITE archive is not reachable at $(mirror)"
}

case "${1:-}" in
	build) build ;;
	run) shift; run "$@" ;;
	check) check ;;
	*) die "usage: $0 build | run CMD... | check" ;;
esac
