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

#include "nodes/pg_list.h"

#include "validate/diffout.h"
#include "validate/diffside.h"

extern bool BackfillDiffPerShard(BackfillDiffSide *a, BackfillDiffSide *b, List *keys,
								 BackfillDiffOutput *out, MemoryContext rowcxt);

#endif							/* BACKFILL_CITUS_DIFF_H */
