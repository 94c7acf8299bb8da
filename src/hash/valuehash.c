/*-------------------------------------------------------------------------
 *
 * src/hash/valuehash.c
 *		Folding one value of any type into a row's hash, by what it is.
 *
 * A value must give the same words wherever it comes from (a heap page, a
 * query, a restored dump, a session with another time zone) and for every
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
 * Every part of a value is folded by SipHash (siphash.h); rowhash.c folds a
 * row's values in the order of their columns' names.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgtime.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/builtins.h"
#include "utils/bytea.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/multirangetypes.h"
#include "utils/rangetypes.h"
#include "utils/timestamp.h"

#include "hash/valuehash.h"

#define ARRAY_MARK		UINT64CONST(0x082efa98ec4e6c89)
#define RANGE_MARK		UINT64CONST(0xbe5466cf34e90c6c)
#define MULTIRANGE_MARK	UINT64CONST(0xc0ac29b7c97c50dd)

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
void
BackfillValueHasherInit(BackfillValueHasher *vh, Oid typid, MemoryContext cxt)
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
		BackfillValueHasherInit(vh->elem, elemtype, cxt);
	}
	else if (typtype == TYPTYPE_RANGE && base >= FirstGenbkiObjectId)
	{
		/* a built-in range holds its own built-in OID: its bytes will do */
		vh->mode = HASH_RANGE;
		vh->rangetype = lookup_type_cache(base, TYPECACHE_RANGE_INFO);
		vh->elem = MemoryContextAlloc(cxt, sizeof(BackfillValueHasher));
		BackfillValueHasherInit(vh->elem, vh->rangetype->rngelemtype->type_id, cxt);
	}
	else if (typtype == TYPTYPE_MULTIRANGE)
	{
		vh->mode = HASH_MULTIRANGE;
		vh->rangetype = lookup_type_cache(base, TYPECACHE_MULTIRANGE_INFO)->rngtype;
		vh->elem = MemoryContextAlloc(cxt, sizeof(BackfillValueHasher));
		BackfillValueHasherInit(vh->elem, vh->rangetype->rngelemtype->type_id, cxt);
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
		SipStep(s, word);
	}
}

/* Fold a composite value: its number of fields, their NULL flags, then each field. */
static void
StepComposite(BackfillHashScratch *sc, BackfillValueHasher *vh, BackfillSipState *s, Datum value)
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
			BackfillValueHasherInit(vh->fields[i], att->atttypid, vh->cxt);
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
	SipStep(s, BACKFILL_ROW_MARK ^ (uint64) natts);
	StepNullFlags(s, nulls, natts);
	for (int i = 0; i < natts; i++)
	{
		if (vh->fields[i] != NULL && !nulls[i])
			BackfillStepValue(sc, vh->fields[i], s, values[i]);
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
	SipStep(s, nnulls);
	if (nnulls == 0)
		return;
	for (int i = 0; i < nitems; i += 64)
	{
		uint64		word = 0;

		for (int j = i; j < Min(nitems, i + 64); j++)
			if ((bitmap[j >> 3] & (1 << (j & 7))) == 0)
				word |= UINT64CONST(1) << (j - i);
		SipStep(s, word);
	}
}

/*
 * Fold an array value: its dimensions, its elements' NULL flags, then each
 * element that is not NULL, in storage order.
 */
static void
StepArray(BackfillHashScratch *sc, BackfillValueHasher *vh, BackfillSipState *s, Datum value)
{
	ArrayType  *arr = DatumGetArrayTypeP(value);
	int			ndim = ARR_NDIM(arr);
	int			nitems = ArrayGetNItems(ndim, ARR_DIMS(arr));
	array_iter	it;

	check_stack_depth();
	SipStep(s, (uint64) ndim ^ ARRAY_MARK);
	for (int d = 0; d < ndim; d++)
	{
		SipStep(s, (uint64) (uint32) ARR_DIMS(arr)[d]);
		SipStep(s, (uint64) (uint32) ARR_LBOUND(arr)[d]);
	}
	StepArrayNulls(s, arr, nitems);

	array_iter_setup(&it, (AnyArrayType *) arr);
	for (int i = 0; i < nitems; i++)
	{
		bool		isnull;
		Datum		elem = array_iter_next(&it, &isnull, i, vh->elem->typlen,
										   vh->elem->typbyval, vh->elem->typalign);

		if (!isnull)
			BackfillStepValue(sc, vh->elem, s, elem);
	}
}

