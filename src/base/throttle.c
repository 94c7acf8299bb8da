/*-------------------------------------------------------------------------
 *
 * src/base/throttle.c
 *		A run that yields to production: it waits while a standby replays
 *		too far behind, while a logical slot holds too much WAL, while the
 *		user's throttle_query says the server is busy; it pauses itself when
 *		critical_query says so, or when a wait lasts too long; and it spends
 *		an I/O budget inside a task's fill, as VACUUM's cost-based delay does.
 *
 A call of backfill_run arms a throttle with its run's options (the state
 * lives in the call's memory, and goes with it) and passes it to the writes
 * of its tasks.  The conditions are looked at before each task, outside any
 * lock, and between batches of a replacement's fill (FlushBatch calls
 * BackfillThrottleFillPoint with the throttle of the write's context), at
 * most every throttle_interval_ms.  The fill holds
 * the partition it replaces in SHARE ROW EXCLUSIVE mode, so a wait there
 * delays writers of that past partition, never its readers; the swap, which
 * takes locks readers wait for, has no throttle point.  A merge or an
 * in-place write holds the window against writers from its guards to its
 * commit, so it is throttled only before it starts.
 *
 * Replica lag is measured on the primary: for each physical standby in
 * pg_stat_replication, 0 once it has replayed all the WAL flushed here,
 * else the larger of the server's replay_lag and the time since this
 * backend last saw the flushed position at or below what the standby has
 * replayed (its own samples, taken at each check: an upper bound, so a
 * standby that replayed nothing of the last task is behind by at least its
 * length; replay_lag alone stops growing while a standby's replay is
 * paused).  The standby's position is what its last
 * reply said (wal_receiver_status_interval, on the standby, bounds how old).
 * pg_stat_replication and pg_replication_slots are read as the extension's
 * owner, which must be able to read all statistics; the user's queries run
 * as the role calling backfill (never as the target's owner, whom a member
 * granted its rights without SET may not become), under the run's
 * search_path, read only, in a restricted security context, on a fresh
 * snapshot each time.
 *
 * The I/O budget counts the pages this backend hits, reads and dirties
 * (pgBufferUsage), weighted by vacuum_cost_page_hit, _miss and _dirty; when
 * the balance reaches cost_limit, the fill sleeps cost_delay_ms times the
 * balance over the limit (at most a second), and the balance starts again.
 * Parallel workers' pages are counted when they finish.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "executor/instrument.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/plancache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "base/throttle.h"

/* flushed positions seen, oldest first: at most this many, thinned when full */
#define LAG_SAMPLES 256

typedef struct LagSample
{
	TimestampTz at;
	XLogRecPtr	lsn;
} LagSample;

struct BackfillThrottleState
{
	BackfillThrottle opts;
	int64		runid;
	Oid			extschema;
	Oid			owner;			/* the role calling the run: the user's queries run as it */
	char	   *search_path;
	MemoryContext cxt;			/* the state's own, under the call's */
	TimestampTz last_check;
	BufferUsage last_usage;
	double		balance;
	double		waited_ms;		/* since the last BackfillThrottleTake */
	double		cost_ms;
	char	   *reason;			/* the last condition waited for */
	char	   *paused;			/* why the run must pause, once it must */
	bool		elsewhere;		/* it was paused or cancelled by another session */
	TimestampTz wait_started;	/* 0: not waiting */
	char	   *activity;		/* pg_stat_activity's text before a wait inside a task */
	LagSample	samples[LAG_SAMPLES];
	int			nsamples;
};

/* Whether any throttle option is set. */
bool
BackfillThrottleWanted(const BackfillThrottle *t)
{
	return t->max_replica_lag_ms > 0 || t->max_slot_lag_bytes > 0 || t->throttle_query ||
		t->critical_query || t->cost_limit > 0;
}

/* Sleep ms milliseconds, waking for interrupts. */
void
BackfillSleep(double ms)
{
	TimestampTz until = GetCurrentTimestamp() + (TimestampTz) (ms * 1000.0);

	for (;;)
	{
		long		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), until);

		CHECK_FOR_INTERRUPTS();
		if (left <= 0)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, left, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/* "1 min 12 s", "3 h 4 min", "0.42 s" */
