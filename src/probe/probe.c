/*-------------------------------------------------------------------------
 *
 * src/probe/probe.c
 *		backfill_probe_idempotency: run a window's transform twice, compare, undo.
 *
 * A backfill is only a repair if running it twice leaves the table as
 * running it once did.  The probe runs the transform twice inside a
 * subtransaction, fingerprints the scope before, after the first run and
 * after the second, and rolls everything back.  The fingerprints read with a
 * fresh snapshot each time (a read-only SPI read would use the outer snapshot
 * and miss the transform's own writes, calling "v = v + 1" idempotent).
 *
 * Only when the two states differ does it look closer: in a second
 * subtransaction it runs the transform once, keeps the scope's rows as text
 * in a tuplesort (work_mem, then the backend's temporary files: no temporary
 * table, which a role without TEMPORARY could not create), runs it again,
 * sorts those rows too, and merges the two to count the rows only in one
 * state or the other (as multisets: a duplicated row counts), with samples;
 * then rolls back again.
 * With a scope, the rows outside it are fingerprinted before, after the first
 * and after the second run too: a transform that writes outside its window,
 * in either run, is reported.  What the runs wrote is known exactly from the
 * transaction's own counters (watch.c), so only the relations they wrote are
 * read, under a snapshot of each point, after both runs: the probe costs
 * what the window costs, not what the table does.  When the runs moved the
 * target's relations or storage, or the watch cannot tell (another access
 * method, Citus, statistics not counted), the whole table is read instead.
 * Tables outside the target that the runs took for writing are named in the
 * verdict.
 *
 * The target is followed by name: a transform that swaps it (a partition
 * replaced) leaves a table of the same name with another OID.
 *
 * What a rollback cannot undo stays done: sequence values the transform
 * drew, and anything it did outside the database.  Both runs share the
 * caller's transaction, so now() is the same in both: a transform whose
 * result depends on the transaction's start time looks idempotent here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "hash/fingerprint.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "probe/watch.h"
#include "write/staging.h"

typedef struct ProbeState
{
	Oid			relid;
	char	   *relname;		/* the target is followed by name: a swap gives it a new OID */
	Oid			relnsp;
	const char *scope;
	const char *transform;
	BackfillFingerprint before;
	BackfillFingerprint first;
	BackfillFingerprint second;
	BackfillFingerprint outside_before;
	BackfillFingerprint outside_first;
	BackfillFingerprint outside_second;
	int64		only_first;
	int64		only_second;
	int64		copies;			/* rows only after the second run that copy a row of the first */
	char	   *sample;			/* jsonb text */
	bool		watched;		/* the fingerprints came from the watch, not whole-table reads */
	char	   *columns[3];		/* the target's columns before, after each run */
	bool		unseen;			/* rows changed that the transaction's snapshot cannot see */
	List	   *elsewhere;		/* tables outside the target the runs took for writing */
} ProbeState;

/* Run the transform; run is 1 or 2, for the error message. */
static void
RunTransform(ProbeState *ps, int run)
{
	const char *transform = ps->transform;
	MemoryContext cxt = CurrentMemoryContext;
	/* the run is rolled back: a replacement in it need not gather statistics */
	bool		was = BackfillStagingRolledBack(true);

	PG_TRY();
	{
		int			rc = SPI_execute(transform, false, 0);

		if (rc < 0)
			elog(ERROR, "SPI_execute failed: %s", SPI_result_code_string(rc));
		CommandCounterIncrement();
		BackfillStagingRolledBack(was);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		BackfillStagingRolledBack(was);
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		edata->message = psprintf("the %s run of the transform failed: %s",
								  run == 1 ? "first" : "second", edata->message);
		ReThrowError(edata);
	}
	PG_END_TRY();

	ps->relid = get_relname_relid(ps->relname, ps->relnsp);
	if (!OidIsValid(ps->relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the %s run of the transform left no table named %s",
						run == 1 ? "first" : "second",
						quote_qualified_identifier(get_namespace_name(ps->relnsp), ps->relname))));
}

