/*-------------------------------------------------------------------------
 *
 * src/write/replace.c
 *		backfill_replace_partition and backfill_undo: the SQL API of the swap.
 *
 * backfill_replace_partition recomputes one leaf partition from a query and
 * swaps the result in atomically (staging.c builds and fills the copy,
 * swap.c swaps it), then writes one backfill_log record, all in the caller's
 * transaction (a run's task, through the write context, has the copy
 * reconciled before the swap).  While the copy is filled the partition is
 * held in SHARE ROW EXCLUSIVE mode, and the parent only when the fill must
 * hold it (FillHoldsParent): lockproto.c has the whole lock protocol, phase
 * by phase, and why.
 *
 * backfill_undo swaps the archive a replacement kept back in, the same way,
 * after proving the partition is still exactly what that replacement wrote.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/resowner.h"
#include "utils/syscache.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/remote.h"
#include "base/spi_util.h"
#include "hash/fingerprint.h"
#include "record/log.h"
#include "write/archive.h"
#include "write/citus_swap.h"
#include "write/lockproto.h"
#include "write/part.h"
#include "write/remotesource.h"
#include "write/replace.h"
#include "write/staging.h"
#include "write/swap.h"

/*
 * Under REPEATABLE READ or SERIALIZABLE the snapshot predates our locks: a
 * row another session wrote into the partition in between would be invisible
 * to the copy and lost by the swap.  Refuse.
 */
void
BackfillRefuseTransactionSnapshot(const char *func)
{
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s must run in a READ COMMITTED transaction", func),
				 errdetail("This transaction's snapshot may predate the locks it takes, and rows written in between would be lost by the swap."),
				 errhint("Run it in READ COMMITTED; readers in any isolation level are safe.")));
}

/* A boolean argument that must not be NULL. */
static bool
BoolArg(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", argname)));
	return PG_GETARG_BOOL(argno);
}

/* An integer argument that must lie in [min, max]. */
static int
IntArg(FunctionCallInfo fcinfo, int argno, const char *argname, int min, int max)
{
	int			v;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", argname)));
	v = PG_GETARG_INT32(argno);
	if (v < min || v > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between %d and %d, not %d", argname, min, max, v)));
	return v;
}

/*
 * The parameters a source sees for partition bp: $1 and $2 its bounds, typed as
 * the key; for LIST, $1 the array of its values.
 */
static ParamListInfo
BoundParams(BackfillPart *bp, int *nargs, Oid *argtypes)
{
	ParamListInfo params;

	if (bp->own.strategy == PARTITION_STRATEGY_RANGE)
	{
		*nargs = 2;
		argtypes[0] = argtypes[1] = bp->own.keytype;
		params = makeParamList(2);
		params->params[0].ptype = params->params[1].ptype = bp->own.keytype;
		params->params[0].pflags = params->params[1].pflags = PARAM_FLAG_CONST;
		params->params[0].value = bp->own.lower;
		params->params[0].isnull = !bp->own.haslower;
		params->params[1].value = bp->own.upper;
		params->params[1].isnull = !bp->own.hasupper;
	}
	else
	{
		int16		typlen;
		bool		typbyval;
		char		typalign;
		int			n = bp->own.nlist + (bp->own.listnull ? 1 : 0);
		Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));
		bool	   *elemnulls = palloc0(sizeof(bool) * Max(n, 1));
		int			dims[1] = {n};
		int			lbs[1] = {1};

		memcpy(elems, bp->own.list, sizeof(Datum) * bp->own.nlist);
		if (bp->own.listnull)
			elemnulls[n - 1] = true;
		get_typlenbyvalalign(bp->own.keytype, &typlen, &typbyval, &typalign);
		*nargs = 1;
		argtypes[0] = get_array_type(bp->own.keytype);
		params = makeParamList(1);
		params->params[0].ptype = argtypes[0];
		params->params[0].pflags = PARAM_FLAG_CONST;
		params->params[0].isnull = false;
		params->params[0].value = PointerGetDatum(construct_md_array(elems, elemnulls, 1, dims, lbs,
																	 bp->own.keytype, typlen, typbyval, typalign));
	}

	return params;
}

