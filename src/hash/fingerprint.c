/*-------------------------------------------------------------------------
 *
 * src/hash/fingerprint.c
 *		backfill_fingerprint: an order-independent hash of a table's rows.
 *
 * The fingerprint of a multiset of rows is its row count and two 64-bit sums
 * over the rows: the sum of each row's hash (rowhash.c) and the sum of a
 * product of it with itself, which is not additive, so two multisets whose
 * first sums meet by chance still differ in the second.  Sums do not depend on the order rows are
 * read in, so VACUUM FULL, CLUSTER, a dump and restore or another insert
 * order leave the fingerprint as it was; unlike XOR, a sum does not let a
 * duplicated row cancel out.  Each row hash is already a non-linear mix of
 * its columns, so values swapped between rows change the sums.  Row hashes
 * are keyed (rowhash.c), and a finished fingerprint is sealed: what it shows
 * is a keyed hash of its count and sums (BackfillFingerprintSeal), equal for
 * equal multisets and telling nothing of the sums, so no row's hash can be
 * read off the fingerprint of a table holding that row alone.
 *
 * For a partitioned table the rows are those of all its partitions; for any
 * other relation only its own (ONLY: not those of inheritance children).
 *
 * A whole table (no scope) is read by a table scan of its own when nothing
 * calls for a query (fpscan.c), with parallel workers when parallel query is
 * allowed.  Otherwise rows come from one SELECT run through SPI with a
 * DestReceiver that hashes each row as the executor produces it: nothing is
 * copied or kept, memory is constant, and the scan is the one
 * `SELECT count(*)` would make.  Either way the SQL function reads on the
 * caller's snapshot (read-only); C callers that must see their own earlier
 * writes (the idempotency probe) read with a new snapshot.
 *
 * When parallel query is allowed (max_parallel_workers_per_gather > 0) that
 * SELECT computes the fingerprint as an aggregate instead,
 * backfill_fingerprint_agg(rel, col1, col2, ...): a count and two wrapping
 * sums combine, so the planner may give each worker a share of the rows
 * (Partial Aggregate), and the leader adds the workers' sums (Finalize
 * Aggregate).  The transition function hashes each row with the hasher
 * BackfillHashRow uses, built once per aggregate call from rel's column
 * names and the arguments' types, so both paths give the same fingerprint;
 * the planner keeps small tables serial.  Parallel workers read on the
 * snapshot of the query, as the serial path does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <inttypes.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/relation.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_namespace.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/paths.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "hash/citus_fingerprint.h"
#include "hash/fingerprint.h"
#include "hash/fpscan.h"
#include "hash/rowhash.h"
#include "hash/siphash.h"

typedef struct FingerprintReceiver
{
	DestReceiver pub;
	MemoryContext cxt;
	BackfillRowHasher *hasher;
	BackfillFingerprint *fp;
} FingerprintReceiver;

/* Set the hasher up for the row type the query returns. */
static void
FingerprintStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	FingerprintReceiver *r = (FingerprintReceiver *) self;
	MemoryContext old = MemoryContextSwitchTo(r->cxt);

	r->hasher = BackfillRowHasherCreate(typeinfo, typeinfo->natts, NULL);
	MemoryContextSwitchTo(old);
}

/* Add one row to the sums. */
static bool
FingerprintReceive(TupleTableSlot *slot, DestReceiver *self)
{
	FingerprintReceiver *r = (FingerprintReceiver *) self;
	uint64		h = BackfillHashRow(r->hasher, slot);

	r->fp->rows++;
	r->fp->sum1 += h;
	r->fp->sum2 += BackfillFingerprintLane2(h);
	return true;
}

/*
 * Take the one row of the aggregate query: a backfill_fingerprint (rows,
 * hash), read back into the count and the two sums.
 */
