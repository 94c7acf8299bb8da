/*-------------------------------------------------------------------------
 *
 * src/run/plan.c
 *		backfill_plan: a range of a table cut into tasks, with its code pinned.
 *
 * A run covers [range_from, range_to) of a table.  On a partitioned table
 * (RANGE on one column) each leaf partition inside the range is a task, and
 * the range must be exactly a union of partitions: one that cuts through a
 * partition, leaves a gap, or reaches past the partitions is refused.  On a
 * plain table the tasks are chunks of options.chunk on options.window_column.
 *
 * The source names its window as $1 and $2.  Each task binds them to its
 * bounds as literals of the window's type, found by the server's own lexer
 * (a "$1" inside a string or a comment is left alone); the task's query is
 * then self-contained text, which the log records as it ran.
 *
 * At plan time the run records: the source; the search_path it resolves
 * names under; the code the source executes, by OID with its definitions
 * (pin.c); the materialized views
 * that depend on the target; and the fingerprints of everything outside the
 * range.  Nothing is locked beyond ACCESS SHARE and nothing is written but the
 * run's own rows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "common/keywords.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "parser/parse_coerce.h"
#include "parser/parser.h"
#include "parser/scanner.h"
#include "partitioning/partbounds.h"
#include "partitioning/partdesc.h"
#include "utils/acl.h"
#include "rewrite/rewriteHandler.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"
#include "utils/regproc.h"
#include "utils/typcache.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/remote.h"
#include "base/spi_util.h"
#include "hash/fingerprint.h"
#include "record/log.h"
#include "run/pin.h"
#include "run/outside.h"
#include "run/plan.h"
#include "run/runkinds.h"
#include "run/runstate.h"
#include "base/throttle.h"
#include "run/window.h"
#include "validate/validate.h"
#include "write/remotesource.h"
#include "write/part.h"
#include "write/publication.h"

/* More tasks than this is a mistake in the range or the chunk. */
#define MAX_TASKS 100000

