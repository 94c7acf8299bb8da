/*-------------------------------------------------------------------------
 *
 * src/inplace.c
 *		A small partition rewritten in place by what differs: the partition's
 *		rows the source lacks deleted, the source's rows the partition lacks
 *		inserted, every other row left as it is.
 *
 * Rows are matched as multisets, by their whole value: each row of the
 * partition and of the source is hashed by representation (rowhash.c) in two
 * independent families, 128 bits, and a source row takes the place of one
 * stored row hashing alike, if one is left.  So a correction of one row in
 * ten deletes and inserts one row in ten: the other rows keep their tuples,
 * their index entries and their visibility, and leave no dead tuples.
 *
 * The partition is read first (its rows and their TIDs), then the source,
 * before anything is written, so a source that reads the partition reads it
 * as it was.  Then one DELETE by TID (a TID scan) and one INSERT of the new
 * rows, passed as one array per column; both are SQL, so the partition's
 * bound, constraints, triggers and indexes apply as to any write.  The
 * caller holds a lock that keeps other writers out, so the TIDs stay put.
 *
 * This needs the source to return the partition's very columns (by name,
 * of the same types) and every column to fit in an array of its type; for
 * any other source (or an array column, which an array of arrays cannot
 * carry) the caller deletes and fills the partition whole.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "parser/parse_coerce.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "inplace.h"
#include "rowhash.h"
#include "spi_util.h"

/* The seed of the second hash family. */
#define SECOND_SEED	UINT64CONST(0x2545f4914f6cdd1d)

/* A stored row: its two hashes, where it lies, and whether a source row took its place. */
typedef struct StoredRow
{
	uint64		h1;
	uint64		h2;
	ItemPointerData tid;
	bool		kept;
} StoredRow;

typedef struct InPlace
{
	DestReceiver pub;
	int			ncols;
	int			first;			/* slot position of the first column (after ctid) */
	BackfillRowHasher *h1;
	BackfillRowHasher *h2;
	StoredRow  *rows;
	int64		nrows;
	int64		maxrows;
	ArrayBuildState **arrays;	/* per column: the source rows to insert */
	Oid		   *types;
	int32	   *typmods;		/* the partition's, where the source's differs; else -1 */
	FmgrInfo   *coerce;			/* and the function that applies it */
	Datum	   *values;
	bool	   *isnull;
	uint64		ninsert;
	uint64		nkept;
	MemoryContext cxt;
} InPlace;

/* A stored row of the partition: (ctid, columns...). */
static bool
ReceiveStored(TupleTableSlot *slot, DestReceiver *self)
{
	InPlace    *ip = (InPlace *) self;
	StoredRow  *row;
	bool		isnull;

	if (ip->nrows == ip->maxrows)
	{
		ip->maxrows *= 2;
		ip->rows = repalloc_huge(ip->rows, sizeof(StoredRow) * ip->maxrows);
	}
	row = &ip->rows[ip->nrows++];
	row->h1 = BackfillHashRow(ip->h1, slot);
	row->h2 = BackfillHashRow(ip->h2, slot);
	row->tid = *(ItemPointer) DatumGetPointer(slot_getattr(slot, 1, &isnull));
	row->kept = false;
	return true;
}

static int
CompareStored(const void *a, const void *b)
{
	const StoredRow *x = a;
	const StoredRow *y = b;

	if (x->h1 != y->h1)
		return x->h1 < y->h1 ? -1 : 1;
	if (x->h2 != y->h2)
		return x->h2 < y->h2 ? -1 : 1;
	return 0;
}

/* The first stored row hashing as (h1, h2) that no source row took yet, or NULL. */
static StoredRow *
FindUnkept(InPlace *ip, uint64 h1, uint64 h2)
{
	int64		lo = 0;
	int64		hi = ip->nrows;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		StoredRow  *r = &ip->rows[mid];

		if (r->h1 < h1 || (r->h1 == h1 && r->h2 < h2))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < ip->nrows && ip->rows[lo].h1 == h1 && ip->rows[lo].h2 == h2; lo++)
		if (!ip->rows[lo].kept)
			return &ip->rows[lo];
	return NULL;
}

/*
 * A row of the source, as the partition would store it (a numeric rounded
 * to its column's scale, a varchar too long refused, as INSERT's assignment
 * does): it takes the place of a stored row alike, or is to be inserted.
 */
