/*-------------------------------------------------------------------------
 *
 * src/hash/fpscan.c
 *		Fingerprinting a whole table by scanning it directly, with parallel
 *		workers when parallel query is allowed.
 *
 * The fingerprint of a whole table needs nothing of a query: every row of
 * the table's storage, on the snapshot the query would read, hashed.  So
 * when no scope limits the rows and nothing stands between a query and the
 * storage (no row-level security applies, no foreign or Citus table, the
 * caller may read the whole table and use its schema), the rows are read by
 * a table scan of their own, partition by partition, and hashed straight
 * from the scan's slot: no executor node, no projection, no call per row
 * through an aggregate.  Anything else is fingerprinted by a query, as
 * before (fingerprint.c), so what a fingerprint shows, and who may take it,
 * do not depend on the way it is read.
 *
 * A probe's reads of a scope's partitions, split by the scope, are read the
 * same way when the scope is a plain expression over the row (no subquery,
 * aggregate, set-returning function or whole-row reference): the scope is
 * parsed over each partition, as the query on the parent would bind it, and
 * run on the scan's slot.
 *
 * When parallel query is allowed and the table is large enough for the
 * planner to give a scan of it workers, the scan is parallel: a parallel
 * context, as CREATE INDEX uses for a parallel build, whose workers and the
 * leader take blocks of each partition in turn from a parallel scan shared
 * between them, each summing the hashes of the rows it read; the leader
 * adds the sums.  Sums do not depend on which process read which row, so
 * the fingerprint is exactly the serial one.  The number of workers is the
 * one the planner would give a scan of that many pages.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "parser/parse_coerce.h"
#include "parser/parse_collate.h"
#include "parser/parse_expr.h"
#include "parser/parse_relation.h"
#include "parser/parser.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/spin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/relation.h"
#include "hash/fpscan.h"
#include "hash/rowhash.h"

/* The key of the shared state in a parallel fingerprint's table of contents. */
#define FPSCAN_KEY_SHARED	UINT64CONST(0xB4C4F111F1A60001)

/* One relation a parallel fingerprint reads, and where its parallel scan is. */
typedef struct ScanRel
{
	Oid			relid;
	Size		pscan_off;		/* from the start of ScanShared, buffer-aligned
								 * (its pg_atomic_uint64 needs 8 bytes) */
} ScanRel;

/* What the leader and the workers of a parallel fingerprint share. */
typedef struct ScanShared
{
	slock_t		mutex;
	uint64		rows;			/* the sums of every participant that ended */
	uint64		sum1;
	uint64		sum2;
	int			nrels;
	ScanRel		rels[FLEXIBLE_ARRAY_MEMBER];	/* then the parallel scans */
} ScanShared;

/* What one participant has read: a hasher kept from relation to relation. */
typedef struct Participant
{
	BackfillRowHasher *hasher;
	TupleDesc	hashdesc;		/* the columns hasher was made for */
	BackfillFingerprint sums;
} Participant;

PGDLLEXPORT void backfill_fingerprint_worker(dsm_segment *seg, shm_toc *toc);

/*
 * Whether the caller may read relid whole without a query standing between,
 * as a query on via would read it (via is relid, or a partitioned table
 * relid is a partition of): SELECT on via (on the whole table, not only on
 * some columns), USAGE on its schema, no row-level security of via applying
 * to the caller, no module checking a query's rights on its own (sepgsql, an
 * audit log: ExecutorCheckPerms_hook), and no Citus, which keeps a
 * distributed table's rows elsewhere.  Otherwise the query path decides, and
 * raises the error a query would.
 */
static bool
MayScanDirectly(Oid via, Oid relid)
{
	char		relkind = get_rel_relkind(relid);
	Oid			user = GetUserId();

	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		return false;
	if (ExecutorCheckPerms_hook != NULL || BackfillCitusPresent())
		return false;
	return pg_class_aclcheck(via, user, ACL_SELECT) == ACLCHECK_OK &&
		BackfillSchemaAclCheck(get_rel_namespace(via), user, ACL_USAGE) == ACLCHECK_OK &&
		check_enable_rls(via, InvalidOid, true) != RLS_ENABLED;
}

