/*-------------------------------------------------------------------------
 *
 * src/rowhash.c
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
 * A row is the set of its (column name, value) pairs: columns are visited in
 * the byte order of their names, and the names go into the hash, so two
 * tables with the same columns in another physical order hash their rows
 * alike.  The values are folded by chains of steps, each a bijection of the
 * 64-bit state for a given input word (xor, multiply by an odd constant,
 * rotate); a value is its length then its 8-byte words.  Columns alternate
 * between two chains that the processor runs side by side, and the two states
 * are folded together by one more step, a bijection of either state for a
 * given other.  Two rows of the same shape that differ in one value end in
 * different states; every step is non-linear over addition (multiply, rotate),
 * so the row hash is a non-linear function of every value and values swapped
 * between two rows change the sum of their hashes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgtime.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/bytea.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/multirangetypes.h"
#include "utils/rangetypes.h"

#include "compat.h"
#include "rowhash.h"

#define ROWHASH_SEED	UINT64CONST(0x243f6a8885a308d3)
#define MUL				UINT64CONST(0x9e3779b97f4a7c15)
#define NULL_MARK		UINT64CONST(0x13198a2e03707344)
#define LEN_MARK		UINT64CONST(0xa4093822299f31d0)
#define ARRAY_MARK		UINT64CONST(0x082efa98ec4e6c89)
#define ROW_MARK		UINT64CONST(0x452821e638d01377)
#define RANGE_MARK		UINT64CONST(0xbe5466cf34e90c6c)
#define MULTIRANGE_MARK	UINT64CONST(0xc0ac29b7c97c50dd)

/* Rotate left by r bits, 0 < r < 64. */
static inline uint64
Rotl64(uint64 x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* One step of the chain: for a given word, a bijection of the state. */
static inline uint64
Step(uint64 acc, uint64 word)
{
	return Rotl64((acc ^ word) * MUL, 29);
}

/* The step for a NULL: another bijection, so no value steps like a NULL. */
static inline uint64
StepNull(uint64 acc)
{
	return Rotl64((acc + NULL_MARK) * UINT64CONST(0xc2b2ae3d27d4eb4f), 37);
}

/*
 * Fold a byte string into the state.  Up to 7 bytes go in one word: the
 * bytes, zero-padded, with the length in the top byte.  Longer strings give
 * their length, then their 8-byte words, the last 1-7 bytes read as at most
 * two overlapping words.  Either way, given the length the words determine
 * the bytes, and no byte is read alone in a loop (which would stall on store
 * forwarding).
 */
static pg_attribute_always_inline uint64
StepBytes(uint64 acc, const unsigned char *p, size_t len)
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
		return Step(acc, v | ((uint64) len << 56));
	}

	acc = Step(acc, (uint64) len ^ LEN_MARK);
	while (len >= 8)
	{
		memcpy(&v, p, 8);
		acc = Step(acc, v);
		p += 8;
		len -= 8;
	}
	if (len >= 4)
	{
		uint32		lo;
		uint32		hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + len - 4, 4);
		acc = Step(acc, ((uint64) hi << 32) | lo);
	}
	else if (len > 0)
		acc = Step(acc, ((uint64) p[0] << 16) | ((uint64) p[len >> 1] << 8) | p[len - 1]);
	return acc;
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
		vh->mode = HASH_BYVAL;
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

static uint64 StepComplex(BackfillRowHasher *h, BackfillValueHasher *vh, uint64 acc,
						  Datum value);

/* Fold one non-NULL value into the state. */
static pg_attribute_always_inline uint64
StepValue(BackfillRowHasher *h, BackfillValueHasher *vh, uint64 acc, Datum value)
{
	switch (vh->mode)
	{
		case HASH_BYVAL:
			return Step(acc, (uint64) value & vh->mask);
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
				return StepBytes(acc, (const unsigned char *) VARDATA_ANY(p),
								 VARSIZE_ANY_EXHDR(p));
			}
		case HASH_FIXED:
			return StepBytes(acc, (const unsigned char *) DatumGetPointer(value), vh->typlen);
		case HASH_FLOAT8:
			return Step(acc, Float8Bits(DatumGetFloat8(value)));
		default:
			return StepComplex(h, vh, acc, value);
	}
}