/* Does this transaction hold a lock of any mode on relid? */
static bool
HoldsLockOn(Oid relid)
{
	LOCKTAG		tag;

	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	for (LOCKMODE mode = AccessShareLock; mode <= AccessExclusiveLock; mode++)
		if (BackfillLockHeldByMe(&tag, mode))
			return true;
	return false;
}

/* What FillHoldsParent asks of the source, analysed by ProbeSource. */
typedef struct SourceProbe
{
	BackfillPart *bp;
	const char *source;
	int			nargs;
	Oid		   *argtypes;
	bool		holds;			/* out: the parent or DEFAULT partition is held */
} SourceProbe;

/* Analyse the source, and see whether that left the parent or DEFAULT partition held. */
static void
ProbeSource(void *arg)
{
	SourceProbe *p = (SourceProbe *) arg;

	SPI_freeplan(BackfillPrepare(p->source, p->nargs, p->argtypes, "source"));
	p->holds = HoldsLockOn(p->bp->parent) ||
		(OidIsValid(p->bp->defaultpart) && HoldsLockOn(p->bp->defaultpart));
}

/*
 * Whether a replacement of bp from source must hold the parent through its
 * fill (see lockproto.c): the partition has foreign keys, or this
 * transaction holds the parent or its DEFAULT partition, now or once the
 * source is analysed.  The source is analysed in a subtransaction rolled
 * back at once, which lets go of the locks that took.  A function the
 * source calls may still lock the parent as it runs: the swap then gives
 * way to a sibling's, or waits for it (swaplock.c), never deadlocks.
 * Must be called inside SPI.
 */
static bool
FillHoldsParent(BackfillPart *bp, const char *source, int nargs, Oid *argtypes)
{
	SourceProbe probe = {bp, source, nargs, argtypes, false};

	if (BackfillQueryText("SELECT 1 FROM pg_catalog.pg_constraint WHERE contype OPERATOR(pg_catalog.=) 'f'"
						  " AND conrelid IN (SELECT relid FROM pg_catalog.pg_partition_ancestors($1)) LIMIT 1",
						  bp->part) != NULL)
		return true;
	BackfillCallRolledBack(ProbeSource, &probe);
	return probe.holds;
}

/*
 * Lock the partition relid in SHARE ROW EXCLUSIVE mode and describe it.  If
 * it was replaced while we waited, the partition now carrying its name is the
 * one to work on.  The parent is locked first, in SHARE UPDATE EXCLUSIVE
 * mode, when the fill must hold it (source NULL: always), as lockproto.c
 * says; bound_params says that source takes the bounds as $1 (and $2).  Must
 * be called inside SPI.
 */
