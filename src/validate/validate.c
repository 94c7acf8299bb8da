/*-------------------------------------------------------------------------
 *
 * src/validate/validate.c
 *		backfill_assert_unique and backfill_reconcile: checks that raise.
 *
 * Both are meant to fail a job: a dbt post-hook or a step of a run calls them
 * and an error stops the pipeline.  They only read, on the caller's snapshot,
 * and report what is wrong with counts and a few samples.
 *
 * backfill_assert_unique proves a key unique over a table (or the scope of
 * it a backfill touches) with one grouping scan.  It uses the key types'
 * equality, as a unique index or a MERGE would, so a key is unique here
 * exactly when it is safe to merge on.  A valid, immediate, non-partial
 * unique index on exactly the key columns already proves it; then only NULLs
 * are counted.
 *
 * backfill_reconcile computes every measure of one side in a single scan of
 * that side and compares the two sides within an absolute tolerance.
 *
 * Both scans are plain SQL aggregates, so parallel query applies where it is
 * allowed: assert_unique's runs through SPI_execute (parallel-OK), the
 * measures' plan is prepared with CURSOR_OPT_PARALLEL_OK.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_coerce.h"
#include "optimizer/clauses.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "common/jsonapi.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "validate/validate.h"

/*
 * Is there a unique index that alone proves the key columns attnums unique,
 * in the sense of the columns' own equality?  It must be valid, immediate,
 * without predicate or expressions, on exactly those columns, each with the
 * column's collation and an operator class whose equality is the type's.
 */
bool
BackfillKeyProvenByIndex(Oid relid, List *attnums)
{
	Relation	rel = table_open(relid, NoLock);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	bool		proven = false;

	foreach(lc, indexes)
	{
		HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));
		Form_pg_index idx;
		bool		match;

		if (!HeapTupleIsValid(tup))
			continue;
		idx = (Form_pg_index) GETSTRUCT(tup);
		match = idx->indisunique && idx->indisvalid && idx->indimmediate &&
			idx->indnkeyatts == list_length(attnums) &&
			heap_attisnull(tup, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(tup, Anum_pg_index_indexprs, NULL);
		if (match)
		{
			bool		isnull;
			oidvector  *indclass = (oidvector *) DatumGetPointer(
				SysCacheGetAttr(INDEXRELID, tup, Anum_pg_index_indclass, &isnull));
			oidvector  *indcoll = (oidvector *) DatumGetPointer(
				SysCacheGetAttr(INDEXRELID, tup, Anum_pg_index_indcollation, &isnull));

			for (int i = 0; match && i < idx->indnkeyatts; i++)
			{
				AttrNumber	attnum = idx->indkey.values[i];
				Form_pg_attribute att;
				Oid			eq;

				match = list_member_int(attnums, attnum);
				if (!match)
					break;
				att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
				eq = lookup_type_cache(att->atttypid, TYPECACHE_EQ_OPR)->eq_opr;
				match = indcoll->values[i] == att->attcollation &&
					OidIsValid(eq) &&
					get_opfamily_member(get_opclass_family(indclass->values[i]),
										att->atttypid, att->atttypid,
										BTEqualStrategyNumber) == eq;
			}
		}
		ReleaseSysCache(tup);
		if (match)
		{
			proven = true;
			break;
		}
	}
	list_free(indexes);
	table_close(rel, NoLock);
	return proven;
}

/* Check that every key column has an equality operator; return whether all sort. */
bool
BackfillCheckKeyTypes(Oid relid, List *names, List *attnums)
{
	bool		sortable = true;

	for (int i = 0; i < list_length(attnums); i++)
	{
		Oid			typid = get_atttype(relid, list_nth_int(attnums, i));
		TypeCacheEntry *tc = lookup_type_cache(typid, TYPECACHE_EQ_OPR | TYPECACHE_LT_OPR);

		if (!OidIsValid(tc->eq_opr))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("key column \"%s\" is of type %s, which has no equality operator",
							(char *) list_nth(names, i), format_type_be(typid)),
					 errhint("A key must be comparable for equality; cast it in a query, or use other columns.")));
		if (!OidIsValid(tc->lt_opr))
			sortable = false;
	}
	return sortable;
}

