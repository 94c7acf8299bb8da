/*-------------------------------------------------------------------------
 *
 * src/base/spi_util.c
 *		Checking caller-supplied SQL fragments and running SPI reads.
 *
 * The functions of backfill take queries (`TABLE fct_202603`), boolean scopes
 * (`order_date >= '2026-03-01'`) and aggregate measures (`sum(revenue)`) as
 * text and embed them in SQL of their own.  Each fragment is first parsed on
 * its own, with the same parenthesization it gets when embedded: a query must
 * be exactly one SELECT (VALUES and TABLE included), an expression exactly one
 * expression.  A fragment that passes cannot close our parentheses, comment
 * out the rest of our statement or add a statement of its own, so it cannot
 * change what the generated SQL does beyond its own value.  The generated SQL
 * itself names every function and operator with its schema.
 *
 * Errors raised while parsing or analysing a fragment are re-raised with the
 * name of the argument in front of the server's message, keeping its SQLSTATE,
 * detail and hint.  Nothing has been written at that point; the error aborts
 * the statement as any other would.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/parser.h"
#include "parser/scanner.h"
#include "parser/scansup.h"
#include "common/keywords.h"
#include "tcop/utility.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/guc.h"
#include "utils/plancache.h"
#include "utils/resowner.h"
#include "utils/varlena.h"
#include "access/htup_details.h"
#include "access/xact.h"

#include "base/spi_util.h"

/*
 * Re-raise the error being handled with "invalid <argname>: " in front of its
 * message, if it is an error of the fragment (syntax, names, types, data):
 * cancels, lock timeouts and internal errors go on as they were.
 */
/*
 * A hint that names a column by one of our own aliases (the parser's
 * "Perhaps you meant to reference the column "backfill_rows.revenue"")
 * names it alone: the alias is in our SQL, not in the caller's.
 */
static char *
WithoutOurAliases(const char *hint)
{
	StringInfoData out;
	const char *p = hint;

	initStringInfo(&out);
	while (*p)
	{
		if (p[0] == '"' && strncmp(p + 1, "backfill_", 9) == 0)
		{
			const char *dot = p + 1;

			while (*dot && *dot != '"' && *dot != '.')
				dot++;
			if (*dot == '.')
			{
				appendStringInfoChar(&out, '"');
				p = dot + 1;
				continue;
			}
		}
		appendStringInfoChar(&out, *p++);
	}
	return out.data;
}

static void
RethrowNamingArgument(MemoryContext cxt, const char *argname)
{
	ErrorData  *edata;
	int			category;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	category = ERRCODE_TO_CATEGORY(edata->sqlerrcode);
	if (category != ERRCODE_SYNTAX_ERROR_OR_ACCESS_RULE_VIOLATION &&
		category != ERRCODE_DATA_EXCEPTION &&
		category != ERRCODE_FEATURE_NOT_SUPPORTED)
		PG_RE_THROW();

	FlushErrorState();
	edata->message = psprintf("invalid %s: %s", argname, edata->message);
	if (edata->hint)
		edata->hint = WithoutOurAliases(edata->hint);
	/* a position in our SQL, not in the caller's, and our SQL itself: neither helps */
	edata->cursorpos = 0;
	edata->internalpos = 0;
	edata->internalquery = NULL;
	ReThrowError(edata);
}

/* raw_parser() that names the argument when the text does not parse. */
static List *
ParseNamingArgument(const char *sql, const char *argname)
{
	MemoryContext cxt = CurrentMemoryContext;
	List	   *result = NIL;

	PG_TRY();
	{
		result = raw_parser(sql, RAW_PARSE_DEFAULT);
	}
	PG_CATCH();
	{
		RethrowNamingArgument(cxt, argname);
	}
	PG_END_TRY();

	return result;
}