void
BackfillLockPart(Oid relid, const char *argname, const char *source, bool bound_params,
				 BackfillPart *bp)
{
	Oid			parent;
	Oid			part;
	BackfillCitusRel cr;
	bool		holdsparent = true;

	BackfillResolvePart(relid, argname, bp);
	BackfillCheckPartRights(bp);
	parent = bp->parent;

	/*
	 * SHARE UPDATE EXCLUSIVE conflicts with itself, so such replacements
	 * under one parent queue here, before any work, instead of each holding
	 * the parent while waiting for the others to let it go for the swap.
	 */
	if (source == NULL)
		LockRelationOid(parent, ShareUpdateExclusiveLock);
	else
	{
		Oid			argtypes[2];
		int			nargs = 0;

		if (bound_params)
			(void) BoundParams(bp, &nargs, argtypes);
		holdsparent = FillHoldsParent(bp, source, nargs, argtypes);
		if (holdsparent)
			LockRelationOid(parent, ShareUpdateExclusiveLock);
	}
	part = BackfillLockFollowingName(bp->part, bp->name, bp->nsp, "partition", ShareRowExclusiveLock);

	/* describe it again, under the lock */
	BackfillResolvePart(part, argname, bp);
	BackfillCheckPartRights(bp);
	BackfillRefuseInUse(part, "replace partition");
	if (bp->parent != parent)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("partition %s was moved to another partitioned table while waiting for its lock",
						bp->qualname)));

	/*
	 * On Citus, the same locks on every node: writes through a worker wait
	 * too, and DDL on the parent (tomorrow's partition) waits for the fill
	 * only where it would on one server.
	 */
	BackfillCitusDescribe(parent, &cr);
	bp->distcol = NULL;
	if (cr.kind == BACKFILL_CITUS_DISTRIBUTED)
	{
		bp->distcol = cr.distcol ? cr.distcol : "";
		if (holdsparent)
			BackfillCitusLock(parent, true, "SHARE UPDATE EXCLUSIVE");
		BackfillCitusLock(part, true, "SHARE ROW EXCLUSIVE");
		/* and a COPY into the parent, which takes none of those on the partition */
		BackfillCitusHoldOffCopy(parent);
		/*
		 * and a write straight into a shard table of the partition on a
		 * worker: its shards are locked there, through the connections of
		 * this transaction that Citus's own commands on them then take
		 */
		BackfillCitusOnPlacements(part, "LOCK TABLE ONLY ", " IN SHARE MODE", false);
	}

	/* what the fill relies on, from here to the swap */
	BackfillAssertFillLocks(bp, InvalidOid, "fill");
	if (holdsparent)
		BackfillAssertLocked(parent, ShareUpdateExclusiveLock, "fill");
}

/* The partition constraint of bp, as SQL, into bp->constraintdef. */
static void
ReadConstraintDef(void *arg)
{
	BackfillPart *bp = (BackfillPart *) arg;

	bp->constraintdef = BackfillQueryText("SELECT pg_catalog.pg_get_partition_constraintdef($1)",
										  bp->part);
}

/*
 * The SQL texts of the partition's bound and constraint, with search_path
 * pinned.  Reading the constraint locks the ancestors (generate_partition_qual):
 * that is done in a subtransaction rolled back at once, so that the fill
 * does not hold the parent (the bound cannot change while the partition is
 * locked).
 */
void
BackfillDescribeBound(BackfillPart *bp)
{
	bp->boundspec = BackfillQueryText("SELECT pg_catalog.pg_get_expr(relpartbound, oid)"
									  " FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) $1",
									  bp->part);
	BackfillCallRolledBack(ReadConstraintDef, bp);
	if (bp->boundspec == NULL || bp->constraintdef == NULL)
		elog(ERROR, "could not read the bound of partition %u", bp->part);
}

/* The composite backfill_swap. */
static Datum
SwapResultDatum(FunctionCallInfo fcinfo, BackfillSwapResult *sr,
				BackfillFingerprint *before, BackfillFingerprint *after, int64 logid)
{
	TupleDesc	tupdesc;
	Datum		values[9];
	bool		nulls[9] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = ObjectIdGetDatum(sr->newpart);
	values[1] = Int64GetDatum((int64) before->rows);
	values[2] = Int64GetDatum((int64) after->rows);
	values[3] = CStringGetTextDatum(BackfillFingerprintText(before));
	values[4] = CStringGetTextDatum(BackfillFingerprintText(after));
	values[5] = ObjectIdGetDatum(sr->archived);
	nulls[5] = !OidIsValid(sr->archived);
	values[6] = Int32GetDatum(sr->attempts);
	values[7] = Float8GetDatum(sr->swap_ms);
	values[8] = Int64GetDatum(logid);
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls));
}

/*
 * details of a log record: {"attempts": n, "swap_ms": x, "bound": ...,
 * "archived_as": ..., then for a replacement where its time went
 * ("fingerprint_ms", "fill_ms", "index_ms", "analyze_ms"), ...}
 */
