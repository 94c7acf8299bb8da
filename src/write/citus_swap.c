/*-------------------------------------------------------------------------
 *
 * src/write/citus_swap.c
 *		backfill_replace_partition on a Citus distributed partitioned table:
 *		the staging table distributed before it is filled, the fill pushed
 *		down, the locks taken on every node.
 *
 * On the coordinator a distributed table is a shell without rows; its rows
 * live in shards on the workers, out of reach of the C fill (which writes
 * the local heap, frozen) and of C-level locks (which stay on the
 * coordinator).  So on a distributed parent:
 *
 * - the staging table is created as locally (staging.c: the same definition,
 *   the bound CHECK) and at once, still empty, distributed co-located with
 *   the parent: no row is ever written on the coordinator, and ATTACH has
 *   nothing to copy under its lock;
 * - it is filled by one INSERT ... SELECT, which Citus pushes down shard to
 *   shard when the source reads co-located tables; what the C fill checks
 *   per row is checked in SQL first (rows outside the bound), or by the
 *   shards' own constraints and indexes (NOT NULL, CHECK, unique keys);
 * - every lock (lockproto.c has them all) is also taken with SQL LOCK TABLE,
 *   which Citus propagates to the workers' copies of the tables (writes
 *   through a worker lock those), and the swap's attempts send their
 *   lock_timeout to the workers with citus.propagate_set_commands = 'local'.  A worker's lock timeout comes
 *   back as XX000 "failure on connection marked as essential", after a
 *   WARNING carrying the worker's 55P03 (seen whatever log_min_messages
 *   and client_min_messages are); the retry loop takes it for 55P03.
 *
 * The pushed-down INSERTs write plain rows on the workers, which a
 * REPEATABLE READ reader whose snapshot predates the swap would not see:
 * each new shard's rows are then frozen on its worker (freeze.c), in the
 * connection of this transaction that created and filled it, so that such a
 * reader sees the new day, as on one server.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "base/spi_util.h"
#include "write/citus_swap.h"
#include "write/lockproto.h"
#include "write/part.h"
#include "write/staging.h"

/*
 * Refuse what a distributed partition cannot be replaced with: foreign keys
 * (staging.c adds them after the fill, which Citus restricts) and a parent
 * that is not distributed on a column (a single-shard table).
 */
void
BackfillCitusRefuseReplace(BackfillPart *bp)
{
	if (bp->distcol[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot replace partition %s: its parent %s is a distributed table without a distribution column",
						bp->qualname, bp->qualparent)));
	if (BackfillQueryText("SELECT pg_catalog.string_agg(conname::pg_catalog.text, ', ') FROM pg_catalog.pg_constraint"
						  " WHERE conrelid OPERATOR(pg_catalog.=) $1 AND contype OPERATOR(pg_catalog.=) 'f'",
						  bp->part) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot replace partition %s of distributed table %s: it has foreign keys",
						bp->qualname, bp->qualparent),
				 errdetail("On Citus the staging table would have to carry them while it is filled.")));
}

/* Whether this transaction holds relid in ACCESS SHARE mode (that mode itself). */
static bool
HoldsAccessShare(Oid relid)
{
	LOCKTAG		tag;

	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	return BackfillLockHeldByMe(&tag, AccessShareLock);
}

/*
 * Distribute the empty staging table on the parent's column, co-located with
 * the parent.  Citus then holds the parent in ACCESS SHARE mode to the end of
 * the transaction, which would keep DDL such as creating tomorrow's partition waiting for the whole
 * fill: unless this transaction held it before, it is let go again, as the
 * fill on one server does not hold the parent (the partition's lock keeps the
 * parent from being dropped, and the swap checks it again under its locks).
 * With search_path pinned.
 */
