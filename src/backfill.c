/*-------------------------------------------------------------------------
 *
 * src/backfill.c
 *		Module entry point of the backfill extension.
 *
 * backfill makes backfills and replays safe inside the database: it proves
 * what a rewrite of history did (fingerprints, keyed diffs, uniqueness and
 * reconciliation checks) and, in the write layers built on them, swaps and
 * merges atomically and records every write.  The SQL-callable functions live
 * in one file per concern; this file only marks the module.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

PG_MODULE_MAGIC;
