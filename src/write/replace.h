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

extern void BackfillDescribeBound(BackfillPart *bp);
extern void BackfillLockPart(Oid relid, const char *argname, const char *source, bool bound_params,
							 BackfillPart *bp);
extern void BackfillRefuseTransactionSnapshot(const char *func);
extern Oid	BackfillStage(BackfillPart *bp, const char *source, int nargs, Oid *argtypes,
						  ParamListInfo params, bool allow_empty,
						  BackfillFingerprint *before, BackfillFingerprint *after,
						  BackfillStageTimes *times);

#endif							/* BACKFILL_REPLACE_H */
