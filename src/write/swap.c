/*-------------------------------------------------------------------------
 *
 * src/write/swap.c
 *		Swapping a filled staging table in for a partition, atomically.
 *
 * Where the staging table has the partition's shape, the two trade files
 * (swapfiles.c), holding only the partition in ACCESS EXCLUSIVE mode.
 * Otherwise the swap is DETACH of the old partition, ATTACH of the new one
 * and the renames that give the new one the old one's name and index names.
 * Either way it is all in the caller's transaction, so readers see the old
 * rows or the new rows and never an empty or doubled range.  A DETACH and
 * ATTACH holds ACCESS EXCLUSIVE on the parent, the partition and the DEFAULT
 * partition only for catalog work:
 *
 * - the staging table carries a CHECK constraint equal to the partition
 *   constraint (which includes "key IS NOT NULL"), and copies of every index
 *   and foreign key the parent needs, so ATTACH scans and builds nothing;
 * - a DEFAULT partition gets, for the duration of the swap, a CHECK
 *   constraint excluding the range.  It is created NOT VALID and then marked
 *   valid without a scan: while the old partition is attached, the DEFAULT
 *   partition's own partition constraint already guarantees it (no row of
 *   the DEFAULT partition can fall in an attached partition's range), and
 *   the ACCESS EXCLUSIVE lock held from there to commit keeps it true.  So
 *   ATTACH does not scan the DEFAULT partition either.
 *
 * Which locks each kind of swap holds, and why: lockproto.c.  They are taken
 * by swaplock.c: in a subtransaction with a short lock_timeout, retried
 * after a back-off, giving way at once to a session that waits for this
 * transaction while holding one of them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_partitioned_table.h"
#include "catalog/pg_statistic_ext.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/parsenodes.h"
#include "partitioning/partbounds.h"
#include "portability/instr_time.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "base/compat.h"
#include "base/relation.h"
#include "base/citus.h"
#include "base/spi_util.h"
#include "write/archive.h"
#include "write/lockproto.h"
#include "write/publication.h"
#include "write/swap.h"
#include "write/swapfiles.h"
#include "write/swaplock.h"

#define BOUND_CONSTRAINT	"backfill_partition_bound"
#define DEFAULT_CONSTRAINT	"backfill_swap_excludes"

/*
 * Mark the constraint conname of relid valid without a scan.  Only for a
 * constraint the caller has proven holds (see the file header).
 */
static void
MarkConstraintValid(Oid relid, const char *conname)
{
	Relation	conrel = table_open(ConstraintRelationId, RowExclusiveLock);
	Oid			conoid = get_relation_constraint_oid(relid, conname, false);
	HeapTuple	tup = SearchSysCacheCopy1(CONSTROID, ObjectIdGetDatum(conoid));
	Form_pg_constraint con;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for constraint %u", conoid);
	con = (Form_pg_constraint) GETSTRUCT(tup);
	con->convalidated = true;
	CatalogTupleUpdate(conrel, &tup->t_self, tup);
	heap_freetuple(tup);
	table_close(conrel, RowExclusiveLock);
	CacheInvalidateRelcacheByRelid(relid);
	CommandCounterIncrement();
}

/*
 * Give the indexes of staging the names in oldnames, a list of (name, shape)
 * of the old partition's indexes, taken before those were renamed or dropped.
 * Pairs are found by definition; every old index must have one.
 */
static void
RenameIndexesLike(Oid staging, List *oldnames)
{
	Relation	srel = table_open(staging, NoLock);
	List	   *sidx = RelationGetIndexList(srel);
	ListCell   *lc;
	ListCell   *ln;

	table_close(srel, NoLock);
	foreach(ln, oldnames)
	{
		List	   *pair = (List *) lfirst(ln);
		char	   *name = strVal(linitial(pair));
		char	   *shape = strVal(lsecond(pair));
		bool		found = false;

		foreach(lc, sidx)
		{
			Oid			idx = lfirst_oid(lc);

			if (!OidIsValid(idx) || strcmp(BackfillIndexShape(idx), shape) != 0)
				continue;
			BackfillExec(psprintf("ALTER INDEX %s RENAME TO %s",
								  BackfillQualifiedName(idx), quote_identifier(name)));
			lfirst_oid(lc) = InvalidOid;	/* used */
			found = true;
			break;
		}
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the new copy of the partition has no index like \"%s\"", name),
					 errdetail("Index definition: %s", shape)));
	}
}

/* (name, shape) of every index of relid. */
static List *
IndexNamesAndShapes(Oid relid)
{
	Relation	rel = table_open(relid, NoLock);
	List	   *idx = RelationGetIndexList(rel);
	List	   *result = NIL;
	ListCell   *lc;

	table_close(rel, NoLock);
	foreach(lc, idx)
		result = lappend(result, list_make2(makeString(get_rel_name(lfirst_oid(lc))),
											makeString(BackfillIndexShape(lfirst_oid(lc)))));
	return result;
}

