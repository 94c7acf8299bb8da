/*-------------------------------------------------------------------------
 *
 * src/write/replace.h
 *		Replacing a partition by the rows of a query, for the runs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_REPLACE_H
#define BACKFILL_REPLACE_H

#include "postgres.h"

#include "nodes/params.h"

#include "hash/fingerprint.h"
#include "write/part.h"
#include "write/staging.h"

/*
 * Called by backfill_replace_partition once its staging table is filled,
 * indexed and checked, before the swap asks for its locks, with the staging
 * table (whose rows the partition will hold): a run sets it to reconcile
 * those rows while readers still go on.  It is cleared before it is called,
 * so it runs for one replacement only.
 */
typedef void (*BackfillStagedHookType) (Oid part, Oid staging);
extern PGDLLIMPORT BackfillStagedHookType BackfillStagedHook;

/* the old rows of a partition, as text: their count and fingerprint */
#define BACKFILL_BEFORE_LEN 64
extern PGDLLIMPORT const char *BackfillReplaceExpected;
extern PGDLLIMPORT char BackfillReplaceLastBefore[BACKFILL_BEFORE_LEN];

extern void BackfillDescribeBound(BackfillPart *bp);
extern void BackfillLockPart(Oid relid, const char *argname, const char *source, bool bound_params,
							 BackfillPart *bp);
extern void BackfillRefuseTransactionSnapshot(const char *func);
extern Oid	BackfillStage(BackfillPart *bp, const char *source, int nargs, Oid *argtypes,
						  ParamListInfo params, bool allow_empty,
						  BackfillFingerprint *before, BackfillFingerprint *after,
						  BackfillStageTimes *times);

#endif							/* BACKFILL_REPLACE_H */
