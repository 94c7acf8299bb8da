/*-------------------------------------------------------------------------
 *
 * src/run/task.c
 *		One task of a run: claimed, checked against the run's plan, written
 *		by the write layer's cores, recorded and committed.
 *
 * Each task is one transaction: the worker claims the task's row FOR UPDATE
 * SKIP LOCKED (so sessions sharing a run never take the same task), writes
 * the data with the write core the task's kind calls for (a partition
 * replaced, a window merged on the run's key, or a window deleted and
 * inserted), reconciles it, records the outcome in the task's row, and
 * commits them together.  The run's context (its id, measures, throttle,
 * the reason for the write) reaches the write layer in one struct
 * (write/context.h), and its outcome comes back in the core's result.  A
 * task that fails is rolled back to a subtransaction around its work, so its
 * failure is recorded and committed without its data.  If the session or the
 * server dies mid-task, the task's transaction never commits: its data and
 * its row stay as they were, pending.
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
#include "executor/instrument.h"
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
#include "run/plan.h"
#include "run/runstate.h"
#include "run/task.h"
#include "run/window.h"
#include "validate/diff.h"
#include "write/context.h"
#include "write/deleteinsert.h"
#include "write/inplace.h"
#include "write/merge.h"
#include "write/part.h"
#include "write/remotesource.h"
#include "write/replace.h"
#include "write/staging.h"
#include "write/swaplock.h"

/*
 * Commit what a step did, and start the next transaction at READ COMMITTED,
 * whatever default_transaction_isolation says: a task's writes must see the
 * rows as they are once it holds its locks (a REPEATABLE READ snapshot,
 * taken when the task is claimed, would not see rows written while it waited
 * for them, and its record would not be the data's).  As SET TRANSACTION
 * ISOLATION LEVEL does, before the transaction's first snapshot.
 */
void
BackfillCommitStep(void)
{
	SPI_commit();
	(void) set_config_option("transaction_isolation", "read committed", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
}

/*
 * The tasks of a run that say they come from its plan (origin backfill), as
 * a call found them and checked them: ordered by task number.
 */
struct BackfillPlannedTasks
{
	int			n;
	int32	   *task;
	char	  **partition;		/* NULL for a chunk */
	char	  **range_from;
	char	  **range_to;
};

/* The error for task (partition, [from, to)) of run, which its plan did not make, and why. */
static void
UnplannedTask(BackfillRun *run, int32 task, const char *partition, const char *from,
			  const char *to, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("run " INT64_FORMAT " holds tasks its plan did not make: task %d (%s, [%s, %s)) %s",
					run->id, task, partition ? partition : "a chunk", from, to, why),
			 errdetail("A task inserted into backfill_tasks_data from outside backfill is never run."),
			 errhint("Tasks come only from backfill_plan: cancel run " INT64_FORMAT " and plan the range again.", run->id)));
}

/*
 * The tasks of run that say they come from its plan, read as the state
 * tables' owner (numbers and text only), and checked as the caller: a plan's
 * tasks tile its range, so each window lies inside the range, is not empty
 * and overlaps no other.  A task added beside them overlaps one.  The
 * windows are typed by the target's column, whose type may run code of its
 * owner's making (a domain's CHECK, an element's input function): they are
 * compared as the role calling backfill, never as the tables' owner.  Once
 * a call, in one statement: the tasks of a plan change only by their status.
 */
