/*-------------------------------------------------------------------------
 *
 * src/write/merge.c
 *		backfill_merge: merge a recomputed window into a table on a proven key.
 *
 * A merge is only safe on a key that is truly unique: one that is unique on
 * 99.9% of rows merges rows that were different.  So before the first write
 * the key is proven on both sides, within the scope the merge may touch:
 *
 * - the source is read on one registered snapshot, for the guards and again
 *   for the writes, so both see the same rows;
 * - no source row has a NULL key, no key appears twice in the source, no
 *   source row lies outside the scope, and no source key matches a target
 *   row outside the scope (it would be neither updated nor inserted);
 * - the target's key is unique and not NULL within the scope: a unique index
 *   on exactly the key proves it, otherwise it is checked.
 *
 * The target is held in SHARE ROW EXCLUSIVE mode from before the guards to
 * the end of the transaction: readers go on, other writers wait, so nothing
 * can slip a duplicate in between the proof and the writes.
 *
 * The writes are one MERGE (matched rows updated only where a value would be
 * stored with other bytes, NULL-safe, so an unchanged row is not rewritten
 * and leaves no dead tuple; new keys inserted), then with delete_missing one
 * DELETE of the rows in scope whose key the source lacks.  The scope's row
 * counts before and after give the inserts, the MERGE's count the rest.
 * Keys are matched with their types' own equality operators, named with
 * their schema; whether a matched row changes is decided by representation
 * (assign.c), as the fingerprint sees it, so that after a merge the scope's
 * fingerprint is the source's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "catalog/pg_type_d.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/plancache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/remote.h"
#include "base/spi_util.h"
#include "hash/fingerprint.h"
#include "hash/rowhash.h"
#include "record/log.h"
#include "validate/validate.h"
#include "write/context.h"
#include "write/merge.h"
#include "write/remotesource.h"

/*
 * The source's least and greatest values of the key columns that partition
 * the target, $1, $2, ... of the statements that join the two
 * (MergeBoundToSource).
 */
typedef struct MergeBounds
{
	int			n;
	Oid			types[2 * PARTITION_MAX_KEYS];
	Datum		values[2 * PARTITION_MAX_KEYS];
	char		nulls[2 * PARTITION_MAX_KEYS];
	StringInfoData query;		/* the query that reads them, on the merge's snapshot */
	StringInfoData cond;		/* " AND t.c >= $1 AND t.c <= $2 ...", or "" */
} MergeBounds;

/*
 * Run a statement we built on the snapshot snap (its command ID kept up to
 * date by SPI), with the values b if any, and return the number of rows it
 * processed.  Errors of
 * analysis are errors of the scope: the rest of the SQL is ours.
 */
static uint64
Run(const char *sql, Snapshot snap, long tcount, const MergeBounds *b)
{
	int			n = b ? b->n : 0;
	int			nest = NewGUCNestLevel();
	SPIPlanPtr	plan;
	int			rc;

	/*
	 * a plan for these values, whatever the session's plan_cache_mode: the
	 * planner prunes the partitions they exclude (a statement run once has
	 * no use for a generic plan)
	 */
	if (n > 0)
		(void) set_config_option("plan_cache_mode", "force_custom_plan", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	plan = BackfillPrepare(sql, n, b ? (Oid *) b->types : NULL, "scope");
	rc = SPI_execute_snapshot(plan, b ? (Datum *) b->values : NULL, b ? b->nulls : NULL,
							  snap, InvalidSnapshot, false, true, tcount);
	if (rc < 0)
		elog(ERROR, "SPI_execute_snapshot failed (%s) for: %s", SPI_result_code_string(rc), sql);
	SPI_freeplan(plan);
	AtEOXact_GUC(true, nest);
	return SPI_processed;
}

/* The first value of the first row of a query we built, as int8. */
static int64
RunCount(const char *sql, Snapshot snap, const MergeBounds *b)
{
	bool		isnull;
	Datum		d;

	if (Run(sql, snap, 1, b) != 1)
		elog(ERROR, "no row from: %s", sql);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? 0 : DatumGetInt64(d);
}

/* Up to 5 sample rows of a query we built, as "(a, b), (c, d)". */
static char *
Samples(const char *sql, Snapshot snap, const MergeBounds *b)
{
	StringInfoData buf;

	Run(sql, snap, 5, b);
	initStringInfo(&buf);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		appendStringInfo(&buf, "%s(", r > 0 ? ", " : "");
		for (int c = 1; c <= SPI_tuptable->tupdesc->natts; c++)
		{
			char	   *v = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, c);

			appendStringInfo(&buf, "%s%s", c > 1 ? ", " : "", v ? v : "NULL");
		}
		appendStringInfoChar(&buf, ')');
	}
	return buf.data;
}

/*
 * Reading the source for the guards: rows, NULL keys, and one 64-bit word
 * per key, sorted afterwards so that repeated words sit side by side.  A
 * single pass-by-value key is its own word (a repeat is a duplicate); other
 * keys are hashed (a repeat is only a suspect, which the key types decide).
 */
