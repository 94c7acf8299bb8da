/*-------------------------------------------------------------------------
 *
 * src/validate/diffside.c
 *		The two queries of a keyed diff: prepared, keyed and matched.
 *
 * Each query is prepared once, through SPI, and must only read.
 * Its columns are matched to the other's by name, so names must be unique
 * and both must return the same names with the same types; b's rows are
 * then shown and hashed in a's column order.  A key that is not unique on a
 * side is reported here, however the diff found it (keydiff.c, or shard by
 * shard in citus_diff.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "base/spi_util.h"
#include "validate/diffout.h"
#include "validate/diffside.h"

/* Prepare one side's query and find its key columns. */
void
BackfillDiffPrepare(BackfillDiffSide *side, const char *name, const char *query, List *keys)
{
	TupleDesc	desc;
	int			i = 0;
	ListCell   *lc;

	memset(side, 0, sizeof(*side));
	side->name = name;
	side->text = query;
	side->plan = BackfillPrepare(query, 0, NULL, psprintf("query %s", name));
	BackfillCheckReadOnly(side->plan, psprintf("query %s", name));
	desc = BackfillPlanResultDesc(side->plan);
	side->origdesc = desc;
	side->desc = BlessTupleDesc(CreateTupleDescCopy(desc));
	side->lossy = false;
	side->keylossy = false;
	for (int c = 0; c < desc->natts; c++)
		side->lossy |= BackfillJsonbMayLose(TupleDescAttr(desc, c)->atttypid);

	/* names must be unique for columns to be matched by name */
	{
		const char **names = palloc(sizeof(char *) * Max(desc->natts, 1));
		const char *repeated;

		for (int c = 0; c < desc->natts; c++)
			names[c] = NameStr(TupleDescAttr(desc, c)->attname);
		repeated = BackfillRepeatedName(names, desc->natts);
		if (repeated)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("query %s returns column \"%s\" more than once", name, repeated),
					 errhint("Give the columns distinct names with AS: they are matched by name.")));
	}

	side->nkeys = list_length(keys);
	side->keyidx = palloc(sizeof(int) * side->nkeys);
	side->keydesc = CreateTemplateTupleDesc(side->nkeys);
	foreach(lc, keys)
	{
		const char *key = (const char *) lfirst(lc);
		int			found = BackfillFindColumn(desc, key);

		if (found < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("key column \"%s\" is not a column of query %s", key, name)));
		side->keyidx[i] = found;
		side->keylossy |= BackfillJsonbMayLose(TupleDescAttr(desc, found)->atttypid);
		TupleDescCopyEntry(side->keydesc, i + 1, desc, found + 1);
		i++;
	}
	side->keydesc = BlessTupleDesc(side->keydesc);
}

/* Match b's columns to a's by name and type; a and b must return the same columns. */
void
BackfillDiffMatchColumns(BackfillDiffSide *a, BackfillDiffSide *b)
{
	TupleDesc	ad = a->desc;
	TupleDesc	bd = b->desc;

	a->rowidx = palloc(sizeof(int) * ad->natts);
	b->rowidx = palloc(sizeof(int) * ad->natts);
	for (int c = 0; c < ad->natts; c++)
	{
		Form_pg_attribute aa = TupleDescAttr(ad, c);
		int			found = BackfillFindColumn(bd, NameStr(aa->attname));

		if (found < 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("queries a and b return different columns"),
					 errdetail("Column \"%s\" of query a is not a column of query b.",
							   NameStr(aa->attname))));
		if (TupleDescAttr(bd, found)->atttypid != aa->atttypid)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" is of type %s in query a but %s in query b",
							NameStr(aa->attname), format_type_be(aa->atttypid),
							format_type_be(TupleDescAttr(bd, found)->atttypid)),
					 errhint("Cast one side so both return the same type.")));
		a->rowidx[c] = c;
		b->rowidx[c] = found;
	}
	if (bd->natts != ad->natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("queries a and b return different columns"),
				 errdetail("Query a returns %d columns, query b %d.", ad->natts, bd->natts)));

	/* b's rows are shown and hashed in a's column order */
	{
		TupleDesc	ordered = CreateTemplateTupleDesc(ad->natts);

		for (int c = 0; c < ad->natts; c++)
			TupleDescCopyEntry(ordered, c + 1, bd, b->rowidx[c] + 1);
		b->desc = BlessTupleDesc(ordered);
	}
}

/*
 * The key columns idx of the row in slot, as a jsonb object: of their
 * values' text when jsonb could show two keys alike (a float key 0 and one
 * -0, which are two keys compared by representation).
 */
Jsonb *
BackfillDiffKeyJsonb(BackfillDiffSide *side, TupleTableSlot *slot, const int *idx)
{
	return side->keylossy ? BackfillSlotToTextJsonb(slot, side->keydesc, side->nkeys, idx)
		: BackfillSlotToJsonb(slot, side->keydesc, side->nkeys, idx);
}

/* A key that is not unique on one side is an error. */
void
BackfillDiffReportDuplicate(List *keys, const char *side, Jsonb *key)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("key (%s) is not unique in query %s", BackfillColumnListText(keys), side),
			 errdetail("Key %s appears more than once in query %s.",
					   JsonbToCString(NULL, &key->root, VARSIZE(key)), side),
			 errhint("A diff on a key that is not unique pairs rows arbitrarily: choose columns that identify one row on both sides.")));
}