/* Values of the window type are written and read in ISO formats, whatever the session's. */
static int
PinFormats(void)
{
	int			nest = NewGUCNestLevel();

	(void) set_config_option("datestyle", "ISO, YMD", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("intervalstyle", "postgres", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("extra_float_digits", "3", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return nest;
}

/* The materialized views that depend on relid or its partitions, through views too, in refresh order. */
static char *
Dependents(Oid relid)
{
	char	   *json = BackfillQueryText(
		"WITH RECURSIVE rels(relid) AS ("
		"  SELECT $1 UNION SELECT i.inhrelid FROM pg_inherits i JOIN rels ON i.inhparent = rels.relid),"
		" dep(relid, depth) AS ("
		"  SELECT r.ev_class, 1 FROM pg_depend d JOIN pg_rewrite r ON d.objid = r.oid"
		"   WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass"
		"     AND d.refobjid IN (SELECT relid FROM rels) AND r.ev_class NOT IN (SELECT relid FROM rels)"
		"  UNION"
		"  SELECT r.ev_class, dep.depth + 1 FROM dep JOIN pg_depend d"
		"    ON d.refclassid = 'pg_class'::regclass AND d.refobjid = dep.relid"
		"   AND d.classid = 'pg_rewrite'::regclass"
		"   JOIN pg_rewrite r ON d.objid = r.oid"
		"   WHERE r.ev_class <> dep.relid AND dep.depth < 32),"
		" mv AS ("
		"  SELECT c.oid, max(dep.depth) AS depth FROM dep JOIN pg_class c ON c.oid = dep.relid"
		"   WHERE c.relkind = 'm' GROUP BY c.oid)"
		" SELECT coalesce(jsonb_agg(jsonb_build_object("
		"   'name', format('%I.%I', n.nspname, c.relname),"
		"   'concurrently', c.relispopulated AND EXISTS (SELECT 1 FROM pg_index i"
		"      WHERE i.indrelid = c.oid AND i.indisunique AND i.indisvalid AND i.indimmediate"
		"        AND i.indpred IS NULL AND i.indexprs IS NULL))"
		"   ORDER BY mv.depth, n.nspname, c.relname), '[]')::text"
		" FROM mv JOIN pg_class c ON c.oid = mv.oid JOIN pg_namespace n ON n.oid = c.relnamespace",
		relid);

	return json ? json : "[]";
}

/* A value of the window's type read from text, the error naming the argument. */
typedef struct ReadArg
{
	const char *argname;
	Oid			type;
} ReadArg;

static void
ReadArgContext(void *arg)
{
	ReadArg    *ra = (ReadArg *) arg;

	errcontext("reading %s as %s", ra->argname, format_type_be(ra->type));
}

static Datum
ReadValue(const char *text, const char *argname, Oid type, int32 typmod)
{
	ErrorContextCallback cb;
	ReadArg		ra = {argname, type};
	Oid			fn;
	Oid			ioparam;
	Datum		d;

	cb.callback = ReadArgContext;
	cb.arg = &ra;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	getTypeInputInfo(type, &fn, &ioparam);
	d = OidInputFunctionCall(fn, (char *) text, ioparam, typmod);
	error_context_stack = cb.previous;
	return d;
}

static char *
WriteValue(Datum d, Oid type)
{
	Oid			fn;
	bool		isvarlena;

	getTypeOutputInfo(type, &fn, &isvarlena);
	return OidOutputFunctionCall(fn, d);
}

/* One task: its partition (or NULL) and its window as text. */
typedef struct PlannedTask
{
	char	   *partition;
	char	   *lo;
	char	   *hi;
	Datum		lower;			/* partitions only, for sorting */
	bool		haslower;
	Datum		upper;
	bool		hasupper;
} PlannedTask;

static FmgrInfo *sort_cmp;
static Oid	sort_coll;

static int
CompareTasks(const ListCell *a, const ListCell *b)
{
	PlannedTask *x = lfirst(a);
	PlannedTask *y = lfirst(b);

	if (!x->haslower || !y->haslower)
		return (int) y->haslower - (int) x->haslower;
	return DatumGetInt32(FunctionCall2Coll(sort_cmp, sort_coll, x->lower, y->lower));
}

/* "FOR VALUES FROM (a) TO (b)" of a partition, as the catalog prints it. */
static char *
BoundText(Oid relid)
{
	char	   *b = BackfillQueryText("SELECT pg_catalog.pg_get_expr(relpartbound, oid)"
									  " FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) $1",
									  relid);

	return b ? b : "?";
}

/*
 * Why relid is no longer the partition a task was planned for: not a
 * partition of target any more (detached, or attached elsewhere), or bounded
 * otherwise than [lo, hi) (read back in ISO formats, compared by the key
 * type's ordering).  NULL when it still is.
 */
char *
BackfillPartitionChanged(Oid relid, Oid target, const char *lo, const char *hi)
{
	BackfillPart bp;
	Oid			fn;
	Oid			ioparam;
	Datum		lov;
	Datum		hiv;
	int			nest;
	bool		same;

	if (!get_rel_relispartition(relid) || get_partition_parent(relid, true) != target)
		return psprintf("it is no longer a partition of %s", BackfillQualifiedName(target));
	BackfillResolvePart(relid, "partition", &bp);
	if (bp.own.strategy != PARTITION_STRATEGY_RANGE || !bp.own.haslower || !bp.own.hasupper)
		return psprintf("its bound is now %s", BoundText(relid));
	getTypeInputInfo(bp.own.keytype, &fn, &ioparam);
	nest = PinFormats();
	lov = OidInputFunctionCall(fn, (char *) lo, ioparam, bp.own.keytypmod);
	hiv = OidInputFunctionCall(fn, (char *) hi, ioparam, bp.own.keytypmod);
	AtEOXact_GUC(true, nest);
	same = DatumGetInt32(FunctionCall2Coll(&bp.own.keycmp, bp.own.keycoll, bp.own.lower, lov)) == 0 &&
		DatumGetInt32(FunctionCall2Coll(&bp.own.keycmp, bp.own.keycoll, bp.own.upper, hiv)) == 0;
	return same ? NULL : psprintf("its bound is now %s, not [%s, %s)", BoundText(relid), lo, hi);
}

/* The tasks, sorted, must tile [lo, hi): no gap before, between or after them. */
static void
CheckTasksTile(Oid relid, List *tasks, Datum lo, Datum hi, const char *lotext, const char *hitext,
			   FmgrInfo *cmp, Oid coll, Oid keytype)
{
	Datum		at = lo;
	ListCell   *lc;

	foreach(lc, tasks)
	{
		PlannedTask *t = lfirst(lc);

		if (DatumGetInt32(FunctionCall2Coll(cmp, coll, t->lower, at)) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("no partition of %s covers [%s, %s)", BackfillQualifiedName(relid),
							WriteValue(at, keytype), t->lo),
					 errdetail("A run's range must be exactly a union of partitions."),
					 errhint("Create the missing partition, or start the range at %s.", t->lo)));
		at = t->upper;
	}
	if (DatumGetInt32(FunctionCall2Coll(cmp, coll, at, hi)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("range [%s, %s) reaches past the last partition in it, which ends at %s",
						lotext, hitext, WriteValue(at, keytype)),
				 errhint("Create the partitions up to %s, or end the range at %s.", hitext, WriteValue(at, keytype))));
}

/*
 * The relation options.unwatched names by name; its errors (a name that is
 * not one, 42602; no such table, 42P01) say which option they are about.
 */
static Oid
UnwatchedName(const char *name)
{
	MemoryContext cxt = CurrentMemoryContext;
	Oid			part = InvalidOid;

	PG_TRY();
	{
		part = DatumGetObjectId(DirectFunctionCall1(regclassin, CStringGetDatum(name)));
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		edata->message = psprintf("options.unwatched: %s", edata->message);
		ReThrowError(edata);
	}
	PG_END_TRY();
	return part;
}

/* A partition's own range: no lower (upper) bound for MINVALUE (MAXVALUE). */
typedef struct OwnRange
{
	Datum		lower;
	Datum		upper;
	bool		haslower;
	bool		hasupper;
} OwnRange;

/*
 * Every partition's own range at once, from the bounds the relation cache
 * keeps sorted (one column, RANGE): the partition indexes[i] holds
 * [datums[i - 1], datums[i]), since no other bound can lie inside it.  A
 * catalog read of each partition's bound cost a fifth of a plan over
 * thousands of partitions, most of them outside the range.
 */
static OwnRange *
OwnRanges(Relation rel, PartitionDesc pd)
{
	PartitionBoundInfo bi = pd->boundinfo;
	PartitionKey pk = RelationGetPartitionKey(rel);
	OwnRange   *r = palloc0(sizeof(OwnRange) * Max(1, pd->nparts));

	for (int i = 0; bi != NULL && i < bi->ndatums; i++)
	{
		int			p = bi->indexes[i];

		if (p < 0)
			continue;
		r[p].hasupper = bi->kind[i][0] == PARTITION_RANGE_DATUM_VALUE;
		if (r[p].hasupper)
			r[p].upper = datumCopy(bi->datums[i][0], pk->parttypbyval[0], pk->parttyplen[0]);
		r[p].haslower = i > 0 && bi->kind[i - 1][0] == PARTITION_RANGE_DATUM_VALUE;
		if (r[p].haslower)
			r[p].lower = datumCopy(bi->datums[i - 1][0], pk->parttypbyval[0], pk->parttyplen[0]);
	}
	return r;
}

/*
 * The tasks of a partitioned table: its leaf partitions inside [lo, hi),
 * which must tile the range exactly.  Every other partition goes to
 * *outside; of those at or above hi, all but the nearest also to *newer.
 */
static List *
PartitionTasks(Oid relid, Datum lo, Datum hi, const char *lotext, const char *hitext,
			   FmgrInfo *cmp, Oid coll, Oid keytype, bool replacing, List **outside, List **newer)
{
	Relation	rel = table_open(relid, AccessShareLock);
	PartitionDesc pd = RelationGetPartitionDesc(rel, true);
	Oid			defpart = get_default_oid_from_partdesc(pd);
	OwnRange   *own = OwnRanges(rel, pd);
	List	   *tasks = NIL;
	Oid			nearest = InvalidOid;
	Datum		nearest_lower = (Datum) 0;

	*outside = *newer = NIL;

	for (int i = 0; i < pd->nparts; i++)
	{
		Oid			child = pd->oids[i];
		BackfillPart bp;
		PlannedTask *t;
		bool		before;
		bool		after;

		CHECK_FOR_INTERRUPTS();
		if (get_rel_relkind(child) == RELKIND_PARTITIONED_TABLE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot plan a run on %s: its partition %s is itself partitioned",
							BackfillQualifiedName(relid), BackfillQualifiedName(child)),
					 errhint("Plan the run on %s instead.", BackfillQualifiedName(child))));
		if (child == defpart)
		{
			*outside = lappend_oid(*outside, child);
			continue;
		}
		/* outside: upper <= lo, or lower >= hi */
		before = own[i].hasupper &&
			DatumGetInt32(FunctionCall2Coll(cmp, coll, own[i].upper, lo)) <= 0;
		after = own[i].haslower &&
			DatumGetInt32(FunctionCall2Coll(cmp, coll, own[i].lower, hi)) >= 0;
		if (before || after)
		{
			*outside = lappend_oid(*outside, child);
			if (after && OidIsValid(nearest) &&
				DatumGetInt32(FunctionCall2Coll(cmp, coll, own[i].lower, nearest_lower)) > 0)
				*newer = lappend_oid(*newer, child);
			else if (after)
			{
				if (OidIsValid(nearest))
					*newer = lappend_oid(*newer, nearest);
				nearest = child;
				nearest_lower = own[i].lower;
			}
			continue;
		}
		BackfillResolvePart(child, "target", &bp);
		if (!bp.own.haslower || !bp.own.hasupper ||
			DatumGetInt32(FunctionCall2Coll(cmp, coll, bp.own.lower, lo)) < 0 ||
			DatumGetInt32(FunctionCall2Coll(cmp, coll, bp.own.upper, hi)) > 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("range [%s, %s) cuts through partition %s (%s)",
							lotext, hitext, bp.qualname, BoundText(child)),
					 errhint("Move range_from or range_to to a partition bound: a task replaces whole partitions.")));
		if (replacing)
			BackfillCheckPartRights(&bp);
		t = palloc0(sizeof(PlannedTask));
		t->partition = bp.qualname;
		t->lower = bp.own.lower;
		t->upper = bp.own.upper;
		t->haslower = t->hasupper = true;
		t->lo = WriteValue(bp.own.lower, keytype);
		t->hi = WriteValue(bp.own.upper, keytype);
		tasks = lappend(tasks, t);
	}

	if (tasks == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no partition of %s lies in [%s, %s)", BackfillQualifiedName(relid), lotext, hitext),
				 errhint("Create the partitions first, or check the range.")));

	sort_cmp = cmp;
	sort_coll = coll;
	list_sort(tasks, CompareTasks);

	CheckTasksTile(relid, tasks, lo, hi, lotext, hitext, cmp, coll, keytype);
	table_close(rel, NoLock);
	return tasks;
}

