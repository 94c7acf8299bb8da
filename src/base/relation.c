/*-------------------------------------------------------------------------
 *
 * src/base/relation.c
 *		Checking the relations and columns that callers name.
 *
 * A regclass argument is only an OID: the relation may have been dropped
 * since the caller resolved it, or may be of a kind the function cannot work
 * on.  Each function locks the relation first, then checks that it still
 * exists and is of an accepted kind, so the name it then embeds in SQL keeps
 * naming the same relation until the end of the transaction.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/statvfs.h>

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_tablespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "base/relation.h"
#include "base/spi_util.h"

/* Is relkind among the accepted kinds? */
static bool
KindAccepted(char relkind, int kinds)
{
	switch (relkind)
	{
		case RELKIND_RELATION:
			return (kinds & BACKFILL_REL_TABLE) != 0;
		case RELKIND_PARTITIONED_TABLE:
			return (kinds & BACKFILL_REL_PARTITIONED) != 0;
		case RELKIND_MATVIEW:
			return (kinds & BACKFILL_REL_MATVIEW) != 0;
		case RELKIND_FOREIGN_TABLE:
			return (kinds & BACKFILL_REL_FOREIGN) != 0;
		default:
			return false;
	}
}

/*
 * Lock relid in lockmode and return it, or, if another session replaced it
 * while we waited (a partition swapped, a table renamed away and another
 * given its name), lock and return the relation that now has its name.  The
 * name is the one the caller resolved relid by (name in schema nsp), or, when
 * name is NULL, relid's name now.  A relid that has no name is locked and
 * returned as it is: the caller checks.  what names the relation in errors
 * ("partition", "relation").
 */
Oid
BackfillLockFollowingName(Oid relid, const char *name, Oid nsp, const char *what, LOCKMODE lockmode)
{
	if (name == NULL)
	{
		name = get_rel_name(relid);
		nsp = get_rel_namespace(relid);
	}

	for (int tries = 0;; tries++)
	{
		char	   *now;
		Oid			again;

		LockRelationOid(relid, lockmode);
		if (name == NULL)
			return relid;
		now = get_rel_name(relid);
		if (now != NULL && strcmp(now, name) == 0 && get_rel_namespace(relid) == nsp)
			return relid;
		UnlockRelationOid(relid, lockmode);
		again = get_relname_relid(name, nsp);
		if (!OidIsValid(again))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("%s %s was dropped while waiting for its lock", what,
							quote_qualified_identifier(get_namespace_name(nsp), name))));
		if (tries >= 3)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("%s %s keeps being replaced by other sessions", what,
							quote_qualified_identifier(get_namespace_name(nsp), name)),
					 errhint("Retry.")));
		relid = again;
	}
}

/*
 * The regclass argument argno, locked in lockmode (following its name, as
 * BackfillLockFollowingName does), checked to exist and to be of one of the
 * accepted kinds.
 */
Oid
BackfillOpenRelArg(FunctionCallInfo fcinfo, int argno, const char *argname,
				   int kinds, LOCKMODE lockmode)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", argname)));
	return BackfillOpenRel(PG_GETARG_OID(argno), argname, kinds, lockmode);
}

/* The same for a relation passed as relid (argname naming it in errors). */
Oid
BackfillOpenRel(Oid relid, const char *argname, int kinds, LOCKMODE lockmode)
{
	char		relkind;

	relid = BackfillLockFollowingName(relid, NULL, InvalidOid, "relation", lockmode);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
	{
		UnlockRelationOid(relid, lockmode);
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("%s: relation with OID %u does not exist", argname, relid),
				 errhint("The relation may have been dropped.")));
	}

	relkind = get_rel_relkind(relid);
	if (!KindAccepted(relkind, kinds))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot use \"%s\" as %s", get_rel_name(relid), argname),
				 errdetail_relkind_not_supported(relkind),
				 kinds == BACKFILL_REL_READABLE
				 ? errhint("Pass a table, a partitioned table, a materialized view or a foreign table.")
				 : errhint("Pass a table or a partitioned table.")));
	return relid;
}

/*
 * Check that every name in names is a column of relid (not a system column,
 * not dropped) and return their attribute numbers as an integer List.
 */
List *
BackfillRelColumns(Oid relid, List *names, const char *argname)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, names)
	{
		char	   *name = (char *) lfirst(lc);
		AttrNumber	attnum = get_attnum(relid, name);

		if (attnum <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("%s: column \"%s\" does not exist in %s",
							argname, name, BackfillQualifiedName(relid)),
					 errhint("Column names are case-sensitive and are not quoted inside the array.")));
		result = lappend_int(result, attnum);
	}
	return result;
}

/*
 * ", c1, c2, ...": the columns of relid that are not dropped, in order,
 * quoted, each after a comma (as arguments after another); their number in
 * *ncols.
 */
char *
BackfillRelColumnArgs(Oid relid, int *ncols)
{
	TupleDesc	desc = lookup_rowtype_tupdesc(get_rel_type_id(relid), -1);
	StringInfoData cols;

	initStringInfo(&cols);
	*ncols = 0;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		appendStringInfo(&cols, ", %s", quote_identifier(NameStr(att->attname)));
		(*ncols)++;
	}
	ReleaseTupleDesc(desc);
	return cols.data;
}

