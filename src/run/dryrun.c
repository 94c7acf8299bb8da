/*-------------------------------------------------------------------------
 *
 * src/run/dryrun.c
 *		backfill_dry_run: one task of a run computed as the run would, shown
 *		beside the rows it would replace, and rolled back.
 *
 * The task is chosen and checked as a run checks it (its plan, its pinned
 * code, the caller's rights), then computed in a subtransaction that is
 * always rolled back: a partition to be swapped has its copy filled and
 * reconciled, no swap; a window written in place is written by the same
 * task work a run does.  What it computed over the rows is shown only to a
 * role that may see them all.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/regproc.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "base/throttle.h"
#include "hash/fingerprint.h"
#include "record/log.h"
#include "run/runstate.h"
#include "run/task.h"
#include "run/window.h"
#include "validate/diff.h"
#include "write/context.h"
#include "write/deleteinsert.h"
#include "write/inplace.h"
#include "write/merge.h"
#include "write/part.h"
#include "write/replace.h"
#include "write/staging.h"
#include "write/swaplock.h"

/* the rows of a diff a dry run shows */
#define DRY_RUN_SAMPLES 5

/*
 * Added, removed and changed rows between two queries, and a sample, into
 * the out arguments: matched on the run's key as backfill_diff matches them,
 * or without a key as multisets; both compare by representation, as the
 * fingerprint does.  Without a key, old is read on oldsnap when it is valid.
 * The sample holds the first DRY_RUN_SAMPLES rows of the diff.
 */
static void
Compare(BackfillRun *run, const char *old, Snapshot oldsnap, const char *new, int64 *added,
		int64 *removed, int64 *changed, bool *changed_null, char **sample)
{
	if (run->key == NIL)
	{
		BackfillMultisetDiff(old, oldsnap, new, added, removed, sample);
		*changed = 0;
		*changed_null = true;
		return;
	}
	/* what backfill_diff would return, on a snapshot that sees the task's own writes */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	BackfillDiffSummary(old, new, run->key, DRY_RUN_SAMPLES, added, removed, changed, sample);
	PopActiveSnapshot();
	*changed_null = false;
}

/* What a dry run found out about its task. */
typedef struct DryRun
{
	BackfillFingerprint before;
	BackfillFingerprint after;
	int64		added;
	int64		removed;
	int64		changed;
	bool		changed_null;
	char	   *sample;
	char	   *reconcile;
	bool		reconciled;
	bool		shown;			/* may the caller see what was computed over the rows? */
} DryRun;

/* The task a dry run computes: the one named, or (any_task) the first not done. */
static void
DryRunTask(BackfillRun *run, bool any_task, int taskno, BackfillTask *task)
{
	Oid			types[2] = {INT8OID, INT4OID};
	Datum		v[2] = {Int64GetDatum(run->id), Int32GetDatum(taskno)};
	char		n[2] = {' ', any_task ? 'n' : ' '};

	if (BackfillStateExec(run->extschema,
						  psprintf("SELECT task, partition, range_from, range_to, attempts FROM %s"
								   " WHERE run_id OPERATOR(pg_catalog.=) $1"
								   " AND CASE WHEN $2 IS NULL THEN status OPERATOR(pg_catalog.<>) ALL ('{done,skipped}'::pg_catalog.text[])"
								   " ELSE task OPERATOR(pg_catalog.=) $2 END ORDER BY task LIMIT 1",
								   BackfillExtName(run->extschema, "backfill_tasks_data")),
						  2, types, v, n, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read backfill_tasks");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 any_task
				 ? errmsg("run " INT64_FORMAT " has no task left to run", run->id)
				 : errmsg("run " INT64_FORMAT " has no task %d", run->id, taskno)));
	BackfillTaskFromRow(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, task);
	BackfillRefuseUnplannedTask(run, BackfillCheckPlannedTasks(run, CurrentMemoryContext), task);
}

/* A task that swaps: its copy filled as the task would fill it, refusing what it refuses, no swap. */
static void
DryRunSwap(BackfillRun *run, Oid relid, const char *bound, DryRun *dr)
{
	BackfillPart bp;
	char	   *stagename;
	BackfillWriteContext ctx;

	BackfillLockPart(relid, "task", bound, false, &bp);
	BackfillRefuseReferencedPartition(&bp);
	stagename = BackfillQualifiedName(BackfillStage(&bp, bound, 0, NULL, NULL, run->opts.allow_empty,
													&dr->before, &dr->after, NULL));
	Compare(run, psprintf("SELECT * FROM ONLY %s", bp.qualname), InvalidSnapshot,
			psprintf("SELECT * FROM %s", stagename), &dr->added, &dr->removed, &dr->changed,
			&dr->changed_null, &dr->sample);
	/* the dry run shows every measure */
	BackfillTaskContext(run, NULL, NULL, &ctx);
	ctx.report_only = true;
	BackfillWriteReconcile(&ctx, psprintf("SELECT * FROM %s", stagename), bound);
	dr->reconcile = ctx.comparison;
	dr->reconciled = ctx.reconciled;
}