static char *
SwapDetails(BackfillPart *bp, BackfillSwapResult *sr, BackfillStageTimes *times,
			const char *extra_key, const char *extra)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"attempts\": %d, \"swap_ms\": %.3f, \"bound\": ", sr->attempts, sr->swap_ms);
	escape_json(&buf, bp->boundspec);
	appendStringInfoString(&buf, ", \"archived_as\": ");
	if (OidIsValid(sr->archived))
		escape_json(&buf, BackfillQualifiedName(sr->archived));
	else
		appendStringInfoString(&buf, "null");
	if (times)
		appendStringInfo(&buf, ", \"fingerprint_ms\": %.3f, \"fill_ms\": %.3f, \"index_ms\": %.3f, \"analyze_ms\": %.3f",
						 times->fingerprint_ms, times->fill_ms, times->index_ms, times->analyze_ms);
	if (extra_key)
	{
		appendStringInfo(&buf, ", \"%s\": ", extra_key);
		escape_json(&buf, extra);
	}
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/* Write the backfill_log record of a swap and return its id. */
static int64
LogSwap(BackfillWriteContext *ctx, const char *operation, BackfillPart *bp, BackfillSwapResult *sr,
		BackfillFingerprint *before, BackfillFingerprint *after, BackfillStageTimes *times,
		const char *extra_key, const char *extra)
{
	return BackfillLogWriteChange(ctx->extschema, operation, bp->qualparent, bp->qualname,
								  before, after, SwapDetails(bp, sr, times, extra_key, extra),
								  ctx->run_id, ctx->why);
}

/*
 * Build the staging table of partition bp and fill it from source: the
 * definition copied, the old rows fingerprinted (before), the new rows
 * inserted frozen and fingerprinted (after), the indexes built, statistics
 * gathered, foreign keys added.  An empty result for a partition that has
 * rows is an error unless allow_empty.  Must be called inside SPI, with bp
 * locked by BackfillLockPart.
 */
Oid
BackfillStage(BackfillPart *bp, const char *source, int nargs, Oid *argtypes, ParamListInfo params,
			  bool allow_empty, BackfillFingerprint *before, BackfillFingerprint *after,
			  BackfillStageTimes *times)
{
	Oid			staging;
	SPIPlanPtr	plan;
	int			nest;
	BackfillStageTimes ignored;
	instr_time	start;

	BackfillAssertFillLocks(bp, InvalidOid, "fill");
	if (times == NULL)
		times = &ignored;
	memset(times, 0, sizeof(BackfillStageTimes));
	nest = BackfillPinSearchPath();
	BackfillDescribeBound(bp);
	BackfillRefuseReferencedPartition(bp);
	if (bp->distcol)
		BackfillCitusRefuseReplace(bp);
	staging = BackfillCreateStaging(bp);
	/* on Citus: distributed while empty, so that no row is written on the coordinator */
	if (bp->distcol)
		BackfillCitusDistributeStaging(bp, staging);
	BackfillUnpinSearchPath(nest);

	INSTR_TIME_SET_CURRENT(start);
	BackfillFingerprintRel(bp->part, NULL, false, before);
	times->fingerprint_ms = BackfillMsSince(start);

	plan = BackfillPrepareFill(bp, staging, source, nargs, argtypes);
	INSTR_TIME_SET_CURRENT(start);
	if (bp->distcol)
	{
		BackfillCitusFillStaging(bp, staging, plan, source, nargs, argtypes, params);
		BackfillFingerprintRel(staging, NULL, false, after);
	}
	else
		BackfillFillStaging(bp, staging, plan, params, after);
	times->fill_ms = BackfillMsSince(start);
	if (after->rows == 0 && before->rows > 0 && !allow_empty)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source returned no rows for partition %s, which has " UINT64_FORMAT " rows",
						bp->qualname, before->rows),
				 errdetail("Replacing it would empty the partition."),
				 errhint("If the partition really is to be emptied, pass allow_empty => true.")));

	nest = BackfillPinSearchPath();
	BackfillFinishStaging(bp, staging, times);
	BackfillUnpinSearchPath(nest);
	return staging;
}

