/*-------------------------------------------------------------------------
 *
 * src/validate/diff.c
 *		backfill_diff: the rows two queries disagree on, matched on a key.
 *
 * Both queries run once each, on the caller's snapshot, through a
 * DestReceiver that hashes rows as the executor produces them (rowhash.c):
 *
 * 1. every row of a goes into a hash table as (key hash, row hash);
 * 2. every row of b is looked up: a key a lacks is 'added', a key whose row
 *    hash differs is 'changed' (b's row kept for step 3);
 * 3. only if a key of a was missing from b or changed, a's rows of those
 *    keys are read again to emit 'removed' rows and the a side of 'changed'
 *    ones: fetched by their TIDs when every row of a came straight from a
 *    table (a scan with nothing computed: TABLE t, SELECT * FROM t WHERE ...)
 *    and few differ, else by running a a second time.  Either way a row read
 *    again must hash as it did the first time, or the diff fails (a fetched
 *    row that does not falls back to the second run).
 *
 * The table is larger than the caches, so each lookup would wait for memory:
 * rows are looked up in batches of DIFF_BATCH, each row's bucket asked for
 * (prefetched) as the row is hashed.  A's rows all go through batches; b's
 * rows that came straight from a table too, the ones shown fetched again by
 * TID after the pass (checked against their hashes; if one does not hash as
 * it did, the whole diff runs again looking b's rows up one by one, shown as
 * they are read, as b's other rows always are).  A key repeated within a
 * batch is found again by reading its side once more (PASS_FIND_DUPLICATE)
 * to show it.
 *
 * Memory is one 40-byte entry per key of a plus the rows that differ (and
 * 32 bytes for each row of b to fetch again);
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
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "base/citus.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "hash/rowhash.h"
#include "validate/citus_diff.h"
#include "validate/diff.h"

#define IN_A		0x01
#define IN_B		0x02

typedef struct DiffEntry
{
	uint64		key;			/* hash of the key columns */
	uint64		rowa;			/* hash of a's row */
	uint64		rowb;			/* hash of b's row */
	int32		bidx;			/* b's row in DiffState.brows, or -1 */
	ItemPointerData tid;		/* a's row in its table, if a.tids */
	uint16		rel;			/* and that table, in a.rels */
	uint8		flags;
	char		status;			/* for simplehash */
} DiffEntry;

/*
 * The table's bucket of a 64-bit hash: every bit of it folded into the high
 * half (Fibonacci hashing), which simplehash then masks.  The row hash makes
 * no promise about its low bits alone, and a table whose buckets cluster
 * spends its time probing.
 */
static inline uint32
BucketOf(uint64 h)
{
	return (uint32) ((h * UINT64CONST(0x9e3779b97f4a7c15)) >> 32);
}

#define SH_PREFIX		difftab
#define SH_ELEMENT_TYPE DiffEntry
#define SH_KEY_TYPE		uint64
#define SH_KEY			key
#define SH_HASH_KEY(tb, k)	BucketOf(k)
#define SH_EQUAL(tb, a, b)	((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

#if defined(__GNUC__) || defined(__clang__)
#define PrefetchBucket(tab, h)	__builtin_prefetch(&(tab)->data[BucketOf(h) & (tab)->sizemask], 1)
#else
#define PrefetchBucket(tab, h)	((void) 0)
#endif

/*
 * A row of a table-backed query, hashed but not yet looked up (the table's
 * buckets are fetched from memory for a batch of rows at once), and where it
 * lies: it is fetched again by TID if it has to be shown.
 */
typedef struct DiffDeferred
{
	uint64		key;
	uint64		row;
	ItemPointerData tid;
	uint16		rel;			/* in DiffSide.rels */
	bool		added;			/* b's row: its key is new (else its row changed) */
} DiffDeferred;

/* Rows looked up together: each one's bucket was asked for the batch before. */
#define DIFF_BATCH		16

/* The most tables a side's rows can come from for them to be fetched again by TID. */
#define MAX_TID_RELS	256

/* One side of the diff: its query and how to read its rows. */
typedef struct DiffSide
{
	const char *name;			/* "a" or "b" */
	SPIPlanPtr	plan;
	TupleDesc	origdesc;		/* the row type the query returns */
	TupleDesc	desc;			/* blessed, in a's column order */
	bool		lossy;			/* a column whose values jsonb may show alike (json, floats) */
	bool		keylossy;		/* a key column so: keys are shown by their text */
	TupleDesc	keydesc;		/* blessed row type of the key columns */
	int			nkeys;
	int		   *keyidx;			/* key columns, in key order */
	int		   *rowidx;			/* all columns, in a's order */
	BackfillRowHasher *keyhash;
	BackfillRowHasher *keyhash2;	/* keys again, in another hash family */
	BackfillRowHasher *rowhash;
	/* the tables its rows came from, as they are stored */
	Oid		   *rels;
	int			nrels;
	int			maxrels;
	int			lastrel;		/* where the last row's table was found */
	bool		tids;			/* every row so far came with its table and TID */
} DiffSide;

