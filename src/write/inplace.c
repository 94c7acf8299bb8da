/*-------------------------------------------------------------------------
 *
 * src/write/inplace.c
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
 * each once, of the same types) and every column to fit in an array of its
 * type, and the partition to have no trigger of its own (a BEFORE trigger
 * may change or skip a row, a statement trigger expects its statements):
 * for any other source or partition (or an array column, which an array of
 * arrays cannot carry) the caller deletes and fills the partition whole.  So
 * it does too when the rows read and the rows to insert outgrow
 * maintenance_work_mem, found before anything is written.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "utils/rel.h"

#include "write/assign.h"
#include "hash/fingerprint.h"
#include "write/inplace.h"
#include "hash/rowhash.h"
#include "base/spi_util.h"

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
	BackfillRowHasher *h1;
	BackfillRowHasher *h2;
	StoredRow  *rows;
	int64		nrows;
	int64		maxrows;
	ArrayBuildState **arrays;	/* per column: the source rows to insert */
	TupleDesc	desc;			/* the source's columns */
	Oid		   *types;
	int32	   *typmods;		/* the partition's */
	ExprState **assign;			/* per column: INSERT's assignment to it, or NULL */
	ExprContext *econtext;		/* where a row's assigned values live */
	Datum	   *values;
	bool	   *isnull;
	uint64		ninsert;
	uint64		nkept;
	Size		used;			/* bytes of rows read and rows to insert */
	Size		budget;			/* at most this many, else the caller writes every row */
	BackfillFingerprint *before;	/* the stored rows' sums, as backfill_fingerprint's */
	BackfillFingerprint *after;	/* the source rows', as the partition will hold them */
	MemoryContext cxt;
} InPlace;

/* Count bytes against the budget; false once it is spent. */
static inline bool
Spend(InPlace *ip, Size bytes)
{
	ip->used += bytes;
	return ip->used <= ip->budget;
}

/* A stored row of the partition: (ctid, columns...). */
static bool
ReceiveStored(TupleTableSlot *slot, DestReceiver *self)
{
	InPlace    *ip = (InPlace *) self;
	StoredRow  *row;
	bool		isnull;

	if (ip->nrows == ip->maxrows)
	{
		if (!Spend(ip, sizeof(StoredRow) * ip->maxrows))
			return false;
		ip->maxrows *= 2;
		ip->rows = repalloc_huge(ip->rows, sizeof(StoredRow) * ip->maxrows);
	}
	row = &ip->rows[ip->nrows++];
	/* h1 hashes the partition's columns with no seed, as its fingerprint does */
	row->h1 = BackfillHashRow(ip->h1, slot);
	ip->before->rows++;
	ip->before->sum1 += row->h1;
	ip->before->sum2 += BackfillFingerprintLane2(row->h1);
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

/*
 * The first stored row hashing as (h1, h2) that no source row took yet, or
 * NULL.  Rows alike are taken first to last, so the taken ones of a run of
 * equal hashes come first: one binary search finds the first row that is
 * neither before the run nor taken, however many rows are alike.
 */
static StoredRow *
FindUnkept(InPlace *ip, uint64 h1, uint64 h2)
{
	int64		lo = 0;
	int64		hi = ip->nrows;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		StoredRow  *r = &ip->rows[mid];

		if (r->h1 < h1 || (r->h1 == h1 && (r->h2 < h2 || (r->h2 == h2 && r->kept))))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ip->nrows && ip->rows[lo].h1 == h1 && ip->rows[lo].h2 == h2)
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
	uint64		h1;
	MemoryContext old;

	slot_getallattrs(slot);
	ResetExprContext(ip->econtext);
	for (int c = 0; c < ip->ncols; c++)
	{
		ip->values[c] = slot->tts_values[c];
		ip->isnull[c] = slot->tts_isnull[c];
		if (ip->assign[c] != NULL)
			ip->values[c] = BackfillAssignValue(ip->assign[c], ip->econtext, ip->values[c],
												ip->isnull[c], &ip->isnull[c]);
	}
	h1 = BackfillHashValues(ip->h1, ip->values, ip->isnull);
	/* every source row is a row of the partition afterwards, kept or inserted */
	ip->after->rows++;
	ip->after->sum1 += h1;
	ip->after->sum2 += BackfillFingerprintLane2(h1);
	row = FindUnkept(ip, h1, BackfillHashValues(ip->h2, ip->values, ip->isnull));
	if (row != NULL)
	{
		row->kept = true;
		ip->nkept++;
		return true;
	}
	old = MemoryContextSwitchTo(ip->cxt);
	for (int c = 0; c < ip->ncols; c++)
	{
		Form_pg_attribute att = TupleDescAttr(ip->desc, c);

		if (!Spend(ip, sizeof(Datum) + (ip->isnull[c] ? 0 : att->attlen == -1 ?
										toast_raw_datum_size(ip->values[c]) :
										datumGetSize(ip->values[c], att->attbyval, att->attlen))))
		{
			MemoryContextSwitchTo(old);
			return false;
		}
		ip->arrays[c] = accumArrayResult(ip->arrays[c], ip->values[c], ip->isnull[c],
										 ip->types[c], ip->cxt);
	}
	MemoryContextSwitchTo(old);
	ip->ninsert++;
	return true;
}

