/*-------------------------------------------------------------------------
 *
 * src/write/remotesource.c
 *		A write's source computed on a standby (options.source_server): its
 *		rows read there, into a temporary table here, which the write then
 *		reads as its source.
 *
 * The source is described here first (prepared as the role writing, read
 * only, its columns and types), and the role must be allowed to read what
 * it reads here too (its EXPLAIN runs as the role: the executor checks the
 * rights of every relation it names).  Then it runs on the standby
 * (base/remote.c: a standby of this server, once it has replayed what this
 * server had written, on one snapshot), and its rows, as text, are read by
 * their types' input functions, as the role writing, into a temporary
 * table of the source's columns, dropped at commit.  The write reads that
 * table as its source, with every check a source's rows get: window,
 * bounds, keys, reconciliation, stored values.  What the primary spends is
 * reading the rows it is sent, not computing them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/rel.h"

#include "base/citus.h"
#include "base/remote.h"
#include "base/spi_util.h"
#include "write/remotesource.h"

/* The rows of a source read on a standby, going into the temporary table. */
typedef struct SourceRows
{
	Relation	rel;
	TupleDesc	desc;
	FmgrInfo   *in;				/* per column, its type's input function */
	Oid		   *ioparam;
	Datum	   *values;
	bool	   *nulls;
	BulkInsertState bistate;
	CommandId	cid;
	MemoryContext rowcxt;		/* reset for each row */
	const char *server;
	char	   *table;			/* its name, qualified */
} SourceRows;

/* One row read on the standby, into the table. */
static void
InsertRow(void *arg, int ncols, char **text)
{
	SourceRows *s = (SourceRows *) arg;
	MemoryContext old;
	HeapTuple	tuple;

	if (ncols != s->desc->natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("options.source_server: the source returns %d columns on server \"%s\", %d here",
						ncols, s->server, s->desc->natts),
				 errdetail("The standby does not run the code this server runs.")));
	MemoryContextReset(s->rowcxt);
	old = MemoryContextSwitchTo(s->rowcxt);
	for (int i = 0; i < ncols; i++)
	{
		Form_pg_attribute a = TupleDescAttr(s->desc, i);

		s->values[i] = InputFunctionCall(&s->in[i], text[i], s->ioparam[i], a->atttypmod);
		s->nulls[i] = text[i] == NULL;
	}
	tuple = heap_form_tuple(s->desc, s->values, s->nulls);
	heap_insert(s->rel, tuple, s->cid, 0, s->bistate);
	MemoryContextSwitchTo(old);
}

/* The temporary table of the source's columns (desc), dropped at commit; its name. */
static char *
CreateSourceTable(TupleDesc desc)
{
	static int	counter = 0;
	char	   *name = psprintf("pg_temp.backfill_source_%d", ++counter);
	StringInfoData sql;

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TEMPORARY TABLE %s (", name);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		appendStringInfo(&sql, "%s%s %s", i > 0 ? ", " : "", quote_identifier(NameStr(a->attname)),
						 format_type_with_typemod(a->atttypid, a->atttypmod));
		if (OidIsValid(a->attcollation) && a->attcollation != get_typcollation(a->atttypid))
			appendStringInfo(&sql, " COLLATE %s", generate_collation_name(a->attcollation));
	}
	appendStringInfoString(&sql, ") USING heap ON COMMIT DROP");
	BackfillExec(sql.data);
	return name;
}

/*
 * The source's parameters as text, for the standby (which has our types):
 * NULL for a NULL.
 */
static const char **
ParamsAsText(int nargs, Oid *argtypes, ParamListInfo params)
{
	const char **text = palloc0(sizeof(char *) * Max(1, nargs));

	for (int i = 0; i < nargs; i++)
	{
		Oid			out;
		bool		varlena;

		if (params == NULL || params->params[i].isnull)
			continue;
		getTypeOutputInfo(argtypes[i], &out, &varlena);
		text[i] = OidOutputFunctionCall(out, params->params[i].value);
	}
	return text;
}

/*
 * The source's result type, checked as the role writing: a read-only query,
 * whose relations the role may read here (the EXPLAIN's executor start checks
 * them, and runs nothing).
 */