static bool
FingerprintAggReceive(TupleTableSlot *slot, DestReceiver *self)
{
	FingerprintReceiver *r = (FingerprintReceiver *) self;
	HeapTupleHeader td;
	HeapTupleData tuple;
	Datum		values[2];
	bool		nulls[2];
	TupleDesc	desc;
	char	   *hash;
	char		half[17];

	slot_getsomeattrs(slot, 1);
	if (slot->tts_isnull[0])
		elog(ERROR, "backfill_fingerprint_agg returned NULL");
	td = DatumGetHeapTupleHeader(slot->tts_values[0]);
	desc = lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(td), HeapTupleHeaderGetTypMod(td));
	tuple.t_len = HeapTupleHeaderGetDatumLength(td);
	ItemPointerSetInvalid(&(tuple.t_self));
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = td;
	heap_deform_tuple(&tuple, desc, values, nulls);
	ReleaseTupleDesc(desc);
	hash = TextDatumGetCString(values[1]);
	if (nulls[0] || nulls[1] || strlen(hash) != 32)
		elog(ERROR, "backfill_fingerprint_agg returned a malformed fingerprint");
	r->fp->rows = (uint64) DatumGetInt64(values[0]);
	memcpy(half, hash, 16);
	half[16] = '\0';
	r->fp->sum1 = strtou64(half, NULL, 16);
	r->fp->sum2 = strtou64(hash + 16, NULL, 16);
	r->fp->sealed = true;		/* the aggregate's final function sealed it */
	return true;
}

/*
 * The aggregate query fingerprinting relid's rows ("SELECT agg(rel, c1, c2...)
 * FROM ..."), or NULL when it does not apply: parallel query off, no column
 * or more columns than a function takes, the extension's schema not usable
 * by the current role (a caller running as a table owner), or a table Citus
 * holds (it would push the aggregate down to the shards, with relid, this
 * node's OID, for their rows).
 */
static char *
FingerprintAggQuery(Oid relid)
{
	Oid			nsp;
	char	   *cols;
	int			ncols;
	BackfillCitusRel cr;

	if (max_parallel_workers_per_gather <= 0)
		return NULL;
	BackfillCitusDescribe(relid, &cr);
	if (cr.kind != BACKFILL_CITUS_NONE)
		return NULL;
	nsp = BackfillInstalledSchema();
	if (!OidIsValid(nsp) ||
		BackfillSchemaAclCheck(nsp, GetUserId(), ACL_USAGE) != ACLCHECK_OK)
		return NULL;

	cols = BackfillRelColumnArgs(relid, &ncols);
	/* the transition function takes the state, rel and the columns */
	if (ncols == 0 || ncols > FUNC_MAX_ARGS - 2)
		return NULL;
	return psprintf("SELECT %s.backfill_fingerprint_agg('%u'::pg_catalog.oid::pg_catalog.regclass%s)",
					quote_identifier(get_namespace_name(nsp)), relid, cols);
}

/* Whether the planner gave a plan workers (a Gather, which needs parallel mode). */
static bool
PlannedParallel(SPIPlanPtr plan)
{
	CachedPlan *cp = SPI_plan_get_cached_plan(plan);
	bool		parallel = false;

	if (cp != NULL)
	{
		parallel = linitial_node(PlannedStmt, cp->stmt_list)->parallelModeNeeded;
		ReleaseCachedPlan(cp, NULL);	/* an unsaved plan holds no resource owner */
	}
	return parallel;
}

/*
 * Prepare the query reading relid's rows where scope holds: by the
 * aggregate agg when not NULL and the planner gives it workers, else by
 * the serial receiver, cheaper per row.  (Asking the planner reads only the
 * partitions the scope keeps; summing the sizes of all of them locked every
 * partition of the table.)  *agg is set to NULL when it is not used.
 */