/*
 * relid, or the first table above it, if it forces row-level security on its
 * owner (the policies then bind a write of the owner's too); else
 * InvalidOid.
 */
Oid
BackfillForcedRowSecurity(Oid relid)
{
	List	   *rels = lcons_oid(relid, get_partition_ancestors(relid));
	ListCell   *lc;

	foreach(lc, rels)
	{
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(lfirst_oid(lc)));
		bool		forced;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for relation %u", lfirst_oid(lc));
		forced = ((Form_pg_class) GETSTRUCT(tup))->relrowsecurity &&
			((Form_pg_class) GETSTRUCT(tup))->relforcerowsecurity;
		ReleaseSysCache(tup);
		if (forced)
			return lfirst_oid(lc);
	}
	return InvalidOid;
}

/* Whether values of column a are stored as values of column b: same type, length, alignment. */
static bool
SameStorage(Form_pg_attribute a, Form_pg_attribute b)
{
	return a->atttypid == b->atttypid && a->attlen == b->attlen &&
		a->attbyval == b->attbyval && a->attalign == b->attalign;
}

/* Whether rows of row type a are stored as rows of b: the same columns' types, in one order. */
bool
BackfillSameLayout(TupleDesc a, TupleDesc b)
{
	if (a->natts != b->natts)
		return false;
	for (int j = 0; j < a->natts; j++)
	{
		Form_pg_attribute aa = TupleDescAttr(a, j);
		Form_pg_attribute ba = TupleDescAttr(b, j);

		if (aa->attisdropped || ba->attisdropped || !SameStorage(aa, ba))
			return false;
	}
	return true;
}

/*
 * Whether rows of a and b hold the same columns in the same places: the same
 * names and types where columns are, dropped ones where they are dropped
 * (two partitions of one table that lost the same column), so a row hasher
 * made for one hashes rows of the other alike.
 */
bool
BackfillSameColumns(TupleDesc a, TupleDesc b)
{
	if (a->natts != b->natts)
		return false;
	for (int j = 0; j < a->natts; j++)
	{
		Form_pg_attribute aa = TupleDescAttr(a, j);
		Form_pg_attribute ba = TupleDescAttr(b, j);

		if (aa->attisdropped != ba->attisdropped)
			return false;
		if (!aa->attisdropped &&
			(!SameStorage(aa, ba) || strcmp(NameStr(aa->attname), NameStr(ba->attname)) != 0))
			return false;
	}
	return true;
}

/*
 * The hint of a "must be owner" error: who owns the table, and that being a
 * member of that role is enough.
 */
char *
BackfillOwnerHint(Oid relid)
{
	const char *owner = GetUserNameFromId(BackfillRelOwner(relid), false);

	return psprintf("Table %s is owned by role %s: run this as %s or as a member of it"
					" (GRANT %s TO %s).", BackfillQualifiedName(relid), quote_identifier(owner),
					quote_identifier(owner), quote_identifier(owner),
					quote_identifier(GetUserNameFromId(GetUserId(), false)));
}

/* The owner of a relation. */
Oid
BackfillRelOwner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * The file node of a relation's storage (0 for a mapped or storage-less one,
 * or one that no longer exists).
 */
Oid
BackfillRelFileNode(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			node;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	node = (Oid) ((Form_pg_class) GETSTRUCT(tup))->relfilenode;
	ReleaseSysCache(tup);
	return node;
}

/* "OPERATOR(schema.=)" for the default equality of type, or NULL if it has none. */
char *
BackfillEqualityOperator(Oid type)
{
	Oid			opr = lookup_type_cache(type, TYPECACHE_EQ_OPR)->eq_opr;
	HeapTuple	tup;
	char	   *result;

	if (!OidIsValid(opr))
		return NULL;
	tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(opr));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator %u", opr);
	result = psprintf("OPERATOR(%s.%s)",
					  quote_identifier(get_namespace_name(((Form_pg_operator) GETSTRUCT(tup))->oprnamespace)),
					  NameStr(((Form_pg_operator) GETSTRUCT(tup))->oprname));
	ReleaseSysCache(tup);
	return result;
}

/*
 * Does the current user see every row of relid, and of each table above it
 * (a partition read directly escapes its parents' policies)?  Yes when none
 * has row-level security on, or the user bypasses it there: a superuser, a
 * BYPASSRLS role, the owner unless FORCE ROW LEVEL SECURITY.
 */
