/*-------------------------------------------------------------------------
 *
 * src/run/runstate.c
 *		The state of runs: status changes, pinned code, pg_cron jobs, progress
 *		(their options are runoptions.c's).
 *
 * backfill_runs_data and backfill_tasks_data are read and written only as
 * their owner (the extension's owner), in a restricted security context with
 * search_path pinned, after the caller's right over the run's target has been
 * checked here: only a member of the role owning the target may plan, run,
 * pause, resume, cancel, retry or schedule a run on it.  Everyone reads them
 * through the views backfill_runs and backfill_tasks (see log.c).  A run is
 * tied to its target by OID: renamed, the table keeps its runs, and a table
 * created under the freed name gets none of them.  A restore ties a run to
 * the table its stored name resolves to (backfill_tie_target).
 *
 * Status: planned -> running -> done; running <-> paused; running -> failed
 * (a task failed with on_error stop, or tasks failed for good); running ->
 * blocked (pinned code changed); any but done -> cancelled.  A task is
 * pending until the transaction of its data commits it done or failed; the
 * task in progress is the row a worker holds FOR UPDATE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "run/pin.h"
#include "run/runstate.h"
#include "run/window.h"

/* "run_id N is not a run": what a role that may not see a run is told. */
static void
NoSuchRun(int64 runid)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("run_id " INT64_FORMAT " is not a run of backfill_runs", runid),
			 errhint("backfill_plan returns the id of the run it plans.")));
}

/*
 * Read the cumulative statistics afresh (not the copy this transaction may
 * have cached), before BackfillUntouchedWrites.
 */
void
BackfillUntouchedSnapshot(void)
{
	pgstat_clear_snapshot();
}

/*
 * When the cumulative statistics this database's tables are counted in last
 * started from zero, as text to compare: any reset of a table's counters
 * (pg_stat_reset_single_table_counters) or of the database's moves the
 * database's reset time, and a crash, which loses them all, moves the reset
 * time of the shared statistics.  Counters compared across a change of it
 * prove nothing, even when they read the same.
 */
char *
BackfillStatsEpoch(void)
{
	PgStat_StatDBEntry *db = pgstat_fetch_stat_dbentry(MyDatabaseId);
	PgStat_BgWriterStats *shared = pgstat_fetch_stat_bgwriter();

	return psprintf("%s/%s", db && db->stat_reset_timestamp ? timestamptz_to_str(db->stat_reset_timestamp) : "-",
					shared && shared->stat_reset_timestamp ? timestamptz_to_str(shared->stat_reset_timestamp) : "-");
}

/*
 * The rows inserted, updated and deleted in relid since its statistics were
 * last reset, as the cumulative statistics say: what other sessions wrote
 * once they reported it (a session reports when it goes idle, within about
 * a second of its commit).
 */
int64
BackfillUntouchedWrites(Oid relid)
{
	Datum		arg = ObjectIdGetDatum(relid);

	/* and this session's own, not reported yet */
	return DatumGetInt64(DirectFunctionCall1(pg_stat_get_tuples_inserted, arg)) +
		DatumGetInt64(DirectFunctionCall1(pg_stat_get_tuples_updated, arg)) +
		DatumGetInt64(DirectFunctionCall1(pg_stat_get_tuples_deleted, arg)) +
		DatumGetInt64(DirectFunctionCall1(pg_stat_get_xact_tuples_inserted, arg)) +
		DatumGetInt64(DirectFunctionCall1(pg_stat_get_xact_tuples_updated, arg)) +
		DatumGetInt64(DirectFunctionCall1(pg_stat_get_xact_tuples_deleted, arg));
}

/*
 * Whether a run's options (jsonb text) cut its table into chunks: the shape
 * a run was planned for, when its table is gone (or was never resolved).
 */