/* "r.a IS NULL OR r.b IS NULL" for the key columns, r the relation's name. */
static char *
NullCondition(const char *qual, List *names)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, names)
		appendStringInfo(&buf, "%s%s.%s IS NULL", foreach_current_index(lc) > 0 ? " OR " : "",
						 qual, quote_identifier((const char *) lfirst(lc)));
	return buf.data;
}

/* Run a query built by us that only reads; it must succeed. */
static void
RunRead(const char *sql, bool read_only)
{
	int			rc = SPI_execute(sql, read_only, 0);

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute returned %s for: %s", SPI_result_code_string(rc), sql);
}

/* The first ncols columns of SPI result row i as "(v1, v2)". */
static char *
KeyValuesText(int row, int ncols)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '(');
	for (int c = 1; c <= ncols; c++)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, c);

		appendStringInfo(&buf, "%s%s", c > 1 ? ", " : "", v ? v : "NULL");
	}
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/*
 * Raise the unique violation found by BackfillAssertUnique: how many key
 * values appear more than once and how many rows have a NULL in the key, with
 * examples of each read again (sql is a buffer to build their queries in).
 */
static void
ReportKeyViolation(List *names, const char *relname, const char *scope, bool read_only,
				   StringInfo sql, const char *cols, const char *from, const char *keylist,
				   const char *nullcond, bool sortable, int64 dupkeys, int64 nullrows)
{
	StringInfoData detail;
	int			nkeys = list_length(names);
	char	   *example = "";	/* the first offending key, for the message */

	initStringInfo(&detail);
	if (dupkeys > 0)
	{
		resetStringInfo(sql);
		appendStringInfo(sql,
						 "SELECT d.* FROM (SELECT %s, pg_catalog.count(*) AS n%s AND NOT (%s)"
						 " GROUP BY %s HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 1) d"
						 " ORDER BY d.n DESC",
						 cols, from, nullcond, keylist);
		if (sortable)
			for (int i = 1; i <= nkeys; i++)
				appendStringInfo(sql, ", d.k%d", i);
		appendStringInfoString(sql, " LIMIT 5");
		RunRead(sql->data, read_only);

		appendStringInfo(&detail, INT64_FORMAT " key %s more than once, for example",
						 dupkeys, dupkeys == 1 ? "value appears" : "values appear");
		if (SPI_processed > 0)
			example = psprintf(": (%s)=%s appears %s times", keylist, KeyValuesText(0, nkeys),
							   SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, nkeys + 1));
		for (uint64 r = 0; r < SPI_processed; r++)
			appendStringInfo(&detail, "%s (%s)=%s %s times", r > 0 ? "," : "", keylist,
							 KeyValuesText(r, nkeys),
							 SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, nkeys + 1));
		appendStringInfoChar(&detail, '.');
	}
	if (nullrows > 0)
	{
		resetStringInfo(sql);
		appendStringInfo(sql, "SELECT %s%s AND (%s) LIMIT 3", cols, from, nullcond);
		RunRead(sql->data, read_only);

		appendStringInfo(&detail, "%s" INT64_FORMAT " %s a NULL in the key, for example",
						 dupkeys > 0 ? " " : "", nullrows, nullrows == 1 ? "row has" : "rows have");
		if (dupkeys == 0 && SPI_processed > 0)
			example = psprintf(": (%s)=%s", keylist, KeyValuesText(0, nkeys));
		for (uint64 r = 0; r < SPI_processed; r++)
			appendStringInfo(&detail, "%s (%s)=%s", r > 0 ? "," : "", keylist,
							 KeyValuesText(r, nkeys));
		appendStringInfoChar(&detail, '.');
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 dupkeys > 0
			 ? (scope ? errmsg("key (%s) of table %s is not unique within the scope%s", keylist, relname, example)
				: errmsg("key (%s) of table %s is not unique%s", keylist, relname, example))
			 : (scope ? errmsg("key (%s) of table %s contains NULL within the scope%s", keylist, relname, example)
				: errmsg("key (%s) of table %s contains NULL%s", keylist, relname, example)),
			 errdetail_internal("%s", detail.data),
			 dupkeys > 0
			 ? errhint("Remove the duplicates or choose columns that identify one row: a merge on a key that is not unique combines rows that are different.")
			 : errhint("Fill the key columns or choose columns that are never NULL: a row whose key is NULL matches no row in a merge.")));
}

