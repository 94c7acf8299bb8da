/*-------------------------------------------------------------------------
 *
 * src/probe/watch.c
 *		What a transform run inside our own transaction wrote, told exactly.
 *
 * The probe runs a transform twice in a subtransaction of the caller's
 * transaction, so what this backend knows of its own transaction is exact:
 * the rows it inserted, updated and deleted in each relation (the counters
 * pg_stat_get_xact_tuples_* read, which count subtransactions too and which
 * nothing but this backend changes), each relation's storage (a TRUNCATE or a
 * rewrite gives it a new relfilenode), and the relations it holds locks on.
 * A watch records them at three points (before the first run, after it,
 * after the second), each with a snapshot.
 *
 * The partitions the scope may hold rows of (those a query on the scope
 * would read, partition pruning says) are read at each point, as the rows
 * of their bounds, split by the scope: whatever a run does to them (rewrite,
 * truncate, replace with a new table under the same bound), their rows are
 * the target's rows under those bounds.  Any other relation holds no row of
 * the scope; one whose counters did not move between two points holds the
 * same rows at both, and one that moved is read after both runs, under each
 * point's snapshot, which shows it as it was then.  So a probe reads the
 * scope's partitions three times and the others only if a run wrote them.
 *
 * This holds for heap tables with statistics counted (track_counts): a
 * relation of another access method, a foreign table, a Citus table (written
 * on other nodes), a run that attaches, detaches, truncates or rewrites a
 * relation outside the scope's partitions, or renames the target, leaves the
 * watch "moved", and the probe reads the whole table instead.  So does a
 * scope whose partitions cannot be told apart from the others (one not on
 * the partition key, or whose partitions include the DEFAULT one) when a run
 * gives a written relation new storage.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "pgstat.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "hash/fingerprint.h"
#include "hash/fpscan.h"
#include "probe/watch.h"
#include "record/log.h"

/* The target's relations with storage, by OID: the table, or its partitions. */
static List *
StoredRelations(Oid target)
{
	List	   *rels = NIL;
	ListCell   *lc;

	if (get_rel_relkind(target) != RELKIND_PARTITIONED_TABLE)
		return list_make1_oid(target);	/* ONLY target, as the probe reads it */
	foreach(lc, find_all_inheritors(target, AccessShareLock, NULL))
	{
		if (RELKIND_HAS_STORAGE(get_rel_relkind(lfirst_oid(lc))) ||
			get_rel_relkind(lfirst_oid(lc)) == RELKIND_FOREIGN_TABLE)
			rels = lappend_oid(rels, lfirst_oid(lc));
	}
	list_sort(rels, list_oid_cmp);
	return rels;
}

/*
 * Whether what the transaction writes in target's relations can be told
 * from its own counters: heap tables only, statistics counted, not Citus.
 */
bool
BackfillWatchable(Oid target)
{
	ListCell   *lc;

	if (!pgstat_track_counts || BackfillCitusDistributed(target))
		return false;
	foreach(lc, StoredRelations(target))
	{
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(lfirst_oid(lc)));
		bool		heap;

		if (!HeapTupleIsValid(tup))
			return false;
		heap = ((Form_pg_class) GETSTRUCT(tup))->relkind == RELKIND_RELATION &&
			((Form_pg_class) GETSTRUCT(tup))->relam == HEAP_TABLE_AM_OID;
		ReleaseSysCache(tup);
		if (!heap)
			return false;
	}
	return true;
}

/* Rows this transaction inserted, updated and deleted in relid so far. */
static int64
OwnWrites(Oid relid)
{
	Datum		arg = ObjectIdGetDatum(relid);

	return DatumGetInt64(DirectFunctionCall1(pg_stat_get_xact_tuples_inserted, arg)) +
		DatumGetInt64(DirectFunctionCall1(pg_stat_get_xact_tuples_updated, arg)) +
		DatumGetInt64(DirectFunctionCall1(pg_stat_get_xact_tuples_deleted, arg));
}

/* The relations of this database this backend holds RowExclusiveLock or stronger on. */
static List *
HeldForWriting(void)
{
	LockData   *locks = GetLockStatusData();
	List	   *rels = NIL;

	for (int i = 0; i < locks->nelements; i++)
	{
		LockInstanceData *l = &locks->locks[i];

		if (l->pid != MyProcPid || l->locktag.locktag_type != LOCKTAG_RELATION ||
			l->locktag.locktag_field1 != MyDatabaseId)
			continue;
		for (LOCKMODE mode = RowExclusiveLock; mode <= AccessExclusiveLock; mode++)
			if (l->holdMask & LOCKBIT_ON(mode))
			{
				rels = lappend_oid(rels, (Oid) l->locktag.locktag_field2);
				break;
			}
	}
	list_sort(rels, list_oid_cmp);
	list_deduplicate_oid(rels);
	return rels;
}