static bool
OptionsChunked(const char *json)
{
	Datum		opts = DirectFunctionCall1(jsonb_in, CStringGetDatum(json));

	LOCAL_FCINFO(fc, 2);

	InitFunctionCallInfoData(*fc, NULL, 2, InvalidOid, NULL, NULL);
	fc->args[0].value = opts;
	fc->args[0].isnull = false;
	fc->args[1].value = CStringGetTextDatum("chunk");
	fc->args[1].isnull = false;
	(void) jsonb_object_field_text(fc);
	return !fc->isnull;		/* "chunk": null is no chunk */
}

/*
 * Read run runid into run, its row locked FOR UPDATE if lock (status changes
 * of one run happen one at a time); an error if there is none.  Must be
 * called inside SPI.
 */
void
BackfillRunLoad(Oid extschema, int64 runid, BackfillRun *run, bool lock)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(runid)};
	int			rc;
	HeapTuple	tup;
	TupleDesc	desc;
	char	   *v;
	int			nest;

	/* read as the owner: who may see it is BackfillRunCheckRights's question */
	rc = BackfillStateExec(extschema,
						   psprintf("SELECT target, strategy, source, key, window_column,"
									" window_type, range_from, range_to, options::text,"
									" pinned::text, dependents::text, untouched::text, status, cron_job,"
									" planned_by::text, target_oid, origin FROM %s WHERE id = $1%s",
									BackfillExtName(extschema, "backfill_runs_data"), lock ? " FOR UPDATE" : ""),
						   1, types, values, NULL, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read backfill_runs");
	if (SPI_processed == 0)
		NoSuchRun(runid);
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	memset(run, 0, sizeof(*run));
	run->id = runid;
	run->extschema = extschema;
	run->target = SPI_getvalue(tup, desc, 1);
	run->strategy = BackfillStrategyFromName(SPI_getvalue(tup, desc, 2));
	run->source = SPI_getvalue(tup, desc, 3);
	run->window_column = SPI_getvalue(tup, desc, 5);
	run->window_type = SPI_getvalue(tup, desc, 6);
	run->range_from = SPI_getvalue(tup, desc, 7);
	run->range_to = SPI_getvalue(tup, desc, 8);
	v = SPI_getvalue(tup, desc, 9);
	run->pinned = SPI_getvalue(tup, desc, 10);
	run->dependents = SPI_getvalue(tup, desc, 11);
	run->untouched = SPI_getvalue(tup, desc, 12);
	run->status = SPI_getvalue(tup, desc, 13);
	run->state = BackfillRunStatusFromName(run->status);
	run->cron_job = SPI_getvalue(tup, desc, 14) ? pg_strtoint64(SPI_getvalue(tup, desc, 14)) : 0;
	run->planned_by = SPI_getvalue(tup, desc, 15);
	run->outside = strcmp(SPI_getvalue(tup, desc, 17), "backfill") != 0;
	{
		bool		isnull;
		Datum		key = SPI_getbinval(tup, desc, 4, &isnull);

		if (!isnull)
			run->key = BackfillColumnList(DatumGetArrayTypeP(key), "key");
	}

	/* the run's table is the one it was planned on, whatever its name now */
	{
		bool		isnull;
		Datum		oid = SPI_getbinval(tup, desc, 16, &isnull);

		run->targetoid = isnull ? InvalidOid : DatumGetObjectId(oid);
		if (OidIsValid(run->targetoid) && !SearchSysCacheExists1(RELOID, ObjectIdGetDatum(run->targetoid)))
			run->targetoid = InvalidOid;
		if (OidIsValid(run->targetoid))
			run->target = BackfillQualifiedName(run->targetoid);
	}
	run->partitioned = OidIsValid(run->targetoid) &&
		get_rel_relkind(run->targetoid) == RELKIND_PARTITIONED_TABLE;
	/* options were checked at plan time; read them under the names they were checked with */
	nest = BackfillPinSearchPath();
	BackfillParseRunOptions(v, run->partitioned || (!OidIsValid(run->targetoid) && !OptionsChunked(v)),
							&run->opts);
	BackfillUnpinSearchPath(nest);
}