/*
 * INSERT's assignment of each source column to the partition's column of
 * the same type and its typmod (ip->typmods, from SourceFits), where it
 * changes the value (assign.c).
 */
static void
PrepareAssignments(InPlace *ip)
{
	ip->assign = palloc0(sizeof(ExprState *) * ip->ncols);
	ip->econtext = CreateStandaloneExprContext();
	ip->values = palloc(sizeof(Datum) * ip->ncols);
	ip->isnull = palloc(sizeof(bool) * ip->ncols);
	for (int c = 0; c < ip->ncols; c++)
	{
		Form_pg_attribute sa = TupleDescAttr(ip->desc, c);
		Expr	   *assign = BackfillAssignExpr(sa->atttypid, sa->atttypmod, sa->attcollation,
												sa->atttypid, ip->typmods[c]);

		if (assign != NULL)
			ip->assign[c] = BackfillAssignState(assign);
	}
}

/* Whether rel has a trigger of its own that is not disabled (not a foreign key's check). */
static bool
HasUserTriggers(Relation rel)
{
	TriggerDesc *td = rel->trigdesc;

	for (int i = 0; td != NULL && i < td->numtriggers; i++)
		if (!td->triggers[i].tgisinternal && td->triggers[i].tgenabled != TRIGGER_DISABLED)
			return true;
	return false;
}

/*
 * Whether the source (desc) returns relid's very columns, each once, of the
 * same types, none of them generated, an identity or an array, and relid
 * has no trigger of its own; the columns' names, in the source's order,
 * into cols, and their typmods in relid into ip->typmods.
 */
static bool
SourceFits(InPlace *ip, Oid relid, TupleDesc desc, StringInfo cols, const char **why)
{
	Relation	rel = relation_open(relid, NoLock);
	TupleDesc	reldesc = RelationGetDescr(rel);
	bool	   *matched = palloc0(sizeof(bool) * reldesc->natts);
	int			live = 0;
	bool		fits = true;

	if (HasUserTriggers(rel))
	{
		relation_close(rel, NoLock);
		*why = "the partition has a trigger of its own";
		return false;
	}

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

		if (ta == NULL || matched[found] || ta->atttypid != sa->atttypid || ta->attgenerated ||
			ta->attidentity || !OidIsValid(get_array_type(sa->atttypid)) ||
			OidIsValid(get_element_type(getBaseType(sa->atttypid))))
			fits = false;
		else
		{
			matched[found] = true;
			ip->typmods[c] = ta->atttypmod;
			appendStringInfo(cols, "%s%s", c > 0 ? ", " : "", quote_identifier(NameStr(sa->attname)));
		}
	}
	relation_close(rel, NoLock);
	if (!fits)
		*why = "the source does not return the partition's columns as it stores them (the same names,"
			" each once, and types, none an array, generated or an identity)";
	return fits;
}

/*
 * Read the partition's rows, hashed, with their TIDs, sorted by hash; false
 * if they outgrow the budget.
 */
static bool
ReadStored(InPlace *ip, const char *table, const char *cols)
{
	SPIPlanPtr	plan = BackfillPrepare(psprintf("SELECT ctid, %s FROM ONLY %s", cols, table), 0, NULL, "partition");
	TupleDesc	desc = BackfillPlanResultDesc(plan);
	int		   *idx = palloc(sizeof(int) * ip->ncols);

	for (int c = 0; c < ip->ncols; c++)
		idx[c] = c + 1;
	ip->h1 = BackfillRowHasherCreate(desc, ip->ncols, idx);
	ip->h2 = BackfillRowHasherCreate(desc, ip->ncols, idx);
	BackfillRowHasherSetSeed(ip->h2, BACKFILL_SECOND_SEED);
	ip->maxrows = 1024;
	ip->rows = palloc(sizeof(StoredRow) * ip->maxrows);
	BackfillInitReceiver(&ip->pub, ReceiveStored, NULL);
	BackfillRunToDest(plan, NULL, false, (DestReceiver *) ip);
	SPI_freeplan(plan);
	if (ip->used > ip->budget)
		return false;
	qsort(ip->rows, ip->nrows, sizeof(StoredRow), CompareStored);
	return true;
}

