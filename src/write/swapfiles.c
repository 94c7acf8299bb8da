/*-------------------------------------------------------------------------
 *
 * src/write/swapfiles.c
 *		Swapping a filled staging table in for a partition by trading their
 *		files, without touching the parent.
 *
 * DETACH and ATTACH change the parent's set of partitions: they need ACCESS
 * EXCLUSIVE on the parent, and the parent's partition descriptor is rebuilt
 * three times in the swapping transaction and once more in every backend
 * that next reads the parent, at a cost that grows with the number of
 * partitions.  When the staging table has exactly the partition's physical
 * shape, the swap instead trades the two tables' files, as CLUSTER and
 * VACUUM FULL do:
 *
 * - the pg_class rows of the partition and of the staging table trade
 *   relfilenode, tablespace, frozen-xid horizons and size statistics, and so
 *   does each pair of matching indexes;
 * - the TOAST tables trade owners, with their dependencies and names (a
 *   TOAST pointer names its TOAST table by OID, so the links move, not the
 *   files);
 * - the planner statistics of the tables and of their extended statistics
 *   objects trade places.
 *
 * The partition keeps its OID, name, bound, indexes, constraints, triggers,
 * grants, policies, comments, publications and the views on it: only its
 * rows change.  The parent is neither locked further (the swap holds it in
 * ACCESS SHARE mode only, lockproto.c) nor invalidated.
 *
 * The shape must match to the byte: the same table access method and
 * persistence, the same columns at the same attribute numbers with the same
 * types and none dropped (a row is read by attribute number), a TOAST table
 * on both or on neither, and for every index of the partition exactly one
 * index of the staging table with the same definition.  The staging table
 * is made LIKE the partition, so this holds unless the partition has dropped
 * columns.  The copy must also be new in this subtransaction (the partition
 * is then given files this transaction made, as CLUSTER gives them; an
 * archive swapped back by undo is not).  When the old files are kept as the
 * archive, the archive must read them as the partition did: no column with a
 * value for rows stored before it was added (LIKE does not copy that), no
 * constraint the old rows were never checked against (NOT VALID) and no
 * index that is not valid and ready (the copy's are).  Otherwise swap.c
 * detaches and attaches.
 *
 * If the transaction aborts, the catalog changes go with it and each table
 * has its own files again; the staging table's files, created in this
 * transaction, are deleted as before.  If it commits, the old files belong to
 * the staging table and go when it is dropped, or stay with it as the
 * archive.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/toast_internals.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_statistic_ext_data.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/tablecmds.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "base/compat.h"
#include "base/spi_util.h"
#include "write/lockproto.h"
#include "write/swapfiles.h"

/* The name of operator class opclass, or its OID as text. */
static char *
OpclassName(Oid opclass)
{
	HeapTuple	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclass));
	char	   *name;

	if (!HeapTupleIsValid(tup))
		return psprintf("%u", opclass);
	name = pstrdup(NameStr(((Form_pg_opclass) GETSTRUCT(tup))->opcname));
	ReleaseSysCache(tup);
	return name;
}

/*
 * The node tree in attribute attno of a pg_index row (indexprs: a list of
 * expressions; indpred: one expression), or NULL; *context set for
 * deparsing it on the table's columns.
 */
static Node *
IndexNodes(HeapTuple it, int attno, Oid indrelid, List **context)
{
	bool		isnull;
	Datum		d = SysCacheGetAttr(INDEXRELID, it, attno, &isnull);

	if (isnull)
		return NULL;
	if (*context == NIL)
		*context = deparse_context_for(get_rel_name(indrelid), indrelid);
	return (Node *) stringToNode(TextDatumGetCString(d));
}

/*
 * An index's definition, told from its catalog rows, by column name: unique,
 * nulls not distinct, access method, each key column (or expression) with its
 * operator class, collation and options, the included columns, the
 * predicate, the storage parameters and the tablespace.  Two indexes of two
 * tables with the same column names have the same shape exactly when one
 * could stand for the other; nothing in it comes from a name the user chose
 * for the index.
 */