/*
 * A run inserted from outside backfill (restored from a dump, or by hand) is
 * history: it may be paused or cancelled, never run, resumed, retried or
 * scheduled.  backfill_plan alone makes runs that write, and a restore
 * cannot prove a row was written by it (whoever restores writes the dump).
 */
static void
RefuseOutsideRun(BackfillRun *run, const char *action)
{
	if (!run->outside || strcmp(action, "pause") == 0 || strcmp(action, "cancel") == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cannot %s run " INT64_FORMAT ": it was not planned by backfill_plan in this database",
					action, run->id),
			 errdetail("Its row of backfill_runs_data was inserted from outside backfill (a restore, or an INSERT by hand), "
					   "so it is kept as history and never run."),
			 errhint("Plan the range again with backfill_plan; backfill_cancel(" INT64_FORMAT ") closes this one.",
					 run->id)));
}

/*
 * Only a member of the role owning the target may act on a run.  A role that
 * may not even read the target is told there is no such run, as the
 * row-level security of backfill_runs shows it none.  When the target is
 * gone, only the role that planned the run (or a superuser) hears of it:
 * true is returned to that role if gone_ok, else an error.
 */
bool
BackfillRunCheckRights(BackfillRun *run, const char *action, bool gone_ok)
{
	if (!OidIsValid(run->targetoid))
	{
		if (!superuser() && strcmp(run->planned_by, GetUserNameFromId(GetUserId(), false)) != 0)
			NoSuchRun(run->id);
		RefuseOutsideRun(run, action);
		if (gone_ok)
			return false;
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table %s of run " INT64_FORMAT " no longer exists", run->target, run->id),
				 errhint("Cancel the run: backfill_cancel(" INT64_FORMAT ").", run->id)));
	}
	if (!has_privs_of_role(GetUserId(), BackfillRelOwner(run->targetoid)))
	{
		if (pg_class_aclcheck(run->targetoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			NoSuchRun(run->id);
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to %s run " INT64_FORMAT, run->target, action, run->id),
				 errhint("%s", BackfillOwnerHint(run->targetoid))));
	}
	RefuseOutsideRun(run, action);
	return true;
}

/*
 * Set the status of a run (and its error, its start and end times): the
 * first time it runs starts it, a status that ends it (BackfillRunStatusEnds)
 * sets its end, any other clears it.
 */
void
BackfillRunSetState(BackfillRun *run, BackfillRunStatus state, const char *error)
{
	const char *status = BackfillRunStatusName(state);
	Oid			types[5] = {INT8OID, TEXTOID, TEXTOID, BOOLOID, BOOLOID};
	Datum		values[5] = {Int64GetDatum(run->id), CStringGetTextDatum(status),
		error ? CStringGetTextDatum(error) : (Datum) 0,
		BoolGetDatum(state == BACKFILL_RUN_RUNNING), BoolGetDatum(BackfillRunStatusEnds(state))};
	char		nulls[5] = {' ', ' ', error ? ' ' : 'n', ' ', ' '};

	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET status = $2, error = $3,"
									  " started_at = CASE WHEN $4 THEN coalesce(started_at, now()) ELSE started_at END,"
									  " finished_at = CASE WHEN $5 THEN pg_catalog.clock_timestamp() END"
									  " WHERE id = $1", BackfillExtName(run->extschema, "backfill_runs_data")),
							 5, types, values, nulls, 0);
	run->status = pstrdup(status);
	run->state = state;
}

/*
 * The run's status as last committed, into run->status and run->state, in
 * an SPI connection of its own: a wait looks at it every
 * throttle_interval_ms for as long as it lasts, and keeps nothing of it.
 */
void
BackfillRunReadStatus(BackfillRun *run)
{
	char	   *status = BackfillRunStatusText(run->extschema, run->id);

	if (status == NULL)
		elog(ERROR, "run " INT64_FORMAT " is gone", run->id);
	run->status = status;
	run->state = BackfillRunStatusFromName(status);
}

