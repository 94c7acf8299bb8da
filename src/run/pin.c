/*-------------------------------------------------------------------------
 *
 * src/run/pin.c
 *		The code a run executes, pinned at plan time and checked before each task.
 *
 * A run's source is analysed under the run's search_path and walked: the
 * views it reads (and what they read), the functions it calls, the
 * aggregates (their transition, final, combine, serial and moving-aggregate
 * functions and sort operator), operators (their functions), casts and
 * domains (their constraints, whose expressions are walked too).  Each
 * function's body is followed where it can be seen: a SQL-standard body
 * (BEGIN ATOMIC, RETURN) is a stored query tree; a SQL function's text is
 * parsed and analysed as the executor would, under the function's own
 * search_path setting if it has one; a PL function's text is pinned as part
 * of its definition, and every name in it written like a call resolves to
 * the functions that name finds, recorded and followed.  What pg_depend
 * records of a function (functions, operators, types) is followed too.
 *
 * Every object is pinned by OID with its definition as the catalog prints
 * it (under a fixed search_path).  Before each task the check reads every
 * pinned object again by OID (dropped? changed?), then walks the source
 * again under the run's search_path: an object it reaches now that it did
 * not at plan time, or a name that finds other functions, means names
 * resolve differently (a "$user" schema created mid-run, a better-matching
 * overload) and blocks the run as a changed definition does.
 *
 * Everything here reads the catalog; nothing is locked beyond what parse
 * analysis takes.  Must be called inside SPI.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_cast.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_language.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "common/keywords.h"
#include "executor/functions.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "parser/scanner.h"
#include "rewrite/rewriteHandler.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/syscache.h"

#include "base/spi_util.h"
#include "run/pin.h"

typedef struct PinContext
{
	List	   *seen;			/* "kind oid" or "name text" strings already pinned */
	StringInfoData out;			/* jsonb array text */
} PinContext;

static bool PinWalker(Node *node, PinContext *cx);
static void AddFunction(PinContext *cx, Oid fn, Node *call);

/*
 * The current definition of a pinned object found by OID, as the catalog
 * prints it under a fixed search_path; NULL when there is no such object.
 */
static char *
DefinitionByOid(const char *kind, Oid oid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(oid)};
	const char *sql;
	int			nest;
	char	   *def = NULL;

	if (strcmp(kind, "function") == 0)
		sql = "SELECT CASE WHEN p.prokind OPERATOR(pg_catalog.=) 'a'"
			" THEN (SELECT a::pg_catalog.text FROM pg_catalog.pg_aggregate a WHERE a.aggfnoid OPERATOR(pg_catalog.=) p.oid)"
			" ELSE pg_catalog.pg_get_functiondef(p.oid) END"
			" FROM pg_catalog.pg_proc p WHERE p.oid OPERATOR(pg_catalog.=) $1";
	else if (strcmp(kind, "operator") == 0)
		sql = "SELECT o::pg_catalog.text FROM pg_catalog.pg_operator o WHERE o.oid OPERATOR(pg_catalog.=) $1";
	else if (strcmp(kind, "cast") == 0)
		sql = "SELECT c::pg_catalog.text FROM pg_catalog.pg_cast c WHERE c.oid OPERATOR(pg_catalog.=) $1";
	else if (strcmp(kind, "domain") == 0)
		sql = "SELECT pg_catalog.concat_ws(' ', pg_catalog.format_type(t.typbasetype, t.typtypmod),"
			"  CASE WHEN t.typnotnull THEN 'NOT NULL' END, 'DEFAULT ' OPERATOR(pg_catalog.||) t.typdefault,"
			"  (SELECT pg_catalog.string_agg(pg_catalog.format('CONSTRAINT %I %s', c.conname,"
			"     pg_catalog.pg_get_constraintdef(c.oid)), ' ' ORDER BY c.conname)"
			"   FROM pg_catalog.pg_constraint c WHERE c.contypid OPERATOR(pg_catalog.=) t.oid))"
			" FROM pg_catalog.pg_type t WHERE t.oid OPERATOR(pg_catalog.=) $1";
	else
		sql = "SELECT pg_catalog.pg_get_viewdef(c.oid) FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) $1";
	nest = BackfillPinSearchPath();
	if (SPI_execute_with_args(sql, 1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the definition of %s %u", kind, oid);
	if (SPI_processed > 0)
		def = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	BackfillUnpinSearchPath(nest);
	return def;
}

/* Whether key was pinned already; remember it if not. */
static bool
Seen(PinContext *cx, const char *key)
{
	ListCell   *lc;

	foreach(lc, cx->seen)
		if (strcmp((char *) lfirst(lc), key) == 0)
			return true;
	cx->seen = lappend(cx->seen, pstrdup(key));
	return false;
}

/* Append one entry to the jsonb array text. */
static void
AddEntry(PinContext *cx, const char *kind, const char *name, Oid oid, const char *def)
{
	appendStringInfoString(&cx->out, cx->out.len > 1 ? ", {\"kind\": " : "{\"kind\": ");
	escape_json(&cx->out, kind);
	appendStringInfoString(&cx->out, ", \"name\": ");
	escape_json(&cx->out, name);
	if (OidIsValid(oid))
		appendStringInfo(&cx->out, ", \"oid\": %u", oid);
	appendStringInfoString(&cx->out, ", \"definition\": ");
	escape_json(&cx->out, def);
	appendStringInfoChar(&cx->out, '}');
}

/* Pin an object by OID (a user's own, not one of the system's); false if seen or gone. */
static bool
AddObject(PinContext *cx, const char *kind, Oid oid, const char *name)
{
	char	   *def;

	if (oid < FirstNormalObjectId || Seen(cx, psprintf("%s %u", kind, oid)))
		return false;
	def = DefinitionByOid(kind, oid);
	if (def == NULL)
		return false;
	AddEntry(cx, kind, name, oid, def);
	return true;
}

/* An operator and its function. */
static void
AddOperator(PinContext *cx, Oid opno)
{
	if (AddObject(cx, "operator", opno, format_operator_qualified(opno)))
		AddFunction(cx, get_opcode(opno), NULL);
}

/* The type a domain is declared over (itself perhaps a domain). */
static Oid
DomainBaseType(Oid typid)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	Oid			base;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	base = ((Form_pg_type) GETSTRUCT(tup))->typbasetype;
	ReleaseSysCache(tup);
	return base;
}