/*
 * Note the old rows' fingerprint in the context; refuse if they are not those
 * a retry expects.  A run trying a task again after its swap gave way passes
 * the old rows the first attempt saw under its lock, before it let the lock
 * go: a write that went into them while the task backed off would be
 * discarded, acknowledged and lost.
 */
static void
RefuseWrittenMeanwhile(BackfillPart *bp, const BackfillFingerprint *before, BackfillWriteContext *ctx)
{
	const char *expected = ctx->expected_before;
	Relation	rel = RelationIdGetRelation(bp->part);
	int			columns = RelationGetDescr(rel)->natts;
	const char *now = psprintf(UINT64_FORMAT " rows of %d columns, %s", before->rows, columns,
							   BackfillFingerprintText(before));
	uint64		then_rows;
	int			then_columns;
	bool		changed;

	RelationClose(rel);
	strlcpy(ctx->before, now, sizeof(ctx->before));
	if (expected == NULL)
		return;

	/*
	 * Columns added or dropped meanwhile (DDL the swap gave way to) change
	 * every row's fingerprint and no row: then only the count can tell.
	 */
	changed = strcmp(expected, now) != 0;
	if (sscanf(expected, UINT64_FORMAT " rows of %d columns", &then_rows, &then_columns) == 2 &&
		then_columns != columns)
		changed = then_rows != before->rows;
	if (changed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("partition %s was written while the replacement waited to try again", bp->qualname),
				 errdetail("It held %s when the swap gave way, and holds %s now: replacing them would discard what was written meanwhile.",
						   expected, now),
				 errhint("Nothing was replaced. To replace the rows written meanwhile with the source's too, try the task again (backfill_retry).")));
}

/*
 * p->source computed on p->source_server with the partition's bounds
 * (params), into a temporary table: the query that reads it.
 */
static char *
ReadOnStandby(const BackfillReplaceParams *p, BackfillPart *bp, int nargs, Oid *argtypes,
			  ParamListInfo params, BackfillWriteContext *ctx)
{
	BackfillRemoteSourceParams rp;

	memset(&rp, 0, sizeof(rp));
	rp.target = bp->part;
	rp.server = p->source_server;
	rp.source = p->source;
	rp.nargs = nargs;
	rp.argtypes = argtypes;
	rp.params = params;
	rp.throttle = ctx->throttle;
	return BackfillRemoteSource(&rp);
}

/*
 * Replace partition p->part by the rows of p->source, in the context ctx:
 * stage the new rows, reconcile them when the context asks (before the swap
 * asks for its locks, so readers do not wait for it), swap them in, record
 * the replacement.  Into r what it did.
 */
void
BackfillReplace(const BackfillReplaceParams *p, BackfillWriteContext *ctx, BackfillReplaceResult *r)
{
	BackfillPart bp;
	BackfillStageTimes times;
	Oid			staging;
	Oid			argtypes[2];
	int			nargs;
	ParamListInfo params;
	const char *source = p->source;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	BackfillLockPart(p->part, "part", p->source, true, &bp);
	bp.ctx = ctx;
	BackfillCheckOwnerMayCreate(&bp);
	params = BoundParams(&bp, &nargs, argtypes);
	if (p->source_server != NULL)
		source = ReadOnStandby(p, &bp, nargs, argtypes, params, ctx);
	staging = BackfillStage(&bp, source, nargs, argtypes, params, p->allow_empty,
							&r->before, &r->after, &times);
	RefuseWrittenMeanwhile(&bp, &r->before, ctx);
	if (ctx->reconcile != NIL)
		BackfillWriteReconcile(ctx, psprintf("SELECT * FROM ONLY %s", BackfillQualifiedName(staging)),
							   source);

	BackfillSwapIn(&bp, staging, p->keep_old, p->lock_timeout_ms, p->max_attempts, &r->swap);

	r->log_id = LogSwap(ctx, "replace", &bp, &r->swap, &r->before, &r->after, &times, "source",
						BackfillWriteRecordedSource(ctx, p->source));
	SPI_finish();
}