/* Whether every column of attnums (of relid) is proven NOT NULL. */
static bool
KeyNotNullProven(Oid relid, List *attnums)
{
	bool		notnull = true;
	ListCell   *lc;

	foreach(lc, attnums)
	{
		HeapTuple	tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid),
										  Int16GetDatum((int16) lfirst_int(lc)));

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for attribute %d of %u", lfirst_int(lc), relid);
		notnull &= BackfillAttNotNullProven(relid, (AttrNumber) lfirst_int(lc),
											((Form_pg_attribute) GETSTRUCT(tup))->attnotnull);
		ReleaseSysCache(tup);
	}
	return notnull;
}

/*
 * Prove the key columns names (attribute numbers attnums) of relid unique
 * and not NULL over the rows where scope holds (NULL: all rows); raise 23505
 * with counts and samples otherwise.  Returns the rows checked, or -1 when
 * !count_rows and a unique index on NOT NULL columns proves it without a
 * scan.  Must be called inside SPI; reads with a fresh snapshot unless
 * read_only.
 */
int64
BackfillAssertUnique(Oid relid, List *names, List *attnums, const char *scope, bool read_only,
					 bool count_rows)
{
	const char *relname;
	const char *qual;
	char	   *keylist;
	char	   *nullcond;
	StringInfoData cols;
	StringInfoData from;
	StringInfoData sql;
	bool		sortable;
	bool		proven;
	int64		rows;
	int64		nullrows;
	int64		dupkeys;
	ListCell   *lc;

	sortable = BackfillCheckKeyTypes(relid, names, attnums);

	/*
	 * The relation is not aliased, so a scope may name it as the caller
	 * would (orders.day); columns are qualified with its bare name.
	 */
	relname = BackfillQualifiedName(relid);
	qual = quote_identifier(get_rel_name(relid));
	keylist = BackfillColumnListText(names);
	nullcond = NullCondition(qual, names);
	proven = BackfillKeyProvenByIndex(relid, attnums);
	if (proven && !count_rows && KeyNotNullProven(relid, attnums))
		return -1;

	/* "r.a AS k1, r.b AS k2" and "FROM [ONLY] s.r WHERE ((scope))" */
	initStringInfo(&cols);
	foreach(lc, names)
		appendStringInfo(&cols, "%s%s.%s AS k%d", foreach_current_index(lc) > 0 ? ", " : "",
						 qual, quote_identifier((const char *) lfirst(lc)), foreach_current_index(lc) + 1);
	initStringInfo(&from);
	appendStringInfo(&from, " FROM %s%s WHERE ((\n%s\n))",
					 get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE ? "" : "ONLY ",
					 relname, scope ? scope : "true");

	initStringInfo(&sql);
	if (proven)
		appendStringInfo(&sql,
						 "SELECT pg_catalog.count(*), pg_catalog.count(*) FILTER (WHERE %s), 0::pg_catalog.int8%s",
						 nullcond, from.data);
	else
		appendStringInfo(&sql,
						 "SELECT COALESCE(pg_catalog.sum(g.n), 0)::pg_catalog.int8,"
						 " COALESCE(pg_catalog.sum(g.n) FILTER (WHERE g.hasnull), 0)::pg_catalog.int8,"
						 " pg_catalog.count(*) FILTER (WHERE g.n OPERATOR(pg_catalog.>) 1 AND NOT g.hasnull)"
						 " FROM (SELECT pg_catalog.count(*) AS n, (%s) AS hasnull, %s%s GROUP BY %s) g",
						 nullcond, cols.data, from.data, keylist);

	/* analysis errors here are errors of the scope: the rest is ours */
	SPI_freeplan(BackfillPrepare(sql.data, 0, NULL, "scope"));
	RunRead(sql.data, read_only);
	{
		bool		isnull;

		rows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		nullrows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
		dupkeys = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	}

	if (dupkeys > 0 || nullrows > 0)
		ReportKeyViolation(names, relname, scope, read_only, &sql, cols.data, from.data, keylist,
						   nullcond, sortable, dupkeys, nullrows);

	return rows;
}

PG_FUNCTION_INFO_V1(backfill_assert_unique);

/*
 * backfill_assert_unique(rel regclass, key text[], scope text DEFAULT NULL)
 *		RETURNS bigint
 */
