/*-------------------------------------------------------------------------
 *
 * src/run/runstate.c
 *		The state of runs: options, status changes, pinned code, pg_cron jobs,
 *		progress.
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
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/json.h"
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

/*
 * Options.
 */
static const char *const known_options[] = {
	"max_workers", "pause_ms", "max_attempts", "on_error", "refresh_dependents",
	"check_untouched", "allow_empty", "keep_old", "delete_missing", "statement_timeout",
	"lock_timeout", "work_mem", "max_parallel_workers_per_gather", "reconcile",
	"reconcile_tolerance", "window_column", "chunk", "search_path", "small_partition_rows",
	"max_replica_lag_ms", "replicas", "max_slot_lag_bytes", "throttle_query", "critical_query",
	"cost_limit", "cost_delay_ms", "throttle_timeout_ms", "throttle_interval_ms", "unwatched", NULL
};

static int
IntOption(const char *name, const char *jtype, const char *value, int min, int max)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strcmp(jtype, "number") == 0 ? strtol(value, &end, 10) : 0;
	if (strcmp(jtype, "number") != 0 || *end != '\0' || errno != 0 || v < min || v > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.%s must be an integer between %d and %d, not %s", name, min, max, value)));
	return (int) v;
}

static int64
Int64Option(const char *name, const char *jtype, const char *value, int64 min, int64 max)
{
	char	   *end;
	long long	v;

	errno = 0;
	v = strcmp(jtype, "number") == 0 ? strtoll(value, &end, 10) : 0;
	if (strcmp(jtype, "number") != 0 || *end != '\0' || errno != 0 || v < min || v > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.%s must be an integer between " INT64_FORMAT " and " INT64_FORMAT ", not %s",
						name, min, max, value)));
	return (int64) v;
}

