/*-------------------------------------------------------------------------
 *
 * src/fingerprint.c
 *		backfill_fingerprint: an order-independent hash of a table's rows.
 *
 * The fingerprint of a multiset of rows is its row count and two 64-bit sums
 * over the rows: the sum of each row's hash (rowhash.c) and the sum of a
 * product of it with itself, which is not additive, so two multisets whose
 * first sums meet by chance still differ in the second.  Sums do not depend on the order rows are
 * read in, so VACUUM FULL, CLUSTER, a dump and restore or another insert
 * order leave the fingerprint as it was; unlike XOR, a sum does not let a
 * duplicated row cancel out.  Each row hash is already a non-linear mix of
 * its columns, so values swapped between rows change the sums.
 *
 * For a partitioned table the rows are those of all its partitions; for any
 * other relation only its own (ONLY: not those of inheritance children).
 *
 * Rows come from one SELECT run through SPI with a DestReceiver that hashes
 * each row as the executor produces it: nothing is copied or kept, memory is
 * constant, and the scan is the one `SELECT count(*)` would make.  The SQL
 * function reads on the caller's snapshot (read-only SPI); C callers that
 * must see their own earlier writes (the idempotency probe) read with a new
 * snapshot.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <inttypes.h>

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "utils/lsyscache.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "fingerprint.h"
#include "relation.h"
#include "rowhash.h"
#include "spi_util.h"

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
 * Fingerprint the rows of relid for which scope (a boolean expression over
 * its columns, or NULL for all rows) is true.  Must be called inside SPI.
 */
void
BackfillFingerprintRel(Oid relid, const char *scope, bool read_only,
					   BackfillFingerprint *fp)
{
	StringInfoData sql;
	SPIPlanPtr	plan;
	FingerprintReceiver r;

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT * FROM %s%s",
					 get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE ? "" : "ONLY ",
					 BackfillQualifiedName(relid));
	if (scope != NULL)
		appendStringInfo(&sql, " WHERE ((\n%s\n))", scope);
	plan = BackfillPrepare(sql.data, 0, NULL, scope ? "scope" : "rel");

	memset(fp, 0, sizeof(*fp));
	memset(&r, 0, sizeof(r));
	BackfillInitReceiver(&r.pub, FingerprintReceive, FingerprintStartup);
	r.cxt = CurrentMemoryContext;
	r.fp = fp;

	BackfillRunToDest(plan, NULL, read_only, (DestReceiver *) &r);
	SPI_freeplan(plan);
}

/*
 * Fingerprint partition part by reading its parent, scoped to the partition's
 * constraint (for pruning) and its tableoid (exactly its rows).  Needs SELECT
 * on the parent only, not on the partition, and the parent's row-level
 * security applies: it shows no more than a query on the parent would.  Must
 * be called inside SPI.
 */
void
BackfillFingerprintThroughParent(Oid parent, Oid part, BackfillFingerprint *fp)
{
	int			nest = BackfillPinSearchPath();
	char	   *bound = BackfillQueryText("SELECT pg_catalog.pg_get_partition_constraintdef($1)", part);
	char	   *scope = psprintf("%s%stableoid OPERATOR(pg_catalog.=) %u::pg_catalog.oid",
								 bound ? bound : "", bound ? " AND " : "", part);

	BackfillFingerprintRel(parent, scope, true, fp);
	BackfillUnpinSearchPath(nest);
}

/* The hash part of a fingerprint as 32 hexadecimal digits. */
char *
BackfillFingerprintText(const BackfillFingerprint *fp)
{
	return psprintf("%016" PRIx64 "%016" PRIx64, fp->sum1, fp->sum2);
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