Datum
backfill_assert_unique(PG_FUNCTION_ARGS)
{
	Oid			relid;
	List	   *names;
	List	   *attnums;
	const char *scope = NULL;
	int64		rows;

	BackfillCheckVersion();
	relid = BackfillOpenRelArg(fcinfo, 0, "rel", BACKFILL_REL_READABLE, AccessShareLock);
	names = BackfillKeyArg(fcinfo, 1);
	attnums = BackfillRelColumns(relid, names, "key");
	if (!PG_ARGISNULL(2))
		scope = BackfillCheckExpr(TextDatumGetCString(PG_GETARG_DATUM(2)), "scope");

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rows = BackfillAssertUnique(relid, names, attnums, scope, true, true);
	SPI_finish();
	PG_RETURN_INT64(rows);
}

/* A value of one of the number types, as numeric. */
static Datum
ToNumeric(Datum value, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DirectFunctionCall1(int2_numeric, value);
		case INT4OID:
			return DirectFunctionCall1(int4_numeric, value);
		case INT8OID:
			return DirectFunctionCall1(int8_numeric, value);
		case FLOAT4OID:
			return DirectFunctionCall1(float4_numeric, value);
		case FLOAT8OID:
			return DirectFunctionCall1(float8_numeric, value);
		case NUMERICOID:
			return value;
		default:
			elog(ERROR, "unexpected measure type %u", type);
	}
	pg_unreachable();
}

/*
 * Check one measure over one side on its own, so an error names it: an
 * aggregate, not a set, of a number type.  Returns that type.
 */
static Oid
CheckMeasure(const char *query, const char *side, const char *measure)
{
	StringInfoData sql;
	char	   *what = psprintf("measure \"%s\" over %s", measure, side);
	SPIPlanPtr	plan;
	TargetEntry *tle;
	Oid			type;

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT ((\n%s\n)) FROM (\n%s\n) AS backfill_rows", measure, query);
	plan = BackfillPrepare(sql.data, 0, NULL, what);
	tle = linitial_node(TargetEntry, BackfillPlanQuery(plan)->targetList);

	if (!contain_aggs_of_level((Node *) tle->expr, 0) ||
		contain_window_function((Node *) tle->expr) ||
		expression_returns_set((Node *) tle->expr))
		ereport(ERROR,
				(errcode(ERRCODE_GROUPING_ERROR),
				 errmsg("measure \"%s\" is not an aggregate", measure),
				 errhint("A measure summarizes all rows of a side in one value, e.g. count(*) or sum(revenue).")));

	type = getBaseType(exprType((Node *) tle->expr));
	if (type != INT2OID && type != INT4OID && type != INT8OID &&
		type != FLOAT4OID && type != FLOAT8OID && type != NUMERICOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("measure \"%s\" returns %s, not a number", measure, format_type_be(type)),
				 errhint("A measure must return smallint, integer, bigint, real, double precision or numeric.")));
	SPI_freeplan(plan);
	return type;
}

/*
 * The measures of one side computed in one scan, as numeric values in the
 * caller's memory (outside SPI).
 */
static Datum *
ComputeMeasures(const char *query, const char *side, List *measures, bool **isnull)
{
	StringInfoData sql;
	SPIPlanPtr	plan;
	ListCell   *lc;
	Datum	   *values;
	Oid		   *types;
	int			n = list_length(measures);
	int			rc;

	/* errors of the query itself first, so they name the right argument */
	plan = BackfillPrepare(query, 0, NULL, side);
	BackfillCheckReadOnly(plan, side);
	SPI_freeplan(plan);

	types = palloc(sizeof(Oid) * n);
	foreach(lc, measures)
		types[foreach_current_index(lc)] = CheckMeasure(query, side, (char *) lfirst(lc));

	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	foreach(lc, measures)
		appendStringInfo(&sql, "%s((\n%s\n))", foreach_current_index(lc) > 0 ? ", " : "",
						 (char *) lfirst(lc));
	appendStringInfo(&sql, " FROM (\n%s\n) AS backfill_rows", query);
	/* one scan for all measures, in parallel where the planner chooses */
	plan = BackfillPrepareCursor(sql.data, 0, NULL, psprintf("measures over %s", side),
								 CURSOR_OPT_PARALLEL_OK);

	rc = SPI_execute_plan(plan, NULL, NULL, true, 0);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "measures over %s returned %d rows", side, (int) SPI_processed);

	values = SPI_palloc(sizeof(Datum) * n);
	*isnull = SPI_palloc(sizeof(bool) * n);
	for (int i = 0; i < n; i++)
	{
		Datum		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1,
									  &(*isnull)[i]);

		if (SPI_gettypeid(SPI_tuptable->tupdesc, i + 1) != types[i] &&
			getBaseType(SPI_gettypeid(SPI_tuptable->tupdesc, i + 1)) != types[i])
			elog(ERROR, "measure %d changed type", i + 1);
		values[i] = (*isnull)[i] ? (Datum) 0
			: SPI_datumTransfer(ToNumeric(v, types[i]), false, -1);
	}
	SPI_freeplan(plan);
	return values;
}