static bool
BoolOption(const char *name, const char *jtype, const char *value)
{
	if (strcmp(jtype, "boolean") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.%s must be true or false, not %s", name, value)));
	return strcmp(value, "true") == 0;
}

static char *
StringOption(const char *name, const char *jtype, const char *value)
{
	if (strcmp(jtype, "string") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.%s must be a string, not %s", name, value)));
	if (value[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.%s must not be empty", name)));
	return pstrdup(value);
}

/* A setting applied to each task: a string or a number the server accepts for it. */
static char *
SettingOption(const char *name, const char *jtype, const char *value)
{
	if (strcmp(jtype, "string") != 0 && strcmp(jtype, "number") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.%s must be a string or a number, not %s", name, value)));
	/* validate only: changeVal = false */
	(void) set_config_option(name, value, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 false, ERROR, false);
	return pstrdup(value);
}

static void
AppendJsonString(StringInfo buf, const char *key, const char *value)
{
	appendStringInfo(buf, ", \"%s\": ", key);
	if (value)
		escape_json(buf, value);
	else
		appendStringInfoString(buf, "null");
}

/* The defaults of a run's options. */
static void
RunOptionDefaults(BackfillRunOptions *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->max_workers = 1;
	opts->max_attempts = 3;
	opts->refresh_dependents = true;
	opts->check_untouched = true;
	opts->untouched_full = true;
	opts->lock_timeout_ms = 1000;
	opts->small_partition_rows = BACKFILL_SMALL_PARTITION_ROWS;
	opts->reconcile_tolerance = "0";
	opts->search_path = pstrdup(namespace_search_path);
	opts->throttle.throttle_timeout_ms = BACKFILL_THROTTLE_TIMEOUT_MS;
	opts->throttle.throttle_interval_ms = BACKFILL_THROTTLE_INTERVAL_MS;
}

/*
 * The strings of an array option (the array checked by the caller), at most
 * max of them; any other element is refused.
 */
static List *
StringsOption(const char *name, const char *shown, int max, const char *what)
{
	Oid			types[1] = {JSONBOID};
	Datum		v[1];
	uint64		m;
	SPITupleTable *et;
	List	   *strings = NIL;
	char	   *argname = psprintf("options.%s", name);

	v[0] = DirectFunctionCall1(jsonb_in, CStringGetDatum(shown));
	if (SPI_execute_with_args("SELECT pg_catalog.jsonb_typeof(e), e OPERATOR(pg_catalog.#>>) '{}'"
							  " FROM pg_catalog.jsonb_array_elements($1) e",
							  1, types, v, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read %s", argname);
	m = SPI_processed;
	et = SPI_tuptable;
	BackfillCheckArrayLength(m > INT_MAX ? INT_MAX : (int) m, max, argname, what);
	for (uint64 j = 0; j < m; j++)
	{
		char	   *mt = SPI_getvalue(et->vals[j], et->tupdesc, 1);
		char	   *mv = SPI_getvalue(et->vals[j], et->tupdesc, 2);

		if (strcmp(mt, "string") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must hold strings, not %s", argname, mv ? mv : "null")));
		CHECK_FOR_INTERRUPTS();
		strings = lappend(strings, mv);
	}
	return strings;
}

/* options.reconcile: an array of measure expressions. */
static List *
ReconcileOption(const char *jtype, const char *shown)
{
	List	   *measures = NIL;
	ListCell   *lc;

	if (strcmp(jtype, "array") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.reconcile must be an array of measures, not %s", shown),
				 errhint("For example [\"count(*)\", \"sum(revenue)\"].")));
	foreach(lc, StringsOption("reconcile", shown, MaxTupleAttributeNumber, "measures"))
		measures = lappend(measures, BackfillCheckExpr((char *) lfirst(lc), "options.reconcile"));
	return measures;
}

/* options.replicas: an array of standbys' application_name. */
static List *
ReplicasOption(const char *jtype, const char *shown)
{
	List	   *names;
	ListCell   *lc;

	if (strcmp(jtype, "array") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.replicas must be an array of standbys' application_name, not %s", shown),
				 errhint("For example [\"standby1\"].")));
	names = StringsOption("replicas", shown, 1000, "standbys");
	foreach(lc, names)
		if (((char *) lfirst(lc))[0] == '\0' || strlen((char *) lfirst(lc)) >= NAMEDATALEN)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("options.replicas must hold names of 1 to %d bytes, not \"%s\"", NAMEDATALEN - 1,
							(char *) lfirst(lc))));
	if (names == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.replicas must name at least one standby"),
				 errhint("Leave it out to watch every standby.")));
	return names;
}

/* A throttle option (run/throttle.h); false if key is none. */
static bool
SetThrottleOption(BackfillThrottle *t, const char *key, const char *jtype, const char *value,
				  const char *shown)
{
	if (strcmp(key, "max_replica_lag_ms") == 0)
		t->max_replica_lag_ms = IntOption(key, jtype, shown, 1, 86400000);
	else if (strcmp(key, "replicas") == 0)
		t->replicas = ReplicasOption(jtype, shown);
	else if (strcmp(key, "max_slot_lag_bytes") == 0)
		t->max_slot_lag_bytes = Int64Option(key, jtype, shown, 1, INT64CONST(1) << 50);
	else if (strcmp(key, "throttle_query") == 0)
		t->throttle_query = StringOption(key, jtype, value);
	else if (strcmp(key, "critical_query") == 0)
		t->critical_query = StringOption(key, jtype, value);
	else if (strcmp(key, "cost_limit") == 0)
		t->cost_limit = IntOption(key, jtype, shown, 1, 10000);
	else if (strcmp(key, "cost_delay_ms") == 0)
		t->cost_delay_ms = IntOption(key, jtype, shown, 1, 1000);
	else if (strcmp(key, "throttle_timeout_ms") == 0)
		t->throttle_timeout_ms = IntOption(key, jtype, shown, 1000, 7 * 86400000);
	else if (strcmp(key, "throttle_interval_ms") == 0)
		t->throttle_interval_ms = IntOption(key, jtype, shown, 10, 60000);
	else
		return false;
	return true;
}

/* The throttle options once all are read: what one implies of another. */
static void
FinishThrottleOptions(BackfillThrottle *t)
{
	if (t->replicas != NIL && t->max_replica_lag_ms == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.replicas needs options.max_replica_lag_ms"),
				 errdetail("It names the standbys whose lag is watched.")));
	/* as VACUUM's: either one sets a budget, the other at its default */
	if (t->cost_limit > 0 || t->cost_delay_ms > 0)
	{
		if (t->cost_limit == 0)
			t->cost_limit = 200;
		if (t->cost_delay_ms == 0)
			t->cost_delay_ms = 2;
	}
}

/* A list of strings as a JSON array, or null when empty. */
static void
AppendJsonStrings(StringInfo buf, List *strings)
{
	ListCell   *lc;

	if (strings == NIL)
	{
		appendStringInfoString(buf, "null");
		return;
	}
	appendStringInfoChar(buf, '[');
	foreach(lc, strings)
	{
		if (foreach_current_index(lc) > 0)
			appendStringInfoString(buf, ", ");
		escape_json(buf, (char *) lfirst(lc));
	}
	appendStringInfoChar(buf, ']');
}

/* The throttle options, as the stored options say them. */
static void
AppendThrottleOptions(StringInfo buf, BackfillThrottle *t)
{
	appendStringInfoString(buf, ", \"max_replica_lag_ms\": ");
	appendStringInfoString(buf, t->max_replica_lag_ms ? psprintf("%d", t->max_replica_lag_ms) : "null");
	appendStringInfoString(buf, ", \"replicas\": ");
	AppendJsonStrings(buf, t->replicas);
	appendStringInfoString(buf, ", \"max_slot_lag_bytes\": ");
	appendStringInfoString(buf, t->max_slot_lag_bytes ? psprintf(INT64_FORMAT, t->max_slot_lag_bytes) : "null");
	AppendJsonString(buf, "throttle_query", t->throttle_query);
	AppendJsonString(buf, "critical_query", t->critical_query);
	appendStringInfo(buf, ", \"cost_limit\": %s, \"cost_delay_ms\": %s",
					 t->cost_limit ? psprintf("%d", t->cost_limit) : "null",
					 t->cost_delay_ms ? psprintf("%d", t->cost_delay_ms) : "null");
	appendStringInfo(buf, ", \"throttle_timeout_ms\": %d, \"throttle_interval_ms\": %d",
					 t->throttle_timeout_ms, t->throttle_interval_ms);
}

/* options.lock_timeout: a setting, also the swap's timeout in ms. */
static void
LockTimeoutOption(BackfillRunOptions *opts, const char *key, const char *jtype, const char *value,
				  const char *shown)
{
	int			ms;

	opts->lock_timeout = SettingOption(key, jtype, value);
	if (!parse_int(value, &ms, GUC_UNIT_MS, NULL) || ms < 1 || ms > 600000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.lock_timeout must be between 1 ms and 10 min, not %s", shown)));
	opts->lock_timeout_ms = ms;
}

/*
 * Set one option from its key, its JSON type, its value as text and as
 * JSON (for messages); unknown keys and wrong types are refused.
 */
static void
SetRunOption(BackfillRunOptions *opts, const char *key, const char *jtype, const char *value,
			 const char *shown)
{
	bool		known = false;

	for (int k = 0; known_options[k]; k++)
		known |= strcmp(key, known_options[k]) == 0;
	if (!known)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options: unknown key \"%s\"", key),
				 errhint("The keys are max_workers, pause_ms, max_attempts, on_error, refresh_dependents,"
						 " check_untouched, allow_empty, keep_old, delete_missing, statement_timeout,"
						 " lock_timeout, work_mem, max_parallel_workers_per_gather, reconcile,"
						 " reconcile_tolerance, window_column, chunk, search_path, small_partition_rows,"
						 " max_replica_lag_ms, replicas, max_slot_lag_bytes, throttle_query, critical_query,"
						 " cost_limit, cost_delay_ms, throttle_timeout_ms, throttle_interval_ms and unwatched.")));
	if (strcmp(jtype, "null") == 0)
		return;					/* the default */
	if (SetThrottleOption(&opts->throttle, key, jtype, value, shown))
		return;
	if (strcmp(key, "max_workers") == 0)
		opts->max_workers = IntOption(key, jtype, shown, 1, 64);
	else if (strcmp(key, "pause_ms") == 0)
		opts->pause_ms = IntOption(key, jtype, shown, 0, 3600000);
	else if (strcmp(key, "max_attempts") == 0)
		opts->max_attempts = IntOption(key, jtype, shown, 1, 100);
	else if (strcmp(key, "small_partition_rows") == 0)
		opts->small_partition_rows = IntOption(key, jtype, shown, 0, 100000000);
	else if (strcmp(key, "on_error") == 0)
	{
		if (strcmp(jtype, "string") != 0 || (strcmp(value, "stop") != 0 && strcmp(value, "continue") != 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("options.on_error must be \"stop\" or \"continue\", not %s", shown)));
		opts->on_error_continue = strcmp(value, "continue") == 0;
	}
	else if (strcmp(key, "refresh_dependents") == 0)
		opts->refresh_dependents = BoolOption(key, jtype, shown);
	else if (strcmp(key, "check_untouched") == 0)
	{
		/* true is "full", as before "counters" was offered */
		bool		named = strcmp(jtype, "string") == 0 &&
			(strcmp(value, "full") == 0 || strcmp(value, "counters") == 0);

		if (!named && strcmp(jtype, "boolean") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("options.check_untouched must be \"full\", \"counters\", true (\"full\") or false, not %s",
							shown)));
		opts->check_untouched = named || strcmp(shown, "true") == 0;
		opts->untouched_full = opts->check_untouched && !(named && strcmp(value, "counters") == 0);
	}
	else if (strcmp(key, "allow_empty") == 0)
		opts->allow_empty = BoolOption(key, jtype, shown);
	else if (strcmp(key, "keep_old") == 0)
		opts->keep_old = BoolOption(key, jtype, shown);
	else if (strcmp(key, "delete_missing") == 0)
		opts->delete_missing = BoolOption(key, jtype, shown);
	else if (strcmp(key, "statement_timeout") == 0)
		opts->statement_timeout = SettingOption(key, jtype, value);
	else if (strcmp(key, "lock_timeout") == 0)
		LockTimeoutOption(opts, key, jtype, value, shown);
	else if (strcmp(key, "work_mem") == 0)
		opts->work_mem = SettingOption(key, jtype, value);
	else if (strcmp(key, "max_parallel_workers_per_gather") == 0)
		opts->max_parallel_workers_per_gather = SettingOption(key, jtype, value);
	else if (strcmp(key, "search_path") == 0)
		opts->search_path = SettingOption(key, jtype, value);
	else if (strcmp(key, "reconcile_tolerance") == 0)
	{
		if (strcmp(jtype, "number") != 0 || value[0] == '-')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("options.reconcile_tolerance must be a number of at least 0, not %s", shown)));
		opts->reconcile_tolerance = pstrdup(value);
	}
	else if (strcmp(key, "window_column") == 0)
		opts->window_column = StringOption(key, jtype, value);
	else if (strcmp(key, "chunk") == 0)
		opts->chunk = StringOption(key, jtype, value);
	else if (strcmp(key, "reconcile") == 0)
		opts->reconcile = ReconcileOption(jtype, shown);
	else if (strcmp(key, "unwatched") == 0)
	{
		opts->unwatch_newer = strcmp(jtype, "string") == 0 && strcmp(value, "newer") == 0;
		if (!opts->unwatch_newer && strcmp(jtype, "array") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("options.unwatched must be \"newer\" or an array of partitions, not %s", shown),
					 errhint("For example [\"orders_20261203\"]: partitions outside the range whose writes are not history.")));
		if (!opts->unwatch_newer)
			opts->unwatched = StringsOption(key, shown, 100000, "partitions");
	}
}

