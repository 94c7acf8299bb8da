/*-------------------------------------------------------------------------
 *
 * src/write/deleteinsert.c
 *		A window replaced by a delete and an insert in one transaction: the
 *		chunk of a plain table, or a small partition rewritten in place.
 *
 * The delete and the insert are one statement, so that a source reading the
 * table itself reads the window as it was (on Citus, whose planner runs a
 * data-modifying CTE before the rest, the source is read into a temporary
 * table first).  Writers of the table wait, readers see the old rows until
 * commit.  Through the target, the source's rows are held to the window as
 * the target stores them; into a partition, its bound holds them.  A source
 * that would empty a window that has rows is refused unless allowed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"

#include "base/citus.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "hash/fingerprint.h"
#include "record/log.h"
#include "write/deleteinsert.h"
#include "write/inplace.h"

/*
 * The source's column names, as "a, b"; with reads (else NULL), whether the
 * tables its plan reads include relid or one of its partitions (a table read
 * only inside a function the source calls is not seen).
 */
char *
BackfillSourceColumns(const char *bound, Oid relid, bool *reads)
{
	SPIPlanPtr	plan = BackfillPrepare(bound, 0, NULL, "source");
	TupleDesc	desc;
	StringInfoData buf;

	BackfillCheckReadOnly(plan, "source");
	desc = BackfillPlanResultDesc(plan);
	initStringInfo(&buf);
	for (int i = 0; i < desc->natts; i++)
		appendStringInfo(&buf, "%s%s", i ? ", " : "", quote_identifier(NameStr(TupleDescAttr(desc, i)->attname)));
	if (reads != NULL)
	{
		CachedPlanSource *ps = (CachedPlanSource *) linitial(SPI_plan_get_plan_sources(plan));
		ListCell   *lc;

		*reads = false;
		foreach(lc, ps->relationOids)
		{
			Oid			r = lfirst_oid(lc);

			if (r == relid || (get_rel_relispartition(r) && list_member_oid(get_partition_ancestors(r), relid)))
				*reads = true;
		}
	}
	SPI_freeplan(plan);
	return buf.data;
}

/*
 * Refuse a source with rows outside the window of task, as they will be
 * stored (bound: the source, bound to it): a row stored in the next window
 * would be deleted by the next task, whose source does not give it.
 */
static void
RefuseOutsideWindow(const BackfillDeleteInsertParams *p)
{
	int64		outside = pg_strtoint64(BackfillQueryTextArgs(psprintf("SELECT pg_catalog.count(*) FROM (\n%s\n) AS s"
																	   " WHERE NOT COALESCE(%s, false)",
																	   p->source, p->stored_scope),
															 0, NULL, NULL));

	if (outside > 0)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg_plural("%lld source row lies outside the window [%s, %s) of task %d",
							   "%lld source rows lie outside the window [%s, %s) of task %d",
							   outside, (long long) outside, p->range_from, p->range_to, p->task),
				 errdetail("Rows are held to the window as %s stores them.", p->target),
				 errhint("Filter the source on $1 and $2, the bounds of each task's window, as the column stores its values (round or truncate them to its precision first).")));
}

/*
 * WriteWholeWindow for a table Citus holds whose source reads it: Citus runs
 * a data-modifying CTE as a subplan of its own before the rest of the
 * statement, so the one-statement form would read the window after its
 * delete (and find it empty).  Read the source first, into a temporary table
 * of this transaction, then delete and insert from it.
 */