/* Whether oid is in sorted, a list sorted by list_oid_cmp: a binary search. */
static bool
SortedOidMember(List *sorted, Oid oid)
{
	ListCell	key;

	key.oid_value = oid;
	return sorted != NIL &&
		bsearch(&key, sorted->elements, list_length(sorted), sizeof(ListCell),
				(int (*) (const void *, const void *)) list_oid_cmp) != NULL;
}

/*
 * The partitions outside the range that the run watches: all but those
 * options.unwatched names (each must be one of them), or with "newer" all
 * but those above the range's upper neighbour.
 */
static List *
WatchedPartitions(Oid relid, BackfillRunOptions *opts, List *outside, List *newer)
{
	List	   *unwatched = opts->unwatch_newer ? list_copy(newer) : NIL;
	List	   *sorted_outside = list_copy(outside);
	List	   *watched = NIL;
	ListCell   *lc;

	list_sort(sorted_outside, list_oid_cmp);
	foreach(lc, opts->unwatched)
	{
		char	   *name = (char *) lfirst(lc);
		Oid			part = UnwatchedName(name);

		CHECK_FOR_INTERRUPTS();
		if (!SortedOidMember(sorted_outside, part))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("options.unwatched names %s, not a partition of %s outside the range", name,
							BackfillQualifiedName(relid)),
					 errhint("Name partitions the run does not write, whose writes are not history (the current ones).")));
		unwatched = lappend_oid(unwatched, part);
	}
	list_sort(unwatched, list_oid_cmp);
	foreach(lc, outside)
		if (!SortedOidMember(unwatched, lfirst_oid(lc)))
			watched = lappend_oid(watched, lfirst_oid(lc));
	return watched;
}

