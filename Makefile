# backfill: safe backfills and replays inside PostgreSQL
#
#   make            build the extension (PGXS)
#   make test       install what is missing, build, install (holding /tmp/backfill-install.lock),
#                   run every suite against a throwaway cluster
#   make demo       the same set-up, then the demo
#   make bench      the same set-up, then the side-by-side benchmark, and on Citus (as make
#                   test-citus builds it; BENCH_CITUS=0 leaves it out)
#   make test-citus Citus from its pinned archive built once into a cache directory outside
#                   the repository, a coordinator and two workers on 127.0.0.1, the Citus
#                   suites (citus/); Debian's PostgreSQL 15 only.  It holds
#                   /tmp/backfill-install.lock itself while it installs and tests.
#
# Against Debian's PostgreSQL 15 by default.  PG=18 (any major version with a source
# archive pinned in scripts/sources.txt) builds that server once into a cache directory outside the
# repository, with pg_cron and pgTAP (scripts/pg_server.sh), and uses it; PG=17 runs the same
# inside a Debian 13 root with its PostgreSQL 17 packages (scripts/debian_root.sh, as root);
# PG_CONFIG=... uses another installed server (pg_cron and pgTAP are added to it if missing).
# CASSERT=1 with PG=18 builds and uses that server configured with --enable-cassert instead,
# in a cache directory of its own (`make test PG=18 CASSERT=1`): PostgreSQL's assertions and
# ours (the lock protocol of src/write/lockproto.c) are checked while every suite runs.

EXTENSION = backfill
# The version is the control file's default_version.  backfill.sql is the install script of
# that version (installed as backfill--VERSION.sql); updates/ holds one script a step from
# every released version (updates/README.md): a released version's SQL never changes.
EXTVERSION := $(shell sed -n "s/^default_version = '\(.*\)'$$/\1/p" backfill.control)
DATA_built = backfill--$(EXTVERSION).sql
DATA = $(wildcard updates/backfill--*--*.sql)
MODULE_big = backfill
# one folder a layer, bottom first: each uses only the folders listed before it
OBJS = \
	src/backfill.o \
	src/base/spi_util.o \
	src/base/extension.o \
	src/base/citus.o \
	src/base/relation.o \
	src/base/untouched.o \
	src/base/throttle.o \
	src/base/remote.o \
	src/hash/siphash.o \
	src/hash/valuehash.o \
	src/hash/citus_fingerprint.o \
	src/hash/rowhash.o \
	src/hash/fingerprint.o \
	src/hash/fpscan.o \
	src/validate/diffout.o \
	src/validate/diffside.o \
	src/validate/citus_diff.o \
	src/validate/keydiff.o \
	src/validate/diff.o \
	src/validate/validate.o \
	src/record/log.o \
	src/write/context.o \
	src/write/remotesource.o \
	src/write/citus_swap.o \
	src/write/part.o \
	src/write/lockproto.o \
	src/write/swap.o \
	src/write/swapfiles.o \
	src/write/swaplock.o \
	src/write/archive.o \
	src/write/publication.o \
	src/write/staging.o \
	src/write/freeze.o \
	src/write/replace.o \
	src/write/assign.o \
	src/write/merge.o \
	src/write/inplace.o \
	src/write/deleteinsert.o \
	src/probe/watch.o \
	src/probe/probe.o \
	src/run/window.o \
	src/run/pin.o \
	src/run/runkinds.o \
	src/run/runoptions.o \
	src/run/runstate.o \
	src/run/worker.o \
	src/run/outside.o \
	src/run/plan.o \
	src/run/task.o \
	src/run/finish.o \
	src/run/dryrun.o \
	src/run/estimate.o \
	src/run/progress.o \
	src/run/run.o

PG_CPPFLAGS = -I$(srcdir)/src -I$(libpq_srcdir) -DBACKFILL_VERSION='"$(EXTVERSION)"'
# libpq: a run's source read on a standby (src/base/remote.c)
SHLIB_LINK_INTERNAL = $(libpq)
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare

