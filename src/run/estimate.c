/*-------------------------------------------------------------------------
 *
 * src/run/estimate.c
 *		backfill_estimate: what a planned run will cost, task by task,
 *		measured on a few of its tasks and scaled to the others.
 *
 * The tasks left (neither done nor skipped) are each given the rows they
 * are scaled by: their partition's, as pg_class counts them from the last
 * VACUUM or ANALYZE (a catalog read: no relation opened, nothing planned),
 * or, for a partition never counted or counted empty, the DEFAULT partition
 * and a plain table's chunks, the planner's row estimate of their bound
 * source (EXPLAIN, as the caller, under the run's search_path).  A few are
 * then done for real, as the run would do them but with no throttle, inside
 * a subtransaction that is always rolled back: the first, the largest and
 * the smallest by those rows when they differ from the first's, and the
 * DEFAULT partition's; each is explained too.  Each measured task gives
 * its rows, the bytes of its relation after it (heap, TOAST, indexes), the
 * WAL this backend wrote for it (pgWalUsage), its time, the time its swap
 * held its locks, and the disk it needed beyond what the table held (a
 * replacement's new copy, beside the old one until the commit; a write in
 * place, what the relation grew).
 * A swap's locks are held to the end of the run's COMMIT, which flushes
 * the swap's WAL and drops the old files and their buffers: the estimate
 * flushes the WAL before it rolls back, and times the rollback, which drops
 * the new files and their buffers, alike in size, under the same locks.
 * Every other task is scaled from them: each figure as a + b * its rows,
 * fitted over the measured tasks by the same kind of rows (a proportion when
 * one task was measured, or when the fit would give a negative constant); a
 * task whose kind of rows no measured task has is explained and scaled by
 * the planner's.
 *
 * Each physical standby's replayed position is read before and after the
 * measured tasks: what it replayed meanwhile is its pace, from which a row
 * each says the lag the run would leave it without a cap, and the run's
 * time with max_replica_lag_ms.
 *
 * Nothing stays: the measured tasks' writes, staging tables and records go
 * with the subtransaction.  Their WAL was written, and their swaps held the
 * partitions' locks for as long as they took: an estimate costs what its
 * measured tasks cost.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_partitioned_table.h"
#include "catalog/pg_type.h"
#include "executor/instrument.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/pg_lsn.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "base/citus.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "base/throttle.h"
#include "run/runstate.h"
#include "run/task.h"
#include "run/window.h"
#include "write/replace.h"

/* the figures of a task, measured or scaled */
#define COST_FIGURES 8
enum
{
	COST_ROWS, COST_HEAP, COST_TOAST, COST_INDEX, COST_WAL, COST_SECONDS, COST_LOCKED, COST_DISK
};

/* the tasks measured for real, at most */
#define MEASURED_MAX 4

typedef struct TaskCost
{
	BackfillTask task;
	Oid			relid;			/* its partition, found without a lock; InvalidOid if none */
	double		part_rows;		/* its partition's rows as VACUUM or ANALYZE last counted them; 0: none */
	double		planner_rows;	/* the planner's estimate of its bound source; 0: not asked */
	bool		measured;
	double		v[COST_FIGURES];
} TaskCost;

/* What a task is scaled by: its partition's rows when it has them, else the planner's. */
#define SCALE_ROWS(t) ((t)->part_rows > 0 ? (t)->part_rows : (t)->planner_rows)

