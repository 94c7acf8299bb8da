/*-------------------------------------------------------------------------
 *
 * src/base/untouched.h
 *		Proof that no one wrote a relation between two moments, from its
 *		visibility map; or that no other session did.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_UNTOUCHED_H
#define BACKFILL_UNTOUCHED_H

#include "postgres.h"

#include "storage/block.h"

/* What a relation's storage says of it at one moment. */
typedef struct BackfillUntouched
{
	Oid			relfilenode;	/* 0: gone, or no storage */
	BlockNumber pages;
	BlockNumber all_visible;	/* pages whose all-visible bit is set */
	int64		vacuums;		/* VACUUMs and autovacuums of it so far */
	int64		writes;			/* rows inserted, updated and deleted in it
								 * so far, as sessions reported them */
	bool		own;			/* its storage is this transaction's: no other
								 * session can see it */
} BackfillUntouched;

extern void BackfillReadUntouched(Oid relid, BackfillUntouched *u);
extern bool BackfillUntouchedBetween(const BackfillUntouched *then, const BackfillUntouched *now);
extern bool BackfillOthersUntouched(const BackfillUntouched *then, const BackfillUntouched *now);

#endif							/* BACKFILL_UNTOUCHED_H */