char *
BackfillIndexShape(Oid indexoid)
{
	HeapTuple	it = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	HeapTuple	ct = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
	Form_pg_index ix;
	Form_pg_class cl;
	oidvector  *opclasses;
	oidvector  *collations;
	int2vector *options;
	List	   *context = NIL;
	List	   *exprs;
	Node	   *pred;
	ListCell   *next;
	StringInfoData s;
	bool		isnull;
	Datum		d;

	if (!HeapTupleIsValid(it) || !HeapTupleIsValid(ct))
		elog(ERROR, "cache lookup failed for index %u", indexoid);
	ix = (Form_pg_index) GETSTRUCT(it);
	cl = (Form_pg_class) GETSTRUCT(ct);
	opclasses = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, it, Anum_pg_index_indclass, &isnull));
	collations = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, it, Anum_pg_index_indcollation, &isnull));
	options = (int2vector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, it, Anum_pg_index_indoption, &isnull));
	exprs = (List *) IndexNodes(it, Anum_pg_index_indexprs, ix->indrelid, &context);
	next = list_head(exprs);
	initStringInfo(&s);
	appendStringInfo(&s, "%s%sUSING %s (", ix->indisunique ? "UNIQUE " : "",
					 ix->indnullsnotdistinct ? "NULLS NOT DISTINCT " : "", get_am_name(cl->relam));
	for (int i = 0; i < ix->indnatts; i++)
	{
		AttrNumber	attnum = ix->indkey.values[i];

		appendStringInfoString(&s, i == 0 ? "" : i == ix->indnkeyatts ? ") INCLUDE (" : ", ");
		if (attnum != 0)
			appendStringInfoString(&s, quote_identifier(get_attname(ix->indrelid, attnum, false)));
		else
		{
			Assert(next != NULL);
			appendStringInfo(&s, "(%s)", deparse_expression(lfirst(next), context, false, false));
			next = lnext(exprs, next);
		}
		if (i < ix->indnkeyatts)
			appendStringInfo(&s, " %s COLLATE %u OPTIONS %d", OpclassName(opclasses->values[i]),
							 collations->values[i], options->values[i]);
	}
	appendStringInfoChar(&s, ')');
	pred = IndexNodes(it, Anum_pg_index_indpred, ix->indrelid, &context);
	if (pred != NULL)
		appendStringInfo(&s, " WHERE %s", deparse_expression(pred, context, false, false));
	d = SysCacheGetAttr(RELOID, ct, Anum_pg_class_reloptions, &isnull);
	if (!isnull)
		appendStringInfo(&s, " WITH %s", OidOutputFunctionCall(F_ARRAY_OUT, d));
	appendStringInfo(&s, " TABLESPACE %u", cl->reltablespace);
	ReleaseSysCache(it);
	ReleaseSysCache(ct);
	return s.data;
}

/*
 * Rows of a and b are laid out alike: the same attributes, none dropped (and,
 * with nomissing, none of a's with a value for rows stored before it was
 * added).
 */
static bool
SameColumns(Relation a, Relation b, bool nomissing)
{
	TupleDesc	da = RelationGetDescr(a);
	TupleDesc	db = RelationGetDescr(b);

	if (da->natts != db->natts)
		return false;
	for (int i = 0; i < da->natts; i++)
	{
		Form_pg_attribute x = TupleDescAttr(da, i);
		Form_pg_attribute y = TupleDescAttr(db, i);

		if (x->attisdropped || y->attisdropped || x->atttypid != y->atttypid ||
			x->attlen != y->attlen || x->attalign != y->attalign || x->attbyval != y->attbyval ||
			x->attgenerated != y->attgenerated || x->attcollation != y->attcollation ||
			x->atttypmod != y->atttypmod || (nomissing && x->atthasmissing))
			return false;
	}
	return true;
}

/*
 * Pair every index of part with the index of staging of the same definition
 * (as pairs of OIDs, part's first); false if one has none or there are
 * others.
 */
static bool
PairIndexes(Relation part, Relation staging, List **pairs)
{
	List	   *pidx = RelationGetIndexList(part);
	List	   *sidx = RelationGetIndexList(staging);
	ListCell   *lp;

	*pairs = NIL;
	if (list_length(pidx) != list_length(sidx))
		return false;
	foreach(lp, pidx)
	{
		char	   *shape = BackfillIndexShape(lfirst_oid(lp));
		ListCell   *ls;
		bool		found = false;

		CHECK_FOR_INTERRUPTS();
		foreach(ls, sidx)
		{
			if (!OidIsValid(lfirst_oid(ls)) || strcmp(BackfillIndexShape(lfirst_oid(ls)), shape) != 0)
				continue;
			*pairs = lappend(*pairs, list_make2_oid(lfirst_oid(lp), lfirst_oid(ls)));
			lfirst_oid(ls) = InvalidOid;	/* used */
			found = true;
			break;
		}
		if (!found)
			return false;
	}
	return true;
}