/* A row of b kept until a's row is read again. */
typedef struct DiffKept
{
	uint64		key2;			/* the key's hash in the other family */
	Jsonb	   *key;
	Jsonb	   *row;
	Jsonb	   *textrow;		/* the row by its values' text, when jsonb may lose them */
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
	uint64		nrowsa;			/* rows of a */
	DiffDeferred batch[DIFF_BATCH];	/* rows hashed, not yet looked up */
	int			nbatch;
	bool		defer;			/* b's rows may be fetched again by TID */
	DiffDeferred *bfetch;		/* b's rows to fetch again and show */
	uint64		nbfetch;
	uint64		maxbfetch;
	Tuplestorestate *out;
	TupleDesc	outdesc;
	MemoryContext cxt;			/* lives for the whole call */
	MemoryContext rowcxt;		/* reset after each row */
	/* set when a key hash repeats on one side; dupkey once its row is found */
	DiffSide   *dupside;
	uint64		duphash;
	Jsonb	   *dupkey;
} DiffState;

typedef enum DiffPass
{
	PASS_BUILD,					/* read a, fill the table */
	PASS_PROBE,					/* read b, emit 'added', keep 'changed' */
	PASS_REREAD,				/* read a again, emit 'removed' and 'changed' */
	PASS_FIND_DUPLICATE			/* read a side again for the key its hash repeated */
} DiffPass;

