/*-------------------------------------------------------------------------
 *
 * src/write/swaplock.c
 *		Taking the locks of a partition swap without deadlocking or stalling
 *		other sessions.
 *
 * Which locks the swap takes, in which order, on top of those the fill holds
 * already, and why: lockproto.c (its "swap lock" phase).  How they are
 * waited for:
 *
 * - Every lock of the swap is taken in a subtransaction with a short
 *   lock_timeout; on 55P03 the subtransaction is rolled back, which drops
 *   those locks and our place in their queues, and the attempt is retried
 *   after a back-off with jitter (as pg_repack does).
 *
 * - No single wait lasts longer than half of deadlock_timeout: an attempt of
 *   lock_timeout_ms is cut into such slices.  Another session that starts
 *   waiting for us while we wait for it is found by our own check before its
 *   deadlock detector runs, so PostgreSQL never has to kill it.
 *
 * - Before each slice, and after each timed-out one (when we wait for
 *   nothing), we look for a session that waits for a lock this transaction
 *   holds (pg_blocking_pids) while holding a lock on one of the relations the
 *   swap must lock.  Such a session (pg_partman's run_maintenance() that read
 *   the parent and now creates a partition, a writer of the partition, an
 *   ANALYZE after a read) cannot go on before we end, and we cannot swap
 *   before it ends: retrying is futile.  The swap fails at once with 55P03
 *   naming it; the error releases every lock the call took, so that session
 *   goes on after at most one slice.  backfill_run retries such a task after
 *   a back-off, in a new subtransaction that takes every lock afresh.
 *
 * - When the attempts run out, the error names the relation the last attempt
 *   waited for and the sessions that held a lock on it at that moment.
 *
 * So the swap never waits for a session that waits for it (no deadlock), and
 * no session waits for the swap's own attempts longer than one slice.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "base/citus.h"
#include "base/spi_util.h"
#include "write/citus_swap.h"
#include "write/context.h"
#include "write/lockproto.h"
#include "write/swaplock.h"

/* Tell the write's context that its swap gives way to a session waiting for it (a run tries again). */
static void
GiveWay(BackfillPart *bp)
{
	if (bp->ctx)
		bp->ctx->gave_way = true;
}

/* The tables that the foreign keys of the partition and its ancestors point to, in OID order. */
static List *
ReferencedTables(BackfillPart *bp)
{
	List	   *result = NIL;
	int			rc = SPI_execute_with_args(
		"SELECT DISTINCT confrelid FROM pg_catalog.pg_constraint"
		" WHERE contype OPERATOR(pg_catalog.=) 'f'"
		"   AND conrelid IN (SELECT relid FROM pg_catalog.pg_partition_ancestors($1)) ORDER BY 1",
		1, (Oid[]) {OIDOID}, (Datum[]) {ObjectIdGetDatum(bp->part)}, NULL, false, 0);

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read the foreign keys of %s", bp->qualname);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		result = lappend_oid(result, DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
																	SPI_tuptable->tupdesc, 1, &isnull)));
	}
	return result;
}

/* Every relation the swap locks, as an oid[]: a session holding one of them is in our way. */
static Datum
SwapRelations(BackfillPart *bp, List *referenced, bool parent)
{
	List	   *rels = list_make2_oid(bp->parent, bp->part);
	ListCell   *lc;
	Datum	   *elems;

	if (parent && OidIsValid(bp->defaultpart))
		rels = list_concat_unique_oid(rels, find_all_inheritors(bp->defaultpart, NoLock, NULL));
	foreach(lc, referenced)
		rels = list_concat_unique_oid(rels, find_all_inheritors(lfirst_oid(lc), NoLock, NULL));
	elems = palloc(sizeof(Datum) * list_length(rels));
	foreach(lc, rels)
		elems[foreach_current_index(lc)] = ObjectIdGetDatum(lfirst_oid(lc));
	return PointerGetDatum(construct_array(elems, list_length(rels), OIDOID, sizeof(Oid), true,
										   TYPALIGN_INT));
}

/*
 * A session that waits for our lock on the partition (a write through the
 * parent that must lock it) holds the parent, which the swap needs: it will
 * not let go before we do, so retrying is futile.  Say so at once.
 */
