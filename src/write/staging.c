/*-------------------------------------------------------------------------
 *
 * src/write/staging.c
 *		A faithful copy of a partition's definition, filled with frozen rows.
 *
 * The staging table is created in the caller's transaction with LIKE ...
 * INCLUDING ALL (columns, types, collations, defaults, NOT NULL and CHECK
 * constraints, indexes, storage, compression, comments, statistics), plus
 * what LIKE leaves out: storage parameters, tablespace, persistence, owner,
 * grants, the table comment, the partition's own triggers and its foreign
 * keys, and a CHECK constraint equal to the partition constraint so that
 * ATTACH has nothing to scan.
 *
 * Rows from the source are inserted frozen (TABLE_INSERT_FROZEN), in
 * batches through table_multi_insert, as COPY FREEZE does: the table was
 * created in this very (sub)transaction, so
 * if it aborts the table goes with its rows, and once it commits the rows
 * are visible to every snapshot, including that of a REPEATABLE READ
 * transaction that began before the swap.  A plain INSERT would leave such a
 * reader an empty partition, the new rows being too young for its snapshot.
 * Batches go to heap_multi_insert, which marks each page it starts filling
 * all-visible and all-frozen, in the page and in the visibility map: the new
 * partition needs no VACUUM, and index-only scans of it never read the heap.
 * NOT NULL and CHECK constraints are enforced per row (ExecConstraints);
 * indexes are built in bulk after the fill (REINDEX), which also proves the
 * unique ones; foreign keys are added, and so validated, after the fill.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_attrdef.h"
#include "access/genam.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "catalog/storage.h"
#include "commands/comment.h"
#include "commands/defrem.h"
#include "commands/tablespace.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/nodeModifyTable.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "portability/instr_time.h"
#include "parser/parse_coerce.h"
#include "rewrite/prs2lock.h"
#include "rewrite/rewriteHandler.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "hash/fingerprint.h"
#include "hash/rowhash.h"
#include "write/assign.h"
#include "write/part.h"
#include "write/context.h"
#include "write/lockproto.h"
#include "write/staging.h"

/* The throttle of the write replacing bp, or NULL. */
static BackfillThrottleState *
WriteThrottle(BackfillPart *bp)
{
	return bp->ctx ? bp->ctx->throttle : NULL;
}

/* ", WITH (a = 'b', ...)" for the storage parameters of relid, or "". */
static char *
StorageClause(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		isnull;
	Datum		opts;
	StringInfoData buf;
	ListCell   *lc;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	initStringInfo(&buf);
	for (int pass = 0; pass < 2; pass++)
	{
		/* the table's own options, then its TOAST table's as toast.x */
		Oid			rel = pass == 0 ? relid : ((Form_pg_class) GETSTRUCT(tup))->reltoastrelid;
		HeapTuple	t = pass == 0 ? tup : SearchSysCache1(RELOID, ObjectIdGetDatum(rel));

		if (!OidIsValid(rel) || !HeapTupleIsValid(t))
			continue;
		opts = SysCacheGetAttr(RELOID, t, Anum_pg_class_reloptions, &isnull);
		if (!isnull)
		{
			foreach(lc, untransformRelOptions(opts))
			{
				DefElem    *def = lfirst_node(DefElem, lc);

				appendStringInfo(&buf, "%s%s%s = %s", buf.len == 0 ? " WITH (" : ", ",
								 pass == 0 ? "" : "toast.", quote_identifier(def->defname),
								 quote_literal_cstr(def->arg ? defGetString(def) : "true"));
			}
		}
		if (pass == 1)
			ReleaseSysCache(t);
	}
	ReleaseSysCache(tup);
	if (buf.len > 0)
		appendStringInfoChar(&buf, ')');
	return buf.len > 0 ? buf.data : "";
}

/* Set relacl of dst to that of src, with the role dependencies that go with it. */
static void
CopyTableAcl(Oid src, Oid dst)
{
	Relation	classrel = table_open(RelationRelationId, RowExclusiveLock);
	HeapTuple	stup = SearchSysCache1(RELOID, ObjectIdGetDatum(src));
	HeapTuple	dtup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(dst));
	Datum		sacl;
	Datum		dacl;
	bool		snull;
	bool		dnull;
	Datum		values[Natts_pg_class] = {0};
	bool		nulls[Natts_pg_class] = {false};
	bool		repl[Natts_pg_class] = {false};
	HeapTuple	newtup;
	Oid		   *oldmembers = NULL;
	Oid		   *newmembers = NULL;
	int			nold = 0;
	int			nnew = 0;

	if (!HeapTupleIsValid(stup) || !HeapTupleIsValid(dtup))
		elog(ERROR, "cache lookup failed for relation %u or %u", src, dst);
	sacl = SysCacheGetAttr(RELOID, stup, Anum_pg_class_relacl, &snull);
	dacl = heap_getattr(dtup, Anum_pg_class_relacl, RelationGetDescr(classrel), &dnull);
	if (!dnull)
		nold = aclmembers(DatumGetAclP(dacl), &oldmembers);
	if (!snull)
		nnew = aclmembers(DatumGetAclP(sacl), &newmembers);

	repl[Anum_pg_class_relacl - 1] = true;
	nulls[Anum_pg_class_relacl - 1] = snull;
	values[Anum_pg_class_relacl - 1] = snull ? (Datum) 0 : PointerGetDatum(DatumGetAclPCopy(sacl));
	newtup = heap_modify_tuple(dtup, RelationGetDescr(classrel), values, nulls, repl);
	CatalogTupleUpdate(classrel, &newtup->t_self, newtup);
	updateAclDependencies(RelationRelationId, dst, 0, ((Form_pg_class) GETSTRUCT(dtup))->relowner,
						  nold, oldmembers, nnew, newmembers);
	ReleaseSysCache(stup);
	table_close(classrel, RowExclusiveLock);
	CommandCounterIncrement();
}