/*
 * The schema of pg_cron's functions in this database, or NULL when pg_cron
 * is not installed here.  (Not the extension's extnamespace: pg_cron creates
 * its functions in schema cron whatever the schema current at CREATE
 * EXTENSION.)
 */
char *
BackfillCronSchema(void)
{
	int			rc = SPI_execute("SELECT n.nspname FROM pg_catalog.pg_extension e"
								 " JOIN pg_catalog.pg_depend d ON d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass"
								 "  AND d.refobjid OPERATOR(pg_catalog.=) e.oid AND d.deptype OPERATOR(pg_catalog.=) 'e'"
								 "  AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass"
								 " JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) d.objid"
								 " JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace"
								 " WHERE e.extname OPERATOR(pg_catalog.=) 'pg_cron'"
								 "  AND p.proname OPERATOR(pg_catalog.=) 'schedule'", true, 1);

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_extension");
	return SPI_processed ? SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : NULL;
}

/*
 * Whether pg_cron job run->cron_job is the one backfill_schedule made for
 * this run: its name, its command (one CALL of backfill_run on this run) and
 * its database.  A job id alone may name another job after a restore into a
 * database whose pg_cron already had jobs.
 */
static bool
CronJobIsOurs(const char *cron, BackfillRun *run)
{
	Oid			types[3] = {INT8OID, TEXTOID, TEXTOID};
	Datum		values[3];
	int			rc;

	values[0] = Int64GetDatum(run->cron_job);
	values[1] = CStringGetTextDatum(psprintf("backfill_run_" INT64_FORMAT, run->id));
	/* a command pg_cron runs in a session of its own (not a call from here) */
	values[2] = CStringGetTextDatum(psprintf("CALL %s.backfill_run(" INT64_FORMAT ", ",
											 quote_identifier(get_namespace_name(run->extschema)), run->id));
	rc = SPI_execute_with_args(psprintf("SELECT 1 FROM %s.job WHERE jobid OPERATOR(pg_catalog.=) $1"
										" AND jobname OPERATOR(pg_catalog.=) $2"
										" AND pg_catalog.starts_with(command, $3)"
										" AND database OPERATOR(pg_catalog.=) pg_catalog.current_database()",
										quote_identifier(cron)),
							   3, types, values, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_cron's jobs");
	return SPI_processed == 1;
}

/*
 * Call pg_cron's function on the run's job (sql: its text, with the schema
 * as %s and the job id as $1), in a subtransaction: a job that is gone
 * already, or that this role may not change, is reported, not raised.  False
 * when the job is not the run's own, or the call failed.
 */
static bool
CronJobCall(BackfillRun *run, const char *sql, const char *what)
{
	char	   *cron = BackfillCronSchema();
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	Oid			types[1] = {INT8OID};
	bool		ok = false;

	if (cron && !CronJobIsOurs(cron, run))
	{
		ereport(WARNING,
				(errmsg("pg_cron job " INT64_FORMAT " is not the job of run " INT64_FORMAT ": left alone",
						run->cron_job, run->id),
				 errdetail("Its name, command or database is not the one backfill_schedule gave it"
						   " (after a restore, job ids may belong to other jobs).")));
		return false;
	}
	if (cron == NULL)
		return false;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		Datum		job[1] = {Int64GetDatum(run->cron_job)};

		if (SPI_execute_with_args(psprintf(sql, quote_identifier(cron)), 1, types, job, NULL, false, 1) < 0)
			elog(ERROR, "pg_cron's function failed");
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		ok = true;
	}
	PG_CATCH();
	{
		ErrorData  *edata = BackfillAbortSubtransaction(cxt, owner);

		ereport(WARNING,
				(errmsg("could not %s pg_cron job " INT64_FORMAT " of run " INT64_FORMAT ": %s",
						what, run->cron_job, run->id, edata->message)));
	}
	PG_END_TRY();
	return ok;
}

