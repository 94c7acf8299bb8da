/*-------------------------------------------------------------------------
 *
 * src/validate/citus_diff.c
 *		backfill_diff of two Citus distributed tables, shard by shard.
 *
 * When both queries read one distributed table each, co-located, with
 * nothing computed (SELECT columns FROM t WHERE ..., TABLE t), and a key
 * column of both is the distribution column, two rows of one key lie on the
 * same shard index of the two tables.  Then the whole diff is one query that
 * Citus pushes down to every pair of co-located shards:
 *
 *	SELECT a's columns, b's columns, how many rows of its key each side has
 *	FROM (a, its key hashed twice, its row hashed, its key's row count) a
 *	FULL JOIN (b, the same) b ON the distribution column and both key hashes
 *	WHERE the row hashes differ OR a key has more than one row on a side
 *
 * so each worker hashes and joins its shards, and only the rows that differ
 * travel to the coordinator, which shows them (diff.c).  Rows and keys are
 * hashed by backfill_diff_hash, by representation as the local diff hashes
 * them, under the coordinator's key (which the workers must share:
 * backfill_share_key), and only for roles granted backfill_diff_hash (a
 * hash of chosen values is a row hash).  Keys are joined by two hashes of
 * independent families, 128 bits, and the distribution column's equality.
 *
 * Otherwise (a local table on a side, a computed column, a join, tables not
 * co-located, more columns than a function takes...) NULL is returned and
 * the rows are diffed on the coordinator.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/parsenodes.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "base/citus.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "hash/citus_fingerprint.h"
#include "hash/rowhash.h"
#include "validate/citus_diff.h"

/* Columns the pushed query adds to a side's rows; a query returning one is diffed locally. */
#define ADDED_PREFIX	"backfill_diff_"

/*
 * The distributed table side's query reads, if it reads one and returns its
 * columns as they are: one table, no join, grouping, window, set operation,
 * limit, subquery or function in the select list.  InvalidOid otherwise.
 * *attnums gets the table column of each output column.
 */
static Oid
PlainDistributedScan(BackfillCitusDiffSide *side, BackfillCitusRel *cr, AttrNumber **attnums)
{
	Query	   *q = BackfillPlanQuery(side->plan);
	RangeTblEntry *rte;
	ListCell   *lc;
	int			n = 0;

	if (q->commandType != CMD_SELECT || list_length(q->rtable) != 1 ||
		q->hasAggs || q->hasWindowFuncs || q->hasTargetSRFs || q->hasSubLinks ||
		q->hasDistinctOn || q->hasRecursive || q->hasModifyingCTE || q->hasForUpdate ||
		q->cteList != NIL || q->groupClause != NIL || q->groupingSets != NIL ||
		q->havingQual != NULL || q->distinctClause != NIL || q->setOperations != NULL ||
		q->limitCount != NULL || q->limitOffset != NULL || q->rowMarks != NIL ||
		list_length(q->jointree->fromlist) != 1 || !IsA(linitial(q->jointree->fromlist), RangeTblRef))
		return InvalidOid;
	rte = linitial_node(RangeTblEntry, q->rtable);
	if (rte->rtekind != RTE_RELATION || rte->tablesample != NULL)
		return InvalidOid;
	BackfillCitusDescribe(rte->relid, cr);
	if (cr->kind != BACKFILL_CITUS_DISTRIBUTED || cr->distcol == NULL)
		return InvalidOid;

	*attnums = palloc0(sizeof(AttrNumber) * side->desc->natts);
	foreach(lc, q->targetList)
	{
		TargetEntry *te = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) te->expr;

		if (te->resjunk)
			continue;
		if (n >= side->desc->natts || !IsA(var, Var) || var->varno != 1 ||
			var->varlevelsup != 0 || var->varattno <= 0)
			return InvalidOid;
		(*attnums)[n++] = var->varattno;
	}
	return n == side->desc->natts ? rte->relid : InvalidOid;
}

/*
 * The key column (its position among the keys) that is the distribution
 * column of both tables, or -1.
 */
static int
DistributionKey(BackfillCitusDiffSide sides[2], int nkeys, Oid relids[2],
				BackfillCitusRel crs[2], AttrNumber *attnums[2])
{
	for (int k = 0; k < nkeys; k++)
	{
		bool		both = true;

		for (int s = 0; s < 2; s++)
			if (attnums[s][sides[s].keyidx[k]] != get_attnum(relids[s], crs[s].distcol))
				both = false;
		if (both)
			return k;
	}
	return -1;
}

/* q.c1, q.c2, ...: a side's columns idx[0..n-1] */
static void
AppendColumns(StringInfo buf, const char *alias, TupleDesc desc, int n, const int *idx)
{
	for (int i = 0; i < n; i++)
		appendStringInfo(buf, "%s%s.%s", i > 0 ? ", " : "", alias,
						 quote_identifier(NameStr(TupleDescAttr(desc, idx ? idx[i] : i)->attname)));
}

/* backfill_diff_hash(seed, q.c1, ...) */
static void
AppendHash(StringInfo buf, const char *nsp, uint64 seed, TupleDesc desc, int n, const int *idx)
{
	appendStringInfo(buf, "%s.backfill_diff_hash(" INT64_FORMAT ", ", nsp, (int64) seed);
	AppendColumns(buf, "q", desc, n, idx);
	appendStringInfoChar(buf, ')');
}

