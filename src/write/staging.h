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
#include "write/part.h"

/* Where the time of a replacement's copy went, in milliseconds. */
typedef struct BackfillStageTimes
{
	double		fingerprint_ms; /* the partition's rows before */
	double		fill_ms;		/* the source read, its rows checked, hashed and written */
	double		index_ms;		/* the indexes built from the rows */
	double		analyze_ms;		/* planner statistics gathered */
} BackfillStageTimes;

extern Oid	BackfillCreateStaging(BackfillPart *bp);
extern SPIPlanPtr BackfillPrepareFill(BackfillPart *bp, Oid staging, const char *source,
									  int nargs, Oid *argtypes);
extern void BackfillFillStaging(BackfillPart *bp, Oid staging, SPIPlanPtr plan,
								ParamListInfo params, BackfillFingerprint *fp);
extern void BackfillFinishStaging(BackfillPart *bp, Oid staging, BackfillStageTimes *times);
extern void BackfillRethrowDuplicateKey(BackfillPart *bp, MemoryContext cxt);
extern bool BackfillStagingRolledBack(bool rolled_back);

#endif							/* BACKFILL_STAGING_H */