/*
 * One trigger of part, made again on staging from its catalog row: its
 * function by OID, its arguments, events, columns, transition tables and
 * WHEN clause (its columns mapped by name) as they are, with no text
 * rewritten: an argument or a literal holding the partition's name is kept.
 */
static void
CopyTrigger(Form_pg_trigger trig, HeapTuple tup, Relation tgrel, Relation part, Relation staging)
{
	CreateTrigStmt *stmt = makeNode(CreateTrigStmt);
	bool		isnull;
	Datum		value;
	Node	   *qual = NULL;

	stmt->trigname = pstrdup(NameStr(trig->tgname));
	stmt->isconstraint = OidIsValid(trig->tgconstraint);
	stmt->row = TRIGGER_FOR_ROW(trig->tgtype);
	stmt->timing = trig->tgtype & TRIGGER_TYPE_TIMING_MASK;
	stmt->events = trig->tgtype & TRIGGER_TYPE_EVENT_MASK;
	stmt->deferrable = trig->tgdeferrable;
	stmt->initdeferred = trig->tginitdeferred;
	for (int i = 0; i < trig->tgattr.dim1; i++)
		stmt->columns = lappend(stmt->columns,
								makeString(get_attname(RelationGetRelid(part), trig->tgattr.values[i], false)));
	value = heap_getattr(tup, Anum_pg_trigger_tgargs, RelationGetDescr(tgrel), &isnull);
	if (!isnull && trig->tgnargs > 0)
	{
		char	   *arg = (char *) VARDATA_ANY(DatumGetByteaPP(value));

		for (int i = 0; i < trig->tgnargs; i++, arg += strlen(arg) + 1)
			stmt->args = lappend(stmt->args, makeString(pstrdup(arg)));
	}
	for (int isnew = 0; isnew <= 1; isnew++)
	{
		value = heap_getattr(tup, isnew ? Anum_pg_trigger_tgnewtable : Anum_pg_trigger_tgoldtable,
							 RelationGetDescr(tgrel), &isnull);
		if (!isnull)
		{
			TriggerTransition *tt = makeNode(TriggerTransition);

			tt->name = pstrdup(NameStr(*DatumGetName(value)));
			tt->isNew = isnew;
			tt->isTable = true;
			stmt->transitionRels = lappend(stmt->transitionRels, tt);
		}
	}
	value = heap_getattr(tup, Anum_pg_trigger_tgqual, RelationGetDescr(tgrel), &isnull);
	if (!isnull)
	{
		qual = stringToNode(TextDatumGetCString(value));
		qual = (Node *) map_partition_varattnos((List *) qual, PRS2_OLD_VARNO, staging, part);
		qual = (Node *) map_partition_varattnos((List *) qual, PRS2_NEW_VARNO, staging, part);
	}
	(void) CreateTrigger(stmt, NULL, RelationGetRelid(staging), trig->tgconstrrelid, InvalidOid,
						 InvalidOid, trig->tgfoid, InvalidOid, qual, false, false);
	CommandCounterIncrement();
}

/* The partition's own triggers (not internal, not cloned from the parent), copied to staging. */
static void
CopyTriggers(Oid partid, Oid stagingid)
{
	Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);
	Relation	part = table_open(partid, NoLock);
	Relation	staging = table_open(stagingid, NoLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *tuples = NIL;
	ListCell   *lc;

	ScanKeyInit(&key, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(partid));
	scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_trigger trig = (Form_pg_trigger) GETSTRUCT(tup);

		if (!trig->tgisinternal && !OidIsValid(trig->tgparentid))
			tuples = lappend(tuples, heap_copytuple(tup));
	}
	systable_endscan(scan);
	/* created after the scan: each CreateTrigger changes pg_trigger */
	foreach(lc, tuples)
	{
		CHECK_FOR_INTERRUPTS();
		CopyTrigger((Form_pg_trigger) GETSTRUCT((HeapTuple) lfirst(lc)), lfirst(lc), tgrel, part, staging);
	}
	table_close(staging, NoLock);
	table_close(part, NoLock);
	table_close(tgrel, AccessShareLock);
}

/*
 * Create the staging table for bp beside the partition and return its OID.
 * Must be called inside SPI, with search_path pinned.
 */