/*
 * Run fn inside a subtransaction that is always rolled back; errors go on
 * after the rollback, with the caller's memory context and resource owner.
 */
static void
InRolledBackSubtransaction(void (*fn) (ProbeState *, int), ProbeState *ps, int samples)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(ps, samples);
	}
	PG_CATCH();
	{
		ReThrowError(BackfillAbortSubtransaction(cxt, owner));
	}
	PG_END_TRY();
	RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
}

/* Whether two fingerprints (sealed, as BackfillFingerprintRel leaves them) differ. */
static bool
FingerprintsDiffer(const BackfillFingerprint *a, const BackfillFingerprint *b)
{
	Assert(a->sealed && b->sealed);
	return a->rows != b->rows || a->sum1 != b->sum1 || a->sum2 != b->sum2;
}

/*
 * The target's columns, in order: names and types.  A transform that adds a
 * column with a default, drops one or changes its type changes every row,
 * with no row written (ADD COLUMN ... DEFAULT) or with rows that every
 * point's read shows through today's columns: the rows' fingerprints cannot
 * see it, this can.
 */
static char *
Columns(Oid relid)
{
	return BackfillQueryText("SELECT pg_catalog.string_agg(pg_catalog.format('%I %s', a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod)),"
							 "  ', ' ORDER BY a.attnum)"
							 " FROM pg_catalog.pg_attribute a"
							 " WHERE a.attrelid OPERATOR(pg_catalog.=) $1 AND a.attnum OPERATOR(pg_catalog.>) 0"
							 "   AND NOT a.attisdropped", relid);
}

/*
 * Whether the rows of the whole target that a snapshot taken now shows differ
 * from those the last read showed (in the scope, and outside it): under
 * REPEATABLE READ and SERIALIZABLE every read is on the transaction's
 * snapshot, blind to what another session or connection committed since.
 */
static bool
ChangedUnseen(ProbeState *ps)
{
	BackfillFingerprint in;
	BackfillFingerprint out;
	bool		changed;

	if (!IsolationUsesXactSnapshot())
		return false;
	PushActiveSnapshot(GetLatestSnapshot());
	BackfillFingerprintRel(ps->relid, ps->scope, true, &in);
	changed = FingerprintsDiffer(&in, &ps->second);
	if (ps->scope)
	{
		BackfillFingerprintRel(ps->relid, psprintf("NOT COALESCE(((\n%s\n)), false)", ps->scope), true, &out);
		changed |= FingerprintsDiffer(&out, &ps->outside_second);
	}
	PopActiveSnapshot();
	return changed;
}

/* The fast pass: fingerprints before, after the first and after the second run. */
static void
Fingerprints(ProbeState *ps, int samples)
{
	char	   *outside = ps->scope ? psprintf("NOT COALESCE(((\n%s\n)), false)", ps->scope) : NULL;
	BackfillWatch w;

	memset(&w, 0, sizeof(w));
	BackfillWatchPoint(&w, ps->relid, NULL);
	ps->columns[0] = Columns(ps->relid);
	BackfillFingerprintRel(ps->relid, ps->scope, false, &ps->before);
	if (outside)
		BackfillFingerprintRel(ps->relid, outside, false, &ps->outside_before);
	RunTransform(ps, 1);
	ps->columns[1] = Columns(ps->relid);
	BackfillFingerprintRel(ps->relid, ps->scope, false, &ps->first);
	if (outside)
		BackfillFingerprintRel(ps->relid, outside, false, &ps->outside_first);
	RunTransform(ps, 2);
	ps->columns[2] = Columns(ps->relid);
	BackfillFingerprintRel(ps->relid, ps->scope, false, &ps->second);
	if (outside)
		BackfillFingerprintRel(ps->relid, outside, false, &ps->outside_second);
	ps->unseen = ChangedUnseen(ps);
	BackfillWatchPoint(&w, ps->relid, NULL);
	ps->elsewhere = BackfillWrittenElsewhere(&w, ps->relid);
	BackfillWatchEnd(&w);
}

