/*-------------------------------------------------------------------------
 *
 * src/write/swapfiles.h
 *		Swapping a filled staging table in for a partition by trading their
 *		files, without touching the parent.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_SWAPFILES_H
#define BACKFILL_SWAPFILES_H

#include "postgres.h"

#include "nodes/pg_list.h"

extern char *BackfillIndexShape(Oid indexoid);
extern bool BackfillCanSwapFiles(Oid part, Oid staging, bool keep, List **indexpairs);
extern List *BackfillPairStatistics(Oid part, Oid staging);
extern List *BackfillSwapFiles(Oid part, Oid staging, List *indexpairs);

#endif							/* BACKFILL_SWAPFILES_H */
