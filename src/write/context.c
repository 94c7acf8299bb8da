/*-------------------------------------------------------------------------
 *
 * src/write/context.c
 *		The context of a write: how a run's task tells the write layer who
 *		it is, what to reconcile and what to yield to, and hears back how
 *		the write went, through one struct passed down with each call.
 *
 * A direct call of backfill_replace_partition or backfill_merge passes a
 * context of its own, all zero but the extension's schema.  A run passes its
 * run, its reason, its measures and its throttle, and reads back, even after
 * the write failed, whether the swap gave way, when its locks were held and
 * the old rows it saw (to compare on a retry), and the reconciliation.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "validate/validate.h"
#include "write/context.h"

/* A context for a write with nothing of a run: the record goes into extschema. */
void
BackfillWriteContextInit(BackfillWriteContext *ctx, Oid extschema)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->extschema = extschema;
	ctx->cxt = CurrentMemoryContext;
	ctx->reconciled = true;
}

/* The source a write's record names: the context's, when it read its rows from elsewhere. */
const char *
BackfillWriteRecordedSource(const BackfillWriteContext *ctx, const char *source)
{
	return ctx->recorded_source ? ctx->recorded_source : source;
}

/*
 * Reconcile the measures of the rows written (a query) with the source's
 * (the task's source, bound to its window), when the context has measures:
 * the comparison and the verdict into ctx.  Rows that do not reconcile are
 * an error (23514) naming the first measure that differs, unless the
 * context only reports.
 */
void
BackfillWriteReconcile(BackfillWriteContext *ctx, const char *written, const char *source)
{
	BackfillMeasure *m;
	int			n = list_length(ctx->reconcile);
	int			bad;

	ctx->reconciled = true;
	if (n == 0)
		return;
	bad = BackfillReconcile(written, source, ctx->reconcile, ctx->tolerance, &m);
	ctx->comparison = MemoryContextStrdup(ctx->cxt, BackfillMeasuresJson(m, n));
	ctx->reconciled = bad == 0;
	if (bad > 0 && !ctx->report_only)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("reconciliation failed: %s (%d of %d measures differ)",
						BackfillFirstDifference(m, n, "written", "in the source"), bad, n),
				 errdetail("Measures, written and in the source: %s.", ctx->comparison)));
}
