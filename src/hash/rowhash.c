/*-------------------------------------------------------------------------
 *
 * src/hash/rowhash.c
 *		Hashing rows by the values they hold, whatever their types.
 *
 * A row hash must be the same for the same values wherever the row comes
 * from (a heap page, a query, a table with its columns in another order, a
 * restored dump, a session with another time zone) and must work for every
 * type: each value is folded by what it is (valuehash.c).
 *
 * A row is the set of its (column name, column type, value) triples: columns
 * are visited in the byte order of their names, and the names and types go
 * into the hash, so two tables with the same columns in another physical
 * order hash their rows alike, and 'abc' held as text and as bytea, or 0 as
 * a bigint and as a timestamp, do not.
 *
 * The encoding of a row is a sequence of 64-bit words, a value giving its
 * length then its 8-byte words, a NULL nothing but a bit in the row's (or the
 * composite's, or the array's) NULL bitmap; given the column types, the words
 * determine the values.  The words are hashed by SipHash-1-3 under the
 * database's secret key (siphash.c), so without the key nobody can compute a
 * row hash, nor find two rows that hash alike, better than by chance.
 *
 * Most rows hold only values of a few built-in kinds (integers, dates,
 * booleans, timestamps, floats, uuids, numerics, text), none of them NULL;
 * their words follow from the column types alone, so a hasher plans them
 * once (PlanPacking) and folds such rows with no choice made per value, read
 * straight from the heap tuple when the columns lie at fixed offsets.  The
 * words are the same either way (test/fingerprint_known.sql).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "base/compat.h"
#include "hash/rowhash.h"

/* Order columns by the bytes of their names. */
static int
CompareColumnNames(const void *a, const void *b)
{
	return strcmp(((const BackfillColHasher *) a)->name, ((const BackfillColHasher *) b)->name);
}

/*
 * Most rows hold values of a few built-in kinds (integers, dates, booleans,
 * timestamps, floats, numerics, text...), none of them NULL.  For those the
 * words folded follow from the types alone: which small values share a word,
 * and where in it (SipStepSmall), which take a word of their own, which give
 * their bytes.  PlanPacking works that out once per hasher, so such rows are
 * hashed by one pass over a plan with no choice of method per value, and,
 * when the row is a heap tuple whose columns lie at fixed offsets, straight
 * from the tuple without deforming it.  Any other row takes HashValues' way;
 * both fold the same words for the same values.
 */
static void
PlanPacking(BackfillRowHasher *h)
{
	int			used = 8;		/* bytes of the current word taken */

	if (h->ncols == 0)
		return;
	for (int i = 0; i < h->ncols; i++)
	{
		switch (h->cols[i].vh.mode)
		{
			case HASH_BYVAL:
			case HASH_BYVAL_SMALL:
			case HASH_FLOAT4:
			case HASH_FLOAT8:
			case HASH_FIXED:
			case HASH_VARLENA:
				break;
			default:
				return;
		}
	}

	h->pack = palloc0(sizeof(BackfillPackStep) * h->ncols);
	for (int i = 0; i < h->ncols; i++)
	{
		BackfillValueHasher *vh = &h->cols[i].vh;
		BackfillPackStep *p = &h->pack[i];

		p->attidx = h->cols[i].attidx;
		p->len = vh->typlen;
		p->mask = vh->mask;
		p->byval = vh->typbyval;
		p->lenmask = vh->typlen >= 8 ? ~UINT64CONST(0) : (UINT64CONST(1) << (vh->typlen * 8)) - 1;
		p->off = -1;
		switch (vh->mode)
		{
			case HASH_BYVAL_SMALL:
			case HASH_FLOAT4:
				p->kind = vh->mode == HASH_FLOAT4 ? PACK_FLOAT4 : PACK_SMALL;
				if (used + vh->typlen > 8)
					used = 0;
				p->shift = used * 8;
				used += vh->typlen;
				break;
			default:
				/* a word or more of its own, as SipStep gives it */
				p->kind = vh->mode == HASH_BYVAL ? PACK_WORD :
					vh->mode == HASH_FLOAT8 ? PACK_FLOAT8 :
					vh->mode == HASH_FIXED ? PACK_FIXED : PACK_VARLENA;
				p->shift = 0;
				used = 8;
				break;
		}
	}
	h->packsmall = true;
	for (int i = 0; i < h->ncols; i++)
		h->packsmall &= (h->pack[i].kind == PACK_SMALL || h->pack[i].kind == PACK_WORD);
	/* a word ends where the next value starts another, at no shift */
	for (int i = 0; i < h->ncols; i++)
	{
		BackfillPackStep *p = &h->pack[i];

		p->last = (p->kind == PACK_SMALL || p->kind == PACK_FLOAT4) ?
			(i == h->ncols - 1 || h->pack[i + 1].shift == 0) :
			(p->kind == PACK_WORD || p->kind == PACK_FLOAT8);
	}
}