/* The name of the extended statistics object stxoid, unqualified. */
static char *
StatisticsName(Oid stxoid)
{
	HeapTuple	tup = SearchSysCache1(STATEXTOID, ObjectIdGetDatum(stxoid));
	char	   *name;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for statistics object %u", stxoid);
	name = pstrdup(NameStr(((Form_pg_statistic_ext) GETSTRUCT(tup))->stxname));
	ReleaseSysCache(tup);
	return name;
}

/*
 * Rename the second object of each pair in statpairs (staging's, from
 * BackfillPairStatistics) to the name in names at the same place.
 */
static void
RenameStatisticsLike(Oid staging, List *statpairs, List *names)
{
	ListCell   *lp;
	ListCell   *ln;

	forboth(lp, statpairs, ln, names)
		BackfillExec(psprintf("ALTER STATISTICS %s RENAME TO %s",
							  quote_qualified_identifier(get_namespace_name(get_rel_namespace(staging)),
														 StatisticsName(lsecond_oid((List *) lfirst(lp)))),
							  quote_identifier(strVal(lfirst(ln)))));
}

/*
 * Under the swap's lock, the partition is still the one we were asked for
 * (and, for a DETACH and ATTACH, the parent's DEFAULT partition the one the
 * swap locked).
 */
static void
RecheckPartUnderLock(BackfillPart *bp, bool attach)
{
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(bp->part)) ||
		!get_rel_relispartition(bp->part) ||
		get_partition_parent(bp->part, true) != bp->parent)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("partition %s was detached or dropped during the backfill", bp->qualname)));
	if (attach && get_default_partition_oid(bp->parent) != bp->defaultpart)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the DEFAULT partition of %s changed during the backfill", bp->qualparent)));
}

/*
 * The DEFAULT partition provably has no row in the range: say so, without a
 * scan.  ATTACH checks it against the negation of the partition's own bound
 * (not its ancestors'), so that is what the constraint states.
 */
static void
ProveDefaultOutsideRange(BackfillPart *bp)
{
	Relation	parent = table_open(bp->parent, NoLock);
	Expr	   *own = make_ands_explicit(get_qual_from_partbound(parent, bp->spec));
	char	   *owntext = deparse_expression((Node *) own,
											 deparse_context_for(RelationGetRelationName(parent),
																 bp->parent),
											 false, false);

	table_close(parent, NoLock);
	BackfillExec(psprintf("ALTER TABLE %s ADD CONSTRAINT %s CHECK (NOT (%s)) NOT VALID",
						  BackfillQualifiedName(bp->defaultpart), DEFAULT_CONSTRAINT, owntext));
	MarkConstraintValid(bp->defaultpart, DEFAULT_CONSTRAINT);
}

/*
 * Rename the detached partition, its indexes (oldindexes) and its extended
 * statistics to archive names, one name at a time, each chosen once the
 * previous one is taken.
 */
static void
ArchiveDetached(BackfillPart *bp, List *oldindexes)
{
	ListCell   *lc;

	BackfillAssertLocked(bp->part, AccessExclusiveLock, "archive");
	BackfillExec(psprintf("ALTER TABLE %s RENAME TO %s", bp->qualname,
						  quote_identifier(BackfillArchiveName(bp->name, bp->nsp))));
	foreach(lc, oldindexes)
	{
		char	   *idxname = strVal(linitial((List *) lfirst(lc)));

		BackfillExec(psprintf("ALTER INDEX %s RENAME TO %s",
							  quote_qualified_identifier(get_namespace_name(bp->nsp), idxname),
							  quote_identifier(BackfillArchiveName(idxname, bp->nsp))));
	}
	/* extended statistics are named per schema too */
	BackfillExecGenerated(
		"SELECT pg_catalog.format('ALTER STATISTICS %I.%I RENAME TO %I', n.nspname, s.stxname,"
		"  pg_catalog.left(s.stxname, 50) OPERATOR(pg_catalog.||) '_archived_' OPERATOR(pg_catalog.||) s.oid)"
		" FROM pg_catalog.pg_statistic_ext s JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) s.stxnamespace"
		" WHERE s.stxrelid OPERATOR(pg_catalog.=) $1",
		bp->part, "", "");
}

/*
 * The staging table, holding the old rows after a swap of files, becomes the
 * archive: it, its indexes (indexpairs) and its extended statistics
 * (statpairs) take the names that ArchiveDetached gives the partition's, and
 * it loses the bound constraint, as a detached partition has none.
 */
