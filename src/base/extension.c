/*-------------------------------------------------------------------------
 *
 * src/base/extension.c
 *		The extension's own objects: its schema, their names, and statements
 *		on its state tables as their owner.
 *
 * Every layer finds the extension's schema here: from the calling function
 * when there is one (the schema it was created in), else from pg_extension.
 * The state tables (runs, tasks, log, archives) are read and written only
 * through BackfillStateExec, as the tables' owner under
 * SECURITY_RESTRICTED_OPERATION with the search_path pinned, so a caller's
 * rights and settings never reach them; who may see or change a row is the
 * caller's question, asked before.
 *
 * Every SQL-callable function first asks BackfillCheckVersion whether this
 * library was built for the version of the extension installed in the
 * database: a library of another version (a newer build installed under a
 * running server, or a database not yet updated) refuses before it reads an
 * argument against declarations it was not built for.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "commands/extension.h"
#include "catalog/pg_extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"

/*
 * Whether this transaction has already found the installed version to be
 * ours, in its command checked_cid: an ALTER EXTENSION in the transaction
 * (a command of its own) makes the next call look again.
 */
static bool version_checked = false;
static CommandId checked_cid = InvalidCommandId;
static bool version_callback = false;

static void
ForgetVersionCheck(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		version_checked = false;
}

/* The major and minor numbers of a version "M.N", or false if it is not one. */
static bool
ParseVersion(const char *v, int *major, int *minor)
{
	char		tail;

	return sscanf(v, "%d.%d%c", major, minor, &tail) == 2;
}

/*
 * Refuse unless the extension installed in this database is the version this
 * library was built for (BACKFILL_VERSION, the control file's default_version).
 * Once a command of a transaction: the version changes only by ALTER
 * EXTENSION, a command of its own.  The extension's own scripts (CREATE or ALTER EXTENSION running)
 * are not checked: the catalog says the version they are making.
 */
void
BackfillCheckVersion(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	char	   *installed = NULL;
	int			lmaj,
				lmin,
				imaj,
				imin;

	if (creating_extension)
		return;
	if (version_checked && checked_cid == GetCurrentCommandId(false))
		return;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("backfill"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		if (!isnull)
			installed = TextDatumGetCString(d);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);

	if (installed == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"backfill\" is not installed in this database"),
				 errhint("CREATE EXTENSION backfill;")));
	if (strcmp(installed, BACKFILL_VERSION) != 0)
	{
		bool		older = ParseVersion(installed, &imaj, &imin) &&
			ParseVersion(BACKFILL_VERSION, &lmaj, &lmin) &&
			(imaj < lmaj || (imaj == lmaj && imin < lmin));

		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("backfill's library is version %s, but the extension installed in this database is version %s",
						BACKFILL_VERSION, installed),
				 errdetail("The library refuses to run against SQL declarations it was not built for."),
				 older ?
				 errhint("Update the extension in this database: ALTER EXTENSION backfill UPDATE;") :
				 errhint("Install the library of backfill %s and start a new session: a session keeps the library it loaded first.",
						 installed)));
	}
	if (!version_callback)
	{
		RegisterXactCallback(ForgetVersionCheck, NULL);
		version_callback = true;
	}
	version_checked = true;
	checked_cid = GetCurrentCommandId(false);
}

/* The schema backfill is installed in: the schema of the calling function. */
Oid
BackfillExtensionSchema(FunctionCallInfo fcinfo)
{
	return get_func_namespace(fcinfo->flinfo->fn_oid);
}

/* The schema backfill is installed in, or InvalidOid. */
Oid
BackfillInstalledSchema(void)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("backfill"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

/* The schema-qualified, quoted name of a table or function of the extension. */
char *
BackfillExtName(Oid extschema, const char *name)
{
	return psprintf("%s.%s", quote_identifier(get_namespace_name(extschema)), name);
}

/* Whether relid is one of the extension's state tables (its log, runs, tasks, key). */
bool
BackfillIsStateTable(Oid relid)
{
	Oid			nsp = BackfillInstalledSchema();
	const char *name;

	if (!OidIsValid(nsp) || get_rel_namespace(relid) != nsp)
		return false;
	name = get_rel_name(relid);
	return name && (strcmp(name, "backfill_log_data") == 0 || strcmp(name, "backfill_runs_data") == 0 ||
					strcmp(name, "backfill_tasks_data") == 0 || strcmp(name, "backfill_key_data") == 0);
}

/* Whether a statement of BackfillStateExec is running: its rows are backfill's own. */
static bool state_writing = false;

/*
 * Whether the row being inserted into a state table comes from backfill's
 * own functions (through BackfillStateExec), rather than from a restore or an
 * INSERT by hand.  No role can set it: it is this backend's, held only while
 * a statement built by backfill runs, and reset on error.
 */
bool
BackfillWritingState(void)
{
	return state_writing;
}

/* Run a statement on the state tables as their owner; returns the SPI code. */
int
BackfillStateExec(Oid extschema, const char *sql, int nargs, Oid *types,
				  Datum *values, const char *nulls, long tcount)
{
	Oid			runs = get_relname_relid("backfill_runs_data", extschema);
	Oid			saved_userid;
	int			saved_sec;
	int			nest;
	int			rc;
	bool		was_writing = state_writing;

	if (!OidIsValid(runs))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("backfill_runs does not exist in schema \"%s\"", get_namespace_name(extschema))));
	GetUserIdAndSecContext(&saved_userid, &saved_sec);
	SetUserIdAndSecContext(BackfillRelOwner(runs),
						   saved_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	nest = BackfillPinSearchPath();
	state_writing = true;
	PG_TRY();
	{
		rc = SPI_execute_with_args(sql, nargs, types, values, nulls, false, tcount);
	}
	PG_FINALLY();
	{
		state_writing = was_writing;
	}
	PG_END_TRY();
	BackfillUnpinSearchPath(nest);
	SetUserIdAndSecContext(saved_userid, saved_sec);
	if (rc < 0)
		elog(ERROR, "SPI_execute_with_args failed (%s) for: %s", SPI_result_code_string(rc), sql);
	return rc;
}

/*
 * A run's status as last committed ("running", "paused", ...), or NULL when
 * the run is gone: in an SPI connection of its own, so that a caller looking
 * every throttle_interval_ms keeps nothing of it but the string.
 */
char *
BackfillRunStatusText(Oid extschema, int64 runid)
{
	MemoryContext outer = CurrentMemoryContext;
	Datum		id = Int64GetDatum(runid);
	Oid			type = INT8OID;
	char	   *status = NULL;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (BackfillStateExec(extschema,
						  psprintf("SELECT status FROM %s WHERE id OPERATOR(pg_catalog.=) $1",
								   BackfillExtName(extschema, "backfill_runs_data")),
						  1, &type, &id, NULL, 1) == SPI_OK_SELECT && SPI_processed == 1)
		status = MemoryContextStrdup(outer, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
	SPI_finish();
	return status;
}

/*
 * What the session working run runid does now, in pg_stat_activity.query
 * after the CALL's own words, as: CALL backfill_run(12) -- task 5
 * (public.fct_20260311).
 */
void
BackfillRunActivity(int64 runid, const char *what)
{
	/* pg_stat_activity shows it, nothing runs it */
	pgstat_report_activity(STATE_RUNNING,
						   psprintf("CALL backfill_run(" INT64_FORMAT ") -- %s", runid, what));
}