static void
RefuseQueuedWriters(BackfillPart *bp)
{
	char	   *who = BackfillQueryText(
		"SELECT pg_catalog.format('process %s (%s)', a.pid, pg_catalog.left(a.query, 60))"
		" FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid OPERATOR(pg_catalog.=) l.pid"
		" WHERE l.locktype OPERATOR(pg_catalog.=) 'relation' AND NOT l.granted"
		"   AND l.relation OPERATOR(pg_catalog.=) $1"
		"   AND l.database OPERATOR(pg_catalog.=) (SELECT oid FROM pg_catalog.pg_database"
		"                     WHERE datname OPERATOR(pg_catalog.=) pg_catalog.current_database())"
		"   AND EXISTS (SELECT 1 FROM pg_catalog.pg_locks p"
		"               WHERE p.pid OPERATOR(pg_catalog.=) l.pid AND p.granted"
		"                 AND p.locktype OPERATOR(pg_catalog.=) 'relation'"
		"                 AND p.database OPERATOR(pg_catalog.=) l.database"
		"                 AND p.relation OPERATOR(pg_catalog.=) ANY (SELECT a.relid FROM"
		"                     pg_catalog.pg_partition_ancestors($1) a WHERE a.relid OPERATOR(pg_catalog.<>) $1))"
		" LIMIT 1", bp->part);

	if (who != NULL)
	{
		GiveWay(bp);
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not swap partition %s: a write waits for it while holding %s",
						bp->qualname, bp->qualparent),
				 errdetail("The waiting session is %s. It locked the parent before this backfill could, and it waits for the partition this backfill holds.", who),
				 errhint("Nothing was changed. Writes to the partition being replaced, and updates or deletes on %s that do not exclude it by the partition key, must wait until the backfill is done.",
						 bp->qualparent)));
	}
}

/*
 * A session that waits for a lock this transaction holds while holding a lock
 * on one of rels that the swap's conflicts with (any, but on the parent, the
 * first of rels, only ACCESS EXCLUSIVE when the swap takes the parent in
 * ACCESS SHARE mode): neither can go on before the other ends.  Fail at
 * once, naming it; the error releases our locks and lets it go on.
 */
static void
RefuseWaitersOnUs(BackfillPart *bp, Datum rels, bool parent)
{
	int			rc = SPI_execute_with_args(
		"SELECT h.relation, pg_catalog.format('Process %s (query started %s: %s) holds %s on %s and waits for %s on %s,"
		" which this backfill holds.', a.pid,"
		" pg_catalog.to_char(a.query_start, 'YYYY-MM-DD HH24:MI:SS.MS TZ'), pg_catalog.left(a.query, 80), h.mode,"
		" h.relation::pg_catalog.regclass, w.mode,"
		" COALESCE(w.relation::pg_catalog.regclass::pg_catalog.text, w.locktype))"
		" FROM pg_catalog.pg_locks h"
		" JOIN pg_catalog.pg_locks w ON w.pid OPERATOR(pg_catalog.=) h.pid AND NOT w.granted"
		" LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid OPERATOR(pg_catalog.=) h.pid"
		" WHERE h.granted AND h.locktype OPERATOR(pg_catalog.=) 'relation'"
		"   AND h.database OPERATOR(pg_catalog.=) (SELECT oid FROM pg_catalog.pg_database"
		"                     WHERE datname OPERATOR(pg_catalog.=) pg_catalog.current_database())"
		"   AND h.relation OPERATOR(pg_catalog.=) ANY ($1)"
		"   AND (h.relation OPERATOR(pg_catalog.<>) $1[1] OR $2 OR h.mode OPERATOR(pg_catalog.=) 'AccessExclusiveLock')"
		"   AND h.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()"
		"   AND pg_catalog.pg_backend_pid() OPERATOR(pg_catalog.=) ANY (pg_catalog.pg_blocking_pids(h.pid))"
		" ORDER BY pg_catalog.array_position($1, h.relation), h.pid LIMIT 1",
		2, (Oid[]) {OIDARRAYOID, BOOLOID}, (Datum[]) {rels, BoolGetDatum(parent)}, NULL, false, 0);
	Oid			held;
	bool		isnull;

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_locks");
	if (SPI_processed == 0)
		return;
	held = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	GiveWay(bp);
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("could not swap partition %s: a session holding %s waits for this backfill",
					bp->qualname, BackfillQualifiedName(held)),
			 errdetail("%s Neither could go on before the other ends.",
					   SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2)),
			 errhint("Nothing was changed, and that session goes on now. Retry once it is done (pg_partman's run_maintenance(), a DDL or ANALYZE on %s); backfill_run retries by itself.",
					 bp->qualparent)));
}

