/*-------------------------------------------------------------------------
 *
 * src/hash/citus_fingerprint.c
 *		Fingerprints of Citus distributed tables, computed shard by shard on
 *		the workers and added on the coordinator.
 *
 * A fingerprint is a row count and two wrapping 64-bit sums over the rows
 * (fingerprint.c), so the fingerprint of a table is the sum of its shards'.
 * Citus does not push a custom aggregate with an internal state down to the
 * shards (it gathers every row on the coordinator instead), but it does push
 * down count() and sum(bigint) as partial aggregates.  So each row is hashed
 * on its worker by backfill_fingerprint_row(rel, c1, c2, ...), as
 * BackfillHashRow would hash it (rel's column names, the columns' types),
 * the workers sum the hashes and their second-lane terms
 * (backfill_fingerprint_lane2) per shard, and the coordinator
 * adds the shards' sums, exact, and reduces them modulo 2^64: the same fingerprint
 * as the same rows in a local table, for the cost of a count(*).
 *
 * rel is passed as its qualified name, which each worker looks up once per
 * shard query: an OID would mean another relation there, and Citus sends a
 * regclass constant as the shard's own name.
 *
 * Row hashes are keyed (rowhash.c), so the workers must hash under the
 * coordinator's key: backfill_share_key() copies it to them, and the shards
 * are read on the workers only while every worker's key check value is the
 * coordinator's.  And a row's hash must not be readable by whoever may
 * fingerprint (with enough of them, two sets of rows with equal sums can be
 * searched for): backfill_fingerprint_row, which returns one, is executable
 * only by its owner and the roles granted it.  For anyone else, or while the
 * keys differ, the rows are fingerprinted on the coordinator, as a local
 * table's would be: the same fingerprint, read through the coordinator.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/typcache.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "hash/citus_fingerprint.h"
#include "hash/rowhash.h"
#include "hash/siphash.h"

/*
 * What backfill_fingerprint_row and backfill_diff_hash keep across the rows
 * of one query: a hasher of the values after their first argument.
 */
typedef struct ArgsHasher
{
	char	   *relname;		/* backfill_fingerprint_row: rel, as given */
	int			ncols;
	BackfillRowHasher *hasher;
	Datum	   *values;
	bool	   *isnull;
} ArgsHasher;

/*
 * The first argument (argname) given, and the values after it one by one:
 * a VARIADIC array would be hashed as one value.
 */
static void
CheckArgs(FunctionCallInfo fcinfo, const char *fn, const char *argname, const char *what)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", argname)));
	if (unlikely(fcinfo->flinfo->fn_extra == NULL) && get_fn_expr_variadic(fcinfo->flinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s takes the %s one by one, not as a VARIADIC array", fn, what)));
}

/* Give cache its hasher of rows of desc, and keep it for the next calls.  In fn_mcxt. */
static ArgsHasher *
ArgsHasherKeep(FunctionCallInfo fcinfo, ArgsHasher *cache, TupleDesc desc)
{
	cache->hasher = BackfillRowHasherCreate(desc, cache->ncols, NULL);
	cache->values = palloc(sizeof(Datum) * cache->ncols);
	cache->isnull = palloc(sizeof(bool) * cache->ncols);
	fcinfo->flinfo->fn_extra = cache;
	return cache;
}

/* The hash of the arguments after the first. */
static uint64
HashArgs(FunctionCallInfo fcinfo, ArgsHasher *cache)
{
	for (int i = 0; i < cache->ncols; i++)
	{
		cache->values[i] = fcinfo->args[i + 1].value;
		cache->isnull[i] = fcinfo->args[i + 1].isnull;
	}
	return BackfillHashValues(cache->hasher, cache->values, cache->isnull);
}

/* The arguments do not match rel's columns. */
static void
LanesMismatch(Oid relid)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("backfill_fingerprint_row needs every column of %s, in order",
					BackfillQualifiedName(relid)),
			 errhint("Call backfill_fingerprint instead.")));
}