static SPIPlanPtr
PrepareFingerprintQuery(Oid relid, const char *scope, const char **agg)
{
	const char *from = psprintf(" FROM %s%s%s%s%s",
								get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE ? "" : "ONLY ",
								BackfillQualifiedName(relid),
								scope ? " WHERE ((\n" : "", scope ? scope : "", scope ? "\n))" : "");
	const char *argname = scope ? "scope" : "rel";
	SPIPlanPtr	plan;

	if (*agg != NULL)
	{
		plan = BackfillPrepareCursor(psprintf("%s%s", *agg, from), 0, NULL, argname,
									 CURSOR_OPT_PARALLEL_OK);
		if (PlannedParallel(plan))
			return plan;
		SPI_freeplan(plan);
		*agg = NULL;
	}
	return BackfillPrepare(psprintf("SELECT *%s", from), 0, NULL, argname);
}

/*
 * Add to fp the rows a query on relid returns where scope holds, hashed as
 * they come (by the aggregate agg when not NULL and worth it, which seals
 * them).
 */
static void
FingerprintQuery(Oid relid, const char *scope, bool read_only, const char *agg,
				 BackfillFingerprint *fp)
{
	SPIPlanPtr	plan = PrepareFingerprintQuery(relid, scope, &agg);
	FingerprintReceiver r;

	memset(&r, 0, sizeof(r));
	if (agg)
		BackfillInitReceiver(&r.pub, FingerprintAggReceive, NULL);
	else
		BackfillInitReceiver(&r.pub, FingerprintReceive, FingerprintStartup);
	r.cxt = CurrentMemoryContext;
	r.fp = fp;

	BackfillRunToDest(plan, NULL, read_only, (DestReceiver *) &r);
	SPI_freeplan(plan);
}

/*
 * Fingerprint the rows of relid for which scope (a boolean expression over
 * its columns, or NULL for all rows) is true.  Must be called inside SPI.
 */
void
BackfillFingerprintRel(Oid relid, const char *scope, bool read_only,
					   BackfillFingerprint *fp)
{
	/*
	 * on Citus, per shard on the workers (citus_fingerprint.c); a whole
	 * table, by scanning it directly when nothing calls for a query (fpscan.c)
	 */
	memset(fp, 0, sizeof(*fp));
	if (BackfillCitusFingerprint(relid, scope, read_only, fp) ||
		(scope == NULL && BackfillFingerprintScan(relid, relid, read_only, fp)))
	{
		BackfillFingerprintSeal(fp);
		return;
	}
	FingerprintQuery(relid, scope, read_only, FingerprintAggQuery(relid), fp);
	BackfillFingerprintSeal(fp);
}

/*
 * Add to fp the rows of relid (a local table) where scope holds, read by
 * one serial query on the active snapshot, and leave the sums unsealed, to
 * add up with others.  Must be called inside SPI.
 */
void
BackfillFingerprintSums(Oid relid, const char *scope, BackfillFingerprint *fp)
{
	FingerprintQuery(relid, scope, true, NULL, fp);
}

/*
 * Fingerprint partition part as a query on its parent reads it: needs SELECT
 * on the parent only, not on the partition, and the parent's row-level
 * security applies, so it shows no more than a query on the parent would.
 * Read directly (fpscan.c) when the parent lets the caller read its rows as
 * they are and a query on it would read part (a table still attached, not
 * being detached as the snapshot sees it); otherwise by a query on the
 * parent scoped to the partition's constraint (for pruning) and its tableoid
 * (exactly its rows).  Must be called inside SPI.
 */
void
BackfillFingerprintThroughParent(Oid parent, Oid part, BackfillFingerprint *fp)
{
	int			nest;
	char	   *bound;
	char	   *scope;

	LockRelationOid(parent, AccessShareLock);
	/* directly only a table the parent's query would expand to (not detached) */
	if (get_rel_relkind(part) == RELKIND_RELATION &&
		list_member_oid(find_inheritance_children(parent, NoLock), part) &&
		BackfillFingerprintScan(parent, part, true, fp))
	{
		BackfillFingerprintSeal(fp);
		return;
	}

	nest = BackfillPinSearchPath();
	bound = BackfillQueryText("SELECT pg_catalog.pg_get_partition_constraintdef($1)", part);
	scope = psprintf("%s%stableoid OPERATOR(pg_catalog.=) %u::pg_catalog.oid",
					 bound ? bound : "", bound ? " AND " : "", part);

	/* (on Citus a row's tableoid is its shard's: the bound alone, see citus.c) */
	if (bound && BackfillCitusDistributed(parent))
		scope = bound;

	BackfillFingerprintRel(parent, scope, true, fp);
	BackfillUnpinSearchPath(nest);
}