Oid
BackfillCreateStaging(BackfillPart *bp)
{
	char	   *name = ChooseRelationName("backfill_stage", bp->name, psprintf("%u", bp->part),
											bp->nsp, false);
	char	   *qualname = quote_qualified_identifier(get_namespace_name(bp->nsp), name);
	char		persistence = get_rel_persistence(bp->part);
	Oid			spc = get_rel_tablespace(bp->part);
	Oid			owner = BackfillRelOwner(bp->part);
	Oid			staging;
	char	   *comment;
	StringInfoData sql;

	if (OidIsValid(get_relname_relid(name, bp->nsp)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("relation %s already exists", qualname),
				 errhint("backfill stages the new rows of partition %s under that name: rename or drop the table.",
						 bp->qualname)));

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE %sTABLE %s (LIKE %s INCLUDING ALL, CONSTRAINT %s CHECK (%s))%s",
					 persistence == RELPERSISTENCE_UNLOGGED ? "UNLOGGED " : "",
					 qualname, bp->qualname, "backfill_partition_bound", bp->constraintdef,
					 StorageClause(bp->part));
	if (OidIsValid(spc))
		appendStringInfo(&sql, " TABLESPACE %s", quote_identifier(get_tablespace_name(spc)));
	BackfillExec(sql.data);
	staging = get_relname_relid(name, bp->nsp);

	if (owner != GetUserId())
		BackfillExec(psprintf("ALTER TABLE %s OWNER TO %s", qualname,
							  quote_identifier(GetUserNameFromId(owner, false))));

	/*
	 * The table's privileges exactly as the partition has them (grantors, the
	 * owner's own entry, none at all), whatever default privileges applied
	 * to the new table; then the column grants.
	 */
	CopyTableAcl(bp->part, staging);
	BackfillExecGenerated(
		"SELECT pg_catalog.format('GRANT %s (%I) ON TABLE %s TO %s%s', a.privilege_type, t.attname, $2,"
		"  CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'"
		"       ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END,"
		"  CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)"
		" FROM pg_catalog.pg_attribute t, pg_catalog.aclexplode(t.attacl) a"
		" WHERE t.attrelid OPERATOR(pg_catalog.=) $1 AND NOT t.attisdropped AND t.attnum OPERATOR(pg_catalog.>) 0"
		"   AND a.grantee OPERATOR(pg_catalog.<>) (SELECT relowner FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) $1)",
		bp->part, qualname, bp->qualname);

	/* per-column statistics targets and planner options, replica identity FULL or NOTHING */
	BackfillExecGenerated(
		"SELECT pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s', $2, attname, attstattarget)"
		" FROM pg_catalog.pg_attribute WHERE attrelid OPERATOR(pg_catalog.=) $1 AND attnum OPERATOR(pg_catalog.>) 0"
		"   AND NOT attisdropped AND attstattarget OPERATOR(pg_catalog.<>) -1"
		" UNION ALL"
		" SELECT pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET (%s)', $2, a.attname, o.opt)"
		" FROM pg_catalog.pg_attribute a, pg_catalog.unnest(a.attoptions) o(opt)"
		" WHERE a.attrelid OPERATOR(pg_catalog.=) $1 AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped"
		"   AND pg_catalog.split_part(o.opt, '=', 1) OPERATOR(pg_catalog.=) ANY ('{n_distinct,n_distinct_inherited}')"
		" UNION ALL"
		" SELECT pg_catalog.format('ALTER TABLE %s REPLICA IDENTITY %s', $2,"
		"  CASE relreplident WHEN 'f' THEN 'FULL' ELSE 'NOTHING' END)"
		" FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) $1"
		"   AND relreplident OPERATOR(pg_catalog.=) ANY ('{f,n}')",
		bp->part, qualname, bp->qualname);

	comment = GetComment(bp->part, RelationRelationId, 0);
	if (comment != NULL)
		BackfillExec(psprintf("COMMENT ON TABLE %s IS %s", qualname, quote_literal_cstr(comment)));

	/*
	 * The partition's own triggers, in the state they are in; those cloned
	 * from the parent come back with ATTACH.
	 */
	CopyTriggers(bp->part, staging);
	BackfillExecGenerated(
		"SELECT pg_catalog.format('ALTER TABLE %s %s TRIGGER %I', $2,"
		"  CASE tgenabled WHEN 'D' THEN 'DISABLE' WHEN 'R' THEN 'ENABLE REPLICA' ELSE 'ENABLE ALWAYS' END, tgname)"
		" FROM pg_catalog.pg_trigger"
		" WHERE tgrelid OPERATOR(pg_catalog.=) $1 AND NOT tgisinternal AND tgparentid OPERATOR(pg_catalog.=) 0"
		"   AND tgenabled OPERATOR(pg_catalog.<>) 'O'",
		bp->part, qualname, bp->qualname);
	CommandCounterIncrement();
	return staging;
}