/* The options with every default filled in, as jsonb text: what a run stores. */
static char *
NormalizedRunOptions(BackfillRunOptions *opts)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"max_workers\": %d, \"pause_ms\": %d, \"max_attempts\": %d, \"on_error\": \"%s\"",
					 opts->max_workers, opts->pause_ms, opts->max_attempts,
					 opts->on_error_continue ? "continue" : "stop");
	appendStringInfo(&buf, ", \"refresh_dependents\": %s, \"check_untouched\": %s, \"allow_empty\": %s"
					 ", \"keep_old\": %s, \"delete_missing\": %s",
					 opts->refresh_dependents ? "true" : "false",
					 !opts->check_untouched ? "false" : opts->untouched_full ? "\"full\"" : "\"counters\"",
					 opts->allow_empty ? "true" : "false", opts->keep_old ? "true" : "false",
					 opts->delete_missing ? "true" : "false");
	AppendJsonString(&buf, "statement_timeout", opts->statement_timeout);
	AppendJsonString(&buf, "lock_timeout", opts->lock_timeout);
	AppendJsonString(&buf, "work_mem", opts->work_mem);
	AppendJsonString(&buf, "max_parallel_workers_per_gather", opts->max_parallel_workers_per_gather);
	appendStringInfoString(&buf, ", \"reconcile\": [");
	foreach(lc, opts->reconcile)
	{
		if (foreach_current_index(lc) > 0)
			appendStringInfoString(&buf, ", ");
		escape_json(&buf, (char *) lfirst(lc));
	}
	appendStringInfo(&buf, "], \"reconcile_tolerance\": %s, \"small_partition_rows\": %d",
					 opts->reconcile_tolerance, opts->small_partition_rows);
	AppendJsonString(&buf, "window_column", opts->window_column);
	AppendJsonString(&buf, "chunk", opts->chunk);
	AppendJsonString(&buf, "search_path", opts->search_path);
	appendStringInfoString(&buf, ", \"unwatched\": ");
	if (opts->unwatch_newer)
		appendStringInfoString(&buf, "\"newer\"");
	else
		AppendJsonStrings(&buf, opts->unwatched);
	AppendThrottleOptions(&buf, &opts->throttle);
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/*
 * Read a run's options from jsonb text, checking every key and value, and
 * fill in the defaults.  Must be called inside SPI.
 */