/* What BackfillFingerprintSplit's receiver keeps: a hasher skipping the flag. */
typedef struct SplitReceiver
{
	DestReceiver pub;
	MemoryContext cxt;
	BackfillRowHasher *hasher;
	BackfillFingerprint *inside;
	BackfillFingerprint *outside;
} SplitReceiver;

/* Set the hasher up for the columns after the first, the scope's flag. */
static void
SplitStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	SplitReceiver *r = (SplitReceiver *) self;
	MemoryContext old = MemoryContextSwitchTo(r->cxt);
	int		   *idx = palloc(sizeof(int) * Max(typeinfo->natts - 1, 1));

	for (int i = 1; i < typeinfo->natts; i++)
		idx[i - 1] = i;
	r->hasher = BackfillRowHasherCreate(typeinfo, typeinfo->natts - 1, idx);
	MemoryContextSwitchTo(old);
}

/* Add one row to the sums of its side. */
static bool
SplitReceive(TupleTableSlot *slot, DestReceiver *self)
{
	SplitReceiver *r = (SplitReceiver *) self;
	uint64		h = BackfillHashRow(r->hasher, slot);
	BackfillFingerprint *fp;

	slot_getsomeattrs(slot, 1);
	fp = DatumGetBool(slot->tts_values[0]) ? r->inside : r->outside;
	fp->rows++;
	fp->sum1 += h;
	fp->sum2 += BackfillFingerprintLane2(h);
	return true;
}

/*
 * Add the rows of target for which where holds (a predicate over its
 * columns, or NULL for ONLY target's own rows) to inside when scope holds
 * for them and to outside when it does not, in one scan, on the active
 * snapshot, as a query on target reads them (its rights, its policies).  The
 * sums are left unsealed, to add up with others.  Must be called inside SPI.
 */
void
BackfillFingerprintSplit(Oid target, const char *where, const char *scope,
						 BackfillFingerprint *inside, BackfillFingerprint *outside)
{
	StringInfoData sql;
	SPIPlanPtr	plan;
	SplitReceiver r;

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT COALESCE(((\n%s\n)), false), * FROM %s%s", scope,
					 where ? "" : "ONLY ", BackfillQualifiedName(target));
	if (where)
		appendStringInfo(&sql, " WHERE %s", where);
	plan = BackfillPrepareCursor(sql.data, 0, NULL, "scope", 0);
	memset(&r, 0, sizeof(r));
	BackfillInitReceiver(&r.pub, SplitReceive, SplitStartup);
	r.cxt = CurrentMemoryContext;
	r.inside = inside;
	r.outside = outside;
	BackfillRunToDest(plan, NULL, true, (DestReceiver *) &r);
	SPI_freeplan(plan);
}

/* Seal a finished fingerprint's sums, unless they are sealed already. */
void
BackfillFingerprintSeal(BackfillFingerprint *fp)
{
	uint64		sealed[2];

	if (fp->sealed)
		return;
	BackfillSealSums(fp->rows, fp->sum1, fp->sum2, sealed);
	fp->sum1 = sealed[0];
	fp->sum2 = sealed[1];
	fp->sealed = true;
}

/* The hash part of a fingerprint as 32 hexadecimal digits, sealed. */
char *
BackfillFingerprintText(const BackfillFingerprint *fp)
{
	BackfillFingerprint copy = *fp;

	BackfillFingerprintSeal(&copy);
	return psprintf("%016" PRIx64 "%016" PRIx64, copy.sum1, copy.sum2);
}

