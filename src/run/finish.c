/*-------------------------------------------------------------------------
 *
 * src/run/finish.c
 *		The end of a run: its dependents refreshed, what lay outside its
 *		range checked again, the run marked done or failed.
 *
 * When no task is left, the worker that sees it, under the run row's lock,
 * refreshes the dependent materialized views (each in a subtransaction of
 * its own, a failure recorded), checks what lay outside the range as it was
 * planned (by fingerprints, or by counters and storage), names a partition
 * another logged write rewrote by that write's record, and marks the run
 * done; or failed, when tasks failed.
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
#include "run/outside.h"
#include "run/worker.h"
#include "run/runstate.h"
#include "run/finish.h"
#include "run/window.h"
#include "validate/diff.h"
#include "write/context.h"
#include "write/inplace.h"
#include "write/merge.h"
#include "write/part.h"
#include "write/replace.h"
#include "write/staging.h"
#include "write/swaplock.h"

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

/*
 * No task left to claim: if none is in progress elsewhere, finish the run
 * (refresh, check what lay outside, mark done) or mark it failed.  Returns
 * the error to raise after the commit, or NULL; *tasks_failed says whether
 * it is that tasks failed.
 */
char *
BackfillRunFinish(BackfillRun *run, List *failed_here, int64 *pending_elsewhere, bool *tasks_failed)
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
	if (run->state != BACKFILL_RUN_RUNNING)
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

		BackfillRunSetState(run, BACKFILL_RUN_FAILED, error);
		BackfillRunPark(run);
		*tasks_failed = true;
		return psprintf("run " INT64_FORMAT " stopped: %s", run->id, error);
	}

	{
		char	   *refreshed = NULL;
		char	   *untouched = NULL;
		int			changed = 0;
		int			written = 0;
		bool		ok = true;
		Oid			ut[3] = {INT8OID, JSONBOID, JSONBOID};
		Datum		uv[3];
		char		un[3] = {' ', ' ', ' '};

		if (run->opts.refresh_dependents)
		{
			BackfillWorkerActivity(run->id, "finishing: refreshing what depends on %s", run->target);
			refreshed = RefreshDependents(run, &ok);
		}
		if (run->opts.untouched_check != BACKFILL_UNTOUCHED_OFF)
		{
			BackfillWorkerActivity(run->id, "finishing: checking what lies outside the range");
			untouched = BackfillOutsideCheck(run, &changed, &written);
		}
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

			BackfillRunSetState(run, BACKFILL_RUN_FAILED, error);
			BackfillRunPark(run);
			return psprintf("run " INT64_FORMAT " stopped: %s", run->id, error);
		}
		BackfillRunSetState(run, BACKFILL_RUN_DONE, NULL);
		BackfillRunPark(run);
		ereport(NOTICE,
				(errmsg("run " INT64_FORMAT " done%s%s", run->id,
						refreshed && strcmp(refreshed, "[]") != 0 ? "; materialized views refreshed" : "",
						changed > written ? "; something outside the range changed (see untouched_after)"
						: changed ? "; something outside the range was written (see untouched_after)" : "")));
	}
	return NULL;
}