/* A run replacing partitions that a publication replicates is refused now, not at its first task. */
static void
RefusePublishedTasks(Oid relid, List *tasks)
{
	ListCell   *lc;

	foreach(lc, tasks)
	{
		PlannedTask *t = lfirst(lc);

		CHECK_FOR_INTERRUPTS();
		BackfillRefusePublished(RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(t->partition)),
												 NoLock, false),
								BackfillQualifiedName(relid));
	}
}

/* The first value of a query we built with two text arguments, as text. */
static char *
QueryText2(const char *sql, const char *a, const char *b)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(a), CStringGetTextDatum(b)};

	return BackfillQueryTextArgs(sql, 2, types, values);
}

/* The tasks of a plain table: chunks of width chunk over [lo, hi). */
static List *
ChunkTasks(Oid type, const char *typname, const char *lotext, const char *hitext, const char *chunk)
{
	char		cat = TypeCategory(getBaseType(type));
	const char *step;
	char	   *next;
	char	   *less;
	char	   *at = (char *) lotext;
	List	   *tasks = NIL;

	if (cat == TYPCATEGORY_DATETIME)
		step = "pg_catalog.interval";
	else if (cat == TYPCATEGORY_NUMERIC)
		step = typname;
	else
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("options.window_column is of type %s, which cannot be cut into chunks",
						format_type_be(type)),
				 errhint("Use a date, timestamp or number column.")));
	(void) ReadValue(chunk, "options.chunk", cat == TYPCATEGORY_DATETIME ? INTERVALOID : getBaseType(type), -1);
	next = psprintf("SELECT CAST(CAST($1 AS %s) OPERATOR(pg_catalog.+) CAST($2 AS %s) AS %s)::pg_catalog.text",
					typname, step, typname);
	less = psprintf("SELECT (CAST($1 AS %s) OPERATOR(pg_catalog.<) CAST($2 AS %s))::pg_catalog.text",
					typname, typname);
	while (strcmp(QueryText2(less, at, hitext), "true") == 0)
	{
		PlannedTask *t = palloc0(sizeof(PlannedTask));
		char	   *n = QueryText2(next, at, chunk);

		CHECK_FOR_INTERRUPTS();
		if (n == NULL || strcmp(QueryText2(less, at, n), "true") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("options.chunk must be positive, not \"%s\"", chunk),
					 errdetail("%s plus %s is not after %s.", at, chunk, at)));
		if (strcmp(QueryText2(less, n, hitext), "true") != 0)
			n = (char *) hitext;
		t->lo = at;
		t->hi = n;
		tasks = lappend(tasks, t);
		if (list_length(tasks) > MAX_TASKS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("range [%s, %s) in chunks of %s makes more than %d tasks", lotext, hitext, chunk, MAX_TASKS),
					 errhint("Use a wider chunk.")));
		at = n;
	}
	return tasks;
}

