/*-------------------------------------------------------------------------
 *
 * src/write/part.h
 *		The partition a write replaces: its bounds and what is known of it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_PART_H
#define BACKFILL_PART_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/pg_list.h"

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
	struct BackfillWriteContext *ctx;	/* the write's context (context.h), or NULL */
} BackfillPart;

extern bool BackfillInBound(BackfillBound *b, Datum key, bool isnull);
extern void BackfillResolvePart(Oid relid, const char *argname, BackfillPart *bp);
extern void BackfillCheckOwnerMayCreate(BackfillPart *bp);
extern void BackfillCheckPartRights(BackfillPart *bp);
extern void BackfillRefuseForcedRowSecurity(BackfillPart *bp);
extern void BackfillRefuseReferencedPartition(BackfillPart *bp);

#endif							/* BACKFILL_PART_H */
