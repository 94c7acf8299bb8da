/*-------------------------------------------------------------------------
 *
 * src/hash/rowhash.h
 *		Hashing rows by the values they hold, whatever their types.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_ROWHASH_H
#define BACKFILL_ROWHASH_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "utils/typcache.h"

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

typedef struct BackfillColHasher
{
	int			attidx;			/* 0-based position in the slot */
	const char *name;			/* the column's name */
	Oid			typid;			/* its type, under any domain */
	const char *typname;		/* and that type's qualified name, unless built in */
	BackfillValueHasher vh;
} BackfillColHasher;

/* The state of SipHash. */
typedef struct BackfillSipState
{
	uint64		v0;
	uint64		v1;
	uint64		v2;
	uint64		v3;
	uint64		pend;			/* small values not folded yet, */
	int			pendlen;		/* and how many bytes they take */
} BackfillSipState;

/* How a value of a planned row is folded (rowhash.c, PlanPacking). */
typedef enum BackfillPackKind
{
	PACK_SMALL,					/* pass-by-value of 4 bytes or less: packed */
	PACK_FLOAT4,				/* float4, packed, every NaN alike */
	PACK_WORD,					/* pass-by-value of 8 bytes: a word */
	PACK_FLOAT8,				/* float8, a word, every NaN alike */
	PACK_FIXED,					/* fixed length by reference: typlen bytes */
	PACK_VARLENA				/* variable length: its content */
} BackfillPackKind;

/*
 * Where one value of a row goes when every hashed value is of a kind above
 * and none is NULL: such rows fold the same words, in the same places.
 */
typedef struct BackfillPackStep
{
	BackfillPackKind kind;
	int			attidx;			/* 0-based position in the slot */
	int			len;			/* typlen */
	bool		byval;			/* typbyval */
	uint64		mask;			/* PACK_SMALL, PACK_WORD: its bits in a Datum */
	uint64		lenmask;		/* and the bits of its len bytes, loaded from a tuple */
	int			shift;			/* where a packed value goes in its word, in bits */
	bool		last;			/* the last value of its word */
	int			off;			/* where it lies in a heap tuple's data */
	bool		wide;			/* 8 bytes from off lie within the tuple's data */
} BackfillPackStep;

typedef struct BackfillRowHasher
{
	int			ncols;
	BackfillColHasher *cols;	/* in the byte order of their names */
	int			maxattidx;		/* highest attidx + 1, for slot_getsomeattrs */
	uint64		k0;				/* the database's row hash key */
	uint64		k1;
	uint64		seed;			/* 0 unless BackfillRowHasherSetSeed set another */
	BackfillSipState start;		/* after the key, the seed, the columns' names and types */
	MemoryContext tmpcxt;		/* detoasted copies, output strings */
	bool		tmpdirty;
	int			gucnest;		/* GUC nest level of the fixed settings, or 0 */
	/* rows of the kinds a plan covers: one step per column, or NULL */
	BackfillPackStep *pack;
	bool		packsmall;		/* every one PACK_SMALL or PACK_WORD */
	/* the descriptor the steps' offsets were worked out for, and what it was */
	TupleDesc	packdesc;
	Oid			packtype;
	int32		packtypmod;
	int			packnatts;
	bool		packoffsok;		/* its columns up to maxattidx have fixed offsets */
} BackfillRowHasher;

/* The seed of a second hash family, which confirms what the first (seed 0) matched. */
#define BACKFILL_SECOND_SEED	UINT64CONST(0x5851f42d4c957f2d)

extern BackfillRowHasher *BackfillRowHasherCreate(TupleDesc desc, int ncols,
												  const int *attidx);
extern void BackfillRowHasherSetSeed(BackfillRowHasher *hasher, uint64 seed);
extern uint64 BackfillHashRow(BackfillRowHasher *hasher, TupleTableSlot *slot);
extern uint64 BackfillHashValues(BackfillRowHasher *hasher, const Datum *values,
								 const bool *isnull);

/*
 * A fingerprint being computed holds the sums; a finished one is sealed:
 * sum1 and sum2 then hold the 128 bits shown (see BackfillSealSums), which
 * say whether two multisets are equal and nothing else.
 */
typedef struct BackfillFingerprint
{
	uint64		rows;
	uint64		sum1;			/* sum of the row hashes */
	uint64		sum2;			/* sum of a second mix of the row hashes */
	bool		sealed;
} BackfillFingerprint;

/*
 * The second lane's term for a row hash h: a product of h with itself, which
 * is not additive, so two multisets whose first sums meet by chance still
 * differ in the second.
 */
static inline uint64
BackfillFingerprintLane2(uint64 h)
{
	return (h ^ UINT64CONST(0xa4093822299f31d0)) * (h | 1);
}

extern char *BackfillKeyCheck(void);
extern void BackfillSealSums(uint64 rows, uint64 sum1, uint64 sum2, uint64 sealed[2]);

#endif							/* BACKFILL_ROWHASH_H */