void
BackfillParseRunOptions(const char *json, bool partitioned, BackfillRunOptions *opts)
{
	Oid			types[1] = {JSONBOID};
	Datum		values[1];
	uint64		n;
	SPITupleTable *tt;

	RunOptionDefaults(opts);
	values[0] = DirectFunctionCall1(jsonb_in, CStringGetDatum(json));
	if (SPI_execute_with_args("SELECT pg_catalog.jsonb_typeof($1)", 1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read options");
	if (strcmp(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), "object") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be a JSON object, not %s", json),
				 errhint("Pass for example '{\"max_workers\": 2}'.")));
	if (SPI_execute_with_args("SELECT key, pg_catalog.jsonb_typeof(value), value OPERATOR(pg_catalog.#>>) '{}',"
							  " value::pg_catalog.text FROM pg_catalog.jsonb_each($1) ORDER BY key",
							  1, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read options");
	n = SPI_processed;
	tt = SPI_tuptable;
	for (uint64 i = 0; i < n; i++)
		SetRunOption(opts, SPI_getvalue(tt->vals[i], tt->tupdesc, 1), SPI_getvalue(tt->vals[i], tt->tupdesc, 2),
					 SPI_getvalue(tt->vals[i], tt->tupdesc, 3), SPI_getvalue(tt->vals[i], tt->tupdesc, 4));

	if (!partitioned && (opts->unwatched || opts->unwatch_newer))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.unwatched is for partitioned tables"),
				 errdetail("A run on a plain table watches the rows outside its range, not partitions.")));
	if (partitioned && opts->chunk)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.chunk is for plain tables"),
				 errdetail("The tasks of a partitioned table are its partitions.")));
	if (!partitioned && (opts->window_column == NULL || opts->chunk == NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a run on a table that is not partitioned needs options.window_column and options.chunk"),
				 errhint("For example '{\"window_column\": \"order_date\", \"chunk\": \"1 day\"}'.")));
	FinishThrottleOptions(&opts->throttle);
	opts->normalized = NormalizedRunOptions(opts);
}

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
	run->strategy = SPI_getvalue(tup, desc, 2);
	run->strategy_kind = BackfillStrategyFromName(run->strategy);
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
									  " finished_at = CASE WHEN $5 THEN now() END"
									  " WHERE id = $1", BackfillExtName(run->extschema, "backfill_runs_data")),
							 5, types, values, nulls, 0);
	run->status = pstrdup(status);
	run->state = state;
}