/* Does a SELECT, or the leftmost branch of its set operation, have INTO? */
static bool
SelectHasInto(SelectStmt *sel)
{
	while (sel->op != SETOP_NONE && sel->larg != NULL)
		sel = sel->larg;
	return sel->intoClause != NULL;
}

/*
 * The core scanner's token code for the one token text holds ("$1", "x").
 * The grammar's token numbers (parser/gram.h) are not installed with the
 * server headers from PostgreSQL 16 on, so the scanner is asked.  Call it
 * before starting a scanner of one's own.
 */
int
BackfillTokenOf(const char *text)
{
	core_yy_extra_type yyextra;
	core_yyscan_t scanner = scanner_init(text, &yyextra, &ScanKeywords, ScanKeywordTokens);
	core_YYSTYPE lval;
	YYLTYPE		loc;
	int			tok = core_yylex(&lval, &loc, scanner);

	scanner_finish(scanner);
	return tok;
}

/*
 * Check that expr never closes a parenthesis or bracket it did not open:
 * "a) OR (b" is one expression on its own but, once embedded as "(a) OR (b)",
 * would escape the parentheses put around it.  Lexes with the server's own
 * scanner, so quoting and comments count exactly as in the parser.
 */
static void
CheckBalanced(const char *expr, const char *argname)
{
	core_yy_extra_type yyextra;
	core_yyscan_t scanner = scanner_init(expr, &yyextra, &ScanKeywords, ScanKeywordTokens);
	int			depth = 0;

	for (;;)
	{
		core_YYSTYPE lval;
		YYLTYPE		loc;
		int			tok = core_yylex(&lval, &loc, scanner);

		if (tok == 0)
			break;
		if (tok == '(' || tok == '[')
			depth++;
		else if ((tok == ')' || tok == ']') && --depth < 0)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("%s must be a single SQL expression", argname),
					 errdetail("It closes a parenthesis it did not open, at character %d.", loc + 1)));
	}
	scanner_finish(scanner);
}

/* Is the text empty or only white space? */
static bool
IsBlank(const char *s)
{
	for (; *s; s++)
		if (!scanner_isspace(*s))
			return false;
	return true;
}

/* Is the text a (qualified) name alone, such as fct_revenue or "Mart".daily? */
static bool
IsQualifiedName(const char *s)
{
	char	   *copy = pstrdup(s);
	List	   *names = NIL;

	/* SplitIdentifierString writes into its argument and reports bad syntax as false */
	return SplitIdentifierString(copy, '.', &names) && names != NIL && list_length(names) <= 3;
}

/*
 * Check that query is exactly one SELECT, VALUES or TABLE statement and
 * return its text without a trailing semicolon, ready to be embedded as
 * "(\n<text>\n)".
 */
char *
BackfillCheckQuery(const char *query, const char *argname)
{
	List	   *stmts;
	RawStmt    *raw;
	char	   *text;

	if (IsBlank(query))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", argname),
				 errhint("Pass a query such as 'SELECT ... FROM ...' or 'TABLE name'.")));

	if (IsQualifiedName(query))
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("%s is a table name, not a query", argname),
				 errhint("A query is expected, e.g. 'TABLE %s' or 'SELECT * FROM %s'.", query, query)));
	stmts = ParseNamingArgument(query, argname);
	if (list_length(stmts) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("%s must be a single query, not %d statements",
						argname, list_length(stmts))));

	raw = linitial_node(RawStmt, stmts);
	if (!IsA(raw->stmt, SelectStmt) || SelectHasInto((SelectStmt *) raw->stmt))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s must be a SELECT, VALUES or TABLE query", argname),
				 errdetail("The %s given is a %s statement.", argname,
						   IsA(raw->stmt, SelectStmt) ? "SELECT INTO" : CreateCommandName(raw->stmt)),
				 errhint("Statements that write belong to the write functions, not to a query argument.")));

	if (raw->stmt_len > 0)
		text = pnstrdup(query + raw->stmt_location, raw->stmt_len);
	else
		text = pstrdup(query + raw->stmt_location);

	/* a locking clause or a data-modifying WITH: BackfillCheckReadOnly */
	return text;
}