char *
BackfillDuration(double s)
{
	if (s < 10)
		return psprintf("%.2f s", s);
	if (s < 60)
		return psprintf("%.0f s", s);
	if (s < 3600)
		return psprintf("%d min %d s", (int) (s / 60), (int) s % 60);
	return psprintf("%d h %d min", (int) (s / 3600), ((int) s % 3600) / 60);
}

/* "812 kB", "64 MB" */
static char *
Bytes(int64 n)
{
	if (n < 10 * 1024)
		return psprintf(INT64_FORMAT " bytes", n);
	if (n < 10 * 1024 * 1024)
		return psprintf(INT64_FORMAT " kB", n / 1024);
	return psprintf(INT64_FORMAT " MB", n / (1024 * 1024));
}

/*
 * Samples of the flushed WAL position.
 */

/*
 * Remember that lsn was the flushed position at now, thinning the oldest
 * half when full.  A sample holds the last time its position was seen
 * flushed and no further: every WAL record beyond it was flushed later.
 */
static void
SampleFlushed(BackfillThrottleState *t, TimestampTz now, XLogRecPtr lsn)
{
	if (t->nsamples > 0 && t->samples[t->nsamples - 1].lsn >= lsn)
	{
		t->samples[t->nsamples - 1].at = now;
		return;
	}
	if (t->nsamples == LAG_SAMPLES)
	{
		/* keep the oldest and every other one: the span stays, the resolution halves */
		int			kept = 0;

		for (int i = 0; i < LAG_SAMPLES; i += 2)
			t->samples[kept++] = t->samples[i];
		t->nsamples = kept;
	}
	t->samples[t->nsamples].at = now;
	t->samples[t->nsamples].lsn = lsn;
	t->nsamples++;
}

/*
 * How far behind (ms) a standby is that has replayed up to lsn, at most:
 * the WAL it has not replayed was all flushed after the newest sample at or
 * below lsn.  Counting from there, not from the first sample beyond lsn,
 * a standby that replayed nothing of a task is behind by at least the task's
 * length, however long ago the last look was.  A standby behind every sample
 * is behind by at least the age of the oldest.
 */
static double
SampledLag(BackfillThrottleState *t, TimestampTz now, XLogRecPtr replayed)
{
	int			lo = 0;
	int			hi = t->nsamples;

	/* the oldest sample beyond what it replayed */
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (t->samples[mid].lsn > replayed)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == t->nsamples)
		return 0;
	return (double) (now - t->samples[lo > 0 ? lo - 1 : 0].at) / 1000.0;
}

/*
 * The conditions.
 */

/* Whether name is one of names (char *). */
static bool
NameListed(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
		if (strcmp((char *) lfirst(lc), name) == 0)
			return true;
	return false;
}