typedef struct DiffReceiver
{
	DestReceiver pub;
	DiffState  *st;
	DiffSide   *side;
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

/*
 * Whether jsonb may show two different values of a column of type alike:
 * json (its spacing, its repeated keys) and floats (-0 is shown as 0), or an
 * array of them.
 */
static bool
JsonbMayLose(Oid type)
{
	Oid			base = getBaseType(type);

	if (OidIsValid(get_element_type(base)))
		base = getBaseType(get_element_type(base));
	return base == JSONOID || base == FLOAT4OID || base == FLOAT8OID;
}

/* The columns idx[0..n-1] of the row in slot, as a jsonb object of their values' text. */
static Jsonb *
SlotToTextJsonb(TupleTableSlot *slot, TupleDesc desc, int n, const int *idx)
{
	JsonbParseState *state = NULL;
	JsonbValue *res;

	slot_getallattrs(slot);
	(void) pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < n; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		JsonbValue	k;
		JsonbValue	v;

		k.type = jbvString;
		k.val.string.val = NameStr(att->attname);
		k.val.string.len = strlen(NameStr(att->attname));
		(void) pushJsonbValue(&state, WJB_KEY, &k);
		if (slot->tts_isnull[idx[i]])
			v.type = jbvNull;
		else
		{
			Oid			out;
			bool		varlena;

			getTypeOutputInfo(att->atttypid, &out, &varlena);
			v.type = jbvString;
			v.val.string.val = OidOutputFunctionCall(out, slot->tts_values[idx[i]]);
			v.val.string.len = strlen(v.val.string.val);
		}
		(void) pushJsonbValue(&state, WJB_VALUE, &v);
	}
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

/*
 * The key columns idx of the row in slot, as a jsonb object: of their
 * values' text when jsonb could show two keys alike (a float key 0 and one
 * -0, which are two keys compared by representation).
 */
static Jsonb *
KeyToJsonb(DiffSide *side, TupleTableSlot *slot, const int *idx)
{
	return side->keylossy ? SlotToTextJsonb(slot, side->keydesc, side->nkeys, idx)
		: SlotToJsonb(slot, side->keydesc, side->nkeys, idx);
}

/* Whether two rows shown as jsonb look the same. */
static bool
JsonbAlike(Jsonb *a, Jsonb *b)
{
	return compareJsonbContainers(&a->root, &b->root) == 0;
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

/*
 * Remember that key hash repeated on one side, and the key itself if its row
 * is at hand (slot; else a later read finds it).  Returns false: stop reading.
 */
static bool
NoteDuplicate(DiffState *st, DiffSide *side, uint64 key, TupleTableSlot *slot)
{
	MemoryContext old = MemoryContextSwitchTo(st->cxt);

	st->dupside = side;
	st->duphash = key;
	st->dupkey = slot ? KeyToJsonb(side, slot, side->keyidx) : NULL;
	MemoryContextSwitchTo(old);
	return false;
}

/*
 * Note in d where the row in slot lies, if the scan handed it over as it is
 * stored (a valid table and TID); false if it did not, or from too many tables.
 */
static bool
NoteRowOrigin(DiffState *st, DiffSide *side, TupleTableSlot *slot, DiffDeferred *d)
{
	int			r = side->lastrel;

	if (!OidIsValid(slot->tts_tableOid) || !ItemPointerIsValid(&slot->tts_tid))
		return false;
	/* rows mostly come table by table: the last one first */
	if (r >= side->nrels || side->rels[r] != slot->tts_tableOid)
		for (r = side->nrels - 1; r >= 0 && side->rels[r] != slot->tts_tableOid; r--)
			;
	if (r < 0)
	{
		if (side->nrels == MAX_TID_RELS)
			return false;
		if (side->nrels == side->maxrels)
		{
			side->maxrels = Max(8, side->maxrels * 2);
			side->rels = side->rels ? repalloc(side->rels, sizeof(Oid) * side->maxrels)
				: MemoryContextAlloc(st->cxt, sizeof(Oid) * side->maxrels);
		}
		r = side->nrels++;
		side->rels[r] = slot->tts_tableOid;
	}
	side->lastrel = r;
	d->rel = (uint16) r;
	d->tid = slot->tts_tid;
	return true;
}

/*
 * Emit a's row in slot, of the key of entry e that b lacks or holds with
 * another row: 'removed', or 'changed' with b's row kept for it.
 */
static void
EmitRowOfA(DiffState *st, DiffEntry *e, TupleTableSlot *slot)
{
	DiffSide   *side = &st->a;
	MemoryContext old = MemoryContextSwitchTo(st->rowcxt);
	Jsonb	   *akey = KeyToJsonb(side, slot, side->keyidx);
	Jsonb	   *arow = SlotToJsonb(slot, side->desc, side->desc->natts, side->rowidx);

	if (!(e->flags & IN_B))
		Emit(st, "removed", akey, arow, NULL);
	else if (BackfillHashRow(side->keyhash2, slot) == st->brows[e->bidx].key2)
	{
		/* a change jsonb cannot show is shown by the values' text */
		if (st->brows[e->bidx].textrow && JsonbAlike(arow, st->brows[e->bidx].row))
			Emit(st, "changed", akey, SlotToTextJsonb(slot, side->desc, side->desc->natts, side->rowidx),
				 st->brows[e->bidx].textrow);
		else
			Emit(st, "changed", akey, arow, st->brows[e->bidx].row);
	}
	else
	{
		/* two different keys with one hash: not a pair */
		Emit(st, "removed", akey, arow, NULL);
		Emit(st, "added", st->brows[e->bidx].key, NULL, st->brows[e->bidx].row);
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->rowcxt);
	st->pending--;
}

/* Emit b's row in slot as 'added'. */
static void
EmitAdded(DiffState *st, TupleTableSlot *slot)
{
	DiffSide   *side = &st->b;
	MemoryContext old = MemoryContextSwitchTo(st->rowcxt);

	Emit(st, "added",
		 KeyToJsonb(side, slot, side->keyidx),
		 NULL,
		 SlotToJsonb(slot, side->desc, side->desc->natts, side->rowidx));
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->rowcxt);
}

/* Keep b's row in slot, which differs from a's row of the same key (entry e). */
static void
KeepRowOfB(DiffState *st, TupleTableSlot *slot, DiffEntry *e)
{
	DiffSide   *side = &st->b;
	MemoryContext old;
	Jsonb	   *k;
	Jsonb	   *v;

	if (st->nbrows == st->maxbrows)
	{
		st->maxbrows = Max(64, st->maxbrows * 2);
		st->brows = repalloc_huge(st->brows, sizeof(DiffKept) * st->maxbrows);
	}
	old = MemoryContextSwitchTo(st->rowcxt);
	k = KeyToJsonb(side, slot, side->keyidx);
	v = SlotToJsonb(slot, side->desc, side->desc->natts, side->rowidx);
	st->brows[st->nbrows].key = MemoryContextAlloc(st->cxt, VARSIZE(k));
	memcpy(st->brows[st->nbrows].key, k, VARSIZE(k));
	st->brows[st->nbrows].row = MemoryContextAlloc(st->cxt, VARSIZE(v));
	memcpy(st->brows[st->nbrows].row, v, VARSIZE(v));
	st->brows[st->nbrows].textrow = NULL;
	if (side->lossy || st->a.lossy)
	{
		v = SlotToTextJsonb(slot, side->desc, side->desc->natts, side->rowidx);
		st->brows[st->nbrows].textrow = MemoryContextAlloc(st->cxt, VARSIZE(v));
		memcpy(st->brows[st->nbrows].textrow, v, VARSIZE(v));
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->rowcxt);
	st->brows[st->nbrows].key2 = BackfillHashRow(side->keyhash2, slot);
	e->bidx = st->nbrows++;
}

/* Whether a's row of entry e must be read again: b lacks its key or holds another row. */
static inline bool
Pending(DiffEntry *e)
{
	return (e->flags & IN_A) && (!(e->flags & IN_B) || e->rowa != e->rowb);
}

/* Note a row of b that must be fetched again and shown. */
static void
NoteFetchOfB(DiffState *st, DiffDeferred *d, bool added)
{
	if (st->nbfetch == st->maxbfetch)
	{
		st->maxbfetch = Max(64, st->maxbfetch * 2);
		st->bfetch = st->bfetch ? repalloc_huge(st->bfetch, sizeof(DiffDeferred) * st->maxbfetch)
			: MemoryContextAllocHuge(st->cxt, sizeof(DiffDeferred) * st->maxbfetch);
	}
	st->bfetch[st->nbfetch] = *d;
	st->bfetch[st->nbfetch++].added = added;
}

/*
 * Look up the batch of rows hashed (of a in PASS_BUILD, of b in PASS_PROBE),
 * whose buckets were asked for as they came; false on a repeated key.
 */
static bool
FlushBatch(DiffState *st, DiffPass pass)
{
	int			n = st->nbatch;

	st->nbatch = 0;
	for (int i = 0; i < n; i++)
	{
		DiffDeferred *d = &st->batch[i];
		bool		found;
		DiffEntry  *e = difftab_insert(st->tab, d->key, &found);

		if (pass == PASS_BUILD)
		{
			if (found)
				return NoteDuplicate(st, &st->a, d->key, NULL);
			e->rowa = d->row;
			e->bidx = -1;
			e->flags = IN_A;
			e->tid = d->tid;
			e->rel = d->rel;
			continue;
		}
		if (!found)
		{
			e->flags = IN_B;
			e->rowb = d->row;
			e->bidx = -1;
			NoteFetchOfB(st, d, true);
			continue;
		}
		if (e->flags & IN_B)
			return NoteDuplicate(st, &st->b, d->key, NULL);
		e->flags |= IN_B;
		e->rowb = d->row;
		if (e->rowa != d->row)
			NoteFetchOfB(st, d, false);
	}
	return true;
}

/* Read a row of a: its key into the table, by batches. */
static bool
ReceiveRowOfA(DiffState *st, TupleTableSlot *slot)
{
	DiffSide   *side = &st->a;
	DiffDeferred *d = &st->batch[st->nbatch++];

	d->key = BackfillHashRow(side->keyhash, slot);
	PrefetchBucket(st->tab, d->key);
	d->row = BackfillHashRow(side->rowhash, slot);
	if (!side->tids || !NoteRowOrigin(st, side, slot, d))
	{
		side->tids = false;
		ItemPointerSetInvalid(&d->tid);
		d->rel = 0;
	}
	st->nrowsa++;
	if (st->nbatch == DIFF_BATCH)
		return FlushBatch(st, PASS_BUILD);
	return true;
}

/*
 * Read a row of b: a row fetched again by TID if shown later goes into the
 * batch; any other is looked up at once, 'added' emitted, 'changed' kept.
 */
static bool
ReceiveRowOfB(DiffState *st, TupleTableSlot *slot)
{
	DiffSide   *side = &st->b;
	DiffDeferred d;
	DiffEntry  *e;
	bool		found;

	d.key = BackfillHashRow(side->keyhash, slot);
	PrefetchBucket(st->tab, d.key); /* on its way while the row is hashed */
	d.row = BackfillHashRow(side->rowhash, slot);
	if (st->defer && NoteRowOrigin(st, side, slot, &d))
	{
		st->batch[st->nbatch++] = d;
		if (st->nbatch == DIFF_BATCH)
			return FlushBatch(st, PASS_PROBE);
		return true;
	}

	if (!FlushBatch(st, PASS_PROBE))
		return false;
	e = difftab_insert(st->tab, d.key, &found);
	if (!found)
	{
		e->flags = IN_B;
		e->rowb = d.row;
		e->bidx = -1;
		EmitAdded(st, slot);
		return true;
	}
	if (e->flags & IN_B)
		return NoteDuplicate(st, side, d.key, slot);
	e->flags |= IN_B;
	e->rowb = d.row;
	if (e->rowa != d.row)
		KeepRowOfB(st, slot, e);
	return true;
}

/* Handle one row of a query, as the pass requires. */
static bool
DiffReceive(TupleTableSlot *slot, DestReceiver *self)
{
	DiffReceiver *r = (DiffReceiver *) self;
	DiffState  *st = r->st;
	DiffSide   *side = r->side;
	uint64		key;
	DiffEntry  *e;

	CHECK_FOR_INTERRUPTS();

	switch (r->pass)
	{
		case PASS_BUILD:
			return ReceiveRowOfA(st, slot);

		case PASS_PROBE:
			return ReceiveRowOfB(st, slot);

		case PASS_REREAD:

			/*
			 * The rows that matched were compared on the first read: only
			 * those read again for the output must hash as they did then.
			 */
			key = BackfillHashRow(side->keyhash, slot);
			e = difftab_lookup(st->tab, key);
			if (e == NULL || !(e->flags & IN_A) ||
				(Pending(e) && e->rowa != BackfillHashRow(side->rowhash, slot)))
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("query a returned different rows when read a second time"),
						 errhint("backfill_diff reads a twice when they differ: the query must return the same rows each time (no random(), no LIMIT without ORDER BY).")));
			if (Pending(e))
				EmitRowOfA(st, e, slot);
			return true;

		case PASS_FIND_DUPLICATE:
			if (BackfillHashRow(side->keyhash, slot) == st->duphash)
				return NoteDuplicate(st, side, st->duphash, slot);
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
	side->lossy = false;
	side->keylossy = false;
	for (int c = 0; c < desc->natts; c++)
		side->lossy |= JsonbMayLose(TupleDescAttr(desc, c)->atttypid);

	/* names must be unique for columns to be matched by name */
	{
		const char **names = palloc(sizeof(char *) * Max(desc->natts, 1));
		const char *repeated;

		for (int c = 0; c < desc->natts; c++)
			names[c] = NameStr(TupleDescAttr(desc, c)->attname);
		repeated = BackfillRepeatedName(names, desc->natts);
		if (repeated)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("query %s returns column \"%s\" more than once", name, repeated),
					 errhint("Give the columns distinct names with AS: they are matched by name.")));
	}

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
		side->keylossy |= JsonbMayLose(TupleDescAttr(desc, found)->atttypid);
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
RunPass(DiffState *st, DiffSide *side, DiffPass pass)
{
	DiffReceiver r;

	memset(&r, 0, sizeof(r));
	BackfillInitReceiver(&r.pub, DiffReceive, NULL);
	r.st = st;
	r.side = side;
	r.pass = pass;
	st->nbatch = 0;
	BackfillRunToDest(side->plan, NULL, true, (DestReceiver *) &r);
	if (st->dupside == NULL && (pass == PASS_BUILD || pass == PASS_PROBE))
		(void) FlushBatch(st, pass);
}

