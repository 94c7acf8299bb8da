/*-------------------------------------------------------------------------
 *
 * src/write/part.c
 *		The partition a write replaces: found, its bounds read, and what a
 *		swap cannot carry over refused before anything is written.
 *
 * BackfillResolvePart reads a leaf partition's bound on its parent's key and
 * the bounds of its ancestors, so the rows of a replacement can be checked
 * against them as they are written (BackfillInBound).  The checks here only
 * read the catalogs; the swap takes its locks and checks again under them
 * (swap.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_partitioned_table.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
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
#include "base/spi_util.h"
#include "write/part.h"
#include "write/publication.h"

/* The Const value of a bound datum, copied. */
static Datum
BoundValue(Node *node, bool *isnull)
{
	Const	   *c = castNode(Const, node);

	*isnull = c->constisnull;
	if (c->constisnull)
		return (Datum) 0;
	return datumCopy(c->constvalue, c->constbyval, c->constlen);
}

typedef enum BoundKind
{
	BOUND_OK,
	BOUND_HASH,					/* the parent is partitioned by HASH */
	BOUND_KEY					/* the parent's key is not one column */
} BoundKind;

/* Read the bound spec of rel, on the key of parent, into b. */
static BoundKind
ReadBound(Oid rel, Oid parent, PartitionBoundSpec *spec, BackfillBound *b)
{
	HeapTuple	tup;
	Form_pg_partitioned_table pt;
	Datum		datum;
	bool		isnull;
	Oid			opfamily;
	Oid			opcintype;
	AttrNumber	keyattno;
	Oid			cmpproc;
	Oid			attcoll;

	memset(b, 0, sizeof(*b));
	b->rel = rel;
	tup = SearchSysCache1(PARTRELID, ObjectIdGetDatum(parent));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for partition key of %u", parent);
	pt = (Form_pg_partitioned_table) GETSTRUCT(tup);
	b->strategy = pt->partstrat;
	if (pt->partstrat != PARTITION_STRATEGY_RANGE && pt->partstrat != PARTITION_STRATEGY_LIST)
	{
		ReleaseSysCache(tup);
		return BOUND_HASH;
	}
	if (pt->partnatts != 1 || pt->partattrs.values[0] == 0)
	{
		ReleaseSysCache(tup);
		return BOUND_KEY;
	}
	keyattno = pt->partattrs.values[0];
	datum = SysCacheGetAttr(PARTRELID, tup, Anum_pg_partitioned_table_partclass, &isnull);
	opfamily = get_opclass_family(((oidvector *) DatumGetPointer(datum))->values[0]);
	opcintype = get_opclass_input_type(((oidvector *) DatumGetPointer(datum))->values[0]);
	datum = SysCacheGetAttr(PARTRELID, tup, Anum_pg_partitioned_table_partcollation, &isnull);
	b->keycoll = ((oidvector *) DatumGetPointer(datum))->values[0];
	ReleaseSysCache(tup);

	b->keyname = get_attname(parent, keyattno, false);
	get_atttypetypmodcoll(parent, keyattno, &b->keytype, &b->keytypmod, &attcoll);
	cmpproc = get_opfamily_proc(opfamily, opcintype, opcintype, BTORDER_PROC);
	if (!OidIsValid(cmpproc))
		elog(ERROR, "no btree comparison function for the partition key of %u", parent);
	fmgr_info(cmpproc, &b->keycmp);

	if (b->strategy == PARTITION_STRATEGY_RANGE)
	{
		PartitionRangeDatum *lo = linitial_node(PartitionRangeDatum, spec->lowerdatums);
		PartitionRangeDatum *hi = linitial_node(PartitionRangeDatum, spec->upperdatums);

		b->haslower = lo->kind == PARTITION_RANGE_DATUM_VALUE;
		b->hasupper = hi->kind == PARTITION_RANGE_DATUM_VALUE;
		if (b->haslower)
			b->lower = BoundValue(lo->value, &isnull);
		if (b->hasupper)
			b->upper = BoundValue(hi->value, &isnull);
	}
	else
	{
		ListCell   *lc;

		b->list = palloc(sizeof(Datum) * Max(1, list_length(spec->listdatums)));
		foreach(lc, spec->listdatums)
		{
			Datum		v = BoundValue(lfirst(lc), &isnull);

			if (isnull)
				b->listnull = true;
			else
				b->list[b->nlist++] = v;
		}
	}
	return BOUND_OK;
}

