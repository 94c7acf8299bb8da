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
 * The hashes of a row's columns are chained through a non-linear mix in
 * column order: swapping two values between two rows changes both row
 * hashes, which a linear combination of column hashes would not see.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "rowhash.h"

#define ROWHASH_SEED	UINT64CONST(0x243f6a8885a308d3)
#define NULL_HASH		UINT64CONST(0x13198a2e03707344)
#define GOLDEN			UINT64CONST(0x9e3779b97f4a7c15)

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

/* The hash of one non-NULL value. */
static inline uint64
HashValue(BackfillRowHasher *h, BackfillColHasher *col, Datum value)
{
	switch (col->mode)
	{
		case COLMODE_BYVAL:
			{
				uint64		v = (uint64) value;

				if (col->typlen < (int) sizeof(Datum))
					v &= (UINT64CONST(1) << (col->typlen * 8)) - 1;
				return BackfillMix64(v ^ GOLDEN ^ h->seed);
			}
		case COLMODE_FIXED:
			return hash_bytes_extended((const unsigned char *) DatumGetPointer(value),
									   col->typlen, h->seed);
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
				return hash_bytes_extended((const unsigned char *) VARDATA_ANY(p),
										   VARSIZE_ANY_EXHDR(p), h->seed + 1);
			}
		case COLMODE_CSTRING:
			{
				const char *s = DatumGetCString(value);

				return hash_bytes_extended((const unsigned char *) s, strlen(s), h->seed + 2);
			}
		case COLMODE_OUTPUT:
			{
				MemoryContext old = MemoryContextSwitchTo(h->tmpcxt);
				char	   *s = OutputFunctionCall(&col->outfn, value);

				MemoryContextSwitchTo(old);
				h->tmpdirty = true;
				return hash_bytes_extended((const unsigned char *) s, strlen(s), h->seed + 3);
			}
	}
	pg_unreachable();
}

/* The hash of the hasher's columns of the row in slot. */
uint64
BackfillHashRow(BackfillRowHasher *h, TupleTableSlot *slot)
{
	uint64		acc = ROWHASH_SEED;

	slot_getsomeattrs(slot, h->maxattidx);
	for (int i = 0; i < h->ncols; i++)
	{
		BackfillColHasher *col = &h->cols[i];
		uint64		c;

		if (slot->tts_isnull[col->attidx])
			c = NULL_HASH;
		else
			c = HashValue(h, col, slot->tts_values[col->attidx]);
		acc = BackfillMix64(acc ^ (c + GOLDEN + (acc << 6) + (acc >> 2)));
	}
	if (h->tmpdirty)
	{
		MemoryContextReset(h->tmpcxt);
		h->tmpdirty = false;
	}
	return acc;
}
