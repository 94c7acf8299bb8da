/*-------------------------------------------------------------------------
 *
 * src/write/staging.h
 *		A faithful copy of a partition's definition, filled with frozen rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_STAGING_H
#define BACKFILL_STAGING_H

#include "postgres.h"

#include "executor/spi.h"

#include "hash/fingerprint.h"
#include "write/swap.h"

extern Oid	BackfillCreateStaging(BackfillPart *bp);
extern SPIPlanPtr BackfillPrepareFill(BackfillPart *bp, Oid staging, const char *source,
									  int nargs, Oid *argtypes);
extern void BackfillFillStaging(BackfillPart *bp, Oid staging, SPIPlanPtr plan,
								ParamListInfo params, BackfillFingerprint *fp);
extern void BackfillFinishStaging(BackfillPart *bp, Oid staging, BackfillStageTimes *times);
extern void BackfillRethrowDuplicateKey(BackfillPart *bp, MemoryContext cxt);

#endif							/* BACKFILL_STAGING_H */