#define MAX_KEY_WORDS	(100 * 1000 * 1000)

typedef struct SourceScan
{
	DestReceiver pub;
	int			nkeys;
	int		   *keyidx;
	BackfillRowHasher *keyhash;
	bool		hashable;		/* key equality is byte equality: words find duplicates */
	bool		exact;			/* the word is the key itself */
	uint64	   *words;
	uint64		nwords;
	uint64		maxwords;
	uint64		rows;
	uint64		nullkeys;
	uint64		suspects;		/* words seen more than once */
} SourceScan;

/* Sort n 64-bit words, least significant 16 bits first (four counting passes). */
static void
RadixSort(uint64 *a, uint64 n)
{
	uint64	   *tmp = palloc_extended(sizeof(uint64) * Max(n, 1), MCXT_ALLOC_HUGE);
	uint64	   *count = palloc(sizeof(uint64) * 65536);

	for (int shift = 0; shift < 64; shift += 16)
	{
		uint64		sum = 0;

		memset(count, 0, sizeof(uint64) * 65536);
		for (uint64 i = 0; i < n; i++)
			count[(a[i] >> shift) & 0xFFFF]++;
		for (int d = 0; d < 65536; d++)
		{
			uint64		c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (uint64 i = 0; i < n; i++)
			tmp[count[(a[i] >> shift) & 0xFFFF]++] = a[i];
		memcpy(a, tmp, sizeof(uint64) * n);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(tmp);
	pfree(count);
}

/* Is equality of type (under collation) the equality of its bytes? */
static bool
EqualityIsIdentity(Oid type, Oid collation)
{
	switch (getBaseType(type))
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case BOOLOID:
		case UUIDOID:
			return true;
		case TEXTOID:
		case VARCHAROID:
			return !OidIsValid(collation) || get_collation_isdeterministic(collation);
		default:
			return false;
	}
}

/* Note one source row's key. */
static bool
SourceReceive(TupleTableSlot *slot, DestReceiver *self)
{
	SourceScan *ss = (SourceScan *) self;

	CHECK_FOR_INTERRUPTS();
	slot_getallattrs(slot);
	ss->rows++;
	for (int i = 0; i < ss->nkeys; i++)
		if (slot->tts_isnull[ss->keyidx[i]])
		{
			ss->nullkeys++;
			break;
		}
	if (ss->hashable)
	{
		if (ss->nwords == ss->maxwords)
		{
			if (ss->maxwords >= MAX_KEY_WORDS)
			{
				/* too many to keep: the key types will decide, with a query */
				ss->hashable = false;
				return true;
			}
			ss->maxwords = Min(ss->maxwords * 2, MAX_KEY_WORDS);
			ss->words = repalloc_huge(ss->words, sizeof(uint64) * ss->maxwords);
		}
		ss->words[ss->nwords++] = ss->exact
			? (uint64) slot->tts_values[ss->keyidx[0]]
			: BackfillHashRow(ss->keyhash, slot);
	}
	return true;
}

/* Read the source once, on the snapshot snap. */
static void
ReadSource(SourceScan *ss, SPIPlanPtr plan, Snapshot snap, TupleDesc src, bool *iskey,
		   Oid target)
{
	int			k = 0;

	memset(ss, 0, sizeof(*ss));
	BackfillInitReceiver(&ss->pub, SourceReceive, NULL);
	ss->keyidx = palloc(sizeof(int) * Max(1, src->natts));
	ss->hashable = true;
	for (int i = 0; i < src->natts; i++)
		if (iskey[i])
		{
			Oid			coll = InvalidOid;
			Oid			type = InvalidOid;
			int32		typmod;

			ss->keyidx[k++] = i;
			get_atttypetypmodcoll(target, get_attnum(target, NameStr(TupleDescAttr(src, i)->attname)),
								  &type, &typmod, &coll);
			/* the source's own values hash as stored only when they are stored as they are */
			ss->hashable &= EqualityIsIdentity(type, coll) && TupleDescAttr(src, i)->atttypid == type &&
				(typmod < 0 || TupleDescAttr(src, i)->atttypmod == typmod);
		}
	ss->nkeys = k;
	if (ss->hashable)
	{
		/* sized for the planner's estimate of the source's rows */
		double		est = BackfillPlanRows(plan, 1024);

		ss->exact = ss->nkeys == 1 && TupleDescAttr(src, ss->keyidx[0])->attbyval;
		if (!ss->exact)
			ss->keyhash = BackfillRowHasherCreate(src, ss->nkeys, ss->keyidx);
		ss->maxwords = (uint64) Min(Max(est * 1.1, 1024), MAX_KEY_WORDS);
		ss->words = palloc_extended(sizeof(uint64) * ss->maxwords, MCXT_ALLOC_HUGE);
	}

	/* a read-only SPI call runs on the active snapshot: make it ours */
	PushActiveSnapshot(snap);
	BackfillRunToDest(plan, NULL, true, (DestReceiver *) ss);
	PopActiveSnapshot();

	if (ss->hashable)
	{
		RadixSort(ss->words, ss->nwords);
		for (uint64 i = 1; i < ss->nwords; i++)
			if (ss->words[i] == ss->words[i - 1])
				ss->suspects++;
	}
	if (ss->words)
		pfree(ss->words);
}

/*
 * The source's key guards: no NULL key, no key twice as stored (raise if
 * so).  Reads the source once on snap; returns its rows.  stored is the
 * source with each column as the target stores it.
 */
static int64
CheckSourceKeys(const char *source, const char *stored, TupleDesc src, bool *iskey, Oid relid,
				Snapshot snap, const char *keylist, const char *scols, const char *srcq,
				const char *nullcond)
{
	SourceScan	ss;
	SPIPlanPtr	plan = BackfillPrepare(source, 0, NULL, "source");
	int64		n;

	ReadSource(&ss, plan, snap, src, iskey, relid);
	SPI_freeplan(plan);
	n = (int64) ss.nullkeys;
	if (n > 0)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg_plural("%lld source row has a NULL in key (%s)",
							   "%lld source rows have a NULL in key (%s)", n, (long long) n, keylist),
				 errdetail("For example: %s.",
						   Samples(psprintf("SELECT %s FROM %s s WHERE %s", scols, srcq, nullcond), snap, NULL)),
				 errhint("Filter them out of the source or fill the key: a row whose key is NULL matches nothing.")));
	/* a repeated key word, or keys whose equality is not their bytes: ask the key types */
	n = (ss.suspects > 0 || !ss.hashable)
		? RunCount(psprintf("SELECT pg_catalog.count(*) FROM (SELECT 1 FROM %s AS s GROUP BY %s"
							" HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 1) d", stored, keylist), snap, NULL)
		: 0;
	if (n > 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg_plural("%lld key value appears more than once in the source",
							   "%lld key values appear more than once in the source", n, (long long) n),
				 errdetail("Key (%s), for example: %s.", keylist,
						   Samples(psprintf("SELECT %s FROM %s AS s GROUP BY %s HAVING pg_catalog.count(*)"
											" OPERATOR(pg_catalog.>) 1", keylist, stored, keylist), snap, NULL)),
				 errhint("Deduplicate the source: merging two source rows into one target row would keep one of them at random.")));
	return (int64) ss.rows;
}

