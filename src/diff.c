/*-------------------------------------------------------------------------
 *
 * src/diff.c
 *		backfill_diff: the rows two queries disagree on, matched on a key.
 *
 * Both queries run once each, on the caller's snapshot, through a
 * DestReceiver that hashes rows as the executor produces them (rowhash.c):
 *
 * 1. every row of a goes into a hash table as (key hash, row hash);
 * 2. every row of b is looked up: a key a lacks is 'added' (emitted at once),
 *    a key whose row hash differs is 'changed' (b's row kept for step 3);
 * 3. only if a key of a was missing from b or changed, a runs a second time
 *    to emit 'removed' rows and the a side of 'changed' ones.
 *
 * Memory is one 32-byte entry per key of a plus the rows that differ;
 * identical rows cost two hashes and never become jsonb.  Keys and rows are
 * compared by their values' representation (rowhash.c), as pg_dump would
 * write them, whatever the session's settings; only the rows shown (jsonb)
 * are written in the session's settings.
 *
 * A key seen twice on one side is an error: a diff on a key that is not
 * unique pairs rows arbitrarily and silently lies.  Since keys are compared
 * by a 64-bit hash, a repeated hash is first confirmed with a second,
 * independent hash family before it is reported; and a 'changed' pair is
 * emitted only after its two keys hash alike in that second family too, so
 * a hash collision can neither invent a duplicate nor pair two different
 * keys (the jsonb the keys are shown as is no test: with extra_float_digits
 * below 1 it writes two different floats alike).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "diff.h"
#include "rowhash.h"
#include "spi_util.h"

#define IN_A		0x01
#define IN_B		0x02

/* The seed of the second hash family, and what keys are confirmed by. */
#define SECOND_SEED	UINT64CONST(0x5851f42d4c957f2d)

typedef struct DiffEntry
{
	uint64		key;			/* hash of the key columns */
	uint64		rowa;			/* hash of a's row */
	uint64		rowb;			/* hash of b's row */
	int32		bidx;			/* b's row in DiffState.brows, or -1 */
	uint8		flags;
	char		status;			/* for simplehash */
} DiffEntry;

#define SH_PREFIX		difftab
#define SH_ELEMENT_TYPE DiffEntry
#define SH_KEY_TYPE		uint64
#define SH_KEY			key
#define SH_HASH_KEY(tb, k)	((uint32) (k))
#define SH_EQUAL(tb, a, b)	((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* One side of the diff: its query and how to read its rows. */
typedef struct DiffSide
{
	const char *name;			/* "a" or "b" */
	SPIPlanPtr	plan;
	TupleDesc	origdesc;		/* the row type the query returns */
	TupleDesc	desc;			/* blessed, in a's column order */
	TupleDesc	keydesc;		/* blessed row type of the key columns */
	int			nkeys;
	int		   *keyidx;			/* key columns, in key order */
	int		   *rowidx;			/* all columns, in a's order */
	BackfillRowHasher *keyhash;
	BackfillRowHasher *keyhash2;	/* keys again, in another hash family */
	BackfillRowHasher *rowhash;
} DiffSide;

/* A row of b kept until a's row is read again. */
typedef struct DiffKept
{
	uint64		key2;			/* the key's hash in the other family */
	Jsonb	   *key;
	Jsonb	   *row;
} DiffKept;

typedef struct DiffState
{
	DiffSide	a;
	DiffSide	b;
	difftab_hash *tab;
	DiffKept   *brows;
	int			nbrows;
	int			maxbrows;
	uint64		pending;		/* keys of a that must be read again */
	Tuplestorestate *out;
	TupleDesc	outdesc;
	MemoryContext cxt;			/* lives for the whole call */
	MemoryContext rowcxt;		/* reset after each row */
	/* set when a key hash repeats on one side */
	const char *dupside;
	Jsonb	   *dupkey;
} DiffState;

typedef enum DiffPass
{
	PASS_BUILD,					/* read a, fill the table */
	PASS_PROBE,					/* read b, emit 'added', keep 'changed' */
	PASS_REREAD					/* read a again, emit 'removed' and 'changed' */
} DiffPass;

