/*-------------------------------------------------------------------------
 *
 * src/run/run.c
 *		backfill_run, the procedure that works a run off task by task, and
 *		backfill_dry_run, which computes one task and rolls it back.
 *
 * Each task is one transaction: the worker claims the task's row FOR UPDATE
 * SKIP LOCKED (so sessions sharing a run never take the same task), writes
 * the data with a write strategy (backfill_replace_partition for a
 * partition, backfill_merge on the task's window, or a delete and insert of
 * a plain table's chunk), reconciles it, records the outcome in the task's
 * row, and commits them together.  A task that fails is rolled back to a
 * subtransaction around its work, so its failure is recorded and committed
 * without its data.  If the session or the server dies mid-task, the task's
 * transaction never commits: its data and its row stay as they were, pending.
 *
 * Between tasks nothing is held: the worker re-reads the run (a pause or a
 * cancel takes effect there), re-checks the caller's rights and the pinned
 * code, and takes one of the run's max_workers slots (a transaction-level
 * advisory lock) before claiming the next task.  When no task is left, the
 * worker that sees it, under the run row's lock, refreshes the dependent
 * materialized views, checks the fingerprints of what lay outside the range,
 * and marks the run done.
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
#include "run/plan.h"
#include "run/runstate.h"
#include "run/window.h"
#include "validate/diff.h"
#include "write/context.h"
#include "write/inplace.h"
#include "write/merge.h"
#include "write/part.h"
#include "write/replace.h"
#include "write/staging.h"
#include "write/swaplock.h"

/* locktag_field4 of the advisory locks that are the worker slots of runs */
#define RUN_SLOT_LOCK 0x4246

/* What a task did. */
typedef struct TaskOutcome
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
} TaskOutcome;

/* How often a task whose swap gave way is tried again in the same call. */
#define GIVE_WAY_RETRIES 10


/*
 * Commit what a step did, and start the next transaction at READ COMMITTED,
 * whatever default_transaction_isolation says: a task's writes must see the
 * rows as they are once it holds its locks (a REPEATABLE READ snapshot,
 * taken when the task is claimed, would not see rows written while it waited
 * for them, and its record would not be the data's).  As SET TRANSACTION
 * ISOLATION LEVEL does, before the transaction's first snapshot.
 */