/* What a merge is made of: the target, the source's columns and the SQL built from them. */
typedef struct MergeSql
{
	Oid			relid;
	const char *target;			/* schema-qualified */
	const char *only;			/* "ONLY " unless partitioned */
	const char *source;			/* what the merge reads: the source, or its rows read on a standby */
	const char *recorded;		/* the source as given, for the record */
	const char *scope;			/* NULL for the whole table */
	char	   *tscope;			/* "((scope))" or "true" */
	List	   *keys;
	List	   *attnums;
	char	   *keylist;
	TupleDesc	src;
	bool	   *iskey;
	const char *changefn;		/* schema.backfill_would_change */
	const char *bytesfn;		/* schema.backfill_bytes_differ for a Citus distributed
								 * target (IMMUTABLE, as Citus needs), else NULL */
	StringInfoData on;			/* t.k = s.k AND ... */
	StringInfoData nullcond;	/* s.k IS NULL OR ... */
	StringInfoData set;			/* c = s.c, ... */
	StringInfoData differs;		/* would_change(t.c, s.c) OR ... */
	StringInfoData cols;		/* c, ... */
	StringInfoData scols;		/* s.c, ... (source column i is s.bfs_i) */
	StringInfoData renamed;		/* c AS bfs_1, ... */
	StringInfoData stored;		/* c AS c, ...: each as the target stores it */
	char	   *srcq;			/* (SELECT c AS bfs_1, ... FROM (source) src) */
	char	   *storedq;		/* (SELECT c AS c, ... FROM (source) src) */
	MergeBounds bounds;			/* what "on" holds the target's side to */
} MergeSql;

/*
 * Check the caller's rights on the target, then lock it against other
 * writers until the end of the transaction; returns its OID.
 */
static Oid
MergeLockTarget(Oid target, bool delete_missing)
{
	Oid			relid = target;
	AclMode		needed;

	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("target: relation with OID %u does not exist", relid)));
	if (IsCatalogRelationOid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot merge into system catalog %s", BackfillQualifiedName(relid))));
	needed = ACL_SELECT | ACL_INSERT | ACL_UPDATE | (delete_missing ? ACL_DELETE : 0);
	if (pg_class_aclmask(relid, GetUserId(), needed, ACLMASK_ALL) != needed)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to merge into table %s", BackfillQualifiedName(relid)),
				 errdetail("backfill_merge needs SELECT, INSERT and UPDATE%s on it.",
						   delete_missing ? ", and DELETE with delete_missing" : "")));
	relid = BackfillOpenRel(target, "target", BACKFILL_REL_TABLE | BACKFILL_REL_PARTITIONED,
							ShareRowExclusiveLock);
	/* a table that took the name while we waited: its rights too */
	if (relid != target &&
		pg_class_aclmask(relid, GetUserId(), needed, ACLMASK_ALL) != needed)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to merge into table %s", BackfillQualifiedName(relid))));
	return relid;
}

