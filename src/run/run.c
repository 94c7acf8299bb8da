/*-------------------------------------------------------------------------
 *
 * src/run/run.c
 *		backfill_run, the procedure that works a run off task by task.
 *
 * A call is a loop of steps, each in an SPI connection of its own and ending
 * in a commit: the worker re-reads the run (a pause or a cancel takes effect
 * there), re-checks the caller's rights and the pinned code, waits while its
 * throttle says production needs the server, takes one of the run's
 * max_workers slots (a transaction-level advisory lock), then claims and
 * does one task (task.c).  Between tasks nothing is held.  A task whose swap
 * gave way to a waiting session is done again after a back-off; a failed
 * task stops the call unless the run goes on after errors.  When no task is
 * left, the run is finished (finish.c).
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
#include "base/remote.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "base/throttle.h"
#include "hash/fingerprint.h"
#include "record/log.h"
#include "run/runstate.h"
#include "run/finish.h"
#include "run/task.h"
#include "run/worker.h"
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

/* How often a task whose swap gave way is tried again in the same call. */
#define GIVE_WAY_RETRIES 10

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
 * what is pending.  With notice_every N, a task done says so when it is the
 * call's first, every Nth, or the run's last; a failure always does.
 */
static void
ReportTask(BackfillRun *run, BackfillTask *task, BackfillTaskOutcome *out, TimestampTz call_started, int done_before)
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

	if (out->ok && done_before > 0 && (done_before + 1) % run->opts.notice_every != 0 && pending > 0)
		return;
	if (out->ok)
		ereport(NOTICE,
				(errmsg("run " INT64_FORMAT ": %s done (" INT64_FORMAT "/" INT64_FORMAT "), %s rows, %s, %s",
						run->id, name, done, total, Thousands(out->rows_after), BackfillDuration(out->seconds), left)));
	else
		ereport(WARNING,
				(errmsg("run " INT64_FORMAT ": %s failed (attempt %d of %d): %s",
						run->id, name, task->attempts + 1, run->opts.max_attempts, out->error)));
}

/* The target of a run is gone: the run fails, and says so. */
static void
TargetGone(BackfillRun *run)
{
	char	   *error = psprintf("table %s no longer exists", run->target);

	if (run->state != BACKFILL_RUN_DONE && run->state != BACKFILL_RUN_CANCELLED)
	{
		BackfillRunSetState(run, BACKFILL_RUN_FAILED, error);
		BackfillRunPark(run);
		BackfillCommitStep();
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
	char	   *stop_error;		/* why the call ends unfinished: raised after SPI_finish */
	int			stop_code;		/* its SQLSTATE: the first failed task's in this call */
	char	   *stop_hint;		/* what to do next (NULL: fix the cause and call again) */
	TimestampTz started;
	MemoryContext cxt;			/* lives as long as the call (failed_here, stop_error) */
	BackfillPlannedTasks *planned;		/* the plan's tasks, checked at the call's first task */
	BackfillThrottleState *throttle;	/* the run's yield to production, or NULL */
	char	   *source_server;	/* options.source_server, in cxt (NULL: none): the run
								 * read again in a step lives in that step's memory */
	bool		working;		/* it holds the run's worker lock (run/worker.c) */
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
						 " A driver may have opened the transaction itself, without a BEGIN of yours: turn"
						 " autocommit on for this call (psycopg 2 and 3: connection.autocommit = True;"
						 " node-postgres sends no BEGIN of its own; JDBC: setAutoCommit(true)).",
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
	if (run->state == BACKFILL_RUN_DONE)
	{
		ereport(NOTICE, (errmsg("run " INT64_FORMAT " is already done", runid)));
		BackfillRunPark(run);
		return false;
	}
	if (run->state == BACKFILL_RUN_PAUSED)
	{
		BackfillRunPark(run);
		BackfillCommitStep();
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run " INT64_FORMAT " is paused", runid),
				 errhint("SELECT backfill_resume(" INT64_FORMAT "), then CALL backfill_run(" INT64_FORMAT ") again.",
						 runid, runid)));
	}
	if (run->state == BACKFILL_RUN_CANCELLED)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run " INT64_FORMAT " was cancelled", runid)));
	if (run->state == BACKFILL_RUN_BLOCKED)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run " INT64_FORMAT " is blocked", runid),
				 errhint("See its error in backfill_runs; backfill_resume(" INT64_FORMAT ") lets it go on once the code is back as planned.", runid)));
	if (run->state != BACKFILL_RUN_RUNNING)
		BackfillRunSetState(run, BACKFILL_RUN_RUNNING, NULL);
	BackfillWorkerLock(run->id);
	call->working = true;		/* from here the call's end releases the lock */
	BackfillWorkerEnter(run);
	BackfillCommitStep();
	/* a standby computing the source is waited for as the throttle waits */
	if (run->opts.source_server != NULL)
		call->source_server = MemoryContextStrdup(call->cxt, run->opts.source_server);
	if (BackfillThrottleWanted(&run->opts.throttle) || call->source_server != NULL)
		call->throttle = BackfillThrottleArm(&run->opts.throttle, runid, extschema, GetUserId(),
											 run->opts.search_path, call->cxt);
	return true;
}

