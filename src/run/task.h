/*-------------------------------------------------------------------------
 *
 * src/run/task.h
 *		One task of a run: claimed, checked against its plan, written by the
 *		write layer's cores in a subtransaction, recorded, committed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_TASK_H
#define BACKFILL_TASK_H

#include "postgres.h"

#include "access/htup.h"
#include "access/tupdesc.h"
#include "nodes/pg_list.h"

#include "base/throttle.h"
#include "run/runstate.h"
#include "write/context.h"

/* What a task did. */
typedef struct BackfillTaskOutcome
{
	bool		ok;
	int64		rows_before;
	int64		rows_after;
	char	   *fingerprint_before;
	char	   *fingerprint_after;
	int64		log_id;
	char	   *reconcile;		/* jsonb text, or NULL */
	char	   *error;			/* a failure as the task's row says: message (detail) */
	int			sqlerrcode;		/* a failure's own SQLSTATE, message and detail */
	char	   *message;
	char	   *detail;
	bool		gave_way;		/* its swap gave way to a session waiting for it, or
								 * a deadlock detector chose it */
	int			gave_ways;		/* how often it did, in this call, before this outcome */
	bool		cancelled;		/* a cancel stopped it: recorded, then the call stops */
	bool		throttle_paused;	/* the throttle stopped it: not recorded, the run pauses */
	double		seconds;
	int64		wal_bytes;		/* the WAL this backend wrote for the task (pgWalUsage) */
	int64		bytes_after;	/* its relation's heap, TOAST and indexes after it; -1: not known */
} BackfillTaskOutcome;

/* The tasks of a run its plan made, as a call checked them (task.c). */
typedef struct BackfillPlannedTasks BackfillPlannedTasks;

extern void BackfillCommitStep(void);
extern BackfillPlannedTasks *BackfillCheckPlannedTasks(BackfillRun *run, MemoryContext cxt);
extern void BackfillRefuseUnplannedTask(BackfillRun *run, const BackfillPlannedTasks *planned,
										BackfillTask *task);
extern void BackfillRefuseUnplannedRow(BackfillRun *run, const BackfillPlannedTasks *planned,
									   BackfillTask *task, bool outside);
extern void BackfillTaskFromRow(HeapTuple tup, TupleDesc desc, BackfillTask *task);
extern bool BackfillTaskClaim(BackfillRun *run, List *failed_here, BackfillTask *task);
extern Oid	BackfillTaskRelation(BackfillRun *run, BackfillTask *task);
extern char *BackfillTaskScope(BackfillRun *run, BackfillTask *task, const char *alias);
extern void BackfillTaskSettings(BackfillRun *run);

/* How a task writes its window: chosen in one place (BackfillChooseTaskWrite). */
typedef enum BackfillTaskWrite
{
	BACKFILL_TASK_WRITE_REPLACE,	/* a partition swapped for a copy filled from the source */
	BACKFILL_TASK_WRITE_MERGE,	/* merged on the run's key (in place, what the source lacks goes) */
	BACKFILL_TASK_WRITE_PARTITION,	/* a small partition deleted and inserted, only the rows that differ */
	BACKFILL_TASK_WRITE_CHUNK	/* a chunk of the target deleted and inserted through it */
} BackfillTaskWrite;

extern BackfillTaskWrite BackfillChooseTaskWrite(BackfillRun *run, BackfillTask *task, Oid relid, char **why);
extern void BackfillTaskContext(BackfillRun *run, BackfillThrottleState *throttle, const char *expected,
								BackfillWriteContext *ctx);
extern char *BackfillTaskSource(BackfillRun *run, BackfillTask *task, BackfillThrottleState *t,
								char **bound);
extern void BackfillTaskWork(BackfillRun *run, BackfillTask *task, BackfillTaskOutcome *out,
							 BackfillWriteContext *ctx, const char *source);
extern void BackfillTaskRun(BackfillRun *run, BackfillTask *task, BackfillTaskOutcome *out,
							BackfillWriteContext *ctx);
extern void BackfillTaskRecord(BackfillRun *run, BackfillTask *task, BackfillTaskOutcome *out);
extern void BackfillTaskCommit(BackfillRun *run, BackfillTask *task, BackfillTaskOutcome *out,
							   const BackfillWriteContext *ctx);

#endif							/* BACKFILL_TASK_H */