/* The source's row type, with its key columns found and their types checked. */
static void
MergeDescribeSource(MergeSql *m)
{
	SPIPlanPtr	plan = BackfillPrepare(m->source, 0, NULL, "source");
	ListCell   *lc;

	BackfillCheckReadOnly(plan, "source");
	m->src = CreateTupleDescCopy(BackfillPlanResultDesc(plan));
	SPI_freeplan(plan);
	m->iskey = palloc0(sizeof(bool) * Max(1, m->src->natts));
	foreach(lc, m->keys)
	{
		const char *k = (const char *) lfirst(lc);
		int			found = BackfillFindColumn(m->src, k);
		Oid			ttype = get_atttype(m->relid, list_nth_int(m->attnums, foreach_current_index(lc)));

		if (found < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("source lacks key column \"%s\"", k)));
		if (TupleDescAttr(m->src, found)->atttypid != ttype)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("key column \"%s\" is of type %s in the source but %s in %s", k,
							format_type_be(TupleDescAttr(m->src, found)->atttypid),
							format_type_be(ttype), m->target),
					 errhint("Cast the source's key column to the target's type.")));
		m->iskey[found] = true;
	}
}

/*
 * Add source column i to the SQL.  A matched row is rewritten only if one
 * of its values would be stored with other bytes (backfill_would_change:
 * the value assigned as UPDATE assigns it, then compared by representation,
 * as the fingerprint compares it): a type's equality may call different
 * values equal.  Key columns are matched with their type's equality, and
 * written too unless that equality is byte equality.
 */
static void
MergeAddColumn(MergeSql *m, int i)
{
	Form_pg_attribute sa = TupleDescAttr(m->src, i);
	const char *col = quote_identifier(NameStr(sa->attname));
	AttrNumber	attnum;
	Oid			ttype;
	int32		ttypmod;
	Oid			tcoll;
	char	   *stored;

	for (int j = 0; j < i; j++)
		if (strcmp(NameStr(TupleDescAttr(m->src, j)->attname), NameStr(sa->attname)) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("source returns column \"%s\" more than once", NameStr(sa->attname))));
	attnum = get_attnum(m->relid, NameStr(sa->attname));
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("source column \"%s\" is not a column of %s", NameStr(sa->attname), m->target),
				 errhint("Columns are matched by name: rename it with AS, or leave it out.")));
	get_atttypetypmodcoll(m->relid, attnum, &ttype, &ttypmod, &tcoll);
	if (!can_coerce_type(1, &sa->atttypid, &ttype, COERCION_ASSIGNMENT))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("source column \"%s\" is of type %s but column \"%s\" of %s is of type %s",
						NameStr(sa->attname), format_type_be(sa->atttypid), NameStr(sa->attname),
						m->target, format_type_be(ttype)),
				 errhint("Cast the source column to %s.", format_type_be(ttype))));

	/*
	 * The source's columns are renamed bfs_<n> where it meets the target, so
	 * the scope's column names can only mean the target's; and each is the
	 * value the target will store, so that keys are matched, proven unique
	 * and held to the scope as they will be stored.
	 */
	stored = BackfillStoredValue(col, sa->atttypid, sa->atttypmod, ttype, ttypmod);
	appendStringInfo(&m->renamed, "%s%s AS bfs_%d", m->renamed.len ? ", " : "", stored, i + 1);
	appendStringInfo(&m->stored, "%s%s AS %s", m->stored.len ? ", " : "", stored, col);
	appendStringInfo(&m->cols, "%s%s", m->cols.len ? ", " : "", col);
	appendStringInfo(&m->scols, "%ss.bfs_%d", m->scols.len ? ", " : "", i + 1);
	if (m->iskey[i])
	{
		appendStringInfo(&m->on, "%st.%s %s s.bfs_%d", m->on.len ? " AND " : "", col,
						 BackfillEqualityOperator(ttype), i + 1);
		appendStringInfo(&m->nullcond, "%ss.bfs_%d IS NULL", m->nullcond.len ? " OR " : "", i + 1);
		if (EqualityIsIdentity(ttype, tcoll))
			return;
	}
	appendStringInfo(&m->set, "%s%s = s.bfs_%d", m->set.len ? ", " : "", col, i + 1);
	if (sa->atttypid == ttype && (ttypmod < 0 || sa->atttypmod == ttypmod) &&
		!OidIsValid(tcoll) && EqualityIsIdentity(ttype, tcoll))
		appendStringInfo(&m->differs, "%sNOT COALESCE(t.%s %s s.bfs_%d, t.%s IS NULL AND s.bfs_%d IS NULL)",
						 m->differs.len ? " OR " : "", col, BackfillEqualityOperator(ttype), i + 1, col, i + 1);
	else if (m->bytesfn == NULL)
		appendStringInfo(&m->differs, "%s%s(t.%s, s.bfs_%d)",
						 m->differs.len ? " OR " : "", m->changefn, col, i + 1);
	else if (sa->atttypid == ttype && (ttypmod < 0 || sa->atttypmod == ttypmod))
		appendStringInfo(&m->differs, "%s%s(t.%s, s.bfs_%d)",
						 m->differs.len ? " OR " : "", m->bytesfn, col, i + 1);
	else if (sa->atttypid == ttype)
		/* the value as the column's typmod would store it: the cast is IMMUTABLE */
		appendStringInfo(&m->differs, "%s%s(t.%s, CAST(s.bfs_%d AS %s))",
						 m->differs.len ? " OR " : "", m->bytesfn, col, i + 1,
						 format_type_with_typemod(ttype, ttypmod));
	else
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("source column \"%s\" is of type %s but column \"%s\" of distributed table %s is of type %s",
						NameStr(sa->attname), format_type_be(sa->atttypid), NameStr(sa->attname),
						m->target, format_type_be(ttype)),
				 errdetail("On a distributed table the merge compares stored and new values of one type, with IMMUTABLE functions only."),
				 errhint("Cast the source column to %s.", format_type_be(ttype))));
}

