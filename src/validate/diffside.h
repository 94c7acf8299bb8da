/*-------------------------------------------------------------------------
 *
 * src/validate/diffside.h
 *		The two queries of a keyed diff: prepared, keyed and matched.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_DIFFSIDE_H
#define BACKFILL_DIFFSIDE_H

#include "postgres.h"

#include "executor/spi.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"

/* One side of a keyed diff: its query, and where its key and its columns are. */
typedef struct BackfillDiffSide
{
	const char *name;			/* "a" or "b" */
	const char *text;			/* the query, checked */
	SPIPlanPtr	plan;
	TupleDesc	origdesc;		/* the row type the query returns */
	TupleDesc	desc;			/* blessed, in a's column order */
	bool		lossy;			/* a column whose values jsonb may show alike (json, floats) */
	bool		keylossy;		/* a key column so: keys are shown by their text */
	TupleDesc	keydesc;		/* blessed row type of the key columns */
	int			nkeys;
	int		   *keyidx;			/* key columns, in key order */
	int		   *rowidx;			/* all columns, in a's order */
} BackfillDiffSide;

extern void BackfillDiffPrepare(BackfillDiffSide *side, const char *name, const char *query,
								List *keys);
extern void BackfillDiffMatchColumns(BackfillDiffSide *a, BackfillDiffSide *b);
extern Jsonb *BackfillDiffKeyJsonb(BackfillDiffSide *side, TupleTableSlot *slot, const int *idx);
extern void BackfillDiffReportDuplicate(List *keys, const char *side, Jsonb *key);

#endif							/* BACKFILL_DIFFSIDE_H */