/* The tasks of the run left to do, each with the planner's rows. */
static TaskCost *
TasksLeft(BackfillRun *run, int *n)
{
	Datum		id = Int64GetDatum(run->id);
	Oid			type = INT8OID;
	BackfillPlannedTasks *planned = BackfillCheckPlannedTasks(run, CurrentMemoryContext);
	TaskCost   *tasks;
	SPITupleTable *tt;

	if (BackfillStateExec(run->extschema,
						  psprintf("SELECT task, partition, range_from, range_to, attempts,"
								   " origin OPERATOR(pg_catalog.<>) 'backfill' FROM %s"
								   " WHERE run_id OPERATOR(pg_catalog.=) $1"
								   " AND status OPERATOR(pg_catalog.<>) ALL ('{done,skipped}'::pg_catalog.text[])"
								   " ORDER BY task", BackfillExtName(run->extschema, "backfill_tasks_data")),
						  1, &type, &id, NULL, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read backfill_tasks");
	*n = (int) SPI_processed;
	tt = SPI_tuptable;
	tasks = palloc0(sizeof(TaskCost) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
		BackfillTaskFromRow(tt->vals[i], tt->tupdesc, &tasks[i].task);
	for (int i = 0; i < *n; i++)
	{
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		BackfillRefuseUnplannedRow(run, planned, &tasks[i].task,
								   DatumGetBool(SPI_getbinval(tt->vals[i], tt->tupdesc, 6, &isnull)));
	}
	return tasks;
}

/* The planner's row estimate of a task's bound source, as the caller under the run's search_path. */
static double
PlannerRows(BackfillRun *run, BackfillTask *task)
{
	char	   *bound = BackfillBindWindow(run->source, run->window_type, task->range_from, task->range_to);
	int			nest = NewGUCNestLevel();
	char	   *plan;
	char	   *at;

	(void) set_config_option("search_path", run->opts.search_path, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (SPI_execute(psprintf("EXPLAIN (FORMAT JSON) %s", bound), false, 0) != SPI_OK_UTILITY ||
		SPI_processed != 1)
		elog(ERROR, "could not explain the source of task %d", task->task);
	plan = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	AtEOXact_GUC(true, nest);
	at = plan ? strstr(plan, "\"Plan Rows\": ") : NULL;
	return Max(at ? strtod(at + strlen("\"Plan Rows\": "), NULL) : 0, 1);
}

/*
 * Each task's partition (resolved without a lock: a task checks its own when
 * it runs) and its rows as pg_class holds them from the last VACUUM or
 * ANALYZE: none for the DEFAULT partition, whose rows outside the run's range
 * count there too, nor for a partition never counted or found empty.
 */
static void
PartitionRows(BackfillRun *run, TaskCost *tasks, int n, Oid *defaultpart)
{
	HeapTuple	tup;

	*defaultpart = InvalidOid;
	if (OidIsValid(run->targetoid) &&
		HeapTupleIsValid(tup = SearchSysCache1(PARTRELID, ObjectIdGetDatum(run->targetoid))))
	{
		*defaultpart = ((Form_pg_partitioned_table) GETSTRUCT(tup))->partdefid;
		ReleaseSysCache(tup);
	}
	for (int i = 0; i < n; i++)
	{
		TaskCost   *t = &tasks[i];

		CHECK_FOR_INTERRUPTS();
		if (t->task.partition == NULL)
			continue;
		t->relid = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(t->task.partition)),
									NoLock, true);
		if (!OidIsValid(t->relid) || t->relid == *defaultpart)
			continue;
		tup = SearchSysCache1(RELOID, ObjectIdGetDatum(t->relid));
		if (HeapTupleIsValid(tup))
		{
			t->part_rows = Max(((Form_pg_class) GETSTRUCT(tup))->reltuples, 0);
			ReleaseSysCache(tup);
		}
	}
}

/* One task measured, for MeasureIn in its subtransaction. */
typedef struct MeasureCall
{
	BackfillRun *run;
	TaskCost   *cost;
	instr_time	done;			/* when the task was done, before its rollback */
} MeasureCall;

/* Do the task as the run would, with no throttle, and note what it cost. */
static void
MeasureIn(void *arg)
{
	MeasureCall *c = (MeasureCall *) arg;
	BackfillRun *run = c->run;
	double	   *v = c->cost->v;
	Oid			relid = BackfillTaskRelation(run, &c->cost->task);
	BackfillTaskOutcome out;
	BackfillWriteContext ctx;
	int64		heap,
				toast,
				index,
				before;
	uint64		wal;
	TimestampTz start;

	BackfillRelationBytes(relid, &heap, &toast, &index);
	before = heap + toast + index;
	memset(&out, 0, sizeof(out));
	BackfillTaskSettings(run);
	BackfillTaskContext(run, NULL, NULL, &ctx);
	wal = pgWalUsage.wal_bytes;
	start = GetCurrentTimestamp();
	BackfillTaskWork(run, &c->cost->task, &out, &ctx, NULL);
	v[COST_SECONDS] = (double) (GetCurrentTimestamp() - start) / 1000000.0;

	/*
	 * A swap's locks are held until its COMMIT has flushed the WAL: flush
	 * what the task wrote now (harmless: flushed WAL is only WAL on disk
	 * sooner) and count that time in, as the run's locked_ms counts its
	 * COMMIT; the rollback's time is counted in by the caller.
	 */
	if (!INSTR_TIME_IS_ZERO(ctx.locked_at))
	{
		XLogFlush(XactLastRecEnd);
		v[COST_LOCKED] = BackfillMsSince(ctx.locked_at) / 1000.0;
	}
	v[COST_WAL] = (double) (pgWalUsage.wal_bytes - wal);
	v[COST_ROWS] = (double) out.rows_after;
	BackfillRelationBytes(relid, &heap, &toast, &index);
	v[COST_HEAP] = (double) heap;
	v[COST_TOAST] = (double) toast;
	v[COST_INDEX] = (double) index;
	/* a swapped copy sits beside the old files until the commit unlinks them */
	v[COST_DISK] = !INSTR_TIME_IS_ZERO(ctx.locked_at) ? (double) (heap + toast + index)
		: (double) Max(heap + toast + index - before, 0);
	c->cost->measured = true;
	INSTR_TIME_SET_CURRENT(c->done);
}

/*
 * Measure the first task; the largest and the smallest by the rows they
 * are scaled by (SCALE_ROWS), when they differ from the first's by more
 * than a tenth (the two ends of the fit: a task's fixed cost shows in the
 * small one); and the DEFAULT partition's.  Tasks alike cost one measured
 * task.
 */
static void
MeasureSome(BackfillRun *run, TaskCost *tasks, int n, Oid defaultpart)
{
	int			pick[MEASURED_MAX];
	int			npick = 0;
	int			largest = 0;
	int			smallest = 0;
	double		first = SCALE_ROWS(&tasks[0]);

	for (int i = 1; i < n; i++)
	{
		if (SCALE_ROWS(&tasks[i]) > SCALE_ROWS(&tasks[largest]))
			largest = i;
		if (SCALE_ROWS(&tasks[i]) < SCALE_ROWS(&tasks[smallest]))
			smallest = i;
	}
	pick[npick++] = 0;
	if (SCALE_ROWS(&tasks[largest]) > first * 1.1)
		pick[npick++] = largest;
	if (SCALE_ROWS(&tasks[smallest]) < first * 0.9)
		pick[npick++] = smallest;
	for (int i = 1; i < n && npick < MEASURED_MAX; i++)
		if (i != largest && i != smallest && OidIsValid(defaultpart) && tasks[i].relid == defaultpart)
			pick[npick++] = i;
	for (int k = 0; k < npick; k++)
	{
		MeasureCall c = {run, &tasks[pick[k]]};

		CHECK_FOR_INTERRUPTS();
		/* a measured task anchors both scales */
		if (c.cost->planner_rows <= 0)
			c.cost->planner_rows = PlannerRows(run, &c.cost->task);
		BackfillCallRolledBack(MeasureIn, &c);
		/* the rollback dropped the new files as the COMMIT drops the old, locks held */
		if (c.cost->v[COST_LOCKED] > 0)
			c.cost->v[COST_LOCKED] += BackfillMsSince(c.done) / 1000.0;
	}
}

/*
 * Figure f as a + b * rows over the measured tasks, by their partitions'
 * rows (by_part) or the planner's: least squares; a proportion when one task
 * has them, when they share one value, or when the fit's constant would be
 * negative.  Returns false when no measured task has those rows.
 */
static bool
Fit(TaskCost *tasks, int n, int f, bool by_part, double *a, double *b)
{
	double		sr = 0,
				sm = 0,
				srr = 0,
				srm = 0;
	int			k = 0;

	for (int i = 0; i < n; i++)
	{
		double		r = by_part ? tasks[i].part_rows : tasks[i].planner_rows;

		if (!tasks[i].measured || r <= 0)
			continue;
		sr += r;
		sm += tasks[i].v[f];
		srr += r * r;
		srm += r * tasks[i].v[f];
		k++;
	}
	if (k == 0)
		return false;
	*a = 0;
	*b = sm / sr;
	if (k > 1 && k * srr - sr * sr > 0)
	{
		double		bf = (k * srm - sr * sm) / (k * srr - sr * sr);
		double		af = (sm - bf * sr) / k;

		if (af >= 0 && bf >= 0)
		{
			*a = af;
			*b = bf;
		}
	}
	return true;
}

/*
 * Scale every task not measured from those measured: by its partition's rows
 * when it has them and a measured task has them too, else by the planner's
 * (asked now for a task that had only its partition's).
 */
static void
ScaleOthers(BackfillRun *run, TaskCost *tasks, int n)
{
	double		a[2][COST_FIGURES],
				b[2][COST_FIGURES];
	bool		by_part = false;

	for (int f = 0; f < COST_FIGURES; f++)
	{
		/* whether a measured task has its partition's rows: the same for every figure */
		by_part = Fit(tasks, n, f, true, &a[1][f], &b[1][f]);
		(void) Fit(tasks, n, f, false, &a[0][f], &b[0][f]);
	}
	for (int i = 0; i < n; i++)
	{
		TaskCost   *t = &tasks[i];
		int			by;

		CHECK_FOR_INTERRUPTS();
		if (t->measured)
			continue;
		if (t->part_rows > 0 && !by_part)
		{
			t->planner_rows = PlannerRows(run, &t->task);
			t->part_rows = 0;
		}
		by = t->part_rows > 0 ? 1 : 0;
		for (int f = 0; f < COST_FIGURES; f++)
			t->v[f] = a[by][f] + b[by][f] * SCALE_ROWS(t);
	}
}

/* A physical standby's replayed position at a moment. */
typedef struct StandbyAt
{
	char	   *name;
	XLogRecPtr	replayed;
} StandbyAt;

/*
 * The physical standbys and what each has replayed, read as the throttle
 * reads them (as the extension's owner; none when it may not read them).
 */
static List *
Standbys(BackfillRun *run)
{
	List	   *out = NIL;

	pgstat_clear_snapshot();
	if (BackfillStateExec(run->extschema,
						  "SELECT s.application_name, s.replay_lsn" BACKFILL_PHYSICAL_WALSENDERS
						  " AND s.replay_lsn IS NOT NULL",
						  0, NULL, NULL, NULL, 0) != SPI_OK_SELECT)
		return NIL;
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		StandbyAt  *sb = palloc(sizeof(StandbyAt));
		bool		isnull;

		sb->name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		sb->replayed = DatumGetLSN(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull));
		out = lappend(out, sb);
	}
	return out;
}