/* Read the source's bounds of the partition key (MergeBoundToSource) on snap. */
static void
MergeReadBounds(MergeSql *m, Snapshot snap)
{
	MergeBounds *b = &m->bounds;

	if (b->n == 0)
		return;
	(void) Run(b->query.data, snap, 1, NULL);
	if (SPI_processed != 1)
		elog(ERROR, "no row from: %s", b->query.data);
	for (int j = 0; j < b->n; j++)
	{
		bool		isnull;
		int16		typlen;
		bool		typbyval;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, j + 1, &isnull);

		get_typlenbyval(b->types[j], &typlen, &typbyval);
		b->values[j] = isnull ? (Datum) 0 : datumCopy(d, typbyval, typlen);
		b->nulls[j] = isnull ? 'n' : ' ';
	}
}

/* The source's keys, the target's, and the scope (raise if one fails); returns the source's rows. */
static int64
MergeGuards(MergeSql *m, Snapshot snap)
{
	int64		srcrows;
	int64		n;

	/*
	 * The source's keys, then the target's.  (A unique index on the target
	 * would not do for the source: two source rows with one key that match
	 * an unchanged row make MERGE skip both without a word.)
	 */
	srcrows = CheckSourceKeys(m->source, m->storedq, m->src, m->iskey, m->relid, snap, m->keylist,
							  m->scols.data, m->srcq, m->nullcond.data);
	(void) BackfillAssertUnique(m->relid, m->keys, m->attnums, m->scope, false, false);
	/*
	 * The source and the scope were each analysed above with no parameter
	 * at all: a $1 of theirs was refused there, and cannot stand for a bound.
	 */
	MergeReadBounds(m, snap);
	if (m->scope == NULL)
		return srcrows;

	{
		char	   *outside = psprintf("SELECT %s FROM %s AS s WHERE NOT COALESCE(((\n%s\n)), false)",
									   m->keylist, m->storedq, m->scope);

		n = RunCount(psprintf("SELECT pg_catalog.count(*) FROM (%s) o", outside), snap, NULL);
		if (n > 0)
			ereport(ERROR,
					(errcode(ERRCODE_CHECK_VIOLATION),
					 errmsg_plural("%lld source row lies outside the scope",
								   "%lld source rows lie outside the scope", n, (long long) n),
					 errdetail("Key (%s), for example: %s.", m->keylist, Samples(outside, snap, NULL)),
					 errhint("Filter the source on the backfill window, or widen the scope.")));
	}
	{
		char	   *clash = psprintf("SELECT %s FROM %s%s t JOIN %s s ON %s%s WHERE NOT COALESCE(%s, false)",
									 m->scols.data, m->only, m->target, m->srcq, m->on.data, m->bounds.cond.data,
									 m->tscope);

		n = RunCount(psprintf("SELECT pg_catalog.count(*) FROM (%s) c", clash), snap, &m->bounds);
		if (n > 0)
			ereport(ERROR,
					(errcode(ERRCODE_CHECK_VIOLATION),
					 errmsg_plural("%lld source key matches a row of %s outside the scope",
								   "%lld source keys match rows of %s outside the scope", n, (long long) n, m->target),
					 errdetail("For example: %s.", Samples(clash, snap, &m->bounds)),
					 errhint("Outside the scope nothing is updated: widen the scope to include those rows.")));
	}
	return srcrows;
}