/*
 * Where the planned columns lie in the data of a heap tuple of desc that has
 * all of them and no NULL, as slot_deform_heap_tuple would find them: at
 * fixed offsets when every column up to the last one hashed has a fixed
 * length, except perhaps that last one, a varlena starting where its
 * alignment would put it anyway.  Worked out again for another descriptor.
 */
static void
PackOffsets(BackfillRowHasher *h, TupleDesc desc)
{
	int			offs[MaxTupleAttributeNumber];
	int			off = 0;
	bool		ok = desc->natts >= h->maxattidx;

	h->packdesc = desc;
	h->packtype = desc->tdtypeid;
	h->packtypmod = desc->tdtypmod;
	h->packnatts = desc->natts;
	h->packoffsok = false;
	if (!ok)
		return;

	for (int a = 0; a < h->maxattidx && ok; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);

		if (att->attlen > 0)
			off = att_align_nominal(off, att->attalign);
		else
			ok = att->attlen == -1 && a == h->maxattidx - 1 &&
				att_align_nominal(off, att->attalign) == off;
		offs[a] = off;
		off += Max(att->attlen, 0);
	}
	for (int i = 0; i < h->ncols && ok; i++)
	{
		BackfillPackStep *p = &h->pack[i];
		Form_pg_attribute att = TupleDescAttr(desc, p->attidx);

		ok = att->attlen == p->len && att->attbyval == p->byval;
		p->off = offs[p->attidx];

		/*
		 * 8 bytes read from here stay within the columns: one load, masked,
		 * where the value's bytes are the low ones
		 */
#ifdef WORDS_BIGENDIAN
		p->wide = false;
#else
		p->wide = p->off + 8 <= off;
#endif
	}
	h->packoffsok = ok;
}

/*
 * The data of the heap tuple in slot, if the planned columns can be read from
 * it directly: a heap, buffer or minimal tuple slot holding a tuple that has
 * every column the hasher reads, none of them NULL, at fixed offsets.
 */
static const char *
PackedTupleData(BackfillRowHasher *h, TupleTableSlot *slot)
{
	HeapTuple	tuple;
	TupleDesc	desc = slot->tts_tupleDescriptor;

	if (TTS_IS_BUFFERTUPLE(slot) || TTS_IS_HEAPTUPLE(slot))
		tuple = ((HeapTupleTableSlot *) slot)->tuple;
	else if (TTS_IS_MINIMALTUPLE(slot))
		tuple = ((MinimalTupleTableSlot *) slot)->tuple;
	else
		return NULL;
	if (tuple == NULL || HeapTupleHasNulls(tuple) ||
		HeapTupleHeaderGetNatts(tuple->t_data) < h->maxattidx)
		return NULL;
	/* a descriptor freed and made again at the same address is another one */
	if (desc != h->packdesc || desc->tdtypeid != h->packtype ||
		desc->tdtypmod != h->packtypmod || desc->natts != h->packnatts)
		PackOffsets(h, desc);
	if (!h->packoffsok)
		return NULL;
	return (const char *) tuple->t_data + tuple->t_data->t_hoff;
}

/* The len bytes at p, as a pass-by-value Datum of that length holds them. */
static pg_attribute_always_inline uint64
LoadSmall(const char *p, int len)
{
	switch (len)
	{
		case 1:
			return *(const uint8 *) p;
		case 2:
			{
				uint16		v;

				memcpy(&v, p, 2);
				return v;
			}
		case 4:
			{
				uint32		v;

				memcpy(&v, p, 4);
				return v;
			}
		default:
			{
				uint64		v;

				memcpy(&v, p, 8);
				return v;
			}
	}
}

/*
 * Hash a planned row, from a heap tuple's data (data not NULL) or from
 * values, into *hash: the words its values fill, then its NULL flags, all
 * zero; the words HashValues folds for the same values.  False, leaving
 * *hash alone, when a varlena is compressed or kept out of line: such a row
 * takes HashValues' way, which detoasts it.
 */