/* BackfillRunSetState with the status by its name, for run.c until it passes the enum. */
void
BackfillRunSetStatus(BackfillRun *run, const char *status, const char *error)
{
	BackfillRunStatus state = BackfillRunStatusFromName(status);

	if (state == BACKFILL_RUN_OTHER)
		elog(ERROR, "\"%s\" is not a status of a run", status);
	BackfillRunSetState(run, state, error);
}

/*
 * The schema of pg_cron's functions in this database, or NULL when pg_cron
 * is not installed here.  (Not the extension's extnamespace: pg_cron creates
 * its functions in schema cron whatever the schema current at CREATE
 * EXTENSION.)
 */
static char *
CronSchema(void)
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
 * Remove the pg_cron job of a run, if it has one.  A job that is gone
 * already, or that this role may not remove, is reported and forgotten.
 */
void
BackfillRunUnschedule(BackfillRun *run)
{
	char	   *cron;
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(run->id)};

	if (run->cron_job == 0)
		return;
	cron = CronSchema();
	if (cron && !CronJobIsOurs(cron, run))
	{
		ereport(WARNING,
				(errmsg("pg_cron job " INT64_FORMAT " is not the job of run " INT64_FORMAT ": left alone",
						run->cron_job, run->id),
				 errdetail("Its name, command or database is not the one backfill_schedule gave it"
						   " (after a restore, job ids may belong to other jobs).")));
		cron = NULL;
	}
	if (cron)
	{
		BeginInternalSubTransaction(NULL);
		MemoryContextSwitchTo(cxt);
		PG_TRY();
		{
			Datum		job[1] = {Int64GetDatum(run->cron_job)};

			if (SPI_execute_with_args(psprintf("SELECT %s.unschedule($1)", quote_identifier(cron)),
									  1, types, job, NULL, false, 1) != SPI_OK_SELECT)
				elog(ERROR, "cron.unschedule failed");
			ReleaseCurrentSubTransaction();
			MemoryContextSwitchTo(cxt);
			CurrentResourceOwner = owner;
		}
		PG_CATCH();
		{
			ErrorData  *edata = BackfillAbortSubtransaction(cxt, owner);

			ereport(WARNING,
					(errmsg("could not remove pg_cron job " INT64_FORMAT " of run " INT64_FORMAT ": %s",
							run->cron_job, run->id, edata->message)));
		}
		PG_END_TRY();
	}
	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET cron_job = NULL WHERE id = $1",
									  BackfillExtName(run->extschema, "backfill_runs_data")),
							 1, types, values, NULL, 0);
	run->cron_job = 0;
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

	if (PG_ARGISNULL(2) || PG_GETARG_INT32(2) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tasks_per_tick must be at least 1")));
	per_tick = PG_GETARG_INT32(2);
	OpenRun(fcinfo, &run, "schedule", false);
	if (run.state != BACKFILL_RUN_PLANNED && run.state != BACKFILL_RUN_RUNNING)
		RefuseStatus(&run, "scheduled");
	cron = CronSchema();
	if (cron == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pg_cron is not installed in this database"),
				 errhint("Add pg_cron to shared_preload_libraries and CREATE EXTENSION pg_cron, or call"
						 " CALL backfill_run(" INT64_FORMAT ") from a scheduler of your own.", run.id)));
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