/* Does the key value fall in the bound? */
bool
BackfillInBound(BackfillBound *b, Datum key, bool isnull)
{
	if (b->strategy == PARTITION_STRATEGY_LIST)
	{
		if (isnull)
			return b->listnull;
		for (int i = 0; i < b->nlist; i++)
			if (DatumGetInt32(FunctionCall2Coll(&b->keycmp, b->keycoll, key, b->list[i])) == 0)
				return true;
		return false;
	}
	if (isnull)
		return false;
	if (b->haslower &&
		DatumGetInt32(FunctionCall2Coll(&b->keycmp, b->keycoll, key, b->lower)) < 0)
		return false;
	if (b->hasupper &&
		DatumGetInt32(FunctionCall2Coll(&b->keycmp, b->keycoll, key, b->upper)) >= 0)
		return false;
	return true;
}

/* Is relid a partition whose DETACH ... CONCURRENTLY has not finished? */
static bool
DetachPending(Oid relid)
{
	Relation	inh = table_open(InheritsRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		pending = false;

	ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(inh, InheritsRelidSeqnoIndexId, true, NULL, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
		pending |= ((Form_pg_inherits) GETSTRUCT(tup))->inhdetachpending;
	systable_endscan(scan);
	table_close(inh, AccessShareLock);
	return pending;
}

/*
 * The new partition is built beside the old one and given to the table's
 * owner: when a member of that role replaces it, ALTER OWNER needs the owner
 * to have CREATE on the schema.  Said up front, naming the role.
 */
void
BackfillCheckOwnerMayCreate(BackfillPart *bp)
{
	Oid			owner = BackfillRelOwner(bp->part);
	Oid			nsp = get_rel_namespace(bp->part);

	if (owner != GetUserId() && !superuser() &&
		BackfillSchemaAclCheck(nsp, owner, ACL_CREATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("role %s, the owner of partition %s, must have CREATE on schema %s for a member of it to replace the partition",
						quote_identifier(GetUserNameFromId(owner, false)), bp->qualname,
						quote_identifier(get_namespace_name(nsp))),
				 errdetail("The new partition is built beside the old one, then given to the owner of the old one."),
				 errhint("GRANT CREATE ON SCHEMA %s TO %s, or replace it as %s.",
						 quote_identifier(get_namespace_name(nsp)),
						 quote_identifier(GetUserNameFromId(owner, false)),
						 quote_identifier(GetUserNameFromId(owner, false)))));
}

/* Refuse, with what to grant, when the caller may not act as the owner of table relid. */
static void
CheckMayActAsOwner(Oid relid, const char *what, BackfillPart *bp)
{
	Oid			owner = BackfillRelOwner(relid);
	const char *ownername;
	const char *me;

	if (has_privs_of_role(GetUserId(), owner))
		return;
	ownername = quote_identifier(GetUserNameFromId(owner, false));
	me = quote_identifier(GetUserNameFromId(GetUserId(), false));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("must be a member of role %s, the owner of %s %s, to replace partition %s",
					ownername, what, BackfillQualifiedName(relid), bp->qualname),
			 errdetail("%s is owned by %s, not by the owner of %s: a replacement reads, detaches, drops or archives and alters it as its owner.",
					   BackfillQualifiedName(relid), ownername, bp->qualparent),
			 errhint("GRANT %s TO %s, or ALTER TABLE %s OWNER TO %s. pg_partman gives new partitions the parent's owner when inherit_privileges is set in partman.part_config.",
					 ownername, me, BackfillQualifiedName(relid),
					 quote_identifier(GetUserNameFromId(BackfillRelOwner(bp->parent), false)))));
}

/*
 * The caller must be able to act as the owner of the partition it replaces
 * and of the DEFAULT partition, whose constraint the swap changes: checked up
 * front, for each partition a call will replace, instead of a raw
 * "permission denied" from inside CREATE TABLE ... LIKE or DROP.
 */
void
BackfillCheckPartRights(BackfillPart *bp)
{
	CheckMayActAsOwner(bp->part, "partition", bp);
	if (OidIsValid(bp->defaultpart))
		CheckMayActAsOwner(bp->defaultpart, "the DEFAULT partition", bp);
}

/* Refuse a relation (cls, named name) that is not a leaf partition. */
static void
RefuseNotLeaf(Form_pg_class cls, const char *argname, const char *name)
{
	if (cls->relkind == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot replace \"%s\": it is itself partitioned", name),
				 errhint("Replace its leaf partitions one by one.")));
	if (cls->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot use \"%s\" as %s", name, argname),
				 errdetail_relkind_not_supported(cls->relkind),
				 errhint("Pass a leaf partition of a partitioned table.")));
	if (!cls->relispartition)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot replace \"%s\": it is not a partition", name),
				 errhint("To rewrite a plain table, use backfill_merge.")));
}

