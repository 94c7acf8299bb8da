/*-------------------------------------------------------------------------
 *
 * src/write/freeze.c
 *		backfill_freeze_new_rows: the rows this subtransaction inserted into a
 *		table it created, frozen in place, as COPY FREEZE would have written
 *		them.
 *
 * On Citus the staging table's shards are filled on the workers by the
 * INSERT ... SELECT that Citus pushes down, which writes plain rows: once the
 * swap commits, a REPEATABLE READ reader whose snapshot predates it would
 * find the new shards empty, their rows too young for its snapshot.  The
 * coordinator then calls this function on each new shard, through the
 * connection of the transaction that created and filled it, and the rows
 * are marked frozen as the local fill writes them (staging.c): visible to
 * every snapshot once the transaction commits.
 *
 * That is sound only for a table created in the current subtransaction (the
 * condition COPY FREEZE sets): if it aborts, the table goes with its rows,
 * so no frozen row can outlive the transaction that wrote it.  Only rows
 * inserted by this transaction (or subtransactions of it that committed) and
 * not deleted since are frozen, and none while a cursor of the transaction
 * is open, which could have been opened on the table still empty.  The
 * caller must own the table; its lock is
 * never waited for (one created here is held already).  Each changed page is
 * WAL-logged whole, so a standby or a recovery gets the frozen page.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/portal.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "base/compat.h"
#include "base/extension.h"

/*
 * Whether the row htup is deleted or updated by this transaction (no other
 * can see a table it created).  A lock alone, or the delete of a
 * subtransaction that aborted, leaves it live.  (An xmax that is a
 * MultiXactId with an updater in it counts as deleted.)  Reads no commit
 * log: it runs in a critical section.
 */
static bool
RowDeleted(HeapTupleHeader htup)
{
	TransactionId xmax = HeapTupleHeaderGetRawXmax(htup);

	if ((htup->t_infomask & HEAP_XMAX_INVALID) || !TransactionIdIsValid(xmax) ||
		HEAP_XMAX_IS_LOCKED_ONLY(htup->t_infomask))
		return false;
	if (htup->t_infomask & HEAP_XMAX_IS_MULTI)
		return true;
	return TransactionIdIsCurrentTransactionId(xmax);
}

/* Mark frozen the rows of page that this transaction inserted and nobody deleted; how many. */
static int
FreezePage(Page page)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			frozen = 0;

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off = OffsetNumberNext(off))
	{
		ItemId		itemid = PageGetItemId(page, off);
		HeapTupleHeader htup;

		if (!ItemIdIsNormal(itemid))
			continue;
		htup = (HeapTupleHeader) PageGetItem(page, itemid);
		if (HeapTupleHeaderXminFrozen(htup) ||
			!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetRawXmin(htup)) ||
			RowDeleted(htup))
			continue;
		HeapTupleHeaderSetXminFrozen(htup);
		frozen++;
	}
	return frozen;
}

/* The error for an OID that is no relation. */
static void
NoSuchRelation(Oid relid)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_TABLE),
			 errmsg("rel: relation with OID %u does not exist", relid)));
}

/* The error for a table this subtransaction did not create. */
static void
NotCreatedHere(const char *relname)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cannot freeze the rows of table %s: it was not created in the current subtransaction",
					relname),
			 errdetail("Only the rows of a table that would go with them, were they rolled back, can be frozen.")));
}

PG_FUNCTION_INFO_V1(backfill_freeze_new_rows);

/* backfill_freeze_new_rows(rel regclass) RETURNS bigint: the rows frozen */
Datum
backfill_freeze_new_rows(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	BlockNumber nblocks;
	BufferAccessStrategy strategy;
	int64		frozen = 0;

	BackfillCheckVersion();
	/*
	 * The owner is checked before any lock is asked for, and the lock is not
	 * waited for: a table created in this subtransaction is held already, and
	 * a call on any other table must not queue an ACCESS EXCLUSIVE request
	 * that every later reader of it would queue behind.
	 */
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		NoSuchRelation(relid);
	if (!BackfillRelOwnerCheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(get_rel_relkind(relid)), get_rel_name(relid));
	if (!ConditionalLockRelationOid(relid, AccessExclusiveLock))
		NotCreatedHere(get_rel_name(relid));
	rel = try_table_open(relid, NoLock);
	if (rel == NULL)			/* dropped before it was locked */
		NoSuchRelation(relid);
	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_tableam != GetHeapamTableAmRoutine())
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("rel must be a heap table: %s is not", RelationGetRelationName(rel))));
	/*
	 * A cursor of this transaction opened before the rows were inserted (on
	 * the table still empty) must not see them appear: as COPY FREEZE, refuse
	 * while a portal is open.  (COPY FREEZE also refuses any second
	 * registered snapshot; a call from inside another statement, as Citus's
	 * local execution makes it, always has one, and reads nothing older.)
	 */
	if (!ThereAreNoReadyPortals())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("cannot freeze the rows of table %s because of prior transaction activity",
						RelationGetRelationName(rel)),
				 errdetail("A cursor of this transaction is open, and one opened before the rows were inserted would see them once frozen."),
				 errhint("Close the transaction's cursors first, as COPY FREEZE requires.")));

	if (rel->rd_createSubid != GetCurrentSubTransactionId())
		NotCreatedHere(RelationGetRelationName(rel));

	strategy = GetAccessStrategy(BAS_BULKWRITE);
	nblocks = RelationGetNumberOfBlocks(rel);
	for (BlockNumber blk = 0; blk < nblocks; blk++)
	{
		Buffer		buf;
		int			n;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		START_CRIT_SECTION();
		n = FreezePage(BufferGetPage(buf));
		if (n > 0)
		{
			MarkBufferDirty(buf);
			if (RelationNeedsWAL(rel))
				log_newpage_buffer(buf, true);
		}
		END_CRIT_SECTION();
		UnlockReleaseBuffer(buf);
		frozen += n;
	}
	FreeAccessStrategy(strategy);
	table_close(rel, NoLock);
	PG_RETURN_INT64(frozen);
}
