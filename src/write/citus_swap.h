/*-------------------------------------------------------------------------
 *
 * src/write/citus_swap.h
 *		backfill_replace_partition on a Citus distributed partitioned table.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_CITUS_SWAP_H
#define BACKFILL_CITUS_SWAP_H

#include "postgres.h"

#include "executor/spi.h"
#include "nodes/params.h"

#include "write/part.h"

struct ErrorData;
extern void BackfillCitusRefuseReplace(BackfillPart *bp);
extern void BackfillCitusDistributeStaging(BackfillPart *bp, Oid staging);
extern void BackfillCitusFillStaging(BackfillPart *bp, Oid staging, SPIPlanPtr srcplan,
									 const char *source, int nargs, Oid *argtypes,
									 ParamListInfo params);
extern void BackfillCitusLockForSwap(BackfillPart *bp, int timeout_ms, const char *restore);
extern bool BackfillCitusLockTimedOut(struct ErrorData *edata);

#endif							/* BACKFILL_CITUS_SWAP_H */
