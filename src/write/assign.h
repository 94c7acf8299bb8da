/*-------------------------------------------------------------------------
 *
 * src/write/assign.h
 *		A value converted to a column's type exactly as INSERT converts it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_ASSIGN_H
#define BACKFILL_ASSIGN_H

#include "postgres.h"

#include "nodes/execnodes.h"

extern Expr *BackfillAssignExpr(Oid srctype, int32 srctypmod, Oid srccoll,
								Oid dsttype, int32 dsttypmod);
extern ExprState *BackfillAssignState(Expr *expr);
extern Datum BackfillAssignValue(ExprState *state, ExprContext *econtext,
								 Datum value, bool isnull, bool *resnull);

#endif							/* BACKFILL_ASSIGN_H */