/*
 * Whether a scan of rel's storage gives the rows a query gives: a heap (other
 * access methods may not scan in parallel), with every column stored (from
 * 18, a virtual generated column is computed by the query, stored as NULL),
 * and not an unlogged table on a standby, which has no storage there.
 */
static bool
ScanGivesRows(Relation rel)
{
	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		return false;
	if (RecoveryInProgress() && !RelationIsPermanent(rel))
		return false;
#ifdef BACKFILL_HAVE_VIRTUAL_GENERATED_COLUMNS
	for (int i = 0; i < RelationGetDescr(rel)->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), i);

		if (!att->attisdropped && att->attgenerated == ATTRIBUTE_GENERATED_VIRTUAL)
			return false;
	}
#endif
	return true;
}

/*
 * The relations holding relid's rows, opened: relid itself, or every
 * partition of it that has storage, found as a query on the active snapshot
 * finds them (a partition being detached concurrently counts while that
 * snapshot sees it attached).  False, with nothing left open, when a scan of
 * one of them would not give what a query gives (ScanGivesRows; a foreign
 * partition): a query reads them.
 */
static bool
OpenScanRels(Oid relid, List **rels)
{
	List	   *oids;
	ListCell   *lc;

	*rels = NIL;
	oids = get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE
		? find_all_inheritors(relid, AccessShareLock, NULL) : list_make1_oid(relid);
	foreach(lc, oids)
	{
		Relation	rel;

		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_PARTITIONED_TABLE)
			continue;
		rel = table_open(lfirst_oid(lc), AccessShareLock);
		*rels = lappend(*rels, rel);
		if (!ScanGivesRows(rel))
		{
			ListCell   *opened;

			foreach(opened, *rels)
				table_close((Relation) lfirst(opened), NoLock);
			*rels = NIL;
			return false;
		}
	}
	return true;
}

/*
 * How many workers to ask for: none if parallel query is off, we are in a
 * parallel operation already, or a relation is temporary (workers cannot
 * read it); otherwise what the planner gives a parallel scan of a table of
 * that many pages, all partitions counted together (one from
 * min_parallel_table_scan_size, one more each time the size triples), or a
 * single table's parallel_workers setting, at most
 * max_parallel_workers_per_gather.
 */
static int
ScanWorkers(List *rels)
{
	double		pages = 0;
	int			workers = 1;
	double		threshold = Max(min_parallel_table_scan_size, 1);
	ListCell   *lc;

	if (max_parallel_workers_per_gather <= 0 || IsInParallelMode() ||
		!IsUnderPostmaster || rels == NIL)
		return 0;
	foreach(lc, rels)
	{
		Relation	rel = (Relation) lfirst(lc);

		if (RelationUsesLocalBuffers(rel))
			return 0;
		pages += RelationGetNumberOfBlocks(rel);
	}
	if (list_length(rels) == 1 && RelationGetParallelWorkers((Relation) linitial(rels), -1) >= 0)
		return Min(RelationGetParallelWorkers((Relation) linitial(rels), -1),
				   max_parallel_workers_per_gather);
	if (pages < min_parallel_table_scan_size)
		return 0;
	while (pages >= threshold * 3)
	{
		workers++;
		threshold *= 3;
	}
	return Min(workers, max_parallel_workers_per_gather);
}

