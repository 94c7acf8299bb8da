/*-------------------------------------------------------------------------
 *
 * src/spi_util.c
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
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "nodes/nodeFuncs.h"
#include "parser/parser.h"
#include "parser/scansup.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"

#include "spi_util.h"

/* Re-raise the error being handled with "invalid <argname>: " in front. */
static void
RethrowNamingArgument(MemoryContext cxt, const char *argname)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();

	ereport(ERROR,
			(errcode(edata->sqlerrcode),
			 errmsg("invalid %s: %s", argname, edata->message),
			 edata->detail ? errdetail_internal("%s", edata->detail) : 0,
			 edata->hint ? errhint("%s", edata->hint) : 0));
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

/* Is the text empty or only white space? */
static bool
IsBlank(const char *s)
{
	for (; *s; s++)
		if (!scanner_isspace(*s))
			return false;
	return true;
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

	stmts = ParseNamingArgument(query, argname);
	if (list_length(stmts) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("%s must be a single query, not %d statements",
						argname, list_length(stmts))));

	raw = linitial_node(RawStmt, stmts);
	if (!IsA(raw->stmt, SelectStmt) || ((SelectStmt *) raw->stmt)->intoClause)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s must be a SELECT, VALUES or TABLE query", argname),
				 errdetail("%s is a %s statement.", argname,
						   CreateCommandName(raw->stmt)),
				 errhint("Statements that write belong to the write functions, not to a query argument.")));

	if (raw->stmt_len > 0)
		text = pnstrdup(query + raw->stmt_location, raw->stmt_len);
	else
		text = pstrdup(query + raw->stmt_location);

	/* A locking clause or a data-modifying WITH is caught at execution (read-only SPI). */
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
				 errdetail("The %s given is: %s", argname, expr)));

	pfree(buf.data);
	return pstrdup(expr);
}

/* SPI_prepare that names the argument in any parse or analysis error. */
SPIPlanPtr
BackfillPrepare(const char *sql, int nargs, Oid *argtypes, const char *argname)
{
	MemoryContext cxt = CurrentMemoryContext;
	SPIPlanPtr	plan = NULL;

	PG_TRY();
	{
		plan = SPI_prepare(sql, nargs, argtypes);
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
		elog(ERROR, "expected one query after rewriting, got %d", list_length(src->query_list));
	return linitial_node(Query, src->query_list);
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

	/* SPI reports a SELECT whose rows go to a DestNone receiver as a utility */
	rc = SPI_execute_plan_extended(plan, &options);
	if (rc != SPI_OK_SELECT && rc != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute_plan_extended returned %s", SPI_result_code_string(rc));
	return SPI_processed;
}

/*
 * A text[] naming columns, as a List of C strings: not empty, no NULL, no
 * name twice.
 */
List *
BackfillColumnList(ArrayType *arr, const char *argname)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	List	   *result = NIL;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", argname)));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must name at least one column", argname)));

	for (int i = 0; i < n; i++)
	{
		char	   *name;
		ListCell   *lc;

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
		foreach(lc, result)
		{
			if (strcmp((char *) lfirst(lc), name) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("%s names column \"%s\" more than once", argname, name)));
		}
		result = lappend(result, name);
	}
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