/*
 * The measures argument (argument argno): a one-dimensional array of at
 * least one aggregate expression, none NULL, each checked as an expression.
 */
static List *
MeasuresArg(FunctionCallInfo fcinfo, int argno)
{
	List	   *measures = NIL;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("measures must not be NULL"),
				 errhint("Pass aggregate expressions, e.g. ARRAY['count(*)', 'sum(revenue)'].")));
	if (ARR_NDIM(PG_GETARG_ARRAYTYPE_P(argno)) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("measures must be a one-dimensional array")));
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(argno), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("measures must hold at least one aggregate expression")));
	BackfillCheckArrayLength(n, MaxTupleAttributeNumber, "measures", "expressions");
	for (int i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("measures must not contain NULL"),
					 errdetail("Element %d of measures is NULL.", i + 1)));
		measures = lappend(measures,
						   BackfillCheckExpr(TextDatumGetCString(elems[i]),
											 psprintf("measures[%d]", i + 1)));
	}
	return measures;
}

/* A measure's value as text, "NULL" for none. */
static char *
NumericText(bool isnull, Datum d)
{
	return isnull ? "NULL" : DatumGetCString(DirectFunctionCall1(numeric_out, d));
}

/*
 * Compute the measures over target and source (queries checked by the
 * caller) and compare them within tolerance (numeric, zero or more): one
 * BackfillMeasure per measure, in the caller's memory, into *out.  Returns
 * how many differ.  Reads on fresh snapshots, as the caller, in an SPI
 * connection of its own.
 */
int
BackfillReconcile(const char *target, const char *source, List *measures, Datum tolerance,
				  BackfillMeasure **out)
{
	int			n = list_length(measures);
	BackfillMeasure *m = palloc0(sizeof(BackfillMeasure) * n);
	Datum	   *tv;
	Datum	   *sv;
	bool	   *tnull;
	bool	   *snull;
	int			bad = 0;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	tv = ComputeMeasures(target, "target", measures, &tnull);
	sv = ComputeMeasures(source, "source", measures, &snull);
	SPI_finish();

	for (int i = 0; i < n; i++)
	{
		m[i].measure = (char *) list_nth(measures, i);
		m[i].target = tv[i];
		m[i].target_null = tnull[i];
		m[i].source = sv[i];
		m[i].source_null = snull[i];
		if (tnull[i] || snull[i])
		{
			m[i].difference_null = true;
			m[i].ok = tnull[i] && snull[i];
		}
		else
		{
			m[i].difference = DirectFunctionCall2(numeric_sub, tv[i], sv[i]);
			/* equal infinities or NaNs are equal, though their difference is NaN */
			m[i].ok = DatumGetBool(DirectFunctionCall2(numeric_eq, tv[i], sv[i])) ||
				DatumGetBool(DirectFunctionCall2(numeric_le,
												 DirectFunctionCall1(numeric_abs, m[i].difference),
												 tolerance));
		}
		if (!m[i].ok)
			bad++;
	}
	*out = m;
	return bad;
}

/* A measure's value in JSON, as to_jsonb writes a numeric: a number, or a string ("NaN"). */
static void
AppendJsonNumeric(StringInfo buf, bool isnull, Datum d)
{
	char	   *text = NumericText(isnull, d);

	if (isnull)
		appendStringInfoString(buf, "null");
	else if (IsValidJsonNumber(text, strlen(text)))
		appendStringInfoString(buf, text);
	else
		escape_json(buf, text);
}

/*
 * The comparison as jsonb text: an array of {measure, target_value,
 * source_value, difference, ok}, one per measure, as backfill_reconcile's
 * rows would be aggregated with jsonb_agg.
 */