static void
CommitStep(void)
{
	SPI_commit();
	(void) set_config_option("transaction_isolation", "read committed", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
}

/*
 * The tasks of a run that say they come from its plan (origin backfill), as
 * a call found them and checked them: ordered by task number.
 */
typedef struct PlannedTasks
{
	int			n;
	int32	   *task;
	char	  **partition;		/* NULL for a chunk */
	char	  **range_from;
	char	  **range_to;
} PlannedTasks;

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
static PlannedTasks *
CheckPlannedTasks(BackfillRun *run, MemoryContext cxt)
{
	PlannedTasks *p = MemoryContextAllocZero(cxt, sizeof(PlannedTasks));
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
 * plan's must be one planned checked (CheckPlannedTasks), with the same
 * window, and a partition's exactly when the target is partitioned (a
 * partition's bound is checked against its window when it is written).
 * Nothing here compares window values: only numbers and text.
 */
static void
RefuseUnplannedTask(BackfillRun *run, const PlannedTasks *planned, BackfillTask *task)
{
	Oid			types[2] = {INT8OID, INT4OID};
	Datum		values[2] = {Int64GetDatum(run->id), Int32GetDatum(task->task)};
	bool		isnull;
	bool		outside;
	int32	   *found;
	char	   *why = NULL;

	(void) BackfillStateExec(run->extschema,
							 psprintf("SELECT coalesce((SELECT t.origin OPERATOR(pg_catalog.<>) 'backfill' FROM %s t"
									  " WHERE t.run_id OPERATOR(pg_catalog.=) $1 AND t.task OPERATOR(pg_catalog.=) $2), true)",
									  BackfillExtName(run->extschema, "backfill_tasks_data")),
							 2, types, values, NULL, 1);
	if (SPI_processed != 1)
		elog(ERROR, "could not read run " INT64_FORMAT, run->id);
	outside = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
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
static Oid
TaskRelation(BackfillRun *run, BackfillTask *task)
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
	 * that writes in place checks again once it holds the lock (WorkTask).
	 */
	if (strcmp(run->strategy, "merge") == 0)
		LockRelationOid(relid, ShareRowExclusiveLock);
	RefuseChangedPartition(run, task, relid);
	return relid;
}

/* The window of a task, as a scope on the written table's columns (alias may be NULL). */
static char *
TaskScope(BackfillRun *run, BackfillTask *task, const char *alias)
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
static void
ApplySettings(BackfillRun *run)
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
 * The source's column names, as "a, b"; with reads (else NULL), whether the
 * tables its plan reads include relid or one of its partitions (a table read
 * only inside a function the source calls is not seen).
 */
static char *
SourceColumns(const char *bound, Oid relid, bool *reads)
{
	SPIPlanPtr	plan = BackfillPrepare(bound, 0, NULL, "source");
	TupleDesc	desc;
	StringInfoData buf;

	BackfillCheckReadOnly(plan, "source");
	desc = BackfillPlanResultDesc(plan);
	initStringInfo(&buf);
	for (int i = 0; i < desc->natts; i++)
		appendStringInfo(&buf, "%s%s", i ? ", " : "", quote_identifier(NameStr(TupleDescAttr(desc, i)->attname)));
	if (reads != NULL)
	{
		CachedPlanSource *ps = (CachedPlanSource *) linitial(SPI_plan_get_plan_sources(plan));
		ListCell   *lc;

		*reads = false;
		foreach(lc, ps->relationOids)
		{
			Oid			r = lfirst_oid(lc);

			if (r == relid || (get_rel_relispartition(r) && list_member_oid(get_partition_ancestors(r), relid)))
				*reads = true;
		}
	}
	SPI_freeplan(plan);
	return buf.data;
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

/*
 * Refuse a source with rows outside the window of task, as they will be
 * stored (bound: the source, bound to it): a row stored in the next window
 * would be deleted by the next task, whose source does not give it.
 */
static void
RefuseOutsideWindow(BackfillRun *run, BackfillTask *task, const char *bound)
{
	int64		outside = pg_strtoint64(BackfillQueryTextArgs(psprintf("SELECT pg_catalog.count(*) FROM (\n%s\n) AS s"
																	   " WHERE NOT COALESCE(%s, false)",
																	   bound, StoredWindowScope(run, task)),
															 0, NULL, NULL));

	if (outside > 0)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg_plural("%lld source row lies outside the window [%s, %s) of task %d",
							   "%lld source rows lie outside the window [%s, %s) of task %d",
							   outside, (long long) outside, task->range_from, task->range_to, task->task),
				 errdetail("Rows are held to the window as %s stores them.", run->target),
				 errhint("Filter the source on $1 and $2, the bounds of each task's window, as the column stores its values (round or truncate them to its precision first).")));
}

/*
 * WriteWholeWindow for a table Citus holds whose source reads it: Citus runs
 * a data-modifying CTE as a subplan of its own before the rest of the
 * statement, so the one-statement form would read the window after its
 * delete (and find it empty).  Read the source first, into a temporary table
 * of this transaction, then delete and insert from it.
 */
static uint64
WriteWholeWindowRead(BackfillTask *task, const char *only, const char *table, const char *cols,
					 const char *bound, const char *scope)
{
	uint64		inserted;

	BackfillExec(psprintf("CREATE TEMPORARY TABLE backfill_window ON COMMIT DROP AS SELECT %s FROM (\n%s\n) AS s",
						  cols, bound));
	BackfillExec(psprintf("DELETE FROM %s%s%s%s", only, table, scope ? " WHERE " : "", scope ? scope : ""));
	if (SPI_execute(psprintf("INSERT INTO %s (%s) SELECT %s FROM pg_temp.backfill_window", table, cols, cols),
					false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not replace the window of task %d", task->task);
	inserted = SPI_processed;
	BackfillExec("DROP TABLE pg_temp.backfill_window");
	return inserted;
}

/*
 * Delete the rows of written in scope (all, if NULL) and insert the rows of
 * bound, in one statement, so that the source reads the window as it was
 * before the delete (a source may read the table itself: a snapshot of its
 * own would not do, SPI moves a writing statement's snapshot to the current
 * command); the delete runs to completion first (an InitPlan gates the
 * insert), so a unique key may come back.  Returns the rows inserted.
 */
static uint64
WriteWholeWindow(BackfillTask *task, const char *bound, Oid written, const char *scope)
{
	char	   *table = BackfillQualifiedName(written);
	const char *only = get_rel_relkind(written) == RELKIND_PARTITIONED_TABLE ? "" : "ONLY ";
	BackfillCitusRel cr;
	bool		selfread = false;
	char	   *cols;

	BackfillCitusDescribe(written, &cr);
	cols = SourceColumns(bound, written, cr.kind != BACKFILL_CITUS_NONE ? &selfread : NULL);
	if (selfread)
		return WriteWholeWindowRead(task, only, table, cols, bound, scope);
	if (SPI_execute(psprintf("WITH deleted AS (DELETE FROM %s%s%s%s RETURNING 1)"
							 " INSERT INTO %s (%s) SELECT %s FROM (\n%s\n) AS s"
							 " WHERE (SELECT pg_catalog.count(*) FROM deleted) OPERATOR(pg_catalog.>=) 0",
							 only, table,
							 scope ? " WHERE " : "", scope ? scope : "", table, cols, cols, bound),
					false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not replace the window of task %d", task->task);
	return SPI_processed;
}

/*
 * The window of a task replaced by a delete and an insert in this
 * transaction.  written is the table the rows go into: the target (the
 * chunk of a plain table; a small partition of an 'auto' run under FORCE ROW
 * LEVEL SECURITY, so that the policies apply), the source checked to stay in
 * the window; or a small partition itself, whose bound the executor checks
 * on every row.  Writers of lockrel wait (SHARE ROW EXCLUSIVE), readers see
 * the old rows until commit.  Returns the log record's id.
 */
static int64
DeleteInsert(BackfillRun *run, BackfillTask *task, const char *bound, Oid written, Oid lockrel,
			 BackfillWriteContext *ctx, BackfillFingerprint *before, BackfillFingerprint *after)
{
	bool		through = written == run->targetoid;
	char	   *scope = through ? TaskScope(run, task, NULL) : NULL;
	StringInfoData details;
	uint64		inserted;
	BackfillRewriteCounts counts;
	const char *notwhy = NULL;
	const char *why = ctx->why;

	LockRelationOid(lockrel, ShareRowExclusiveLock);
	/* on Citus, writes through a worker go round the coordinator's lock: lock every node */
	if (BackfillCitusDistributed(lockrel))
		BackfillCitusLock(lockrel, false, "SHARE ROW EXCLUSIVE");

	/*
	 * A small partition: only the rows that differ are written, if the
	 * source allows (inplace.c), the rows it held and holds fingerprinted as
	 * they are read.
	 */
	if (!through && BackfillRewriteDiffering(written, bound, &counts, &notwhy, before, after))
		inserted = counts.inserted + counts.unchanged;
	else
	{
		BackfillFingerprintRel(written, scope, false, before);
		if (through)
			RefuseOutsideWindow(run, task, bound);
		else if (why != NULL)
			why = psprintf("%s; but %s, so every row was deleted and inserted again", why, notwhy);
		inserted = WriteWholeWindow(task, bound, written, scope);
		counts.deleted = before->rows;
		counts.inserted = inserted;
		counts.unchanged = 0;
		CommandCounterIncrement();
		BackfillFingerprintRel(written, scope, false, after);
	}
	if (inserted == 0 && before->rows > 0 && !run->opts.allow_empty)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source returned no rows for the window [%s, %s) of task %d, which has " UINT64_FORMAT " rows",
						task->range_from, task->range_to, task->task, before->rows),
				 errdetail("Running the task would empty the window of %s.", BackfillQualifiedName(lockrel)),
				 errhint("If the window really is to be emptied, plan the run with the option allow_empty.")));
	CommandCounterIncrement();

	initStringInfo(&details);
	appendStringInfo(&details, "{\"deleted\": " UINT64_FORMAT ", \"inserted\": " UINT64_FORMAT
					 ", \"unchanged\": " UINT64_FORMAT, counts.deleted, counts.inserted, counts.unchanged);
	if (scope)
	{
		appendStringInfoString(&details, ", \"scope\": ");
		escape_json(&details, scope);
	}
	appendStringInfoString(&details, ", \"source\": ");
	escape_json(&details, bound);
	appendStringInfoChar(&details, '}');
	return BackfillLogWriteChange(ctx->extschema, "delete_insert", run->target,
								  lockrel != run->targetoid ? BackfillQualifiedName(lockrel) : NULL,
								  before, after, details.data, ctx->run_id, why);
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
AutoWritesInPlace(BackfillRun *run, BackfillTask *task, Oid relid, char **why)
{
	int64		n;
	char	   *fk;

	if (strcmp(run->strategy, "auto") != 0 || task->partition == NULL)
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

	if (task->partition && strcmp(run->strategy, "replace") == 0)
		return psprintf("SELECT * FROM ONLY %s", rel);
	return psprintf("SELECT * FROM ONLY %s WHERE %s", rel, TaskScope(run, task, NULL));
}

/* How a task writes its window: chosen in one place (ChooseTaskWrite). */
typedef enum TaskWrite
{
	TASK_WRITE_REPLACE,			/* a partition swapped for a copy filled from the source */
	TASK_WRITE_MERGE,			/* merged on the run's key (in place, what the source lacks goes) */
	TASK_WRITE_PARTITION,		/* a small partition deleted and inserted, only the rows that differ */
	TASK_WRITE_CHUNK			/* a chunk of the target deleted and inserted through it */
} TaskWrite;

/*
 * How task writes: a partition is replaced, unless an 'auto' run writes it in
 * place (small; merged on the key if the run has one, else deleted and
 * inserted); a 'merge' run merges; a chunk of a plain table is deleted and
 * inserted.  *why says why, for the log record (or NULL).
 */
static TaskWrite
ChooseTaskWrite(BackfillRun *run, BackfillTask *task, Oid relid, char **why)
{
	bool		in_place = AutoWritesInPlace(run, task, relid, why);

	if (in_place)
		return run->key == NIL ? TASK_WRITE_PARTITION : TASK_WRITE_MERGE;
	if (strcmp(run->strategy, "merge") == 0)
		return TASK_WRITE_MERGE;
	return task->partition ? TASK_WRITE_REPLACE : TASK_WRITE_CHUNK;
}

/* Rows and fingerprints of what a task wrote, and its record, into out. */
static void
TaskWritten(TaskOutcome *out, int64 logid, int64 rows_before, int64 rows_after,
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
			TaskOutcome *out)
{
	BackfillReplaceParams p;
	BackfillReplaceResult r;

	p.part = relid;
	p.source = bound;
	p.keep_old = run->opts.keep_old;
	p.allow_empty = run->opts.allow_empty;
	p.lock_timeout_ms = run->opts.lock_timeout_ms;
	p.max_attempts = 5;
	BackfillReplace(&p, ctx, &r);
	TaskWritten(out, r.log_id, (int64) r.before.rows, (int64) r.after.rows,
				BackfillFingerprintText(&r.before), BackfillFingerprintText(&r.after));
}

/* A task's merge into relid on the run's key, into out; in place, what the source lacks goes. */
static void
TaskMerge(BackfillRun *run, BackfillTask *task, Oid relid, const char *bound, bool in_place,
		  BackfillWriteContext *ctx, TaskOutcome *out)
{
	BackfillMergeParams p;
	BackfillMergeResult r;

	p.target = relid;
	p.source = bound;
	p.keys = run->key;
	p.scope = TaskScope(run, task, NULL);
	p.delete_missing = in_place || run->opts.delete_missing;
	p.allow_empty = run->opts.allow_empty;
	BackfillMerge(&p, ctx, &r);
	TaskWritten(out, r.log_id, (int64) r.rows_before, (int64) r.rows_after,
				r.fingerprint_before, r.fingerprint_after);
}

/* A task's delete and insert into written (rows of lockrel), into out. */
static void
TaskDeleteInsert(BackfillRun *run, BackfillTask *task, const char *bound, Oid written, Oid lockrel,
				 BackfillWriteContext *ctx, TaskOutcome *out)
{
	BackfillFingerprint before;
	BackfillFingerprint after;
	int64		logid = DeleteInsert(run, task, bound, written, lockrel, ctx, &before, &after);

	TaskWritten(out, logid, (int64) before.rows, (int64) after.rows,
				BackfillFingerprintText(&before), BackfillFingerprintText(&after));
}

/*
 * The work of one task, in the current subtransaction, in the write context
 * ctx: write the data, reconcile it (a replacement, its staging table before
 * the swap), fill out.  Rows that do not reconcile are an error, unless the
 * context only reports.
 */
static void
WorkTask(BackfillRun *run, BackfillTask *task, TaskOutcome *out, BackfillWriteContext *ctx)
{
	char	   *bound = BackfillBindWindow(run->source, run->window_type, task->range_from, task->range_to);
	Oid			relid = TaskRelation(run, task);
	char	   *why = NULL;
	TaskWrite	how = ChooseTaskWrite(run, task, relid, &why);
	bool		in_place = how == TASK_WRITE_PARTITION ||
		(how == TASK_WRITE_MERGE && strcmp(run->strategy, "auto") == 0);

	ctx->why = why;
	/* in place, the partition is written as it is once locked: checked again under the lock */
	if (in_place)
	{
		LockRelationOid(relid, ShareRowExclusiveLock);
		RefuseChangedPartition(run, task, relid);
	}
	switch (how)
	{
		case TASK_WRITE_REPLACE:
			TaskReplace(run, relid, bound, ctx, out);
			break;
		case TASK_WRITE_MERGE:
			TaskMerge(run, task, relid, bound, in_place, ctx, out);
			break;
		case TASK_WRITE_PARTITION:
			/* straight into the partition, or through the target under FORCE RLS */
			TaskDeleteInsert(run, task, bound,
							 OidIsValid(BackfillForcedRowSecurity(relid)) ? run->targetoid : relid,
							 relid, ctx, out);
			break;
		case TASK_WRITE_CHUNK:
			TaskDeleteInsert(run, task, bound, run->targetoid, run->targetoid, ctx, out);
			break;
	}
	/* a replacement reconciled its copy before its swap */
	if (how != TASK_WRITE_REPLACE)
		BackfillWriteReconcile(ctx, WrittenQuery(run, task), bound);
	out->reconcile = ctx->comparison;
}

/*
 * The write context of a task of run: the run, its measures, its throttle;
 * for a retry, the old rows the first attempt saw (or NULL).
 */
static void
TaskContext(BackfillRun *run, BackfillThrottleState *throttle, const char *expected,
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
TaskFailed(TaskOutcome *out, ErrorData *edata, TaskError kind, const BackfillWriteContext *ctx)
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

/*
 * Run one task in a subtransaction, in the write context ctx; a failure is
 * caught and described in out, with the subtransaction (and so the task's
 * data) rolled back.
 */
static void
RunTask(BackfillRun *run, BackfillTask *task, TaskOutcome *out, BackfillWriteContext *ctx)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	TimestampTz start = GetCurrentTimestamp();
	int			timeout_ms = StatementTimeout;

	memset(out, 0, sizeof(*out));
	if (run->opts.statement_timeout &&
		!parse_int(run->opts.statement_timeout, &timeout_ms, GUC_UNIT_MS, NULL))
		timeout_ms = 0;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		ApplySettings(run);
		/* the statement timeout counts from the start of each task, not of the CALL */
		disable_timeout(STATEMENT_TIMEOUT, false);
		if (timeout_ms > 0)
			enable_timeout_after(STATEMENT_TIMEOUT, timeout_ms);
		WorkTask(run, task, out, ctx);
		disable_timeout(STATEMENT_TIMEOUT, false);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		out->ok = true;
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
}

/* Write the outcome of a task into its row. */
static void
RecordTask(BackfillRun *run, BackfillTask *task, TaskOutcome *out)
{
	Oid			types[12] = {INT8OID, INT4OID, TEXTOID, INT8OID, INT8OID, TEXTOID, TEXTOID,
	JSONBOID, INT8OID, FLOAT8OID, TEXTOID, INT4OID};
	Datum		values[12];
	char		nulls[12];

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
	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET status = $3, attempts = attempts + 1, gave_way = gave_way + $12,"
									  " rows_before = $4, rows_after = $5, fingerprint_before = $6,"
									  " fingerprint_after = $7, reconcile = $8, log_id = $9,"
									  " started_at = now(), finished_at = clock_timestamp(), seconds = $10, error = $11"
									  " WHERE run_id = $1 AND task = $2",
									  BackfillExtName(run->extschema, "backfill_tasks_data")),
							 12, types, values, nulls, 0);
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
static void
CommitTask(BackfillRun *run, BackfillTask *task, TaskOutcome *out, const BackfillWriteContext *ctx)
{
	instr_time	start;
	double		commit_ms;
	bool		swapped = !INSTR_TIME_IS_ZERO(ctx->locked_at);
	double		locked_ms;

	INSTR_TIME_SET_CURRENT(start);
	CommitStep();
	commit_ms = BackfillMsSince(start);
	locked_ms = swapped ? BackfillMsSince(ctx->locked_at) : 0;
	if (!out->ok)
		return;
	(void) set_config_option("synchronous_commit", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET commit_ms = $3, locked_ms = $4"
									  " WHERE run_id OPERATOR(pg_catalog.=) $1 AND task OPERATOR(pg_catalog.=) $2",
									  BackfillExtName(run->extschema, "backfill_tasks_data")),
							 4, (Oid[]) {INT8OID, INT4OID, FLOAT8OID, FLOAT8OID},
							 (Datum[]) {Int64GetDatum(run->id), Int32GetDatum(task->task),
							 Float8GetDatum(commit_ms), Float8GetDatum(locked_ms)},
							 swapped ? NULL : "   n", 0);
	CommitStep();
}

/* Take one of the run's worker slots for this transaction; false if all are taken. */
static bool
TakeSlot(BackfillRun *run)
{
	for (int slot = 0; slot < run->opts.max_workers; slot++)
	{
		LOCKTAG		tag;

		SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) run->id, (uint32) slot, RUN_SLOT_LOCK);
		if (LockAcquire(&tag, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL)
			return true;
	}
	return false;
}