/* Whether every constraint of relid was checked against its rows, and every index is valid and ready. */
static bool
AllChecked(Relation rel)
{
	List	   *idx = RelationGetIndexList(rel);
	ListCell   *lc;

	if (BackfillQueryText("SELECT 1 FROM pg_catalog.pg_constraint WHERE conrelid OPERATOR(pg_catalog.=) $1"
						  " AND NOT convalidated AND contype OPERATOR(pg_catalog.=) ANY ('{c,n,f}') LIMIT 1",
						  RelationGetRelid(rel)) != NULL)
		return false;
	foreach(lc, idx)
	{
		HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));
		bool		ok;

		if (!HeapTupleIsValid(tup))
			return false;
		ok = ((Form_pg_index) GETSTRUCT(tup))->indisvalid && ((Form_pg_index) GETSTRUCT(tup))->indisready;
		ReleaseSysCache(tup);
		if (!ok)
			return false;
	}
	return true;
}

/*
 * Whether staging can give partition part its files (see the file header),
 * the old ones kept as the archive when keep; if so, *indexpairs pairs their
 * indexes.  Both must be locked.  Must be called inside SPI.
 */
bool
BackfillCanSwapFiles(Oid part, Oid staging, bool keep, List **indexpairs)
{
	Relation	p = table_open(part, NoLock);
	Relation	s = table_open(staging, NoLock);
	bool		ok;

	ok = p->rd_rel->relkind == RELKIND_RELATION && s->rd_rel->relkind == RELKIND_RELATION &&
		s->rd_createSubid == GetCurrentSubTransactionId() &&
		p->rd_rel->relam == s->rd_rel->relam &&
		p->rd_rel->relpersistence == s->rd_rel->relpersistence &&
		OidIsValid(p->rd_rel->reltoastrelid) == OidIsValid(s->rd_rel->reltoastrelid) &&
		SameColumns(p, s, keep) &&
		(!keep || AllChecked(p)) &&
		PairIndexes(p, s, indexpairs);
	table_close(s, NoLock);
	table_close(p, NoLock);
	return ok;
}

/*
 * Trade the storage of relations r1 and r2 (two tables, or two indexes) in
 * pg_class: files, tablespace, size statistics and, for tables, frozen-xid
 * horizons and TOAST links.  r1's new files are new in this subtransaction.
 */
static void
SwapClassRows(Oid r1, Oid r2)
{
	Relation	classrel = table_open(RelationRelationId, RowExclusiveLock);
	HeapTuple	t1 = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(r1));
	HeapTuple	t2 = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(r2));
	Form_pg_class c1;
	Form_pg_class c2;
	Relation	rel1;
	Relation	rel2;

	if (!HeapTupleIsValid(t1) || !HeapTupleIsValid(t2))
		elog(ERROR, "cache lookup failed for relation %u or %u", r1, r2);
	c1 = (Form_pg_class) GETSTRUCT(t1);
	c2 = (Form_pg_class) GETSTRUCT(t2);

#define SWAP_FIELD(type, field) do { type tmp_ = c1->field; c1->field = c2->field; c2->field = tmp_; } while (0)
	SWAP_FIELD(Oid, relfilenode);
	SWAP_FIELD(Oid, reltablespace);
	SWAP_FIELD(int32, relpages);
	SWAP_FIELD(float4, reltuples);
	SWAP_FIELD(int32, relallvisible);
#ifdef BACKFILL_HAVE_RELALLFROZEN
	SWAP_FIELD(int32, relallfrozen);
#endif
	if (c1->relkind != RELKIND_INDEX)
	{
		SWAP_FIELD(TransactionId, relfrozenxid);
		SWAP_FIELD(MultiXactId, relminmxid);
		SWAP_FIELD(Oid, reltoastrelid);
	}