/* Add the rows scan returns to p's sums. */
static void
ScanRows(Participant *p, Relation rel, TableScanDesc scan)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TupleTableSlot *slot = table_slot_create(rel, NULL);

	if (p->hasher == NULL || !BackfillSameColumns(p->hashdesc, desc))
	{
		p->hasher = BackfillRowHasherCreate(desc, desc->natts, NULL);
		p->hashdesc = CreateTupleDescCopy(desc);
	}
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		uint64		h = BackfillHashRow(p->hasher, slot);

		CHECK_FOR_INTERRUPTS();
		p->sums.rows++;
		p->sums.sum1 += h;
		p->sums.sum2 += BackfillFingerprintLane2(h);
	}
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * Take part in a parallel fingerprint: read blocks of each relation from its
 * shared parallel scan until none is left, then add the sums to the shared
 * ones.  rels are the relations opened, or NIL (a worker) to open them.
 */
static void
Participate(ScanShared *shared, List *rels)
{
	Participant p;

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < shared->nrels; i++)
	{
		Relation	rel = rels ? (Relation) list_nth(rels, i)
			: table_open(shared->rels[i].relid, AccessShareLock);
		ParallelTableScanDesc pscan = (ParallelTableScanDesc)
			((char *) shared + shared->rels[i].pscan_off);
		TableScanDesc scan = table_beginscan_parallel(rel, pscan);

		ScanRows(&p, rel, scan);
		table_endscan(scan);
		if (rels == NIL)
			table_close(rel, AccessShareLock);
	}
	SpinLockAcquire(&shared->mutex);
	shared->rows += p.sums.rows;
	shared->sum1 += p.sums.sum1;
	shared->sum2 += p.sums.sum2;
	SpinLockRelease(&shared->mutex);
}

/*
 * Entry point of a parallel fingerprint's workers: the leader's snapshot,
 * user, settings and locks are in place (ParallelWorkerMain).
 */
void
backfill_fingerprint_worker(dsm_segment *seg, shm_toc *toc)
{
	ScanShared *shared = shm_toc_lookup(toc, FPSCAN_KEY_SHARED, false);

	Participate(shared, NIL);
}

/*
 * Read rels with up to nworkers workers beside the leader, into fp.  False,
 * having read nothing, when no shared memory could be had for them.
 */
static bool
ScanParallel(List *rels, Snapshot snap, int nworkers, BackfillFingerprint *fp)
{
	ParallelContext *pcxt;
	ScanShared *shared;
	Size		size = BUFFERALIGN(offsetof(ScanShared, rels) + sizeof(ScanRel) * list_length(rels));
	Size		off = size;
	bool		leader;
	ListCell   *lc;

	foreach(lc, rels)
		size = add_size(size, BUFFERALIGN(table_parallelscan_estimate((Relation) lfirst(lc), snap)));

	EnterParallelMode();
	pcxt = CreateParallelContext("backfill", "backfill_fingerprint_worker", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, size);
	shm_toc_estimate_keys(&pcxt->estimator, 1);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return false;
	}

	shared = shm_toc_allocate(pcxt->toc, size);
	SpinLockInit(&shared->mutex);
	shared->rows = shared->sum1 = shared->sum2 = 0;
	shared->nrels = list_length(rels);
	foreach(lc, rels)
	{
		Relation	rel = (Relation) lfirst(lc);
		ScanRel    *sr = &shared->rels[foreach_current_index(lc)];

		sr->relid = RelationGetRelid(rel);
		sr->pscan_off = off;
		table_parallelscan_initialize(rel, (ParallelTableScanDesc) ((char *) shared + off), snap);
		off += BUFFERALIGN(table_parallelscan_estimate(rel, snap));
	}
	shm_toc_insert(pcxt->toc, FPSCAN_KEY_SHARED, shared);

	LaunchParallelWorkers(pcxt);
	/* like a Gather: the leader reads too, unless told not to and a worker runs */
	leader = parallel_leader_participation || pcxt->nworkers_launched == 0;
	ereport(DEBUG1,
			(errmsg_internal("backfill_fingerprint: %d of %d parallel workers started, %s",
							 pcxt->nworkers_launched, nworkers,
							 leader ? "the leader reading too" : "the leader only waiting")));
	if (leader)
		Participate(shared, rels);
	WaitForParallelWorkersToFinish(pcxt);

	fp->rows = shared->rows;
	fp->sum1 = shared->sum1;
	fp->sum2 = shared->sum2;
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return true;
}