/*
 * The writes: one MERGE for changed and new rows, then with delete_missing
 * the rows in scope whose key the source lacks (no new row is among them).
 * Returns the MERGE's count; sets *deleted.
 */
static uint64
MergeWrite(MergeSql *m, Snapshot snap, bool delete_missing, uint64 *deleted)
{
	bool		update = m->set.len > 0;
	uint64		merged;

	merged = Run(psprintf("MERGE INTO %s%s t USING %s s ON %s%s"
						  "%s%s%s%s%s%s"
						  " WHEN NOT MATCHED THEN INSERT (%s) VALUES (%s)",
						  m->only, m->target, m->srcq, m->on.data, m->bounds.cond.data,
						  update ? " WHEN MATCHED AND " : "", update ? m->tscope : "",
						  update ? " AND (" : "", update ? m->differs.data : "",
						  update ? ") THEN UPDATE SET " : "", update ? m->set.data : "",
						  m->cols.data, m->scols.data),
				 snap, 0, &m->bounds);
	*deleted = 0;
	/*
	 * not held to the source's bounds: the DELETE reads the source again,
	 * after the MERGE's writes, and the bounds prune nothing of the target
	 * here (the scope does)
	 */
	if (delete_missing)
		*deleted = Run(psprintf("DELETE FROM %s%s t WHERE %s AND NOT EXISTS (SELECT 1 FROM %s s WHERE %s)",
								m->only, m->target, m->tscope, m->srcq, m->on.data), snap, 0, NULL);
	return merged;
}

/* Log the merge (inside SPI); returns the log record's id. */
static int64
MergeLog(BackfillWriteContext *ctx, MergeSql *m, bool delete_missing, uint64 inserted,
		 uint64 updated, uint64 deleted, int64 srcrows,
		 BackfillFingerprint *before, BackfillFingerprint *after)
{
	StringInfoData details;

	initStringInfo(&details);
	appendStringInfo(&details, "{\"inserted\": " UINT64_FORMAT ", \"updated\": " UINT64_FORMAT
					 ", \"deleted\": " UINT64_FORMAT ", \"unchanged\": " INT64_FORMAT ", \"key\": ",
					 inserted, updated, deleted, srcrows - (int64) inserted - (int64) updated);
	escape_json(&details, m->keylist);
	appendStringInfoString(&details, ", \"scope\": ");
	if (m->scope)
		escape_json(&details, m->scope);
	else
		appendStringInfoString(&details, "null");
	appendStringInfo(&details, ", \"delete_missing\": %s, \"source\": ", delete_missing ? "true" : "false");
	escape_json(&details, m->recorded);
	appendStringInfoChar(&details, '}');

	return BackfillLogWriteChange(ctx->extschema, "merge", m->target, NULL,
								  before, after, details.data, ctx->run_id, ctx->why);
}

/*
 * A merge with delete_missing must not wipe a table by accident: it needs a
 * scope (else every row the source lacks, anywhere in the table, goes), and
 * an empty source that would delete rows is refused unless allow_empty.
 * Each refusal says how many rows would have been deleted.
 */
static void
MergeDeleteGuards(MergeSql *m, Snapshot snap, int64 srcrows, bool allow_empty)
{
	int64		doomed = RunCount(psprintf("SELECT pg_catalog.count(*) FROM %s%s t WHERE %s"
										   " AND NOT EXISTS (SELECT 1 FROM %s s WHERE %s)",
										   m->only, m->target, m->tscope, m->srcq, m->on.data), snap, NULL);

	if (m->scope == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("delete_missing needs a scope: without one, every row of %s that the source lacks"
						" would be deleted (%lld rows)", m->target, (long long) doomed),
				 errhint("Pass scope => the window the source recomputes (a condition on the columns of %s),"
						 " so that only rows of that window can be deleted; scope => 'true' if it is the whole table.",
						 m->target)));
	if (srcrows == 0 && doomed > 0 && !allow_empty)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the source returned no rows: with delete_missing, merging it would delete all %lld rows"
						" of the scope", (long long) doomed),
				 errhint("If the scope must really be emptied, pass allow_empty => true.")));
}

/* Check backfill_merge's arguments into p. */
static void
MergeReadArgs(FunctionCallInfo fcinfo, BackfillMergeParams *p)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("target must not be NULL")));
	p->target = PG_GETARG_OID(0);
	p->source = BackfillCheckQuery(BackfillArgText(fcinfo, 1, "source"), "source");
	p->keys = BackfillKeyArg(fcinfo, 2);
	p->scope = NULL;
	if (!PG_ARGISNULL(3))
		p->scope = BackfillCheckExpr(TextDatumGetCString(PG_GETARG_DATUM(3)), "scope");
	if (PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("delete_missing must not be NULL")));
	p->delete_missing = PG_GETARG_BOOL(4);
	if (PG_ARGISNULL(5))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("allow_empty must not be NULL")));
	p->allow_empty = PG_GETARG_BOOL(5);
	p->source_server = PG_NARGS() > 6 && !PG_ARGISNULL(6) ? TextDatumGetCString(PG_GETARG_DATUM(6)) : NULL;
}