PG_FUNCTION_INFO_V1(backfill_fingerprint);

/*
 * backfill_fingerprint(rel regclass, scope text DEFAULT NULL)
 *		RETURNS backfill_fingerprint (rows bigint, hash text)
 */
Datum
backfill_fingerprint(PG_FUNCTION_ARGS)
{
	Oid			relid;
	const char *scope = NULL;
	BackfillFingerprint fp;
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	BackfillCheckVersion();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	relid = BackfillOpenRelArg(fcinfo, 0, "rel", BACKFILL_REL_READABLE, AccessShareLock);
	if (!PG_ARGISNULL(1))
		scope = BackfillCheckExpr(TextDatumGetCString(PG_GETARG_DATUM(1)), "scope");

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	BackfillFingerprintRel(relid, scope, true, &fp);
	SPI_finish();

	values[0] = Int64GetDatum((int64) fp.rows);
	values[1] = CStringGetTextDatum(BackfillFingerprintText(&fp));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/* What backfill_fingerprint_transfn keeps across the rows of one aggregate. */
typedef struct FingerprintAggCache
{
	Oid			relid;
	int			ncols;
	BackfillRowHasher *hasher;
	Datum	   *values;
	bool	   *isnull;
} FingerprintAggCache;

/* The arguments do not match rel's columns. */
static void
ColumnsMismatch(Oid relid)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("backfill_fingerprint_agg needs every column of %s, in order",
					BackfillQualifiedName(relid)),
			 errhint("Call backfill_fingerprint instead.")));
}

/*
 * Set up the hasher for rows of rel given as the arguments after rel: the
 * names of rel's columns, the types of the arguments (which must be those of
 * the columns), so the hash is BackfillHashRow's over SELECT * FROM rel.
 */
static FingerprintAggCache *
FingerprintAggSetup(FunctionCallInfo fcinfo, Oid relid)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	MemoryContext old = MemoryContextSwitchTo(flinfo->fn_mcxt);
	FingerprintAggCache *cache = palloc0(sizeof(FingerprintAggCache));
	Oid			reltype = get_rel_type_id(relid);
	TupleDesc	reldesc;
	TupleDesc	desc;
	int			n = 0;

	if (get_fn_expr_variadic(flinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("backfill_fingerprint_agg takes the columns one by one, not as a VARIADIC array")));
	if (!OidIsValid(reltype))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));

	cache->relid = relid;
	cache->ncols = PG_NARGS() - 2;
	desc = CreateTemplateTupleDesc(cache->ncols);
	reldesc = lookup_rowtype_tupdesc(reltype, -1);
	for (int i = 0; i < reldesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(reldesc, i);

		if (att->attisdropped)
			continue;
		if (n >= cache->ncols || get_fn_expr_argtype(flinfo, n + 2) != att->atttypid)
			ColumnsMismatch(relid);
		TupleDescInitEntry(desc, n + 1, NameStr(att->attname), att->atttypid,
						   att->atttypmod, 0);
		n++;
	}
	ReleaseTupleDesc(reldesc);
	if (n != cache->ncols)
		ColumnsMismatch(relid);

	cache->hasher = BackfillRowHasherCreate(desc, cache->ncols, NULL);
	cache->values = palloc(sizeof(Datum) * cache->ncols);
	cache->isnull = palloc(sizeof(bool) * cache->ncols);
	MemoryContextSwitchTo(old);
	flinfo->fn_extra = cache;
	return cache;
}

/* A new zero state in the aggregate's context. */
static BackfillFingerprint *
NewAggState(FunctionCallInfo fcinfo, const char *fn)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "%s called outside an aggregate", fn);
	return MemoryContextAllocZero(aggcxt, sizeof(BackfillFingerprint));
}

PG_FUNCTION_INFO_V1(backfill_fingerprint_transfn);

/*
 * backfill_fingerprint_transfn(state internal, rel regclass, VARIADIC "any")
 *		RETURNS internal: the state with one row more
 */
