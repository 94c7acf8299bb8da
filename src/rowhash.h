/*-------------------------------------------------------------------------
 *
 * src/rowhash.h
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

/* How one column's values are turned into bytes to hash. */
typedef enum BackfillColMode
{
	COLMODE_BYVAL,				/* pass-by-value: the value itself */
	COLMODE_FIXED,				/* fixed-length by reference: typlen bytes */
	COLMODE_VARLENA,			/* variable length: detoasted content */
	COLMODE_CSTRING,			/* cstring: its characters */
	COLMODE_OUTPUT				/* anything else: the type's text output */
} BackfillColMode;

typedef struct BackfillColHasher
{
	int			attidx;			/* 0-based position in the slot */
	uint64		key;			/* hash key of this position in the row */
	BackfillColMode mode;
	int16		typlen;
	FmgrInfo	outfn;			/* for COLMODE_OUTPUT */
} BackfillColHasher;

typedef struct BackfillRowHasher
{
	int			ncols;
	BackfillColHasher *cols;
	int			maxattidx;		/* highest attidx + 1, for slot_getsomeattrs */
	uint64		seed;			/* 0 unless a caller needs another hash family */
	MemoryContext tmpcxt;		/* detoasted copies and output strings */
	bool		tmpdirty;
} BackfillRowHasher;

extern BackfillRowHasher *BackfillRowHasherCreate(TupleDesc desc, int ncols,
												  const int *attidx);
extern uint64 BackfillHashRow(BackfillRowHasher *hasher, TupleTableSlot *slot);

/* Final mix of a 64-bit value (MurmurHash3's fmix64): every bit affects every bit. */
static inline uint64
BackfillMix64(uint64 h)
{
	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64CONST(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

#endif							/* BACKFILL_ROWHASH_H */
