/*-------------------------------------------------------------------------
 *
 * src/validate.c
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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
#include "access/table.h"

#include "relation.h"
#include "spi_util.h"

/* Is there a unique index that alone proves the key columns attnums unique? */
static bool
KeyProvenByIndex(Oid relid, List *attnums)
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
		for (int i = 0; match && i < idx->indnkeyatts; i++)
			match = list_member_int(attnums, idx->indkey.values[i]);
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
static bool
CheckKeyTypes(Oid relid, List *names, List *attnums)
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

/* "t.a IS NULL OR t.b IS NULL" for the key columns. */
static char *
NullCondition(List *names)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, names)
		appendStringInfo(&buf, "%st.%s IS NULL", foreach_current_index(lc) > 0 ? " OR " : "",
						 quote_identifier((const char *) lfirst(lc)));
	return buf.data;
}

/* Run a read-only query built by us; it must succeed. */
static void
RunRead(const char *sql)
{
	int			rc = SPI_execute(sql, true, 0);

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
	const char *relname;
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

	relid = BackfillOpenRelArg(fcinfo, 0, "rel", BACKFILL_REL_READABLE, AccessShareLock);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("key must not be NULL"),
				 errhint("Name the columns that identify a row, e.g. ARRAY['order_id'].")));
	names = BackfillColumnList(PG_GETARG_ARRAYTYPE_P(1), "key");
	attnums = BackfillRelColumns(relid, names, "key");
	sortable = CheckKeyTypes(relid, names, attnums);
	if (!PG_ARGISNULL(2))
		scope = BackfillCheckExpr(TextDatumGetCString(PG_GETARG_DATUM(2)), "scope");

	relname = BackfillQualifiedName(relid);
	keylist = BackfillColumnListText(names);
	nullcond = NullCondition(names);
	proven = KeyProvenByIndex(relid, attnums);

	/* "t.a AS k1, t.b AS k2" and "FROM rel t WHERE (scope)" */
	initStringInfo(&cols);
	foreach(lc, names)
		appendStringInfo(&cols, "%st.%s AS k%d", foreach_current_index(lc) > 0 ? ", " : "",
						 quote_identifier((const char *) lfirst(lc)), foreach_current_index(lc) + 1);
	initStringInfo(&from);
	appendStringInfo(&from, " FROM %s t WHERE (\n%s\n)", relname, scope ? scope : "true");

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

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* analysis errors here are errors of the scope: the rest is ours */
	SPI_freeplan(BackfillPrepare(sql.data, 0, NULL, "scope"));
	RunRead(sql.data);
	{
		bool		isnull;

		rows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		nullrows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
		dupkeys = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	}

	if (dupkeys > 0 || nullrows > 0)
	{
		StringInfoData detail;
		int			nkeys = list_length(names);

		initStringInfo(&detail);
		if (dupkeys > 0)
		{
			resetStringInfo(&sql);
			appendStringInfo(&sql,
							 "SELECT d.* FROM (SELECT %s, pg_catalog.count(*) AS n%s AND NOT (%s)"
							 " GROUP BY %s HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 1) d"
							 " ORDER BY d.n DESC",
							 cols.data, from.data, nullcond, keylist);
			if (sortable)
				for (int i = 1; i <= nkeys; i++)
					appendStringInfo(&sql, ", d.k%d", i);
			appendStringInfoString(&sql, " LIMIT 5");
			RunRead(sql.data);

			appendStringInfo(&detail, INT64_FORMAT " key %s more than once, for example",
							 dupkeys, dupkeys == 1 ? "value appears" : "values appear");
			for (uint64 r = 0; r < SPI_processed; r++)
				appendStringInfo(&detail, "%s (%s)=%s %s times", r > 0 ? "," : "", keylist,
								 KeyValuesText(r, nkeys),
								 SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, nkeys + 1));
			appendStringInfoChar(&detail, '.');
		}
		if (nullrows > 0)
		{
			resetStringInfo(&sql);
			appendStringInfo(&sql, "SELECT %s%s AND (%s) LIMIT 3", cols.data, from.data, nullcond);
			RunRead(sql.data);

			appendStringInfo(&detail, "%s" INT64_FORMAT " %s a NULL in the key, for example",
							 dupkeys > 0 ? " " : "", nullrows, nullrows == 1 ? "row has" : "rows have");
			for (uint64 r = 0; r < SPI_processed; r++)
				appendStringInfo(&detail, "%s (%s)=%s", r > 0 ? "," : "", keylist,
								 KeyValuesText(r, nkeys));
			appendStringInfoChar(&detail, '.');
		}
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 dupkeys > 0
				 ? errmsg("key (%s) of table %s is not unique%s", keylist, relname,
						  scope ? " within the scope" : "")
				 : errmsg("key (%s) of table %s contains NULL%s", keylist, relname,
						  scope ? " within the scope" : ""),
				 errdetail_internal("%s", detail.data),
				 dupkeys > 0
				 ? errhint("Remove the duplicates or choose columns that identify one row: a merge on a key that is not unique combines rows that are different.")
				 : errhint("Fill the key columns or choose columns that are never NULL: a row whose key is NULL matches no row in a merge.")));
	}

	SPI_finish();
	PG_RETURN_INT64(rows);
}