/* One side of the join: its rows with their hashes and their key's row count. */
static void
AppendSide(StringInfo buf, const char *nsp, BackfillCitusDiffSide *side, int nkeys, int ncols,
		   int distkey, const uint64 seeds[3])
{
	const char *dist = quote_identifier(NameStr(TupleDescAttr(side->desc, side->keyidx[distkey])->attname));

	appendStringInfo(buf, "(SELECT true AS " ADDED_PREFIX "p, q.%s AS " ADDED_PREFIX "d, ", dist);
	AppendHash(buf, nsp, seeds[1], side->desc, nkeys, side->keyidx);
	appendStringInfoString(buf, " AS " ADDED_PREFIX "k1, ");
	AppendHash(buf, nsp, seeds[2], side->desc, nkeys, side->keyidx);
	appendStringInfoString(buf, " AS " ADDED_PREFIX "k2, ");
	AppendHash(buf, nsp, seeds[0], side->desc, ncols, side->rowidx);
	appendStringInfo(buf, " AS " ADDED_PREFIX "h, pg_catalog.count(*) OVER (PARTITION BY q.%s, ", dist);
	AppendHash(buf, nsp, seeds[1], side->desc, nkeys, side->keyidx);
	appendStringInfoString(buf, ", ");
	AppendHash(buf, nsp, seeds[2], side->desc, nkeys, side->keyidx);
	appendStringInfoString(buf, ") AS " ADDED_PREFIX "n, ");
	AppendColumns(buf, "q", side->desc, side->desc->natts, NULL);
	appendStringInfo(buf, " FROM (%s\n) q) %s", side->query, side->name);
}

/*
 * The query diffing sides a and b shard by shard, or NULL when they cannot
 * be (see the head of the file).  Its rows: a's flag (true when a has the
 * key), a's row count of the key, a's columns, then the same three of b;
 * only keys whose rows differ or repeat.  seeds: the row hash's, then the
 * two key hashes'.  Inside SPI.
 */
char *
BackfillCitusDiffQuery(BackfillCitusDiffSide sides[2], int nkeys, int ncols, const uint64 seeds[3])
{
	Oid			relids[2];
	BackfillCitusRel crs[2];
	AttrNumber *attnums[2];
	int			distkey;
	const char *nsp;
	const char *eq;
	StringInfoData sql;

	if (!BackfillCitusPresent())
		return NULL;
	for (int s = 0; s < 2; s++)
	{
		for (int c = 0; c < sides[s].desc->natts; c++)
			if (strncmp(NameStr(TupleDescAttr(sides[s].desc, c)->attname), ADDED_PREFIX,
						strlen(ADDED_PREFIX)) == 0)
				return NULL;
		if (!OidIsValid(relids[s] = PlainDistributedScan(&sides[s], &crs[s], &attnums[s])))
			return NULL;
	}
	/* a legacy append or range distribution is in no co-location group (0) */
	if (crs[0].colocation == 0 || crs[0].colocation != crs[1].colocation ||
		ncols + 1 > FUNC_MAX_ARGS || nkeys + 1 > FUNC_MAX_ARGS ||
		(distkey = DistributionKey(sides, nkeys, relids, crs, attnums)) < 0 ||
		!BackfillCitusShardsMayHash("backfill_diff_hash(pg_catalog.int8, \"any\")"))
		return NULL;
	eq = BackfillEqualityOperator(TupleDescAttr(sides[0].desc, sides[0].keyidx[distkey])->atttypid);
	if (eq == NULL)
		return NULL;

	nsp = BackfillCitusQuotedSchema();
	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT a." ADDED_PREFIX "p, a." ADDED_PREFIX "n, ");
	AppendColumns(&sql, "a", sides[0].desc, sides[0].desc->natts, NULL);
	appendStringInfoString(&sql, ", b." ADDED_PREFIX "p, b." ADDED_PREFIX "n, ");
	AppendColumns(&sql, "b", sides[1].desc, sides[1].desc->natts, NULL);
	appendStringInfoString(&sql, " FROM ");
	AppendSide(&sql, nsp, &sides[0], nkeys, ncols, distkey, seeds);
	appendStringInfoString(&sql, " FULL JOIN ");
	AppendSide(&sql, nsp, &sides[1], nkeys, ncols, distkey, seeds);
	appendStringInfo(&sql,
					 " ON a." ADDED_PREFIX "d %s b." ADDED_PREFIX "d"
					 " AND a." ADDED_PREFIX "k1 OPERATOR(pg_catalog.=) b." ADDED_PREFIX "k1"
					 " AND a." ADDED_PREFIX "k2 OPERATOR(pg_catalog.=) b." ADDED_PREFIX "k2"
					 " WHERE a." ADDED_PREFIX "h IS DISTINCT FROM b." ADDED_PREFIX "h"
					 " OR a." ADDED_PREFIX "n OPERATOR(pg_catalog.>) 1"
					 " OR b." ADDED_PREFIX "n OPERATOR(pg_catalog.>) 1",
					 eq);
	return sql.data;
}