/*
 * The fast pass, for a scope on a table whose writes this transaction can
 * tell (watch.c): the transform runs twice with a watch point before, between
 * and after; then only the relations the runs wrote are read, under each
 * point's snapshot, split by the scope, and the scope's rows in the others
 * once.  ps->watched stays false when the watch could not tell (the runs
 * moved the target's relations or storage): the caller reads it all then.
 */
static void
WatchedFingerprints(ProbeState *ps, int samples)
{
	BackfillWatch w;
	BackfillFingerprint inside[WATCH_POINTS];
	BackfillFingerprint outside[WATCH_POINTS];

	memset(&w, 0, sizeof(w));
	ps->columns[0] = Columns(ps->relid);
	BackfillWatchPoint(&w, ps->relid, ps->scope);
	RunTransform(ps, 1);
	ps->columns[1] = Columns(ps->relid);
	BackfillWatchPoint(&w, ps->relid, NULL);
	RunTransform(ps, 2);
	ps->columns[2] = Columns(ps->relid);
	BackfillWatchPoint(&w, ps->relid, NULL);
	ps->elsewhere = BackfillWrittenElsewhere(&w, ps->relid);
	ps->watched = BackfillWatchScope(&w, inside, outside);
	ps->unseen = w.others;
	BackfillWatchEnd(&w);
	if (!ps->watched)
		return;
	ps->before = inside[0];
	ps->first = inside[1];
	ps->second = inside[2];
	ps->outside_before = outside[0];
	ps->outside_first = outside[1];
	ps->outside_second = outside[2];
	BackfillFingerprintSeal(&ps->before);
	BackfillFingerprintSeal(&ps->first);
	BackfillFingerprintSeal(&ps->second);
	BackfillFingerprintSeal(&ps->outside_before);
	BackfillFingerprintSeal(&ps->outside_first);
	BackfillFingerprintSeal(&ps->outside_second);
}