/*
 * Another session changed the run's status during this call: done (another
 * worker finished it), the call ends well; paused or cancelled, it ends with
 * 57000 (operator intervention); failed or blocked, with 55000.
 */
static void
RunChangedElsewhere(RunCall *call, BackfillRun *run)
{
	const char *what = run->state == BACKFILL_RUN_PAUSED || run->state == BACKFILL_RUN_CANCELLED ?
		"by another session" : "in another session";

	BackfillRunPark(run);
	BackfillCommitStep();
	if (run->state == BACKFILL_RUN_DONE)
	{
		ereport(NOTICE,
				(errmsg("run " INT64_FORMAT " was finished by another session after %d task%s of this call",
						run->id, call->done_here, call->done_here == 1 ? "" : "s")));
		return;
	}
	call->stop_error = MemoryContextStrdup(call->cxt,
										   psprintf("run " INT64_FORMAT " was %s %s: stopping after %d task%s",
													run->id, run->status, what, call->done_here,
													call->done_here == 1 ? "" : "s"));
	call->stop_code = run->state == BACKFILL_RUN_PAUSED || run->state == BACKFILL_RUN_CANCELLED ?
		ERRCODE_OPERATOR_INTERVENTION : ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
	call->stop_hint = run->state == BACKFILL_RUN_PAUSED ?
		MemoryContextStrdup(call->cxt,
							psprintf("SELECT backfill_resume(" INT64_FORMAT "), then CALL backfill_run(" INT64_FORMAT ") again.",
									 run->id, run->id)) :
		run->state == BACKFILL_RUN_CANCELLED ? "" : NULL;
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
	if (run->state != BACKFILL_RUN_RUNNING)
	{
		RunChangedElsewhere(call, run);
		return false;
	}

	change = BackfillRunPinnedChange(run);
	if (change)
	{
		BackfillRunSetState(run, BACKFILL_RUN_BLOCKED, change);
		BackfillRunPark(run);
		BackfillCommitStep();
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
RaiseTaskFailed(RunCall *call, BackfillRun *run, BackfillTask *task, BackfillTaskOutcome *out)
{
	const char *name = task->partition ? task->partition : task->range_from;

	BackfillRunSetState(run, BACKFILL_RUN_FAILED, psprintf("task %d (%s) failed: %s", task->task, name, out->error));
	BackfillRunPark(run);
	BackfillCommitStep();
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
 * long): it does, and the call ends with 57000 (operator intervention),
 * saying why.  Paused or cancelled by another session during a wait, the
 * run keeps that status and the call ends the same way.  The task it
 * stopped, if any, was rolled back and stays pending.
 */
static void
ThrottlePause(RunCall *call, BackfillRun *run)
{
	char	   *why = pstrdup(BackfillThrottlePaused(call->throttle));

	RecordThrottled(run, call->throttle);
	if (BackfillThrottleWasStoppedElsewhere(call->throttle))
	{
		/* paused or cancelled by another session inside a fill: said as between tasks */
		BackfillRunLoad(run->extschema, run->id, run, false);
		RunChangedElsewhere(call, run);
		return;
	}
	BackfillRunSetState(run, BACKFILL_RUN_PAUSED, why);
	BackfillRunPark(run);
	BackfillCommitStep();
	call->stop_error = MemoryContextStrdup(call->cxt,
										   psprintf("run " INT64_FORMAT " paused: %s", run->id, why));
	call->stop_code = ERRCODE_OPERATOR_INTERVENTION;
	call->stop_hint = MemoryContextStrdup(call->cxt,
										  psprintf("SELECT backfill_resume(" INT64_FORMAT ") once production allows, then CALL backfill_run(" INT64_FORMAT ") again.",
												   run->id, run->id));
}

/*
 * Before a task, outside any lock: wait while production needs it, and,
 * with options.source_server, until the standby has replayed what this
 * server has written (the task then waits there only for what it adds).
 * Each look at the conditions is committed before the sleep that follows
 * it, so a wait holds no snapshot and no transaction ID (it holds back no
 * VACUUM), and every look sees what other sessions committed: a pause or a
 * cancel of the run ends the wait at the next look.  False when the call
 * ends.  The run here is as the step before read it, its text gone with
 * that step's memory: only its numbers are read (what the wait needs of its
 * options is in call).
 */
static bool
RunWaitForProduction(Oid extschema, RunCall *call, BackfillRun *run)
{
	for (;;)
	{
		char	   *behind = call->source_server ?
			BackfillRemoteBehind(call->source_server, "options.source_server") : NULL;
		BackfillThrottleVerdict v = BackfillThrottleLookWith(call->throttle, behind);

		if (v == BACKFILL_THROTTLE_GO)
			return true;
		if (v == BACKFILL_THROTTLE_PAUSE)
		{
			ThrottlePause(call, run);
			return false;
		}
		BackfillWorkerHeartbeat(run, false);
		BackfillCommitStep();
		BackfillWorkerActivity(run->id, "waits: %s", BackfillThrottleWaitingFor(call->throttle));
		BackfillThrottleSleep(call->throttle);
		BackfillRunReadStatus(run);
		if (run->state != BACKFILL_RUN_RUNNING)
		{
			BackfillThrottleStoppedElsewhere(call->throttle, run->status);
			RecordThrottled(run, call->throttle);
			RunChangedElsewhere(call, run);
			return false;
		}
	}
}

/*
 * One step of a call: claim a task and do it, or finish the run when none is
 * left.  False when the call is over.
 */
static bool
RunCallStep(RunCall *call, BackfillRun *run)
{
	BackfillTask task;
	BackfillTaskOutcome out;
	bool		claimed;
	char		expected[BACKFILL_BEFORE_LEN];	/* the old rows when a swap first gave way */
	BackfillWriteContext ctx;

	claimed = BackfillTaskClaim(run, call->failed_here, &task);

	if (claimed && call->max_tasks > 0 && call->done_here >= call->max_tasks)
	{
		/* enough for this call, and a task is left: let it go */
		BackfillCommitStep();
		return false;
	}
	if (!claimed)
	{
		int64		elsewhere;
		bool		tasks_failed;

		call->stop_error = BackfillRunFinish(run, call->failed_here, &elsewhere, &tasks_failed);
		if (!tasks_failed)
			call->stop_code = 0;	/* not a task's error: the run's own state */
		if (call->stop_error)
			call->stop_error = MemoryContextStrdup(call->cxt, call->stop_error);
		if (elsewhere > 0)
			ereport(NOTICE,
					(errmsg("run " INT64_FORMAT ": " INT64_FORMAT " task%s in progress in other sessions",
							call->runid, elsewhere, elsewhere == 1 ? "" : "s")));
		BackfillCommitStep();
		return false;
	}

	if (call->planned == NULL)
		call->planned = BackfillCheckPlannedTasks(run, call->cxt);
	BackfillRefuseUnplannedTask(run, call->planned, &task);
	BackfillWorkerActivity(run->id, "task %d (%s)", task.task, task.partition ? task.partition : task.range_from);

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
		BackfillTaskContext(run, call->throttle, expected[0] ? expected : NULL, &ctx);
		BackfillTaskRun(run, &task, &out, &ctx);
		if (expected[0] == '\0' && out.gave_way)
			strlcpy(expected, ctx.before, sizeof(expected));
		out.gave_ways = gave - 1;
		if (out.throttle_paused)
		{
			ThrottlePause(call, run);
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
	BackfillTaskRecord(run, &task, &out);
	RecordThrottled(run, call->throttle);
	if (!out.ok)
	{
		MemoryContext old = MemoryContextSwitchTo(call->cxt);

		call->failed_here = lappend_int(call->failed_here, task.task);
		MemoryContextSwitchTo(old);
		if (call->stop_code == 0)
			call->stop_code = out.sqlerrcode;
		if (run->opts.on_error != BACKFILL_ON_ERROR_CONTINUE || out.cancelled)
			RaiseTaskFailed(call, run, &task, &out);
	}
	BackfillTaskCommit(run, &task, &out, &ctx);
	ReportTask(run, &task, &out, call->started, call->done_here);
	BackfillWorkerHeartbeat(run, true);
	BackfillCommitStep();
	call->done_here++;
	if (run->opts.pause_ms > 0)
		BackfillSleep(run->opts.pause_ms);
	return true;
}

/* Step after step, each in an SPI connection of its own, until the call ends. */
static void
RunCallLoop(Oid extschema, RunCall *call, BackfillRun *run)
{
	for (;;)
	{
		bool		more;

		CHECK_FOR_INTERRUPTS();
		/* an update of the extension between two tasks stops the call */
		BackfillCheckVersion();

		/*
		 * Each step in an SPI connection of its own, whose memory (the run
		 * read again, the results of the step's queries) goes with it: a call
		 * may run thousands of tasks.
		 */
		if (SPI_connect_ext(SPI_OPT_NONATOMIC) != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		more = RunWaitForProduction(extschema, call, run) &&
			RunMayGoOn(extschema, call, run) && RunCallStep(call, run);
		SPI_finish();
		if (!more)
			break;
	}
}

PG_FUNCTION_INFO_V1(backfill_run);

/* CALL backfill_run(run_id bigint, max_tasks integer) */
Datum
backfill_run(PG_FUNCTION_ARGS)
{
	Oid			extschema = BackfillExtensionSchema(fcinfo);
	RunCall		call;
	BackfillRun run;

	BackfillCheckVersion();
	RunCallArgs(fcinfo, &call);
	/* the call's memory outlives its SPI connection: stop_error is raised after SPI_finish */
	call.cxt = CurrentMemoryContext;
	if (SPI_connect_ext(SPI_OPT_NONATOMIC) != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the worker lock is the session's: it goes at the call's end, however it ends */
	PG_TRY();
	{
		if (RunCallStart(extschema, &call, &run))
			RunCallLoop(extschema, &call, &run);
		if (call.working)
		{
			call.working = false;	/* BackfillWorkerEnd releases the lock first */
			BackfillWorkerEnd(&run);
			BackfillCommitStep();
		}
	}
	PG_FINALLY();
	{
		if (call.working)
			BackfillWorkerLeave(call.runid);
	}
	PG_END_TRY();
	BackfillThrottleDisarm(call.throttle);
	SPI_finish();
	if (call.stop_error)
		ereport(ERROR,
				(errcode(call.stop_code ? call.stop_code : ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s", call.stop_error),
				 call.stop_hint == NULL ?
				 errhint("Fix the cause and CALL backfill_run(" INT64_FORMAT ") again, or backfill_retry a task.", call.runid) :
				 call.stop_hint[0] ? errhint("%s", call.stop_hint) : 0));
	PG_RETURN_VOID();
}