Datum
backfill_fingerprint_transfn(PG_FUNCTION_ARGS)
{
	BackfillFingerprint *state;
	FingerprintAggCache *cache = (FingerprintAggCache *) fcinfo->flinfo->fn_extra;
	uint64		h;

	BackfillCheckVersion();
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("rel must not be NULL")));
	state = PG_ARGISNULL(0) ? NewAggState(fcinfo, "backfill_fingerprint_transfn")
		: (BackfillFingerprint *) PG_GETARG_POINTER(0);
	if (unlikely(cache == NULL || cache->relid != PG_GETARG_OID(1)))
		cache = FingerprintAggSetup(fcinfo, PG_GETARG_OID(1));

	for (int i = 0; i < cache->ncols; i++)
	{
		cache->values[i] = fcinfo->args[i + 2].value;
		cache->isnull[i] = fcinfo->args[i + 2].isnull;
	}
	h = BackfillHashValues(cache->hasher, cache->values, cache->isnull);
	state->rows++;
	state->sum1 += h;
	state->sum2 += BackfillFingerprintLane2(h);
	PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(backfill_fingerprint_combinefn);

/*
 * backfill_fingerprint_combinefn(a internal, b internal) RETURNS internal:
 * the counts and sums of both, added (wrapping, as the serial sums do)
 */
Datum
backfill_fingerprint_combinefn(PG_FUNCTION_ARGS)
{
	BackfillFingerprint *a;
	BackfillFingerprint *b;

	BackfillCheckVersion();
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	}
	b = (BackfillFingerprint *) PG_GETARG_POINTER(1);
	a = PG_ARGISNULL(0) ? NewAggState(fcinfo, "backfill_fingerprint_combinefn")
		: (BackfillFingerprint *) PG_GETARG_POINTER(0);
	a->rows += b->rows;
	a->sum1 += b->sum1;
	a->sum2 += b->sum2;
	PG_RETURN_POINTER(a);
}

PG_FUNCTION_INFO_V1(backfill_fingerprint_serialfn);

/* backfill_fingerprint_serialfn(state internal) RETURNS bytea: 24 bytes */
Datum
backfill_fingerprint_serialfn(PG_FUNCTION_ARGS)
{
	BackfillFingerprint *state = (BackfillFingerprint *) PG_GETARG_POINTER(0);
	bytea	   *result = palloc(VARHDRSZ + sizeof(BackfillFingerprint));

	BackfillCheckVersion();
	SET_VARSIZE(result, VARHDRSZ + sizeof(BackfillFingerprint));
	memcpy(VARDATA(result), state, sizeof(BackfillFingerprint));
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(backfill_fingerprint_deserialfn);

/* backfill_fingerprint_deserialfn(state bytea, internal) RETURNS internal */
Datum
backfill_fingerprint_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);
	BackfillFingerprint *state;

	BackfillCheckVersion();
	if (VARSIZE_ANY_EXHDR(b) != sizeof(BackfillFingerprint))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("a fingerprint state has %d bytes, not %d",
						(int) VARSIZE_ANY_EXHDR(b), (int) sizeof(BackfillFingerprint))));
	state = palloc(sizeof(BackfillFingerprint));
	memcpy(state, VARDATA_ANY(b), sizeof(BackfillFingerprint));
	PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(backfill_fingerprint_finalfn);

/*
 * backfill_fingerprint_finalfn(state internal, rel regclass, VARIADIC "any")
 *		RETURNS backfill_fingerprint: what backfill_fingerprint returns
 */
Datum
backfill_fingerprint_finalfn(PG_FUNCTION_ARGS)
{
	BackfillFingerprint fp;
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	BackfillCheckVersion();
	memset(&fp, 0, sizeof(fp));
	if (!PG_ARGISNULL(0))
		memcpy(&fp, PG_GETARG_POINTER(0), sizeof(fp));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum((int64) fp.rows);
	values[1] = CStringGetTextDatum(BackfillFingerprintText(&fp));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}
