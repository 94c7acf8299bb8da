/*-------------------------------------------------------------------------
 *
 * src/validate/diffout.h
 *		A diff's rows: shown as jsonb, and where they go.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_DIFFOUT_H
#define BACKFILL_DIFFOUT_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

/* What a keyed diff says of a key: the change column of backfill_diff. */
typedef enum BackfillDiffChange
{
	BACKFILL_DIFF_ADDED,		/* only b has a row of the key */
	BACKFILL_DIFF_REMOVED,		/* only a has one */
	BACKFILL_DIFF_CHANGED		/* both have one, and they differ */
} BackfillDiffChange;

#define BACKFILL_DIFF_NCHANGES	3

/*
 * Where a keyed diff's rows go, in the order it finds them: each into
 * backfill_diff's result (store, if any), counted by change, and the first
 * sample_max kept as to_jsonb shows a row of backfill_diff.  A diff that
 * starts again (another hash family) clears it all.
 */
typedef struct BackfillDiffOutput
{
	Tuplestorestate *store;		/* backfill_diff's result, or NULL */
	TupleDesc	storedesc;
	int64		count[BACKFILL_DIFF_NCHANGES];	/* rows, by change */
	int			sample_max;
	List	   *sample;			/* the first rows, as jsonb objects, in cxt */
	MemoryContext cxt;
} BackfillDiffOutput;

extern bool BackfillJsonbMayLose(Oid type);
extern Jsonb *BackfillSlotToJsonb(TupleTableSlot *slot, TupleDesc desc, int n, const int *idx);
extern Jsonb *BackfillSlotToTextJsonb(TupleTableSlot *slot, TupleDesc desc, int n,
									  const int *idx);
extern bool BackfillJsonbAlike(Jsonb *a, Jsonb *b);

extern void BackfillDiffOutputInit(BackfillDiffOutput *out, Tuplestorestate *store,
								   TupleDesc storedesc, int sample_max);
extern void BackfillDiffEmit(BackfillDiffOutput *out, BackfillDiffChange change, Jsonb *key,
							 Jsonb *arow, Jsonb *brow);
extern void BackfillDiffOutputClear(BackfillDiffOutput *out);
extern char *BackfillDiffSampleText(BackfillDiffOutput *out);

#endif							/* BACKFILL_DIFFOUT_H */