/*
 * Check that expr is exactly one expression, with no clause of a query
 * around it, and return it.
 */
char *
BackfillCheckExpr(const char *expr, const char *argname)
{
	StringInfoData buf;
	List	   *stmts;
	SelectStmt *sel;

	if (IsBlank(expr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", argname),
				 errhint("Pass NULL for none.")));

	initStringInfo(&buf);
	appendStringInfo(&buf, "SELECT (\n%s\n)", expr);
	stmts = ParseNamingArgument(buf.data, argname);
	CheckBalanced(expr, argname);

	sel = (list_length(stmts) == 1 && IsA(linitial_node(RawStmt, stmts)->stmt, SelectStmt))
		? (SelectStmt *) linitial_node(RawStmt, stmts)->stmt : NULL;
	if (sel == NULL || sel->op != SETOP_NONE || list_length(sel->targetList) != 1 ||
		sel->fromClause != NIL || sel->whereClause != NULL ||
		sel->groupClause != NIL || sel->havingClause != NULL ||
		sel->windowClause != NIL || sel->sortClause != NIL ||
		sel->limitCount != NULL || sel->limitOffset != NULL ||
		sel->lockingClause != NIL || sel->withClause != NULL ||
		sel->distinctClause != NIL || sel->intoClause != NULL ||
		sel->valuesLists != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("%s must be a single SQL expression", argname),
				 errdetail("It holds a clause or a statement of its own.")));

	pfree(buf.data);
	return pstrdup(expr);
}

/* SPI_prepare that names the argument in any parse or analysis error. */
SPIPlanPtr
BackfillPrepare(const char *sql, int nargs, Oid *argtypes, const char *argname)
{
	return BackfillPrepareCursor(sql, nargs, argtypes, argname, 0);
}

/*
 * BackfillPrepare with cursor options: CURSOR_OPT_PARALLEL_OK lets the
 * planner choose parallel query (SPI_prepare does not).
 */
SPIPlanPtr
BackfillPrepareCursor(const char *sql, int nargs, Oid *argtypes, const char *argname,
					  int cursor_options)
{
	MemoryContext cxt = CurrentMemoryContext;
	SPIPlanPtr	plan = NULL;

	PG_TRY();
	{
		plan = SPI_prepare_cursor(sql, nargs, argtypes, cursor_options);
	}
	PG_CATCH();
	{
		RethrowNamingArgument(cxt, argname);
	}
	PG_END_TRY();

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	return plan;
}

/* The analysed query behind a plan of exactly one statement. */
Query *
BackfillPlanQuery(SPIPlanPtr plan)
{
	List	   *sources = SPI_plan_get_plan_sources(plan);
	CachedPlanSource *src;

	if (list_length(sources) != 1)
		elog(ERROR, "expected a plan of one statement, got %d", list_length(sources));
	src = (CachedPlanSource *) linitial(sources);
	if (list_length(src->query_list) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a query rewritten into %d queries is not supported", list_length(src->query_list))));
	return linitial_node(Query, src->query_list);
}

/*
 * Check that a prepared query only reads: no SELECT INTO, no data-modifying
 * WITH, no FOR UPDATE.  (A volatile function it calls may still write; the
 * functions that take queries run them read-only where they can.)
 */
void
BackfillCheckReadOnly(SPIPlanPtr plan, const char *argname)
{
	Query	   *q = BackfillPlanQuery(plan);

	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL ||
		q->hasModifyingCTE || q->rowMarks != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s must only read", argname),
				 errdetail("It writes through a data-modifying WITH, locks rows with FOR UPDATE or SHARE, or creates a table with INTO."),
				 errhint("Statements that write belong to the write functions, not to a query argument.")));
}