/* Fold a composite value: its number of fields, then each field. */
static uint64
StepComposite(BackfillRowHasher *h, BackfillValueHasher *vh, uint64 acc, Datum value)
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

	acc = Step(acc, ROW_MARK);
	for (int i = 0; i < natts; i++)
	{
		if (vh->fields[i] == NULL)
			continue;
		acc = nulls[i] ? StepNull(acc) : StepValue(h, vh->fields[i], acc, values[i]);
	}
	return acc;
}

/* Fold an array value: its dimensions, then each element in storage order. */
static uint64
StepArray(BackfillRowHasher *h, BackfillValueHasher *vh, uint64 acc, Datum value)
{
	ArrayType  *arr = DatumGetArrayTypeP(value);
	int			ndim = ARR_NDIM(arr);
	int			nitems = ArrayGetNItems(ndim, ARR_DIMS(arr));
	array_iter	it;

	check_stack_depth();
	acc = Step(acc, (uint64) ndim ^ ARRAY_MARK);
	for (int d = 0; d < ndim; d++)
	{
		acc = Step(acc, (uint64) (uint32) ARR_DIMS(arr)[d]);
		acc = Step(acc, (uint64) (uint32) ARR_LBOUND(arr)[d]);
	}

	array_iter_setup(&it, (AnyArrayType *) arr);
	for (int i = 0; i < nitems; i++)
	{
		bool		isnull;
		Datum		elem = array_iter_next(&it, &isnull, i, vh->elem->typlen,
										   vh->elem->typbyval, vh->elem->typalign);

		acc = isnull ? StepNull(acc) : StepValue(h, vh->elem, acc, elem);
	}
	return acc;
}

/* Fold a range's flags, then its bounds that are values. */
static uint64
StepBounds(BackfillRowHasher *h, BackfillValueHasher *elem, uint64 acc,
		   const RangeBound *lower, const RangeBound *upper, bool empty)
{
	acc = Step(acc, RANGE_MARK ^ ((uint64) empty |
								  (uint64) lower->infinite << 1 | (uint64) lower->inclusive << 2 |
								  (uint64) upper->infinite << 3 | (uint64) upper->inclusive << 4));
	if (!empty && !lower->infinite)
		acc = StepValue(h, elem, acc, lower->val);
	if (!empty && !upper->infinite)
		acc = StepValue(h, elem, acc, upper->val);
	return acc;
}

/* Fold a range of a type that is not built in: its flags, then its bounds. */
static uint64
StepRange(BackfillRowHasher *h, BackfillValueHasher *vh, uint64 acc, Datum value)
{
	RangeBound	lower;
	RangeBound	upper;
	bool		empty;

	check_stack_depth();
	range_deserialize(vh->rangetype, DatumGetRangeTypeP(value), &lower, &upper, &empty);
	return StepBounds(h, vh->elem, acc, &lower, &upper, empty);
}

/*
 * Fold a multirange: its number of ranges, then each range as StepRange
 * would (a multirange's text holds its bounds in the session's settings, and
 * its bytes the OIDs of its types).
 */
