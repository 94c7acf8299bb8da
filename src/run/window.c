/*-------------------------------------------------------------------------
 *
 * src/run/window.c
 *		A run's window in SQL: the source bound to a task's window, and the
 *		scope of a window on a column.
 *
 * A run's source is a query with $1 and $2 for the lower (inclusive) and
 * upper (exclusive) bounds of each task's window.  They are bound as
 * literals cast to the window's type, found by the server's own lexer, so a
 * $1 inside a string or a comment is left alone.
 *
 * Window values are typed by the caller's types: a domain's CHECK, a
 * composite's or array's element input function may run functions of the
 * type owner's making.  So every comparison of window values here runs as
 * the role calling backfill, never as the state tables' owner and never
 * while a statement on the state tables runs (BackfillWritingState).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/keywords.h"
#include "lib/stringinfo.h"
#include "parser/parser.h"
#include "parser/scanner.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "base/extension.h"
#include "base/spi_util.h"
#include "run/window.h"

/*
 * The source with $1 and $2 replaced by CAST('lo' AS type) and
 * CAST('hi' AS type).  Any other parameter number is an error.
 */
char *
BackfillBindWindow(const char *source, const char *type, const char *lo, const char *hi)
{
	static int	param = -1;	/* the token code, asked once */
	core_yy_extra_type yyextra;
	core_yyscan_t scanner;
	StringInfoData out;
	int			copied = 0;

	if (param < 0)
		param = BackfillTokenOf("$1");
	scanner = scanner_init(source, &yyextra, &ScanKeywords, ScanKeywordTokens);
	initStringInfo(&out);
	for (;;)
	{
		core_YYSTYPE lval;
		YYLTYPE		loc;
		int			tok = core_yylex(&lval, &loc, scanner);
		int			end;

		if (tok == 0)
			break;
		if (tok != param)
			continue;
		if (lval.ival != 1 && lval.ival != 2)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_PARAMETER),
					 errmsg("source refers to $%d, but only $1 and $2 are given", lval.ival),
					 errdetail("$1 and $2 are the lower (inclusive) and upper (exclusive) bounds of each task's window.")));
		end = loc + 1;
		while (source[end] >= '0' && source[end] <= '9')
			end++;
		appendBinaryStringInfo(&out, source + copied, loc - copied);
		appendStringInfo(&out, "CAST(%s AS %s)", quote_literal_cstr(lval.ival == 1 ? lo : hi), type);
		copied = end;
	}
	scanner_finish(scanner);
	appendStringInfoString(&out, source + copied);
	return out.data;
}

/* "column >= CAST('lo' AS type) AND column < CAST('hi' AS type)", column qualified by alias if given. */
char *
BackfillWindowScope(const char *column, const char *type, const char *lo, const char *hi,
					const char *alias)
{
	char	   *col = alias ? psprintf("%s.%s", alias, quote_identifier(column)) : (char *) quote_identifier(column);

	return psprintf("%s OPERATOR(pg_catalog.>=) CAST(%s AS %s) AND %s OPERATOR(pg_catalog.<) CAST(%s AS %s)",
					col, quote_literal_cstr(lo), type, col, quote_literal_cstr(hi), type);
}

/*
 * The first of n task windows [from[i], to[i]) (tasks[i] their numbers) that
 * does not lie inside [lo, hi), is empty, or overlaps another, as values of
 * type: its index, with *fault saying what is wrong (and *other the number
 * of a task it overlaps); -1 when they tile a part of the range.  Compared as
 * the current role, in one statement: sorted by lower bound, each window
 * overlaps another exactly when it starts before the one before it ends.
 */
int
BackfillWindowsOutside(const char *type, const char *lo, const char *hi, int n,
					   const int32 *tasks, char *const *from, char *const *to,
					   BackfillWindowFault *fault, int32 *other)
{
	Oid			types[5] = {TEXTOID, TEXTOID, INT4ARRAYOID, TEXTARRAYOID, TEXTARRAYOID};
	Datum		values[5];
	List	   *t = NIL,
			   *f = NIL,
			   *e = NIL;
	const char *T = type;
	bool		isnull;
	int32		bad;
	int			rc;

	/* nothing of the type's making runs while the state tables are written */
	Assert(!BackfillWritingState());
	*fault = WINDOW_FITS;
	*other = 0;
	if (n == 0)
		return -1;
	for (int i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		t = lappend_int(t, tasks[i]);
		f = lappend(f, from[i]);
		e = lappend(e, to[i]);
	}
	values[0] = CStringGetTextDatum(lo);
	values[1] = CStringGetTextDatum(hi);
	values[2] = BackfillIntArray(t);
	values[3] = BackfillTextArray(f);
	values[4] = BackfillTextArray(e);
	rc = SPI_execute_with_args(psprintf("SELECT w.i, w.inside IS TRUE, w.nonempty IS TRUE, w.prev FROM ("
										" SELECT u.i, u.task,"
										"  CAST(u.f AS %s) OPERATOR(pg_catalog.>=) CAST($1 AS %s)"
										"   AND CAST(u.t AS %s) OPERATOR(pg_catalog.<=) CAST($2 AS %s) AS inside,"
										"  CAST(u.f AS %s) OPERATOR(pg_catalog.<) CAST(u.t AS %s) AS nonempty,"
										"  CASE WHEN CAST(pg_catalog.lag(u.t) OVER w AS %s) OPERATOR(pg_catalog.>) CAST(u.f AS %s)"
										"   THEN pg_catalog.lag(u.task) OVER w END AS prev"
										" FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5))"
										"  WITH ORDINALITY AS u(task, f, t, i)"
										" WINDOW w AS (ORDER BY CAST(u.f AS %s) USING OPERATOR(pg_catalog.<), u.task)) w"
										" WHERE w.inside IS NOT TRUE OR w.nonempty IS NOT TRUE OR w.prev IS NOT NULL"
										" ORDER BY w.task LIMIT 1",
										T, T, T, T, T, T, T, T, T),
							   5, types, values, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not compare the windows of a run's tasks: %s", SPI_result_code_string(rc));
	if (SPI_processed == 0)
		return -1;
	bad = (int32) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) - 1;
	Assert(bad >= 0 && bad < n);
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)))
		*fault = WINDOW_OUTSIDE;
	else if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull)))
		*fault = WINDOW_EMPTY;
	else
	{
		*fault = WINDOW_OVERLAPS;
		*other = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));
	}
	return bad;
}