/* A domain, its CHECK constraints' expressions, and its base type if that is a domain too. */
static void
AddDomain(PinContext *cx, Oid typid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(typid)};
	List	   *checks = NIL;
	ListCell   *lc;

	if (get_typtype(typid) != TYPTYPE_DOMAIN ||
		!AddObject(cx, "domain", typid, format_type_extended(typid, -1, FORMAT_TYPE_FORCE_QUALIFY)))
		return;
	if (SPI_execute_with_args("SELECT conbin FROM pg_catalog.pg_constraint"
							  " WHERE contypid OPERATOR(pg_catalog.=) $1 AND conbin IS NOT NULL",
							  1, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the constraints of domain %u", typid);
	for (uint64 i = 0; i < SPI_processed; i++)
		checks = lappend(checks, stringToNode(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1)));
	foreach(lc, checks)
		(void) PinWalker((Node *) lfirst(lc), cx);
	AddDomain(cx, DomainBaseType(typid));
}

/* The cast from source to target, if a user made one, and its function. */
static void
AddCast(PinContext *cx, Oid source, Oid target)
{
	HeapTuple	tup = SearchSysCache2(CASTSOURCETARGET, ObjectIdGetDatum(source), ObjectIdGetDatum(target));
	Form_pg_cast cast;
	Oid			oid;
	Oid			fn;

	if (!HeapTupleIsValid(tup))
		return;
	cast = (Form_pg_cast) GETSTRUCT(tup);
	oid = cast->oid;
	fn = cast->castfunc;
	ReleaseSysCache(tup);
	if (AddObject(cx, "cast", oid, psprintf("(%s AS %s)", format_type_be_qualified(source),
											format_type_be_qualified(target))))
		AddFunction(cx, fn, NULL);
}