/* The most entries the table is made for before any row is read (about 80 MB). */
#define DIFF_PRESIZE_MAX	(1 << 20)

/* At most this share of a's rows (1/n) is fetched by TID rather than read by a second run. */
#define TID_FETCH_SHARE	16

/*
 * Open the tables a side's rows came from and a slot for each; false if one
 * is not a table whose rows are the side's rows as they are stored.
 */
static bool
OpenRowOrigins(DiffSide *side, Relation *rels, TupleTableSlot **slots)
{
	TupleDesc	desc = side->origdesc;

	for (int r = 0; r < side->nrels; r++)
	{
		/* the query that returned its rows holds a lock on it */
		rels[r] = table_open(side->rels[r], AccessShareLock);
		if (rels[r]->rd_rel->relkind != RELKIND_RELATION && rels[r]->rd_rel->relkind != RELKIND_MATVIEW)
			return false;
		if (!BackfillSameLayout(RelationGetDescr(rels[r]), desc))
			return false;
		slots[r] = table_slot_create(rels[r], NULL);
	}
	return true;
}

/* Close what OpenRowOrigins opened. */
static void
CloseRowOrigins(DiffSide *side, Relation *rels, TupleTableSlot **slots)
{
	for (int r = 0; r < side->nrels; r++)
	{
		if (slots[r])
			ExecDropSingleTupleTableSlot(slots[r]);
		if (rels[r])
			table_close(rels[r], AccessShareLock);
	}
}