BackfillPlannedTasks *
BackfillCheckPlannedTasks(BackfillRun *run, MemoryContext cxt)
{
	BackfillPlannedTasks *p = MemoryContextAllocZero(cxt, sizeof(BackfillPlannedTasks));
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(run->id)};
	MemoryContext old;
	BackfillWindowFault fault;
	int32		other;
	int			bad;

	(void) BackfillStateExec(run->extschema,
							 psprintf("SELECT task, partition, range_from, range_to FROM %s"
									  " WHERE run_id OPERATOR(pg_catalog.=) $1 AND origin OPERATOR(pg_catalog.=) 'backfill'"
									  " ORDER BY task",
									  BackfillExtName(run->extschema, "backfill_tasks_data")),
							 1, types, values, NULL, 0);
	old = MemoryContextSwitchTo(cxt);
	p->n = (int) SPI_processed;
	p->task = palloc(sizeof(int32) * Max(p->n, 1));
	p->partition = palloc(sizeof(char *) * Max(p->n, 1));
	p->range_from = palloc(sizeof(char *) * Max(p->n, 1));
	p->range_to = palloc(sizeof(char *) * Max(p->n, 1));
	for (int i = 0; i < p->n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;

		CHECK_FOR_INTERRUPTS();
		p->task[i] = pg_strtoint32(SPI_getvalue(tup, desc, 1));
		p->partition[i] = SPI_getvalue(tup, desc, 2);
		p->range_from[i] = SPI_getvalue(tup, desc, 3);
		p->range_to[i] = SPI_getvalue(tup, desc, 4);
	}
	MemoryContextSwitchTo(old);
	SPI_freetuptable(SPI_tuptable);

	/* as the caller, outside any statement on the state tables */
	bad = BackfillWindowsOutside(run->window_type, run->range_from, run->range_to, p->n, p->task,
								 p->range_from, p->range_to, &fault, &other);
	if (bad >= 0)
		UnplannedTask(run, p->task[bad], p->partition[bad], p->range_from[bad], p->range_to[bad],
					  fault == WINDOW_OUTSIDE ? psprintf("lies outside the run's range [%s, %s)", run->range_from, run->range_to)
					  : fault == WINDOW_EMPTY ? psprintf("is empty as %s values", run->window_type)
					  : psprintf("overlaps task %d, and the tasks of a plan do not overlap", other));
	return p;
}

/* Order of int32s, for bsearch. */
static int
CompareTaskNumbers(const void *a, const void *b)
{
	int32		x = *(const int32 *) a;
	int32		y = *(const int32 *) b;

	return (x > y) - (x < y);
}

/*
 * A task that backfill_plan did not make is not run.  The tasks' table takes
 * rows from outside backfill (a restore appends to it), and each row says
 * where it came from (origin): a task from outside is refused.  A task of the
 * plan's must be one planned checked (BackfillCheckPlannedTasks), with the same
 * window, and a partition's exactly when the target is partitioned (a
 * partition's bound is checked against its window when it is written).
 * Nothing here compares window values: only numbers and text.
 */
void
BackfillRefuseUnplannedTask(BackfillRun *run, const BackfillPlannedTasks *planned, BackfillTask *task)
{
	Oid			types[2] = {INT8OID, INT4OID};
	Datum		values[2] = {Int64GetDatum(run->id), Int32GetDatum(task->task)};
	bool		isnull;

	(void) BackfillStateExec(run->extschema,
							 psprintf("SELECT coalesce((SELECT t.origin OPERATOR(pg_catalog.<>) 'backfill' FROM %s t"
									  " WHERE t.run_id OPERATOR(pg_catalog.=) $1 AND t.task OPERATOR(pg_catalog.=) $2), true)",
									  BackfillExtName(run->extschema, "backfill_tasks_data")),
							 2, types, values, NULL, 1);
	if (SPI_processed != 1)
		elog(ERROR, "could not read run " INT64_FORMAT, run->id);
	BackfillRefuseUnplannedRow(run, planned, task,
							   DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)));
}

/*
 * The same, for a task whose row the caller read with its origin: outside is
 * whether that origin was not backfill's.
 */
void
BackfillRefuseUnplannedRow(BackfillRun *run, const BackfillPlannedTasks *planned, BackfillTask *task, bool outside)
{
	int32	   *found;
	char	   *why = NULL;

	found = bsearch(&task->task, planned->task, planned->n, sizeof(int32), CompareTaskNumbers);
	if (outside)
		why = "was inserted from outside backfill (its origin is not backfill_plan)";
	else if (task->task < 1)
		why = "has a number no plan gives (a plan numbers its tasks from 1)";
	else if (found == NULL ||
			 strcmp(planned->range_from[found - planned->task], task->range_from) != 0 ||
			 strcmp(planned->range_to[found - planned->task], task->range_to) != 0)
		why = "was written after this call checked the plan's windows";
	else if ((task->partition != NULL) != run->partitioned)
		why = run->partitioned ? psprintf("is a chunk, and every task of a run on %s is a partition", run->target)
			: psprintf("is a partition, and every task of a run on %s is a chunk", run->target);
	if (why)
		UnplannedTask(run, task->task, task->partition, task->range_from, task->range_to, why);
}

/* A task's partition that is no longer the one the run planned is not written. */
static void
RefuseChangedPartition(BackfillRun *run, BackfillTask *task, Oid relid)
{
	char	   *why = BackfillPartitionChanged(relid, run->targetoid, task->range_from, task->range_to);

	if (why)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table %s is not the partition the run planned: %s", task->partition, why),
				 errhint("Cancel the run and plan a new one over the partitions as they are now.")));
}