typedef struct DiffReceiver
{
	DestReceiver pub;
	DiffState  *st;
	DiffPass	pass;
} DiffReceiver;

/* The columns idx[0..n-1] of the row in slot, as a jsonb object. */
static Jsonb *
SlotToJsonb(TupleTableSlot *slot, TupleDesc desc, int n, const int *idx)
{
	Datum	   *values = palloc(sizeof(Datum) * n);
	bool	   *nulls = palloc(sizeof(bool) * n);
	HeapTuple	tuple;
	Datum		json;

	slot_getallattrs(slot);
	for (int i = 0; i < n; i++)
	{
		values[i] = slot->tts_values[idx[i]];
		nulls[i] = slot->tts_isnull[idx[i]];
	}
	tuple = heap_form_tuple(desc, values, nulls);
	json = DirectFunctionCall1(row_to_json, HeapTupleGetDatum(tuple));
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in,
											  CStringGetDatum(TextDatumGetCString(json))));
}

/* Append one result row. */
static void
Emit(DiffState *st, const char *change, Jsonb *key, Jsonb *arow, Jsonb *brow)
{
	Datum		values[4];
	bool		nulls[4] = {false, false, arow == NULL, brow == NULL};

	values[0] = CStringGetTextDatum(change);
	values[1] = JsonbPGetDatum(key);
	values[2] = arow ? JsonbPGetDatum(arow) : (Datum) 0;
	values[3] = brow ? JsonbPGetDatum(brow) : (Datum) 0;
	tuplestore_putvalues(st->out, st->outdesc, values, nulls);
}

/* Remember a repeated key hash on one side and stop reading. */
static bool
NoteDuplicate(DiffState *st, DiffSide *side, TupleTableSlot *slot)
{
	MemoryContext old = MemoryContextSwitchTo(st->cxt);

	st->dupside = side->name;
	st->dupkey = SlotToJsonb(slot, side->keydesc, side->nkeys, side->keyidx);
	MemoryContextSwitchTo(old);
	return false;
}