/* The support functions and sort operator of an aggregate. */
static void
AddAggregateParts(PinContext *cx, Oid fn)
{
	HeapTuple	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(fn));
	Form_pg_aggregate agg;
	Oid			parts[8];
	Oid			sortop;

	if (!HeapTupleIsValid(tup))
		return;
	agg = (Form_pg_aggregate) GETSTRUCT(tup);
	parts[0] = agg->aggtransfn;
	parts[1] = agg->aggfinalfn;
	parts[2] = agg->aggcombinefn;
	parts[3] = agg->aggserialfn;
	parts[4] = agg->aggdeserialfn;
	parts[5] = agg->aggmtransfn;
	parts[6] = agg->aggminvtransfn;
	parts[7] = agg->aggmfinalfn;
	sortop = agg->aggsortop;
	ReleaseSysCache(tup);
	for (int i = 0; i < lengthof(parts); i++)
		if (OidIsValid(parts[i]))
			AddFunction(cx, parts[i], NULL);
	if (OidIsValid(sortop))
		AddOperator(cx, sortop);
}

/* What pg_depend records a function refers to: functions, operators, domains. */
static void
AddDependencies(PinContext *cx, Oid fn)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(fn)};
	List	   *refs = NIL;
	ListCell   *lc;

	if (SPI_execute_with_args("SELECT refclassid::pg_catalog.regclass::pg_catalog.text, refobjid"
							  " FROM pg_catalog.pg_depend"
							  " WHERE classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass"
							  "   AND objid OPERATOR(pg_catalog.=) $1 AND deptype OPERATOR(pg_catalog.=) 'n'"
							  "   AND refclassid OPERATOR(pg_catalog.=) ANY ('{pg_catalog.pg_proc,pg_catalog.pg_operator,pg_catalog.pg_type}'::pg_catalog.regclass[])"
							  " ORDER BY 1, 2", 1, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the dependencies of function %u", fn);
	for (uint64 i = 0; i < SPI_processed; i++)
		refs = lappend(refs, list_make2(makeString(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1)),
										makeString(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2))));
	foreach(lc, refs)
	{
		const char *cls = strVal(linitial((List *) lfirst(lc)));
		Oid			oid = atooid(strVal(lsecond((List *) lfirst(lc))));

		if (strstr(cls, "pg_proc"))
			AddFunction(cx, oid, NULL);
		else if (strstr(cls, "pg_operator"))
			AddOperator(cx, oid);
		else
			AddDomain(cx, oid);
	}
}

/*
 * The names a function's text writes like calls: name or schema.name
 * followed by "(", read with the SQL lexer (an error if it cannot read it).
 */
static List *
CalledNames(const char *src)
{
	static int	ident = -1;	/* the token code, asked once */
	core_yy_extra_type yyextra;
	core_yyscan_t scanner;
	List	   *names = NIL;
	List	   *found = NIL;

	if (ident < 0)
		ident = BackfillTokenOf("x");
	scanner = scanner_init(src, &yyextra, &ScanKeywords, ScanKeywordTokens);
	for (;;)
	{
		core_YYSTYPE lval;
		YYLTYPE		loc;
		int			tok = core_yylex(&lval, &loc, scanner);

		if (tok == 0)
			break;
		if (tok == ident)
			names = (names != NIL && strcmp(strVal(llast(names)), ".") == 0)
				? lappend(list_truncate(names, list_length(names) - 1), makeString(pstrdup(lval.str)))
				: list_make1(makeString(pstrdup(lval.str)));
		else if (tok == '.' && names != NIL)
			names = lappend(names, makeString("."));
		else
		{
			if (tok == '(' && names != NIL && strcmp(strVal(llast(names)), ".") != 0 &&
				list_length(names) <= 3)
				found = lappend(found, names);
			names = NIL;
		}
	}
	scanner_finish(scanner);
	return found;
}

static int
CompareStrings(const ListCell *a, const ListCell *b)
{
	return strcmp((char *) lfirst(a), (char *) lfirst(b));
}

/* The functions a name finds under the current search_path, as sorted text; their OIDs in *oids. */
static char *
NameFinds(List *name, List **oids)
{
	List	   *found = NIL;
	StringInfoData def;
	ListCell   *lc;

	for (FuncCandidateList c = FuncnameGetCandidates(name, -1, NIL, false, false, false, true); c; c = c->next)
	{
		found = lappend(found, format_procedure_qualified(c->oid));
		*oids = lappend_oid(*oids, c->oid);
	}
	list_sort(found, CompareStrings);
	initStringInfo(&def);
	foreach(lc, found)
		appendStringInfo(&def, "%s%s", def.len ? ", " : "", (char *) lfirst(lc));
	return def.data;
}

/*
 * The names a PL function's text calls, each pinned with the functions it
 * finds now, which are followed in turn.
 */