/* A task from a row of (task, partition, range_from, range_to, attempts). */
static void
TaskFromRow(HeapTuple tup, TupleDesc desc, BackfillTask *task)
{
	task->task = pg_strtoint32(SPI_getvalue(tup, desc, 1));
	task->partition = SPI_getvalue(tup, desc, 2);
	task->range_from = SPI_getvalue(tup, desc, 3);
	task->range_to = SPI_getvalue(tup, desc, 4);
	task->attempts = pg_strtoint32(SPI_getvalue(tup, desc, 5));
}

/* Claim the next task: pending, or failed with attempts left and not failed in this call. */
static bool
ClaimTask(BackfillRun *run, List *failed_here, BackfillTask *task)
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
	TaskFromRow(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, task);
	return true;
}

/* 20104 -> "20,104" */
static char *
Thousands(int64 n)
{
	char	   *digits = psprintf(INT64_FORMAT, n < 0 ? -n : n);
	int			len = strlen(digits);
	StringInfoData buf;

	initStringInfo(&buf);
	if (n < 0)
		appendStringInfoChar(&buf, '-');
	for (int i = 0; i < len; i++)
	{
		if (i > 0 && (len - i) % 3 == 0)
			appendStringInfoChar(&buf, ',');
		appendStringInfoChar(&buf, digits[i]);
	}
	return buf.data;
}

