/*-------------------------------------------------------------------------
 *
 * src/validate/diffout.c
 *		A diff's rows: shown as jsonb, and where they go.
 *
 * A row a diff shows is a jsonb object of its columns, as row_to_json
 * writes them in the session's settings.  jsonb may show two different
 * values alike (json's spacing and repeated keys, a float -0 and 0): a
 * column of such a type makes a row "lossy", and a change between two rows
 * that look alike is then shown by their values' text instead.
 *
 * A keyed diff emits its rows one at a time (BackfillDiffEmit) into a
 * BackfillDiffOutput: backfill_diff's result, counts by change, and a sample
 * of the first rows kept as to_jsonb would show a row of backfill_diff's
 * result, so that a caller in C (a dry run) gets what
 *
 *	SELECT count(*) FILTER (WHERE change = ...), ...,
 *		   jsonb_agg(to_jsonb(d)) FILTER (WHERE n <= sample_max)
 *	FROM (SELECT x.*, row_number() OVER () AS n FROM backfill_diff(...) x) d
 *
 * would give, with no row kept but the sample's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"

#include "base/compat.h"
#include "validate/diffout.h"

/* backfill_diff's output columns (backfill.sql), in their order. */
static const char *const OutputColumns[] = {"change", "key", "a_row", "b_row"};

/* The change column's text, by BackfillDiffChange. */
static const char *const ChangeNames[BACKFILL_DIFF_NCHANGES] = {"added", "removed", "changed"};

/* The columns idx[0..n-1] of the row in slot, as a jsonb object. */
Jsonb *
BackfillSlotToJsonb(TupleTableSlot *slot, TupleDesc desc, int n, const int *idx)
{
	Datum	   *values = palloc(sizeof(Datum) * n);
	bool	   *nulls = palloc(sizeof(bool) * n);
	HeapTuple	tuple;
	Datum		json;

	slot_getallattrs(slot);
	for (int i = 0; i < n; i++)
	{
		values[i] = slot->tts_values[idx[i]];
		nulls[i] = slot->tts_isnull[idx[i]];
	}
	tuple = heap_form_tuple(desc, values, nulls);
	json = DirectFunctionCall1(row_to_json, HeapTupleGetDatum(tuple));
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in,
											  CStringGetDatum(TextDatumGetCString(json))));
}

/*
 * Whether jsonb may show two different values of a column of type alike:
 * json (its spacing, its repeated keys) and floats (-0 is shown as 0), or an
 * array of them.
 */
bool
BackfillJsonbMayLose(Oid type)
{
	Oid			base = getBaseType(type);

	if (OidIsValid(get_element_type(base)))
		base = getBaseType(get_element_type(base));
	return base == JSONOID || base == FLOAT4OID || base == FLOAT8OID;
}

/* The columns idx[0..n-1] of the row in slot, as a jsonb object of their values' text. */
Jsonb *
BackfillSlotToTextJsonb(TupleTableSlot *slot, TupleDesc desc, int n, const int *idx)
{
	JsonbParseState *state = NULL;
	JsonbValue *res;

	slot_getallattrs(slot);
	(void) pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < n; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		JsonbValue	k;
		JsonbValue	v;

		k.type = jbvString;
		k.val.string.val = NameStr(att->attname);
		k.val.string.len = strlen(NameStr(att->attname));
		(void) pushJsonbValue(&state, WJB_KEY, &k);
		if (slot->tts_isnull[idx[i]])
			v.type = jbvNull;
		else
		{
			Oid			out;
			bool		varlena;

			getTypeOutputInfo(att->atttypid, &out, &varlena);
			v.type = jbvString;
			v.val.string.val = OidOutputFunctionCall(out, slot->tts_values[idx[i]]);
			v.val.string.len = strlen(v.val.string.val);
		}
		(void) pushJsonbValue(&state, WJB_VALUE, &v);
	}
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

/* Whether two rows shown as jsonb look the same. */
bool
BackfillJsonbAlike(Jsonb *a, Jsonb *b)
{
	return compareJsonbContainers(&a->root, &b->root) == 0;
}

/* Push jsonb j (NULL: a JSON null) as the value or element tok into state. */
static void
PushJsonb(JsonbParseState **state, JsonbIteratorToken tok, Jsonb *j)
{
	JsonbValue	v;

	if (j == NULL)
		v.type = jbvNull;
	else
	{
		/* pushJsonbValue unpacks a container into its keys and values */
		v.type = jbvBinary;
		v.val.binary.data = &j->root;
		v.val.binary.len = VARSIZE(j) - VARHDRSZ;
	}
	(void) pushJsonbValue(state, tok, &v);
}

