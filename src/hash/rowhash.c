/*-------------------------------------------------------------------------
 *
 * src/hash/rowhash.c
 *		Hashing rows by the values they hold, whatever their types.
 *
 * A row hash must be the same for the same values wherever the row comes
 * from (a heap page, a query, a table with its columns in another order, a
 * restored dump, a session with another time zone) and must work for every
 * type, including those without a hash operator class (json, point, xml).
 * So values are hashed by what they are, not through hash opclasses:
 *
 * - built-in scalar types whose binary form holds no OID are hashed as bytes:
 *   the value itself when passed by value, the typlen bytes of a fixed-length
 *   type, the detoasted content of a varlena (so compression, TOAST, short
 *   headers and expanded objects do not matter); every float NaN alike;
 * - arrays by their dimensions and then element by element (the null bitmap
 *   an array may keep after its last NULL is gone does not count), composites
 *   field by field, ranges of other types by their flags and bounds,
 *   multiranges by their number of ranges and then each range's flags and
 *   bounds, each part by these same rules;
 * - enums by their label; reg* types and types of extensions by the text
 *   their output function writes, which is what pg_dump writes and a restore
 *   reads back.  That text may depend on session settings (a cube's digits
 *   on extra_float_digits, a reg* name on search_path, anything holding a
 *   timestamptz on TimeZone and DateStyle), so it is written under the
 *   settings pg_dump uses plus a fixed time zone: the settings are set for
 *   the rest of the row as soon as a value needs them and restored when the
 *   row's hash is done, so the query producing the rows runs under the
 *   caller's own settings and rows of built-in types never pay for it.
 *
 * Values nest without bound (a record holding a record holding a record...),
 * so every step that recurses checks the stack depth first.
 *
 * Values that print differently hash differently (1.0 and 1.00 are different
 * numerics, as pg_dump keeps them); NULL differs from every value.
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
 * determine the values.  The words are hashed by SipHash-1-3 under a secret
 * 128-bit key (backfill_key_data, made by CREATE EXTENSION from the server's
 * strong random source, kept by pg_dump): SipHash is a pseudorandom function,
 * so without the key nobody can compute a row hash, nor find two rows that
 * hash alike, nor two multisets whose sums meet, better than by chance; and
 * the sums a fingerprint shows are sealed under a second key (see
 * BackfillSealSums), so no row's hash can be read off either.
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

#include <inttypes.h>
#include <math.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgtime.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/builtins.h"
#include "utils/bytea.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/multirangetypes.h"
#include "utils/rangetypes.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "base/compat.h"
#include "base/extension.h"
#include "hash/rowhash.h"

#define ROW_MARK		UINT64CONST(0x452821e638d01377)
#define ARRAY_MARK		UINT64CONST(0x082efa98ec4e6c89)
#define LEN_MARK		UINT64CONST(0xa4093822299f31d0)
#define RANGE_MARK		UINT64CONST(0xbe5466cf34e90c6c)
#define MULTIRANGE_MARK	UINT64CONST(0xc0ac29b7c97c50dd)

/* Rotate left by r bits, 0 < r < 64. */
static inline uint64
Rotl64(uint64 x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* SipHash's round. */
static pg_attribute_always_inline void
SipRound(BackfillSipState *s)
{
	s->v0 += s->v1;
	s->v1 = Rotl64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = Rotl64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = Rotl64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = Rotl64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = Rotl64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = Rotl64(s->v2, 32);
}

/* SipHash's initial state for the key (k0, k1). */
static void
SipInit(BackfillSipState *s, uint64 k0, uint64 k1)
{
	s->v0 = k0 ^ UINT64CONST(0x736f6d6570736575);
	s->v1 = k1 ^ UINT64CONST(0x646f72616e646f6d);
	s->v2 = k0 ^ UINT64CONST(0x6c7967656e657261);
	s->v3 = k1 ^ UINT64CONST(0x7465646279746573);
	s->pend = 0;
	s->pendlen = 0;
}

/* SipHash-1-3's compression of one 8-byte block. */
static pg_attribute_always_inline void
Absorb(BackfillSipState *s, uint64 word)
{
	s->v3 ^= word;
	SipRound(s);
	s->v0 ^= word;
}

/*
 * Fold the bytes of small values (4 bytes or less) gathered into one word,
 * if there are any.
 */
static pg_attribute_always_inline void
FlushSmall(BackfillSipState *s)
{
	if (s->pendlen != 0)
	{
		Absorb(s, s->pend);
		s->pend = 0;
		s->pendlen = 0;
	}
}

/* Fold one word into the state, after any small values gathered before it. */
static pg_attribute_always_inline void
Step(BackfillSipState *s, uint64 word)
{
	FlushSmall(s);
	Absorb(s, word);
}

/*
 * Fold a value of len <= 4 bytes: consecutive small values share a word, as
 * many as fit (two int4s, a date and an int4, eight booleans).  Which values
 * share a word follows from the types alone, so the words still determine
 * the values.
 */
static pg_attribute_always_inline void
StepSmall(BackfillSipState *s, uint64 value, int len)
{
	if (s->pendlen + len > 8)
		FlushSmall(s);
	s->pend |= value << (s->pendlen * 8);
	s->pendlen += len;
}

/* SipHash's finalization, after d rounds. */
static pg_attribute_always_inline uint64
SipFinish(BackfillSipState *s, int d)
{
	FlushSmall(s);
	s->v2 ^= 0xff;
	for (int i = 0; i < d; i++)
		SipRound(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/*
 * Fold a byte string into the state.  Up to 7 bytes go in one word: the
 * bytes, zero-padded, with the length in the top byte.  Longer strings give
 * their length, then their 8-byte words, the last 1-7 bytes read as at most
 * two overlapping words.  Either way, given the length the words determine
 * the bytes, and no byte is read alone in a loop (which would stall on store
 * forwarding).
 */
static pg_attribute_always_inline void
StepBytes(BackfillSipState *s, const unsigned char *p, size_t len)
{
	uint64		v;

	if (len < 8)
	{
		if (len >= 4)
		{
			uint32		lo;
			uint32		hi;

			memcpy(&lo, p, 4);
			memcpy(&hi, p + len - 4, 4);
			/* the bytes both reads cover are the same, so OR keeps them */
			v = lo | ((uint64) hi << ((len - 4) * 8));
		}
		else if (len > 0)
			v = (uint64) p[0] | ((uint64) p[len >> 1] << ((len >> 1) * 8)) |
				((uint64) p[len - 1] << ((len - 1) * 8));
		else
			v = 0;
		Step(s, v | ((uint64) len << 56));
		return;
	}

	Step(s, (uint64) len ^ LEN_MARK);
	while (len >= 8)
	{
		memcpy(&v, p, 8);
		Step(s, v);
		p += 8;
		len -= 8;
	}
	if (len >= 4)
	{
		uint32		lo;
		uint32		hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + len - 4, 4);
		Step(s, ((uint64) hi << 32) | lo);
	}
	else if (len > 0)
		Step(s, ((uint64) p[0] << 16) | ((uint64) p[len >> 1] << 8) | p[len - 1]);
}

/* The bits of a float8, every NaN alike. */
static inline uint64
Float8Bits(float8 f)
{
	uint64		bits;

	if (isnan(f))
		f = get_float8_nan();
	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

/* The bits of a float4, every NaN alike. */
static inline uint32
Float4Bits(float4 f)
{
	uint32		bits;

	if (isnan(f))
		f = get_float4_nan();
	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

/* Is typid one of the built-in reg* types or aclitem, whose values are OIDs? */
static bool
IsOidAlias(Oid typid)
{
	switch (typid)
	{
		case REGPROCOID:
		case REGPROCEDUREOID:
		case REGOPEROID:
		case REGOPERATOROID:
		case REGCLASSOID:
		case REGTYPEOID:
		case REGROLEOID:
		case REGNAMESPACEOID:
		case REGCONFIGOID:
		case REGDICTIONARYOID:
		case REGCOLLATIONOID:
		case ACLITEMOID:
			return true;
		default:
			return false;
	}
}

/* Set vh up for values of typid, allocating sub-hashers in cxt. */
static void
ValueHasherInit(BackfillValueHasher *vh, Oid typid, MemoryContext cxt)
{
	int32		typmod = -1;
	Oid			base = getBaseTypeAndTypmod(typid, &typmod);
	char		typtype = get_typtype(base);
	Oid			elemtype = get_element_type(base);

	/* a type's parts are bounded by its definition, but check anyway */
	check_stack_depth();

	memset(vh, 0, sizeof(*vh));
	vh->cxt = cxt;
	get_typlenbyvalalign(base, &vh->typlen, &vh->typbyval, &vh->typalign);

	if (base == FLOAT4OID)
		vh->mode = HASH_FLOAT4;
	else if (base == FLOAT8OID)
		vh->mode = HASH_FLOAT8;
	else if (base == POINTOID || base == LSEGOID || base == BOXOID ||
			 base == LINEOID || base == CIRCLEOID)
		vh->mode = HASH_FLOAT8S;
	else if (typtype == TYPTYPE_COMPOSITE || base == RECORDOID)
	{
		vh->mode = HASH_COMPOSITE;
		vh->rowtype = InvalidOid;
	}
	else if (OidIsValid(elemtype))
	{
		vh->mode = HASH_ARRAY;
		vh->elem = MemoryContextAlloc(cxt, sizeof(BackfillValueHasher));
		ValueHasherInit(vh->elem, elemtype, cxt);
	}
	else if (typtype == TYPTYPE_RANGE && base >= FirstGenbkiObjectId)
	{
		/* a built-in range holds its own built-in OID: its bytes will do */
		vh->mode = HASH_RANGE;
		vh->rangetype = lookup_type_cache(base, TYPECACHE_RANGE_INFO);
		vh->elem = MemoryContextAlloc(cxt, sizeof(BackfillValueHasher));
		ValueHasherInit(vh->elem, vh->rangetype->rngelemtype->type_id, cxt);
	}
	else if (typtype == TYPTYPE_MULTIRANGE)
	{
		vh->mode = HASH_MULTIRANGE;
		vh->rangetype = lookup_type_cache(base, TYPECACHE_MULTIRANGE_INFO)->rngtype;
		vh->elem = MemoryContextAlloc(cxt, sizeof(BackfillValueHasher));
		ValueHasherInit(vh->elem, vh->rangetype->rngelemtype->type_id, cxt);
	}
	else if (base >= FirstGenbkiObjectId || typtype == TYPTYPE_ENUM ||
			 typtype == TYPTYPE_PSEUDO || IsOidAlias(base))
	{
		Oid			outfunc;
		bool		isvarlena;

		if (vh->typlen == -2)
			vh->mode = HASH_CSTRING;	/* unknown, cstring */
		else
		{
			getTypeOutputInfo(base, &outfunc, &isvarlena);
			fmgr_info_cxt(outfunc, &vh->outfn, cxt);
			vh->mode = HASH_OUTPUT;
			/* an enum's label is the same under any settings */
			vh->bysettings = (typtype != TYPTYPE_ENUM);
		}
	}
	else if (vh->typbyval)
	{
		/* a narrower value may come sign-extended: keep its own bytes */
		vh->mode = vh->typlen <= 4 ? HASH_BYVAL_SMALL : HASH_BYVAL;
		vh->mask = vh->typlen >= (int) sizeof(Datum) ? ~UINT64CONST(0)
			: (UINT64CONST(1) << (vh->typlen * 8)) - 1;
	}
	else if (vh->typlen > 0)
		vh->mode = HASH_FIXED;
	else if (vh->typlen == -1)
		vh->mode = HASH_VARLENA;
	else
		vh->mode = HASH_CSTRING;
}

static void StepComplex(BackfillRowHasher *h, BackfillValueHasher *vh, BackfillSipState *s,
						  Datum value);

/* Fold one non-NULL value into the state. */
static pg_attribute_always_inline void
StepValue(BackfillRowHasher *h, BackfillValueHasher *vh, BackfillSipState *s, Datum value)
{
	switch (vh->mode)
	{
		case HASH_BYVAL:
			Step(s, (uint64) value & vh->mask);
			return;
		case HASH_BYVAL_SMALL:
			StepSmall(s, (uint64) value & vh->mask, vh->typlen);
			return;
		case HASH_VARLENA:
			{
				struct varlena *p = (struct varlena *) DatumGetPointer(value);

				if (VARATT_IS_EXTERNAL(p) || VARATT_IS_COMPRESSED(p))
				{
					MemoryContext old = MemoryContextSwitchTo(h->tmpcxt);

					p = pg_detoast_datum_packed(p);
					MemoryContextSwitchTo(old);
					h->tmpdirty = true;
				}
				StepBytes(s, (const unsigned char *) VARDATA_ANY(p),
								 VARSIZE_ANY_EXHDR(p));
			return;
			}
		case HASH_FIXED:
			StepBytes(s, (const unsigned char *) DatumGetPointer(value), vh->typlen);
			return;
		case HASH_FLOAT8:
			Step(s, Float8Bits(DatumGetFloat8(value)));
			return;
		default:
			{
				/* through a copy, so the caller's state stays in registers */
				BackfillSipState copy = *s;

				StepComplex(h, vh, &copy, value);
				*s = copy;
				return;
			}
	}
}

/*
 * Fold the NULL flags of n values, 64 to a word; the values themselves are
 * then folded without their NULLs, so a NULL is only its bit.
 */
static void
StepNullFlags(BackfillSipState *s, const bool *isnull, int n)
{
	for (int i = 0; i < n; i += 64)
	{
		uint64		word = 0;

		for (int j = i; j < Min(n, i + 64); j++)
			word |= (uint64) isnull[j] << (j - i);
		Step(s, word);
	}
}

/* Fold a composite value: its number of fields, their NULL flags, then each field. */
static void
StepComposite(BackfillRowHasher *h, BackfillValueHasher *vh, BackfillSipState *s, Datum value)
{
	HeapTupleHeader td = DatumGetHeapTupleHeader(value);
	Oid			rowtype = HeapTupleHeaderGetTypeId(td);
	int32		rowtypmod = HeapTupleHeaderGetTypMod(td);
	HeapTupleData tuple;
	Datum	   *values;
	bool	   *nulls;
	int			natts;

	check_stack_depth();
	if (vh->rowdesc == NULL || vh->rowtype != rowtype || vh->rowtypmod != rowtypmod)
	{
		TupleDesc	desc = lookup_rowtype_tupdesc(rowtype, rowtypmod);
		MemoryContext old = MemoryContextSwitchTo(vh->cxt);

		vh->rowdesc = CreateTupleDescCopy(desc);
		ReleaseTupleDesc(desc);
		vh->fields = palloc0(sizeof(BackfillValueHasher *) * vh->rowdesc->natts);
		for (int i = 0; i < vh->rowdesc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(vh->rowdesc, i);

			if (att->attisdropped)
				continue;
			vh->fields[i] = palloc(sizeof(BackfillValueHasher));
			ValueHasherInit(vh->fields[i], att->atttypid, vh->cxt);
		}
		MemoryContextSwitchTo(old);
		vh->rowtype = rowtype;
		vh->rowtypmod = rowtypmod;
	}

	natts = vh->rowdesc->natts;
	values = palloc(sizeof(Datum) * natts);
	nulls = palloc(sizeof(bool) * natts);
	tuple.t_len = HeapTupleHeaderGetDatumLength(td);
	ItemPointerSetInvalid(&(tuple.t_self));
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = td;
	heap_deform_tuple(&tuple, vh->rowdesc, values, nulls);

	/* a dropped field counts as not NULL, and is not folded */
	for (int i = 0; i < natts; i++)
		nulls[i] = nulls[i] && vh->fields[i] != NULL;
	Step(s, ROW_MARK ^ (uint64) natts);
	StepNullFlags(s, nulls, natts);
	for (int i = 0; i < natts; i++)
	{
		if (vh->fields[i] != NULL && !nulls[i])
			StepValue(h, vh->fields[i], s, values[i]);
	}
}

/*
 * Fold the NULL flags of an array's elements: their number, and unless it is
 * 0, the flags 64 to a word.  The null bitmap an array may keep after its last
 * NULL is gone does not count.
 */
static void
StepArrayNulls(BackfillSipState *s, ArrayType *arr, int nitems)
{
	bits8	   *bitmap = ARR_NULLBITMAP(arr);
	uint64		nnulls = 0;

	if (bitmap != NULL)
		for (int i = 0; i < nitems; i++)
			nnulls += (bitmap[i >> 3] & (1 << (i & 7))) == 0;
	Step(s, nnulls);
	if (nnulls == 0)
		return;
	for (int i = 0; i < nitems; i += 64)
	{
		uint64		word = 0;

		for (int j = i; j < Min(nitems, i + 64); j++)
			if ((bitmap[j >> 3] & (1 << (j & 7))) == 0)
				word |= UINT64CONST(1) << (j - i);
		Step(s, word);
	}
}

/*
 * Fold an array value: its dimensions, its elements' NULL flags, then each
 * element that is not NULL, in storage order.
 */
static void
StepArray(BackfillRowHasher *h, BackfillValueHasher *vh, BackfillSipState *s, Datum value)
{
	ArrayType  *arr = DatumGetArrayTypeP(value);
	int			ndim = ARR_NDIM(arr);
	int			nitems = ArrayGetNItems(ndim, ARR_DIMS(arr));
	array_iter	it;

	check_stack_depth();
	Step(s, (uint64) ndim ^ ARRAY_MARK);
	for (int d = 0; d < ndim; d++)
	{
		Step(s, (uint64) (uint32) ARR_DIMS(arr)[d]);
		Step(s, (uint64) (uint32) ARR_LBOUND(arr)[d]);
	}
	StepArrayNulls(s, arr, nitems);

	array_iter_setup(&it, (AnyArrayType *) arr);
	for (int i = 0; i < nitems; i++)
	{
		bool		isnull;
		Datum		elem = array_iter_next(&it, &isnull, i, vh->elem->typlen,
										   vh->elem->typbyval, vh->elem->typalign);

		if (!isnull)
			StepValue(h, vh->elem, s, elem);
	}
}

/* Fold a range's flags, then its bounds that are values. */
static void
StepBounds(BackfillRowHasher *h, BackfillValueHasher *elem, BackfillSipState *s,
		   const RangeBound *lower, const RangeBound *upper, bool empty)
{
	Step(s, RANGE_MARK ^ ((uint64) empty |
						  (uint64) lower->infinite << 1 | (uint64) lower->inclusive << 2 |
						  (uint64) upper->infinite << 3 | (uint64) upper->inclusive << 4));
	if (!empty && !lower->infinite)
		StepValue(h, elem, s, lower->val);
	if (!empty && !upper->infinite)
		StepValue(h, elem, s, upper->val);
}

/* Fold a range of a type that is not built in: its flags, then its bounds. */
static void
StepRange(BackfillRowHasher *h, BackfillValueHasher *vh, BackfillSipState *s, Datum value)
{
	RangeBound	lower;
	RangeBound	upper;
	bool		empty;

	check_stack_depth();
	range_deserialize(vh->rangetype, DatumGetRangeTypeP(value), &lower, &upper, &empty);
	StepBounds(h, vh->elem, s, &lower, &upper, empty);
}

/*
 * Fold a multirange: its number of ranges, then each range as StepRange
 * would (a multirange's text holds its bounds in the session's settings, and
 * its bytes the OIDs of its types).
 */
static void
StepMultirange(BackfillRowHasher *h, BackfillValueHasher *vh, BackfillSipState *s, Datum value)
{
	MultirangeType *mr = DatumGetMultirangeTypeP(value);
	uint32		count = mr->rangeCount;

	check_stack_depth();
	Step(s, MULTIRANGE_MARK ^ (uint64) count);
	for (uint32 i = 0; i < count; i++)
	{
		RangeBound	lower;
		RangeBound	upper;

		multirange_get_bounds(vh->rangetype, mr, i, &lower, &upper);
		StepBounds(h, vh->elem, s, &lower, &upper, false);
	}
}

/*
 * Set, until the row's hash is done, the settings output functions read to
 * those pg_dump uses (and UTC), so that text is the same in every session.
 * Only settings that differ are set: a GUC nest level, as a function's SET
 * clause uses, restores them (an error restores them too).
 */
static void
FixOutputSettings(BackfillRowHasher *h)
{
	h->gucnest = NewGUCNestLevel();
	if (DateStyle != USE_ISO_DATES)
		(void) set_config_option("datestyle", "ISO", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	if (IntervalStyle != INTSTYLE_POSTGRES)
		(void) set_config_option("intervalstyle", "postgres", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	if (extra_float_digits != 3)
		(void) set_config_option("extra_float_digits", "3", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	if (bytea_output != BYTEA_OUTPUT_HEX)
		(void) set_config_option("bytea_output", "hex", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	if (session_timezone == NULL || strcmp(pg_get_timezone_name(session_timezone), "UTC") != 0)
		(void) set_config_option("timezone", "UTC", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	/* reg* values print their names qualified unless in pg_catalog */
	if (strcmp(namespace_search_path, "pg_catalog") != 0)
		(void) set_config_option("search_path", "pg_catalog", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
}

/* The modes that allocate or recurse, kept out of the inlined fast path. */
static void
StepComplex(BackfillRowHasher *h, BackfillValueHasher *vh, BackfillSipState *s, Datum value)
{
	MemoryContext old;

	switch (vh->mode)
	{
		case HASH_FLOAT4:
			StepSmall(s, Float4Bits(DatumGetFloat4(value)), sizeof(uint32));
			return;
		case HASH_FLOAT8S:
			{
				const char *p = DatumGetPointer(value);

				Step(s, (uint64) vh->typlen ^ LEN_MARK);
				for (int off = 0; off + (int) sizeof(float8) <= vh->typlen; off += sizeof(float8))
				{
					float8		f;

					memcpy(&f, p + off, sizeof(f));
					Step(s, Float8Bits(f));
				}
				return;
			}
		case HASH_CSTRING:
			{
				const char *str = DatumGetCString(value);

				StepBytes(s, (const unsigned char *) str, strlen(str));
				return;
			}
		case HASH_OUTPUT:
			{
				char	   *str;

				if (vh->bysettings && h->gucnest == 0)
					FixOutputSettings(h);
				old = MemoryContextSwitchTo(h->tmpcxt);
				str = OutputFunctionCall(&vh->outfn, value);
				MemoryContextSwitchTo(old);
				h->tmpdirty = true;
				StepBytes(s, (const unsigned char *) str, strlen(str));
				return;
			}
		case HASH_ARRAY:
		case HASH_COMPOSITE:
		case HASH_RANGE:
		case HASH_MULTIRANGE:
			old = MemoryContextSwitchTo(h->tmpcxt);
			h->tmpdirty = true;
			if (vh->mode == HASH_ARRAY)
				StepArray(h, vh, s, value);
			else if (vh->mode == HASH_COMPOSITE)
				StepComposite(h, vh, s, value);
			else if (vh->mode == HASH_RANGE)
				StepRange(h, vh, s, value);
			else
				StepMultirange(h, vh, s, value);
			MemoryContextSwitchTo(old);
			return;
		default:
			elog(ERROR, "unexpected hash mode %d", (int) vh->mode);
	}
	pg_unreachable();
}

/* Order columns by the bytes of their names. */
static int
CompareColumnNames(const void *a, const void *b)
{
	return strcmp(((const BackfillColHasher *) a)->name, ((const BackfillColHasher *) b)->name);
}

/*
 * The database's secret keys: 32 bytes, the first 16 keying the row hash,
 * the last 16 sealing fingerprints.  They are the row of backfill_key_data
 * (in the extension's schema) that was made first: CREATE EXTENSION makes
 * one, and a restore brings back the older one of the database dumped, so
 * fingerprints recorded before a dump still compare equal after its restore.
 * Read directly, whoever calls: no role needs to read the table.
 */
static void
LoadKeys(uint64 keys[4])
{
	Oid			relid = get_relname_relid("backfill_key_data", BackfillInstalledSchema());
	Relation	rel;
	TableScanDesc scan;
	Snapshot	snap;
	HeapTuple	tuple;
	bool		found = false;
	TimestampTz best_made = 0;
	unsigned char best[32];

	if (!OidIsValid(relid))
		elog(ERROR, "the table backfill_key_data of extension backfill is missing");
	rel = table_open(relid, AccessShareLock);
	snap = RegisterSnapshot(ActiveSnapshotSet() ? GetActiveSnapshot() : GetLatestSnapshot());
	scan = table_beginscan(rel, snap, 0, NULL);
	while ((tuple = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull[2];
		Datum		key = heap_getattr(tuple, 1, RelationGetDescr(rel), &isnull[0]);
		Datum		made = heap_getattr(tuple, 2, RelationGetDescr(rel), &isnull[1]);
		bytea	   *k;

		if (isnull[0] || isnull[1])
			continue;
		k = DatumGetByteaPP(key);
		if (VARSIZE_ANY_EXHDR(k) != sizeof(best))
			continue;
		if (!found || DatumGetTimestampTz(made) < best_made ||
			(DatumGetTimestampTz(made) == best_made && memcmp(VARDATA_ANY(k), best, sizeof(best)) < 0))
		{
			memcpy(best, VARDATA_ANY(k), sizeof(best));
			best_made = DatumGetTimestampTz(made);
			found = true;
		}
	}
	table_endscan(scan);
	UnregisterSnapshot(snap);
	table_close(rel, AccessShareLock);

	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("backfill has no key to hash rows with: the table backfill_key_data holds no key"),
				 errhint("As its owner, run INSERT INTO backfill_key_data DEFAULT VALUES; fingerprints recorded under the lost key will no longer compare equal.")));
	memcpy(keys, best, sizeof(best));
}

/*
 * Most rows hold values of a few built-in kinds (integers, dates, booleans,
 * timestamps, floats, numerics, text...), none of them NULL.  For those the
 * words folded follow from the types alone: which small values share a word,
 * and where in it (StepSmall), which take a word of their own, which give
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
				/* a word or more of its own, as Step gives it */
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
					word |= (uint64) Float4Bits(DatumGetFloat4(value)) << p->shift;
					break;
				case PACK_FLOAT8:
					word = Float8Bits(DatumGetFloat8(value));
					break;
				case PACK_FIXED:
					StepBytes(&s, (const unsigned char *) DatumGetPointer(value), p->len);
					break;
				case PACK_VARLENA:
					{
						const char *v = DatumGetPointer(value);

						if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
							return false;
						StepBytes(&s, (const unsigned char *) VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
						break;
					}
			}
		}
		if (p->last)
		{
			Absorb(&s, word);
			word = 0;
		}
	}
	for (int w = (h->ncols + 63) >> 6; w > 0; w--)
		Absorb(&s, 0);
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
	Step(&h->start, h->seed);
	Step(&h->start, (uint64) h->ncols ^ ROW_MARK);
	for (int i = 0; i < h->ncols; i++)
	{
		BackfillColHasher *c = &h->cols[i];

		StepBytes(&h->start, (const unsigned char *) c->name, strlen(c->name));
		if (c->typname)
			StepBytes(&h->start, (const unsigned char *) c->typname, strlen(c->typname));
		else
			Step(&h->start, (uint64) c->typid);
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
	uint64		keys[4];

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
		ValueHasherInit(&h->cols[i].vh, TupleDescAttr(desc, h->cols[i].attidx)->atttypid,
						CurrentMemoryContext);
	}

	PlanPacking(h);

	LoadKeys(keys);
	h->k0 = keys[0];
	h->k1 = keys[1];
	RowHasherStart(h);
	h->tmpcxt = AllocSetContextCreate(CurrentMemoryContext,
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
			StepValue(h, &col->vh, &s, values[col->attidx]);
	}
	for (int w = 0; w < nwords; w++)
		Step(&s, nulls[w]);

	if (unlikely(h->tmpdirty))
	{
		MemoryContextReset(h->tmpcxt);
		h->tmpdirty = false;
		if (h->gucnest != 0)
		{
			AtEOXact_GUC(true, h->gucnest);
			h->gucnest = 0;
		}
	}
	return SipFinish(&s, 3);
}

/* The hash of the hasher's columns of the row in slot. */
uint64
BackfillHashRow(BackfillRowHasher *h, TupleTableSlot *slot)
{
	if (h->pack != NULL)
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

/*
 * Seal a multiset's count and sums into the 128 bits a fingerprint shows:
 * SipHash-2-4 of the three words under the database's second key, twice
 * (told apart by a last word).  Equal multisets give equal seals; anything
 * else gives unrelated ones, from which nothing of the sums, and so of any
 * row's hash, can be read without the key.
 */
void
BackfillSealSums(uint64 rows, uint64 sum1, uint64 sum2, uint64 sealed[2])
{
	uint64		keys[4];

	LoadKeys(keys);
	for (int half = 0; half < 2; half++)
	{
		BackfillSipState s;

		uint64		words[4] = {rows, sum1, sum2, (uint64) half + 1};

		SipInit(&s, keys[2], keys[3]);
		for (int i = 0; i < 4; i++)
		{
			s.v3 ^= words[i];
			SipRound(&s);
			SipRound(&s);
			s.v0 ^= words[i];
		}
		sealed[half] = SipFinish(&s, 4);
	}
}

/*
 * A check value of the database's keys: SipHash-2-4 of a fixed word under
 * each of them, as 32 hexadecimal digits.  Two databases (two Citus nodes)
 * with the same check value hash rows alike; the value tells nothing of the
 * keys themselves.
 */
char *
BackfillKeyCheck(void)
{
	uint64		keys[4];
	uint64		check[2];

	LoadKeys(keys);
	for (int half = 0; half < 2; half++)
	{
		BackfillSipState s;
		uint64		word = UINT64CONST(0x6b6579636865636b);	/* "keycheck" */

		SipInit(&s, keys[2 * half], keys[2 * half + 1]);
		s.v3 ^= word;
		SipRound(&s);
		SipRound(&s);
		s.v0 ^= word;
		check[half] = SipFinish(&s, 4);
	}
	return psprintf("%016" PRIx64 "%016" PRIx64, check[0], check[1]);
}
