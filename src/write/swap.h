/*-------------------------------------------------------------------------
 *
 * src/write/swap.h
 *		Atomic replacement of one partition: shared definitions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_SWAP_H
#define BACKFILL_SWAP_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/params.h"
#include "portability/instr_time.h"

#include "hash/fingerprint.h"

/* The bound of one partition, on the key of its parent. */
typedef struct BackfillBound
{
	Oid			rel;			/* the partition */
	char		strategy;		/* PARTITION_STRATEGY_RANGE or _LIST */
	char	   *keyname;		/* the key column */
	Oid			keytype;
	int32		keytypmod;
	Oid			keycoll;
	FmgrInfo	keycmp;			/* btree comparison of the key type */
	/* RANGE: a missing bound is MINVALUE or MAXVALUE */
	bool		haslower;
	bool		hasupper;
	Datum		lower;
	Datum		upper;
	/* LIST */
	int			nlist;
	Datum	   *list;
	bool		listnull;
} BackfillBound;

/* One leaf partition and what is known of it before a swap. */
typedef struct BackfillPart
{
	Oid			part;
	Oid			parent;
	Oid			nsp;
	char	   *name;			/* unquoted */
	char	   *qualname;		/* schema-qualified, quoted */
	char	   *qualparent;
	BackfillBound own;			/* its bound under its parent */
	List	   *outer;			/* the bounds of its ancestors that can be checked */
	struct PartitionBoundSpec *spec;	/* its bound, as the catalog has it */
	char	   *boundspec;		/* FOR VALUES ... */
	char	   *constraintdef;	/* the partition constraint, as SQL */
	Oid			defaultpart;	/* the parent's DEFAULT partition, or InvalidOid */
	char	   *distcol;		/* the parent's distribution column when it is a Citus
								 * distributed table (citus_swap.c), else NULL */
} BackfillPart;

/* What a swap did. */
typedef struct BackfillSwapResult
{
	Oid			newpart;
	Oid			archived;		/* InvalidOid when the old one was dropped */
	int			attempts;
	double		swap_ms;
} BackfillSwapResult;

extern bool BackfillInBound(BackfillBound *b, Datum key, bool isnull);
extern void BackfillResolvePart(Oid relid, const char *argname, BackfillPart *bp);
extern void BackfillCheckOwnerMayCreate(BackfillPart *bp);
extern void BackfillCheckPartRights(BackfillPart *bp);
extern void BackfillRefuseReferencedPartition(BackfillPart *bp);
extern void BackfillSwapIn(BackfillPart *bp, Oid staging, bool keep_old,
						   int lock_timeout_ms, int max_attempts,
						   BackfillSwapResult *result);
extern Oid	BackfillExtensionSchema(FunctionCallInfo fcinfo);

/* swaplock.c */
extern bool BackfillSwapGaveWay;
extern int	BackfillLockForSwap(BackfillPart *bp, int lock_timeout_ms, int max_attempts);
extern void BackfillBackOff(int attempt, int lock_timeout_ms);

/* replace.c */
extern void BackfillDescribeBound(BackfillPart *bp);
extern void BackfillLockPart(Oid relid, const char *argname, const char *source, bool bound_params,
							 BackfillPart *bp);
extern void BackfillRefuseTransactionSnapshot(const char *func);
/* Where the time of a replacement's copy went, in milliseconds. */
typedef struct BackfillStageTimes
{
	double		fingerprint_ms; /* the partition's rows before */
	double		fill_ms;		/* the source read, its rows checked, hashed and written */
	double		index_ms;		/* the indexes built from the rows */
	double		analyze_ms;		/* planner statistics gathered */
} BackfillStageTimes;

/* Milliseconds since start. */
static inline double
BackfillMsSince(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

extern Oid	BackfillStage(BackfillPart *bp, const char *source, int nargs, Oid *argtypes,
						  ParamListInfo params, bool allow_empty,
						  BackfillFingerprint *before, BackfillFingerprint *after,
						  BackfillStageTimes *times);

#endif							/* BACKFILL_SWAP_H */
