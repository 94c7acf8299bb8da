/*-------------------------------------------------------------------------
 *
 * src/validate/keydiff.c
 *		The keyed diff computed here: the rows two queries disagree on,
 *		matched on a key, as the executor produces them.
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
 * Memory is one 32-byte entry per key of a plus the rows that differ (and
 * 32 bytes for each row of b to fetch again);
 * identical rows cost a key hash and a row hash (a key of one word is mixed,
 * not SipHashed: rowhash.c, BackfillRowHasherForLookups) and never become
 * jsonb.  Keys and rows are
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

#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "base/relation.h"
#include "base/spi_util.h"
#include "hash/rowhash.h"
#include "validate/diffout.h"
#include "validate/diffside.h"
#include "validate/keydiff.h"

#define IN_A		0x01
#define IN_B		0x02
#define CHANGED		0x04		/* in both, b's row hash not a's */

/*
 * 32 bytes: a smaller table than with b's row hash kept too, and, where the
 * buckets start on a cache line, an entry never straddles two, so the one
 * line prefetched for a row's lookup is all it reads.
 */
typedef struct DiffEntry
{
	uint64		key;			/* hash of the key columns */
	uint64		rowa;			/* hash of a's row */
	int32		bidx;			/* b's row in DiffState.brows, or -1 */
	ItemPointerData tid;		/* a's row in its table, if a.tids */
	uint16		rel;			/* and that table, in a.rels */
	uint8		flags;
	char		status;			/* for simplehash */
} DiffEntry;

StaticAssertDecl(sizeof(DiffEntry) == 32, "a diff entry must fit half a cache line");

#define SH_PREFIX		difftab
#define SH_ELEMENT_TYPE DiffEntry
#define SH_KEY_TYPE		uint64
#define SH_KEY			key
#define SH_HASH_KEY(tb, k)	BackfillHashBucket(k)
#define SH_EQUAL(tb, a, b)	((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

#if defined(__GNUC__) || defined(__clang__)
#define PrefetchBucket(tab, h)	__builtin_prefetch(&(tab)->data[BackfillHashBucket(h) & (tab)->sizemask], 1)
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
	BackfillDiffSide q;			/* the query, its key and columns (diffside.c) */
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
	BackfillDiffOutput *out;	/* where the rows found go */
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
	st->dupkey = slot ? BackfillDiffKeyJsonb(&side->q, slot, side->q.keyidx) : NULL;
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
	Jsonb	   *akey = BackfillDiffKeyJsonb(&side->q, slot, side->q.keyidx);
	Jsonb	   *arow = BackfillSlotToJsonb(slot, side->q.desc, side->q.desc->natts, side->q.rowidx);

	if (!(e->flags & IN_B))
		BackfillDiffEmit(st->out, BACKFILL_DIFF_REMOVED, akey, arow, NULL);
	else if (BackfillHashRow(side->keyhash2, slot) == st->brows[e->bidx].key2)
	{
		/* a change jsonb cannot show is shown by the values' text */
		if (st->brows[e->bidx].textrow && BackfillJsonbAlike(arow, st->brows[e->bidx].row))
			BackfillDiffEmit(st->out, BACKFILL_DIFF_CHANGED, akey,
							 BackfillSlotToTextJsonb(slot, side->q.desc, side->q.desc->natts,
													 side->q.rowidx),
							 st->brows[e->bidx].textrow);
		else
			BackfillDiffEmit(st->out, BACKFILL_DIFF_CHANGED, akey, arow, st->brows[e->bidx].row);
	}
	else
	{
		/* two different keys with one hash: not a pair */
		BackfillDiffEmit(st->out, BACKFILL_DIFF_REMOVED, akey, arow, NULL);
		BackfillDiffEmit(st->out, BACKFILL_DIFF_ADDED, st->brows[e->bidx].key, NULL,
						 st->brows[e->bidx].row);
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

	BackfillDiffEmit(st->out, BACKFILL_DIFF_ADDED,
					 BackfillDiffKeyJsonb(&side->q, slot, side->q.keyidx),
					 NULL,
					 BackfillSlotToJsonb(slot, side->q.desc, side->q.desc->natts, side->q.rowidx));
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
	k = BackfillDiffKeyJsonb(&side->q, slot, side->q.keyidx);
	v = BackfillSlotToJsonb(slot, side->q.desc, side->q.desc->natts, side->q.rowidx);
	st->brows[st->nbrows].key = MemoryContextAlloc(st->cxt, VARSIZE(k));
	memcpy(st->brows[st->nbrows].key, k, VARSIZE(k));
	st->brows[st->nbrows].row = MemoryContextAlloc(st->cxt, VARSIZE(v));
	memcpy(st->brows[st->nbrows].row, v, VARSIZE(v));
	st->brows[st->nbrows].textrow = NULL;
	if (side->q.lossy || st->a.q.lossy)
	{
		v = BackfillSlotToTextJsonb(slot, side->q.desc, side->q.desc->natts, side->q.rowidx);
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
	return (e->flags & IN_A) && (!(e->flags & IN_B) || (e->flags & CHANGED));
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
			e->bidx = -1;
			NoteFetchOfB(st, d, true);
			continue;
		}
		if (e->flags & IN_B)
			return NoteDuplicate(st, &st->b, d->key, NULL);
		e->flags |= IN_B;
		if (e->rowa != d->row)
		{
			e->flags |= CHANGED;
			NoteFetchOfB(st, d, false);
		}
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
		e->bidx = -1;
		EmitAdded(st, slot);
		return true;
	}
	if (e->flags & IN_B)
		return NoteDuplicate(st, side, d.key, slot);
	e->flags |= IN_B;
	if (e->rowa != d.row)
	{
		e->flags |= CHANGED;
		KeepRowOfB(st, slot, e);
	}
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
	BackfillRunToDest(side->q.plan, NULL, true, (DestReceiver *) &r);
	if (st->dupside == NULL && (pass == PASS_BUILD || pass == PASS_PROBE))
		(void) FlushBatch(st, pass);
}