/*
 * The hasher of rows of relname given as the arguments after it, as
 * BackfillHashRow hashes SELECT *.  The name is looked up here, once per
 * query on each shard, not once per row as a cast to regclass would be.
 */
static ArgsHasher *
LanesSetup(FunctionCallInfo fcinfo, const char *relname)
{
	MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	ArgsHasher *cache = palloc0(sizeof(ArgsHasher));
	/*
	 * No lock: on a worker this is the shell of a table whose shard the query
	 * reads (and locks); a lock on the shell, held to the end of the
	 * transaction, would make the swap's propagated LOCK TABLE wait for
	 * another backend of its own distributed transaction.
	 */
	Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(relname)),
										 NoLock, false);
	Oid			reltype = get_rel_type_id(relid);
	TupleDesc	reldesc;
	TupleDesc	desc;
	int			n = 0;

	if (!OidIsValid(reltype))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	cache->relname = pstrdup(relname);
	cache->ncols = PG_NARGS() - 1;
	desc = CreateTemplateTupleDesc(Max(cache->ncols, 1));
	reldesc = lookup_rowtype_tupdesc(reltype, -1);
	for (int i = 0; i < reldesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(reldesc, i);

		if (att->attisdropped)
			continue;
		if (n >= cache->ncols || get_fn_expr_argtype(fcinfo->flinfo, n + 1) != att->atttypid)
			LanesMismatch(relid);
		TupleDescInitEntry(desc, n + 1, NameStr(att->attname), att->atttypid, att->atttypmod, 0);
		n++;
	}
	ReleaseTupleDesc(reldesc);
	if (n != cache->ncols || n == 0)
		LanesMismatch(relid);
	cache = ArgsHasherKeep(fcinfo, cache, desc);
	MemoryContextSwitchTo(old);
	return cache;
}

PG_FUNCTION_INFO_V1(backfill_fingerprint_row);

/*
 * backfill_fingerprint_row(rel text, VARIADIC "any") RETURNS bigint: one
 * row's hash, the term of a fingerprint's first sum, as a signed 64-bit
 * integer.  rel is the table's qualified name: each worker looks it up.
 */
Datum
backfill_fingerprint_row(PG_FUNCTION_ARGS)
{
	ArgsHasher *cache = (ArgsHasher *) fcinfo->flinfo->fn_extra;
	text	   *rel;

	BackfillCheckVersion();
	CheckArgs(fcinfo, "backfill_fingerprint_row", "rel", "columns");
	rel = PG_GETARG_TEXT_PP(0);
	if (unlikely(cache == NULL || strlen(cache->relname) != VARSIZE_ANY_EXHDR(rel) ||
				 memcmp(cache->relname, VARDATA_ANY(rel), VARSIZE_ANY_EXHDR(rel)) != 0))
		cache = LanesSetup(fcinfo, text_to_cstring(rel));
	PG_RETURN_INT64((int64) HashArgs(fcinfo, cache));
}

/* The hasher of the values after the seed, by their argument types, named c1, c2, ... */
static ArgsHasher *
DiffHashSetup(FunctionCallInfo fcinfo)
{
	MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	ArgsHasher *cache = palloc0(sizeof(ArgsHasher));
	TupleDesc	desc;

	cache->ncols = PG_NARGS() - 1;
	if (cache->ncols < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("backfill_diff_hash needs at least one value after the seed")));
	desc = CreateTemplateTupleDesc(cache->ncols);
	for (int i = 0; i < cache->ncols; i++)
		TupleDescInitEntry(desc, i + 1, psprintf("c%d", i + 1),
						   get_fn_expr_argtype(fcinfo->flinfo, i + 1), -1, 0);
	cache = ArgsHasherKeep(fcinfo, cache, desc);
	MemoryContextSwitchTo(old);
	return cache;
}

PG_FUNCTION_INFO_V1(backfill_diff_hash);

/*
 * backfill_diff_hash(seed bigint, VARIADIC "any") RETURNS bigint: the hash
 * of the values given, in that order, by representation (rowhash.c), under
 * seed: what a per-shard backfill_diff joins keys and compares rows by.
 */
