/*-------------------------------------------------------------------------
 *
 * src/write/context.h
 *		What a run's task brings to a write, and what the write tells it
 *		back: passed down with each call, never kept in a process global.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_CONTEXT_H
#define BACKFILL_CONTEXT_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "portability/instr_time.h"

#include "base/throttle.h"

/* the old rows of a partition in words: "N rows of C columns, <fingerprint>" */
#define BACKFILL_BEFORE_LEN 64

typedef struct BackfillWriteContext
{
	/* given by the caller (all zero for a direct call of a write function) */
	Oid			extschema;		/* where the record goes */
	int64		run_id;			/* the run whose task writes (its record's run_id), or 0 */
	const char *why;			/* why the task writes as it does (its record's "why"), or NULL */
	List	   *reconcile;		/* measures (char *) the written rows must agree on, or NIL */
	Datum		tolerance;		/* numeric: how far a measure may differ */
	bool		report_only;	/* rows that do not reconcile are reported, not an error */
	const char *expected_before;	/* a retry: the old rows the first attempt saw, or NULL */
	BackfillThrottleState *throttle;	/* the run's yield to production, or NULL */
	const char *recorded_source;	/* the source the record names when the write reads
									 * its rows from elsewhere (a standby's), or NULL */
	MemoryContext cxt;			/* where what is told back lives */

	/* told back as the write goes: a caller catching its error still reads them */
	bool		gave_way;		/* its swap let a session waiting for it go first */
	instr_time	locked_at;		/* when its swap held all its locks; zero until then */
	char		before[BACKFILL_BEFORE_LEN];	/* the old rows under its lock, or "" */
	char	   *comparison;		/* the reconciliation, as jsonb text, or NULL */
	bool		reconciled;		/* every measure agreed (true with none) */
} BackfillWriteContext;

extern void BackfillWriteContextInit(BackfillWriteContext *ctx, Oid extschema);
extern const char *BackfillWriteRecordedSource(const BackfillWriteContext *ctx, const char *source);
extern void BackfillWriteReconcile(BackfillWriteContext *ctx, const char *written,
								   const char *source);

#endif							/* BACKFILL_CONTEXT_H */