/* The row type a plan of one SELECT returns. */
TupleDesc
BackfillPlanResultDesc(SPIPlanPtr plan)
{
	List	   *sources = SPI_plan_get_plan_sources(plan);
	CachedPlanSource *src = (CachedPlanSource *) linitial(sources);

	if (src->resultDesc == NULL)
		elog(ERROR, "query returns no rows");
	return src->resultDesc;
}

/* The planner's estimate of the rows a plan of one SELECT returns, at least min. */
double
BackfillPlanRows(SPIPlanPtr plan, double min)
{
	CachedPlan *cp = SPI_plan_get_cached_plan(plan);
	double		est = min;

	if (cp != NULL)
	{
		est = Max(est, linitial_node(PlannedStmt, cp->stmt_list)->planTree->plan_rows);
		ReleaseCachedPlan(cp, NULL);	/* an unsaved plan holds no resource owner */
	}
	return est;
}

/*
 * Run a prepared SELECT and hand every row to dest, without copying it into
 * an SPI tuple table.  Returns the number of rows.
 */
uint64
BackfillRunToDest(SPIPlanPtr plan, ParamListInfo params, bool read_only,
				  DestReceiver *dest)
{
	SPIExecuteOptions options;
	int			rc;

	memset(&options, 0, sizeof(options));
	options.params = params;
	options.read_only = read_only;
	options.dest = dest;

	Assert(dest->mydest != DestNone);	/* SPI would call it a utility */
	rc = SPI_execute_plan_extended(plan, &options);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_plan_extended returned %s", SPI_result_code_string(rc));
	return SPI_processed;
}

/*
 * An array argument of n elements holds at most max of them: what each is
 * becomes part of one query, whose target list or columns are bounded anyway,
 * and a larger array would only be a long wait before the same error.
 */
void
BackfillCheckArrayLength(int n, int max, const char *argname, const char *what)
{
	if (n > max)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s may hold at most %d %s, not %d", argname, max, what, n)));
}

static int
CompareNames(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * A name that appears more than once among names[0..n-1], or NULL: found by
 * sorting a copy, so n log n whatever the input.
 */
const char *
BackfillRepeatedName(const char *const *names, int n)
{
	const char **sorted = palloc(sizeof(char *) * Max(n, 1));
	const char *repeated = NULL;

	memcpy(sorted, names, sizeof(char *) * n);
	qsort(sorted, n, sizeof(char *), CompareNames);
	for (int i = 1; i < n && repeated == NULL; i++)
		if (strcmp(sorted[i - 1], sorted[i]) == 0)
			repeated = sorted[i];
	pfree(sorted);
	return repeated;
}

/*
 * A text[] naming columns, as a List of C strings: not empty, no NULL, no
 * name twice, at most as many as a table has columns.
 */
List *
BackfillColumnList(ArrayType *arr, const char *argname)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	List	   *result = NIL;
	const char **names;
	const char *repeated;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", argname)));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must name at least one column", argname)));
	BackfillCheckArrayLength(n, MaxTupleAttributeNumber, argname, "column names");

	names = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		char	   *name;

		CHECK_FOR_INTERRUPTS();
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain NULL", argname),
					 errdetail("Element %d of %s is NULL.", i + 1, argname)));
		name = TextDatumGetCString(elems[i]);
		if (name[0] == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must not contain an empty column name", argname)));
		names[i] = name;
		result = lappend(result, name);
	}
	repeated = BackfillRepeatedName(names, n);
	if (repeated)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_COLUMN),
				 errmsg("%s names column \"%s\" more than once", argname, repeated)));
	return result;
}

/* schema.name of a relation, each part quoted as needed. */
char *
BackfillQualifiedName(Oid relid)
{
	char	   *relname = get_rel_name(relid);
	char	   *nspname;

	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	nspname = get_namespace_name(get_rel_namespace(relid));
	return quote_qualified_identifier(nspname, relname);
}

