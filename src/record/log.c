/*-------------------------------------------------------------------------
 *
 * src/record/log.c
 *		backfill_log: the append-only record of every write.
 *
 * The log is readable by everyone and writable by no role but its owner;
 * the write functions insert into it as that owner, after their own checks
 * of the caller's rights, so a role that cannot write a table cannot forge
 * a record of writing it.  Rows are never updated or deleted: the trigger
 * below refuses UPDATE, DELETE and TRUNCATE, for the owner too.
 *
 * The records are stored in backfill_log_data, which only its owner reads;
 * everyone reads them, and the runs and tasks, through the views backfill_log,
 * backfill_runs and backfill_tasks.  A record or a run is tied to its table by
 * OID (target_oid), never by the name it had: a role sees the records of the
 * tables it may read (backfill_visible), and the values computed over their
 * rows (counts, fingerprints, details, measures, errors) only when no
 * row-level security hides a row of the table from it (backfill_may_see_rows),
 * decided when read, since policies can come later.  The owner of the log, who
 * writes it, and superusers see all of it.
 *
 * Every row of the state tables carries its origin: 'backfill' when backfill's
 * own functions wrote it, 'outside' for a restore of pg_dump's copy or an
 * INSERT by hand, set by the triggers below whatever the row says.  A run or
 * task from outside is kept as history and never run; a record from outside
 * never vouches for a change.  Such a record or run is tied by
 * backfill_tie_target to the table its name resolves to then (every table
 * has a new OID after a restore), provided both the role it names and the
 * role inserting it could have written that table; otherwise to none, and
 * only a superuser or the log's owner sees it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "record/log.h"

PG_FUNCTION_INFO_V1(backfill_log_guard);

/* Trigger function: refuse any change to a row of backfill_log. */
Datum
backfill_log_guard(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	BackfillCheckVersion();
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
	Oid			logrel = get_relname_relid("backfill_log_data", logschema);
	char	   *actor = GetUserNameFromId(GetUserId(), false);
	char	   *sql;
	Oid			types[11] = {NAMEOID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID,
	TEXTOID, TEXTOID, JSONBOID, INT8OID, OIDOID};
	Datum		values[11];
	char		nulls[11];
	/* the current name of a relation the caller holds locked: its OID */
	Oid			targetoid = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(rec->target)),
											 NoLock, false);
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
	values[9] = Int64GetDatum(rec->run_id);
	nulls[9] = rec->run_id == 0 ? 'n' : ' ';
	values[10] = ObjectIdGetDatum(targetoid);

	sql = psprintf("INSERT INTO %s (logged_by, operation, target, partition, rows_before, rows_after,"
				   " fingerprint_before, fingerprint_after, details, run_id, target_oid)"
				   " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
				   BackfillQualifiedName(logrel));

	rc = BackfillStateExec(logschema, sql, 11, types, values, nulls, 1);

	if (rc != SPI_OK_INSERT_RETURNING || SPI_processed != 1)
		elog(ERROR, "could not write to backfill_log: %s", SPI_result_code_string(rc));
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return id;
}

/* The id of the last record of backfill_log, or 0. */
int64
BackfillLastLogId(Oid logschema)
{
	int			rc = BackfillStateExec(logschema,
									   psprintf("SELECT coalesce(max(id), 0) FROM %s",
												BackfillExtName(logschema, "backfill_log_data")),
									   0, NULL, NULL, NULL, 1);

	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read backfill_log");
	return pg_strtoint64(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
}

/*
 * The tables the records after record after kept the old rows of a
 * replacement in (details' archived_as), by OID: those that still exist.
 */
List *
BackfillArchivedSince(Oid logschema, int64 after)
{
	List	   *archives = NIL;
	int			rc = BackfillStateExec(logschema,
									   psprintf("SELECT details OPERATOR(pg_catalog.->>) 'archived_as' FROM %s"
												" WHERE id OPERATOR(pg_catalog.>) $1 AND origin OPERATOR(pg_catalog.=) 'backfill'"
												"   AND details OPERATOR(pg_catalog.->>) 'archived_as' IS NOT NULL",
												BackfillExtName(logschema, "backfill_log_data")),
									   1, (Oid[]) {INT8OID}, (Datum[]) {Int64GetDatum(after)}, NULL, 0);

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read backfill_log");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(name)),
											 NoLock, true);

		CHECK_FOR_INTERRUPTS();
		if (OidIsValid(relid))
			archives = lappend_oid(archives, relid);
	}
	return archives;
}