/* Read rels in this process alone, into fp. */
static void
ScanSerial(List *rels, Snapshot snap, BackfillFingerprint *fp)
{
	Participant p;
	ListCell   *lc;

	memset(&p, 0, sizeof(p));
	foreach(lc, rels)
	{
		Relation	rel = (Relation) lfirst(lc);
		TableScanDesc scan = table_beginscan(rel, snap, 0, NULL);

		ScanRows(&p, rel, scan);
		table_endscan(scan);
	}
	*fp = p.sums;
}

/*
 * Fingerprint all rows of relid (all its partitions' for a partitioned
 * table, only its own otherwise) by scanning them directly, into fp
 * (unsealed), if nothing calls for a query instead (see MayScanDirectly),
 * with the rights the caller needs to read them through via (relid itself,
 * or a table relid is a partition of); false, having read nothing, if
 * something does.  The snapshot is the one BackfillFingerprintRel's query
 * would read: the caller's (read_only), or a new one that sees the
 * transaction's own earlier writes.
 */
bool
BackfillFingerprintScan(Oid via, Oid relid, bool read_only, BackfillFingerprint *fp)
{
	MemoryContext cxt;
	MemoryContext old;
	List	   *rels;
	ListCell   *lc;
	Snapshot	snap;
	bool		done = false;

	if (!MayScanDirectly(via, relid))
		return false;

	/* the relations first, locked as a query's planning locks them */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "backfill fingerprint scan",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	if (OpenScanRels(relid, &rels))
	{
		int			nworkers = ScanWorkers(rels);

		/* then the snapshot, as SPI takes it to run that query */
		if (read_only && ActiveSnapshotSet())
			PushActiveSnapshot(GetActiveSnapshot());
		else
			PushActiveSnapshot(GetTransactionSnapshot());
		if (!read_only)
		{
			CommandCounterIncrement();
			UpdateActiveSnapshotCommandId();
		}
		snap = GetActiveSnapshot();

		memset(fp, 0, sizeof(*fp));
		if (nworkers == 0 || !ScanParallel(rels, snap, nworkers, fp))
			ScanSerial(rels, snap, fp);
		PopActiveSnapshot();
		foreach(lc, rels)
			table_close((Relation) lfirst(lc), NoLock);
		done = true;
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return done;
}

/* Whether a raw expression names a column through its schema (schema.table.column). */
static bool
NamesThroughSchema(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, ColumnRef) && list_length(((ColumnRef *) node)->fields) >= 3)
		return true;
	return raw_expression_tree_walker(node, NamesThroughSchema, context);
}

/*
 * COALESCE((scope), false) over the rows of rel, bound as a query on via
 * (rel, or a table it is a partition of) binds it, ready to run on a slot of
 * rel's; NULL when only a query can run it: a subquery, an aggregate, a
 * window or set-returning function, a whole-row reference, a column named
 * through its schema.  Its functions' EXECUTE rights are checked as a query
 * checks them, when the expression is made ready.
 */