static bool
ReceiveSource(TupleTableSlot *slot, DestReceiver *self)
{
	InPlace    *ip = (InPlace *) self;
	StoredRow  *row;
	MemoryContext old;

	slot_getallattrs(slot);
	for (int c = 0; c < ip->ncols; c++)
	{
		ip->values[c] = slot->tts_values[c];
		ip->isnull[c] = slot->tts_isnull[c];
		if (ip->typmods[c] >= 0 && !ip->isnull[c])
			ip->values[c] = FunctionCall3(&ip->coerce[c], ip->values[c], Int32GetDatum(ip->typmods[c]),
										  BoolGetDatum(false));
	}
	row = FindUnkept(ip, BackfillHashValues(ip->h1, ip->values, ip->isnull),
					 BackfillHashValues(ip->h2, ip->values, ip->isnull));
	if (row != NULL)
	{
		row->kept = true;
		ip->nkept++;
		return true;
	}
	old = MemoryContextSwitchTo(ip->cxt);
	for (int c = 0; c < ip->ncols; c++)
		ip->arrays[c] = accumArrayResult(ip->arrays[c], ip->values[c], ip->isnull[c],
										 ip->types[c], ip->cxt);
	MemoryContextSwitchTo(old);
	ip->ninsert++;
	return true;
}

/*
 * The partition's typmod of each column whose value the source gives with
 * another, and the function applying it (as INSERT would); -1 where none is
 * needed.
 */
static void
PrepareCoercions(InPlace *ip, Oid relid, TupleDesc desc)
{
	Relation	rel = relation_open(relid, NoLock);
	TupleDesc	reldesc = RelationGetDescr(rel);

	ip->typmods = palloc(sizeof(int32) * ip->ncols);
	ip->coerce = palloc0(sizeof(FmgrInfo) * ip->ncols);
	ip->values = palloc(sizeof(Datum) * ip->ncols);
	ip->isnull = palloc(sizeof(bool) * ip->ncols);
	for (int c = 0; c < ip->ncols; c++)
	{
		Form_pg_attribute sa = TupleDescAttr(desc, c);
		int32		typmod = TupleDescAttr(reldesc, BackfillFindColumn(reldesc, NameStr(sa->attname)))->atttypmod;
		Oid			fn;

		ip->typmods[c] = -1;
		if (typmod >= 0 && typmod != sa->atttypmod &&
			find_typmod_coercion_function(sa->atttypid, &fn) == COERCION_PATH_FUNC)
		{
			ip->typmods[c] = typmod;
			fmgr_info(fn, &ip->coerce[c]);
		}
	}
	relation_close(rel, NoLock);
}

/*
 * Whether the source (desc) returns relid's very columns, of the same
 * types, none of them generated, an identity or an array; their names, in
 * the source's order, into cols.
 */
static bool
SourceFits(Oid relid, TupleDesc desc, StringInfo cols)
{
	Relation	rel = relation_open(relid, NoLock);
	TupleDesc	reldesc = RelationGetDescr(rel);
	int			live = 0;
	bool		fits = true;

	for (int i = 0; i < reldesc->natts; i++)
		if (!TupleDescAttr(reldesc, i)->attisdropped)
			live++;
	if (live != desc->natts)
		fits = false;
	for (int c = 0; fits && c < desc->natts; c++)
	{
		Form_pg_attribute sa = TupleDescAttr(desc, c);
		int			found = BackfillFindColumn(reldesc, NameStr(sa->attname));
		Form_pg_attribute ta = found >= 0 ? TupleDescAttr(reldesc, found) : NULL;

		if (ta == NULL || ta->atttypid != sa->atttypid || ta->attgenerated || ta->attidentity ||
			!OidIsValid(get_array_type(sa->atttypid)) ||
			OidIsValid(get_element_type(getBaseType(sa->atttypid))))
			fits = false;
		else
			appendStringInfo(cols, "%s%s", c > 0 ? ", " : "", quote_identifier(NameStr(sa->attname)));
	}
	relation_close(rel, NoLock);
	return fits;
}

/* Read the partition's rows, hashed, with their TIDs, sorted by hash. */
static void
ReadStored(InPlace *ip, const char *table, const char *cols)
{
	SPIPlanPtr	plan = BackfillPrepare(psprintf("SELECT ctid, %s FROM ONLY %s", cols, table), 0, NULL, "partition");
	TupleDesc	desc = BackfillPlanResultDesc(plan);
	int		   *idx = palloc(sizeof(int) * ip->ncols);

	for (int c = 0; c < ip->ncols; c++)
		idx[c] = c + 1;
	ip->h1 = BackfillRowHasherCreate(desc, ip->ncols, idx);
	ip->h2 = BackfillRowHasherCreate(desc, ip->ncols, idx);
	BackfillRowHasherSetSeed(ip->h2, SECOND_SEED);
	ip->maxrows = 1024;
	ip->rows = palloc(sizeof(StoredRow) * ip->maxrows);
	BackfillInitReceiver(&ip->pub, ReceiveStored, NULL);
	BackfillRunToDest(plan, NULL, false, (DestReceiver *) ip);
	SPI_freeplan(plan);
	qsort(ip->rows, ip->nrows, sizeof(StoredRow), CompareStored);
}