/* The measures of one side, each cast to numeric, computed in one scan. */
static Datum *
ComputeMeasures(const char *query, const char *side, List *measures, bool **isnull)
{
	StringInfoData sql;
	StringInfoData what;
	SPIPlanPtr	plan;
	Query	   *q;
	ListCell   *lc;
	Datum	   *values;
	int			n = list_length(measures);
	int			rc;

	/* errors of the query itself first, so they name the right argument */
	SPI_freeplan(BackfillPrepare(query, 0, NULL, side));

	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	foreach(lc, measures)
		appendStringInfo(&sql, "%s(\n%s\n)::pg_catalog.numeric",
						 foreach_current_index(lc) > 0 ? ", " : "", (char *) lfirst(lc));
	appendStringInfo(&sql, " FROM (\n%s\n) AS backfill_rows", query);

	initStringInfo(&what);
	appendStringInfo(&what, "measures over %s", side);
	plan = BackfillPrepare(sql.data, 0, NULL, what.data);

	q = BackfillPlanQuery(plan);
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (!contain_aggs_of_level((Node *) tle->expr, 0) ||
			contain_window_function((Node *) tle->expr))
			ereport(ERROR,
					(errcode(ERRCODE_GROUPING_ERROR),
					 errmsg("measure \"%s\" is not an aggregate",
							(char *) list_nth(measures, foreach_current_index(lc))),
					 errhint("A measure summarizes all rows of a side, e.g. count(*) or sum(revenue).")));
	}

	rc = SPI_execute_plan(plan, NULL, NULL, true, 0);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "measures over %s returned %d rows", side, (int) SPI_processed);

	values = palloc(sizeof(Datum) * n);
	*isnull = palloc(sizeof(bool) * n);
	for (int i = 0; i < n; i++)
	{
		values[i] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &(*isnull)[i]);
		if (!(*isnull)[i])
			values[i] = SPI_datumTransfer(values[i], false, -1);
	}
	SPI_freeplan(plan);
	return values;
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
	Datum	   *tv;
	Datum	   *sv;
	bool	   *tnull;
	bool	   *snull;
	int			n;
	int			bad = 0;
	StringInfoData detail;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("measures must not be NULL"),
				 errhint("Pass aggregate expressions, e.g. ARRAY['count(*)', 'sum(revenue)'].")));
	{
		Datum	   *elems;
		bool	   *nulls;

		if (ARR_NDIM(PG_GETARG_ARRAYTYPE_P(2)) > 1)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("measures must be a one-dimensional array")));
		deconstruct_array(PG_GETARG_ARRAYTYPE_P(2), TEXTOID, -1, false, TYPALIGN_INT,
						  &elems, &nulls, &n);
		if (n == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("measures must hold at least one aggregate expression")));
		for (int i = 0; i < n; i++)
		{
			if (nulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("measures must not contain NULL"),
						 errdetail("Element %d of measures is NULL.", i + 1)));
			measures = lappend(measures,
							   BackfillCheckExpr(TextDatumGetCString(elems[i]), "measure"));
		}
	}
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

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	tv = ComputeMeasures(target, "target", measures, &tnull);
	sv = ComputeMeasures(source, "source", measures, &snull);
	SPI_finish();

	initStringInfo(&detail);
	for (int i = 0; i < n; i++)
	{
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		bool		ok;

		values[0] = CStringGetTextDatum((char *) list_nth(measures, i));
		values[1] = tv[i];
		nulls[1] = tnull[i];
		values[2] = sv[i];
		nulls[2] = snull[i];
		if (tnull[i] || snull[i])
		{
			nulls[3] = true;
			ok = tnull[i] && snull[i];
		}
		else
		{
			values[3] = DirectFunctionCall2(numeric_sub, tv[i], sv[i]);
			ok = DatumGetBool(DirectFunctionCall2(numeric_le,
												  DirectFunctionCall1(numeric_abs, values[3]),
												  tolerance));
		}
		values[4] = BoolGetDatum(ok);
		if (!ok)
		{
#define NUMTEXT(isnull, d) ((isnull) ? "NULL" : DatumGetCString(DirectFunctionCall1(numeric_out, (d))))
			appendStringInfo(&detail, "%s%s: target %s, source %s, difference %s",
							 bad > 0 ? "\n" : "", (char *) list_nth(measures, i),
							 NUMTEXT(tnull[i], tv[i]), NUMTEXT(snull[i], sv[i]),
							 NUMTEXT(nulls[3], values[3]));
			bad++;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	if (bad > 0 && raise)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("reconciliation failed: %d of %d %s between target and source",
						bad, n, n == 1 ? "measure differs" : "measures differ"),
				 errdetail_internal("%s", detail.data),
				 errhint("The tolerance is %s. Find the rows behind the difference with backfill_diff before publishing.",
						 DatumGetCString(DirectFunctionCall1(numeric_out, tolerance)))));

	return (Datum) 0;
}
