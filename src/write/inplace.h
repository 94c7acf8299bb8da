/*-------------------------------------------------------------------------
 *
 * src/write/inplace.h
 *		A small partition rewritten in place by what differs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_INPLACE_H
#define BACKFILL_INPLACE_H

#include "postgres.h"

/* What an in-place rewrite did to the partition's rows. */
typedef struct BackfillRewriteCounts
{
	uint64		deleted;		/* stored rows the source lacks */
	uint64		inserted;		/* source rows the partition lacked */
	uint64		unchanged;		/* rows in both, left as they are */
} BackfillRewriteCounts;

struct BackfillFingerprint;
extern bool BackfillRewriteDiffering(Oid relid, const char *bound, BackfillRewriteCounts *counts,
									 const char **why, struct BackfillFingerprint *before,
									 struct BackfillFingerprint *after);

#endif							/* BACKFILL_INPLACE_H */