/* The bounds of bp's ancestors, where they can be checked row by row, into bp->outer. */
static void
ReadAncestorBounds(BackfillPart *bp)
{
	for (Oid rel = bp->parent; get_rel_relispartition(rel);)
	{
		Oid			parent = get_partition_parent(rel, false);
		BackfillBound *b = palloc0(sizeof(BackfillBound));
		PartitionBoundSpec *s;
		HeapTuple	tup;
		Datum		datum;
		bool		isnull;

		tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rel));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for relation %u", rel);
		datum = SysCacheGetAttr(RELOID, tup, Anum_pg_class_relpartbound, &isnull);
		s = castNode(PartitionBoundSpec, stringToNode(TextDatumGetCString(datum)));
		ReleaseSysCache(tup);
		if (!s->is_default && ReadBound(rel, parent, s, b) == BOUND_OK)
			bp->outer = lappend(bp->outer, b);
		rel = parent;
	}
}

/*
 * Check that relid is a leaf partition of a RANGE (one-column key) or LIST
 * partitioned table that the current user owns, and describe it.  Takes no
 * lock: the caller locks the partition and calls again to be sure.
 */
void
BackfillResolvePart(Oid relid, const char *argname, BackfillPart *bp)
{
	HeapTuple	tup;
	Form_pg_class cls;
	Datum		datum;
	bool		isnull;
	PartitionBoundSpec *spec;

	memset(bp, 0, sizeof(*bp));
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("%s: relation with OID %u does not exist", argname, relid),
				 errhint("The relation may have been dropped.")));
	cls = (Form_pg_class) GETSTRUCT(tup);
	bp->part = relid;
	bp->nsp = cls->relnamespace;
	bp->name = pstrdup(NameStr(cls->relname));

	RefuseNotLeaf(cls, argname, bp->name);

	datum = SysCacheGetAttr(RELOID, tup, Anum_pg_class_relpartbound, &isnull);
	if (isnull)
		elog(ERROR, "partition \"%s\" has no bound", bp->name);
	spec = castNode(PartitionBoundSpec, stringToNode(TextDatumGetCString(datum)));
	ReleaseSysCache(tup);
	bp->spec = spec;

	if (DetachPending(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot replace \"%s\": it is being detached from its partitioned table", bp->name),
				 errhint("Wait for ALTER TABLE ... DETACH PARTITION ... CONCURRENTLY to finish (or FINALIZE it).")));
	bp->parent = get_partition_parent(relid, false);
	bp->qualname = BackfillQualifiedName(relid);
	bp->qualparent = BackfillQualifiedName(bp->parent);

	/* the owner check comes before any lock is taken */
	if (!BackfillRelOwnerCheck(bp->parent, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to replace its partitions", bp->qualparent),
				 errhint("%s", BackfillOwnerHint(bp->parent))));


	if (spec->is_default)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot replace \"%s\": it is the DEFAULT partition of %s",
						bp->name, bp->qualparent),
				 errdetail("The DEFAULT partition has no range of its own to recompute."),
				 errhint("Move its rows into partitions with bounds first.")));

	switch (ReadBound(relid, bp->parent, spec, &bp->own))
	{
		case BOUND_HASH:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot replace \"%s\": %s is partitioned by HASH", bp->name, bp->qualparent),
					 errdetail("A hash partition holds no range of the data that a source could recompute.")));
			break;
		case BOUND_KEY:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot replace \"%s\": the partition key of %s is not a single column",
							bp->name, bp->qualparent),
					 errdetail("Only partition keys of one column are supported.")));
			break;
		case BOUND_OK:
			break;
	}

	ReadAncestorBounds(bp);
	bp->defaultpart = get_default_partition_oid(bp->parent);
}

/*
 * A view, or a function whose SQL-standard body (BEGIN ATOMIC, RETURN)
 * reads the partition, refers to it by OID: it would follow the archive
 * under keep_old, or stop the DROP otherwise.
 */
