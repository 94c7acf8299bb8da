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
 * an error naming the key.  One table, run_options, says each option's key,
 * type, field, bounds and default: the checks, the defaults, the stored text
 * and the hint listing the keys all read it.  Must be called inside SPI.
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

/* How an option's value is read and checked, and stored in the options a run keeps. */
typedef enum RunOptionType
{
	OPTION_INT,					/* an integer within bounds, into an int */
	OPTION_INT64,				/* an integer within bounds, into an int64 */
	OPTION_BOOL,				/* true or false */
	OPTION_MODE,				/* a name of a closed set, or a boolean standing for one; into its enum */
	OPTION_TEXT,				/* a string, not empty */
	OPTION_SETTING,				/* a setting applied to each task: a string or a number the server accepts */
	OPTION_LOCK_TIMEOUT,		/* a setting, also the swap's timeout within bounds, in lock_timeout_ms */
	OPTION_NUMBER,				/* a number of at least 0, kept as its text */
	OPTION_MEASURES,			/* an array of at most max measure expressions */
	OPTION_STANDBYS,			/* an array of at most max standbys' application_name */
	OPTION_PARTITIONS			/* "newer" (unwatch_newer), or an array of at most max partitions */
} RunOptionType;

/* One option of a run: what its key takes, where it goes, what it is when not given. */
typedef struct RunOption
{
	const char *key;
	RunOptionType type;
	size_t		offset;			/* of its field in BackfillRunOptions */
	int64		min;			/* integers and lock_timeout (ms): the bounds */
	int64		max;			/* arrays too: the most elements */
	int64		def;			/* integers, booleans, modes: the default; lock_timeout: the ms */
	const char *deftext;		/* text: the default, or NULL */
	bool		unset_null;		/* stored as null when not set (0, or no element); a text always is */
	const BackfillNames *modes; /* modes: the names, stored as they are */
	int			when_true;		/* modes: the value true stands for, or -1 */
	int			when_false;		/* modes: the value false stands for (stored as false), or -1 */
} RunOption;

#define OPT(field) offsetof(BackfillRunOptions, field)

/*
 * The options: key, type, field, bounds (min, max), then what is not 0.  In
 * the order the hint of an unknown key lists them and the stored options
 * hold them.  search_path defaults to the planning session's (not a
 * constant: RunOptionDefaults).
 */
static const RunOption run_options[] = {
	{"max_workers", OPTION_INT, OPT(max_workers), 1, 64, .def = 1},
	{"pause_ms", OPTION_INT, OPT(pause_ms), 0, 3600000},
	{"notice_every", OPTION_INT, OPT(notice_every), 1, 1000000, .def = 1},
	{"max_attempts", OPTION_INT, OPT(max_attempts), 1, 100, .def = 3},
	{"on_error", OPTION_MODE, OPT(on_error), .def = BACKFILL_ON_ERROR_STOP,
		.modes = &BackfillOnErrorNames, .when_true = -1, .when_false = -1},
	{"refresh_dependents", OPTION_BOOL, OPT(refresh_dependents), .def = true},
	{"check_untouched", OPTION_MODE, OPT(untouched_check), .def = BACKFILL_UNTOUCHED_AUTO,
		.modes = &BackfillUntouchedCheckNames,
		.when_true = BACKFILL_UNTOUCHED_FULL, .when_false = BACKFILL_UNTOUCHED_OFF},
	{"allow_empty", OPTION_BOOL, OPT(allow_empty)},
	{"keep_old", OPTION_BOOL, OPT(keep_old)},
	{"delete_missing", OPTION_BOOL, OPT(delete_missing)},
	{"statement_timeout", OPTION_SETTING, OPT(statement_timeout)},
	{"lock_timeout", OPTION_LOCK_TIMEOUT, OPT(lock_timeout), 1, 600000, .def = 1000},
	{"work_mem", OPTION_SETTING, OPT(work_mem)},
	{"max_parallel_workers_per_gather", OPTION_SETTING, OPT(max_parallel_workers_per_gather)},
	{"reconcile", OPTION_MEASURES, OPT(reconcile), .max = MaxTupleAttributeNumber},
	{"reconcile_tolerance", OPTION_NUMBER, OPT(reconcile_tolerance), .deftext = "0"},
	{"window_column", OPTION_TEXT, OPT(window_column)},
	{"chunk", OPTION_TEXT, OPT(chunk)},
	{"search_path", OPTION_SETTING, OPT(search_path)},
	{"small_partition_rows", OPTION_INT, OPT(small_partition_rows), 0, 100000000,
		.def = BACKFILL_SMALL_PARTITION_ROWS},
	{"max_replica_lag_ms", OPTION_INT, OPT(throttle.max_replica_lag_ms), 1, 86400000, .unset_null = true},
	{"replicas", OPTION_STANDBYS, OPT(throttle.replicas), .max = 1000, .unset_null = true},
	{"max_slot_lag_bytes", OPTION_INT64, OPT(throttle.max_slot_lag_bytes), 1, INT64CONST(1) << 50,
		.unset_null = true},
	{"throttle_query", OPTION_TEXT, OPT(throttle.throttle_query)},
	{"critical_query", OPTION_TEXT, OPT(throttle.critical_query)},
	{"cost_limit", OPTION_INT, OPT(throttle.cost_limit), 1, 10000, .unset_null = true},
	{"cost_delay_ms", OPTION_INT, OPT(throttle.cost_delay_ms), 1, 1000, .unset_null = true},
	{"throttle_timeout_ms", OPTION_INT, OPT(throttle.throttle_timeout_ms), 1000, 7 * 86400000,
		.def = BACKFILL_THROTTLE_TIMEOUT_MS},
	{"throttle_interval_ms", OPTION_INT, OPT(throttle.throttle_interval_ms), 10, 60000,
		.def = BACKFILL_THROTTLE_INTERVAL_MS},
	{"unwatched", OPTION_PARTITIONS, OPT(unwatched), .max = 100000, .unset_null = true},
	{"max_disk_bytes", OPTION_INT64, OPT(max_disk_bytes), 1, INT64CONST(1) << 60, .unset_null = true},
	{"source_server", OPTION_TEXT, OPT(source_server)},
};

