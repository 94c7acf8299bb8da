/*-------------------------------------------------------------------------
 *
 * src/rowhash.c
 *		Hashing rows by the values they hold, whatever their types.
 *
 * A row hash must be the same for the same values wherever the row comes
 * from (a heap page, a query, a restored dump, a table rewritten by VACUUM
 * FULL) and must work for every type, including those without a hash
 * operator class (json, point, xml).  So values are hashed by their
 * representation, not through hash opclasses:
 *
 * - built-in types whose binary form holds no OID and no session state
 *   (integers, numeric, text, timestamps, jsonb, arrays and ranges of them,
 *   ...) are hashed as bytes: the value itself when passed by value, the
 *   typlen bytes of a fixed-length type, the detoasted content of a varlena
 *   (so compression, TOAST and short headers do not matter);
 * - everything else (enums, composites, types of extensions, reg* types,
 *   domains over those) is hashed as the text its output function writes,
 *   which is what pg_dump writes and a restore reads back.
 *
 * Two values that print differently hash differently (1.0 and 1.00 are
 * different numerics, as pg_dump keeps them), and NULL differs from every
 * value, the empty string included.
 *
 * The hashes of a row's columns are chained in column order (xor, multiply,
 * rotate: a bijection of each column's hash) and the chain goes through
 * fmix64 at the end: swapping two values between two rows changes both row
 * hashes non-linearly, which a linear combination of column hashes would
 * not.  Short strings are read as at most two words, never byte by byte.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/pg_type.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "rowhash.h"

#define ROWHASH_SEED	UINT64CONST(0x243f6a8885a308d3)
#define MUL				UINT64CONST(0x9e3779b97f4a7c15)
#define NULL_MARK		UINT64CONST(0x13198a2e03707344)
#define LEN_MARK		UINT64CONST(0xa4093822299f31d0)

/* Rotate left by r bits, 0 < r < 64. */
static inline uint64
Rotl64(uint64 x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/*
 * One step of the row chain: fold a 64-bit word into the state.  For a given
 * word this is a bijection of the state (xor, multiply by an odd constant,
 * rotate), so two rows that feed the same number of words and differ in any
 * word end in different states.
 */
static inline uint64
Step(uint64 acc, uint64 word)
{
	return Rotl64((acc ^ word) * MUL, 29);
}

/*
 * The step for a NULL: another bijection of the state, so that no value,
 * whatever its bits, steps like a NULL for every state.
 */
static inline uint64
StepNull(uint64 acc)
{
	return Rotl64((acc + NULL_MARK) * UINT64CONST(0xc2b2ae3d27d4eb4f), 37);
}

/*
 * Fold a byte string into the state: its length, then its 8-byte words, the
 * last 1-7 bytes read as at most two overlapping words (never byte by byte,
 * which would stall on store forwarding).  With the length in front, the
 * words determine the bytes.
 */
static inline uint64
StepBytes(uint64 acc, const unsigned char *p, size_t len)
{
	uint64		v;

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

/* Is the binary form of typid the same for the same value in any database? */
static bool
TypeHasPortableBinary(Oid typid)
{
	Oid			elemtype;
	char		typtype;

	typid = getBaseType(typid);
	if (typid >= FirstGenbkiObjectId)
		return false;			/* types of extensions and users */

	switch (typid)
	{
		case OIDOID:
			return true;		/* kept as a number by pg_dump */
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
			return false;		/* OIDs that a restore resolves again */
		default:
			break;
	}

	typtype = get_typtype(typid);
	if (typtype == TYPTYPE_COMPOSITE || typtype == TYPTYPE_ENUM ||
		typtype == TYPTYPE_PSEUDO)
		return false;			/* OIDs of labels or row types inside */

	elemtype = get_element_type(typid);
	if (OidIsValid(elemtype))
		return TypeHasPortableBinary(elemtype);

	return true;
}

/*
 * A hasher for the columns attidx[0..ncols-1] of rows of desc, in that
 * order; attidx NULL means every column that is not dropped.
 */
BackfillRowHasher *
BackfillRowHasherCreate(TupleDesc desc, int ncols, const int *attidx)
{
	BackfillRowHasher *h = palloc0(sizeof(BackfillRowHasher));

	h->cols = palloc0(sizeof(BackfillColHasher) * Max(desc->natts, ncols));
	h->ncols = 0;
	for (int i = 0; i < (attidx ? ncols : desc->natts); i++)
	{
		int			idx = attidx ? attidx[i] : i;
		Form_pg_attribute att = TupleDescAttr(desc, idx);
		BackfillColHasher *col = &h->cols[h->ncols];

		if (att->attisdropped)
			continue;
		col->attidx = idx;
		col->typlen = att->attlen;
		if (!TypeHasPortableBinary(att->atttypid))
		{
			Oid			outfunc;
			bool		isvarlena;

			getTypeOutputInfo(att->atttypid, &outfunc, &isvarlena);
			fmgr_info(outfunc, &col->outfn);
			col->mode = COLMODE_OUTPUT;
		}
		else if (att->attbyval)
			col->mode = COLMODE_BYVAL;
		else if (att->attlen > 0)
			col->mode = COLMODE_FIXED;
		else if (att->attlen == -1)
			col->mode = COLMODE_VARLENA;
		else
			col->mode = COLMODE_CSTRING;
		h->maxattidx = Max(h->maxattidx, idx + 1);
		h->ncols++;
	}
	h->tmpcxt = AllocSetContextCreate(CurrentMemoryContext,
									  "backfill row hash",
									  ALLOCSET_SMALL_SIZES);
	return h;
}

/* Fold one non-NULL value into the state. */
static inline uint64
StepValue(BackfillRowHasher *h, BackfillColHasher *col, uint64 acc, Datum value)
{
	switch (col->mode)
	{
		case COLMODE_BYVAL:
			{
				uint64		v = (uint64) value;

				if (col->typlen < (int) sizeof(Datum))
					v &= (UINT64CONST(1) << (col->typlen * 8)) - 1;
				return Step(acc, v);
			}
		case COLMODE_FIXED:
			return StepBytes(acc, (const unsigned char *) DatumGetPointer(value), col->typlen);
		case COLMODE_VARLENA:
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
		case COLMODE_CSTRING:
			{
				const char *s = DatumGetCString(value);

				return StepBytes(acc, (const unsigned char *) s, strlen(s));
			}
		case COLMODE_OUTPUT:
			{
				MemoryContext old = MemoryContextSwitchTo(h->tmpcxt);
				char	   *s = OutputFunctionCall(&col->outfn, value);

				MemoryContextSwitchTo(old);
				h->tmpdirty = true;
				return StepBytes(acc, (const unsigned char *) s, strlen(s));
			}
	}
	pg_unreachable();
}

/*
 * The hash of the hasher's columns of the row in slot: the chain over their
 * values, through fmix64.
 */
uint64
BackfillHashRow(BackfillRowHasher *h, TupleTableSlot *slot)
{
	uint64		acc = ROWHASH_SEED ^ h->seed;

	slot_getsomeattrs(slot, h->maxattidx);
	for (int i = 0; i < h->ncols; i++)
	{
		BackfillColHasher *col = &h->cols[i];

		if (slot->tts_isnull[col->attidx])
			acc = StepNull(acc);
		else
			acc = StepValue(h, col, acc, slot->tts_values[col->attidx]);
	}
	if (h->tmpdirty)
	{
		MemoryContextReset(h->tmpcxt);
		h->tmpdirty = false;
	}
	return BackfillMix64(acc ^ (uint64) h->ncols);
}