static uint64
StepMultirange(BackfillRowHasher *h, BackfillValueHasher *vh, uint64 acc, Datum value)
{
	MultirangeType *mr = DatumGetMultirangeTypeP(value);
	uint32		count = mr->rangeCount;

	check_stack_depth();
	acc = Step(acc, MULTIRANGE_MARK ^ (uint64) count);
	for (uint32 i = 0; i < count; i++)
	{
		RangeBound	lower;
		RangeBound	upper;

		multirange_get_bounds(vh->rangetype, mr, i, &lower, &upper);
		acc = StepBounds(h, vh->elem, acc, &lower, &upper, false);
	}
	return acc;
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
static uint64
StepComplex(BackfillRowHasher *h, BackfillValueHasher *vh, uint64 acc, Datum value)
{
	MemoryContext old;

	switch (vh->mode)
	{
		case HASH_FLOAT4:
			{
				float4		f = DatumGetFloat4(value);
				uint32		bits;

				if (isnan(f))
					f = get_float4_nan();
				memcpy(&bits, &f, sizeof(bits));
				return Step(acc, bits);
			}
		case HASH_FLOAT8S:
			{
				const char *p = DatumGetPointer(value);

				acc = Step(acc, (uint64) vh->typlen ^ LEN_MARK);
				for (int off = 0; off + (int) sizeof(float8) <= vh->typlen; off += sizeof(float8))
				{
					float8		f;

					memcpy(&f, p + off, sizeof(f));
					acc = Step(acc, Float8Bits(f));
				}
				return acc;
			}
		case HASH_CSTRING:
			{
				const char *s = DatumGetCString(value);

				return StepBytes(acc, (const unsigned char *) s, strlen(s));
			}
		case HASH_OUTPUT:
			{
				char	   *s;

				if (vh->bysettings && h->gucnest == 0)
					FixOutputSettings(h);
				old = MemoryContextSwitchTo(h->tmpcxt);
				s = OutputFunctionCall(&vh->outfn, value);
				MemoryContextSwitchTo(old);
				h->tmpdirty = true;
				return StepBytes(acc, (const unsigned char *) s, strlen(s));
			}
		case HASH_ARRAY:
		case HASH_COMPOSITE:
		case HASH_RANGE:
		case HASH_MULTIRANGE:
			old = MemoryContextSwitchTo(h->tmpcxt);
			h->tmpdirty = true;
			if (vh->mode == HASH_ARRAY)
				acc = StepArray(h, vh, acc, value);
			else if (vh->mode == HASH_COMPOSITE)
				acc = StepComposite(h, vh, acc, value);
			else if (vh->mode == HASH_RANGE)
				acc = StepRange(h, vh, acc, value);
			else
				acc = StepMultirange(h, vh, acc, value);
			MemoryContextSwitchTo(old);
			return acc;
		default:
			elog(ERROR, "unexpected hash mode %d", (int) vh->mode);
	}
	pg_unreachable();
}

/* Order columns by the bytes of their names. */
static int
CompareColumnNames(const void *a, const void *b, void *arg)
{
	TupleDesc	desc = (TupleDesc) arg;
	const BackfillColHasher *ca = (const BackfillColHasher *) a;
	const BackfillColHasher *cb = (const BackfillColHasher *) b;

	return strcmp(NameStr(TupleDescAttr(desc, ca->attidx)->attname),
				  NameStr(TupleDescAttr(desc, cb->attidx)->attname));
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
		h->cols[h->ncols++].attidx = idx;
		h->maxattidx = Max(h->maxattidx, idx + 1);
	}
	qsort_arg(h->cols, h->ncols, sizeof(BackfillColHasher), CompareColumnNames, desc);

	h->names = ROWHASH_SEED;
	for (int i = 0; i < h->ncols; i++)
	{
		const char *name = NameStr(TupleDescAttr(desc, h->cols[i].attidx)->attname);

		ValueHasherInit(&h->cols[i].vh, TupleDescAttr(desc, h->cols[i].attidx)->atttypid,
						CurrentMemoryContext);
		h->names = StepBytes(h->names, (const unsigned char *) name, strlen(name));
	}
	h->tmpcxt = AllocSetContextCreate(CurrentMemoryContext,
									  "backfill row hash",
									  ALLOCSET_SMALL_SIZES);
	return h;
}

/* Fold one column of a row into the state. */
static pg_attribute_always_inline uint64
StepColumn(BackfillRowHasher *h, BackfillColHasher *col, uint64 acc,
		   const Datum *values, const bool *isnull)
{
	if (isnull[col->attidx])
		return StepNull(acc);
	return StepValue(h, &col->vh, acc, values[col->attidx]);
}

/*
 * The hash of the hasher's columns of a row given as values and isnull, each
 * indexed by attidx: columns alternate between two chains, folded together
 * at the end.
 */
static pg_attribute_always_inline uint64
HashValues(BackfillRowHasher *h, const Datum *values, const bool *isnull)
{
	uint64		a = h->names ^ h->seed;
	uint64		b = ~a;
	int			i;

	for (i = 0; i + 1 < h->ncols; i += 2)
	{
		a = StepColumn(h, &h->cols[i], a, values, isnull);
		b = StepColumn(h, &h->cols[i + 1], b, values, isnull);
	}
	if (i < h->ncols)
		a = StepColumn(h, &h->cols[i], a, values, isnull);

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
	a = Step(a ^ (uint64) h->ncols, b);
	return a ^ (a >> 31);		/* high bits down, so the sum's low bits see them */
}

/* The hash of the hasher's columns of the row in slot. */
uint64
BackfillHashRow(BackfillRowHasher *h, TupleTableSlot *slot)
{
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