/* a mode is kept in its enum's field through an int */
StaticAssertDecl(sizeof(BackfillOnError) == sizeof(int), "on_error is kept as an int");
StaticAssertDecl(sizeof(BackfillUntouchedCheck) == sizeof(int), "check_untouched is kept as an int");

/* The field of opt in opts. */
#define OPTION_FIELD(opts, opt, type) ((type *) ((char *) (opts) + (opt)->offset))

/* The option of key, or NULL. */
static const RunOption *
FindRunOption(const char *key)
{
	for (int i = 0; i < lengthof(run_options); i++)
		if (strcmp(run_options[i].key, key) == 0)
			return &run_options[i];
	return NULL;
}

/* The keys, as the hint of an unknown key lists them. */
static char *
RunOptionKeys(void)
{
	List	   *keys = NIL;

	for (int i = 0; i < lengthof(run_options); i++)
		keys = lappend(keys, (char *) run_options[i].key);
	return BackfillListed(keys, " and ");
}

/* An integer within bounds. */
static int64
IntOption(const RunOption *opt, const char *jtype, const char *value)
{
	char	   *end;
	long long	v;

	errno = 0;
	v = strcmp(jtype, "number") == 0 ? strtoll(value, &end, 10) : 0;
	if (strcmp(jtype, "number") != 0 || *end != '\0' || errno != 0 || v < opt->min || v > opt->max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.%s must be an integer between " INT64_FORMAT " and " INT64_FORMAT ", not %s",
						opt->key, opt->min, opt->max, value)));
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

/* A mode: one of its names, or a boolean when one stands for a value. */
static int
ModeOption(const RunOption *opt, const char *jtype, const char *value, const char *shown)
{
	int			v = -1;
	List	   *words;

	if (strcmp(jtype, "string") == 0)
		v = BackfillNameValue(opt->modes, value, -1);
	else if (strcmp(jtype, "boolean") == 0)
		v = strcmp(value, "true") == 0 ? opt->when_true : opt->when_false;
	if (v >= 0)
		return v;
	/* "a", "b", true ("a") or false */
	words = BackfillNamesQuoted(opt->modes, '"');
	if (opt->when_true >= 0)
		words = lappend(words, BackfillName(opt->modes, opt->when_true)
						? psprintf("true (\"%s\")", BackfillName(opt->modes, opt->when_true)) : "true");
	if (opt->when_false >= 0)
		words = lappend(words, BackfillName(opt->modes, opt->when_false)
						? psprintf("false (\"%s\")", BackfillName(opt->modes, opt->when_false)) : "false");
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("options.%s must be %s, not %s", opt->key, BackfillListed(words, " or "), shown)));
	return -1;					/* keep the compiler quiet */
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