/* The relation a task writes: its partition, or the plain table. */
Oid
BackfillTaskRelation(BackfillRun *run, BackfillTask *task)
{
	Oid			relid;

	if (task->partition == NULL)
		return run->targetoid;
	relid = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(task->partition)),
							 NoLock, true);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("partition %s of run " INT64_FORMAT " no longer exists", task->partition, run->id)));
	/*
	 * A table of that name that is not the planned partition is not written.
	 * A merge locks the partition first, as backfill_merge will, so that it
	 * cannot be detached between this check and the write; an 'auto' task
	 * that writes in place checks again once it holds the lock (BackfillTaskWork).
	 */
	if (run->strategy == BACKFILL_STRATEGY_MERGE)
		LockRelationOid(relid, ShareRowExclusiveLock);
	RefuseChangedPartition(run, task, relid);
	return relid;
}

/* The window of a task, as a scope on the written table's columns (alias may be NULL). */
char *
BackfillTaskScope(BackfillRun *run, BackfillTask *task, const char *alias)
{
	return BackfillWindowScope(run->window_column, run->window_type, task->range_from,
							   task->range_to, alias);
}

/*
 * Apply a run's settings to the current (sub)transaction, restored at its end.
 * With an I/O budget, the task's index builds and (unless the run sets
 * max_parallel_workers_per_gather) its source run without parallel workers:
 * their pages would be counted only when they finish, in one burst beside the
 * budget, on every core production has.
 */
void
BackfillTaskSettings(BackfillRun *run)
{
	bool		budget = run->opts.throttle.cost_limit > 0;
	const char *gather = run->opts.max_parallel_workers_per_gather;
	struct
	{
		const char *name;
		const char *value;
	}			s[] = {
		{"search_path", run->opts.search_path},
		{"lock_timeout", run->opts.lock_timeout},
		{"work_mem", run->opts.work_mem},
		{"max_parallel_workers_per_gather", gather ? gather : budget ? "0" : NULL},
		{"max_parallel_maintenance_workers", budget ? "0" : NULL},
	};

	for (int i = 0; i < lengthof(s); i++)
		if (s[i].value)
			(void) set_config_option(s[i].name, s[i].value, PGC_USERSET, PGC_S_SESSION,
									 GUC_ACTION_SAVE, true, 0, false);
}

/*
 * The window of a task on the source's rows as the target will store them
 * (a timestamp(0) column stores 23:59:59.7 as the next day's 00:00:00): the
 * source's window column as the target column stores it.
 */
static char *
StoredWindowScope(BackfillRun *run, BackfillTask *task)
{
	Oid			type;
	int32		typmod;
	Oid			coll;
	char	   *col;

	get_atttypetypmodcoll(run->targetoid, get_attnum(run->targetoid, run->window_column), &type, &typmod, &coll);
	col = BackfillStoredValue(psprintf("s.%s", quote_identifier(run->window_column)), InvalidOid, -1,
							  type, typmod);
	return psprintf("%s OPERATOR(pg_catalog.>=) CAST(%s AS %s) AND %s OPERATOR(pg_catalog.<) CAST(%s AS %s)",
					col, quote_literal_cstr(task->range_from), run->window_type,
					col, quote_literal_cstr(task->range_to), run->window_type);
}

/* The rows of relid visible to this transaction, counted up to limit. */
static int64
CountRowsUpTo(Oid relid, int64 limit)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	int64		n = 0;

	while (n < limit && table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		CHECK_FOR_INTERRUPTS();
		n++;
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	table_close(rel, NoLock);
	return n;
}

/*
 * Whether a task of an 'auto' run writes its partition by a delete and an
 * insert rather than a swap: when the partition holds at most
 * small_partition_rows rows (counted, reading no more than that), the fixed
 * cost of a swap's DDL outweighs rewriting the rows in place.  Sets *why to
 * the reason, for the log record.  A partition a foreign key points to is
 * refused, as a swap refuses it: deleting its rows would fire the key's
 * actions.
 */
