/*-------------------------------------------------------------------------
 *
 * src/validate/citus_diff.h
 *		backfill_diff of two co-located Citus distributed tables, shard by shard.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_CITUS_DIFF_H
#define BACKFILL_CITUS_DIFF_H

#include "postgres.h"

#include "executor/spi.h"

typedef struct BackfillCitusDiffSide
{
	const char *name;			/* "a" or "b" */
	const char *query;
	SPIPlanPtr	plan;
	TupleDesc	desc;			/* the rows the query returns */
	const int  *keyidx;			/* the key columns in desc, in key order */
	const int  *rowidx;			/* every column in desc, in a's column order */
} BackfillCitusDiffSide;
extern char *BackfillCitusDiffQuery(BackfillCitusDiffSide sides[2], int nkeys, int ncols,
									const uint64 seeds[3]);

#endif							/* BACKFILL_CITUS_DIFF_H */