/*
 * Is every column of the source a column of the target, and every key column
 * (and the window column, when given) in the source?
 */
static void
CheckSourceColumns(Oid relid, const char *bound, List *key, BackfillStrategy strategy,
				   const char *window_column)
{
	SPIPlanPtr	plan = BackfillPrepare(bound, 0, NULL, "source");
	TupleDesc	src;
	ListCell   *lc;

	BackfillCheckReadOnly(plan, "source");
	src = BackfillPlanResultDesc(plan);
	for (int i = 0; i < src->natts; i++)
	{
		const char *name = NameStr(TupleDescAttr(src, i)->attname);

		if (get_attnum(relid, name) <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("source column \"%s\" is not a column of %s", name, BackfillQualifiedName(relid)),
					 errhint("Columns are matched by name: rename it with AS, or leave it out.")));
	}
	if (window_column && BackfillFindColumn(src, window_column) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("source lacks the window column \"%s\"", window_column),
				 errdetail("Each task checks that the source's rows lie in its window.")));
	if (strategy == BACKFILL_STRATEGY_MERGE)
		foreach(lc, key)
			if (BackfillFindColumn(src, (char *) lfirst(lc)) < 0)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("source lacks key column \"%s\"", (char *) lfirst(lc))));
	SPI_freeplan(plan);
}

/* What a plan is asked for, and what it finds out about the target's window. */
typedef struct PlanRequest
{
	Oid			relid;
	bool		partitioned;
	char	   *lotext;			/* as given, then in ISO */
	char	   *hitext;
	const char *source;
	BackfillStrategy strategy;
	List	   *key;
	BackfillRunOptions opts;
	/* the window column: the partition key, or options.window_column */
	char	   *keyname;
	Oid			keytype;
	int32		keytypmod;
	Oid			keycoll;
	char	   *typname;		/* qualified, with its typmod */
	FmgrInfo	cmp;
} PlanRequest;

/* The arguments of backfill_plan, checked; the target opened and its owner checked. */
static void
PlanArgs(FunctionCallInfo fcinfo, PlanRequest *pr)
{
	const char *strategy;

	memset(pr, 0, sizeof(PlanRequest));
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("target must not be NULL")));
	pr->lotext = (char *) BackfillArgText(fcinfo, 1, "range_from");
	pr->hitext = (char *) BackfillArgText(fcinfo, 2, "range_to");
	pr->source = BackfillCheckQuery(BackfillArgText(fcinfo, 3, "source"), "source");
	strategy = BackfillArgText(fcinfo, 4, "strategy");
	if (strcmp(strategy, "append") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("strategy \"append\" is not a backfill strategy"),
				 errdetail("Appending a recomputed window adds a second copy of every row in it: every additive measure doubles, and no check fails."),
				 errhint("Use 'replace' (swap each partition) or 'merge' (on a key).")));
	pr->strategy = BackfillStrategyFromName(strategy);
	if (pr->strategy == BACKFILL_STRATEGY_OTHER)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("strategy must be %s, not \"%s\"",
						BackfillListed(BackfillNamesQuoted(&BackfillStrategyNames, '\''), " or "), strategy)));
	if (!PG_ARGISNULL(5) || pr->strategy == BACKFILL_STRATEGY_MERGE)
		pr->key = BackfillKeyArg(fcinfo, 5);
	if (PG_ARGISNULL(6))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("options must not be NULL"),
				 errhint("Pass '{}' for the defaults.")));
	PreventCommandIfReadOnly("backfill_plan()");
	BackfillRequireCoordinator("backfill_plan");

	pr->relid = BackfillOpenRelArg(fcinfo, 0, "target", BACKFILL_REL_TABLE | BACKFILL_REL_PARTITIONED,
								   AccessShareLock);
	if (!has_privs_of_role(GetUserId(), BackfillRelOwner(pr->relid)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to plan a run on it", BackfillQualifiedName(pr->relid)),
				 errhint("%s", BackfillOwnerHint(pr->relid))));
	pr->partitioned = get_rel_relkind(pr->relid) == RELKIND_PARTITIONED_TABLE;
}