/*
 * Under REPEATABLE READ or SERIALIZABLE the snapshot predates our lock: what
 * another session committed in between would be invisible to the guards (a
 * unique index would stop only a second copy of a key), to delete_missing,
 * and to the fingerprint recorded after.  Refused, whatever the indexes.
 */
static void
MergeRefuseStaleSnapshot(MergeSql *m)
{
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("backfill_merge must run in a READ COMMITTED transaction"),
				 errdetail("This transaction's snapshot was taken before backfill_merge locked %s: rows committed since would be invisible to its guards (a unique index stops only an inserted key), to the rows it deletes and keeps, and to its record's fingerprint.",
						   BackfillQualifiedName(m->relid)),
				 errhint("Run it in READ COMMITTED; readers in any isolation level are safe.")));
}

/*
 * Hold the target's side of a join on the key to the source's range of
 * the partition key, so that partition pruning keeps only the partitions the
 * source's rows belong to, instead of every row of the table outside the
 * scope (the clash guard and the MERGE, both reading the source before any
 * write, as the bounds were read): for each column of the partition key that
 * is a column of the merge key, of a built-in type that is not collatable,
 * "AND t.c >= $1 AND t.c <= $2", the source's least and greatest c, read
 * once (MergeReadBounds) and planned as the values they are, so that the
 * planner prunes, and costs the statement by the partitions kept (a
 * subquery in their place left every partition in the plan, pruned only as
 * it ran: planned over the whole table, and compiled by JIT as if it read
 * it).  A target row whose key equals a source row's has that row's c, so
 * the condition never parts a pair the key joins.  Not on Citus (Citus
 * prunes its shards itself).
 */