/* Handle one row of a query, as the pass requires. */
static bool
DiffReceive(TupleTableSlot *slot, DestReceiver *self)
{
	DiffReceiver *r = (DiffReceiver *) self;
	DiffState  *st = r->st;
	DiffSide   *side = (r->pass == PASS_PROBE) ? &st->b : &st->a;
	uint64		key = BackfillHashRow(side->keyhash, slot);
	uint64		row = BackfillHashRow(side->rowhash, slot);
	DiffEntry  *e;
	bool		found;
	MemoryContext old;

	CHECK_FOR_INTERRUPTS();

	switch (r->pass)
	{
		case PASS_BUILD:
			e = difftab_insert(st->tab, key, &found);
			if (found)
				return NoteDuplicate(st, side, slot);
			e->rowa = row;
			e->bidx = -1;
			e->flags = IN_A;
			return true;

		case PASS_PROBE:
			e = difftab_insert(st->tab, key, &found);
			if (!found)
			{
				e->flags = IN_B;
				e->rowb = row;
				e->bidx = -1;
				old = MemoryContextSwitchTo(st->rowcxt);
				Emit(st, "added",
					 SlotToJsonb(slot, side->keydesc, side->nkeys, side->keyidx),
					 NULL,
					 SlotToJsonb(slot, side->desc, side->desc->natts, side->rowidx));
				MemoryContextSwitchTo(old);
				MemoryContextReset(st->rowcxt);
				return true;
			}
			if (e->flags & IN_B)
				return NoteDuplicate(st, side, slot);
			e->flags |= IN_B;
			e->rowb = row;
			if (e->rowa != row)
			{
				if (st->nbrows == st->maxbrows)
				{
					st->maxbrows = Max(64, st->maxbrows * 2);
					st->brows = repalloc_huge(st->brows, sizeof(DiffKept) * st->maxbrows);
				}
				old = MemoryContextSwitchTo(st->rowcxt);
				{
					Jsonb	   *k = SlotToJsonb(slot, side->keydesc, side->nkeys, side->keyidx);
					Jsonb	   *v = SlotToJsonb(slot, side->desc, side->desc->natts, side->rowidx);

					st->brows[st->nbrows].key = MemoryContextAlloc(st->cxt, VARSIZE(k));
					memcpy(st->brows[st->nbrows].key, k, VARSIZE(k));
					st->brows[st->nbrows].row = MemoryContextAlloc(st->cxt, VARSIZE(v));
					memcpy(st->brows[st->nbrows].row, v, VARSIZE(v));
				}
				MemoryContextSwitchTo(old);
				MemoryContextReset(st->rowcxt);
				st->brows[st->nbrows].key2 = BackfillHashRow(side->keyhash2, slot);
				e->bidx = st->nbrows++;
			}
			return true;

		case PASS_REREAD:
			e = difftab_lookup(st->tab, key);
			if (e == NULL || !(e->flags & IN_A) || e->rowa != row)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("query a returned different rows when read a second time"),
						 errhint("backfill_diff reads a twice when they differ: the query must return the same rows each time (no random(), no LIMIT without ORDER BY).")));
			if ((e->flags & IN_B) && e->rowa == e->rowb)
				return true;
			old = MemoryContextSwitchTo(st->rowcxt);
			{
				Jsonb	   *akey = SlotToJsonb(slot, side->keydesc, side->nkeys, side->keyidx);
				Jsonb	   *arow = SlotToJsonb(slot, side->desc, side->desc->natts, side->rowidx);

				if (!(e->flags & IN_B))
					Emit(st, "removed", akey, arow, NULL);
				else if (BackfillHashRow(side->keyhash2, slot) == st->brows[e->bidx].key2)
					Emit(st, "changed", akey, arow, st->brows[e->bidx].row);
				else
				{
					/* two different keys with one hash: not a pair */
					Emit(st, "removed", akey, arow, NULL);
					Emit(st, "added", st->brows[e->bidx].key, NULL, st->brows[e->bidx].row);
				}
			}
			MemoryContextSwitchTo(old);
			MemoryContextReset(st->rowcxt);
			st->pending--;
			return true;
	}
	pg_unreachable();
}

/* Prepare one side's query and find its key columns. */
static void
PrepareSide(DiffSide *side, const char *name, const char *query, List *keys)
{
	TupleDesc	desc;
	int			i = 0;
	ListCell   *lc;

	side->name = name;
	side->plan = BackfillPrepare(query, 0, NULL, psprintf("query %s", name));
	BackfillCheckReadOnly(side->plan, psprintf("query %s", name));
	desc = BackfillPlanResultDesc(side->plan);
	side->origdesc = desc;
	side->desc = BlessTupleDesc(CreateTupleDescCopy(desc));

	/* names must be unique for columns to be matched by name */
	for (int c = 0; c < desc->natts; c++)
		for (int d = c + 1; d < desc->natts; d++)
			if (strcmp(NameStr(TupleDescAttr(desc, c)->attname),
					   NameStr(TupleDescAttr(desc, d)->attname)) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("query %s returns column \"%s\" more than once", name,
								NameStr(TupleDescAttr(desc, c)->attname)),
						 errhint("Give the columns distinct names with AS: they are matched by name.")));

	side->nkeys = list_length(keys);
	side->keyidx = palloc(sizeof(int) * side->nkeys);
	side->keydesc = CreateTemplateTupleDesc(side->nkeys);
	foreach(lc, keys)
	{
		const char *key = (const char *) lfirst(lc);
		int			found = BackfillFindColumn(desc, key);

		if (found < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("key column \"%s\" is not a column of query %s", key, name)));
		side->keyidx[i] = found;
		TupleDescCopyEntry(side->keydesc, i + 1, desc, found + 1);
		i++;
	}
	side->keydesc = BlessTupleDesc(side->keydesc);
}