/*
 * Remove the pg_cron job of a run, if it has one: backfill_pause and
 * backfill_cancel, from a session of their own.  (pg_cron ends a tick of
 * the job that is running then: it marks it "job canceled".)
 */
void
BackfillRunUnschedule(BackfillRun *run)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(run->id)};

	if (run->cron_job == 0)
		return;
	(void) CronJobCall(run, "SELECT %s.unschedule($1)", "remove");
	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET cron_job = NULL WHERE id = $1",
									  BackfillExtName(run->extschema, "backfill_runs_data")),
							 1, types, values, NULL, 0);
	run->cron_job = 0;
}

/*
 * The run stops scheduling itself: its worker, which may be a tick of that
 * very job, parks the job on a schedule that never comes (BACKFILL_CRON_PARKED)
 * instead of removing it.  pg_cron cancels a tick whose job is removed or
 * made inactive while it runs, and records it as failed ("job canceled"):
 * parked, the job stays active, its last tick ends and is recorded as it
 * ended, and the run keeps naming it, so backfill_progress.cron_status goes on
 * saying how the last tick went.  backfill_schedule of the run removes it.
 */
void
BackfillRunPark(BackfillRun *run)
{
	if (run->cron_job == 0)
		return;
	(void) CronJobCall(run, "SELECT %s.alter_job($1, schedule => '" BACKFILL_CRON_PARKED "')", "park");
}

/* Connect, read the run, check the caller's right to act on it. */
static void
OpenRun(FunctionCallInfo fcinfo, BackfillRun *run, const char *action, bool gone_ok)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("run_id must not be NULL")));
	PreventCommandIfReadOnly(psprintf("backfill_%s()", action));
	BackfillRequireCoordinator(psprintf("backfill_%s", action));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	BackfillRunLoad(BackfillExtensionSchema(fcinfo), PG_GETARG_INT64(0), run, false);
	(void) BackfillRunCheckRights(run, action, gone_ok);
	/* again, locked: one status change at a time per run */
	BackfillRunLoad(run->extschema, run->id, run, true);
}

static Datum
CloseRun(BackfillRun *run)
{
	Datum		result = CStringGetTextDatum(run->status);

	SPI_finish();
	return result;
}

static void
RefuseStatus(BackfillRun *run, const char *action)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("run " INT64_FORMAT " is %s: it cannot be %s", run->id, run->status, action)));
}

PG_FUNCTION_INFO_V1(backfill_pause);

/* backfill_pause(run_id bigint) RETURNS text */
Datum
backfill_pause(PG_FUNCTION_ARGS)
{
	BackfillRun run;

	BackfillCheckVersion();
	OpenRun(fcinfo, &run, "pause", false);
	if (run.state != BACKFILL_RUN_PLANNED && run.state != BACKFILL_RUN_RUNNING)
		RefuseStatus(&run, "paused");
	BackfillRunSetState(&run, BACKFILL_RUN_PAUSED, NULL);
	BackfillRunUnschedule(&run);
	PG_RETURN_DATUM(CloseRun(&run));
}

PG_FUNCTION_INFO_V1(backfill_resume);

/* backfill_resume(run_id bigint) RETURNS text */
Datum
backfill_resume(PG_FUNCTION_ARGS)
{
	BackfillRun run;

	BackfillCheckVersion();
	OpenRun(fcinfo, &run, "resume", false);
	if (run.state == BACKFILL_RUN_BLOCKED)
	{
		char	   *change = BackfillRunPinnedChange(&run);

		if (change)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("run " INT64_FORMAT " stays blocked: %s", run.id, change),
					 errhint("Restore the definition it was planned with, or cancel the run and plan a new one.")));
	}
	else if (run.state != BACKFILL_RUN_PAUSED && run.state != BACKFILL_RUN_FAILED)
		RefuseStatus(&run, "resumed");
	BackfillRunSetState(&run, BACKFILL_RUN_RUNNING, NULL);
	PG_RETURN_DATUM(CloseRun(&run));
}