/* Push the key name into state. */
static void
PushKey(JsonbParseState **state, const char *name)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) name;
	k.val.string.len = strlen(name);
	(void) pushJsonbValue(state, WJB_KEY, &k);
}

/*
 * A row of backfill_diff's result as to_jsonb shows it: an object of its
 * columns, the text change a string, a NULL row a JSON null (the keys in
 * jsonb's order, which pushJsonbValue sorts them into).
 */
static Jsonb *
OutputRowJsonb(BackfillDiffChange change, Jsonb *key, Jsonb *arow, Jsonb *brow)
{
	JsonbParseState *state = NULL;
	JsonbValue	v;
	JsonbValue *res;

	(void) pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	PushKey(&state, OutputColumns[0]);
	v.type = jbvString;
	v.val.string.val = (char *) ChangeNames[change];
	v.val.string.len = strlen(ChangeNames[change]);
	(void) pushJsonbValue(&state, WJB_VALUE, &v);
	PushKey(&state, OutputColumns[1]);
	PushJsonb(&state, WJB_VALUE, key);
	PushKey(&state, OutputColumns[2]);
	PushJsonb(&state, WJB_VALUE, arow);
	PushKey(&state, OutputColumns[3]);
	PushJsonb(&state, WJB_VALUE, brow);
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

/*
 * Start an output: rows into store (of backfill_diff's row type storedesc)
 * if it is not NULL, the first sample_max kept in the current memory context.
 */
void
BackfillDiffOutputInit(BackfillDiffOutput *out, Tuplestorestate *store, TupleDesc storedesc,
					   int sample_max)
{
	Assert(sample_max >= 0);
	Assert(store == NULL || storedesc->natts == lengthof(OutputColumns));
#ifdef USE_ASSERT_CHECKING
	for (int c = 0; store != NULL && c < storedesc->natts; c++)
		Assert(strcmp(NameStr(TupleDescAttr(storedesc, c)->attname), OutputColumns[c]) == 0);
#endif
	memset(out, 0, sizeof(*out));
	out->store = store;
	out->storedesc = storedesc;
	out->sample_max = sample_max;
	out->sample = NIL;
	out->cxt = CurrentMemoryContext;
}

/*
 * Emit one row of the diff: the key's change, the key and the rows of a and
 * b (NULL where a side has none), shown as jsonb.
 */
void
BackfillDiffEmit(BackfillDiffOutput *out, BackfillDiffChange change, Jsonb *key, Jsonb *arow,
				 Jsonb *brow)
{
	Assert(key != NULL);
	Assert((arow != NULL) == (change != BACKFILL_DIFF_ADDED));
	Assert((brow != NULL) == (change != BACKFILL_DIFF_REMOVED));

	out->count[change]++;
	if (out->store != NULL)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, arow == NULL, brow == NULL};

		values[0] = CStringGetTextDatum(ChangeNames[change]);
		values[1] = JsonbPGetDatum(key);
		values[2] = arow ? JsonbPGetDatum(arow) : (Datum) 0;
		values[3] = brow ? JsonbPGetDatum(brow) : (Datum) 0;
		tuplestore_putvalues(out->store, out->storedesc, values, nulls);
	}
	if (list_length(out->sample) < out->sample_max)
	{
		Jsonb	   *row = OutputRowJsonb(change, key, arow, brow);
		MemoryContext old = MemoryContextSwitchTo(out->cxt);
		Jsonb	   *copy = palloc(VARSIZE(row));

		memcpy(copy, row, VARSIZE(row));
		out->sample = lappend(out->sample, copy);
		MemoryContextSwitchTo(old);
	}
}

/* Forget every row emitted: the diff starts again. */
void
BackfillDiffOutputClear(BackfillDiffOutput *out)
{
	memset(out->count, 0, sizeof(out->count));
	list_free_deep(out->sample);
	out->sample = NIL;
	if (out->store != NULL)
		tuplestore_clear(out->store);
}

/*
 * The sample as the text of a jsonb array, in the order the rows were
 * emitted: what jsonb_agg of the rows' to_jsonb, cast to text, writes
 * ('[]' when there is none).
 */
char *
BackfillDiffSampleText(BackfillDiffOutput *out)
{
	JsonbParseState *state = NULL;
	JsonbValue *res;
	Jsonb	   *array;
	ListCell   *lc;

	(void) pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	foreach(lc, out->sample)
		PushJsonb(&state, WJB_ELEM, (Jsonb *) lfirst(lc));
	res = pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	array = JsonbValueToJsonb(res);
	return JsonbToCString(NULL, &array->root, VARSIZE(array));
}