/*
 * In a PG_CATCH block: rethrow the error being handled, unless it is a unique
 * violation, which is reported as the source giving a key twice for
 * partition bp (the index named in the original is one of the staging
 * table's).  On a distributed parent, also the XX000 that Citus makes of a
 * worker's unique violation when it copies rows into the shards (for a
 * source it cannot push down, its COPY keeps the worker's message but not
 * its SQLSTATE), known by that message as PostgreSQL writes it in English.
 * cxt is the memory context the PG_TRY block began in.
 */
void
BackfillRethrowDuplicateKey(BackfillPart *bp, MemoryContext cxt)
{
	ErrorData  *edata;
	const char *dup = "duplicate key value violates unique constraint ";

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	if (edata->sqlerrcode != ERRCODE_UNIQUE_VIOLATION &&
		!(bp->distcol != NULL && edata->sqlerrcode == ERRCODE_INTERNAL_ERROR && edata->message != NULL &&
		  strncmp(edata->message, dup, strlen(dup)) == 0))
		PG_RE_THROW();
	FlushErrorState();
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("source gives the same key twice for partition %s", bp->qualname),
			 edata->detail ? errdetail_internal("%s", edata->detail) : 0,
			 errhint("A unique index or primary key of the partition must hold on the new rows.")));
}

/* REINDEX the staging table; a duplicate key is an error of the source. */
static void
ReindexNamingPartition(BackfillPart *bp, const char *qualname)
{
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		BackfillExec(psprintf("REINDEX TABLE %s", qualname));
	}
	PG_CATCH();
	{
		BackfillRethrowDuplicateKey(bp, cxt);
	}
	PG_END_TRY();
}

/* Set while the probe runs a transform it rolls back: a staging copy then gathers no statistics. */
static bool staging_rolled_back = false;

/* Say whether staging copies made from now on are rolled back; returns what was said before. */
bool
BackfillStagingRolledBack(bool rolled_back)
{
	bool		was = staging_rolled_back;

	staging_rolled_back = rolled_back;
	return was;
}

/*
 * After the fill: build the indexes from the rows (which proves the unique
 * ones) and add the partition's foreign keys (which validates them).  With
 * search_path pinned.  The time of the index builds and of ANALYZE go in
 * times.
 */
void
BackfillFinishStaging(BackfillPart *bp, Oid staging, BackfillStageTimes *times)
{
	char	   *qualname = BackfillQualifiedName(staging);
	instr_time	start;

	Relation	rel = table_open(staging, NoLock);
	bool		indexed = RelationGetIndexList(rel) != NIL;

	BackfillAssertFillLocks(bp, staging, "fill");
	table_close(rel, NoLock);
	INSTR_TIME_SET_CURRENT(start);
	/*
	 * (a table without indexes would only get a NOTICE saying so; a
	 * distributed one got its indexes with its shards, filled as they are)
	 */
	if (indexed && bp->distcol == NULL)
		ReindexNamingPartition(bp, qualname);
	times->index_ms = BackfillMsSince(start);
	/* the index builds' pages are paid for here, before the swap's locks */
	BackfillThrottleFillPoint(WriteThrottle(bp));
	/* planner statistics now, so plans do not regress until autovacuum comes by */
	INSTR_TIME_SET_CURRENT(start);
	if (bp->distcol && !staging_rolled_back)
		/*
		 * each shard where it is, through the connection that filled it:
		 * Citus's own ANALYZE of a distributed table opens connections of
		 * its own, which it refuses once a placement of the transaction was
		 * written on this node (on a node that holds shards itself)
		 */
		BackfillCitusOnPlacements(staging, "ANALYZE ", "", false);
	else if (!staging_rolled_back)
		BackfillExec(psprintf("ANALYZE %s", qualname));
	times->analyze_ms = BackfillMsSince(start);

	BackfillExecGenerated(
		"SELECT pg_catalog.format('ALTER TABLE %s ADD CONSTRAINT %I %s', $2, conname,"
		" pg_catalog.pg_get_constraintdef(oid))"
		" FROM pg_catalog.pg_constraint WHERE conrelid OPERATOR(pg_catalog.=) $1"
		" AND contype OPERATOR(pg_catalog.=) 'f'"
		" UNION ALL"
		" SELECT pg_catalog.format('COMMENT ON CONSTRAINT %I ON %s IS %L', c.conname, $2, d.description)"
		" FROM pg_catalog.pg_constraint c JOIN pg_catalog.pg_description d"
		"   ON d.objoid OPERATOR(pg_catalog.=) c.oid"
		"  AND d.classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass"
		" WHERE c.conrelid OPERATOR(pg_catalog.=) $1 AND c.contype OPERATOR(pg_catalog.=) 'f'",
		bp->part, qualname, bp->qualname);
	CommandCounterIncrement();
}

/*
 * The columns of the staging table (descriptor dst) the fill cannot give a
 * value, given[] saying which the source returns: refused before any row is
 * written.
 */