/*
 * Record a write of target (and partition) with the fingerprints before and
 * after; for a run's task (run_id, else 0), with why it wrote as it did
 * added to the details (or NULL).
 */
int64
BackfillLogWriteChange(Oid logschema, const char *operation, const char *target,
					   const char *partition, const BackfillFingerprint *before,
					   const BackfillFingerprint *after, const char *details,
					   int64 run_id, const char *why)
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
	rec.run_id = run_id;
	if (why != NULL && details[0] == '{' && details[strlen(details) - 1] == '}')
	{
		StringInfoData buf;

		initStringInfo(&buf);
		appendBinaryStringInfo(&buf, details, strlen(details) - 1);
		appendStringInfoString(&buf, strcmp(details, "{}") == 0 ? "\"why\": " : ", \"why\": ");
		escape_json(&buf, why);
		appendStringInfoChar(&buf, '}');
		rec.details = buf.data;
	}
	return BackfillLogWrite(logschema, &rec);
}

/* Is the current user a superuser, or a member of the role owning the log? */
static bool
StateReader(Oid extschema)
{
	Oid			logrel = get_relname_relid("backfill_log_data", extschema);

	return superuser() ||
		(OidIsValid(logrel) && has_privs_of_role(GetUserId(), BackfillRelOwner(logrel)));
}

/*
 * May the current user see the records and runs of the table with OID relid
 * (InvalidOid for none)?  Yes if it may read the table, or is a member of the
 * role owning it; a table that is gone, or that a record was never tied to,
 * only a superuser or a member of the log's owner.
 */
bool
BackfillRecordVisible(Oid extschema, Oid relid)
{
	if (StateReader(extschema))
		return true;
	if (!OidIsValid(relid) || !SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return false;
	return pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK ||
		has_privs_of_role(GetUserId(), BackfillRelOwner(relid));
}

PG_FUNCTION_INFO_V1(backfill_visible);

/*
 * backfill_visible(target oid) RETURNS boolean: may the current user see the
 * records and runs of the table with OID target?
 */
Datum
backfill_visible(PG_FUNCTION_ARGS)
{
	BackfillCheckVersion();

	PG_RETURN_BOOL(BackfillRecordVisible(BackfillExtensionSchema(fcinfo),
										 PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0)));
}

PG_FUNCTION_INFO_V1(backfill_visible_name);

/*
 * backfill_visible(target text) RETURNS boolean: backfill_visible of the
 * table that has the schema-qualified name target now.
 */
Datum
backfill_visible_name(PG_FUNCTION_ARGS)
{
	char	   *target = TextDatumGetCString(PG_GETARG_DATUM(0));
	Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(target)),
										 NoLock, true);

	BackfillCheckVersion();
	PG_RETURN_BOOL(OidIsValid(relid) && BackfillRecordVisible(BackfillExtensionSchema(fcinfo), relid));
}

PG_FUNCTION_INFO_V1(backfill_may_see_rows);

/*
 * backfill_may_see_rows(target oid) RETURNS boolean: may the current user see
 * counts, fingerprints and samples computed over the rows of table target?
 * Decided at each call: policies may have come since the record was written.
 * The log's owner and superusers see everything.
 */
Datum
backfill_may_see_rows(PG_FUNCTION_ARGS)
{
	BackfillCheckVersion();

	if (StateReader(BackfillExtensionSchema(fcinfo)))
		PG_RETURN_BOOL(true);
	if (PG_ARGISNULL(0))
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(BackfillMaySeeRows(PG_GETARG_OID(0)));
}

/* A row trigger BEFORE INSERT on one of the state tables, or an error. */
static TriggerData *
StateInsertTrigger(FunctionCallInfo fcinfo, const char *name)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s must be called as a row trigger BEFORE INSERT", name)));
	return trigdata;
}

/*
 * The row with its origin set: 'backfill' when backfill's own functions
 * write it, 'outside' for any other insert (a restore, an INSERT by hand),
 * whatever origin it was given.
 */
