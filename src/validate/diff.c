/*-------------------------------------------------------------------------
 *
 * src/validate/diff.c
 *		The diffs callers ask for: backfill_diff and its summary, matched on
 *		a key, and the multiset diff, with none.
 *
 * backfill_diff is a thin SQL shell over KeyedDiff, which a caller in C (a
 * dry run) reaches through BackfillDiffSummary instead of running the SQL
 * function: the same checks, errors, rights (the caller's) and way of
 * diffing (shard by shard on Citus when it can, citus_diff.c; else here,
 * keydiff.c), its rows counted and the first few kept instead of returned.
 *
 * The multiset diff compares two queries with no key (a dry run's, when its
 * run has none).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "base/compat.h"
#include "base/extension.h"
#include "base/spi_util.h"
#include "hash/rowhash.h"
#include "validate/citus_diff.h"
#include "validate/diff.h"
#include "validate/diffout.h"
#include "validate/diffside.h"
#include "validate/keydiff.h"

/*
 * The keyed diff of queries qa and qb (checked) on keys (checked), each row
 * it finds into out, in the order backfill_diff returns them: shard by shard
 * when they read co-located Citus tables, else here.  Runs as the caller, on
 * the active snapshot, in an SPI connection of its own.
 */
static void
KeyedDiff(const char *qa, const char *qb, List *keys, BackfillDiffOutput *out)
{
	MemoryContext callcxt = CurrentMemoryContext;
	MemoryContext cxt;
	MemoryContext rowcxt;
	MemoryContext old;
	BackfillDiffSide a;
	BackfillDiffSide b;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	cxt = AllocSetContextCreate(callcxt, "backfill_diff", ALLOCSET_DEFAULT_SIZES);
	rowcxt = AllocSetContextCreate(cxt, "backfill_diff row", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	BackfillDiffPrepare(&a, "a", qa, keys);
	BackfillDiffPrepare(&b, "b", qb, keys);
	BackfillDiffMatchColumns(&a, &b);
	MemoryContextSwitchTo(old);
	if (!BackfillDiffPerShard(&a, &b, keys, out, rowcxt))
		BackfillDiffHere(&a, &b, keys, out, cxt, rowcxt);

	SPI_finish();
	MemoryContextDelete(cxt);
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
	BackfillDiffOutput out;

	BackfillCheckVersion();
	keys = BackfillKeyArg(fcinfo, 2);

	InitMaterializedSRF(fcinfo, 0);
	BackfillDiffOutputInit(&out, rsinfo->setResult, rsinfo->setDesc, 0);
	KeyedDiff(qa, qb, keys, &out);
	return (Datum) 0;
}

/*
 * What backfill_diff(a, b, keys) returns, summed up as it comes: the rows
 * of each change counted into *added, *removed and *changed, and *sample the
 * text of a jsonb array of its first sample_max rows, in the order it
 * returns them, each as to_jsonb shows the row ('[]' when there is none);
 * no other row is kept.  The same checks and errors as backfill_diff (a key
 * as its key argument would be), run as the caller.
 *
 * It reads on the active snapshot, as backfill_diff reads on its query's: a
 * caller that wants the rows its own transaction just wrote makes a new one
 * first (CommandCounterIncrement, PushActiveSnapshot(GetTransactionSnapshot())),
 * as SPI does for a statement.  It connects to SPI itself, whether or not
 * its caller is connected.  *sample is allocated in the caller's memory
 * context.
 */
void
BackfillDiffSummary(const char *a, const char *b, List *keys, int sample_max,
					int64 *added, int64 *removed, int64 *changed, char **sample)
{
	const char *qa;
	const char *qb;
	List	   *checked;
	BackfillDiffOutput out;

	Assert(a != NULL && b != NULL && sample_max >= 0);
	if (!ActiveSnapshotSet())
		elog(ERROR, "BackfillDiffSummary needs an active snapshot");
	qa = BackfillCheckQuery(a, "query a");
	qb = BackfillCheckQuery(b, "query b");
	/* the key is checked as backfill_diff checks the text[] it is given */
	checked = BackfillColumnList(DatumGetArrayTypeP(BackfillTextArray(keys)), "key");

	BackfillDiffOutputInit(&out, NULL, NULL, sample_max);
	KeyedDiff(qa, qb, checked, &out);
	*added = out.count[BACKFILL_DIFF_ADDED];
	*removed = out.count[BACKFILL_DIFF_REMOVED];
	*changed = out.count[BACKFILL_DIFF_CHANGED];
	*sample = BackfillDiffSampleText(&out);
	BackfillDiffOutputClear(&out);
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
#define SH_HASH_KEY(tb, k)	BackfillHashBucket(k)
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
	Jsonb	   *row = BackfillSlotToJsonb(slot, r->desc, r->desc->natts, r->idx);
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
