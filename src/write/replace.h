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
#include "write/context.h"
#include "write/part.h"
#include "write/swap.h"
#include "write/staging.h"

/* What to replace, and how: backfill_replace_partition's arguments, checked. */
typedef struct BackfillReplaceParams
{
	Oid			part;			/* the partition, as passed (its name is followed) */
	const char *source;			/* a checked query; $1 and $2 are the partition's bound */
	bool		keep_old;		/* keep the old rows in an archive table */
	bool		allow_empty;	/* a source with no rows may empty the partition */
	int			lock_timeout_ms;	/* each attempt's wait for the swap's locks */
	int			max_attempts;
	const char *source_server;	/* a foreign server: the source is computed on that standby */
} BackfillReplaceParams;

/* What a replacement did. */
typedef struct BackfillReplaceResult
{
	BackfillSwapResult swap;
	BackfillFingerprint before;
	BackfillFingerprint after;
	int64		log_id;			/* its record in backfill_log */
} BackfillReplaceResult;

extern void BackfillReplace(const BackfillReplaceParams *p, BackfillWriteContext *ctx,
							BackfillReplaceResult *r);
extern void BackfillDescribeBound(BackfillPart *bp);
extern void BackfillLockPart(Oid relid, const char *argname, const char *source, bool bound_params,
							 BackfillPart *bp);
extern void BackfillRefuseTransactionSnapshot(const char *func);
extern Oid	BackfillStage(BackfillPart *bp, const char *source, int nargs, Oid *argtypes,
						  ParamListInfo params, bool allow_empty,
						  BackfillFingerprint *before, BackfillFingerprint *after,
						  BackfillStageTimes *times);

#endif							/* BACKFILL_REPLACE_H */