/* Fetch a side's row by TID on the snapshot of the first read; false unless it hashes as it did. */
static bool
FetchRow(DiffSide *side, Relation rel, ItemPointer tid, TupleTableSlot *slot, uint64 key, uint64 row)
{
	ItemPointerData t = *tid;

	CHECK_FOR_INTERRUPTS();
	return table_tuple_fetch_row_version(rel, &t, GetActiveSnapshot(), slot) &&
		BackfillHashRow(side->keyhash, slot) == key &&
		BackfillHashRow(side->rowhash, slot) == row;
}

/*
 * Read a's rows that must be emitted again (keys[0..n-1]) by their TIDs:
 * first only check that each is there and hashes as it did (emit false),
 * then emit them.  False if one is not: then a runs again.
 */
static bool
FetchRowsOfA(DiffState *st, const uint64 *keys, uint64 n, Relation *rels, TupleTableSlot **slots,
			 bool emit)
{
	for (uint64 i = 0; i < n; i++)
	{
		DiffEntry  *e = difftab_lookup(st->tab, keys[i]);

		if (!FetchRow(&st->a, rels[e->rel], &e->tid, slots[e->rel], e->key, e->rowa))
			return false;
		if (emit)
			EmitRowOfA(st, e, slots[e->rel]);
		ExecClearTuple(slots[e->rel]);
	}
	return true;
}