/* Whether two lists of the target's columns (Columns) are the same. */
static bool
ColumnsSame(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* A receiver that puts the first column of each row (text) into a tuplesort. */
typedef struct SortReceiver
{
	DestReceiver pub;
	Tuplesortstate *sort;
} SortReceiver;

static bool
SortReceive(TupleTableSlot *slot, DestReceiver *self)
{
	SortReceiver *r = (SortReceiver *) self;
	bool		isnull;
	Datum		d = slot_getattr(slot, 1, &isnull);

	CHECK_FOR_INTERRUPTS();
	tuplesort_putdatum(r->sort, d, isnull);
	return true;
}

/*
 * The rows of the scope as a sorted multiset of their text, in memory up to
 * work_mem and in the backend's temporary files beyond: no temporary table,
 * so a role without TEMPORARY can be probed too.
 */
static Tuplesortstate *
KeepRows(ProbeState *ps)
{
	SortReceiver r;
	SPIPlanPtr	plan;

	r.sort = tuplesort_begin_datum(TEXTOID, TextLessOperator, C_COLLATION_OID, false,
								   work_mem, NULL, TUPLESORT_NONE);
	BackfillInitReceiver(&r.pub, SortReceive, NULL);
	plan = BackfillPrepare(psprintf("SELECT pg_catalog.to_jsonb(t)::pg_catalog.text FROM %s t WHERE ((\n%s\n))",
									BackfillQualifiedName(ps->relid), ps->scope ? ps->scope : "true"),
						   0, NULL, "scope");
	(void) BackfillRunToDest(plan, NULL, false, (DestReceiver *) &r);
	SPI_freeplan(plan);
	tuplesort_performsort(r.sort);
	return r.sort;
}

/* A sorted state read row by row: the current row's text, or done. */
typedef struct SortedRows
{
	Tuplesortstate *sort;
	StringInfoData row;
	bool		done;
} SortedRows;

/* Move to the next row of a sorted state. */
static void
NextRow(SortedRows *s)
{
	Datum		d;
	bool		isnull;
	char	   *str;

	if (!BackfillTuplesortGetDatum(s->sort, &d, &isnull))
	{
		s->done = true;
		return;
	}
	resetStringInfo(&s->row);
	if (isnull)
	{
		appendStringInfoString(&s->row, "null");
		return;
	}
	str = TextDatumGetCString(d);
	appendStringInfoString(&s->row, str);
	pfree(str);
	pfree(DatumGetPointer(d));
}

/* How many rows equal to key come next in s; s moves past them. */
static int64
CountEqual(SortedRows *s, const char *key)
{
	int64		n = 0;

	while (!s->done && strcmp(s->row.data, key) == 0)
	{
		n++;
		NextRow(s);
	}
	return n;
}

/* Append up to n copies of row to a sample (a jsonb array text without brackets). */
static void
AddSamples(StringInfo sample, int *taken, int limit, const char *row, int64 n)
{
	for (; n > 0 && *taken < limit; n--, (*taken)++)
		appendStringInfo(sample, "%s%s", sample->len ? ", " : "", row);
}

/*
 * Merge the two sorted states: the rows only in the first, only in the
 * second (as multisets: a duplicated row counts), and of those only in the
 * second, how many copy a row of the first; with samples of each side.
 */
static void
CompareSorted(ProbeState *ps, Tuplesortstate *first, Tuplesortstate *second, int samples)
{
	SortedRows	a = {first};
	SortedRows	b = {second};
	StringInfoData key;
	StringInfoData s1;
	StringInfoData s2;
	int			taken1 = 0;
	int			taken2 = 0;

	initStringInfo(&a.row);
	initStringInfo(&b.row);
	initStringInfo(&key);
	initStringInfo(&s1);
	initStringInfo(&s2);
	NextRow(&a);
	NextRow(&b);
	while (!a.done || !b.done)
	{
		int			cmp = a.done ? 1 : b.done ? -1 : strcmp(a.row.data, b.row.data);
		int64		n1;
		int64		n2;

		CHECK_FOR_INTERRUPTS();
		resetStringInfo(&key);
		appendStringInfoString(&key, cmp <= 0 ? a.row.data : b.row.data);
		n1 = cmp <= 0 ? CountEqual(&a, key.data) : 0;
		n2 = cmp >= 0 ? CountEqual(&b, key.data) : 0;
		if (n1 > n2)
			AddSamples(&s1, &taken1, samples, key.data, n1 - n2);
		else
			AddSamples(&s2, &taken2, samples, key.data, n2 - n1);
		ps->only_first += Max(n1 - n2, 0);
		ps->only_second += Max(n2 - n1, 0);
		if (n1 > 0)
			ps->copies += Max(n2 - n1, 0);
	}
	ps->sample = MemoryContextStrdup(TopTransactionContext,
									 psprintf("{\"only_after_first\": [%s], \"only_after_second\": [%s]}",
											  s1.data, s2.data));
}

/* The close look: which rows differ between the two runs. */
static void
Differences(ProbeState *ps, int samples)
{
	Tuplesortstate *first;
	Tuplesortstate *second;

	RunTransform(ps, 1);
	first = KeepRows(ps);
	RunTransform(ps, 2);
	second = KeepRows(ps);
	CompareSorted(ps, first, second, samples);
	tuplesort_end(first);
	tuplesort_end(second);
}

/* Refuse transforms that would end the transaction the probe runs in. */
static void
CheckTransform(const char *transform)
{
	List	   *stmts;
	ListCell   *lc;

	stmts = raw_parser(transform, RAW_PARSE_DEFAULT);
	if (stmts == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("transform must hold at least one statement")));
	foreach(lc, stmts)
	{
		Node	   *stmt = lfirst_node(RawStmt, lc)->stmt;

		if (IsA(stmt, TransactionStmt))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TRANSACTION_TERMINATION),
					 errmsg("transform must not commit or roll back"),
					 errdetail("The probe runs it twice inside a subtransaction and rolls both runs back."),
					 errhint("Probe the statements of one window, without transaction control.")));
	}
}

