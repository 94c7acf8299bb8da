/*-------------------------------------------------------------------------
 *
 * src/write/swaplock.h
 *		The locks of a swap, taken without queueing readers behind them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_SWAPLOCK_H
#define BACKFILL_SWAPLOCK_H

#include "postgres.h"

#include "portability/instr_time.h"
#include "write/part.h"

extern int	BackfillLockForSwap(BackfillPart *bp, bool parent, int lock_timeout_ms, int max_attempts);
extern void BackfillBackOff(int attempt, int lock_timeout_ms);

#endif							/* BACKFILL_SWAPLOCK_H */