PG_FUNCTION_INFO_V1(backfill_cancel);

/* backfill_cancel(run_id bigint) RETURNS text */
Datum
backfill_cancel(PG_FUNCTION_ARGS)
{
	BackfillRun run;

	BackfillCheckVersion();
	OpenRun(fcinfo, &run, "cancel", true);
	if (run.state == BACKFILL_RUN_DONE || run.state == BACKFILL_RUN_CANCELLED)
		RefuseStatus(&run, "cancelled");
	BackfillRunSetState(&run, BACKFILL_RUN_CANCELLED, NULL);
	BackfillRunUnschedule(&run);
	PG_RETURN_DATUM(CloseRun(&run));
}

PG_FUNCTION_INFO_V1(backfill_retry);

/* backfill_retry(run_id bigint, task integer) RETURNS text */
Datum
backfill_retry(PG_FUNCTION_ARGS)
{
	BackfillRun run;
	Oid			types[2] = {INT8OID, INT4OID};
	Datum		values[2];
	int			rc;

	BackfillCheckVersion();
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("task must not be NULL")));
	OpenRun(fcinfo, &run, "retry", false);
	if (run.state == BACKFILL_RUN_CANCELLED)
		RefuseStatus(&run, "retried");
	values[0] = Int64GetDatum(run.id);
	values[1] = Int32GetDatum(PG_GETARG_INT32(1));
	rc = BackfillStateExec(run.extschema,
						   psprintf("UPDATE %s SET status = 'pending', attempts = 0, error = NULL"
									" WHERE run_id = $1 AND task = $2 AND status IN ('done', 'failed', 'skipped')",
									BackfillExtName(run.extschema, "backfill_tasks_data")),
						   2, types, values, NULL, 0);
	if (rc != SPI_OK_UPDATE)
		elog(ERROR, "could not update backfill_tasks");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("run " INT64_FORMAT " has no finished, failed or skipped task %d", run.id, PG_GETARG_INT32(1)),
				 errhint("A pending task runs anyway; see backfill_tasks for the task numbers.")));
	if (run.state == BACKFILL_RUN_DONE || run.state == BACKFILL_RUN_FAILED)
		BackfillRunSetState(&run, BACKFILL_RUN_RUNNING, NULL);
	PG_RETURN_DATUM(CloseRun(&run));
}

PG_FUNCTION_INFO_V1(backfill_skip);

/*
 * backfill_skip(run_id bigint, task integer, reason text) RETURNS text: a
 * pending or failed task left undone for good, with who skipped it and why
 * in its error, so that the run can go on and end done without it (a
 * partition that retention dropped after planning, say).  A task in progress
 * in another session is waited for, and then is done, not skipped.
 */