/* A time in ms as a message says it: in the largest of min, s and ms that it is a whole number of. */
static char *
MsText(int64 ms)
{
	if (ms % 60000 == 0)
		return psprintf(INT64_FORMAT " min", ms / 60000);
	if (ms % 1000 == 0)
		return psprintf(INT64_FORMAT " s", ms / 1000);
	return psprintf(INT64_FORMAT " ms", ms);
}

/* options.lock_timeout: a setting, also the swap's timeout in ms. */
static void
LockTimeoutOption(BackfillRunOptions *opts, const RunOption *opt, const char *jtype, const char *value,
				  const char *shown)
{
	int			ms;

	opts->lock_timeout = SettingOption(opt->key, jtype, value);
	if (!parse_int(value, &ms, GUC_UNIT_MS, NULL) || ms < opt->min || ms > opt->max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.%s must be between %s and %s, not %s", opt->key, MsText(opt->min),
						MsText(opt->max), shown)));
	opts->lock_timeout_ms = ms;
}

/* A number of at least 0, kept as its text. */
static char *
NumberOption(const char *name, const char *jtype, const char *value, const char *shown)
{
	if (strcmp(jtype, "number") != 0 || value[0] == '-')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.%s must be a number of at least 0, not %s", name, shown)));
	return pstrdup(value);
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
ReconcileOption(const RunOption *opt, const char *jtype, const char *shown)
{
	List	   *measures = NIL;
	ListCell   *lc;

	if (strcmp(jtype, "array") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.reconcile must be an array of measures, not %s", shown),
				 errhint("For example [\"count(*)\", \"sum(revenue)\"].")));
	foreach(lc, StringsOption(opt->key, shown, opt->max, "measures"))
		measures = lappend(measures, BackfillCheckExpr((char *) lfirst(lc), "options.reconcile"));
	return measures;
}

/* options.replicas: an array of standbys' application_name. */
static List *
ReplicasOption(const RunOption *opt, const char *jtype, const char *shown)
{
	List	   *names;
	ListCell   *lc;

	if (strcmp(jtype, "array") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.replicas must be an array of standbys' application_name, not %s", shown),
				 errhint("For example [\"standby1\"].")));
	names = StringsOption(opt->key, shown, opt->max, "standbys");
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

/* options.unwatched: "newer", or an array of partitions. */
static void
UnwatchedOption(BackfillRunOptions *opts, const RunOption *opt, const char *jtype, const char *value,
				const char *shown)
{
	opts->unwatch_newer = strcmp(jtype, "string") == 0 && strcmp(value, "newer") == 0;
	if (!opts->unwatch_newer && strcmp(jtype, "array") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options.unwatched must be \"newer\" or an array of partitions, not %s", shown),
				 errhint("For example [\"orders_20261203\"]: partitions outside the range whose writes are not history.")));
	if (!opts->unwatch_newer)
		opts->unwatched = StringsOption(opt->key, shown, opt->max, "partitions");
}

/*
 * Set one option from its key, its JSON type, its value as text and as
 * JSON (for messages); unknown keys and wrong types are refused.
 */
static void
SetRunOption(BackfillRunOptions *opts, const char *key, const char *jtype, const char *value,
			 const char *shown)
{
	const RunOption *opt = FindRunOption(key);

	if (opt == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options: unknown key \"%s\"", key),
				 errhint("The keys are %s.", RunOptionKeys())));
	if (strcmp(jtype, "null") == 0)
		return;					/* the default */
	switch (opt->type)
	{
		case OPTION_INT:
			*OPTION_FIELD(opts, opt, int) = (int) IntOption(opt, jtype, shown);
			break;
		case OPTION_INT64:
			*OPTION_FIELD(opts, opt, int64) = IntOption(opt, jtype, shown);
			break;
		case OPTION_BOOL:
			*OPTION_FIELD(opts, opt, bool) = BoolOption(key, jtype, shown);
			break;
		case OPTION_MODE:
			*OPTION_FIELD(opts, opt, int) = ModeOption(opt, jtype, value, shown);
			break;
		case OPTION_TEXT:
			*OPTION_FIELD(opts, opt, char *) = StringOption(key, jtype, value);
			break;
		case OPTION_SETTING:
			*OPTION_FIELD(opts, opt, char *) = SettingOption(key, jtype, value);
			break;
		case OPTION_LOCK_TIMEOUT:
			LockTimeoutOption(opts, opt, jtype, value, shown);
			break;
		case OPTION_NUMBER:
			*OPTION_FIELD(opts, opt, char *) = NumberOption(key, jtype, value, shown);
			break;
		case OPTION_MEASURES:
			*OPTION_FIELD(opts, opt, List *) = ReconcileOption(opt, jtype, shown);
			break;
		case OPTION_STANDBYS:
			*OPTION_FIELD(opts, opt, List *) = ReplicasOption(opt, jtype, shown);
			break;
		case OPTION_PARTITIONS:
			UnwatchedOption(opts, opt, jtype, value, shown);
			break;
	}
}