Datum
backfill_diff_hash(PG_FUNCTION_ARGS)
{
	ArgsHasher *cache = (ArgsHasher *) fcinfo->flinfo->fn_extra;

	BackfillCheckVersion();
	CheckArgs(fcinfo, "backfill_diff_hash", "seed", "values");
	if (unlikely(cache == NULL))
		cache = DiffHashSetup(fcinfo);
	BackfillRowHasherSetSeed(cache->hasher, (uint64) PG_GETARG_INT64(0));
	PG_RETURN_INT64((int64) HashArgs(fcinfo, cache));
}

PG_FUNCTION_INFO_V1(backfill_fingerprint_lane2);

/* backfill_fingerprint_lane2(h bigint) RETURNS bigint: a row hash's term of the second sum */
Datum
backfill_fingerprint_lane2(PG_FUNCTION_ARGS)
{
	BackfillCheckVersion();

	PG_RETURN_INT64((int64) BackfillFingerprintLane2((uint64) PG_GETARG_INT64(0)));
}

/*
 * The query fingerprinting relid per shard: the count and the two exact sums
 * (numeric, as text).  NULL when the extension's schema is not usable by the
 * current role, or rel has no column or more than a function takes after rel.
 */
static char *
PerShardQuery(Oid relid, const char *scope)
{
	Oid			nsp = BackfillInstalledSchema();
	const char *qnsp;
	char	   *cols;
	int			ncols;
	StringInfoData sql;

	if (!OidIsValid(nsp) || BackfillSchemaAclCheck(nsp, GetUserId(), ACL_USAGE) != ACLCHECK_OK)
		return NULL;
	cols = BackfillRelColumnArgs(relid, &ncols);
	if (ncols == 0 || ncols > FUNC_MAX_ARGS - 1)
		return NULL;

	qnsp = quote_identifier(get_namespace_name(nsp));
	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "SELECT pg_catalog.count(*), pg_catalog.sum(h)::pg_catalog.text, pg_catalog.sum(%s.backfill_fingerprint_lane2(h))::pg_catalog.text"
					 " FROM (SELECT %s.backfill_fingerprint_row(%s%s) AS h FROM %s",
					 qnsp, qnsp, quote_literal_cstr(BackfillQualifiedName(relid)), cols,
					 BackfillQualifiedName(relid));
	if (scope != NULL)
		appendStringInfo(&sql, " WHERE ((\n%s\n))", scope);
	appendStringInfoString(&sql, ") s");
	return sql.data;
}

/* An exact integer sum (decimal text, NULL for none) modulo 2^64, as the wrapping sums are. */
static uint64
WrappedSum(const char *text)
{
	uint64		v = 0;
	bool		negative = text != NULL && text[0] == '-';

	if (text == NULL)
		return 0;
	for (const char *p = text + (negative ? 1 : 0); *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64) (*p - '0');
	return negative ? (uint64) 0 - v : v;
}

/* The extension's schema, quoted, for SQL run on the workers. */
char *
BackfillCitusQuotedSchema(void)
{
	return pstrdup(quote_identifier(get_namespace_name(BackfillInstalledSchema())));
}

/*
 * Whether the current role may have rows hashed on the workers by fn (the
 * extension's function, with its argument types): it may execute fn on the
 * coordinator and on every worker (a GRANT made on the coordinator alone
 * does not reach them), and every worker hashes under the coordinator's
 * key.  Inside SPI.
 */