/* The verdict on a window a second run changed: how it changed. */
static void
AppendNotIdempotent(StringInfo verdict, ProbeState *ps)
{
	if (ps->only_first == 0 && ps->second.rows > ps->first.rows)
	{
		appendStringInfo(verdict, "not idempotent: the second run added " UINT64_FORMAT " rows",
						 ps->second.rows - ps->first.rows);
		if (ps->before.rows == 0 && ps->second.rows == 2 * ps->first.rows && ps->copies == ps->only_second)
			appendStringInfoString(verdict, " (each row of the window is now present 2 times)");
		else if (ps->copies == ps->only_second)
			appendStringInfoString(verdict, " (copies of rows the first run wrote)");
		appendStringInfoString(verdict, "; additive measures grow with every run");
	}
	else if (ps->only_first == ps->only_second && ps->first.rows == ps->second.rows)
		appendStringInfo(verdict, "not idempotent: the second run changed " INT64_FORMAT " of the "
						 UINT64_FORMAT " rows of the window again", ps->only_first, ps->second.rows);
	else
		appendStringInfo(verdict, "not idempotent: after the second run " INT64_FORMAT
						 " rows of the window differ from what the first run left"
						 " (" INT64_FORMAT " rows gone, " INT64_FORMAT " rows new)",
						 Max(ps->only_first, ps->only_second), ps->only_first, ps->only_second);
}

/* Check the transform argument; a syntax error in it is said to be one. */
static void
CheckTransformArg(const char *transform)
{
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		CheckTransform(transform);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_SYNTAX_ERROR)
			PG_RE_THROW();
		FlushErrorState();
		edata->message = psprintf("invalid transform: %s", edata->message);
		edata->cursorpos = 0;
		ReThrowError(edata);
	}
	PG_END_TRY();
}

/*
 * Whether the probe may draw sequence values, which the rollback cannot give
 * back: the transform calls nextval, or the target has a column that does.
 * Inside SPI.
 */
static bool
DrawsSequence(const ProbeState *ps)
{
	return strcasestr(ps->transform, "nextval") != NULL ||
		BackfillQueryText("SELECT 1 FROM pg_catalog.pg_attribute a"
						  " LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid OPERATOR(pg_catalog.=) a.attrelid"
						  "  AND d.adnum OPERATOR(pg_catalog.=) a.attnum"
						  " WHERE a.attrelid OPERATOR(pg_catalog.=) $1 AND a.attnum OPERATOR(pg_catalog.>) 0"
						  "   AND NOT a.attisdropped AND (a.attidentity OPERATOR(pg_catalog.<>) ''"
						  "    OR pg_catalog.pg_get_expr(d.adbin, d.adrelid) OPERATOR(pg_catalog.~~) '%nextval(%')"
						  " LIMIT 1", ps->relid) != NULL;
}

/*
 * The two runs and their fingerprints (watched, or read whole), each pass
 * in a subtransaction rolled back.  A run that fails on a duplicate (23505,
 * 23P01) is a verdict, not an error: an append collides with what it wrote
 * before.  Returns that error, or NULL; any other error goes on.
 */
static ErrorData *
ProbeRuns(ProbeState *ps, int samples, Oid target)
{
	MemoryContext cxt = CurrentMemoryContext;
	ErrorData  *collision = NULL;

	PG_TRY();
	{
		if (ps->scope != NULL && BackfillWatchable(ps->relid))
		{
			InRolledBackSubtransaction(WatchedFingerprints, ps, samples);
			ps->relid = target;		/* as it was: both runs are rolled back */
		}
		if (!ps->watched)
			InRolledBackSubtransaction(Fingerprints, ps, samples);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		/* the subtransaction is rolled back already: only the error is left */
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_UNIQUE_VIOLATION &&
			edata->sqlerrcode != ERRCODE_EXCLUSION_VIOLATION)
			PG_RE_THROW();
		FlushErrorState();
		collision = edata;
	}
	PG_END_TRY();
	ps->relid = target;
	return collision;
}