/* The window column: the partition key (RANGE on one column), or options.window_column. */
static void
PlanWindowColumn(PlanRequest *pr)
{
	Oid			relid = pr->relid;

	if (pr->partitioned)
	{
		Relation	rel = table_open(relid, NoLock);
		PartitionKey pk = RelationGetPartitionKey(rel);

		if (pk->strategy != PARTITION_STRATEGY_RANGE || pk->partnatts != 1 || pk->partattrs[0] == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot plan a run on %s: it is not partitioned by RANGE on one column",
							BackfillQualifiedName(relid)),
					 errdetail("A run cuts a range of one column into tasks.")));
		pr->keytype = pk->parttypid[0];
		pr->keytypmod = pk->parttypmod[0];
		pr->keycoll = pk->partcollation[0];
		pr->keyname = get_attname(relid, pk->partattrs[0], false);
		fmgr_info_copy(&pr->cmp, &pk->partsupfunc[0], CurrentMemoryContext);
		table_close(rel, NoLock);
		if (pr->opts.window_column && strcmp(pr->opts.window_column, pr->keyname) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("options.window_column must be the partition key \"%s\" of %s, not \"%s\"",
							pr->keyname, BackfillQualifiedName(relid), pr->opts.window_column)));
	}
	else
	{
		AttrNumber	attnum = get_attnum(relid, pr->opts.window_column);
		TypeCacheEntry *tce;

		if (attnum <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("options.window_column \"%s\" is not a column of %s",
							pr->opts.window_column, BackfillQualifiedName(relid))));
		get_atttypetypmodcoll(relid, attnum, &pr->keytype, &pr->keytypmod, &pr->keycoll);
		pr->keyname = pr->opts.window_column;
		tce = lookup_type_cache(pr->keytype, TYPECACHE_CMP_PROC_FINFO);
		if (!OidIsValid(tce->cmp_proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("options.window_column \"%s\" has type %s, which has no ordering",
							pr->keyname, format_type_be(pr->keytype))));
		fmgr_info_copy(&pr->cmp, &tce->cmp_proc_finfo, CurrentMemoryContext);
	}
	pr->typname = format_type_extended(pr->keytype, pr->keytypmod,
									   FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY);
}

/*
 * The tasks of the range (read in the session's formats, kept in ISO), and
 * into untouched the fingerprints of what lies outside it.
 */
static List *
PlanTasks(PlanRequest *pr, StringInfo untouched)
{
	Datum		lo = ReadValue(pr->lotext, "range_from", pr->keytype, pr->keytypmod);
	Datum		hi = ReadValue(pr->hitext, "range_to", pr->keytype, pr->keytypmod);
	int			nest = PinFormats();
	List	   *tasks;

	pr->lotext = WriteValue(lo, pr->keytype);
	pr->hitext = WriteValue(hi, pr->keytype);
	if (DatumGetInt32(FunctionCall2Coll(&pr->cmp, pr->keycoll, lo, hi)) >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("range_from (%s) must be less than range_to (%s)", pr->lotext, pr->hitext),
				 errdetail("The range is [range_from, range_to): range_from is in it, range_to is not.")));

	appendStringInfoChar(untouched, '[');
	if (pr->partitioned)
	{
		List	   *outside;
		List	   *newer;
		List	   *watched;

		tasks = PartitionTasks(pr->relid, lo, hi, pr->lotext, pr->hitext, &pr->cmp, pr->keycoll, pr->keytype,
							   pr->strategy != BACKFILL_STRATEGY_MERGE, &outside, &newer);
		watched = WatchedPartitions(pr->relid, &pr->opts, outside, newer);
		if (pr->opts.untouched_check != BACKFILL_UNTOUCHED_OFF)
			BackfillOutsidePartitions(watched, pr->opts.untouched_check, untouched);
	}
	else
	{
		tasks = ChunkTasks(pr->keytype, pr->typname, pr->lotext, pr->hitext, pr->opts.chunk);
		if (pr->opts.untouched_check != BACKFILL_UNTOUCHED_OFF)
			appendStringInfoString(untouched,
								   BackfillOutsideRows(pr->relid,
													   psprintf("NOT COALESCE(%s, false)",
																BackfillWindowScope(pr->keyname, pr->typname,
																					pr->lotext, pr->hitext, NULL))));
	}
	appendStringInfoChar(untouched, ']');
	AtEOXact_GUC(true, nest);
	/* a swap of a published partition would not replicate ('auto' may swap) */
	if (pr->partitioned && pr->strategy != BACKFILL_STRATEGY_MERGE)
		RefusePublishedTasks(pr->relid, tasks);
	return tasks;
}

