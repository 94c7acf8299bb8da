/*-------------------------------------------------------------------------
 *
 * src/base/citus.c
 *		Citus, seen from backfill: is it here, is this node the coordinator,
 *		how is a table distributed.
 *
 * Everything is read from Citus's catalogs (pg_dist_local_group,
 * pg_dist_partition) through SPI, and only once get_extension_oid has found
 * the citus extension in this database: without Citus, none of this costs
 * more than one syscache lookup.  backfill's writes and its records
 * (backfill_log, backfill_runs) live on the coordinator, which sees every
 * shard; a worker holds only its own shards and its own copy of the
 * extension's tables, so a write made there would be recorded where nobody
 * reads it, and a swap there would miss the other shards.
 *
 * Here too: the guards of a merge into a distributed table (what Citus
 * cannot run as a MERGE shard by shard is refused before anything is read
 * or written), and locks taken on every node with SQL LOCK TABLE, which
 * Citus propagates to the workers' copies of a table (a lock taken in C
 * stays on the coordinator, and writes made through a worker do not see
 * it).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"

#include "base/citus.h"
#include "base/spi_util.h"

/* Is Citus created in this database? */
bool
BackfillCitusPresent(void)
{
	return OidIsValid(get_extension_oid("citus", true));
}

/* This node's Citus group: 0 on the coordinator. */
static int
LocalGroup(void)
{
	int			group = 0;
	bool		isnull;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT groupid FROM pg_catalog.pg_dist_local_group", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_local_group");
	if (SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		group = isnull ? 0 : DatumGetInt32(d);
	}
	SPI_finish();
	return group;
}

/*
 * Refuse to run func anywhere but on the coordinator of a Citus cluster (or
 * on a server without Citus).
 */
void
BackfillRequireCoordinator(const char *func)
{
	int			group;

	if (!BackfillCitusPresent())
		return;
	group = LocalGroup();
	if (group != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s must be called on the Citus coordinator, not on a worker node (group %d)",
						func, group),
				 errdetail("A worker holds only its own shards, and its copy of backfill_log and backfill_runs is read by nobody."),
				 errhint("Connect to the coordinator and call it there.")));
}

/* Describe how Citus holds relid (kind NONE without Citus or for a table it does not know). */
void
BackfillCitusDescribe(Oid relid, BackfillCitusRel *cr)
{
	MemoryContext caller = CurrentMemoryContext;
	bool		isnull;
	char		method;
	char		model;

	memset(cr, 0, sizeof(*cr));
	cr->kind = BACKFILL_CITUS_NONE;
	if (!BackfillCitusPresent())
		return;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT partmethod, repmodel, colocationid,"
							  " CASE WHEN partkey IS NOT NULL AND partkey OPERATOR(pg_catalog.<>) ''"
							  " THEN pg_catalog.column_to_column_name(logicalrelid, partkey) END"
							  " FROM pg_catalog.pg_dist_partition WHERE logicalrelid OPERATOR(pg_catalog.=) $1",
							  1, (Oid[]) {OIDOID}, (Datum[]) {ObjectIdGetDatum(relid)}, NULL, true, 1)
		!= SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_partition");
	if (SPI_processed == 1)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *col = SPI_getvalue(tup, desc, 4);

		method = DatumGetChar(SPI_getbinval(tup, desc, 1, &isnull));
		model = DatumGetChar(SPI_getbinval(tup, desc, 2, &isnull));
		cr->colocation = DatumGetInt32(SPI_getbinval(tup, desc, 3, &isnull));
		if (method == 'n' && model == 't')
			cr->kind = BACKFILL_CITUS_REFERENCE;
		else if (method == 'n' && cr->colocation == 0)
			cr->kind = BACKFILL_CITUS_LOCAL;
		else
			cr->kind = BACKFILL_CITUS_DISTRIBUTED;
		if (col != NULL)
			cr->distcol = MemoryContextStrdup(caller, col);
	}
	SPI_finish();
}