/*
 * Read a's rows that differ again (st->pending of them, their keys in keys if
 * not NULL): by TID if they came straight from tables, else a's second run.
 */
static void
RereadRowsOfA(DiffState *st, const uint64 *keys)
{
	bool		fetched = false;

	if (keys != NULL && st->a.tids && st->a.nrels > 0)
	{
		Relation   *rels = palloc0(sizeof(Relation) * st->a.nrels);
		TupleTableSlot **slots = palloc0(sizeof(TupleTableSlot *) * st->a.nrels);
		uint64		n = st->pending;

		fetched = OpenRowOrigins(&st->a, rels, slots) && FetchRowsOfA(st, keys, n, rels, slots, false);
		if (fetched)
			FetchRowsOfA(st, keys, n, rels, slots, true);
		CloseRowOrigins(&st->a, rels, slots);
	}
	if (!fetched)
		RunPass(st, &st->a, PASS_REREAD);
	if (st->pending != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("query a returned different rows when read a second time"),
				 errhint("backfill_diff reads a twice when they differ: the query must return the same rows each time.")));
}

/*
 * Fetch again by TID b's rows that were looked up in batches and must be
 * shown: 'added', or kept for the 'changed' a's row will emit.  Every one is
 * fetched and checked before any is used; false if one does not hash as it
 * did (then the diff runs again, b's rows looked up one by one).
 */
static bool
FetchRowsOfB(DiffState *st)
{
	Relation   *rels;
	TupleTableSlot **slots;
	bool		ok;

	if (st->nbfetch == 0)
		return true;
	rels = palloc0(sizeof(Relation) * st->b.nrels);
	slots = palloc0(sizeof(TupleTableSlot *) * st->b.nrels);
	ok = OpenRowOrigins(&st->b, rels, slots);
	for (int pass = 0; pass < 2 && ok; pass++)
		for (uint64 i = 0; i < st->nbfetch && ok; i++)
		{
			DiffDeferred *d = &st->bfetch[i];
			TupleTableSlot *slot = slots[d->rel];

			ok = FetchRow(&st->b, rels[d->rel], &d->tid, slot, d->key, d->row);
			if (ok && pass == 1)
			{
				if (d->added)
					EmitAdded(st, slot);
				else
					KeepRowOfB(st, slot, difftab_lookup(st->tab, d->key));
			}
			ExecClearTuple(slot);
		}
	CloseRowOrigins(&st->b, rels, slots);
	return ok;
}