/* Write the run and its tasks, as the owner of the state tables; returns the run's id. */
static int64
WriteRun(Oid extschema, PlanRequest *pr, List *tasks, const char *pinned, const char *dependents,
		 const char *untouched)
{
	const char *schema = quote_identifier(get_namespace_name(extschema));
	Oid			types[14] = {NAMEOID, TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, TEXTOID, TEXTOID,
	TEXTOID, TEXTOID, JSONBOID, JSONBOID, JSONBOID, JSONBOID, OIDOID};
	Datum		values[14];
	char		nulls[14];
	int			rc;
	bool		isnull;
	int64		runid;
	ListCell   *lc;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = DirectFunctionCall1(namein, CStringGetDatum(GetUserNameFromId(GetUserId(), false)));
	values[1] = CStringGetTextDatum(BackfillQualifiedName(pr->relid));
	values[2] = CStringGetTextDatum(BackfillStrategyName(pr->strategy));
	values[3] = CStringGetTextDatum(pr->source);
	if (pr->key != NIL)
		values[4] = BackfillTextArray(pr->key);
	else
		nulls[4] = 'n';
	values[5] = CStringGetTextDatum(pr->keyname);
	values[6] = CStringGetTextDatum(pr->typname);
	values[7] = CStringGetTextDatum(pr->lotext);
	values[8] = CStringGetTextDatum(pr->hitext);
	values[9] = DirectFunctionCall1(jsonb_in, CStringGetDatum(pr->opts.normalized));
	values[10] = DirectFunctionCall1(jsonb_in, CStringGetDatum(pinned));
	values[11] = DirectFunctionCall1(jsonb_in, CStringGetDatum(dependents));
	values[12] = DirectFunctionCall1(jsonb_in, CStringGetDatum(untouched));
	values[13] = ObjectIdGetDatum(pr->relid);
	rc = BackfillStateExec(extschema,
						   psprintf("INSERT INTO %s.backfill_runs_data (planned_by, target, strategy, source, key,"
									" window_column, window_type, range_from, range_to, options, pinned,"
									" dependents, untouched, status, target_oid)"
									" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'planned', $14)"
									" RETURNING id", schema),
						   14, types, values, nulls, 1);
	if (rc != SPI_OK_INSERT_RETURNING || SPI_processed != 1)
		elog(ERROR, "could not write to backfill_runs: %s", SPI_result_code_string(rc));
	runid = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	foreach(lc, tasks)
	{
		PlannedTask *t = lfirst(lc);
		Oid			ttypes[5] = {INT8OID, INT4OID, TEXTOID, TEXTOID, TEXTOID};
		Datum		tvalues[5];
		char		tnulls[5] = {' ', ' ', ' ', ' ', ' '};

		tvalues[0] = Int64GetDatum(runid);
		tvalues[1] = Int32GetDatum(foreach_current_index(lc) + 1);
		if (t->partition)
			tvalues[2] = CStringGetTextDatum(t->partition);
		else
			tnulls[2] = 'n';
		tvalues[3] = CStringGetTextDatum(t->lo);
		tvalues[4] = CStringGetTextDatum(t->hi);
		rc = BackfillStateExec(extschema,
							   psprintf("INSERT INTO %s.backfill_tasks_data (run_id, task, partition, range_from, range_to)"
										" VALUES ($1, $2, $3, $4, $5)", schema),
							   5, ttypes, tvalues, tnulls, 0);
		if (rc != SPI_OK_INSERT)
			elog(ERROR, "could not write to backfill_tasks: %s", SPI_result_code_string(rc));
	}
	return runid;
}

/*
 * options.source_server: a standby of this server the planning role may
 * read on (connected to and checked now, and again by each task); not for
 * a Citus table.
 */
static void
CheckSourceServer(PlanRequest *pr)
{
	if (pr->opts.source_server == NULL)
		return;
	BackfillRefuseRemoteSource(pr->relid);
	BackfillRemoteCheck(pr->opts.source_server, "options.source_server", false);
}