/* Match b's columns to a's by name and type; a and b must return the same columns. */
static void
MatchColumns(DiffSide *a, DiffSide *b)
{
	TupleDesc	ad = a->desc;
	TupleDesc	bd = b->desc;

	a->rowidx = palloc(sizeof(int) * ad->natts);
	b->rowidx = palloc(sizeof(int) * ad->natts);
	for (int c = 0; c < ad->natts; c++)
	{
		Form_pg_attribute aa = TupleDescAttr(ad, c);
		int			found = BackfillFindColumn(bd, NameStr(aa->attname));

		if (found < 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("queries a and b return different columns"),
					 errdetail("Column \"%s\" of query a is not a column of query b.",
							   NameStr(aa->attname))));
		if (TupleDescAttr(bd, found)->atttypid != aa->atttypid)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" is of type %s in query a but %s in query b",
							NameStr(aa->attname), format_type_be(aa->atttypid),
							format_type_be(TupleDescAttr(bd, found)->atttypid)),
					 errhint("Cast one side so both return the same type.")));
		a->rowidx[c] = c;
		b->rowidx[c] = found;
	}
	if (bd->natts != ad->natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("queries a and b return different columns"),
				 errdetail("Query a returns %d columns, query b %d.", ad->natts, bd->natts)));

	/* b's rows are shown and hashed in a's column order */
	{
		TupleDesc	ordered = CreateTemplateTupleDesc(ad->natts);

		for (int c = 0; c < ad->natts; c++)
			TupleDescCopyEntry(ordered, c + 1, bd, b->rowidx[c] + 1);
		b->desc = BlessTupleDesc(ordered);
	}
}

/* Run the query of one side through the receiver for one pass. */
static void
RunPass(DiffState *st, DiffPass pass)
{
	DiffReceiver r;

	memset(&r, 0, sizeof(r));
	BackfillInitReceiver(&r.pub, DiffReceive, NULL);
	r.st = st;
	r.pass = pass;
	BackfillRunToDest(pass == PASS_PROBE ? st->b.plan : st->a.plan, NULL, true,
					  (DestReceiver *) &r);
}

/* One whole diff with one hash family; false when a key hash repeated on a side. */
static bool
DiffWithSeed(DiffState *st, uint64 seed)
{
	DiffSide   *sides[2] = {&st->a, &st->b};
	difftab_iterator it;
	DiffEntry  *e;

	for (int s = 0; s < 2; s++)
	{
		sides[s]->keyhash->seed = seed;
		sides[s]->keyhash2->seed = seed ^ SECOND_SEED ^ UINT64CONST(0x9e3779b97f4a7c15);
		sides[s]->rowhash->seed = seed;
	}
	if (st->tab)
		difftab_destroy(st->tab);
	st->tab = difftab_create(st->cxt, 1024, NULL);
	st->nbrows = 0;
	st->dupside = NULL;
	tuplestore_clear(st->out);

	RunPass(st, PASS_BUILD);
	if (st->dupside)
		return false;
	RunPass(st, PASS_PROBE);
	if (st->dupside)
		return false;

	st->pending = 0;
	difftab_start_iterate(st->tab, &it);
	while ((e = difftab_iterate(st->tab, &it)) != NULL)
		if ((e->flags & IN_A) && (!(e->flags & IN_B) || e->rowa != e->rowb))
			st->pending++;
	if (st->pending > 0)
	{
		RunPass(st, PASS_REREAD);
		if (st->pending != 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("query a returned different rows when read a second time"),
					 errhint("backfill_diff reads a twice when they differ: the query must return the same rows each time.")));
	}
	return true;
}

PG_FUNCTION_INFO_V1(backfill_diff);

/*
 * backfill_diff(a text, b text, key text[])
 *		RETURNS TABLE(change text, key jsonb, a_row jsonb, b_row jsonb)
 */