static bool
TaskWritesInPlace(BackfillRun *run, BackfillTask *task, Oid relid, char **why)
{
	int64		n;
	char	   *fk;

	if (run->strategy != BACKFILL_STRATEGY_AUTO || task->partition == NULL)
		return false;
	/* on Citus the in-place write would lock the coordinator only: swap (citus_swap.c) */
	if (BackfillCitusDistributed(relid))
	{
		*why = psprintf("strategy auto: %s is a partition of a Citus distributed table, so it was swapped",
						BackfillQualifiedName(relid));
		return false;
	}
	n = CountRowsUpTo(relid, run->opts.small_partition_rows + 1);
	if (n > run->opts.small_partition_rows)
	{
		*why = psprintf("strategy auto: %s held more than small_partition_rows (%d) rows, so it was swapped",
						BackfillQualifiedName(relid), run->opts.small_partition_rows);
		return false;
	}
	fk = BackfillQueryText("SELECT pg_catalog.format('%I of table %s', c.conname, c.conrelid::pg_catalog.regclass)"
						   " FROM pg_catalog.pg_constraint c"
						   " WHERE c.contype OPERATOR(pg_catalog.=) 'f'"
						   " AND c.confrelid IN (SELECT a.relid FROM pg_catalog.pg_partition_ancestors($1) a)"
						   " LIMIT 1", relid);
	if (fk != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rewrite partition %s: foreign key %s references it", BackfillQualifiedName(relid), fk),
				 errdetail("Deleting its rows would fire the foreign key's actions on the referencing table."),
				 errhint("Drop the foreign key for the backfill, or plan the run with strategy 'merge'.")));
	*why = psprintf("strategy auto: %s held " INT64_FORMAT " rows, at most small_partition_rows (%d), so it was"
					" written in place, without the DDL of a swap: %s", BackfillQualifiedName(relid), n,
					run->opts.small_partition_rows,
					run->key != NIL ? "merged on the key, only the rows that differ written"
					: "only the rows that differ from the source deleted and inserted, the others kept");
	return true;
}

/* The rows a task wrote, as a query (by name: a swap gave the partition a new OID). */
static char *
WrittenQuery(BackfillRun *run, BackfillTask *task)
{
	const char *rel = task->partition ? task->partition : run->target;

	if (task->partition && run->strategy == BACKFILL_STRATEGY_REPLACE)
		return psprintf("SELECT * FROM ONLY %s", rel);
	return psprintf("SELECT * FROM ONLY %s WHERE %s", rel, BackfillTaskScope(run, task, NULL));
}

/*
 * How task writes: a partition is replaced, unless an 'auto' run writes it in
 * place (small; merged on the key if the run has one, else deleted and
 * inserted); a 'merge' run merges; a chunk of a plain table is deleted and
 * inserted.  *why says why, for the log record (or NULL).
 */
BackfillTaskWrite
BackfillChooseTaskWrite(BackfillRun *run, BackfillTask *task, Oid relid, char **why)
{
	bool		in_place = TaskWritesInPlace(run, task, relid, why);

	if (in_place)
		return run->key == NIL ? BACKFILL_TASK_WRITE_PARTITION : BACKFILL_TASK_WRITE_MERGE;
	if (run->strategy == BACKFILL_STRATEGY_MERGE)
		return BACKFILL_TASK_WRITE_MERGE;
	return task->partition ? BACKFILL_TASK_WRITE_REPLACE : BACKFILL_TASK_WRITE_CHUNK;
}

/* Rows and fingerprints of what a task wrote, and its record, into out. */
static void
TaskWritten(BackfillTaskOutcome *out, int64 logid, int64 rows_before, int64 rows_after,
			const char *fingerprint_before, const char *fingerprint_after)
{
	out->log_id = logid;
	out->rows_before = rows_before;
	out->rows_after = rows_after;
	out->fingerprint_before = pstrdup(fingerprint_before);
	out->fingerprint_after = pstrdup(fingerprint_after);
}

/* A task's replacement of its partition, into out. */
static void
TaskReplace(BackfillRun *run, Oid relid, const char *bound, BackfillWriteContext *ctx,
			BackfillTaskOutcome *out)
{
	BackfillReplaceParams p;
	BackfillReplaceResult r;

	p.part = relid;
	p.source = bound;
	p.keep_old = run->opts.keep_old;
	p.allow_empty = run->opts.allow_empty;
	p.lock_timeout_ms = run->opts.lock_timeout_ms;
	p.max_attempts = 5;
	p.source_server = NULL;		/* read on the standby already (BackfillTaskSource) */
	BackfillReplace(&p, ctx, &r);
	TaskWritten(out, r.log_id, (int64) r.before.rows, (int64) r.after.rows,
				BackfillFingerprintText(&r.before), BackfillFingerprintText(&r.after));
}