/* The most entries the table is made for before any row is read (about 64 MB). */
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
	TupleDesc	desc = side->q.origdesc;

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
	st->tab = difftab_create(st->cxt, (uint32) Min(BackfillPlanRows(st->a.q.plan, 1024), DIFF_PRESIZE_MAX), NULL);
	st->nbrows = 0;
	st->nrowsa = 0;
	st->nbfetch = 0;
	st->dupside = NULL;
	st->dupkey = NULL;
	BackfillDiffOutputClear(st->out);
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
/*
 * The keyed diff of sides a and b (prepared and matched) on keys, computed
 * here as the rows come (see the head of the file), each row it finds into
 * out.  cxt lives for the whole diff, rowcxt is reset after each row.
 * Inside SPI, on the active snapshot.
 */
void
BackfillDiffHere(BackfillDiffSide *a, BackfillDiffSide *b, List *keys, BackfillDiffOutput *out,
				 MemoryContext cxt, MemoryContext rowcxt)
{
	DiffState	state;
	DiffState  *st = &state;
	MemoryContext old = MemoryContextSwitchTo(cxt);

	Assert(ActiveSnapshotSet());
	memset(st, 0, sizeof(*st));
	st->a.q = *a;
	st->b.q = *b;
	st->out = out;
	st->cxt = cxt;
	st->rowcxt = rowcxt;

	/* hashers read the rows as the queries return them */
	st->a.keyhash = BackfillRowHasherCreate(st->a.q.origdesc, st->a.q.nkeys, st->a.q.keyidx);
	st->b.keyhash = BackfillRowHasherCreate(st->b.q.origdesc, st->b.q.nkeys, st->b.q.keyidx);
	/* the key hashes only find keys in the table: a key of one word is mixed, not SipHashed */
	BackfillRowHasherForLookups(st->a.keyhash);
	BackfillRowHasherForLookups(st->b.keyhash);
	st->a.keyhash2 = BackfillRowHasherCreate(st->a.q.origdesc, st->a.q.nkeys, st->a.q.keyidx);
	st->b.keyhash2 = BackfillRowHasherCreate(st->b.q.origdesc, st->b.q.nkeys, st->b.q.keyidx);
	st->a.rowhash = BackfillRowHasherCreate(st->a.q.origdesc, st->a.q.desc->natts, st->a.q.rowidx);
	st->b.rowhash = BackfillRowHasherCreate(st->b.q.origdesc, st->a.q.desc->natts, st->b.q.rowidx);
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
			elog(ERROR, "could not find the repeated key of query %s again", st->dupside->q.name);
		BackfillDiffReportDuplicate(keys, st->dupside->q.name, st->dupkey);
	}
}
