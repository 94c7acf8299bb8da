/*-------------------------------------------------------------------------
 *
 * src/log.c
 *		backfill_log: the append-only record of every write.
 *
 * The log is readable by everyone and writable by no role but its owner;
 * the write functions insert into it as that owner, after their own checks
 * of the caller's rights, so a role that cannot write a table cannot forge
 * a record of writing it.  Rows are never updated or deleted: the trigger
 * below refuses UPDATE, DELETE and TRUNCATE, for the owner too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/trigger.h"
#include "fmgr.h"

PG_FUNCTION_INFO_V1(backfill_log_guard);

/* Trigger function: refuse any change to a row of backfill_log. */
Datum
backfill_log_guard(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("backfill_log_guard must be called as a trigger")));

	if (!TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) &&
		!TRIGGER_FIRED_BY_DELETE(trigdata->tg_event) &&
		!TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
		return PointerGetDatum(trigdata->tg_trigtuple);

	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event)
			 ? errmsg("backfill_log is append-only: its rows cannot be updated")
			 : TRIGGER_FIRED_BY_DELETE(trigdata->tg_event)
			 ? errmsg("backfill_log is append-only: its rows cannot be deleted")
			 : errmsg("backfill_log is append-only: it cannot be truncated"),
			 errdetail("The log records every write backfill made; a record that can be changed proves nothing."),
			 TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event)
			 ? errhint("To prune old records, a superuser can disable trigger backfill_log_no_truncate for that one statement.")
			 : errhint("To prune old records, a superuser can disable trigger backfill_log_append_only for that one statement.")));
	pg_unreachable();
}