/* The verdict on a run that collided (ProbeRuns): not idempotent, and why. */
static char *
CollisionVerdict(ErrorData *edata)
{
	bool		first = strncmp(edata->message, "the first run", 13) == 0;
	char	   *detail = edata->detail ? pstrdup(edata->detail) : NULL;
	size_t		len = detail ? strlen(detail) : 0;

	if (len > 0 && detail[len - 1] == '.')
		detail[len - 1] = '\0';

	return psprintf("not idempotent: %s%s%s; %s", edata->message,
					detail ? ": " : "", detail ? detail : "",
					first ? "the rows it writes are there already, as when an append is run again"
					: "a second run collides with what the first wrote, as an append does");
}

/* The result of a probe whose run collided: no counts, a verdict. */
static Datum
CollisionRow(FunctionCallInfo fcinfo, ErrorData *edata)
{
	TupleDesc	tupdesc;
	Datum		values[11] = {0};
	bool		nulls[11];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	for (int i = 0; i < 11; i++)
		nulls[i] = true;
	values[0] = BoolGetDatum(false);
	nulls[0] = false;
	values[10] = CStringGetTextDatum(CollisionVerdict(edata));
	nulls[10] = false;
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls));
}

/* The probe's verdict, in words. */
static char *
Verdict(ProbeState *ps, bool idempotent, bool outside_first, bool outside_second,
		bool draws_sequence)
{
	StringInfoData verdict;

	initStringInfo(&verdict);
	if (idempotent && (outside_first || outside_second))
		appendStringInfo(&verdict, "not a repair of the window: %s changed rows outside the scope"
						 " (a second run leaves the " UINT64_FORMAT " rows of the window unchanged)",
						 !outside_second ? "it" : !outside_first ? "the second run" : "each run",
						 ps->first.rows);
	else if (idempotent && !FingerprintsDiffer(&ps->before, &ps->first))
		appendStringInfo(&verdict, "idempotent, and the transform changed no row of the window"
						 " (its " UINT64_FORMAT " rows are the same before and after both runs)",
						 ps->before.rows);
	else if (idempotent)
		appendStringInfo(&verdict, "idempotent: a second run leaves the " UINT64_FORMAT
						 " rows of the window unchanged", ps->first.rows);
	else
		AppendNotIdempotent(&verdict, ps);
	if (!idempotent && outside_second)
		appendStringInfoString(&verdict, "; the second run also changed rows outside the scope");
	else if (!idempotent && outside_first)
		appendStringInfoString(&verdict, "; it also changed rows outside the scope");
	if (ps->elsewhere != NIL)
	{
		ListCell   *lc;

		appendStringInfoString(&verdict, "; it also writes outside the target:");
		foreach(lc, ps->elsewhere)
			appendStringInfo(&verdict, "%s %s", foreach_current_index(lc) > 0 ? "," : "",
							 (char *) lfirst(lc));
	}
	if (draws_sequence)
		appendStringInfoString(&verdict, "; sequence values it drew stay drawn");
	return verdict.data;
}

PG_FUNCTION_INFO_V1(backfill_probe_idempotency);

/*
 * backfill_probe_idempotency(transform text, target regclass, scope text,
 *							  sample_rows integer) RETURNS backfill_probe
 */