/* Is relid a distributed table (its rows in shards on the workers)? */
bool
BackfillCitusDistributed(Oid relid)
{
	BackfillCitusRel cr;

	BackfillCitusDescribe(relid, &cr);
	return cr.kind == BACKFILL_CITUS_DISTRIBUTED;
}

/* How an error names a kind of table. */
static const char *
BackfillCitusKindName(BackfillCitusKind kind)
{
	switch (kind)
	{
		case BACKFILL_CITUS_DISTRIBUTED:
			return "distributed table";
		case BACKFILL_CITUS_REFERENCE:
			return "reference table";
		case BACKFILL_CITUS_LOCAL:
			return "Citus local table";
		case BACKFILL_CITUS_NONE:
			break;
	}
	return "local table";
}

/* check_functions_in_node's callback: a function that is not IMMUTABLE, remembered */
static bool
MutableFunction(Oid funcid, void *context)
{
	if (func_volatile(funcid) == PROVOLATILE_IMMUTABLE)
		return false;
	*(Oid *) context = funcid;
	return true;
}

/*
 * Name a call that is not IMMUTABLE in node (subqueries too), for the error
 * of a query contain_mutable_functions found one in; *funcid stays
 * InvalidOid for CURRENT_DATE and its kin.
 */
static bool
MutableWalker(Node *node, Oid *funcid)
{
	if (node == NULL)
		return false;
	if (IsA(node, SQLValueFunction) || IsA(node, NextValueExpr))
	{
		*funcid = InvalidOid;
		return true;
	}
	if (check_functions_in_node(node, MutableFunction, funcid))
		return true;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, MutableWalker, funcid, 0);
	return expression_tree_walker(node, MutableWalker, funcid);
}

/*
 * Citus pushes a MERGE into a distributed table down to the shards only if it
 * calls IMMUTABLE functions alone: refuse a query (argname) that calls any
 * other, naming it.
 */
static void
RefuseMutable(CachedPlanSource *ps, const char *argname, const char *target)
{
	ListCell   *lc;
	Oid			funcid = InvalidOid;

	foreach(lc, ps->query_list)
	{
		if (!contain_mutable_functions((Node *) lfirst(lc)))
			continue;
		(void) MutableWalker((Node *) lfirst(lc), &funcid);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s calls %s, which is not IMMUTABLE: Citus cannot merge it into distributed table %s",
						argname, OidIsValid(funcid) ? psprintf("%s()", get_func_name(funcid)) :
						"CURRENT_DATE, a sequence or a similar SQL value function", target),
				 errdetail("Citus runs a MERGE into a distributed table on each shard, where a function that is not IMMUTABLE could return another value."),
				 errhint("Pass constants instead: compute the value first (SELECT now()) and write it into the %s as a literal.",
						 argname)));
	}
}

/*
 * Every table source reads must be a distributed table co-located with the
 * target (cr), and it must read one: Citus merges shard by shard, and refuses
 * or moves rows otherwise, or, for a source of constants alone (VALUES,
 * generate_series), fails with an internal error.
 */
static void
RefuseForeignSources(CachedPlanSource *ps, BackfillCitusRel *cr, const char *target)
{
	ListCell   *lc;
	bool		colocated = false;

	foreach(lc, ps->relationOids)
	{
		Oid			relid = lfirst_oid(lc);
		char		relkind = get_rel_relkind(relid);
		BackfillCitusRel src;

		if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE &&
			relkind != RELKIND_FOREIGN_TABLE && relkind != RELKIND_MATVIEW)
			continue;
		BackfillCitusDescribe(relid, &src);
		if (src.kind == BACKFILL_CITUS_DISTRIBUTED && src.colocation == cr->colocation)
		{
			colocated = true;
			continue;
		}
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("source reads %s, a %s%s: Citus cannot merge it into distributed table %s",
						BackfillQualifiedName(relid), BackfillCitusKindName(src.kind),
						src.kind == BACKFILL_CITUS_DISTRIBUTED ? " not co-located with the target" : "",
						target),
				 errdetail("A MERGE into a distributed table runs shard by shard, and reads only tables distributed on the same column and co-located with it."),
				 errhint("Distribute %s with colocate_with => '%s', or copy the source's rows into a table that is.",
						 BackfillQualifiedName(relid), target)));
	}
	if (!colocated)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("source reads no table: Citus cannot merge it into distributed table %s", target),
				 errdetail("A MERGE into a distributed table runs shard by shard, and its source must read a table distributed on the same column and co-located with it; a source of constants alone (VALUES, generate_series) reads none."),
				 errhint("Insert the source's rows into a table distributed with colocate_with => '%s', and merge from that table.",
						 target)));
}