/* A task's merge into relid on the run's key, into out; in place, what the source lacks goes. */
static void
TaskMerge(BackfillRun *run, BackfillTask *task, Oid relid, const char *bound, bool in_place,
		  BackfillWriteContext *ctx, BackfillTaskOutcome *out)
{
	BackfillMergeParams p;
	BackfillMergeResult r;

	p.target = relid;
	p.source = bound;
	p.keys = run->key;
	p.scope = BackfillTaskScope(run, task, NULL);
	p.delete_missing = in_place || run->opts.delete_missing;
	p.allow_empty = run->opts.allow_empty;
	p.source_server = NULL;		/* read on the standby already (BackfillTaskSource) */
	BackfillMerge(&p, ctx, &r);
	TaskWritten(out, r.log_id, (int64) r.rows_before, (int64) r.rows_after,
				r.fingerprint_before, r.fingerprint_after);
}

/* A task's delete and insert into written (rows of lockrel), into out. */
static void
TaskDeleteInsert(BackfillRun *run, BackfillTask *task, const char *bound, Oid written, Oid lockrel,
				 BackfillWriteContext *ctx, BackfillTaskOutcome *out)
{
	BackfillDeleteInsertParams p;
	BackfillDeleteInsertResult r;
	bool		through = written == run->targetoid;

	p.written = written;
	p.lockrel = lockrel;
	p.targetoid = run->targetoid;
	p.target = run->target;
	p.source = bound;
	p.scope = through ? BackfillTaskScope(run, task, NULL) : NULL;
	p.stored_scope = through ? StoredWindowScope(run, task) : NULL;
	p.task = task->task;
	p.range_from = task->range_from;
	p.range_to = task->range_to;
	p.allow_empty = run->opts.allow_empty;
	BackfillDeleteInsert(&p, ctx, &r);
	TaskWritten(out, r.log_id, (int64) r.before.rows, (int64) r.after.rows,
				BackfillFingerprintText(&r.before), BackfillFingerprintText(&r.after));
}

/*
 * The source of a task, bound to its window; with options.source_server,
 * computed on that standby into a temporary table (write/remotesource.c),
 * waiting with the run's throttle t for the standby to catch up: then the
 * query reading that table, and *bound the source as bound (else NULL).
 */
char *
BackfillTaskSource(BackfillRun *run, BackfillTask *task, BackfillThrottleState *t, char **bound)
{
	char	   *source = BackfillBindWindow(run->source, run->window_type, task->range_from, task->range_to);
	BackfillRemoteSourceParams p;

	*bound = NULL;
	if (run->opts.source_server == NULL)
		return source;
	memset(&p, 0, sizeof(p));
	p.target = run->targetoid;
	p.server = run->opts.source_server;
	p.source = source;
	p.throttle = t;
	*bound = source;
	return BackfillRemoteSource(&p);
}

/*
 * The work of one task, in the current subtransaction, in the write context
 * ctx: write the data, reconcile it (a replacement, its staging table before
 * the swap), fill out.  Rows that do not reconcile are an error, unless the
 * context only reports.  source: the task's source as BackfillTaskSource
 * gave it, or NULL to ask it.
 */
void
BackfillTaskWork(BackfillRun *run, BackfillTask *task, BackfillTaskOutcome *out, BackfillWriteContext *ctx,
				 const char *source)
{
	char	   *recorded = NULL;
	const char *bound = source ? source : BackfillTaskSource(run, task, ctx->throttle, &recorded);
	Oid			relid = BackfillTaskRelation(run, task);
	char	   *why = NULL;
	BackfillTaskWrite how = BackfillChooseTaskWrite(run, task, relid, &why);
	bool		in_place = how == BACKFILL_TASK_WRITE_PARTITION ||
		(how == BACKFILL_TASK_WRITE_MERGE && run->strategy == BACKFILL_STRATEGY_AUTO);

	ctx->why = why;
	if (recorded != NULL)
		ctx->recorded_source = recorded;
	/* in place, the partition is written as it is once locked: checked again under the lock */
	if (in_place)
	{
		LockRelationOid(relid, ShareRowExclusiveLock);
		RefuseChangedPartition(run, task, relid);
	}
	switch (how)
	{
		case BACKFILL_TASK_WRITE_REPLACE:
			TaskReplace(run, relid, bound, ctx, out);
			break;
		case BACKFILL_TASK_WRITE_MERGE:
			TaskMerge(run, task, relid, bound, in_place, ctx, out);
			break;
		case BACKFILL_TASK_WRITE_PARTITION:
			/* straight into the partition, or through the target under FORCE RLS */
			TaskDeleteInsert(run, task, bound,
							 OidIsValid(BackfillForcedRowSecurity(relid)) ? run->targetoid : relid,
							 relid, ctx, out);
			break;
		case BACKFILL_TASK_WRITE_CHUNK:
			TaskDeleteInsert(run, task, bound, run->targetoid, run->targetoid, ctx, out);
			break;
	}
	/* a replacement reconciled its copy before its swap */
	if (how != BACKFILL_TASK_WRITE_REPLACE)
		BackfillWriteReconcile(ctx, WrittenQuery(run, task), bound);
	out->reconcile = ctx->comparison;
}