static void
AddCalledNames(PinContext *cx, const char *src, const char *caller)
{
	ListCell   *lc;

	foreach(lc, CalledNames(src))
	{
		char	   *written = NameListToString(lfirst(lc));
		List	   *oids = NIL;
		char	   *def;
		ListCell   *lo;

		if (Seen(cx, psprintf("name %s %s", caller, written)))
			continue;
		def = NameFinds(lfirst(lc), &oids);
		AddEntry(cx, "name", psprintf("\"%s\" called by %s", written, caller), InvalidOid, def);
		foreach(lo, oids)
			AddFunction(cx, lfirst_oid(lo), NULL);
	}
}

/* A SQL function's text, parsed and analysed as the executor would. */
static void
AddSqlText(PinContext *cx, HeapTuple proctup, Node *call, const char *src)
{
	SQLFunctionParseInfoPtr pinfo = prepare_sql_fn_parse_info(proctup, call,
															  call ? exprInputCollation(call) : InvalidOid);
	List	   *raws = pg_parse_query(src);
	ListCell   *lc;

	foreach(lc, raws)
	{
		Query	   *q = parse_analyze_withcb(lfirst_node(RawStmt, lc), src,
											 (ParserSetupHook) sql_fn_parser_setup, pinfo, NULL);

		(void) PinWalker((Node *) q, cx);
	}
}

/*
 * A function body's text: a SQL function's analysed, falling back to its
 * called names when it cannot be analysed alone (it uses a table an earlier
 * statement creates); a PL function's called names.  Errors are caught in a
 * subtransaction: the text itself is pinned with the definition anyway.
 */
static void
AddBodyText(PinContext *cx, HeapTuple proctup, Node *call, const char *src, bool sql, const char *caller)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool failed = false;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		if (sql)
			AddSqlText(cx, proctup, call, src);
		else
			AddCalledNames(cx, src, caller);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		(void) BackfillAbortSubtransaction(cxt, owner);
		failed = true;
	}
	PG_END_TRY();
	if (failed && sql)
		AddBodyText(cx, proctup, call, src, false, caller);
}

/* Names in a body resolve under the function's own search_path setting, if it has one. */
static void
ApplyFunctionSearchPath(HeapTuple proctup)
{
	bool		isnull;
	Datum		config = SysCacheGetAttr(PROCOID, proctup, Anum_pg_proc_proconfig, &isnull);
	Datum	   *items;
	int			n;

	if (isnull)
		return;
	deconstruct_array(DatumGetArrayTypeP(config), TEXTOID, -1, false, TYPALIGN_INT, &items, NULL, &n);
	for (int i = 0; i < n; i++)
	{
		char	   *item = TextDatumGetCString(items[i]);

		if (strncmp(item, "search_path=", 12) == 0)
			(void) set_config_option("search_path", item + 12, PGC_USERSET, PGC_S_SESSION,
									 GUC_ACTION_SAVE, true, 0, false);
	}
}

/* The body of a function, where it can be seen. */
static void
AddBody(PinContext *cx, HeapTuple proctup, Node *call, const char *caller)
{
	Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(proctup);
	bool		isnull;
	Datum		body = SysCacheGetAttr(PROCOID, proctup, Anum_pg_proc_prosqlbody, &isnull);
	int			nest = NewGUCNestLevel();

	ApplyFunctionSearchPath(proctup);
	if (!isnull)
		(void) PinWalker(stringToNode(TextDatumGetCString(body)), cx);
	else if (proc->prolang != INTERNALlanguageId && proc->prolang != ClanguageId)
	{
		Datum		src = SysCacheGetAttr(PROCOID, proctup, Anum_pg_proc_prosrc, &isnull);

		if (!isnull)
			AddBodyText(cx, proctup, call, TextDatumGetCString(src), proc->prolang == SQLlanguageId, caller);
	}
	AtEOXact_GUC(true, nest);
}

/* A user's function (call: the expression calling it, if known), its body, what it depends on. */
static void
AddFunction(PinContext *cx, Oid fn, Node *call)
{
	char	   *name;
	HeapTuple	tup;
	HeapTuple	copy;
	bool		aggregate;

	check_stack_depth();
	if (!OidIsValid(fn) || fn < FirstNormalObjectId)
		return;
	name = format_procedure_qualified(fn);
	if (!AddObject(cx, "function", fn, name))
		return;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	if (!HeapTupleIsValid(tup))
		return;
	copy = heap_copytuple(tup);
	aggregate = ((Form_pg_proc) GETSTRUCT(tup))->prokind == PROKIND_AGGREGATE;
	ReleaseSysCache(tup);
	if (aggregate)
		AddAggregateParts(cx, fn);
	else
		AddBody(cx, copy, call, name);
	AddDependencies(cx, fn);
}