static uint64
WriteWholeWindowRead(int task, const char *only, const char *table, const char *cols,
					 const char *bound, const char *scope)
{
	uint64		inserted;

	BackfillExec(psprintf("CREATE TEMPORARY TABLE backfill_window ON COMMIT DROP AS SELECT %s FROM (\n%s\n) AS s",
						  cols, bound));
	BackfillExec(psprintf("DELETE FROM %s%s%s%s", only, table, scope ? " WHERE " : "", scope ? scope : ""));
	if (SPI_execute(psprintf("INSERT INTO %s (%s) SELECT %s FROM pg_temp.backfill_window", table, cols, cols),
					false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not replace the window of task %d", task);
	inserted = SPI_processed;
	BackfillExec("DROP TABLE pg_temp.backfill_window");
	return inserted;
}

/*
 * Delete the rows of written in scope (all, if NULL) and insert the rows of
 * bound, in one statement, so that the source reads the window as it was
 * before the delete (a source may read the table itself: a snapshot of its
 * own would not do, SPI moves a writing statement's snapshot to the current
 * command); the delete runs to completion first (an InitPlan gates the
 * insert), so a unique key may come back.  Returns the rows inserted.
 */
static uint64
WriteWholeWindow(int task, const char *bound, Oid written, const char *scope)
{
	char	   *table = BackfillQualifiedName(written);
	const char *only = get_rel_relkind(written) == RELKIND_PARTITIONED_TABLE ? "" : "ONLY ";
	BackfillCitusRel cr;
	bool		selfread = false;
	char	   *cols;

	BackfillCitusDescribe(written, &cr);
	cols = BackfillSourceColumns(bound, written, cr.kind != BACKFILL_CITUS_NONE ? &selfread : NULL);
	if (selfread)
		return WriteWholeWindowRead(task, only, table, cols, bound, scope);
	if (SPI_execute(psprintf("WITH deleted AS (DELETE FROM %s%s%s%s RETURNING 1)"
							 " INSERT INTO %s (%s) SELECT %s FROM (\n%s\n) AS s"
							 " WHERE (SELECT pg_catalog.count(*) FROM deleted) OPERATOR(pg_catalog.>=) 0",
							 only, table,
							 scope ? " WHERE " : "", scope ? scope : "", table, cols, cols, bound),
					false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not replace the window of task %d", task);
	return SPI_processed;
}

/*
 * The window of a task replaced by a delete and an insert in this
 * transaction.  p->written is the table the rows go into: the target (the
 * chunk of a plain table; a small partition of an 'auto' run under FORCE ROW
 * LEVEL SECURITY, so that the policies apply), the source checked to stay in
 * the window; or a small partition itself, whose bound the executor checks
 * on every row.  Writers of p->lockrel wait (SHARE ROW EXCLUSIVE), readers
 * see the old rows until commit.  The record says ctx->why, and its run.
 */
void
BackfillDeleteInsert(const BackfillDeleteInsertParams *p, BackfillWriteContext *ctx,
					 BackfillDeleteInsertResult *r)
{
	bool		through = p->written == p->targetoid;
	const char *scope = through ? p->scope : NULL;
	StringInfoData details;
	uint64		inserted;
	BackfillRewriteCounts counts;
	const char *notwhy = NULL;
	const char *why = ctx->why;

	LockRelationOid(p->lockrel, ShareRowExclusiveLock);
	/* on Citus, writes through a worker go round the coordinator's lock: lock every node */
	if (BackfillCitusDistributed(p->lockrel))
		BackfillCitusLock(p->lockrel, false, "SHARE ROW EXCLUSIVE");

	/*
	 * A small partition: only the rows that differ are written, if the
	 * source allows (inplace.c), the rows it held and holds fingerprinted as
	 * they are read.
	 */
	if (!through && BackfillRewriteDiffering(p->written, p->source, &counts, &notwhy, &r->before, &r->after))
		inserted = counts.inserted + counts.unchanged;
	else
	{
		BackfillFingerprintRel(p->written, scope, false, &r->before);
		if (through)
			RefuseOutsideWindow(p);
		else if (why != NULL)
			why = psprintf("%s; but %s, so every row was deleted and inserted again", why, notwhy);
		inserted = WriteWholeWindow(p->task, p->source, p->written, scope);
		counts.deleted = r->before.rows;
		counts.inserted = inserted;
		counts.unchanged = 0;
		CommandCounterIncrement();
		BackfillFingerprintRel(p->written, scope, false, &r->after);
	}
	if (inserted == 0 && r->before.rows > 0 && !p->allow_empty)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source returned no rows for the window [%s, %s) of task %d, which has " UINT64_FORMAT " rows",
						p->range_from, p->range_to, p->task, r->before.rows),
				 errdetail("Running the task would empty the window of %s.", BackfillQualifiedName(p->lockrel)),
				 errhint("If the window really is to be emptied, plan the run with the option allow_empty.")));
	CommandCounterIncrement();

	initStringInfo(&details);
	appendStringInfo(&details, "{\"deleted\": " UINT64_FORMAT ", \"inserted\": " UINT64_FORMAT
					 ", \"unchanged\": " UINT64_FORMAT, counts.deleted, counts.inserted, counts.unchanged);
	if (scope)
	{
		appendStringInfoString(&details, ", \"scope\": ");
		escape_json(&details, scope);
	}
	appendStringInfoString(&details, ", \"source\": ");
	escape_json(&details, BackfillWriteRecordedSource(ctx, p->source));
	appendStringInfoChar(&details, '}');
	r->log_id = BackfillLogWriteChange(ctx->extschema, "delete_insert", p->target,
									   p->lockrel != p->targetoid ? BackfillQualifiedName(p->lockrel) : NULL,
									   &r->before, &r->after, details.data, ctx->run_id, why);
}