/* The defaults of a run's options. */
static void
RunOptionDefaults(BackfillRunOptions *opts)
{
	memset(opts, 0, sizeof(*opts));
	for (int i = 0; i < lengthof(run_options); i++)
	{
		const RunOption *opt = &run_options[i];

		switch (opt->type)
		{
			case OPTION_INT:
			case OPTION_MODE:
				*OPTION_FIELD(opts, opt, int) = (int) opt->def;
				break;
			case OPTION_INT64:
				*OPTION_FIELD(opts, opt, int64) = opt->def;
				break;
			case OPTION_BOOL:
				*OPTION_FIELD(opts, opt, bool) = opt->def != 0;
				break;
			case OPTION_TEXT:
			case OPTION_SETTING:
			case OPTION_NUMBER:
				*OPTION_FIELD(opts, opt, char *) = (char *) opt->deftext;
				break;
			case OPTION_LOCK_TIMEOUT:
				opts->lock_timeout_ms = (int) opt->def;
				break;
			case OPTION_MEASURES:
			case OPTION_STANDBYS:
			case OPTION_PARTITIONS:
				break;			/* none */
		}
	}
	opts->search_path = pstrdup(namespace_search_path);
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

/* A list of strings as a JSON array; when empty, null if unset_null, else []. */
static void
AppendJsonStrings(StringInfo buf, List *strings, bool unset_null)
{
	ListCell   *lc;

	if (strings == NIL && unset_null)
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

/* A text as JSON: a string, or null. */
static void
AppendJsonText(StringInfo buf, const char *value)
{
	if (value)
		escape_json(buf, value);
	else
		appendStringInfoString(buf, "null");
}

/* The value of opt in opts as the stored options say it. */
static void
AppendRunOption(StringInfo buf, BackfillRunOptions *opts, const RunOption *opt)
{
	switch (opt->type)
	{
		case OPTION_INT:
		case OPTION_INT64:
			{
				int64		v = opt->type == OPTION_INT ? *OPTION_FIELD(opts, opt, int)
					: *OPTION_FIELD(opts, opt, int64);

				if (v == 0 && opt->unset_null)
					appendStringInfoString(buf, "null");
				else
					appendStringInfo(buf, INT64_FORMAT, v);
				break;
			}
		case OPTION_BOOL:
			appendStringInfoString(buf, *OPTION_FIELD(opts, opt, bool) ? "true" : "false");
			break;
		case OPTION_MODE:
			{
				int			v = *OPTION_FIELD(opts, opt, int);

				if (BackfillName(opt->modes, v))
					escape_json(buf, BackfillName(opt->modes, v));
				else
					appendStringInfoString(buf, v == opt->when_false ? "false" : "true");
				break;
			}
		case OPTION_TEXT:
		case OPTION_SETTING:
		case OPTION_LOCK_TIMEOUT:
			AppendJsonText(buf, *OPTION_FIELD(opts, opt, char *));
			break;
		case OPTION_NUMBER:
			appendStringInfoString(buf, *OPTION_FIELD(opts, opt, char *));
			break;
		case OPTION_PARTITIONS:
			if (opts->unwatch_newer)
			{
				appendStringInfoString(buf, "\"newer\"");
				break;
			}
			/* FALLTHROUGH */
		case OPTION_MEASURES:
		case OPTION_STANDBYS:
			AppendJsonStrings(buf, *OPTION_FIELD(opts, opt, List *), opt->unset_null);
			break;
	}
}

/* The options with every default filled in, as jsonb text: what a run stores. */
static char *
NormalizedRunOptions(BackfillRunOptions *opts)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int i = 0; i < lengthof(run_options); i++)
	{
		appendStringInfo(&buf, "%s\"%s\": ", i > 0 ? ", " : "", run_options[i].key);
		AppendRunOption(&buf, opts, &run_options[i]);
	}
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