/*
 * The write context of a task of run: the run, its measures, its throttle;
 * for a retry, the old rows the first attempt saw (or NULL).
 */
void
BackfillTaskContext(BackfillRun *run, BackfillThrottleState *throttle, const char *expected,
			BackfillWriteContext *ctx)
{
	BackfillWriteContextInit(ctx, run->extschema);
	ctx->run_id = run->id;
	ctx->reconcile = run->opts.reconcile;
	if (run->opts.reconcile != NIL)
		ctx->tolerance = DirectFunctionCall3(numeric_in, CStringGetDatum(run->opts.reconcile_tolerance),
											 ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	ctx->expected_before = expected;
	ctx->throttle = throttle;
}

/* What a task's error means to the run. */
typedef enum TaskError
{
	TASK_ERROR_FAILED,			/* the task failed: recorded, retried by a later call */
	TASK_ERROR_GAVE_WAY,		/* it let a session waiting for its locks go first: done again */
	TASK_ERROR_CANCELLED,		/* this backend was cancelled: recorded, then the call stops */
	TASK_ERROR_SHUTDOWN			/* the server shuts down: the task stays pending */
} TaskError;

/*
 * What edata, a task's error in the write context ctx, means (for a
 * deadlock found by Citus's detector, edata is rewritten as PostgreSQL's).
 *
 * A cancel of this backend that was Citus's distributed deadlock detector
 * choosing this transaction is a lock conflict: the task is done again, as
 * when its swap gives way, and as when PostgreSQL's own detector chose it
 * (40P01, here or on a worker).  Any other cancel of this backend (a
 * client's, pg_cancel_backend) is recorded, then stops the call.  A 57014
 * that is not this backend's cancel (a statement timeout, here or on a
 * worker; a worker's cancel passed on by Citus, or by a foreign server; a
 * RAISE) is a failure like others: a backend's own cancel is told by its
 * message's untranslated format, its only mark.  (A statement timeout that
 * fires with Citus's deadlock cancel reports the timeout: the task fails
 * instead of being done again.)
 */
static TaskError
ClassifyTaskError(ErrorData *edata, const BackfillWriteContext *ctx)
{
	if (edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN || edata->sqlerrcode == ERRCODE_CRASH_SHUTDOWN)
		return TASK_ERROR_SHUTDOWN;
	if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED && edata->message_id != NULL &&
		strcmp(edata->message_id, "canceling statement due to user request") == 0)
	{
		if (!BackfillCitusCancelledByDeadlock())
			return TASK_ERROR_CANCELLED;
		edata->sqlerrcode = ERRCODE_T_R_DEADLOCK_DETECTED;
		edata->message = pstrdup("canceling the transaction since it was involved in a distributed deadlock");
	}
	if (edata->sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED ||
		(ctx->gave_way && edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE))
		return TASK_ERROR_GAVE_WAY;
	return TASK_ERROR_FAILED;
}

/* A task's failure, error edata of kind kind, into out. */
static void
TaskFailed(BackfillTaskOutcome *out, ErrorData *edata, TaskError kind, const BackfillWriteContext *ctx)
{
	memset(out, 0, sizeof(*out));
	out->ok = false;
	out->reconcile = ctx->comparison;	/* the measures that did not reconcile */
	out->cancelled = kind == TASK_ERROR_CANCELLED;
	out->throttle_paused = BackfillThrottlePaused(ctx->throttle) != NULL;
	out->gave_way = kind == TASK_ERROR_GAVE_WAY;
	out->error = edata->detail ? psprintf("%s (%s)", edata->message, edata->detail) : pstrdup(edata->message);
	out->sqlerrcode = edata->sqlerrcode;
	out->message = pstrdup(edata->message);
	out->detail = edata->detail ? pstrdup(edata->detail) : NULL;
	out->rows_before = out->rows_after = -1;
}