/* Why the standbys are too far behind, or NULL. */
static char *
ReplicaLagReason(BackfillThrottleState *t)
{
	TimestampTz now = GetCurrentTimestamp();
	XLogRecPtr	flushed = GetFlushRecPtr(NULL);
	List	   *names = t->opts.replicas;
	char	   *worst = NULL;
	double		worst_ms = -1;
	uint64		n;
	SPITupleTable *tt;
	ListCell   *lc;

	SampleFlushed(t, now, flushed);

	/*
	 * The walsenders as they are now: the activity statistics are otherwise
	 * kept for the transaction, and a wait is one transaction, so a standby
	 * that reconnects (a new walsender) would never be seen.
	 */
	pgstat_clear_snapshot();
	/* the physical standbys: a logical walsender streams from a logical slot */
	if (BackfillStateExec(t->extschema,
						  "SELECT s.application_name, s.state, s.replay_lsn,"
						  " COALESCE(pg_catalog.date_part('epoch', s.replay_lag)"
						  "   OPERATOR(pg_catalog.*) 1000::pg_catalog.float8, 0::pg_catalog.float8)"
						  BACKFILL_PHYSICAL_WALSENDERS,
						  0, NULL, NULL, NULL, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_stat_replication");
	n = SPI_processed;
	tt = SPI_tuptable;
	foreach(lc, names)
	{
		char	   *name = (char *) lfirst(lc);
		bool		seen = false;

		for (uint64 i = 0; i < n && !seen; i++)
			seen = strcmp(SPI_getvalue(tt->vals[i], tt->tupdesc, 1), name) == 0;
		if (!seen)
			return psprintf("standby \"%s\" is not connected", name);
	}
	for (uint64 i = 0; i < n; i++)
	{
		char	   *name = SPI_getvalue(tt->vals[i], tt->tupdesc, 1);
		char	   *state = SPI_getvalue(tt->vals[i], tt->tupdesc, 2);
		bool		isnull;
		Datum		replay = SPI_getbinval(tt->vals[i], tt->tupdesc, 3, &isnull);
		double		ms;

		if (names != NIL && !NameListed(names, name))
			continue;
		if (state == NULL)
			return pstrdup("the standbys' positions cannot be read (the extension's owner needs pg_read_all_stats)");

		/*
		 * A WAL receiver that replays nothing (pg_receivewal, an archiver's
		 * streaming, a pg_basebackup in progress) is no standby: it never
		 * reports a replay position.  Unless named in replicas, it is not
		 * waited for.
		 */
		if (strcmp(state, "backup") == 0 || (strcmp(state, "streaming") == 0 && isnull))
		{
			if (names == NIL)
				continue;
			return psprintf("standby \"%s\" replays nothing: it is %s and reports no replay position"
							" (a WAL receiver such as pg_receivewal or pg_basebackup, not a standby)",
							name, strcmp(state, "backup") == 0 ? "taking a base backup" : "streaming");
		}
		if (strcmp(state, "streaming") != 0 || isnull)
			return psprintf("standby \"%s\" is %s, not streaming", name, state);
		if (DatumGetLSN(replay) >= flushed)
			continue;
		ms = Max(DatumGetFloat8(SPI_getbinval(tt->vals[i], tt->tupdesc, 4, &isnull)),
				 SampledLag(t, now, DatumGetLSN(replay)));
		if (ms > worst_ms)
		{
			worst_ms = ms;
			worst = name;
		}
	}
	if (worst && worst_ms > t->opts.max_replica_lag_ms)
		return psprintf("standby \"%s\" replays %s behind (max_replica_lag_ms %d)", worst, BackfillDuration(worst_ms / 1000.0),
						t->opts.max_replica_lag_ms);
	return NULL;
}

/* Why a logical slot holds too much WAL, or NULL. */
static char *
SlotLagReason(BackfillThrottleState *t)
{
	bool		isnull;
	int64		behind;

	/* a slot whose WAL is gone is no consumer any more */
	if (BackfillStateExec(t->extschema,
						  "SELECT l.slot_name, pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(),"
						  "   l.confirmed_flush_lsn)::pg_catalog.int8"
						  " FROM pg_catalog.pg_replication_slots l"
						  " WHERE l.slot_type OPERATOR(pg_catalog.=) 'logical' AND l.confirmed_flush_lsn IS NOT NULL"
						  "   AND l.wal_status IS DISTINCT FROM 'lost'"
						  " ORDER BY 2 DESC LIMIT 1",
						  0, NULL, NULL, NULL, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_replication_slots");
	if (SPI_processed == 0)
		return NULL;
	behind = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (isnull || behind <= t->opts.max_slot_lag_bytes)
		return NULL;
	return psprintf("logical slot \"%s\" is %s behind (max_slot_lag_bytes " INT64_FORMAT ")",
					SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), Bytes(behind),
					t->opts.max_slot_lag_bytes);
}

/* options.NAME, at plan time: one query that only reads, of one boolean column. */
static void
CheckBooleanQuery(const char *sql, const char *option)
{
	char	   *argname = psprintf("options.%s", option);
	SPIPlanPtr	plan = BackfillPrepare(BackfillCheckQuery(sql, argname), 0, NULL, argname);
	TupleDesc	desc;

	BackfillCheckReadOnly(plan, argname);
	desc = BackfillPlanResultDesc(plan);
	if (desc == NULL || desc->natts != 1 || TupleDescAttr(desc, 0)->atttypid != BOOLOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s must return one boolean column", argname),
				 errhint("For example SELECT count(*) > 20 FROM pg_stat_activity WHERE state = 'active'.")));
	SPI_freeplan(plan);
}

/* The option a user's query is, and the run it is run for. */
typedef struct UserQueryWhere
{
	const char *option;
	int64		runid;
} UserQueryWhere;

/* A failure of a user's query at run time names the option and the run. */
static void
QueryContext(void *arg)
{
	UserQueryWhere *where = (UserQueryWhere *) arg;

	errcontext("options.%s of run " INT64_FORMAT, where->option, where->runid);
}

/*
 * Run or prepare (plan false: prepare only) one of the user's queries, as
 * role owner (the caller), under search_path; its one column must be a boolean.  Returns its
 * value (false for no row or NULL).
 */
static bool
UserQuery(const char *sql, const char *option, Oid owner, const char *search_path, bool run,
		  int64 runid)
{
	ErrorContextCallback cb;
	UserQueryWhere where = {option, runid};
	Oid			saved_userid;
	int			saved_sec;
	int			nest;
	bool		result = false;
	TupleDesc	desc;

	cb.callback = QueryContext;
	cb.arg = (void *) &where;
	cb.previous = error_context_stack;
	if (run)
		error_context_stack = &cb;
	GetUserIdAndSecContext(&saved_userid, &saved_sec);
	SetUserIdAndSecContext(owner, saved_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	nest = NewGUCNestLevel();
	(void) set_config_option("search_path", search_path, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	if (run)
	{
		int			rc;

		/* what production does now: not what the task's own snapshot saw */
		pgstat_clear_snapshot();
		PushActiveSnapshot(GetLatestSnapshot());
		rc = SPI_execute(sql, true, 2);
		PopActiveSnapshot();
		if (rc != SPI_OK_SELECT)
			elog(ERROR, "options.%s did not run as a query", option);
		if (SPI_processed > 1)
			ereport(ERROR,
					(errcode(ERRCODE_CARDINALITY_VIOLATION),
					 errmsg("options.%s returned more than one row", option)));
		desc = SPI_tuptable->tupdesc;
		if (SPI_processed == 1 && desc->natts == 1 && TupleDescAttr(desc, 0)->atttypid == BOOLOID)
		{
			bool		isnull;
			Datum		v = SPI_getbinval(SPI_tuptable->vals[0], desc, 1, &isnull);

			result = !isnull && DatumGetBool(v);
		}
	}
	else
		CheckBooleanQuery(sql, option);
	AtEOXact_GUC(true, nest);
	SetUserIdAndSecContext(saved_userid, saved_sec);
	if (run)
		error_context_stack = cb.previous;
	return result;
}

/*
 * Why the run must wait now, or NULL; *pause is set when it must pause
 * (critical_query returned true).
 */
static char *
ThrottleReason(BackfillThrottleState *t, bool *pause)
{
	char	   *why = NULL;

	*pause = false;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (t->opts.critical_query &&
		UserQuery(t->opts.critical_query, "critical_query", t->owner, t->search_path, true, t->runid))
	{
		*pause = true;
		why = "options.critical_query returned true";
	}
	if (why == NULL && t->opts.max_replica_lag_ms > 0)
		why = ReplicaLagReason(t);
	if (why == NULL && t->opts.max_slot_lag_bytes > 0)
		why = SlotLagReason(t);
	if (why == NULL && t->opts.throttle_query &&
		UserQuery(t->opts.throttle_query, "throttle_query", t->owner, t->search_path, true, t->runid))
		why = "options.throttle_query returned true";
	why = why ? MemoryContextStrdup(t->cxt, why) : NULL;
	SPI_finish();
	return why;
}

/*
 * Arming and waiting.
 */

/* A wait ends: its time counted, and said ("goes on") when the run goes on. */
static void
EndWait(BackfillThrottleState *t, const char *how)
{
	double		ms;

	if (t->wait_started == 0)
		return;
	if (t->activity != NULL)
	{
		/* pg_stat_activity shows it, nothing runs it */
		pgstat_report_activity(STATE_RUNNING, t->activity);
		pfree(t->activity);
		t->activity = NULL;
	}
	ms = (double) (GetCurrentTimestamp() - t->wait_started) / 1000.0;
	t->waited_ms += ms;
	t->wait_started = 0;
	if (how)
		ereport(NOTICE, (errmsg("run " INT64_FORMAT " %s after waiting %s", t->runid, how,
								BackfillDuration(ms / 1000.0))));
}

/*
 * The fill's point of yield: the I/O budget, then the conditions when they
 * are due.  Raises 57000 (operator intervention) when the run must pause.
 * Nothing with no throttle.
 */
void
BackfillThrottleFillPoint(BackfillThrottleState *t)
{
	if (t == NULL)
		return;
	if (t->opts.cost_limit > 0)
	{
		BufferUsage *u = &pgBufferUsage;
		BufferUsage *l = &t->last_usage;

		t->balance += (double) VacuumCostPageHit * (u->shared_blks_hit - l->shared_blks_hit +
													u->local_blks_hit - l->local_blks_hit) +
			(double) VacuumCostPageMiss * (u->shared_blks_read - l->shared_blks_read +
										   u->local_blks_read - l->local_blks_read) +
			(double) VacuumCostPageDirty * (u->shared_blks_dirtied - l->shared_blks_dirtied +
											u->local_blks_dirtied - l->local_blks_dirtied);
		t->last_usage = *u;
		if (t->balance >= t->opts.cost_limit)
		{
			double		ms = Min((double) t->opts.cost_delay_ms * t->balance / t->opts.cost_limit, 1000.0);

			BackfillSleep(ms);
			t->cost_ms += ms;
			t->balance = 0;
		}
	}
	if (TimestampDifferenceExceeds(t->last_check, GetCurrentTimestamp(), t->opts.throttle_interval_ms) &&
		!BackfillThrottleWait(t))
		ereport(ERROR,
				(errcode(ERRCODE_OPERATOR_INTERVENTION),
				 errmsg("run " INT64_FORMAT " pauses: %s", t->runid, t->paused)));
}

/*
 * A throttle for a call of run runid (copying what it needs), in memory of
 * its own under cxt: it goes with the call, even when the call fails.
 */
BackfillThrottleState *
BackfillThrottleArm(const BackfillThrottle *opts, int64 runid, Oid extschema, Oid owner,
					const char *search_path, MemoryContext cxt)
{
	MemoryContext own = AllocSetContextCreate(cxt, "backfill throttle", ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(own);
	BackfillThrottleState *t = palloc0(sizeof(BackfillThrottleState));
	ListCell   *lc;

	t->cxt = own;
	t->opts = *opts;
	t->opts.replicas = NIL;
	foreach(lc, opts->replicas)
		t->opts.replicas = lappend(t->opts.replicas, pstrdup((char *) lfirst(lc)));
	t->opts.throttle_query = opts->throttle_query ? pstrdup(opts->throttle_query) : NULL;
	t->opts.critical_query = opts->critical_query ? pstrdup(opts->critical_query) : NULL;
	t->search_path = pstrdup(search_path);
	MemoryContextSwitchTo(old);
	t->runid = runid;
	t->extschema = extschema;
	t->owner = owner;
	t->last_usage = pgBufferUsage;
	return t;
}

/* Free a throttle (NULL: none). */
void
BackfillThrottleDisarm(BackfillThrottleState *t)
{
	if (t != NULL)
		MemoryContextDelete(t->cxt);
}

/*
 * One look at the conditions: go, wait (and look again after
 * BackfillThrottleSleep), or pause (BackfillThrottlePaused says why).  The
 * first look that must wait says so in a NOTICE, the look that ends a wait
 * says how long it was; a wait longer than throttle_timeout_ms pauses.
 */
BackfillThrottleVerdict
BackfillThrottleLook(BackfillThrottleState *t)
{
	return BackfillThrottleLookWith(t, NULL);
}

/*
 * BackfillThrottleLook, with a condition of the caller's besides the run's
 * options: why the run must wait for it, or NULL (waited for, paused for,
 * shown as the options' are).
 */
BackfillThrottleVerdict
BackfillThrottleLookWith(BackfillThrottleState *t, const char *also)
{
	char	   *why;
	bool		pause;

	if (t == NULL)
		return BACKFILL_THROTTLE_GO;
	why = ThrottleReason(t, &pause);
	if (why == NULL && also != NULL)
		why = MemoryContextStrdup(t->cxt, also);
	t->last_check = GetCurrentTimestamp();
	if (why != NULL && !pause)
	{
		/* one reason kept: a wait may look thousands of times */
		if (t->reason && t->reason != t->paused)
			pfree(t->reason);
		t->reason = why;
		if (t->wait_started == 0)
		{
			t->wait_started = t->last_check;
			ereport(NOTICE, (errmsg("run " INT64_FORMAT " waits: %s", t->runid, why)));
			return BACKFILL_THROTTLE_WAIT;
		}
		if (!TimestampDifferenceExceeds(t->wait_started, t->last_check, t->opts.throttle_timeout_ms))
			return BACKFILL_THROTTLE_WAIT;
		pause = true;
		why = MemoryContextStrdup(t->cxt,
								  psprintf("waited %s (throttle_timeout_ms): %s",
										   BackfillDuration(t->opts.throttle_timeout_ms / 1000.0), why));
	}
	EndWait(t, pause ? NULL : "goes on");
	if (!pause)
		return BACKFILL_THROTTLE_GO;
	t->paused = t->reason = why;
	return BACKFILL_THROTTLE_PAUSE;
}

/* Sleep until the next look, waking for interrupts. */
void
BackfillThrottleSleep(BackfillThrottleState *t)
{
	if (t != NULL)
		BackfillSleep(t->opts.throttle_interval_ms);
}

/*
 * The run was paused or cancelled by another session (status) during a wait:
 * the wait ends, and BackfillThrottlePaused says so.
 */
void
BackfillThrottleStoppedElsewhere(BackfillThrottleState *t, const char *status)
{
	EndWait(t, NULL);
	t->paused = MemoryContextStrdup(t->cxt, psprintf("it was %s by another session during a wait", status));
	t->elsewhere = true;
}

/* Whether the run was stopped by another session (BackfillThrottleStoppedElsewhere). */
bool
BackfillThrottleWasStoppedElsewhere(BackfillThrottleState *t)
{
	return t != NULL && t->elsewhere;
}

/*
 * A wait inside a task shows in pg_stat_activity, as the run's waits between
 * tasks do; its end (EndWait) puts back what was shown before.
 */
static void
ShowWait(BackfillThrottleState *t)
{
	if (t->activity == NULL && MyBEEntry != NULL)
		t->activity = MemoryContextStrdup(t->cxt, MyBEEntry->st_activity_raw);
	BackfillRunActivity(t->runid, psprintf("waits: %s", t->reason));
}

/*
 * Inside a task: wait while a condition holds, looking again every
 * throttle_interval_ms, and ending the wait at once when another session
 * pauses or cancels the run.  False when the run must pause instead.  The
 * task's transaction, its snapshot and its locks are held meanwhile: a wait
 * between tasks (the run's own loop over BackfillThrottleLook) holds none.
 */
bool
BackfillThrottleWait(BackfillThrottleState *t)
{
	for (;;)
	{
		BackfillThrottleVerdict v = BackfillThrottleLook(t);
		char	   *status;

		if (v != BACKFILL_THROTTLE_WAIT)
			return v == BACKFILL_THROTTLE_GO;
		ShowWait(t);
		status = BackfillRunStatusText(t->extschema, t->runid);
		if (status == NULL || strcmp(status, "running") != 0)
		{
			BackfillThrottleStoppedElsewhere(t, status ? status : "removed");
			return false;
		}
		BackfillThrottleSleep(t);
	}
}

/*
 * Inside a task, a condition of the caller's: why says what it waits for, or
 * is NULL once it is met.  Not met, the wait starts (a NOTICE, and
 * pg_stat_activity shows it) or goes on, and the caller looks again after
 * BackfillSleep(BackfillThrottleInterval(t)); once it has lasted
 * throttle_timeout_ms, or when another session paused or cancelled the run,
 * the run pauses: 57000, as at a fill's point of yield.  Met, a wait ends.
 * Nothing with no throttle.
 */
void
BackfillThrottleAwait(BackfillThrottleState *t, const char *why)
{
	char	   *status;

	if (t == NULL)
		return;
	t->last_check = GetCurrentTimestamp();
	if (why == NULL)
	{
		EndWait(t, "goes on");
		return;
	}
	if (t->reason && t->reason != t->paused)
		pfree(t->reason);
	t->reason = MemoryContextStrdup(t->cxt, why);
	if (t->wait_started == 0)
	{
		t->wait_started = t->last_check;
		ereport(NOTICE, (errmsg("run " INT64_FORMAT " waits: %s", t->runid, why)));
		ShowWait(t);
		return;
	}
	ShowWait(t);
	status = BackfillRunStatusText(t->extschema, t->runid);
	if (status == NULL || strcmp(status, "running") != 0)
		BackfillThrottleStoppedElsewhere(t, status ? status : "removed");
	else if (TimestampDifferenceExceeds(t->wait_started, t->last_check, t->opts.throttle_timeout_ms))
	{
		EndWait(t, NULL);
		t->paused = t->reason =
			MemoryContextStrdup(t->cxt, psprintf("waited %s (throttle_timeout_ms): %s",
												 BackfillDuration(t->opts.throttle_timeout_ms / 1000.0), why));
	}
	else
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OPERATOR_INTERVENTION),
			 errmsg("run " INT64_FORMAT " pauses: %s", t->runid, t->paused)));
}

/* How often a wait looks again, in milliseconds. */
int
BackfillThrottleInterval(BackfillThrottleState *t)
{
	return t ? t->opts.throttle_interval_ms : BACKFILL_THROTTLE_INTERVAL_MS;
}

/* What the run waits for now, or NULL. */
const char *
BackfillThrottleWaitingFor(BackfillThrottleState *t)
{
	return t && t->wait_started != 0 ? t->reason : NULL;
}

/* Why the run must pause, or NULL. */
const char *
BackfillThrottlePaused(BackfillThrottleState *t)
{
	return t ? t->paused : NULL;
}

/*
 * The seconds spent throttled since the last call (waits and the I/O
 * budget's sleeps), and into *reason the last reason, or NULL.
 */
double
BackfillThrottleTake(BackfillThrottleState *t, char **reason)
{
	double		s;

	*reason = NULL;
	if (t == NULL)
		return 0;
	s = (t->waited_ms + t->cost_ms) / 1000.0;

	*reason = t->reason ? pstrdup(t->reason) :
		t->cost_ms > 0 ? psprintf("the I/O budget (cost_limit %d)", t->opts.cost_limit) : NULL;
	t->waited_ms = t->cost_ms = 0;
	t->reason = NULL;
	return s;
}

/*
 * At plan time: each query prepares as a read-only query of one boolean
 * column, as the caller under the run's search_path; replica lag
 * needs the extension's owner to read every walsender's positions.
 */
void
BackfillThrottleCheck(const BackfillThrottle *t, Oid owner, const char *search_path, Oid extschema)
{
	if (t->throttle_query)
		(void) UserQuery(t->throttle_query, "throttle_query", owner, search_path, false, 0);
	if (t->critical_query)
		(void) UserQuery(t->critical_query, "critical_query", owner, search_path, false, 0);
	if (t->max_replica_lag_ms > 0)
	{
		Oid			extowner = BackfillRelOwner(get_relname_relid("backfill_runs_data", extschema));

		if (!has_privs_of_role(extowner, ROLE_PG_READ_ALL_STATS))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("options.max_replica_lag_ms needs the extension's owner to read pg_stat_replication"),
					 errdetail("Role %s sees no standby's positions.", GetUserNameFromId(extowner, false)),
					 errhint("GRANT pg_read_all_stats TO %s;", quote_identifier(GetUserNameFromId(extowner, false)))));
	}
}