static void
RefuseColumnsNotFilled(BackfillPart *bp, TupleDesc dst, const bool *given)
{
	for (int j = 0; j < dst->natts; j++)
	{
		Form_pg_attribute da = TupleDescAttr(dst, j);

		/* a stored generated column is computed as the rows are written, as COPY does */
		if (da->attgenerated && (da->attgenerated != ATTRIBUTE_GENERATED_STORED || bp->distcol != NULL))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot replace partition %s: column %s is a %s", bp->qualname,
							quote_identifier(NameStr(da->attname)),
							bp->distcol ? "generated column of a distributed table" : "virtual generated column"),
					 errdetail("backfill_replace_partition computes stored generated columns of tables on one server only.")));
		/* said before any row is written, not as a NULL in the first row */
		if (!given[j] && da->attnotnull && !da->atthasdef)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("the source lacks column %s, which is NOT NULL and has no default in partition %s",
							quote_identifier(NameStr(da->attname)), bp->qualname),
					 errhint("Add %s to the source's select list (columns are matched by name).",
							 quote_identifier(NameStr(da->attname)))));
	}
}

/*
 * Prepare the query that feeds the staging table and check that its columns
 * match the table's by name and can be assigned to their types (the fill
 * assigns them, and the defaults of the columns it lacks, as INSERT does).
 * argtypes are the types of $1 (and $2).
 */
SPIPlanPtr
BackfillPrepareFill(BackfillPart *bp, Oid staging, const char *source,
					int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = BackfillPrepare(source, nargs, argtypes, "source");
	TupleDesc	src;
	Relation	rel;
	TupleDesc	dst;
	bool	   *given;

	BackfillCheckReadOnly(plan, "source");
	src = BackfillPlanResultDesc(plan);
	rel = table_open(staging, NoLock);
	dst = RelationGetDescr(rel);
	given = palloc0(sizeof(bool) * dst->natts);

	for (int i = 0; i < src->natts; i++)
	{
		Form_pg_attribute sa = TupleDescAttr(src, i);
		AttrNumber	attnum = BackfillFindColumn(dst, NameStr(sa->attname)) + 1;
		Form_pg_attribute da;
		Oid			srctype = sa->atttypid;

		if (attnum == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("source column \"%s\" is not a column of partition %s",
							NameStr(sa->attname), bp->qualname),
					 errhint("Columns are matched by name: rename it with AS, or leave it out.")));
		if (given[attnum - 1])
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("source returns column \"%s\" more than once", NameStr(sa->attname))));
		da = TupleDescAttr(dst, attnum - 1);
		if (da->attgenerated)
			ereport(ERROR,
					(errcode(ERRCODE_GENERATED_ALWAYS),
					 errmsg("source column \"%s\" is a generated column of partition %s",
							NameStr(sa->attname), bp->qualname),
					 errhint("Leave it out of the source: it is computed.")));
		if (!can_coerce_type(1, &srctype, &da->atttypid, COERCION_ASSIGNMENT))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("source column \"%s\" is of type %s but column \"%s\" of partition %s is of type %s",
							NameStr(sa->attname), format_type_be(sa->atttypid),
							NameStr(da->attname), bp->qualname, format_type_be(da->atttypid)),
					 errhint("Cast the source column to %s.", format_type_be(da->atttypid))));
		given[attnum - 1] = true;
	}

	RefuseColumnsNotFilled(bp, dst, given);
	table_close(rel, NoLock);
	return plan;
}

typedef struct FillReceiver
{
	DestReceiver pub;
	BackfillPart *bp;
	Relation	rel;
	int			nbounds;		/* the partition's bound, then its ancestors' */
	BackfillBound **bounds;
	int		   *keyidx;			/* the key column of each bound in rel */
	TupleTableSlot *slot;
	EState	   *estate;
	ResultRelInfo *rri;
	BulkInsertState bistate;
	TupleTableSlot **batch;		/* rows checked and hashed, not yet written */
	int			nbatch;
	Size		batchbytes;
	CommandId	cid;
	SubTransactionId subid;		/* where the table was created and is filled */
	bool		checkconstr;
	bool		generated;		/* the table has stored generated columns to compute */
	bool		direct;			/* the source's rows may be written as it stores them */
	TupleDesc	srcdesc;		/* the last row type of the source's slots seen */
	bool		srcdescok;		/* and whether its rows are laid out as the table's */
	int			maxkey;			/* highest key column + 1 */
	int		   *srcidx;			/* per column, the source's column or -1 */
	ExprState **assign;			/* per column, the assignment of the source's value
								 * (NULL: as it is) or the default (NULL: none) */
	BackfillRowHasher *hasher;
	BackfillFingerprint *fp;
	uint64		outside;
	char	   *sample;
	MemoryContext cxt;
} FillReceiver;

/* as COPY batches its rows: at most this many, or about this many bytes */
#define FILL_BATCH_ROWS		1000
#define FILL_BATCH_BYTES	65535