/*
 * The guards of a merge into relid on keys, before anything is read or
 * written: refuse a reference table, a key without the distribution column,
 * a source reading anything but co-located distributed tables, and functions
 * that are not IMMUTABLE in the source or the scope.  Then lock the target
 * on every node in mode (SQL LOCK TABLE, which Citus propagates to the
 * shards; the lock already held on the coordinator does not stop writes made
 * through a worker).  Does nothing for a table Citus does not hold.  Whether
 * relid is a distributed table.  Must be called inside SPI.
 */
bool
BackfillCitusCheckMerge(Oid relid, List *keys, const char *source, const char *scope, const char *mode)
{
	BackfillCitusRel cr;
	const char *target = BackfillQualifiedName(relid);
	SPIPlanPtr	plan;
	ListCell   *lc;
	bool		haskey = false;

	BackfillCitusDescribe(relid, &cr);
	if (cr.kind == BACKFILL_CITUS_NONE || cr.kind == BACKFILL_CITUS_LOCAL)
		return false;
	if (cr.kind == BACKFILL_CITUS_REFERENCE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot merge into reference table %s", target),
				 errdetail("Citus does not run MERGE into a reference table."),
				 errhint("Rewrite the reference table in one statement, or merge into a distributed table.")));
	foreach(lc, keys)
		if (cr.distcol != NULL && strcmp((const char *) lfirst(lc), cr.distcol) == 0)
			haskey = true;
	if (!haskey)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("key must include the distribution column \"%s\" of distributed table %s",
						cr.distcol ? cr.distcol : "(none)", target),
				 errdetail("Citus merges shard by shard, matching rows on the distribution column."),
				 errhint("Add \"%s\" to the key.", cr.distcol ? cr.distcol : "")));

	plan = BackfillPrepare(source, 0, NULL, "source");
	RefuseForeignSources(linitial(SPI_plan_get_plan_sources(plan)), &cr, target);
	RefuseMutable(linitial(SPI_plan_get_plan_sources(plan)), "source", target);
	SPI_freeplan(plan);
	if (scope != NULL)
	{
		plan = BackfillPrepare(psprintf("SELECT FROM %s WHERE (%s)", target, scope), 0, NULL, "scope");
		RefuseMutable(linitial(SPI_plan_get_plan_sources(plan)), "scope", target);
		SPI_freeplan(plan);
	}
	BackfillCitusLock(relid, false, mode);
	return true;
}

/*
 * Whether the cancel this backend just had came from Citus's distributed
 * deadlock detector, which chose this transaction to end a deadlock through
 * the workers (and forget it, as Citus's own report of it would).  Citus
 * changes the cancel's SQLSTATE to 40P01 only when the error is reported.
 */
bool
BackfillCitusCancelledByDeadlock(void)
{
	bool		(*check) (bool clear);

	if (!BackfillCitusPresent())
		return false;
	check = (bool (*) (bool)) load_external_function("citus", "MyBackendGotCancelledDueToDeadlock", false, NULL);
	return check != NULL && check(true);
}

/*
 * Hold off a COPY into the distributed table relid, from any node, until
 * this transaction ends.  Citus's COPY into a distributed partitioned table
 * locks none of its partitions, as an INSERT does: it asks, on the node where
 * it runs, for the shard resource locks of the table's shards (ROW
 * EXCLUSIVE).  Take those in SHARE mode (which COPY waits for, and which
 * sibling replacements share) here and on every worker with metadata, in
 * this transaction's own connections, so they are held until the
 * distributed commit.  Must be called inside SPI.
 */