Datum
backfill_skip(PG_FUNCTION_ARGS)
{
	BackfillRun run;
	char	   *reason;
	Oid			types[4] = {INT8OID, INT4OID, TEXTOID, TEXTOID};
	Datum		values[4];
	int			rc;

	BackfillCheckVersion();
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("task must not be NULL")));
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("reason must not be NULL"),
				 errhint("Say why the task is left undone: it is kept in the task's row.")));
	reason = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (strspn(reason, " \t\n\r") == strlen(reason))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("reason must not be empty"),
				 errhint("Say why the task is left undone: it is kept in the task's row.")));
	OpenRun(fcinfo, &run, "skip", false);
	if (run.state == BACKFILL_RUN_CANCELLED)
		RefuseStatus(&run, "skipped");
	values[0] = Int64GetDatum(run.id);
	values[1] = Int32GetDatum(PG_GETARG_INT32(1));
	values[2] = CStringGetTextDatum(GetUserNameFromId(GetUserId(), false));
	values[3] = CStringGetTextDatum(reason);
	rc = BackfillStateExec(run.extschema,
						   psprintf("UPDATE %s SET status = 'skipped', finished_at = pg_catalog.now(),"
									" error = pg_catalog.format('skipped by %%s: %%s', $3, $4)"
									" WHERE run_id OPERATOR(pg_catalog.=) $1 AND task OPERATOR(pg_catalog.=) $2"
									"   AND status OPERATOR(pg_catalog.=) ANY ('{pending,failed}'::pg_catalog.text[])",
									BackfillExtName(run.extschema, "backfill_tasks_data")),
						   4, types, values, NULL, 0);
	if (rc != SPI_OK_UPDATE)
		elog(ERROR, "could not update backfill_tasks");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("run " INT64_FORMAT " has no pending or failed task %d", run.id, PG_GETARG_INT32(1)),
				 errhint("A finished task cannot be skipped: its rows are written. See backfill_tasks for the task numbers.")));
	if (run.state == BACKFILL_RUN_FAILED)
		BackfillRunSetState(&run, BACKFILL_RUN_RUNNING, NULL);
	PG_RETURN_DATUM(CloseRun(&run));
}

/*
 * Warn when pg_cron's settings cannot start the job: without background
 * workers pg_cron opens a libpq connection to cron.host, which over TCP needs
 * the server to listen on a TCP address.  (Whether pg_hba.conf lets the
 * connection in cannot be told from here; backfill_progress shows the job's
 * failures.)
 */
static void
WarnIfCronCannotRun(int64 runid)
{
	const char *workers = GetConfigOption("cron.use_background_workers", true, false);
	const char *host = GetConfigOption("cron.host", true, false);
	const char *listen = GetConfigOption("listen_addresses", true, false);

	if (workers == NULL || strcmp(workers, "on") == 0)
		return;
	if (host == NULL || host[0] == '\0' || is_absolute_path(host))
		return;
	if (listen != NULL && listen[0] != '\0')
		return;
	ereport(WARNING,
			(errmsg("pg_cron cannot start the job of run " INT64_FORMAT ": it connects to cron.host = %s over TCP,"
					" and this server listens on no TCP address", runid, host),
			 errdetail("cron.use_background_workers is off, and listen_addresses is empty."),
			 errhint("Set cron.use_background_workers = on (and raise max_worker_processes), or point cron.host"
					 " at the server's socket directory; backfill_progress shows the job's failures.")));
}

/* Whether the run's job is parked (BackfillRunPark) and no tick of it is running. */
static bool
CronJobParked(const char *cron, BackfillRun *run)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(run->cron_job)};

	if (SPI_execute_with_args(psprintf("SELECT 1 FROM %s.job j WHERE j.jobid OPERATOR(pg_catalog.=) $1"
									   " AND j.schedule OPERATOR(pg_catalog.=) '" BACKFILL_CRON_PARKED "'"
									   " AND NOT EXISTS (SELECT FROM %s.job_run_details d"
									   "   WHERE d.jobid OPERATOR(pg_catalog.=) j.jobid"
									   "   AND d.status OPERATOR(pg_catalog.<>) ALL ('{succeeded,failed}'))",
									   quote_identifier(cron), quote_identifier(cron)),
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_cron's jobs");
	return SPI_processed == 1;
}

/*
 * pg_cron is not installed in this database: say why.  Preloaded, it runs
 * its jobs from the one database cron.database_name names: from there,
 * cron.schedule_in_database runs a job in this one.  Else it is missing.
 */
static void
CronMissing(BackfillRun *run, const char *schedule, int per_tick)
{
	const char *crondb = GetConfigOption("cron.database_name", true, false);
	const char *here = get_database_name(MyDatabaseId);

	if (crondb != NULL && strcmp(crondb, here) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pg_cron runs in database \"%s\", not in this one", crondb),
				 errdetail("pg_cron keeps its jobs in the database cron.database_name names, and is not installed here."),
				 errhint("From database \"%s\", cron.schedule_in_database(%s, %s, %s, %s) schedules the run;"
						 " or call CALL backfill_run(" INT64_FORMAT ") from a scheduler of your own.",
						 crondb, quote_literal_cstr(psprintf("backfill_run_" INT64_FORMAT, run->id)),
						 quote_literal_cstr(schedule),
						 quote_literal_cstr(psprintf("CALL %s.backfill_run(" INT64_FORMAT ", %d)",
													 quote_identifier(get_namespace_name(run->extschema)),
													 run->id, per_tick)),
						 quote_literal_cstr(here), run->id)));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("pg_cron is not installed in this database"),
			 errhint("Add pg_cron to shared_preload_libraries and CREATE EXTENSION pg_cron, or call"
					 " CALL backfill_run(" INT64_FORMAT ") from a scheduler of your own.", run->id)));
}