static void
MergeBoundToSource(MergeSql *m)
{
	Relation	rel;
	PartitionKey pk;

	if (get_rel_relkind(m->relid) != RELKIND_PARTITIONED_TABLE || BackfillCitusDistributed(m->relid))
		return;
	rel = table_open(m->relid, NoLock);
	pk = RelationGetPartitionKey(rel);
	for (int k = 0; k < pk->partnatts; k++)
	{
		const char *col;
		TypeCacheEntry *tce;

		if (pk->partattrs[k] == 0 || pk->parttypid[k] >= FirstGenbkiObjectId ||
			OidIsValid(pk->partcollation[k]))
			continue;
		tce = lookup_type_cache(pk->parttypid[k], TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
		if (!OidIsValid(tce->lt_opr) || !OidIsValid(tce->gt_opr))
			continue;
		col = NameStr(TupleDescAttr(RelationGetDescr(rel), pk->partattrs[k] - 1)->attname);
		for (int i = 0; i < m->src->natts; i++)
			if (m->iskey[i] && strcmp(NameStr(TupleDescAttr(m->src, i)->attname), col) == 0)
			{
				MergeBounds *b = &m->bounds;

				appendStringInfo(&b->cond, " AND t.%s OPERATOR(pg_catalog.>=) $%d AND t.%s OPERATOR(pg_catalog.<=) $%d",
								 quote_identifier(col), b->n + 1, quote_identifier(col), b->n + 2);
				appendStringInfo(&b->query, "%s(SELECT x.bfs_%d FROM %s x ORDER BY 1 LIMIT 1),"
								 " (SELECT x.bfs_%d FROM %s x ORDER BY 1 DESC LIMIT 1)",
								 b->n > 0 ? ", " : "SELECT ", i + 1, m->srcq, i + 1, m->srcq);
				/* bfs_<i> is the source's column as the target stores it */
				b->types[b->n++] = pk->parttypid[k];
				b->types[b->n++] = pk->parttypid[k];
			}
	}
	table_close(rel, NoLock);
}


/*
 * Describe the source (one SELECT, columns of the target, the key's types on
 * both sides) and build the SQL fragments of the guards and the writes.
 */
static void
MergeBuildSql(MergeSql *m)
{
	MergeDescribeSource(m);
	initStringInfo(&m->on);
	initStringInfo(&m->nullcond);
	initStringInfo(&m->set);
	initStringInfo(&m->differs);
	initStringInfo(&m->cols);
	initStringInfo(&m->scols);
	initStringInfo(&m->renamed);
	initStringInfo(&m->stored);
	initStringInfo(&m->bounds.query);
	initStringInfo(&m->bounds.cond);
	for (int i = 0; i < m->src->natts; i++)
		MergeAddColumn(m, i);
	m->srcq = psprintf("(SELECT %s FROM (\n%s\n) AS src)", m->renamed.data, m->source);
	m->storedq = psprintf("(SELECT %s FROM (\n%s\n) AS src)", m->stored.data, m->source);
	MergeBoundToSource(m);
}

/*
 * Merge p->source into p->target on p->keys within p->scope, in the context
 * ctx: lock the target, prove the key on both sides, write, record.  Into r
 * what it did.
 */
void
BackfillMerge(const BackfillMergeParams *p, BackfillWriteContext *ctx, BackfillMergeResult *r)
{
	MergeSql	m;
	const char *nsp;
	Snapshot	snap;
	BackfillFingerprint before;
	BackfillFingerprint after;
	int64		srcrows;
	uint64		merged;
	MemoryContext caller = CurrentMemoryContext;

	memset(&m, 0, sizeof(m));
	m.source = p->source;
	m.recorded = BackfillWriteRecordedSource(ctx, p->source);
	m.keys = p->keys;
	m.scope = p->scope;

	/* the rights first, then the lock that keeps writers out until commit */
	m.relid = MergeLockTarget(p->target, p->delete_missing);
	m.attnums = BackfillRelColumns(m.relid, m.keys, "key");
	(void) BackfillCheckKeyTypes(m.relid, m.keys, m.attnums);

	MergeRefuseStaleSnapshot(&m);
	m.target = BackfillQualifiedName(m.relid);
	m.only = get_rel_relkind(m.relid) == RELKIND_PARTITIONED_TABLE ? "" : "ONLY ";
	m.keylist = BackfillColumnListText(m.keys);
	m.tscope = m.scope ? psprintf("((\n%s\n))", m.scope) : "true";
	nsp = quote_identifier(get_namespace_name(ctx->extschema));
	m.changefn = psprintf("%s.backfill_would_change", nsp);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* on Citus: what it cannot merge refused, and the target locked on every node */
	if (BackfillCitusCheckMerge(m.relid, m.keys, m.source, m.scope, "SHARE ROW EXCLUSIVE"))
		m.bytesfn = psprintf("%s.backfill_bytes_differ", nsp);

	if (p->source_server != NULL)
	{
		BackfillRemoteSourceParams rp;

		memset(&rp, 0, sizeof(rp));
		rp.target = m.relid;
		rp.server = p->source_server;
		rp.source = p->source;
		rp.throttle = ctx->throttle;
		m.source = BackfillRemoteSource(&rp);
	}
	MergeBuildSql(&m);

	/*
	 * The guards and the writes read the source on one snapshot, so they see
	 * the same rows; the target cannot change meanwhile (our lock).  Every
	 * inserted row lands in the scope (the source was checked), so the
	 * scope's row counts before and after give the inserts.
	 */
	snap = RegisterSnapshot(GetTransactionSnapshot());
	srcrows = MergeGuards(&m, snap);
	if (p->delete_missing)
		MergeDeleteGuards(&m, snap, srcrows, p->allow_empty);
	BackfillFingerprintRel(m.relid, m.scope, false, &before);
	merged = MergeWrite(&m, snap, p->delete_missing, &r->deleted);
	UnregisterSnapshot(snap);
	BackfillFingerprintRel(m.relid, m.scope, false, &after);
	r->inserted = (uint64) ((int64) after.rows - (int64) before.rows + (int64) r->deleted);
	r->updated = merged - r->inserted;
	r->unchanged = srcrows - (int64) merged;
	r->rows_before = before.rows;
	r->rows_after = after.rows;
	r->fingerprint_before = MemoryContextStrdup(caller, BackfillFingerprintText(&before));
	r->fingerprint_after = MemoryContextStrdup(caller, BackfillFingerprintText(&after));

	r->log_id = MergeLog(ctx, &m, p->delete_missing, r->inserted, r->updated, r->deleted, srcrows,
						 &before, &after);
	SPI_finish();
}

PG_FUNCTION_INFO_V1(backfill_merge);

/*
 * backfill_merge(target regclass, source text, key text[], scope text,
 *				  delete_missing boolean, allow_empty boolean, source_server text)
 *	RETURNS backfill_merge_result
 */
Datum
backfill_merge(PG_FUNCTION_ARGS)
{
	BackfillMergeParams p;
	BackfillMergeResult r;
	BackfillWriteContext ctx;
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false};

	BackfillCheckVersion();
	MergeReadArgs(fcinfo, &p);
	PreventCommandIfReadOnly("backfill_merge()");
	BackfillRequireCoordinator("backfill_merge");
	if (p.source_server != NULL)
	{
		BackfillRefuseRemoteSourceAfterWrites("backfill_merge");
		BackfillRemoteCheck(p.source_server, "options.source_server", true);
	}

	BackfillWriteContextInit(&ctx, BackfillExtensionSchema(fcinfo));
	BackfillMerge(&p, &ctx, &r);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum((int64) r.inserted);
	values[1] = Int64GetDatum((int64) r.updated);
	values[2] = Int64GetDatum((int64) r.deleted);
	values[3] = Int64GetDatum(r.unchanged);
	values[4] = Int64GetDatum(r.log_id);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}
