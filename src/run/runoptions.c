/*-------------------------------------------------------------------------
 *
 * src/run/runoptions.c
 *		A run's options: read from jsonb, checked, defaults filled in, and
 *		stored back with every key.
 *
 * backfill_plan checks the options a caller gives, and stores them with
 * every default filled in; a run reads them back from its row the same way,
 * under the search_path they were checked with.  Every key is known, every
 * value of its type and within its bounds; an unknown key or a bad value is
 * an error naming the key.  Must be called inside SPI.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "base/spi_util.h"
#include "base/throttle.h"
#include "run/runoptions.h"

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