PG_FUNCTION_INFO_V1(backfill_schedule);

/* backfill_schedule(run_id bigint, schedule text, tasks_per_tick integer) RETURNS bigint */
Datum
backfill_schedule(PG_FUNCTION_ARGS)
{
	BackfillRun run;
	const char *schedule = BackfillArgText(fcinfo, 1, "schedule");
	int			per_tick;
	char	   *cron;
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		values[3];
	int			rc;
	bool		isnull;
	int64		job;

	BackfillCheckVersion();
	if (PG_ARGISNULL(2) || PG_GETARG_INT32(2) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tasks_per_tick must be at least 1")));
	per_tick = PG_GETARG_INT32(2);
	OpenRun(fcinfo, &run, "schedule", false);
	if (run.state != BACKFILL_RUN_PLANNED && run.state != BACKFILL_RUN_RUNNING)
		RefuseStatus(&run, "scheduled");
	cron = BackfillCronSchema();
	if (cron == NULL)
		CronMissing(&run, schedule, per_tick);
	if (run.cron_job != 0 && CronJobParked(cron, &run))
		BackfillRunUnschedule(&run);
	if (run.cron_job != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("run " INT64_FORMAT " is already scheduled as pg_cron job " INT64_FORMAT,
						run.id, run.cron_job)));

	WarnIfCronCannotRun(run.id);

	/*
	 * A command pg_cron runs in a session of its own (not a call from here):
	 * one CALL alone, as pg_cron runs anything more as one transaction, where
	 * it cannot commit.
	 */
	values[0] = CStringGetTextDatum(psprintf("backfill_run_" INT64_FORMAT, run.id));
	values[1] = CStringGetTextDatum(schedule);
	values[2] = CStringGetTextDatum(psprintf("CALL %s.backfill_run(" INT64_FORMAT ", %d)",
											 quote_identifier(get_namespace_name(run.extschema)),
											 run.id, per_tick));
	rc = SPI_execute_with_args(psprintf("SELECT %s.schedule($1, $2, $3)", quote_identifier(cron)),
							   3, types, values, NULL, false, 1);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "cron.schedule failed");
	job = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	{
		Oid			t2[2] = {INT8OID, INT8OID};
		Datum		v2[2] = {Int64GetDatum(run.id), Int64GetDatum(job)};

		(void) BackfillStateExec(run.extschema,
								 psprintf("UPDATE %s SET cron_job = $2 WHERE id = $1",
										  BackfillExtName(run.extschema, "backfill_runs_data")),
								 2, t2, v2, NULL, 0);
	}
	SPI_finish();
	PG_RETURN_INT64(job);
}

/* NULL when the code run executes is as planned, else what changed (BackfillPinnedChange). */
char *
BackfillRunPinnedChange(BackfillRun *run)
{
	return BackfillPinnedChange(run->id, run->pinned,
								BackfillBindWindow(run->source, run->window_type,
												   run->range_from, run->range_to),
								run->opts.search_path);
}