Datum
backfill_probe_idempotency(PG_FUNCTION_ARGS)
{
	ProbeState	ps;
	int			samples;
	bool		idempotent;
	bool		outside_first;	/* the first run changed rows outside the scope */
	bool		outside_second; /* the second run did */
	bool		draws_sequence;
	bool		reshaped_first; /* the first run changed the target's columns */
	bool		reshaped_second;	/* the second did */
	char	   *verdict;
	ErrorData  *collision;
	MemoryContext fcxt;
	Datum		result;
	TupleDesc	tupdesc;
	Datum		values[11];
	bool		nulls[11] = {false};

	BackfillCheckVersion();
	memset(&ps, 0, sizeof(ps));
	BackfillRequireCoordinator("backfill_probe_idempotency");
	ps.transform = BackfillArgText(fcinfo, 0, "transform");
	ps.relid = BackfillOpenRelArg(fcinfo, 1, "target", BACKFILL_REL_TABLE | BACKFILL_REL_PARTITIONED,
								  AccessShareLock);
	ps.relname = get_rel_name(ps.relid);
	ps.relnsp = get_rel_namespace(ps.relid);
	if (!PG_ARGISNULL(2))
		ps.scope = BackfillCheckExpr(TextDatumGetCString(PG_GETARG_DATUM(2)), "scope");
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("sample_rows must not be NULL")));
	samples = PG_GETARG_INT32(3);
	if (samples < 0 || samples > 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sample_rows must be between 0 and 1000, not %d", samples)));
	CheckTransformArg(ps.transform);

	fcxt = CurrentMemoryContext;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	draws_sequence = DrawsSequence(&ps);
	collision = ProbeRuns(&ps, samples, PG_GETARG_OID(1));
	if (collision)
	{
		/* the row in the function's memory, from the error still in SPI's */
		Datum		row;

		MemoryContextSwitchTo(fcxt);
		row = CollisionRow(fcinfo, collision);
		SPI_finish();
		PG_RETURN_DATUM(row);
	}
	reshaped_first = !ColumnsSame(ps.columns[0], ps.columns[1]);
	reshaped_second = !ColumnsSame(ps.columns[1], ps.columns[2]);
	/* new columns are new values in every row, inside the scope and out */
	outside_first = ps.scope != NULL &&
		(reshaped_first || FingerprintsDiffer(&ps.outside_before, &ps.outside_first));
	outside_second = ps.scope != NULL &&
		(reshaped_second || FingerprintsDiffer(&ps.outside_first, &ps.outside_second));
	idempotent = !FingerprintsDiffer(&ps.first, &ps.second) && !reshaped_second;
	if (!idempotent)
	{
		InRolledBackSubtransaction(Differences, &ps, samples);
		ps.relid = PG_GETARG_OID(1);
	}
	/* the result in the function's memory; what the runs found is in SPI's until SPI_finish */
	MemoryContextSwitchTo(fcxt);

	verdict = Verdict(&ps, idempotent, outside_first, outside_second, draws_sequence);
	if (reshaped_first || reshaped_second)
		verdict = psprintf("%s; %s changed the target's columns (%s), and with them every row",
						   verdict, !reshaped_second ? "the first run" : !reshaped_first ? "the second run" : "each run",
						   ps.columns[reshaped_second ? 2 : 1] ? ps.columns[reshaped_second ? 2 : 1] : "none");
	if (ps.unseen)
		verdict = psprintf("no verdict: rows of the target changed that this transaction's snapshot"
						   " cannot see (written through another connection, or by another session since"
						   " the transaction began), so the runs' own effect cannot be told; what the runs"
						   " showed: %s", verdict);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = BoolGetDatum(idempotent && !outside_first && !outside_second && !ps.unseen);
	values[1] = Int64GetDatum((int64) ps.before.rows);
	values[2] = Int64GetDatum((int64) ps.first.rows);
	values[3] = Int64GetDatum((int64) ps.second.rows);
	values[4] = CStringGetTextDatum(BackfillFingerprintText(&ps.before));
	values[5] = CStringGetTextDatum(BackfillFingerprintText(&ps.first));
	values[6] = CStringGetTextDatum(BackfillFingerprintText(&ps.second));
	values[7] = Int64GetDatum(ps.only_first);
	values[8] = Int64GetDatum(ps.only_second);
	if (ps.sample)
		values[9] = DirectFunctionCall1(jsonb_in, CStringGetDatum(ps.sample));
	else
		nulls[9] = true;
	values[10] = CStringGetTextDatum(verdict);
	result = HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls));
	SPI_finish();
	PG_RETURN_DATUM(result);
}