/*
 * The progress line of a finished task.  The time left is what this call
 * has measured per task, from its start to now (claims, writes, checks and
 * commits), plus the pause after each task, over the workers that can share
 * what is pending.
 */
static void
ReportTask(BackfillRun *run, BackfillTask *task, TaskOutcome *out, TimestampTz call_started, int done_before)
{
	int64		total;
	int64		done;
	int64		pending;
	bool		isnull;
	HeapTuple	tup;
	TupleDesc	desc;
	int			rc;
	char	   *left;
	double		pause = run->opts.pause_ms / 1000.0;
	double		elapsed = TimestampDifferenceMilliseconds(call_started, GetCurrentTimestamp()) / 1000.0;
	double		per_task;
	const char *name = task->partition ? task->partition : psprintf("[%s, %s)", task->range_from, task->range_to);

	rc = BackfillStateExec(run->extschema,
						   psprintf("SELECT pg_catalog.count(*), pg_catalog.count(*) FILTER (WHERE status OPERATOR(pg_catalog.=) 'done'),"
									" pg_catalog.count(*) FILTER (WHERE status OPERATOR(pg_catalog.=) 'pending')"
									" FROM %s WHERE run_id OPERATOR(pg_catalog.=) " INT64_FORMAT,
									BackfillExtName(run->extschema, "backfill_tasks_data"), run->id),
						   0, NULL, NULL, NULL, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read backfill_tasks");
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	total = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	done = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
	pending = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
	/* the pauses after the tasks before this one are in elapsed: count them once */
	per_task = Max(elapsed - pause * done_before, 0) / (done_before + 1) + pause;
	left = pending == 0 ? "none left" :
		psprintf("about %s left", BackfillDuration(per_task * pending / Min(pending, run->opts.max_workers)));

	if (out->ok)
		ereport(NOTICE,
				(errmsg("run " INT64_FORMAT ": %s done (" INT64_FORMAT "/" INT64_FORMAT "), %s rows, %s, %s",
						run->id, name, done, total, Thousands(out->rows_after), BackfillDuration(out->seconds), left)));
	else
		ereport(WARNING,
				(errmsg("run " INT64_FORMAT ": %s failed (attempt %d of %d): %s",
						run->id, name, task->attempts + 1, run->opts.max_attempts, out->error)));
}

/* REFRESH the dependent materialized views; returns what was done as jsonb text, *ok false on a failure. */
static char *
RefreshDependents(BackfillRun *run, bool *ok)
{
	static const char *const fields[2] = {"name", "concurrently"};
	uint64		n;
	char	 ***rows = BackfillJsonbRows(run->dependents, 2, fields, &n);
	StringInfoData out;

	*ok = true;
	initStringInfo(&out);
	appendStringInfoChar(&out, '[');
	for (uint64 i = 0; i < n; i++)
	{
		MemoryContext cxt = CurrentMemoryContext;
		ResourceOwner owner = CurrentResourceOwner;
		TimestampTz start = GetCurrentTimestamp();
		char	   *volatile error = NULL;

		BeginInternalSubTransaction(NULL);
		MemoryContextSwitchTo(cxt);
		PG_TRY();
		{
			int			rc = SPI_execute(psprintf("REFRESH MATERIALIZED VIEW %s%s",
												  strcmp(rows[i][1], "true") == 0 ? "CONCURRENTLY " : "",
												  rows[i][0]), false, 0);

			if (rc != SPI_OK_UTILITY)
				elog(ERROR, "REFRESH MATERIALIZED VIEW failed: %s", SPI_result_code_string(rc));
			ReleaseCurrentSubTransaction();
			MemoryContextSwitchTo(cxt);
			CurrentResourceOwner = owner;
		}
		PG_CATCH();
		{
			ErrorData  *edata = BackfillAbortSubtransaction(cxt, owner);

			error = pstrdup(edata->message);
			*ok = false;
		}
		PG_END_TRY();
		appendStringInfoString(&out, i ? ", {\"name\": " : "{\"name\": ");
		escape_json(&out, rows[i][0]);
		appendStringInfo(&out, ", \"concurrently\": %s, \"ms\": %.1f, \"error\": ",
						 rows[i][1], (double) (GetCurrentTimestamp() - start) / 1000.0);
		if (error)
			escape_json(&out, error);
		else
			appendStringInfoString(&out, "null");
		appendStringInfoChar(&out, '}');
		if (error)
			ereport(WARNING,
					(errmsg("run " INT64_FORMAT ": could not refresh %s: %s", run->id, rows[i][0], error)));
	}
	appendStringInfoChar(&out, ']');
	return out.data;
}

/* What the end of a run found of one entry of untouched. */
typedef struct UntouchedState
{
	char	   *now;			/* the fingerprint now, or NULL */
	int			same;			/* 1 the same, 0 changed, -1 cannot tell */
	int64		logid;			/* the record of backfill's that wrote it, or 0 */
	char	   *why;			/* how it changed, for the warning */
} UntouchedState;

/*
 * The latest record backfill wrote of partition (a replacement's, or a
 * merge's of the partition itself) after record after whose
 * fingerprint_after is now's, or 0.  after is the last record at plan time:
 * a record made before the plan (a day replaced and undone last month)
 * cannot explain a change made during the run, even one that gives the
 * partition that record's rows again.
 */
static int64
LoggedWrite(BackfillRun *run, const char *partition, const char *now, int64 after)
{
	Oid			types[3] = {TEXTOID, TEXTOID, INT8OID};
	Datum		values[3] = {CStringGetTextDatum(partition), CStringGetTextDatum(now), Int64GetDatum(after)};

	(void) BackfillStateExec(run->extschema,
							 psprintf("SELECT id FROM %s WHERE (partition = $1 OR (partition IS NULL AND target = $1))"
									  " AND fingerprint_after = $2 AND id > $3 AND origin = 'backfill' ORDER BY id DESC LIMIT 1",
									  BackfillExtName(run->extschema, "backfill_log_data")),
							 3, types, values, NULL, 1);
	return SPI_processed == 1 ? pg_strtoint64(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)) : 0;
}

