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

#define P0		UINT64CONST(0xa0761d6478bd642f)
#define P1		UINT64CONST(0xe7037ed1a0b428db)
#define P2		UINT64CONST(0x8ebc6af09c88c6e3)
#define P3		UINT64CONST(0x589965cc75374cc3)
#define NULL_KEY	UINT64CONST(0x13198a2e03707344)

/*
 * Multiply to 128 bits and fold the halves together: every bit of both
 * factors reaches the result, at the cost of one multiplication.
 */
static inline uint64
Mum(uint64 a, uint64 b)
{
#ifdef HAVE_INT128
	uint128		r = (uint128) a * b;

	return (uint64) r ^ (uint64) (r >> 64);
#else
	uint64		ha = a >> 32,
				la = (uint32) a,
				hb = b >> 32,
				lb = (uint32) b;
	uint64		rh = ha * hb,
				rm0 = ha * lb,
				rm1 = hb * la,
				rl = la * lb;
	uint64		t = rl + (rm0 << 32);
	uint64		lo = t + (rm1 << 32);
	uint64		hi = rh + (rm0 >> 32) + (rm1 >> 32) + (t < rl) + (lo < t);

	return lo ^ hi;
#endif
}

/* Unaligned reads. */
static inline uint64
Read8(const unsigned char *p)
{
	uint64		v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint64
Read4(const unsigned char *p)
{
	uint32		v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * The hash of a byte string under key: 16-byte blocks folded with Mum, the
 * last 1-16 bytes read as two overlapping words (never byte by byte, which
 * would stall on store forwarding), the length folded in last.  The shape of
 * wyhash, the fastest portable hash for short strings.
 */
static inline uint64
HashBytes(const unsigned char *p, size_t len, uint64 key)
{
	uint64		see = key ^ P0;
	uint64		a;
	uint64		b;

	if (len <= 16)
	{
		if (len >= 4)
		{
			size_t		off = (len >> 3) << 2;

			a = (Read4(p) << 32) | Read4(p + off);
			b = (Read4(p + len - 4) << 32) | Read4(p + len - 4 - off);
		}
		else if (len > 0)
		{
			a = ((uint64) p[0] << 16) | ((uint64) p[len >> 1] << 8) | p[len - 1];
			b = 0;
		}
		else
			a = b = 0;
	}
	else
	{
		size_t		i = len;

		while (i > 16)
		{
			see = Mum(Read8(p) ^ P1, Read8(p + 8) ^ see);
			p += 16;
			i -= 16;
		}
		a = Read8(p + i - 16);
		b = Read8(p + i - 8);
	}
	return Mum(P1 ^ (uint64) len, Mum(a ^ P1, b ^ see));
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
		col->key = BackfillMix64((uint64) (h->ncols + 1) * P0);
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

/* The hash of one non-NULL value under the key of its column. */
static inline uint64
HashValue(BackfillRowHasher *h, BackfillColHasher *col, uint64 key, Datum value)
{
	switch (col->mode)
	{
		case COLMODE_BYVAL:
			{
				uint64		v = (uint64) value;

				if (col->typlen < (int) sizeof(Datum))
					v &= (UINT64CONST(1) << (col->typlen * 8)) - 1;
				return Mum(v ^ key, P2);
			}
		case COLMODE_FIXED:
			return HashBytes((const unsigned char *) DatumGetPointer(value), col->typlen, key);
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
				return HashBytes((const unsigned char *) VARDATA_ANY(p),
								 VARSIZE_ANY_EXHDR(p), key);
			}
		case COLMODE_CSTRING:
			{
				const char *s = DatumGetCString(value);

				return HashBytes((const unsigned char *) s, strlen(s), key);
			}
		case COLMODE_OUTPUT:
			{
				MemoryContext old = MemoryContextSwitchTo(h->tmpcxt);
				char	   *s = OutputFunctionCall(&col->outfn, value);

				MemoryContextSwitchTo(old);
				h->tmpdirty = true;
				return HashBytes((const unsigned char *) s, strlen(s), key);
			}
	}
	pg_unreachable();
}

/*
 * The hash of the hasher's columns of the row in slot.  Each column's value
 * is hashed under a key of its own (its position, and the hasher's seed), so
 * the column hashes are independent of one another and the processor
 * computes them side by side; their sum then goes through fmix64, which
 * makes the row hash a non-linear function of the whole row.
 */
uint64
BackfillHashRow(BackfillRowHasher *h, TupleTableSlot *slot)
{
	uint64		sum = 0;

	slot_getsomeattrs(slot, h->maxattidx);
	for (int i = 0; i < h->ncols; i++)
	{
		BackfillColHasher *col = &h->cols[i];
		uint64		key = col->key ^ h->seed;

		if (slot->tts_isnull[col->attidx])
			sum += Mum(key ^ NULL_KEY, P3);
		else
			sum += HashValue(h, col, key, slot->tts_values[col->attidx]);
	}
	if (h->tmpdirty)
	{
		MemoryContextReset(h->tmpcxt);
		h->tmpdirty = false;
	}
	return BackfillMix64(sum ^ (uint64) h->ncols);
}