/* The operators a query's ORDER BY, GROUP BY and DISTINCT use. */
static void
AddSortOperators(PinContext *cx, Query *q)
{
	List	   *lists[3] = {q->sortClause, q->groupClause, q->distinctClause};

	for (int i = 0; i < lengthof(lists); i++)
	{
		ListCell   *lc;

		foreach(lc, lists[i])
		{
			SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);

			AddOperator(cx, sgc->eqop);
			AddOperator(cx, sgc->sortop);
		}
	}
}

/* A view or materialized view a query reads, and what a view reads in turn. */
static void
AddRelation(PinContext *cx, RangeTblEntry *rte)
{
	if (!AddObject(cx, rte->relkind == RELKIND_VIEW ? "view" : "materialized view", rte->relid,
				   BackfillQualifiedName(rte->relid)))
		return;
	if (rte->relkind == RELKIND_VIEW)
	{
		Relation	rel = table_open(rte->relid, AccessShareLock);
		Query	   *vq = copyObject(get_view_query(rel));

		table_close(rel, NoLock);
		(void) PinWalker((Node *) vq, cx);
	}
}

/* Walk an analysed query or expression: what it reads and calls. */
static bool
PinWalker(Node *node, PinContext *cx)
{
	/* views over views and functions calling functions nest as deep as a role makes them */
	check_stack_depth();
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		AddSortOperators(cx, (Query *) node);
		return query_tree_walker((Query *) node, PinWalker, cx, QTW_EXAMINE_RTES_BEFORE);
	}
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION &&
			(rte->relkind == RELKIND_VIEW || rte->relkind == RELKIND_MATVIEW))
			AddRelation(cx, rte);
		return false;
	}
	if (IsA(node, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) node;

		AddFunction(cx, f->funcid, node);
		if (f->funcformat != COERCE_EXPLICIT_CALL && list_length(f->args) >= 1)
			AddCast(cx, exprType(linitial(f->args)), f->funcresulttype);
	}
	else if (IsA(node, OpExpr) || IsA(node, DistinctExpr) || IsA(node, NullIfExpr))
		AddOperator(cx, ((OpExpr *) node)->opno);
	else if (IsA(node, ScalarArrayOpExpr))
		AddOperator(cx, ((ScalarArrayOpExpr *) node)->opno);
	else if (IsA(node, RowCompareExpr))
	{
		ListCell   *lc;

		foreach(lc, ((RowCompareExpr *) node)->opnos)
			AddOperator(cx, lfirst_oid(lc));
	}
	else if (IsA(node, Aggref))
		AddFunction(cx, ((Aggref *) node)->aggfnoid, node);
	else if (IsA(node, WindowFunc))
		AddFunction(cx, ((WindowFunc *) node)->winfnoid, node);
	else if (IsA(node, CoerceToDomain))
		AddDomain(cx, ((CoerceToDomain *) node)->resulttype);
	else if (IsA(node, RelabelType))
		AddCast(cx, exprType((Node *) ((RelabelType *) node)->arg), ((RelabelType *) node)->resulttype);
	else if (IsA(node, CoerceViaIO))
		AddCast(cx, exprType((Node *) ((CoerceViaIO *) node)->arg), ((CoerceViaIO *) node)->resulttype);
	else if (IsA(node, ArrayCoerceExpr))
		AddCast(cx, exprType((Node *) ((ArrayCoerceExpr *) node)->arg), ((ArrayCoerceExpr *) node)->resulttype);
	return expression_tree_walker(node, PinWalker, cx);
}

/*
 * What a query executes that a user defined, with definitions, as a jsonb
 * array text: names resolved under search_path by analysing the query, not
 * by reading its text.
 */