#undef SWAP_FIELD

	/* as CLUSTER: r2 takes over what r1's old files were, r1's files are new */
	rel1 = relation_open(r1, NoLock);
	rel2 = relation_open(r2, NoLock);
	BackfillTakeOverStorage(rel1, rel2);
	relation_close(rel1, NoLock);
	relation_close(rel2, NoLock);

	CatalogTupleUpdate(classrel, &t1->t_self, t1);
	CatalogTupleUpdate(classrel, &t2->t_self, t2);
	heap_freetuple(t1);
	heap_freetuple(t2);
	table_close(classrel, RowExclusiveLock);
	BackfillCloseSmgrLinks(r1, r2);
}

/*
 * Trade the rows of catalog, whose first column is the OID of what they
 * describe (indexed by indexid), between a and b.
 */
static void
SwapCatalogRows(Oid catalog, Oid indexid, Oid a, Oid b)
{
	Relation	rel = table_open(catalog, RowExclusiveLock);
	Oid			owners[2] = {a, b};
	List	   *moved = NIL;
	ListCell   *lc;

	for (int i = 0; i < 2; i++)
	{
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;

		ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(owners[i]));
		scan = systable_beginscan(rel, indexid, true, NULL, 1, &key);
		while (HeapTupleIsValid(tup = systable_getnext(scan)))
		{
			HeapTuple	copy = heap_copytuple(tup);

			*((Oid *) GETSTRUCT(copy)) = owners[1 - i];
			moved = lappend(moved, copy);
			CatalogTupleDelete(rel, &tup->t_self);
		}
		systable_endscan(scan);
	}
	foreach(lc, moved)
		CatalogTupleInsert(rel, (HeapTuple) lfirst(lc));
	table_close(rel, RowExclusiveLock);
}

/*
 * Pair each extended statistics object of part with the one of staging of
 * the same kinds on the same columns, as OID pairs, part's first; objects
 * without a like are left out.  Must be called inside SPI.
 */
List *
BackfillPairStatistics(Oid part, Oid staging)
{
	int			rc = SPI_execute_with_args(
		"SELECT p.oid, s.oid FROM pg_catalog.pg_statistic_ext p JOIN pg_catalog.pg_statistic_ext s"
		"   ON s.stxrelid OPERATOR(pg_catalog.=) $2 AND s.stxkind OPERATOR(pg_catalog.=) p.stxkind"
		"  AND pg_catalog.pg_get_statisticsobjdef_columns(s.oid) OPERATOR(pg_catalog.=)"
		"      pg_catalog.pg_get_statisticsobjdef_columns(p.oid)"
		" WHERE p.stxrelid OPERATOR(pg_catalog.=) $1 ORDER BY p.oid, s.oid",
		2, (Oid[]) {OIDOID, OIDOID}, (Datum[]) {ObjectIdGetDatum(part), ObjectIdGetDatum(staging)},
		NULL, false, 0);
	SPITupleTable *rows = SPI_tuptable;
	uint64		n = SPI_processed;
	List	   *pairs = NIL;
	List	   *used = NIL;

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read the statistics objects of %u", part);
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;
		Oid			p = DatumGetObjectId(SPI_getbinval(rows->vals[i], rows->tupdesc, 1, &isnull));
		Oid			st = DatumGetObjectId(SPI_getbinval(rows->vals[i], rows->tupdesc, 2, &isnull));

		/* (two objects alike on one side: each pairs once) */
		if (list_member_oid(used, p) || list_member_oid(used, st))
			continue;
		used = lappend_oid(lappend_oid(used, p), st);
		pairs = lappend(pairs, list_make2_oid(p, st));
	}
	return pairs;
}

/* Rename relid (an index if index), then make the new name visible. */
static void
RenameVisibly(Oid relid, const char *name, bool index)
{
	RenameRelationInternal(relid, name, true, index);
	CommandCounterIncrement();
}

/*
 * After SwapClassRows(part, staging): the TOAST table that was staging's,
 * toast_s, now belongs to part and the one that was part's, toast_p, to
 * staging.  Record that in pg_depend, and trade their names and their
 * indexes' names (pg_toast_<owner>), by way of a name neither has.
 */