Datum
backfill_diff(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *qa = BackfillCheckQuery(BackfillArgText(fcinfo, 0, "query a"), "query a");
	const char *qb = BackfillCheckQuery(BackfillArgText(fcinfo, 1, "query b"), "query b");
	List	   *keys;
	DiffState	st;
	MemoryContext callcxt = CurrentMemoryContext;

	keys = BackfillKeyArg(fcinfo, 2);

	InitMaterializedSRF(fcinfo, 0);

	memset(&st, 0, sizeof(st));
	st.out = rsinfo->setResult;
	st.outdesc = rsinfo->setDesc;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	st.cxt = AllocSetContextCreate(callcxt, "backfill_diff", ALLOCSET_DEFAULT_SIZES);
	st.rowcxt = AllocSetContextCreate(st.cxt, "backfill_diff row", ALLOCSET_DEFAULT_SIZES);
	{
		MemoryContext old = MemoryContextSwitchTo(st.cxt);

		PrepareSide(&st.a, "a", qa, keys);
		PrepareSide(&st.b, "b", qb, keys);
		MatchColumns(&st.a, &st.b);
		/* hashers read the rows as the queries return them */
		st.a.keyhash = BackfillRowHasherCreate(st.a.origdesc, st.a.nkeys, st.a.keyidx);
		st.b.keyhash = BackfillRowHasherCreate(st.b.origdesc, st.b.nkeys, st.b.keyidx);
		st.a.keyhash2 = BackfillRowHasherCreate(st.a.origdesc, st.a.nkeys, st.a.keyidx);
		st.b.keyhash2 = BackfillRowHasherCreate(st.b.origdesc, st.b.nkeys, st.b.keyidx);
		st.a.rowhash = BackfillRowHasherCreate(st.a.origdesc, st.a.desc->natts, st.a.rowidx);
		st.b.rowhash = BackfillRowHasherCreate(st.b.origdesc, st.a.desc->natts, st.b.rowidx);
		st.maxbrows = 64;
		st.brows = palloc(sizeof(DiffKept) * st.maxbrows);
		MemoryContextSwitchTo(old);
	}

	/* A repeated key hash is a duplicate only if a second hash family repeats it too. */
	if (!DiffWithSeed(&st, 0) && !DiffWithSeed(&st, SECOND_SEED))
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("key (%s) is not unique in query %s", BackfillColumnListText(keys), st.dupside),
				 errdetail("Key %s appears more than once in query %s.",
						   JsonbToCString(NULL, &st.dupkey->root, VARSIZE(st.dupkey)),
						   st.dupside),
				 errhint("A diff on a key that is not unique pairs rows arbitrarily: choose columns that identify one row on both sides.")));

	SPI_finish();
	MemoryContextDelete(st.cxt);
	return (Datum) 0;
}

/*
 * Multiset diff: the rows of one query the other lacks, with no key.
 *
 * Rows are counted by their hash (rowhash.c: by representation, as the
 * fingerprint sees them, whatever the types: json, point and 1.0 against
 * 1.00 included): a's rows add one to the count of their hash, b's take one
 * away or, where none is left, are 'added'.  The counts left over are
 * a's 'removed' rows, found again by a second read of a for the samples.
 */
typedef struct BagEntry
{
	uint64		hash;			/* of the whole row */
	int64		count;			/* a's rows not yet matched by one of b's */
	char		status;			/* for simplehash */
} BagEntry;

#define SH_PREFIX		bagtab
#define SH_ELEMENT_TYPE BagEntry
#define SH_KEY_TYPE		uint64
#define SH_KEY			hash
#define SH_HASH_KEY(tb, k)	((uint32) (k))
#define SH_EQUAL(tb, a, b)	((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

#define BAG_SAMPLES		5

typedef enum BagPass
{
	BAG_COUNT,					/* read a: count its rows */
	BAG_MATCH,					/* read b: match them, note the rest as added */
	BAG_LEFT					/* read a again: sample the rows left over */
} BagPass;

typedef struct BagReceiver
{
	DestReceiver pub;
	BagPass		pass;
	bagtab_hash *tab;
	BackfillRowHasher *hasher;
	TupleDesc	desc;			/* blessed, for the samples */
	int		   *idx;
	int64		added;
	int			nsamples;		/* of this pass */
	StringInfo	sample;			/* jsonb array text, without its brackets */
	MemoryContext rowcxt;
} BagReceiver;