static void
RefuseDependentCode(BackfillPart *bp)
{
	char	   *fk = BackfillQueryText("SELECT pg_catalog.format('%s', r.ev_class::pg_catalog.regclass)"
						   " FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_rewrite r"
						   "   ON r.oid OPERATOR(pg_catalog.=) d.objid"
						   " WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
						   "   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
						   "   AND d.refobjid OPERATOR(pg_catalog.=) $1"
						   "   AND r.ev_class OPERATOR(pg_catalog.<>) $1 LIMIT 1", bp->part);
	if (fk != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot replace partition %s: view %s depends on it", bp->qualname, fk),
				 errdetail("The view would go on reading the old partition."),
				 errhint("Define the view on the partitioned table, or drop it for the backfill.")));

	/* so would a function whose SQL-standard body (BEGIN ATOMIC, RETURN) names it */
	fk = BackfillQueryText("SELECT pg_catalog.format('%I.%I(%s)', n.nspname, p.proname,"
						   "  pg_catalog.pg_get_function_identity_arguments(p.oid))"
						   " FROM pg_catalog.pg_depend d"
						   " JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) d.objid"
						   " JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace"
						   " WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass"
						   "   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
						   "   AND d.refobjid OPERATOR(pg_catalog.=) $1"
						   "   AND d.deptype OPERATOR(pg_catalog.=) 'n'"
						   " ORDER BY 1 LIMIT 1", bp->part);
	if (fk != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot replace partition %s: function %s depends on it", bp->qualname, fk),
				 errdetail("Its SQL-standard body refers to the partition by OID: it would go on reading the old partition."),
				 errhint("Have the function read the partitioned table, or drop it for the backfill.")));
}

/*
 * The parent's policies bind its owner only under FORCE ROW LEVEL SECURITY;
 * a swap writes the whole partition outside them, so then it is refused.
 * (Only an owner can replace a partition.)
 */
void
BackfillRefuseForcedRowSecurity(BackfillPart *bp)
{
	Oid			forced = BackfillForcedRowSecurity(bp->part);

	if (OidIsValid(forced))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot replace partition %s: %s forces row-level security on its owner",
						bp->qualname, BackfillQualifiedName(forced)),
				 errdetail("A swap writes the whole partition, outside the policies."),
				 errhint("Use backfill_merge, whose MERGE the policies apply to, or lift FORCE ROW LEVEL SECURITY for the backfill.")));
}

/*
 * Refuse what a swap cannot carry over.  A foreign key that points at the
 * partition or one of its ancestors: DETACH fails on such a partition when
 * rows reference it, and swapping would leave the references dangling.
 * A view or rule on the partition, or a function whose SQL-standard body
 * reads it: it would keep reading the old table.
 * Row-level security of the partition's own: policies are not copied.
 * A foreign key to a partitioned table has a clone per referenced partition
 * (named with a suffix from 18 on): the message names the one the user made.
 */
void
BackfillRefuseReferencedPartition(BackfillPart *bp)
{
	char	   *fk = BackfillQueryText(
		"SELECT pg_catalog.format('%I of table %s', c.conname, c.conrelid::pg_catalog.regclass)"
		" FROM pg_catalog.pg_constraint c"
		" WHERE c.contype OPERATOR(pg_catalog.=) 'f'"
		" AND c.confrelid IN (SELECT a.relid FROM pg_catalog.pg_partition_ancestors($1) a)"
		" ORDER BY c.conparentid OPERATOR(pg_catalog.<>) 0, c.oid LIMIT 1", bp->part);

	if (fk != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot replace partition %s: foreign key %s references it", bp->qualname, fk),
				 errdetail("Swapping a referenced partition would leave the references dangling."),
				 errhint("Drop the foreign key for the backfill, or use backfill_merge.")));

	RefuseDependentCode(bp);

	/* a swap is not replicated: subscribers would keep the old rows */
	BackfillRefusePublished(bp->part, NULL);

	/* rules, sequences it owns and other table access methods do not carry over */
	fk = BackfillQueryText(
		"SELECT CASE WHEN c.relam OPERATOR(pg_catalog.<>) 2 THEN 'its table access method is not heap'"
		"  WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite r WHERE r.ev_class OPERATOR(pg_catalog.=) c.oid)"
		"   THEN 'it has rules of its own'"
		"  WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_class s"
		"               ON s.oid OPERATOR(pg_catalog.=) d.objid AND s.relkind OPERATOR(pg_catalog.=) 'S'"
		"               WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
		"                 AND d.refobjid OPERATOR(pg_catalog.=) c.oid AND d.deptype OPERATOR(pg_catalog.=) ANY ('{a,i}'))"
		"   THEN 'it owns a sequence' END"
		" FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) $1", bp->part);
	if (fk != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot replace partition %s: %s", bp->qualname, fk),
				 errdetail("A swap would not carry it over to the new partition.")));

	/* row-level security of its own would not be copied */
	if (BackfillQueryText("SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) $1"
						  " AND (c.relrowsecurity OR EXISTS (SELECT 1 FROM pg_catalog.pg_policy p"
						  " WHERE p.polrelid OPERATOR(pg_catalog.=) c.oid))", bp->part) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot replace partition %s: it has row-level security of its own", bp->qualname),
				 errdetail("Its policies would not carry over to the new partition."),
				 errhint("Define the policies on the partitioned table instead.")));

	BackfillRefuseForcedRowSecurity(bp);
}