/*
 * The disk the run's replacements need at their peak: a new copy of each
 * partition beside the old one until its task commits (a copy about as big
 * as what it replaces), the max_workers largest at once.  Refused above
 * options.max_disk_bytes (53100); a NOTICE when the file system of the
 * target's tablespace has less free.  A merge writes in place: no copy.
 */
static void
CheckDiskPeak(PlanRequest *pr, List *tasks)
{
	int			workers = pr->opts.max_workers;
	int64	   *top = palloc0(sizeof(int64) * workers);
	int64		peak = 0;
	int64		free;
	ListCell   *lc;

	if (!pr->partitioned || pr->strategy == BACKFILL_STRATEGY_MERGE)
		return;
	foreach(lc, tasks)
	{
		PlannedTask *t = (PlannedTask *) lfirst(lc);
		Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(t->partition)),
											 NoLock, true);
		int64		heap,
					toast,
					indexes,
					bytes;

		CHECK_FOR_INTERRUPTS();
		if (!OidIsValid(relid))
			continue;
		BackfillRelationBytes(relid, &heap, &toast, &indexes);
		bytes = heap + toast + indexes;
		/* keep the largest: top[] is sorted, largest first */
		for (int i = 0; i < workers; i++)
			if (bytes > top[i])
			{
				int64		tmp = top[i];

				top[i] = bytes;
				bytes = tmp;
			}
	}
	for (int i = 0; i < workers; i++)
		peak += top[i];
	if (pr->opts.max_disk_bytes > 0 && peak > pr->opts.max_disk_bytes)
		ereport(ERROR,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("the run would need about " INT64_FORMAT " bytes of disk at its peak, above options.max_disk_bytes (" INT64_FORMAT ")",
						peak, pr->opts.max_disk_bytes),
				 errdetail("A replacement builds a new copy of its partition beside the old one until it commits; the %d largest partitions of the range (max_workers %d) hold " INT64_FORMAT " bytes.",
						   workers, workers, peak),
				 errhint("Raise options.max_disk_bytes, lower options.max_workers, or make room; backfill_estimate measures it.")));
	free = BackfillFreeBytes(pr->relid);
	if (free >= 0 && free < peak)
		ereport(NOTICE,
				(errmsg("the run would need about " INT64_FORMAT " bytes of disk at its peak; " INT64_FORMAT " are free where its target lies",
						peak, free)));
}

PG_FUNCTION_INFO_V1(backfill_plan);

/*
 * backfill_plan(target regclass, range_from text, range_to text, source text,
 *				 strategy text, key text[], options jsonb) RETURNS bigint
 */
Datum
backfill_plan(PG_FUNCTION_ARGS)
{
	Oid			extschema = BackfillExtensionSchema(fcinfo);
	PlanRequest pr;
	List	   *tasks;
	StringInfoData untouched;
	char	   *firstbound;
	char	   *pinned;
	char	   *dependents;
	int			nest;
	int64		runid;

	BackfillCheckVersion();
	PlanArgs(fcinfo, &pr);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	BackfillParseRunOptions(DatumGetCString(DirectFunctionCall1(jsonb_out, PG_GETARG_DATUM(6))),
							pr.partitioned, &pr.opts);
	PlanWindowColumn(&pr);
	initStringInfo(&untouched);
	tasks = PlanTasks(&pr, &untouched);

	/* the source, as the first task will run it */
	firstbound = BackfillBindWindow(pr.source, pr.typname, ((PlannedTask *) linitial(tasks))->lo,
									((PlannedTask *) linitial(tasks))->hi);
	if (pr.key != NIL)
		(void) BackfillCheckKeyTypes(pr.relid, pr.key, BackfillRelColumns(pr.relid, pr.key, "key"));
	CheckSourceColumns(pr.relid, firstbound, pr.key, pr.strategy,
					   (!pr.partitioned || pr.strategy == BACKFILL_STRATEGY_MERGE) ? pr.keyname : NULL);
	BackfillThrottleCheck(&pr.opts.throttle, GetUserId(), pr.opts.search_path, extschema);
	CheckSourceServer(&pr);
	CheckDiskPeak(&pr, tasks);
	pinned = BackfillPinnedObjects(firstbound, pr.opts.search_path);
	nest = BackfillPinSearchPath();
	dependents = Dependents(pr.relid);
	BackfillUnpinSearchPath(nest);

	runid = WriteRun(extschema, &pr, tasks, pinned, dependents, untouched.data);
	SPI_finish();
	PG_RETURN_INT64(runid);
}