# pg_regress: readable examples of the SQL API (sql/ -> expected/)
REGRESS = fingerprint diff assert_unique reconcile log replace merge probe run run_guards run_auto run_in_place run_security run_untouched_log replace_prepared
REGRESS_OPTS = --inputdir=. --outputdir=$(REGRESS_OUTDIR)
REGRESS_OUTDIR ?= .

# rebuild objects when a header they include changes
override autodepend = yes

ifeq ($(filter 1,$(CASSERT))$(filter-out 15 17,$(PG)),1)
$(error CASSERT=1 needs a server built from source, e.g. PG=18: Debian's 15 and 17 are built without assertions)
endif
ifeq ($(PG),17)
# PostgreSQL 17: Debian 13's own packages, in a Debian 13 root made once into the cache
# (scripts/debian_root.sh); the build, the install and every suite run inside a throwaway
# overlay of it, from a copy of the checkout
SERVER_SETUP = scripts/deps.sh --debian-root && scripts/debian_root.sh build >/dev/null
IN_SERVER = scripts/debian_root.sh run env PG_CONFIG=/usr/lib/postgresql/17/bin/pg_config
else
ifneq ($(filter-out 15,$(PG)),)
# CASSERT=1: the same server configured with --enable-cassert, in a cache directory of its own
SERVER_VARIANT = $(if $(filter 1,$(CASSERT)),cassert)
PG_CONFIG := $(shell scripts/pg_server.sh path $(PG) $(SERVER_VARIANT))
ifeq ($(PG_CONFIG),)
$(error PG=$(PG): no such server can be built here (scripts/sources.txt pins the archives; 17 comes from Debian 13's packages))
endif
SERVER_SETUP = scripts/deps.sh --server-build && scripts/pg_server.sh build $(PG) $(SERVER_VARIANT) >/dev/null
else
SERVER_SETUP = PG_CONFIG=$(PG_CONFIG) scripts/deps.sh
endif
IN_SERVER = env PG_CONFIG=$(PG_CONFIG)
endif
PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifeq ($(PGXS),)
# No server headers yet: only the targets that install them work.
all install installcheck:
	@echo "PostgreSQL server development files are missing: run 'make test' (it installs them)" >&2; exit 1
else
include $(PGXS)
endif

.PHONY: test demo bench deps test-citus

backfill--$(EXTVERSION).sql: backfill.sql
	cp $< $@

# the library names the version it was built for (BACKFILL_VERSION)
src/base/extension.o: backfill.control

deps:
	@$(SERVER_SETUP)

test:
	@$(SERVER_SETUP)
	@$(IN_SERVER) scripts/with_cluster.sh scripts/run_tests.sh

demo:
	@$(SERVER_SETUP)
	@$(IN_SERVER) scripts/with_cluster.sh scripts/run_demo.sh

bench:
	@$(SERVER_SETUP)
	@$(IN_SERVER) scripts/with_cluster.sh scripts/run_bench.sh
	@if [ -z "$(filter-out 15,$(PG))" ] && [ "$(BENCH_CITUS)" != 0 ] && scripts/pg_server.sh archive citus-13.2.2 >/dev/null 2>&1; then \
		scripts/deps.sh --citus-build && flock $(INSTALL_LOCK) scripts/citus_server.sh build $(PG_CONFIG) >/dev/null && \
		BACKFILL_SKIP_BUILD=1 BACKFILL_CITUS=1 PG_CONFIG=$(PG_CONFIG) scripts/with_cluster.sh scripts/run_citus_bench.sh; \
	fi

# Citus: its build and install, then three nodes, under the install lock (it installs into the
# server's directories, shared with every other checkout on the machine).
INSTALL_LOCK ?= /tmp/backfill-install.lock
test-citus:
	@$(SERVER_SETUP) && scripts/deps.sh --citus-build
	@flock $(INSTALL_LOCK) sh -c 'scripts/citus_server.sh build $(PG_CONFIG) >/dev/null && \
		BACKFILL_INSTALL_LOCKED=1 BACKFILL_CITUS=1 PG_CONFIG=$(PG_CONFIG) scripts/with_cluster.sh scripts/run_citus_tests.sh'