static HeapTuple
StampOrigin(TupleDesc desc, HeapTuple tuple)
{
	int			att = SPI_fnumber(desc, "origin");
	Datum		value = CStringGetTextDatum(BackfillWritingState() ? "backfill" : "outside");
	bool		null = false;

	if (att <= 0)
		elog(ERROR, "a state table of backfill has no column origin");
	return heap_modify_tuple_by_cols(tuple, desc, 1, &att, &value, &null);
}

/* May role own or insert into relid? */
static bool
MayWrite(Oid role, Oid relid)
{
	return OidIsValid(role) &&
		(has_privs_of_role(role, BackfillRelOwner(relid)) ||
		 pg_class_aclcheck(relid, role, ACL_INSERT) == ACLCHECK_OK);
}

/*
 * The table a row inserted from outside backfill is tied to: the one its
 * name resolves to now, if both the role it names (its actor) and the role
 * inserting it could have written that table; else none.  The inserting
 * role counts too, so no role can credit a record to a table it could not
 * write itself, in another role's name.
 */
static Oid
OutsideTarget(Oid resolved, TupleDesc desc, HeapTuple tuple, int actor_att)
{
	bool		isnull;
	Datum		d;
	Oid			actor;

	if (!OidIsValid(resolved) || !MayWrite(GetUserId(), resolved))
		return InvalidOid;
	d = heap_getattr(tuple, actor_att, desc, &isnull);
	actor = isnull ? InvalidOid : get_role_oid(NameStr(*DatumGetName(d)), true);
	return MayWrite(actor, resolved) ? resolved : InvalidOid;
}

PG_FUNCTION_INFO_V1(backfill_tie_target);

/*
 * Trigger function, BEFORE INSERT on backfill_log_data and backfill_runs_data:
 * stamp a row's origin and tie it to the table it names.  The write functions
 * insert rows whose target_oid is the table target names: they pass with
 * origin 'backfill'.  Any other row (pg_dump's copy being restored, where OIDs
 * are new; an INSERT by hand) gets origin 'outside' and the OID of the table
 * its name resolves to now, if the role that wrote it (logged_by, planned_by)
 * and the role inserting it each own or may insert into that table; else
 * none, so a table created under a freed name never inherits the records of
 * the old one, and no role can credit a record to another.
 */
Datum
backfill_tie_target(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = StateInsertTrigger(fcinfo, "backfill_tie_target");
	TupleDesc	desc = RelationGetDescr(trigdata->tg_relation);
	HeapTuple	tuple = StampOrigin(desc, trigdata->tg_trigtuple);
	int			target_att = SPI_fnumber(desc, "target");
	int			oid_att = SPI_fnumber(desc, "target_oid");
	int			actor_att = SPI_fnumber(desc, "logged_by");
	bool		isnull;
	Datum		d;
	Oid			stored;
	Oid			resolved;
	Oid			tied;
	Datum		value;
	bool		null;

	BackfillCheckVersion();
	if (actor_att <= 0)
		actor_att = SPI_fnumber(desc, "planned_by");
	if (target_att <= 0 || oid_att <= 0 || actor_att <= 0)
		elog(ERROR, "backfill_tie_target fired on a table without target, target_oid and its actor");

	d = heap_getattr(tuple, target_att, desc, &isnull);
	if (isnull)
		return PointerGetDatum(tuple);	/* NOT NULL says no */
	resolved = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(TextDatumGetCString(d))),
								NoLock, true);
	d = heap_getattr(tuple, oid_att, desc, &isnull);
	stored = isnull ? InvalidOid : DatumGetObjectId(d);
	if (BackfillWritingState() && OidIsValid(stored) && stored == resolved)
		return PointerGetDatum(tuple);

	tied = OutsideTarget(resolved, desc, tuple, actor_att);
	value = ObjectIdGetDatum(tied);
	null = !OidIsValid(tied);
	return PointerGetDatum(heap_modify_tuple_by_cols(tuple, desc, 1, &oid_att, &value, &null));
}

PG_FUNCTION_INFO_V1(backfill_stamp_origin);

/*
 * Trigger function, BEFORE INSERT on backfill_tasks_data: stamp a task's
 * origin ('backfill' from backfill_plan, 'outside' otherwise).  A task from
 * outside is never run.
 */
Datum
backfill_stamp_origin(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = StateInsertTrigger(fcinfo, "backfill_stamp_origin");

	BackfillCheckVersion();
	return PointerGetDatum(StampOrigin(RelationGetDescr(trigdata->tg_relation), trigdata->tg_trigtuple));
}