char *
BackfillMeasuresJson(const BackfillMeasure *m, int n)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (int i = 0; i < n; i++)
	{
		appendStringInfoString(&buf, i > 0 ? ", {\"measure\": " : "{\"measure\": ");
		escape_json(&buf, m[i].measure);
		appendStringInfoString(&buf, ", \"target_value\": ");
		AppendJsonNumeric(&buf, m[i].target_null, m[i].target);
		appendStringInfoString(&buf, ", \"source_value\": ");
		AppendJsonNumeric(&buf, m[i].source_null, m[i].source);
		appendStringInfoString(&buf, ", \"difference\": ");
		AppendJsonNumeric(&buf, m[i].difference_null, m[i].difference);
		appendStringInfo(&buf, ", \"ok\": %s}", m[i].ok ? "true" : "false");
	}
	appendStringInfoChar(&buf, ']');
	/* in jsonb's own order and spacing */
	return DatumGetCString(DirectFunctionCall1(jsonb_out, DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data))));
}

/* The first measure that differs, in words ("sum(x) is 3 written, 4 in the source"), or NULL. */
char *
BackfillFirstDifference(const BackfillMeasure *m, int n, const char *target_side,
						const char *source_side)
{
	for (int i = 0; i < n; i++)
		if (!m[i].ok)
			return psprintf("%s is %s %s, %s %s", m[i].measure,
							NumericText(m[i].target_null, m[i].target), target_side,
							NumericText(m[i].source_null, m[i].source), source_side);
	return NULL;
}

PG_FUNCTION_INFO_V1(backfill_reconcile);

/*
 * backfill_reconcile(target text, source text, measures text[],
 *					  tolerance numeric DEFAULT 0, raise boolean DEFAULT true)
 *		RETURNS TABLE(measure text, target_value numeric, source_value numeric,
 *					  difference numeric, ok boolean)
 */
Datum
backfill_reconcile(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *target = BackfillCheckQuery(BackfillArgText(fcinfo, 0, "target"), "target");
	const char *source = BackfillCheckQuery(BackfillArgText(fcinfo, 1, "source"), "source");
	List	   *measures = NIL;
	Datum		tolerance;
	bool		raise;
	BackfillMeasure *m;
	int			n;
	int			bad;
	StringInfoData detail;

	BackfillCheckVersion();
	measures = MeasuresArg(fcinfo, 2);
	n = list_length(measures);
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tolerance must not be NULL"),
				 errhint("Pass 0 to require equal values.")));
	tolerance = PG_GETARG_DATUM(3);
	if (DatumGetBool(DirectFunctionCall2(numeric_lt, tolerance,
										 DirectFunctionCall1(int4_numeric, Int32GetDatum(0)))) ||
		numeric_is_nan(DatumGetNumeric(tolerance)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tolerance must be zero or positive, not %s",
						DatumGetCString(DirectFunctionCall1(numeric_out, tolerance)))));
	if (PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("raise must not be NULL")));
	raise = PG_GETARG_BOOL(4);

	InitMaterializedSRF(fcinfo, 0);
	bad = BackfillReconcile(target, source, measures, tolerance, &m);

	initStringInfo(&detail);
	for (int i = 0; i < n; i++)
	{
		Datum		values[5];
		bool		nulls[5];

		values[0] = CStringGetTextDatum(m[i].measure);
		nulls[0] = false;
		values[1] = m[i].target;
		nulls[1] = m[i].target_null;
		values[2] = m[i].source;
		nulls[2] = m[i].source_null;
		values[3] = m[i].difference;
		nulls[3] = m[i].difference_null;
		values[4] = BoolGetDatum(m[i].ok);
		nulls[4] = false;
		if (!m[i].ok)
			appendStringInfo(&detail, "%s%s: target %s, source %s, difference %s",
							 detail.len > 0 ? "\n" : "", m[i].measure,
							 NumericText(m[i].target_null, m[i].target),
							 NumericText(m[i].source_null, m[i].source),
							 NumericText(m[i].difference_null, m[i].difference));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	if (bad > 0 && raise)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("reconciliation failed: %s (%d of %d %s)",
						BackfillFirstDifference(m, n, "in target", "in source"),
						bad, n, n == 1 ? "measure differs" : "measures differ"),
				 errdetail_internal("%s", detail.data),
				 errhint("The tolerance is %s. Find the rows behind the difference with backfill_diff before publishing.",
						 DatumGetCString(DirectFunctionCall1(numeric_out, tolerance)))));

	return (Datum) 0;
}