/* Write the batch, frozen, and empty it; then yield to production, if the write's run does. */
static void
FlushBatch(FillReceiver *r)
{
	MemoryContext old;

	if (r->nbatch == 0)
		return;
	old = MemoryContextSwitchTo(GetPerTupleMemoryContext(r->estate));
	table_multi_insert(r->rel, r->batch, r->nbatch, r->cid, TABLE_INSERT_FROZEN, r->bistate);
	MemoryContextSwitchTo(old);
	for (int i = 0; i < r->nbatch; i++)
		ExecClearTuple(r->batch[i]);
	r->nbatch = 0;
	r->batchbytes = 0;
	ResetPerTupleExprContext(r->estate);
	BackfillThrottleFillPoint(WriteThrottle(r->bp));
}

/* The next slot of the batch, empty. */
static TupleTableSlot *
NextBatchSlot(FillReceiver *r)
{
	if (r->batch[r->nbatch] == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(r->cxt);

		r->batch[r->nbatch] = table_slot_create(r->rel, NULL);
		MemoryContextSwitchTo(old);
	}
	return r->batch[r->nbatch];
}

/* The next slot of the batch now holds a checked row: write the batch when full. */
static void
AddToBatch(FillReceiver *r)
{
	TupleTableSlot *dst = r->batch[r->nbatch++];

	r->batchbytes += ExecFetchSlotHeapTuple(dst, false, NULL)->t_len;
	if (r->nbatch == FILL_BATCH_ROWS || r->batchbytes >= FILL_BATCH_BYTES)
		FlushBatch(r);
}

/*
 * The row in src as the source stores it, if it can be written as it is:
 * the source returns the staging table's columns in its order with its types
 * and nothing to assign (r->direct), and src holds a stored tuple of such a
 * row type with every column (a tuple older than an ADD COLUMN lacks the last ones: their values
 * live in the source's catalog, not in the tuple).  Else NULL.
 */
static HeapTuple
StoredRow(FillReceiver *r, TupleTableSlot *src)
{
	HeapTuple	tuple;

	if (!r->direct || !(TTS_IS_BUFFERTUPLE(src) || TTS_IS_HEAPTUPLE(src)))
		return NULL;
	if (src->tts_tupleDescriptor != r->srcdesc)
	{
		r->srcdesc = src->tts_tupleDescriptor;
		r->srcdescok = BackfillSameLayout(r->srcdesc, RelationGetDescr(r->rel));
	}
	if (!r->srcdescok)
		return NULL;
	tuple = ((HeapTupleTableSlot *) src)->tuple;
	if (tuple == NULL ||
		HeapTupleHeaderGetNatts(tuple->t_data) != RelationGetDescr(r->rel)->natts)
		return NULL;
	return tuple;
}

/*
 * The source's values assigned to the columns of r->slot and the defaults of
 * the others, as INSERT computes them.
 */
static TupleTableSlot *
AssignRow(FillReceiver *r, TupleTableSlot *src)
{
	TupleDesc	desc = r->slot->tts_tupleDescriptor;
	ExprContext *econtext = GetPerTupleExprContext(r->estate);

	slot_getallattrs(src);
	ExecClearTuple(r->slot);
	for (int j = 0; j < desc->natts; j++)
	{
		int			i = r->srcidx[j];

		if (i >= 0 && r->assign[j] == NULL)
		{
			r->slot->tts_values[j] = src->tts_values[i];
			r->slot->tts_isnull[j] = src->tts_isnull[i];
		}
		else if (i >= 0)
			r->slot->tts_values[j] = BackfillAssignValue(r->assign[j], econtext, src->tts_values[i],
														 src->tts_isnull[i], &r->slot->tts_isnull[j]);
		else if (r->assign[j] != NULL)
			r->slot->tts_values[j] = ExecEvalExprSwitchContext(r->assign[j], econtext,
															   &r->slot->tts_isnull[j]);
		else
		{
			r->slot->tts_values[j] = (Datum) 0;
			r->slot->tts_isnull[j] = true;
		}
	}
	return ExecStoreVirtualTuple(r->slot);
}

/*
 * Whether the row in slot (in the staging table's columns) lies within the
 * partition's bound and its ancestors'; if not, it is counted, the first one
 * described.
 */
static bool
RowInBounds(FillReceiver *r, TupleTableSlot *slot)
{
	TupleDesc	desc = r->slot->tts_tupleDescriptor;

	slot_getsomeattrs(slot, r->maxkey);
	for (int b = 0; b < r->nbounds; b++)
	{
		int			k = r->keyidx[b];
		Datum		key = slot->tts_values[k];
		bool		keynull = slot->tts_isnull[k];

		if (BackfillInBound(r->bounds[b], key, keynull))
			continue;
		if (r->sample == NULL)
		{
			Oid			outfunc;
			bool		isvarlena;
			MemoryContext old = MemoryContextSwitchTo(r->cxt);

			getTypeOutputInfo(TupleDescAttr(desc, k)->atttypid, &outfunc, &isvarlena);
			r->sample = psprintf("%s = %s", quote_identifier(NameStr(TupleDescAttr(desc, k)->attname)),
								 keynull ? "NULL" : OidOutputFunctionCall(outfunc, key));
			MemoryContextSwitchTo(old);
		}
		r->outside++;
		return false;
	}
	return true;
}