void
BackfillCitusHoldOffCopy(Oid relid)
{
	char	   *ids = BackfillQueryText("SELECT pg_catalog.array_agg(shardid ORDER BY shardid)::pg_catalog.text"
										" FROM pg_catalog.pg_dist_shard WHERE logicalrelid OPERATOR(pg_catalog.=) $1",
										relid);
	char	   *lock;
	void		(*on_workers) (const char *command);

	if (ids == NULL)
		return;
	/* 5: ShareLock, in the shards' order, as COPY takes them */
	lock = psprintf("SELECT pg_catalog.lock_shard_resources(5, %s::pg_catalog.int8[])", quote_literal_cstr(ids));
	BackfillExec(lock);
	on_workers = (void (*) (const char *))
		load_external_function("citus", "SendCommandToWorkersWithMetadata", true, NULL);
	on_workers(lock);
}

/*
 * The sessions on the workers that hold a lock on their copy of relid now,
 * other than this transaction's own, for an error message (citus_locks, read
 * on every node); NULL if none.  Must be called inside SPI.
 */
char *
BackfillCitusHolders(Oid relid)
{
	return BackfillQueryText(
		"SELECT pg_catalog.string_agg(pg_catalog.format('process %s on worker %s:%s (%s, query started %s: %s)',"
		"   l.pid, n.nodename, n.nodeport, l.mode,"
		"   pg_catalog.to_char(a.query_start, 'YYYY-MM-DD HH24:MI:SS.MS TZ'), pg_catalog.left(a.query, 80)),"
		"   '; ' ORDER BY n.nodeport, l.pid)"
		" FROM pg_catalog.citus_locks l"
		" JOIN pg_catalog.pg_dist_node n ON n.nodeid OPERATOR(pg_catalog.=) l.nodeid"
		" JOIN pg_catalog.citus_stat_activity a ON a.nodeid OPERATOR(pg_catalog.=) l.nodeid"
		"   AND a.pid OPERATOR(pg_catalog.=) l.pid AND a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()"
		" WHERE n.groupid OPERATOR(pg_catalog.<>) 0 AND l.locktype OPERATOR(pg_catalog.=) 'relation'"
		"   AND pg_catalog.to_regclass(l.relation_name)::pg_catalog.oid OPERATOR(pg_catalog.=) $1"
		"   AND l.global_pid IS DISTINCT FROM pg_catalog.citus_backend_gpid()", relid);
}

/*
 * Lock relid in mode on every node: SQL LOCK TABLE (ONLY: not its
 * partitions), which Citus propagates to the workers' copies of the table,
 * through which writes made on a worker go.
 */
void
BackfillCitusLock(Oid relid, bool only, const char *mode)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	BackfillExec(psprintf("LOCK TABLE %s%s IN %s MODE", only ? "ONLY " : "", BackfillQualifiedName(relid), mode));
	SPI_finish();
}


/* Citus's own calls, found in citus.so: they take and give its structs, opaque here. */
typedef void *(*LoadShardPlacementFn) (uint64 shardid, uint64 placementid);
typedef void *(*GetPlacementConnectionFn) (uint32 flags, void *placement, const char *user);
typedef void (*ConnectionFn) (void *connection);
typedef void (*RemoteCommandFn) (void *connection, const char *command);
typedef void (*VoidFn) (void);
typedef int (*GetLocalStatusFn) (void);
typedef void (*SetLocalStatusFn) (int status);

/* Citus's local execution states (local_executor.h) */
#define CITUS_LOCAL_EXECUTION_REQUIRED 0
#define CITUS_LOCAL_EXECUTION_DISABLED 2

/* Citus's connection flags (connection_management.h) */
#define CITUS_FOR_DDL (1 << 1)

/*
 * Run command on every placement of every shard of the distributed table
 * relid, in this transaction: on a worker, through the connection of this
 * transaction that the placement is tied to (the one that created or wrote
 * it, or one tied to it from now on, as for a DDL command, so that Citus's
 * own later commands on it go through it too, and no other connection of
 * this transaction waits for it); on this node, here, as Citus's local
 * execution runs it, and Citus told so, so that its own later commands on
 * them run here too; unless Citus does not execute here in this transaction
 * (citus.enable_local_execution off, or a connection to this node used
 * already), and then through a connection as on a worker.  The command is
 * before, the shard's qualified name (as a regclass literal if literal,
 * else as an identifier), then after: no text of the caller's is ever a
 * format string.  Stops at the first error, which aborts
 * the transaction's part on that worker.  Inside SPI.
 */