static pg_attribute_always_inline bool
HashPackedAs(BackfillRowHasher *h, const char *data, const Datum *values, bool small_only,
			 uint64 *hash)
{
	BackfillSipState s = h->start;
	uint64		word = 0;

	for (int i = 0; i < h->ncols; i++)
	{
		const BackfillPackStep *p = &h->pack[i];

		if (small_only)
		{
			word |= (data ? LoadSmall(data + p->off, p->wide ? 8 : p->len) & p->lenmask
					 : (uint64) values[p->attidx] & p->mask) << p->shift;
		}
		else
		{
			Datum		value = data ? fetch_att(data + p->off, p->byval, p->len)
				: values[p->attidx];

			switch (p->kind)
			{
				case PACK_SMALL:
				case PACK_WORD:
					word |= ((uint64) value & p->mask) << p->shift;
					break;
				case PACK_FLOAT4:
					word |= (uint64) BackfillFloat4Bits(DatumGetFloat4(value)) << p->shift;
					break;
				case PACK_FLOAT8:
					word = BackfillFloat8Bits(DatumGetFloat8(value));
					break;
				case PACK_FIXED:
					SipStepBytes(&s, (const unsigned char *) DatumGetPointer(value), p->len);
					break;
				case PACK_VARLENA:
					{
						const char *v = DatumGetPointer(value);

						if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
							return false;
						SipStepBytes(&s, (const unsigned char *) VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
						break;
					}
			}
		}
		if (p->last)
		{
			SipAbsorb(&s, word);
			word = 0;
		}
	}
	for (int w = (h->ncols + 63) >> 6; w > 0; w--)
		SipAbsorb(&s, 0);
	*hash = SipFinish(&s, 3);
	return true;
}

/*
 * HashPackedAs, made apart for rows of integers, dates, booleans and the
 * like only, which fold their values with no choice at all.
 */
static pg_attribute_always_inline bool
HashPacked(BackfillRowHasher *h, const char *data, const Datum *values, uint64 *hash)
{
	if (h->packsmall)
		return HashPackedAs(h, data, values, true, hash);
	return HashPackedAs(h, data, values, false, hash);
}

/*
 * The state every row starts from: the key, the seed, the columns' names
 * and types.  A type is the one under any domain (a domain, like a typmod,
 * only limits the values), given by its OID when built in (those OIDs are
 * fixed in PostgreSQL's catalogs, the same in every database and version),
 * else by its schema-qualified name (what pg_dump keeps, the same on every
 * node of a cluster).
 */
static void
RowHasherStart(BackfillRowHasher *h)
{
	SipInit(&h->start, h->k0, h->k1);
	SipStep(&h->start, h->seed);
	SipStep(&h->start, (uint64) h->ncols ^ BACKFILL_ROW_MARK);
	for (int i = 0; i < h->ncols; i++)
	{
		BackfillColHasher *c = &h->cols[i];

		SipStepBytes(&h->start, (const unsigned char *) c->name, strlen(c->name));
		if (c->typname)
			SipStepBytes(&h->start, (const unsigned char *) c->typname, strlen(c->typname));
		else
			SipStep(&h->start, (uint64) c->typid);
	}
}

/* The type a column is hashed as, and its name unless built in. */
static void
ColumnType(BackfillColHasher *c, Oid atttypid)
{
	c->typid = getBaseType(atttypid);
	c->typname = c->typid < FirstGenbkiObjectId ? NULL : format_type_be_qualified(c->typid);
}

/*
 * A hasher for the columns attidx[0..ncols-1] of rows of desc; attidx NULL
 * means every column that is not dropped.
 */
BackfillRowHasher *
BackfillRowHasherCreate(TupleDesc desc, int ncols, const int *attidx)
{
	BackfillRowHasher *h = palloc0(sizeof(BackfillRowHasher));
	int			n = attidx ? ncols : desc->natts;

	h->cols = palloc0(sizeof(BackfillColHasher) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		int			idx = attidx ? attidx[i] : i;

		if (TupleDescAttr(desc, idx)->attisdropped)
			continue;
		h->cols[h->ncols].attidx = idx;
		h->cols[h->ncols++].name = pstrdup(NameStr(TupleDescAttr(desc, idx)->attname));
		h->maxattidx = Max(h->maxattidx, idx + 1);
	}
	qsort(h->cols, h->ncols, sizeof(BackfillColHasher), CompareColumnNames);
	for (int i = 0; i < h->ncols; i++)
	{
		ColumnType(&h->cols[i], TupleDescAttr(desc, h->cols[i].attidx)->atttypid);
		BackfillValueHasherInit(&h->cols[i].vh, TupleDescAttr(desc, h->cols[i].attidx)->atttypid,
						CurrentMemoryContext);
	}

	PlanPacking(h);

	BackfillRowHashKey(&h->k0, &h->k1);
	RowHasherStart(h);
	h->scratch.tmpcxt = AllocSetContextCreate(CurrentMemoryContext,
											  "backfill row hash",
											  ALLOCSET_SMALL_SIZES);
	return h;
}

/*
 * Hash rows of another family: the same columns, another seed (0 at first),
 * so that two rows colliding in one family are told apart in the other.
 */
void
BackfillRowHasherSetSeed(BackfillRowHasher *h, uint64 seed)
{
	if (h->seed == seed)
		return;
	h->seed = seed;
	RowHasherStart(h);
	if (h->lookups)
		BackfillRowHasherForLookups(h);
}

/*
 * Make h, a hasher of one column whose values fit in a word (an integer, a
 * date, a timestamp...), give hashes that only tell values apart, for a
 * hash table's lookups: the value's word, XORed with a key drawn from the
 * hasher's start (the database's key, the seed, the column's name and type)
 * and mixed by a bijection (the 64-bit finalizer of MurmurHash3).  Two
 * values never share such a hash, where a keyed SipHash made it only
 * unlikely; nobody can place values in buckets without the key; and a
 * value costs a few multiplications instead of a SipHash.  Not for any hash
 * that is summed or kept: for a sum, only the keyed hash of rowhash.c stops
 * crafted collisions.  Any other hasher is left as it is.
 */
void
BackfillRowHasherForLookups(BackfillRowHasher *h)
{
	BackfillSipState s = h->start;

	h->lookups = h->ncols == 1 && h->pack != NULL &&
		(h->pack[0].kind == PACK_SMALL || h->pack[0].kind == PACK_WORD);
	if (h->lookups)
		h->mixkey = SipFinish(&s, 3);
}

/* A one-word value of a lookups hasher, mixed under its key: a bijection of the word. */
static pg_attribute_always_inline uint64
MixWord(uint64 x, uint64 key)
{
	x ^= key;
	x ^= x >> 33;
	x *= UINT64CONST(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64CONST(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/*
 * The hash of the hasher's columns of a row given as values and isnull, each
 * indexed by attidx: the values that are not NULL in the order of the
 * columns' names, then the NULL flags, 64 to a word.
 */
static pg_attribute_always_inline uint64
HashValues(BackfillRowHasher *h, const Datum *values, const bool *isnull)
{
	BackfillSipState s;
	uint64		nulls[(MaxTupleAttributeNumber + 63) / 64];
	int			nwords = (h->ncols + 63) >> 6;

	if (h->pack != NULL)
	{
		bool		anynull = false;
		uint64		hash;

		for (int i = 0; i < h->ncols; i++)
			anynull |= isnull[h->pack[i].attidx];
		if (!anynull && HashPacked(h, NULL, values, &hash))
			return hash;
	}

	s = h->start;
	for (int w = 0; w < nwords; w++)
		nulls[w] = 0;
	for (int i = 0; i < h->ncols; i++)
	{
		BackfillColHasher *col = &h->cols[i];

		if (isnull[col->attidx])
			nulls[i >> 6] |= UINT64CONST(1) << (i & 63);
		else
			BackfillStepValue(&h->scratch, &col->vh, &s, values[col->attidx]);
	}
	for (int w = 0; w < nwords; w++)
		SipStep(&s, nulls[w]);

	if (unlikely(h->scratch.tmpdirty))
		BackfillHashScratchDone(&h->scratch);
	return SipFinish(&s, 3);
}

/* The hash of the hasher's columns of the row in slot. */
uint64
BackfillHashRow(BackfillRowHasher *h, TupleTableSlot *slot)
{
	if (h->lookups)
	{
		const BackfillPackStep *p = &h->pack[0];
		const char *data = PackedTupleData(h, slot);

		if (data != NULL)
			return MixWord(LoadSmall(data + p->off, p->wide ? 8 : p->len) & p->lenmask, h->mixkey);
		slot_getsomeattrs(slot, h->maxattidx);
		if (!slot->tts_isnull[p->attidx])
			return MixWord((uint64) slot->tts_values[p->attidx] & p->mask, h->mixkey);
		/* a NULL is hashed as ever: a lookup of it is confirmed like any other */
	}
	else if (h->pack != NULL)
	{
		const char *data = PackedTupleData(h, slot);
		uint64		hash;

		if (data != NULL && HashPacked(h, data, NULL, &hash))
			return hash;
	}
	slot_getsomeattrs(slot, h->maxattidx);
	return HashValues(h, slot->tts_values, slot->tts_isnull);
}

/*
 * The hash of the hasher's columns of a row given as arrays of values and
 * NULL flags (as a slot holds them): the same as BackfillHashRow's for the
 * same values.
 */
uint64
BackfillHashValues(BackfillRowHasher *h, const Datum *values, const bool *isnull)
{
	return HashValues(h, values, isnull);
}
