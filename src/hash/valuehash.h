/*-------------------------------------------------------------------------
 *
 * src/hash/valuehash.h
 *		Folding one value of any type into a row's hash, by what it is.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_VALUEHASH_H
#define BACKFILL_VALUEHASH_H

#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "utils/float.h"
#include "utils/typcache.h"

#include "base/compat.h"
#include "hash/siphash.h"

/* How the values of one type are hashed. */
typedef enum BackfillHashMode
{
	HASH_BYVAL,					/* pass-by-value: the value itself */
	HASH_BYVAL_SMALL,			/* pass-by-value of 4 bytes or less: packed */
	HASH_FIXED,					/* fixed length by reference: typlen bytes */
	HASH_VARLENA,				/* variable length: the detoasted content */
	HASH_CSTRING,				/* cstring: its characters */
	HASH_FLOAT4,				/* float4, every NaN alike */
	HASH_FLOAT8,				/* float8, every NaN alike */
	HASH_FLOAT8S,				/* fixed length made of float8s (point, box...) */
	HASH_ARRAY,					/* dimensions, then element by element */
	HASH_COMPOSITE,				/* field by field */
	HASH_RANGE,					/* flags, then bounds */
	HASH_MULTIRANGE,			/* number of ranges, then each range */
	HASH_OUTPUT					/* the type's text output, in fixed settings */
} BackfillHashMode;

typedef struct BackfillValueHasher
{
	BackfillHashMode mode;
	uint64		mask;			/* HASH_BYVAL: the bytes of the value */
	int16		typlen;
	bool		typbyval;
	char		typalign;
	FmgrInfo	outfn;			/* HASH_OUTPUT */
	bool		bysettings;		/* HASH_OUTPUT: the text depends on settings */
	struct BackfillValueHasher *elem;	/* HASH_ARRAY element, range bound */
	TypeCacheEntry *rangetype;	/* HASH_RANGE, HASH_MULTIRANGE: the range type */
	MemoryContext cxt;			/* where sub-hashers are made */
	/* HASH_COMPOSITE: the row type last seen and a hasher per field */
	Oid			rowtype;
	int32		rowtypmod;
	TupleDesc	rowdesc;
	struct BackfillValueHasher **fields;	/* NULL for dropped fields */
} BackfillValueHasher;



/*
 * What folding a row's values may leave until the row's hash is done:
 * detoasted copies and output strings, and the settings output functions
 * were given (BackfillHashScratchDone undoes both).
 */
typedef struct BackfillHashScratch
{
	MemoryContext tmpcxt;		/* detoasted copies, output strings */
	bool		tmpdirty;
	int			gucnest;		/* GUC nest level of the fixed settings, or 0 */
} BackfillHashScratch;

/* Marks the number of fields of a row or a composite value in the words folded. */
#define BACKFILL_ROW_MARK	UINT64CONST(0x452821e638d01377)

/* The bits of a float8, every NaN alike. */
static inline uint64
BackfillFloat8Bits(float8 f)
{
	uint64		bits;

	if (isnan(f))
		f = get_float8_nan();
	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

/* The bits of a float4, every NaN alike. */
static inline uint32
BackfillFloat4Bits(float4 f)
{
	uint32		bits;

	if (isnan(f))
		f = get_float4_nan();
	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

extern void BackfillValueHasherInit(BackfillValueHasher *vh, Oid typid, MemoryContext cxt);
extern void BackfillStepComplexValue(BackfillHashScratch *sc, BackfillValueHasher *vh,
									 BackfillSipState *s, Datum value);
extern void BackfillHashScratchDone(BackfillHashScratch *sc);

/* Fold one non-NULL value into the state. */
static pg_attribute_always_inline void
BackfillStepValue(BackfillHashScratch *sc, BackfillValueHasher *vh, BackfillSipState *s,
				  Datum value)
{
	switch (vh->mode)
	{
		case HASH_BYVAL:
			SipStep(s, (uint64) value & vh->mask);
			return;
		case HASH_BYVAL_SMALL:
			SipStepSmall(s, (uint64) value & vh->mask, vh->typlen);
			return;
		case HASH_VARLENA:
			{
				struct varlena *p = (struct varlena *) DatumGetPointer(value);

				if (VARATT_IS_EXTERNAL(p) || VARATT_IS_COMPRESSED(p))
				{
					MemoryContext old = MemoryContextSwitchTo(sc->tmpcxt);

					p = pg_detoast_datum_packed(p);
					MemoryContextSwitchTo(old);
					sc->tmpdirty = true;
				}
				SipStepBytes(s, (const unsigned char *) VARDATA_ANY(p),
							 VARSIZE_ANY_EXHDR(p));
			return;
			}
		case HASH_FIXED:
			SipStepBytes(s, (const unsigned char *) DatumGetPointer(value), vh->typlen);
			return;
		case HASH_FLOAT8:
			SipStep(s, BackfillFloat8Bits(DatumGetFloat8(value)));
			return;
		default:
			{
				/* through a copy, so the caller's state stays in registers */
				BackfillSipState copy = *s;

				BackfillStepComplexValue(sc, vh, &copy, value);
				*s = copy;
				return;
			}
	}
}

#endif							/* BACKFILL_VALUEHASH_H */