/*
 * The last record of backfill_log when the entry row of untouched was
 * planned; an entry planned without it is explained by no record.
 */
static int64
PlanLastLog(char **row)
{
	return row[5] ? pg_strtoint64(row[5]) : PG_INT64_MAX;
}

/* relid, a partition of the run's target, fingerprinted through the target. */
static char *
PartitionFingerprint(BackfillRun *run, Oid relid)
{
	BackfillFingerprint fp;

	BackfillFingerprintThroughParent(run->targetoid, relid, &fp);
	return BackfillFingerprintText(&fp);
}

/*
 * An entry planned by its counters (row: partition, scope, fingerprint,
 * writes, file, last_log): the same if no row of it was written since and it
 * has the same storage; written by a record of backfill's since the plan if
 * its fingerprint now is that record's; otherwise changed, or, its
 * statistics reset meanwhile, not to be told.
 */
static void
CheckUntouchedCounters(BackfillRun *run, Oid relid, char **row, const char *epoch, UntouchedState *st)
{
	int64		planned = pg_strtoint64(row[3]);
	int64		writes = BackfillUntouchedWrites(relid);

	st->same = 0;
	if (BackfillRelFileNode(relid) != (Oid) strtoul(row[4], NULL, 10))
		st->why = "was truncated or rewritten";
	else if (row[6] && strcmp(row[6], epoch) != 0)
	{
		/* reset, then written as often: the counters would read the same */
		st->same = -1;
		st->why = "could not be checked (the statistics were reset, or lost in a crash, since the plan)";
	}
	else if (writes == planned)
		st->same = 1;
	else if (writes < planned)
	{
		st->same = -1;
		st->why = "could not be checked (its statistics were reset)";
	}
	else
		st->why = psprintf("had " INT64_FORMAT " rows inserted, updated or deleted", writes - planned);
	if (st->same == 0)
	{
		st->now = PartitionFingerprint(run, relid);
		st->logid = LoggedWrite(run, row[0], st->now, PlanLastLog(row));
	}
}

/*
 * An entry planned by its fingerprint (row: partition, scope, fingerprint):
 * the same if its fingerprint is; rewritten by a logged write if a record of
 * backfill's has its fingerprint now.
 */
static void
CheckUntouchedFingerprint(BackfillRun *run, Oid relid, char **row, UntouchedState *st)
{
	BackfillFingerprint fp;

	if (row[0] && get_rel_relispartition(relid) && get_partition_parent(relid, true) == run->targetoid)
		st->now = PartitionFingerprint(run, relid);	/* SELECT on the target suffices */
	else
	{
		BackfillFingerprintRel(relid, row[1], true, &fp);
		st->now = BackfillFingerprintText(&fp);
	}
	st->same = strcmp(st->now, row[2]) == 0;
	st->why = "changed";
	if (!st->same && row[0])
		st->logid = LoggedWrite(run, row[0], st->now, PlanLastLog(row));
}

/* Append the entry of untouched_after for one entry of untouched. */
static void
AppendUntouched(StringInfo out, bool first, const char *partition, UntouchedState *st)
{
	appendStringInfoString(out, first ? "{\"partition\": " : ", {\"partition\": ");
	if (partition)
		escape_json(out, partition);
	else
		appendStringInfoString(out, "null");
	appendStringInfoString(out, ", \"fingerprint\": ");
	if (st->now)
		escape_json(out, st->now);
	else
		appendStringInfoString(out, "null");
	appendStringInfo(out, ", \"same\": %s, \"logged_as\": ",
					 st->same > 0 ? "true" : st->same == 0 ? "false" : "null");
	if (st->logid)
		appendStringInfo(out, INT64_FORMAT "}", st->logid);
	else
		appendStringInfoString(out, "null}");
}

/*
 * Check again what lay outside the range, by counters or by fingerprints as
 * planned; returns jsonb text, *changed the count that differ for no logged
 * reason (a partition another run or a replacement rewrote is named with its
 * log record instead).
 */
static char *
CheckUntouched(BackfillRun *run, int *changed)
{
	static const char *const fields[7] = {"partition", "scope", "fingerprint", "writes", "file", "last_log",
	"stats_epoch"};
	uint64		n;
	char	 ***rows = BackfillJsonbRows(run->untouched, 7, fields, &n);
	StringInfoData out;
	char	   *epoch;

	*changed = 0;
	initStringInfo(&out);
	appendStringInfoChar(&out, '[');
	BackfillUntouchedSnapshot();
	epoch = BackfillStatsEpoch();
	for (uint64 i = 0; i < n; i++)
	{
		Oid			relid = rows[i][0]
			? RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(rows[i][0])), NoLock, true)
			: run->targetoid;
		UntouchedState st = {NULL, 0, 0, "was dropped"};

		CHECK_FOR_INTERRUPTS();
		if (OidIsValid(relid) && rows[i][3] && rows[i][4])
			CheckUntouchedCounters(run, relid, rows[i], epoch, &st);
		else if (OidIsValid(relid) && rows[i][2])
			CheckUntouchedFingerprint(run, relid, rows[i], &st);
		if (st.same <= 0 && st.logid == 0)
		{
			if (st.same == 0)
				(*changed)++;
			ereport(WARNING,
					(errmsg("run " INT64_FORMAT ": %s, outside the range, %s during the run", run->id,
							rows[i][0] ? rows[i][0] : "the rows", st.why),
					 rows[i][2] ? errdetail("Fingerprint at plan time %s, now %s.", rows[i][2], st.now ? st.now : "none")
					 : errdetail("Checked by its statistics: %s rows inserted, updated or deleted at plan time.", rows[i][3]),
					 st.same < 0 ? errhint("Plan with options => '{\"check_untouched\": \"full\"}' to compare fingerprints instead.")
					 : errhint("The run never writes outside its range: another session did.")));
		}
		AppendUntouched(&out, i == 0, rows[i][0], &st);
	}
	appendStringInfoChar(&out, ']');
	return out.data;
}

/*
 * No task left to claim: if none is in progress elsewhere, finish the run
 * (refresh, check what lay outside, mark done) or mark it failed.  Returns
 * the error to raise after the commit, or NULL; *tasks_failed says whether
 * it is that tasks failed.
 */