/*
 * One row of the source: the source's values assigned to the columns and the
 * defaults of the others, as INSERT computes them (or, when the source
 * returns the table's very columns, its stored row copied as it is), then its
 * bound and constraints checked and the row hashed; it joins the batch
 * written frozen.
 */
static bool
FillReceive(TupleTableSlot *src, DestReceiver *self)
{
	FillReceiver *r = (FillReceiver *) self;
	HeapTuple	stored;
	TupleTableSlot *row;
	MemoryContext old;

	CHECK_FOR_INTERRUPTS();

	/*
	 * Rows inserted frozen in a subtransaction that later aborts would stay
	 * visible: a source that hands rows over from inside a subtransaction of
	 * its own (a set-returning function in a procedural language can) is
	 * refused.
	 */
	if (GetCurrentSubTransactionId() != r->subid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("source returned a row from inside a subtransaction of its own"),
				 errdetail("The new rows of partition %s are written frozen, which is only safe in the transaction that created their table.",
						   r->bp->qualname)));
	ResetPerTupleExprContext(r->estate);
	stored = StoredRow(r, src);
	row = stored ? src : AssignRow(r, src);
	if (r->generated && !stored)
		ExecComputeStoredGenerated(r->rri, r->estate, row, CMD_INSERT);
	if (!RowInBounds(r, row) || r->outside > 0)
		return true;			/* the call fails anyway: count, don't write */

	if (stored)
	{
		/* the stored tuple, copied once (which lets its buffer go) */
		row = NextBatchSlot(r);
		ExecCopySlot(row, src);
		ExecMaterializeSlot(row);
	}
	old = MemoryContextSwitchTo(GetPerTupleMemoryContext(r->estate));
	if (r->checkconstr)
		ExecConstraints(r->rri, row, r->estate);
	MemoryContextSwitchTo(old);

	{
		uint64		h = BackfillHashRow(r->hasher, row);

		r->fp->rows++;
		r->fp->sum1 += h;
		r->fp->sum2 += BackfillFingerprintLane2(h);
	}
	if (!stored)
		ExecCopySlot(NextBatchSlot(r), r->slot);
	AddToBatch(r);
	ResetPerTupleExprContext(r->estate);
	return true;
}

/*
 * Whether rows the source stores may be written as they are: it returns the
 * staging table's columns, in its order, of its types, with nothing to assign.
 */
static bool
SourceMatchesTable(FillReceiver *r, SPIPlanPtr plan)
{
	TupleDesc	dst = RelationGetDescr(r->rel);

	if (!BackfillSameLayout(BackfillPlanResultDesc(plan), dst))
		return false;
	for (int j = 0; j < dst->natts; j++)
		if (r->srcidx[j] != j || r->assign[j] != NULL)
			return false;
	return true;
}

/*
 * For each column of the staging table, the source's column of that name and
 * its assignment to the column's type (coerce_to_target_type, as INSERT), or,
 * for a column the source lacks, its default as INSERT computes it
 * (build_column_default: the column's, else its domain's; a domain's NOT
 * NULL checked on a NULL).
 */
static void
PrepareAssignments(FillReceiver *r, SPIPlanPtr plan)
{
	TupleDesc	src = BackfillPlanResultDesc(plan);
	TupleDesc	dst = RelationGetDescr(r->rel);

	r->srcidx = palloc(sizeof(int) * Max(1, dst->natts));
	r->assign = palloc0(sizeof(ExprState *) * Max(1, dst->natts));
	for (int j = 0; j < dst->natts; j++)
	{
		Form_pg_attribute da = TupleDescAttr(dst, j);
		int			i = BackfillFindColumn(src, NameStr(da->attname));
		Expr	   *expr;

		r->srcidx[j] = i;
		/* a generated column: computed from the row once assigned (FillReceive), no default */
		if (da->attgenerated)
			continue;
		if (i >= 0)
		{
			Form_pg_attribute sa = TupleDescAttr(src, i);

			expr = BackfillAssignExpr(sa->atttypid, sa->atttypmod, sa->attcollation,
									  da->atttypid, da->atttypmod);
		}
		else
		{
			expr = da->attidentity ? NULL : (Expr *) build_column_default(r->rel, j + 1);
			if (expr == NULL)
			{
				Node	   *null = (Node *) makeNullConst(da->atttypid, -1, da->attcollation);
				int32		basetypmod = -1;
				/* (18 no longer looks the base type up itself) */
				Oid			basetype = getBaseTypeAndTypmod(da->atttypid, &basetypmod);
				Node	   *checked = coerce_to_domain(null, basetype, basetypmod, da->atttypid,
													   COERCION_IMPLICIT, COERCE_IMPLICIT_CAST, -1, false);

				expr = checked == null ? NULL : (Expr *) checked;
			}
		}
		if (expr != NULL)
			r->assign[j] = BackfillAssignState(expr);
	}
}

/*
 * Cut the empty pages off the end of a table just filled.  A bulk insert
 * may extend the table by more pages than the rows take (from PostgreSQL 16,
 * increasingly many at a time); left empty, they would be the only pages of
 * the new partition that are not all-visible, and VACUUM would visit them.
 * The table was created in this transaction and no one else can see it.
 */