/* The bytes of the task's relation now (heap, TOAST, indexes), or -1 when it has none. */
static int64
TaskBytes(BackfillRun *run, BackfillTask *task)
{
	Oid			relid = BackfillTaskRelation(run, task);
	int64		heap,
				toast,
				indexes;

	if (!OidIsValid(relid) || BackfillCitusDistributed(relid))
		return -1;
	BackfillRelationBytes(relid, &heap, &toast, &indexes);
	return heap + toast + indexes;
}

/*
 * Run one task in a subtransaction, in the write context ctx; a failure is
 * caught and described in out, with the subtransaction (and so the task's
 * data) rolled back.
 */
void
BackfillTaskRun(BackfillRun *run, BackfillTask *task, BackfillTaskOutcome *out, BackfillWriteContext *ctx)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	TimestampTz start = GetCurrentTimestamp();
	int			timeout_ms = StatementTimeout;
	uint64		wal = pgWalUsage.wal_bytes;

	memset(out, 0, sizeof(*out));
	if (run->opts.statement_timeout &&
		!parse_int(run->opts.statement_timeout, &timeout_ms, GUC_UNIT_MS, NULL))
		timeout_ms = 0;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		BackfillTaskSettings(run);
		/* the statement timeout counts from the start of each task, not of the CALL */
		disable_timeout(STATEMENT_TIMEOUT, false);
		if (timeout_ms > 0)
			enable_timeout_after(STATEMENT_TIMEOUT, timeout_ms);
		BackfillTaskWork(run, task, out, ctx, NULL);
		disable_timeout(STATEMENT_TIMEOUT, false);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		out->ok = true;
		out->bytes_after = TaskBytes(run, task);
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		TaskError	kind;

		disable_timeout(STATEMENT_TIMEOUT, false);
		edata = BackfillAbortSubtransaction(cxt, owner);
		kind = ClassifyTaskError(edata, ctx);
		/* a shutdown stops the run at once: the task stays pending */
		if (kind == TASK_ERROR_SHUTDOWN)
			ReThrowError(edata);
		TaskFailed(out, edata, kind, ctx);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	out->seconds = (double) (GetCurrentTimestamp() - start) / 1000000.0;
	/* what a failed attempt wrote before its rollback is WAL all the same */
	out->wal_bytes = (int64) (pgWalUsage.wal_bytes - wal);
}

/* Write the outcome of a task into its row. */
void
BackfillTaskRecord(BackfillRun *run, BackfillTask *task, BackfillTaskOutcome *out)
{
	Oid			types[14] = {INT8OID, INT4OID, TEXTOID, INT8OID, INT8OID, TEXTOID, TEXTOID,
	JSONBOID, INT8OID, FLOAT8OID, TEXTOID, INT4OID, INT8OID, INT8OID};
	Datum		values[14];
	char		nulls[14];

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(run->id);
	values[1] = Int32GetDatum(task->task);
	values[2] = CStringGetTextDatum(out->ok ? "done" : "failed");
	values[3] = Int64GetDatum(out->rows_before);
	nulls[3] = out->rows_before < 0 ? 'n' : ' ';
	values[4] = Int64GetDatum(out->rows_after);
	nulls[4] = out->rows_after < 0 ? 'n' : ' ';
	values[5] = out->fingerprint_before ? CStringGetTextDatum(out->fingerprint_before) : (Datum) 0;
	nulls[5] = out->fingerprint_before ? ' ' : 'n';
	values[6] = out->fingerprint_after ? CStringGetTextDatum(out->fingerprint_after) : (Datum) 0;
	nulls[6] = out->fingerprint_after ? ' ' : 'n';
	values[7] = out->reconcile ? DirectFunctionCall1(jsonb_in, CStringGetDatum(out->reconcile)) : (Datum) 0;
	nulls[7] = out->reconcile ? ' ' : 'n';
	values[8] = Int64GetDatum(out->log_id);
	nulls[8] = out->log_id ? ' ' : 'n';
	values[9] = Float8GetDatum(out->seconds);
	values[10] = out->error ? CStringGetTextDatum(out->error) : (Datum) 0;
	nulls[10] = out->error ? ' ' : 'n';
	values[11] = Int32GetDatum(out->gave_ways);
	values[12] = Int64GetDatum(out->wal_bytes);
	values[13] = Int64GetDatum(out->bytes_after);
	nulls[13] = out->ok && out->bytes_after >= 0 ? ' ' : 'n';
	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET status = $3, attempts = attempts + 1, gave_way = gave_way + $12,"
									  " rows_before = $4, rows_after = $5, fingerprint_before = $6,"
									  " fingerprint_after = $7, reconcile = $8, log_id = $9,"
									  " started_at = now(), finished_at = clock_timestamp(), seconds = $10, error = $11,"
									  " wal_bytes = $13, bytes_after = $14"
									  " WHERE run_id = $1 AND task = $2",
									  BackfillExtName(run->extschema, "backfill_tasks_data")),
							 14, types, values, nulls, 0);
}