/*
 * Read the source's rows, hashed as the stored ones (the same names and
 * types), each taking a stored row's place or kept to be inserted; false if
 * they outgrow the budget.
 */
static bool
MatchSource(InPlace *ip, SPIPlanPtr plan, TupleDesc desc)
{
	PrepareAssignments(ip);
	ip->h1 = BackfillRowHasherCreate(desc, ip->ncols, NULL);
	ip->h2 = BackfillRowHasherCreate(desc, ip->ncols, NULL);
	BackfillRowHasherSetSeed(ip->h2, BACKFILL_SECOND_SEED);
	BackfillInitReceiver(&ip->pub, ReceiveSource, NULL);
	BackfillRunToDest(plan, NULL, false, (DestReceiver *) ip);
	return ip->used <= ip->budget;
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
	/* unnest in the select list, in lockstep: a composite value stays one column */
	appendStringInfo(&sql, "INSERT INTO %s (%s) SELECT ", table, cols);
	for (int c = 0; c < ip->ncols; c++)
	{
		argtypes[c] = get_array_type(ip->types[c]);
		args[c] = makeArrayResult(ip->arrays[c], ip->cxt);
		appendStringInfo(&sql, "%spg_catalog.unnest($%d)", c > 0 ? ", " : "", c + 1);
	}
	if (SPI_execute_with_args(sql.data, ip->ncols, argtypes, args, NULL, false, 0) != SPI_OK_INSERT ||
		SPI_processed != ip->ninsert)
		elog(ERROR, "could not insert the " UINT64_FORMAT " new rows of %s", ip->ninsert, table);
}

/*
 * Rewrite partition relid to hold the rows of the query bound, writing only
 * the rows that differ (see the head of the file), and set *before and
 * *after to the fingerprints of the rows it held and holds, hashed on the
 * way (a row it holds is a source row as INSERT's assignment stores it).  Returns false, having
 * written nothing, with the reason in *why, if bound does not return the
 * partition's columns as they are, the partition has triggers or the rows
 * outgrow the budget (the caller then deletes and fills it whole).  Inside
 * SPI, with relid locked against other writers.
 */
bool
BackfillRewriteDiffering(Oid relid, const char *bound, BackfillRewriteCounts *counts, const char **why,
						 BackfillFingerprint *before, BackfillFingerprint *after)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "backfill in place",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	SPIPlanPtr	plan = BackfillPrepare(bound, 0, NULL, "source");
	TupleDesc	desc = BackfillPlanResultDesc(plan);
	const char *table = BackfillQualifiedName(relid);
	StringInfoData cols;
	InPlace		ip;
	bool		done = false;

	/* everything below, rows, hashers and arrays, is freed with cxt */
	BackfillCheckReadOnly(plan, "source");
	initStringInfo(&cols);
	memset(&ip, 0, sizeof(ip));
	ip.cxt = cxt;
	ip.budget = (Size) maintenance_work_mem * 1024;
	ip.ncols = desc->natts;
	ip.desc = desc;
	ip.types = palloc(sizeof(Oid) * ip.ncols);
	ip.typmods = palloc(sizeof(int32) * ip.ncols);
	ip.before = before;
	ip.after = after;
	memset(before, 0, sizeof(*before));
	memset(after, 0, sizeof(*after));
	ip.arrays = palloc0(sizeof(ArrayBuildState *) * ip.ncols);
	for (int c = 0; c < ip.ncols; c++)
		ip.types[c] = TupleDescAttr(desc, c)->atttypid;
	if (SourceFits(&ip, relid, desc, &cols, why))
	{
		*why = "the rows outgrew maintenance_work_mem";
		done = ReadStored(&ip, table, cols.data) && MatchSource(&ip, plan, desc);
	}
	if (done)
	{
		counts->deleted = DeleteUnkept(&ip, table);
		InsertNew(&ip, table, cols.data);
		counts->inserted = ip.ninsert;
		counts->unchanged = ip.nkept;
		BackfillFingerprintSeal(before);
		BackfillFingerprintSeal(after);
	}
	SPI_freeplan(plan);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return done;
}