PG_FUNCTION_INFO_V1(backfill_run_progress);

/*
 * The last run pg_cron recorded of a run's job, as two columns of the
 * progress query: a job pg_cron cannot start (no connection, no background
 * worker) leaves the run as it was, and only cron.job_run_details says why.
 */
static char *
CronLastRunColumns(void)
{
	char	   *cron = CronSchema();
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
	int			rc;
	int			nest;

	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	nest = BackfillPinSearchPath();
	rc = SPI_execute(psprintf(
		"SELECT r.id, r.target, r.strategy, r.status, count(t.task),"
		" count(t.task) FILTER (WHERE t.status = 'done'),"
		" count(t.task) FILTER (WHERE t.status = 'failed'),"
		" count(t.task) FILTER (WHERE t.status = 'pending'),"
		" CASE WHEN %s.backfill_may_see_rows(r.target_oid)"
		"   THEN coalesce(sum(t.rows_after) FILTER (WHERE t.status = 'done'), 0)::bigint END,"
		" r.started_at, coalesce(r.finished_at, CASE WHEN r.started_at IS NOT NULL THEN clock_timestamp() END)"
		"   - r.started_at,"
		" CASE WHEN r.status IN ('planned', 'running', 'paused')"
		"   AND count(t.task) FILTER (WHERE t.status = 'done') > 0 THEN"
		"   (clock_timestamp() - r.started_at)"
		"     * count(t.task) FILTER (WHERE t.status = 'pending')"
		"     / count(t.task) FILTER (WHERE t.status = 'done')"
		" END,"
		" r.refreshed,"
		" CASE WHEN %s.backfill_may_see_rows(r.target_oid) THEN"
		"  (SELECT count(*) FROM jsonb_array_elements(r.untouched_after) u"
		"   WHERE NOT (u ->> 'same')::boolean AND u -> 'logged_as' = 'null'::jsonb) END,"
		" r.error, %s, r.throttled, r.throttle_reason,"
		" count(t.task) FILTER (WHERE t.status = 'skipped')"
		" FROM %s r LEFT JOIN %s t ON t.run_id = r.id"
		" GROUP BY r.id, r.target, r.target_oid, r.strategy, r.status, r.started_at, r.finished_at,"
		"   r.options, r.refreshed, r.untouched_after, r.error, r.cron_job, r.throttled, r.throttle_reason"
		" ORDER BY r.id",
		quote_identifier(get_namespace_name(extschema)), quote_identifier(get_namespace_name(extschema)),
		CronLastRunColumns(),
		BackfillExtName(extschema, "backfill_runs"), BackfillExtName(extschema, "backfill_tasks")), true, 0);
	BackfillUnpinSearchPath(nest);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read backfill_runs");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		Datum		values[20];
		bool		nulls[20];

		for (int c = 0; c < 20; c++)
			values[c] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, c + 1, &nulls[c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SPI_finish();
	return (Datum) 0;
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