static TupleDesc
DescribeSource(const BackfillRemoteSourceParams *p)
{
	SPIPlanPtr	plan = BackfillPrepare(p->source, p->nargs, p->argtypes, "source");
	SPIPlanPtr	explain;
	TupleDesc	desc;

	BackfillCheckReadOnly(plan, "source");
	desc = CreateTupleDescCopy(BackfillPlanResultDesc(plan));
	SPI_freeplan(plan);
	explain = BackfillPrepare(psprintf("EXPLAIN (COSTS OFF)\n%s", p->source), p->nargs, p->argtypes,
							  "source");
	if (SPI_execute_plan_with_paramlist(explain, p->params, false, 0) < 0)
		elog(ERROR, "EXPLAIN of the source failed");
	SPI_freeplan(explain);
	return desc;
}

/*
 * options.source_server is not for a Citus table: its source is planned by
 * the coordinator, which sends the rows to its workers.
 */
void
BackfillRefuseRemoteSource(Oid target)
{
	if (BackfillCitusDistributed(target))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("options.source_server is not supported for a Citus table"),
				 errdetail("Table %s is distributed by Citus: its source is planned by the coordinator.",
						   BackfillQualifiedName(target))));
}

/*
 * A call's source computed on a standby cannot see what the caller's own
 * transaction has written here: refused once the transaction has written
 * (func: the function called).
 */
void
BackfillRefuseRemoteSourceAfterWrites(const char *func)
{
	if (TransactionIdIsValid(GetTopTransactionIdIfAny()))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("%s with source_server in a transaction that has written", func),
				 errdetail("The standby sees only what this server has committed: the source would miss what this transaction wrote."),
				 errhint("Call it in a transaction of its own, or commit first.")));
}

/*
 * Once the standby has caught up: the temporary table made and opened, each
 * column's input function found.  (Made only now, so that no transaction ID
 * is taken for it while the wait lasts.)
 */
static void
SourceTableReady(void *arg)
{
	SourceRows *s = (SourceRows *) arg;
	int			n = Max(1, s->desc->natts);

	s->table = CreateSourceTable(s->desc);
	CommandCounterIncrement();
	s->rel = table_open(get_relname_relid(strchr(s->table, '.') + 1, LookupExplicitNamespace("pg_temp", false)),
						RowExclusiveLock);
	s->in = palloc(sizeof(FmgrInfo) * n);
	s->ioparam = palloc(sizeof(Oid) * n);
	s->values = palloc(sizeof(Datum) * n);
	s->nulls = palloc(sizeof(bool) * n);
	for (int i = 0; i < s->desc->natts; i++)
	{
		Oid			infunc;

		getTypeInputInfo(TupleDescAttr(s->desc, i)->atttypid, &infunc, &s->ioparam[i]);
		fmgr_info(infunc, &s->in[i]);
	}
	s->bistate = GetBulkInsertState();
	s->cid = GetCurrentCommandId(true);
	s->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "backfill source row", ALLOCSET_DEFAULT_SIZES);
}

/*
 * Compute p->source on p->server into a temporary table: the query that
 * reads it (its columns, in the source's order), in the caller's memory.
 * Its parameters, if any, are ignored by the query returned: they were
 * applied on the standby.
 */
char *
BackfillRemoteSource(const BackfillRemoteSourceParams *p)
{
	MemoryContext caller = CurrentMemoryContext;
	BackfillRemoteQuery q;
	SourceRows	s;
	StringInfoData cols;
	Oid		   *types;
	char	   *query;

	BackfillRefuseRemoteSource(p->target);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	memset(&s, 0, sizeof(s));
	s.desc = DescribeSource(p);
	s.server = p->server;
	types = palloc(sizeof(Oid) * Max(1, s.desc->natts));
	initStringInfo(&cols);
	for (int i = 0; i < s.desc->natts; i++)
	{
		types[i] = TupleDescAttr(s.desc, i)->atttypid;
		appendStringInfo(&cols, "%s%s", i > 0 ? ", " : "",
						 quote_identifier(NameStr(TupleDescAttr(s.desc, i)->attname)));
	}

	memset(&q, 0, sizeof(q));
	q.server = p->server;
	q.argname = "options.source_server";
	q.sql = p->source;
	q.nparams = p->nargs;
	q.paramtypes = p->argtypes;
	q.paramvalues = ParamsAsText(p->nargs, p->argtypes, p->params);
	q.replayed = BackfillRemoteWrittenUpTo();
	q.throttle = p->throttle;
	q.ncols = s.desc->natts;
	q.coltypes = types;
	q.ready = SourceTableReady;
	(void) BackfillRemoteRead(&q, InsertRow, &s);

	FreeBulkInsertState(s.bistate);
	table_close(s.rel, NoLock);
	CommandCounterIncrement();
	query = MemoryContextStrdup(caller, psprintf("SELECT %s FROM %s", cols.data, s.table));
	SPI_finish();
	return query;
}
