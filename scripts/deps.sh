#!/usr/bin/env bash
# scripts/deps.sh: install what `make test`, `make demo` and `make bench` need, if missing.
#
# Debian 12 packages only; runs apt-get as root, or through sudo for another user.
# --server-build: also what building PostgreSQL and pg_cron from source needs
# (scripts/pg_server.sh, for `make test PG=18`).
# --citus-build: also what building Citus from source needs (scripts/citus_server.sh, for
# `make test-citus`).
# --debian-root: only what making a Debian 13 root needs (scripts/debian_root.sh, for
# `make test PG=17`): the suites' own packages go into that root, not onto this machine.
# --print: print the packages that would be checked, install nothing.
#
# The server's packages are those of the major version of $PG_CONFIG when it runs (a server
# installed from another Debian suite, say), else Debian 12's 15.
set -euo pipefail

PGVER=${PGVER:-$( { "${PG_CONFIG:-pg_config}" --version 2>/dev/null || true; } | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p')}
PGVER=${PGVER:-15}
packages=(
	"postgresql-$PGVER"
	"postgresql-server-dev-$PGVER"
	"postgresql-$PGVER-pgtap"
	"postgresql-$PGVER-cron"
	"postgresql-$PGVER-partman"
	libtap-parser-sourcehandler-pgtap-perl
	libipc-run-perl
	build-essential
	chromium
	fonts-dejavu-core
	python3
)
if [ "${1:-}" = --server-build ]; then
	packages+=(bison flex pkg-config zlib1g-dev libicu-dev liblz4-dev libxml2-dev)
fi
if [ "${1:-}" = --citus-build ]; then
	packages+=(libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev libssl-dev)
fi
if [ "${1:-}" = --debian-root ]; then
	packages=(debootstrap debian-archive-keyring curl)
fi
if [ "${1:-}" = --print ]; then
	printf '%s\n' "${packages[@]}"
	exit 0
fi

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	SUDO=()
elif command -v sudo >/dev/null 2>&1; then
	SUDO=(sudo)
else
	echo "deps: missing packages (${missing[*]}) and neither root nor sudo" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Debian's postgresql-common would create and start a 'main' cluster on install:
# ours are throwaway clusters, so keep it from creating one.
if [ ! -e /etc/postgresql-common/createcluster.conf ] || ! grep -q '^create_main_cluster *= *false' /etc/postgresql-common/createcluster.conf; then
	"${SUDO[@]}" mkdir -p /etc/postgresql-common/createcluster.d
	echo 'create_main_cluster = false' | "${SUDO[@]}" tee /etc/postgresql-common/createcluster.d/backfill-no-main.conf >/dev/null
fi
# ... and keep apt from starting any service while it installs.
policy_added=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee /usr/sbin/policy-rc.d >/dev/null
	"${SUDO[@]}" chmod +x /usr/sbin/policy-rc.d
	policy_added=1
fi
cleanup() { [ "$policy_added" -eq 1 ] && "${SUDO[@]}" rm -f /usr/sbin/policy-rc.d; return 0; }
trap cleanup EXIT
# Another apt or dpkg run (unattended-upgrades, a second make) holds dpkg's lock: wait for it
# up to ten minutes instead of failing (apt's DPkg::Lock::Timeout; apt-get update takes the
# lists lock, which it does not wait for, so that step is retried).
APT_WAIT=(-o DPkg::Lock::Timeout=600)
for attempt in $(seq 1 60); do
	if "${SUDO[@]}" apt-get "${APT_WAIT[@]}" update -qq; then break; fi
	[ "$attempt" -eq 60 ] && { echo "deps: apt-get update kept failing" >&2; exit 1; }
	echo "deps: apt-get update failed (another apt run holds its lock?): waiting 10 s" >&2
	sleep 10
done
"${SUDO[@]}" apt-get "${APT_WAIT[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