static void
TrimEmptyTail(Relation rel)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BlockNumber keep = nblocks;

	while (keep > 0)
	{
		Buffer		buf = ReadBuffer(rel, keep - 1);
		Page		page;
		bool		empty;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		empty = PageIsNew(page) || PageGetMaxOffsetNumber(page) == InvalidOffsetNumber;
		UnlockReleaseBuffer(buf);
		if (!empty)
			break;
		keep--;
	}
	if (keep < nblocks)
		RelationTruncate(rel, keep);
}

/*
 * Fill staging from the prepared plan and fingerprint what was written.
 * Rows outside the partition's bound are an error naming the partition,
 * with their count and a sample.
 */
void
BackfillFillStaging(BackfillPart *bp, Oid staging, SPIPlanPtr plan, ParamListInfo params,
					BackfillFingerprint *fp)
{
	FillReceiver r;
	RangeTblEntry *rte;

	BackfillAssertFillLocks(bp, staging, "fill");
	memset(&r, 0, sizeof(r));
	memset(fp, 0, sizeof(*fp));
	BackfillInitReceiver(&r.pub, FillReceive, NULL);
	r.bp = bp;
	r.cxt = CurrentMemoryContext;
	r.fp = fp;
	r.rel = table_open(staging, NoLock);
	r.nbounds = 1 + list_length(bp->outer);
	r.bounds = palloc(sizeof(BackfillBound *) * r.nbounds);
	r.keyidx = palloc(sizeof(int) * r.nbounds);
	r.bounds[0] = &bp->own;
	for (int b = 1; b < r.nbounds; b++)
		r.bounds[b] = (BackfillBound *) list_nth(bp->outer, b - 1);
	for (int b = 0; b < r.nbounds; b++)
	{
		r.keyidx[b] = get_attnum(staging, r.bounds[b]->keyname) - 1;
		r.maxkey = Max(r.maxkey, r.keyidx[b] + 1);
	}
	r.slot = MakeSingleTupleTableSlot(RelationGetDescr(r.rel), &TTSOpsVirtual);
	r.hasher = BackfillRowHasherCreate(RelationGetDescr(r.rel), RelationGetDescr(r.rel)->natts, NULL);
	PrepareAssignments(&r, plan);
	r.direct = SourceMatchesTable(&r, plan);

	/* an executor state for ExecConstraints and the assignments, as logical replication builds one */
	r.estate = CreateExecutorState();
	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_RELATION;
	rte->relid = staging;
	rte->relkind = RELKIND_RELATION;
	rte->rellockmode = AccessExclusiveLock;
	BackfillExecInitOneRelation(r.estate, rte);
	r.rri = makeNode(ResultRelInfo);
	InitResultRelInfo(r.rri, r.rel, 1, NULL, 0);
	r.estate->es_output_cid = GetCurrentCommandId(true);
	r.cid = r.estate->es_output_cid;
	r.checkconstr = RelationGetDescr(r.rel)->constr != NULL;
	r.generated = r.checkconstr && RelationGetDescr(r.rel)->constr->has_generated_stored;
	r.bistate = GetBulkInsertState();
	r.batch = palloc0(sizeof(TupleTableSlot *) * FILL_BATCH_ROWS);

	/* as COPY FREEZE requires: the table is new in this very subtransaction */
	r.subid = GetCurrentSubTransactionId();
	if (r.rel->rd_createSubid != r.subid)
		elog(ERROR, "staging table of %s was not created in the current subtransaction", bp->qualname);
	{
		CachedPlanSource *src = (CachedPlanSource *) linitial(SPI_plan_get_plan_sources(plan));

		if (list_member_oid(src->relationOids, staging))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("source reads the staging table of partition %s", bp->qualname),
					 errdetail("It would read the rows it is writing.")));
	}

	BackfillRunToDest(plan, params, false, (DestReceiver *) &r);
	if (GetCurrentSubTransactionId() != r.subid)
		elog(ERROR, "the fill of %s ended in another subtransaction", bp->qualname);
	FlushBatch(&r);

	for (int i = 0; i < FILL_BATCH_ROWS && r.batch[i] != NULL; i++)
		ExecDropSingleTupleTableSlot(r.batch[i]);
	FreeBulkInsertState(r.bistate);
	TrimEmptyTail(r.rel);
	ExecDropSingleTupleTableSlot(r.slot);
	FreeExecutorState(r.estate);
	table_close(r.rel, NoLock);

	if (r.outside > 0)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg_plural("%llu row of the source falls outside partition %s",
							   "%llu rows of the source fall outside partition %s",
							   r.outside, (unsigned long long) r.outside, bp->qualname),
				 errdetail("The partition holds %s%s; one row has %s.",
						   bp->boundspec, bp->outer ? " within the bounds of its parents" : "", r.sample),
				 errhint("Filter the source on the partition's bounds, $1 and $2 (for LIST, $1 is the array of its values).")));
	BackfillFingerprintSeal(fp);
	CommandCounterIncrement();
}