char *
BackfillPinnedObjects(const char *sql, const char *search_path)
{
	PinContext	cx;
	List	   *raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	Query	   *q;
	int			nest = NewGUCNestLevel();

	memset(&cx, 0, sizeof(cx));
	initStringInfo(&cx.out);
	appendStringInfoChar(&cx.out, '[');
	(void) set_config_option("search_path", search_path, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	q = parse_analyze_fixedparams(linitial_node(RawStmt, raw), sql, NULL, 0, NULL);
	(void) PinWalker((Node *) q, &cx);
	AtEOXact_GUC(true, nest);
	appendStringInfoChar(&cx.out, ']');
	return cx.out.data;
}

/* The name of an object that exists, as it was pinned (a cast's stays as it was). */
static char *
CurrentName(const char *kind, Oid oid, const char *pinned)
{
	if (strcmp(kind, "function") == 0)
		return format_procedure_qualified(oid);
	if (strcmp(kind, "operator") == 0)
		return format_operator_qualified(oid);
	if (strcmp(kind, "domain") == 0)
		return format_type_extended(oid, -1, FORMAT_TYPE_FORCE_QUALIFY);
	if (strcmp(kind, "cast") == 0)
		return (char *) pinned;
	return BackfillQualifiedName(oid);
}

/* The stored entry of kind for oid (or, for a name, of that name), or -1. */
static int
FindEntry(char ***rows, uint64 n, const char *kind, const char *name, const char *oid)
{
	for (uint64 i = 0; i < n; i++)
		if (strcmp(rows[i][0], kind) == 0 &&
			(oid ? rows[i][2] && strcmp(rows[i][2], oid) == 0 : strcmp(rows[i][1], name) == 0))
			return (int) i;
	return -1;
}

/* What the source reaches now, walked again under search_path; NULL if it fails (*error). */
static char *
PinnedNow(const char *source, const char *search_path, char **error)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	char	   *volatile json = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		json = BackfillPinnedObjects(source, search_path);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		*error = BackfillAbortSubtransaction(cxt, owner)->message;
	}
	PG_END_TRY();
	return json;
}

/*
 * NULL when the code run runid executes is as planned, else what changed, as
 * a sentence: an object of pinned (what BackfillPinnedObjects found when the
 * run was planned) dropped or changed (found by OID), or source (bound to the
 * run's window) now reaching an object it did not under search_path, or a
 * name finding other functions.
 */
char *
BackfillPinnedChange(int64 runid, const char *pinned, const char *source, const char *search_path)
{
	static const char *const fields[4] = {"kind", "name", "oid", "definition"};
	uint64		n;
	uint64		m;
	char	 ***rows = BackfillJsonbRows(pinned, 4, fields, &n);
	char	 ***now;
	char	   *error = NULL;
	char	   *json;

	for (uint64 i = 0; i < n; i++)
	{
		char	   *def;

		if (rows[i][2] == NULL)
			continue;			/* a name: checked by walking again */
		def = DefinitionByOid(rows[i][0], atooid(rows[i][2]));
		if (def == NULL)
			return psprintf("%s %s was dropped since run " INT64_FORMAT " was planned", rows[i][0], rows[i][1], runid);
		if (strcmp(def, rows[i][3]) != 0)
			return psprintf("%s %s changed since run " INT64_FORMAT " was planned", rows[i][0], rows[i][1], runid);
		def = CurrentName(rows[i][0], atooid(rows[i][2]), rows[i][1]);
		if (strcmp(def, rows[i][1]) != 0)
			return psprintf("%s %s was renamed to %s since run " INT64_FORMAT " was planned",
							rows[i][0], rows[i][1], def, runid);
	}

	json = PinnedNow(source, search_path, &error);
	if (json == NULL)
		return psprintf("the source of run " INT64_FORMAT " no longer resolves under search_path %s: %s",
						runid, search_path, error);
	now = BackfillJsonbRows(json, 4, fields, &m);
	for (uint64 i = 0; i < m; i++)
	{
		int			j = FindEntry(rows, n, now[i][0], now[i][1], now[i][2]);

		if (j < 0 && now[i][2] != NULL)
			return psprintf("names resolve differently under search_path %s since run " INT64_FORMAT
							" was planned: the source now reaches %s %s",
							search_path, runid, now[i][0], now[i][1]);
		if (j < 0 || strcmp(rows[j][3], now[i][3]) != 0)
			return psprintf("name %s resolves differently under search_path %s since run " INT64_FORMAT
							" was planned: it finds %s",
							now[i][1], search_path, runid, *now[i][3] ? now[i][3] : "no function");
	}
	return NULL;
}