/*
 * What each standby will see, from what it replayed while the estimate ran
 * (seconds apart): its replay rate, the lag the run would leave it at its
 * end without a cap, and the run's time with max_replica_lag_ms.  A standby
 * that had caught up by the end replayed all it was sent: its rate is a
 * floor.  One row each after the total: wal_bytes the run's, seconds the
 * run's time at the standby's pace.
 */
static void
PutStandbyRows(ReturnSetInfo *rsinfo, BackfillRun *run, List *before, List *after, double seconds,
			   double wal, double run_seconds)
{
	XLogRecPtr	flushed = GetFlushRecPtr(NULL);
	ListCell   *la;

	foreach(la, after)
	{
		StandbyAt  *a = (StandbyAt *) lfirst(la);
		StandbyAt  *b = NULL;
		ListCell   *lb;
		Datum		values[3 + COST_FIGURES] = {0};
		bool		nulls[3 + COST_FIGURES];
		double		rate;
		char	   *how;

		foreach(lb, before)
			if (strcmp(((StandbyAt *) lfirst(lb))->name, a->name) == 0)
				b = (StandbyAt *) lfirst(lb);
		if (b == NULL || seconds <= 0)
			continue;
		for (int i = 0; i < 3 + COST_FIGURES; i++)
			nulls[i] = true;
		rate = (double) (a->replayed - b->replayed) / seconds;
		if (rate <= 0)
			how = psprintf("standby \"%s\": replayed nothing while the estimate ran (paused, or sent nothing): its lag cannot be told",
						   a->name);
		else
		{
			double		behind = Max(wal / rate - run_seconds, 0);
			double		paced = Max(run_seconds, wal / rate);

			how = psprintf("standby \"%s\": replayed %s%.1f MB/s while the estimate ran; without a cap the run"
						   " would leave it about %s behind at its end%s%s",
						   a->name, a->replayed >= flushed ? "at least " : "", rate / 1048576.0,
						   BackfillDuration(behind),
						   run->opts.throttle.max_replica_lag_ms > 0 ? "; with max_replica_lag_ms the run takes about " : "",
						   run->opts.throttle.max_replica_lag_ms > 0 ? BackfillDuration(paced) : "");
			values[3 + COST_WAL] = Int64GetDatum((int64) wal);
			nulls[3 + COST_WAL] = false;
			values[3 + COST_SECONDS] = Float8GetDatum(paced);
			nulls[3 + COST_SECONDS] = false;
		}
		values[2] = CStringGetTextDatum(how);
		nulls[2] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/* One row of the result: a task (NULL: the total) and its figures. */
static void
PutRow(ReturnSetInfo *rsinfo, TaskCost *t, const char *how, double *v)
{
	Datum		values[3 + COST_FIGURES];
	bool		nulls[3 + COST_FIGURES] = {false};

	values[0] = t ? Int32GetDatum(t->task.task) : (Datum) 0;
	nulls[0] = t == NULL;
	values[1] = t && t->task.partition ? CStringGetTextDatum(t->task.partition) : (Datum) 0;
	nulls[1] = t == NULL || t->task.partition == NULL;
	values[2] = CStringGetTextDatum(how);
	for (int f = 0; f < COST_FIGURES; f++)
		values[3 + f] = (f == COST_SECONDS || f == COST_LOCKED) ? Float8GetDatum(v[f])
			: Int64GetDatum((int64) (v[f] + 0.5));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* The rows of every task, then the total, into the result. */
static void
PutRows(ReturnSetInfo *rsinfo, BackfillRun *run, TaskCost *tasks, int n, double *totals)
{
	double		total[COST_FIGURES] = {0};
	double	   *disk = palloc0(sizeof(double) * n);
	int			measured = 0;
	int			workers = Min(run->opts.max_workers, n);
	int64		free;

	for (int i = 0; i < n; i++)
	{
		PutRow(rsinfo, &tasks[i], tasks[i].measured ? "measured" :
			   tasks[i].part_rows > 0 ? psprintf("scaled by its partition's %.0f rows", tasks[i].part_rows)
			   : psprintf("scaled by the planner's %.0f rows", tasks[i].planner_rows), tasks[i].v);
		for (int f = 0; f < COST_FIGURES; f++)
			total[f] += tasks[i].v[f];
		disk[i] = tasks[i].v[COST_DISK];
		measured += tasks[i].measured;
	}
	/* the peak: the tasks that may run at once, the largest ones */
	total[COST_DISK] = 0;
	for (int w = 0; w < workers; w++)
	{
		int			top = 0;

		for (int i = 1; i < n; i++)
			if (disk[i] > disk[top])
				top = i;
		total[COST_DISK] += disk[top];
		disk[top] = -1;
	}
	total[COST_SECONDS] = (total[COST_SECONDS] + n * run->opts.pause_ms / 1000.0) / Max(workers, 1);
	PutRow(rsinfo, NULL, psprintf("total: %d task%s, %d measured", n, n == 1 ? "" : "s", measured), total);
	memcpy(totals, total, sizeof(total));
	free = OidIsValid(run->targetoid) ? BackfillFreeBytes(run->targetoid) : -1;
	if (free >= 0 && free < (int64) total[COST_DISK])
		ereport(NOTICE,
				(errmsg("run " INT64_FORMAT " needs about " INT64_FORMAT " bytes of disk at its peak; "
						INT64_FORMAT " are free where its target lies", run->id, (int64) total[COST_DISK], free)));
}

PG_FUNCTION_INFO_V1(backfill_estimate);

/* backfill_estimate(run_id bigint) RETURNS TABLE(task, partition, how, rows, ...) */
Datum
backfill_estimate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BackfillRun run;
	TaskCost   *tasks;
	char	   *change;
	int			n;
	List	   *before;
	TimestampTz started;
	double		elapsed;
	double		totals[COST_FIGURES];
	Oid			defaultpart;

	BackfillCheckVersion();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("run_id must not be NULL")));
	PreventCommandIfReadOnly("backfill_estimate()");
	BackfillRequireCoordinator("backfill_estimate");
	BackfillRefuseTransactionSnapshot("backfill_estimate");
	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	BackfillRunLoad(BackfillExtensionSchema(fcinfo), PG_GETARG_INT64(0), &run, false);
	(void) BackfillRunCheckRights(&run, "estimate", false);
	if (run.state == BACKFILL_RUN_DONE || run.state == BACKFILL_RUN_CANCELLED)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run " INT64_FORMAT " is %s: there is nothing left to estimate", run.id, run.status)));
	change = BackfillRunPinnedChange(&run);
	if (change)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s", change),
				 errdetail("An estimate does tasks with the code the run was planned with.")));
	tasks = TasksLeft(&run, &n);
	PartitionRows(&run, tasks, n, &defaultpart);
	for (int i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (tasks[i].part_rows <= 0)
			tasks[i].planner_rows = PlannerRows(&run, &tasks[i].task);
	}
	before = Standbys(&run);
	started = GetCurrentTimestamp();
	if (n > 0)
	{
		MeasureSome(&run, tasks, n, defaultpart);
		ScaleOthers(&run, tasks, n);
	}
	elapsed = (double) (GetCurrentTimestamp() - started) / 1000000.0;
	PutRows(rsinfo, &run, tasks, n, totals);
	PutStandbyRows(rsinfo, &run, before, Standbys(&run), elapsed, totals[COST_WAL], totals[COST_SECONDS]);
	SPI_finish();
	return (Datum) 0;
}