/* A text argument that must not be NULL, as a C string. */
const char *
BackfillArgText(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", argname)));
	return TextDatumGetCString(PG_GETARG_DATUM(argno));
}

/* A List of column names as "a, b", each quoted as needed. */
char *
BackfillColumnListText(List *names)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, names)
		appendStringInfo(&buf, "%s%s", foreach_current_index(lc) > 0 ? ", " : "",
						 quote_identifier((const char *) lfirst(lc)));
	return buf.data;
}

/*
 * Run SQL of our own with search_path set to pg_catalog, pg_temp, so that
 * names in it and in what the server deparses for it (constraint and
 * trigger definitions) resolve to the catalog and nothing else, and with
 * default_tablespace empty.  Returns the GUC nest level for
 * BackfillUnpinSearchPath.
 */
int
BackfillPinSearchPath(void)
{
	int			nest = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	/* tables and indexes we create go where we say, not where a session default would */
	(void) set_config_option("default_tablespace", "",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	/* and are stored as we say: a table with no USING is a heap, whatever the session's default */
	(void) set_config_option("default_table_access_method", "heap",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	return nest;
}

/* Restore the search_path BackfillPinSearchPath changed. */
void
BackfillUnpinSearchPath(int nest)
{
	AtEOXact_GUC(true, nest);
}

/* Execute one statement we built; it must succeed. */
void
BackfillExec(const char *sql)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc < 0)
		elog(ERROR, "SPI_execute failed (%s) for: %s", SPI_result_code_string(rc), sql);
}

/*
 * The first column of the first row of a query we built, as text (NULL when
 * there is no row or the value is NULL); $1..$n are the given values.
 */
char *
BackfillQueryTextArgs(const char *sql, int nargs, Oid *types, Datum *values)
{
	int			rc = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed (%s) for: %s", SPI_result_code_string(rc), sql);
	if (SPI_processed == 0)
		return NULL;
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

/* BackfillQueryTextArgs with one argument, $1, an OID. */
char *
BackfillQueryText(const char *sql, Oid arg)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(arg)};

	return BackfillQueryTextArgs(sql, 1, types, values);
}

/* A List of C strings as a text[] Datum. */
Datum
BackfillTextArray(List *strings)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(1, list_length(strings)));
	ListCell   *lc;

	foreach(lc, strings)
		elems[foreach_current_index(lc)] = CStringGetTextDatum((char *) lfirst(lc));
	return PointerGetDatum(construct_array(elems, list_length(strings), TEXTOID, -1, false, TYPALIGN_INT));
}

/* A List of integers as an int4[] Datum. */
Datum
BackfillIntArray(List *ints)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(1, list_length(ints)));
	ListCell   *lc;

	foreach(lc, ints)
		elems[foreach_current_index(lc)] = Int32GetDatum(lfirst_int(lc));
	return PointerGetDatum(construct_array(elems, list_length(ints), INT4OID, 4, true, TYPALIGN_INT));
}

/*
 * Run a query of ours that generates statements, then execute each of them.
 * In the query, $1 is the OID src, $2 and $3 the texts a2 and a3.
 */
void
BackfillExecGenerated(const char *sql, Oid src, const char *a2, const char *a3)
{
	Oid			types[3] = {OIDOID, TEXTOID, TEXTOID};
	Datum		values[3] = {ObjectIdGetDatum(src), CStringGetTextDatum(a2), CStringGetTextDatum(a3)};
	int			rc = SPI_execute_with_args(sql, 3, types, values, NULL, false, 0);
	SPITupleTable *stmts;
	uint64		n;

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed (%s) for: %s", SPI_result_code_string(rc), sql);
	stmts = SPI_tuptable;
	n = SPI_processed;
	for (uint64 i = 0; i < n; i++)
	{
		char	   *stmt = SPI_getvalue(stmts->vals[i], stmts->tupdesc, 1);

		if (stmt != NULL)
			BackfillExec(stmt);
	}
}