/* Delete the stored rows no source row took the place of; how many. */
static uint64
DeleteUnkept(InPlace *ip, const char *table)
{
	Datum	   *tids = palloc(sizeof(Datum) * Max(ip->nrows, 1));
	int			n = 0;
	Oid			argtypes[1] = {TIDARRAYOID};
	Datum		args[1];

	for (int64 i = 0; i < ip->nrows; i++)
		if (!ip->rows[i].kept)
			tids[n++] = PointerGetDatum(&ip->rows[i].tid);
	if (n == 0)
		return 0;
	args[0] = PointerGetDatum(construct_array(tids, n, TIDOID, sizeof(ItemPointerData),
											  false, TYPALIGN_SHORT));
	if (SPI_execute_with_args(psprintf("DELETE FROM ONLY %s WHERE ctid OPERATOR(pg_catalog.=) ANY ($1)", table),
							  1, argtypes, args, NULL, false, 0) != SPI_OK_DELETE ||
		SPI_processed != (uint64) n)
		elog(ERROR, "could not delete the " INT64_FORMAT " rows of %s the source lacks", (int64) n, table);
	return (uint64) n;
}

/* Insert the source rows that took no stored row's place. */
static void
InsertNew(InPlace *ip, const char *table, const char *cols)
{
	Oid		   *argtypes = palloc(sizeof(Oid) * ip->ncols);
	Datum	   *args = palloc(sizeof(Datum) * ip->ncols);
	StringInfoData sql;

	if (ip->ninsert == 0)
		return;
	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s (%s) SELECT * FROM ROWS FROM (", table, cols);
	for (int c = 0; c < ip->ncols; c++)
	{
		argtypes[c] = get_array_type(ip->types[c]);
		args[c] = makeArrayResult(ip->arrays[c], ip->cxt);
		appendStringInfo(&sql, "%spg_catalog.unnest($%d)", c > 0 ? ", " : "", c + 1);
	}
	appendStringInfoChar(&sql, ')');
	if (SPI_execute_with_args(sql.data, ip->ncols, argtypes, args, NULL, false, 0) != SPI_OK_INSERT ||
		SPI_processed != ip->ninsert)
		elog(ERROR, "could not insert the " UINT64_FORMAT " new rows of %s", ip->ninsert, table);
}

/*
 * Rewrite partition relid to hold the rows of the query bound, writing only
 * the rows that differ (see the head of the file).  Returns false, having
 * done nothing, if bound does not return the partition's columns as they
 * are (the caller then deletes and fills it whole).  Inside SPI, with relid
 * locked against other writers.
 */
bool
BackfillRewriteDiffering(Oid relid, const char *bound, BackfillRewriteCounts *counts)
{
	SPIPlanPtr	plan = BackfillPrepare(bound, 0, NULL, "source");
	TupleDesc	desc = BackfillPlanResultDesc(plan);
	const char *table = BackfillQualifiedName(relid);
	StringInfoData cols;
	InPlace		ip;

	BackfillCheckReadOnly(plan, "source");
	initStringInfo(&cols);
	if (!SourceFits(relid, desc, &cols))
	{
		SPI_freeplan(plan);
		return false;
	}

	memset(&ip, 0, sizeof(ip));
	ip.cxt = AllocSetContextCreate(CurrentMemoryContext, "backfill in place", ALLOCSET_DEFAULT_SIZES);
	ip.ncols = desc->natts;
	ip.types = palloc(sizeof(Oid) * ip.ncols);
	ip.arrays = palloc0(sizeof(ArrayBuildState *) * ip.ncols);
	for (int c = 0; c < ip.ncols; c++)
		ip.types[c] = TupleDescAttr(desc, c)->atttypid;
	ReadStored(&ip, table, cols.data);

	/* the source's rows, hashed as the stored ones (the same names and types) */
	PrepareCoercions(&ip, relid, desc);
	ip.h1 = BackfillRowHasherCreate(desc, ip.ncols, NULL);
	ip.h2 = BackfillRowHasherCreate(desc, ip.ncols, NULL);
	BackfillRowHasherSetSeed(ip.h2, SECOND_SEED);
	BackfillInitReceiver(&ip.pub, ReceiveSource, NULL);
	BackfillRunToDest(plan, NULL, false, (DestReceiver *) &ip);
	SPI_freeplan(plan);

	counts->deleted = DeleteUnkept(&ip, table);
	InsertNew(&ip, table, cols.data);
	counts->inserted = ip.ninsert;
	counts->unchanged = ip.nkept;
	MemoryContextDelete(ip.cxt);
	return true;
}