static char *
FinishRun(BackfillRun *run, List *failed_here, int64 *pending_elsewhere, bool *tasks_failed)
{
	Oid			t3[3] = {INT8OID, INT4OID, INT4ARRAYOID};
	Datum		v3[3];
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	int64		pending;
	int64		failed;
	char	   *failures;

	*pending_elsewhere = 0;
	*tasks_failed = false;
	/* one worker finishes: the others wait here, then see the run done */
	BackfillRunLoad(run->extschema, run->id, run, true);
	if (strcmp(run->status, "running") != 0)
		return NULL;
	/*
	 * No task could be claimed: every one that is pending, or failed with
	 * attempts left and not failed in this call, is held by another worker.
	 */
	v3[0] = Int64GetDatum(run->id);
	v3[1] = Int32GetDatum(run->opts.max_attempts);
	v3[2] = BackfillIntArray(failed_here);
	(void) BackfillStateExec(run->extschema,
							 psprintf("SELECT count(*) FILTER (WHERE status = 'pending'"
									  "   OR (status = 'failed' AND attempts < $2 AND task <> ALL ($3))),"
									  " count(*) FILTER (WHERE status = 'failed'),"
									  " string_agg(format('task %%s (%%s): %%s', task, coalesce(partition, range_from), error), '; '"
									  "   ORDER BY task) FILTER (WHERE status = 'failed')"
									  " FROM %s WHERE run_id = $1", BackfillExtName(run->extschema, "backfill_tasks_data")),
							 3, t3, v3, NULL, 0);
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	pending = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	failed = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
	failures = SPI_getvalue(tup, desc, 3);
	if (pending > 0)
	{
		*pending_elsewhere = pending;
		return NULL;
	}
	if (failed > 0)
	{
		char	   *error = psprintf(INT64_FORMAT " task%s failed: %s", failed, failed > 1 ? "s" : "", failures);

		BackfillRunSetStatus(run, "failed", error);
		BackfillRunUnschedule(run);
		*tasks_failed = true;
		return psprintf("run " INT64_FORMAT " stopped: %s", run->id, error);
	}

	{
		char	   *refreshed = NULL;
		char	   *untouched = NULL;
		int			changed = 0;
		bool		ok = true;
		Oid			ut[3] = {INT8OID, JSONBOID, JSONBOID};
		Datum		uv[3];
		char		un[3] = {' ', ' ', ' '};

		if (run->opts.refresh_dependents)
			refreshed = RefreshDependents(run, &ok);
		if (run->opts.check_untouched)
			untouched = CheckUntouched(run, &changed);
		uv[0] = Int64GetDatum(run->id);
		uv[1] = refreshed ? DirectFunctionCall1(jsonb_in, CStringGetDatum(refreshed)) : (Datum) 0;
		un[1] = refreshed ? ' ' : 'n';
		uv[2] = untouched ? DirectFunctionCall1(jsonb_in, CStringGetDatum(untouched)) : (Datum) 0;
		un[2] = untouched ? ' ' : 'n';
		(void) BackfillStateExec(run->extschema,
								 psprintf("UPDATE %s SET refreshed = $2, untouched_after = $3 WHERE id = $1",
										  BackfillExtName(run->extschema, "backfill_runs_data")),
								 3, ut, uv, un, 0);
		if (!ok)
		{
			char	   *error = "a dependent materialized view could not be refreshed (see refreshed)";

			BackfillRunSetStatus(run, "failed", error);
			BackfillRunUnschedule(run);
			return psprintf("run " INT64_FORMAT " stopped: %s", run->id, error);
		}
		BackfillRunSetStatus(run, "done", NULL);
		BackfillRunUnschedule(run);
		ereport(NOTICE,
				(errmsg("run " INT64_FORMAT " done%s%s", run->id,
						refreshed && strcmp(refreshed, "[]") != 0 ? "; materialized views refreshed" : "",
						changed ? "; something outside the range changed (see untouched_after)" : "")));
	}
	return NULL;
}

/* The target of a run is gone: the run fails, and says so. */
static void
TargetGone(BackfillRun *run)
{
	char	   *error = psprintf("table %s no longer exists", run->target);

	if (strcmp(run->status, "done") != 0 && strcmp(run->status, "cancelled") != 0)
	{
		BackfillRunSetStatus(run, "failed", error);
		BackfillRunUnschedule(run);
		CommitStep();
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_TABLE),
			 errmsg("run " INT64_FORMAT " stopped: %s", run->id, error),
			 errhint("Cancel the run: backfill_cancel(" INT64_FORMAT ").", run->id)));
}

/* What one CALL backfill_run has done so far. */
typedef struct RunCall
{
	int64		runid;
	int			max_tasks;		/* 0: no limit */
	List	   *failed_here;	/* tasks that failed in this call: not retried by it */
	int			done_here;
	char	   *stop_error;		/* the run failed at its end: raised after SPI_finish */
	int			stop_code;		/* its SQLSTATE: the first failed task's in this call */
	TimestampTz started;
	MemoryContext cxt;			/* lives as long as the call (failed_here, stop_error) */
	PlannedTasks *planned;		/* the plan's tasks, checked at the call's first task */
	BackfillThrottleState *throttle;	/* the run's yield to production, or NULL */
} RunCall;

/* The arguments of backfill_run, checked; and that it was called on its own, with CALL. */
static void
RunCallArgs(FunctionCallInfo fcinfo, RunCall *call)
{
	memset(call, 0, sizeof(RunCall));
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("run_id must not be NULL")));
	call->runid = PG_GETARG_INT64(0);
	if (!PG_ARGISNULL(1))
	{
		call->max_tasks = PG_GETARG_INT32(1);
		if (call->max_tasks < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_tasks must be at least 1, or NULL for all")));
	}
	if (fcinfo->context == NULL || !IsA(fcinfo->context, CallContext) ||
		castNode(CallContext, fcinfo->context)->atomic)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_TERMINATION),
				 errmsg("backfill_run must be called with CALL, outside a transaction block"),
				 errdetail("It commits after every task."),
				 errhint("Run CALL backfill_run(" INT64_FORMAT ") on its own, not inside BEGIN or a function."
						 " A driver may have opened the transaction without a BEGIN of yours: turn autocommit on"
						 " for this call (psycopg2: connection.autocommit = True).",
						 call->runid)));
	PreventCommandIfReadOnly("backfill_run()");
	BackfillRequireCoordinator("backfill_run");
	call->started = GetCurrentTimestamp();
}

/*
 * The start of a call: the run is marked running, committed on its own so
 * that sessions sharing the run do not queue.  False when there is nothing to
 * do (the run is done or paused).
 */
static bool
RunCallStart(Oid extschema, RunCall *call, BackfillRun *run)
{
	int64		runid = call->runid;

	BackfillRunLoad(extschema, runid, run, false);
	if (!BackfillRunCheckRights(run, "run", true))
		TargetGone(run);
	if (strcmp(run->status, "done") == 0 || strcmp(run->status, "paused") == 0)
	{
		if (strcmp(run->status, "done") == 0)
			ereport(NOTICE, (errmsg("run " INT64_FORMAT " is already done", runid)));
		else
			ereport(NOTICE,
					(errmsg("run " INT64_FORMAT " is paused", runid),
					 errhint("Call backfill_resume(" INT64_FORMAT ") first.", runid)));
		BackfillRunUnschedule(run);
		return false;
	}
	if (strcmp(run->status, "cancelled") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run " INT64_FORMAT " was cancelled", runid)));
	if (strcmp(run->status, "blocked") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run " INT64_FORMAT " is blocked", runid),
				 errhint("See its error in backfill_runs; backfill_resume(" INT64_FORMAT ") lets it go on once the code is back as planned.", runid)));
	if (strcmp(run->status, "running") != 0)
		BackfillRunSetStatus(run, "running", NULL);
	CommitStep();
	if (BackfillThrottleWanted(&run->opts.throttle))
		call->throttle = BackfillThrottleArm(&run->opts.throttle, runid, extschema, GetUserId(),
											 run->opts.search_path, call->cxt);
	return true;
}