/* Start a diff afresh with the hashers' seed. */
static void
ResetDiff(DiffState *st, uint64 seed)
{
	DiffSide   *sides[2] = {&st->a, &st->b};

	for (int s = 0; s < 2; s++)
	{
		BackfillRowHasherSetSeed(sides[s]->keyhash, seed);
		BackfillRowHasherSetSeed(sides[s]->keyhash2, seed ^ BACKFILL_SECOND_SEED ^ UINT64CONST(0x9e3779b97f4a7c15));
		BackfillRowHasherSetSeed(sides[s]->rowhash, seed);
		sides[s]->nrels = 0;
		sides[s]->lastrel = 0;
		sides[s]->tids = true;
	}
	if (st->tab)
		difftab_destroy(st->tab);

	/*
	 * Sized for the planner's estimate of a's rows (growing it moves every
	 * entry), up to a size a wrong estimate may waste.
	 */
	st->tab = difftab_create(st->cxt, (uint32) Min(BackfillPlanRows(st->a.plan, 1024), DIFF_PRESIZE_MAX), NULL);
	st->nbrows = 0;
	st->nrowsa = 0;
	st->nbfetch = 0;
	st->dupside = NULL;
	st->dupkey = NULL;
	tuplestore_clear(st->out);
}

/* One whole diff with one hash family; false when a key hash repeated on a side. */
static bool
DiffWithSeed(DiffState *st, uint64 seed)
{
	difftab_iterator it;
	DiffEntry  *e;
	uint64		maxkeys;
	uint64	   *keys;

	ResetDiff(st, seed);
	RunPass(st, &st->a, PASS_BUILD);
	if (st->dupside)
		return false;
	RunPass(st, &st->b, PASS_PROBE);
	if (st->dupside)
		return false;
	if (!FetchRowsOfB(st))
	{
		/* b did not give the same rows by TID: look its rows up as they come */
		st->defer = false;
		return DiffWithSeed(st, seed);
	}

	/* the keys of a's rows to read again, as long as few enough to fetch by TID */
	maxkeys = st->a.tids ? Max(1000, st->nrowsa / TID_FETCH_SHARE) : 0;
	keys = maxkeys > 0 ? palloc_extended(sizeof(uint64) * maxkeys, MCXT_ALLOC_HUGE) : NULL;
	st->pending = 0;
	difftab_start_iterate(st->tab, &it);
	while ((e = difftab_iterate(st->tab, &it)) != NULL)
		if (Pending(e) && st->pending++ < maxkeys)
			keys[st->pending - 1] = e->key;
	if (st->pending > 0)
		RereadRowsOfA(st, st->pending <= maxkeys ? keys : NULL);
	if (keys)
		pfree(keys);
	return true;
}

/* A key that is not unique on one side is an error. */
static void
ReportDuplicate(List *keys, const char *side, Jsonb *key)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("key (%s) is not unique in query %s", BackfillColumnListText(keys), side),
			 errdetail("Key %s appears more than once in query %s.",
					   JsonbToCString(NULL, &key->root, VARSIZE(key)), side),
			 errhint("A diff on a key that is not unique pairs rows arbitrarily: choose columns that identify one row on both sides.")));
}

/*
 * Rows of the per-shard diff (citus_diff.c): a's presence, its key's row
 * count and its row, then the same of b; slot positions of each side's key
 * and row columns in keyidx and rowidx.
 */
typedef struct ShardDiffReceiver
{
	DestReceiver pub;
	DiffState  *st;
	int			first[2];		/* slot position of each side's presence flag */
	int		   *keyidx[2];
	int		   *rowidx[2];
} ShardDiffReceiver;

static bool
ShardDiffReceive(TupleTableSlot *slot, DestReceiver *self)
{
	ShardDiffReceiver *r = (ShardDiffReceiver *) self;
	DiffState  *st = r->st;
	DiffSide   *sides[2] = {&st->a, &st->b};
	Jsonb	   *key[2] = {NULL, NULL};
	Jsonb	   *row[2] = {NULL, NULL};
	MemoryContext old = MemoryContextSwitchTo(st->rowcxt);

	slot_getallattrs(slot);
	for (int s = 0; s < 2; s++)
	{
		if (slot->tts_isnull[r->first[s]])
			continue;
		key[s] = KeyToJsonb(sides[s], slot, r->keyidx[s]);
		if (DatumGetInt64(slot->tts_values[r->first[s] + 1]) > 1)
		{
			/* reported once the query has stopped */
			st->dupside = sides[s];
			st->dupkey = MemoryContextAlloc(st->cxt, VARSIZE(key[s]));
			memcpy(st->dupkey, key[s], VARSIZE(key[s]));
			MemoryContextSwitchTo(old);
			return false;
		}
		row[s] = SlotToJsonb(slot, sides[s]->desc, st->a.desc->natts, r->rowidx[s]);
	}
	/* a change jsonb cannot show is shown by the values' text */
	if (key[0] && key[1] && (st->a.lossy || st->b.lossy) && JsonbAlike(row[0], row[1]))
		for (int s = 0; s < 2; s++)
			row[s] = SlotToTextJsonb(slot, sides[s]->desc, st->a.desc->natts, r->rowidx[s]);
	Emit(st, key[0] == NULL ? "added" : key[1] == NULL ? "removed" : "changed",
		 key[0] ? key[0] : key[1], row[0], row[1]);
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->rowcxt);
	return true;
}