/* The 0-based position of the column called name in desc, or -1. */
int
BackfillFindColumn(TupleDesc desc, const char *name)
{
	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped &&
			strcmp(NameStr(TupleDescAttr(desc, i)->attname), name) == 0)
			return i;
	return -1;
}

/*
 * In a PG_CATCH after BeginInternalSubTransaction: take the error, roll the
 * subtransaction back and come back to the caller's memory context and
 * resource owner, as PL/pgSQL does.  Returns the error, for the caller to
 * rethrow or to act on.
 */
ErrorData *
BackfillAbortSubtransaction(MemoryContext cxt, ResourceOwner owner)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();
	RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return edata;
}

/* What a receiver of ours does not need to do. */
static void
NoStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
NoShutdown(DestReceiver *self)
{
}

/*
 * Set up a DestReceiver of ours for BackfillRunToDest: receive is called for
 * each row, startup (or nothing) with the row type before the first.
 */
void
BackfillInitReceiver(DestReceiver *self,
					 bool (*receive) (TupleTableSlot *slot, DestReceiver *self),
					 void (*startup) (DestReceiver *self, int operation, TupleDesc typeinfo))
{
	self->receiveSlot = receive;
	self->rStartup = startup ? startup : NoStartup;
	self->rShutdown = NoShutdown;
	self->rDestroy = NoShutdown;
	self->mydest = DestTuplestore;	/* any tag but DestNone, which SPI discards */
}

/* The key argument argno: not NULL, at least one column, none twice. */
List *
BackfillKeyArg(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("key must not be NULL"),
				 errhint("Name the columns that identify a row, e.g. ARRAY['order_id'].")));
	return BackfillColumnList(PG_GETARG_ARRAYTYPE_P(argno), "key");
}

/*
 * The fields of each object of a jsonb array (text), as rows of C strings
 * (NULL for a missing field); *n gets the number of rows.  Must be called
 * inside SPI; what is read is copied out of it.
 */
char ***
BackfillJsonbRows(const char *json, int nfields, const char *const *fields, uint64 *n)
{
	Oid			types[2] = {JSONBOID, TEXTARRAYOID};
	Datum		values[2];
	List	   *names = NIL;
	char	 ***rows;

	for (int f = 0; f < nfields; f++)
		names = lappend(names, (char *) fields[f]);
	values[0] = DirectFunctionCall1(jsonb_in, CStringGetDatum(json));
	values[1] = BackfillTextArray(names);
	if (SPI_execute_with_args("SELECT e OPERATOR(pg_catalog.->>) f FROM pg_catalog.jsonb_array_elements($1)"
							  " WITH ORDINALITY AS a(e, i), pg_catalog.unnest($2) WITH ORDINALITY AS k(f, j)"
							  " ORDER BY a.i, k.j", 2, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read a jsonb array");
	*n = SPI_processed / Max(nfields, 1);
	rows = palloc(sizeof(char **) * Max(*n, 1));
	for (uint64 i = 0; i < *n; i++)
	{
		rows[i] = palloc(sizeof(char *) * nfields);
		for (int f = 0; f < nfields; f++)
			rows[i][f] = SPI_getvalue(SPI_tuptable->vals[i * nfields + f], SPI_tuptable->tupdesc, 1);
	}
	return rows;
}

/*
 * Call fn(arg) in a subtransaction that is then rolled back, so that the
 * locks fn took (and only those) are let go; what fn allocated stays.
 */
void
BackfillCallRolledBack(void (*fn) (void *arg), void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(arg);
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ReThrowError(BackfillAbortSubtransaction(cxt, owner));
	}
	PG_END_TRY();
}

/*
 * This transaction's COMMIT is not waited for on disk (synchronous_commit
 * off, for this transaction only): for bookkeeping a crash may lose.
 */
void
BackfillCommitUnawaited(void)
{
	(void) set_config_option("synchronous_commit", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
}