/*
 * Whether the run may go on to its next task: still running, its pinned code
 * unchanged (else it is blocked, and that raises), a worker slot free.
 */
static bool
RunMayGoOn(Oid extschema, RunCall *call, BackfillRun *run)
{
	int64		runid = call->runid;
	char	   *change;

	BackfillRunLoad(extschema, runid, run, false);
	if (!BackfillRunCheckRights(run, "run", true))
		TargetGone(run);
	if (strcmp(run->status, "running") != 0)
	{
		ereport(NOTICE,
				(errmsg("run " INT64_FORMAT " is %s: stopping after %d task%s", runid, run->status,
						call->done_here, call->done_here == 1 ? "" : "s")));
		BackfillRunUnschedule(run);
		return false;
	}

	change = BackfillRunPinnedChange(run);
	if (change)
	{
		BackfillRunSetStatus(run, "blocked", change);
		BackfillRunUnschedule(run);
		CommitStep();
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s", change),
				 errdetail("Run " INT64_FORMAT " is blocked: its history must not be computed by two versions of the code.", runid),
				 errhint("Restore the definition and call backfill_resume(" INT64_FORMAT "), or cancel the run and plan a new one.", runid)));
	}

	if (!TakeSlot(run))
	{
		ereport(NOTICE,
				(errmsg("run " INT64_FORMAT ": %d session%s already at work (max_workers)", runid,
						run->opts.max_workers, run->opts.max_workers == 1 ? " is" : "s are")));
		return false;
	}
	return true;
}

/*
 * A failed task stops the run: marked failed, committed, and the task's own
 * error raised (its SQLSTATE, message and detail) with the run and the task
 * in front of the message, once.
 */
static void
RaiseTaskFailed(RunCall *call, BackfillRun *run, BackfillTask *task, TaskOutcome *out)
{
	const char *name = task->partition ? task->partition : task->range_from;

	BackfillRunSetStatus(run, "failed", psprintf("task %d (%s) failed: %s", task->task, name, out->error));
	BackfillRunUnschedule(run);
	CommitStep();
	ereport(ERROR,
			(errcode(out->sqlerrcode),
			 errmsg("run " INT64_FORMAT " stopped: task %d (%s) failed: %s", call->runid, task->task, name,
					out->message),
			 out->detail ? errdetail_internal("%s", out->detail) : 0,
			 errhint("Fix the cause and CALL backfill_run(" INT64_FORMAT ") again: the failed task is retried (up to max_attempts), finished tasks are not redone.", call->runid)));
}

/* Add the time the run spent throttled since the last time, and why, to its row. */
static void
RecordThrottled(BackfillRun *run, BackfillThrottleState *throttle)
{
	char	   *reason;
	double		seconds = BackfillThrottleTake(throttle, &reason);
	Oid			types[3] = {INT8OID, FLOAT8OID, TEXTOID};
	Datum		values[3];
	char		nulls[3] = {' ', ' ', reason ? ' ' : 'n'};

	if (seconds <= 0 && reason == NULL)
		return;
	values[0] = Int64GetDatum(run->id);
	values[1] = Float8GetDatum(seconds);
	values[2] = reason ? CStringGetTextDatum(reason) : (Datum) 0;
	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET throttled = throttled OPERATOR(pg_catalog.+)"
									  " pg_catalog.make_interval(secs => $2),"
									  " throttle_reason = COALESCE($3, throttle_reason) WHERE id = $1",
									  BackfillExtName(run->extschema, "backfill_runs_data")),
							 3, types, values, nulls, 0);
}

/*
 * The throttle says the run must pause (critical_query, or a wait too
 * long): it does, saying why, and the call ends.  The task it stopped, if
 * any, was rolled back and stays pending.
 */
static void
ThrottlePause(BackfillRun *run, BackfillThrottleState *throttle)
{
	char	   *why = pstrdup(BackfillThrottlePaused(throttle));

	RecordThrottled(run, throttle);
	BackfillRunSetStatus(run, "paused", why);
	BackfillRunUnschedule(run);
	CommitStep();
	ereport(WARNING,
			(errmsg("run " INT64_FORMAT " paused: %s", run->id, why),
			 errhint("CALL backfill_resume(" INT64_FORMAT ") once production allows, then backfill_run again.", run->id)));
}

/*
 * One step of a call: claim a task and do it, or finish the run when none is
 * left.  False when the call is over.
 */
static bool
RunCallStep(RunCall *call, BackfillRun *run)
{
	BackfillTask task;
	TaskOutcome out;
	bool		claimed;
	char		expected[BACKFILL_BEFORE_LEN];	/* the old rows when a swap first gave way */
	BackfillWriteContext ctx;

	/* before the task, outside any lock: wait while production needs it, or pause */
	if (!BackfillThrottleWait(call->throttle))
	{
		ThrottlePause(run, call->throttle);
		return false;
	}
	claimed = ClaimTask(run, call->failed_here, &task);

	if (claimed && call->max_tasks > 0 && call->done_here >= call->max_tasks)
	{
		/* enough for this call, and a task is left: let it go */
		CommitStep();
		return false;
	}
	if (!claimed)
	{
		int64		elsewhere;
		bool		tasks_failed;

		call->stop_error = FinishRun(run, call->failed_here, &elsewhere, &tasks_failed);
		if (!tasks_failed)
			call->stop_code = 0;	/* not a task's error: the run's own state */
		if (call->stop_error)
			call->stop_error = MemoryContextStrdup(call->cxt, call->stop_error);
		if (elsewhere > 0)
			ereport(NOTICE,
					(errmsg("run " INT64_FORMAT ": " INT64_FORMAT " task%s in progress in other sessions",
							call->runid, elsewhere, elsewhere == 1 ? "" : "s")));
		CommitStep();
		return false;
	}

	if (call->planned == NULL)
		call->planned = CheckPlannedTasks(run, call->cxt);
	RefuseUnplannedTask(run, call->planned, &task);

	/*
	 * A swap that gave way to a session waiting for it has rolled back its
	 * subtransaction, and with it every lock the task took: back off while
	 * that session goes on, then do the task again.  A write that session
	 * made into the partition meanwhile went into the old rows: the next
	 * replacement must find them as the first left them, or refuse to swap
	 * (the context's expected_before), so that the write is never discarded.
	 */
	expected[0] = '\0';
	for (int gave = 1;; gave++)
	{
		TaskContext(run, call->throttle, expected[0] ? expected : NULL, &ctx);
		RunTask(run, &task, &out, &ctx);
		if (expected[0] == '\0' && out.gave_way)
			strlcpy(expected, ctx.before, sizeof(expected));
		out.gave_ways = gave - 1;
		if (out.throttle_paused)
		{
			ThrottlePause(run, call->throttle);
			return false;
		}
		if (out.gave_way)
			out.gave_ways++;
		if (out.ok || !out.gave_way || gave > GIVE_WAY_RETRIES)
			break;
		ereport(NOTICE,
				(errmsg("run " INT64_FORMAT ": %s gave way to another session, trying again (%d of %d)",
						run->id, task.partition ? task.partition : task.range_from, gave, GIVE_WAY_RETRIES),
				 errdetail("%s", out.error)));
		BackfillBackOff(gave, run->opts.lock_timeout_ms);
	}
	RecordTask(run, &task, &out);
	RecordThrottled(run, call->throttle);
	if (!out.ok)
	{
		MemoryContext old = MemoryContextSwitchTo(call->cxt);

		call->failed_here = lappend_int(call->failed_here, task.task);
		MemoryContextSwitchTo(old);
		if (call->stop_code == 0)
			call->stop_code = out.sqlerrcode;
		if (!run->opts.on_error_continue || out.cancelled)
			RaiseTaskFailed(call, run, &task, &out);
	}
	CommitTask(run, &task, &out, &ctx);
	ReportTask(run, &task, &out, call->started, call->done_here);
	call->done_here++;
	if (run->opts.pause_ms > 0)
		BackfillSleep(run->opts.pause_ms);
	return true;
}