/* The position of oid in sorted, a list sorted by list_oid_cmp, or -1. */
static int
SortedIndex(List *sorted, Oid oid)
{
	int			lo = 0;
	int			hi = list_length(sorted) - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		Oid			at = list_nth_oid(sorted, mid);

		if (at == oid)
			return mid;
		if (at < oid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static bool NewUnderScope(BackfillWatch *w, List *leaves);
static bool GoneUnderScope(BackfillWatch *w, List *leaves);

/*
 * Add the rows of the target under where, the bounds of parts (or ONLY the
 * target's own rows, where NULL and parts the target), split by scope, on
 * the active snapshot: from parts directly while each is one of leaves, the
 * target's relations now (so the rows under a bound are its partition's),
 * else by a query on the target.
 */
static void
SplitRead(BackfillWatch *w, List *leaves, List *parts, const char *where, const char *scope,
		  BackfillFingerprint *inside, BackfillFingerprint *outside)
{
	ListCell   *lc;

	foreach(lc, parts)
		if (SortedIndex(leaves, lfirst_oid(lc)) < 0)
			break;
	if (lc != NULL || !BackfillFingerprintScanSplit(w->target, parts, scope, inside, outside))
		BackfillFingerprintSplit(w->target, where, scope, inside, outside);
}

/* The constraint of partition part, deparsed as the caller's queries parse it. */
static char *
PartitionBound(Oid part)
{
	return BackfillQueryText("SELECT pg_catalog.pg_get_partition_constraintdef($1)", part);
}

/*
 * The partitions of target a query on the scope may read (those partition
 * pruning keeps), by OID, if they are fewer than all and each has a bound;
 * else NIL.
 */
static List *
ScopePartitions(Oid target, const char *scope, int nrels)
{
	SPIPlanPtr	plan;
	CachedPlan *cplan;
	List	   *parts = NIL;
	ListCell   *lc;

	if (get_rel_relkind(target) != RELKIND_PARTITIONED_TABLE)
		return NIL;
	plan = BackfillPrepare(psprintf("SELECT FROM %s WHERE ((\n%s\n))", BackfillQualifiedName(target), scope),
						   0, NULL, "scope");
	SPI_keepplan(plan);
	cplan = SPI_plan_get_cached_plan(plan);
	foreach(lc, cplan ? cplan->stmt_list : NIL)
	{
		ListCell   *rc;

		if (!IsA(lfirst(lc), PlannedStmt))
			continue;
		foreach(rc, ((PlannedStmt *) lfirst(lc))->rtable)
		{
			RangeTblEntry *rte = lfirst_node(RangeTblEntry, rc);

			if (rte->rtekind == RTE_RELATION && rte->relkind == RELKIND_RELATION)
				parts = lappend_oid(parts, rte->relid);
		}
	}
	if (cplan)
		ReleaseCachedPlan(cplan, CurrentResourceOwner);
	SPI_freeplan(plan);
	list_sort(parts, list_oid_cmp);
	list_deduplicate_oid(parts);
	if (list_length(parts) >= nrels)
		return NIL;
	foreach(lc, parts)
		if (PartitionBound(lfirst_oid(lc)) == NULL || get_default_partition_oid(get_partition_parent(lfirst_oid(lc), false)) == lfirst_oid(lc))
			return NIL;
	return parts;
}

/* Note the scope's partitions and their bounds, for reading them at each point. */
static void
WatchScopePartitions(BackfillWatch *w, const char *scope)
{
	StringInfoData where;
	ListCell   *lc;

	w->eager = ScopePartitions(w->target, scope, w->nrels);
	if (w->eager == NIL)
		return;
	initStringInfo(&where);
	foreach(lc, w->eager)
	{
		char	   *bound = PartitionBound(lfirst_oid(lc));

		CHECK_FOR_INTERRUPTS();
		w->bounds = lappend(w->bounds, bound);
		appendStringInfo(&where, "%s(%s)", where.len ? " OR " : "", bound);
	}
	w->eagerwhere = where.data;
}

/*
 * Record the next point: target's relations, their storage and the rows
 * written in them, a snapshot seeing what the transaction did so far but
 * nothing it does next, and the rows of the scope's partitions, split by the
 * scope.  target is the table of the probe's name now; scope is NULL after
 * the first point.
 */
void
BackfillWatchPoint(BackfillWatch *w, Oid target, const char *scope)
{
	int			k = w->npoints++;
	List	   *rels = StoredRelations(target);
	int			i = 0;
	ListCell   *lc;

	Assert(k < WATCH_POINTS);
	w->leaves[k] = rels;
	if (k == 0)
	{
		w->target = target;
		w->nrels = list_length(rels);
		w->rels = palloc(sizeof(Oid) * Max(w->nrels, 1));
		foreach(lc, rels)
			w->rels[i++] = lfirst_oid(lc);
		w->held = HeldForWriting();
		w->heldwrites = palloc(sizeof(int64) * Max(list_length(w->held), 1));
		foreach(lc, w->held)
			w->heldwrites[foreach_current_index(lc)] = OwnWrites(lfirst_oid(lc));
		w->subid = GetCurrentSubTransactionId();
		w->lastlog = OidIsValid(BackfillInstalledSchema()) ? BackfillLastLogId(BackfillInstalledSchema()) : 0;
		if (scope)
			WatchScopePartitions(w, scope);
	}
	else if (target != w->target || !NewUnderScope(w, rels) || !GoneUnderScope(w, rels))
		w->moved = true;
	w->files[k] = palloc(sizeof(Oid) * Max(w->nrels, 1));
	w->writes[k] = palloc(sizeof(int64) * Max(w->nrels, 1));
	w->untouched[k] = palloc(sizeof(BackfillUntouched) * Max(w->nrels, 1));
	for (i = 0; i < w->nrels; i++)
	{
		CHECK_FOR_INTERRUPTS();
		w->files[k][i] = BackfillRelFileNode(w->rels[i]);	/* 0 once dropped */
		w->writes[k][i] = OwnWrites(w->rels[i]);
		BackfillReadUntouched(w->rels[i], &w->untouched[k][i]);
	}
	CommandCounterIncrement();

	/*
	 * The point's own copy.  Under REPEATABLE READ and SERIALIZABLE the
	 * transaction snapshot is one registered object whose command id every
	 * later CommandCounterIncrement moves on: registered as it is, all three
	 * points would read the final state.  PushActiveSnapshot copies it.
	 */
	PushActiveSnapshot(GetTransactionSnapshot());
	w->snaps[k] = RegisterSnapshot(GetActiveSnapshot());
	PopActiveSnapshot();
	memset(&w->ein[k], 0, sizeof(w->ein[k]));
	memset(&w->eout[k], 0, sizeof(w->eout[k]));
	if (w->eagerwhere && !w->moved)
	{
		PushActiveSnapshot(w->snaps[k]);
		SplitRead(w, rels, w->eager, w->eagerwhere, w->scope ? w->scope : scope, &w->ein[k], &w->eout[k]);
		PopActiveSnapshot();
	}
	if (k == 0)
		w->scope = scope;
}

/* Whether relation i was written between two of the points. */
static bool
Written(BackfillWatch *w, int i)
{
	for (int k = 1; k < w->npoints; k++)
		if (w->writes[k][i] != w->writes[k - 1][i])
			return true;
	return false;
}

/*
 * Whether the relations new at this point sit each under the bound of one of
 * the scope's partitions (one of them replaced): else the runs moved the
 * target's relations where the watch cannot follow.
 */
static bool
NewUnderScope(BackfillWatch *w, List *leaves)
{
	ListCell   *lc;

	foreach(lc, leaves)
	{
		char	   *bound;
		ListCell   *bc;
		bool		known = false;

		CHECK_FOR_INTERRUPTS();
		if (SortedIndex(w->leaves[0], lfirst_oid(lc)) >= 0)
			continue;
		if (w->eager == NIL)
			return false;
		bound = PartitionBound(lfirst_oid(lc));
		foreach(bc, w->bounds)
			known |= bound && strcmp(bound, (char *) lfirst(bc)) == 0;
		if (!known)
			return false;
	}
	return true;
}

/*
 * Whether the relations of the first point gone at this one were each one of
 * the scope's partitions (replaced): else the runs took rows outside the
 * scope away from the target (a partition detached or dropped).
 */
static bool
GoneUnderScope(BackfillWatch *w, List *leaves)
{
	ListCell   *lc;

	foreach(lc, w->leaves[0])
	{
		CHECK_FOR_INTERRUPTS();
		if (SortedIndex(leaves, lfirst_oid(lc)) < 0 && SortedIndex(w->eager, lfirst_oid(lc)) < 0)
			return false;
	}
	return true;
}

/*
 * Whether no other session or connection wrote relation i from the first
 * point to the last: its visibility map says no one did, or its storage is
 * this transaction's own (base/untouched.c); this transaction's writes its
 * counters tell.  Else its rows are read.
 */
static bool
Untouched(BackfillWatch *w, int i)
{
	return BackfillOthersUntouched(&w->untouched[0][i], &w->untouched[w->npoints - 1][i]);
}

/*
 * Whether the runs left the target's relations outside the scope's
 * partitions with the storage they had.
 */
static bool
StayedPut(BackfillWatch *w)
{
	for (int i = 0; i < w->nrels; i++)
	{
		if (SortedIndex(w->eager, w->rels[i]) >= 0)
			continue;
		for (int k = 1; k < w->npoints; k++)
			if (w->files[k][i] != w->files[0][i])
				return false;
	}
	return true;
}

/* Add b's unsealed sums to a. */
static void
AddSums(BackfillFingerprint *a, const BackfillFingerprint *b)
{
	a->rows += b->rows;
	a->sum1 += b->sum1;
	a->sum2 += b->sum2;
}

/*
 * Add the rows of the relations in written (the target's, by OID), split by
 * the scope, under the active snapshot.
 */
static void
ReadWritten(BackfillWatch *w, List *written, List *leaves, BackfillFingerprint *in,
			BackfillFingerprint *out)
{
	ListCell   *lc;

	foreach(lc, written)
	{
		Oid			part = lfirst_oid(lc);
		char	   *bound = part == w->target ? NULL : PartitionBound(part);

		CHECK_FOR_INTERRUPTS();
		SplitRead(w, leaves, list_make1_oid(part), part == w->target ? NULL
				  : psprintf("%s%stableoid OPERATOR(pg_catalog.=) %u::pg_catalog.oid",
							 bound ? bound : "", bound ? " AND " : "", part),
				  w->scope, in, out);
	}
}

/*
 * Whether what a snapshot taken now shows of the relations read (the scope's
 * partitions, those written or not proven untouched) differs from what the
 * last point's snapshot showed: under REPEATABLE READ and SERIALIZABLE the
 * points' snapshots are the transaction's, blind to what another session or
 * connection (dblink, an autonomous logger) committed since it began.
 */
static bool
ChangedUnseen(BackfillWatch *w, List *written, List *leaves, const BackfillFingerprint *seen)
{
	BackfillFingerprint in;
	BackfillFingerprint out;

	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	PushActiveSnapshot(GetLatestSnapshot());
	if (w->eagerwhere)
		SplitRead(w, leaves, w->eager, w->eagerwhere, w->scope, &in, &out);
	ReadWritten(w, written, leaves, &in, &out);
	PopActiveSnapshot();
	AddSums(&in, &out);
	return in.rows != seen->rows || in.sum1 != seen->sum1 || in.sum2 != seen->sum2;
}

/*
 * At each point, the target's rows where the scope holds (inside) and those
 * where it does not in the scope's partitions and in the relations the runs
 * wrote or that are not proven untouched by anyone (outside), unsealed.
 * False, with nothing computed, if the watch cannot tell.  Under a
 * transaction snapshot, w->others says whether rows changed that the
 * transaction could not see.
 */
bool
BackfillWatchScope(BackfillWatch *w, BackfillFingerprint *inside, BackfillFingerprint *outside)
{
	List	   *written = NIL;
	List	   *leaves;
	BackfillFingerprint rest;
	BackfillFingerprint seen;
	StringInfoData others;

	if (w->moved || w->npoints != WATCH_POINTS || !StayedPut(w))
		return false;
	initStringInfo(&others);
	for (int i = 0; i < w->nrels; i++)
		if (SortedIndex(w->eager, w->rels[i]) < 0 && (Written(w, i) || !Untouched(w, i)))
		{
			written = lappend_oid(written, w->rels[i]);
			appendStringInfo(&others, "%s%u", others.len ? "," : "", w->rels[i]);
		}

	/* the scope's rows outside the scope's partitions and the relations read: the same at every point */
	memset(&rest, 0, sizeof(rest));
	if (w->eager == NIL && list_length(written) < w->nrels)
	{
		PushActiveSnapshot(w->snaps[WATCH_POINTS - 1]);
		BackfillFingerprintSums(w->target, list_length(written) == 0 ? w->scope
								: psprintf("(%s\n) AND tableoid OPERATOR(pg_catalog.<>) ALL ('{%s}'::pg_catalog.oid[])",
										   w->scope, others.data), &rest);
		PopActiveSnapshot();
	}
	leaves = StoredRelations(w->target);
	memset(&seen, 0, sizeof(seen));
	for (int k = 0; k < WATCH_POINTS; k++)
	{
		BackfillFingerprint in;
		BackfillFingerprint out;

		memset(&in, 0, sizeof(in));
		memset(&out, 0, sizeof(out));
		PushActiveSnapshot(w->snaps[k]);
		ReadWritten(w, written, leaves, &in, &out);
		PopActiveSnapshot();
		inside[k] = rest;
		outside[k] = w->eout[k];
		AddSums(&inside[k], &w->ein[k]);
		AddSums(&inside[k], &in);
		AddSums(&outside[k], &out);
		if (k == WATCH_POINTS - 1)
		{
			AddSums(&seen, &w->ein[k]);
			AddSums(&seen, &w->eout[k]);
			AddSums(&seen, &in);
			AddSums(&seen, &out);
		}
	}
	w->others = IsolationUsesXactSnapshot() && ChangedUnseen(w, written, leaves, &seen);
	return true;
}

/* Let the snapshots go. */
void
BackfillWatchEnd(BackfillWatch *w)
{
	for (int k = 0; k < w->npoints; k++)
		UnregisterSnapshot(w->snaps[k]);
	w->npoints = 0;
}

/*
 * The tables outside target (the table of the probe's name now) the runs wrote and that existed
 * before them: held with RowExclusiveLock or stronger now, with rows this
 * transaction wrote in them since the first point (the locks say which
 * relations to ask, the counters whether rows were written).
 */
List *
BackfillWrittenElsewhere(BackfillWatch *w, Oid target)
{
	/* the target's family as it is now (a plain table's children too), and as it was */
	List	   *family = OidIsValid(target) ? find_all_inheritors(target, NoLock, NULL) : NIL;
	List	   *names = NIL;
	ListCell   *lc;

	for (int i = 0; i < w->nrels; i++)
		family = lappend_oid(family, w->rels[i]);
	family = lappend_oid(family, w->target);
	/* the archives the runs' replacements kept the old rows in (the swap gave them the partitions' past) */
	if (OidIsValid(BackfillInstalledSchema()))
		family = list_concat(family, BackfillArchivedSince(BackfillInstalledSchema(), w->lastlog));
	list_sort(family, list_oid_cmp);

	foreach(lc, HeldForWriting())
	{
		Oid			relid = lfirst_oid(lc);
		Relation	rel;
		bool		existed;
		char		kind;

		int			was = SortedIndex(w->held, relid);

		CHECK_FOR_INTERRUPTS();

		if (SortedIndex(family, relid) >= 0)
			continue;
		rel = RelationIdGetRelation(relid);
		if (!RelationIsValid(rel))
			continue;

		/*
		 * Rows the runs wrote in it (all it has if it was not held before),
		 * or new storage they gave it (a TRUNCATE, which resets the counters
		 * of the subtransaction it runs in, or a rewrite).
		 */
		if (OwnWrites(relid) == (was >= 0 ? w->heldwrites[was] : 0) &&
			(BackfillRelNewStorageSubid(rel) == InvalidSubTransactionId ||
			 BackfillRelNewStorageSubid(rel) < w->subid))
		{
			RelationClose(rel);
			continue;
		}
		kind = rel->rd_rel->relkind;
		/* not one the runs created (a staging table, an archive, a scratch table) */
		existed = rel->rd_createSubid == InvalidSubTransactionId || rel->rd_createSubid < w->subid;
		RelationClose(rel);
		if (existed && (kind == RELKIND_RELATION || kind == RELKIND_PARTITIONED_TABLE ||
						kind == RELKIND_FOREIGN_TABLE) && !BackfillIsStateTable(relid))
			names = lappend(names, BackfillQualifiedName(relid));
	}
	return names;
}
