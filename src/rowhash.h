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

typedef struct BackfillRowHasher
{
	int			ncols;
	BackfillColHasher *cols;	/* in the byte order of their names */
	int			maxattidx;		/* highest attidx + 1, for slot_getsomeattrs */
	uint64		k0;				/* the database's row hash key */
	uint64		k1;
	uint64		seed;			/* 0 unless BackfillRowHasherSetSeed set another */
	BackfillSipState start;		/* after the key, the seed and the columns' names */
	MemoryContext tmpcxt;		/* detoasted copies, output strings */
	bool		tmpdirty;
	int			gucnest;		/* GUC nest level of the fixed settings, or 0 */
} BackfillRowHasher;

/* The seed of a second hash family, which confirms what the first (seed 0) matched. */
#define BACKFILL_SECOND_SEED	UINT64CONST(0x5851f42d4c957f2d)

extern BackfillRowHasher *BackfillRowHasherCreate(TupleDesc desc, int ncols,
												  const int *attidx);
extern void BackfillRowHasherSetSeed(BackfillRowHasher *hasher, uint64 seed);
extern uint64 BackfillHashRow(BackfillRowHasher *hasher, TupleTableSlot *slot);
extern uint64 BackfillHashValues(BackfillRowHasher *hasher, const Datum *values,
								 const bool *isnull);

extern Oid	BackfillInstalledSchema(void);
extern char *BackfillKeyCheck(void);
extern void BackfillSealSums(uint64 rows, uint64 sum1, uint64 sum2, uint64 sealed[2]);

#endif							/* BACKFILL_ROWHASH_H */