/*
 * Diff a and b shard by shard on Citus, if they are two co-located
 * distributed tables keyed on their distribution column (citus_diff.c); false
 * if they are not, and nothing was done.
 */
static bool
DiffPerShard(DiffState *st, const char *qa, const char *qb, List *keys)
{
	BackfillCitusDiffSide sides[2] = {
		{"a", qa, st->a.plan, st->a.origdesc, st->a.keyidx, st->a.rowidx},
		{"b", qb, st->b.plan, st->b.origdesc, st->b.keyidx, st->b.rowidx}
	};
	const uint64 seeds[3] = {0, 0, BACKFILL_SECOND_SEED};
	DiffSide   *ds[2] = {&st->a, &st->b};
	ShardDiffReceiver r;
	char	   *sql;
	SPIPlanPtr	plan;

	sql = BackfillCitusDiffQuery(sides, st->a.nkeys, st->a.desc->natts, seeds);
	if (sql == NULL)
		return false;
	ereport(DEBUG1,
			(errmsg_internal("backfill_diff: queries a and b read co-located distributed tables: diffed shard by shard")));
	plan = BackfillPrepare(sql, 0, NULL, "queries a and b");
	memset(&r, 0, sizeof(r));
	BackfillInitReceiver(&r.pub, ShardDiffReceive, NULL);
	r.st = st;
	r.first[0] = 0;
	r.first[1] = 2 + st->a.origdesc->natts;
	for (int s = 0; s < 2; s++)
	{
		r.keyidx[s] = palloc(sizeof(int) * ds[s]->nkeys);
		for (int k = 0; k < ds[s]->nkeys; k++)
			r.keyidx[s][k] = r.first[s] + 2 + ds[s]->keyidx[k];
		r.rowidx[s] = palloc(sizeof(int) * st->a.desc->natts);
		for (int c = 0; c < st->a.desc->natts; c++)
			r.rowidx[s][c] = r.first[s] + 2 + ds[s]->rowidx[c];
	}
	BackfillRunToDest(plan, NULL, true, (DestReceiver *) &r);
	SPI_freeplan(plan);
	if (st->dupside != NULL)
		ReportDuplicate(keys, st->dupside->name, st->dupkey);
	return true;
}

/* The diff computed here, as the rows come (see the head of the file). */
static void
DiffHere(DiffState *st, List *keys)
{
	MemoryContext old = MemoryContextSwitchTo(st->cxt);

	/* hashers read the rows as the queries return them */
	st->a.keyhash = BackfillRowHasherCreate(st->a.origdesc, st->a.nkeys, st->a.keyidx);
	st->b.keyhash = BackfillRowHasherCreate(st->b.origdesc, st->b.nkeys, st->b.keyidx);
	st->a.keyhash2 = BackfillRowHasherCreate(st->a.origdesc, st->a.nkeys, st->a.keyidx);
	st->b.keyhash2 = BackfillRowHasherCreate(st->b.origdesc, st->b.nkeys, st->b.keyidx);
	st->a.rowhash = BackfillRowHasherCreate(st->a.origdesc, st->a.desc->natts, st->a.rowidx);
	st->b.rowhash = BackfillRowHasherCreate(st->b.origdesc, st->a.desc->natts, st->b.rowidx);
	st->maxbrows = 64;
	st->brows = palloc(sizeof(DiffKept) * st->maxbrows);
	MemoryContextSwitchTo(old);

	/* A repeated key hash is a duplicate only if a second hash family repeats it too. */
	st->defer = true;
	if (!DiffWithSeed(st, 0) && !DiffWithSeed(st, BACKFILL_SECOND_SEED))
	{
		if (st->dupkey == NULL)
			RunPass(st, st->dupside, PASS_FIND_DUPLICATE);
		if (st->dupkey == NULL)
			elog(ERROR, "could not find the repeated key of query %s again", st->dupside->name);
		ReportDuplicate(keys, st->dupside->name, st->dupkey);
	}
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
		MemoryContextSwitchTo(old);
	}
	if (!DiffPerShard(&st, qa, qb, keys))
		DiffHere(&st, keys);

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
#define SH_HASH_KEY(tb, k)	BucketOf(k)
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