/*
 * Commit the task's transaction, then write into its row how long the
 * COMMIT took (on Citus, the two-phase commit on every node, which readers
 * blocked by the swap wait for too) and the time the swap held its locks,
 * from the moment it had them all to the end of the COMMIT: what a reader
 * queued behind the swap waits, the log record, the reconcile and the
 * task's bookkeeping under the lock included.  The function cannot time its
 * caller's COMMIT; the run can.  That row's write is its own short
 * transaction, not waited for on disk (synchronous_commit off): a crash can
 * lose the two figures, nothing else.
 */
void
BackfillTaskCommit(BackfillRun *run, BackfillTask *task, BackfillTaskOutcome *out, const BackfillWriteContext *ctx)
{
	instr_time	start;
	double		commit_ms;
	bool		swapped = !INSTR_TIME_IS_ZERO(ctx->locked_at);
	double		locked_ms;

	INSTR_TIME_SET_CURRENT(start);
	BackfillCommitStep();
	commit_ms = BackfillMsSince(start);
	locked_ms = swapped ? BackfillMsSince(ctx->locked_at) : 0;
	if (!out->ok)
		return;
	BackfillCommitUnawaited();
	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET commit_ms = $3, locked_ms = $4"
									  " WHERE run_id OPERATOR(pg_catalog.=) $1 AND task OPERATOR(pg_catalog.=) $2",
									  BackfillExtName(run->extschema, "backfill_tasks_data")),
							 4, (Oid[]) {INT8OID, INT4OID, FLOAT8OID, FLOAT8OID},
							 (Datum[]) {Int64GetDatum(run->id), Int32GetDatum(task->task),
							 Float8GetDatum(commit_ms), Float8GetDatum(locked_ms)},
							 swapped ? NULL : "   n", 0);
	BackfillCommitStep();
}

/* A task from a row of (task, partition, range_from, range_to, attempts). */
void
BackfillTaskFromRow(HeapTuple tup, TupleDesc desc, BackfillTask *task)
{
	task->task = pg_strtoint32(SPI_getvalue(tup, desc, 1));
	task->partition = SPI_getvalue(tup, desc, 2);
	task->range_from = SPI_getvalue(tup, desc, 3);
	task->range_to = SPI_getvalue(tup, desc, 4);
	task->attempts = pg_strtoint32(SPI_getvalue(tup, desc, 5));
}

/* Claim the next task: pending, or failed with attempts left and not failed in this call. */
bool
BackfillTaskClaim(BackfillRun *run, List *failed_here, BackfillTask *task)
{
	Oid			types[3] = {INT8OID, INT4OID, INT4ARRAYOID};
	Datum		values[3];

	task->task = 0;
	values[0] = Int64GetDatum(run->id);
	values[1] = Int32GetDatum(run->opts.max_attempts);
	values[2] = BackfillIntArray(failed_here);
	(void) BackfillStateExec(run->extschema,
							 psprintf("SELECT task, partition, range_from, range_to, attempts FROM %s"
									  " WHERE run_id = $1 AND task <> ALL ($3)"
									  "   AND (status = 'pending' OR (status = 'failed' AND attempts < $2))"
									  " ORDER BY task LIMIT 1 FOR UPDATE SKIP LOCKED",
									  BackfillExtName(run->extschema, "backfill_tasks_data")),
							 3, types, values, NULL, 0);
	if (SPI_processed == 0)
		return false;
	BackfillTaskFromRow(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, task);
	return true;
}