/*
 * The sessions, and the prepared transactions (which hold their locks with
 * no session until COMMIT or ROLLBACK PREPARED), holding a lock on relid now,
 * for an error message; NULL if none.
 */
static char *
HoldersOf(Oid relid)
{
	char	   *who = BackfillQueryText(
		"SELECT pg_catalog.string_agg(CASE WHEN l.pid IS NULL"
		"   THEN pg_catalog.format('prepared transaction %L (%s)', p.gid, l.mode)"
		"   ELSE pg_catalog.format('process %s (%s, query started %s: %s)',"
		"   l.pid, l.mode, pg_catalog.to_char(a.query_start, 'YYYY-MM-DD HH24:MI:SS.MS TZ'), pg_catalog.left(a.query, 80)) END,"
		"   '; ' ORDER BY l.pid NULLS FIRST, p.gid)"
		" FROM pg_catalog.pg_locks l LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid OPERATOR(pg_catalog.=) l.pid"
		" LEFT JOIN pg_catalog.pg_locks x ON l.pid IS NULL AND x.locktype OPERATOR(pg_catalog.=) 'transactionid'"
		"   AND x.virtualtransaction OPERATOR(pg_catalog.=) l.virtualtransaction"
		" LEFT JOIN pg_catalog.pg_prepared_xacts p ON p.transaction OPERATOR(pg_catalog.=) x.transactionid"
		" WHERE l.locktype OPERATOR(pg_catalog.=) 'relation' AND l.relation OPERATOR(pg_catalog.=) $1"
		"   AND l.database OPERATOR(pg_catalog.=) (SELECT oid FROM pg_catalog.pg_database"
		"                     WHERE datname OPERATOR(pg_catalog.=) pg_catalog.current_database())"
		"   AND l.pid IS DISTINCT FROM pg_catalog.pg_backend_pid()", relid);

	return who;
}

/*
 * Who held the lock on relid that the last attempt timed out on, for its
 * error: holders, the sessions read at that moment on this node, and on
 * Citus those on the workers (read now: a worker's lock timeout is not seen
 * on this node).
 */
static char *
LastHolders(BackfillPart *bp, Oid relid, char *holders)
{
	char	   *workers = bp->distcol ? BackfillCitusHolders(relid) : NULL;

	if (holders && workers)
		return psprintf("%s; %s", holders, workers);
	if (holders || workers)
		return holders ? holders : workers;
	return pstrdup("no session any more");
}

/* Sleep between lock attempts: exponential back-off with full jitter. */
void
BackfillBackOff(int attempt, int lock_timeout_ms)
{
	double		base = Min(5000.0, lock_timeout_ms * pow(2.0, attempt - 1));
	long		us = (long) (1000.0 * (base / 2 + pg_prng_double(&pg_global_prng_state) * base / 2));

	/* sleep in slices, so a cancel is seen at once */
	while (us > 0)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(Min(us, 50000L));
		us -= 50000L;
	}
}

/* Lock relid and its partitions, if any, in ACCESS EXCLUSIVE mode. */
static void
LockTree(Oid relid, volatile Oid *trying)
{
	*trying = relid;
	LockRelationOid(relid, AccessExclusiveLock);
	/* (find_all_inheritors locks the descendants, not the table itself) */
	(void) find_all_inheritors(relid, AccessExclusiveLock, NULL);
}

/*
 * Take ACCESS EXCLUSIVE on every relation of the swap in a subtransaction,
 * waiting at most timeout_ms for each.  Returns InvalidOid when they are
 * held, else the relation whose lock timed out (or on which we were chosen
 * as a deadlock victim), with the subtransaction and its locks gone.
 */