PG_FUNCTION_INFO_V1(backfill_run);

/* CALL backfill_run(run_id bigint, max_tasks integer) */
Datum
backfill_run(PG_FUNCTION_ARGS)
{
	Oid			extschema = BackfillExtensionSchema(fcinfo);
	RunCall		call;
	BackfillRun run;

	RunCallArgs(fcinfo, &call);
	if (SPI_connect_ext(SPI_OPT_NONATOMIC) != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	call.cxt = CurrentMemoryContext;
	if (RunCallStart(extschema, &call, &run))
	{
		for (;;)
		{
			bool		more;

			CHECK_FOR_INTERRUPTS();

			/*
			 * Each step in an SPI connection of its own, whose memory (the
			 * run read again, the results of the step's queries) goes with
			 * it: a call may run thousands of tasks.
			 */
			if (SPI_connect_ext(SPI_OPT_NONATOMIC) != SPI_OK_CONNECT)
				elog(ERROR, "SPI_connect failed");
			more = RunMayGoOn(extschema, &call, &run) && RunCallStep(&call, &run);
			SPI_finish();
			if (!more)
				break;
		}
	}
	BackfillThrottleDisarm(call.throttle);
	SPI_finish();
	if (call.stop_error)
		ereport(ERROR,
				(errcode(call.stop_code ? call.stop_code : ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s", call.stop_error),
				 errhint("Fix the cause and CALL backfill_run(" INT64_FORMAT ") again, or backfill_retry a task.", call.runid)));
	PG_RETURN_VOID();
}

/*
 * Dry run.
 */

/*
 * Added, removed and changed rows between two queries, and a sample, into
 * the out arguments: matched on the run's key by backfill_diff, or without a
 * key as multisets; both compare by representation, as the fingerprint does.
 * Without a key, old is read on oldsnap when it is valid.
 */
static void
Compare(BackfillRun *run, const char *old, Snapshot oldsnap, const char *new, int64 *added,
		int64 *removed, int64 *changed, bool *changed_null, char **sample)
{
	int			rc;
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;

	if (run->key != NIL)
	{
		Oid			types[3] = {TEXTOID, TEXTOID, TEXTARRAYOID};
		Datum		values[3];

		values[0] = CStringGetTextDatum(old);
		values[1] = CStringGetTextDatum(new);
		values[2] = BackfillTextArray(run->key);
		rc = SPI_execute_with_args(psprintf("SELECT pg_catalog.count(*) FILTER (WHERE d.change OPERATOR(pg_catalog.=) 'added'),"
											" pg_catalog.count(*) FILTER (WHERE d.change OPERATOR(pg_catalog.=) 'removed'),"
											" pg_catalog.count(*) FILTER (WHERE d.change OPERATOR(pg_catalog.=) 'changed'),"
											" COALESCE(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(d) OPERATOR(pg_catalog.-) 'n')"
											"   FILTER (WHERE d.n OPERATOR(pg_catalog.<=) 5), '[]')::pg_catalog.text"
											" FROM (SELECT x.*, pg_catalog.row_number() OVER () AS n FROM %s($1, $2, $3) x) d",
											BackfillExtName(run->extschema, "backfill_diff")),
								   3, types, values, NULL, false, 1);
		*changed_null = false;
	}
	else
	{
		BackfillMultisetDiff(old, oldsnap, new, added, removed, sample);
		*changed = 0;
		*changed_null = true;
		return;
	}
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not compare the task's rows: %s", SPI_result_code_string(rc));
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	*added = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	*removed = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
	*changed = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
	*sample = SPI_getvalue(tup, desc, 4);
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
	TaskFromRow(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, task);
	RefuseUnplannedTask(run, CheckPlannedTasks(run, CurrentMemoryContext), task);
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
	TaskContext(run, NULL, NULL, &ctx);
	ctx.report_only = true;
	BackfillWriteReconcile(&ctx, psprintf("SELECT * FROM %s", stagename), bound);
	dr->reconcile = ctx.comparison;
	dr->reconciled = ctx.reconciled;
}

/* A task that writes in place: done as the task does it, compared with the rows before. */
static void
DryRunInPlace(BackfillRun *run, BackfillTask *task, Oid relid, const char *bound, DryRun *dr)
{
	char	   *scope = TaskScope(run, task, NULL);
	char	   *rows = psprintf("SELECT %s FROM ONLY %s WHERE %s", SourceColumns(bound, InvalidOid, NULL),
								BackfillQualifiedName(relid), scope);
	Snapshot	old;
	TaskOutcome out;
	BackfillWriteContext ctx;

	BackfillFingerprintRel(relid, scope, false, &dr->before);
	if (run->key != NIL)
		Compare(run, rows, InvalidSnapshot, bound, &dr->added, &dr->removed, &dr->changed,
				&dr->changed_null, &dr->sample);
	/* without a key: the window's rows before the task (on this snapshot) and after it */
	old = RegisterSnapshot(GetTransactionSnapshot());
	memset(&out, 0, sizeof(out));
	TaskContext(run, NULL, NULL, &ctx);
	ctx.report_only = true;
	WorkTask(run, task, &out, &ctx);
	dr->reconciled = ctx.reconciled;
	BackfillFingerprintRel(relid, scope, false, &dr->after);
	if (run->key == NIL)
		Compare(run, rows, old, rows, &dr->added, &dr->removed, &dr->changed, &dr->changed_null, &dr->sample);
	UnregisterSnapshot(old);
	dr->reconcile = out.reconcile;
}

/* Compute the task into dr inside a subtransaction that is always rolled back. */
static void
DryRunCompute(BackfillRun *run, BackfillTask *task, DryRun *dr)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		char	   *bound = BackfillBindWindow(run->source, run->window_type, task->range_from, task->range_to);
		Oid			relid = TaskRelation(run, task);
		char	   *why = NULL;

		ApplySettings(run);

		/*
		 * What the dry run computes over the rows is shown only to a role
		 * that sees them all: the partition is read directly, outside its
		 * parents' policies, and the log would show the task's record only
		 * so too.
		 */
		dr->shown = BackfillMaySeeRows(relid);
		if (task->partition && strcmp(run->strategy, "merge") != 0 && !AutoWritesInPlace(run, task, relid, &why))
			DryRunSwap(run, relid, bound, dr);
		else
			DryRunInPlace(run, task, relid, bound, dr);
		/* everything above is undone */
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ReThrowError(BackfillAbortSubtransaction(cxt, owner));
	}
	PG_END_TRY();
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
