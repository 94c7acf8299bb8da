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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/keywords.h"
#include "lib/stringinfo.h"
#include "parser/parser.h"
#include "parser/scanner.h"
#include "utils/builtins.h"

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
