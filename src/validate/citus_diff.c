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
 * travel to the coordinator, which shows them (diffout.c) as they come.  Rows and keys are
 * hashed by backfill_diff_hash, by representation as the local diff hashes
 * them, under the coordinator's key (which the workers must share:
 * backfill_share_key), and only for roles granted backfill_diff_hash (a
 * hash of chosen values is a row hash).  Keys are joined by two hashes of
 * independent families, 128 bits, and the distribution column's equality.
 *
 * Otherwise (a local table on a side, a computed column, a join, tables not
 * co-located, more columns than a function takes...) BackfillDiffPerShard
 * does nothing and the rows are diffed on the coordinator (keydiff.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "nodes/parsenodes.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "base/citus.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "hash/citus_fingerprint.h"
#include "hash/rowhash.h"
#include "validate/citus_diff.h"
#include "validate/diffout.h"
#include "validate/diffside.h"

/* Columns the pushed query adds to a side's rows; a query returning one is diffed locally. */
#define ADDED_PREFIX	"backfill_diff_"

/* One side as the pushed query reads it. */
typedef struct BackfillCitusDiffSide
{
	const char *name;			/* "a" or "b" */
	const char *query;
	SPIPlanPtr	plan;
	TupleDesc	desc;			/* the rows the query returns */
	const int  *keyidx;			/* the key columns in desc, in key order */
	const int  *rowidx;			/* every column in desc, in a's column order */
} BackfillCitusDiffSide;

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
static char *
CitusDiffQuery(BackfillCitusDiffSide sides[2], int nkeys, int ncols, const uint64 seeds[3])
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

/*
 * Rows of the per-shard diff: a's presence, its key's row count and its row,
 * then the same of b; slot positions of each side's key and row columns in
 * keyidx and rowidx.
 */
typedef struct ShardDiffReceiver
{
	DestReceiver pub;
	BackfillDiffSide *sides[2];
	BackfillDiffOutput *out;
	MemoryContext rowcxt;		/* reset after each row */
	MemoryContext cxt;			/* where a repeated key is kept */
	int			first[2];		/* slot position of each side's presence flag */
	int		   *keyidx[2];
	int		   *rowidx[2];
	/* set when a key repeats on a side */
	BackfillDiffSide *dupside;
	Jsonb	   *dupkey;
} ShardDiffReceiver;

/* Show one row of the per-shard diff, or note its repeated key and stop. */
static bool
ShardDiffReceive(TupleTableSlot *slot, DestReceiver *self)
{
	ShardDiffReceiver *r = (ShardDiffReceiver *) self;
	BackfillDiffSide **sides = r->sides;
	int			ncols = sides[0]->desc->natts;
	Jsonb	   *key[2] = {NULL, NULL};
	Jsonb	   *row[2] = {NULL, NULL};
	MemoryContext old = MemoryContextSwitchTo(r->rowcxt);

	slot_getallattrs(slot);
	for (int s = 0; s < 2; s++)
	{
		if (slot->tts_isnull[r->first[s]])
			continue;
		key[s] = BackfillDiffKeyJsonb(sides[s], slot, r->keyidx[s]);
		if (DatumGetInt64(slot->tts_values[r->first[s] + 1]) > 1)
		{
			/* reported once the query has stopped */
			r->dupside = sides[s];
			r->dupkey = MemoryContextAlloc(r->cxt, VARSIZE(key[s]));
			memcpy(r->dupkey, key[s], VARSIZE(key[s]));
			MemoryContextSwitchTo(old);
			return false;
		}
		row[s] = BackfillSlotToJsonb(slot, sides[s]->desc, ncols, r->rowidx[s]);
	}
	/* a change jsonb cannot show is shown by the values' text */
	if (key[0] && key[1] && (sides[0]->lossy || sides[1]->lossy) &&
		BackfillJsonbAlike(row[0], row[1]))
		for (int s = 0; s < 2; s++)
			row[s] = BackfillSlotToTextJsonb(slot, sides[s]->desc, ncols, r->rowidx[s]);
	BackfillDiffEmit(r->out,
					 key[0] == NULL ? BACKFILL_DIFF_ADDED :
					 key[1] == NULL ? BACKFILL_DIFF_REMOVED : BACKFILL_DIFF_CHANGED,
					 key[0] ? key[0] : key[1], row[0], row[1]);
	MemoryContextSwitchTo(old);
	MemoryContextReset(r->rowcxt);
	return true;
}

/*
 * Diff sides a and b (prepared and matched) on keys shard by shard, each row
 * found into out, if they are two co-located distributed tables keyed on
 * their distribution column; false if they are not, and nothing was done.
 * rowcxt is reset after each row.  Inside SPI, on the active snapshot.
 */
bool
BackfillDiffPerShard(BackfillDiffSide *a, BackfillDiffSide *b, List *keys, BackfillDiffOutput *out,
					 MemoryContext rowcxt)
{
	BackfillCitusDiffSide sides[2] = {
		{"a", a->text, a->plan, a->origdesc, a->keyidx, a->rowidx},
		{"b", b->text, b->plan, b->origdesc, b->keyidx, b->rowidx}
	};
	const uint64 seeds[3] = {0, 0, BACKFILL_SECOND_SEED};
	ShardDiffReceiver r;
	char	   *sql;
	SPIPlanPtr	plan;

	sql = CitusDiffQuery(sides, a->nkeys, a->desc->natts, seeds);
	if (sql == NULL)
		return false;
	ereport(DEBUG1,
			(errmsg_internal("backfill_diff: queries a and b read co-located distributed tables: diffed shard by shard")));
	plan = BackfillPrepare(sql, 0, NULL, "queries a and b");
	memset(&r, 0, sizeof(r));
	BackfillInitReceiver(&r.pub, ShardDiffReceive, NULL);
	r.sides[0] = a;
	r.sides[1] = b;
	r.out = out;
	r.rowcxt = rowcxt;
	r.cxt = CurrentMemoryContext;
	r.first[0] = 0;
	r.first[1] = 2 + a->origdesc->natts;
	for (int s = 0; s < 2; s++)
	{
		r.keyidx[s] = palloc(sizeof(int) * r.sides[s]->nkeys);
		for (int k = 0; k < r.sides[s]->nkeys; k++)
			r.keyidx[s][k] = r.first[s] + 2 + r.sides[s]->keyidx[k];
		r.rowidx[s] = palloc(sizeof(int) * a->desc->natts);
		for (int c = 0; c < a->desc->natts; c++)
			r.rowidx[s][c] = r.first[s] + 2 + r.sides[s]->rowidx[c];
	}
	BackfillRunToDest(plan, NULL, true, (DestReceiver *) &r);
	SPI_freeplan(plan);
	if (r.dupside != NULL)
		BackfillDiffReportDuplicate(keys, r.dupside->name, r.dupkey);
	return true;
}