static ExprState *
ScopeOverRel(Oid via, Relation rel, const char *scope)
{
	List	   *raw = raw_parser(psprintf("SELECT COALESCE(((\n%s\n)), false)", scope), RAW_PARSE_DEFAULT);
	SelectStmt *sel;
	ParseState *pstate;
	Node	   *expr;
	Bitmapset  *attrs = NULL;
	bool		plain;

	sel = list_length(raw) == 1 && IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt)
		? (SelectStmt *) linitial_node(RawStmt, raw)->stmt : NULL;
	if (sel == NULL || list_length(sel->targetList) != 1 || sel->fromClause != NIL ||
		sel->whereClause != NULL || sel->op != SETOP_NONE)
		return NULL;
	expr = linitial_node(ResTarget, sel->targetList)->val;
	if (NamesThroughSchema(expr, NULL))
		return NULL;

	pstate = make_parsestate(NULL);
	addNSItemToQuery(pstate,
					 addRangeTableEntryForRelation(pstate, rel, AccessShareLock,
												   makeAlias(get_rel_name(via), NIL), false, true),
					 false, true, true);
	expr = transformExpr(pstate, expr, EXPR_KIND_SELECT_TARGET);
	plain = !pstate->p_hasSubLinks && !pstate->p_hasAggs && !pstate->p_hasWindowFuncs &&
		!pstate->p_hasTargetSRFs;
	if (plain)
	{
		expr = coerce_to_boolean(pstate, expr, "scope");
		assign_expr_collations(pstate, expr);
		pull_varattnos(expr, 1, &attrs);
		plain = !bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs);
	}
	free_parsestate(pstate);
	return plain ? ExecInitExpr(expression_planner((Expr *) expr), NULL) : NULL;
}

/* Add the rows of rel on snap to inside where scope holds for them, else to outside. */
static void
ScanSplitRows(Participant *p, Relation rel, ExprState *scope, Snapshot snap,
			  BackfillFingerprint *inside, BackfillFingerprint *outside)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	ExprContext *econtext = CreateStandaloneExprContext();
	TableScanDesc scan = table_beginscan(rel, snap, 0, NULL);

	if (p->hasher == NULL || !BackfillSameColumns(p->hashdesc, desc))
	{
		p->hasher = BackfillRowHasherCreate(desc, desc->natts, NULL);
		p->hashdesc = CreateTupleDescCopy(desc);
	}
	econtext->ecxt_scantuple = slot;
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		uint64		h = BackfillHashRow(p->hasher, slot);
		bool		isnull;
		BackfillFingerprint *fp;

		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		fp = DatumGetBool(ExecEvalExprSwitchContext(scope, econtext, &isnull)) && !isnull
			? inside : outside;
		fp->rows++;
		fp->sum1 += h;
		fp->sum2 += BackfillFingerprintLane2(h);
	}
	table_endscan(scan);
	FreeExprContext(econtext, true);
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * Add the rows of the tables parts (via itself, or partitions of it) on the
 * active snapshot to inside where scope holds for them and to outside where
 * it does not, by scanning them directly, as BackfillFingerprintSplit's query
 * on via would split them; false, having added nothing, if something calls
 * for that query instead (see MayScanDirectly and ScopeOverRel).
 */
bool
BackfillFingerprintScanSplit(Oid via, List *parts, const char *scope,
							 BackfillFingerprint *inside, BackfillFingerprint *outside)
{
	MemoryContext cxt;
	MemoryContext old;
	List	   *rels = NIL;
	List	   *states = NIL;
	ListCell   *lc;
	bool		done = true;

	LockRelationOid(via, AccessShareLock);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "backfill fingerprint split",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	/* every table and its scope first, so that nothing is added unless all can be read */
	foreach(lc, parts)
	{
		Relation	rel;
		ExprState  *state = NULL;

		if (!(done = MayScanDirectly(via, lfirst_oid(lc))))
			break;
		rel = table_open(lfirst_oid(lc), AccessShareLock);
		rels = lappend(rels, rel);
		if (!(done = ScanGivesRows(rel) && (state = ScopeOverRel(via, rel, scope)) != NULL))
			break;
		states = lappend(states, state);
	}
	if (done)
	{
		Participant p;
		ListCell   *sc;

		memset(&p, 0, sizeof(p));
		forboth(lc, rels, sc, states)
			ScanSplitRows(&p, (Relation) lfirst(lc), (ExprState *) lfirst(sc),
						  GetActiveSnapshot(), inside, outside);
	}
	foreach(lc, rels)
		table_close((Relation) lfirst(lc), NoLock);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return done;
}
