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

#include "hash/siphash.h"
#include "hash/valuehash.h"

typedef struct BackfillColHasher
{
	int			attidx;			/* 0-based position in the slot */
	const char *name;			/* the column's name */
	Oid			typid;			/* its type, under any domain */
	const char *typname;		/* and that type's qualified name, unless built in */
	BackfillValueHasher vh;
} BackfillColHasher;

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
	BackfillHashScratch scratch;	/* what folding a row's values leaves */
	/* rows of the kinds a plan covers: one step per column, or NULL */
	BackfillPackStep *pack;
	bool		packsmall;		/* every one PACK_SMALL or PACK_WORD */
	/* the descriptor the steps' offsets were worked out for, and what it was */
	TupleDesc	packdesc;
	Oid			packtype;
	int32		packtypmod;
	int			packnatts;
	bool		packoffsok;		/* its columns up to maxattidx have fixed offsets */
	/* BackfillRowHasherForLookups: a one-word value mixed under this key */
	bool		lookups;
	uint64		mixkey;
} BackfillRowHasher;

/* The seed of a second hash family, which confirms what the first (seed 0) matched. */
#define BACKFILL_SECOND_SEED	UINT64CONST(0x5851f42d4c957f2d)

/*
 * The bucket of a row hash in a hash table (simplehash): every bit of it
 * folded into the high half (Fibonacci hashing), which simplehash then masks.
 * The row hash makes no promise about its low bits alone, and a table whose
 * buckets cluster spends its time probing.
 */
static inline uint32
BackfillHashBucket(uint64 h)
{
	return (uint32) ((h * UINT64CONST(0x9e3779b97f4a7c15)) >> 32);
}

extern BackfillRowHasher *BackfillRowHasherCreate(TupleDesc desc, int ncols,
												  const int *attidx);
extern void BackfillRowHasherSetSeed(BackfillRowHasher *hasher, uint64 seed);
extern void BackfillRowHasherForLookups(BackfillRowHasher *hasher);
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

#endif							/* BACKFILL_ROWHASH_H */
