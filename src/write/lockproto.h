/*-------------------------------------------------------------------------
 *
 * src/write/lockproto.h
 *		The lock protocol of a replacement, asserted phase by phase.
 *
 * Each BackfillAssert... is an Assert: it costs nothing unless the server is
 * built with assertions (USE_ASSERT_CHECKING), and then fails, after a
 * WARNING naming the phase, the relation and the mode, when this transaction
 * does not hold what the phase relies on (lockproto.c has the table).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_LOCKPROTO_H
#define BACKFILL_LOCKPROTO_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "storage/lockdefs.h"
#include "write/part.h"

extern bool BackfillHoldsLock(Oid relid, LOCKMODE mode, const char *phase);
extern bool BackfillHoldsLocks(List *relids, LOCKMODE mode, const char *phase);
extern bool BackfillHoldsFillLocks(const BackfillPart *bp, Oid staging, const char *phase);
extern bool BackfillHoldsSwapLocks(const BackfillPart *bp, Oid staging, bool detach_attach,
								   const char *phase);

/* relid is held in mode, or a stronger one, by this transaction */
#define BackfillAssertLocked(relid, mode, phase) \
	Assert(BackfillHoldsLock((relid), (mode), (phase)))

/* so is every relation of the list relids */
#define BackfillAssertAllLocked(relids, mode, phase) \
	Assert(BackfillHoldsLocks((relids), (mode), (phase)))

/* the fill's locks: the partition, and staging when valid */
#define BackfillAssertFillLocks(bp, staging, phase) \
	Assert(BackfillHoldsFillLocks((bp), (staging), (phase)))

/* the swap's locks, of a swap of files or of a DETACH and ATTACH */
#define BackfillAssertSwapLocks(bp, staging, detach_attach, phase) \
	Assert(BackfillHoldsSwapLocks((bp), (staging), (detach_attach), (phase)))

#endif							/* BACKFILL_LOCKPROTO_H */