static void
ArchiveStaging(BackfillPart *bp, Oid staging, List *indexpairs, List *statpairs)
{
	char	   *stagingname = BackfillQualifiedName(staging);
	List	   *renamed = NIL;
	List	   *names = NIL;
	ListCell   *lc;

	BackfillAssertLocked(staging, AccessExclusiveLock, "archive");
	BackfillExec(psprintf("ALTER TABLE %s DROP CONSTRAINT %s", stagingname, BOUND_CONSTRAINT));
	BackfillExec(psprintf("ALTER TABLE %s RENAME TO %s", stagingname,
						  quote_identifier(BackfillArchiveName(bp->name, bp->nsp))));
	foreach(lc, indexpairs)
	{
		List	   *pair = (List *) lfirst(lc);

		BackfillExec(psprintf("ALTER INDEX %s RENAME TO %s", BackfillQualifiedName(lsecond_oid(pair)),
							  quote_identifier(BackfillArchiveName(get_rel_name(linitial_oid(pair)), bp->nsp))));
	}
	/*
	 * As ArchiveDetached names them: the first 50 characters, "_archived_"
	 * and the OID (which an archive swapped back in within the transaction
	 * that made it may have already).
	 */
	foreach(lc, statpairs)
	{
		List	   *pair = (List *) lfirst(lc);
		char	   *name = StatisticsName(linitial_oid(pair));
		char	   *archived = psprintf("%.*s_archived_%u", pg_mbcharcliplen(name, strlen(name), 50), name,
										lsecond_oid(pair));

		if (strcmp(archived, StatisticsName(lsecond_oid(pair))) == 0)
			continue;
		renamed = lappend(renamed, pair);
		names = lappend(names, makeString(archived));
	}
	RenameStatisticsLike(staging, renamed, names);
}

/*
 * After a swap of files: the partition's NOT VALID constraints that its copy
 * enforced on every new row (one of the same name, kind and definition, valid
 * there) hold now, and are marked valid, as they are after a DETACH and
 * ATTACH, where the copy's constraints become the partition's.
 */
static void
ValidateCheckedConstraints(Oid part, Oid staging)
{
	int			rc = SPI_execute_with_args(
		"SELECT p.conname FROM pg_catalog.pg_constraint p JOIN pg_catalog.pg_constraint s"
		"   ON s.conrelid OPERATOR(pg_catalog.=) $2 AND s.conname OPERATOR(pg_catalog.=) p.conname"
		"  AND s.contype OPERATOR(pg_catalog.=) p.contype AND s.convalidated"
		"  AND pg_catalog.pg_get_constraintdef(p.oid) OPERATOR(pg_catalog.=)"
		"      (pg_catalog.pg_get_constraintdef(s.oid) OPERATOR(pg_catalog.||) ' NOT VALID')"
		" WHERE p.conrelid OPERATOR(pg_catalog.=) $1 AND NOT p.convalidated"
		"   AND p.contype OPERATOR(pg_catalog.=) ANY ('{c,n}')",
		2, (Oid[]) {OIDOID, OIDOID}, (Datum[]) {ObjectIdGetDatum(part), ObjectIdGetDatum(staging)},
		NULL, false, 0);
	SPITupleTable *names;
	uint64		n;

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read the constraints of %u", part);
	names = SPI_tuptable;
	n = SPI_processed;
	for (uint64 i = 0; i < n; i++)
		MarkConstraintValid(part, SPI_getvalue(names->vals[i], names->tupdesc, 1));
}

/*
 * DETACH the partition bp, drop it or archive it, give staging its name and
 * the names of its indexes and statistics, and ATTACH staging.  With the
 * parent, the partition and the DEFAULT partition locked.
 */
