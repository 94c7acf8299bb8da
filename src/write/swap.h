/*-------------------------------------------------------------------------
 *
 * src/write/swap.h
 *		Swapping a filled staging table in for a partition, atomically.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_SWAP_H
#define BACKFILL_SWAP_H

#include "postgres.h"

#include "write/part.h"

/* What a swap did. */
typedef struct BackfillSwapResult
{
	Oid			newpart;
	Oid			archived;		/* InvalidOid when the old one was dropped */
	int			attempts;
	double		swap_ms;
} BackfillSwapResult;

extern void BackfillSwapIn(BackfillPart *bp, Oid staging, bool keep_old,
						   int lock_timeout_ms, int max_attempts,
						   BackfillSwapResult *result);

#endif							/* BACKFILL_SWAP_H */
