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
 * A role sees the records (and the runs, and their tasks) of the tables it
 * may read: a row-level security policy calls backfill_visible below.  The
 * owner of the log, who writes it, sees all of it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"

#include "compat.h"
#include "log.h"
#include "relation.h"
#include "spi_util.h"

int64		BackfillLogRunId = 0;

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

/*
 * Insert one record into backfill_log and return its id.  The caller has
 * checked the rights of the current user on the target; the row is written
 * as the owner of the log, in a restricted security context, and names the
 * current user as the actor.  Must be called inside SPI.
 */
int64
BackfillLogWrite(Oid logschema, const BackfillLogRecord *rec)
{
	Oid			logrel = get_relname_relid("backfill_log", logschema);
	Oid			saved_userid;
	int			saved_sec;
	char	   *actor = GetUserNameFromId(GetUserId(), false);
	char	   *sql;
	Oid			types[10] = {NAMEOID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID,
	TEXTOID, TEXTOID, JSONBOID, INT8OID};
	Datum		values[10];
	char		nulls[10];
	int			rc;
	bool		isnull;
	int64		id;

	if (!OidIsValid(logrel))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("backfill_log does not exist in schema \"%s\"",
						get_namespace_name(logschema))));

	memset(nulls, ' ', sizeof(nulls));
	values[0] = DirectFunctionCall1(namein, CStringGetDatum(actor));
	values[1] = CStringGetTextDatum(rec->operation);
	values[2] = CStringGetTextDatum(rec->target);
	if (rec->partition)
		values[3] = CStringGetTextDatum(rec->partition);
	else
		nulls[3] = 'n';
	values[4] = Int64GetDatum(rec->rows_before);
	nulls[4] = rec->rows_before < 0 ? 'n' : ' ';
	values[5] = Int64GetDatum(rec->rows_after);
	nulls[5] = rec->rows_after < 0 ? 'n' : ' ';
	if (rec->fingerprint_before)
		values[6] = CStringGetTextDatum(rec->fingerprint_before);
	else
		nulls[6] = 'n';
	if (rec->fingerprint_after)
		values[7] = CStringGetTextDatum(rec->fingerprint_after);
	else
		nulls[7] = 'n';
	values[8] = DirectFunctionCall1(jsonb_in, CStringGetDatum(rec->details ? rec->details : "{}"));
	values[9] = Int64GetDatum(BackfillLogRunId);
	nulls[9] = BackfillLogRunId == 0 ? 'n' : ' ';

	sql = psprintf("INSERT INTO %s (logged_by, operation, target, partition, rows_before, rows_after,"
				   " fingerprint_before, fingerprint_after, details, run_id)"
				   " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
				   BackfillQualifiedName(logrel));

	GetUserIdAndSecContext(&saved_userid, &saved_sec);
	SetUserIdAndSecContext(BackfillRelOwner(logrel),
						   saved_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	rc = SPI_execute_with_args(sql, 10, types, values, nulls, false, 1);
	SetUserIdAndSecContext(saved_userid, saved_sec);

	if (rc != SPI_OK_INSERT_RETURNING || SPI_processed != 1)
		elog(ERROR, "could not write to backfill_log: %s", SPI_result_code_string(rc));
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return id;
}

/* Record a write of target (and partition) with the fingerprints before and after. */
int64
BackfillLogWriteChange(Oid logschema, const char *operation, const char *target,
					   const char *partition, const BackfillFingerprint *before,
					   const BackfillFingerprint *after, const char *details)
{
	BackfillLogRecord rec;

	memset(&rec, 0, sizeof(rec));
	rec.operation = operation;
	rec.target = target;
	rec.partition = partition;
	rec.rows_before = (int64) before->rows;
	rec.rows_after = (int64) after->rows;
	rec.fingerprint_before = BackfillFingerprintText(before);
	rec.fingerprint_after = BackfillFingerprintText(after);
	rec.details = details;
	return BackfillLogWrite(logschema, &rec);
}

PG_FUNCTION_INFO_V1(backfill_visible);

/*
 * backfill_visible(target text) RETURNS boolean: may the current user see
 * the record of a write to target?  Yes if it may read the table, or is a
 * member of the role owning it; no if the table is gone.
 */
Datum
backfill_visible(PG_FUNCTION_ARGS)
{
	char	   *target = TextDatumGetCString(PG_GETARG_DATUM(0));
	/* a schema-qualified, quoted name, as the write functions record it */
	Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(target)),
										 NoLock, true);

	if (!OidIsValid(relid))
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK ||
				   has_privs_of_role(GetUserId(), BackfillRelOwner(relid)));
}