PG_FUNCTION_INFO_V1(backfill_replace_partition);

/*
 * backfill_replace_partition(part regclass, source text, keep_old boolean,
 *							  allow_empty boolean, lock_timeout_ms integer,
 *							  max_attempts integer, source_server text) RETURNS backfill_swap
 */
Datum
backfill_replace_partition(PG_FUNCTION_ARGS)
{
	BackfillReplaceParams p;
	BackfillReplaceResult r;
	BackfillWriteContext ctx;

	BackfillCheckVersion();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("part must not be NULL")));
	p.part = PG_GETARG_OID(0);
	p.source = BackfillCheckQuery(BackfillArgText(fcinfo, 1, "source"), "source");
	p.keep_old = BoolArg(fcinfo, 2, "keep_old");
	p.allow_empty = BoolArg(fcinfo, 3, "allow_empty");
	p.lock_timeout_ms = IntArg(fcinfo, 4, "lock_timeout_ms", 1, 600000);
	p.max_attempts = IntArg(fcinfo, 5, "max_attempts", 1, 1000);
	p.source_server = PG_NARGS() > 6 && !PG_ARGISNULL(6) ? TextDatumGetCString(PG_GETARG_DATUM(6)) : NULL;
	PreventCommandIfReadOnly("backfill_replace_partition()");
	BackfillRequireCoordinator("backfill_replace_partition");
	BackfillRefuseTransactionSnapshot("backfill_replace_partition");
	if (p.source_server != NULL)
	{
		BackfillRefuseRemoteSourceAfterWrites("backfill_replace_partition");
		BackfillRemoteCheck(p.source_server, "options.source_server", true);
	}

	BackfillWriteContextInit(&ctx, BackfillExtensionSchema(fcinfo));
	BackfillReplace(&p, &ctx, &r);
	PG_RETURN_DATUM(SwapResultDatum(fcinfo, &r.swap, &r.before, &r.after, r.log_id));
}

/*
 * The record logid of backfill_log, read as the log's owner: it must be one
 * the caller sees (by its table's OID), a swap, that kept an archive.
 */
static void
ReadUndoRecord(Oid extschema, int64 logid, char **partname, char **logged_after,
			   char **archivename, Oid *targetoid)
{
	int			rc;

	*targetoid = InvalidOid;
	rc = BackfillStateExec(extschema,
						   psprintf("SELECT operation, partition, fingerprint_after, details OPERATOR(pg_catalog.->>) 'archived_as',"
									" target_oid FROM %s.backfill_log_data WHERE id OPERATOR(pg_catalog.=) $1",
									quote_identifier(get_namespace_name(extschema))),
						   1, (Oid[]) {INT8OID}, (Datum[]) {Int64GetDatum(logid)}, NULL, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read backfill_log");
	if (SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 5, &isnull);

		*targetoid = isnull ? InvalidOid : DatumGetObjectId(d);
	}
	if (SPI_processed == 0 || !BackfillRecordVisible(extschema, *targetoid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("log_id " INT64_FORMAT " is not a record of backfill_log", logid)));
	{
		char	   *op = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		*partname = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
		*logged_after = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
		*archivename = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4);
		if (strcmp(op, "replace") != 0 && strcmp(op, "undo") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("record " INT64_FORMAT " of backfill_log is a %s, not a partition swap",
							logid, op)));
	}
	if (*archivename == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot undo record " INT64_FORMAT ": the old partition was not kept", logid),
				 errhint("Only a replacement made with keep_old => true can be undone.")));
}

PG_FUNCTION_INFO_V1(backfill_undo);