bool
BackfillMaySeeRows(Oid relid)
{
	ListCell   *lc;

	if (!OidIsValid(relid) || !SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return superuser();
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		return false;
	if (get_rel_relispartition(relid))
		foreach(lc, get_partition_ancestors(relid))
			if (check_enable_rls(lfirst_oid(lc), InvalidOid, true) == RLS_ENABLED)
				return false;
	return true;
}

/*
 * expr, of type srctype(srctypmod) (InvalidOid: unknown), as a column of
 * type(typmod) stores it: cast when the types or typmods differ
 * (numeric(5,0) rounds 9.6 to 10, timestamp(0) rounds 12:00:00.4 to
 * 12:00:00), which an explicit cast does as an insert's assignment would.
 * Not for character and bit strings, nor arrays or domains of them, whose
 * explicit cast truncates where assignment refuses: their values are stored
 * as they are, or the write fails.
 */
char *
BackfillStoredValue(const char *expr, Oid srctype, int32 srctypmod, Oid type, int32 typmod)
{
	Oid			base = getBaseType(type);

	if (srctype == type && (typmod < 0 || srctypmod == typmod))
		return (char *) expr;
	/* an array of them casts its elements alike */
	if (OidIsValid(get_element_type(base)))
		base = getBaseType(get_element_type(base));
	switch (base)
	{
		case BPCHAROID:
		case VARCHAROID:
		case BITOID:
		case VARBITOID:
			return (char *) expr;
		default:
			return psprintf("CAST(%s AS %s)", expr, format_type_with_typemod(type, typmod));
	}
}

/* Whether this session has rel open beyond the one reference the caller holds. */
static bool
OpenElsewhere(Relation rel)
{
	return rel->rd_refcnt != (rel->rd_isnailed ? 2 : 1) || AfterTriggerPendingOnRel(RelationGetRelid(rel));
}

/*
 * Refuse to give relid's rows new storage (what) while this session still
 * reads it: a cursor or a portal of the same transaction opened on it, or on
 * one of its indexes, would read old rows then new ones, or fail on a block
 * the new files lack; trigger events pending on it would fire on rows that
 * are gone.  What CLUSTER and TRUNCATE refuse (CheckTableNotInUse), with the
 * name of the argument.  The caller holds a lock on relid; its indexes are
 * locked here in ACCESS SHARE mode, to the end of the transaction.
 */
void
BackfillRefuseInUse(Oid relid, const char *what)
{
	Relation	rel = relation_open(relid, NoLock);
	List	   *indexes = RelationGetIndexList(rel);
	bool		busy = OpenElsewhere(rel);
	ListCell   *lc;

	foreach(lc, indexes)
	{
		Relation	idx;

		if (busy)
			break;
		/* an index is locked on its own, as a reader of the table locks it */
		idx = relation_open(lfirst_oid(lc), AccessShareLock);
		busy = OpenElsewhere(idx);
		relation_close(idx, NoLock);
	}
	relation_close(rel, NoLock);
	if (busy)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot %s %s: this session is still reading it", what, BackfillQualifiedName(relid)),
				 errdetail("A cursor or a portal of this transaction is open on it or on one of its indexes, or trigger events on it are pending."),
				 errhint("Close the cursor first, or do this in another transaction.")));
}

/* The bytes of one relation's main fork, 0 when there is none. */
static int64
ForkBytes(Oid relid)
{
	Relation	rel;
	int64		bytes;

	if (!OidIsValid(relid))
		return 0;
	rel = relation_open(relid, AccessShareLock);
	bytes = RELKIND_HAS_STORAGE(rel->rd_rel->relkind) ?
		(int64) RelationGetNumberOfBlocks(rel) * BLCKSZ : 0;
	relation_close(rel, AccessShareLock);
	return bytes;
}

/*
 * The bytes a table holds on disk now: its heap, its TOAST table with the
 * TOAST index, and its indexes (as pg_relation_size, pg_table_size minus it,
 * and pg_indexes_size count them, main forks only).
 */
void
BackfillRelationBytes(Oid relid, int64 *heap, int64 *toast, int64 *indexes)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	List	   *list = RelationGetIndexList(rel);
	Oid			toastrelid = rel->rd_rel->reltoastrelid;
	ListCell   *lc;

	*heap = RELKIND_HAS_STORAGE(rel->rd_rel->relkind) ? (int64) RelationGetNumberOfBlocks(rel) * BLCKSZ : 0;
	relation_close(rel, AccessShareLock);
	*toast = 0;
	if (OidIsValid(toastrelid))
	{
		Relation	t = relation_open(toastrelid, AccessShareLock);
		List	   *tl = RelationGetIndexList(t);

		*toast = (int64) RelationGetNumberOfBlocks(t) * BLCKSZ;
		relation_close(t, AccessShareLock);
		foreach(lc, tl)
			*toast += ForkBytes(lfirst_oid(lc));
	}
	*indexes = 0;
	foreach(lc, list)
		*indexes += ForkBytes(lfirst_oid(lc));
}

/*
 * The free bytes of the file system holding relid's tablespace (the
 * database's default when it has none), or -1 when it cannot be read.
 */
int64
BackfillFreeBytes(Oid relid)
{
	Oid			spc = get_rel_tablespace(relid);
	char	   *path = OidIsValid(spc) && spc != DEFAULTTABLESPACE_OID && spc != GLOBALTABLESPACE_OID ?
		psprintf("pg_tblspc/%u", spc) : pstrdup(".");
	struct statvfs st;

	if (statvfs(path, &st) != 0)
		return -1;
	return (int64) st.f_bavail * (int64) st.f_frsize;
}