/* Append one sample row to the array text. */
static void
BagSample(BagReceiver *r, TupleTableSlot *slot, const char *change)
{
	MemoryContext old = MemoryContextSwitchTo(r->rowcxt);
	Jsonb	   *row = SlotToJsonb(slot, r->desc, r->desc->natts, r->idx);
	char	   *text = JsonbToCString(NULL, &row->root, VARSIZE(row));

	MemoryContextSwitchTo(old);
	appendStringInfo(r->sample, "%s{\"change\": \"%s\", \"row\": %s}",
					 r->sample->len ? ", " : "", change, text);
	MemoryContextReset(r->rowcxt);
	r->nsamples++;
}

/* Count, match or sample one row, as the pass requires. */
static bool
BagReceive(TupleTableSlot *slot, DestReceiver *self)
{
	BagReceiver *r = (BagReceiver *) self;
	uint64		h = BackfillHashRow(r->hasher, slot);
	BagEntry   *e;
	bool		found;

	CHECK_FOR_INTERRUPTS();
	if (r->pass == BAG_COUNT)
	{
		e = bagtab_insert(r->tab, h, &found);
		e->count = found ? e->count + 1 : 1;
		return true;
	}
	e = bagtab_lookup(r->tab, h);
	if (e != NULL && e->count > 0)
	{
		e->count--;
		if (r->pass == BAG_LEFT && r->nsamples < BAG_SAMPLES)
			BagSample(r, slot, "removed");
		return true;
	}
	if (r->pass == BAG_MATCH)
	{
		r->added++;
		if (r->nsamples < BAG_SAMPLES)
			BagSample(r, slot, "added");
	}
	return true;
}

/* Read query (its plan) through r for one pass; on snap if valid, else on a new snapshot. */
static void
BagRead(BagReceiver *r, BagPass pass, SPIPlanPtr plan, Snapshot snap)
{
	TupleDesc	desc = BackfillPlanResultDesc(plan);

	r->pass = pass;
	r->nsamples = 0;
	r->desc = BlessTupleDesc(CreateTupleDescCopy(desc));
	r->idx = palloc(sizeof(int) * Max(1, desc->natts));
	for (int i = 0; i < desc->natts; i++)
		r->idx[i] = i;
	r->hasher = BackfillRowHasherCreate(desc, desc->natts, NULL);
	if (snap != InvalidSnapshot)
	{
		/* a read-only SPI call runs on the active snapshot: make it snap */
		PushActiveSnapshot(snap);
		BackfillRunToDest(plan, NULL, true, (DestReceiver *) r);
		PopActiveSnapshot();
	}
	else
		BackfillRunToDest(plan, NULL, false, (DestReceiver *) r);
}

/*
 * The rows of query a that query b lacks (*removed) and those of b that a
 * lacks (*added), as multisets compared by representation, with up to five
 * samples of each as jsonb array text (*sample).  a is read on asnap if it
 * is valid (a snapshot taken before b's rows were written), else both on a
 * new snapshot.  Inside SPI.
 */
void
BackfillMultisetDiff(const char *a, Snapshot asnap, const char *b,
					 int64 *added, int64 *removed, char **sample)
{
	SPIPlanPtr	pa = BackfillPrepare(a, 0, NULL, "query a");
	SPIPlanPtr	pb = BackfillPrepare(b, 0, NULL, "query b");
	BagReceiver r;
	StringInfoData buf;
	bagtab_iterator it;
	BagEntry   *e;

	memset(&r, 0, sizeof(r));
	BackfillInitReceiver(&r.pub, BagReceive, NULL);
	r.tab = bagtab_create(CurrentMemoryContext, 1024, NULL);
	r.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "backfill multiset diff row",
									 ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&buf);
	r.sample = &buf;

	BagRead(&r, BAG_COUNT, pa, asnap);
	BagRead(&r, BAG_MATCH, pb, InvalidSnapshot);
	*added = r.added;
	*removed = 0;
	bagtab_start_iterate(r.tab, &it);
	while ((e = bagtab_iterate(r.tab, &it)) != NULL)
		*removed += e->count;
	if (*removed > 0)
		BagRead(&r, BAG_LEFT, pa, asnap);

	*sample = psprintf("[%s]", buf.data);
	SPI_freeplan(pa);
	SPI_freeplan(pb);
	bagtab_destroy(r.tab);
	MemoryContextDelete(r.rowcxt);
}
