/*-------------------------------------------------------------------------
 *
 * src/run/progress.c
 *		backfill_progress: one row per run the caller may see, at the cost
 *		of what it shows.
 *
 * The runs are read through the view backfill_runs, as the caller, so that
 * each row and each figure is what the caller may see.  Their tasks are
 * counted from backfill_tasks_data directly, as the state tables' owner,
 * only for the runs the caller sees, by the index on (run_id, task), in one
 * grouped query: not through the view backfill_tasks, whose every column
 * asks again whether the caller may see the run's rows.  Whether a session
 * works a run is read from pg_locks once a call (its worker lock,
 * run/worker.c), and what it does from pg_stat_activity.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "base/extension.h"
#include "base/spi_util.h"
#include "run/runstate.h"
#include "run/worker.h"

/* backfill_run_progress's output columns */
#define PROGRESS_COLUMNS 26

/*
 * The last run pg_cron recorded of a run's job, as two columns of the
 * progress query: a job pg_cron cannot start (no connection, no background
 * worker) leaves the run as it was, and only cron.job_run_details says why.
 */
static char *
CronLastRunColumns(void)
{
	char	   *cron = BackfillCronSchema();
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	bool		isnull;

	if (cron == NULL)
		return "NULL::text, NULL::text";
	/* a role pg_cron was not opened to (USAGE on its schema) sees no job */
	values[0] = CStringGetTextDatum(cron);
	if (SPI_execute_with_args("SELECT pg_catalog.has_schema_privilege($1, 'USAGE')"
							  " AND pg_catalog.has_table_privilege(pg_catalog.format('%I.job_run_details', $1), 'SELECT')",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not check the privileges on pg_cron's schema");
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		return "NULL::text, NULL::text";
	return psprintf("(SELECT d.status FROM %s.job_run_details d WHERE d.jobid = r.cron_job ORDER BY d.runid DESC LIMIT 1),"
					" (SELECT d.return_message FROM %s.job_run_details d WHERE d.jobid = r.cron_job ORDER BY d.runid DESC LIMIT 1)",
					quote_identifier(cron), quote_identifier(cron));
}

/* The ids of the runs the caller may see, as an int8[] datum (NULL when none). */
static Datum
VisibleRuns(Oid extschema)
{
	bool		isnull;
	Datum		ids;

	if (SPI_execute(psprintf("SELECT pg_catalog.array_agg(id) FROM %s",
							 BackfillExtName(extschema, "backfill_runs")), true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read backfill_runs");
	ids = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? (Datum) 0 : SPI_datumTransfer(ids, false, -1);
}

/*
 * The task counts of those runs, as the state tables' owner: eight parallel
 * arrays (run_id, total, done, failed, pending, skipped, rows written, WAL
 * written), which the caller's query joins as parameters $1..$8.
 */
static void
TaskCounts(Oid extschema, Datum ids, Datum *arrays)
{
	Oid			type = INT8ARRAYOID;

	if (BackfillStateExec(extschema,
						  psprintf("SELECT pg_catalog.array_agg(run_id), pg_catalog.array_agg(total),"
								   " pg_catalog.array_agg(done), pg_catalog.array_agg(failed),"
								   " pg_catalog.array_agg(pending), pg_catalog.array_agg(skipped),"
								   " pg_catalog.array_agg(written), pg_catalog.array_agg(wal)"
								   " FROM (SELECT run_id, count(*) AS total,"
								   "  count(*) FILTER (WHERE status = 'done') AS done,"
								   "  count(*) FILTER (WHERE status = 'failed') AS failed,"
								   "  count(*) FILTER (WHERE status = 'pending') AS pending,"
								   "  count(*) FILTER (WHERE status = 'skipped') AS skipped,"
								   "  coalesce(sum(rows_after) FILTER (WHERE status = 'done'), 0)::pg_catalog.int8 AS written,"
								   "  coalesce(sum(wal_bytes) FILTER (WHERE status = 'done'), 0)::pg_catalog.int8 AS wal"
								   "  FROM %s WHERE run_id OPERATOR(pg_catalog.=) ANY ($1) GROUP BY run_id) c",
								   BackfillExtName(extschema, "backfill_tasks_data")),
						  1, &type, &ids, NULL, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count the tasks of backfill_tasks_data");
	for (int i = 0; i < 8; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &isnull);

		arrays[i] = isnull ? PointerGetDatum(construct_empty_array(INT8OID)) : SPI_datumTransfer(d, false, -1);
	}
}

/* The progress query, as the caller, over the runs' view and the task counts ($1..$8). */
static char *
ProgressQuery(Oid extschema)
{
	const char *nsp = quote_identifier(get_namespace_name(extschema));

	return psprintf(
		"WITH w AS MATERIALIZED (SELECT l.classid, l.objid, pg_catalog.array_agg(l.pid ORDER BY l.pid) AS pids"
		"   FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory' AND l.granted"
		"   AND l.objsubid OPERATOR(pg_catalog.=) %d"
		"   AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())"
		"   GROUP BY l.classid, l.objid),"
		" t AS (SELECT * FROM unnest($1, $2, $3, $4, $5, $6, $7, $8)"
		"   AS t(run_id, total, done, failed, pending, skipped, written, wal))"
		" SELECT r.id, r.target, r.strategy, r.status, coalesce(t.total, 0), coalesce(t.done, 0),"
		" coalesce(t.failed, 0), coalesce(t.pending, 0),"
		" CASE WHEN %s.backfill_may_see_rows(r.target_oid) THEN coalesce(t.written, 0) END,"
		" r.started_at, coalesce(r.finished_at, CASE WHEN r.started_at IS NOT NULL THEN clock_timestamp() END)"
		"   - r.started_at,"
		" CASE WHEN r.status IN ('planned', 'running', 'paused') AND t.done > 0 THEN"
		"   (clock_timestamp() - r.started_at) * t.pending / t.done END,"
		" r.refreshed,"
		" CASE WHEN %s.backfill_may_see_rows(r.target_oid) THEN"
		"  (SELECT count(*) FROM jsonb_array_elements(r.untouched_after) u"
		"   WHERE coalesce(u ->> 'found' IN ('changed', 'written'), NOT (u ->> 'same')::boolean)"
		"     AND u -> 'logged_as' = 'null'::jsonb) END,"
		" r.error, %s, r.throttled, r.throttle_reason, coalesce(t.skipped, 0),"
		" (SELECT jsonb_object_agg(c.checked, c.found) FROM (SELECT f.checked, jsonb_object_agg(f.found, f.n) AS found"
		"   FROM (SELECT coalesce(u ->> 'check', CASE WHEN u ? 'writes' THEN 'counters' ELSE 'fingerprint' END) AS checked,"
		"     CASE WHEN r.untouched_after IS NULL THEN 'planned'"
		"       WHEN u -> 'logged_as' <> 'null'::jsonb THEN 'logged'"
		"       ELSE coalesce(u ->> 'found', CASE (u ->> 'same')::boolean WHEN true THEN 'untouched'"
		"         WHEN false THEN 'changed' ELSE 'unknown' END) END AS found, count(*) AS n"
		"     FROM jsonb_array_elements(coalesce(r.untouched_after, r.untouched)) u GROUP BY 1, 2) f"
		"   GROUP BY f.checked) c),"
		" w.pids, r.heartbeat,"
		" r.status = 'running' AND r.worker_pid IS NOT NULL AND w.pids IS NULL,"
		" (SELECT a.query FROM pg_catalog.pg_stat_activity a WHERE a.pid = w.pids[1]),"
		" CASE WHEN t.done > 0 THEN (t.wal / t.done * t.pending)::pg_catalog.int8 END"
		" FROM %s r LEFT JOIN t ON t.run_id = r.id"
		" LEFT JOIN w ON w.classid = (r.id %% 4294967296)::pg_catalog.oid"
		"   AND w.objid = (r.id / 4294967296)::pg_catalog.oid"
		" ORDER BY r.id",
		BACKFILL_RUN_WORKER_LOCK, nsp, nsp, CronLastRunColumns(), BackfillExtName(extschema, "backfill_runs"));
}

PG_FUNCTION_INFO_V1(backfill_run_progress);

/*
 * backfill_run_progress() RETURNS TABLE(...): one row per run.  The time left
 * is measured, not guessed: the run's elapsed time per finished task (its
 * pauses, commits, checks and the waits for a scheduler's tick included),
 * times the tasks pending.
 */
Datum
backfill_run_progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			extschema = BackfillExtensionSchema(fcinfo);
	Oid			types[8];
	Datum		arrays[8];
	Datum		ids;
	int			rc;
	int			nest;

	BackfillCheckVersion();
	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	nest = BackfillPinSearchPath();
	ids = VisibleRuns(extschema);
	if (ids == (Datum) 0)
	{
		BackfillUnpinSearchPath(nest);
		SPI_finish();
		return (Datum) 0;
	}
	TaskCounts(extschema, ids, arrays);
	for (int i = 0; i < 8; i++)
		types[i] = INT8ARRAYOID;
	rc = SPI_execute_with_args(ProgressQuery(extschema), 8, types, arrays, NULL, true, 0);
	BackfillUnpinSearchPath(nest);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read backfill_runs");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		Datum		values[PROGRESS_COLUMNS];
		bool		nulls[PROGRESS_COLUMNS];

		CHECK_FOR_INTERRUPTS();
		for (int c = 0; c < PROGRESS_COLUMNS; c++)
			values[c] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, c + 1, &nulls[c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SPI_finish();
	return (Datum) 0;
}
