/*-------------------------------------------------------------------------
 *
 * src/write/assign.c
 *		A value converted to a column's type exactly as INSERT converts it.
 *
 * INSERT and UPDATE convert each value to its column's type and typmod
 * with the parser's assignment coercion (transformAssignedExpr calls
 * coerce_to_target_type with COERCION_ASSIGNMENT and COERCE_IMPLICIT_CAST).
 * An explicit CAST is not the same: it cuts a string or bit string to the
 * column's length, at any depth (array elements, domains, domains over
 * arrays, arrays of domains), where assignment raises 22001 or 22026.  Here
 * the parser's own coercion is built over a placeholder for the value (a
 * CaseTestExpr, as PL/pgSQL does for its assignments) and evaluated in C,
 * so every type shape gets INSERT's semantics without a case of its own.
 *
 * backfill_would_change(stored, given) is its SQL face for MERGE: whether
 * storing given in a column like stored changes the stored bytes, which are
 * what the fingerprint hashes.  A type's equality may call different values
 * equal ('alice' and 'Alice' under a case-insensitive collation, 1.0 and
 * 1.00, '24:00:00' and '1 day', 0 and -0): a backfill must still write them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parse_collate.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"

#include "base/extension.h"
#include "write/assign.h"

/*
 * The assignment of a value of srctype (srctypmod, srccoll) to a column of
 * dsttype (dsttypmod), over a CaseTestExpr standing for the value; NULL
 * when the value is stored as it is.  An error if no assignment exists.
 */
Expr *
BackfillAssignExpr(Oid srctype, int32 srctypmod, Oid srccoll, Oid dsttype, int32 dsttypmod)
{
	CaseTestExpr *value = makeNode(CaseTestExpr);
	Node	   *expr;

	value->typeId = srctype;
	value->typeMod = srctypmod;
	value->collation = srccoll;
	expr = coerce_to_target_type(NULL, (Node *) value, srctype, dsttype, dsttypmod,
								 COERCION_ASSIGNMENT, COERCE_IMPLICIT_CAST, -1);
	if (expr == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("a value of type %s cannot be assigned to a column of type %s",
						format_type_be(srctype), format_type_with_typemod(dsttype, dsttypmod))));
	if (expr == (Node *) value ||
		(IsA(expr, RelabelType) && ((RelabelType *) expr)->arg == (Expr *) value))
		return NULL;
	assign_expr_collations(NULL, expr);
	return (Expr *) expr;
}

/* An executable state for an assignment from BackfillAssignExpr. */
ExprState *
BackfillAssignState(Expr *expr)
{
	return ExecInitExpr(expression_planner(expr), NULL);
}

/*
 * Evaluate an assignment of value (isnull) in econtext's per-tuple memory,
 * which the caller resets.
 */
Datum
BackfillAssignValue(ExprState *state, ExprContext *econtext, Datum value, bool isnull,
					bool *resnull)
{
	econtext->caseValue_datum = value;
	econtext->caseValue_isNull = isnull;
	return ExecEvalExprSwitchContext(state, econtext, resnull);
}

/* What backfill_would_change keeps between the calls of one call site. */
typedef struct WouldChange
{
	ExprState  *assign;			/* NULL when given is stored as it is */
	ExprContext *econtext;
	int16		typlen;
	bool		typbyval;
} WouldChange;

/* Set up backfill_would_change for its call site: the types of its two arguments. */
static WouldChange *
WouldChangeSetUp(FmgrInfo *flinfo)
{
	MemoryContext old = MemoryContextSwitchTo(flinfo->fn_mcxt);
	WouldChange *wc = palloc0(sizeof(WouldChange));
	Node	   *stored;
	Node	   *given;
	Expr	   *assign;

	if (flinfo->fn_expr == NULL || !IsA(flinfo->fn_expr, FuncExpr) ||
		list_length(((FuncExpr *) flinfo->fn_expr)->args) != 2)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("backfill_would_change must be called with two arguments in an expression")));
	stored = linitial(((FuncExpr *) flinfo->fn_expr)->args);
	given = lsecond(((FuncExpr *) flinfo->fn_expr)->args);
	if (exprType(stored) == UNKNOWNOID || exprType(given) == UNKNOWNOID)
		ereport(ERROR,
				(errcode(ERRCODE_INDETERMINATE_DATATYPE),
				 errmsg("the arguments of backfill_would_change must have a known type")));
	assign = BackfillAssignExpr(exprType(given), exprTypmod(given), exprCollation(given),
								exprType(stored), exprTypmod(stored));
	if (assign != NULL)
	{
		wc->assign = BackfillAssignState(assign);
		wc->econtext = CreateStandaloneExprContext();
	}
	get_typlenbyval(exprType(stored), &wc->typlen, &wc->typbyval);
	MemoryContextSwitchTo(old);
	flinfo->fn_extra = wc;
	return wc;
}

PG_FUNCTION_INFO_V1(backfill_would_change);

/*
 * backfill_would_change(stored "any", given "any") RETURNS boolean
 *
 * Would assigning given to a column of stored's type and typmod store other
 * bytes than stored's (NULL-safe)?  The assignment raises what INSERT raises.
 */
Datum
backfill_would_change(PG_FUNCTION_ARGS)
{
	WouldChange *wc = (WouldChange *) fcinfo->flinfo->fn_extra;
	Datum		given = PG_GETARG_DATUM(1);
	bool		givennull = PG_ARGISNULL(1);

	BackfillCheckVersion();
	if (wc == NULL)
		wc = WouldChangeSetUp(fcinfo->flinfo);
	if (wc->assign != NULL)
	{
		ResetExprContext(wc->econtext);
		given = BackfillAssignValue(wc->assign, wc->econtext, given, givennull, &givennull);
	}
	if (PG_ARGISNULL(0) || givennull)
		PG_RETURN_BOOL(PG_ARGISNULL(0) != givennull);
	PG_RETURN_BOOL(!datum_image_eq(PG_GETARG_DATUM(0), given, wc->typbyval, wc->typlen));
}

PG_FUNCTION_INFO_V1(backfill_bytes_differ);

/*
 * backfill_bytes_differ(stored anyelement, given anyelement) RETURNS boolean
 *
 * Are the two values of one type stored with other bytes (NULL-safe)?
 * backfill_would_change for a value that needs no assignment, and IMMUTABLE:
 * what a MERGE into a Citus distributed table may call.
 */
Datum
backfill_bytes_differ(PG_FUNCTION_ARGS)
{
	WouldChange *wc = (WouldChange *) fcinfo->flinfo->fn_extra;

	BackfillCheckVersion();
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_BOOL(PG_ARGISNULL(0) != PG_ARGISNULL(1));
	/* the type's length and passing, looked up once per call site */
	if (wc == NULL)
	{
		wc = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(WouldChange));
		get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, 0), &wc->typlen, &wc->typbyval);
		fcinfo->flinfo->fn_extra = wc;
	}
	PG_RETURN_BOOL(!datum_image_eq(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), wc->typbyval, wc->typlen));
}