/*
 * backfill_undo(log_id bigint, lock_timeout_ms integer, max_attempts integer)
 *		RETURNS backfill_swap
 */
Datum
backfill_undo(PG_FUNCTION_ARGS)
{
	int64		logid;
	int			lock_timeout_ms;
	int			max_attempts;
	char	   *partname;
	char	   *logged_after;
	char	   *archivename;
	Oid			partoid;
	Oid			archive;
	Oid			targetoid = InvalidOid;
	BackfillPart bp;
	BackfillFingerprint before;
	BackfillFingerprint after;
	BackfillSwapResult sr;
	int			nest;
	int64		newlogid;
	BackfillWriteContext ctx;

	BackfillCheckVersion();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("log_id must not be NULL")));
	logid = PG_GETARG_INT64(0);
	lock_timeout_ms = IntArg(fcinfo, 1, "lock_timeout_ms", 1, 600000);
	max_attempts = IntArg(fcinfo, 2, "max_attempts", 1, 1000);
	PreventCommandIfReadOnly("backfill_undo()");
	BackfillRequireCoordinator("backfill_undo");
	BackfillRefuseTransactionSnapshot("backfill_undo");

	BackfillWriteContextInit(&ctx, BackfillExtensionSchema(fcinfo));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ReadUndoRecord(ctx.extschema, logid, &partname, &logged_after, &archivename,
				   &targetoid);

	archive = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(archivename)),
							   NoLock, true);
	partoid = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(partname)),
							   NoLock, true);
	if (!OidIsValid(archive))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot undo record " INT64_FORMAT ": its archive %s no longer exists",
						logid, archivename)));
	if (!OidIsValid(partoid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot undo record " INT64_FORMAT ": partition %s no longer exists",
						logid, partname)));

	/* detached since (by retention, say), or a table that took the partition's name */
	BackfillRefuseUndoDetached(ctx.extschema, logid, partoid, partname,
							   targetoid, archivename);

	BackfillLockPart(partoid, "the partition of the record", NULL, false, &bp);
	bp.ctx = &ctx;
	if (!BackfillRelOwnerCheck(archive, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to swap it back in", archivename),
				 errhint("%s", BackfillOwnerHint(archive))));
	LockRelationOid(archive, AccessExclusiveLock);
	/* what the checks below rely on, up to the swap */
	BackfillAssertLocked(bp.parent, ShareUpdateExclusiveLock, "undo");
	BackfillAssertFillLocks(&bp, archive, "undo");

	nest = BackfillPinSearchPath();
	BackfillDescribeBound(&bp);
	BackfillRefuseReferencedPartition(&bp);
	BackfillUnpinSearchPath(nest);

	/* the partition must still hold exactly what the replacement wrote */
	BackfillFingerprintRel(bp.part, NULL, false, &before);
	if (strcmp(BackfillFingerprintText(&before), logged_after) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot undo record " INT64_FORMAT ": partition %s changed since", logid, bp.qualname),
				 errdetail("Its fingerprint is %s; the record wrote %s.",
						   BackfillFingerprintText(&before), logged_after),
				 errhint("Undoing now would lose the later changes.")));

	nest = BackfillPinSearchPath();
	/* the archive proves the bound by a valid constraint, checked now, off the parent's lock */
	BackfillExec(psprintf("ALTER TABLE %s ADD CONSTRAINT backfill_partition_bound CHECK (%s)",
						  BackfillQualifiedName(archive), bp.constraintdef));
	BackfillUnpinSearchPath(nest);
	BackfillFingerprintRel(archive, NULL, false, &after);

	BackfillSwapIn(&bp, archive, true, lock_timeout_ms, max_attempts, &sr);

	newlogid = LogSwap(&ctx, "undo", &bp, &sr, &before, &after, NULL, "undoes",
					   psprintf(INT64_FORMAT, logid));

	SPI_finish();
	PG_RETURN_DATUM(SwapResultDatum(fcinfo, &sr, &before, &after, newlogid));
}