void
BackfillCitusOnPlacements(Oid relid, const char *before, const char *after, bool literal)
{
	static LoadShardPlacementFn load = NULL;
	static GetPlacementConnectionFn connect = NULL;
	static ConnectionFn begin = NULL;
	static RemoteCommandFn run = NULL;
	static VoidFn coordinate = NULL;
	static GetLocalStatusFn local_status = NULL;
	static SetLocalStatusFn set_local_status = NULL;
	SPITupleTable *rows;
	uint64		n;
	const char *enabled;
	bool		here;

	if (set_local_status == NULL)	/* the last one found: all were */
	{
		coordinate = (VoidFn) load_external_function("citus", "UseCoordinatedTransaction", true, NULL);
		load = (LoadShardPlacementFn) load_external_function("citus", "LoadShardPlacement", true, NULL);
		connect = (GetPlacementConnectionFn) load_external_function("citus", "GetPlacementConnection", true, NULL);
		begin = (ConnectionFn) load_external_function("citus", "RemoteTransactionBeginIfNecessary", true, NULL);
		run = (RemoteCommandFn) load_external_function("citus", "ExecuteCriticalRemoteCommand", true, NULL);
		local_status = (GetLocalStatusFn) load_external_function("citus", "GetCurrentLocalExecutionStatus", true, NULL);
		set_local_status = (SetLocalStatusFn) load_external_function("citus", "SetLocalExecutionStatus", true, NULL);
	}
	enabled = GetConfigOption("citus.enable_local_execution", true, false);
	here = (enabled == NULL || strcmp(enabled, "off") != 0) && local_status() != CITUS_LOCAL_EXECUTION_DISABLED;
	if (SPI_execute_with_args("SELECT s.shardid, p.placementid,"
							  "  p.groupid OPERATOR(pg_catalog.=) (SELECT groupid FROM pg_catalog.pg_dist_local_group),"
							  "  pg_catalog.shard_name(s.logicalrelid, s.shardid, false)"
							  " FROM pg_catalog.pg_dist_shard s JOIN pg_catalog.pg_dist_placement p USING (shardid)"
							  " WHERE s.logicalrelid OPERATOR(pg_catalog.=) $1 ORDER BY s.shardid, p.placementid",
							  1, (Oid[]) {OIDOID}, (Datum[]) {ObjectIdGetDatum(relid)}, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the shard placements of %s", get_rel_name(relid));
	rows = SPI_tuptable;
	n = SPI_processed;
	/* the workers' commands belong to this transaction, committed with it in two phases */
	coordinate();
	for (uint64 i = 0; i < n; i++)
	{
		HeapTuple	tup = rows->vals[i];
		bool		isnull;
		uint64		shardid = DatumGetInt64(SPI_getbinval(tup, rows->tupdesc, 1, &isnull));
		uint64		placementid = DatumGetInt64(SPI_getbinval(tup, rows->tupdesc, 2, &isnull));
		bool		local = DatumGetBool(SPI_getbinval(tup, rows->tupdesc, 3, &isnull));
		char	   *name = SPI_getvalue(tup, rows->tupdesc, 4);
		char	   *sql = literal ? psprintf("%s%s::pg_catalog.regclass%s", before, quote_literal_cstr(name), after)
			: psprintf("%s%s%s", before, name, after);

		CHECK_FOR_INTERRUPTS();
		if (local && here)
		{
			set_local_status(CITUS_LOCAL_EXECUTION_REQUIRED);
			BackfillExec(sql);
		}
		else
		{
			void	   *connection = connect(CITUS_FOR_DDL, load(shardid, placementid), NULL);

			begin(connection);
			run(connection, sql);
		}
		pfree(sql);
	}
	SPI_freetuptable(rows);
}