void
BackfillCitusDistributeStaging(BackfillPart *bp, Oid staging)
{
	Oid			types[3] = {REGCLASSOID, TEXTOID, TEXTOID};
	Datum		values[3];
	bool		held = HoldsAccessShare(bp->parent);

	values[0] = ObjectIdGetDatum(staging);
	values[1] = CStringGetTextDatum(bp->distcol);
	values[2] = CStringGetTextDatum(bp->qualparent);
	if (SPI_execute_with_args("SELECT pg_catalog.create_distributed_table($1, $2, colocate_with => $3)",
							  3, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not distribute the staging table of %s", bp->qualname);
	CommandCounterIncrement();
	/* (as many times as Citus took it, a few at most) */
	for (int i = 0; !held && i < 8 && HoldsAccessShare(bp->parent); i++)
		UnlockRelationOid(bp->parent, AccessShareLock);
}

/*
 * The row checks the C fill makes per row, as one query over the source:
 * rows outside the partition's constraint, NULLs in its NOT NULL columns,
 * rows failing its CHECK constraints (the shards would refuse the last two
 * too, but name a shard of the staging table).  Raise on the first that
 * fails, with a count and an example.  Inside SPI.
 */
static void
RefuseBadRows(BackfillPart *bp, TupleDesc src, const char *source, int nargs, Oid *argtypes,
			  ParamListInfo params)
{
	StringInfoData sql;
	List	   *what = NIL;		/* per condition after the bound: its error message */
	List	   *codes = NIL;	/* ... and its SQLSTATE */
	SPIPlanPtr	plan;
	int			ncond;

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT ARRAY[pg_catalog.count(*) FILTER (WHERE NOT COALESCE((%s), false))",
					 bp->constraintdef);
	for (int i = 0; i < src->natts; i++)
	{
		const char *col = NameStr(TupleDescAttr(src, i)->attname);
		HeapTuple	tup = SearchSysCacheAttName(bp->part, col);
		bool		notnull = false;

		if (HeapTupleIsValid(tup))
		{
			notnull = ((Form_pg_attribute) GETSTRUCT(tup))->attnotnull;
			ReleaseSysCache(tup);
		}
		if (!notnull)
			continue;
		appendStringInfo(&sql, ", pg_catalog.count(*) FILTER (WHERE %s IS NULL)", quote_identifier(col));
		codes = lappend_int(codes, ERRCODE_NOT_NULL_VIOLATION);
		what = lappend(what, psprintf("null value in column \"%s\" of partition %s violates not-null constraint",
									  col, bp->qualname));
	}
	{
		SPITupleTable *checks;

		if (SPI_execute_with_args("SELECT conname, pg_catalog.pg_get_expr(conbin, conrelid) FROM pg_catalog.pg_constraint"
								  " WHERE conrelid OPERATOR(pg_catalog.=) $1 AND contype OPERATOR(pg_catalog.=) 'c'"
								  " ORDER BY conname", 1, (Oid[]) {OIDOID},
								  (Datum[]) {ObjectIdGetDatum(bp->part)}, NULL, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read the CHECK constraints of %s", bp->qualname);
		checks = SPI_tuptable;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			appendStringInfo(&sql, ", pg_catalog.count(*) FILTER (WHERE NOT COALESCE((%s), true))",
							 SPI_getvalue(checks->vals[i], checks->tupdesc, 2));
			codes = lappend_int(codes, ERRCODE_CHECK_VIOLATION);
			what = lappend(what, psprintf("a row of the source for partition %s violates check constraint \"%s\"",
										  bp->qualname, SPI_getvalue(checks->vals[i], checks->tupdesc, 1)));
		}
	}
	appendStringInfo(&sql, "] FROM (\n%s\n) AS s", source);
	ncond = 1 + list_length(what);

	plan = BackfillPrepare(sql.data, nargs, argtypes, "source");
	if (SPI_execute_plan_with_paramlist(plan, params, true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not check the source's rows for %s", bp->qualname);
	{
		bool		isnull;
		ArrayType  *counts = DatumGetArrayTypeP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		int64	   *n = (int64 *) ARR_DATA_PTR(counts);

		if (n[0] > 0)
			ereport(ERROR,
					(errcode(ERRCODE_CHECK_VIOLATION),
					 errmsg_plural("%lld row of the source falls outside partition %s",
								   "%lld rows of the source fall outside partition %s",
								   n[0], (long long) n[0], bp->qualname),
					 errdetail("The partition holds %s.", bp->boundspec),
					 errhint("Filter the source on the partition's bounds, $1 and $2 (for LIST, $1 is the array of its values).")));
		for (int c = 1; c < ncond; c++)
			if (n[c] > 0)
				ereport(ERROR,
						(errcode(list_nth_int(codes, c - 1)),
						 errmsg("%s", (char *) list_nth(what, c - 1)),
						 errdetail_plural("%lld row of the source does.", "%lld rows of the source do.",
										  n[c], (long long) n[c])));
	}
	SPI_freeplan(plan);
}

/*
 * Fill the distributed staging table from source with one INSERT ...
 * SELECT (the columns the source returns, by name; the others get their
 * defaults), after checking the rows against the bound.  A key given twice
 * is an error naming the partition.  Inside SPI.
 */
void
BackfillCitusFillStaging(BackfillPart *bp, Oid staging, SPIPlanPtr srcplan, const char *source,
						 int nargs, Oid *argtypes, ParamListInfo params)
{
	TupleDesc	src = BackfillPlanResultDesc(srcplan);
	StringInfoData cols;
	SPIPlanPtr	plan;
	MemoryContext cxt = CurrentMemoryContext;

	BackfillAssertFillLocks(bp, staging, "fill");
	RefuseBadRows(bp, src, source, nargs, argtypes, params);
	initStringInfo(&cols);
	for (int i = 0; i < src->natts; i++)
		appendStringInfo(&cols, "%s%s", i ? ", " : "", quote_identifier(NameStr(TupleDescAttr(src, i)->attname)));
	plan = BackfillPrepare(psprintf("INSERT INTO %s (%s) SELECT %s FROM (\n%s\n) AS s",
									BackfillQualifiedName(staging), cols.data, cols.data, source),
						   nargs, argtypes, "source");
	PG_TRY();
	{
		if (SPI_execute_plan_with_paramlist(plan, params, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not fill the staging table of %s", bp->qualname);
	}
	PG_CATCH();
	{
		BackfillRethrowDuplicateKey(bp, cxt);
	}
	PG_END_TRY();
	SPI_freeplan(plan);
	CommandCounterIncrement();
	/* the shards' rows frozen, as the local fill writes them (freeze.c) */
	BackfillCitusOnPlacements(staging,
							  psprintf("SELECT %s.backfill_freeze_new_rows(",
									   quote_identifier(get_namespace_name(BackfillInstalledSchema()))),
							  ")", true);
}

/*
 * Set when, during the swap's LOCK TABLE, Citus reported a worker's lock
 * timeout (a WARNING with SQLSTATE 55P03, before failing the connection).
 */
static bool WorkerLockTimedOut = false;
static bool WarningsUnlogged = false;	/* the server log was not to take a WARNING */
static emit_log_hook_type PrevEmitLogHook = NULL;

/*
 * emit_log_hook while the swap's locks are taken: notice a worker's lock
 * timeout, and keep out of the server log the WARNINGs it was not to take.
 */
static void
NoticeWorkerLockTimeout(ErrorData *edata)
{
	if (edata->elevel == WARNING && edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE)
		WorkerLockTimedOut = true;
	if (edata->elevel == WARNING && WarningsUnlogged)
		edata->output_to_server = false;
	if (PrevEmitLogHook)
		PrevEmitLogHook(edata);
}

/*
 * Take the swap's ACCESS EXCLUSIVE locks on every node: LOCK TABLE ONLY on
 * the parent, the partition and the DEFAULT partition, with lock_timeout
 * timeout_ms sent to the workers, then lock_timeout back to restore (the
 * value before the attempt).  Called inside the attempt's subtransaction,
 * inside SPI, in a GUC nest level the caller closes.
 */
void
BackfillCitusLockForSwap(BackfillPart *bp, int timeout_ms, const char *restore)
{
	StringInfoData rels;
	int			nest;

	/* taken on this node first (swaplock.c), never by files on Citus */
	BackfillAssertLocked(bp->parent, AccessExclusiveLock, "swap lock");
	BackfillAssertLocked(bp->part, AccessExclusiveLock, "swap lock");
	if (OidIsValid(bp->defaultpart))
		BackfillAssertLocked(bp->defaultpart, AccessExclusiveLock, "swap lock");
	(void) set_config_option("citus.propagate_set_commands", "local", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);

	/*
	 * A WARNING reaches emit_log_hook only if it is to go somewhere: when the
	 * server log is not to take one (log_min_messages above it), it is let in
	 * for this statement, and the hook keeps it out again, so the worker's
	 * lock timeout is seen whatever the log levels.
	 */
	WarningsUnlogged = log_min_messages == LOG || log_min_messages > WARNING;
	nest = NewGUCNestLevel();
	if (WarningsUnlogged)
		(void) set_config_option("log_min_messages", "warning", PGC_SUSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	BackfillExec(psprintf("SET LOCAL lock_timeout = %d", timeout_ms));
	initStringInfo(&rels);
	appendStringInfo(&rels, "%s, %s", bp->qualparent, bp->qualname);
	if (OidIsValid(bp->defaultpart))
		appendStringInfo(&rels, ", %s", BackfillQualifiedName(bp->defaultpart));
	WorkerLockTimedOut = false;
	PrevEmitLogHook = emit_log_hook;
	emit_log_hook = NoticeWorkerLockTimeout;
	PG_TRY();
	{
		BackfillExec(psprintf("LOCK TABLE ONLY %s IN ACCESS EXCLUSIVE MODE", rels.data));
	}
	PG_FINALLY();
	{
		emit_log_hook = PrevEmitLogHook;
	}
	PG_END_TRY();
	AtEOXact_GUC(true, nest);
	WarningsUnlogged = false;
	BackfillExec(psprintf("SET LOCAL lock_timeout = %s", quote_literal_cstr(restore)));
}

/*
 * Is edata how a worker's lock timeout reaches the coordinator?  Citus
 * reports the worker's 55P03 as a WARNING, then fails the transaction's
 * connection to it with XX000 "failure on connection marked as essential";
 * the same XX000 without that WARNING (a worker gone) is not a lock timeout.
 */
bool
BackfillCitusLockTimedOut(ErrorData *edata)
{
	return WorkerLockTimedOut && edata->sqlerrcode == ERRCODE_INTERNAL_ERROR && edata->message != NULL &&
		strncmp(edata->message, "failure on connection marked as essential",
				strlen("failure on connection marked as essential")) == 0;
}