/* Fold a range's flags, then its bounds that are values. */
static void
StepBounds(BackfillHashScratch *sc, BackfillValueHasher *elem, BackfillSipState *s,
		   const RangeBound *lower, const RangeBound *upper, bool empty)
{
	SipStep(s, RANGE_MARK ^ ((uint64) empty |
						  (uint64) lower->infinite << 1 | (uint64) lower->inclusive << 2 |
						  (uint64) upper->infinite << 3 | (uint64) upper->inclusive << 4));
	if (!empty && !lower->infinite)
		BackfillStepValue(sc, elem, s, lower->val);
	if (!empty && !upper->infinite)
		BackfillStepValue(sc, elem, s, upper->val);
}

/* Fold a range of a type that is not built in: its flags, then its bounds. */
static void
StepRange(BackfillHashScratch *sc, BackfillValueHasher *vh, BackfillSipState *s, Datum value)
{
	RangeBound	lower;
	RangeBound	upper;
	bool		empty;

	check_stack_depth();
	range_deserialize(vh->rangetype, DatumGetRangeTypeP(value), &lower, &upper, &empty);
	StepBounds(sc, vh->elem, s, &lower, &upper, empty);
}

/*
 * Fold a multirange: its number of ranges, then each range as StepRange
 * would (a multirange's text holds its bounds in the session's settings, and
 * its bytes the OIDs of its types).
 */
static void
StepMultirange(BackfillHashScratch *sc, BackfillValueHasher *vh, BackfillSipState *s, Datum value)
{
	MultirangeType *mr = DatumGetMultirangeTypeP(value);
	uint32		count = mr->rangeCount;

	check_stack_depth();
	SipStep(s, MULTIRANGE_MARK ^ (uint64) count);
	for (uint32 i = 0; i < count; i++)
	{
		RangeBound	lower;
		RangeBound	upper;

		multirange_get_bounds(vh->rangetype, mr, i, &lower, &upper);
		StepBounds(sc, vh->elem, s, &lower, &upper, false);
	}
}

/*
 * Set, until the row's hash is done, the settings output functions read to
 * those pg_dump uses (and UTC), so that text is the same in every session.
 * Only settings that differ are set: a GUC nest level, as a function's SET
 * clause uses, restores them (an error restores them too).
 */
static void
FixOutputSettings(BackfillHashScratch *sc)
{
	sc->gucnest = NewGUCNestLevel();
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
void
BackfillStepComplexValue(BackfillHashScratch *sc, BackfillValueHasher *vh, BackfillSipState *s,
						 Datum value)
{
	MemoryContext old;

	switch (vh->mode)
	{
		case HASH_FLOAT4:
			SipStepSmall(s, BackfillFloat4Bits(DatumGetFloat4(value)), sizeof(uint32));
			return;
		case HASH_FLOAT8S:
			{
				const char *p = DatumGetPointer(value);

				SipStep(s, (uint64) vh->typlen ^ BACKFILL_LEN_MARK);
				for (int off = 0; off + (int) sizeof(float8) <= vh->typlen; off += sizeof(float8))
				{
					float8		f;

					memcpy(&f, p + off, sizeof(f));
					SipStep(s, BackfillFloat8Bits(f));
				}
				return;
			}
		case HASH_CSTRING:
			{
				const char *str = DatumGetCString(value);

				SipStepBytes(s, (const unsigned char *) str, strlen(str));
				return;
			}
		case HASH_OUTPUT:
			{
				char	   *str;

				if (vh->bysettings && sc->gucnest == 0)
					FixOutputSettings(sc);
				old = MemoryContextSwitchTo(sc->tmpcxt);
				str = OutputFunctionCall(&vh->outfn, value);
				MemoryContextSwitchTo(old);
				sc->tmpdirty = true;
				SipStepBytes(s, (const unsigned char *) str, strlen(str));
				return;
			}
		case HASH_ARRAY:
		case HASH_COMPOSITE:
		case HASH_RANGE:
		case HASH_MULTIRANGE:
			old = MemoryContextSwitchTo(sc->tmpcxt);
			sc->tmpdirty = true;
			if (vh->mode == HASH_ARRAY)
				StepArray(sc, vh, s, value);
			else if (vh->mode == HASH_COMPOSITE)
				StepComposite(sc, vh, s, value);
			else if (vh->mode == HASH_RANGE)
				StepRange(sc, vh, s, value);
			else
				StepMultirange(sc, vh, s, value);
			MemoryContextSwitchTo(old);
			return;
		default:
			elog(ERROR, "unexpected hash mode %d", (int) vh->mode);
	}
	pg_unreachable();
}

/*
 * Undo what folding a row's values left: free its copies and strings, and
 * give back the settings FixOutputSettings set.
 */
void
BackfillHashScratchDone(BackfillHashScratch *sc)
{
	MemoryContextReset(sc->tmpcxt);
	sc->tmpdirty = false;
	if (sc->gucnest != 0)
	{
		AtEOXact_GUC(true, sc->gucnest);
		sc->gucnest = 0;
	}
}