bool
BackfillCitusShardsMayHash(const char *fn)
{
	char	   *nsp = BackfillCitusQuotedSchema();
	char	   *qualified = psprintf("%s.%s", nsp, fn);
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	bool		isnull;

	if (!DatumGetBool(DirectFunctionCall2(has_function_privilege_name,
										  CStringGetTextDatum(qualified), CStringGetTextDatum("EXECUTE"))))
		return false;
	args[0] = CStringGetTextDatum(psprintf("%s true", BackfillKeyCheck()));
	args[1] = CStringGetTextDatum(psprintf("SELECT %s.backfill_key_check() OPERATOR(pg_catalog.||) ' '"
										   " OPERATOR(pg_catalog.||) pg_catalog.has_function_privilege(%s, 'EXECUTE')",
										   nsp, quote_literal_cstr(qualified)));
	if (SPI_execute_with_args("SELECT pg_catalog.bool_and(success AND result OPERATOR(pg_catalog.=) $1)"
							  " FROM pg_catalog.run_command_on_workers($2)",
							  2, argtypes, args, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		return false;
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) && !isnull;
}

/*
 * If relid is a Citus distributed table, set *fp to the fingerprint of its
 * rows in scope, computed per shard, and return true; else return false
 * (and the caller fingerprints it as a local table).  Inside SPI.
 */
bool
BackfillCitusFingerprint(Oid relid, const char *scope, bool read_only, BackfillFingerprint *fp)
{
	char	   *sql;
	SPIPlanPtr	plan;
	bool		isnull;

	if (!BackfillCitusDistributed(relid) ||
		!BackfillCitusShardsMayHash("backfill_fingerprint_row(pg_catalog.text, \"any\")") ||
		(sql = PerShardQuery(relid, scope)) == NULL)
		return false;
	plan = BackfillPrepare(sql, 0, NULL, scope ? "scope" : "rel");
	if (SPI_execute_plan(plan, NULL, NULL, read_only, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not fingerprint %s", BackfillQualifiedName(relid));
	fp->rows = (uint64) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	fp->sum1 = WrappedSum(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2));
	fp->sum2 = WrappedSum(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3));
	SPI_freeplan(plan);
	return true;
}

PG_FUNCTION_INFO_V1(backfill_key_check);

/* backfill_key_check() RETURNS text: the check value of this database's keys */
Datum
backfill_key_check(PG_FUNCTION_ARGS)
{
	BackfillCheckVersion();

	PG_RETURN_TEXT_P(cstring_to_text(BackfillKeyCheck()));
}

PG_FUNCTION_INFO_V1(backfill_share_key);

/*
 * backfill_share_key() RETURNS integer: give every Citus worker the
 * coordinator's key (its oldest row of backfill_key_data, in place of the
 * workers' own), so that rows are hashed on the workers as on the
 * coordinator; the number of workers that took it.  Superuser only: the key
 * travels in the command sent to the workers.
 */
Datum
backfill_share_key(PG_FUNCTION_ARGS)
{
	char	   *nsp;
	char	   *keytab;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	bool		isnull;
	int64		workers;

	BackfillCheckVersion();
	BackfillRequireCoordinator("backfill_share_key");
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only a superuser may share backfill's key with the workers"),
				 errdetail("The key is sent to the workers in the text of a command.")));
	if (!BackfillCitusPresent())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("backfill_share_key needs Citus: there are no workers to share the key with")));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	nsp = BackfillCitusQuotedSchema();
	keytab = psprintf("%s.backfill_key_data", nsp);
	args[0] = CStringGetTextDatum(psprintf(
		"SELECT pg_catalog.format('DELETE FROM %s; INSERT INTO %s VALUES (%%L, %%L)', key, created)"
		" FROM %s ORDER BY created, key LIMIT 1", keytab, keytab, keytab));
	if (SPI_execute(TextDatumGetCString(args[0]), true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("backfill has no key to share: the table backfill_key_data holds no key")));
	args[0] = CStringGetTextDatum(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
	if (SPI_execute_with_args("SELECT pg_catalog.count(*) FILTER (WHERE success),"
							  " pg_catalog.string_agg(nodename || ':' || nodeport || ': ' || result, '; ') FILTER (WHERE NOT success)"
							  " FROM pg_catalog.run_command_on_workers($1)",
							  1, argtypes, args, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not send the key to the workers");
	workers = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not give the key to every worker"),
				 errdetail("%s", SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2))));
	SPI_finish();
	PG_RETURN_INT32((int32) workers);
}