static void
DetachAndAttach(BackfillPart *bp, Oid staging, bool keep_old, BackfillSwapResult *result)
{
	List	   *oldindexes = IndexNamesAndShapes(bp->part);
	List	   *statpairs = BackfillPairStatistics(bp->part, staging);
	List	   *oldstats = NIL;
	char	   *replident;
	ListCell   *lc;
	char	   *clustered;
	char	   *stagingname = BackfillQualifiedName(staging);

	BackfillAssertSwapLocks(bp, staging, true, "DETACH and ATTACH");
	foreach(lc, statpairs)
		oldstats = lappend(oldstats, makeString(StatisticsName(linitial_oid((List *) lfirst(lc)))));
	replident = BackfillQueryText("SELECT c.relname FROM pg_catalog.pg_index i"
								  " JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) i.indexrelid"
								  " WHERE i.indrelid OPERATOR(pg_catalog.=) $1 AND i.indisreplident", bp->part);
	clustered = BackfillQueryText("SELECT c.relname FROM pg_catalog.pg_index i"
								  " JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) i.indexrelid"
								  " WHERE i.indrelid OPERATOR(pg_catalog.=) $1 AND i.indisclustered", bp->part);
	if (OidIsValid(bp->defaultpart))
		ProveDefaultOutsideRange(bp);

	BackfillExec(psprintf("ALTER TABLE %s DETACH PARTITION %s", bp->qualparent, bp->qualname));
	if (keep_old)
	{
		ArchiveDetached(bp, oldindexes);
		result->archived = bp->part;
	}
	else
	{
		BackfillExec(psprintf("DROP TABLE %s", bp->qualname));
		result->archived = InvalidOid;
	}

	RenameIndexesLike(staging, oldindexes);
	RenameStatisticsLike(staging, statpairs, oldstats);
	BackfillExec(psprintf("ALTER TABLE %s RENAME TO %s", stagingname, quote_identifier(bp->name)));
	BackfillExec(psprintf("ALTER TABLE %s ATTACH PARTITION %s %s",
						  bp->qualparent, bp->qualname, bp->boundspec));
	BackfillExec(psprintf("ALTER TABLE %s DROP CONSTRAINT %s", bp->qualname, BOUND_CONSTRAINT));
	if (replident)
		BackfillExec(psprintf("ALTER TABLE %s REPLICA IDENTITY USING INDEX %s",
							  bp->qualname, quote_identifier(replident)));
	if (clustered)
		BackfillExec(psprintf("ALTER TABLE %s CLUSTER ON %s", bp->qualname, quote_identifier(clustered)));
	if (OidIsValid(bp->defaultpart))
		BackfillExec(psprintf("ALTER TABLE %s DROP CONSTRAINT %s",
							  BackfillQualifiedName(bp->defaultpart), DEFAULT_CONSTRAINT));
	result->newpart = staging;
}

/*
 * Swap staging in for the partition bp: by trading their files when they
 * have the same shape and the table is not Citus's (swapfiles.c), holding
 * only the partition, else by DETACH and ATTACH; then drop the old rows or
 * keep them as an archive.  Must be called inside SPI, with the partition
 * locked in SHARE ROW EXCLUSIVE mode.
 */
void
BackfillSwapIn(BackfillPart *bp, Oid staging, bool keep_old,
			   int lock_timeout_ms, int max_attempts, BackfillSwapResult *result)
{
	instr_time	start;
	List	   *indexpairs = NIL;
	BackfillCitusRel cr;
	bool		files;
	int			nest;

	BackfillCitusDescribe(bp->parent, &cr);
	files = cr.kind == BACKFILL_CITUS_NONE && BackfillCanSwapFiles(bp->part, staging, keep_old, &indexpairs);

	/*
	 * Write out the staging copy's WAL before taking the locks, so that the
	 * COMMIT that releases them flushes only the swap's few records, not
	 * megabytes (and a new WAL segment to create among them) while readers
	 * queue behind the partition.  Flushing sooner changes nothing else.
	 */
	XLogFlush(XactLastRecEnd);
	result->attempts = BackfillLockForSwap(bp, !files, lock_timeout_ms, max_attempts);
	BackfillAssertSwapLocks(bp, staging, !files, "swap lock");
	INSTR_TIME_SET_CURRENT(start);

	RecheckPartUnderLock(bp, !files);
	/* (a cursor the source left open, say) */
	BackfillRefuseInUse(bp->part, "replace partition");
	/* (what locks only an index, as ALTER INDEX does, was not kept out by the fill's lock) */
	if (files && !BackfillCanSwapFiles(bp->part, staging, keep_old, &indexpairs))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("an index of partition %s changed during the backfill", bp->qualname),
				 errhint("Nothing was changed. Run the backfill again.")));

	/*
	 * The fill may not have held the parent (replace.c).  What reaches the
	 * partition waited for its lock, but the parent may have been renamed
	 * since, or put in a publication, or made to force row-level security.
	 */
	bp->qualparent = BackfillQualifiedName(bp->parent);
	nest = BackfillPinSearchPath();
	BackfillRefusePublished(bp->part, NULL);
	BackfillRefuseForcedRowSecurity(bp);
	if (files)
	{
		List	   *statpairs = BackfillSwapFiles(bp->part, staging, indexpairs);

		ValidateCheckedConstraints(bp->part, staging);
		result->newpart = bp->part;
		result->archived = keep_old ? staging : InvalidOid;
		if (keep_old)
			ArchiveStaging(bp, staging, indexpairs, statpairs);
		else
			BackfillExec(psprintf("DROP TABLE %s", BackfillQualifiedName(staging)));
	}
	else
		DetachAndAttach(bp, staging, keep_old, result);
	BackfillUnpinSearchPath(nest);
	result->swap_ms = BackfillMsSince(start);
}
