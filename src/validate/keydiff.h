/*-------------------------------------------------------------------------
 *
 * src/validate/keydiff.h
 *		The keyed diff computed here, as the executor produces the rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_KEYDIFF_H
#define BACKFILL_KEYDIFF_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include "validate/diffout.h"
#include "validate/diffside.h"

extern void BackfillDiffHere(BackfillDiffSide *a, BackfillDiffSide *b, List *keys,
							 BackfillDiffOutput *out, MemoryContext cxt, MemoryContext rowcxt);

#endif							/* BACKFILL_KEYDIFF_H */