/* A task that writes in place: done as the task does it, compared with the rows before. */
static void
DryRunInPlace(BackfillRun *run, BackfillTask *task, Oid relid, const char *bound, DryRun *dr)
{
	char	   *scope = BackfillTaskScope(run, task, NULL);
	char	   *rows = psprintf("SELECT %s FROM ONLY %s WHERE %s", BackfillSourceColumns(bound, InvalidOid, NULL),
								BackfillQualifiedName(relid), scope);
	Snapshot	old;
	BackfillTaskOutcome out;
	BackfillWriteContext ctx;

	BackfillFingerprintRel(relid, scope, false, &dr->before);
	if (run->key != NIL)
		Compare(run, rows, InvalidSnapshot, bound, &dr->added, &dr->removed, &dr->changed,
				&dr->changed_null, &dr->sample);
	/* without a key: the window's rows before the task (on this snapshot) and after it */
	old = RegisterSnapshot(GetTransactionSnapshot());
	memset(&out, 0, sizeof(out));
	BackfillTaskContext(run, NULL, NULL, &ctx);
	ctx.report_only = true;
	BackfillTaskWork(run, task, &out, &ctx, bound);
	dr->reconciled = ctx.reconciled;
	BackfillFingerprintRel(relid, scope, false, &dr->after);
	if (run->key == NIL)
		Compare(run, rows, old, rows, &dr->added, &dr->removed, &dr->changed, &dr->changed_null, &dr->sample);
	UnregisterSnapshot(old);
	dr->reconcile = out.reconcile;
}

/* A dry run's task, for DryRunComputeIn. */
typedef struct DryRunCall
{
	BackfillRun *run;
	BackfillTask *task;
	DryRun	   *dr;
} DryRunCall;

/* The work of DryRunCompute, in its subtransaction. */
static void
DryRunComputeIn(void *arg)
{
	DryRunCall *c = (DryRunCall *) arg;
	BackfillRun *run = c->run;
	BackfillTask *task = c->task;
	Oid			relid = BackfillTaskRelation(run, task);
	char	   *why = NULL;
	char	   *bound;
	char	   *recorded;

	BackfillTaskSettings(run);
	bound = BackfillTaskSource(run, task, NULL, &recorded);

	/*
	 * What the dry run computes over the rows is shown only to a role that
	 * sees them all: the partition is read directly, outside its parents'
	 * policies, and the log would show the task's record only so too.
	 */
	c->dr->shown = BackfillMaySeeRows(relid);
	if (BackfillChooseTaskWrite(run, task, relid, &why) == BACKFILL_TASK_WRITE_REPLACE)
		DryRunSwap(run, relid, bound, c->dr);
	else
		DryRunInPlace(run, task, relid, bound, c->dr);
}

/* Compute the task into dr inside a subtransaction that is always rolled back. */
static void
DryRunCompute(BackfillRun *run, BackfillTask *task, DryRun *dr)
{
	DryRunCall	c = {run, task, dr};

	BackfillCallRolledBack(DryRunComputeIn, &c);
}

PG_FUNCTION_INFO_V1(backfill_dry_run);

/* backfill_dry_run(run_id bigint, task integer) RETURNS TABLE(...) */
Datum
backfill_dry_run(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BackfillRun run;
	BackfillTask task;
	char	   *change;
	TimestampTz start;
	DryRun		dr;
	Datum		values[15];
	bool		nulls[15] = {false};

	BackfillCheckVersion();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("run_id must not be NULL")));
	PreventCommandIfReadOnly("backfill_dry_run()");
	BackfillRequireCoordinator("backfill_dry_run");
	BackfillRefuseTransactionSnapshot("backfill_dry_run");
	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	BackfillRunLoad(BackfillExtensionSchema(fcinfo), PG_GETARG_INT64(0), &run, false);
	(void) BackfillRunCheckRights(&run, "dry-run", false);
	change = BackfillRunPinnedChange(&run);
	if (change)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s", change),
				 errdetail("A dry run computes the task with the code the run was planned with.")));
	DryRunTask(&run, PG_ARGISNULL(1), PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1), &task);

	memset(&dr, 0, sizeof(dr));
	dr.reconciled = true;
	start = GetCurrentTimestamp();
	DryRunCompute(&run, &task, &dr);

	values[0] = Int32GetDatum(task.task);
	values[1] = task.partition ? CStringGetTextDatum(task.partition) : (Datum) 0;
	nulls[1] = task.partition == NULL;
	values[2] = CStringGetTextDatum(task.range_from);
	values[3] = CStringGetTextDatum(task.range_to);
	values[4] = Int64GetDatum((int64) dr.before.rows);
	values[5] = Int64GetDatum((int64) dr.after.rows);
	values[6] = CStringGetTextDatum(BackfillFingerprintText(&dr.before));
	values[7] = CStringGetTextDatum(BackfillFingerprintText(&dr.after));
	values[8] = Int64GetDatum(dr.added);
	values[9] = Int64GetDatum(dr.removed);
	values[10] = Int64GetDatum(dr.changed);
	nulls[10] = dr.changed_null;
	values[11] = DirectFunctionCall1(jsonb_in, CStringGetDatum(dr.sample ? dr.sample : "[]"));
	values[12] = dr.reconcile ? DirectFunctionCall1(jsonb_in, CStringGetDatum(dr.reconcile)) : (Datum) 0;
	nulls[12] = dr.reconcile == NULL;
	values[13] = BoolGetDatum(dr.reconciled);
	values[14] = Float8GetDatum((double) (GetCurrentTimestamp() - start) / 1000000.0);
	if (!dr.shown)
		for (int c = 4; c <= 13; c++)
			nulls[c] = true;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	SPI_finish();
	return (Datum) 0;
}