static void
TradeToastOwners(Oid part, Oid staging, Oid toast_p, Oid toast_s)
{
	ObjectAddress owner;
	ObjectAddress toast;
	Oid			index_p = toast_get_valid_index(toast_p, NoLock);
	Oid			index_s = toast_get_valid_index(toast_s, NoLock);

	if (deleteDependencyRecordsFor(RelationRelationId, toast_p, false) != 1 ||
		deleteDependencyRecordsFor(RelationRelationId, toast_s, false) != 1)
		elog(ERROR, "expected one dependency record for each TOAST table");
	ObjectAddressSet(owner, RelationRelationId, part);
	ObjectAddressSet(toast, RelationRelationId, toast_s);
	recordDependencyOn(&toast, &owner, DEPENDENCY_INTERNAL);
	ObjectAddressSet(owner, RelationRelationId, staging);
	ObjectAddressSet(toast, RelationRelationId, toast_p);
	recordDependencyOn(&toast, &owner, DEPENDENCY_INTERNAL);
	CommandCounterIncrement();

	RenameVisibly(toast_p, psprintf("backfill_swap_%u", toast_p), false);
	RenameVisibly(index_p, psprintf("backfill_swap_%u_index", toast_p), true);
	RenameVisibly(toast_s, psprintf("pg_toast_%u", part), false);
	RenameVisibly(index_s, psprintf("pg_toast_%u_index", part), true);
	RenameVisibly(toast_p, psprintf("pg_toast_%u", staging), false);
	RenameVisibly(index_p, psprintf("pg_toast_%u_index", staging), true);
}

/* The TOAST table of relid, or InvalidOid. */
static Oid
ToastOf(Oid relid)
{
	Relation	rel = table_open(relid, NoLock);
	Oid			toast = rel->rd_rel->reltoastrelid;

	table_close(rel, NoLock);
	return toast;
}

/*
 * Give partition part the files of staging, and staging those of part:
 * tables, their TOAST tables and indexes (indexpairs, from
 * BackfillCanSwapFiles) and their planner statistics, and return the pairs
 * of extended statistics objects whose data were traded
 * (BackfillPairStatistics).  Both must be held in ACCESS EXCLUSIVE mode.
 * Must be called inside SPI.
 */
List *
BackfillSwapFiles(Oid part, Oid staging, List *indexpairs)
{
	Oid			toast_p = ToastOf(part);
	Oid			toast_s = ToastOf(staging);
	List	   *statpairs;
	ListCell   *lc;

	BackfillAssertLocked(part, AccessExclusiveLock, "swap by files");
	BackfillAssertLocked(staging, AccessExclusiveLock, "swap by files");
	/* every relation whose files move, or whose name or owner changes */
	foreach(lc, indexpairs)
	{
		LockRelationOid(linitial_oid((List *) lfirst(lc)), AccessExclusiveLock);
		LockRelationOid(lsecond_oid((List *) lfirst(lc)), AccessExclusiveLock);
	}
	if (OidIsValid(toast_p))
	{
		LockRelationOid(toast_p, AccessExclusiveLock);
		LockRelationOid(toast_s, AccessExclusiveLock);
		LockRelationOid(toast_get_valid_index(toast_p, AccessExclusiveLock), AccessExclusiveLock);
		LockRelationOid(toast_get_valid_index(toast_s, AccessExclusiveLock), AccessExclusiveLock);
	}
	SwapClassRows(part, staging);
	foreach(lc, indexpairs)
	{
		List	   *pair = (List *) lfirst(lc);

		CHECK_FOR_INTERRUPTS();
		SwapClassRows(linitial_oid(pair), lsecond_oid(pair));
		/* (an expression index has statistics of its own) */
		SwapCatalogRows(StatisticRelationId, StatisticRelidAttnumInhIndexId,
						linitial_oid(pair), lsecond_oid(pair));
	}
	SwapCatalogRows(StatisticRelationId, StatisticRelidAttnumInhIndexId, part, staging);
	statpairs = BackfillPairStatistics(part, staging);
	foreach(lc, statpairs)
		SwapCatalogRows(StatisticExtDataRelationId, StatisticExtDataStxoidInhIndexId,
						linitial_oid((List *) lfirst(lc)), lsecond_oid((List *) lfirst(lc)));
	if (OidIsValid(toast_p))
		TradeToastOwners(part, staging, toast_p, toast_s);
	CommandCounterIncrement();
	return statpairs;
}