static Oid
TryLockForSwap(BackfillPart *bp, List *referenced, bool parent, int timeout_ms)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile Oid trying = InvalidOid;
	char		timeout[32];
	char	   *restore = pstrdup(GetConfigOption("lock_timeout", false, false));

	snprintf(timeout, sizeof(timeout), "%d", timeout_ms);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		int			nest = NewGUCNestLevel();
		ListCell   *lc;

		(void) set_config_option("lock_timeout", timeout, PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
		/*
		 * The parent before its partitions, as DETACH itself would.  A swap
		 * of files only keeps the parent from being dropped or altered
		 * meanwhile, and waits here, not in the partition's queue, for a
		 * session that holds the parent and wants the partition: found before
		 * the next slice, it is let go first.
		 */
		trying = bp->parent;
		LockRelationOid(bp->parent, parent ? AccessExclusiveLock : AccessShareLock);
		trying = bp->part;
		LockRelationOid(bp->part, AccessExclusiveLock);
		if (parent && OidIsValid(bp->defaultpart))
			LockTree(bp->defaultpart, &trying);
		/* ATTACH and DROP change the triggers on the tables foreign keys point to */
		foreach(lc, referenced)
			LockTree(lfirst_oid(lc), &trying);
		/* on Citus, on the workers too, with the same timeout */
		if (bp->distcol)
		{
			trying = bp->parent;
			BackfillCitusLockForSwap(bp, timeout_ms, restore);
		}
		AtEOXact_GUC(true, nest);

		/* the locks now belong to the caller's transaction */
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		trying = InvalidOid;
	}
	PG_CATCH();
	{
		ErrorData  *edata = BackfillAbortSubtransaction(cxt, owner);

		if (edata->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE &&
			edata->sqlerrcode != ERRCODE_T_R_DEADLOCK_DETECTED &&
			!(bp->distcol && BackfillCitusLockTimedOut(edata)))
			ReThrowError(edata);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	return trying;
}

/*
 * Take ACCESS EXCLUSIVE on the parent, the partition, the DEFAULT partition
 * and the tables foreign keys point to, as lockproto.c says; without
 * parent (a swap of files, swapfiles.c), ACCESS SHARE on the parent and
 * ACCESS EXCLUSIVE on the partition and those tables only.  Returns the
 * number of attempts made.
 */
int
BackfillLockForSwap(BackfillPart *bp, bool parent, int lock_timeout_ms, int max_attempts)
{
	List	   *referenced = ReferencedTables(bp);
	Datum		rels = SwapRelations(bp, referenced, parent);
	int			slice = Min(lock_timeout_ms, Max(DeadlockTimeout / 2, 1));

	if (bp->ctx)
		bp->ctx->gave_way = false;
	for (int attempt = 1;; attempt++)
	{
		Oid			blocked = InvalidOid;
		char	   *holders = NULL;

		for (int waited = 0; waited < lock_timeout_ms; waited += slice)
		{
			if (parent)
				RefuseQueuedWriters(bp);
			RefuseWaitersOnUs(bp, rels, parent);
			blocked = TryLockForSwap(bp, referenced, parent, Min(slice, lock_timeout_ms - waited));
			if (!OidIsValid(blocked))
			{
				BackfillAssertAllLocked(referenced, AccessExclusiveLock, "swap lock");
				if (bp->ctx)
					INSTR_TIME_SET_CURRENT(bp->ctx->locked_at);
				return attempt;
			}
			/* who held it, read at once */
			holders = HoldersOf(blocked);
		}
		if (parent)
			RefuseQueuedWriters(bp);
		RefuseWaitersOnUs(bp, rels, parent);
		if (attempt >= max_attempts)
		{
			holders = LastHolders(bp, blocked, holders);
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not lock %s to swap partition %s after %d attempts",
							BackfillQualifiedName(blocked), bp->name, attempt),
					 errdetail("Each attempt waited %d ms. When the last one timed out, %s held a lock on %s.",
							   lock_timeout_ms, holders, BackfillQualifiedName(blocked)),
					 strstr(holders, "prepared transaction") != NULL
					 ? errhint("Nothing was changed. A prepared transaction holds its locks until COMMIT PREPARED or ROLLBACK PREPARED ends it.")
					 : errhint("Nothing was changed. Retry when that session has finished, or allow more attempts.")));
		}
		BackfillBackOff(attempt, lock_timeout_ms);
	}
}
